#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/series-at.sh REV - an earlier version of the series, from git
# history: extracts kernel/patches as it was at commit REV into a new
# temporary directory and prints its path, for
#
#	NFQB_KERNEL_PATCHES=$(kernel/series-at.sh v3) kernel/build.sh
#
# REV is a commit, or one of the names below for the versions the
# README's before/after results were taken on (the tree kept them as
# folders until they moved to history):
#	v3     the v3 series (before the RFC v1 review fixes)
#	v2     the v2 series (before the v3 defect fixes), 7 patches
#	v1     the v1 series ported unchanged to 6.12, 1 patch
# Needs a git clone (not a release tarball). The caller removes the
# directory.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: series-at.sh REV}
path=kernel/patches
case $rev in
v3) rev=c54272f ;;
v2) rev=c54272f path=kernel/before-v3 ;;
v1) rev=c54272f path=kernel/before-v2 ;;
esac
git -C "$top" rev-parse -q --verify "$rev^{commit}" > /dev/null || {
	echo "series-at.sh: no commit $rev in $top (a git clone is needed)" >&2
	exit 1
}
out=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-series.XXXXXX")
git -C "$top" archive "$rev" "$path" | tar -x -C "$out" --strip-components=2
ls "$out"/*.patch > /dev/null 2>&1 || {
	echo "series-at.sh: no patches in $rev:$path" >&2
	rm -rf "$out"
	exit 1
}
echo "$out"
