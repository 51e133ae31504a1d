#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every public function has a man page: for each nfqb_*() named in the
# public headers, man/man3/<name>.3 must exist, either as the page of its
# group or as a one-line alias ".so man3/<group>.3" to one; the group page
# must list the function in NAME and show its prototype.  Every real page
# must format without a warning, and no page may be left over for a
# function that is gone.  Runs from `make check` (srcdir exported by the
# harness) or by hand from the top directory.
srcdir=${srcdir:-.}
man3=$srcdir/man/man3

# The public headers whose functions need pages: one line each.
headers="
include/libnfq-batch/libnfq-batch.h
include/libnfq-batch/pool.h
include/libnfq-batch/packet.h
"

# Pages that document no single function.
extra_pages="libnfq-batch"

fail=0
err() {
	echo "check-man: $*" >&2
	fail=1
}

names=
for h in $headers; do
	if [ ! -r "$srcdir/$h" ]; then
		err "cannot read $srcdir/$h"
		continue
	fi
	names="$names $(grep -o 'nfqb_[a-z_0-9]*(' "$srcdir/$h" | tr -d '(')"
done
names=$(printf '%s\n' $names | sort -u)
if [ -z "$names" ]; then
	err "no function names found in the headers"
	exit 1
fi

# The text of the NAME section of a page, one word per line.
name_section() {
	sed -n '/^\.SH NAME/,/^\.SH /{/^\.SH/d;p}' "$1" |
		sed 's/\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'
}

missing=
for n in $names; do
	page=$man3/$n.3
	if [ ! -f "$page" ]; then
		missing="$missing $n"
		continue
	fi
	first=$(sed -n 1p "$page")
	case $first in
	.so\ *)
		if [ "$(wc -l < "$page")" -ne 1 ] ||
		   ! printf '%s\n' "$first" |
		     grep -q '^\.so man3/[a-z_0-9-]*\.3$'; then
			err "$n.3: an alias page must be exactly one line" \
			    "'.so man3/<page>.3'"
			continue
		fi
		target=$srcdir/man/${first#.so }
		if [ ! -f "$target" ]; then
			err "$n.3: points to ${first#.so }, which does not exist"
			continue
		fi
		case $(sed -n 1p "$target") in
		.so\ *)
			err "$n.3: points to ${first#.so }, itself an alias"
			continue
			;;
		esac
		;;
	*)
		target=$page
		;;
	esac
	if ! name_section "$target" | grep -qx "$n"; then
		err "$n: not listed in NAME of ${target#"$srcdir"/}"
	fi
	if ! sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$target" |
	     grep -q "[ *]$n("; then
		err "$n: no prototype in SYNOPSIS of ${target#"$srcdir"/}"
	fi
done
if [ -n "$missing" ]; then
	err "functions without a man page in man/man3:"
	for n in $missing; do
		echo "  $n" >&2
	done
fi

# Pages of functions that no header declares any more.
for page in "$man3"/*.3; do
	[ -f "$page" ] || continue
	base=${page##*/}
	base=${base%.3}
	case " $extra_pages " in
	*" $base "*) continue ;;
	esac
	if ! printf '%s\n' $names | grep -qx "$base"; then
		err "${page#"$srcdir"/}: no such function in the headers"
	fi
done

# Every page is installed (listed in man/local.mk).
listed=$(tr -s ' \t\\' '\n\n\n' < "$srcdir/man/local.mk")
for page in "$man3"/*.3; do
	[ -f "$page" ] || continue
	rel=man/man3/${page##*/}
	if ! printf '%s\n' "$listed" | grep -qxF "$rel"; then
		err "$rel: not in dist_man_MANS of man/local.mk"
	fi
done

# Every real page formats without warnings.
if command -v groff >/dev/null 2>&1; then
	lint() { LC_ALL=C groff -man -ww -z -Tutf8 "$1" 2>&1; }
elif command -v man >/dev/null 2>&1; then
	lint() { LC_ALL=C MANWIDTH=80 man --warnings -l -Tutf8 "$1" 2>&1 >/dev/null; }
else
	lint() { :; }
	echo "check-man: neither groff nor man found: pages not linted" >&2
fi
for page in "$man3"/*.3; do
	[ -f "$page" ] || continue
	case $(sed -n 1p "$page") in
	.so\ *) continue ;;
	esac
	out=$(lint "$page")
	if [ -n "$out" ]; then
		err "${page#"$srcdir"/}: formatting warnings:"
		printf '%s\n' "$out" | sed 's/^/  /' >&2
	fi
	if LC_ALL=C grep -n '[^[:print:][:space:]]' "$page" >/dev/null; then
		err "${page#"$srcdir"/}: not plain ASCII"
	fi
done

if [ "$fail" -eq 0 ]; then
	echo "check-man: $(printf '%s\n' $names | wc -l) functions, all with pages"
fi
exit "$fail"
