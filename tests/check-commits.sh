#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The commit habits of CONTRIBUTING.md, on every commit since they became
# the rule (BASE, the last commit before it: a09ccfd): a subject "area:
# what" of at most 72 characters, and a body that says why. Merge commits
# are not checked. Outside a git work tree (a release tarball, `make
# distcheck`), or in a clone without BASE (a shallow one), there is
# nothing to check and it passes, saying so.
#
# Usage: tests/check-commits.sh [TOP [BASE]]
# TOP is the top of the source tree (default: $srcdir, as `make check`
# exports it, else "."). Every offender is listed; the exit status is 1 if
# there was one, 2 on a usage or git error.

top=${1:-${srcdir:-.}}
base=${2:-a09ccfd337efd97f47567d3d7971bf13fc209e24}
cd "$top" 2>/dev/null || { echo "check-commits: $top is not a directory" >&2; exit 2; }

gittop=$(git rev-parse --show-toplevel 2>/dev/null)
if [ -z "$gittop" ] || [ "$(cd "$gittop" && pwd -P)" != "$(pwd -P)" ]; then
	echo "check-commits: not the top of a git work tree: nothing to check"
	exit 0
fi
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
	echo "check-commits: $base is not in this clone (shallow?): nothing to check"
	exit 0
fi

bad=0
n=0
for c in $(git rev-list --no-merges "$base..HEAD"); do
	n=$((n + 1))
	s=$(git log -1 --format=%s "$c")
	why=
	[ ${#s} -le 72 ] || why="subject of ${#s} characters"
	printf '%s\n' "$s" | grep -Eq '^[^ :][^:]{0,39}: [^ ]' ||
		why="${why:+$why, }subject not \"area: what\""
	git log -1 --format=%b "$c" | grep -q '[^[:space:]]' ||
		why="${why:+$why, }no body"
	if [ -n "$why" ]; then
		echo "check-commits: $(git log -1 --format=%h "$c") $s: $why"
		bad=1
	fi
done
echo "check-commits: $n commits since $(git log -1 --format=%h "$base") checked"
[ "$bad" -eq 0 ] && echo "check-commits: passed"
exit "$bad"
