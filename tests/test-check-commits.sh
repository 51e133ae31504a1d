#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/check-commits.sh against commits made for it in a scratch
# repository: it passes on commits that keep the habits and fails, naming
# the commit, on each way of breaking them (a subject over 72
# characters, a subject not "area: what", no body); merges are not
# checked, and outside a git work tree it passes.
set -u
srcdir=${srcdir:-$(dirname "$0")/..}
check=$(cd "$srcdir" && pwd)/tests/check-commits.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-commits.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0

git_() { git -C "$tmp/r" -c user.name=t -c user.email=t@example.org "$@"; }
# commit SUBJECT [BODY [FILE]]: a commit changing FILE (default f)
commit() {
	echo "$n" >>"$tmp/r/${3:-f}"
	n=$((n + 1))
	git_ add "${3:-f}" && git_ commit -q -m "$1" ${2:+-m "$2"}
}
# expect WHAT STATUS [PATTERN]: check-commits on the scratch repository
# since its first commit exits STATUS and, if PATTERN, prints it
expect() {
	out=$("$check" "$tmp/r" "$base" 2>&1)
	rc=$?
	if [ "$rc" != "$2" ] ||
	   { [ -n "${3:-}" ] && ! printf '%s\n' "$out" | grep -q "$3"; }; then
		echo "FAIL: $1: exit $rc, expected $2${3:+ with '$3'}"
		printf '%s\n' "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "ok: $1"
	fi
}

mkdir "$tmp/r" && git_ init -q && commit "base: the first" "why" || exit 99
base=$(git_ rev-parse HEAD)
commit "lib: a change" "Why it was made."
commit "doc/design.md: another" "Why."
expect "commits that keep the habits" 0 "passed"
git_ branch -q keep
commit "lib: $(printf '%070d' 0)" "Why."
expect "a subject of 75 characters" 1 "subject of 75 characters"
git_ reset -q --hard keep
commit "no area here" "Why."
expect "a subject without an area" 1 'not "area: what"'
git_ reset -q --hard keep
commit "lib: no body"
expect "a commit without a body" 1 "no body"
git_ reset -q --hard keep
git_ checkout -q -b side && commit "lib: on a side" "Why." g &&
	git_ checkout -q - && commit "lib: on main" "Why." &&
	git_ merge -q --no-ff -m "Merge branch 'side' of a rather long name, longer than seventy-two" side ||
	exit 99
[ "$(git_ rev-list --merges "$base..HEAD" | wc -l)" = 1 ] || exit 99
expect "a merge commit is not checked" 0 "passed"
mkdir "$tmp/plain"
out=$("$check" "$tmp/plain" "$base" 2>&1)
[ $? = 0 ] && echo "ok: outside a git work tree" ||
	{ echo "FAIL: outside a git work tree: $out"; fails=$((fails + 1)); }
echo "test-check-commits: $fails failed"
[ "$fails" = 0 ]
