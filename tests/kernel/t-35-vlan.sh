# VLAN-tagged traffic (VLAN 10 on top of the veth pair): queued at veth1's
# netdev ingress and at veth0's netdev egress, each packet carries
# NFQA_VLAN (proto 0x8100, id 10) and the L2 header; accepted packets
# reach the receiver on the VLAN device.
. ./lib.sh
setup_veth
A ip link add link veth0 name veth0.10 type vlan id 10
B ip link add link veth1 name veth1.10 type vlan id 10
A ip addr add 10.0.10.1/24 dev veth0.10
B ip addr add 10.0.10.2/24 dev veth1.10
A ip link set veth0.10 up
B ip link set veth1.10 up
A ping -c 1 -W 10 10.0.10.2 > /dev/null || echo "  (warm-up ping on VLAN failed)"
queue_rule b ingress veth1 "udp dport 9000" 0
vlan_case() {
	local desc=$1 lns=$2 q=$3 rpid lpid lrc
	shift 3
	rm -f /tmp/recv.out
	B nfqt recv 9000 30000 5 > /tmp/recv.out &
	rpid=$!
	rm -f /tmp/l.out
	ip netns exec "$lns" nfqt listen -q "$q" -n 5 -t 20000 -v accept -F 5 -V 10 -L -s "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send 10.0.10.2 9000 5 0
	wait $lpid
	lrc=$?
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status (NFQA_VLAN id 10 on every packet)" "$lrc" 0
	check "$desc: datagrams received" "$(sed -n 's/^received //p' /tmp/recv.out)" 5
}
# ingress: veth hands the tag over in the payload; the core moves it to
# skb->vlan_tci before the hook
vlan_case "VLAN at ingress" b 0 -k 0
B nft delete table netdev t
# egress: the VLAN device hands the tag to veth0 out of band (veth offers
# VLAN tag insertion)
queue_rule a egress veth0 "udp dport 9000" 1
vlan_case "VLAN at egress" a 1 -k 1
teardown
finish
