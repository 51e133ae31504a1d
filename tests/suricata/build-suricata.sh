#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build Suricata (a test dependency only, GPL-2.0) from its release
# tarball, with our patch series applied (the libnfq-batch NFQ backend),
# into a cache outside the clone, once per machine, and print the prefix:
#
#   tests/suricata/build-suricata.sh [LIBNFQB]  -> /var/cache/nfqb-suricata/<key>
#
# NFQB_SURICATA_VERSION chooses which (default 7.0):
#
#   7.0   Suricata 7.0.10, suricata_7.0.10.orig.tar.xz,
#         integrations/suricata/*.patch (libhtp from the system)
#   8.0   Suricata 8.0.7, suricata_8.0.7.orig.tar.gz,
#         integrations/suricata/8.0/*.patch (libhtp is in its Rust code;
#         Rust >= 1.75)
#
# Each has its own cache key (the tarball and the patches are hashed).
#
# LIBNFQB (or $NFQB_LIB_BUILD / $NFQB_LIB_PREFIX) says which libnfq-batch
# Suricata compiles against: a build tree of this clone (where `make` left
# lib/.libs/libnfq-batch.so; the headers are the clone's include/) or an
# install prefix (include/libnfq-batch/, lib/libnfq-batch.so).  Its headers
# and shared library are staged into PREFIX/nfqb/ with a libnfq-batch.pc,
# and Suricata's configure finds them there with pkg-config, as it would
# an installed libnfq-batch.  At run time the tests put the current
# library first with LD_LIBRARY_PATH (the soname is stable), so the cached
# binary runs against the library under test.
#
# Several callers at once share one build: the later ones wait on its lock
# and reuse it.  The key is a hash of the tarball, of the patches, of this
# script's commands (comment lines and messages left out), of the Rust
# toolchain (rustc -V, cargo -V) and of the libnfq-batch public headers'
# code (their comments left out: a change of the documentation alone does
# not build anew), so a change of any of them builds anew; a prefix with
# a complete build
# (.complete) is reused as it is.  The prefix holds bin/suricata,
# etc/suricata/ (suricata.yaml, classification.config, reference.config),
# share/, lib/, var/.
#
# NFQB_SURICATA_CACHED_ONLY=1: print the prefix when the build is cached,
# else exit 3 without building.
#
# Environment: NFQB_SURICATA_CACHE (default /var/cache/nfqb-suricata);
# NFQB_SURICATA_TARBALL (default: what tests/find-third-party.sh finds for
# the version's tarball); NFQB_JOBS the build parallelism (default 2).
# Needs what tests/suricata/deps.sh installs.  7.0: about 6 minutes at -j2
# on two quiet cores (mostly the Rust crate); 8.0: longer (see
# integrations/suricata/README.md); seconds when cached.  Progress goes to
# stderr, the prefix alone to stdout.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${NFQB_SURICATA_CACHE:-/var/cache/nfqb-suricata}
jobs=${NFQB_JOBS:-2}
version=${NFQB_SURICATA_VERSION:-7.0}
case $version in
7.0)	tarname=suricata_7.0.10.orig.tar.xz
	series=$top/integrations/suricata
	htp=--enable-non-bundled-htp ;;
8.0)	tarname=suricata_8.0.7.orig.tar.gz
	series=$top/integrations/suricata/8.0
	htp= ;;
*)	echo "build-suricata: NFQB_SURICATA_VERSION=$version: 7.0 or 8.0" >&2
	exit 1 ;;
esac
tarball=${NFQB_SURICATA_TARBALL:-$("$top/tests/find-third-party.sh" "$tarname" || true)}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	echo "build-suricata: no Suricata tarball${tarball:+ at $tarball} (set NFQB_SURICATA_TARBALL or NFQB_THIRD_PARTY_DIR)" >&2
	exit 1
fi

# Which libnfq-batch: a build tree or an install prefix
lib_arg=${1:-${NFQB_LIB_BUILD:-${NFQB_LIB_PREFIX:-}}}
if [ -z "$lib_arg" ]; then
	echo "build-suricata: usage: build-suricata.sh LIBNFQB (a libnfq-batch build tree or install prefix; or set NFQB_LIB_BUILD / NFQB_LIB_PREFIX)" >&2
	exit 1
fi
lib_arg=$(cd "$lib_arg" && pwd)
if [ -e "$lib_arg/lib/.libs/libnfq-batch.so" ]; then
	nfqb_inc=$top/include
	nfqb_libdir=$lib_arg/lib/.libs
elif [ -e "$lib_arg/lib/libnfq-batch.so" ] && [ -d "$lib_arg/include/libnfq-batch" ]; then
	nfqb_inc=$lib_arg/include
	nfqb_libdir=$lib_arg/lib
else
	libdir=$(find "$lib_arg/lib" -maxdepth 2 -name libnfq-batch.so 2>/dev/null | head -n 1)
	if [ -z "$libdir" ] || [ ! -d "$lib_arg/include/libnfq-batch" ]; then
		echo "build-suricata: no libnfq-batch in $lib_arg (neither lib/.libs/libnfq-batch.so of a build tree nor an install prefix)" >&2
		exit 1
	fi
	nfqb_inc=$lib_arg/include
	nfqb_libdir=$(dirname "$libdir")
fi
patches=("$series"/*.patch)
[ -e "${patches[0]}" ] || patches=()
rust_v="$(rustc -V 2>&1 || echo no rustc) / $(cargo -V 2>&1 || echo no cargo)"

# Built as Debian builds its own suricata package (bookworm-backports, the
# binary tests/suricata/bench-suricata.sh measures ours against), so that
# the two compare the same engine: with Hyperscan (libhyperscan-dev, which
# configure finds by itself; amd64 only) and Debian's compiler flags
# (dpkg-buildflags' hardening, --enable-gccprotect, and -march=corei7,
# which Debian's binary has from DPDK's pkg-config flags), still without
# -march=native (--disable-gccmarch-native: the cached binary runs on
# any machine of the same kind). -march=corei7 only where the CPU has
# SSE4.2 and POPCNT (so does anything that runs Debian's binary).
hs_v=$(pkg-config --modversion libhs 2>/dev/null || echo none)
march=
grep -qw sse4_2 /proc/cpuinfo && grep -qw popcnt /proc/cpuinfo &&
	march=-march=corei7
cflags="-O2 -fstack-protector-strong -Wformat -Werror=format-security${march:+ $march}"

# The recipe: what decides the build besides the inputs hashed below.
recipe="suricata 2: autoreconf -fi after the patches; configure --enable-nfqueue --enable-nfqb $htp --disable-gccmarch-native --enable-gccprotect, CFLAGS=$cflags; libhs $hs_v"
key=$( (cat "$tarball"
	for p in "${patches[@]}"; do cat "$p"; done
	grep -Ev '^[[:space:]]*(#|echo )' "$0"
	echo "$rust_v"
	for h in "$nfqb_inc"/libnfq-batch/*.h; do
		gcc -fpreprocessed -dD -E -P -x c "$h"
	done
	echo "$recipe") | sha256sum | cut -c1-16)
prefix=$cache/$key
if [ -f "$prefix/.complete" ]; then
	echo "build-suricata: reusing $prefix" >&2
	echo "$prefix"
	exit 0
fi
if [ "${NFQB_SURICATA_CACHED_ONLY:-0}" = 1 ]; then
	echo "build-suricata: Suricata $version is not cached ($prefix), not building it (NFQB_SURICATA_CACHED_ONLY=1)" >&2
	exit 3
fi

mkdir -p "$cache"
# One build at a time per key: a second caller waits and then reuses it.
exec 9>"$cache/.$key.lock"
flock 9
if [ -f "$prefix/.complete" ]; then
	echo "build-suricata: reusing $prefix (built while waiting)" >&2
	echo "$prefix"
	exit 0
fi
rm -rf "$prefix"
mkdir -p "$prefix"

work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-suricata-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# Stage libnfq-batch as an installed library, with its pkg-config file
stage=$prefix/nfqb
mkdir -p "$stage/include/libnfq-batch" "$stage/lib/pkgconfig"
cp "$nfqb_inc"/libnfq-batch/*.h "$stage/include/libnfq-batch/"
cp -P "$nfqb_libdir"/libnfq-batch.so* "$stage/lib/"
nfqb_version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac" | head -n 1)
cat > "$stage/lib/pkgconfig/libnfq-batch.pc" <<EOPC
prefix=$stage
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: libnfq-batch
Description: libnfq-batch staged for the Suricata build
Version: ${nfqb_version:-0}
Cflags: -I\${includedir}
Libs: -L\${libdir} -lnfq-batch
EOPC

echo "build-suricata: Suricata $version from $tarball with ${#patches[@]} patch(es), -j$jobs" >&2
tar -xaf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
log=$work/suricata-build.log
(
	cd "$src"
	for p in "${patches[@]}"; do
		echo "applying $(basename "$p")"
		patch -p1 -s --no-backup-if-mismatch < "$p"
	done
	autoreconf -fi
	CFLAGS="$cflags" LDFLAGS="-Wl,-z,relro -Wl,-rpath,$stage/lib" \
	PKG_CONFIG_PATH="$stage/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
	./configure --prefix="$prefix" --sysconfdir="$prefix/etc" \
		--localstatedir="$prefix/var" \
		--enable-nfqueue --enable-nfqb $htp \
		--disable-gccmarch-native --enable-gccprotect \
		--disable-suricata-update
	make -j"$jobs"
	make install
	make install-conf
) >"$log" 2>&1 || {
	tail -n 60 "$log" >&2
	echo "build-suricata: the Suricata build failed (log above)" >&2
	exit 1
}
for f in bin/suricata etc/suricata/suricata.yaml etc/suricata/classification.config etc/suricata/reference.config; do
	[ -e "$prefix/$f" ] || {
		echo "build-suricata: $prefix/$f missing after install" >&2
		exit 1
	}
done
LD_LIBRARY_PATH=$stage/lib "$prefix/bin/suricata" --build-info > "$prefix/build-info.txt" 2>&1 || {
	cat "$prefix/build-info.txt" >&2
	echo "build-suricata: $prefix/bin/suricata --build-info failed" >&2
	exit 1
}
grep -q 'NFQ' "$prefix/build-info.txt" || {
	echo "build-suricata: Suricata built without NFQ" >&2
	exit 1
}
if [ "$hs_v" != none ] && ! grep -q 'Hyperscan support: *yes' "$prefix/build-info.txt"; then
	echo "build-suricata: Suricata built without Hyperscan (libhs $hs_v is installed)" >&2
	exit 1
fi
# (a here-string, not a pipe: under pipefail, grep -q leaving at the first
# match can kill ldd, which writes line by line, with SIGPIPE, and the
# pipe then fails: a complete build was called one without the backend
# in a CI run here)
if [ ${#patches[@]} -gt 0 ] &&
   ! grep -q 'libnfq-batch' <<<"$(ldd "$prefix/bin/suricata")"; then
	echo "build-suricata: Suricata built without the libnfq-batch backend" >&2
	exit 1
fi
touch "$prefix/.complete"
echo "build-suricata: built in $(($(date +%s) - start)) s" >&2
echo "$prefix"
