# Item 4 of issue 10: verdict semantics at the netdev hooks, as the uapi
# header (linux/netfilter/nfnetlink_queue.h) states them:
#  - a payload rewrite may not be shorter than the link layer header (if
#    the payload has one: egress) plus a minimal network header (IPv4:
#    20 bytes), nor than the headers before a known transport header:
#    such a packet is dropped (no error, as for any payload the kernel
#    cannot apply);
#  - a new L2 header (NFQA_L2HDR) may not change the EtherType;
#  - at ingress the packet type follows the new destination address;
#  - at egress NFQA_L2HDR and NFQA_PAYLOAD together are refused (the
#    payload holds the L2 header already).
# A refused L2 header gets an error and the packet is dropped.
. ./lib.sh
setup_veth
mac1=$(B cat /sys/class/net/veth1/address)
other=02:00:00:00:00:99
queue_rule b ingress veth1 "udp dport 9000" 0
I="-q 0 -n 10 -v accept -F 5 -k 0"
udp_case "ingress: payload rewritten, same length" 10 b $I -T 65535
udp_case "ingress: payload cut to 0 bytes: dropped" 0 b $I -T 0
udp_case "ingress: payload cut to 19 bytes: dropped" 0 b $I -T 19
udp_case "ingress: L2 header to another host's MAC: not for us" 0 b $I -D $other
udp_case "ingress: L2 header to our own MAC: delivered" 10 b $I -D $mac1
udp_case "ingress: L2 header with another EtherType is refused" 0 b $I -Y 86dd -R
B nft delete table netdev t
queue_rule a egress veth0 "udp dport 9000" 1
E="-q 1 -n 10 -v accept -F 5 -k 1"
udp_case "egress: payload rewritten, same length" 10 a $E -T 65535
udp_case "egress: payload cut into the L2 header: dropped" 0 a $E -T 10
udp_case "egress: payload cut to L2 + 19 bytes: dropped" 0 a $E -T 33
udp_case "egress: NFQA_L2HDR with NFQA_PAYLOAD is refused" 0 a $E -T 65535 -D $mac1 -R
udp_case "egress: L2 header to another host's MAC: b drops it" 0 a $E -D $other
udp_case "egress: L2 header to b's MAC: delivered" 10 a $E -D $mac1
teardown
finish
