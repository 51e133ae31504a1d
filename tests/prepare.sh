#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/prepare.sh - install what the tests need and start every cached
# build in the background at idle priority, so that a later
# tests/run-all.sh (or CI) finds them warm. Run it first thing on a
# machine:
#
#   tests/prepare.sh            install, start the builds, return at once
#   tests/prepare.sh --wait     ... and wait for them, then print a table
#   tests/prepare.sh --status   the table of the last start (nothing started)
#
# The builds (each cached outside the clone, keyed by a hash of its
# inputs, one build per key at a time: a second caller waits on the
# first's lock and then reuses its result):
#
#   kernel   kernel/build.sh               /var/cache/nfqb-kernel
#   snort    tests/snort/build-snort.sh    /var/cache/nfqb-snort
#   pynfq    python/bench/build-pynfq.sh   /var/cache/nfqb-third-party/pynfq
#   suricata tests/suricata/build-suricata.sh (when the tree has it)
#   suricata8 the same, NFQB_SURICATA_VERSION=8.0 (Suricata 8.0.7)
#
# Each runs in a session of its own (setsid: a scheduler autogroup, set to
# nice 19 like its processes, so it only takes the CPU that nothing else
# wants) and leaves in DIR (--dir DIR, default $NFQB_PREPARE_DIR or
# /var/cache/nfqb-prepare): NAME.pid, NAME.log, NAME.start and NAME.end
# (epoch seconds), NAME.rc (its exit status). tests/run-all.sh starts them
# the same way (--no-deps --dir its own directory) right after installing
# the dependencies, and its closing table says when each started and
# finished and which stage waited for it.
#
# Options: --no-deps (skip the installs), --only "NAME..." (a subset),
# --dir DIR. Environment: NFQB_JOBS (build parallelism, default nproc),
# NFQB_PREPARE_NICE (default 19), and each build script's own variables.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${NFQB_PREPARE_DIR:-/var/cache/nfqb-prepare}
deps=1
wait_all=0
status_only=0
only="kernel snort pynfq suricata suricata8"
# --suricata-job (what the suricata build runs): Suricata links
# libnfq-batch, so it builds against NFQB_LIB_BUILD (a configured build
# tree where make built lib/: run-all passes build-werror) or, when that
# is not given and Suricata is not cached yet, against a private build of
# this tree's library (a copy of its sources, about a minute)
if [ "${1:-}" = --suricata-job ]; then
	[ -z "${2:-}" ] || export NFQB_SURICATA_VERSION=$2
	lib=${NFQB_LIB_BUILD:-}
	if [ -z "$lib" ]; then
		lib=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-prepare-lib.XXXXXX")
		trap 'rm -rf "$lib"' EXIT
		# './build-*' also leaves out autogen's build-aux/: a tree
		# that was bootstrapped in place is bootstrapped again
		tar -C "$top" --exclude=.git --exclude='./build-*' -cf - . |
			tar -C "$lib" -xf -
		(cd "$lib" && { [ -x configure ] && [ -d build-aux ] ||
				 ./autogen.sh; } &&
		 ./configure --disable-python --without-daq &&
		 make -j"${NFQB_JOBS:-2}" lib/libnfq-batch.la) >&2 ||
			{ echo "prepare: the private library build for Suricata failed" >&2; exit 1; }
	fi
	rc=0
	"$top/tests/suricata/build-suricata.sh" "$lib" || rc=$?
	exit $rc
fi

while [ $# -gt 0 ]; do
	case $1 in
	--wait) wait_all=1 ;;
	--status) status_only=1 ;;
	--no-deps) deps=0 ;;
	--dir) dir=$2; shift ;;
	--only) only=$2; shift ;;
	*) echo "usage: tests/prepare.sh [--wait|--status] [--no-deps] [--dir DIR] [--only \"NAME...\"]" >&2
	   exit 2 ;;
	esac
	shift
done
mkdir -p "$dir"

# the command of each build (empty: the tree has no such build)
build_cmd() {
	case $1 in
	kernel) echo "sh $top/kernel/build.sh" ;;
	snort) echo "$top/tests/snort/build-snort.sh" ;;
	pynfq) echo "sh $top/python/bench/build-pynfq.sh" ;;
	suricata)
		[ -x "$top/tests/suricata/build-suricata.sh" ] &&
			echo "$top/tests/prepare.sh --suricata-job" ;;
	suricata8)
		[ -d "$top/integrations/suricata/8.0" ] &&
			echo "$top/tests/prepare.sh --suricata-job 8.0" ;;
	esac
	return 0
}

running() {
	local pid
	pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ ! -f "$dir/$1.end" ]
}

# start NAME: in the background, its own session and autogroup, nice 19
start() {
	local name=$1 cmd
	cmd=$(build_cmd "$name")
	[ -n "$cmd" ] || return 0
	if running "$name"; then
		echo "prepare: $name already running (pid $(cat "$dir/$name.pid"), log $dir/$name.log)"
		return 0
	fi
	rm -f "$dir/$name".{start,end,rc,pid}
	NFQB_JOBS=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)} \
	NFQB_BG_DIR=$dir NFQB_BG_NAME=$name NFQB_BG_NICE=${NFQB_PREPARE_NICE:-19} \
	setsid bash -c '
		echo "$NFQB_BG_NICE" >/proc/self/autogroup 2>/dev/null
		renice -n "$NFQB_BG_NICE" -p $$ >/dev/null 2>&1
		b=$NFQB_BG_DIR/$NFQB_BG_NAME
		date +%s >"$b.start"
		$0 "$@" >"$b.out"
		rc=$?
		echo "$rc" >"$b.rc"
		date +%s >"$b.end"
		exit "$rc"' $cmd </dev/null >"$dir/$name.log" 2>&1 &
	echo $! >"$dir/$name.pid"
	echo "prepare: $name started (pid $!, log $dir/$name.log)"
}

# the table: NAME, started, finished, seconds, result
status() {
	local name s e rc
	printf '%-9s %-20s %-20s %7s  %s\n' build started finished seconds result
	for name in $only; do
		[ -s "$dir/$name.start" ] || continue
		s=$(cat "$dir/$name.start")
		e=$(cat "$dir/$name.end" 2>/dev/null || true)
		rc=$(cat "$dir/$name.rc" 2>/dev/null || true)
		if [ -z "$e" ]; then
			running "$name" && rc=running || rc="stopped (no result)"
		elif [ "$rc" = 0 ]; then
			rc="ok: $(tail -n 1 "$dir/$name.out" 2>/dev/null)"
		else
			rc="FAILED ($rc, $dir/$name.log)"
		fi
		printf '%-9s %-20s %-20s %7s  %s\n' "$name" "$(date -d "@$s" '+%F %T')" \
			"${e:+$(date -d "@$e" '+%F %T')}" "${e:+$((e - s))}" "$rc"
	done
}

if [ "$status_only" = 1 ]; then
	status
	exit 0
fi
if [ "$deps" = 1 ]; then
	"$top/tests/deps.sh"
	sh "$top/kernel/deps.sh"
	[ ! -x "$top/tests/suricata/deps.sh" ] || "$top/tests/suricata/deps.sh"
fi
for name in $only; do
	start "$name"
done
if [ "$wait_all" = 1 ]; then
	for name in $only; do
		while running "$name"; do
			sleep 5
		done
	done
	status
	for name in $only; do
		[ -f "$dir/$name.start" ] || continue
		[ "$(cat "$dir/$name.rc" 2>/dev/null)" = 0 ] || exit 1
	done
fi
exit 0
