# SPDX-License-Identifier: LGPL-2.1-or-later
# Shell helpers of test-snort.sh and bench-snort.sh (sourced, bash): Snort
# inline in network namespaces on daq_nfqb or on the stock nfq module.
#
# The caller sets: snort (bin/snort), conf (snort.lua), rules (a rules
# file), our_dir (where daq_nfqb.so is), tag (a prefix for namespace and
# interface names, unique to the run), and may set snort_prefix_cmd (a
# command Snort and nsbg's commands run under, e.g. nice -n -15);
# snort_lib_init sets the rest and
# removes, at exit, every namespace and process made through these
# functions.
. "$(dirname "${BASH_SOURCE[0]}")/../proc.sh"	# stop_pid

snort_lib_init() {
	pids=()
	# The stock nfq module: linked into snort (libdaq's static modules),
	# or a daq_nfq.so beside libdaq. With it Snort checks the TCP and
	# UDP checksums itself, and on lo and veth (CHECKSUM_PARTIAL: not
	# computed yet) finds every one bad and inspects nothing (codec
	# bad_udp4_checksum, discards); -k none makes it inspect, so that the
	# two modules are compared doing the same work. daq_nfqb runs with
	# Snort's defaults: it tells Snort which checksums the kernel vouches
	# for (checksum_bypassed).
	stock_args=(--daq nfq -k none)
	"$snort" --daq-list 2>/dev/null | grep -q '^nfq' ||
		stock_args=(--daq-dir "$(dirname "$(dirname "$snort")")/lib/daq"
			    --daq nfq -k none)
	our_args=(--daq-dir "$our_dir" --daq nfqb)
	modprobe -q nfnetlink_queue 2>/dev/null
	modprobe -q xt_NFQUEUE 2>/dev/null
}

# Every process started with nsbg or snort_start, every namespace named
# $tag-* (new_ns runs in command substitutions: a list kept there would
# be lost).
snort_lib_cleanup() {
	local p n
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for n in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		case $n in "$tag"-*) ip netns del "$n" 2>/dev/null ;; esac
	done
}

nsx() {
	local n=$1
	shift
	ip netns exec "$n" "$@"
}

# nsbg NS CMD...: CMD in NS in the background, its pid in bg_pid (the
# command's own: ip netns exec execs it), killed at exit if still there.
nsbg() {
	local n=$1
	shift
	${snort_prefix_cmd:-} ip netns exec "$n" "$@" &
	bg_pid=$!
	pids+=("$bg_pid")
}

# new_ns NAME: a namespace $tag-NAME with lo up; prints its name.
new_ns() {
	local n=$tag-$1
	ip netns del "$n" 2>/dev/null
	ip netns add "$n" || return 1
	nsx "$n" ip link set lo up
	echo "$n"
}

# write_rules FILE [AGAIN]: the rules of the tests: drop UDP datagrams to
# 9999 that carry "EVIL", block TCP connections to 9001 and 5201 (iperf3)
# where it shows (Snort 3's block: the packet and the rest of the flow;
# drop would let TCP's retransmission through); with AGAIN other sids and
# messages (a reload's new rules).
write_rules() {
	local again=${2:+ again} s=100000${2:+1}
	cat >"$1" <<EOF
drop udp any any -> any 9999 (msg:"EVIL udp$again"; content:"EVIL"; sid:${s}1;)
block tcp any any -> any [9001,5201] (msg:"EVIL tcp$again"; content:"EVIL"; sid:${s}2;)
EOF
}

# sstat SECTION NAME LOG: Snort's statistic NAME of module SECTION at exit
sstat() {
	awk -v sec="$1" -v name="$2" '
		/^-+$/ { in_sec = 0; next }
		$0 == sec { in_sec = 1; next }
		in_sec && $1 == name ":" { v = $2 }
		END { print (v == "" ? 0 : v) }' "$3"
}

# udp_stream NS COUNT PPS LOG [EVIL_EVERY]: COUNT datagrams to UDP 9999 on
# NS's lo at PPS in the background (snort-traffic udp-send); its pid in
# tpid (the caller's).
udp_stream() {
	nsbg "$1" "$traffic" udp-send 127.0.0.1 9999 "$2" "$3" ${5:+"$5"} \
		>"$4" 2>&1
	tpid=$bg_pid
}

# val KEY FILE: the value of "KEY N" written by snort-traffic
val() { sed -n "s/^$1 //p" "$2" | tail -n 1; }

# queue_bound NS Q: is queue Q bound in NS?
queue_bound() {
	nsx "$1" awk -v q="$2" '$1 == q { f = 1 } END { exit !f }' \
		/proc/net/netfilter/nfnetlink_queue 2>/dev/null
}

# queue_verdicts NS Q: how many packets of queue Q its listener gave a
# verdict since it bound it (the kernel's count: the ids given out, less
# those waiting and those dropped).
queue_verdicts() {
	nsx "$1" awk -v q="$2" '$1 == q { v = $8 - $3 - $6 - $7 }
		END { print v + 0 }' /proc/net/netfilter/nfnetlink_queue \
		2>/dev/null || echo 0
}

# wait_verdicts NS Q N: wait (10 s at most) until queue Q's listener gave
# N verdicts; 1 if it did not. A Snort just started on a loaded machine
# can take longer than any fixed pause to reach its first packet.
wait_verdicts() {
	local i
	for i in $(seq 1 200); do
		[ "$(queue_verdicts "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_bound NS PID TRIES QUEUES [PATTERN LOG]: wait (TRIES tries, 0.05 s
# apart) until LOG shows PATTERN (if given) and every queue of QUEUES (a
# list) is bound in NS; 1 if PID (a listener just started, a child of
# this shell) exited first (its status collected) or time ran out. For
# snort_start and suri_start (tests/suricata/lib.sh).
wait_bound() {
	local ns=$1 pid=$2 tries=$3 queues=$4 pattern=${5:-} log=${6:-} i q all
	for i in $(seq 1 "$tries"); do
		all=1
		if [ -n "$pattern" ] && ! grep -q "$pattern" "$log" 2>/dev/null; then
			all=0
		fi
		for q in $queues; do
			[ "$all" = 1 ] || break
			queue_bound "$ns" "$q" || all=0
		done
		[ "$all" = 1 ] && return 0
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return 1; }
		sleep 0.05
	done
	return 1
}

# snort_start NS MODULE INPUT LOG [args...]: Snort in NS, inline on INPUT
# ("Q" or "Q-R"), MODULE nfq or nfqb; returns once every queue of INPUT is
# bound (60 s at most: Snort loads its configuration first), 1 if Snort
# exited or never bound them. Sets snort_pid.
snort_start() {
	local ns=$1 module=$2 input=$3 log=$4 q
	shift 4
	local margs=("${our_args[@]}") inputs=(-i "$input")
	if [ "$module" = nfq ]; then
		margs=("${stock_args[@]}")
		# the stock module takes one queue per -i
		inputs=()
		for q in $(seq "${input%-*}" "${input#*-}"); do
			inputs+=(-i "$q")
		done
	fi
	${snort_prefix_cmd:-} nsenter --net="/run/netns/$ns" "$snort" -c "$conf" \
		-R "$rules" "${margs[@]}" -Q "${inputs[@]}" -s 65535 "$@" \
		>"$log" 2>&1 &
	snort_pid=$!
	pids+=("$snort_pid")
	wait_bound "$ns" "$snort_pid" 1200 "$(seq "${input%-*}" "${input#*-}")"
}

# snort_stop: SIGTERM, wait up to 30 s (then SIGKILL: status 124);
# returns Snort's exit status.
snort_stop() {
	stop_pid "$snort_pid" 30 snort
}

# router_setup NAME Q: client (10.1.0.2), router (Snort's, every forwarded
# packet to queue Q) and server (10.2.0.2) namespaces joined by veth pairs
# at MTU 1500; sets rc_ns, rr_ns, rs_ns.
router_setup() {
	rc_ns=$(new_ns "$1-c") && rr_ns=$(new_ns "$1-r") &&
		rs_ns=$(new_ns "$1-s") || return 1
	ip link add "$tag-c0" netns "$rc_ns" type veth peer name "$tag-r0" \
		netns "$rr_ns" &&
	ip link add "$tag-r1" netns "$rr_ns" type veth peer name "$tag-s0" \
		netns "$rs_ns" || return 1
	nsx "$rc_ns" ip addr add 10.1.0.2/24 dev "$tag-c0"
	nsx "$rc_ns" ip link set "$tag-c0" up
	nsx "$rc_ns" ip route add default via 10.1.0.1
	nsx "$rr_ns" ip addr add 10.1.0.1/24 dev "$tag-r0"
	nsx "$rr_ns" ip addr add 10.2.0.1/24 dev "$tag-r1"
	nsx "$rr_ns" ip link set "$tag-r0" up
	nsx "$rr_ns" ip link set "$tag-r1" up
	nsx "$rr_ns" sysctl -qw net.ipv4.ip_forward=1
	nsx "$rs_ns" ip addr add 10.2.0.2/24 dev "$tag-s0"
	nsx "$rs_ns" ip link set "$tag-s0" up
	nsx "$rs_ns" ip route add default via 10.2.0.1
	nsx "$rr_ns" iptables -A FORWARD -j NFQUEUE --queue-num "$2"
}

router_del() {
	ip netns del "$rc_ns" 2>/dev/null
	ip netns del "$rr_ns" 2>/dev/null
	ip netns del "$rs_ns" 2>/dev/null
}

# --- Checks (test-snort.sh, test-suricata.sh) -----------------------------
# A scenario is begin (counted) or compare (the stock one's run, printed
# beside), its expectations, then end. The caller sets checks=0,
# failures=0, stock_label and only_list, and $traffic (snort-traffic).

fail() {
	echo "    FAIL: $1"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		sed 's/^/    | /' "$2" | tail -n "${3:-20}"
	fi
	case_ok=0
}

# expect WHAT ACTUAL OP EXPECTED
expect() {
	if [ "$2" "$3" "$4" ] 2>/dev/null; then
		return 0
	fi
	fail "$1 = '$2', expected $3 $4"
	return 1
}

begin() {
	checks=$((checks + 1))
	case_ok=1
	counting=1
	echo "--- $*"
}

# the stock consumer's run of a scenario that asserts on ours only: printed
# beside it, not a check of its own ($stock_label: "the stock module")
compare() {
	case_ok=1
	counting=0
	echo "--- $* ($stock_label, for comparison)"
}

end() {
	if [ "$counting" = 0 ]; then
		[ "$case_ok" = 1 ] || echo "    (the comparison run failed)"
	elif [ "$case_ok" = 1 ]; then
		echo "    PASS"
	else
		failures=$((failures + 1))
	fi
}

# begin, or compare for the stock one (nfq first: libdaq's module,
# Suricata's backend)
begin_for() {
	local module=$1
	shift
	if [ "$module" = nfq ]; then
		compare "$@"
	else
		begin "$@"
	fi
}

# want NAME: NAME is in $only_list, or the list is empty
want() {
	[ -z "${only_list:-}" ] && return 0
	case " $only_list " in *" $1 "*) return 0 ;; esac
	return 1
}

# lo_setup NAME Q [bypass]: a namespace whose lo traffic to UDP 9999 and TCP
# 9001 (both directions) goes to queue Q.
lo_setup() {
	local ns q=$2 by=
	[ "${3:-}" = bypass ] && by=--queue-bypass
	ns=$(new_ns "$1") || return 1
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9999 -j NFQUEUE \
		--queue-num "$q" $by &&
	nsx "$ns" iptables -A OUTPUT -p tcp --dport 9001 -j NFQUEUE \
		--queue-num "$q" $by &&
	nsx "$ns" iptables -A OUTPUT -p tcp --sport 9001 -j NFQUEUE \
		--queue-num "$q" $by || return 1
	echo "$ns"
}

# run_rx NS LOG ARGS...: a receiver in the background; waits for "ready".
run_rx() {
	local ns=$1 log=$2 i
	shift 2
	nsbg "$ns" "$traffic" "$@" >"$log" 2>&1
	rx_pid=$bg_pid
	for i in $(seq 1 100); do
		grep -q '^ready' "$log" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# tcp_nets WHERE NAME Q: the namespaces of a transfer through the queue Q
# consumer: WHERE lo, one namespace (lo_setup); else a router between a
# client and a server (router_setup). Sets ns_tx (the sender's), ns_rx
# (the receiver's), ns_mid (the consumer's) and srv (the receiver's
# address); 1 if the set-up failed.
tcp_nets() {
	if [ "$1" = lo ]; then
		ns_tx=$(lo_setup "tcp-$2" "$3") || return 1
		ns_rx=$ns_tx
		ns_mid=$ns_tx
		srv=127.0.0.1
	else
		router_setup "rt-$2" "$3" || return 1
		ns_tx=$rc_ns
		ns_rx=$rs_ns
		ns_mid=$rr_ns
		srv=10.2.0.2
	fi
}

# tcp_transfer NS_RX NS_TX SRV EVIL_AT LOG: one transfer of $TCP_BYTES from
# NS_TX to a receiver on SRV:9001 in NS_RX (EVIL at EVIL_AT, or -1: none);
# returns when the receiver ended: at the end of the stream, or 2 s after
# a drop or block stalled it (the sender, blocked, is ended with it). The
# receiver's and the sender's output in LOG.rx and LOG.tx.
tcp_transfer() {
	local tx_pid
	run_rx "$1" "$5.rx" tcp-recv 9001 2000 60000
	nsbg "$2" "$traffic" tcp-send "$3" 9001 "$TCP_BYTES" "$4" 60000 \
		>"$5.tx" 2>&1
	tx_pid=$bg_pid
	wait "$rx_pid"
	kill "$tx_pid" 2>/dev/null
	wait "$tx_pid" 2>/dev/null
}

# queue_ids NS Q LAST: the last packet id of each queue Q..LAST, one line
queue_ids() {
	nsx "$1" awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b { print $1, $8 }' \
		/proc/net/netfilter/nfnetlink_queue | sort
}

# flow_net: the first three bytes of the flow set's addresses, 127.0.K
# (K: NFQBT_FLOW_SET, 0 to 255, default 0; tests/integration/harness.h):
# the candidates a test probes are 127.0.K.1, 127.0.K.2, ..., so another
# set tries other addresses on the same boot (tests/flow-sets.sh)
flow_net() {
	local k=${NFQBT_FLOW_SET:-0}
	case $k in
	*[!0-9]*|'') k=256 ;;
	esac
	if [ "$k" -gt 255 ]; then
		echo "NFQBT_FLOW_SET=$NFQBT_FLOW_SET: not a number from 0 to 255" >&2
		return 1
	fi
	echo "127.0.$((10#$k))"
}

# probe_queue NS Q LAST ADDR PORT: the queue that one datagram to ADDR:PORT
# reaches (--queue-balance hashes the addresses with a seed drawn once per
# boot, so which address reaches which queue is only known by trying);
# prints nothing if no id moved within 2 s
probe_queue() {
	local ns=$1 q=$2 last=$3 before after i
	before=$(queue_ids "$ns" "$q" "$last")
	nsx "$ns" "$traffic" udp-send "$4" "$5" 1 0 >/dev/null 2>&1
	for i in $(seq 1 100); do
		after=$(queue_ids "$ns" "$q" "$last")
		[ "$after" != "$before" ] && break
		sleep 0.02
	done
	join <(echo "$before") <(echo "$after") | awk '$3 != $2 { print $1; exit }'
}
