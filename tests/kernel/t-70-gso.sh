# Defect 1 of issue 10: GSO packets queued at netdev ingress. veth hands
# TCP over as GSO packets (it advertises software GSO); when the listener
# does not take GSO packets (no NFQA_CFG_F_GSO), nfnetlink_queue segments
# them. The segments must keep their Ethernet header: NFQA_L2HDR on every
# one, and after reinjection the bridge behind the device must see the
# real MAC addresses (no bogus FDB entries, traffic delivered).
#
# Topology: a (veth0, 10.0.0.1) <-> b (veth1 enslaved to br0, br0 has
# 10.0.0.2). TCP 1 MiB a -> b (4 MiB until 2026-12-03: each of the five
# transfers cost over a minute of a TCG guest, and 1 MiB already brings
# hundreds of segments and, with NFQA_CFG_F_GSO, GSO packets); queued at veth1 ingress (b) and at veth0
# egress (a), with and without NFQA_CFG_F_GSO.
. ./lib.sh
setup_veth
setup_bridge
A ethtool -k veth0 2>/dev/null | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload):' | sed 's/^/    a veth0 /'
veth0_mac=$(A cat /sys/class/net/veth0/address)

queue_rule b ingress veth1 "tcp dport 9001" 0
queue_rule a egress veth0 "tcp dport 9002" 1

BYTES=1048576

# fdb_check: every MAC br0 learned on a port is veth0's (the only host
# behind veth1); a segment without its L2 header teaches it IP bytes
fdb_check() {
	local desc=$1 learned bogus
	# struct __fdb_entry: mac[6], port_no, is_local, ... (16 bytes)
	learned=$(B od -An -v -tx1 -w16 /sys/class/net/br0/brforward |
		awk '$8 == "00" { print $1 ":" $2 ":" $3 ":" $4 ":" $5 ":" $6 }')
	bogus=$(echo "$learned" | grep -v -x -i "$veth0_mac" | grep . | tr '\n' ' ')
	check "$desc: bridge learned no MAC but veth0's" "$bogus" ""
}

# tcp_case DESC NS QUEUE PORT LISTENER_ARGS...
tcp_case() {
	local desc=$1 lns=$2 q=$3 port=$4 lpid rpid lrc src
	shift 4
	B ip link set br0 type bridge fdb_flush 2>/dev/null ||
		B sh -c 'echo 1 > /sys/class/net/br0/bridge/flush'
	rm -f /tmp/recv.out
	ip netns exec "${RECV_NS:-b}" nfqt trecv "$port" 20000 > /tmp/recv.out &
	rpid=$!
	# $IP, not the ip function: $! must be the listener itself
	rm -f /tmp/l.out
	"$IP" netns exec "$lns" nfqt listen -q "$q" -n 0 -t 30000 -v accept "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A timeout 180 nfqt tsend "${DADDR:-10.0.0.2}" "$port" $BYTES
	src=$?
	wait $rpid
	# the receiver has every byte (or gave up): stop the listener now
	# rather than after its idle timeout (SIGTERM: summary and status)
	kill $lpid 2>/dev/null
	wait $lpid
	lrc=$?
	grep -v '^nfqt: id ' /tmp/l.out | sort | uniq -c | sort -rn | head -8 | sed 's/^/    /'
	check "$desc: sender status" "$src" 0
	check "$desc: listener status (checks on every packet)" "$lrc" 0
	check "$desc: bytes received" "$(sed -n 's/^received //p' /tmp/recv.out)" $BYTES
	check "$desc: packets without NFQA_L2HDR" \
		$(($(field /tmp/l.out seen) - $(field /tmp/l.out l2))) 0
	fdb_check "$desc"
	LAST_BIG=$(field /tmp/l.out big)
	log "$desc: $(field /tmp/l.out seen) packets queued, $LAST_BIG larger than the MTU"
}

# ingress, no NFQA_CFG_F_GSO: the kernel segments, each segment must keep
# its Ethernet header and the payload must start at the IPv4 header
tcp_case "ingress, segmented" b 0 9001 -F 5 -k 0 -P 0800 -L -I
check "ingress, segmented: no packet larger than the MTU" "$LAST_BIG" 0
# ingress with NFQA_CFG_F_GSO: GSO packets are queued whole
tcp_case "ingress, F_GSO" b 0 9001 -G -F 5 -k 0 -P 0800 -L -I
[ "${LAST_BIG:-0}" -gt 0 ] && log "ok: ingress, F_GSO: GSO packets reached the queue" ||
	log "note: ingress, F_GSO: no GSO packet seen (veth did not aggregate)"
# egress: the payload starts with the Ethernet header
tcp_case "egress, segmented" a 1 9002 -F 5 -k 1 -P 0800 -L -E
check "egress, segmented: no packet larger than the MTU" "$LAST_BIG" 0
tcp_case "egress, F_GSO" a 1 9002 -G -F 5 -k 1 -P 0800 -L -E
[ "${LAST_BIG:-0}" -gt 0 ] && log "ok: egress, F_GSO: GSO packets reached the queue" ||
	fail "egress, F_GSO: no GSO packet seen (the test does not test GSO)"
# IPv6 (TCPv6 GSO): segmented at ingress and at egress, each segment
# with its Ethernet header (-I: the first nibble of the payload is 6)
setup_v6 br0
DADDR=fd00::2 tcp_case "IPv6 ingress, segmented" b 0 9001 -F 5 -k 0 -P 86dd -L -I
check "IPv6 ingress, segmented: no packet larger than the MTU" "$LAST_BIG" 0
DADDR=fd00::2 tcp_case "IPv6 egress, segmented" a 1 9002 -F 5 -k 1 -P 86dd -L -E
check "IPv6 egress, segmented: no packet larger than the MTU" "$LAST_BIG" 0

# v3 defect 1: egress GSO under br_netfilter. Traffic that entered b
# through br0 (bridge-nf-call-iptables=1, the default once br_netfilter
# runs: every Docker or libvirt host) and is routed out of veth2 keeps its
# bridge netfilter state to veth2's egress hook. v2 then pushed the "MAC
# header" a second time before segmenting (at egress skb->data is already
# at it): each segment was queued without its Ethernet header, and sent
# with the IP header as the MAC header. a -> b (br0, router) -> c.
ip netns add c
B ip link add veth2 type veth peer name veth3 netns c
B ip addr add 10.0.1.1/24 dev veth2
ip netns exec c ip addr add 10.0.1.2/24 dev veth3
B ip link set veth2 up
ip netns exec c ip link set veth3 up
ip netns exec c ip link set lo up
ip netns exec c ip route add default via 10.0.1.1
A ip route add 10.0.1.0/24 via 10.0.0.2
B sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
check "br_netfilter: bridge-nf-call-iptables in b" \
	"$(B cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>&1)" 1
for i in $(seq 50); do
	ip netns exec c ip link show veth3 | grep -q LOWER_UP && break
	sleep 0.2
done
A ping -c 1 -W 10 10.0.1.2 > /dev/null || log "(warm-up ping through the router failed)"
B nft delete table netdev t
queue_rule b egress veth2 "tcp dport 9003" 2
RECV_NS=c DADDR=10.0.1.2 tcp_case "routed from a bridge, egress, segmented" b 2 9003 -F 5 -k 1 -P 0800 -L -E
check "routed from a bridge, egress, segmented: no packet larger than the MTU" "$LAST_BIG" 0
ip netns del c
teardown
finish
