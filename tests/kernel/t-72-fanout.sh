# Defect 3 of issue 10: "queue num 0-3" (hash fanout) in a netdev chain
# spreads flows over the four queues. nfqueue_hash() hashes the IP
# addresses, so 64 flows come from 64 source addresses. At ingress
# (veth1, queues 0-3) and at egress (veth0, queues 4-7).
# The hash's seed is drawn once per boot (each run boots the guest), so
# the mapping of the 64 addresses to queues changes from run to run. The
# counts hold for any mapping; "every queue got a packet" is what the
# test is for and holds for all but the mappings that leave a queue
# without any of the 64 flows: 4 * (3/4)^64, about 4e-8 of boots.
. ./lib.sh
setup_veth
# (one ip process and one sender for the 64 addresses: 64 processes of
# each took minutes on a loaded TCG guest, past the test's limit)
i=101
while [ $i -le 164 ]; do
	echo "addr add 10.0.0.$i/32 dev veth0"
	i=$((i + 1))
done > /tmp/addrs
A ip -batch /tmp/addrs || fail "the 64 source addresses"
queue_rule b ingress veth1 "udp dport 9000" 0-3
queue_rule a egress veth0 "udp dport 9001" 4-7

# fanout_case DESC NS FIRST_QUEUE PORT HOOK
fanout_case() {
	local desc=$1 lns=$2 first=$3 port=$4 hook=$5 q pids total=0 empty=0 n rpid
	# (it stops at 64; its idle timeout is a bound: 5 s ran out before
	# the first datagram on a loaded host)
	rm -f /tmp/recv.out
	B nfqt recv "$port" 120000 64 > /tmp/recv.out &
	rpid=$!
	pids=
	# a queue may go without a packet for a long while on a slow guest
	# (the hash may give a queue its last flow long after its first): a
	# listener that gave up
	# on silence would leave its queue unbound and the kernel would drop
	# that queue's next packets. So each listener outlasts the
	# receiver's idle timeout, and is stopped below once the receiver
	# is done; one that ended before is a failure of its own.
	for q in 0 1 2 3; do
		rm -f /tmp/l$q.out
		"$IP" netns exec "$lns" nfqt listen -q $((first + q)) -n 0 -t 300000 \
			-v accept -F 5 -k "$hook" > /tmp/l$q.out 2>&1 &
		pids="$pids $!"
	done
	for q in 0 1 2 3; do
		wait_line /tmp/l$q.out listening
	done
	wait_line /tmp/recv.out receiving
	# one datagram from each of the 64 addresses, a socket each
	A nfqt send 10.0.0.2 "$port" 1 0 10.0.0.101-164 ||
		fail "$desc: the sender failed"
	# every datagram the receiver counts went through a listener, which
	# counted it before its verdict: once the receiver has all 64 (it
	# stops at 64), stop the listeners (SIGTERM: summary and status as
	# after their idle timeout)
	wait $rpid
	q=$first
	for p in $pids; do
		kill -0 $p 2>/dev/null ||
			fail "$desc: queue $q's listener ended before the receiver"
		kill $p 2>/dev/null
		wait $p || fail "$desc: queue $q's listener failed"
		q=$((q + 1))
	done
	for q in 0 1 2 3; do
		n=$(field /tmp/l$q.out seen)
		log "$desc: queue $((first + q)): ${n:-?} packets"
		total=$((total + ${n:-0}))
		[ "${n:-0}" -gt 0 ] || empty=$((empty + 1))
	done
	check "$desc: packets queued in all" "$total" 64
	check "$desc: queues that got nothing" "$empty" 0
	check "$desc: datagrams received" "$(sed -n 's/^received //p' /tmp/recv.out)" 64
}
fanout_case ingress b 0 9000 0
fanout_case egress a 4 9001 1
teardown
finish
