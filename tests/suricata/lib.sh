# SPDX-License-Identifier: LGPL-2.1-or-later
# Shell helpers of test-suricata.sh and bench-suricata.sh (sourced, bash):
# Suricata 7.0.10 inline on NFQUEUE in network namespaces, as one of three
# backends:
#
#   nfq       our build (tests/suricata/build-suricata.sh), its stock
#             libnetfilter_queue backend (--set nfq.backend=nfq)
#   nfqb      our build, the libnfq-batch backend (--set nfq.backend=nfqb,
#             integrations/suricata/*.patch)
#   default   Debian's own binary (package suricata, bookworm-backports;
#             $deb_suricata, default /usr/bin/suricata): libnetfilter_queue,
#             run without LD_LIBRARY_PATH
#
# The caller sets: prefix (our Suricata's install prefix), suricata (its
# bin/suricata), work (a temporary directory), tag (a prefix for namespace
# and interface names, unique to the run), traffic (snort-traffic), pids=()
# (every process started here, killed by snort_lib_cleanup at exit), and
# may set deb_suricata. tests/snort/lib.sh comes with this file (nsx, nsbg,
# new_ns, val, queue_*, router_setup, the checks, lo_setup, run_rx).
. "$(dirname "${BASH_SOURCE[0]}")/../snort/lib.sh"

deb_suricata=${deb_suricata:-${NFQB_SURICATA_DEB:-/usr/bin/suricata}}

# suri_traffic_build OUT: snort-traffic built from its source with cc (for a
# build tree configured without the DAQ module, which has none); 1 if it
# does not build (the compiler's messages in OUT.log)
suri_traffic_build() {
	${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -o "$1" \
		"$(dirname "${BASH_SOURCE[0]}")/../snort/snort-traffic.c" 2>"$1.log"
}

# write_suricata_yaml FILE [stats]: a minimal suricata.yaml (fast.log for
# the alerts); with "stats", the engine's counters go to stats.log in the
# log directory (totals only; the last block is written at exit)
write_suricata_yaml() {
	local stats_on=no
	[ "${2:-}" = stats ] && stats_on=yes
	cat >"$1" <<EOF
%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "any"
    EXTERNAL_NET: "any"
  port-groups:
    HTTP_PORTS: "80"
classification-file: $prefix/etc/suricata/classification.config
reference-config-file: $prefix/etc/suricata/reference.config
max-pending-packets: 1024
logging:
  default-log-level: info
  outputs:
    - console:
        enabled: yes
outputs:
  - fast:
      enabled: yes
      filename: fast.log
      append: no
EOF
	[ "$stats_on" = yes ] && cat >>"$1" <<EOF
  - stats:
      enabled: yes
      filename: stats.log
      append: no
      totals: yes
      threads: no
EOF
	cat >>"$1" <<EOF
stats:
  enabled: $stats_on
EOF
	[ "$stats_on" = yes ] && echo "  interval: 600" >>"$1"
	cat >>"$1" <<EOF
unix-command:
  enabled: no
nfq:
  mode: accept
stream:
  memcap: 256mb
  inline: auto
  reassembly:
    memcap: 512mb
    depth: 0
EOF
}

# write_suricata_rules FILE [AGAIN]: drop: the packet and, on TCP, the rest
# of its flow (IPS mode): UDP datagrams holding EVIL (but to the replace and
# mark ports 9997, 9996), TCP to 9001 (test-suricata's and the bench's bulk
# transfers) and 5201 (the bench's iperf3) where EVIL shows; the flow bypass
# rule of UDP 9995 (every datagram matches it); with AGAIN other sids and
# messages (a reload's new rules)
write_suricata_rules() {
	local again=${2:+ again} s=100000${2:+1}
	cat >"$1" <<EOF
drop udp any any -> any ![9996,9997] (msg:"EVIL udp$again"; content:"EVIL"; sid:${s}1; rev:1;)
drop tcp any any -> any [9001,5201] (msg:"EVIL tcp$again"; content:"EVIL"; sid:${s}2; rev:1;)
alert udp any any -> any 9997 (msg:"EVIL replaced$again"; content:"EVIL"; replace:"GOOD"; sid:${s}3; rev:1;)
alert udp any any -> any 9996 (msg:"EVIL marked$again"; content:"EVIL"; nfq_set_mark:0x2/0x2; sid:${s}4; rev:1;)
alert udp any any -> any 9995 (msg:"bypass$again"; bypass; sid:${s}5; rev:1;)
EOF
}

# suri_start NS BACKEND LOG QUEUES [args...]: Suricata in NS on the queues
# QUEUES ("A" or "A:B" or "A,B": -q A -q B), BACKEND nfq, nfqb or default
# (see the top), with $yaml and $rules, logging to LOG (its console) and
# LOG.d (fast.log, stats.log); returns once it said "Engine started" and
# every queue is bound (120 s at most: a loaded machine), 1 if it exited
# or never got there. Checksums are not checked (-k none) unless the
# caller set suri_checksums=yes (then Suricata's default: checked). Sets suri_pid (Suricata's own: nsenter and env
# exec it) and suri_lib (the libnfq-batch.so it mapped, if any).
suri_start() {
	local ns=$1 backend=$2 log=$3 queues=$4 q qargs=() qlist
	local bin=$suricata run=() bargs=(--set nfq.backend="$backend") kargs=(-k none)
	shift 4
	[ "${suri_checksums:-no}" = yes ] && kargs=()
	if [ "$backend" = default ]; then
		bin=$deb_suricata
		run=(env -u LD_LIBRARY_PATH)
		bargs=()
	fi
	case $queues in
	*,*)	qlist=${queues//,/ }
		for q in $qlist; do qargs+=(-q "$q"); done ;;
	*:*)	qlist=$(seq "${queues%:*}" "${queues#*:}")
		qargs=(-q "$queues") ;;
	*)	qlist=$queues
		qargs=(-q "$queues") ;;
	esac
	mkdir -p "$log.d"
	nsenter --net="/run/netns/$ns" "${run[@]}" "$bin" -c "$yaml" -S "$rules" \
		"${kargs[@]}" -l "$log.d" "${qargs[@]}" \
		"${bargs[@]}" "$@" >"$log" 2>&1 &
	suri_pid=$!
	pids+=("$suri_pid")
	wait_bound "$ns" "$suri_pid" 2400 "$qlist" 'Engine started' "$log" || return 1
	suri_lib=$(grep -o '/[^ ]*libnfq-batch[^ ]*' "/proc/$suri_pid/maps" 2>/dev/null | head -n 1)
}

# suri_stop: SIGTERM, wait up to 30 s (then SIGKILL: status 124); returns
# Suricata's exit status.
suri_stop() {
	stop_pid "$suri_pid" 30 suricata
}

# sum_verdicts WORD LOG: the sum over receive threads of Suricata's exit
# line "Verdict: Accepted N, Dropped N, Replaced N" field WORD
sum_verdicts() {
	sed -n "s/.*Verdict: .*$1 \([0-9]*\).*/\1/p" "$2" |
		awk '{ s += $1 } END { print s + 0 }'
}

# nfqb_lines LOG: the backend's own exit lines, for the report
nfqb_lines() {
	grep -o 'libnfq-batch: .*' "$1" | sed 's/^/      /'
}

# nfqb_exit_count WHAT LOG: the sum over receive threads of the number
# after WHAT in the backend's exit line of the library's large-packet
# counters ("libnfq-batch: Truncated N (TCP GSO dropped to be resent N,
# other dropped uninspected N), GSO ..., MSS clamped N")
nfqb_exit_count() {
	grep 'libnfq-batch: Truncated' "$2" 2>/dev/null |
		sed -n "s/.*$1 \([0-9]*\).*/\1/p" |
		awk '{ s += $1 } END { print s + 0 }'
}

# suri_stat NAME LOG: the counter NAME in the last block of the stats.log
# in LOG.d (write_suricata_yaml FILE stats), 0 if it is not there (a
# counter at 0 is not written)
suri_stat() {
	awk -F'|' -v name="$1" '
		/^Date: / { v = 0 }
		{ gsub(/^ +| +$/, "", $1); gsub(/^ +| +$/, "", $3) }
		$1 == name { v = $3 }
		END { print v + 0 }' "$2.d/stats.log" 2>/dev/null || echo 0
}

# tcp_run BACKEND WHERE EVIL_AT [args...]: one transfer of TCP_BYTES (EVIL
# at EVIL_AT or -1) to TCP 9001 through Suricata (BACKEND, its args);
# WHERE: lo (one namespace, MTU 65536) or router (client, router and
# server namespaces, veth at MTU 1500, Suricata on FORWARD). Leaves the
# logs in $log.* (log=$work/tcp-WHERE-LABEL-EVIL_AT, LABEL $tcp_label or
# BACKEND) and Suricata's exit status in suri_rc; 1 if the set-up failed.
TCP_BYTES=16000000
tcp_run() {
	local backend=$1 where=$2 evil=$3 q=$((4500 + $$ % 400)) srv ns_tx ns_rx ns_mid
	local label=${tcp_label:-$1}
	shift 3
	log=$work/tcp-$where-$label-$evil
	tcp_nets "$where" "$label-$evil" "$q" || return 1
	if ! suri_start "$ns_mid" "$backend" "$log.suri" "$q" "$@"; then
		echo "    suricata did not start on queue $q"
		sed 's/^/    | /' "$log.suri" | tail -n 20
		[ "$where" = router ] && router_del
		return 1
	fi
	tcp_transfer "$ns_rx" "$ns_tx" "$srv" "$evil" "$log"
	suri_stop
	suri_rc=$?
	[ "$where" = router ] && router_del
	return 0
}
