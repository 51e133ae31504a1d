#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/build-each-objects.sh - check that every prefix of a series
# builds, object by object: the source is unpacked afresh, configured
# with kernel/config (allnoconfig + the fragment), and the patches are
# applied one at a time, each followed by a build of the objects the
# series touches (make rebuilds only what the patch changed), and of the
# selftest's nf_queue.c with the C compiler, -Wall and libmnl when the
# patch changes it (no more warnings than upstream's own). Exit status
# non-zero at the first prefix that fails to build or builds with a
# warning.
#
# By default the upstream form: kernel/patches-upstream on the source
# kernel/upstream-source.sh fetches (kernel/build-each.sh checks the 6.12
# series by building whole images). NFQB_KERNEL_TARBALL and
# NFQB_KERNEL_PATCHES choose another; NFQB_KERNEL_CACHE (default
# /var/cache/nfqb-kernel), NFQB_KERNEL_JOBS (2), NFQB_KERNEL_NICE (19).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}
jobs=${NFQB_KERNEL_JOBS:-2}
niceness=${NFQB_KERNEL_NICE:-19}
patchdir=${NFQB_KERNEL_PATCHES:-$here/patches-upstream}
tarball=${NFQB_KERNEL_TARBALL:-}
[ -n "$tarball" ] || tarball=$("$here/upstream-source.sh")
fragment=$here/config
objs="net/core/dev.o net/netfilter/nf_queue.o net/netfilter/nfnetlink_queue.o
      net/netfilter/nft_queue.o net/packet/af_packet.o"

log() { echo "build-each-objects.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ -r "$tarball" ] || die "$tarball missing"
patches=$(ls "$patchdir"/*.patch | grep -v '0000-cover-letter.patch$')
src=$(basename "$tarball" | sed 's/\.tar\(\.[a-z0-9]*\)\{0,1\}$//')
tree=$cache/each-$src
obj=$cache/each-$src-obj
mkdir -p "$cache"
exec 9>"$cache/each.lock"
flock 9

log "unpacking $tarball"
rm -rf "$tree"
mkdir -p "$tree" "$obj"
tar -C "$tree" --strip-components=1 -xf "$tarball"
make -s -C "$tree" O="$obj" KCONFIG_ALLCONFIG="$fragment" allnoconfig \
	> "$obj/config.log" 2>&1 || die "allnoconfig failed"

# the selftest's own warnings with -Wall, before the series
nfq=$tree/tools/testing/selftests/net/netfilter/nf_queue.c
nfq_cc() {
	${CC:-cc} -Wall -O2 -o "$obj/nf_queue" "$nfq" -lmnl > "$1" 2>&1
}
nfq_base=0
if nfq_cc "$obj/nf_queue-0.log"; then
	nfq_base=$(grep -c 'warning:' "$obj/nf_queue-0.log" || true)
fi

i=0
for p in $patches; do
	i=$((i + 1))
	(cd "$tree" && git apply "$p") || die "$(basename "$p") does not apply"
	# shellcheck disable=SC2086 # the object list
	if ! nice -n "$niceness" make -C "$tree" O="$obj" -j"$jobs" $objs \
		> "$obj/build-$i.log" 2>&1; then
		grep -E -A5 'error:' "$obj/build-$i.log" | head -30 >&2
		die "patches 1..$i do not build ($(basename "$p"))"
	fi
	if grep -E 'warning:' "$obj/build-$i.log" >&2; then
		die "patches 1..$i build with a warning ($(basename "$p"))"
	fi
	if grep -q '^+++ b/tools/testing/selftests/net/netfilter/nf_queue.c' "$p"; then
		nfq_cc "$obj/nf_queue-$i.log" ||
			{ cat "$obj/nf_queue-$i.log" >&2; die "patches 1..$i: nf_queue.c does not build"; }
		w=$(grep -c 'warning:' "$obj/nf_queue-$i.log" || true)
		[ "$w" -le "$nfq_base" ] ||
			{ cat "$obj/nf_queue-$i.log" >&2; die "patches 1..$i: nf_queue.c has $w warnings, $nfq_base before"; }
		echo "  CC      nf_queue (selftest)" >> "$obj/build-$i.log"
	fi
	log "ok   1..$i: $(basename "$p") ($(grep -cE '^  CC +(net/|nf_queue)' "$obj/build-$i.log") compiled)"
done
log "all $i prefixes build"
