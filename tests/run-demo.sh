#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: install the dependencies, build, and run the IPS's demo
# (ips/nfqb-ips --demo) on generated traffic.  It sets up its own
# private network namespace, queue rule and traffic, prints live figures,
# reloads its rules half-way, stops the traffic and lets the queues drain
# before it stops, checks that every datagram was dropped by the rules or
# delivered with the mark ("demo: PASS", else "demo: FAIL" and exit status
# 1), and cleans up.  Run as root on Debian 12.
#
# Environment: NFQB_NO_APT=1 skips apt-get; NFQB_JOBS sets build
# parallelism.  Extra arguments are passed to nfqb-ips --demo.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}
build=$top/build-demo

if [ "$(id -u)" -ne 0 ]; then
	echo "run-demo: the demo needs root (network namespace, iptables)" >&2
	exit 1
fi

"$top/tests/deps.sh"

# VPATH builds cannot configure while the source tree itself is configured.
if [ -f "$top/config.status" ]; then
	echo "run-demo: removing the in-tree build (make distclean)"
	make -s distclean >/dev/null 2>&1 || rm -f "$top/config.status"
fi

./autogen.sh
mkdir -p "$build"
(cd "$build" && "$top/configure")
make -C "$build" -j"$jobs"

ips=$build/ips/nfqb-ips
if [ ! -x "$ips" ]; then
	echo "run-demo: FAILED: $ips was not built" >&2
	exit 1
fi

# The main job: a small IPS on the worker pool (4 queues, one worker each),
# in a private network namespace on generated traffic, with a rules reload
# through the policy hot swap half-way and live figures every second.
echo
echo "run-demo: $ips --demo $*"
exec "$ips" --demo "$@"
