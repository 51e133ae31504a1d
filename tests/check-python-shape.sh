#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The layers of the Python binding's C sources (python/src/), checked the
# way tests/check-shape.sh --layers checks lib/'s: each file has a layer
# (the table below), and includes no header of python/src of a layer
# above its own.  With one file pair a layer, a file calls only the layers
# below it: no circle.  What a lower layer needs of a higher one goes
# through a table of callbacks the higher one gives it at its init
# (struct pkt_queue_ops in python/src/packet.h).
#
# Also refused: a file of python/src that has no layer, an include of a
# name that is not a header of python/src or has no layer (a
# "#include <...>" is a system or library header and is not looked at),
# and an "extern" declaration in a .c file (a name taken from another
# file without its header, past the check).
#
# Usage: tests/check-python-shape.sh [TOP]
# from the top of the source tree, or TOP (default: $srcdir, as `make
# check` exports it, else ".").  Every offender is listed; the exit status
# is 1 if there was one.

# python/src's files and their layers, from the lowest: a file may
# include headers of its own layer or below, never above.
layers="
util.h 1	util.c 1
packet.h 2	packet.c 2
queue.h 3	queue.c 3
pool.h 4	pool.c 4
compat.h 5	compat.c 5
module.c 6
"

top=${1:-${srcdir:-.}}
if [ ! -d "$top/python/src" ]; then
	echo "check-python-shape: $top is not the top of the source tree (no python/src/)" >&2
	exit 2
fi
cd "$top" || exit 2

set -- python/src/*.c python/src/*.h
[ -f "$1" ] || { echo "check-python-shape: no C sources in python/src" >&2; exit 2; }

out=$(NFQB_PY_LAYERS=$layers awk '
	function base_of(f) {
		sub(/.*\//, "", f)
		return f
	}
	BEGIN {
		n = split(ENVIRON["NFQB_PY_LAYERS"], a, /[ \t\n]+/)
		for (i = 1; i < n; i++)
			if (a[i] != "" && a[i + 1] ~ /^[0-9]+$/)
				layer[a[i]] = a[i + 1]
		for (i = 1; i < ARGC; i++)
			if (!(base_of(ARGV[i]) in layer))
				print ARGV[i] ": no layer: add it to the table of tests/check-python-shape.sh"
	}
	FNR == 1 { me = base_of(FILENAME); mine = layer[me] }
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		h = $0
		sub(/^[^"]*"/, "", h)
		sub(/".*/, "", h)
		if (!(h in layer))
			print FILENAME ":" FNR ": includes \"" h "\", which has no layer: add it to the table of tests/check-python-shape.sh"
		else if (mine != "" && layer[h] + 0 > mine + 0)
			print FILENAME ":" FNR ": layer " mine " includes \"" h "\" of layer " layer[h]
	}
	FILENAME ~ /\.c$/ && /^[ \t]*extern[ \t]/ {
		print FILENAME ":" FNR ": an extern declaration: include the header of the file that defines it"
	}
' "$@")
if [ -n "$out" ]; then
	echo "check-python-shape: python/src against its layers:" >&2
	printf '%s\n' "$out" | sed 's/^/  /' >&2
	exit 1
fi
echo "check-python-shape: $# files of python/src in their layers"
exit 0
