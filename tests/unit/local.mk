# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/unit: placeholder, filled in by the owner of tests/unit/ (top-relative paths, += only).
