# Review item 5: NFQA_VLAN in a verdict on a device that is not
# Ethernet (ARPHRD_ETHER). At egress of an ipip tunnel the packet starts
# with its IPv4 header; a VLAN tag would be inserted 12 bytes into it,
# as if there were MAC addresses. The verdict must be refused (packet
# dropped), as an EtherType change is refused on such devices. lo
# (ARPHRD_LOOPBACK) is refused by the same rule. Without the tag the
# same paths deliver (the tunnel and its queue work).
. ./lib.sh
setup_veth
queue_rule a egress lo "udp dport 9000" 0
export RECV_NS=a DADDR=127.0.0.1
udp_case "lo egress: accept" 10 a -q 0 -n 10 -F 5 -k 1 -P 0800
udp_case "lo egress: NFQA_VLAN 0x8100 id 10 is refused" 0 a \
	-q 0 -n 10 -F 5 -k 1 -W 8100:10 -R
A nft delete table netdev t
A ip link add ipip0 type ipip local 10.0.0.1 remote 10.0.0.2 || { fail "no ipip"; finish; }
B ip link add ipip0 type ipip local 10.0.0.2 remote 10.0.0.1
A ip addr add 10.1.0.1/24 dev ipip0
B ip addr add 10.1.0.2/24 dev ipip0
A ip link set ipip0 up
B ip link set ipip0 up
queue_rule a egress ipip0 "udp dport 9000" 0
# family 5, hook 1 (egress), the payload is the IPv4 packet
export RECV_NS=b DADDR=10.1.0.2
udp_case "ipip egress: accept" 10 a -q 0 -n 10 -F 5 -k 1 -P 0800 -I
udp_case "ipip egress: NFQA_VLAN 0x8100 id 10 is refused" 0 a \
	-q 0 -n 10 -F 5 -k 1 -W 8100:10 -R
teardown
finish
