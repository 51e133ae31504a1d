#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/upstream-source.sh [VERSION] - fetch the upstream kernel source
# that kernel/patches-upstream is based on, Debian's linux-source-7.2
# package, and print the path of its source tarball, for
#
#	kernel/check-upstream.sh "$(kernel/upstream-source.sh)"
#
# By default the first that can be had of unstable's 7.2.13-1 and
# trixie-backports' 7.2.12-1~bpo13+1: the files the series changes are
# the same in both (those of patches-upstream/BASE), and backports keep
# older versions longer than unstable, which keeps only its current one.
# VERSION: that version from unstable instead.
#
# The suites are ones the machine's own package sources may not list:
# apt-get downloads the package with a sources list, lists and cache of
# its own under the kernel cache, and nothing of the system's apt
# configuration changes. The tarball is kept in the cache
# ($NFQB_KERNEL_CACHE, default /var/cache/nfqb-kernel), so a second run
# downloads nothing. Once neither version can be had, ask for the one
# unstable has (the series may then need carrying again) or use
# check-upstream.sh on a git tree.
set -eu
cache=${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}
pkg=linux-source-7.2
dir=$cache/upstream-source

log() { echo "upstream-source.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# fetch SUITE VERSION: the tarball of $pkg VERSION from SUITE into the
# cache, its path on stdout; status 1 if it cannot be had
fetch() {
	suite=$1
	v=$2
	out=$dir/$pkg-$v.tar.xz
	if [ -s "$out" ]; then
		echo "$out"
		return 0
	fi
	apt=$dir/apt-$suite
	mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$dir/deb"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
	     "http://deb.debian.org/debian $suite main" > "$apt/sources.list"
	set -- -o Dir::Etc::SourceList="$apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$apt/lists" \
		-o Dir::Cache="$apt" \
		-o Dir::State::status=/var/lib/dpkg/status \
		-o APT::Architectures=amd64 \
		-o APT::Sandbox::User=root
	log "updating the package lists of $suite (in $apt)"
	if ! apt-get "$@" -q update >&2; then
		log "apt-get update of $suite failed"
		return 1
	fi
	rm -f "$dir/deb/${pkg}_"*"_all.deb"
	if ! (cd "$dir/deb" && apt-get "$@" -q download "$pkg=$v") >&2; then
		log "$pkg $v is not in $suite"
		return 1
	fi
	deb=$(ls "$dir/deb/${pkg}_"*"_all.deb" | head -1)
	x=$dir/x
	rm -rf "$x"
	dpkg-deb -x "$deb" "$x"
	mv "$x/usr/src/$pkg.tar.xz" "$out.tmp"
	rm -rf "$x" "$deb"
	mv "$out.tmp" "$out"
	log "$(sha256sum "$out" | cut -d' ' -f1)  $(basename "$out")"
	echo "$out"
}

if [ $# -gt 0 ]; then
	fetch sid "$1" || die "$pkg $1 cannot be had from unstable"
	exit 0
fi
fetch sid 7.2.13-1 || fetch trixie-backports 7.2.12-1~bpo13+1 ||
	die "no $pkg with the files of patches-upstream/BASE can be had"
