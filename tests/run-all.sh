#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install the dependencies, build, and run every test, twice, then the
# threaded tests a third time:
#   1. build-werror/  -Werror, `make check`, then an install check
#   2. build-asan/    AddressSanitizer + UndefinedBehaviorSanitizer,
#                     `make check` again
#   3. build-tsan/    ThreadSanitizer, `make check` of every threaded test
#   4. build-i386/    tests/check-i386.sh: gcc -m32 with Debian's i386
#                     libraries, -Werror, the unit tests and the man check
#   5. tests/check-abi.sh: the ABI of build-werror/ and build-i386/ against
#      the one recorded in tests/abi/ (abidiff: nothing removed or changed)
#   6. tests/check-deb.sh: the Debian packages; make distcheck (the
#      release tarball builds and passes make check out of tree); 60 s of soak (make
#      -C build-werror soak: nfqb-ips with reloads, upgrades, restarts)
#   7. make -C build-werror check-kernel: the patched kernel (kernel/) under
#      qemu, its guest tests and the library's own (t-15, t-25, t-82, linked
#      against build-werror's libnfq-batch)
#   7b. kernel/check-upstream.sh: the series' upstream form
#      (kernel/patches-upstream/) applies to the upstream source it names
#   8. tests/fuzz/run.sh 20: libFuzzer on the parser and the datagram path,
#      20 s per target (clang, its own build in build-fuzz/)
#   9. build-daq/: libdaq and Snort 3 built from their release tarballs
#      into a cache outside the clone (tests/snort/build-snort.sh; about
#      20 min at -j2 the first time on a machine, started in the
#      background right after the dependencies, see below), libnfq-batch
#      configured --with-daq=yes against it, and: tests/daq/test-daq.sh
#      (libdaq's daqtest driving the stock nfq module and our daq_nfqb),
#      tests/daq/test-contract.sh (daq_nfqb against libdaq's contract as
#      Snort uses it) and tests/snort/test-snort.sh (Snort itself inline
#      on both modules); then build-daq-asan/: the contract test again
#      under ASan+UBSan
#  10. the Python binding (python/): its pytest suite runs in stages 1
#      and 2 (python/tests/run.sh in make check; under ASan in stage 2) and
#      its package in stage 6; here python/check-pip.sh (pip installs it
#      offline into fresh venvs, and it works) and a short run of the
#      benchmark against python-netfilterqueue 1.1.0 (built from its
#      tarball with cython3, like libdaq's: a skip without it, a failure
#      in CI), about 2.5 min
# 10a. nfqb-bench -c lib,app: one short run of the application binary of
#      make bench-abi (bench/nfqb-bench-app) on build-werror's library
# 10b. the Go package (go/): make -C build-werror check-go (go/tests/run.sh:
#      gofmt, go vet, the tests and benchmarks of go/nfqb and go/nfqueue
#      on the kernel, go-nfqueue 2.0.0's own tests when its source is
#      found), each Go test counted
# Run as root on Debian 12 (integration tests use network namespaces,
# iptables and nfnetlink_queue).  Exits non-zero if anything failed; the
# run ends with a table of each stage's wall time and of the background
# builds (when each started and finished, which stage waited for it and
# how long), then "N passed, N failed".
#
# The cached builds: right after the dependencies, tests/prepare.sh starts
# every build the later stages need (the patched kernel image, libdaq and
# Snort, python-netfilterqueue, Suricata), each cached outside the clone
# and keyed by a hash of its inputs, in the background at nice 19 (its
# own scheduler autogroup), so they use the CPU the first stages leave
# idle; a stage that needs one waits for it (its lock) or finds it cached.
# A developer runs `tests/prepare.sh` first thing on a new machine, so
# that a later run-all finds them warm.
#
# Environment: NFQB_NO_APT=1 skips apt-get; NFQB_JOBS (default: nproc)
# sets build parallelism; CI=true makes a skipped test count as failed;
# NFQB_NO_KERNEL=1 skips stage 7 (counted as a skip), except in CI, where
# it always runs; NFQB_QEMU_SHARDS (default 2) sets how many guests run
# stage 7's tests side by side (kernel/run-qemu.sh). NFQB_LIBDAQ_TARBALL
# names libdaq's tarball for stage 9
# (default: what tests/find-third-party.sh finds, in NFQB_THIRD_PARTY_DIR,
# in its cache outside the clone, or as shared/third_party/ beside the
# clone, its parents or its local git origin; without it the stage is a
# skip, a failure in CI), NFQB_SNORT_TARBALL Snort's (default: found the
# same way), NFQB_SNORT_CACHE where Snort is built (default
# /var/cache/nfqb-snort); NFQB_PREPARE_BG=0 starts no background build
# (each stage builds what it needs itself). The whole run works from a
# clone at any path (/tmp, /root included). The kernel image is cached
# outside the clone (NFQB_KERNEL_CACHE, default /var/cache/nfqb-kernel,
# keyed by a hash of its inputs): only the first run on a machine builds
# it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [ "$(id -u)" -ne 0 ]; then
	echo "run-all: the integration tests need root; run as root" >&2
	exit 1
fi

# Stage times: every banner names its stage (the text before its first
# colon); the time from one stage's first banner to the next stage's is
# the stage's wall time, and the summary ends with the table.
stage_names=()
stage_secs=()
cur_stage=
cur_t0=0
stage_mark() {
	[ "$1" = "$cur_stage" ] && return 0
	if [ -n "$cur_stage" ]; then
		stage_names+=("$cur_stage")
		stage_secs+=($((SECONDS - cur_t0)))
	fi
	cur_stage=$1
	cur_t0=$SECONDS
}
banner() {
	local name=${1%%:*}
	stage_mark "${name%% (*}"
	printf '\n======== %s (%s, run-all +%d s) ========\n' "$*" "$(date +%T)" "$SECONDS"
}
run_epoch=$(date +%s)

banner "deps: tests/deps.sh, kernel/deps.sh"
"$top/tests/deps.sh"
sh "$top/kernel/deps.sh"
[ ! -x "$top/tests/suricata/deps.sh" ] || "$top/tests/suricata/deps.sh"

# The cached builds (the kernel image, libdaq and Snort, the reference
# python-netfilterqueue, Suricata) take from seconds (cached) to 20
# minutes each (a new machine): tests/prepare.sh starts them now, each in
# a session and scheduler autogroup of its own at nice 19, so that they
# use the CPU the tests below leave idle (they mostly wait on the
# kernel); the stage that needs one calls its build script again, which
# waits for the build's lock or reuses the cached result at once. Their
# start and end go into the closing table, with what waited for them.
# NFQB_SNORT_BG=0 (the old name) or NFQB_PREPARE_BG=0 starts none (each
# stage then builds what it needs itself).
bg_dir=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-bg.XXXXXX")
bg_waits=()
if [ "${NFQB_SNORT_BG:-1}" = 1 ] && [ "${NFQB_PREPARE_BG:-1}" = 1 ]; then
	NFQB_JOBS=$jobs "$top/tests/prepare.sh" --no-deps --dir "$bg_dir" \
		--only "kernel snort pynfq" ||
		echo "run-all: tests/prepare.sh could not start the background builds"
fi
stop_bg() {
	local f pid
	for f in "$bg_dir"/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		[ -f "${f%.pid}.end" ] && continue
		kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
	done
	rm -rf "$bg_dir"
}
trap stop_bg EXIT

# bg_wait NAME STAGE CMD...: run CMD (a build script, which waits for the
# background build's lock or reuses its result), noting how long STAGE
# waited for NAME; CMD's output and status are its own.
bg_wait() {
	local name=$1 stage=$2 t0=$SECONDS rc=0
	shift 2
	"$@" || rc=$?
	bg_waits+=("$name:$stage:$((SECONDS - t0))")
	return $rc
}

# The closing table: each stage's wall time, then the background builds
# (started and finished, as seconds into the run) and who waited for them.
stage_table() {
	local i name s e rc w line total=0
	stage_mark "(end)"
	echo
	echo "run-all: stage times (wall, whole run $SECONDS s)"
	printf '  %-16s %6s\n' stage seconds
	for i in "${!stage_names[@]}"; do
		printf '  %-16s %6d\n' "${stage_names[$i]}" "${stage_secs[$i]}"
		total=$((total + stage_secs[i]))
	done
	printf '  %-16s %6d\n' total "$total"
	echo "run-all: background builds (seconds into the run; tests/prepare.sh)"
	printf '  %-9s %8s %9s %7s  %-10s %s\n' build started finished seconds result "waited for by"
	for f in "$bg_dir"/*.pid; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .pid)
		s=$(cat "$bg_dir/$name.start" 2>/dev/null || echo "$run_epoch")
		e=$(cat "$bg_dir/$name.end" 2>/dev/null || true)
		rc=$(cat "$bg_dir/$name.rc" 2>/dev/null || echo -)
		case $rc in 0) rc=ok ;; -) rc="unfinished" ;; *) rc="failed $rc" ;; esac
		line=
		for w in "${bg_waits[@]}"; do
			case $w in "$name":*)
				w=${w#*:}
				line="$line${line:+, }${w%%:*} ${w#*:} s" ;;
			esac
		done
		printf '  %-9s %8s %9s %7s  %-10s %s\n' "$name" "+$((s - run_epoch))" \
			"${e:++$((e - run_epoch))}" "${e:+$((e - s))}" "$rc" "${line:-nothing}"
		if [ "$rc" != ok ] && [ -f "$bg_dir/$name.log" ]; then
			tail -n 5 "$bg_dir/$name.log" | sed 's/^/    | /'
		fi
	done
}

stage_failures=0
install_pass=0
install_fail=0
runs=()

stage_failed() {
	echo "run-all: FAILED: $*" >&2
	stage_failures=$((stage_failures + 1))
}

# VPATH builds cannot configure while the source tree itself is configured.
if [ -f "$top/config.status" ]; then
	echo "run-all: removing the in-tree build (make distclean) so the" \
	     "out-of-tree builds can configure"
	make -s distclean >/dev/null 2>&1 || rm -f "$top/config.status"
fi

banner "autogen"
./autogen.sh || { stage_failed "autogen.sh"; }

# build_and_check NAME DIR [configure args...]; env for the tests is taken
# from the caller's environment.
build_and_check() {
	local name=$1 dir=$2
	shift 2
	runs+=("$name:$dir")
	banner "$name: configure $*"
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! (cd "$dir" && "$top/configure" "$@"); then
		stage_failed "$name: configure"
		return 1
	fi
	banner "$name: make"
	if ! make -C "$dir" -j"$jobs"; then
		stage_failed "$name: make"
		return 1
	fi
	# Build the test programs in parallel, then run the tests one by one:
	# integration tests share the kernel and timing matters.
	if ! make -C "$dir" -j"$jobs" check TESTS=; then
		stage_failed "$name: building the tests"
		return 1
	fi
	banner "$name: make check"
	if ! make -C "$dir" check; then
		echo "run-all: $name: test failures; $dir/test-suite.log:"
		cat "$dir/test-suite.log" 2>/dev/null || true
		return 1
	fi
	return 0
}

ok=1

build_and_check werror "$top/build-werror" --enable-werror || ok=0
# Suricata (stage 11) links libnfq-batch: its background build starts
# once build-werror has the library
if [ "${NFQB_SNORT_BG:-1}" = 1 ] && [ "${NFQB_PREPARE_BG:-1}" = 1 ] &&
   [ -e "$top/build-werror/lib/.libs/libnfq-batch.so" ]; then
	NFQB_LIB_BUILD=$top/build-werror NFQB_JOBS=$jobs \
		"$top/tests/prepare.sh" --no-deps --dir "$bg_dir" --only suricata8 ||
		echo "run-all: tests/prepare.sh could not start the Suricata build"
fi
if [ -f "$top/build-werror/config.status" ] &&
   [ -f "$top/build-werror/lib/libnfq-batch.la" ]; then
	banner "werror: install check"
	if "$top/tests/check-install.sh" "$top/build-werror"; then
		install_pass=1
	else
		install_fail=1
		ok=0
	fi
fi

ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	build_and_check asan "$top/build-asan" --enable-sanitizers \
		CFLAGS="-g -O1" || ok=0

# 3. build-tsan/: ThreadSanitizer, every test that uses threads: the
#    integration tests (their traffic and the deciding threads) and the
#    model test (decisions from several threads).
tsan_tests="tests/integration/test_core tests/integration/test_coalesce_kernel
	tests/integration/test_pool tests/integration/test_verdicts
	tests/integration/test_safety tests/integration/test_linger
	tests/integration/test_lifecycle tests/integration/test_systemd
	tests/integration/test_sleep tests/integration/test_pollloop
	tests/unit/test_model tests/unit/test_plan"
tsan_check() {
	local name=tsan dir="$top/build-tsan"
	runs+=("$name:$dir")
	banner "$name: configure --enable-tsan"
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! (cd "$dir" && "$top/configure" --enable-tsan CFLAGS="-g -O1"); then
		stage_failed "$name: configure"
		return 1
	fi
	banner "$name: make"
	if ! make -C "$dir" -j"$jobs" ||
	   ! make -C "$dir" -j"$jobs" check TESTS=; then
		stage_failed "$name: make"
		return 1
	fi
	banner "$name: make check TESTS=$(echo $tsan_tests)"
	if ! TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
	     make -C "$dir" check TESTS="$(echo $tsan_tests)"; then
		echo "run-all: $name: test failures; $dir/test-suite.log:"
		cat "$dir/test-suite.log" 2>/dev/null || true
		return 1
	fi
	return 0
}
tsan_check || ok=0

# 4. build-i386/: the 32-bit build and its unit tests (counted per test,
#    from their .trs files, like the builds above).
banner "i386: tests/check-i386.sh build-i386"
runs+=("i386:$top/build-i386")
if ! NFQB_JOBS=$jobs "$top/tests/check-i386.sh" "$top/build-i386"; then
	echo "run-all: i386: the 32-bit build or its tests failed"
	[ -f "$top/build-i386/test-suite.log" ] || stage_failed "i386: build"
	ok=0
fi

# 5. The ABI check: each build's libnfq-batch.so against the recorded ABI
#    of its architecture (one test each).
abi_pass=0
abi_fail=0
for d in build-werror build-i386; do
	banner "abi: tests/check-abi.sh $d"
	if "$top/tests/check-abi.sh" "$top/$d"; then
		abi_pass=$((abi_pass + 1))
	else
		abi_fail=$((abi_fail + 1))
		ok=0
	fi
done

# 6. The Debian packages: built from a copy of the tree, their contents
# checked, a program built and run against the unpacked packages.
deb_pass=0
deb_fail=0
banner "debian packages: tests/check-deb.sh"
if "$top/tests/check-deb.sh"; then
	deb_pass=1
else
	deb_fail=1
	ok=0
fi

# 6a. The release tarball: make distcheck (make dist, then an out-of-tree
# build of the tarball with every test of make check, install and
# uninstall into a scratch prefix, distclean); one test.
dist_pass=0
dist_fail=0
banner "distcheck: make -C build-werror distcheck"
if [ -f "$top/build-werror/config.status" ] &&
   make -C "$top/build-werror" -j"$jobs" distcheck; then
	dist_pass=1
else
	dist_fail=1
	ok=0
fi

# 6b. The soak, 60 s (make soak runs 600): nfqb-ips under load with
# reloads, upgrades in place, and a stop and fresh start every 20 s;
# nothing lost, RSS and fds flat.
soak_pass=0
soak_fail=0
banner "soak: make -C build-werror soak NFQB_SOAK_SECONDS=60 NFQB_SOAK_RESTART_S=20"
if [ -f "$top/build-werror/config.status" ] &&
   NFQB_SOAK_RESTART_S=20 make -C "$top/build-werror" soak NFQB_SOAK_SECONDS=60; then
	soak_pass=1
else
	soak_fail=1
	ok=0
fi

# 7. The kernel check: build (or take from the cache) the patched kernel,
# boot it under qemu, run the guest tests, among them the library's netdev
# tests with build-werror's tests/kernel/nfqb-netdev and libnfq-batch.so.
kernel_pass=0
kernel_fail=0
kernel_skip=0
if [ "${NFQB_NO_KERNEL:-0}" = 1 ] && [ "${CI:-}" != true ]; then
	banner "kernel: make check-kernel skipped (NFQB_NO_KERNEL=1)"
	kernel_skip=1
else
	[ "${NFQB_NO_KERNEL:-0}" = 1 ] &&
		echo "run-all: CI=true: NFQB_NO_KERNEL=1 ignored, the kernel check runs"
	banner "kernel: make -C build-werror check-kernel"
	# the whole output is also kept, so that the summary can name the
	# guest tests that failed (a CI log may show only its end)
	kernel_out=$top/build-werror/check-kernel.out
	# the image first (the background build's, or cached): its wait
	# goes into the table
	bg_wait kernel kernel sh "$top/kernel/build.sh" >/dev/null ||
		echo "run-all: kernel/build.sh failed (check-kernel says why)"
	if [ -f "$top/build-werror/config.status" ] &&
	   make -C "$top/build-werror" check-kernel 2>&1 | tee "$kernel_out" &&
	   [ "${PIPESTATUS[0]}" -eq 0 ]; then
		kernel_pass=1
	else
		kernel_fail=1
		ok=0
	fi
fi

# 7b. The upstream form of the kernel series: kernel/check-upstream.sh on
# the upstream source it names (kernel/upstream-source.sh: Debian's
# linux-source-7.2, fetched once into the kernel cache, its hash checked):
# every patch applies, the files are those of patches-upstream/BASE, and
# the series exports again to the same bytes.
up_pass=0
up_fail=0
banner "kernel: the upstream form applies (kernel/check-upstream.sh)"
if up_src=$("$top/kernel/upstream-source.sh") &&
   NFQB_ROUNDTRIP=1 "$top/kernel/check-upstream.sh" "$up_src"; then
	up_pass=1
else
	up_fail=1
	ok=0
fi

# 8. Fuzzing: tests/fuzz/run.sh builds the fuzz targets itself (clang,
# build-fuzz/) and fails on any crash, leak, hang or oracle failure.
fuzz_pass=0
fuzz_fail=0
banner "fuzz: tests/fuzz/run.sh 20"
if "$top/tests/fuzz/run.sh" 20; then
	fuzz_pass=1
else
	fuzz_fail=1
	ok=0
fi

# 9. The DAQ module and Snort: libdaq and Snort 3 (test dependencies,
# GPL-2.0) from their tarballs, built once into a cache outside the clone
# (tests/snort/build-snort.sh; the background build started above, or the
# cached one), a build --with-daq=yes against that libdaq (found with
# pkg-config), and only the DAQ and Snort tests there (the rest of the
# suite ran in build-werror/): daqtest on both modules, the contract
# test, Snort inline on both modules. Then the contract test once more in
# an ASan+UBSan build (interrupt() racing stop() shows there). Each
# scenario is counted (Check-style lines).
daq_skip=0
daq_check() {
	local name=daq dir="$top/build-daq" prefix tarball
	tarball=$("$top/tests/daq/find-tarball.sh" || true)
	if [ ! -f "$tarball" ]; then
		banner "daq: skipped, no libdaq tarball (tests/find-third-party.sh; NFQB_LIBDAQ_TARBALL, NFQB_THIRD_PARTY_DIR)"
		daq_skip=1
		return 0
	fi
	runs+=("$name:$dir")
	rm -rf "$dir"
	mkdir -p "$dir"
	banner "daq: tests/snort/build-snort.sh (libdaq and Snort, cached)"
	local t0=$SECONDS
	if ! NFQB_JOBS=$jobs bg_wait snort daq "$top/tests/snort/build-snort.sh" \
		>"$dir/snort-prefix"; then
		stage_failed "daq: building libdaq and Snort"
		return 1
	fi
	prefix=$(cat "$dir/snort-prefix")
	echo "run-all: libdaq and Snort in $prefix (waited $((SECONDS - t0)) s)"
	banner "daq: configure --with-daq=yes (libdaq in $prefix)"
	if ! (cd "$dir" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
		"$top/configure" --enable-werror --with-daq=yes); then
		stage_failed "daq: configure"
		return 1
	fi
	# only the programs these tests run (the others ran in build-werror/)
	local progs="tests/daq/daq-traffic tests/daq/daq-contract tests/snort/snort-traffic"
	banner "daq: make"
	if ! make -C "$dir" -j"$jobs" ||
	   ! make -C "$dir" -j"$jobs" $progs; then
		stage_failed "daq: make"
		return 1
	fi
	local daq_tests="tests/daq/test-daq.sh tests/daq/test-contract.sh tests/snort/test-snort.sh"
	banner "daq: make check TESTS=$daq_tests"
	local rc=0
	NFQB_DAQ_REQUIRED=1 NFQB_SNORT_REQUIRED=1 NFQB_SNORT_PREFIX="$prefix" \
		make -C "$dir" check TESTS="$daq_tests" check_PROGRAMS="$progs" \
		check_LTLIBRARIES= || rc=1
	if [ "$rc" -ne 0 ]; then
		echo "run-all: $name: test failures; $dir/test-suite.log:"
		cat "$dir/test-suite.log" 2>/dev/null || true
	fi
	# The module installs into LIBDIR/daq and exports only what libdaq
	# looks up (DAQ_MODULE_DATA).
	local dest so bad
	dest=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-daq-install.XXXXXX")
	if make -C "$dir" -s install DESTDIR="$dest" >/dev/null 2>&1 &&
	   so=$(find "$dest" -path '*/daq/daq_nfqb.so' | head -n 1) &&
	   [ -n "$so" ]; then
		bad=$(nm -D --defined-only "$so" |
			awk '$3 != "" && $3 != "DAQ_MODULE_DATA" && $2 != "A" { print $3 }')
		if [ -n "$bad" ]; then
			stage_failed "daq: daq_nfqb.so exports more than DAQ_MODULE_DATA: $bad"
			rc=1
		fi
	else
		stage_failed "daq: make install did not install daq/daq_nfqb.so"
		rc=1
	fi
	rm -rf "$dest"

	# the contract test under ASan+UBSan (module, library and test
	# instrumented; libdaq is not, which ASan allows)
	local adir="$top/build-daq-asan"
	runs+=("daq-asan:$adir")
	rm -rf "$adir"
	mkdir -p "$adir"
	banner "daq-asan: configure --enable-sanitizers --with-daq=yes"
	if ! (cd "$adir" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
		"$top/configure" --enable-sanitizers --with-daq=yes CFLAGS="-g -O1") ||
	   ! make -C "$adir" -j"$jobs" lib/libnfq-batch.la daq/daq_nfqb.la \
		tests/daq/daq-contract; then
		stage_failed "daq-asan: build"
		return 1
	fi
	banner "daq-asan: make check TESTS=tests/daq/test-contract.sh"
	if ! ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	     UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	     NFQB_DAQ_REQUIRED=1 make -C "$adir" check \
		TESTS=tests/daq/test-contract.sh \
		check_PROGRAMS=tests/daq/daq-contract check_LTLIBRARIES=; then
		echo "run-all: daq-asan: test failures; $adir/test-suite.log:"
		cat "$adir/test-suite.log" 2>/dev/null || true
		rc=1
	fi
	return $rc
}
daq_check || ok=0

# 10. The Python binding: pip, offline, into fresh venvs (two tests
# counted), and the benchmark against python-netfilterqueue (one run of
# each consumer: it fails only if a run fails or loses packets).
py_pass=0
py_fail=0
py_skip=0
banner "python: python/check-pip.sh"
if "$top/python/check-pip.sh"; then
	py_pass=$((py_pass + 1))
else
	py_fail=$((py_fail + 1))
	ok=0
fi
if [ -f "$top/build-werror/python/stage/.stamp" ]; then
	banner "python: make -C build-werror bench-python (short)"
	rc=0
	pynfq=$("$top/python/bench/build-pynfq.sh") || rc=$?
	if [ "$rc" -eq 77 ]; then
		banner "python: benchmark skipped: no python-netfilterqueue-1.1.0.tar.gz (NFQB_PYNFQ_TARBALL)"
		py_skip=1
	elif [ "$rc" -ne 0 ]; then
		stage_failed "python: building python-netfilterqueue for the benchmark"
	elif make -C "$top/build-werror" bench-python \
		NFQB_PYBENCH_ARGS="--mode stream --sizes 64 -n 20000 -r 1 --no-syscount"; then
		py_pass=$((py_pass + 1))
	else
		py_fail=$((py_fail + 1))
		ok=0
	fi
else
	stage_failed "python: build-werror has no Python binding (python3-dev missing?)"
fi

# 10a. nfqb-bench's app consumer (bench/nfqb-bench-app, the binary make
# bench-abi runs on two libraries) on build-werror's library, beside lib:
# one short run, which fails only if a run fails or loses packets (app-old
# needs release 0.1.0's library built: make bench-abi, not here).
app_pass=0
app_fail=0
banner "app: nfqb-bench -c lib,app (short)"
if [ -x "$top/build-werror/bench/nfqb-bench-app" ] &&
   NFQB_BENCH_APP="$top/build-werror/bench/nfqb-bench-app" \
   "$top/build-werror/bench/nfqb-bench" -c lib,app -s 64 --mode stream \
	-n 20000 -r 1 --no-syscount; then
	app_pass=1
else
	app_fail=1
	ok=0
fi

# 10b. The Go package on build-werror's library: every Go test that passed
# counts, and each one that failed (at least one if check-go failed).
go_pass=0
go_fail=0
go_out=$top/build-werror/check-go.log
banner "go: make -C build-werror check-go"
if make -C "$top/build-werror" check-go 2>&1 | tee "$go_out"; then
	go_pass=$(grep -c '^--- PASS' "$go_out" || true)
else
	go_pass=$(grep -c '^--- PASS' "$go_out" || true)
	go_fail=$(grep -c '^--- FAIL' "$go_out" || true)
	[ "$go_fail" -gt 0 ] || go_fail=1
	ok=0
fi

# 11. Suricata itself inline on both NFQ backends (its stock
# libnetfilter_queue one and ours), built once into a cache outside the
# clone (tests/suricata/build-suricata.sh, started in the background after
# build-werror's library), run against build-werror's libnfq-batch:
# tests/suricata/test-suricata.sh, each scenario a check (its Check-style
# line is counted). Suricata 8.0.7 (integrations/suricata/8.0/) runs every
# scenario, always (built here when not cached). Suricata 7.0.10
# (integrations/suricata/*.patch) runs the smoke scenarios enforce_udp
# (drop), tcp_lo (inspect) and restart, only where its build is cached
# (tests/prepare.sh builds it): building both in a cold run would not fit
# the run's 75 minutes (integrations/suricata/README.md, "CI").
suri_pass=0
suri_fail=0
# suri_run VERSION LABEL [SCENARIOS]: build (or reuse) and test one Suricata
suri_run() {
	local version=$1 label=$2 only=${3:-} rc=0 c=0 f=0 prefix_file
	local out=$top/build-werror/test-suricata-$version.log
	prefix_file=$top/build-werror/suricata-$version-prefix
	banner "suricata $version: tests/suricata/build-suricata.sh (cached)"
	if ! NFQB_SURICATA_VERSION=$version NFQB_JOBS=$jobs bg_wait "$label" suricata \
		"$top/tests/suricata/build-suricata.sh" "$top/build-werror" \
		>"$prefix_file"; then
		stage_failed "suricata $version: building Suricata"
		return
	fi
	banner "suricata $version: tests/suricata/test-suricata.sh${only:+ ($only)}"
	traffic=$top/build-daq/tests/snort/snort-traffic
	[ -x "$traffic" ] || traffic=
	NFQB_SURICATA_REQUIRED=1 NFQB_SURICATA_ONLY=$only \
	NFQB_SURICATA_PREFIX=$(cat "$prefix_file") \
	NFQB_LIBDIR=$top/build-werror/lib/.libs NFQB_TRAFFIC=$traffic \
		"$top/tests/suricata/test-suricata.sh" 2>&1 |
		tee "$out" || rc=1
	read -r c f <<<"$(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\).*/\1 \2/p' \
		"$out" | tail -n 1)" || true
	suri_pass=$((suri_pass + ${c:-0} - ${f:-0}))
	suri_fail=$((suri_fail + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		suri_fail=$((suri_fail + 1))
	fi
	[ "${c:-0}" -gt 0 ] || suri_fail=$((suri_fail + 1))
}
if [ -x "$top/tests/suricata/test-suricata.sh" ]; then
	if [ ! -e "$top/build-werror/lib/.libs/libnfq-batch.so" ]; then
		stage_failed "suricata: build-werror has no library"
	else
		suri_run 8.0 suricata8
		if NFQB_SURICATA_VERSION=7.0 NFQB_SURICATA_CACHED_ONLY=1 \
			"$top/tests/suricata/build-suricata.sh" "$top/build-werror" \
			>/dev/null 2>&1; then
			suri_run 7.0 suricata "enforce_udp tcp_lo restart"
		else
			banner "suricata 7.0: skipped"
			echo "run-all: Suricata 7.0.10's smoke (enforce_udp, tcp_lo, restart) skipped:" \
			     "its build is not cached here, and building it beside Suricata 8.0 would" \
			     "not fit a cold run's 75 minutes; tests/prepare.sh builds it (--only suricata)"
		fi
	fi
fi
[ "$suri_fail" -eq 0 ] || ok=0

# --- Counting ---------------------------------------------------------------
# Per test program (one .trs each): its Check test cases when its log holds
# Check summaries ("NN%: Checks: C, Failures: F, Errors: E"), otherwise the
# program itself as one test.  A program that failed although all its
# cases passed (a leak report at exit, a crash after the summary) counts one
# more failure.
total_pass=0
total_fail=0
total_skip=0
count_run() {
	local dir=$1 trs log res c f e sums
	local pass=0 fail=0 skip=0
	while IFS= read -r trs; do
		log=${trs%.trs}.log
		res=$(sed -n 's/^:test-result: *//p' "$trs" | head -n 1)
		sums=$(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' \
			"$log" 2>/dev/null | awk '{c+=$1; f+=$2; e+=$3} END {if (NR) print c, f, e}')
		if [ -n "$sums" ]; then
			read -r c f e <<<"$sums"
			pass=$((pass + c - f - e))
			fail=$((fail + f + e))
			case $res in
			FAIL|ERROR|XPASS) [ $((f + e)) -gt 0 ] || fail=$((fail + 1)) ;;
			esac
		else
			case $res in
			PASS|XFAIL) pass=$((pass + 1)) ;;
			SKIP) skip=$((skip + 1)) ;;
			*) fail=$((fail + 1)) ;;
			esac
		fi
	done < <(find "$dir" -name '*.trs' | sort)
	echo "$pass $fail $skip"
}

banner "summary"
for r in "${runs[@]}"; do
	name=${r%%:*}
	dir=${r#*:}
	echo "--- $name ($dir/test-suite.log)"
	if [ -f "$dir/test-suite.log" ]; then
		sed -n '/^# TOTAL/,/^# ERROR/p' "$dir/test-suite.log"
	else
		echo "# no test-suite.log (build failed?)"
	fi
	read -r p f s <<<"$(count_run "$dir")"
	echo "# counted: $p passed, $f failed, $s skipped"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
done

total_pass=$((total_pass + install_pass + abi_pass + deb_pass + dist_pass + kernel_pass + up_pass + fuzz_pass + soak_pass + py_pass + app_pass + go_pass + suri_pass))
total_fail=$((total_fail + install_fail + abi_fail + deb_fail + dist_fail + kernel_fail + up_fail + fuzz_fail + soak_fail + py_fail + app_fail + go_fail + suri_fail + stage_failures))
total_skip=$((total_skip + kernel_skip + daq_skip + py_skip))
if [ "$total_skip" -gt 0 ]; then
	if [ "${CI:-}" = true ]; then
		echo "run-all: $total_skip test program(s) skipped; in CI a skip is a failure"
		total_fail=$((total_fail + total_skip))
	else
		echo "run-all: $total_skip test program(s) skipped"
	fi
fi
[ "$stage_failures" -eq 0 ] ||
	echo "run-all: $stage_failures build stage(s) failed (counted as failures)"
[ "$install_fail" -eq 0 ] || echo "run-all: the install check failed"
[ "$abi_fail" -eq 0 ] || echo "run-all: the ABI check failed (tests/check-abi.sh)"
[ "$deb_fail" -eq 0 ] || echo "run-all: the Debian package check failed"
[ "$dist_fail" -eq 0 ] || echo "run-all: make distcheck failed (its output is under the distcheck banner)"
if [ "$kernel_fail" -ne 0 ]; then
	echo "run-all: the kernel check (make check-kernel) failed; its tests and failures:"
	grep -E '^=== (RUN|PASS|FAIL)|FAIL|run-qemu.sh:|check.sh:|build.sh:' \
		"${kernel_out:-/dev/null}" 2>/dev/null | grep -v '^=== RUN' | tail -60
fi
[ "$soak_fail" -eq 0 ] || echo "run-all: the soak failed (make -C build-werror soak; its output is under the soak banner)"
[ "$up_fail" -eq 0 ] || echo "run-all: the upstream form of the kernel series does not apply (stage 7b: kernel/check-upstream.sh)"
[ "$fuzz_fail" -eq 0 ] || echo "run-all: the fuzz targets failed (tests/fuzz/run.sh, build-fuzz/)"
[ "$py_fail" -eq 0 ] || echo "run-all: the Python binding's pip check or benchmark failed (stage 10)"
[ "$app_fail" -eq 0 ] || echo "run-all: nfqb-bench's app consumer failed (stage 10a; its output is under the app banner)"
[ "$go_fail" -eq 0 ] || echo "run-all: the Go package's check failed (stage 10b; make -C build-werror check-go, its output in build-werror/check-go.log)"
[ "$suri_fail" -eq 0 ] || echo "run-all: the Suricata stage failed (stage 11; its output is under the suricata banners, and in build-werror/test-suricata-*.log)"
[ "$total_fail" -eq 0 ] || ok=0
[ "$total_pass" -gt 0 ] || ok=0
stage_table
echo "$total_pass passed, $total_fail failed"
[ "$ok" -eq 1 ]
