# Review item 4: a payload rewrite that shortens an ARP frame at netdev
# egress. arp_create() sets no transport header, and the verdict's
# minimum length read skb_transport_offset() unguarded: an offset from
# the unset header (~0) refused every shortened payload, so the kernel
# dropped the frame (and CONFIG_DEBUG_NET warns). The rule is the link
# layer header and one byte of network header: a 30-byte payload (14 of
# Ethernet, 16 of ARP) must leave veth0 and reach b's ingress hook (where
# the length no longer counts the Ethernet header: 16).
. ./lib.sh
setup_veth
queue_rule a egress veth0 "ether type arp" 1
B nft -f - <<NFT || { fail "nft: counter chain in b"; finish; }
table netdev t {
	chain seen {
		type filter hook ingress device "veth1" priority 0;
		ether type arp meta length 16 counter
		ether type arp counter
	}
}
NFT
A ip neigh flush dev veth0
B ip neigh flush dev veth1
rm -f /tmp/l.out
"$IP" netns exec a nfqt listen -q 1 -n 0 -t 8000 -F 5 -k 1 -P 0806 -L -E -T 30 > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening
# the requests arrive cut short: b cannot answer, the ping fails
A ping -c 1 -W 3 10.0.0.2 > /dev/null 2>&1
arp_trim_end $lpid "at egress" b 30 veth0
check "no warning in the kernel log" \
	"$(dmesg | grep -c 'WARNING:.*nfnetlink_queue')" 0
teardown
finish
