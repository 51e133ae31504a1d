#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/bench/build-pynfq.sh [TARBALL] - build python-netfilterqueue 1.1.0
# (the reference of the Python benchmark, MIT, not part of the tree) from
# its release tarball with Debian's cython3, into a cache outside the clone,
# and print the directory to put on sys.path (it holds the package
# netfilterqueue with its extension built in place).
#
# The tarball: TARBALL, else $NFQB_PYNFQ_TARBALL, else
# tests/find-third-party.sh python-netfilterqueue-1.1.0.tar.gz when the
# tree has it, else shared/third_party/ or third_party/ beside the clone
# or one of its parents. The cache: $NFQB_PYNFQ_CACHE (default
# /var/cache/nfqb-third-party/pynfq), one directory per tarball hash and
# Python version; a build is done once. Needs cython3, python3-dev,
# libnetfilter-queue-dev and python3-setuptools (tests/deps.sh installs
# them). The interpreter: $NFQB_PYTHON, else /usr/bin/python3, else python3.
# Exit status 77 when the tarball is nowhere, 1 when the build failed.
set -eu

name=python-netfilterqueue-1.1.0.tar.gz
top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${1:-${NFQB_PYNFQ_TARBALL:-}}
if [ -z "$tarball" ] && [ -x "$top/tests/find-third-party.sh" ]; then
	tarball=$("$top/tests/find-third-party.sh" "$name" 2>/dev/null || true)
fi
if [ -z "$tarball" ]; then
	d=$top
	while [ "$d" != / ]; do
		d=$(dirname "$d")
		for c in "$d/shared/third_party/$name" "$d/third_party/$name"; do
			if [ -z "$tarball" ] && [ -f "$c" ]; then
				tarball=$c
			fi
		done
	done
fi
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	echo "build-pynfq: $name not found (set NFQB_PYNFQ_TARBALL)" >&2
	exit 77
fi
python=${NFQB_PYTHON:-}
if [ -z "$python" ]; then
	if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi
sum=$(sha256sum "$tarball" | cut -c1-16)
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cache=${NFQB_PYNFQ_CACHE:-/var/cache/nfqb-third-party/pynfq}
dir=$cache/$sum-py$pyver
if [ -f "$dir/.built" ]; then
	echo "$dir/src"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$tarball"
src=$(find "$tmp" -maxdepth 2 -name setup.py | head -n 1)
src=${src%/setup.py}
[ -n "$src" ] || { echo "build-pynfq: no setup.py in $tarball" >&2; exit 1; }
if ! (cd "$src" && "$python" setup.py build_ext --inplace) >"$tmp/build.log" 2>&1; then
	tail -n 30 "$tmp/build.log" >&2
	echo "build-pynfq: building python-netfilterqueue failed (cython3, python3-dev, libnetfilter-queue-dev?)" >&2
	exit 1
fi
if ! (cd / && "$python" -c "import sys; sys.path.insert(0, '$src'); import netfilterqueue") >&2; then
	echo "build-pynfq: the built netfilterqueue does not import" >&2
	exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
mv "$src" "$dir/src"
touch "$dir/.built"
echo "$dir/src"
