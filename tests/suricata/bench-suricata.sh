#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Suricata 7.0.10 inline on NFQUEUE, side by side in one run: Debian's own
# binary (package suricata from bookworm-backports, libnetfilter_queue),
# our build of the same release with integrations/suricata/*.patch on its
# stock libnetfilter_queue backend, and the same binary on libnfq-batch.
# Each measure runs every column in turn (the order rotating from one
# repetition to the next), repeated; the table gives medians and the
# ratios of nfqb to Debian's binary. Every Suricata runs in the workers
# runmode (one thread receives, inspects and gives the verdict: the only
# runmode where nfq.batchcount works on libnetfilter_queue), -k none, with
# tests/suricata/lib.sh's minimal suricata.yaml (stats.log on) and rules
# (a content rule on the UDP and TCP ports measured). Suricata's CPU is
# its process's user + system time (/proc/PID/stat, every thread) over
# the measured interval.
#
#   tests/suricata/bench-suricata.sh BUILD_DIR [-r REPS] [-t SECONDS]
#                                    [-m MEASURES] [-c COLUMNS]
#
# BUILD_DIR: a libnfq-batch build tree (lib/.libs/libnfq-batch.so; its
# tests/snort/snort-traffic when configured --with-daq, else it is built
# here from its source). Our Suricata: $NFQB_SURICATA_PREFIX, else
# tests/suricata/build-suricata.sh BUILD_DIR (its cache). Debian's:
# $NFQB_SURICATA_DEB (default /usr/bin/suricata).
#
# Columns (-c, default all; a suffix -bN: --set nfq.batchcount=N):
#   deb       Debian's binary
#   deb-b20   Debian's binary, nfq.batchcount 20
#   nfq       our build, --set nfq.backend=nfq (libnetfilter_queue)
#   nfq-b20   the same, nfq.batchcount 20
#   nfqb      our build, --set nfq.backend=nfqb (libnfq-batch)
# Measures (-m, default all):
#   udp64     64-byte UDP datagrams on lo, as fast as one sender goes:
#             delivered pkt/s, Suricata CPU per delivered packet
#   tcp1_lo   iperf3, 1 flow, on lo (MTU 65536): Gbit/s, Suricata CPU s
#             per Gbit, and the share of the payload Suricata decoded
#             (stats.log: decoder.bytes less the packets cut at the
#             kernel's copy limit, decoder.event.ipv4.trunc_pkt, each
#             65531 bytes, less 52 bytes of headers per TCP packet, over
#             the bytes iperf3 received): on lo TCP sends segments longer
#             than the kernel copies; libnetfilter_queue hands them over
#             cut, Suricata finds them invalid and inspects none of them;
#             nfqb has TCP send them again cut to size
#   tcp8_lo   the same, 8 flows
#   tcp1_rt   through a router namespace (veth, MTU 1500, Suricata on
#             FORWARD), 1 flow
#   tcp8_rt   the same, 8 flows
#   rr        UDP request/response on lo, 64 bytes, one at a time: p50,
#             p99 of the round trip
#   evil_lo   a 16 MB TCP transfer on lo with EVIL at 8 MB (test-suricata's
#             tcp_lo): in how many repetitions EVIL arrived, MB received
#             (median)
#   evil_rt   the same through the router
#
# Environment: NFQB_BENCH_KEEP=1 keeps the temporary directory (every
# Suricata's console, stats.log and fast.log); NFQB_BENCH_ARGS: more
# Suricata arguments for every run (e.g. "--set nfq.batchcount=10").
# Needs root, iperf3, ip, iptables, nsenter. Every run is bounded in time
# (iperf3 under timeout, every receiver with its own limit, Suricata
# stopped within 30 s).
set -u

usage="usage: bench-suricata.sh BUILD_DIR [-r REPS] [-t SECONDS] [-m MEASURES] [-c COLUMNS]"
build=${1:?$usage}
shift
reps=3
secs=4
measures="udp64 tcp1_lo tcp8_lo tcp1_rt tcp8_rt rr evil_lo evil_rt"
columns="deb deb-b20 nfq nfq-b20 nfqb"
while getopts "r:t:m:c:" o; do
	case $o in
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	m) measures=${OPTARG//,/ } ;;
	c) columns=${OPTARG//,/ } ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
case $reps$secs in *[!0-9]*) echo "$usage" >&2; exit 2 ;; esac
[ "$reps" -ge 1 ] && [ "$secs" -ge 1 ] && [ "$secs" -le 60 ] ||
	{ echo "bench-suricata: -r at least 1, -t 1 to 60" >&2; exit 2; }

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd) || exit 1
[ "$(id -u)" -eq 0 ] || { echo "bench-suricata: needs root" >&2; exit 1; }
for c in iperf3 ip iptables nsenter; do
	command -v "$c" >/dev/null || { echo "bench-suricata: needs $c" >&2; exit 1; }
done
[ -e "$build/lib/.libs/libnfq-batch.so" ] ||
	{ echo "bench-suricata: no lib/.libs/libnfq-batch.so in $build" >&2; exit 1; }
prefix=${NFQB_SURICATA_PREFIX:-$("$top/tests/suricata/build-suricata.sh" "$build")} || exit 1
suricata=$prefix/bin/suricata
[ -x "$suricata" ] || { echo "bench-suricata: no $suricata" >&2; exit 1; }
case " $columns " in
*" deb "*|*" deb-"*)
	[ -x "${NFQB_SURICATA_DEB:-/usr/bin/suricata}" ] || {
		echo "bench-suricata: no Debian suricata at ${NFQB_SURICATA_DEB:-/usr/bin/suricata}" \
		     "(apt-get install -t bookworm-backports suricata; or -c without deb columns)" >&2
		exit 1
	} ;;
esac
export LD_LIBRARY_PATH="$build/lib/.libs:$prefix/nfqb/lib"

tag=nfqbs$$
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-bench-suricata.XXXXXX")
pids=()
. "$top/tests/suricata/lib.sh"
trap 'snort_lib_cleanup; [ "${NFQB_BENCH_KEEP:-0}" = 1 ] && echo "bench-suricata: kept $work" >&2 || rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q xt_NFQUEUE 2>/dev/null

traffic=${NFQB_TRAFFIC:-$build/tests/snort/snort-traffic}
if [ ! -x "$traffic" ]; then
	traffic=$work/snort-traffic
	suri_traffic_build "$traffic" ||
		{ cat "$traffic.log" >&2; echo "bench-suricata: snort-traffic does not build" >&2; exit 1; }
fi

yaml=$work/suricata.yaml
write_suricata_yaml "$yaml" stats
rules=$work/rules
write_suricata_rules "$rules"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# bench_start NS COLUMN LOG Q: the column's Suricata on queue Q in NS
bench_start() {
	local ns=$1 col=$2 log=$3 q=$4 backend args=(--runmode workers)
	case $col in
	deb|deb-*) backend=default ;;
	nfqb|nfqb-*) backend=nfqb ;;
	nfq|nfq-*) backend=nfq ;;
	*) echo "bench-suricata: unknown column $col" >&2; return 1 ;;
	esac
	case $col in
	*-b[0-9]*) args+=(--set nfq.batchcount="${col##*-b}") ;;
	esac
	# shellcheck disable=SC2086
	suri_start "$ns" "$backend" "$log" "$q" "${args[@]}" ${NFQB_BENCH_ARGS:-}
}

# lo_ns NAME Q: a namespace whose lo traffic to UDP 9990-9999 and TCP 5201
# (iperf3, both directions) goes to queue Q
lo_ns() {
	local ns q=$2
	ns=$(new_ns "$1") || return 1
	# (a failing rule would let the traffic by Suricata: stop there)
	nsx "$ns" iptables -A OUTPUT -p udp --dport 9990:9999 -j NFQUEUE \
		--queue-num "$q" &&
	nsx "$ns" iptables -A OUTPUT -p tcp --dport 5201 -j NFQUEUE --queue-num "$q" &&
	nsx "$ns" iptables -A OUTPUT -p tcp --sport 5201 -j NFQUEUE --queue-num "$q" ||
		{ echo "bench-suricata: iptables failed" >&2; return 1; }
	echo "$ns"
}

# Each measure: COLUMN -> prints its values (see the table's units), "-"
# for what failed.

# udp_flood NS COLUMN Q: "pkt/s, Suricata CPU us per delivered packet"
udp_flood() {
	local ns=$1 col=$2 q=$3 log=$work/udp-$2 c0 c1 t0 n span tx count=$((secs * 150000))
	bench_start "$ns" "$col" "$log.suri" "$q" || { echo "- -"; return; }
	nsbg "$ns" "$traffic" udp-recv 9990 1000 $((secs * 4000 + 20000)) >"$log.rx" 2>&1
	sleep 0.3
	c0=$(cpu_ticks "$suri_pid")
	t0=$(now_ms)
	nsbg "$ns" "$traffic" udp-send 127.0.0.1 9990 "$count" 0 >/dev/null 2>&1
	tx=$bg_pid
	while ! grep -q '^span_ms' "$log.rx" 2>/dev/null; do
		sleep 0.05
		[ $(( $(now_ms) - t0 )) -gt $((secs * 4000 + 30000)) ] && break
	done
	c1=$(cpu_ticks "$suri_pid")
	suri_stop >/dev/null
	kill "$tx" 2>/dev/null
	wait "$tx" 2>/dev/null
	n=$(val distinct "$log.rx")
	span=$(val span_ms "$log.rx")
	[ "${span:-0}" -gt 0 ] && [ "${n:-0}" -gt 0 ] || { echo "- -"; return; }
	# pkt/s over the receive span; CPU microseconds per packet (the CPU
	# of the whole run, the receiver's idle tail included: 1 s of quiet)
	awk -v n="$n" -v ms="$span" -v c=$((c1 - c0)) -v hz="$hz" \
		'BEGIN { printf "%.0f %.3f\n", n * 1000 / ms, c / hz * 1e6 / n }'
}

m_udp64() {
	local ns q=$((3100 + reps_i))
	ns=$(lo_ns "u-$1" "$q") || { echo "- -"; return; }
	udp_flood "$ns" "$1" "$q"
	ip netns del "$ns"
}

# tcp_iperf NS_SERVER NS_CLIENT ADDR FLOWS SURICATA_NS COLUMN Q: "Gbit/s,
# Suricata CPU s per Gbit, % of the payload decoded"
tcp_iperf() {
	local sns=$1 cns=$2 addr=$3 flows=$4 suri_ns=$5 col=$6 q=$7
	local log=$work/tcp-$6 c0 c1 gbps bytes dbytes dtcp trunc
	bench_start "$suri_ns" "$col" "$log.suri" "$q" || { echo "- - -"; return; }
	nsbg "$sns" timeout $((secs + 40)) iperf3 -s -1 >/dev/null 2>&1
	sleep 0.3
	c0=$(cpu_ticks "$suri_pid")
	ip netns exec "$cns" timeout $((secs + 30)) iperf3 -c "$addr" -t "$secs" \
		-P "$flows" -J >"$log.json" 2>&1
	c1=$(cpu_ticks "$suri_pid")
	suri_stop >/dev/null
	gbps=$(awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ {
		gsub(/[^0-9.e+]/, "", $2); print $2 / 1e9; exit }' "$log.json")
	bytes=$(awk '/"sum_received"/ { f = 1 } f && /"bytes"/ {
		gsub(/[^0-9]/, "", $2); print $2; exit }' "$log.json")
	dbytes=$(suri_stat decoder.bytes "$log.suri")
	dtcp=$(suri_stat decoder.tcp "$log.suri")
	trunc=$(suri_stat decoder.event.ipv4.trunc_pkt "$log.suri")
	[ -n "$gbps" ] || { echo "- - -"; return; }
	awk -v g="$gbps" -v c=$((c1 - c0)) -v hz="$hz" -v s="$secs" \
		-v b="${bytes:-0}" -v d="$dbytes" -v t="$trunc" -v p="$dtcp" \
		'BEGIN { pay = d - 65531 * t - 52 * p; if (pay < 0) pay = 0
			printf "%.2f %.4f %.1f\n", g, (g > 0 ? c / hz / (g * s) : 0),
			(b > 0 ? 100 * pay / b : 0) }'
}

m_tcp_lo() {
	local ns q=$((3300 + reps_i))
	ns=$(lo_ns "t-$1" "$q") || { echo "- - -"; return; }
	tcp_iperf "$ns" "$ns" 127.0.0.1 "$2" "$ns" "$1" "$q"
	ip netns del "$ns"
}

m_tcp_rt() {
	local q=$((3400 + reps_i))
	router_setup rt "$q" || { router_del; echo "- - -"; return; }
	tcp_iperf "$rs_ns" "$rc_ns" 10.2.0.2 "$2" "$rr_ns" "$1" "$q"
	router_del
}

m_rr() {
	local ns q=$((3500 + reps_i)) log=$work/rr-$1 echo_pid
	ns=$(lo_ns "r-$1" "$q") || { echo "- -"; return; }
	bench_start "$ns" "$1" "$log.suri" "$q" || { echo "- -"; ip netns del "$ns"; return; }
	nsbg "$ns" "$traffic" echo 9999 $((secs * 1000 + 20000)) >/dev/null 2>&1
	echo_pid=$bg_pid
	sleep 0.3
	ip netns exec "$ns" timeout $((secs + 30)) "$traffic" rr 127.0.0.1 9999 \
		20000 $((secs * 1000)) >"$log.out" 2>&1
	suri_stop >/dev/null
	kill "$echo_pid" 2>/dev/null
	wait "$echo_pid" 2>/dev/null
	ip netns del "$ns"
	echo "$(val p50_us "$log.out" | grep . || echo -) $(val p99_us "$log.out" | grep . || echo -)"
}

# m_evil COLUMN WHERE: "EVIL arrived (1) or not (0), MB received"
m_evil() {
	local backend args=(--runmode workers) evil bytes
	case $1 in
	deb|deb-*) backend=default ;;
	nfqb|nfqb-*) backend=nfqb ;;
	*) backend=nfq ;;
	esac
	case $1 in
	*-b[0-9]*) args+=(--set nfq.batchcount="${1##*-b}") ;;
	esac
	# shellcheck disable=SC2086
	tcp_label=$1 tcp_run "$backend" "$2" 8000000 "${args[@]}" \
		${NFQB_BENCH_ARGS:-} >"$work/evil-$2-$1.out" 2>&1 || { echo "- -"; return; }
	evil=$(val evil "$log.rx")
	bytes=$(val bytes "$log.rx")
	[ -n "$evil" ] && [ -n "$bytes" ] || { echo "- -"; return; }
	awk -v e="$evil" -v b="$bytes" 'BEGIN { printf "%d %.2f\n", (e > 0), b / 1e6 }'
}

run_measure() {	# MEASURE COLUMN
	case $1 in
	udp64) m_udp64 "$2" ;;
	tcp1_lo) m_tcp_lo "$2" 1 ;;
	tcp8_lo) m_tcp_lo "$2" 8 ;;
	tcp1_rt) m_tcp_rt "$2" 1 ;;
	tcp8_rt) m_tcp_rt "$2" 8 ;;
	rr) m_rr "$2" ;;
	evil_lo) m_evil "$2" lo ;;
	evil_rt) m_evil "$2" router ;;
	*) echo "bench-suricata: unknown measure $1" >&2; echo "-" ;;
	esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

hs() { grep -q 'Hyperscan support: *yes' && echo ", Hyperscan" || echo ", no Hyperscan"; }
echo "bench-suricata: $(date -u +%Y-%m-%d), $reps repetitions, $secs s each, $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
case " $columns " in
*" deb"*) echo "  deb: $deb_suricata, $("$deb_suricata" -V 2>&1 | head -n 1)$(env -u LD_LIBRARY_PATH "$deb_suricata" --build-info 2>&1 | hs)" \
	     "(package $(dpkg-query -W -f='${Version}' suricata 2>/dev/null || echo ?))" ;;
esac
echo "  nfq, nfqb: $suricata, $("$suricata" -V 2>&1 | head -n 1)$("$suricata" --build-info 2>&1 | hs);" \
     "libnfq-batch $(git -C "$top" describe --always --dirty 2>/dev/null) from $build/lib/.libs"
for m in $measures; do
	: >"$work/res-$m"
	set -- $columns
	ncols=$#
	for reps_i in $(seq 1 "$reps"); do
		# rotate the order: each column comes first once in ncols reps
		order=
		for k in $(seq 0 $((ncols - 1))); do
			i=$(( (k + reps_i - 1) % ncols + 1 ))
			order="$order ${!i}"
		done
		for col in $order; do
			r=$(run_measure "$m" "$col")
			echo "$col $r" >>"$work/res-$m"
			echo "  $m rep $reps_i $col: $r" >&2
		done
	done
done
echo "load after: $(uptime | sed 's/.*load/load/')"

# the ratios: nfqb (or the last column) over these
last=${columns##* }
ratio_cols=
for c in deb deb-b20; do
	case " $columns " in *" $c "*) [ "$c" != "$last" ] && ratio_cols="$ratio_cols $c" ;; esac
done
printf '\n| measure | unit |'
for c in $columns; do printf ' %s |' "$c"; done
for c in $ratio_cols; do printf ' %s / %s |' "$last" "$c"; done
printf '\n|---|---|'
for c in $columns $ratio_cols; do printf -- '---|'; done
printf '\n'
for m in $measures; do
	case $m in
	udp64) units="pkt/s|CPU us/pkt" ;;
	tcp*) units="Gbit/s|CPU s/Gbit|% payload decoded" ;;
	rr) units="p50 us|p99 us" ;;
	evil*) units="EVIL arrived (runs)|MB received" ;;
	*) units="?" ;;
	esac
	ncol=$(echo "$units" | awk -F'|' '{ print NF }')
	for col in $(seq 2 $((ncol + 1))); do
		u=$(echo "$units" | cut -d'|' -f$((col - 1)))
		printf '| %s | %s |' "$m" "$u"
		declare -A v=()
		for c in $columns; do
			vals=$(awk -v n="$c" -v k="$col" '$1 == n && $k != "-" && $k != "" { print $k }' "$work/res-$m")
			if [ "$u" = "EVIL arrived (runs)" ]; then
				v[$c]="$(echo "$vals" | awk 'NF { s += $1; n++ } END { printf "%d of %d", s, n }')"
			else
				v[$c]=$(echo "$vals" | grep . | median)
			fi
			printf ' %s |' "${v[$c]}"
		done
		for c in $ratio_cols; do
			awk -v a="${v[$c]}" -v b="${v[$last]}" -v m="$m" 'BEGIN {
				if (m ~ /^evil/ || a == "-" || b == "-" || a + 0 <= 0) printf " - |"
				else printf " %.2f |", b / a }'
		done
		printf '\n'
		unset v
	done
done
