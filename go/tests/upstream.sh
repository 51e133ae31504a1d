#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# go/tests/upstream.sh SRC - go-nfqueue 2.0.0's own integration test
# (nfqueue_linux_integration_test.go, package nfqueue) and its example
# (example_test.go, its import path changed to ours) built against
# go/nfqueue in a copy of the module in a temporary directory, and the
# tests run as root in a network namespace of their own (unshare -n),
# under the integration tests' lock. SRC: go-nfqueue's source, a
# directory, a release tarball (go-nfqueue-2.0.0.tar.gz) or Debian's
# package of it (go/tests/gonfq-src.sh). Nothing of it is kept. The example imports github.com/mdlayher/netlink for its
# SetOption(netlink.NoENOBUFS, true): a stand-in module made here gives
# it that one type and its constants (no download). Environment as
# go/tests/run.sh (CGO_CFLAGS, CGO_LDFLAGS and LD_LIBRARY_PATH set).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: go/tests/upstream.sh GO_NFQUEUE_SRC}
lock=${NFQB_TEST_LOCK:-${TMPDIR:-/tmp}/libnfq-batch-integration.lock}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-go-upstream.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$here/tests/gonfq-src.sh"
up=$tmp/upstream
gonfq_unpack "$src" "$up" || exit 1
for f in nfqueue_linux_integration_test.go example_test.go; do
	[ -f "$up/$f" ] || { echo "upstream.sh: no $f in $src" >&2; exit 1; }
done

mod=$tmp/mod
mkdir -p "$mod"
cp -r "$here/go.mod" "$here/nfqb" "$here/nfqueue" "$here/internal" "$mod"/
cp "$up/nfqueue_linux_integration_test.go" "$mod/nfqueue/upstream_integration_test.go"
sed 's#"github.com/florianl/go-nfqueue/v2"#"github.com/libnfq-batch/libnfq-batch/go/nfqueue"#' \
	"$up/example_test.go" >"$mod/nfqueue/upstream_example_test.go"

mkdir -p "$tmp/netlink"
cat >"$tmp/netlink/go.mod" <<'MOD'
module github.com/mdlayher/netlink

go 1.19
MOD
cat >"$tmp/netlink/netlink.go" <<'SRC'
// Package netlink: a stand-in with the one type go-nfqueue's example uses.
package netlink

// ConnOption is a netlink socket option.
type ConnOption int

// The options, with the values of the real package.
const (
	PacketInfo ConnOption = iota
	BroadcastError
	NoENOBUFS
	ListenAllNSID
	CapAcknowledge
	ExtendedAcknowledge
	GetStrictCheck
)
SRC
cat >>"$mod/go.mod" <<'MOD'

require github.com/mdlayher/netlink v1.7.2

replace github.com/mdlayher/netlink => ../netlink
MOD

cd "$mod" || exit 1
echo "upstream.sh: go-nfqueue 2.0.0's integration test and example on go/nfqueue"
GOPROXY=off GOFLAGS=-mod=mod go vet -tags integration ./nfqueue || exit 1
GOPROXY=off GOFLAGS=-mod=mod go test -c -tags integration -o "$tmp/up.test" ./nfqueue || exit 1
cd "$mod/nfqueue" || exit 1
flock "$lock" timeout -k 10 300 unshare -n sh -c \
	'ip link set lo up && exec "$0" -test.v -test.count=1 -test.run "^(TestLinuxNfqueue|TestTimeout|Example.*)$"' \
	"$tmp/up.test"
