# SPDX-License-Identifier: LGPL-2.1-or-later
# utils: placeholder, filled in by the owner of utils/ (top-relative paths, += only).
