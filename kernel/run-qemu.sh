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
# Environment: NFQB_QEMU_SHARDS (guests side by side, default 2: see
# Shards below), NFQB_QEMU_TIMEOUT (seconds, default 4800), NFQB_QEMU_ACCEL
# (default tcg), NFQB_QEMU_MEM (MiB, default 1024), NFQB_KEEP (keep the
# work directory), NFQB_LOG (copy the guest log here), NFQB_GUEST_TOOL
# (the library's test tool tests/kernel/nfqb-netdev from a configured
# build, as "make check-kernel" passes it: copied into the guest with the
# shared libraries it needs, libnfq-batch.so.0 of that build included;
# without it the tests that need it, t-15, t-25 and t-82, are skipped).
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
	     "(t-15, t-25, t-82) will be skipped; use make check-kernel" >&2
fi
# the tests to run: the arguments, or every t-*.sh
if [ $# -gt 0 ]; then
	tests=$(for t in "$@"; do echo "${t%.sh}"; done)
else
	tests=$(cd "$tdir" && ls t-*.sh | sed 's/\.sh$//')
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

# Results cached by content, per host: a test whose inputs are the
# same as in an earlier pass on the same host is reported from that pass
# (its log, with the date) instead of run again. The inputs: the host's
# /etc/machine-id, the kernel image, how the guest boots (qemu's
# arguments, the kernel command line) and what in its log fails a run,
# everything in the initramfs but the test scripts and the library
# (busybox, the tools, nfqt, run.sh, lib.sh, the selftests), the test's
# own script, and for the tests that run the library's tool
# (uses_lib_tool: t-15, t-25, t-82) the library and the tool. The passes are
# kept beside the image (images/KEY/results/), so a new host or a new
# image has none: a cold run runs everything. A pass is
# kept only when its whole guest passed (no kernel report, no leak).
# NFQB_KERNEL_RESULTS=0 runs every test whatever the cache holds.
# The harness's part in a result: how the guest is booted and what in
# its log fails the run (these, not the rest of this script, go into the
# key, so that a change to how results are reported keeps them)
timeout_s=${NFQB_QEMU_TIMEOUT:-4800}
accel=${NFQB_QEMU_ACCEL:-tcg}
qemu_args="-accel $accel -cpu max -smp 2 -m ${NFQB_QEMU_MEM:-1024} -nographic -no-reboot -nic none"
kernel_cmdline="console=ttyS0 panic=-1 oops=panic loglevel=6"
report_re='WARNING:|BUG:|BUG |KASAN|Oops|Kernel panic|general protection|possible circular locking|possible recursive locking|inconsistent lock state|refcount_t:|unregister_netdevice: waiting|kmemleak: [1-9][0-9]* new suspected|suspicious RCU usage|list_add corruption|list_del corruption|ref_tracker'
rdir=$(dirname "$img")/results
mid=$(cat /etc/machine-id 2>/dev/null || hostname)
base_key=$( {
	echo "$mid"
	sha256sum < "$img"
	echo "$qemu_args"
	echo "$kernel_cmdline"
	echo "$report_re"
	cd "$root" && find . -type f ! -path './tests/t-*.sh' \
		! -name 'libnfq-batch.so*' ! -path ./bin/nfqb-netdev |
		LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -c1-16)
# (the library's and the tool's code, without their debug information
# and build id, which name the build's directory: a clone elsewhere with
# the same sources has the same key)
lib_key=$(cd "$root" && find . -type f \( -name 'libnfq-batch.so*' -o \
	-path ./bin/nfqb-netdev \) | LC_ALL=C sort | while read -r f; do
		objcopy --strip-debug --remove-section=.note.gnu.build-id \
			"$f" "$work/strip.tmp" 2>/dev/null || cp "$f" "$work/strip.tmp"
		echo "$f $(sha256sum < "$work/strip.tmp")"
	done | sha256sum | cut -c1-16)
# uses_lib_tool T: test T runs the library's tool (nfqb-netdev), itself
# or through lib.sh's lib_hook_cases (which calls need_lib_tool)
uses_lib_tool() {
	grep -qE 'need_lib_tool|lib_hook_cases|nfqb-netdev' "$tdir/$1.sh"
}
test_key() {
	{
		echo "$base_key"
		cat "$tdir/$1.sh"
		uses_lib_tool "$1" && echo "library $lib_key"
	} | sha256sum | cut -c1-16
}
torun=
ncached=0
for t in $tests; do
	k=$(test_key "$t")
	if [ "${NFQB_KERNEL_RESULTS:-1}" = 1 ] && [ -s "$rdir/$t.$k" ]; then
		echo "=== CACHED $t.sh: $(head -n 1 "$rdir/$t.$k")"
		tail -n +2 "$rdir/$t.$k" | sed 's/^/    | /'
		ncached=$((ncached + 1))
	else
		torun="$torun $t"
	fi
done
tests=$torun
if [ -z "$tests" ]; then
	echo "run-qemu.sh: all $ncached tests reported from earlier passes with identical inputs on this host ($rdir); NFQB_KERNEL_RESULTS=0 runs them" >&2
	echo "run-qemu.sh: PASS" >&2
	exit 0
fi
[ "$ncached" = 0 ] ||
	echo "run-qemu.sh: $ncached test(s) reported from cached passes (=== CACHED above), running:$tests" >&2

# Shards: NFQB_QEMU_SHARDS guests (default 2) boot side by side, each
# with its share of the tests, so that one guest's waits (sleeps,
# timeouts, a listener's idle time) overlap another's work. The tests go
# to the shards longest first, each to the shard with the least time so
# far, by the seconds each took in the host's last passing run
# (NFQB_KERNEL_TIMES, default the kernel cache's guest-times file, kept
# by this script), else by the figures in tests/kernel/times.
shards=${NFQB_QEMU_SHARDS:-2}
times_file=${NFQB_KERNEL_TIMES:-${NFQB_KERNEL_CACHE:-/var/cache/nfqb-kernel}/guest-times}
weights() {
	for t in $tests; do
		# (no times file yet: awk fails, which set -e must not see)
		w=$(awk -v t="$t" '$1 == t { w = $2 } END { print w }' \
			"$times_file" 2>/dev/null || true)
		[ -n "$w" ] || w=$(awk -v t="$t" '$1 == t { print $2 }' \
			"$tdir/times" 2>/dev/null || true)
		echo "$t ${w:-60}"
	done
}
n=$(echo "$tests" | wc -w)
[ "$shards" -ge 1 ] || shards=1
[ "$shards" -le "$n" ] || shards=$n
weights | sort -k2,2nr -k1,1 | awk -v n="$shards" '
	{ b = 0; for (i = 1; i < n; i++) if (load[i] < load[b]) b = i
	  load[b] += $2; list[b] = list[b] $1 "\n" }
	END { for (i = 0; i < n; i++) {
		printf "%s", list[i] > ("'"$work"'/shard" i ".list")
		printf "run-qemu.sh: shard %d: about %d s of tests\n", i, load[i] | "cat >&2" } }'
start=$(date +%s)
i=0
while [ "$i" -lt "$shards" ]; do
	d=$work/shard$i
	mkdir -p "$d/root/tests"
	cp "$work/shard$i.list" "$d/root/tests/selected"
	# a second archive after the first: the kernel unpacks both
	(cd "$d/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$d/extra.gz"
	cat "$work/initramfs.gz" "$d/extra.gz" > "$d/initramfs.gz"
	echo "run-qemu.sh: shard $i: booting $img (accel=$accel, 2 cpus):" \
	     $(cat "$work/shard$i.list") >&2
	(
		# shellcheck disable=SC2086 # qemu_args: words
		timeout "$timeout_s" qemu-system-x86_64 $qemu_args \
			-kernel "$img" -initrd "$d/initramfs.gz" \
			-append "$kernel_cmdline" \
			</dev/null >"$d/guest.log" 2>&1
		echo $? >"$d/qrc"
		date +%s >"$d/end"
		# the CPU qemu used (children's user and system time)
		# (its second line; not through a pipe, whose subshell
		# has no children)
		times >"$d/times"
		tail -n 1 "$d/times" >"$d/cpu"
	) &
	i=$((i + 1))
done
wait
fail=0
passed_times=
i=0
while [ "$i" -lt "$shards" ]; do
	d=$work/shard$i
	log=$d/guest.log
	tr -d '\r' < "$log" > "$log.txt"
	if [ -n "${NFQB_LOG:-}" ]; then
		if [ "$shards" = 1 ]; then
			cp "$log.txt" "$NFQB_LOG"
		else
			cp "$log.txt" "$NFQB_LOG.shard$i"
		fi
	fi
	echo "######## shard $i: $(cat "$work/shard$i.list" | tr '\n' ' ')"
	cat "$log.txt"
	echo "run-qemu.sh: shard $i: qemu exited $(cat "$d/qrc") after $(($(cat "$d/end") - start)) s, CPU (user, system) $(cat "$d/cpu")" >&2
	rc=$(sed -n 's/^NFQB-RESULT: \([0-9]*\).*/\1/p' "$log.txt" | tail -1)
	shard_ok=0
	if [ -z "$rc" ]; then
		echo "run-qemu.sh: FAIL: shard $i: guest did not report a result (timeout or crash)" >&2
		fail=1
	elif grep -E -n "$report_re" "$log.txt" >&2; then
		echo "run-qemu.sh: FAIL: shard $i: kernel reported a problem (see above)" >&2
		fail=1
	elif [ "$rc" != 0 ]; then
		echo "run-qemu.sh: FAIL: shard $i: guest tests exited $rc" >&2
		fail=1
	else
		shard_ok=1
	fi
	# keep each test's pass when the whole guest passed
	if [ "$shard_ok" = 1 ] && mkdir -p "$rdir" 2>/dev/null; then
		for t in $(cat "$work/shard$i.list"); do
			grep -q "^=== PASS $t.sh " "$log.txt" || continue
			{
				echo "passed $(date '+%F %T'), shard $i of $shards, image $(basename "$(dirname "$img")")"
				sed -n "/^=== RUN $t.sh\$/,/^=== PASS $t.sh /p" "$log.txt"
			} > "$rdir/$t.$(test_key "$t")"
		done
	fi
	passed_times="$passed_times$(sed -n 's/^=== PASS \(t-[^ ]*\)\.sh (\([0-9.]*\)\.\.\([0-9.]*\) s)$/\1 \2 \3/p' "$log.txt" |
		awk '{ printf "%s %d\n", $1, $3 - $2 + 0.5 }')
"
	i=$((i + 1))
done
# the seconds each test took here, for the next run's shards (tests that
# passed only; the others keep their last figure)
echo "run-qemu.sh: seconds per test (guest clock):" >&2
echo "$passed_times" | awk 'NF == 2 { printf "  %s %s\n", $1, $2 }' >&2
if [ -w "$(dirname "$times_file")" ] || mkdir -p "$(dirname "$times_file")" 2>/dev/null; then
	{ cat "$times_file" 2>/dev/null; echo "$passed_times"; } |
		awk 'NF == 2 { w[$1] = $2 } END { for (t in w) print t, w[t] }' |
		sort > "$times_file.new" && mv "$times_file.new" "$times_file"
fi
echo "run-qemu.sh: $shards guest(s), $(($(date +%s) - start)) s in all" >&2
if [ "$fail" != 0 ]; then
	exit 1
fi
echo "run-qemu.sh: PASS" >&2
