# SPDX-License-Identifier: LGPL-2.1-or-later
# man: placeholder, filled in by the owner of man/ (top-relative paths, += only).
