# VLAN-tagged traffic (VLAN 10 on top of the veth pair): queued at veth1's
# netdev ingress and at veth0's netdev egress, each packet carries
# NFQA_VLAN (proto 0x8100, id 10) and the L2 header; accepted packets
# reach the receiver on the VLAN device.
. ./lib.sh
setup_veth
setup_vlan
queue_rule b ingress veth1 "udp dport 9000" 0
# (vlan_case: lib.sh; each packet must carry NFQA_VLAN id 10 and the L2
# header)
V="-F 5 -V 10 -L"
# ingress: veth hands the tag over in the payload; the core moves it to
# skb->vlan_tci before the hook
vlan_case "VLAN at ingress (NFQA_VLAN id 10 on every packet)" b 0 $V -k 0
B nft delete table netdev t
# egress: the VLAN device hands the tag to veth0 out of band (veth offers
# VLAN tag insertion)
queue_rule a egress veth0 "udp dport 9000" 1
vlan_case "VLAN at egress (NFQA_VLAN id 10 on every packet)" a 1 $V -k 1
teardown
finish
