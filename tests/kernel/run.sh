#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest side: run the selected tests (default: every t-*.sh), one line of
# result each, then scan for leaked objects. Exit status: number of failures.
# A test exiting 77 is skipped (reported, not counted as a failure): the
# library's tests when the harness was run without the library's tool.
cd /tests
ip() { /bin/ip "$@"; }
if [ -s selected ]; then
	tests=$(cat selected)
else
	tests=$(ls t-*.sh)
fi
fail=0
skip=0
for t in $tests; do
	t=${t%.sh}.sh
	echo "=== RUN $t"
	start=$(cut -d' ' -f1 /proc/uptime)
	# the kselftest scripts move more data and wait longer
	case $t in t-6*) limit=1500 ;; *) limit=600 ;; esac
	# coreutils' timeout (a path: busybox sh would run its own applet),
	# which signals the test's whole process group when the limit is
	# reached: busybox's signals the test's shell only, and what it
	# started (a selftest under bash, listeners) went on beside the next
	# tests
	/bin/timeout $limit sh "/tests/$t"
	rc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	if [ $rc = 0 ]; then
		echo "=== PASS $t ($start..$end s)"
	elif [ $rc = 77 ]; then
		echo "=== SKIP $t"
		skip=$((skip + 1))
	else
		echo "=== FAIL $t (status $rc)"
		fail=$((fail + 1))
	fi
	# leave nothing behind for the next test
	for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
		ip netns del "$ns"
	done
done
if [ -w /sys/kernel/debug/kmemleak ]; then
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	n=$(grep -c '^unreferenced object' /sys/kernel/debug/kmemleak)
	echo "=== kmemleak: $n unreferenced objects"
	if [ "$n" != 0 ]; then
		head -60 /sys/kernel/debug/kmemleak
		if grep -q -E 'nf_queue|nfqnl|skb|nf_reinject|__nf_queue' /sys/kernel/debug/kmemleak; then
			echo "=== FAIL kmemleak: queue path objects leaked"
			fail=$((fail + 1))
		fi
	fi
fi
echo "=== $fail failed, $skip skipped"
exit $fail
