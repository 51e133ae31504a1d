# Packet ids strictly increasing per queue with packets queued from both
# CPUs at once, at netdev ingress (veth1, queue 2) and egress (veth0,
# queue 3), with batch verdicts.
. ./lib.sh
setup_veth
queue_rule b ingress veth1 "udp dport 9001" 2
queue_rule a egress veth0 "udp dport 9002" 3
N=${NFQB_MONO_COUNT:-1000}
load_case() {
	local desc=$1 lns=$2 q=$3 port=$4 lpid lrc s0 s1 seen
	# -t: the listener ends 4 s after the last packet (the senders start
	# right after it reports "listening"; how many packets reach the
	# hook is not known in advance: the backlog may drop some)
	ip netns exec "$lns" nfqt listen -q "$q" -n 0 -t 4000 -b 16 -v accept -F 5 > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening
	A nfqt send 10.0.0.2 "$port" "$N" 0 &
	s0=$!
	A nfqt send 10.0.0.2 "$port" "$N" 1 &
	s1=$!
	wait $s0 $s1
	wait $lpid
	lrc=$?
	sed 's/^/    /' /tmp/l.out | tail -5
	check "$desc: listener status (ids monotonic, no error)" "$lrc" 0
	check "$desc: non-monotonic ids" "$(field /tmp/l.out nonmonotonic)" 0
	seen=$(field /tmp/l.out seen)
	[ "${seen:-0}" -ge $((N / 2)) ] && log "ok: $desc: $seen packets queued" ||
		fail "$desc: only ${seen:-0} packets queued"
	ip netns exec "$lns" cat /proc/net/netfilter/nfnetlink_queue | sed 's/^/    /'
}
load_case ingress b 2 9001
load_case egress a 3 9002
teardown
finish
