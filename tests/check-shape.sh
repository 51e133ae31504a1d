#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The shape of the code, in two parts:
#
# --functions: no function over 60 lines in the C sources and headers
#   outside tests/ (lib/, utils/, ips/, daq/, python/src/, examples/,
#   integrations/, include/).  A function is a "{" at file scope after a
#   declarator: its ")" closes the line before it or the same line (any
#   brace style: "{" alone at column 0, or "int f(void) {"), and
#   old-style (K&R) parameter declarations may stand in between; static
#   inline functions in headers count like any other.  Its length is the
#   lines between the line of its "{" and the line of the "}" that closes
#   it.  A macro whose body defines a function (a "#define" with a
#   "type name(...) {" in it, such as a getter made once per attribute) is
#   measured the same way on its lines in the #define, and named by the
#   macro.  Comments and string literals are skipped.  kernel/ is left
#   out: it holds patches and guest code in the kernel's own style.  The
#   files are those git tracks, or, outside a git work tree (a release
#   tarball, `make distcheck`), the *.c and *.h files under those
#   directories.
#
# --layers: lib/'s files include no header of a higher layer than their
#   own.  Each header has a layer (the table below); X.c has the layer of
#   X.h, pool*.c that of pool-int.h, the others theirs from the second
#   table.  A file in lib/ or a header it includes that has no layer fails
#   the check: add it to the tables.  queue-int.h (struct nfqb_queue) is
#   private to the queue's own files (queue.c, loop.c, verdict.c,
#   large.c): no other file includes it, whatever its layer.
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
hdrs.h 1	csum.h 1
pkt.h 2		msg.h 2		parse.h 2
book.h 3	plan.h 3	rx.h 3		tx.h 3		pace.h 3
req.h 3		cfg.h 3		verdict.h 3	wake.h 3
queue-int.h 4	queue.h 4	loop.h 4	large.h 4
pool-int.h 5
"

# The layers of lib/'s .c files that no header of their name gives
# (these come first: verdict.c, loop.c and queue.c drive whole queues;
# mss.c is pure buffer code like hdrs.c and csum.c; mangle.c takes a
# queue's packets and decides them, over the public API).
source_layers="
abi.c 1		compat.c 1	stats.c 1	sys.c 1		mss.c 1
verdict.c 4	loop.c 4	queue.c 4	mangle.c 4
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

# The C sources and headers the function rule applies to, one per line,
# relative to the top.
c_sources() {
	gittop=$(git rev-parse --show-toplevel 2>/dev/null) &&
	[ "$(cd "$gittop" && pwd -P)" = "$(pwd -P)" ] &&
	list=$(git ls-files -- '*.c' '*.h') || list=
	if [ -n "$list" ]; then
		printf '%s\n' "$list" | grep -v -e '^tests/' -e '^kernel/'
		return
	fi
	for d in lib utils ips daq python/src examples integrations include; do
		[ -d "$d" ] && find "$d" \( -name '*.c' -o -name '*.h' \) -type f
	done
}

# The functions of the files awk reads, and those the macros of those
# files make: "file:line: N lines: name" for each one over $max.
# One scanner, run on the file's own lines ("f") and, with state of its
# own, on the lines of each #define ("m"), reads character by character:
# comments and literals are blanked; at brace depth 0 it keeps the text
# since the last ";" or "}" (seg) and the statements since the last
# function or directive (hdr, for K&R parameter declarations); a "{" at
# depth 0 after a declarator opens a function.
functions_awk='
	function reset(m) {
		depth[m] = 0; paren[m] = 0; com[m] = 0
		seg[m] = ""; hdr[m] = ""; start[m] = 0; fname[m] = ""
	}
	function trim(t) {
		gsub(/^[ \t]+|[ \t]+$/, "", t)
		return t
	}
	# the name of the function whose declarator t is, or "": t ends with
	# the ")" of its parameters or of attributes after them.  Each group
	# "(...)" at the top of t is, by what stands before it: a macro
	# called without a ";" (nothing before its name: what follows starts
	# afresh), an attribute (skipped), the parameters (a name after a
	# type), or a call or statement (a keyword name: not a function)
	function declarator(t,    i, n, c, d, from, open, pre, name, found) {
		t = trim(t)
		if (t !~ /\)$/)
			return ""
		n = length(t)
		d = 0; from = 1; found = ""
		for (i = 1; i <= n; i++) {
			c = substr(t, i, 1)
			if (c == "(" && d++ == 0) {
				open = i
			} else if (c == ")" && --d == 0) {
				if (found != "")
					continue
				pre = trim(substr(t, from, open - from))
				if (match(pre, /__attribute__$|__declspec$/))
					continue
				if (pre ~ /=/)
					return ""
				if (substr(t, open + 1, 1) == "*") {
					if (pre == "")
						return ""	# a cast
					# "type (*name(params))(params)"
					name = substr(t, open + 1)
					sub(/^\*[ \t]*/, "", name)
					sub(/[^A-Za-z_0-9#].*/, "", name)
					found = name
					continue
				}
				if (!match(pre, /[A-Za-z_][A-Za-z_0-9#]*$/))
					return ""
				name = substr(pre, RSTART)
				if (trim(substr(pre, 1, RSTART - 1)) == "") {
					from = i + 1	# a macro called
					continue
				}
				if (name ~ /^(if|while|for|switch|return|sizeof|do|else|case|goto|typeof|__typeof__|_Alignas|_Static_assert|_Generic)$/)
					return ""
				found = name
			}
		}
		return d == 0 ? found : ""
	}
	# K&R: hdr ends "f(a, b) int a; int b;": a declarator whose
	# parameters are names, then declarations with no "(" in them
	function kr_declarator(h,    i, d) {
		for (i = length(h); i > 0 && substr(h, i, 1) != ")"; i--)
			;
		if (!i || substr(h, i + 1) !~ /^[^(){}=]*;[ \t]*$/)
			return ""
		d = substr(h, 1, i)
		sub(/.*;/, "", d)
		if (d !~ /\([ \t]*[A-Za-z_][A-Za-z_0-9]*([ \t]*,[ \t]*[A-Za-z_][A-Za-z_0-9]*)*[ \t]*\)$/)
			return ""
		return declarator(d)
	}
	# a "{" at depth 0: 0 if it opens nothing (extern "C"), else 1, and
	# start[m] set if it opens a function
	function opened(m, ln,    name) {
		if (trim(seg[m]) ~ /^extern[ \t]+0$/) {
			seg[m] = ""
			return 0
		}
		name = declarator(seg[m])
		if (name == "" && trim(seg[m]) == "" && hdr[m] ~ /;[ \t]*$/)
			name = kr_declarator(hdr[m])
		if (name != "") {
			start[m] = ln
			fname[m] = (m == "m" ? "macro " macro ": " name : name)
		}
		return 1
	}
	function closed(m, ln,    n) {
		if (start[m]) {
			nfunc++
			if (m == "m")
				nmacro++
			n = ln - start[m] - 1
			if (n > max)
				print FILENAME ":" start[m] ": " n " lines: " fname[m]
			start[m] = 0
			hdr[m] = ""
		}
		seg[m] = ""
	}
	# one line of code (of a #define: without its backslash) in state m
	function scan(m, line, ln,    i, n, c, c2, q) {
		n = length(line)
		for (i = 1; i <= n; i++) {
			c = substr(line, i, 1)
			c2 = substr(line, i, 2)
			if (com[m]) {
				if (c2 == "*/") {
					com[m] = 0
					i++
				}
				continue
			}
			if (c2 == "/*") {
				com[m] = 1
				i++
				c = " "
			} else if (c2 == "//") {
				break
			} else if (c == "\"" || c == "\047") {
				q = c
				for (i++; i <= n; i++) {
					c = substr(line, i, 1)
					if (c == "\\")
						i++
					else if (c == q)
						break
				}
				c = "0"
			}
			if (depth[m] > 0) {
				if (c == "{") {
					depth[m]++
				} else if (c == "}" && --depth[m] == 0) {
					closed(m, ln)
				}
				continue
			}
			if (c == "(") {
				paren[m]++
			} else if (c == ")") {
				paren[m]--
			} else if (c == "{" && paren[m] == 0) {
				depth[m] = opened(m, ln)
				continue
			} else if (c == "}") {
				seg[m] = ""	# a stray one: start again
				continue
			} else if (c == ";" && paren[m] == 0) {
				hdr[m] = hdr[m] seg[m] ";"
				seg[m] = ""
				continue
			}
			seg[m] = seg[m] c
		}
		if (depth[m] == 0)
			seg[m] = seg[m] " "
	}
	FNR == 1 { reset("f"); indir = 0; nfile++ }
	# a directive and its continuation lines; a #define is scanned as
	# code of its own
	indir || (!com["f"] && /^[ \t]*#/) {
		line = $0
		more = sub(/\\[ \t]*$/, "", line)
		if (!indir) {
			hdr["f"] = ""
			isdef = 0
			if (line ~ /^[ \t]*#[ \t]*define[ \t]/) {
				isdef = 1
				reset("m")
				sub(/^[ \t]*#[ \t]*define[ \t]+/, "", line)
				match(line, /^[A-Za-z_][A-Za-z_0-9]*/)
				macro = substr(line, 1, RLENGTH)
				line = substr(line, RLENGTH + 1)
				if (line ~ /^\(/)
					sub(/^\([^)]*\)/, "", line)
			}
		}
		if (isdef)
			scan("m", line, FNR)
		indir = more
		next
	}
	{ scan("f", $0, FNR) }
	END { print "#read " nfile + 0 " " nfunc + 0 " " nmacro + 0 }
'

check_functions() {
	files=$(c_sources | sort)
	if [ -z "$files" ]; then
		echo "check-shape: no C sources found" >&2
		return 1
	fi
	out=$(printf '%s\n' "$files" | while IFS= read -r f; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done | tr '\n' '\0' | xargs -0 awk -v max="$max_lines" "$functions_awk")
	printf '%s\n' "$out" | awk '
		/^#read / { f += $2; n += $3; m += $4 }
		END {
			printf "check-shape: %d functions (%d made by macros)", n, m
			printf " in %d C sources and headers read\n", f
		}'
	out=$(printf '%s\n' "$out" | grep -v '^#read ')
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
			if (h == "queue-int.h" && base_of(FILENAME) !~ /^(queue|loop|verdict|large)\.c$/)
				print FILENAME ":" FNR ": includes \"queue-int.h\", private to queue.c, loop.c, verdict.c and large.c"
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
