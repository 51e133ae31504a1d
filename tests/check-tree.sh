#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Nothing built and nothing of one machine in git: every file git tracks
# is a source.  A tracked file fails the check if it is
#   - an ELF object (magic \177ELF: a program, a library, a .o),
#   - an ar archive (magic "!<arch>\n", or "!<thin>\n": a .a), or
#   - a symlink pointing outside the tree: an absolute target, or a
#     relative one that leaves the top of the tree on its way (checked on
#     the path as written, as git stores it, not on what it finds now).
# A build directory committed by mistake (b/ in commit 5baaa68: ELF
# programs, libtool, symlinks into another worktree) fails it at once.
#
# The files are those `git ls-files` lists, read as the work tree has them
# (a file deleted there is read from git's copy).  Outside a git work tree
# (a release tarball, `make distcheck`) there is no list of sources to
# trust: a build in the tree mixes its objects in, so the script says it
# has nothing to check and passes.
#
# Usage: tests/check-tree.sh [TOP]
# TOP is the top of the source tree (default: $srcdir, as `make check`
# exports it, else ".").  Every offender is listed; the exit status is 1
# if there was one, 2 on a usage or git error.

top=${1:-${srcdir:-.}}
if [ ! -d "$top" ]; then
	echo "check-tree: $top is not a directory" >&2
	exit 2
fi
cd "$top" || exit 2

# Is this the top of a git work tree?  Not when git finds none, or finds
# one higher up (a tarball unpacked inside a clone's build directory).
in_git() {
	gittop=$(git rev-parse --show-toplevel 2>/dev/null) &&
	[ "$(cd "$gittop" && pwd -P)" = "$(pwd -P)" ]
}

if ! in_git; then
	if [ -e .git ]; then
		echo "check-tree: $(pwd) has a .git but git cannot list its files" >&2
		exit 2
	fi
	echo "check-tree: $(pwd) is not a git work tree (a release tarball?):"
	echo "check-tree: nothing to check, passed"
	exit 0
fi

# "mode sha stage<TAB>path" for each tracked file.
if ! list=$(git -c core.quotepath=off ls-files -s); then
	echo "check-tree: git ls-files failed in $(pwd)" >&2
	exit 2
fi

# The first 8 bytes of a tracked file, in hex ("7f454c46..."), from the
# work tree, or from git when the work tree has no such file.
magic() {
	if [ -f "$2" ] && [ ! -L "$2" ]; then
		od -An -tx1 -N8 -- "$2"
	else
		git cat-file blob "$1" | od -An -tx1 -N8
	fi | tr -d ' \n'
}

# Reads "path<TAB>target" lines; prints the links whose target is absolute
# or leaves the tree.  The link's directory and the target are walked
# component by component from the top: a ".." at depth 0 leaves it.
outside_links() {
	awk -F '\t' '
	{
		path = $1
		target = $2
		if (target == "") {
			print path ": symlink with an empty target"
			next
		}
		if (target ~ /^\//) {
			print path ": symlink to an absolute path: " target
			next
		}
		dir = path
		if (!sub(/\/[^\/]*$/, "", dir))
			dir = ""
		n = split(dir "/" target, c, "/")
		depth = 0
		for (i = 1; i <= n; i++) {
			if (c[i] == "" || c[i] == ".")
				continue
			if (c[i] == "..") {
				if (depth == 0) {
					print path ": symlink out of the tree: " target
					next
				}
				depth--
			} else {
				depth++
			}
		}
	}'
}

# The files: an ELF or ar magic in the first bytes of each.
check_files() {
	printf '%s\n' "$list" | while read -r mode sha _ path; do
		case $mode in
		100*) ;;
		*) continue ;;
		esac
		case $(magic "$sha" "$path") in
		7f454c46*)
			echo "$path: ELF object"
			;;
		213c617263683e0a|213c7468696e3e0a)
			echo "$path: ar archive"
			;;
		esac
	done
}

# The symlinks: their targets as git stores them.
check_links() {
	printf '%s\n' "$list" | while read -r mode sha _ path; do
		[ "$mode" = 120000 ] || continue
		printf '%s\t%s\n' "$path" "$(git cat-file blob "$sha")"
	done | outside_links
}

nfiles=$(printf '%s\n' "$list" | grep -c '^100')
nlinks=$(printf '%s\n' "$list" | grep -c '^120000 ')
findings=$(check_files; check_links)
nbad=0
[ -n "$findings" ] && nbad=$(printf '%s\n' "$findings" | wc -l)
echo "check-tree: $(pwd): git ls-files: $nfiles files and $nlinks symlinks" \
	"checked for ELF objects, ar archives and symlinks out of the tree"
if [ "$nbad" -ne 0 ]; then
	echo "check-tree: $nbad tracked files that do not belong in git" \
		"(git rm them; ignore build directories in .gitignore):" >&2
	printf '%s\n' "$findings" | sed 's/^/  /' >&2
	echo "check-tree: FAIL" >&2
	exit 1
fi
echo "check-tree: none found, passed"
exit 0
