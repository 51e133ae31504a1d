#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Suricata inline on NFQUEUE, side by side in one run, on Suricata 7.0.10
# or 8.0.7 (whichever build runs; its version picks the default columns):
# our build of the release with its series of integrations/suricata/ on
# its stock libnetfilter_queue backend, the same binary on libnfq-batch,
# and the references: on 7.0, Debian's own binary (package suricata from
# bookworm-backports, libnetfilter_queue); on 8.0, which Debian 12 does not
# ship, the stock backend of the same build, and Suricata's own AF_PACKET
# IPS mode on the router measures. Each measure runs every column in turn
# (the order rotating from one repetition to the next), repeated; the
# table gives medians and the ratios of nfqb to the references. Every
# Suricata runs in the workers runmode (one thread receives, inspects and
# gives the verdict: the only runmode where nfq.batchcount works on
# libnetfilter_queue), -k none, with tests/suricata/lib.sh's minimal
# suricata.yaml (stats.log on) and rules (a content rule on the UDP and TCP
# ports measured). Suricata's CPU is its process's user + system time
# (/proc/PID/stat, every thread) over the measured interval.
#
#   tests/suricata/bench-suricata.sh BUILD_DIR [-r REPS] [-t SECONDS]
#                                    [-m MEASURES] [-c COLUMNS]
#
# BUILD_DIR: a libnfq-batch build tree (lib/.libs/libnfq-batch.so; its
# tests/snort/snort-traffic when configured --with-daq, else it is built
# here from its source). Our Suricata: $NFQB_SURICATA_PREFIX, else
# tests/suricata/build-suricata.sh BUILD_DIR (its cache; with
# NFQB_SURICATA_VERSION=8.0 the 8.0.7 build). Debian's:
# $NFQB_SURICATA_DEB (default /usr/bin/suricata).
#
# Columns (-c; a suffix -bN: --set nfq.batchcount=N; default on 7.0 "deb
# deb-b20 nfq nfq-b20 nfqb", on 8.0 and later "nfq nfq-b20 nfqb afp"):
#   deb       Debian's binary
#   deb-b20   Debian's binary, nfq.batchcount 20
#   nfq       our build, --set nfq.backend=nfq (libnetfilter_queue)
#   nfq-b20   the same, nfq.batchcount 20
#   nfqb      our build, --set nfq.backend=nfqb (libnfq-batch)
#   afp       our build, --af-packet: AF_PACKET IPS mode (copy-mode ips,
#             the two interfaces each other's copy-iface, cluster_flow, one
#             thread each: $NFQB_BENCH_AFP_THREADS) between two veth
#             interfaces of a namespace with no address and no bridge, a
#             client namespace on one and a server namespace on the other
#             (one subnet, MTU 1500), the set-up of upstream's
#             qa/live/netns/afp-ips-netns-bridge.sh; on every one of the
#             four interfaces the checksum offloads and every offload that
#             makes packets larger than the MTU are off (ethtool -K: rx, tx,
#             sg, tso, gso, gro, lro), as Suricata's user guide asks for
#             AF_PACKET IPS. Only on tcp1_rt, tcp8_rt and evil_rt ("-"
#             elsewhere): the same traffic as through the router.
# Ratios: nfqb (else the last column) over deb and deb-b20 when there,
# else over nfq and nfq-b20, and over afp.
# Measures (-m, default all):
#   udp64     64-byte UDP datagrams on lo, as fast as one sender goes:
#             delivered pkt/s, Suricata CPU per delivered packet
#   tcp1_lo   iperf3, 1 flow, on lo (MTU 65536): Gbit/s, Suricata CPU s
#             per Gbit, and the share of the payload Suricata decoded
#             (stats.log: decoder.bytes less the packets cut at the
#             kernel's copy limit, decoder.event.ipv4.trunc_pkt, each
#             65531 bytes, less 52 bytes of headers per TCP packet, 66
#             with afp's Ethernet header, over the bytes iperf3
#             received): on lo TCP sends segments longer
#             than the kernel copies; libnetfilter_queue hands them over
#             cut, Suricata finds them invalid and inspects none of them;
#             nfqb has TCP send them again cut to size
#   tcp8_lo   the same, 8 flows
#   tcp1_rt   through a router namespace (veth, MTU 1500, Suricata on
#             FORWARD), 1 flow; afp: through the AF_PACKET bridge
#   tcp8_rt   the same, 8 flows
#   rr        UDP request/response on lo, 64 bytes, one at a time: p50,
#             p99 of the round trip, and the system calls of Suricata's
#             receive thread per round trip (perf stat of the
#             raw_syscalls:sys_enter tracepoint on that thread: the
#             thread that also inspects and gives the verdict)
#   evil_lo   a 16 MB TCP transfer on lo with EVIL at 8 MB (test-suricata's
#             tcp_lo): in how many repetitions EVIL arrived, MB received
#             (median)
#   evil_rt   the same through the router (afp: the AF_PACKET bridge)
# Each TCP run also prints (stderr) Suricata's largest packet
# (decoder.max_pkt_size) and its truncation counters; afp's runs its
# capture counters (capture.kernel_packets, kernel_drops,
# afpacket.send_errors).
#
# What afp does with a large packet: in IPS mode Suricata 8.0.7 reads with
# TPACKET_V2 frames sized to the interface's MTU, without the kernel's
# defrag, and sends every packet it does not drop to the peer interface as
# it read it; a longer packet would be cut to the frame
# (decoder.event.afpacket.trunc_pkt). With the offloads off none is
# longer: observed in 2 s runs of tcp1_rt, tcp8_rt and evil_rt on 8.0.7,
# decoder.max_pkt_size 1514 (Ethernet included), every truncation counter
# (afpacket.trunc_pkt, ipv4.trunc_pkt) 0, no afpacket.send_errors; in
# tcp8_rt the receive ring overflowed (capture.kernel_drops 5399 of 336807
# and 1678 of 328110 in two runs; iperf3 counted 5390 and 1681
# retransmissions), not in tcp1_rt. With the checksum offloads alone off
# ("rx off tx off", as upstream's script has it), or with GRO on besides:
# still 1514 at most, no truncation. With veth's defaults no TCP
# connection got through at all: Suricata sends the client's SYN on with
# the checksum the client's veth left to be filled in, and the server
# counts every one (TcpInCsumErrors); ICMP echo passes.
#
# Environment: NFQB_BENCH_KEEP=1 keeps the temporary directory (every
# Suricata's console, stats.log and fast.log); NFQB_BENCH_ARGS: more
# Suricata arguments for every run (e.g. "--set nfq.batchcount=10");
# NFQB_BENCH_AFP_THREADS: afp's threads per interface (default 1);
# NFQB_BENCH_AFP_ETHTOOL: the ethtool -K arguments of afp's four
# interfaces instead of the offloads off ("" leaves veth's defaults; "rx
# off tx off" turns off the checksum offloads alone), to see what large
# packets do to it.
# Needs root, iperf3, ip, iptables, nsenter, and ethtool for afp (all
# installed by tests/suricata/deps.sh). Every run is bounded in time
# (iperf3 under timeout, every receiver with its own limit, Suricata
# stopped within 30 s).
set -u

usage="usage: bench-suricata.sh BUILD_DIR [-r REPS] [-t SECONDS] [-m MEASURES] [-c COLUMNS]"
build=${1:?$usage}
shift
reps=3
secs=4
measures="udp64 tcp1_lo tcp8_lo tcp1_rt tcp8_rt rr evil_lo evil_rt"
columns=
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
afp_threads=${NFQB_BENCH_AFP_THREADS:-1}
case $afp_threads in
''|*[!0-9]*|0) echo "bench-suricata: NFQB_BENCH_AFP_THREADS=$afp_threads: a number from 1" >&2; exit 2 ;;
esac
[ -e "$build/lib/.libs/libnfq-batch.so" ] ||
	{ echo "bench-suricata: no lib/.libs/libnfq-batch.so in $build" >&2; exit 1; }
prefix=${NFQB_SURICATA_PREFIX:-$("$top/tests/suricata/build-suricata.sh" "$build")} || exit 1
suricata=$prefix/bin/suricata
[ -x "$suricata" ] || { echo "bench-suricata: no $suricata" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/lib/.libs:$prefix/nfqb/lib"
# The release decides the default columns: Debian 12 ships 7.0.10 (the
# deb columns); on 8.0 and later the stock backend of the same build and
# AF_PACKET IPS are the references.
suri_version=$("$suricata" -V 2>&1 | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1)
[ -n "$suri_version" ] || { echo "bench-suricata: $suricata -V says no version" >&2; exit 1; }
if [ -z "$columns" ]; then
	case $suri_version in
	[0-7].*) columns="deb deb-b20 nfq nfq-b20 nfqb" ;;
	*) columns="nfq nfq-b20 nfqb afp" ;;
	esac
fi
for c in $columns; do
	case $c in
	deb|deb-b[0-9]*|nfq|nfq-b[0-9]*|nfqb|nfqb-b[0-9]*|afp) ;;
	*) echo "bench-suricata: unknown column $c" >&2; exit 2 ;;
	esac
done
case " $columns " in
*" afp "*)
	command -v ethtool >/dev/null || { echo "bench-suricata: needs ethtool (afp)" >&2; exit 1; }
	"$suricata" --build-info 2>&1 | grep -q 'AF_PACKET support: *yes' ||
		{ echo "bench-suricata: $suricata has no AF_PACKET support (afp)" >&2; exit 1; } ;;
esac
case " $columns " in
*" deb "*|*" deb-"*)
	[ -x "${NFQB_SURICATA_DEB:-/usr/bin/suricata}" ] || {
		echo "bench-suricata: no Debian suricata at ${NFQB_SURICATA_DEB:-/usr/bin/suricata}" \
		     "(apt-get install -t bookworm-backports suricata; or -c without deb columns)" >&2
		exit 1
	} ;;
esac

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
# afp: the same yaml, and the two interfaces of the bridge namespace
# (afp_setup) in IPS mode, each the other's copy-iface
afp_yaml=$work/suricata-afp.yaml
cp "$yaml" "$afp_yaml"
cat >>"$afp_yaml" <<EOF
af-packet:
  - interface: $tag-a1
    copy-iface: $tag-a2
    cluster-id: 91
  - interface: $tag-a2
    copy-iface: $tag-a1
    cluster-id: 92
  - interface: default
    threads: $afp_threads
    cluster-type: cluster_flow
    copy-mode: ips
EOF

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# afp_setup NAME: the AF_PACKET bridge: namespaces $tag-NAME-c (the
# client, $tag-a0 10.3.0.1/24), $tag-NAME-b (the bridge: $tag-a1 facing
# the client, $tag-a2 facing the server, no address) and $tag-NAME-s (the
# server, $tag-a3 10.3.0.2/24), veth pairs a0-a1 and a2-a3 at MTU 1500;
# the offloads off on all four and checked (with NFQB_BENCH_AFP_ETHTOOL
# set, its ethtool -K arguments instead, not checked). Sets ac_ns, ab_ns,
# as_ns.
afp_offloads_off="rx off tx off sg off tso off gso off gro off lro off"
afp_offloads=${NFQB_BENCH_AFP_ETHTOOL-$afp_offloads_off}
afp_setup() {
	local ns dev on
	ac_ns=$(new_ns "$1-c") && ab_ns=$(new_ns "$1-b") &&
		as_ns=$(new_ns "$1-s") || return 1
	ip link add "$tag-a0" netns "$ac_ns" type veth peer name "$tag-a1" \
		netns "$ab_ns" &&
	ip link add "$tag-a2" netns "$ab_ns" type veth peer name "$tag-a3" \
		netns "$as_ns" || return 1
	while read -r ns dev; do
		# (lro is fixed off on veth: ethtool says it cannot change
		# it; what counts is the state read below)
		# shellcheck disable=SC2086
		[ -z "$afp_offloads" ] ||
			nsx "$ns" ethtool -K "$dev" $afp_offloads >/dev/null 2>&1
		if [ "$afp_offloads" = "$afp_offloads_off" ]; then
			on=$(nsx "$ns" ethtool -k "$dev" | awk -F': ' '
				/^(rx-checksumming|tx-checksumming|scatter-gather|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|large-receive-offload):/ &&
				$2 ~ /^on/ { printf " %s", $1 }')
			[ -z "$on" ] || {
				echo "bench-suricata: $dev: offloads still on:$on" >&2
				return 1
			}
		fi
		nsx "$ns" ip link set "$dev" up || return 1
	done <<EOF
$ac_ns $tag-a0
$ab_ns $tag-a1
$ab_ns $tag-a2
$as_ns $tag-a3
EOF
	nsx "$ac_ns" ip addr add 10.3.0.1/24 dev "$tag-a0" &&
	nsx "$as_ns" ip addr add 10.3.0.2/24 dev "$tag-a3"
}

afp_del() {
	ip netns del "$ac_ns" 2>/dev/null
	ip netns del "$ab_ns" 2>/dev/null
	ip netns del "$as_ns" 2>/dev/null
}

# afp_start NS LOG: Suricata in AF_PACKET IPS mode on NS's two interfaces
# ($afp_yaml), as suri_start starts the others (-k none, the same rules,
# LOG and LOG.d); returns once it said "Engine started", 1 if it exited or
# never got there. Sets suri_pid.
afp_start() {
	local ns=$1 log=$2
	mkdir -p "$log.d"
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$ns" "$suricata" -c "$afp_yaml" -S "$rules" \
		-k none -l "$log.d" --af-packet --runmode workers \
		${NFQB_BENCH_ARGS:-} >"$log" 2>&1 &
	suri_pid=$!
	pids+=("$suri_pid")
	wait_bound "$ns" "$suri_pid" 2400 "" 'Engine started' "$log"
}

# bench_start NS COLUMN LOG Q: the column's Suricata on queue Q in NS (afp:
# on NS's AF_PACKET bridge, Q unused)
bench_start() {
	local ns=$1 col=$2 log=$3 q=$4 backend args=(--runmode workers)
	case $col in
	afp) afp_start "$ns" "$log"; return ;;
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

# large_details COLUMN LOG: (stderr) the largest packet Suricata decoded,
# its truncation counters, afp's capture counters
large_details() {
	local more=
	[ "$1" = afp ] && more=", capture: kernel_packets $(suri_stat capture.kernel_packets "$2"), kernel_drops $(suri_stat capture.kernel_drops "$2"), afpacket.send_errors $(suri_stat capture.afpacket.send_errors "$2")"
	echo "    $1: max_pkt_size $(suri_stat decoder.max_pkt_size "$2")," \
	     "trunc_pkt ipv4 $(suri_stat decoder.event.ipv4.trunc_pkt "$2")" \
	     "afpacket $(suri_stat decoder.event.afpacket.trunc_pkt "$2")$more" >&2
}

# tcp_iperf NS_SERVER NS_CLIENT ADDR FLOWS SURICATA_NS COLUMN Q: "Gbit/s,
# Suricata CPU s per Gbit, % of the payload decoded"
tcp_iperf() {
	local sns=$1 cns=$2 addr=$3 flows=$4 suri_ns=$5 col=$6 q=$7
	local log=$work/tcp-$6 c0 c1 gbps bytes dbytes dtcp trunc hdr=52
	[ "$col" = afp ] && hdr=66	# and Ethernet's
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
	large_details "$col" "$log.suri"
	[ -n "$gbps" ] || { echo "- - -"; return; }
	awk -v g="$gbps" -v c=$((c1 - c0)) -v hz="$hz" -v s="$secs" \
		-v b="${bytes:-0}" -v d="$dbytes" -v t="$trunc" -v p="$dtcp" -v h="$hdr" \
		'BEGIN { pay = d - 65531 * t - h * p; if (pay < 0) pay = 0
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
	if [ "$1" = afp ]; then
		afp_setup ab || { afp_del; echo "- - -"; return; }
		tcp_iperf "$as_ns" "$ac_ns" 10.3.0.2 "$2" "$ab_ns" afp 0
		afp_del
		return
	fi
	router_setup rt "$q" || { router_del; echo "- - -"; return; }
	tcp_iperf "$rs_ns" "$rc_ns" 10.2.0.2 "$2" "$rr_ns" "$1" "$q"
	router_del
}

# worker_tid PID: the thread id of Suricata's receive thread (W-NFQ#Q,
# which in the workers runmode also inspects and gives the verdicts)
worker_tid() {
	local t
	for t in /proc/"$1"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		W-NFQ*) basename "$t"; return 0 ;;
		esac
	done
	return 1
}

m_rr() {
	local ns q=$((3500 + reps_i)) log=$work/rr-$1 echo_pid tid perf_pid= calls done
	ns=$(lo_ns "r-$1" "$q") || { echo "- - -"; return; }
	bench_start "$ns" "$1" "$log.suri" "$q" || { echo "- - -"; ip netns del "$ns"; return; }
	nsbg "$ns" "$traffic" echo 9999 $((secs * 1000 + 20000)) >/dev/null 2>&1
	echo_pid=$bg_pid
	sleep 0.3
	# the receive thread's system calls over the round trips (perf's
	# syscall tracepoint: a count in the kernel, no tracing stop)
	if command -v perf >/dev/null && tid=$(worker_tid "$suri_pid"); then
		perf stat -e raw_syscalls:sys_enter -t "$tid" -x, -o "$log.perf" \
			>/dev/null 2>&1 &
		perf_pid=$!
		sleep 0.2
	fi
	ip netns exec "$ns" timeout $((secs + 30)) "$traffic" rr 127.0.0.1 9999 \
		20000 $((secs * 1000)) >"$log.out" 2>&1
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null
		wait "$perf_pid" 2>/dev/null
	fi
	suri_stop >/dev/null
	kill "$echo_pid" 2>/dev/null
	wait "$echo_pid" 2>/dev/null
	ip netns del "$ns"
	calls=$(awk -F, '$3 ~ /raw_syscalls:sys_enter/ { print $1 }' "$log.perf" 2>/dev/null)
	done=$(val done "$log.out")
	echo "$(val p50_us "$log.out" | grep . || echo -) $(val p99_us "$log.out" | grep . || echo -)" \
	     "$(awk -v c="${calls:-}" -v n="${done:-0}" 'BEGIN {
		if (c ~ /^[0-9]+$/ && n > 0) printf "%.2f", c / n; else print "-" }')"
}

# m_evil COLUMN WHERE: "EVIL arrived (1) or not (0), MB received"
m_evil() {
	local backend args=(--runmode workers) evil bytes
	if [ "$1" = afp ]; then
		m_evil_afp
		return
	fi
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

# m_evil_afp: m_evil through the AF_PACKET bridge
m_evil_afp() {
	local evil bytes
	log=$work/tcp-afp-8000000
	afp_setup eb || { afp_del; echo "- -"; return; }
	afp_start "$ab_ns" "$log.suri" || { afp_del; echo "- -"; return; }
	tcp_transfer "$as_ns" "$ac_ns" 10.3.0.2 8000000 "$log"
	suri_stop >/dev/null
	afp_del
	large_details afp "$log.suri"
	evil=$(val evil "$log.rx")
	bytes=$(val bytes "$log.rx")
	[ -n "$evil" ] && [ -n "$bytes" ] || { echo "- -"; return; }
	awk -v e="$evil" -v b="$bytes" 'BEGIN { printf "%d %.2f\n", (e > 0), b / 1e6 }'
}

# applies MEASURE COLUMN: does the column run that measure (afp: only
# where the router is, as the AF_PACKET bridge)
applies() {
	[ "$2" != afp ] && return 0
	case $1 in tcp1_rt|tcp8_rt|evil_rt) return 0 ;; esac
	return 1
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
ours="nfq, nfqb"
case " $columns " in *" afp "*) ours="nfq, nfqb, afp" ;; esac
echo "  $ours: $suricata, $("$suricata" -V 2>&1 | head -n 1)$("$suricata" --build-info 2>&1 | hs);" \
     "libnfq-batch $(git -C "$top" describe --always --dirty 2>/dev/null) from $build/lib/.libs"
case " $columns " in
*" afp "*) echo "  afp: AF_PACKET IPS, $afp_threads thread(s) per interface," \
	"ethtool -K ${afp_offloads:-(none: the veth defaults)}" ;;
esac
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
			applies "$m" "$col" || continue
			r=$(run_measure "$m" "$col")
			echo "$col $r" >>"$work/res-$m"
			echo "  $m rep $reps_i $col: $r" >&2
		done
	done
done
echo "load after: $(uptime | sed 's/.*load/load/')"

# the ratios: nfqb (or the last column) over the references: Debian's
# binary when it runs, else our build's stock backend; and afp
last=${columns##* }
case " $columns " in *" nfqb "*) last=nfqb ;; esac
refs="nfq nfq-b20"
case " $columns " in *" deb "*|*" deb-b20 "*) refs="deb deb-b20" ;; esac
ratio_cols=
for c in $refs afp; do
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
	rr) units="p50 us|p99 us|syscalls/round trip" ;;
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
				v[$c]="$(echo "$vals" | awk 'NF { s += $1; n++ } END { if (n) printf "%d of %d", s, n; else print "-" }')"
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
