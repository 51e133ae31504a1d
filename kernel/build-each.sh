#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/build-each.sh - check that every prefix of the series builds
# (kernel style: each patch builds on its own). Uses build.sh with
# NFQB_KERNEL_UPTO=1..N; each prefix is cached like any image. Exit status
# non-zero on the first prefix that does not build.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=$(ls "$here"/patches/*.patch 2>/dev/null | grep -v '/0000-' | wc -l)
i=1
while [ "$i" -le "$n" ]; do
	echo "build-each.sh: patches 1..$i" >&2
	NFQB_KERNEL_UPTO=$i NFQB_KERNEL_NO_WARNINGS=1 "$here/build.sh" > /dev/null ||
		{ echo "build-each.sh: FAIL at patch $i" >&2; exit 1; }
	i=$((i + 1))
done
echo "build-each.sh: all $n prefixes build" >&2
