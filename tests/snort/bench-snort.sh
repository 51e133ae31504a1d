#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Snort 3 inline on daq_nfqb against the stock nfq module, side by side in
# one run: each measure runs both modules in turn (the order alternating
# from one repetition to the next), repeated; the table gives medians and
# the ratio nfqb / nfq.  Snort's CPU is its process's user + system time
# (/proc/PID/stat) over the measured interval.
#
#   tests/snort/bench-snort.sh BUILD_DIR [-r REPS] [-t SECONDS] [-m LIST] [-R]
#
# -R runs Snort and the traffic at nice -15 (iperf3's and the
# request/response clients too), for a machine with other load: less noise,
# and the other jobs still get their share.
#
# BUILD_DIR: a build configured --with-daq (its daq/.libs/daq_nfqb.so,
# lib/.libs/libnfq-batch.so and tests/snort/snort-traffic); Snort comes
# from tests/snort/build-snort.sh (its cache).  Measures (-m, default all):
#   udp64     64-byte UDP datagrams on lo, as fast as one sender goes:
#             delivered pkt/s, Snort CPU per delivered packet
#   tcp1_lo   iperf3, 1 flow, lo (MTU 65536): Gbit/s, Snort CPU s per
#             Gbit, and the share of the bytes Snort reassembled
#             (stream_tcp rebuilt_bytes): on lo TCP sends GSO packets of
#             up to 128 KiB, which the kernel cannot copy whole; the stock
#             module hands them to Snort cut, Snort discards them and
#             inspects nothing; daq_nfqb (gso=auto) has the kernel segment
#             them and Snort inspects the whole stream
#   tcp8_lo   the same, 8 flows
#             (gso=on no longer passes the long GSO packets uninspected:
#             it is gso=auto since the library's large-packet policy, so
#             the tcp1_lo_gso and tcp8_lo_gso measures are gone)
#   tcp1_rt   through a router namespace (veth, MTU 1500, Snort on FORWARD)
#   tcp8_rt   the same, 8 flows
#   rr        UDP request/response, 64 bytes, one at a time: p50, p99
#   z2        udp64 from 4 senders to 2 packet threads (-z 2, queues
#             --queue-balance): delivered pkt/s, CPU per packet
#   start     10 Snort starts while 20k datagrams/s arrive on a rule with
#             --queue-bypass: how many bound the queue, inspected traffic
#             and stopped with status 0 (a restart on a busy gateway)
# Needs root, iperf3.  Every run is bounded in time.
set -u

build=${1:?usage: bench-snort.sh BUILD_DIR [-r REPS] [-t SECONDS] [-m LIST]}
shift
reps=3
secs=4
measures="udp64 tcp1_lo tcp8_lo tcp1_rt tcp8_rt rr z2 start"
snort_prefix_cmd=
while getopts "r:t:m:R" o; do
	case $o in
	R) snort_prefix_cmd="nice -n -15" ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	m) measures=${OPTARG//,/ } ;;
	*) exit 2 ;;
	esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
prefix=${NFQB_SNORT_PREFIX:-$("$top/tests/snort/build-snort.sh")} || exit 1
snort=$prefix/bin/snort
conf=$prefix/etc/snort/snort.lua
traffic=$build/tests/snort/snort-traffic
our_dir=$build/daq/.libs
for f in "$snort" "$traffic" "$our_dir/daq_nfqb.so"; do
	[ -e "$f" ] || { echo "bench-snort: missing $f" >&2; exit 1; }
done
command -v iperf3 >/dev/null || { echo "bench-snort: needs iperf3" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/lib/.libs:$prefix/lib"

tag=nfqbb$$
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-bench-snort.XXXXXX")
. "$top/tests/snort/lib.sh"
snort_lib_init
trap 'snort_lib_cleanup; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

rules=$work/rules
write_rules "$rules"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# NFQB_BENCH_VARS="k=v ...": daq_nfqb's variables for every run of it
bench_start() {
	local module=$2 extra=() v
	if [ "$module" = nfqb ]; then
		for v in ${NFQB_BENCH_VARS:-}; do
			extra+=(--daq-var "$v")
		done
	fi
	snort_start "$@" "${extra[@]}"
}

# Each measure: MODULE -> prints "VALUE1 VALUE2" (see the table header).
lo_ns() {
	local ns q=$2 target
	ns=$(new_ns "$1")
	target="--queue-num $q"
	[ -n "${3:-}" ] && target="--queue-balance $q:$3"
	# (a failing rule would let the traffic by Snort: stop there)
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9990:9999 -j NFQUEUE \
		$target || { echo "bench-snort: iptables failed" >&2; exit 1; }
	nsx "$ns" iptables -A OUTPUT -p tcp --dport 5201 -j NFQUEUE --queue-num "$q"
	nsx "$ns" iptables -A OUTPUT -p tcp --sport 5201 -j NFQUEUE --queue-num "$q"
	echo "$ns"
}

udp_flood() {	# NS MODULE INPUT SENDERS [snort args]
	local ns=$1 module=$2 input=$3 senders=$4 log=$work/udp-$2 i c0 c1 t0 t1
	local count=$((secs * 150000 / senders)) tot=0 span=0
	shift 4
	bench_start "$ns" "$module" "$input" "$log.snort" "$@" || { echo "- -"; return; }
	for i in $(seq 0 $((senders - 1))); do
		nsbg "$ns" "$traffic" udp-recv $((9990 + i)) 1000 $((secs * 4000 + 20000)) \
			>"$log.rx$i" 2>&1
	done
	sleep 0.3
	c0=$(cpu_ticks "$snort_pid")
	t0=$(now_ms)
	for i in $(seq 0 $((senders - 1))); do
		nsbg "$ns" "$traffic" udp-send 127.0.0.1 $((9990 + i)) "$count" 0 \
			>/dev/null 2>&1
	done
	for i in $(seq 0 $((senders - 1))); do
		while ! grep -q '^span_ms' "$log.rx$i" 2>/dev/null; do
			sleep 0.05
			[ $(( $(now_ms) - t0 )) -gt $((secs * 4000 + 30000)) ] && break
		done
	done
	c1=$(cpu_ticks "$snort_pid")
	t1=$(now_ms)
	snort_stop >/dev/null
	for i in $(seq 0 $((senders - 1))); do
		tot=$((tot + $(val distinct "$log.rx$i")))
		local s
		s=$(val span_ms "$log.rx$i")
		[ "${s:-0}" -gt "$span" ] && span=$s
	done
	[ "$span" -gt 0 ] && [ "$tot" -gt 0 ] || { echo "- -"; return; }
	# pkt/s over the receive span; CPU microseconds per packet (the CPU
	# of the whole run, idle tail included: 1 s of quiet at most)
	awk -v n="$tot" -v ms="$span" -v c=$((c1 - c0)) -v hz="$hz" \
		'BEGIN { printf "%.0f %.3f\n", n * 1000 / ms, c / hz * 1e6 / n }'
}

m_udp64() {
	local ns q=$((3100 + reps_i))
	ns=$(lo_ns "u-$1" "$q")
	udp_flood "$ns" "$1" "$q" 1
	ip netns del "$ns"
}

m_z2() {
	local ns q=$((3200 + reps_i))
	ns=$(lo_ns "z-$1" "$q" $((q + 1)))
	udp_flood "$ns" "$1" "$q-$((q + 1))" 4 -z 2
	ip netns del "$ns"
}

# iperf3 NS_SERVER NS_CLIENT ADDR FLOWS SNORT_NS MODULE QUEUE [snort args]:
# "Gbit/s, Snort CPU s per Gbit, % of the bytes Snort reassembled"
tcp_iperf() {
	local sns=$1 cns=$2 addr=$3 flows=$4 snort_ns=$5 module=$6 q=$7
	local log=$work/tcp-$module c0 c1 gbps bytes rebuilt
	shift 7
	bench_start "$snort_ns" "$module" "$q" "$log.snort" "$@" ||
		{ echo "- - -"; return; }
	nsbg "$sns" iperf3 -s -1 >/dev/null 2>&1
	sleep 0.3
	c0=$(cpu_ticks "$snort_pid")
	$snort_prefix_cmd ip netns exec "$cns" timeout $((secs + 30)) iperf3 -c "$addr" -t "$secs" -P "$flows" \
		-J >"$log.json" 2>&1
	c1=$(cpu_ticks "$snort_pid")
	snort_stop >/dev/null
	gbps=$(awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ {
		gsub(/[^0-9.e+]/, "", $2); print $2 / 1e9; exit }' "$log.json")
	bytes=$(awk '/"sum_received"/ { f = 1 } f && /"bytes"/ {
		gsub(/[^0-9]/, "", $2); print $2; exit }' "$log.json")
	rebuilt=$(sstat stream_tcp rebuilt_bytes "$log.snort")
	[ -n "$gbps" ] || { echo "- - -"; return; }
	# Snort CPU seconds per Gbit received (the CPU of the transfer's
	# seconds), the share of it Snort reassembled (iperf3's control
	# connection is a few bytes more)
	awk -v g="$gbps" -v c=$((c1 - c0)) -v hz="$hz" -v s="$secs" \
		-v b="${bytes:-0}" -v r="${rebuilt:-0}" \
		'BEGIN { printf "%.2f %.4f %.1f\n", g, (g > 0 ? c / hz / (g * s) : 0),
			(b > 0 ? 100 * r / b : 0) }'
}

# m_tcp_lo MODULE FLOWS [daq_nfqb's variables]
m_tcp_lo() {
	local flows=$2 ns q=$((3300 + reps_i)) extra=()
	[ "$1" = nfqb ] && [ -n "${3:-}" ] && extra=(--daq-var "$3")
	ns=$(lo_ns "t-$1" "$q")
	tcp_iperf "$ns" "$ns" 127.0.0.1 "$flows" "$ns" "$1" "$q" "${extra[@]}"
	ip netns del "$ns"
}

m_tcp_rt() {
	local flows=$2 q=$((3400 + reps_i))
	router_setup rt "$q" || { echo "- - -"; return; }
	tcp_iperf "$rs_ns" "$rc_ns" 10.2.0.2 "$flows" "$rr_ns" "$1" "$q"
	router_del
}

m_rr() {
	local ns q=$((3500 + reps_i)) log=$work/rr-$1
	ns=$(lo_ns "r-$1" "$q")
	bench_start "$ns" "$1" "$q" "$log.snort" || { echo "- -"; ip netns del "$ns"; return; }
	nsbg "$ns" "$traffic" echo 9999 $((secs * 1000 + 20000)) >/dev/null 2>&1
	sleep 0.3
	$snort_prefix_cmd ip netns exec "$ns" "$traffic" rr 127.0.0.1 9999 20000 $((secs * 1000)) >"$log.out" 2>&1
	snort_stop >/dev/null
	ip netns del "$ns"
	echo "$(val p50_us "$log.out") $(val p99_us "$log.out")"
}

# m_start MODULE: "starts that worked" of 10 under 20k datagrams/s (the
# sender bounded to 120 s; both processes ended here: the caller's list of
# pids is not this subshell's)
m_start() {
	local ns q=$((3600 + reps_i)) log=$work/start-$1 i ok=0 rpid tpid
	ns=$(new_ns "s-$1")
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9999 -j NFQUEUE \
		--queue-num "$q" --queue-bypass ||
		{ echo "-"; ip netns del "$ns"; return; }
	nsbg "$ns" "$traffic" udp-recv 9999 3000 130000 >/dev/null 2>&1
	rpid=$bg_pid
	udp_stream "$ns" 2400000 20000 /dev/null
	for i in $(seq 1 10); do
		if bench_start "$ns" "$1" "$q" "$log.snort.$i"; then
			wait_verdicts "$ns" "$q" 10
			snort_stop >/dev/null &&
				[ "$(sstat daq analyzed "$log.snort.$i")" -gt 0 ] &&
				ok=$((ok + 1))
		else
			snort_stop >/dev/null 2>&1
		fi
	done
	kill "$tpid" "$rpid" 2>/dev/null
	wait "$tpid" "$rpid" 2>/dev/null
	ip netns del "$ns"
	echo "$ok"
}

run_measure() {	# MEASURE MODULE
	case $1 in
	udp64) m_udp64 "$2" ;;
	z2) m_z2 "$2" ;;
	tcp1_lo) m_tcp_lo "$2" 1 ;;
	tcp8_lo) m_tcp_lo "$2" 8 ;;
	tcp1_rt) m_tcp_rt "$2" 1 ;;
	tcp8_rt) m_tcp_rt "$2" 8 ;;
	rr) m_rr "$2" ;;
	start) m_start "$2" ;;
	esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-snort: $("$snort" -V 2>&1 | grep -o 'Version [0-9.]*' | head -n 1)," \
     "libnfq-batch $(git -C "$top" describe --always --dirty 2>/dev/null)," \
     "$reps repetitions, $secs s each, $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
for m in $measures; do
	: >"$work/res-$m"
	for reps_i in $(seq 1 "$reps"); do
		order="nfq nfqb"
		[ $((reps_i % 2)) -eq 0 ] && order="nfqb nfq"
		for mod in $order; do
			r=$(run_measure "$m" "$mod")
			echo "$mod $r" >>"$work/res-$m"
			echo "  $m rep $reps_i $mod: $r" >&2
		done
	done
done
echo "load after: $(uptime | sed 's/.*load/load/')"

printf '\n| measure | unit | nfq (stock) | nfqb | nfqb / nfq |\n|---|---|---|---|---|\n'
for m in $measures; do
	case $m in
	udp64|z2) units="pkt/s|Snort CPU us/pkt" ;;
	tcp*) units="Gbit/s|Snort CPU s/Gbit|% reassembled" ;;
	rr) units="p50 us|p99 us" ;;
	start) units="starts ok of 10" ;;
	esac
	ncol=$(echo "$units" | awk -F'|' '{ print NF }')
	for col in $(seq 2 $((ncol + 1))); do
		u=$(echo "$units" | cut -d'|' -f$((col - 1)))
		a=$(awk -v c="$col" '$1 == "nfq" && $c != "-" { print $c }' "$work/res-$m" | median)
		b=$(awk -v c="$col" '$1 == "nfqb" && $c != "-" { print $c }' "$work/res-$m" | median)
		ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + 0 > 0 && b != "-") printf "%.2f", b / a; else print "-" }')
		printf '| %s | %s | %s | %s | %s |\n' "$m" "$u" "$a" "$b" "$ratio"
	done
done
