#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run tests/daq/daq-contract (daq_nfqb against libdaq's module contract as
# Snort uses it) on the built module; see the comment at the top of
# daq-contract.c.  Environment as for test-daq.sh (set by `make check`):
# NFQB_DAQ_MODULE_DIR, NFQB_DAQ_LIBDIR, NFQB_DAQ_CONTRACT (the program),
# NFQB_DAQ_REQUIRED=1 to fail instead of skipping.
required=${NFQB_DAQ_REQUIRED:-0}
skip() {
	echo "test-contract: SKIP: $*"
	[ "$required" = 1 ] && exit 1
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root"
prog=${NFQB_DAQ_CONTRACT:-}
dir=${NFQB_DAQ_MODULE_DIR:-}
[ -x "$prog" ] || skip "no daq-contract ('$prog')"
[ -f "$dir/daq_nfqb.so" ] || skip "no daq_nfqb.so in '$dir'"
command -v iptables >/dev/null || skip "needs iptables"
LD_LIBRARY_PATH="${NFQB_DAQ_LIBDIR:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	exec timeout 600 "$prog" "$dir"
