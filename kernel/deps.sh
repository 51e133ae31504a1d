#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/deps.sh - install what the kernel harness needs from Debian, if
# it is missing: the kernel source, build tools, qemu, busybox, nft, ip,
# ethtool, and the tools of the kernel's selftests (socat, conntrack,
# iputils ping).
# Needs root (apt-get) only when something is actually missing;
# NFQB_NO_APT=1 (as for tests/deps.sh) fails listing them instead.
set -eu
pkgs="linux-source-6.12 build-essential bc flex bison libelf-dev libssl-dev
      cpio gzip xz-utils git qemu-system-x86 busybox-static nftables iproute2
      ethtool libc6-dev linux-libc-dev libmnl-dev socat conntrack iputils-ping"
missing=
for p in $pkgs; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "${NFQB_NO_APT:-0}" = 1 ]; then
	echo "deps.sh: NFQB_NO_APT=1; install these packages:$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: not root; install these packages:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >&2
