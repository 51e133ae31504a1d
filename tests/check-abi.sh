#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The ABI check: compare the ABI of a built libnfq-batch.so with the one
# recorded in the tree (tests/abi/libnfq-batch.<arch>.abi, made by abidw of
# Debian's abigail-tools), and fail on anything that would break a program
# linked against the recorded one: a symbol (or symbol version) removed, a
# function's parameters or return type changed, a public struct or enum
# changed in size or layout. Added symbols and versions are fine (they are
# listed, not counted), and so are new fields at the end of a struct passed
# with its size (tests/abi/grow.suppr). Only the types of the public
# headers are compared.
#
#   tests/check-abi.sh BUILD_DIR            check (exit 1 on a break)
#   tests/check-abi.sh BUILD_DIR --update   record the ABI of BUILD_DIR
#
# BUILD_DIR is a configured and built tree (with -g: the default CFLAGS);
# its architecture (x86_64, i386, ...) picks the recorded file. The record
# changes only at a release candidate, on purpose, with --update; a change
# it shows is deliberate only if the old interface stays in lib/compat.c
# and the map file (see the top of lib/libnfq-batch.map).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check-abi.sh BUILD_DIR [--update]}
mode=${2:-check}
lib=$build/lib/.libs/libnfq-batch.so.0

for t in abidw abidiff readelf; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "check-abi: $t not found (apt-get install abigail-tools binutils)" >&2
		exit 1
	fi
done
if [ ! -f "$lib" ]; then
	echo "check-abi: no $lib: build it first" >&2
	exit 1
fi

case $(readelf -h "$lib" | sed -n 's/^ *Machine: *//p') in
*X86-64*) arch=x86_64 ;;
*80386*) arch=i386 ;;
*AArch64*) arch=aarch64 ;;
*) arch=$(readelf -h "$lib" | sed -n 's/^ *Machine: *//p' | tr -c 'A-Za-z0-9\n' _) ;;
esac
ref=$top/tests/abi/libnfq-batch.$arch.abi

if ! readelf -S "$lib" | grep -q '\.debug_info'; then
	echo "check-abi: $lib has no debug info: build it with -g" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The public headers alone, so that only their types are part of the ABI.
mkdir -p "$tmp/include"
cp "$top"/include/libnfq-batch/*.h "$tmp/include/"
abidw --headers-dir "$tmp/include" --drop-private-types --no-corpus-path \
	--no-comp-dir-path --short-locs --type-id-style hash \
	--out-file "$tmp/new.abi" "$lib" 2>"$tmp/abidw.err" || {
	echo "check-abi: abidw failed on $lib:" >&2
	cat "$tmp/abidw.err" >&2
	exit 1
}

if [ "$mode" = --update ]; then
	mkdir -p "$(dirname "$ref")"
	cp "$tmp/new.abi" "$ref"
	echo "check-abi: recorded the ABI of $lib in ${ref#"$top"/}"
	exit 0
fi
if [ ! -f "$ref" ]; then
	echo "check-abi: no recorded ABI for $arch (${ref#"$top"/});" \
	     "record one with: $0 $build --update" >&2
	exit 1
fi

# abidiff's exit status is a bit mask: 1 error, 2 usage, 4 an ABI change,
# 8 an incompatible change. Added symbols are not changes here
# (--no-added-syms), nor are new fields at the end of the structs passed
# with their size (tests/abi/grow.suppr); what is left in 4 is a changed
# function or type.
status=0
abidiff --no-added-syms --suppressions "$top/tests/abi/grow.suppr" \
	"$ref" "$tmp/new.abi" >"$tmp/diff" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
	cat "$tmp/diff"
	if [ $((status & 3)) -ne 0 ]; then
		echo "check-abi: abidiff failed (status $status)" >&2
	else
		echo "check-abi: the ABI of $lib breaks the recorded one" \
		     "(${ref#"$top"/}): see above" >&2
	fi
	exit 1
fi
added=$(abidiff "$ref" "$tmp/new.abi" 2>/dev/null |
	sed -n 's/^Functions changes summary: .* \([0-9]*\) Added.*/\1/p')
echo "check-abi: $arch: no break of the recorded ABI" \
     "(${added:-0} function(s) added since it was recorded)"
