#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/fetch-deb.sh SUITE PACKAGE VERSION - print the path of the Debian
# package PACKAGE_VERSION_all.deb from Debian's suite SUITE, fetched into
# the third-party cache if it is not found already (tests/find-third-party.sh).
# For sources some tests build that Debian 12 lacks but a later Debian
# ships as an arch-all package (go-nfqueue 2.0.0: trixie's
# golang-github-florianl-go-nfqueue-dev). The suite is read through a
# private list directory, never added to the system's sources: nothing is
# installed. apt checks the suite's signature (Debian's archive keyring);
# tests/third-party.sha256 pins the package's hash, and a file with another
# hash is refused. Exit status 1 when it cannot be had (no network, say).
set -u

suite=${1:?usage: fetch-deb.sh SUITE PACKAGE VERSION}
pkg=${2:?usage: fetch-deb.sh SUITE PACKAGE VERSION}
ver=${3:?usage: fetch-deb.sh SUITE PACKAGE VERSION}
here=$(cd "$(dirname "$0")" && pwd)
name=${pkg}_${ver}_all.deb
mirror=${NFQB_DEBIAN_MIRROR:-http://deb.debian.org/debian}

"$here/find-third-party.sh" "$name" 2>/dev/null && exit 0
grep -q " \*\{0,1\}$name\$" "$here/third-party.sha256" || {
	echo "fetch-deb: $name is not pinned in tests/third-party.sha256" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-fetch-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/get"
cat >"$tmp/suite.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
set -- -q -o Dir::Etc::SourceList="$tmp/suite.sources" \
	-o Dir::Etc::SourceParts=/nonexistent \
	-o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" \
	-o APT::Architectures=amd64 -o APT::Sandbox::User=root
timeout 300 apt-get "$@" update >"$tmp/log" 2>&1 &&
	(cd "$tmp/get" && timeout 300 apt-get "$@" download "$pkg=$ver") \
		>>"$tmp/log" 2>&1 || {
	echo "fetch-deb: could not fetch $pkg $ver from $suite:" >&2
	tail -5 "$tmp/log" >&2
	exit 1
}
# found in the directory apt wrote to, checked against its pin and copied
# into the cache; printed from there
NFQB_THIRD_PARTY_DIR=$tmp/get "$here/find-third-party.sh" "$name" >/dev/null &&
	"$here/find-third-party.sh" "$name"
