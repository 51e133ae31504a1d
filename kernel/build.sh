#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/build.sh - build the libnfq-batch test kernel (bzImage).
#
# Takes Debian's linux-source-6.12 (6.12 LTS), applies kernel/patches/*.patch in order
# (git am), configures with "allnoconfig + kernel/config" and builds a
# bzImage. The result is cached under $NFQB_KERNEL_CACHE (default
# /var/cache/nfqb-kernel), keyed by a hash of the source package version,
# the config fragment, the patches and this script, so a second run with
# the same inputs does not rebuild. On success prints the path of the
# bzImage on stdout (everything else goes to stderr).
#
# The source tree is a git repository in the cache (commit "base" is the
# pristine source). Each build resets it to base and re-applies the series,
# and the object directory is kept, so a changed patch only rebuilds what it
# touches.
#
# Environment: NFQB_KERNEL_CACHE, NFQB_KERNEL_JOBS (default 2),
# NFQB_KERNEL_NICE (default 19), NFQB_KERNEL_TARBALL, NFQB_KERNEL_UPTO
# (apply only the first N patches: kernel/build-each.sh uses it to check
# that every prefix of the series builds), NFQB_KERNEL_PATCHES (the
# directory of the series, default kernel/patches: an earlier version from
# git history, `kernel/series-at.sh v3`, for the before/after runs of the
# guest tests), NFQB_KERNEL_TEST_PATCHES (test-only patches applied after
# the whole series, default kernel/test-patches: fault injection points
# some guest tests need, never posted; empty: none).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}
jobs=${NFQB_KERNEL_JOBS:-2}
niceness=${NFQB_KERNEL_NICE:-19}
srcpkg=linux-source-6.12
tarball=${NFQB_KERNEL_TARBALL:-/usr/src/$srcpkg.tar.xz}
fragment=$here/config
upto=${NFQB_KERNEL_UPTO:-}
patchdir=${NFQB_KERNEL_PATCHES:-$here/patches}
testpatchdir=${NFQB_KERNEL_TEST_PATCHES-$here/test-patches}

# the patches to apply, in order: the series, then (on the whole series
# only) the test-only patches, which are never posted
series() {
	i=0
	for p in "$patchdir"/*.patch; do
		[ -e "$p" ] || continue
		# the cover letter (0000) has no diff
		case $p in */0000-*) continue ;; esac
		i=$((i + 1))
		[ -n "$upto" ] && [ "$i" -gt "$upto" ] && return
		echo "$p"
	done
	[ -n "$upto" ] || [ -z "$testpatchdir" ] && return
	for p in "$testpatchdir"/*.patch; do
		[ -e "$p" ] && echo "$p"
	done
	return 0
}

log() { echo "build.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (apt-get install $srcpkg, or run kernel/deps.sh)"
mkdir -p "$cache"

srcver=$(dpkg-query -W -f '${Version}' $srcpkg 2>/dev/null || stat -c %s.%Y "$tarball")

# Hash of everything that determines the image.
key=$( {
	echo "$srcpkg $srcver"
	cat "$fragment"
	cat "$here/build.sh"
	for p in $(series); do
		echo "== $(basename "$p")"
		cat "$p"
	done
} | sha256sum | cut -c1-16)

img=$cache/images/$key/bzImage
if [ -s "$img" ]; then
	log "cached image $key"
	echo "$img"
	exit 0
fi

# One build at a time per cache.
exec 9>"$cache/lock"
flock 9
if [ -s "$img" ]; then
	echo "$img"
	exit 0
fi

# per source package: the 6.1 tree of earlier versions stays untouched
tree=$cache/tree-$srcpkg
obj=$cache/obj-$srcpkg
export GIT_AUTHOR_NAME=nfqb GIT_AUTHOR_EMAIL=nfqb@localhost
export GIT_COMMITTER_NAME=nfqb GIT_COMMITTER_EMAIL=nfqb@localhost
export GIT_AUTHOR_DATE='2000-01-01 00:00:00 +0000'
export GIT_COMMITTER_DATE='2000-01-01 00:00:00 +0000'

if [ ! -e "$tree/.git/nfqb-base-$srcver" ]; then
	log "unpacking $tarball"
	rm -rf "$tree" "$obj"
	mkdir -p "$tree"
	tar -C "$tree" --strip-components=1 -xf "$tarball"
	(cd "$tree" && git init -q && git add -A -f . &&
	 git commit -q -m "base: Debian $srcpkg $srcver" &&
	 git tag -f base >/dev/null && touch ".git/nfqb-base-$srcver")
fi

cd "$tree"
git am --abort >/dev/null 2>&1 || true
git checkout -q -f base 2>/dev/null || git checkout -q -f --detach base
git clean -q -fdx
n=0
for p in $(series); do
	log "applying $(basename "$p")"
	git am -q --keep-cr "$p" || { git am --abort || true; die "patch $(basename "$p") does not apply"; }
	n=$((n + 1))
done
log "$n patches applied"

mkdir -p "$obj"
log "configuring"
make -s O="$obj" KCONFIG_ALLCONFIG="$fragment" allnoconfig >/dev/null 2>&1 ||
	die "allnoconfig failed"
# Every option the fragment asks for must have survived Kconfig.
bad=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$fragment" | while IFS= read -r line; do
	case $line in
	*=n) grep -q "^${line%=n}=" "$obj/.config" && echo "$line" ;;
	*)   grep -qx "$line" "$obj/.config" || echo "$line" ;;
	esac
done)
[ -z "$bad" ] || die "config fragment not honoured (missing dependency?):
$bad"

log "building bzImage (nice -n $niceness, -j$jobs), this takes a while"
start=$(date +%s)
nice -n "$niceness" make O="$obj" -j"$jobs" bzImage >"$cache/build.log" 2>&1 || {
	grep -E -B2 -A6 'error:' "$cache/build.log" | head -60 >&2
	tail -20 "$cache/build.log" >&2
	die "kernel build failed, see $cache/build.log"
}
end=$(date +%s)
log "built in $((end - start)) s"
if grep -E 'warning:' "$cache/build.log" >&2; then
	log "note: compiler warnings above"
	[ "${NFQB_KERNEL_NO_WARNINGS:-0}" = 1 ] && die "warnings (NFQB_KERNEL_NO_WARNINGS=1)"
fi

mkdir -p "$cache/images/$key"
cp "$obj/arch/x86/boot/bzImage" "$img.tmp"
cp "$obj/.config" "$cache/images/$key/config"
git log --oneline base..HEAD > "$cache/images/$key/series"
# the netfilter queue selftests of the tree (the series' own
# nft_queue_netdev.sh and the kernel's nft_queue.sh), run in the guest by
# run-qemu.sh
st=$cache/images/$key/selftests
mkdir -p "$st/net/netfilter"
cp tools/testing/selftests/net/lib.sh "$st/net/"
for f in lib.sh nf_queue.c connect_close.c nft_queue.sh nft_queue_netdev.sh; do
	src=tools/testing/selftests/net/netfilter/$f
	[ -e "$src" ] && cp "$src" "$st/net/netfilter/$f"
done
echo "$((end - start))" > "$cache/images/$key/build-seconds"
mv "$img.tmp" "$img"
echo "$img"
