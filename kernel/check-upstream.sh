#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/check-upstream.sh SOURCE [REV] - check that the upstream variant
# of the series (kernel/patches-upstream) applies to an upstream kernel.
#
# Only the files the series touches are needed: they are taken from
# SOURCE into a scratch git repository (one commit), and every patch is
# applied in order with git am, the nf set first, then the nf-next
# series. Exit status 0 only if every patch applies.
#
# SOURCE is one of
#   - a git directory of an upstream kernel (a clone's .git, or a bare
#     mirror such as torvalds/linux or nf-next): files are read at REV
#     (default HEAD), and the last commit that changed each one is
#     printed, so the base can be named exactly;
#   - a kernel source tree (a directory with a top-level Makefile);
#   - a source tarball (.tar, .tar.gz, .tar.xz), e.g. Debian's
#     /usr/src/linux-source-7.2.tar.xz from the linux-source-7.2 package.
#
# The series directory's BASE file lists the git blob id of each file at
# the upstream state the series was carried onto; the script says whether
# SOURCE has the same files (a difference is reported, not an error: the
# series may well apply to a later state).
#
# Environment: NFQB_KERNEL_PATCHES (the series, default
# kernel/patches-upstream), NFQB_KEEP=1 (keep the scratch repository and
# print its path, for checkpatch or a rebase), NFQB_ROUNDTRIP=1 (export
# the series again from the scratch repository with export-series.sh and
# fail unless it comes out byte for byte as committed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:?usage: check-upstream.sh UPSTREAM-GIT-DIR|SOURCE-TREE|TARBALL [REV]}
rev=${2:-HEAD}
patchdir=${NFQB_KERNEL_PATCHES:-$here/patches-upstream}

log() { echo "check-upstream.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

ls "$patchdir"/*.patch > /dev/null 2>&1 || die "no patches in $patchdir"

# the patches in order, without the cover letters
series() {
	for p in "$patchdir"/*.patch; do
		case $(basename "$p") in *0000-cover-letter.patch) continue ;; esac
		echo "$p"
	done
}

# every file the series changes that it does not create (a later patch
# may change a file an earlier one created)
files=$(for p in $(series); do
	awk '/^--- \/dev\/null/ { new = 1; next }
	     /^\+\+\+ b\// { if (new) print "new", substr($2, 3); new = 0 }
	     /^--- a\// { print "old", substr($2, 3) }' "$p"
done | awk '$1 == "new" { created[$2] = 1 }
	    $1 == "old" && !($2 in created) { print $2 }' | sort -u)
[ -n "$files" ] || die "no files in the series"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-upstream.XXXXXX")
if [ "${NFQB_KEEP:-0}" != 1 ]; then
	trap 'rm -rf "$tmp"' EXIT
fi
work=$tmp/tree
mkdir -p "$work"

export GIT_AUTHOR_NAME=nfqb GIT_AUTHOR_EMAIL=nfqb@localhost
export GIT_COMMITTER_NAME=nfqb GIT_COMMITTER_EMAIL=nfqb@localhost
export GIT_AUTHOR_DATE='2000-01-01 00:00:00 +0000'
export GIT_COMMITTER_DATE='2000-01-01 00:00:00 +0000'

if git --git-dir="$src" rev-parse -q --verify "$rev^{commit}" > /dev/null 2>&1 ||
   git --git-dir="$src/.git" rev-parse -q --verify "$rev^{commit}" > /dev/null 2>&1; then
	gd=$src
	[ -d "$src/.git" ] && gd=$src/.git
	commit=$(git --git-dir="$gd" rev-parse "$rev^{commit}")
	log "upstream: git $gd at $(git --git-dir="$gd" log -1 --format='%H (%cs) %s' "$commit")"
	for f in $files; do
		mkdir -p "$work/$(dirname "$f")"
		git --git-dir="$gd" show "$commit:$f" > "$work/$f" 2>/dev/null ||
			die "$f is not in $commit"
		mode=$(git --git-dir="$gd" ls-tree "$commit" -- "$f" | cut -c1-6)
		[ "$mode" = 100755 ] && chmod +x "$work/$f"
		log "  $f: last changed by $(git --git-dir="$gd" log -1 --format='%h (%cs) %s' "$commit" -- "$f")"
	done
	base="upstream $commit"
elif [ -d "$src" ] && [ -f "$src/Makefile" ]; then
	log "upstream: source tree $src ($(sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\|EXTRAVERSION\) = *//p' "$src/Makefile" | paste -sd. - | sed "s/\\.$//"))"
	for f in $files; do
		[ -f "$src/$f" ] || die "$f is not in $src"
		mkdir -p "$work/$(dirname "$f")"
		cp -p "$src/$f" "$work/$f"
	done
	base="upstream tree $src"
elif [ -f "$src" ]; then
	log "upstream: tarball $src"
	# the tarball's files sit under one top-level directory
	top=$(tar -tf "$src" | head -1 | cut -d/ -f1)
	x=$tmp/x
	mkdir -p "$x"
	# shellcheck disable=SC2086 # one member per file
	tar -C "$x" -xf "$src" "$top/Makefile" $(for f in $files; do echo "$top/$f"; done) ||
		die "some file of the series is missing from $src"
	for f in $files; do
		mkdir -p "$work/$(dirname "$f")"
		cp -p "$x/$top/$f" "$work/$f"
	done
	log "  $top: $(sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\|EXTRAVERSION\) = *//p' "$x/$top/Makefile" | paste -sd. - | sed "s/\\.$//")"
	base="upstream tarball $(basename "$src")"
else
	die "$src is neither a git directory with $rev, a source tree nor a tarball"
fi

cd "$work"
git init -q
if [ -f "$patchdir/BASE" ]; then
	differ=$(grep -v '^#' "$patchdir/BASE" | while read -r blob f; do
		[ -f "$f" ] && [ "$(git hash-object "$f")" = "$blob" ] || echo "$f"
	done)
	if [ -z "$differ" ]; then
		log "the files are those of BASE ($(sed -n '1s/^# .*onto: //p' "$patchdir/BASE"))"
	else
		log "files that differ from BASE:" $differ
	fi
fi
git add -A .
git commit -q -m "upstream: the files the series touches"
git tag base

n=0
for p in $(series); do
	if ! git am -q --keep-cr "$p" > "$tmp/am.log" 2>&1; then
		grep -v '^hint:' "$tmp/am.log" >&2 || true
		git am --abort > /dev/null 2>&1 || true
		die "$(basename "$p") does not apply (after $n patches)"
	fi
	n=$((n + 1))
	log "applies: $(basename "$p")"
done
log "all $n patches apply to $base"
if [ "${NFQB_ROUNDTRIP:-0}" = 1 ]; then
	mkdir -p "$tmp/rt"
	cp "$patchdir"/* "$tmp/rt/"
	nfn=$(ls "$patchdir"/00-nf-*.patch 2>/dev/null | grep -vc '/00-nf-0000-' || true)
	NFQB_SERIES_OUT=$tmp/rt NFQB_SERIES_NF=$nfn \
		sh "$here/export-series.sh" "$work" HEAD 2>/dev/null
	diff -r "$patchdir" "$tmp/rt" >&2 ||
		die "the series does not export again to the same bytes"
	log "exports again to the same bytes"
fi
[ "${NFQB_KEEP:-0}" = 1 ] && echo "$work"
exit 0
