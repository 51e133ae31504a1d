#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Snort 3 itself, inline on our daq_nfqb (--daq nfqb) and on libdaq's stock
# nfq module (--daq nfq), side by side, in private network namespaces with
# Snort's default snort.lua and real rules; every check is made at a
# receiver (tests/snort/snort-traffic), never on exit codes alone.
#
#   enforce_udp   3000 datagrams, 300 of them with EVIL: exactly the 2700
#                 others arrive, each once (both modules)
#   tcp_lo        on lo (MTU 65536: 65535-byte packets, more than the
#                 kernel copies): a 16 MB transfer arrives whole and Snort
#                 reassembles it (stream_tcp rebuilt_bytes >= 99% of the
#                 payload); with EVIL at 8 MB the connection stops before
#                 it, nothing from EVIL on arrives (daq_nfqb; the stock
#                 module's results are printed beside); daq_nfqb's debug
#                 counters (the library's nfqb_stats) show the SYNs'
#                 MSS lowered (mss_clamped)
#   tcp_router    the same through a router namespace (veth, MTU 1500,
#                 Snort on FORWARD)
#   start_traffic 30 Snort starts while 20k datagrams/s arrive on a rule
#                 with --queue-bypass: every start binds and inspects;
#                 nothing is lost (daq_nfqb), or what the stock module
#                 loses is printed
#   restart       stop and start under traffic with and without bypass:
#                 what is lost, both modules
#   threads       -z 4 on a queue range with --queue-balance: every queue
#                 bound once, two flows probed onto each, traffic on all, every datagram arrives once
#   reload        SIGHUP under traffic: nothing lost or duplicated, EVIL
#                 still dropped after the reload
#   vtimeout      verdict_timeout=1, Snort stopped (SIGSTOP) for 30 ms
#                 and run 2 ms, over and over while the traffic lasts: verdicts time out,
#                 Snort runs on and stops cleanly (the pool stays whole),
#                 every datagram once
#   stop_race     Snort started and stopped at once, 10 times under
#                 traffic: each exits 0 within its time
#   one_queue     -i N -z 2: refused, and daq_nfqb says why
#
# Environment (set by `make check`, or by hand):
#   NFQB_SNORT_PREFIX     libdaq + Snort (tests/snort/build-snort.sh)
#   NFQB_DAQ_MODULE_DIR   the directory holding our daq_nfqb.so
#   NFQB_DAQ_LIBDIR       where the built libnfq-batch.so is
#   NFQB_SNORT_TRAFFIC    tests/snort/snort-traffic
#   NFQB_SNORT_REQUIRED=1 fail (not skip) when something is missing
#   NFQB_SNORT_ONLY       scenario names to run (default: all)
#   NFQB_SNORT_KEEP=1     keep the logs
# Prints a Check-style summary line (tests/run-all.sh counts each check).
# Every wait is bounded; namespaces and processes go away on any exit.
# (A Snort that pauses after its last finalize needs --pause-after-n,
# which only a REG_TEST build of Snort has: tests/daq/daq-contract shows
# that case, verdict_idle.)
set -u

. "$(dirname "$0")/../proc.sh"
skip() { test_skip test-snort "${NFQB_SNORT_REQUIRED:-0}" "$@"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
prefix=${NFQB_SNORT_PREFIX:-}
our_dir=${NFQB_DAQ_MODULE_DIR:-}
traffic=${NFQB_SNORT_TRAFFIC:-}
snort=$prefix/bin/snort
conf=$prefix/etc/snort/snort.lua
[ -x "$snort" ] && [ -f "$conf" ] || skip "no Snort in '$prefix' (NFQB_SNORT_PREFIX; tests/snort/build-snort.sh)"
[ -f "$our_dir/daq_nfqb.so" ] || skip "no daq_nfqb.so in '$our_dir'"
[ -x "$traffic" ] || skip "no snort-traffic at '$traffic'"
command -v ip >/dev/null && command -v iptables >/dev/null &&
	command -v nsenter >/dev/null || skip "needs ip, iptables and nsenter"

tag=nfqbs$$
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-snort.XXXXXX")
export LD_LIBRARY_PATH="${NFQB_DAQ_LIBDIR:-}:$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
checks=0
failures=0
. "$(dirname "$0")/lib.sh"
snort_lib_init
# NFQB_SNORT_KEEP=1 keeps the logs (Snort's output, the receivers')
trap 'snort_lib_cleanup; [ "${NFQB_SNORT_KEEP:-0}" = 1 ] && echo "test-snort: logs in $work" || rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

rules=$work/rules
write_rules "$rules"
rules2=$work/rules-reloaded
write_rules "$rules2" again

# --- Helpers ------------------------------------------------------------------
# (the checks, lo_setup, run_rx, queue_ids, probe_queue: tests/snort/lib.sh)
stock_label="the stock module"
only_list=${NFQB_SNORT_ONLY:-}

# --- Scenarios -------------------------------------------------------------

enforce_udp() {
	local module=$1 ns log=$work/udp-$1 q=$((4000 + $$ % 500))
	begin "enforce_udp ($module): 3000 datagrams, every 10th EVIL"
	ns=$(lo_setup "udp-$module" "$q") || { fail "namespace"; end; return; }
	if ! snort_start "$ns" "$module" "$q" "$log.snort"; then
		fail "snort did not bind queue $q" "$log.snort" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	snort_stop || fail "snort exited with $?" "$log.snort" 20
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 2700
	expect "EVIL datagrams arrived" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "snort daq analyzed" "$(sstat daq analyzed "$log.snort")" -ge 3000
	expect "snort block verdicts" "$(sstat daq block "$log.snort")" -eq 300
	echo "    received $(val distinct "$log.rx"), evil $(val evil "$log.rx");" \
	     "snort: analyzed $(sstat daq analyzed "$log.snort")," \
	     "block $(sstat daq block "$log.snort")"
	end
}

# tcp_run MODULE NAME EVIL_AT: one transfer of 16 MB (EVIL at EVIL_AT or
# -1) through Snort; where: lo or router. Leaves the logs in $log.*.
TCP_BYTES=16000000
tcp_run() {
	local module=$1 where=$2 evil=$3 q=$((4500 + $$ % 400)) srv ns_tx ns_rx ns_mid
	log=$work/tcp-$where-$module-$evil
	tcp_nets "$where" "$module-$evil" "$q" || return 1
	ns_snort=$ns_mid
	local dbg=()
	[ "$module" = nfqb ] && dbg=(--daq-var debug)	# its counters at stop
	if ! snort_start "$ns_snort" "$module" "$q" "$log.snort" "${dbg[@]}"; then
		echo "    snort did not bind queue $q"
		sed 's/^/    | /' "$log.snort" | tail -n 20
		return 1
	fi
	tcp_transfer "$ns_rx" "$ns_tx" "$srv" "$evil" "$log"
	snort_stop
	snort_rc=$?
	return 0
}

tcp_report() {
	echo "    $1: received $(val bytes "$log.rx") of $TCP_BYTES" \
	     "(bad $(val bad "$log.rx"), evil $(val evil "$log.rx")," \
	     "end $(val end "$log.rx")); snort: rx_bytes" \
	     "$(sstat daq rx_bytes "$log.snort"), rebuilt_bytes" \
	     "$(sstat stream_tcp rebuilt_bytes "$log.snort"), alerts" \
	     "$(sstat detection alerts "$log.snort"), discards" \
	     "$(sstat codec discards "$log.snort"), exit $snort_rc"
	grep '^daq_nfqb: .*not inspected' "$log.snort" | sed 's/^/      /'
}

# tcp_checked MODULE WHERE EVIL_AT TITLE: tcp_run and its report; for
# daq_nfqb, Snort's exit status checked. 1 (said) if the set-up failed.
tcp_checked() {
	if ! tcp_run "$1" "$2" "$3"; then
		fail "set-up"
		return 1
	fi
	tcp_report "$4"
	if [ "$1" = nfqb ] && [ "$snort_rc" -ne 0 ]; then
		fail "snort exited with $snort_rc" "$log.snort" 20
	fi
	return 0
}

# The library's receive system calls per packet in the last run (daq_nfqb's
# debug counters at stop): a receive loop that polls with a zero timeout
# while nfqb_recv() answers EAGAIN made 41 per packet in TCP (the issue's
# busy loop); waiting for the socket, one read brings one or more.
recv_calls_check() {
	local line pk rc
	line=$(grep -o 'packets [0-9]* recv_calls [0-9]*' "$log.snort" | tail -n 1)
	pk=$(echo "$line" | awk '{ print $2 }')
	rc=$(echo "$line" | awk '{ print $4 }')
	echo "    receive calls: ${rc:-?} for ${pk:-?} packets"
	expect "packets counted by daq_nfqb" "${pk:-0}" -gt 0
	expect "receive calls (at most 3 per packet)" "${rc:-999999999}" -le $((3 * ${pk:-0}))
}

# On lo (MTU 65536) the library's large-packet policy did the work: the
# SYNs' MSS lowered (65496 does not fit what the kernel copies), as the
# library counted it (daq_nfqb's debug counters at stop print nfqb_stats).
lo_large_check() {
	local n
	n=$(grep -o 'mss_clamped [0-9]*' "$log.snort" | tail -n 1 | awk '{ print $2 }')
	echo "    the library's counters: $(grep -o 'truncated [0-9]* large_resent [0-9]* large_dropped [0-9]* mss_clamped [0-9]* gso_off [0-9]*' "$log.snort" | tail -n 1)"
	expect "SYNs clamped (nfqb_stats mss_clamped)" "${n:-0}" -ge 1
}

tcp_case() {
	local where=$1 module rebuilt
	for module in nfq nfqb; do
		begin_for "$module" "tcp_$where ($module): 16 MB, whole, then with EVIL at 8 MB"
		tcp_checked "$module" "$where" -1 "clean" || { end; continue; }
		if [ "$module" = nfqb ]; then
			expect "bytes arrived" "$(val bytes "$log.rx")" -eq "$TCP_BYTES"
			expect "bytes not as sent" "$(val bad "$log.rx")" -eq 0
			rebuilt=$(sstat stream_tcp rebuilt_bytes "$log.snort")
			expect "stream_tcp rebuilt_bytes (99% of the payload)" \
				"$rebuilt" -ge $((TCP_BYTES * 99 / 100))
			recv_calls_check
			if [ "$where" = lo ]; then lo_large_check; fi
		fi
		tcp_checked "$module" "$where" 8000000 "EVIL at 8000000" ||
			{ end; continue; }
		if [ "$module" = nfqb ]; then
			expect "EVIL arrived" "$(val evil "$log.rx")" -eq 0
			expect "bytes arrived (stopped before EVIL)" \
				"$(val bytes "$log.rx")" -le 8000000
			expect "bytes arrived (not stopped too early)" \
				"$(val bytes "$log.rx")" -ge 7000000
			expect "snort alerts" "$(sstat detection alerts "$log.snort")" -ge 1
		fi
		end
	done
}

start_traffic() {
	local module=$1 ns log=$work/start-$1 q=$((4200 + $$ % 400)) i
	local started=0 bad=0 tpid
	begin_for "$module" "start_traffic ($module): 30 starts under 20k datagrams/s (--queue-bypass)"
	ns=$(lo_setup "start-$module" "$q" bypass) || { fail "namespace"; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 3000 600000
	udp_stream "$ns" 20000000 20000 "$log.tx"
	for i in $(seq 1 30); do
		if ! snort_start "$ns" "$module" "$q" "$log.snort.$i"; then
			bad=$((bad + 1))
			echo "    start $i failed:"
			grep -iE 'error|fail|busy' "$log.snort.$i" | head -n 3 |
				sed 's/^/    | /'
			snort_stop >/dev/null 2>&1
			continue
		fi
		wait_verdicts "$ns" "$q" 10 ||
			echo "    start $i: no verdict from Snort within 10 s"
		snort_stop || { bad=$((bad + 1)); echo "    start $i: exit $?"; }
		if [ "$(sstat daq analyzed "$log.snort.$i")" -gt 0 ]; then
			started=$((started + 1))
		else
			echo "    start $i: no packet analyzed"
		fi
	done
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	wait "$rx_pid"
	echo "    $started of 30 starts inspected traffic; receiver: distinct" \
	     "$(val distinct "$log.rx") up to the last sent, dup $(val dup "$log.rx")"
	if [ "$module" = nfqb ]; then
		expect "failed starts" "$bad" -eq 0
		expect "starts that inspected traffic" "$started" -eq 30
		expect "duplicates" "$(val dup "$log.rx")" -eq 0
	fi
	expect "datagrams arrived" "$(val received "$log.rx")" -gt 0
	end
}

# restart MODULE BYPASS: a paced stream, Snort stopped and started again
# in the middle; what is lost (sequence numbers missing).
restart_case() {
	local module=$1 by=$2 ns log=$work/restart-$1-$2 q=$((4300 + $$ % 400))
	local tpid count=60000 lost
	begin_for "$module" "restart ($module, $by): stop and start under 20k datagrams/s"
	ns=$(lo_setup "re-$module-$by" "$q" "$by") || { fail "namespace"; end; return; }
	snort_start "$ns" "$module" "$q" "$log.snort1" ||
		{ fail "start" "$log.snort1"; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	udp_stream "$ns" "$count" 20000 "$log.tx"
	sleep 1
	snort_stop || fail "snort exited with $?" "$log.snort1"
	snort_start "$ns" "$module" "$q" "$log.snort2" ||
		fail "restart" "$log.snort2"
	wait "$tpid"
	wait "$rx_pid"
	snort_stop || fail "snort exited with $?" "$log.snort2"
	lost=$((count - $(val distinct "$log.rx")))
	echo "    lost $lost of $count; duplicates $(val dup "$log.rx")"
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	if [ "$module" = nfqb ] && [ "$by" = bypass ]; then
		expect "lost with bypass" "$lost" -eq 0
	fi
	end
}

threads_case() {
	local ns log=$work/threads q=$((4400 + $$ % 400)) last i p a flows=8
	local addrs=() per=() qq k net
	last=$((q + 3))
	begin "threads (nfqb): -z 4 on queues $q-$last, --queue-balance, $flows flows, 2 per queue"
	net=$(flow_net) || { fail "flow set"; end; return; }
	ns=$(new_ns threads) || { fail "namespace"; end; return; }
	nsx "$ns" iptables -A OUTPUT -p udp -m multiport --dports 9980:9999 \
		-j NFQUEUE --queue-balance "$q:$last"
	if ! snort_start "$ns" nfqb "$q-$last" "$log.snort" -z 4; then
		fail "snort did not bind $q-$last" "$log.snort" 30
		end
		return
	fi
	# every queue bound once, by its own socket
	expect "distinct port ids of the 4 queues" "$(nsx "$ns" awk -v a="$q" -v b="$last" \
		'$1 >= a && $1 <= b { print $2 }' /proc/net/netfilter/nfnetlink_queue |
		sort -u | wc -l)" -eq 4
	# The kernel balances by addresses with a per-boot seed: eight fixed
	# flows miss one of four queues on about 38% of boots. Probe which
	# queue each destination address reaches (one datagram to a closed
	# port), and take two addresses per queue (64 candidates leaving a
	# queue fewer than two: 4 * 16.75 * (3/4)^63, about 1e-6). The
	# candidates are the flow set's (flow_net: NFQBT_FLOW_SET).
	for i in $(seq 0 3); do per[$i]=0; done
	for a in $(seq 1 64); do
		qq=$(probe_queue "$ns" "$q" "$last" "$net.$a" 9980)
		[ -n "$qq" ] || continue
		k=$((qq - q))
		[ "${per[$k]}" -lt 2 ] || continue
		per[$k]=$((per[$k] + 1))
		addrs+=("$net.$a")
		[ "${#addrs[@]}" -eq "$flows" ] && break
	done
	echo "    addresses by queue (probed): ${addrs[*]}"
	if ! expect "flows placed two per queue" "${#addrs[@]}" -eq "$flows"; then
		snort_stop
		end
		return
	fi
	local base
	base=$(queue_ids "$ns" "$q" "$last")
	for i in $(seq 0 $((flows - 1))); do
		p=$((9990 + i))
		nsbg "$ns" "$traffic" udp-recv "$p" 1500 60000 >"$log.rx$i" 2>&1
	done
	sleep 0.3
	for i in $(seq 0 $((flows - 1))); do
		p=$((9990 + i))
		nsbg "$ns" "$traffic" udp-send "${addrs[$i]}" "$p" 2000 5000 \
			>"$log.tx$i" 2>&1
	done
	for i in $(seq 1 300); do
		[ "$(cat "$log".rx* | grep -c '^span_ms')" -eq "$flows" ] && break
		sleep 0.1
	done
	local used
	# queues whose ids moved by at least their two flows' 4000 datagrams
	used=$(join <(echo "$base") <(queue_ids "$ns" "$q" "$last") |
		awk '$3 - $2 >= 4000 { n++ } END { print n + 0 }')
	snort_stop || fail "snort exited with $?" "$log.snort" 20
	local total=0 dup=0
	for i in $(seq 0 $((flows - 1))); do
		total=$((total + $(val distinct "$log.rx$i")))
		dup=$((dup + $(val dup "$log.rx$i")))
	done
	echo "    queues with their flows' traffic: $used of 4; arrived $total of $((flows * 2000)), dup $dup"
	expect "queues with traffic" "$used" -eq 4
	expect "datagrams arrived" "$total" -eq $((flows * 2000))
	expect "duplicates" "$dup" -eq 0
	end
}

reload_case() {
	local module=$1 ns log=$work/reload-$1 q=$((4600 + $$ % 300)) tpid
	begin "reload ($module): SIGHUP under traffic"
	ns=$(lo_setup "reload-$module" "$q") || { fail "namespace"; end; return; }
	snort_start "$ns" "$module" "$q" "$log.snort" ||
		{ fail "start" "$log.snort" 30; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 2000 60000
	udp_stream "$ns" 40000 10000 "$log.tx" 10
	sleep 1
	cp "$rules" "$rules.saved"
	cp "$rules2" "$rules"
	kill -HUP "$snort_pid"
	wait "$tpid"
	wait "$rx_pid"
	snort_stop || fail "snort exited with $?" "$log.snort" 20
	mv "$rules.saved" "$rules"
	echo "    arrived $(val distinct "$log.rx") of 36000, evil $(val evil "$log.rx")," \
	     "dup $(val dup "$log.rx"); reloads: $(grep -ci 'reload.*complete\|swapped' "$log.snort")"
	expect "datagrams arrived" "$(val distinct "$log.rx")" -eq 36000
	expect "EVIL arrived" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	end
}

vtimeout_case() {
	local ns log=$work/vt q=$((4700 + $$ % 200)) n=150000 arrived drops tmo
	local tx_pid i
	begin "vtimeout (nfqb): verdict_timeout=1 under 50k datagrams/s, Snort held still 30 ms, run 2 ms"
	ns=$(lo_setup vt "$q") || { fail "namespace"; end; return; }
	snort_start "$ns" nfqb "$q" "$log.snort" --daq-var verdict_timeout=1 \
		--daq-var debug || { fail "start" "$log.snort" 30; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 "$n" 50000 >"$log.tx" 2>&1 &
	tx_pid=$!
	# Snort held still for 30 ms and let run about 2 ms, over and over
	# while the traffic lasts (3 s, at most 400 times), as a busy
	# machine's scheduler does: the packets it holds and those read but
	# not handed to it yet outlive the 1 ms (on an idle machine Snort
	# finalizes every one within 1 ms). Each stop finds 1500 datagrams
	# queued, more than Snort gets through in the 2 ms before the next
	# stop, so a stop lands on packets in hand nearly every time; with
	# 35 ms cycles and 40000 datagrams (0.8 s) a fast machine caught
	# Snort idle at all 23 stops now and then ("timeouts 0")
	for i in $(seq 1 400); do
		kill -0 "$tx_pid" 2>/dev/null || break
		kill -STOP "$snort_pid" 2>/dev/null
		sleep 0.03
		kill -CONT "$snort_pid" 2>/dev/null
		sleep 0.002
	done
	kill -CONT "$snort_pid" 2>/dev/null
	wait "$tx_pid"
	wait "$rx_pid"
	snort_stop || fail "snort exited with $?" "$log.snort" 20
	grep -q 'Exhausted the DAQ message pool' "$log.snort" &&
		fail "Snort ran out of messages" "$log.snort" 10
	arrived=$(val distinct "$log.rx")
	drops=$(sstat daq dropped "$log.snort")
	tmo=$(grep -o ' timeouts [0-9]*' "$log.snort" | tail -n 1 | awk '{ print $2 }')
	echo "    arrived $arrived of $n, dropped by the kernel (queue full)" \
	     "$drops, dup $(val dup "$log.rx"); timeouts ${tmo:-?}," \
	     "$(grep -o 'timed_out_finalize [0-9]*' "$log.snort" | tail -n 1)"
	# each datagram once, or counted as dropped by the kernel; the
	# verdict timeout did expire (accept: they arrived)
	expect "arrived + dropped by the kernel" $((arrived + drops)) -eq "$n"
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "verdict timeouts" "${tmo:-0}" -gt 0
	end
}

stop_race() {
	local module=$1 ns log=$work/race-$1 q=$((4800 + $$ % 100)) i tpid bad=0
	begin_for "$module" "stop_race ($module): start and stop at once, 10 times under traffic"
	ns=$(lo_setup "race-$module" "$q" bypass) || { fail "namespace"; end; return; }
	udp_stream "$ns" 20000000 20000 "$log.tx"
	for i in $(seq 1 10); do
		if ! snort_start "$ns" "$module" "$q" "$log.snort.$i"; then
			bad=$((bad + 1))
			snort_stop >/dev/null 2>&1
			continue
		fi
		snort_stop || { bad=$((bad + 1)); echo "    run $i: exit $?"; tail -n 3 "$log.snort.$i" | sed 's/^/    | /'; }
	done
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	echo "    $((10 - bad)) of 10 clean"
	[ "$module" = nfqb ] && expect "unclean runs" "$bad" -eq 0
	end
}

one_queue() {
	local ns log=$work/oneq q=$((4900 + $$ % 90))
	begin "one_queue (nfqb): -i $q -z 2 refused, saying why"
	ns=$(new_ns oneq) || { fail "namespace"; end; return; }
	nsenter --net="/run/netns/$ns" timeout 120 "$snort" -c "$conf" \
		-R "$rules" "${our_args[@]}" -Q -i "$q" -z 2 >"$log" 2>&1
	local rc=$?
	# (Snort 3.11 exits 0 when a packet thread's DAQ instance cannot be
	# made; what matters is that it stops, and says why)
	[ "$rc" -ne 124 ] || fail "snort ran on with one queue for two threads"
	grep -q 'taken by another instance' "$log" ||
		fail "no explanation in Snort's output" "$log" 10
	echo "    snort: exit $rc, \"$(grep -o 'queue [0-9]* is taken by another instance[^:]*' "$log" | head -n 1)\""
	end
}

start=$(date +%s)
echo "test-snort: $("$snort" -V 2>&1 | grep -o 'Version [0-9.]*' | head -n 1), $(uptime | sed 's/.*load/load/')"
want enforce_udp && { enforce_udp nfq; enforce_udp nfqb; }
want tcp_lo && tcp_case lo
want tcp_router && tcp_case router
want start_traffic && { start_traffic nfq; start_traffic nfqb; }
want restart && for b in bypass nobypass; do
	restart_case nfq "$b"
	restart_case nfqb "$b"
done
want threads && threads_case
want reload && { reload_case nfq; reload_case nfqb; }
want vtimeout && vtimeout_case
want stop_race && { stop_race nfq; stop_race nfqb; }
want one_queue && one_queue

echo "test-snort: $checks checks, $failures failed, $(( $(date +%s) - start )) s"
pct=100
[ "$checks" -gt 0 ] && pct=$(( (checks - failures) * 100 / checks ))
echo "$pct%: Checks: $checks, Failures: $failures, Errors: 0"
[ "$failures" -eq 0 ]
