# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel: placeholder, filled in by the owner of kernel/ (top-relative paths, += only).
