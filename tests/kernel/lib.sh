# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the guest tests (sourced).
#
# Topology: namespace a (veth0, 10.0.0.1) <-> namespace b (veth1, 10.0.0.2).

failures=0

# busybox sh prefers its own applets: make sure "ip" is iproute2's
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

teardown() {
	ip netns del a 2>/dev/null
	ip netns del b 2>/dev/null
	true
}

# wait_line FILE PATTERN [TENTHS]: wait until FILE contains PATTERN
wait_line() {
	local n=${3:-100}
	while [ "$n" -gt 0 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	echo "  timeout waiting for '$2' in $1:"; cat "$1"
	return 1
}

# field FILE KEY: value of KEY=VALUE in the last nfqt summary line
field() {
	grep 'nfqt: queue=' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
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

# udp_case DESC WANT_RECEIVED LISTENER_NS [nfqt listen args...]
# Receiver on 10.0.0.2:9000 in b, listener in LISTENER_NS, 10 datagrams
# from a. Checks the listener's status and the exact count received.
udp_case() {
	local desc=$1 want=$2 lns=$3 rpid lpid lrc f0
	shift 3
	# the guest is slow (TCG, KASAN, a loaded host): generous timeouts,
	# the receiver stops early once it has what it expects
	B nfqt recv 9000 5000 "$want" > /tmp/recv.out &
	rpid=$!
	ip netns exec "$lns" nfqt listen -t 20000 "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send 10.0.0.2 9000 10 0
	wait $lpid
	lrc=$?
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
