# Injected allocation failures in the queue and verdict paths (failslab).
#
# The series allocates where the kernel did not before: a private clone of
# a shared skb before queueing (patch 6), an unshared head before a new L2
# header is written (the nf patch); and every queued packet needs an entry
# and a netlink message. When one of those allocations fails, the packet
# must be dropped once and freed, nothing may be left queued or leaked,
# and every packet that got an id must reach the listener or be counted.
#
# failslab fails atomic slab allocations (ignore-gfp-wait) of the skb and
# kmalloc caches (cache-filter) in chosen tasks only (task-filter): the
# pktgen thread for the queue side, the listener for the verdict side.
# pktgen sends shared skbs, so each one takes patch 6's clone path.
#
#   1. egress, queue side: failures in the pktgen thread (clone, entry,
#      message). Every packet the rule saw got an id, or was dropped
#      before one (the injected failures: there must be some), or was
#      counted queue_dropped; every id reached the listener or was counted
#      user_dropped; everything accepted reached b.
#   2. the same at ingress (pktgen in netif_receive mode on veth1).
#   3. ingress, verdict side: failures in the listener, verdicts with
#      NFQA_L2HDR. A packet socket on veth1 that reads nothing holds a
#      clone of every frame (taps see a frame before the ingress hook),
#      so the queued packet's head is shared and skb_unclone() must
#      allocate. Each refused verdict (ENOMEM) drops its packet, each
#      other goes on: chain after counts exactly accepted - refused.
#
# Afterwards, with failslab off, 10 datagrams pass as usual. The harness
# fails the run on any kernel report and checks kmemleak at the end.
. ./lib.sh
fs=/sys/kernel/debug/failslab
[ -d $fs ] || { fail "no $fs (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"; finish; }
N=500
PERCENT=10

# flag the skb and kmalloc caches for failslab (a cache merged with others
# refuses: it is left out and named)
ncache=0
for c in /sys/kernel/slab/skbuff_* /sys/kernel/slab/kmalloc-*; do
	[ -e "$c/failslab" ] || continue
	if echo 1 > "$c/failslab" 2>/dev/null; then
		ncache=$((ncache + 1))
	else
		log "cache ${c##*/} refuses the failslab flag (merged)"
	fi
done
log "$ncache caches flagged for failslab"
[ "$ncache" -gt 0 ] || { fail "no cache takes the failslab flag"; finish; }
echo Y > $fs/task-filter
echo Y > $fs/cache-filter
echo Y > $fs/ignore-gfp-wait
echo 0 > $fs/verbose
echo 1 > $fs/interval
echo -1 > $fs/times
echo 0 > $fs/space
echo 0 > $fs/probability

# make_it_fail VALUE PID...
make_it_fail() {
	local v=$1 p
	shift
	for p in "$@"; do
		echo "$v" > "/proc/$p/make-it-fail" || fail "make-it-fail of $p"
	done
}
pktgen_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = kpktgend_0 ] && echo "${p#/proc/}"
	done
}

# qstat NS QUEUE FIELD: a field of the queue's /proc line (3 queue_total,
# 6 queue_dropped, 7 user_dropped, 8 id_sequence)
qstat() {
	ip netns exec "$1" cat /proc/net/netfilter/nfnetlink_queue |
		awk -v q="$2" -v f="$3" '$1 == q { print $f }'
}

# wait_drained NS: until queue 0 holds no packet (every message read and
# every verdict given), at most 60 s
wait_drained() {
	local n=600
	while [ "$n" -gt 0 ]; do
		[ "$(qstat "$1" 0 3)" = 0 ] && return 0
		sleep 0.1
		n=$((n - 1))
	done
	fail "queue 0 in $1 still holds $(qstat "$1" 0 3) packets"
	return 1
}

# pktgen_setup NS DEV MODE DST_MAC: N datagrams to 10.0.0.2:9
pktgen_setup() {
	local ns=$1 dev=$2
	pg() { ip netns exec "$ns" sh -c "echo '$2' > /proc/net/pktgen/$1" || fail "pktgen $1: $2"; }
	[ -e /proc/net/pktgen/kpktgend_0 ] || ip netns exec "$ns" ls /proc/net/pktgen > /dev/null
	pg kpktgend_0 "rem_device_all"
	pg kpktgend_0 "add_device $dev"
	pg "$dev" "xmit_mode $3"
	pg "$dev" "count $N"
	pg "$dev" "pkt_size 64"
	pg "$dev" "delay 0"
	pg "$dev" "dst 10.0.0.2"
	pg "$dev" "src_min 10.0.0.1"
	pg "$dev" "src_max 10.0.0.1"
	pg "$dev" "dst_mac $4"
	pg "$dev" "udp_dst_min 9"
	pg "$dev" "udp_dst_max 9"
}

# queue_case DESC NS HOOK DEV PKTGEN_NS PKTGEN_DEV MODE FAIL_IN [nfqt args]
# FAIL_IN: pktgen or listener. Prints nothing; sets C (rule), S (ids),
# QD, UD (queue and user dropped), R (seen), NOMEM (refused verdicts),
# D (after the queue: chain after, or b's ingress for egress)
queue_case() {
	local desc=$1 ns=$2 hook=$3 dev=$4 pns=$5 pdev=$6 mode=$7 where=$8
	local lpid rc
	shift 8
	ip netns exec "$ns" nft -f - <<NFT || { fail "$desc: nft refuses the ruleset"; return; }
table netdev t {
	chain pre {
		type filter hook $hook device "$dev" priority -10;
		udp dport 9 counter
	}
	chain q {
		type filter hook $hook device "$dev" priority 0;
		udp dport 9 queue num 0
	}
	chain after {
		type filter hook $hook device "$dev" priority 10;
		udp dport 9 counter
	}
}
NFT
	pktgen_setup "$pns" "$pdev" "$mode" "$mac1"
	rm -f /tmp/l.out
	"$IP" netns exec "$ns" nfqt listen -q 0 -n 0 -t 120000 -v accept -N "$@" \
		> /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening || { kill $lpid; return; }
	case $where in
	pktgen) make_it_fail 1 $(pktgen_pids) ;;
	listener) make_it_fail 1 $lpid ;;
	esac
	echo "$PERCENT" > $fs/probability
	ip netns exec "$pns" timeout 300 sh -c 'echo start > /proc/net/pktgen/pgctrl'
	check "$desc: pktgen ran" "$?" 0
	wait_drained "$ns"
	echo 0 > $fs/probability
	make_it_fail 0 $(pktgen_pids) $lpid
	C=$(counters "$ns" netdev t pre)
	D=$(counters "$ns" netdev t after)
	QD=$(qstat "$ns" 0 6)
	UD=$(qstat "$ns" 0 7)
	S=$(qstat "$ns" 0 8)
	kill -TERM $lpid
	wait $lpid
	rc=$?
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status" "$rc" 0
	R=$(field /tmp/l.out seen)
	NOMEM=$(sed -n 's/^nfqt: nomem=//p' /tmp/l.out)
	ip netns exec "$pns" grep -E 'pkts-sofar|Result' "/proc/net/pktgen/$pdev" |
		sed 's/^/    pktgen: /'
	log "$desc: rule $C, ids $S, queue_dropped $QD, user_dropped $UD," \
		"seen $R, refused (ENOMEM) $NOMEM, after the queue $D"
	check "$desc: queue empty after the listener" "$(qstat "$ns" 0 3)" ""
	ip netns exec "$ns" nft delete table netdev t
}

setup_veth
mac1=$(B cat /sys/class/net/veth1/address)

# queue_side DESC ARGS...: queue_case with failures in the pktgen thread,
# then its accounting
queue_side() {
	local desc=$1 lost
	queue_case "$@" pktgen
	lost=$((C - S - QD))
	log "$desc: $lost dropped by injected failures before an id"
	[ "$lost" -gt 0 ] || fail "$desc: no injected failure hit the queue path"
	check "$desc: every id seen or counted" "$((S - UD))" "$R"
	check "$desc: every accepted packet passed" "$D" "$R"
	check "$desc: no verdict refused" "$NOMEM" 0
}

# 1. egress, queue side
queue_side "egress queue side" a egress veth0 a veth0 queue_xmit

# 2. ingress, queue side (pktgen injects into veth1's receive path)
queue_side "ingress queue side" b ingress veth1 b veth1 netif_receive

# 3. ingress, verdict side: NFQA_L2HDR with b's own address (unchanged),
# a tap on veth1 holding a clone of each frame
rm -f /tmp/tap.out
"$IP" netns exec b nfqt tap veth1 > /tmp/tap.out 2>&1 &
tpid=$!
wait_line /tmp/tap.out tapping || { kill $tpid; finish; }
queue_case "ingress verdict side" b ingress veth1 b veth1 netif_receive listener -D "$mac1"
kill -TERM $tpid
wait $tpid
check "ingress verdict side: tap status" "$?" 0
# (the tap sees b's own frames too: ICMP errors, neighbour discovery)
held=$(sed -n 's/^nfqt: tap frames=//p' /tmp/tap.out)
log "ingress verdict side: the tap held $held frames"
[ "${held:-0}" -ge "$N" ] || fail "ingress verdict side: the tap held ${held:-no} frames, want at least $N"
check "ingress verdict side: every packet queued (no failure there)" "$C $S $QD $UD $R" "$N $N 0 0 $N"
[ "${NOMEM:-0}" -gt 0 ] || fail "ingress verdict side: no verdict refused with ENOMEM"
check "ingress verdict side: accepted minus refused passed" "$D" "$((R - NOMEM))"

# the queue works as before once failslab is off
queue_rule a egress veth0 "udp dport 9000" 0
udp_case "after failslab" 10 a -q 0 -n 10 -v accept
teardown
finish
