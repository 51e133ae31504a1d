#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# go/tests/run.sh BUILDDIR - the Go package's checks against BUILDDIR's
# libnfq-batch (its lib/.libs) and the tree's headers: gofmt, go vet, then
# the tests and benchmarks of go/nfqb and go/nfqueue on the real kernel
# (root; each test makes its network namespace with ip netns), under the
# integration tests' lock, compiled before taking it. Then
# go/tests/upstream.sh on go-nfqueue 2.0.0's source (below). Run by `make check-go` (go/local.mk) and tests/run-all.sh.
#
# Environment: NFQB_TEST_LOCK (default /tmp/libnfq-batch-integration.lock),
# NFQB_GO_BENCHTIME (default 20000x: packets per benchmark), CI=true
# (a test that would skip without root fails instead). Prints the tests'
# verbose output and ends with "go: N passed, N failed".
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
build=$(cd "${1:?usage: go/tests/run.sh BUILDDIR}" && pwd)
lib=$build/lib/.libs
lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
benchtime=${NFQB_GO_BENCHTIME:-20000x}

if ! command -v go >/dev/null 2>&1; then
	echo "go/tests/run.sh: no Go toolchain (golang-go: tests/deps.sh)" >&2
	exit 1
fi
if [ ! -e "$lib/libnfq-batch.so" ]; then
	echo "go/tests/run.sh: no $lib/libnfq-batch.so (build the library first)" >&2
	exit 1
fi
CGO_CFLAGS="-I$top/include -Wall -Werror ${CGO_CFLAGS:-}"
CGO_LDFLAGS="-L$lib ${CGO_LDFLAGS:-}"
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# no module is fetched: the module has no dependency
GOPROXY=off
export CGO_CFLAGS CGO_LDFLAGS LD_LIBRARY_PATH GOPROXY

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-go.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# go keeps its build cache under $HOME: without one, in the run's
# temporary directory
if [ -z "${HOME:-}" ]; then
	GOCACHE=${GOCACHE:-$tmp/gocache}
	GOPATH=${GOPATH:-$tmp/gopath}
	export GOCACHE GOPATH
fi
cd "$here" || exit 1
go version
fail=0
bad=$(gofmt -l .)
if [ -n "$bad" ]; then
	echo "go/tests/run.sh: gofmt would change: $bad"
	fail=1
fi
go vet ./... || fail=1
for p in nfqb nfqueue; do
	nice go test -c -o "$tmp/$p.test" "./$p" || fail=1
done
out=$tmp/out
for p in nfqb nfqueue; do
	[ -x "$tmp/$p.test" ] || continue
	echo "go/tests/run.sh: go/$p: tests and benchmarks (-test.benchtime=$benchtime)"
	(cd "$here/$p" && flock "$lock" timeout -k 10 600 "$tmp/$p.test" \
		-test.v -test.count=1 -test.timeout=5m \
		-test.bench=. -test.benchtime="$benchtime"
	 echo $? >"$tmp/$p.rc") 2>&1 | tee -a "$out"
	[ "$(cat "$tmp/$p.rc" 2>/dev/null)" = 0 ] || fail=1
done
# go-nfqueue 2.0.0's own tests: its source from NFQB_GO_NFQUEUE_SRC, else
# Debian's package of it (trixie; tests/fetch-deb.sh finds it in the
# third-party cache or fetches it). Never skipped: without the source the
# check fails, unless NFQB_GO_UPSTREAM=0 says not to run them.
gonfq_deb="trixie golang-github-florianl-go-nfqueue-dev 2.0.0-2"
if [ "${NFQB_GO_UPSTREAM:-1}" = 0 ]; then
	echo "go/tests/run.sh: NFQB_GO_UPSTREAM=0: go-nfqueue 2.0.0's own tests not run"
elif src=${NFQB_GO_NFQUEUE_SRC:-$("$top/tests/fetch-deb.sh" $gonfq_deb)}; then
	("$here/tests/upstream.sh" "$src"
	 echo $? >"$tmp/up.rc") 2>&1 | tee -a "$out"
	[ "$(cat "$tmp/up.rc" 2>/dev/null)" = 0 ] || fail=1
else
	echo "go/tests/run.sh: go-nfqueue 2.0.0's source not found (NFQB_GO_NFQUEUE_SRC, or tests/fetch-deb.sh $gonfq_deb); NFQB_GO_UPSTREAM=0 runs without its tests" | tee -a "$out"
	echo "--- FAIL: go-nfqueue 2.0.0's tests (no source)" >>"$out"
	fail=1
fi
pass=$(grep -c '^--- PASS' "$out" 2>/dev/null || true)
failed=$(grep -c '^--- FAIL\|^FAIL\|^panic:' "$out" 2>/dev/null || true)
[ "${pass:-0}" -gt 0 ] || fail=1
[ "${failed:-0}" -eq 0 ] || fail=1
[ "$fail" -eq 0 ] || [ "${failed:-0}" -gt 0 ] || failed=1
echo "go: ${pass:-0} passed, ${failed:-0} failed"
exit "$fail"
