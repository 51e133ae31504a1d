# Review item 1: AF_PACKET sends with PACKET_QDISC_BYPASS through an
# egress queue rule. packet_xmit() runs the egress hook itself
# (nf_hook_direct_egress()) and then dev_direct_xmit(): a queued frame
# must (a) count as sent for the application (not -ENOBUFS, which makes
# it send twice), and (b) resume on the direct path, not through
# dev_queue_xmit() and the qdisc and tc egress the socket bypasses. tc
# egress on veth0 counts what goes through dev_queue_xmit(): nothing of
# the packet socket's frames, queued or not.
. ./lib.sh
setup_veth
A tc qdisc add dev veth0 clsact
A tc filter add dev veth0 egress protocol ip prio 1 matchall action pass
tc_egress() {
	A tc -s filter show dev veth0 egress |
		sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -1
}
mac=$(B cat /sys/class/net/veth1/address)
psend_case() {
	local desc=$1 want=$2 rpid lpid lrc t0 out
	shift 2
	t0=$(tc_egress)
	pair_start b 9000 "$want" a nfqt listen -t 120000 "$@"
	out=$(A nfqt psend veth0 "$mac" 10.0.0.1 10.0.0.2 9000 10)
	pair_end "$desc" "$want"
	check "$desc: the sender's sends" "$out" "psend ok=10 err=0"
	check "$desc: frames through tc egress" "$(($(tc_egress) - t0))" 0
}
# control: with no queue rule the bypass skips tc egress
out=$(A nfqt psend veth0 "$mac" 10.0.0.1 10.0.0.2 9000 3)
check "no queue rule: sends" "$out" "psend ok=3 err=0"
check "no queue rule: frames through tc egress" "$(tc_egress)" 0
queue_rule a egress veth0 "udp dport 9000" 0
psend_case "queued, accepted" 10 -q 0 -n 10 -F 5 -k 1 -P 0800 -L -E
psend_case "queued, dropped" 0 -q 0 -n 10 -v drop -F 5 -k 1
teardown
finish
