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
	# How many packets reach the hook is not known in advance (the
	# backlog may drop some): the listener runs until the senders are
	# done and the queue has been empty, its last id still, for a
	# second, then stops on SIGTERM (summary and status as after its
	# idle timeout). An idle timeout of 4 s ended it before the first
	# packet when starting the senders took longer on a loaded host
	# (egress: "only 0 packets queued"); 60 s is only a bound.
	rm -f /tmp/l.out
	# "$IP", not the ip() function: a function run in the background is
	# a subshell, and the SIGTERM below would end the subshell ('143',
	# no summary) and leave nfqt running
	"$IP" netns exec "$lns" nfqt listen -q "$q" -n 0 -t 60000 -b 16 -v accept -F 5 > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening
	A nfqt send 10.0.0.2 "$port" "$N" 0 &
	s0=$!
	A nfqt send 10.0.0.2 "$port" "$N" 1 &
	s1=$!
	wait $s0 $s1
	local last= cur still=0 i
	for i in $(seq 600); do
		cur=$(ip netns exec "$lns" awk -v q="$q" '$1 == q { print $3, $8 }' \
			/proc/net/netfilter/nfnetlink_queue)
		if [ "$cur" = "$last" ] && [ "${cur%% *}" = 0 ]; then
			still=$((still + 1))
			[ "$still" -ge 10 ] && break
		else
			still=0
		fi
		last=$cur
		sleep 0.1
	done
	kill $lpid 2>/dev/null
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
