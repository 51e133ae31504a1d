# libnfq-batch at netdev ingress: t-10's verdict cases through the
# library (nfqb-netdev: nfqb_recv, nfqb_verdict/_mark/_ex,
# nfqb_verdict_batch) on veth1 in namespace b, each packet checked through
# the packet view (family netdev, hook point ingress, hw_protocol 0x0800,
# 14-byte L2 header, nfqb_pkt_network_offset() 0 with the IPv4 header
# there, in device veth1, ids strictly increasing); then VLAN 10 (tag out
# of band, nfqb_pkt_vlan()) and ARP (hw_protocol 0x0806, ARP header at
# the network offset).
. ./lib.sh
# t-10's cases (lib.sh: lib_hook_cases), then VLAN 10: veth hands the tag
# over in the payload, the core moves it out of band before the hook;
# accepted packets reach veth1.10
lib_hook_cases b ingress veth1 "lib VLAN at ingress" -P 0800 -l 14 -d veth1

# ARP at ingress: queued with hw_protocol 0x0806; accepted, the
# neighbour resolves
B nft add rule netdev t q ether type arp queue num 1
A ip neigh flush dev veth0
B ip neigh flush dev veth1
rm -f /tmp/l.out
B nfqb-netdev -q 1 -n 0 -t 8000 -v accept -k ingress -P 0806 -l 14 -d veth1 -s > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening
if A ping -c 1 -W 6 10.0.0.2 > /tmp/ping.out 2>&1; then p=ok; else p=failed; fi
wait $lpid
lrc=$?
sed 's/^/    /' /tmp/l.out
check "lib ARP: listener status" "$lrc" 0
seen=$(field /tmp/l.out seen)
[ "${seen:-0}" -ge 1 ] && log "ok: lib ARP: $seen ARP packets queued" ||
	fail "lib ARP: no ARP packet queued"
check "lib ARP: ping" "$p" ok
teardown
finish
