#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# go/tests/vs-go-nfqueue.sh SRC [PACKETS [PPS]] - go-nfqueue 2.0.0,
# go/nfqueue and go/nfqb side by side: go/tests/vsbench built three times
# (the go-nfqueue API's hook with SetVerdict per packet on go-nfqueue and
# on go/nfqueue, only the import path differing; the native API's batch
# function on go/nfqb), each run as root in a network namespace of its own
# on the same traffic (PACKETS UDP datagrams of 64 bytes at PPS per
# second, default 100000 at 50000/s, sent by another process), printing
# the CPU time, allocations and context switches per packet of the
# process that holds the queue, and its system calls per packet where
# `perf stat` counts them. SRC: go-nfqueue's source, a
# directory, a release tarball or Debian's package (go/tests/gonfq-src.sh),
# built in a temporary directory with its dependencies from Debian's packages
# (golang-github-mdlayher-netlink-dev, golang-golang-x-sys-dev,
# golang-github-mdlayher-socket-dev, golang-github-josharian-native-dev,
# golang-golang-x-net-dev, golang-golang-x-sync-dev,
# golang-github-google-go-cmp-dev; /usr/share/gocode/src): nothing is
# downloaded. Environment as go/tests/run.sh (CGO_CFLAGS, CGO_LDFLAGS and
# LD_LIBRARY_PATH for our library).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: go/tests/vs-go-nfqueue.sh GO_NFQUEUE_SRC [PACKETS [PPS]]}
n=${2:-100000}
pps=${3:-50000}
lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
gocode=/usr/share/gocode/src
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-go-vs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$here/tests/gonfq-src.sh"
gonfq_unpack "$src" "$tmp/gonfq" || exit 1
mkdir -p "$tmp/ours"
cp -r "$here/go.mod" "$here/nfqb" "$here/nfqueue" "$here/internal" "$tmp/ours"/

# build NAME IMPORT REQUIRE RECV: the benchmark with RECV.go (gonfq: the
# go-nfqueue API from IMPORT; native: go/nfqb), as $tmp/NAME
build() {
	d=$tmp/b-$1
	mkdir -p "$d"
	for f in main "$4"; do
		sed -e '/^\/\/go:build vsbench/d' \
		    -e "s#\"github.com/libnfq-batch/libnfq-batch/go/nfqueue\"#\"$2\"#" \
			"$here/tests/vsbench/$f.go" >"$d/$f.go"
	done
	{
		echo "module vsbench"
		echo
		echo "go 1.19"
		echo
		echo "require $3"
		echo
		echo "replace github.com/libnfq-batch/libnfq-batch/go => $tmp/ours"
		echo "replace github.com/florianl/go-nfqueue/v2 => $tmp/gonfq"
		for m in github.com/mdlayher/netlink github.com/mdlayher/socket \
			 github.com/josharian/native golang.org/x/sys golang.org/x/net \
			 golang.org/x/sync github.com/google/go-cmp; do
			echo "replace $m => $gocode/$m"
		done
	} >"$d/go.mod"
	(cd "$d" && GOPROXY=off GOFLAGS=-mod=mod \
		go build -o "$tmp/$1" .) || exit 1
}
ours="github.com/libnfq-batch/libnfq-batch/go v0.0.0"
build go-nfqueue github.com/florianl/go-nfqueue/v2 \
	"github.com/florianl/go-nfqueue/v2 v2.0.0" gonfq
build nfqb-compat github.com/libnfq-batch/libnfq-batch/go/nfqueue "$ours" gonfq
build nfqb-native github.com/libnfq-batch/libnfq-batch/go/nfqueue "$ours" native

# the system calls of the queue's process, where perf counts them
perf=
if perf stat -x, -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
	perf="perf stat -x, -e raw_syscalls:sys_enter -o $tmp/syscalls"
fi

# run NAME: one run in a namespace of its own
run() {
	flock "$lock" timeout -k 10 120 unshare -n sh -c '
		ip link set lo up &&
		iptables -w -A OUTPUT -o lo -p udp --dport 5201 -j NFQUEUE --queue-num 3 || exit 1
		$5 "$0" -label "$1" -n "$2" >"$4/out" 2>&1 &
		r=$!
		i=0
		while ! grep -q ready "$4/out" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.05; i=$((i + 1))
		done
		"$0" -mode send -n "$2" -pps "$3"
		wait $r
		rc=$?
		grep -v ready "$4/out"
		exit $rc' "$tmp/$1" "$1" "$n" "$pps" "$tmp" "$perf" || return 1
	[ -n "$perf" ] || return 0
	# every system call of the run, over the packets the run reports
	awk -F, -v k="$(sed -n 's/^[^:]*: \([0-9]*\) packets.*/\1/p' "$tmp/out")" \
		'/raw_syscalls/ && k > 0 { printf "  system calls: %.3f per packet (whole process, start to end)\n", $1 / k }' \
		"$tmp/syscalls"
}
rc=0
echo "vs-go-nfqueue: $n datagrams of 64 bytes at $pps/s, accept-all"
for b in go-nfqueue nfqb-compat nfqb-native; do
	run "$b" || rc=1
done
exit $rc
