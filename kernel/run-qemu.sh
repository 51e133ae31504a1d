#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/run-qemu.sh - boot the test kernel under qemu and run the guest tests.
#
#   kernel/run-qemu.sh [BZIMAGE [TEST...]]
#
# BZIMAGE defaults to the output of kernel/build.sh. TESTs are names of
# scripts in tests/kernel/ (default: all t-*.sh). Builds an initramfs with
# busybox, nft, ip, the static test tool nfqt, the library's test tool
# nfqb-netdev (NFQB_GUEST_TOOL) and the test scripts, boots
# qemu-system-x86_64 with 2 CPUs under TCG, and exits with the tests'
# status. Fails too when the guest kernel log shows a WARN, BUG, KASAN,
# lockdep or refcount report, or when the guest does not finish in time.
#
# Environment: NFQB_QEMU_TIMEOUT (seconds, default 4800), NFQB_QEMU_ACCEL
# (default tcg), NFQB_QEMU_MEM (MiB, default 1024), NFQB_KEEP (keep the
# work directory), NFQB_LOG (copy the guest log here), NFQB_GUEST_TOOL
# (the library's test tool tests/kernel/nfqb-netdev from a configured
# build, as "make check-kernel" passes it: copied into the guest with the
# shared libraries it needs, libnfq-batch.so.0 of that build included;
# without it the tests that need it, t-15 and t-25, are skipped).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
tdir=$top/tests/kernel
img=${1:-}
[ $# -gt 0 ] && shift
[ -n "$img" ] || img=$("$here/build.sh")
[ -s "$img" ] || { echo "run-qemu.sh: no kernel image $img" >&2; exit 2; }

work=$(mktemp -d /tmp/nfqb-qemu.XXXXXX)
[ -n "${NFQB_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/lib" "$root/lib64" "$root/usr/lib" \
	 "$root/etc" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	 "$root/run" "$root/var" "$root/tests"

# busybox, statically linked
cp /bin/busybox "$root/bin/busybox"
for app in $(/bin/busybox --list); do
	case $app in busybox|ip|nft) continue ;; esac
	ln -sf busybox "$root/bin/$app"
done

# dynamically linked tools with the libraries they need
copy_dyn() {
	cp "$1" "$root/bin/$(basename "$1")"
	if ldd "$1" | grep 'not found' >&2; then
		echo "run-qemu.sh: $1: shared libraries not found" >&2
		exit 2
	fi
	ldd "$1" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' |
	while read -r lib; do
		[ -n "$lib" ] && [ -e "$lib" ] || continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
copy_dyn /usr/sbin/nft
# bash and coreutils' timeout for the kernel selftest script: busybox
# prefers its own applets, and its ip lacks netns
copy_dyn /bin/bash
rm -f "$root/bin/timeout"
copy_dyn /usr/bin/timeout
# the selftests' lib.sh uses readlink -e, which busybox lacks
rm -f "$root/bin/readlink"
copy_dyn /usr/bin/readlink
copy_dyn /usr/bin/ip 2>/dev/null || copy_dyn /sbin/ip
# tc: t-74 sets the packet type before the netfilter ingress hook
# (busybox has a tc applet: replace the link, not busybox behind it)
rm -f "$root/bin/tc"
for t in /usr/sbin/tc /sbin/tc; do
	[ -x "$t" ] && copy_dyn "$t" && break
done
# ethtool: t-25 turns VLAN offload off to get the tag into the payload
for t in /usr/sbin/ethtool /sbin/ethtool; do
	[ -x "$t" ] && copy_dyn "$t" && break
done
[ -e /etc/iproute2 ] && cp -r /etc/iproute2 "$root/etc/" 2>/dev/null || true
[ -d /usr/share/iproute2 ] && mkdir -p "$root/usr/share" && cp -r /usr/share/iproute2 "$root/usr/share/"
echo 'root:x:0:0:root:/:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
printf '0 ip\n6 tcp\n17 udp\n1 icmp\n' | awk '{print $2, $1}' > "$root/etc/protocols"

# test programs and scripts
cc=${CC:-cc}
$cc -O2 -Wall -static -o "$root/bin/nfqt" "$tdir/nfqt.c"
cp "$tdir"/lib.sh "$tdir"/t-*.sh "$root/tests/"
# the tree's netfilter queue selftests, if build.sh left them next to the
# image: nf_queue (libmnl, linked dynamically), the scripts, and the tools
# they use (socat, ss, conntrack)
imgdir=$(dirname "$img")
if [ -e "$imgdir/selftests/net/netfilter/nf_queue.c" ]; then
	mkdir -p "$root/selftest"
	cp -r "$imgdir/selftests/net" "$root/selftest/"
	$cc -O2 -Wall -o "$work/nf_queue" "$imgdir/selftests/net/netfilter/nf_queue.c" -lmnl
	copy_dyn "$work/nf_queue"
	mv "$root/bin/nf_queue" "$root/selftest/net/netfilter/nf_queue"
	if [ -e "$imgdir/selftests/net/netfilter/connect_close.c" ]; then
		$cc -O2 -Wall -static -o "$root/selftest/net/netfilter/connect_close" \
			"$imgdir/selftests/net/netfilter/connect_close.c"
	fi
	# nft_queue.sh wants coreutils dd (conv=sparse)
	rm -f "$root/bin/dd"
	copy_dyn /bin/dd
	for t in /usr/bin/socat /usr/bin/ss /bin/ss /usr/sbin/conntrack; do
		[ -x "$t" ] && [ ! -e "$root/bin/$(basename "$t")" ] && copy_dyn "$t"
	done
	# iputils ping for nft_queue.sh (ping -f; busybox ping has no -f);
	# the tests/kernel scripts run under busybox sh, which keeps using
	# its own ping applet
	rm -f "$root/bin/ping"
	copy_dyn /bin/ping
	true
fi
# the library's own test tool, from the build that "make check-kernel"
# runs in (dynamically linked against that build's libnfq-batch.so.0)
if [ -n "${NFQB_GUEST_TOOL:-}" ]; then
	tool=$NFQB_GUEST_TOOL
	# a libtool wrapper script: the real program is in .libs/
	if [ "$(head -c 4 "$tool" 2>/dev/null | tr -d '\177')" != ELF ]; then
		for t in "$(dirname "$tool")/.libs/lt-$(basename "$tool")" \
			 "$(dirname "$tool")/.libs/$(basename "$tool")"; do
			[ -x "$t" ] && tool=$t && break
		done
	fi
	if [ "$(head -c 4 "$tool" 2>/dev/null | tr -d '\177')" != ELF ]; then
		echo "run-qemu.sh: NFQB_GUEST_TOOL=$NFQB_GUEST_TOOL is not an executable" >&2
		exit 2
	fi
	copy_dyn "$tool"
	# Libraries of the build tree (libnfq-batch.so.0 in .libs/) also go
	# where the loader looks by default, next to libc: the build's own path
	# may be hidden in the guest (a tmpfs on /tmp) or not be in the
	# program's run path at all.
	libdir=$(ldd "$tool" | awk '/libc\.so/ { print $3 }' | xargs dirname)
	ldd "$tool" | awk '/=>/ { print $3 }' | grep '/\.libs/' |
	while read -r lib; do
		mkdir -p "$root$libdir"
		cp -L "$lib" "$root$libdir/"
	done
	[ "$(basename "$tool")" = nfqb-netdev ] ||
		mv "$root/bin/$(basename "$tool")" "$root/bin/nfqb-netdev"
	echo "run-qemu.sh: library test tool $tool" >&2
else
	echo "run-qemu.sh: NFQB_GUEST_TOOL not set: the library's guest tests" \
	     "(t-15, t-25) will be skipped; use make check-kernel" >&2
fi
if [ $# -gt 0 ]; then
	printf '%s\n' "$@" > "$root/tests/selected"
fi

cat > "$root/init" <<'INIT'
#!/bin/sh
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /var/run && ln -s /run/netns /var/run/netns 2>/dev/null
echo "NFQB-GUEST: booted in $(cut -d' ' -f1 /proc/uptime) s, $(nproc) cpus"
cd /tests
sh /tests/run.sh
rc=$?
echo "NFQB-RESULT: $rc"
sync
reboot -f
INIT
chmod +x "$root/init"
cp "$tdir/run.sh" "$root/tests/run.sh"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.gz"

log=$work/guest.log
timeout_s=${NFQB_QEMU_TIMEOUT:-4800}
accel=${NFQB_QEMU_ACCEL:-tcg}
echo "run-qemu.sh: booting $img (accel=$accel, 2 cpus)" >&2
start=$(date +%s)
set +e
timeout "$timeout_s" qemu-system-x86_64 \
	-accel "$accel" -cpu max -smp 2 -m "${NFQB_QEMU_MEM:-1024}" \
	-nographic -no-reboot -nic none \
	-kernel "$img" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=6" \
	</dev/null >"$log" 2>&1
qrc=$?
set -e
end=$(date +%s)
tr -d '\r' < "$log" > "$log.txt"
[ -z "${NFQB_LOG:-}" ] || cp "$log.txt" "$NFQB_LOG"
cat "$log.txt"
echo "run-qemu.sh: qemu exited $qrc after $((end - start)) s" >&2

rc=$(sed -n 's/^NFQB-RESULT: \([0-9]*\).*/\1/p' "$log.txt" | tail -1)
if [ -z "$rc" ]; then
	echo "run-qemu.sh: FAIL: guest did not report a result (timeout or crash)" >&2
	exit 1
fi
if grep -E -n 'WARNING:|BUG:|BUG |KASAN|Oops|Kernel panic|general protection|possible circular locking|possible recursive locking|inconsistent lock state|refcount_t:|unregister_netdevice: waiting|kmemleak: [1-9][0-9]* new suspected|suspicious RCU usage|list_add corruption|list_del corruption|ref_tracker' "$log.txt" >&2; then
	echo "run-qemu.sh: FAIL: kernel reported a problem (see above)" >&2
	exit 1
fi
if [ "$rc" != 0 ]; then
	echo "run-qemu.sh: FAIL: guest tests exited $rc" >&2
	exit 1
fi
echo "run-qemu.sh: PASS" >&2
