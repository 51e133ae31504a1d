# Plumbing check that works on any kernel: inet-family output queueing
# between two namespaces (the long-standing upstream path).
. ./lib.sh
setup_veth
A nft -f - <<NFT || exit 2
table inet t {
	chain out {
		type filter hook output priority 0;
		udp dport 9000 queue num 0
	}
}
NFT
rm -f /tmp/recv.out
B nfqt recv 9000 30000 5 > /tmp/recv.out &
rpid=$!
rm -f /tmp/l.out
A nfqt listen -q 0 -n 5 -t 20000 -v accept -F 2 -k 3 > /tmp/l.out &
lpid=$!
wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
A nfqt send 10.0.0.2 9000 5 0
wait $lpid; check "listener status" $? 0
cat /tmp/l.out
wait $rpid
check "datagrams received" "$(sed -n 's/^received //p' /tmp/recv.out)" 5
teardown
finish
