#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# LOG_COMPILER of tests/check-i386.sh where the kernel does not run 32-bit
# programs: a test program (an ELF file, or libtool's wrapper script around
# one) runs under qemu-i386, with the library path libtool's wrapper would
# set; a shell script test (check-man.sh) runs as it is. Run from the
# build directory (the harness does).
prog=$1
if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" = '177ELF' ]; then
	exec qemu-i386 "$@"
fi
if grep -q 'libtool' "$prog" 2>/dev/null &&
   grep -q 'wrapper script' "$prog" 2>/dev/null; then
	# --mode=execute swaps the wrapper for the program it wraps and sets
	# LD_LIBRARY_PATH to the uninstalled library
	exec ./libtool --mode=execute qemu-i386 "$@"
fi
exec "$@"
