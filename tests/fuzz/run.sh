#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Fuzz the packet parser and the whole datagram path with libFuzzer:
#
#   tests/fuzz/run.sh [SECONDS]      (default 30 per target; 0: only
#                                     replay the seeds and regressions)
#
# 1. Compiles the library sources listed in lib/local.mk
#    (lib_libnfqb_internal_la_SOURCES, so new files come in by themselves),
#    the test seam in place of the library's system calls
#    (tests/seam/seam.c: fuzz_datagram's hooks), and the model of the
#    kernel's queue (tests/unit/kmodel.c) with clang
#    -fsanitize=fuzzer,address,undefined, straight into the targets: no
#    configure, no autotools build needed.
# 2. Builds and runs tests/fuzz/gen-corpus.c: the seed corpus.
# 3. Runs each target (fuzz_parse, fuzz_datagram, fuzz_hdrs) for SECONDS,
#    one process each (one job), -max_len=65536, on its working corpus,
#    the seeds and tests/fuzz/regress/<target>/ (reproducers of past
#    findings).
# Exits non-zero if a target crashed, leaked, hung (10 s per input), failed
# an oracle check (see fuzz_datagram.c) or did not build. The input that did
# it is kept in $NFQB_FUZZ_DIR/artifacts/<target>/; replay it with
#   $NFQB_FUZZ_DIR/fuzz_<target> FILE
#
# Environment: NFQB_FUZZ_DIR (default build-fuzz/ at the top; .gitignored);
# NFQB_NO_APT=1 never installs clang or the -dev packages; NFQB_FUZZ_TARGETS
# (default "parse datagram hdrs"); NFQB_FUZZ_ORACLE (fuzz_datagram's checks: 0
# framing, 1 + safety, 2 + completeness, the default); NFQB_FUZZ_JOBS
# (parallel compiles, default 2); CC (default clang).
set -euo pipefail

secs=${1:-30}
case $secs in
'' | *[!0-9]*) echo "usage: $0 [seconds]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=${NFQB_FUZZ_DIR:-$top/build-fuzz}
targets=${NFQB_FUZZ_TARGETS:-parse datagram hdrs}
jobs=${NFQB_FUZZ_JOBS:-2}
CC=${CC:-clang}
case $CC in
cc | gcc | gcc-*) CC=clang ;;	# libFuzzer is clang's
esac
pkgs_pc="libmnl liburcu-qsbr liburcu-cds"

log() { printf 'fuzz: %s\n' "$*"; }

# --- tools ----------------------------------------------------------------

fuzzer_links() {
	local d
	d=$(mktemp -d)
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
		'{ (void)d; (void)n; return 0; }' >"$d/t.c"
	"$CC" -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" \
		>/dev/null 2>&1
	local r=$?
	rm -rf "$d"
	return $r
}

apt_install() {
	if [ "${NFQB_NO_APT:-0}" = 1 ]; then
		log "missing $*; NFQB_NO_APT=1, not installing" >&2
		return 1
	fi
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		log "missing $*; install them (apt-get, as root)" >&2
		return 1
	fi
	log "installing $*"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "$@" ||
		{ apt-get update && apt-get install -y --no-install-recommends "$@"; }
}

if ! command -v "$CC" >/dev/null || ! fuzzer_links; then
	apt_install clang libclang-rt-dev || exit 1
	command -v "$CC" >/dev/null || CC=clang
	fuzzer_links || { log "$CC cannot link -fsanitize=fuzzer" >&2; exit 1; }
fi
# shellcheck disable=SC2086
if ! pkg-config --exists $pkgs_pc check 2>/dev/null; then
	apt_install pkg-config libmnl-dev liburcu-dev check || exit 1
fi

# --- sources --------------------------------------------------------------

# lib_libnfqb_internal_la_SOURCES (= and +=, continuation lines joined),
# its .c files.
lib_sources() {
	sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' lib/local.mk |
	sed -n 's/^[[:space:]]*lib_libnfqb_internal_la_SOURCES[[:space:]]*+\{0,1\}=//p' |
	tr -s '[:blank:]' '\n' | grep -E '^[^$]+\.c$' | grep -v '/dummy\.c$' || true
}

mapfile -t srcs < <(lib_sources)
if [ ${#srcs[@]} -eq 0 ]; then
	log "no sources found in lib/local.mk" >&2
	exit 1
fi
srcs+=(tests/seam/seam.c)

# --- build ----------------------------------------------------------------

mkdir -p "$out/obj" "$out/artifacts"
# shellcheck disable=SC2086
pc_cflags=$(pkg-config --cflags $pkgs_pc)
# shellcheck disable=SC2086
pc_libs=$(pkg-config --libs $pkgs_pc)
base=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -DNFQB_BUILD
      -Wall -Wextra -Iinclude -Ilib -Itests/seam -Itests/fuzz)
# shellcheck disable=SC2054
san=(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all)
# shellcheck disable=SC2206
pc=($pc_cflags)

compile() {	# SRC OBJ EXTRA...
	local src=$1 obj=$2
	shift 2
	"$CC" "${base[@]}" "${san[@]}" "${pc[@]}" "$@" -c "$src" -o "$obj"
}

log "building with $("$CC" --version | head -n 1): ${srcs[*]}"
build_failed=0
pids=()
objs=()
for src in "${srcs[@]}"; do
	obj=$out/obj/$(basename "${src%.c}").o
	objs+=("$obj")
	compile "$src" "$obj" &
	pids+=($!)
	if [ ${#pids[@]} -ge "$jobs" ]; then
		wait "${pids[0]}" || build_failed=1
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || build_failed=1
done
compile tests/fuzz/getters.c "$out/obj/fz_getters.o" -Werror || build_failed=1
compile tests/unit/kmodel.c "$out/obj/fz_kmodel.o" -Werror || build_failed=1
for t in $targets; do
	compile "tests/fuzz/fuzz_$t.c" "$out/obj/fz_$t.o" -Werror \
		|| build_failed=1
done
if [ $build_failed -ne 0 ]; then
	log "FAILED: the build" >&2
	exit 1
fi
for t in $targets; do
	# shellcheck disable=SC2086
	"$CC" -fsanitize=fuzzer,address,undefined "$out/obj/fz_$t.o" \
		"$out/obj/fz_getters.o" "$out/obj/fz_kmodel.o" "${objs[@]}" \
		$pc_libs -lpthread \
		-o "$out/fuzz_$t" || { log "FAILED: linking fuzz_$t" >&2; exit 1; }
done

# --- seed corpus -----------------------------------------------------------

# shellcheck disable=SC2046
"$CC" -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Itests/unit \
	$(pkg-config --cflags check) -c tests/fuzz/gen-corpus.c \
	-o "$out/obj/gen-corpus.o"
# shellcheck disable=SC2046
"$CC" -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Itests/unit \
	$(pkg-config --cflags check) -c tests/unit/nlbuild.c \
	-o "$out/obj/nlbuild.o"
# shellcheck disable=SC2046
"$CC" "$out/obj/gen-corpus.o" "$out/obj/nlbuild.o" \
	$(pkg-config --libs check) -o "$out/gen-corpus"
rm -rf "$out/seeds"
"$out/gen-corpus" "$out/seeds"

# --- fuzz -----------------------------------------------------------------

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in $targets; do
	corpus=$out/corpus/$t
	arts=$out/artifacts/$t
	mkdir -p "$corpus" "$arts"
	dirs=("$corpus" "$out/seeds/$t")
	[ -d "tests/fuzz/regress/$t" ] && dirs+=("tests/fuzz/regress/$t")
	if [ "$secs" -eq 0 ]; then
		how=-runs=0
		log "fuzz_$t: replaying the corpus (log: $out/fuzz_$t.log)"
	else
		how=-max_total_time=$secs
		log "fuzz_$t: $secs s (log: $out/fuzz_$t.log)"
	fi
	rc=0
	timeout -k 10 $((secs + 180)) "$out/fuzz_$t" \
		-max_len=65536 "$how" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$arts/" "${dirs[@]}" \
		>"$out/fuzz_$t.log" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		sed -n 's/^stat::number_of_executed_units: */  runs: /p; s/^stat::new_units_added: */  new inputs: /p' \
			"$out/fuzz_$t.log"
		log "fuzz_$t: passed"
		continue
	fi
	failed+=("$t")
	log "fuzz_$t: FAILED (exit $rc)" >&2
	grep -E '^(fuzz: |==[0-9]+==ERROR|SUMMARY|[^ ]+: runtime error)' \
		"$out/fuzz_$t.log" | head -n 10 >&2 || true
	sed -n 's/.*Test unit written to \(.*\)$/  reproducer: \1/p' \
		"$out/fuzz_$t.log" >&2
	echo "  replay: $out/fuzz_$t <reproducer>" >&2
done

if [ ${#failed[@]} -gt 0 ]; then
	log "FAILED: ${failed[*]}" >&2
	exit 1
fi
log "all targets passed"
