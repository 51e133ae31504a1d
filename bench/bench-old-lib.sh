#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/bench-old-lib.sh [COMMIT] - build an earlier release's shared
# library once, into a cache outside the clone, and print the directory
# that holds its libnfq-batch.so.0: NFQB_BENCH_OLD_LIB for nfqb-bench's
# app-old consumer (make bench-abi runs this).
#
# COMMIT: default 0a175398f4b9 (release 0.1.0, the last commit of
# 2026-11-29; its symbol version nodes are LIBNFQB_0.1 and LIBNFQB_0.2). A
# hash, not a tag: a clone's origin may not carry the tags. It must be in
# this repository's history (a shallow clone may not have it: git fetch
# --unshallow).
#
# The cache: $NFQB_BENCH_OLD_CACHE (default /var/cache/nfqb-bench-0.1.0),
# one directory per commit: COMMIT/src (git archive of the commit), its
# build in COMMIT/build (CFLAGS='-g -O2', as the default build), and
# COMMIT/lib with the library's files. A build is done once: COMMIT/.built,
# written last, holds the commit's hash (a lock keeps two builds apart).
# Progress goes to stderr, the directory alone to stdout.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:-0a175398f4b9f0c156c0fcc4f99a0f112dcc43b7}
cache=${NFQB_BENCH_OLD_CACHE:-/var/cache/nfqb-bench-0.1.0}

full=$(git -C "$top" rev-parse --verify --quiet "$commit^{commit}" || true)
if [ -z "$full" ]; then
	echo "bench-old-lib: commit $commit is not in the history of $top" \
		"(a shallow clone? git fetch --unshallow origin)" >&2
	exit 1
fi
dir=$cache/$full
if [ -f "$dir/.built" ] && [ "$(cat "$dir/.built")" = "$full" ] &&
   [ -e "$dir/lib/libnfq-batch.so.0" ]; then
	echo "$dir/lib"
	exit 0
fi

mkdir -p "$cache"
# one build at a time (make bench-abi from two build trees)
exec 9>"$cache/.lock"
flock 9
if [ -f "$dir/.built" ] && [ "$(cat "$dir/.built")" = "$full" ] &&
   [ -e "$dir/lib/libnfq-batch.so.0" ]; then
	echo "$dir/lib"
	exit 0
fi
echo "bench-old-lib: building libnfq-batch at $full into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir/src" "$dir/build" "$dir/lib"
git -C "$top" archive "$full" | tar -C "$dir/src" -x
log=$dir/build.log
fail() {
	tail -n 30 "$log" >&2
	echo "bench-old-lib: $1 failed at $full (log: $log)" >&2
	exit 1
}
(cd "$dir/src" && ./autogen.sh) >"$log" 2>&1 || fail "autogen.sh"
(cd "$dir/build" && ../src/configure CFLAGS='-g -O2') >>"$log" 2>&1 ||
	fail "configure"
nice -n 10 make -C "$dir/build" -j2 lib/libnfq-batch.la >>"$log" 2>&1 ||
	fail "make lib/libnfq-batch.la"
cp -a "$dir/build/lib/.libs/"libnfq-batch.so.0* "$dir/lib/"
[ -e "$dir/lib/libnfq-batch.so.0" ] ||
	fail "finding lib/.libs/libnfq-batch.so.0"
# last: what says the build is complete
echo "$full" >"$dir/.built"
echo "bench-old-lib: done" >&2
echo "$dir/lib"
