# Item 5 of issue 10: queue from a "table inet ... hook ingress" chain.
# Such a chain runs from the device's netdev ingress hook, so its packets
# are queued, reported and resumed as netdev ingress packets: family 5
# (NFPROTO_NETDEV), hook 0, with the L2 header, payload at the IPv4
# header. Accept, drop, mark (seen by a later netdev chain).
. ./lib.sh
setup_veth
B nft -f - <<NFT || { fail "nft refuses queue in an inet ingress chain"; finish; }
table inet i {
	chain q {
		type filter hook ingress device "veth1" priority 0;
		udp dport 9000 queue num 0
	}
}
table netdev t {
	chain after {
		type filter hook ingress device "veth1" priority 10;
		udp dport 9000 meta mark 0x2a counter
		udp dport 9000 counter
	}
}
NFT
udp_case "inet ingress accept" 10 b -q 0 -n 10 -v accept -F 5 -k 0 -P 0800 -L -I
udp_case "inet ingress drop" 0 b -q 0 -n 10 -v drop -F 5 -k 0
udp_case "inet ingress batch with mark" 10 b -q 0 -n 10 -b 5 -v accept -m 0x2a -F 5 -k 0
check "inet ingress: counters after (marked total)" "$(counters b netdev t after | tr '\n' ' ')" "10 20 "
check "queue empty afterwards" "$(queue_total b 0)" ""
teardown
finish
