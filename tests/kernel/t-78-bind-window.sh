# v3 defect 8: the bind window. A queue was visible to the hook as soon as
# a bind request created it, in copy mode NONE, and was configured (copy
# mode, flags) by the same request a moment later. What came in between
# was dropped by nf_queue(), counted nowhere, whatever the rule's bypass
# flag: an application restarting under load lost packets at each start.
#
# pktgen in a sends 20000 UDP datagrams at full speed to b, where chain
# "q" at veth1's ingress queues them with bypass to a listener that binds
# (one request: bind, copy mode, fail-open), reads for 5 ms without
# verdicts, unbinds, and again, on one socket. Every datagram the hook
# sees (chain "pre", before) is then accepted (bypass while unbound,
# fail-open when the queue or the socket is full: chain "after") or is a
# message to the listener (queued, and dropped by the unbind): exactly
# in = after + messages. v2 lost some at each bind.
. ./lib.sh
setup_veth
N=20000
mac1=$(B cat /sys/class/net/veth1/address)
B nft -f - <<NFT || { fail "nft refuses the ruleset"; finish; }
table netdev t {
	chain pre {
		type filter hook ingress device "veth1" priority -10;
		udp dport 9 counter
	}
	chain q {
		type filter hook ingress device "veth1" priority 0;
		udp dport 9 queue num 0 bypass
	}
	chain after {
		type filter hook ingress device "veth1" priority 10;
		udp dport 9 counter
	}
}
NFT
# pktgen: one device on the first thread, in a's namespace
pg() { A sh -c "echo '$2' > /proc/net/pktgen/$1" || fail "pktgen $1: $2"; }
[ -e /proc/net/pktgen/kpktgend_0 ] || A ls /proc/net/pktgen > /dev/null
pg kpktgend_0 "rem_device_all"
pg kpktgend_0 "add_device veth0"
pg veth0 "count $N"
pg veth0 "pkt_size 64"
pg veth0 "delay 0"
pg veth0 "clone_skb 0"
pg veth0 "dst 10.0.0.2"
pg veth0 "src_min 10.0.0.1"
pg veth0 "src_max 10.0.0.1"
pg veth0 "dst_mac $mac1"
pg veth0 "udp_dst_min 9"
pg veth0 "udp_dst_max 9"
rm -f /tmp/bl.out
"$IP" netns exec b nfqt bindloop 0 5 > /tmp/bl.out 2>&1 &
lpid=$!
wait_line /tmp/bl.out bindloop || { kill $lpid; finish; }
start=$(cut -d' ' -f1 /proc/uptime)
A timeout 400 sh -c 'echo start > /proc/net/pktgen/pgctrl'
check "pktgen ran" "$?" 0
end=$(cut -d' ' -f1 /proc/uptime)
kill -TERM $lpid
wait $lpid
check "listener status (every bind and unbind acknowledged)" "$?" 0
sed 's/^/    /' /tmp/bl.out
A grep -E 'pkts-sofar|Result' /proc/net/pktgen/veth0 | sed 's/^/    pktgen: /'
set -- $(counters b netdev t pre) $(counters b netdev t after)
in=${1:-0} after=${2:-0}
msgs=$(sed -n 's/.*bindloop binds=[0-9]* msgs=\([0-9]*\).*/\1/p' /tmp/bl.out)
binds=$(sed -n 's/.*bindloop binds=\([0-9]*\).*/\1/p' /tmp/bl.out)
log "pktgen $start..$end s: in=$in after=$after messages=$msgs binds=$binds"
[ "${binds:-0}" -ge 20 ] || fail "only ${binds:-0} binds while the traffic ran"
[ "$in" -ge $((N / 2)) ] || fail "only $in of $N datagrams reached the hook"
check "datagrams lost (in - after - messages)" "$((in - after - ${msgs:-0}))" 0
teardown
finish
