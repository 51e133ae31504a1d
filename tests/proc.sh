# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Shell helpers shared by the test scripts that drive a consumer program
# (tests/daq/test-daq.sh, tests/snort/test-snort.sh): sourced, not run.

# test_skip TOOL REQUIRED MESSAGE: the script cannot run here; exit 77 (a
# skip to automake), or 1 when REQUIRED is 1 (CI: a skip is a failure).
test_skip() {
	local tool=$1 required=$2
	shift 2
	echo "$tool: SKIP: $*"
	[ "$required" = 1 ] && { echo "$tool: required here: failing"; exit 1; }
	exit 77
}

# stop_pid PID SECONDS NAME: SIGTERM, then wait up to SECONDS for the
# process (SIGKILL after, saying so); returns its exit status, 124 when it
# had to be killed.
stop_pid() {
	local pid=$1 secs=$2 name=$3 i
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 $((secs * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "    $name did not stop within $secs s of SIGTERM: killed"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}
