# libnfq-batch at netdev egress: t-20's verdict cases through the library
# (nfqb-netdev) on veth0 in namespace a, each packet checked through the
# packet view (family netdev, hook point egress, hw_protocol 0x0800,
# payload starting with the 14-byte L2 header, nfqb_pkt_network_offset()
# 14 with the IPv4 header there, out device veth0, ids strictly
# increasing); then VLAN 10 with the tag out of band (nfqb_pkt_vlan(),
# 14-byte L2 header) and in the payload (VLAN offload off, no reordering:
# 18-byte L2 header, network offset 18).
. ./lib.sh
need_lib_tool
setup_veth
A nft -f - <<NFT || { fail "nft refuses queue in a netdev egress chain"; finish; }
table netdev t {
	chain q {
		type filter hook egress device "veth0" priority 0;
		udp dport 9000 queue num 0
	}
	chain after {
		type filter hook egress device "veth0" priority 10;
		udp dport 9000 meta mark 0x2a counter
		udp dport 9000 counter
	}
}
NFT
lib_verdict_cases a -k egress -P 0800 -l 14 -d veth0

# VLAN 10, tag out of band: the VLAN device hands it to veth0 with the
# packet (veth offers VLAN tag insertion)
setup_vlan
lib_vlan_case "lib VLAN (out of band) at egress" a 0 -k egress -P 0800 -l 14 -d veth0
check "lib VLAN: counters (marked total)" "$(counters a netdev t after | tr '\n' ' ')" "30 45 "
A ip link del veth0.10
B ip link del veth1.10

# VLAN 10, tag in the payload: without VLAN offload on veth0 and with
# header reordering off, the VLAN device writes the 802.1Q header into
# the frame; at egress hw_protocol is 0x8100, NFQA_L2HDR is 18 bytes
# (with the tag) and the IPv4 header starts at offset 18 of the payload
if ! command -v ethtool > /dev/null; then
	fail "no ethtool in the guest (kernel/deps.sh installs it)"
elif ! A ethtool -K veth0 txvlan off; then
	fail "ethtool -K veth0 txvlan off"
else
	A ip link add link veth0 name veth0.10 type vlan id 10 reorder_hdr off
	B ip link add link veth1 name veth1.10 type vlan id 10
	A ip addr add 10.0.10.1/24 dev veth0.10
	B ip addr add 10.0.10.2/24 dev veth1.10
	A ip link set veth0.10 up
	B ip link set veth1.10 up
	A ping -c 1 -W 10 10.0.10.2 > /dev/null || echo "  (warm-up ping on VLAN failed)"
	# skb->protocol is 0x8100 now: nft sets up no IPv4 packet info, so
	# "udp dport" cannot match; match raw: the tag's EtherType in the
	# link layer header, UDP port 9000 at the network header (raw
	# because "meta protocol 8021q @nh,..." makes nft 1.0.6 abort when
	# it lists the rule)
	A nft add rule netdev t q @ll,96,16 0x8100 @nh,72,8 17 @nh,176,16 9000 queue num 0 ||
		fail "nft rule for 802.1Q-tagged UDP"
	rm -f /tmp/recv.out
	B nfqt recv 9000 30000 5 > /tmp/recv.out &
	rpid=$!
	rm -f /tmp/l.out
	A nfqb-netdev -q 0 -n 5 -t 20000 -v accept -k egress -P 8100 -N 0800 -l 18 -T 10 -d veth0 -s > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send 10.0.10.2 9000 5 0
	wait $lpid
	lrc=$?
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "lib VLAN (in the payload) at egress: listener status (18-byte L2 header, network offset 18)" "$lrc" 0
	check "lib VLAN (in the payload) at egress: datagrams received" "$(sed -n 's/^received //p' /tmp/recv.out)" 5
fi
teardown
finish
