#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/find-third-party.sh NAME - print the path of the third-party file
# NAME (a source tarball some tests build: libdaq, Snort 3,
# python-netfilterqueue; never part of the tree), wherever the clone is.
# Looked for, first found wins:
#
#   1. in each directory of $NFQB_THIRD_PARTY_DIR (colon-separated);
#   2. in the cache outside the clone, $NFQB_THIRD_PARTY_CACHE (default
#      /var/cache/nfqb-third-party), as SHA256/NAME;
#   3. as shared/third_party/NAME or third_party/NAME beside the clone or
#      beside one of its parent directories;
#   4. the same beside the clone's git origin, when that is a local path
#      (`git remote get-url origin`: a clone made under /tmp or /root from
#      the development checkout), and beside the origin's origin, and so
#      on (up to 4 hops).
#
# When tests/third-party.sha256 lists NAME ("SHA256  NAME" lines, as
# sha256sum prints them), a file whose hash differs is passed over (with
# a note on stderr), and the file found is copied into the cache (when it
# can be written), so that any later clone on this machine finds it there,
# whatever its path and its origin. NFQB_THIRD_PARTY_CACHE= (empty) turns
# the cache off.
#
# Exit status 1 and nothing printed if NAME is nowhere; the places looked
# at are then listed on stderr.
set -u

name=${1:?usage: find-third-party.sh NAME}
case $name in
*/*|.|..|'') echo "find-third-party: bad name: $name" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${NFQB_THIRD_PARTY_CACHE-/var/cache/nfqb-third-party}
sum=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1; exit }' \
	"$top/tests/third-party.sha256" 2>/dev/null)
looked=

# found PATH: print PATH and exit if it is the file we want
found() {
	looked="$looked $1"
	[ -f "$1" ] || return 1
	if [ -n "$sum" ] &&
	   [ "$(sha256sum "$1" 2>/dev/null | cut -d' ' -f1)" != "$sum" ]; then
		echo "find-third-party: $1: not the $name of" \
		     "tests/third-party.sha256 (sha256 $sum), passed over" >&2
		return 1
	fi
	case $1 in
	"$cache"/*) ;;
	*) to_cache "$1" ;;
	esac
	echo "$1"
	exit 0
}

# to_cache PATH: copy PATH into the cache (best effort, atomic)
to_cache() {
	[ -n "$sum" ] && [ -n "$cache" ] || return 0
	[ -f "$cache/$sum/$name" ] && return 0
	mkdir -p "$cache/$sum" 2>/dev/null || return 0
	tmp=$(mktemp "$cache/$sum/.$name.XXXXXX" 2>/dev/null) || return 0
	if cp "$1" "$tmp" 2>/dev/null && chmod 0644 "$tmp" &&
	   mv -f "$tmp" "$cache/$sum/$name"; then
		echo "find-third-party: $name copied to the cache" \
		     "$cache/$sum/" >&2
	else
		rm -f "$tmp"
	fi
	return 0
}

# beside DIR: shared/third_party/NAME and third_party/NAME beside DIR and
# beside each of its parents
beside() {
	d=$1
	while [ "$d" != / ] && [ -n "$d" ]; do
		d=$(dirname "$d")
		found "${d%/}/shared/third_party/$name"
		found "${d%/}/third_party/$name"
	done
}

# origin DIR: the local directory DIR's git origin names, if any
origin() {
	url=$(git -C "$1" remote get-url origin 2>/dev/null) || return 1
	case $url in
	file://*) url=${url#file://} ;;
	/*) ;;
	*:*) return 1 ;;		# host:path, scheme://...: not local
	*) url=$1/$url ;;		# relative to the clone
	esac
	[ -d "$url" ] && (cd "$url" && pwd)
}

# 1. the directories the caller names
if [ -n "${NFQB_THIRD_PARTY_DIR:-}" ]; then
	oldifs=$IFS
	IFS=:
	for d in $NFQB_THIRD_PARTY_DIR; do
		IFS=$oldifs
		[ -n "$d" ] && found "$d/$name"
	done
	IFS=$oldifs
fi

# 2. the cache
[ -n "$sum" ] && [ -n "$cache" ] && found "$cache/$sum/$name"

# 3. beside the clone; 4. beside its local origins
dir=$top
hops=0
while [ -n "$dir" ] && [ $hops -le 4 ]; do
	beside "$dir"
	next=$(origin "$dir") || break
	[ "$next" = "$dir" ] && break
	dir=$next
	hops=$((hops + 1))
done

echo "find-third-party: $name not found; looked at:$looked" |
	fold -s -w 300 >&2
echo "find-third-party: put it in one of those, or name its directory" \
     "in NFQB_THIRD_PARTY_DIR" >&2
exit 1
