# v3 patch 6: a packet that reaches a netdev hook while someone else holds
# a reference on it (skb_shared()) is queued as a private clone. pktgen in
# queue_xmit mode sends through dev_queue_xmit() and keeps its own
# reference on every skb, so each one reaches veth0's egress hook shared:
# 1000 of them are queued, accepted and must all reach b, with no kernel
# report (the run fails on any KASAN, WARNING or refcount message).
. ./lib.sh
setup_veth
N=1000
mac1=$(B cat /sys/class/net/veth1/address)
queue_rule a egress veth0 "udp dport 9" 0
B nft -f - <<NFT || { fail "nft refuses the counting rule"; finish; }
table netdev c {
	chain in {
		type filter hook ingress device "veth1" priority 0;
		udp dport 9 counter
	}
}
NFT
pg() { A sh -c "echo '$2' > /proc/net/pktgen/$1" || fail "pktgen $1: $2"; }
pg kpktgend_0 "rem_device_all"
pg kpktgend_0 "add_device veth0"
pg veth0 "xmit_mode queue_xmit"
pg veth0 "count $N"
pg veth0 "pkt_size 64"
pg veth0 "delay 0"
pg veth0 "dst 10.0.0.2"
pg veth0 "dst_mac $mac1"
pg veth0 "udp_dst_min 9"
pg veth0 "udp_dst_max 9"
rm -f /tmp/l.out
"$IP" netns exec a nfqt listen -q 0 -n $N -t 60000 -v accept -F 5 -k 1 > /tmp/l.out 2>&1 &
lpid=$!
wait_line /tmp/l.out listening || { kill $lpid; finish; }
A timeout 300 sh -c 'echo start > /proc/net/pktgen/pgctrl'
check "pktgen ran" "$?" 0
wait $lpid
check "listener status (every packet queued and accepted)" "$?" 0
sed 's/^/    /' /tmp/l.out
A grep -E 'pkts-sofar|Result' /proc/net/pktgen/veth0 | sed 's/^/    pktgen: /'
check "datagrams that reached b" "$(counters b netdev c in)" $N
teardown
finish
