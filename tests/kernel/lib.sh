# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the guest tests (sourced).
#
# Topology: namespace a (veth0, 10.0.0.1) <-> namespace b (veth1, 10.0.0.2).

failures=0

# busybox sh prefers its own applets: make sure "ip" is iproute2's. A job
# that a test will signal is started with "$IP" itself: through ip() (or
# A, B) in the background it is a subshell, which the signal ends while
# the program goes on
IP=/bin/ip
ip() { "$IP" "$@"; }

log() { echo "  $*"; }
fail() { echo "  FAIL: $*"; failures=$((failures + 1)); }
check() {
	# check DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then
		log "ok: $1 ($2)"
	else
		fail "$1: got '$2', want '$3'"
	fi
}
finish() {
	[ "$failures" = 0 ] && exit 0
	echo "  $failures check(s) failed"
	exit 1
}

A() { ip netns exec a "$@"; }
B() { ip netns exec b "$@"; }

setup_veth() {
	ip netns add a || exit 2
	ip netns add b || exit 2
	ip link add veth0 netns a type veth peer name veth1 netns b || exit 2
	A ip addr add 10.0.0.1/24 dev veth0
	B ip addr add 10.0.0.2/24 dev veth1
	A ip link set lo up
	B ip link set lo up
	A ip link set veth0 up
	B ip link set veth1 up
	# veth carrier comes up asynchronously
	for i in $(seq 50); do
		A ip link show veth0 | grep -q LOWER_UP &&
			B ip link show veth1 | grep -q LOWER_UP && break
		sleep 0.2
	done
	# resolve the neighbours before any test traffic
	A ping -c 1 -W 10 10.0.0.2 > /dev/null || echo "  (warm-up ping failed)"
}

# setup_bridge: veth1 becomes the port of bridge br0 in b, which takes
# 10.0.0.2; returns once br0 is up and a reaches it
setup_bridge() {
	B ip addr del 10.0.0.2/24 dev veth1
	B ip link add br0 type bridge
	B ip link set veth1 master br0
	B ip addr add 10.0.0.2/24 dev br0
	B ip link set br0 up
	for i in $(seq 50); do
		B ip link show br0 | grep -q 'state UP' && break
		sleep 0.2
	done
	A ping -c 1 -W 10 10.0.0.2 > /dev/null || log "(warm-up ping over the bridge failed)"
}

# setup_v6 [DEV_B]: IPv6 beside IPv4, fd00::1 on veth0 and fd00::2 on
# DEV_B (veth1), without duplicate address detection, neighbours resolved
setup_v6() {
	A ip addr add fd00::1/64 dev veth0 nodad
	B ip addr add fd00::2/64 dev "${1:-veth1}" nodad
	A ping -c 1 -W 10 fd00::2 > /dev/null || echo "  (IPv6 warm-up ping failed)"
}

teardown() {
	ip netns del a 2>/dev/null
	ip netns del b 2>/dev/null
	true
}

# wait_line FILE PATTERN [TENTHS]: wait until FILE contains PATTERN (120 s
# by default: a loaded host makes the TCG guest many times slower; a
# passing test waits only as long as the line takes)
wait_line() {
	local n=${3:-1200}
	while [ "$n" -gt 0 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	echo "  timeout waiting for '$2' in $1:"; cat "$1"
	return 1
}

# field FILE KEY: value of KEY=VALUE in the last nfqt (or nfqb-netdev)
# summary line
field() {
	grep -E '^(nfqt|nfqb-netdev): queue=' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# counters NS FAMILY TABLE CHAIN: packet counts of the chain's rules, one
# per line, in rule order
counters() {
	ip netns exec "$1" nft list chain "$2" "$3" "$4" |
		sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p'
}

# queue_total NS QUEUE: packets waiting for a verdict on QUEUE (empty when
# the queue is not bound)
queue_total() {
	ip netns exec "$1" cat /proc/net/netfilter/nfnetlink_queue |
		awk -v q="$2" '$1 == q { print $3 }'
}

# queue_rule NS HOOK DEV MATCH QUEUE: in NS, table netdev t with one chain
# at HOOK (ingress or egress) of DEV: "MATCH queue num QUEUE"; the test
# fails and ends if nft refuses it
queue_rule() {
	ip netns exec "$1" nft -f - <<NFT || { fail "nft refuses queue in a netdev $2 chain"; finish; }
table netdev t {
	chain q {
		type filter hook $2 device "$3" priority 0;
		$4 queue num $5
	}
}
NFT
}

# The listener udp_case runs: nfqt, or the library's nfqb-netdev (same
# options for queue, count, timeout and verdicts)
LISTEN="nfqt listen"

# udp_case DESC WANT_RECEIVED LISTENER_NS [listener args...]
# Receiver on port 9000 in $RECV_NS (b unless set), listener in
# LISTENER_NS, 10 datagrams from a to $DADDR (10.0.0.2 unless set;
# fd00::2 after setup_v6). Checks the listener's status and the exact count received.
udp_case() {
	local desc=$1 want=$2 lns=$3 rpid lpid lrc f0
	shift 3
	# the guest is slow (TCG, KASAN, a loaded host): generous timeouts,
	# the receiver stops early once it has what it expects ($IP, not the
	# ip function: $! must be the receiver itself)
	rm -f /tmp/recv.out
	"$IP" netns exec "${RECV_NS:-b}" nfqt recv 9000 120000 "$want" > /tmp/recv.out &
	rpid=$!
	# (the idle timeouts are bounds: 20 s ran out before the first
	# datagram when a loaded host starved the guest, t-75 in a CI run
	# here; the listener ends at its count, the receiver at its count
	# or on SIGTERM)
	rm -f /tmp/l.out
	ip netns exec "$lns" $LISTEN -t 120000 "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send "${DADDR:-10.0.0.2}" 9000 10 0
	wait $lpid
	lrc=$?
	# Nothing is to arrive: the listener has given every verdict (an
	# accepted packet is delivered within the verdict's own softirq, and
	# the listener waits 100 ms before it exits), so stop the receiver
	# now (SIGTERM: it counts what is queued on its socket) instead of
	# waiting for its idle timeout.
	[ "$want" = 0 ] && kill $rpid 2>/dev/null
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status" "$lrc" 0
	f0=$failures
	check "$desc: datagrams received" \
		"$(sed -n 's/^received //p' /tmp/recv.out)" "$want"
	[ "$failures" = "$f0" ] || diag
}

# diag: dump what helps to find where packets went
diag() {
	local n
	echo "  --- diagnostics"
	A ip -s link show veth0 | sed 's/^/    a: /'
	B ip -s link show veth1 | sed 's/^/    b: /'
	A ip neigh show | sed 's/^/    a neigh: /'
	cat /proc/net/softnet_stat | sed 's/^/    softnet: /'
	grep -E 'NET_RX|NET_TX' /proc/softirqs | sed 's/^/    /'
	for n in a b; do
		ip netns exec $n cat /proc/net/netfilter/nfnetlink_queue | sed "s/^/    $n queue: /"
		ip netns exec $n nft list ruleset | sed "s/^/    $n nft: /"
	done
	echo "  ---"
}

# verdict_cases NS FAMILY_ARGS...: accept, drop, mark, batch+mark through
# queue 0 with the after-chain counters (marked, total) of table netdev t
# chain after in NS.
verdict_cases() {
	local ns=$1
	shift
	udp_case accept 10 "$ns" -q 0 -n 10 -v accept "$@"
	check "accept: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "0 10 "
	udp_case drop 0 "$ns" -q 0 -n 10 -v drop "$@"
	check "drop: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "0 10 "
	udp_case mark 10 "$ns" -q 0 -n 10 -v accept -m 0x2a "$@"
	check "mark: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "10 20 "
	udp_case "batch of 5 with mark" 10 "$ns" -q 0 -n 10 -b 5 -v accept -m 0x2a "$@"
	check "batch: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "20 30 "
	udp_case "batch drop" 0 "$ns" -q 0 -n 10 -b 10 -v drop "$@"
	check "batch drop: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "20 30 "
	check "queue empty afterwards" "$(queue_total "$ns" 0)" ""
}

# need_lib_tool: skip (status 77) unless the library's test tool is in the
# guest (run-qemu.sh copies it when NFQB_GUEST_TOOL is set, as make
# check-kernel does); otherwise use it for udp_case
need_lib_tool() {
	if ! command -v nfqb-netdev > /dev/null; then
		echo "  SKIP: nfqb-netdev not in the guest (NFQB_GUEST_TOOL unset; use make check-kernel)"
		exit 77
	fi
	LISTEN=nfqb-netdev
}

# lib_verdict_cases NS CHECK_ARGS...: verdict_cases through libnfq-batch
# (nfqb-netdev): nfqb_verdict() accept and drop, nfqb_verdict_mark(),
# nfqb_verdict_ex() with a mark, nfqb_verdict_batch() of 5 with a mark and
# of 10 dropping; exact count at the receiver and at chain after of table
# netdev t in NS (marked, total).
lib_verdict_cases() {
	local ns=$1
	shift
	udp_case "lib accept" 10 "$ns" -q 0 -n 10 -v accept "$@"
	check "lib accept: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "0 10 "
	udp_case "lib drop" 0 "$ns" -q 0 -n 10 -v drop "$@"
	check "lib drop: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "0 10 "
	udp_case "lib mark" 10 "$ns" -q 0 -n 10 -v accept -m 0x2a "$@"
	check "lib mark: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "10 20 "
	udp_case "lib verdict_ex mark" 10 "$ns" -q 0 -n 10 -v accept -e -m 0x2a "$@"
	check "lib verdict_ex mark: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "20 30 "
	udp_case "lib batch of 5 with mark" 10 "$ns" -q 0 -n 10 -b 5 -v accept -m 0x2a "$@"
	check "lib batch: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "30 40 "
	udp_case "lib batch drop" 0 "$ns" -q 0 -n 10 -b 10 -v drop "$@"
	check "lib batch drop: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "30 40 "
	check "lib: queue empty afterwards" "$(queue_total "$ns" 0)" ""
}

# lib_vlan_case DESC LISTENER_NS QUEUE CHECK_ARGS...: 5 datagrams over VLAN
# 10 (veth0.10 -> veth1.10, 10.0.10.0/24, set up by the caller) through
# nfqb-netdev, accepted; each must carry the tag out of band (-V 10)
lib_vlan_case() {
	local desc=$1 lns=$2 q=$3 rpid lpid lrc
	shift 3
	rm -f /tmp/recv.out
	B nfqt recv 9000 120000 5 > /tmp/recv.out &
	rpid=$!
	rm -f /tmp/l.out
	ip netns exec "$lns" nfqb-netdev -q "$q" -n 5 -t 120000 -v accept -V 10 -s "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send 10.0.10.2 9000 5 0
	wait $lpid
	lrc=$?
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status (nfqb_pkt_vlan() id 10 on every packet)" "$lrc" 0
	check "$desc: datagrams received" "$(sed -n 's/^received //p' /tmp/recv.out)" 5
}

# setup_vlan: VLAN 10 on top of the veth pair, 10.0.10.1 <-> 10.0.10.2
setup_vlan() {
	A ip link add link veth0 name veth0.10 type vlan id 10
	B ip link add link veth1 name veth1.10 type vlan id 10
	A ip addr add 10.0.10.1/24 dev veth0.10
	B ip addr add 10.0.10.2/24 dev veth1.10
	A ip link set veth0.10 up
	B ip link set veth1.10 up
	A ping -c 1 -W 10 10.0.10.2 > /dev/null || echo "  (warm-up ping on VLAN failed)"
}
