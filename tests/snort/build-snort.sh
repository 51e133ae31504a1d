#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build libdaq 3.0.25 and Snort 3.11.1.0 (test dependencies only, GPL-2.0)
# from their release tarballs into a cache outside the clone, once per
# machine, and print the prefix:
#
#   tests/snort/build-snort.sh            -> /var/cache/nfqb-snort/<key>
#
# Several callers at once (tests/run-all.sh starts it early in the
# background, then calls it again where it needs Snort) share one build:
# the later ones wait on its lock and reuse it.
# The key is a hash of both tarballs, of tests/daq/build-libdaq.sh (its
# commands: comment lines and messages left out) and of the recipe below
# (bump it with any change to how Snort is built), so a change of any of
# them builds anew; a prefix with a complete build
# (.complete) is reused as it is.  The prefix holds bin/snort,
# etc/snort/snort.lua, lib/libdaq.so, lib/daq/daq_nfq.so (the stock
# module), lib/pkgconfig/libdaq.pc.
#
# Environment: NFQB_SNORT_CACHE (default /var/cache/nfqb-snort);
# NFQB_SNORT_TARBALL and NFQB_LIBDAQ_TARBALL name the tarballs (default:
# what tests/find-third-party.sh finds for snort3-3.11.1.0.tar.gz, and
# tests/daq/find-tarball.sh for libdaq); NFQB_JOBS the build parallelism
# (default: nproc).  Needs what tests/deps.sh installs (cmake, g++, flex,
# libdumbnet-dev, libhwloc-dev, libluajit-5.1-dev, libpcap-dev,
# libpcre2-dev, libssl-dev, zlib1g-dev).
# About 20 minutes at -j2 on two cores; seconds when cached.  Progress goes
# to stderr, the prefix alone to stdout.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${NFQB_SNORT_CACHE:-/var/cache/nfqb-snort}
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}
daq_tar=${NFQB_LIBDAQ_TARBALL:-$("$top/tests/daq/find-tarball.sh" || true)}
if [ -z "$daq_tar" ] || [ ! -f "$daq_tar" ]; then
	echo "build-snort: no libdaq tarball (set NFQB_LIBDAQ_TARBALL)" >&2
	exit 1
fi
snort_tar=${NFQB_SNORT_TARBALL:-$("$top/tests/find-third-party.sh" snort3-3.11.1.0.tar.gz || true)}
if [ -z "$snort_tar" ] || [ ! -f "$snort_tar" ]; then
	echo "build-snort: no Snort tarball${snort_tar:+ at $snort_tar} (set NFQB_SNORT_TARBALL or NFQB_THIRD_PARTY_DIR)" >&2
	exit 1
fi

# The recipe: what decides the build besides the tarballs.
recipe="snort 2: configure_cmake.sh --disable-docs, CFLAGS=CXXFLAGS=-O2 -DNDEBUG, libdaq in the same prefix"
key=$( (cat "$daq_tar" "$snort_tar"
	grep -Ev '^[[:space:]]*(#|echo )' "$top/tests/daq/build-libdaq.sh"
	echo "$recipe") | sha256sum | cut -c1-16)
prefix=$cache/$key
if [ -f "$prefix/.complete" ]; then
	echo "build-snort: reusing $prefix" >&2
	echo "$prefix"
	exit 0
fi

mkdir -p "$cache"
# One build at a time per key: a second caller waits and then reuses it.
exec 9>"$cache/.$key.lock"
flock 9
if [ -f "$prefix/.complete" ]; then
	echo "build-snort: reusing $prefix (built while waiting)" >&2
	echo "$prefix"
	exit 0
fi
rm -rf "$prefix"
mkdir -p "$prefix"

work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-snort-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

echo "build-snort: libdaq into $prefix" >&2
NFQB_JOBS=$jobs "$top/tests/daq/build-libdaq.sh" "$prefix" "$daq_tar" >&2

echo "build-snort: Snort from $snort_tar (-j$jobs, about 20 min on 2 cores)" >&2
tar -xzf "$snort_tar" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
log=$work/snort-build.log
(
	cd "$src"
	# Snort's default build type is RelWithDebInfo (-O2 -g -DNDEBUG): the
	# same code without the debug info builds faster, and nothing here
	# debugs Snort itself.
	CFLAGS="-O2 -DNDEBUG" CXXFLAGS="-O2 -DNDEBUG" \
	PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
	./configure_cmake.sh --prefix="$prefix" \
		--with-daq-includes="$prefix/include" \
		--with-daq-libraries="$prefix/lib" --disable-docs
	cd build
	make -j"$jobs"
	make install
) >"$log" 2>&1 || {
	tail -n 60 "$log" >&2
	echo "build-snort: the Snort build failed (log above)" >&2
	exit 1
}
for f in bin/snort etc/snort/snort.lua lib/daq/daq_nfq.so; do
	[ -e "$prefix/$f" ] || {
		echo "build-snort: $prefix/$f missing after install" >&2
		exit 1
	}
done
LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/snort" -V >&2 || {
	echo "build-snort: $prefix/bin/snort -V failed" >&2
	exit 1
}
touch "$prefix/.complete"
echo "build-snort: built in $(($(date +%s) - start)) s" >&2
echo "$prefix"
