#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: install the dependencies, build, and run the example
# consumer (examples/nfqb-example --demo) on generated traffic.  The example
# sets up its own private network namespace, queue rule and traffic, prints
# what it does, and cleans up.  Run as root on Debian 12.
#
# Environment: NFQB_NO_APT=1 skips apt-get; NFQB_JOBS sets build
# parallelism.  Extra arguments are passed to the example.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${NFQB_JOBS:-$(nproc 2>/dev/null || echo 2)}
build=$top/build-demo

if [ "$(id -u)" -ne 0 ]; then
	echo "run-demo: the demo needs root (network namespace, iptables)" >&2
	exit 1
fi

"$top/tests/deps.sh"

# VPATH builds cannot configure while the source tree itself is configured.
if [ -f "$top/config.status" ]; then
	echo "run-demo: removing the in-tree build (make distclean)"
	make -s distclean >/dev/null 2>&1 || rm -f "$top/config.status"
fi

./autogen.sh
mkdir -p "$build"
(cd "$build" && "$top/configure")
make -C "$build" -j"$jobs"

example=$build/examples/nfqb-example
if [ ! -x "$example" ]; then
	echo "run-demo: FAILED: $example was not built" \
	     "(examples/local.mk must build examples/nfqb-example)" >&2
	exit 1
fi

echo
echo "run-demo: $example --demo $*"
exec "$example" --demo "$@"
