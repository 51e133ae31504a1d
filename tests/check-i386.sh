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
# Where the running kernel does not execute 32-bit programs (a kernel with
# IA32 emulation off, or a hypervisor without it: "Exec format error"),
# the tests run under qemu-user's qemu-i386 instead (package qemu-user,
# which tests/deps.sh installs); configure then treats the build as a
# cross build. NFQB_I386_EXEC=native|qemu forces one way.
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
	tests/unit/test_model tests/unit/test_hdrs tests/check-man.sh"

if [ ! -d "/usr/lib/$multiarch/pkgconfig" ] ||
   [ ! -f "/usr/lib/$multiarch/pkgconfig/libmnl.pc" ]; then
	echo "check-i386: no i386 libmnl.pc: run tests/deps.sh (as root)" >&2
	exit 1
fi
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)

rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"

# Can this machine run a 32-bit program itself?
exec_mode=${NFQB_I386_EXEC:-}
if [ -z "$exec_mode" ]; then
	printf 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }\n' \
		>probe32.c
	gcc -m32 -o probe32 probe32.c
	if ./probe32 2>/dev/null; then
		exec_mode=native
	else
		exec_mode=qemu
	fi
	rm -f probe32 probe32.c
fi
log_compiler=
case $exec_mode in
native)
	echo "check-i386: 32-bit programs run natively"
	;;
qemu)
	if ! command -v qemu-i386 >/dev/null 2>&1; then
		echo "check-i386: this kernel does not run 32-bit programs and" \
			"qemu-i386 is missing: run tests/deps.sh (qemu-user)" >&2
		exit 1
	fi
	echo "check-i386: this kernel does not run 32-bit programs:" \
		"the tests run under $(qemu-i386 --version | head -n 1)"
	log_compiler="LOG_COMPILER=$top/tests/i386-exec.sh"
	;;
*)
	echo "check-i386: NFQB_I386_EXEC must be native or qemu" >&2
	exit 1
	;;
esac

# pkg-config of the i386 libraries only (plus arch-independent .pc files);
# --host makes configure accept a compiler whose programs it cannot run
PKG_CONFIG_LIBDIR=/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig \
	"$top/configure" CC="gcc -m32" --build=x86_64-pc-linux-gnu \
	--host=i686-pc-linux-gnu --enable-werror
make -j"$jobs"
make -j"$jobs" check TESTS=
readelf -h lib/.libs/libnfq-batch.so.0 | grep -q 'Class: *ELF32' || {
	echo "check-i386: lib/.libs/libnfq-batch.so.0 is not a 32-bit ELF" >&2
	exit 1
}
if ! make check TESTS="$(echo $tests)" $log_compiler; then
	cat test-suite.log 2>/dev/null || true
	exit 1
fi
