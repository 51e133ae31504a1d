# v3 defect 2: NFQA_VLAN in a verdict. The kernel wrote the protocol
# into the packet unchecked; at netdev ingress the receive path then
# looks the VLAN device up by that protocol (vlan_do_receive(),
# vlan_proto_idx()) and WARNs "invalid VLAN protocol" for anything but
# 802.1Q and 802.1ad when the device has a VLAN upper: root in a user
# namespace could bring down a machine with panic_on_warn. The verdict
# must be refused (error, packet dropped), and nothing may be logged.
# A valid tag is still applied: with protocol 0x8100 and id 10 the
# packet is received on the VLAN device.
. ./lib.sh
setup_veth
B ip link add link veth1 name veth1.10 type vlan id 10
B ip addr add 10.0.10.2/24 dev veth1.10
B ip link set veth1.10 up
queue_rule b ingress veth1 "udp dport 9000" 0
warns() { dmesg | grep -c 'invalid VLAN protocol'; }
w0=$(warns)
udp_case "ingress: NFQA_VLAN protocol 0x1234 is refused" 0 b -q 0 -n 10 -v accept -F 5 -k 0 -W 1234:10 -R
udp_case "ingress: NFQA_VLAN protocol 0x0800 is refused" 0 b -q 0 -n 10 -v accept -F 5 -k 0 -W 0800:10 -R
check "no 'invalid VLAN protocol' warning" "$(($(warns) - w0))" 0
# 802.1Q, id 10: the packet goes to veth1.10 (10.0.0.2 is local to b:
# delivered there too)
udp_case "ingress: NFQA_VLAN 0x8100 id 10 is applied" 10 b -q 0 -n 10 -v accept -F 5 -k 0 -W 8100:10
check "veth1.10 received them" "$(B cat /sys/class/net/veth1.10/statistics/rx_packets)" 10
check "still no warning" "$(($(warns) - w0))" 0
teardown
finish
