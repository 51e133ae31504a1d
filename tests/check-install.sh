#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-install.sh BUILD_DIR: `make install` from a configured build tree
# into a scratch DESTDIR, then build and run an outside program against the
# installed header, library and libnfq-batch.pc using only pkg-config.  Also
# checks that the shared library exports nothing but nfqb_* symbols.
set -euo pipefail

build=$(cd "${1:?usage: check-install.sh BUILD_DIR}" && pwd)
dest=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT

fail() { echo "check-install: FAIL: $*" >&2; exit 1; }

if ! make -C "$build" -s install DESTDIR="$dest" >"$dest/install.log" 2>&1; then
	cat "$dest/install.log" >&2
	fail "make install"
fi

pc=$(find "$dest" -name libnfq-batch.pc | head -n 1)
[ -n "$pc" ] || fail "libnfq-batch.pc not installed"
hdr=$(find "$dest" -path '*/include/libnfq-batch/libnfq-batch.h' | head -n 1)
[ -n "$hdr" ] || fail "header not installed as <libnfq-batch/libnfq-batch.h>"

PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
export PKG_CONFIG_SYSROOT_DIR=$dest
version=$(pkg-config --modversion libnfq-batch) || fail "pkg-config"
flags=$(pkg-config --cflags --libs libnfq-batch)
pkg-config --static --libs libnfq-batch >/dev/null ||
	fail "pkg-config --static (Requires.private) does not resolve"
libdir=$(pkg-config --variable=libdir libnfq-batch)
libdir=$dest${libdir#"$dest"}

so=$(find "$libdir" -name 'libnfq-batch.so.*' -type f | head -n 1)
[ -n "$so" ] || fail "no libnfq-batch.so.* in $libdir"
bad=$(nm -D --defined-only "$so" | awk '$3 != "" && $3 !~ /^nfqb_/ && $2 != "A" { print $3 }')
[ -z "$bad" ] || fail "exported symbols outside nfqb_*: $bad"

cat > "$dest/outside.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <libnfq-batch/libnfq-batch.h>

int main(int argc, char **argv)
{
	const char *v = nfqb_version();

	printf("nfqb_version() = %s\n", v ? v : "(null)");
	return argc > 1 && v && strcmp(v, argv[1]) == 0 ? 0 : 1;
}
EOC
# shellcheck disable=SC2086 # word splitting of $flags is wanted
${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$dest/outside" \
	"$dest/outside.c" $flags || fail "outside program does not build"
LD_LIBRARY_PATH=$libdir "$dest/outside" "$version" ||
	fail "outside program: version is not $version"
echo "check-install: PASS (pkg-config libnfq-batch $version: $flags)"
