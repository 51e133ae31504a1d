#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/daq/find-tarball.sh - print the path of libdaq's source tarball (a
# test dependency, not part of the tree): $NFQB_LIBDAQ_TARBALL if set,
# else what tests/find-third-party.sh finds for libdaq-3.0.25.tar.gz
# (beside the clone or its parents, beside its local git origin, in the
# cache outside the clone: see there). Exit status 1 and nothing printed
# if none.
if [ -n "${NFQB_LIBDAQ_TARBALL:-}" ]; then
	[ -f "$NFQB_LIBDAQ_TARBALL" ] && echo "$NFQB_LIBDAQ_TARBALL" && exit 0
	echo "find-tarball: NFQB_LIBDAQ_TARBALL=$NFQB_LIBDAQ_TARBALL: no such file" >&2
	exit 1
fi
exec "$(dirname "$0")/../find-third-party.sh" libdaq-3.0.25.tar.gz
