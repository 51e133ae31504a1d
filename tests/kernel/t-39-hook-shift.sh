# Review item 8: a chain added at a lower priority while a packet waits
# for its verdict. nf_reinject() resumes by the hook's index in the
# hook entries, which the new chain has shifted by one: the queueing
# chain runs again, and the packet is queued a second time (then goes
# on). The inet families do the same (here: ip prerouting), so the
# netdev family behaves as the others; the uapi text does not promise
# otherwise. This test pins what happens: seen twice, the new chain
# never sees the packet, the chain after the queue once, delivered once.
# The listener holds the first packet until the chain is in (SIGUSR1).
. ./lib.sh
setup_veth
# shift_case DESC FAMILY HOOKSPEC PORT QUEUE LISTENER_ARGS...
shift_case() {
	local desc=$1 fam=$2 hook=$3 port=$4 q=$5 rpid lpid lrc
	shift 5
	B nft -f - <<NFT || { fail "$desc: nft"; return; }
table $fam s {
	chain q {
		type filter hook $hook priority 0;
		udp dport $port queue num $q
	}
	chain after {
		type filter hook $hook priority 10;
		udp dport $port counter
	}
}
NFT
	pair_start b "$port" 1 b nfqt listen -q "$q" -n 2 -t 60000 -d 60000 "$@"
	A nfqt send 10.0.0.2 "$port" 1 0
	wait_line /tmp/l.out "holding id"
	B nft add chain $fam s early "{ type filter hook $hook priority -10; }"
	B nft add rule $fam s early udp dport "$port" counter
	B nft list hooks 2>&1 | sed 's/^/    hooks: /'
	# the ruleset has changed: now the verdict
	kill -USR1 $lpid
	pair_end "$desc (2 packets queued, 1 sent)" 1
	check "$desc: queued" "$(field /tmp/l.out seen)" 2
	check "$desc: counted by the new chain" "$(counters b $fam s early)" 0
	check "$desc: counted after the queue" "$(counters b $fam s after)" 1
	B nft delete table $fam s
}
shift_case "netdev ingress" netdev 'ingress device "veth1"' 9000 0 -F 5 -k 0
shift_case "ip prerouting" ip prerouting 9001 1 -F 2 -k 0
teardown
finish
