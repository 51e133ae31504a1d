# Conntrack verdicts through the library: nfqb-netdev takes a's outgoing
# UDP and TCP at the inet output hook (with NFQB_F_CONNTRACK: every packet
# carries its conntrack state) and accepts the first packet of a flow
# with a verdict that also sets the conntrack entry's mark
# (nfqb_verdict_ct_mark(), nfqb_verdict_ex() with NFQB_V_CT_MARK) or a
# label (NFQB_V_CT_LABELS). A rule ahead of the queue accepts the marked
# (labelled) flows: none of their later packets may reach the queue. With
# a plain accept every packet of the flow is queued. Then eight flows at
# once, half of them given conntrack verdicts and half plain ones, which
# the library's coalescer sends as batch verdicts around the conntrack
# ones: every flow must end with its own mark and every datagram arrive.
# The kernel applies NFQA_CT in a verdict only with
# CONFIG_NETFILTER_NETLINK_GLUE_CT (and the mark with
# CONFIG_NF_CONNTRACK_MARK, the labels with CONFIG_NF_CONNTRACK_LABELS).
#
# UDP goes out through nfqt uping to nfqt uecho in b: each datagram of a
# flow leaves only once the one before it came back, so the flow's
# conntrack entry (and its mark) exists before the next one is sent.
. ./lib.sh
need_lib_tool
setup_veth

# ct_table: a's chain out at the output hook: rules 1 and 2 accept the
# flows with conntrack mark 0x2a or label 5, rules 3-5 queue UDP to port
# 9000, TCP SYNs to port 9001 and the rest of that TCP. Chain labels is
# never used: its rule gives new conntrack entries room for labels.
ct_table() {
	A nft delete table inet t 2>/dev/null
	A nft -f - <<NFT || { fail "nft refuses the conntrack ruleset"; finish; }
table inet t {
	chain labels {
		meta mark 0x7fffffff ct label set 127
	}
	chain out {
		type filter hook output priority 0;
		ct mark 0x2a counter accept
		ct label 5 counter accept
		udp dport 9000 counter queue num 0
		tcp dport 9001 tcp flags & (syn | ack) == syn counter queue num 0
		tcp dport 9001 counter queue num 0
	}
}
NFT
}

# listen_start LISTENER_ARGS...: nfqb-netdev on queue 0 at a's output
# ($lpid, output in /tmp/l.out), every packet's conntrack state with it;
# returns once it is bound. It ends on SIGTERM (listen_end).
listen_start() {
	rm -f /tmp/l.out
	"$IP" netns exec a nfqb-netdev -k output -d veth0 -q 0 -t 120000 -c \
		"$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening
}

# listen_end DESC: stop the listener (every packet it was to see has
# had its verdict: the traffic is over), show its output, check its status
listen_end() {
	kill "$lpid" 2>/dev/null
	wait "$lpid"
	check "$1: listener status" "$?" 0
	sed 's/^/    /' /tmp/l.out
}

# udp_ct_case DESC SEEN CT_NEW COUNTERS LISTENER_ARGS...: one UDP flow of
# 10 datagrams from 10.0.0.1 through the listener; checks that all came
# back, the packets the listener saw (SEEN, CT_NEW of them in conntrack
# state new) and chain out's counters
udp_ct_case() {
	local desc=$1 seen=$2 ctnew=$3 counts=$4 epid
	shift 4
	ct_table
	rm -f /tmp/echo.out
	"$IP" netns exec b nfqt uecho 9000 120000 > /tmp/echo.out &
	epid=$!
	listen_start "$@"
	wait_line /tmp/echo.out receiving
	A nfqt uping 10.0.0.2 9000 10 10.0.0.1 > /tmp/ping.out
	check "$desc: every datagram delivered and echoed" "$?" 0
	sed 's/^/    /' /tmp/ping.out
	listen_end "$desc"
	kill "$epid" 2>/dev/null
	wait "$epid"
	check "$desc: datagrams at the receiver" \
		"$(sed -n 's/^echoed //p' /tmp/echo.out)" 10
	check "$desc: packets queued" "$(field /tmp/l.out seen)" "$seen"
	check "$desc: of them in conntrack state new" \
		"$(field /tmp/l.out ct_new)" "$ctnew"
	check "$desc: counters (ct mark, ct label, udp queue, tcp syn, tcp)" \
		"$(counters a inet t out | tr '\n' ' ')" "$counts"
}

# tcp_ct_case DESC MARKED LISTENER_ARGS...: one TCP connection from a to
# b carrying 1 MB through the listener; MARKED 1: the SYN must be the
# only packet queued and the rest pass by the conntrack mark, 0: the
# packets after the SYN are queued too
tcp_ct_case() {
	local desc=$1 marked=$2 rpid c syn rest
	shift 2
	ct_table
	rm -f /tmp/trecv.out
	"$IP" netns exec b nfqt trecv 9001 120000 > /tmp/trecv.out &
	rpid=$!
	listen_start "$@"
	wait_line /tmp/trecv.out receiving
	A nfqt tsend 10.0.0.2 9001 1000000
	check "$desc: sender status" "$?" 0
	wait "$rpid"
	check "$desc: bytes at the receiver" \
		"$(sed -n 's/^received //p' /tmp/trecv.out)" 1000000
	listen_end "$desc"
	c=$(counters a inet t out | tr '\n' ' ')
	set -- $c
	syn=$4 rest=$5
	log "$desc: counters (ct mark, ct label, udp queue, tcp syn, tcp): $c"
	check "$desc: packets queued (SYNs and the rest)" \
		"$(field /tmp/l.out seen)" "$((syn + rest))"
	# (a SYN is queued again only if the guest took a second over the
	# first one's verdict and TCP sent it again: no later packet)
	[ "${syn:-0}" -ge 1 ] && log "ok: $desc: $syn SYN(s) queued" ||
		fail "$desc: no SYN queued"
	check "$desc: SYNs in conntrack state new" \
		"$(field /tmp/l.out ct_new)" "$syn"
	if [ "$marked" = 1 ]; then
		check "$desc: later packets queued" "$rest" 0
		[ "${1:-0}" -ge 3 ] &&
			log "ok: $desc: $1 later packets accepted by ct mark" ||
			fail "$desc: only ${1:-0} packets accepted by ct mark"
	else
		check "$desc: packets accepted by ct mark" "$1" 0
		[ "${rest:-0}" -ge 3 ] &&
			log "ok: $desc: $rest later packets queued" ||
			fail "$desc: only ${rest:-0} later packets queued"
	fi
}

# the plain verdicts first: a flow of a later case that happened to get
# the same addresses and ports as one of them would find no mark
udp_ct_case "UDP plain accept" 10 1 "0 0 10 0 0 "
udp_ct_case "UDP nfqb_verdict_ct_mark" 1 1 "9 0 1 0 0 " -C 0x2a
udp_ct_case "UDP conntrack label 5" 1 1 "0 9 1 0 0 " -L 5
tcp_ct_case "TCP plain accept" 0
tcp_ct_case "TCP nfqb_verdict_ex ct mark and mark" 1 -e -C 0x2a -m 7

# Mixed: eight flows, from 10.0.0.11-18, ten rounds of one datagram each
# (every round all eight at once; the listener waits 200 ms before it
# takes them, so they come in one read). A source ending in an odd byte
# gets nfqb_verdict_ct_mark() with that byte, the others nfqb_verdict()
# (the coalescer turns runs of those into batch verdicts). Chain out
# accepts each source's flow by its own mark: a conntrack verdict that a
# batch verdict overtook, or that went to another packet, leaves its
# flow's later datagrams queued.
A nft delete table inet t
rules=
for i in $(seq 11 18); do
	A ip addr add 10.0.0.$i/24 dev veth0
	rules="$rules
		ip saddr 10.0.0.$i ct mark $i counter accept"
done
for i in $(seq 11 18); do
	rules="$rules
		ip saddr 10.0.0.$i udp dport 9000 counter queue num 0"
done
A nft -f - <<NFT || { fail "nft refuses the mixed ruleset"; finish; }
table inet t {
	chain out {
		type filter hook output priority 0;$rules
	}
}
NFT
rm -f /tmp/echo.out
"$IP" netns exec b nfqt uecho 9000 120000 > /tmp/echo.out &
epid=$!
listen_start -X -W 200
wait_line /tmp/echo.out receiving
A nfqt uping 10.0.0.2 9000 10 10.0.0.11-18 > /tmp/ping.out
check "mixed: every datagram delivered and echoed" "$?" 0
sed 's/^/    /' /tmp/ping.out
listen_end "mixed"
kill "$epid" 2>/dev/null
wait "$epid"
check "mixed: datagrams at the receiver" "$(sed -n 's/^echoed //p' /tmp/echo.out)" 80
# odd sources: 1 queued (its conntrack verdict), 9 accepted by their
# mark; even sources: all 10 queued
check "mixed: counters (accepted by mark 11-18, queued 11-18)" \
	"$(counters a inet t out | tr '\n' ' ')" \
	"9 0 9 0 9 0 9 0 1 10 1 10 1 10 1 10 "
check "mixed: packets queued" "$(field /tmp/l.out seen)" 44
check "mixed: conntrack verdicts" "$(field /tmp/l.out ct_verdicts)" 4
check "mixed: of them in conntrack state new" "$(field /tmp/l.out ct_new)" 8
n=$(field /tmp/l.out batch_msgs)
[ "${n:-0}" -ge 1 ] && log "ok: mixed: $n batch verdict messages" ||
	fail "mixed: the coalescer sent no batch verdict"
teardown
finish
