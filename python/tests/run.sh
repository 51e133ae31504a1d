#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/tests/run.sh - the tests of the Python binding nfqb: Debian's
# pytest on the real kernel, as root, each test in its own network
# namespace (python/tests/conftest.py, nsutil.py). Run by `make check`
# (python/local.mk) from a build tree configured with Python, under the
# integration tests' lock (they share the kernel).
#
# In a build with --enable-sanitizers the extension and libnfq-batch carry
# AddressSanitizer and UndefinedBehaviorSanitizer: the interpreter (not
# built with them) gets libasan preloaded, leak detection off (CPython
# does not free everything at exit; test_native.py checks for growth).
#
# Environment (set by make check): NFQB_PYTHON (the interpreter),
# NFQB_PY_STAGE (the directory holding the built package nfqb/),
# NFQB_TEST_LOCK. CI=true makes a skipped test a failure. Extra arguments
# go to pytest (e.g. -k compat). Prints a Check-style summary line
# ("100%: Checks: N, Failures: F, Errors: E") that tests/run-all.sh counts.
set -u

here=$(cd "$(dirname "$0")" && pwd)
python=${NFQB_PYTHON:-}
if [ -z "$python" ]; then
	if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi
stage=${NFQB_PY_STAGE:-$PWD/python/stage}
lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}

skip() {
	echo "python/tests/run.sh: SKIP: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "the tests need root"
if [ ! -d "$stage/nfqb" ]; then
	echo "python/tests/run.sh: no built nfqb package in $stage" >&2
	exit 1
fi
"$python" -c 'import pytest, scapy' 2>/dev/null ||
	skip "$python lacks pytest or scapy (python3-pytest, python3-scapy: tests/deps.sh)"

so=$(ls "$stage"/nfqb/_nfqb*.so 2>/dev/null | head -n 1)
if [ -n "$so" ] && ldd "$so" 2>/dev/null | grep -q 'libasan\.so'; then
	asan=$(${CC:-gcc} -print-file-name=libasan.so)
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	# after the caller's options: the last one wins, and run-all.sh's
	# stage 2 sets detect_leaks=1 (the interpreter's and ip's exit-time
	# leaks would fail every test)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0
	NFQB_PY_ASAN=1
	export LD_PRELOAD ASAN_OPTIONS NFQB_PY_ASAN
	echo "python/tests/run.sh: ASan build: LD_PRELOAD=$LD_PRELOAD"
fi

xml=$(mktemp "${TMPDIR:-/tmp}/nfqb-pytest.XXXXXX")
trap 'rm -f "$xml"' EXIT
echo "python/tests/run.sh: $python -m pytest $here (nfqb from $stage)"
PYTHONPATH=$stage${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1 \
	flock "$lock" timeout -k 30 1500 "$python" -m pytest -p no:cacheprovider -v -ra \
	--junitxml="$xml" "$here" "$@"
rc=$?

# The counts, for run-all.sh: a skip is a failure in CI.
counts=$("$python" - "$xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 1 0")
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
t = f = e = s = 0
for su in suites:
    t += int(su.get("tests", 0))
    f += int(su.get("failures", 0))
    e += int(su.get("errors", 0))
    s += int(su.get("skipped", 0))
print(t, f, e, s)
EOF
)
set -- $counts
tests=$1 failures=$2 errors=$3 skipped=$4
if [ "$skipped" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "python/tests/run.sh: $skipped test(s) skipped; in CI a skip is a failure"
	errors=$((errors + skipped))
	rc=1
else
	tests=$((tests - skipped))
fi
pct=100
[ "$tests" -gt 0 ] && pct=$(( (tests - failures - errors) * 100 / tests ))
echo "$pct%: Checks: $tests, Failures: $failures, Errors: $errors"
[ "$tests" -gt 0 ] || rc=1
exit $rc
