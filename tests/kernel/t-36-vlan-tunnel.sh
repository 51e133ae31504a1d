# Review item 5: NFQA_VLAN in a verdict on a device that is not
# Ethernet (ARPHRD_ETHER). At egress of an ipip tunnel the packet starts
# with its IPv4 header; a VLAN tag would be inserted 12 bytes into it,
# as if there were MAC addresses. The verdict must be refused (packet
# dropped), as an EtherType change is refused on such devices. lo
# (ARPHRD_LOOPBACK) is refused by the same rule. Without the tag the
# same paths deliver (the tunnel and its queue work).
. ./lib.sh
setup_veth
# tunnel_case DESC WANT RECV_NS DST [listener args...]: listener in a, 10
# datagrams from a to DST:9000, receiver in RECV_NS
tunnel_case() {
	local desc=$1 want=$2 rns=$3 dst=$4 rpid lpid lrc
	shift 4
	rm -f /tmp/recv.out /tmp/l.out
	"$IP" netns exec "$rns" nfqt recv 9000 120000 "$want" > /tmp/recv.out &
	rpid=$!
	"$IP" netns exec a nfqt listen -t 120000 "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send "$dst" 9000 10 0
	wait $lpid
	lrc=$?
	[ "$want" = 0 ] && kill $rpid 2>/dev/null
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status" "$lrc" 0
	check "$desc: datagrams received" \
		"$(sed -n 's/^received //p' /tmp/recv.out)" "$want"
}
A nft -f - <<NFT || { fail "nft refuses queue at lo's egress"; finish; }
table netdev lo {
	chain q {
		type filter hook egress device "lo" priority 0;
		udp dport 9000 queue num 0
	}
}
NFT
tunnel_case "lo egress: accept" 10 a 127.0.0.1 -q 0 -n 10 -F 5 -k 1 -P 0800
tunnel_case "lo egress: NFQA_VLAN 0x8100 id 10 is refused" 0 a 127.0.0.1 \
	-q 0 -n 10 -F 5 -k 1 -W 8100:10 -R
A nft delete table netdev lo
A ip link add ipip0 type ipip local 10.0.0.1 remote 10.0.0.2 || { fail "no ipip"; finish; }
B ip link add ipip0 type ipip local 10.0.0.2 remote 10.0.0.1
A ip addr add 10.1.0.1/24 dev ipip0
B ip addr add 10.1.0.2/24 dev ipip0
A ip link set ipip0 up
B ip link set ipip0 up
queue_rule a egress ipip0 "udp dport 9000" 0
# family 5, hook 1 (egress), the payload is the IPv4 packet
tunnel_case "ipip egress: accept" 10 b 10.1.0.2 -q 0 -n 10 -F 5 -k 1 -P 0800 -I
tunnel_case "ipip egress: NFQA_VLAN 0x8100 id 10 is refused" 0 b 10.1.0.2 \
	-q 0 -n 10 -F 5 -k 1 -W 8100:10 -R
teardown
finish
