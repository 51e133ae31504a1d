# netdev egress: queue UDP at veth0's egress hook in namespace a; accept,
# drop, mark, batch verdict; exact outcome at the receiver in b. A second
# egress chain at a later priority counts what comes back and its mark.
. ./lib.sh
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
# family 5 (netdev), hook 1 (egress), payload starts with the Ethernet
# header, equal to NFQA_L2HDR
verdict_cases a -F 5 -k 1 -P 0800 -L -E
teardown
finish
