#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run test programs of a build tree once per flow set.  The kernel spreads
# flows over queues (--queue-balance, nft "queue num A-B" fanout) by a
# hash of their addresses whose seed is drawn once per boot: a test with
# fixed source addresses sees one mapping of flows to queues per boot, and
# may pass on this boot and fail on the next.  The integration tests take
# their flows' addresses from nfqbt_flow_addr() (tests/integration/
# harness.h): NFQBT_FLOW_SET=K moves them to 127.0.K.x, another mapping on
# the same boot.  This script runs each program with the sets FIRST ..
# FIRST+N-1, which tries N mappings in one boot.
#
# A developer's tool, not part of `make check`.  Integration programs run
# through tests/serial-lock.sh, under the lock `make check` takes
# (NFQB_TEST_LOCK), so a `make check` running at the same time waits for
# each run and is not disturbed, nor disturbs it.  Other variables pass
# through: CK_RUN_CASE, CK_RUN_SUITE, NFQB_SOAK_SECONDS, ...
# (CK_DEFAULT_TIMEOUT is 120 unless set, as in `make check`).
#
# Usage: tests/flow-sets.sh [-n N] [-s FIRST] [-o DIR] BUILD_DIR PROGRAM...
#   -n N      how many sets (default 20)
#   -s FIRST  the first set (default 0); sets go up to 255
#   -o DIR    keep each run's output in DIR/SET-PROGRAM.log (default: a
#             new directory under ${TMPDIR:-/tmp}, named at the end)
#   PROGRAM   a test program, relative to BUILD_DIR
#             (tests/integration/test_pool) or absolute
# Example, as root, from the top of the source tree:
#   tests/flow-sets.sh ../build tests/integration/test_pool \
#           tests/integration/test_lifecycle
#
# One line per run (set, program, PASS/FAIL/SKIP, seconds; a failure with
# the last lines of its output), then a table of sets by program and
# "N passed, N failed".  Exit status 0 if none failed, 1 if one did, 2 on
# a usage error.

usage() {
	echo "usage: flow-sets.sh [-n N] [-s FIRST] [-o DIR] BUILD_DIR PROGRAM..." >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd) || exit 2
n=20
first=0
out=
while getopts "n:s:o:" o; do
	case $o in
	n) n=$OPTARG ;;
	s) first=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
case $n$first in
*[!0-9]*|'') usage ;;
esac
last=$((first + n - 1))
if [ "$n" -lt 1 ] || [ "$last" -gt 255 ]; then
	echo "flow-sets: sets $first .. $last: from 0 to 255, at least one" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
shift
for p in "$@"; do
	case $p in
	/*) path=$p ;;
	*) path=$build/$p ;;
	esac
	if [ ! -x "$path" ]; then
		echo "flow-sets: $path: not a program (built? make check TESTS=)" >&2
		exit 2
	fi
done
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/flow-sets.XXXXXX") || exit 2
fi
mkdir -p "$out" || exit 2

# as `make check` has them (Makefile.am, AM_TESTS_ENVIRONMENT)
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
NFQB_TEST_LOCK=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
export CK_DEFAULT_TIMEOUT NFQB_TEST_LOCK

passed=0
failed=0
skipped=0
results=$out/results
: >"$results"
k=$first
while [ "$k" -le "$last" ]; do
	for p in "$@"; do
		case $p in
		/*) path=$p ;;
		*) path=$build/$p ;;
		esac
		name=$(basename "$p")
		log=$out/$k-$name.log
		t0=$(date +%s)
		(cd "$build" && NFQBT_FLOW_SET=$k \
			sh "$here/serial-lock.sh" "$path") >"$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - t0))
		case $rc in
		0) r=PASS; passed=$((passed + 1)) ;;
		77) r=SKIP; skipped=$((skipped + 1)) ;;
		*) r=FAIL; failed=$((failed + 1)) ;;
		esac
		echo "$k $name $r" >>"$results"
		echo "flow-sets: set $k $name: $r (${secs} s, status $rc)"
		if [ "$r" = FAIL ]; then
			tail -n 15 "$log" | sed 's/^/    | /'
		fi
	done
	k=$((k + 1))
done

# the table: a row per program, a column per set
echo
echo "flow-sets: sets $first .. $last, logs in $out"
for p in "$@"; do
	name=$(basename "$p")
	awk -v name="$name" '$2 == name {
		s = s " " $1 ":" ($3 == "PASS" ? "ok" : $3)
	} END { printf "  %-22s%s\n", name, s }' "$results"
done
echo "$passed passed, $failed failed${skipped:+, $skipped skipped}" |
	sed 's/, 0 skipped$//'
[ "$failed" -eq 0 ]
