#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install what building and testing libnfq-batch needs on Debian 12 (run as
# root), and load the kernel modules the integration tests use.  Packages
# already installed are not fetched again.  NFQB_NO_APT=1 skips apt-get.
set -euo pipefail

# iperf3 and gnuplot-nox: nfqb-bench --mode tcp and --plot
# abigail-tools: the ABI check (tests/check-abi.sh)
# gcc-multilib and the :i386 libraries: the 32-bit build (tests/check-i386.sh);
# qemu-user runs its tests where the kernel does not run 32-bit programs
# The DAQ stage (tests/daq/) builds libdaq from its tarball with what is
# here already (autotools, libmnl-dev, build-essential's C and C++
# compilers) and runs daqtest in a namespace with nsenter (util-linux).
# systemd: tests/integration/test_systemd runs nfqb-ips.service under a
# systemd user manager (/lib/systemd/systemd; PID 1 need not be systemd).
# cmake ... zlib1g-dev: Snort 3 for the Snort stage (tests/snort/
# build-snort.sh); libfl-dev for its FlexLexer.h.
# The Python binding (python/): python3-dev builds it; python3-pytest and
# python3-scapy run its tests, python3-trio and python3-async-generator
# python-netfilterqueue 1.1.0's own (python/tests/run-upstream.sh);
# python3-venv, python3-setuptools and
# python3-wheel its offline pip check; cython3 builds python-netfilterqueue
# for its benchmark; dh-python its Debian package.
PKGS=(build-essential autoconf automake libtool pkg-config
      libmnl-dev liburcu-dev check libnetfilter-queue-dev
      iptables iproute2 kmod iperf3 gnuplot-nox
      abigail-tools gcc-multilib
      libmnl-dev:i386 liburcu-dev:i386 check:i386
      libnetfilter-queue-dev:i386 util-linux systemd
      cmake g++ flex libfl-dev libdumbnet-dev libhwloc-dev
      libluajit-5.1-dev libpcap-dev libpcre2-dev libssl-dev zlib1g-dev
      python3-dev python3-pytest python3-scapy python3-trio
      python3-async-generator python3-venv
      python3-setuptools python3-wheel cython3 dh-python qemu-user)
# golang-go: the Go package (go/: make check-go, go/README.md); the
# golang-*-dev sources: go-nfqueue's dependencies, for the benchmark beside
# it (go/tests/vs-go-nfqueue.sh)
PKGS+=(golang-go golang-github-mdlayher-netlink-dev golang-golang-x-sys-dev
       golang-github-mdlayher-socket-dev golang-github-josharian-native-dev
       golang-golang-x-net-dev golang-golang-x-sync-dev
       golang-github-google-go-cmp-dev)

if [ "${NFQB_NO_APT:-0}" = 1 ]; then
	echo "deps: NFQB_NO_APT=1, not installing packages"
elif ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; install by hand: ${PKGS[*]}" >&2
else
	missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "deps: all packages present"
	elif [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing ${missing[*]}; run as root (or set NFQB_NO_APT=1)" >&2
		exit 1
	else
		echo "deps: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		# the :i386 packages need the architecture (multiarch)
		if ! dpkg --print-foreign-architectures | grep -qx i386; then
			dpkg --add-architecture i386
		fi
		# a mirror in sync makes one index fail now and then: what
		# matters is whether the install below finds every package
		apt-get update ||
			echo "deps: apt-get update reported errors; installing anyway" >&2
		apt-get install -y --no-install-recommends "${PKGS[@]}"
	fi
fi

# go-nfqueue 2.0.0's source for its own tests on the Go package (go/tests/
# run.sh): Debian 12 lacks it, trixie ships it as an arch-all package,
# fetched into the third-party cache, never installed
if [ "${NFQB_NO_APT:-0}" != 1 ]; then
	"$(dirname "$0")"/fetch-deb.sh trixie \
		golang-github-florianl-go-nfqueue-dev 2.0.0-2 >/dev/null ||
		echo "deps: go-nfqueue 2.0.0's source not fetched (go/tests/run.sh will fail)" >&2
fi

# Usually loaded on demand; load them now where we may (not fatal: built-in
# modules or a container without module access are fine).
if [ "$(id -u)" -eq 0 ] && command -v modprobe >/dev/null 2>&1; then
	for m in nfnetlink_queue xt_NFQUEUE; do
		modprobe -q "$m" 2>/dev/null || true
	done
fi
