#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Suricata itself (8.0.7 with integrations/suricata/8.0/*.patch, or 7.0.10
# with integrations/suricata/*.patch: whichever NFQB_SURICATA_PREFIX holds,
# tests/suricata/build-suricata.sh), inline on NFQUEUE with our libnfq-batch
# backend (--set nfq.backend=nfqb) and with its stock
# libnetfilter_queue backend (--set nfq.backend=nfq), side by side, one
# binary, in private network namespaces, with a minimal suricata.yaml of
# our own and real drop rules; every check is made at a receiver
# (tests/snort/snort-traffic), never on exit codes alone.
#
#   enforce_udp   3000 datagrams, 300 with EVIL: exactly the 2700 others
#                 arrive, each once; Suricata's own Dropped count is 300
#                 (both backends, autofp and workers)
#   replace       a replace rule turns EVIL into GOOD: all 3000 arrive,
#                 none with EVIL; Suricata's Replaced count is 300 (both
#                 backends; nfqb in workers, in place, and autofp)
#   tcp_lo        on lo (MTU 65536: GSO packets longer than the kernel
#                 copies): a 16 MB transfer arrives whole, the library's
#                 large-packet policy clamped the SYNs' MSS and dropped
#                 nothing uninspected; with EVIL at 8 MB nothing from EVIL
#                 on arrives (nfqb; the stock backend's results are
#                 printed beside, not asserted)
#   tcp_router    the same through a router namespace (veth, MTU 1500,
#                 Suricata on FORWARD)
#   repeat        nfq.mode repeat with repeat-mark 1/1: every clean
#                 datagram comes back marked to the rule after the queue
#                 (its counter), EVIL ones dropped (both backends)
#   mark          a rule with nfq_set_mark 0x2/0x2 on the EVIL datagrams:
#                 exactly those 300 leave marked (both backends)
#   route         nfq.mode route with route-queue Q2: every clean datagram
#                 reaches a second Suricata on Q2, then the receiver
#                 (both backends)
#   failopen      nfq.fail-open with a queue of 128 (max-pending-packets
#                 32), Suricata held still (SIGSTOP) while 3000 datagrams
#                 come: the kernel accepts what does not fit, the held
#                 ones are verdicted after SIGCONT: all arrive, once
#   queues        -q A:B with --queue-balance A:B (workers) and -q A -q B
#                 (autofp): both queues bound, two probed flows on each,
#                 every datagram arrives once
#   start_traffic 5 starts while 20k datagrams/s arrive on a rule with
#                 --queue-bypass: each binds and inspects; on nfqb nothing
#                 lost or duplicated
#   restart       stop and start under 20k datagrams/s for 10 s
#                 (--queue-bypass): on nfqb nothing lost or duplicated,
#                 and both runs inspect
#   reload        SIGUSR2 (rule reload) under traffic: nothing lost or
#                 duplicated, EVIL still dropped after the reload
#   bypass        nfq.bypass-mark/bypass-mask 1/1, a rule with the bypass
#                 keyword and CONNMARK: after the first datagram of a flow
#                 to 9995 the flow skips the queue (its EVIL ones arrive,
#                 none is queued); a flow to 9994 stays inspected (both
#                 backends)
#   live          the layout of upstream's live NFQ IPS test: client,
#                 router (Suricata on FORWARD) and server namespaces;
#                 64 KB over HTTPS and HTTP arrive whole, ICMP echo
#                 requests are dropped and never reach the server, the
#                 TLS and HTTP rules alert, no TCP checksum is taken for
#                 bad (nfqb, autofp and workers; tests/suricata/live-peer.py)
#
# Environment:
#   NFQB_SURICATA_PREFIX     Suricata (tests/suricata/build-suricata.sh)
#   NFQB_LIBDIR              where the libnfq-batch.so under test is (a
#                            build tree's lib/.libs; NFQB_DAQ_LIBDIR too)
#   NFQB_TRAFFIC             tests/snort/snort-traffic (NFQB_SNORT_TRAFFIC
#                            too; else built here from its source with cc)
#   NFQB_SURICATA_REQUIRED=1 fail (not skip) when something is missing
#   NFQB_SURICATA_ONLY       scenario names to run (default: all)
#   NFQB_SURICATA_KEEP=1     keep the logs
# Prints a Check-style summary line (tests/run-all.sh counts each check).
# Every wait is bounded; namespaces and processes go away on any exit.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"	# suri_*, tcp_run; tests/snort/lib.sh: nsx nsbg new_ns val ...
skip() { test_skip test-suricata "${NFQB_SURICATA_REQUIRED:-0}" "$@"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
prefix=${NFQB_SURICATA_PREFIX:-}
suricata=$prefix/bin/suricata
[ -n "$prefix" ] && [ -x "$suricata" ] ||
	skip "no Suricata in '$prefix' (NFQB_SURICATA_PREFIX; tests/suricata/build-suricata.sh)"
libdir=${NFQB_LIBDIR:-${NFQB_DAQ_LIBDIR:-}}
command -v ip >/dev/null && command -v iptables >/dev/null &&
	command -v nsenter >/dev/null || skip "needs ip, iptables and nsenter"

tag=nfqbq$$
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-suricata.XXXXXX")
traffic=${NFQB_TRAFFIC:-${NFQB_SNORT_TRAFFIC:-}}
if [ -z "$traffic" ] || [ ! -x "$traffic" ]; then
	traffic=$work/snort-traffic
	suri_traffic_build "$traffic" || {
		rm -rf "$work"
		skip "no snort-traffic (NFQB_TRAFFIC) and it does not build here"
	}
fi
# the library under test first; the copy staged at build time after it
export LD_LIBRARY_PATH="${libdir:+$libdir:}$prefix/nfqb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
checks=0
failures=0
pids=()
modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q xt_NFQUEUE 2>/dev/null
trap 'snort_lib_cleanup; [ "${NFQB_SURICATA_KEEP:-0}" = 1 ] && echo "test-suricata: logs in $work" || rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

# --- Suricata's configuration and rules -------------------------------------

yaml=$work/suricata.yaml
write_suricata_yaml "$yaml"
rules=$work/rules
write_suricata_rules "$rules"
rules2=$work/rules-reloaded
write_suricata_rules "$rules2" again

# --- Helpers ------------------------------------------------------------------
# (suri_start, suri_stop, sum_verdicts, nfqb_lines, tcp_run: lib.sh; the
# checks, lo_setup, run_rx, queue_ids, probe_queue: tests/snort/lib.sh)
stock_label="the stock backend"
only_list=${NFQB_SURICATA_ONLY:-}

# --- Scenarios -------------------------------------------------------------

enforce_udp() {
	local backend=$1 runmode=$2 ns log=$work/udp-$1-$2 q=$((4000 + $$ % 500))
	begin "enforce_udp ($backend, $runmode): 3000 datagrams, every 10th EVIL"
	ns=$(lo_setup "udp-$backend-$runmode" "$q") || { fail "namespace"; end; return; }
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" --runmode "$runmode"; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	[ "$backend" = nfqb ] && echo "    libnfq-batch loaded: ${suri_lib:-?}"
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 2700
	expect "EVIL datagrams arrived" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "suricata Dropped" "$(sum_verdicts Dropped "$log.suri")" -eq 300
	expect "suricata Accepted" "$(sum_verdicts Accepted "$log.suri")" -ge 2700
	echo "    received $(val distinct "$log.rx"), evil $(val evil "$log.rx"), dup $(val dup "$log.rx");" \
	     "suricata: accepted $(sum_verdicts Accepted "$log.suri")," \
	     "dropped $(sum_verdicts Dropped "$log.suri"), alerts $(grep -c 'EVIL udp' "$log.suri.d/fast.log" 2>/dev/null)"
	[ "$backend" = nfqb ] && nfqb_lines "$log.suri"
	end
}

# route_case BACKEND: nfq.mode route: every packet Suricata accepts goes on
# to queue route-queue, where a second Suricata (nfqb, accept mode) takes it
route_case() {
	local backend=$1 ns log=$work/route-$1 q=$((4070 + $$ % 400)) q2 pid2
	q2=$((q + 500))
	begin "route ($backend): nfq.mode route to queue $q2 (a second Suricata), 3000 datagrams, every 10th EVIL"
	ns=$(lo_setup "route-$backend" "$q") || { fail "namespace"; end; return; }
	if ! suri_start "$ns" nfqb "$log.suri2" "$q2"; then
		fail "the second suricata did not start on queue $q2" "$log.suri2" 30
		end
		return
	fi
	pid2=$suri_pid
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" --set nfq.mode=route \
		--set nfq.route-queue="$q2"; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	suri_pid=$pid2
	suri_stop || fail "the second suricata exited with $?" "$log.suri2" 20
	echo "    received $(val distinct "$log.rx"), evil $(val evil "$log.rx"), dup $(val dup "$log.rx");" \
	     "suricata: accepted (routed) $(sum_verdicts Accepted "$log.suri"), dropped $(sum_verdicts Dropped "$log.suri");" \
	     "the second: accepted $(sum_verdicts Accepted "$log.suri2")"
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 2700
	expect "EVIL datagrams arrived" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "accepted by the second suricata (routed to it)" \
		"$(sum_verdicts Accepted "$log.suri2")" -eq 2700
	end
}

# mark_case BACKEND: a rule with nfq_set_mark 0x2/0x2 on every EVIL
# datagram: Suricata's verdict carries the mark (a mangle POSTROUTING rule
# counts marked packets), the others go unmarked
mark_case() {
	local backend=$1 ns log=$work/mark-$1 q=$((4090 + $$ % 400)) marked
	begin "mark ($backend): nfq_set_mark 0x2/0x2 on the EVIL ones of 3000 datagrams"
	ns=$(new_ns "mark-$backend") || { fail "namespace"; end; return; }
	nsx "$ns" iptables -t mangle -A POSTROUTING -p udp --dport 9996 -m mark --mark 2/2
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9996 -j NFQUEUE --queue-num "$q"
	if ! suri_start "$ns" "$backend" "$log.suri" "$q"; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9996 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9996 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	marked=$(nsx "$ns" iptables -t mangle -vnxL POSTROUTING | awk '/mark match 0x2\/0x2/ { print $1; exit }')
	echo "    received $(val distinct "$log.rx"), dup $(val dup "$log.rx"); marked by the verdict: ${marked:-?};" \
	     "suricata: accepted $(sum_verdicts Accepted "$log.suri")"
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 3000
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "datagrams with the mark" "${marked:-0}" -eq 300
	end
}

# replace_case BACKEND RUNMODE: a replace rule (NFQSetVerdict's modified
# payload path): EVIL becomes GOOD on the way, every datagram arrives
replace_case() {
	local backend=$1 runmode=$2 ns log=$work/replace-$1-$2 q=$((4050 + $$ % 400))
	begin "replace ($backend, $runmode): 3000 datagrams to a replace rule, every 10th EVIL"
	ns=$(new_ns "rep-$backend-$runmode") || { fail "namespace"; end; return; }
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9997 -j NFQUEUE --queue-num "$q"
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" --runmode "$runmode"; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9997 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9997 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	echo "    received $(val distinct "$log.rx"), evil $(val evil "$log.rx"), dup $(val dup "$log.rx");" \
	     "suricata: accepted $(sum_verdicts Accepted "$log.suri"), replaced $(sum_verdicts Replaced "$log.suri")"
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 3000
	expect "EVIL datagrams arrived (not replaced)" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "suricata Replaced" "$(sum_verdicts Replaced "$log.suri")" -eq 300
	end
}

tcp_report() {
	echo "    $1: received $(val bytes "$log.rx") of $TCP_BYTES" \
	     "(bad $(val bad "$log.rx"), evil $(val evil "$log.rx")," \
	     "end $(val end "$log.rx")); suricata: accepted" \
	     "$(sum_verdicts Accepted "$log.suri"), dropped" \
	     "$(sum_verdicts Dropped "$log.suri"), alerts" \
	     "$(grep -c 'EVIL tcp' "$log.suri.d/fast.log" 2>/dev/null), exit $suri_rc"
	nfqb_lines "$log.suri"
}

tcp_checked() {
	if ! tcp_run "$1" "$2" "$3"; then
		fail "set-up"
		return 1
	fi
	tcp_report "$4"
	if [ "$1" = nfqb ] && [ "$suri_rc" -ne 0 ]; then
		fail "suricata exited with $suri_rc" "$log.suri" 20
	fi
	return 0
}

tcp_case() {
	local where=$1 backend
	for backend in nfq nfqb; do
		begin_for "$backend" "tcp_$where ($backend): 16 MB, whole, then with EVIL at 8 MB"
		tcp_checked "$backend" "$where" -1 "clean" || { end; continue; }
		if [ "$backend" = nfqb ]; then
			expect "bytes arrived" "$(val bytes "$log.rx")" -eq "$TCP_BYTES"
			expect "bytes not as sent" "$(val bad "$log.rx")" -eq 0
			# the library's large-packet policy (the series sets
			# NFQB_LARGE_WHOLE): nothing but TCP is queued here,
			# so nothing is dropped uninspected; on lo (MTU 65536)
			# the SYNs are clamped
			expect "library: dropped uninspected" \
				"$(nfqb_exit_count 'other dropped uninspected' "$log.suri")" -eq 0
			[ "$where" = lo ] &&
				expect "library: MSS clamped (SYN, SYN/ACK)" \
					"$(nfqb_exit_count 'MSS clamped' "$log.suri")" -ge 1
		fi
		tcp_checked "$backend" "$where" 8000000 "EVIL at 8000000" ||
			{ end; continue; }
		if [ "$backend" = nfqb ]; then
			expect "EVIL arrived" "$(val evil "$log.rx")" -eq 0
			expect "bytes arrived (stopped before EVIL)" \
				"$(val bytes "$log.rx")" -le 8000000
			expect "bytes arrived (not stopped too early)" \
				"$(val bytes "$log.rx")" -ge 7000000
			expect "suricata alerts" \
				"$(grep -c 'EVIL tcp' "$log.suri.d/fast.log" 2>/dev/null)" -ge 1
		fi
		end
	done
}

repeat_case() {
	local backend=$1 ns log=$work/repeat-$1 q=$((4100 + $$ % 400)) marked
	begin "repeat ($backend): nfq.mode repeat, repeat-mark 1/1, 3000 datagrams, every 10th EVIL"
	ns=$(new_ns "repeat-$backend") || { fail "namespace"; end; return; }
	# marked packets (Suricata's repeat) pass the rule before the queue
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9999 -m mark --mark 1/1 -j ACCEPT
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9999 -j NFQUEUE --queue-num "$q"
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" --set nfq.mode=repeat \
		--set nfq.repeat-mark=1 --set nfq.repeat-mask=1; then
		fail "suricata did not start" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 3000 20000 10 \
		>"$log.tx" 2>&1
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	marked=$(nsx "$ns" iptables -vnxL OUTPUT | awk '/mark match 0x1\/0x1/ { print $1; exit }')
	echo "    received $(val distinct "$log.rx"), evil $(val evil "$log.rx"), dup $(val dup "$log.rx");" \
	     "repeated with the mark: ${marked:-?}; suricata: accepted $(sum_verdicts Accepted "$log.suri"), dropped $(sum_verdicts Dropped "$log.suri")"
	expect "distinct datagrams arrived" "$(val distinct "$log.rx")" -eq 2700
	expect "EVIL datagrams arrived" "$(val evil "$log.rx")" -eq 0
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "packets repeated with the mark" "${marked:-0}" -eq 2700
	end
}

failopen_case() {
	local backend=$1 ns log=$work/failopen-$1 q=$((4150 + $$ % 400)) i
	begin_for "$backend" "failopen ($backend): queue of 128, Suricata held still, 3000 datagrams"
	ns=$(lo_setup "fo-$backend" "$q") || { fail "namespace"; end; return; }
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" --set nfq.fail-open=yes \
		--set max-pending-packets=32 --runmode workers; then
		fail "suricata did not start" "$log.suri" 30
		end
		return
	fi
	run_rx "$ns" "$log.rx" udp-recv 9999 3000 60000
	kill -STOP "$suri_pid"
	nsx "$ns" "$traffic" udp-send 127.0.0.1 9999 3000 10000 >"$log.tx" 2>&1
	local held
	held=$(nsx "$ns" awk -v q="$q" '$1 == q { print $3 }' /proc/net/netfilter/nfnetlink_queue)
	sleep 0.5
	kill -CONT "$suri_pid"
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	echo "    held in the queue while stopped: ${held:-?}; received $(val distinct "$log.rx"), dup $(val dup "$log.rx");" \
	     "suricata: accepted $(sum_verdicts Accepted "$log.suri")"
	grep -o 'fail-open mode[^"]*' "$log.suri" | head -n 1 | sed 's/^/    suricata: /'
	expect "datagrams arrived" "$(val distinct "$log.rx")" -eq 3000
	expect "duplicates" "$(val dup "$log.rx")" -eq 0
	expect "held in the queue (at most its length)" "${held:-0}" -le 128
	expect "inspected by suricata after SIGCONT" "$(sum_verdicts Accepted "$log.suri")" -ge 1
	end
}

# queues_case BACKEND FORM RUNMODE: two queues, as -q A:B (FORM range) or
# -q A -q B (FORM list), --queue-balance A:B, two flows probed onto each
# (the kernel's hash has a seed per boot; the candidates, 64 addresses of
# the flow set's flow_net, leave a queue fewer than two about once in 1e17)
queues_case() {
	local backend=$1 form=$2 runmode=$3 ns log=$work/queues-$1-$2
	local q=$((4200 + $$ % 400)) last i p a flows=4 addrs=() per=() qq k spec
	local net
	last=$((q + 1))
	spec="$q:$last"
	[ "$form" = list ] && spec="$q,$last"
	begin_for "$backend" "queues ($backend, $runmode): -q ${spec/,/ -q }, --queue-balance $q:$last, $flows flows"
	net=$(flow_net) || { fail "flow set"; end; return; }
	ns=$(new_ns "qs-$backend-$form") || { fail "namespace"; end; return; }
	nsx "$ns" iptables -A OUTPUT -p udp -m multiport --dports 9980:9999 \
		-j NFQUEUE --queue-balance "$q:$last"
	if ! suri_start "$ns" "$backend" "$log.suri" "$spec" --runmode "$runmode"; then
		fail "suricata did not bind $q-$last" "$log.suri" 30
		end
		return
	fi
	expect "distinct port ids of the 2 queues" "$(nsx "$ns" awk -v a="$q" -v b="$last" \
		'$1 >= a && $1 <= b { print $2 }' /proc/net/netfilter/nfnetlink_queue |
		sort -u | wc -l)" -eq 2
	per=(0 0)
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
		suri_stop
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
		nsbg "$ns" "$traffic" udp-send "${addrs[$i]}" "$p" 2000 5000 10 \
			>"$log.tx$i" 2>&1
	done
	for i in $(seq 1 300); do
		[ "$(cat "$log".rx* | grep -c '^span_ms')" -eq "$flows" ] && break
		sleep 0.1
	done
	local used
	used=$(join <(echo "$base") <(queue_ids "$ns" "$q" "$last") |
		awk '$3 - $2 >= 4000 { n++ } END { print n + 0 }')
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	local total=0 dup=0 evil=0
	for i in $(seq 0 $((flows - 1))); do
		total=$((total + $(val distinct "$log.rx$i")))
		dup=$((dup + $(val dup "$log.rx$i")))
		evil=$((evil + $(val evil "$log.rx$i")))
	done
	echo "    queues with their flows' traffic: $used of 2; arrived $total of $((flows * 1800)), evil $evil, dup $dup;" \
	     "suricata: receive threads $(grep -c 'Treated: Pkts' "$log.suri"), dropped $(sum_verdicts Dropped "$log.suri")"
	expect "queues with traffic" "$used" -eq 2
	expect "datagrams arrived" "$total" -eq $((flows * 1800))
	expect "EVIL arrived" "$evil" -eq 0
	expect "duplicates" "$dup" -eq 0
	expect "suricata receive threads" "$(grep -c 'Treated: Pkts' "$log.suri")" -eq 2
	end
}

start_traffic() {
	local backend=$1 ns log=$work/start-$1 q=$((4250 + $$ % 400)) i n=5
	local started=0 bad=0 count=2000000
	begin_for "$backend" "start_traffic ($backend): $n starts under 20k datagrams/s (--queue-bypass)"
	ns=$(lo_setup "start-$backend" "$q" bypass) || { fail "namespace"; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 3000 600000
	udp_stream "$ns" "$count" 20000 "$log.tx"
	for i in $(seq 1 "$n"); do
		if ! suri_start "$ns" "$backend" "$log.suri.$i" "$q"; then
			bad=$((bad + 1))
			echo "    start $i failed:"
			grep -iE 'error|fail|busy' "$log.suri.$i" | head -n 3 |
				sed 's/^/    | /'
			suri_stop >/dev/null 2>&1
			continue
		fi
		wait_verdicts "$ns" "$q" 10 ||
			echo "    start $i: no verdict from Suricata within 10 s"
		suri_stop || { bad=$((bad + 1)); echo "    start $i: exit $?"; }
		if [ "$(sum_verdicts Accepted "$log.suri.$i")" -gt 0 ]; then
			started=$((started + 1))
		else
			echo "    start $i: no packet accepted"
		fi
	done
	# the rest of the stream passes by the bypass
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	wait "$rx_pid"
	echo "    $started of $n starts inspected traffic, $bad failed;" \
	     "datagrams arrived $(val distinct "$log.rx"), dup $(val dup "$log.rx")"
	if [ "$backend" = nfqb ]; then
		expect "starts that inspected" "$started" -eq "$n"
		expect "failed starts or stops" "$bad" -eq 0
		expect "duplicates" "$(val dup "$log.rx")" -eq 0
	fi
	end
}

restart_case() {
	local backend=$1 ns log=$work/restart-$1 q=$((4300 + $$ % 400))
	local count=200000 lost
	begin_for "$backend" "restart ($backend, bypass): stop and start under 20k datagrams/s"
	ns=$(lo_setup "re-$backend" "$q" bypass) || { fail "namespace"; end; return; }
	suri_start "$ns" "$backend" "$log.suri1" "$q" ||
		{ fail "start" "$log.suri1"; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 1500 60000
	udp_stream "$ns" "$count" 20000 "$log.tx"
	sleep 1
	suri_stop || fail "suricata exited with $?" "$log.suri1"
	suri_start "$ns" "$backend" "$log.suri2" "$q" ||
		fail "restart" "$log.suri2"
	wait "$tpid"
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri2"
	lost=$((count - $(val distinct "$log.rx")))
	echo "    lost $lost of $count; duplicates $(val dup "$log.rx");" \
	     "suricata accepted $(sum_verdicts Accepted "$log.suri1") + $(sum_verdicts Accepted "$log.suri2")"
	grep -o 'closed: .*' "$log.suri1" | sed 's/^/    first run: /'
	if [ "$backend" = nfqb ]; then
		expect "duplicates" "$(val dup "$log.rx")" -eq 0
		expect "lost with bypass" "$lost" -eq 0
		expect "accepted by the second run" "$(sum_verdicts Accepted "$log.suri2")" -gt 0
	fi
	end
}

reload_case() {
	local backend=$1 ns log=$work/reload-$1 q=$((4350 + $$ % 300)) i
	begin_for "$backend" "reload ($backend): SIGUSR2 under traffic"
	ns=$(lo_setup "reload-$backend" "$q") || { fail "namespace"; end; return; }
	suri_start "$ns" "$backend" "$log.suri" "$q" ||
		{ fail "start" "$log.suri" 30; end; return; }
	run_rx "$ns" "$log.rx" udp-recv 9999 2000 60000
	udp_stream "$ns" 40000 10000 "$log.tx" 10
	sleep 1
	cp "$rules" "$rules.saved"
	cp "$rules2" "$rules"
	kill -USR2 "$suri_pid"
	for i in $(seq 1 600); do
		grep -q 'rule reload complete' "$log.suri" && break
		sleep 0.05
	done
	wait "$tpid"
	wait "$rx_pid"
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	mv "$rules.saved" "$rules"
	local reloads
	reloads=$(grep -c 'rule reload complete' "$log.suri")
	echo "    arrived $(val distinct "$log.rx") of 36000, evil $(val evil "$log.rx")," \
	     "dup $(val dup "$log.rx"); reloads: $reloads; alerts after it: $(grep -c 'EVIL udp again' "$log.suri.d/fast.log" 2>/dev/null)"
	if [ "$backend" = nfqb ]; then
		expect "reloads" "$reloads" -eq 1
		expect "datagrams arrived" "$(val distinct "$log.rx")" -eq 36000
		expect "EVIL arrived" "$(val evil "$log.rx")" -eq 0
		expect "duplicates" "$(val dup "$log.rx")" -eq 0
		expect "alerts of the reloaded rules" \
			"$(grep -c 'EVIL udp again' "$log.suri.d/fast.log" 2>/dev/null)" -ge 1
	fi
	end
}

# bypass_case BACKEND: flow bypass (nfq.bypass-mark/bypass-mask 0x1/0x1,
# the bypass rule keyword, CONNMARK): the first datagram of a flow to 9995
# matches a bypass rule, so its verdict carries the mark; mangle
# POSTROUTING saves the mark in the flow's conntrack entry, mangle OUTPUT
# restores it on the flow's later datagrams, and those are accepted before
# the NFQUEUE rule: they arrive uninspected, EVIL ones too, and none is
# queued. A flow to 9994 (no bypass rule) stays queued and inspected.
bypass_case() {
	local backend=$1 ns log=$work/bypass-$1 q=$((4150 + $$ % 400)) port n0 n1
	local q1_9994 q1_9995 q2_9994 q2_9995
	begin "bypass ($backend): a flow matching a bypass rule skips the queue from its next datagram on, another stays inspected"
	ns=$(new_ns "byp-$backend") || { fail "namespace"; end; return; }
	nsx "$ns" iptables -t mangle -A OUTPUT -p udp -j CONNMARK --restore-mark --mask 0x1
	nsx "$ns" iptables -A OUTPUT -p udp -m multiport --dports 9994,9995 -m mark --mark 0x1/0x1 -j ACCEPT
	for port in 9994 9995; do
		nsx "$ns" iptables -A OUTPUT -p udp --dport "$port" -j NFQUEUE --queue-num "$q"
	done
	nsx "$ns" iptables -t mangle -A POSTROUTING -p udp -m mark --mark 0x1/0x1 -j CONNMARK --save-mark --mask 0x1
	if ! suri_start "$ns" "$backend" "$log.suri" "$q" \
		--set nfq.bypass-mark=1 --set nfq.bypass-mask=1; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		end
		return
	fi
	for port in 9995 9994; do
		# 10 clean datagrams from one source port: on 9995 the first
		# matches the bypass rule; once all arrived, their verdicts
		# (and the mark's save) are done
		run_rx "$ns" "$log.rx1.$port" udp-recv "$port" 1500 60000
		nsx "$ns" env SNORT_TRAFFIC_SPORT=40100 "$traffic" udp-send \
			127.0.0.1 "$port" 10 1000 >"$log.tx1.$port" 2>&1
		wait "$rx_pid"
		n0=$(bypass_queued "$ns" "$port")
		# the same flow again: 1000 datagrams, every 10th EVIL
		run_rx "$ns" "$log.rx2.$port" udp-recv "$port" 1500 60000
		nsx "$ns" env SNORT_TRAFFIC_SPORT=40100 "$traffic" udp-send \
			127.0.0.1 "$port" 1000 20000 10 >"$log.tx2.$port" 2>&1
		wait "$rx_pid"
		n1=$(bypass_queued "$ns" "$port")
		eval "q1_$port=\${n0:-0} q2_$port=\$((\${n1:-0} - \${n0:-0}))"
		echo "    port $port: first 10 arrived $(val distinct "$log.rx1.$port"), queued ${n0:-?};" \
		     "then arrived $(val distinct "$log.rx2.$port") of 1000, evil $(val evil "$log.rx2.$port"), queued $((${n1:-0} - ${n0:-0}))"
		expect "port $port: the first 10 arrived" "$(val distinct "$log.rx1.$port")" -eq 10
	done
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	nsx "$ns" conntrack -L -p udp 2>/dev/null | grep 'sport=40100' | sed 's/^/    ct: /'
	expect "bypassed flow: all 1000 arrived" "$(val distinct "$log.rx2.9995")" -eq 1000
	expect "bypassed flow: its EVIL ones too (uninspected)" "$(val evil "$log.rx2.9995")" -eq 100
	expect "bypassed flow: queued of the first 10 (the first at least)" "$q1_9995" -ge 1
	expect "bypassed flow: queued of the next 1000" "$q2_9995" -eq 0
	expect "inspected flow: queued of the next 1000" "$q2_9994" -eq 1000
	expect "inspected flow: the 900 clean ones arrived" "$(val distinct "$log.rx2.9994")" -eq 900
	expect "inspected flow: no EVIL arrived" "$(val evil "$log.rx2.9994")" -eq 0
	end
}

# live_case BACKEND RUNMODE: the layout of upstream's live NFQ IPS test
# (qa/live/netns in Suricata's git tree): a client and a server namespace
# either side of a router namespace that queues everything it forwards
# (FORWARD -j NFQUEUE), Suricata verdicting there. The client fetches
# 64 KB over HTTPS (SNI nfqb.test) and over HTTP from the server and sends
# 10 ICMP echo requests, which a drop rule stops. Checked: both transfers
# arrive whole, no echo request reaches the server (its INPUT counter) and
# none is answered; Suricata dropped the 10 and nothing else, accepted the rest,
# and its TLS and HTTP rules alerted (the stream engine tracked both
# sessions and the parsers saw them: no TCP packet taken for one with a
# bad checksum).
live_case() {
	local backend=$1 runmode=$2 log=$work/live-$1-$2 q=$((4380 + $$ % 300)) i
	local rules=$work/live.rules yaml=$work/live.yaml echo_in peer=$here/live-peer.py
	# as upstream's test runs it: Suricata checks the checksums
	local suri_checksums=yes
	begin_for "$backend" "live ($backend, $runmode): client, router with Suricata on FORWARD, server: HTTPS and HTTP pass, ICMP echo requests dropped"
	if [ ! -f "$work/live.crt" ]; then
		write_suricata_yaml "$yaml" stats
		cat >"$rules" <<-EOF
		drop icmp any any -> any any (msg:"live echo request"; itype:8; sid:1000201; rev:1;)
		alert tls any any -> any any (msg:"live TLS nfqb.test"; tls.sni; content:"nfqb.test"; sid:1000202; rev:1;)
		alert http any any -> any any (msg:"live HTTP GET"; http.uri; content:"/live-http"; sid:1000203; rev:1;)
		EOF
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=nfqb.test \
			-keyout "$work/live.key" -out "$work/live.crt" >"$work/live.openssl" 2>&1 ||
			{ fail "openssl req" "$work/live.openssl"; end; return; }
	fi
	router_setup "lv-${backend:0:4}-${runmode:0:2}" "$q" || { fail "namespaces"; end; return; }
	nsx "$rs_ns" iptables -A INPUT -p icmp --icmp-type echo-request
	nsbg "$rs_ns" python3 "$peer" serve "$work/live.crt" "$work/live.key" >"$log.srv" 2>&1
	for i in $(seq 1 100); do
		grep -q serving "$log.srv" && break
		sleep 0.1
	done
	if ! suri_start "$rr_ns" "$backend" "$log.suri" "$q" --runmode "$runmode"; then
		fail "suricata did not start on queue $q" "$log.suri" 30
		router_del
		end
		return
	fi
	nsx "$rc_ns" timeout 60 python3 "$peer" get https://10.2.0.2:8443/live-tls nfqb.test >"$log.tls" 2>&1
	nsx "$rc_ns" timeout 60 python3 "$peer" get http://10.2.0.2:8080/live-http >"$log.http" 2>&1
	nsx "$rc_ns" timeout 30 python3 "$peer" ping 10.2.0.2 10 >"$log.ping" 2>&1
	echo_in=$(nsx "$rs_ns" iptables -vnxL INPUT | awk '/icmptype 8/ { print $1; exit }')
	suri_stop || fail "suricata exited with $?" "$log.suri" 20
	kill "$bg_pid" 2>/dev/null
	router_del
	echo "    https: $(val bytes "$log.tls") bytes (status $(val status "$log.tls")), http: $(val bytes "$log.http") bytes (status $(val status "$log.http"));" \
	     "echo replies $(val replies "$log.ping"), requests at the server ${echo_in:-?};" \
	     "suricata: accepted $(sum_verdicts Accepted "$log.suri"), dropped $(sum_verdicts Dropped "$log.suri");" \
	     "alerts: tls $(grep -c 'live TLS' "$log.suri.d/fast.log" 2>/dev/null)," \
	     "http $(grep -c 'live HTTP' "$log.suri.d/fast.log" 2>/dev/null)," \
	     "echo $(grep -c 'live echo' "$log.suri.d/fast.log" 2>/dev/null);" \
	     "tcp.invalid_checksum $(suri_stat tcp.invalid_checksum "$log.suri")"
	[ "$backend" = nfqb ] && nfqb_lines "$log.suri"
	if [ "$backend" = nfqb ]; then
		expect "HTTPS bytes" "$(val bytes "$log.tls")" -eq 65536
		expect "HTTP bytes" "$(val bytes "$log.http")" -eq 65536
		expect "echo replies" "$(val replies "$log.ping")" -eq 0
		expect "echo requests at the server" "${echo_in:-1}" -eq 0
		# the 10 echo requests and nothing else (a TCP packet taken
		# for a bad one is dropped too, as a stream error)
		expect "suricata Dropped" "$(sum_verdicts Dropped "$log.suri")" -eq 10
		expect "suricata Accepted" "$(sum_verdicts Accepted "$log.suri")" -ge 20
		expect "TLS alerts" "$(grep -c 'live TLS' "$log.suri.d/fast.log" 2>/dev/null)" -ge 1
		expect "HTTP alerts" "$(grep -c 'live HTTP' "$log.suri.d/fast.log" 2>/dev/null)" -ge 1
		expect "tcp.invalid_checksum" "$(suri_stat tcp.invalid_checksum "$log.suri")" -eq 0
	fi
	end
}

# bypass_queued NS PORT: packets the NFQUEUE rule for UDP PORT has queued
bypass_queued() {
	nsx "$1" iptables -vnxL OUTPUT |
		awk -v p="dpt:$2" '/NFQUEUE/ && $0 ~ p { print $1; exit }'
}

start=$(date +%s)
echo "test-suricata: $("$suricata" -V 2>&1 | head -n 1), libnfq-batch from ${libdir:-$prefix/nfqb/lib}, $(uptime | sed 's/.*load/load/')"
want enforce_udp && for rm in autofp workers; do
	enforce_udp nfq "$rm"
	enforce_udp nfqb "$rm"
done
want replace && {
	replace_case nfq workers
	replace_case nfqb workers
	replace_case nfqb autofp
}
want tcp_lo && tcp_case lo
want tcp_router && tcp_case router
want repeat && { repeat_case nfq; repeat_case nfqb; }
want mark && { mark_case nfq; mark_case nfqb; }
want bypass && { bypass_case nfq; bypass_case nfqb; }
want route && { route_case nfq; route_case nfqb; }
want failopen && { failopen_case nfq; failopen_case nfqb; }
want queues && {
	queues_case nfq range workers
	queues_case nfqb range workers
	queues_case nfqb list autofp
}
want start_traffic && { start_traffic nfq; start_traffic nfqb; }
want restart && { restart_case nfq; restart_case nfqb; }
want reload && { reload_case nfq; reload_case nfqb; }
want live && for rm in autofp workers; do
	live_case nfq "$rm"
	live_case nfqb "$rm"
done

echo "test-suricata: $checks checks, $failures failed, $(( $(date +%s) - start )) s"
pct=100
[ "$checks" -gt 0 ] && pct=$(( (checks - failures) * 100 / checks ))
echo "$pct%: Checks: $checks, Failures: $failures, Errors: 0"
[ "$failures" -eq 0 ]
