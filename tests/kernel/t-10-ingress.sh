# netdev ingress: queue UDP at veth1's ingress hook in namespace b;
# accept, drop, mark, batch verdict; exact outcome at the receiver. A
# second ingress chain at a later priority counts what comes back from
# userspace and whether it carries the mark.
. ./lib.sh
setup_veth
B nft -f - <<NFT || { fail "nft refuses queue in a netdev ingress chain"; finish; }
table netdev t {
	chain q {
		type filter hook ingress device "veth1" priority 0;
		udp dport 9000 queue num 0
	}
	chain after {
		type filter hook ingress device "veth1" priority 10;
		udp dport 9000 meta mark 0x2a counter
		udp dport 9000 counter
	}
}
NFT
# family 5 (netdev), hook 0 (ingress), L2 header, IPv4 at payload start
verdict_cases b -F 5 -k 0 -P 0800 -L -I
teardown
finish
