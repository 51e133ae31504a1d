#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/upstream-source.sh [VERSION] - fetch the upstream kernel source
# that kernel/patches-upstream is based on, Debian's linux-source-7.2
# package (default version 7.2.13-1), and print the path of its source
# tarball, for
#
#	kernel/check-upstream.sh "$(kernel/upstream-source.sh)"
#
# The package is in Debian unstable, which the machine's own package
# sources may not list: apt-get downloads it with a sources list, lists
# and cache of its own under the kernel cache, and nothing of the
# system's apt configuration changes. The tarball is kept in the cache
# ($NFQB_KERNEL_CACHE, default /var/cache/nfqb-kernel), so a second run
# downloads nothing. Unstable keeps only its current version: once
# 7.2.13-1 is gone, ask for the version it has (the series may then need
# carrying again) or use check-upstream.sh on a git tree.
set -eu
cache=${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}
pkg=linux-source-7.2
ver=${1:-7.2.13-1}
dir=$cache/upstream-source
out=$dir/$pkg-$ver.tar.xz

log() { echo "upstream-source.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi
apt=$dir/apt
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$dir/deb"
cat > "$apt/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
EOF
set -- -o Dir::Etc::SourceList="$apt/sources.list" \
	-o Dir::Etc::SourceParts=/dev/null \
	-o Dir::State::Lists="$apt/lists" \
	-o Dir::Cache="$apt" \
	-o Dir::State::status=/var/lib/dpkg/status \
	-o APT::Sandbox::User=root
log "updating the package lists of unstable (in $apt)"
apt-get "$@" -q update >&2 || die "apt-get update failed"
(cd "$dir/deb" && apt-get "$@" -q download "$pkg=$ver") >&2 ||
	die "$pkg $ver cannot be downloaded (apt-cache $* policy $pkg lists what there is)"
deb=$(ls "$dir/deb/${pkg}_"*"_all.deb" | head -1)
x=$dir/x
rm -rf "$x"
dpkg-deb -x "$deb" "$x"
mv "$x/usr/src/$pkg.tar.xz" "$out.tmp"
rm -rf "$x" "$deb"
mv "$out.tmp" "$out"
log "$(sha256sum "$out" | cut -d' ' -f1)  $(basename "$out")"
echo "$out"
