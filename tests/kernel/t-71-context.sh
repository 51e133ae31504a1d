# Defect 2 of issue 10: the netdev hooks that follow a queue rule run, on
# reinjection, in the context netdev hooks always run in (BH disabled, so
# not preemptible). A queue rule at veth1 ingress is followed by a chain
# with dup and fwd to dummy devices (nf_dup_netdev keeps a per-CPU
# recursion counter: __this_cpu ops, which DEBUG_PREEMPT reports when
# preemptible), then by a flowtable on the same device. Any kernel report
# during the test fails it (and the harness' log scan fails the run).
. ./lib.sh
setup_veth
# c behind b: a (veth0 10.0.0.1) <-> b (veth1 10.0.0.2, veth2 10.0.1.2)
# <-> c (veth3 10.0.1.1); b forwards
ip netns add c || exit 2
ip link add veth2 netns b type veth peer name veth3 netns c || exit 2
B ip addr add 10.0.1.2/24 dev veth2
ip netns exec c /bin/ip addr add 10.0.1.1/24 dev veth3
ip netns exec c /bin/ip link set lo up
B ip link set veth2 up
ip netns exec c /bin/ip link set veth3 up
ip netns exec c /bin/ip route add default via 10.0.1.2
A ip route add 10.0.1.0/24 via 10.0.0.2
B sysctl -q -w net.ipv4.ip_forward=1
for d in dummy0 dummy1; do
	B ip link add $d type dummy
	# no IPv6 on them: its router solicitations would skew the counts
	B sysctl -q -w net.ipv6.conf.$d.disable_ipv6=1
	B ip link set $d up
done
reports0=$(dmesg | grep -c -E 'BUG:|WARNING:|lockdep|KASAN')

B nft -f - <<NFT || { fail "nft refuses the ruleset"; finish; }
table netdev t {
	chain q {
		type filter hook ingress device "veth1" priority 0;
		udp dport { 9000, 9002 } queue num 0
		tcp dport 9003 queue num 1
	}
	chain after {
		type filter hook ingress device "veth1" priority 10;
		udp dport 9000 counter dup to "dummy0"
		udp dport 9002 counter fwd to "dummy1"
	}
}
NFT

txp() { B cat /sys/class/net/$1/statistics/tx_packets; }

# dup: every datagram goes on to the receiver, a copy out of dummy0
d0=$(txp dummy0)
udp_case "queue then dup" 10 b -q 0 -n 10 -v accept -F 5 -k 0
check "queue then dup: copies sent on dummy0" $(($(txp dummy0) - d0)) 10
# fwd: every datagram leaves through dummy1, none reaches the receiver
d1=$(txp dummy1)
rm -f /tmp/recv.out
B nfqt recv 9002 3000 > /tmp/recv.out &
rpid=$!
rm -f /tmp/l.out
B nfqt listen -q 0 -n 10 -t 20000 -v accept -F 5 -k 0 > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
A nfqt send 10.0.0.2 9002 10 0
wait $lpid
check "queue then fwd: listener status" $? 0
wait $rpid
check "queue then fwd: datagrams received locally" "$(sed -n 's/^received //p' /tmp/recv.out)" 0
check "queue then fwd: sent on dummy1" $(($(txp dummy1) - d1)) 10
# the per-CPU recursion counter is balanced: dup keeps working from both
# CPUs after many reinjections
d0=$(txp dummy0)
rm -f /tmp/l.out
B nfqt listen -q 0 -n 0 -t 10000 -v accept > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening
A nfqt send 10.0.0.2 9000 200 0 &
s0=$!
A nfqt send 10.0.0.2 9000 200 1
wait $s0
wait $lpid
n=$(field /tmp/l.out seen)
check "dup from both CPUs: copies on dummy0 = packets queued" $(($(txp dummy0) - d0)) "$n"

# flowtable on the same device, after the queue: TCP a -> c through b,
# offloaded once established; the flowtable's ingress hook then runs on
# reinjected packets
B nft -f - <<NFT || { fail "nft refuses the flowtable"; finish; }
table inet ft {
	flowtable f {
		hook ingress priority 20;
		devices = { veth1, veth2 };
	}
	chain forwarding {
		type filter hook forward priority 0;
		meta l4proto tcp flow add @f
		counter
	}
}
NFT
rm -f /tmp/recv.out
ip netns exec c nfqt trecv 9003 20000 > /tmp/recv.out &
rpid=$!
rm -f /tmp/l.out
B nfqt listen -q 1 -n 0 -t 10000 -G -v accept -F 5 -k 0 > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
A timeout 180 nfqt tsend 10.0.1.1 9003 2097152
check "flowtable: sender status" $? 0
wait $rpid
wait $lpid
check "flowtable: listener status" $? 0
check "flowtable: bytes received in c" "$(sed -n 's/^received //p' /tmp/recv.out)" 2097152
fwd=$(counters b inet ft forwarding | tail -1)
queued=$(field /tmp/l.out seen)
log "flowtable: $queued packets queued at veth1, $fwd through the forward chain"
[ "${fwd:-0}" -lt "${queued:-0}" ] && log "ok: flowtable: packets bypassed the forward chain (offloaded)" ||
	log "note: flowtable: no packet was offloaded"

reports=$(($(dmesg | grep -c -E 'BUG:|WARNING:|lockdep|KASAN') - reports0))
check "kernel reports during the test" "$reports" 0
[ "$reports" = 0 ] || dmesg | grep -E -A12 'BUG:|WARNING:' | head -40 | sed 's/^/    /'
ip netns del c
teardown
finish
