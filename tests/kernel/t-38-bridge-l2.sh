# Bridge family: a verdict's new L2 header (NFQA_L2HDR) while a packet
# tap on the bridge port holds a clone of every frame (the nf fix, 1/3:
# the kernel must unclone the head before it writes the header). b: br0
# with port veth1 (10.0.0.2 on br0); a bridge family chain at prerouting
# queues UDP to port 9000; the verdict rewrites the source MAC address.
# The datagrams arrive, and the tap's copies keep the original source:
# none shows the new address.
. ./lib.sh
setup_veth
setup_bridge
B nft -f - <<NFT || { fail "nft: bridge family queue rule"; finish; }
table bridge t {
	chain q {
		type filter hook prerouting priority 0;
		udp dport 9000 queue num 0
	}
}
NFT
new=02:00:00:00:00:77
rm -f /tmp/tap.out
"$IP" netns exec b nfqt tap veth1 $new > /tmp/tap.out 2>&1 &
tpid=$!
wait_line /tmp/tap.out tapping || { kill $tpid; finish; }
# family 7 (bridge), hook 0 (prerouting), NFQA_L2HDR with the new source
udp_case "bridge: L2 header with a new source, tap holding clones" 10 b \
	-q 0 -n 10 -F 7 -k 0 -L -S $new
kill $tpid
wait $tpid
sed 's/^/    /' /tmp/tap.out
held=$(sed -n 's/^nfqt: tap frames=\([0-9]*\).*/\1/p' /tmp/tap.out)
[ "${held:-0}" -ge 10 ] && log "ok: the tap held $held frames" ||
	fail "the tap held ${held:-no} frames, want at least 10"
check "tap copies showing the new source address" \
	"$(sed -n 's/.*with_src=//p' /tmp/tap.out)" 0
# the rewrite applied: br0 learned the new source (struct __fdb_entry:
# mac[6], port_no, is_local, ...; 16 bytes each)
check "bridge learned the new source address" \
	"$(B od -An -v -tx1 -w16 /sys/class/net/br0/brforward |
		awk '{ print $1 ":" $2 ":" $3 ":" $4 ":" $5 ":" $6 }' |
		grep -c -x -i "$new")" 1
teardown
finish
