# Item 4 of issue 10: verdict semantics at the netdev hooks, as the uapi
# header (linux/netfilter/nfnetlink_queue.h) states them:
#  - a payload rewrite may not be shorter than the link layer header (if
#    the payload has one: egress) plus a minimal network header (IPv4:
#    20 bytes, IPv6: 40), nor than the headers before a known transport header:
#    such a packet is dropped (no error, as for any payload the kernel
#    cannot apply);
#  - a new L2 header (NFQA_L2HDR) may not change the EtherType;
#  - at ingress the packet type follows the new destination address;
#  - at egress NFQA_L2HDR and NFQA_PAYLOAD together are refused (the
#    payload holds the L2 header already).
#  - (v3) the packet type is derived again only when the destination
#    address changes, and at egress a payload rewrite may not change the
#    EtherType either.
# A refused L2 header or payload gets an error and the packet is dropped.
. ./lib.sh
setup_veth
mac1=$(B cat /sys/class/net/veth1/address)
other=02:00:00:00:00:99
queue_rule b ingress veth1 "udp dport 9000" 0
I="-q 0 -n 10 -v accept -F 5 -k 0"
# v6_cuts NS HOOK DEV L2 LISTENER_ARGS...: IPv6 through the queue at HOOK
# of DEV in NS (setup_v6 first; L2: bytes of link layer header the
# payload starts with): payload rewritten at full length (delivered), cut
# to L2 + 39 bytes (dropped) and to L2 + 40 (applied; IP drops it later).
# A chain after the queue counts the cut packets the verdict let through.
v6_cuts() {
	local ns=$1 hook=$2 dev=$3 l2=$4 at= DADDR=fd00::2
	shift 4
	[ "$l2" = 0 ] || at="L2 + "
	after_chain "$ns" "$hook" "$dev" "ether type ip6 meta length $((l2 + 39)) counter" \
		"ether type ip6 meta length $((l2 + 40)) counter"
	udp_case "$hook IPv6: payload rewritten, same length" 10 "$ns" "$@" -P 86dd -T 65535
	udp_case "$hook IPv6: payload cut to ${at}39 bytes: dropped" 0 "$ns" "$@" -P 86dd -T $((l2 + 39))
	udp_case "$hook IPv6: payload cut to ${at}40 bytes: applied (IP drops it)" 0 "$ns" "$@" -P 86dd -T $((l2 + 40))
	set -- $(counters "$ns" netdev t after)
	check "$hook IPv6: ${at}39-byte packets past the queue" "$1" 0
	check "$hook IPv6: ${at}40-byte packets past the queue" "$2" 10
}
udp_case "ingress: payload rewritten, same length" 10 b $I -T 65535
udp_case "ingress: payload cut to 0 bytes: dropped" 0 b $I -T 0
udp_case "ingress: payload cut to 19 bytes: dropped" 0 b $I -T 19
udp_case "ingress: L2 header to another host's MAC: not for us" 0 b $I -D $other
udp_case "ingress: L2 header to our own MAC: delivered" 10 b $I -D $mac1
udp_case "ingress: L2 header with another EtherType is refused" 0 b $I -Y 86dd -R
# v3 defect 3: the packet type is derived again only for a new destination.
# a sends to another host's MAC; tc ingress (which runs before the hook)
# makes the packet ours (skbedit ptype host). A verdict that echoes the L2
# header unchanged must keep that: v2 derived the type from the address
# again on any NFQA_L2HDR (other host: dropped by IP).
B tc qdisc add dev veth1 clsact
B tc filter add dev veth1 ingress matchall action skbedit ptype host
A ip neigh replace 10.0.0.2 lladdr $other dev veth0
udp_case "ingress: made ours by tc, no L2 header in the verdict: delivered" 10 b $I
udp_case "ingress: made ours by tc, L2 header echoed unchanged: delivered" 10 b $I -D $other
udp_case "ingress: made ours by tc, L2 header to a third MAC: not for us" 0 b $I -D 02:00:00:00:00:98
A ip neigh replace 10.0.0.2 lladdr $mac1 dev veth0
B tc qdisc del dev veth1 clsact
# IPv6 (minimal network header 40 bytes): a chain after the queue counts
# the cut packets the verdict let through (IP drops them later anyway)
setup_v6
v6_cuts b ingress veth1 0 $I
B nft delete table netdev t
queue_rule a egress veth0 "udp dport 9000" 1
E="-q 1 -n 10 -v accept -F 5 -k 1"
udp_case "egress: payload rewritten, same length" 10 a $E -T 65535
udp_case "egress: payload cut into the L2 header: dropped" 0 a $E -T 10
udp_case "egress: payload cut to L2 + 19 bytes: dropped" 0 a $E -T 33
udp_case "egress: NFQA_L2HDR with NFQA_PAYLOAD is refused" 0 a $E -T 65535 -D $mac1 -R
udp_case "egress: L2 header to another host's MAC: b drops it" 0 a $E -D $other
udp_case "egress: L2 header to b's MAC: delivered" 10 a $E -D $mac1
# v3 defect 4: at egress the payload starts with the Ethernet header; a
# new one may not change the EtherType either (v2 accepted it)
udp_case "egress: payload with another EtherType is refused" 0 a $E -T 65535 -Z 86dd -R
udp_case "egress: payload with the same EtherType: delivered" 10 a $E -Z 0800
# IPv6 at egress: the payload starts with the 14-byte Ethernet header
v6_cuts a egress veth0 14 $E
teardown
finish
