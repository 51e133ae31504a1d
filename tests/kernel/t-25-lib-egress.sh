# libnfq-batch at netdev egress: t-20's verdict cases through the library
# (nfqb-netdev) on veth0 in namespace a, each packet checked through the
# packet view (family netdev, hook point egress, hw_protocol 0x0800,
# payload starting with the 14-byte L2 header, nfqb_pkt_network_offset()
# 14 with the IPv4 header there, out device veth0, ids strictly
# increasing); then VLAN 10 with the tag out of band (nfqb_pkt_vlan(),
# 14-byte L2 header) and in the payload (VLAN offload off, no reordering:
# 18-byte L2 header, network offset 18).
. ./lib.sh
# t-20's cases (lib.sh: lib_hook_cases), then VLAN 10, tag out of band:
# the VLAN device hands it to veth0 with the packet (veth offers VLAN tag
# insertion)
lib_hook_cases a egress veth0 "lib VLAN (out of band) at egress" -P 0800 -l 14 -d veth0

# VLAN 10, tag in the payload: without VLAN offload on veth0 and with
# header reordering off, the VLAN device writes the 802.1Q header into
# the frame; at egress hw_protocol is 0x8100, NFQA_L2HDR is 18 bytes
# (with the tag) and the IPv4 header starts at offset 18 of the payload
if ! command -v ethtool > /dev/null; then
	fail "no ethtool in the guest (kernel/deps.sh installs it)"
elif ! A ethtool -K veth0 txvlan off; then
	fail "ethtool -K veth0 txvlan off"
else
	setup_vlan reorder_hdr off
	# skb->protocol is 0x8100 now: nft sets up no IPv4 packet info, so
	# "udp dport" cannot match; match raw: the tag's EtherType in the
	# link layer header, UDP port 9000 at the network header (raw
	# because "meta protocol 8021q @nh,..." makes nft 1.0.6 abort when
	# it lists the rule)
	A nft add rule netdev t q @ll,96,16 0x8100 @nh,72,8 17 @nh,176,16 9000 queue num 0 ||
		fail "nft rule for 802.1Q-tagged UDP"
	vlan_case "lib VLAN (in the payload) at egress (18-byte L2 header, network offset 18)" \
		a 0 -k egress -P 8100 -N 0800 -l 18 -T 10 -d veth0
fi
teardown
finish
