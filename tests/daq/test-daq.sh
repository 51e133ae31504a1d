#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libdaq's daqtest drives a DAQ module on a real NFQUEUE, in a private
# network namespace: the stock nfq module and our daq_nfqb pass the same
# checks, made at a receiver we run (tests/daq/daq-traffic):
#
#   block      -P block: no ping request arrives, every UDP datagram
#              arrives once
#   replace    -P replace: every ping request arrives changed (its data
#              turned into 'A's), every UDP datagram once
#   default    -V block: UDP (the default verdict) never arrives, pings
#              (action none: pass) arrive once, unchanged
#   lists      -P whitelist -V blacklist: pings arrive once, UDP never;
#              daq_nfqb again with whitelist_mark and blacklist_mark
#   pass       nothing set: everything arrives once, unchanged
#   stop       daqtest slowed down (-D) and stopped mid-stream: a datagram
#              arrives once if and only if it was passed, or was left
#              undecided and the module's stop gives those the accept
#              default (daq_nfqb's default_verdict; with
#              default_verdict=drop they never arrive); the stock module
#              unbinds, so the kernel drops them; never twice
#   header     in every scenario: the packet header says egress lo
#              (ifindex 1), no ingress (queued at OUTPUT); with daq_nfqb
#              the mark set by an iptables MARK rule on UDP is the opaque
#              value
#   range      daq_nfqb with the input "Q-Q+3" and 4 instances (-z 4):
#              each binds its own queue, traffic to Q passes
#   vars       daq_nfqb with its variables set: taken, traffic passes
#   conntrack  taken, or refused with EOPNOTSUPP by a kernel without the
#              conntrack glue
#   refused    bad inputs and variables: daqtest cannot start the module
#   interrupt  daq_nfqb blocked without traffic (-t 0) stops within 2 s
#
# daq_nfqb runs both blocking (-t 0: interrupt wakes nfqb_recv()) and
# with a receive timeout (-t 100); the stock module needs -t 100 (its
# interrupt only sets a flag).  Environment (set by `make check`):
#   NFQB_DAQTEST          daqtest
#   NFQB_DAQ_STOCK_DIR    the directory holding libdaq's daq_nfq.so
#   NFQB_DAQ_MODULE_DIR   the directory holding our daq_nfqb.so
#   NFQB_DAQ_TRAFFIC      tests/daq/daq-traffic
#   NFQB_DAQ_LIBDIR       where the built libnfq-batch.so is (for the module)
#   NFQB_DAQ_REQUIRED=1   fail (not skip) when something is missing
# Prints a Check-style summary line so tests/run-all.sh counts each
# scenario.  Every wait is bounded; the namespace goes away on any exit.
set -u

required=${NFQB_DAQ_REQUIRED:-0}
# fail WHAT [LOG [LINES]]: count a failure, show the last LINES (default
# 20) of LOG
fail() {
	echo "    FAIL: $1"
	if [ -n "${2:-}" ]; then
		sed 's/^/    | /' "$2" | tail -n "${3:-20}"
	fi
	failures=$((failures + 1))
}

. "$(dirname "$0")/../proc.sh"
skip() { test_skip test-daq "$required" "$@"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
daqtest=${NFQB_DAQTEST:-}
stock_dir=${NFQB_DAQ_STOCK_DIR:-}
our_dir=${NFQB_DAQ_MODULE_DIR:-}
traffic=${NFQB_DAQ_TRAFFIC:-}
[ -n "$daqtest" ] && [ -x "$daqtest" ] || skip "no daqtest (NFQB_DAQTEST='$daqtest')"
[ -f "$stock_dir/daq_nfq.so" ] || skip "no stock daq_nfq.so in '$stock_dir'"
[ -f "$our_dir/daq_nfqb.so" ] || skip "no daq_nfqb.so in '$our_dir'"
[ -x "$traffic" ] || skip "no daq-traffic at '$traffic'"
command -v ip >/dev/null && command -v iptables >/dev/null &&
	command -v nsenter >/dev/null || skip "needs ip, iptables and nsenter"

ns=nfqb-daq-$$
queue=$((3000 + $$ % 1000))
port=9999
count=${NFQB_DAQ_COUNT:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-daq.XXXXXX")
daq_pid=

cleanup() {
	if [ -n "$daq_pid" ] && kill -0 "$daq_pid" 2>/dev/null; then
		kill -KILL "$daq_pid" 2>/dev/null
		wait "$daq_pid" 2>/dev/null
	fi
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q xt_NFQUEUE 2>/dev/null
ip netns add "$ns" || skip "cannot create a network namespace"
nsx() { ip netns exec "$ns" "$@"; }
# daqtest in the namespace as our direct child, no process in between (ip
# netns exec forks): its pid is the one we signal and wait for.
daq_exec() {
	exec nsenter --net="/run/netns/$ns" env \
		LD_LIBRARY_PATH="${NFQB_DAQ_LIBDIR:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$@"
}
nsx ip link set lo up || { echo "test-daq: lo up failed"; exit 1; }
# UDP is marked before it is queued: daq_nfqb gives the mark as the
# packet header's opaque value (the stock module does not).
nsx iptables -t mangle -A OUTPUT -p udp --dport "$port" \
	-j MARK --set-mark 42 &&
nsx iptables -A OUTPUT -p icmp --icmp-type echo-request \
	-j NFQUEUE --queue-num "$queue" &&
nsx iptables -A OUTPUT -p udp --dport "$port" \
	-j NFQUEUE --queue-num "$queue" || {
	echo "test-daq: iptables NFQUEUE rules failed"
	exit 1
}

checks=0
failures=0

# queue_bound: wait (up to 5 s) until the queue is bound in the namespace.
queue_bound() {
	local i
	for i in $(seq 1 100); do
		if nsx awk -v q="$queue" '$1 == q { f = 1 } END { exit !f }' \
			/proc/net/netfilter/nfnetlink_queue 2>/dev/null; then
			return 0
		fi
		kill -0 "$daq_pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# stop_daqtest: SIGTERM (daqtest treats it as SIGINT), then wait up to 5 s for it (SIGKILL after).
stop_daqtest() {
	local rc
	stop_pid "$daq_pid" 5 daqtest
	rc=$?
	daq_pid=
	[ "$rc" -eq 124 ] && return 1
	return $rc
}

val() { sed -n "s/^$1 //p" "$2" | head -n 1; }
# stat_of NAME LOG: daqtest's statistic NAME, summed over its threads (-z)
stat_of() {
	sed -n "s/^ *$1: *\([0-9]*\).*/\1/p" "$2" |
		awk '{ s += $1; n++ } END { if (n) print s }'
}

# expect NAME ACTUAL OP EXPECTED
expect() {
	if [ "$2" "$3" "$4" ] 2>/dev/null; then
		return 0
	fi
	echo "    $1 = '$2', expected $3 $4"
	return 1
}

# scenario NAME MODULE TIMEOUT CHECKFN [daqtest args...]
scenario() {
	local name=$1 module=$2 timeout=$3 checkfn=$4
	shift 4
	local dir=$our_dir log=$work/$name-$module-t$timeout
	[ "$module" = nfq ] && dir=$stock_dir
	local input=${INPUT:-$queue}
	checks=$((checks + 1))
	echo "--- $name: module $module, -i $input -t $timeout: daqtest $*"
	daq_exec "$daqtest" -d "$module" -m "$dir" -M inline \
		-i "$input" -t "$timeout" -s 65535 "$@" >"$log.daq" 2>&1 &
	daq_pid=$!
	if ! queue_bound; then
		fail "daqtest did not bind queue $queue" "$log.daq" 20
		stop_daqtest
		return
	fi
	if ! nsx "$traffic" -n "$count" -p "$port" ${TRAFFIC_ARGS:-} \
		>"$log.rx" 2>&1; then
		fail "daq-traffic failed" "$log.rx" 1000
		stop_daqtest
		return
	fi
	local rc=0
	stop_daqtest || rc=$?
	local ok=1
	[ "$rc" -eq 0 ] || { echo "    daqtest exited with $rc"; ok=0; }
	"$checkfn" "$log.rx" "$log.daq" "$module" || ok=0
	echo "    received: $(tr '\n' ' ' <"$log.rx")"
	echo "    daqtest: received $(stat_of 'Packets Received' "$log.daq")," \
	     "passed $(stat_of 'Packets Passed' "$log.daq")," \
	     "replaced $(stat_of 'Packets Replaced' "$log.daq")," \
	     "blocked $(stat_of 'Packets Blocked' "$log.daq")," \
	     "whitelisted $(stat_of 'Flows Whitelisted' "$log.daq")," \
	     "blacklisted $(stat_of 'Flows Blacklisted' "$log.daq")"
	if [ "$ok" = 1 ]; then
		echo "    PASS"
	else
		fail "daqtest log tail:" "$log.daq" 25
	fi
}

common() {
	local rx=$1 daq=$2 ok=0
	expect icmp_dup "$(val icmp_dup "$rx")" -eq 0 || ok=1
	expect icmp_other "$(val icmp_other "$rx")" -eq 0 || ok=1
	expect udp_dup "$(val udp_dup "$rx")" -eq 0 || ok=1
	expect udp_bad "$(val udp_bad "$rx")" -eq 0 || ok=1
	expect "daqtest Packets Received" \
		"$(stat_of 'Packets Received' "$daq")" -eq $((2 * count)) || ok=1
	# the packet header: queued at OUTPUT on lo (ifindex 1), no ingress
	expect "packets with 'Ingress = -1 ... Egress = 1'" \
		"$(grep -c 'Ingress = -1 (Group = -1), Egress = 1 ' "$daq")" \
		-eq $((2 * count)) || ok=1
	if [ "$3" = nfqb ]; then
		expect "packets with the mark as 'Opaque = 42' (UDP)" \
			"$(grep -c 'Opaque = 42$' "$daq")" -eq "$count" || ok=1
	fi
	return $ok
}

# check_counts OUT ERR LOG NORMAL REPLACED UDP [STAT WANT]: the receiver
# saw NORMAL unchanged pings, REPLACED changed ones and UDP datagrams, and
# daqtest's STAT is WANT.
check_counts() {
	local ok=0
	common "$1" "$2" "$3" || ok=1
	expect icmp_normal "$(val icmp_normal "$1")" -eq "$4" || ok=1
	expect icmp_replaced "$(val icmp_replaced "$1")" -eq "$5" || ok=1
	expect udp_received "$(val udp_received "$1")" -eq "$6" || ok=1
	if [ -n "${7:-}" ]; then
		expect "daqtest $7" "$(stat_of "$7" "$2")" -eq "$8" || ok=1
	fi
	return $ok
}

check_block() {
	check_counts "$1" "$2" "$3" 0 0 "$count" 'Packets Blocked' "$count"
}

check_replace() {
	check_counts "$1" "$2" "$3" 0 "$count" "$count" \
		'Packets Replaced' "$count"
}

# pings pass unchanged, UDP (the default verdict) never arrives
check_udp_blocked() {
	check_counts "$1" "$2" "$3" "$count" 0 0
}

check_pass() {
	check_counts "$1" "$2" "$3" "$count" 0 "$count" \
		'Packets Passed' $((2 * count))
}

# Stopped mid-stream (-D 100 -b 1, SIGINT after about a third): what was
# passed arrives once; the rest arrives once with daq_nfqb (the accept
# default at close), never with the stock module (unbind: kernel drop).
check_stop() {
	local ok=0 passed recv icmp
	passed=$(stat_of 'Packets Passed' "$2")
	recv=$(stat_of 'Packets Received' "$2")
	icmp=$(val icmp_normal "$1")
	udp=$(val udp_received "$1")
	expect icmp_dup "$(val icmp_dup "$1")" -eq 0 || ok=1
	expect udp_dup "$(val udp_dup "$1")" -eq 0 || ok=1
	expect "daqtest Packets Received (stopped early)" "${recv:-0}" \
		-lt $((2 * count)) || ok=1
	if [ "$3" = nfq ] || [ "$4" = drop ]; then
		expect "arrived (icmp + udp)" $((icmp + udp)) -eq "${passed:-x}" ||
			ok=1
	else
		expect icmp_normal "$icmp" -eq "$count" || ok=1
		expect udp_received "$udp" -eq "$count" || ok=1
	fi
	return $ok
}

# The stop scenario: daqtest is stopped while traffic still flows.
scenario_stop() {
	local module=$1 timeout=$2 default=${3:-}
	local dir=$our_dir log=$work/stop-$module-t$timeout$default
	[ "$module" = nfq ] && dir=$stock_dir
	checks=$((checks + 1))
	local extra=()
	[ -n "$default" ] && extra=(-C "default_verdict=$default")
	echo "--- stop: module $module, -t $timeout: daqtest -D 100 -b 1 ${extra[*]}, SIGTERM mid-stream"
	daq_exec "$daqtest" -d "$module" -m "$dir" -M inline \
		-i "$queue" -t "$timeout" -s 65535 -D 100 -b 1 "${extra[@]}" \
		>"$log.daq" 2>&1 &
	daq_pid=$!
	if ! queue_bound; then
		fail "daqtest did not bind queue $queue"
		stop_daqtest
		return
	fi
	# 10 of each, 2 ms apart; SIGINT at 0.7 s (about 7 of 20 decided)
	nsx timeout 30 "$traffic" -n 10 -p "$port" -i 2 -w 1500 >"$log.rx" 2>&1 &
	local tpid=$!
	sleep 0.7
	local rc=0
	stop_daqtest || rc=$?
	wait "$tpid"
	local ok=1
	[ "$rc" -eq 0 ] || { echo "    daqtest exited with $rc"; ok=0; }
	local saved=$count
	count=10
	check_stop "$log.rx" "$log.daq" "$module" "$default" || ok=0
	count=$saved
	echo "    received: $(tr '\n' ' ' <"$log.rx")"
	echo "    daqtest: received $(stat_of 'Packets Received' "$log.daq")," \
	     "passed $(stat_of 'Packets Passed' "$log.daq")"
	if [ "$ok" = 1 ]; then
		echo "    PASS"
	else
		fail "daqtest log tail:" "$log.daq" 25
	fi
}

start=$(date +%s)
for run in nfq:100 nfqb:0 nfqb:100; do
	module=${run%%:*}
	t=${run#*:}
	scenario block "$module" "$t" check_block -P block
	scenario replace "$module" "$t" check_replace -P replace
	scenario default "$module" "$t" check_udp_blocked -V block
	scenario lists "$module" "$t" check_udp_blocked -P whitelist -V blacklist
	scenario pass "$module" "$t" check_pass
	scenario_stop "$module" "$t"
done
# daq_nfqb only: the drop default at stop (what was left undecided never
# arrives), and a queue range as input for 4 instances (instance 1 takes
# the first queue, the one with traffic)
scenario_stop nfqb 0 drop
INPUT=$queue-$((queue + 3)) scenario pass nfqb 0 check_pass -z 4
# the lists again with whitelist_mark and blacklist_mark: each verdict
# carries the conntrack mark too (NFQA_CT), the kernel takes it (a kernel
# without ctnetlink's glue ignores the mark), the verdicts are the same
scenario lists_marks nfqb 0 check_udp_blocked -P whitelist -V blacklist \
	-C whitelist_mark=0x2a -C blacklist_mark=0x2b

# daq_nfqb's own variables are taken (debug prints them) and traffic passes
check_vars() {
	local ok=0
	check_pass "$@" || ok=1
	expect "debug line with queue_maxlen 77, fail_open 1, coalesce 0" \
		"$(grep -c 'queue_maxlen 77, fail_open 1, conntrack 0, coalesce 0, default verdict drop' "$2")" \
		-eq 1 || ok=1
	expect "debug counters line at stop" \
		"$(grep -c '^daq_nfqb: queue .*: packets 40 ' "$2")" -eq 1 || ok=1
	return $ok
}
scenario vars nfqb 0 check_vars -C debug -C queue_maxlen=77 -C fail_open \
	-C batch_limit=8 -C latency=500 -C linger=0 \
	-C no_coalesce -C default_verdict=drop -C verdict_timeout=5000

# Refused configurations: daqtest fails to start, nothing is bound.
refused() {
	local what=$1
	shift
	checks=$((checks + 1))
	echo "--- refused: $what: daqtest $*"
	if (daq_exec timeout 10 "$daqtest" -d nfqb -m "$our_dir" -M inline \
		-t 0 "$@") >"$work/refused.log" 2>&1 </dev/null; then
		fail "daqtest accepted it"
	elif ! grep -q "$what" "$work/refused.log"; then
		fail "no '$what' in its output:" "$work/refused.log" 5
	else
		echo "    PASS"
	fi
}
refused "invalid queue number" -i 70000
refused "invalid queue number" -i "5-2"
refused "unknown variable" -i "$queue" -C bogus=1
refused "invalid value for 'default_verdict'" -i "$queue" -C default_verdict=maybe
refused "invalid value for 'batch_limit'" -i "$queue" -C batch_limit=0
refused "invalid value for 'fail_open'" -i "$queue" -C fail_open=maybe
refused "invalid value for 'whitelist_mark'" -i "$queue" -C whitelist_mark=0
refused "invalid value for 'blacklist_mark'" -i "$queue" -C blacklist_mark=x
refused "has 4 queues for 1 instances" -i "$queue-$((queue + 3))"
# a fixed MSS ceiling: no longer supported (the library's large-packet
# policy clamps to the copy range), refused saying so
refused "fixed MSS ceiling is no longer supported" -i "$queue" -C mss_clamp=1400
refused "invalid value for 'mss_clamp'" -i "$queue" -C mss_clamp=some

# conntrack needs the kernel's CONFIG_NETFILTER_NETLINK_GLUE_CT: without it
# the module must refuse to start and say why; with it, traffic passes.
checks=$((checks + 1))
echo "--- conntrack: module nfqb, -C conntrack: taken, or refused (EOPNOTSUPP)"
if (daq_exec timeout 3 "$daqtest" -d nfqb -m "$our_dir" -M inline \
	-i "$queue" -t 100 -C conntrack) >"$work/ct.log" 2>&1 </dev/null ||
   grep -q "Could not start" "$work/ct.log"; then
	if grep -q "Could not start" "$work/ct.log"; then
		if grep -q "conntrack) failed: Operation not supported" "$work/ct.log"; then
			echo "    PASS (refused: this kernel has no conntrack glue)"
		else
			fail "its output:" "$work/ct.log" 5
		fi
	else
		echo "    PASS (taken)"
	fi
else
	# timeout 3 ended a daqtest that had started: the flag was taken
	echo "    PASS (taken)"
fi

# The interrupt wakes a blocked nfqb_recv() (-t 0, no traffic at all):
# daqtest stops within 2 s of SIGTERM (the stock module, without a
# timeout, never would: its interrupt only sets a flag).
checks=$((checks + 1))
echo "--- interrupt: module nfqb, -t 0, idle: SIGTERM stops it within 2 s"
daq_exec "$daqtest" -d nfqb -m "$our_dir" -M inline -i "$queue" -t 0 \
	>"$work/idle.log" 2>&1 &
daq_pid=$!
if queue_bound; then
	sleep 0.3
	t0=$(date +%s%N)
	stop_daqtest
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	if [ "$rc" -eq 0 ] && [ "$ms" -lt 2000 ] &&
	   grep -q "Interrupted: 1" "$work/idle.log"; then
		echo "    PASS ($ms ms)"
	else
		fail "exit $rc after $ms ms" "$work/idle.log" 10
	fi
else
	fail "daqtest did not bind queue $queue"
	stop_daqtest
fi

echo "test-daq: $checks scenarios, $failures failed, $(( $(date +%s) - start )) s"
# The summary line tests/run-all.sh counts (Check's format).
pct=100
[ "$checks" -gt 0 ] && pct=$(( (checks - failures) * 100 / checks ))
echo "$pct%: Checks: $checks, Failures: $failures, Errors: 0"
[ "$failures" -eq 0 ]
