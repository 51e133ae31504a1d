#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build libdaq (a test dependency only, GPL-2.0) from its release tarball
# into a private prefix: the library, its pkg-config file, the stock nfq
# module (lib/daq/daq_nfq.so) and daqtest (bin/daqtest).  Nothing of it is
# copied into the project.
#
#   tests/daq/build-libdaq.sh PREFIX [TARBALL]
#
# TARBALL defaults to what tests/daq/find-tarball.sh finds:
# $NFQB_LIBDAQ_TARBALL, or libdaq-3.0.25.tar.gz where
# tests/find-third-party.sh looks (beside the clone, its parents or its
# local git origin, or in the cache outside the clone).  A PREFIX
# that already holds a complete build of the same tarball is reused
# (PREFIX/.tarball-sha256).  Needs autoconf, automake, libtool, libmnl-dev.
# NFQB_JOBS sets the build parallelism (default: nproc).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${1:?usage: build-libdaq.sh PREFIX [TARBALL]}
tarball=${2:-$("$top/tests/daq/find-tarball.sh" || true)}
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [ ! -f "$tarball" ]; then
	echo "build-libdaq: no tarball at $tarball (set NFQB_LIBDAQ_TARBALL or NFQB_THIRD_PARTY_DIR)" >&2
	exit 1
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ -f "$prefix/.tarball-sha256" ] &&
   [ "$(cat "$prefix/.tarball-sha256")" = "$sum" ] &&
   [ -x "$prefix/bin/daqtest" ] && [ -f "$prefix/lib/daq/daq_nfq.so" ] &&
   [ -f "$prefix/lib/pkgconfig/libdaq.pc" ]; then
	echo "build-libdaq: $prefix already holds this libdaq"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-libdaq.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
cd "$src"
# The release tarball carries no configure script.
[ -x configure ] || autoreconf -if >/dev/null 2>&1 || autoreconf -if
# Only what the tests use: the library, the nfq module, daqtest.  The
# static daqtest needs static archives, so they stay on.
./configure --prefix="$prefix" --disable-bundled-modules \
	--enable-nfq-module >"$work/configure.log" 2>&1 || {
	tail -n 40 "$work/configure.log" >&2
	echo "build-libdaq: configure failed" >&2
	exit 1
}
grep -Eq 'Build NFQ DAQ module\.* : yes' "$work/configure.log" || {
	echo "build-libdaq: the nfq module is not built (libmnl-dev missing?)" >&2
	exit 1
}
make -j"$jobs" >"$work/make.log" 2>&1 || {
	tail -n 40 "$work/make.log" >&2
	echo "build-libdaq: make failed" >&2
	exit 1
}
make install >"$work/install.log" 2>&1 || {
	tail -n 40 "$work/install.log" >&2
	echo "build-libdaq: make install failed" >&2
	exit 1
}
for f in bin/daqtest lib/daq/daq_nfq.so lib/pkgconfig/libdaq.pc; do
	[ -e "$prefix/$f" ] || {
		echo "build-libdaq: $prefix/$f missing after install" >&2
		exit 1
	}
done
echo "$sum" >"$prefix/.tarball-sha256"
echo "build-libdaq: libdaq installed in $prefix"
