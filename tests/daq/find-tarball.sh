#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/daq/find-tarball.sh - print the path of libdaq's source tarball (a
# test dependency, not part of the tree): $NFQB_LIBDAQ_TARBALL if set, else
# the first shared/third_party/libdaq-3.0.25.tar.gz found beside the clone
# or beside one of its parent directories (a CI clone may sit deeper than
# the development checkout). Exit status 1 and nothing printed if none.
name=libdaq-3.0.25.tar.gz
if [ -n "${NFQB_LIBDAQ_TARBALL:-}" ]; then
	[ -f "$NFQB_LIBDAQ_TARBALL" ] && echo "$NFQB_LIBDAQ_TARBALL" && exit 0
	exit 1
fi
d=$(cd "$(dirname "$0")/../.." && pwd)
while [ "$d" != / ]; do
	d=$(dirname "$d")
	for c in "$d/shared/third_party/$name" "$d/third_party/$name"; do
		if [ -f "$c" ]; then
			echo "$c"
			exit 0
		fi
	done
done
exit 1
