#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install what building Suricata 7.0.10 and 8.0.7 for the Suricata stage needs on
# Debian 12 (run as root), what its live scenario runs (python3 for
# tests/suricata/live-peer.py, openssl for its certificate), and what
# tests/suricata/bench-suricata.sh runs (iperf3; ethtool for its AF_PACKET
# column; perf for its system call counts).  Idempotent: packages already installed are not
# fetched again, and the bookworm-backports suite is added only once.
# NFQB_NO_APT=1 skips apt-get altogether.
#
# Suricata 7.0.10 needs libhtp >= 0.5.50, which Debian 12 has only in
# bookworm-backports.  The suite is added beside the machine's own Debian
# sources, with the same URIs and keyring; apt never installs from backports
# unless asked (-t bookworm-backports), so nothing else changes.
set -euo pipefail

PKGS=(build-essential autoconf automake libtool pkg-config
      libcap-ng-dev libjansson-dev liblz4-dev libpcap-dev libpcre2-dev
      libyaml-dev libmagic-dev zlib1g-dev libnetfilter-queue-dev
      libnfnetlink-dev libmnl-dev iproute2 iptables util-linux
      python3 openssl iperf3 ethtool linux-perf)
BPO_PKGS=(libhtp-dev)
# Hyperscan, as Debian's own suricata has it (amd64 only: Debian builds it
# nowhere else), for tests/suricata/bench-suricata.sh's like-for-like
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] && PKGS+=(libhyperscan-dev)
# rustc/cargo: a rustup toolchain in ~/.cargo/bin is used when present.
# Suricata 8.0 needs Rust >= 1.75: Debian 12's rustc/cargo (1.63) build
# 7.0 only, so without a cargo of 1.75 or later Debian 12's rustc-web and
# cargo-web (1.85 in bookworm, newer in bookworm-security; they replace
# rustc/cargo) are installed.
cargo_v=$(cargo -V 2>/dev/null | awk '{ print $2 }')
if [ -z "$cargo_v" ] || ! dpkg --compare-versions "$cargo_v" ge 1.75; then
	PKGS+=(rustc-web cargo-web)
fi

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if [ "${NFQB_NO_APT:-0}" = 1 ]; then
	echo "deps: NFQB_NO_APT=1, not installing packages"
	exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; install by hand: ${PKGS[*]} ${BPO_PKGS[*]} (libhtp >= 0.5.50)" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done
bpo_missing=()
for p in "${BPO_PKGS[@]}"; do
	# libhtp-dev from bookworm itself (0.5.42) is too old for Suricata 7
	if ! installed "$p" ||
	   ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' "$p")" ge 1:0.5.50; then
		bpo_missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ] && [ ${#bpo_missing[@]} -eq 0 ]; then
	echo "deps: all packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]} ${bpo_missing[*]}; run as root (or set NFQB_NO_APT=1)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ ${#bpo_missing[@]} -gt 0 ] &&
   ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	# Same URIs and keyring as the machine's Debian (not security) source
	uri=http://deb.debian.org/debian
	key=/usr/share/keyrings/debian-archive-keyring.gpg
	src=/etc/apt/sources.list.d/debian.sources
	if [ -f "$src" ]; then
		u=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$src")
		k=$(awk '/^Signed-By:/ {print $2; exit}' "$src")
		[ -n "$u" ] && uri=$u
		[ -n "$k" ] && key=$k
	fi
	echo "deps: adding bookworm-backports ($uri)"
	cat > /etc/apt/sources.list.d/bookworm-backports.sources <<EOS
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: $key
EOS
fi
apt-get update -q
[ ${#missing[@]} -eq 0 ] || apt-get install -y -q --no-install-recommends "${missing[@]}"
[ ${#bpo_missing[@]} -eq 0 ] ||
	apt-get install -y -q --no-install-recommends -t bookworm-backports "${bpo_missing[@]}"
echo "deps: done"
