#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/check.sh - the whole kernel check: install dependencies, build
# (or reuse from the cache) the patched kernel, boot it under qemu and run
# the guest tests. Exit status 0 only if everything passed. Used by
# "make check-kernel"; extra arguments select tests (e.g. t-10-ingress).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$here/deps.sh"
t0=$(date +%s)
img=$("$here/build.sh")
t1=$(date +%s)
echo "check.sh: kernel image $img ($((t1 - t0)) s)" >&2
"$here/run-qemu.sh" "$img" "$@"
