#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/export-series.sh DEVTREE [BRANCH] - write the series of a
# development tree (a git repository of the kernel source whose tag
# "base" is the pristine source, see kernel/README.md) into
# kernel/patches: the first NFQB_SERIES_NF commits after base (6) are
# fixes for nf, posted on their own ("[PATCH nf N/6]", files
# 00-nf-000N-...), the others are the nf-next series ("[RFC PATCH
# nf-next v1 NN/MM]", 0001-...) with a cover letter whose text is taken
# from the current 0000-cover-letter.patch (everything between its
# header and the shortlog), so only the shortlog and the diffstat are
# regenerated. Every commit is written again with a fixed author,
# committer and dates before the export (the development tree is not
# changed), so that the files depend only on the commits' trees and
# messages: an unchanged series exports to the same bytes, whenever and
# however its commits were made.
#
# NFQB_SERIES_OUT writes elsewhere (kernel/patches-upstream for the
# series on upstream, with NFQB_SERIES_NF=5). If the output directory
# has a cover letter for the nf set (00-nf-0000-cover-letter.patch), it
# is regenerated the same way. The files recipients-nf and
# recipients-next in the output directory, if present, hold the To: and
# Cc: lines put in the header of each cover letter.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dev=${1:?usage: export-series.sh DEVTREE [BRANCH]}
branch=${2:-HEAD}
out=${NFQB_SERIES_OUT:-$here/patches}
out=$(cd "$out" && pwd)	# a relative one is read before the cd below
prefix=${NFQB_SERIES_PREFIX:-RFC PATCH nf-next v1}
export GIT_AUTHOR_NAME=nfqb GIT_AUTHOR_EMAIL=nfqb@localhost
export GIT_COMMITTER_NAME=nfqb GIT_COMMITTER_EMAIL=nfqb@localhost
export GIT_AUTHOR_DATE='2000-01-01 00:00:00 +0000'
export GIT_COMMITTER_DATE='2000-01-01 00:00:00 +0000'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cover=$out/0000-cover-letter.patch
# the text of the current cover letter: after the header, before the
# shortlog ("nfqb (N):")
[ -s "$cover" ] || { echo "export-series.sh: no $cover to take the text from" >&2; exit 1; }
awk 'body && /^nfqb \([0-9]+\):$/ { exit } body { print } /^$/ { body = 1 }' \
	"$cover" > "$tmp/text"
nfcover=$out/00-nf-0000-cover-letter.patch
if [ -s "$nfcover" ]; then
	awk 'body && /^nfqb \([0-9]+\):$/ { exit } body { print } /^$/ { body = 1 }' \
		"$nfcover" > "$tmp/nftext"
	nfsubject=$(sed -n 's/^Subject: \[[^]]*\] //p' "$nfcover")
fi
cd "$dev"
# the commits again, with the author, committer and dates above
tip=$(git rev-parse "base^{commit}")
for c in $(git rev-list --reverse "base..$branch"); do
	git cat-file commit "$c" | sed '1,/^$/d' > "$tmp/msg"
	tip=$(git commit-tree "$c^{tree}" -p "$tip" < "$tmp/msg")
done
branch=$tip
nfcount=${NFQB_SERIES_NF:-6}
nf=$(git rev-list --reverse "base..$branch" | sed -n "${nfcount}p")
if [ "$nfcount" -gt 1 ] && [ -s "$tmp/nftext" ]; then
	git format-patch -q --no-signature --subject-prefix='PATCH nf' -n \
		--cover-letter -o "$tmp/nf" "base..$nf"
elif [ "$nfcount" -gt 1 ]; then
	git format-patch -q --no-signature --subject-prefix='PATCH nf' -n \
		-o "$tmp/nf" "base..$nf"
else
	git format-patch -q --no-signature --subject-prefix='PATCH nf' \
		-o "$tmp/nf" -1 "$nf"
fi
git format-patch -q --no-signature --subject-prefix="$prefix" -n --cover-letter \
	-o "$tmp/next" "$nf..$branch"
# the cover letters are read above and written again below
find "$out" -maxdepth 1 -name '*.patch' ! -name '*0000-cover-letter.patch' -delete
for p in "$tmp"/nf/*.patch; do
	case $p in */0000-*) continue ;; esac
	cp "$p" "$out/00-nf-$(basename "$p")"
done
# the header of a generated cover letter, its subject set and the
# recipients (if listed) added
header() {
	sed -n '1,/^$/p' "$1" | sed '$d' |
		sed "s|\\*\\*\\* SUBJECT HERE \\*\\*\\*|$2|"
	[ -s "$3" ] && grep -E '^(To|Cc): ' "$3"
	echo
}
if [ -s "$tmp/nf/0000-cover-letter.patch" ]; then
	c=$tmp/nf/0000-cover-letter.patch
	{
		header "$c" "$nfsubject" "$out/recipients-nf"
		cat "$tmp/nftext"
		sed -n '/^nfqb ([0-9]*):$/,$p' "$c"
	} > "$nfcover"
fi
for p in "$tmp"/next/*.patch; do
	case $p in */0000-*) continue ;; esac
	cp "$p" "$out/"
done
c=$tmp/next/0000-cover-letter.patch
{
	header "$c" 'netfilter: nfqueue from the netdev ingress and egress hooks' \
		"$out/recipients-next"
	cat "$tmp/text"
	sed -n '/^nfqb ([0-9]*):$/,$p' "$c"
} > "$cover"
ls "$out" >&2
