#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# LOG_COMPILER of the test harness: runs one test.  Integration tests use
# the real kernel (netns, iptables rules, queue numbers), so they hold an
# exclusive lock while they run and never overlap, even under `make -j
# check` or with two build trees tested at once.  Unit tests run freely.
case "$1" in
*/integration/*|*/daq/*)
	lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
	exec flock "$lock" "$@"
	;;
*)
	exec "$@"
	;;
esac
