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

# arp_trim_end PID WHERE NS BYTES FROM: the end of an ARP trim case: the
# listener PID stopped, its output (/tmp/l.out) shown and checked, ARP
# requests queued WHERE ("at egress"), and every ARP frame NS's ingress
# chain "netdev t seen" counted of its cut length (rule 1) against all
# (rule 2): they left FROM cut to BYTES bytes.
arp_trim_end() {
	kill "$1" 2>/dev/null
	wait "$1"
	check "listener status" "$?" 0
	sed 's/^/    /' /tmp/l.out
	n=$(field /tmp/l.out seen)
	[ "${n:-0}" -ge 1 ] && log "ok: $n ARP requests queued $2" ||
		fail "no ARP request queued $2"
	set -- "$4" "$5" $(counters "$3" netdev t seen)
	log "ingress: $3 ARP frames of the cut length, $4 ARP frames in all"
	[ "${3:-0}" -ge 1 ] && [ "$3" = "${4:-0}" ] &&
		log "ok: the shortened requests left $2, cut to $1 bytes" ||
		fail "the shortened requests were dropped (cut to $1: ${3:-0}, all: ${4:-0})"
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
	# (the idle timeouts are bounds: 20 s ran out before the first
	# datagram when a loaded host starved the guest, t-75 in a CI run
	# here; the listener ends at its count, the receiver at its count
	# or on SIGTERM)
	pair_start "${RECV_NS:-b}" 9000 "$want" "$lns" $LISTEN -t 120000 "$@"
	A nfqt send "${DADDR:-10.0.0.2}" 9000 10 0
	f0=$failures
	pair_end "$desc" "$want"
	[ "$failures" = "$f0" ] || diag
}

# pair_start RECV_NS PORT WANT LISTENER_NS LISTENER...: a receiver
# (nfqt recv on PORT in RECV_NS, $rpid) that stops once it has WANT
# datagrams, and a listener (the command LISTENER... in LISTENER_NS,
# $lpid, output in /tmp/l.out); returns once both are ready. The guest is
# slow (TCG, KASAN, a loaded host): generous timeouts, the receiver stops
# early once it has what it expects. $IP, not the ip function: $! must be
# the program itself (a test may signal it).
pair_start() {
	local rns=$1 port=$2 want=$3 lns=$4
	shift 4
	rm -f /tmp/recv.out /tmp/l.out
	"$IP" netns exec "$rns" nfqt recv "$port" 120000 "$want" > /tmp/recv.out &
	rpid=$!
	"$IP" netns exec "$lns" "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
}

# pair_end DESC WANT: after pair_start and the traffic: waits for the
# listener and the receiver, shows the listener's output and checks its
# status (0) and the exact count received (WANT)
pair_end() {
	wait $lpid
	lrc=$?
	# Nothing is to arrive: the listener has given every verdict (an
	# accepted packet is delivered within the verdict's own softirq, and
	# the listener waits 100 ms before it exits), so stop the receiver
	# now (SIGTERM: it counts what is queued on its socket) instead of
	# waiting for its idle timeout.
	[ "$2" = 0 ] && kill $rpid 2>/dev/null
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$1: listener status" "$lrc" 0
	check "$1: datagrams received" \
		"$(sed -n 's/^received //p' /tmp/recv.out)" "$2"
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

# after_chain NS HOOK DEV RULE...: in NS, chain after of table netdev t
# (queue_rule's) at HOOK of DEV, priority 10: one rule per argument, that
# sees (counts) what comes back from userspace; the test fails and ends if
# nft refuses the chain or a rule
after_chain() {
	local ns=$1 hook=$2 dev=$3 r
	shift 3
	ip netns exec "$ns" nft add chain netdev t after "{ type filter hook $hook device \"$dev\" priority 10; }" ||
		{ fail "nft refuses a second netdev $hook chain"; finish; }
	for r; do
		ip netns exec "$ns" nft add rule netdev t after $r ||
			{ fail "nft refuses '$r' in chain after"; finish; }
	done
}

# verdict_table NS HOOK DEV: UDP to port 9000 queued to queue 0 at HOOK of
# DEV in NS, and chain after counting what comes back (marked 0x2a, total)
verdict_table() {
	queue_rule "$1" "$2" "$3" "udp dport 9000" 0
	after_chain "$1" "$2" "$3" "udp dport 9000 meta mark 0x2a counter" "udp dport 9000 counter"
}

# verdict_cases NS LISTENER_ARGS...: through queue 0 of verdict_table in NS
# with $LISTEN: accept, drop, mark, batch of 5 with a mark, batch of 10
# dropping; exact count at the receiver and at chain after (marked,
# total). Through libnfq-batch (need_lib_tool: nfqb-netdev) the cases are
# nfqb_verdict() accept and drop, nfqb_verdict_mark(), then
# nfqb_verdict_ex() with a mark, then nfqb_verdict_batch() of 5 with a
# mark and of 10 dropping.
verdict_cases() {
	local ns=$1 p= ex=0
	shift
	[ "$LISTEN" = nfqb-netdev ] && p="lib " ex=10
	verdict_case "${p}accept" 10 "0 10" -v accept "$@"
	verdict_case "${p}drop" 0 "0 10" -v drop "$@"
	verdict_case "${p}mark" 10 "10 20" -v accept -m 0x2a "$@"
	[ "$ex" = 0 ] || verdict_case "lib verdict_ex mark" 10 "20 30" -v accept -e -m 0x2a "$@"
	verdict_case "${p}batch of 5 with mark" 10 "$((20 + ex)) $((30 + ex))" -b 5 -v accept -m 0x2a "$@"
	verdict_case "${p}batch drop" 0 "$((20 + ex)) $((30 + ex))" -b 10 -v drop "$@"
	check "${p}queue empty afterwards" "$(queue_total "$ns" 0)" ""
}

# verdict_case DESC WANT_RECEIVED WANT_COUNTERS LISTENER_ARGS...: one of
# verdict_cases: 10 datagrams through queue 0 in $ns, then the counters of
# chain after (marked total)
verdict_case() {
	local desc=$1 want=$2 counts=$3
	shift 3
	udp_case "$desc" "$want" "$ns" -q 0 -n 10 "$@"
	check "$desc: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "$counts "
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

# lib_hook_cases NS HOOK DEV VLAN_DESC CHECK_ARGS...: t-15 and t-25, the
# library (nfqb-netdev) at netdev HOOK of DEV in NS: verdict_cases through
# verdict_table, then vlan_case with the tag out of band (nfqb_pkt_vlan()
# id 10) and chain after's counters; the VLAN devices are gone again
# afterwards. CHECK_ARGS: nfqb-netdev's checks of each packet (-k HOOK
# comes first).
lib_hook_cases() {
	local ns=$1 hook=$2 dev=$3 vdesc=$4
	shift 4
	need_lib_tool
	setup_veth
	verdict_table "$ns" "$hook" "$dev"
	verdict_cases "$ns" -k "$hook" "$@"
	setup_vlan
	vlan_case "$vdesc (nfqb_pkt_vlan() id 10 on every packet)" "$ns" 0 -V 10 -k "$hook" "$@"
	check "lib VLAN: counters (marked total)" "$(counters "$ns" netdev t after | tr '\n' ' ')" "30 45 "
	A ip link del veth0.10
	B ip link del veth1.10
}

# vlan_case DESC LISTENER_NS QUEUE LISTENER_ARGS...: 5 datagrams over VLAN
# 10 (setup_vlan: veth0.10 -> veth1.10, 10.0.10.0/24) through $LISTEN on
# QUEUE in LISTENER_NS, accepted (-s: every packet checked); checks the
# listener's status and the exact count received
vlan_case() {
	local desc=$1 lns=$2 q=$3 rpid lpid lrc
	shift 3
	pair_start b 9000 5 "$lns" $LISTEN -q "$q" -n 5 -t 120000 -v accept -s "$@"
	A nfqt send 10.0.10.2 9000 5 0
	pair_end "$desc" 5
}

# selftest_copy SCRIPT COPY SED_ARGS...: for the kernel's netfilter
# selftests (t-60, t-61): into their directory in the initramfs, and
# SCRIPT adapted to this guest by sed with SED_ARGS into COPY; the test
# fails (status 1) if nf_queue or SCRIPT is not there
selftest_copy() {
	local d=/selftest/net/netfilter script=$1 copy=$2
	shift 2
	if [ ! -x $d/nf_queue ] || [ ! -e "$d/$script" ]; then
		echo "  FAIL: $script (kernel selftest) is not in this initramfs"
		exit 1
	fi
	cd $d || exit 1
	sed "$@" "$script" > "$copy"
}

# setup_vlan [VETH0_VLAN_ARGS...]: VLAN 10 on top of the veth pair,
# 10.0.10.1 <-> 10.0.10.2; the arguments go to a's VLAN device
# (e.g. reorder_hdr off)
setup_vlan() {
	A ip link add link veth0 name veth0.10 type vlan id 10 "$@"
	B ip link add link veth1 name veth1.10 type vlan id 10
	A ip addr add 10.0.10.1/24 dev veth0.10
	B ip addr add 10.0.10.2/24 dev veth1.10
	A ip link set veth0.10 up
	B ip link set veth1.10 up
	A ping -c 1 -W 10 10.0.10.2 > /dev/null || echo "  (warm-up ping on VLAN failed)"
}
