#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The 32-bit build: configure build-i386/ with gcc -m32 against Debian's
# i386 libraries (multiarch: libmnl-dev:i386, liburcu-dev:i386, check:i386,
# libnetfilter-queue-dev:i386, gcc-multilib; tests/deps.sh installs them),
# build everything with -Werror, and run the unit tests and the man page
# check there, so that size and layout assumptions (pointers, long,
# size_t, time_t of 32 bits) are caught. The integration tests need the
# kernel's 64-bit netfilter path and are not run here.
#
#   tests/check-i386.sh [BUILD_DIR]      (default: build-i386/ in the tree)
#
# Environment: NFQB_JOBS (default: nproc). Exits non-zero on any failure;
# the parallel harness leaves one .trs per test in BUILD_DIR for counting.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build-i386}
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}
multiarch=i386-linux-gnu
tests="tests/unit/test_msg tests/unit/test_parse tests/unit/test_plan
	tests/unit/test_model tests/check-man.sh"

if [ ! -d "/usr/lib/$multiarch/pkgconfig" ] ||
   [ ! -f "/usr/lib/$multiarch/pkgconfig/libmnl.pc" ]; then
	echo "check-i386: no i386 libmnl.pc: run tests/deps.sh (as root)" >&2
	exit 1
fi
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)

rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
# pkg-config of the i386 libraries only (plus arch-independent .pc files)
PKG_CONFIG_LIBDIR=/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig \
	"$top/configure" CC="gcc -m32" --enable-werror
make -j"$jobs"
make -j"$jobs" check TESTS=
readelf -h lib/.libs/libnfq-batch.so.0 | grep -q 'Class: *ELF32' || {
	echo "check-i386: lib/.libs/libnfq-batch.so.0 is not a 32-bit ELF" >&2
	exit 1
}
if ! make check TESTS="$(echo $tests)"; then
	cat test-suite.log 2>/dev/null || true
	exit 1
fi
