#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/tests/run-upstream.sh - python-netfilterqueue 1.1.0's own tests
# (tests/test_basic.py and its tests/conftest.py, unchanged, from its
# release tarball) against our drop-in: `import netfilterqueue` finds
# nfqb's shim (nfqb/_shim), which is nfqb.netfilterqueue. Run by
# `make check` (python/local.mk), as root, under the integration tests'
# lock.
#
# What the tests import and Debian 12 lacks comes from
# python/tests/upstream/ (ours): pytest_trio.enable_trio_mode (async tests
# and fixtures under trio.run()) and unshare (libc's unshare(); mounts
# made private after a new mount namespace). trio and async_generator are
# Debian's python3-trio and python3-async-generator (tests/deps.sh).
# Their conftest moves the whole pytest process into a new network and
# mount namespace of its own, and each peer into another.
#
# The one setting: NFQB_DEFAULT_VERDICT=drop. 1.1.0 leaves a packet
# nobody decided queued, and the kernel drops it at unbind(); its
# test_unretained checks that. nfqb gives such packets the default
# verdict, ACCEPT unless set: drop is 1.1.0's behaviour (nfqb-python(3),
# COMPATIBILITY).
#
# Packet timestamps: 1.1.0's test_mark_repeat wants get_timestamp() to
# tell when the packet came in, which the kernel stamps only while some
# socket on the host asks for timestamps (chrony, say; the drop-in opens
# one at import, but 1.1.0's tests assume a host like that). So a
# process of ours holds a UDP socket with SO_TIMESTAMP for the whole run
# (killed at the end; it leaves by itself if this script dies), and the
# run starts only once stamping is on: the kernel turns it on a little
# after being asked, host-wide (a socket in this namespace stamps the
# packets of the namespaces the tests make too), checked with a datagram
# on loopback whose arrival stamp is reported (SO_TIMESTAMPING, reporting
# only: it turns no stamping on itself; SO_TIMESTAMP would not do, the
# kernel makes a stamp up at recvmsg() for a packet that came unstamped).
#
# The tarball: tests/find-third-party.sh python-netfilterqueue-1.1.0.tar.gz
# (or $NFQB_PYNFQ_TARBALL). Environment as for run.sh: NFQB_PYTHON,
# NFQB_PY_STAGE, NFQB_TEST_LOCK; CI=true makes a skip a failure. Prints
# the Check-style summary line tests/run-all.sh counts.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
python=${NFQB_PYTHON:-}
if [ -z "$python" ]; then
	if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi
stage=${NFQB_PY_STAGE:-$PWD/python/stage}
lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
name=python-netfilterqueue-1.1.0

skip() {
	echo "python/tests/run-upstream.sh: SKIP: $*"
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "the tests need root"
if [ ! -d "$stage/nfqb" ]; then
	echo "python/tests/run-upstream.sh: no built nfqb package in $stage" >&2
	exit 1
fi
"$python" -c 'import pytest, trio' 2>/dev/null ||
	skip "$python lacks pytest or trio (python3-pytest, python3-trio: tests/deps.sh)"
tarball=${NFQB_PYNFQ_TARBALL:-$("$top/tests/find-third-party.sh" "$name.tar.gz" 2>/dev/null)}
[ -n "$tarball" ] && [ -f "$tarball" ] || skip "$name.tar.gz not found (tests/find-third-party.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-upstream.XXXXXX")
stamper=
trap 'if [ -n "$stamper" ]; then kill "$stamper" 2>/dev/null; wait "$stamper"; fi
rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
tar -C "$work" -xzf "$tarball" "$name/tests" || exit 1

# SO_TIMESTAMP (29) and SO_TIMESTAMPING (37): <asm-generic/socket.h>'s
# values (x86, arm, powerpc, mips...), where Python names neither
"$python" - <<'PY' &
import os
import signal
import socket
import sys
import time

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
parent = os.getppid()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMP", 29), 1)
while os.getppid() == parent:
    time.sleep(0.5)
PY
stamper=$!
"$python" - <<'PY' || exit 1
import socket
import struct
import sys
import time

SO_TIMESTAMPING = getattr(socket, "SO_TIMESTAMPING", 37)
SOF_TIMESTAMPING_SOFTWARE = 1 << 4      # report software stamps
me = "python/tests/run-upstream.sh"
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
r.settimeout(1)
r.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, SOF_TIMESTAMPING_SOFTWARE)
t0 = time.monotonic()
while True:
    s.sendto(b"stamped?", r.getsockname())
    try:
        _, anc, _, _ = r.recvmsg(64, 256)
    except OSError as e:
        sys.exit("%s: no datagram on loopback (%s)" % (me, e))
    for level, kind, data in anc:
        if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPING):
            sec, nsec = struct.unpack("@ll", data[:struct.calcsize("@ll")])
            if sec or nsec:
                print("%s: the kernel stamps packets (after %.3f s)"
                      % (me, time.monotonic() - t0))
                sys.exit(0)
    if time.monotonic() - t0 > 2:
        sys.exit("%s: the kernel does not stamp packets 2 s after a "
                 "socket asked (SO_TIMESTAMP): test_mark_repeat would "
                 "fail" % me)
    time.sleep(0.02)
PY

so=$(ls "$stage"/nfqb/_nfqb*.so 2>/dev/null | head -n 1)
if [ -n "$so" ] && ldd "$so" 2>/dev/null | grep -q 'libasan\.so'; then
	asan=$(${CC:-gcc} -print-file-name=libasan.so)
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0
	export LD_PRELOAD ASAN_OPTIONS
	echo "python/tests/run-upstream.sh: ASan build: LD_PRELOAD=$LD_PRELOAD"
fi

PYTHONPATH=$here/upstream:$stage/nfqb/_shim:$stage${PYTHONPATH:+:$PYTHONPATH}
PYTHONDONTWRITEBYTECODE=1
NFQB_DEFAULT_VERDICT=drop
export PYTHONPATH PYTHONDONTWRITEBYTECODE NFQB_DEFAULT_VERDICT
# the drop-in, not some installed python-netfilterqueue
where=$(cd "$work" && "$python" -c 'import netfilterqueue, nfqb; print(nfqb.__file__)') ||
	{ echo "python/tests/run-upstream.sh: import netfilterqueue failed" >&2; exit 1; }
case $where in
"$stage"/*) ;;
*) echo "python/tests/run-upstream.sh: netfilterqueue is not nfqb's shim ($where)" >&2; exit 1 ;;
esac

xml=$work/junit.xml
echo "python/tests/run-upstream.sh: $name's tests/test_basic.py, unchanged, on nfqb ($stage)"
(cd "$work/$name" && flock "$lock" timeout -k 30 600 "$python" -m pytest \
	-p no:cacheprovider -v -ra --junitxml="$xml" tests/test_basic.py "$@")
rc=$?

counts=$("$python" - "$xml" <<'PY'
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
PY
)
set -- $counts
tests=$1 failures=$2 errors=$3 skipped=$4
if [ "$skipped" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "python/tests/run-upstream.sh: $skipped test(s) skipped; in CI a skip is a failure"
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
