#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/check-config-off.sh [OPTION...] - compile the objects the series
# touches with one netfilter option off at a time, the others as in
# kernel/config: by default NETFILTER_INGRESS, NETFILTER_EGRESS,
# NF_TABLES_NETDEV and BRIDGE_NETFILTER. The code the series adds under
# #ifdef (and the stubs for the off case) must build either way.
#
# Uses a tree of its own in the cache (Debian's linux-source-6.12 with
# kernel/patches applied, rebuilt when the patches change) and one
# object directory per option (per source tarball: the upstream form is
# checked with NFQB_KERNEL_TARBALL="$(kernel/upstream-source.sh)"
# NFQB_KERNEL_PATCHES=kernel/patches-upstream), so a second run only rebuilds what
# changed. Builds only the touched objects, at nice 19 with -j2. Exit
# status non-zero if any of them fails to build, or builds with a
# warning, or if the option is not off after Kconfig.
#
# Environment: NFQB_KERNEL_CACHE (default /var/cache/nfqb-kernel),
# NFQB_KERNEL_JOBS (2), NFQB_KERNEL_NICE (19), NFQB_KERNEL_TARBALL,
# NFQB_KERNEL_PATCHES (default kernel/patches).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}
jobs=${NFQB_KERNEL_JOBS:-2}
niceness=${NFQB_KERNEL_NICE:-19}
tarball=${NFQB_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
patchdir=${NFQB_KERNEL_PATCHES:-$here/patches}
fragment=$here/config
opts=${*:-NETFILTER_INGRESS NETFILTER_EGRESS NF_TABLES_NETDEV BRIDGE_NETFILTER}
objs="net/core/dev.o net/netfilter/nf_queue.o net/netfilter/nfnetlink_queue.o
      net/netfilter/nft_queue.o net/packet/af_packet.o"

log() { echo "check-config-off.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (kernel/deps.sh installs it)"
patches=$(ls "$patchdir"/*.patch | grep -v '/0000-cover-letter.patch$' |
	grep -v '/00-nf-0000-cover-letter.patch$')

# the tree: unpacked once per tarball and series
key=$( { stat -c %s.%Y "$tarball"; cat $patches; } | sha256sum | cut -c1-16)
src=$(basename "$tarball" | sed 's/\.tar\(\.[a-z0-9]*\)\{0,1\}$//')
tree=$cache/configoff-$src
mkdir -p "$cache"
exec 9>"$cache/configoff.lock"
flock 9
if [ "$(cat "$tree/.nfqb-key" 2>/dev/null)" != "$key" ]; then
	log "unpacking $tarball and applying $(echo "$patches" | wc -l) patches"
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -C "$tree" --strip-components=1 -xf "$tarball"
	log "$(sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) = *//p' "$tree/Makefile" | paste -sd. -) from $tarball"
	for p in $patches; do
		(cd "$tree" && git apply "$p") || die "$(basename "$p") does not apply"
	done
	echo "$key" > "$tree/.nfqb-key"
fi

fail=0
for opt in $opts; do
	obj=$cache/configoff-$src-obj-$opt
	mkdir -p "$obj"
	frag=$obj/fragment
	grep -v -E "^(# )?CONFIG_$opt[= ]" "$fragment" > "$frag"
	echo "# CONFIG_$opt is not set" >> "$frag"
	make -s -C "$tree" O="$obj" KCONFIG_ALLCONFIG="$frag" allnoconfig \
		> "$obj/config.log" 2>&1 || die "allnoconfig failed for $opt"
	if grep -q "^CONFIG_$opt=" "$obj/.config"; then
		log "FAIL $opt: still on after Kconfig (something selects it)"
		fail=1
		continue
	fi
	# what else went off with it (options that depend on it)
	lost=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$fragment" | while IFS= read -r l; do
		grep -qx "$l" "$obj/.config" || echo "${l%=*}"
	done | grep -v "^CONFIG_$opt\$" | tr '\n' ' ')
	log "$opt off${lost:+; also off: $lost}; building $(echo $objs | wc -w) objects"
	# shellcheck disable=SC2086 # the object list
	if nice -n "$niceness" make -C "$tree" O="$obj" -j"$jobs" $objs \
		> "$obj/build.log" 2>&1; then
		if grep -E 'warning:' "$obj/build.log" >&2; then
			log "FAIL $opt: warnings (see $obj/build.log)"
			fail=1
		else
			log "ok   $opt"
		fi
	else
		grep -E -A5 'error:' "$obj/build.log" | head -30 >&2
		log "FAIL $opt: build failed (see $obj/build.log)"
		fail=1
	fi
done
exit $fail
