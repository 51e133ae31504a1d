#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The shape of the code, in two parts:
#
# --functions: no function over 60 lines in the C sources outside tests/
#   (lib/, utils/, daq/, python/src/, examples/, integrations/).  A
#   function's body is the lines between a "{" alone at column 0 and the
#   next "}" at column 0.  kernel/ is left out: it holds patches and guest
#   code in the kernel's own style.  The files are those git tracks, or,
#   outside a git work tree (a release tarball, `make distcheck`), the *.c
#   files under those directories.
#
# --layers: lib/'s files include no header of a higher layer than their
#   own.  Each header has a layer (the table below); X.c has the layer of
#   X.h, pool*.c that of pool-int.h, the others theirs from the second
#   table.  A file in lib/ or a header it includes that has no layer fails
#   the check: add it to the tables.  queue-int.h (struct nfqb_queue) is
#   private to the queue's own files (queue.c, loop.c, verdict.c): no other
#   file includes it, whatever its layer.
#
# Usage: tests/check-shape.sh [--functions | --layers] [TOP]
# from the top of the source tree, or TOP as the first argument after the
# option (default: $srcdir, as `make check` exports it, else ".").
# Without an option both parts run; NFQB_SHAPE_CHECK=functions or layers
# (set by `make check`) chooses one instead.  Every offender is listed;
# the exit status is 1 if there was one.

max_lines=60

# lib/'s headers and their layers: a file may include headers of its own
# layer or below, never above.
header_layers="
internal.h 1	sys.h 1		sys-real.h 1	settings.h 1	post.h 1
pkt.h 2		msg.h 2		parse.h 2
book.h 3	plan.h 3	rx.h 3		tx.h 3		pace.h 3
req.h 3		cfg.h 3		verdict.h 3
queue-int.h 4	queue.h 4	loop.h 4
pool-int.h 5
"

# The layers of lib/'s .c files that no header of their name gives
# (these come first: verdict.c, loop.c and queue.c drive whole queues).
source_layers="
abi.c 1		compat.c 1	stats.c 1	sys.c 1
verdict.c 4	loop.c 4	queue.c 4
"

parts=${NFQB_SHAPE_CHECK:-all}
case $1 in
--functions) parts=functions; shift ;;
--layers) parts=layers; shift ;;
--all) parts=all; shift ;;
-*)
	echo "usage: $0 [--functions | --layers] [TOP]" >&2
	exit 2
	;;
esac
top=${1:-${srcdir:-.}}
if [ ! -d "$top/lib" ]; then
	echo "check-shape: $top is not the top of the source tree (no lib/)" >&2
	exit 2
fi
cd "$top" || exit 2

fail=0

# The C sources the function rule applies to, one per line, relative to
# the top.
c_sources() {
	gittop=$(git rev-parse --show-toplevel 2>/dev/null) &&
	[ "$(cd "$gittop" && pwd -P)" = "$(pwd -P)" ] &&
	list=$(git ls-files -- '*.c') || list=
	if [ -n "$list" ]; then
		printf '%s\n' "$list" | grep -v -e '^tests/' -e '^kernel/'
		return
	fi
	for d in lib utils daq python/src examples integrations; do
		[ -d "$d" ] && find "$d" -name '*.c' -type f
	done
}

check_functions() {
	files=$(c_sources | sort)
	if [ -z "$files" ]; then
		echo "check-shape: no C sources found" >&2
		return 1
	fi
	out=$(printf '%s\n' "$files" | while IFS= read -r f; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done | tr '\n' '\0' | xargs -0 awk -v max="$max_lines" '
		/^\{$/ { start = FNR; name = prev; next }
		/^\}/ {
			if (start) {
				n = FNR - start - 1
				if (n > max)
					print FILENAME ":" start ": " n " lines: " name
				start = 0
			}
		}
		{ if (!start && $0 ~ /^[A-Za-z_].*\(/) prev = $0 }
	')
	if [ -n "$out" ]; then
		echo "check-shape: functions over $max_lines lines (split them into helpers):" >&2
		printf '%s\n' "$out" | sed 's/^/  /' >&2
		return 1
	fi
	return 0
}

check_layers() {
	out=$(NFQB_SHAPE_HEADERS=$header_layers \
	      NFQB_SHAPE_SOURCES=$source_layers awk '
		function table(s, t,    a, n, i) {
			n = split(s, a, /[ \t\n]+/)
			for (i = 1; i < n; i++)
				if (a[i] != "" && a[i + 1] ~ /^[0-9]+$/)
					t[a[i]] = a[i + 1]
		}
		function layer_of(b,    x) {
			if (b in src)
				return src[b]
			x = b
			sub(/\.[ch]$/, ".h", x)
			if (x in hdr)
				return hdr[x]
			if (b ~ /^pool.*\.c$/)
				return hdr["pool-int.h"]
			return ""
		}
		function base_of(f) {
			sub(/.*\//, "", f)
			return f
		}
		BEGIN {
			table(ENVIRON["NFQB_SHAPE_HEADERS"], hdr)
			table(ENVIRON["NFQB_SHAPE_SOURCES"], src)
			for (i = 1; i < ARGC; i++)
				if (layer_of(base_of(ARGV[i])) == "")
					print ARGV[i] ": no layer: add it to the tables of tests/check-shape.sh"
		}
		FNR == 1 { mine = layer_of(base_of(FILENAME)) }
		/^[ \t]*#[ \t]*include[ \t]*"/ {
			h = $0
			sub(/^[^"]*"/, "", h)
			sub(/".*/, "", h)
			if (h == "queue-int.h" && base_of(FILENAME) !~ /^(queue|loop|verdict)\.c$/)
				print FILENAME ":" FNR ": includes \"queue-int.h\", private to queue.c, loop.c and verdict.c"
			if (!(h in hdr))
				print FILENAME ":" FNR ": includes \"" h "\", which has no layer: add it to the table of tests/check-shape.sh"
			else if (mine != "" && hdr[h] + 0 > mine + 0)
				print FILENAME ":" FNR ": layer " mine " includes \"" h "\" of layer " hdr[h]
		}
	' lib/*.c lib/*.h)
	if [ -n "$out" ]; then
		echo "check-shape: lib/ against its layers:" >&2
		printf '%s\n' "$out" | sed 's/^/  /' >&2
		return 1
	fi
	return 0
}

case $parts in
functions|all)
	check_functions || fail=1
	;;
esac
case $parts in
layers|all)
	check_layers || fail=1
	;;
functions)
	;;
*)
	echo "check-shape: NFQB_SHAPE_CHECK must be functions, layers or all" >&2
	exit 2
	;;
esac
exit $fail
