# Issue 43 item 2 (nf 6/6): a payload rewrite that shortens an ARP frame
# in the bridge family. arp_create() sets no transport header, and
# nfqnl_mangle()'s minimum length was skb_transport_offset() unguarded
# for every family but netdev: an offset from the unset header (~0)
# refused every shorter payload, so the kernel dropped the frame (and
# CONFIG_DEBUG_NET warns in skb_transport_header()). Bridge br0 in b
# (port veth1) sends its ARP requests for 10.0.0.1 through the bridge
# family's output hook (NF_BR_LOCAL_OUT), where they are queued; the
# verdict cuts the payload, which in the bridge family starts at the ARP
# header, to 16 bytes: they must leave veth1 and reach a's ingress hook
# at 16 bytes, with no warning.
. ./lib.sh
setup_veth
setup_bridge
B nft -f - <<NFT || { fail "nft: queue rule in b's bridge output chain"; finish; }
table bridge t {
	chain out {
		type filter hook output priority 0;
		ether type arp queue num 1
	}
}
NFT
A nft -f - <<NFT || { fail "nft: counter chain in a"; finish; }
table netdev t {
	chain seen {
		type filter hook ingress device "veth0" priority 0;
		ether type arp meta length 16 counter
		ether type arp counter
	}
}
NFT
A ip neigh flush dev veth0
B ip neigh flush dev br0
warnings=$(dmesg | grep -c 'WARNING:')
rm -f /tmp/l.out
"$IP" netns exec b nfqt listen -q 1 -n 0 -t 8000 -F 7 -k 3 -P 0806 -T 16 > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening || { kill $lpid; finish; }
# the requests arrive cut short: a cannot answer, the ping fails
B ping -c 1 -W 3 10.0.0.1 > /dev/null 2>&1
arp_trim_end $lpid "at the bridge's output" a 16 "the bridge"
check "no warning in the kernel log" \
	"$(dmesg | grep -c 'WARNING:')" "$warnings"
teardown
finish
