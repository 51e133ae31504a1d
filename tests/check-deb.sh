#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-deb.sh: build the Debian packages (debian/) from a clean copy of the
# tree and check them, without installing anything built here system-wide.
#
#  1. Copy the tree into a scratch directory: the files git knows (tracked,
#     and untracked ones that .gitignore does not exclude, so uncommitted
#     packaging changes are built too), never .git or build products.
#  2. Install what the build needs (apt-get build-dep on the copy, plus
#     dpkg-dev and lintian) if missing; NFQB_NO_APT=1 skips that.
#  3. dpkg-buildpackage -us -uc -b (runs the unit tests, see debian/rules).
#  4. lintian, if present: reported, never fatal.
#  5. dpkg-deb -c: each package holds the files it must, and not the ones it
#     must not.
#  6. dpkg-deb -x the library and -dev packages into a scratch root; build a
#     program there with the unpacked headers, library and .pc file
#     (pkg-config), check that it binds to the versioned symbols and run it
#     with LD_LIBRARY_PATH: nfqb_version() must equal the package version.
#     The unpacked tools must run too (--help), nfqb-ips's example unit
#     must name the packaged binary.
#  7. python3-nfq-batch: the unpacked nfqb imports with the unpacked
#     library, and (as root) an unchanged python-netfilterqueue program
#     runs on it through the shim in a private network namespace, its
#     packets checked at a receiver.
#
# NFQB_KEEP=1 keeps the scratch directory (printed at the end).  Ends with
# "N passed, N failed" and exits non-zero on any failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-deb.XXXXXX")
if [ "${NFQB_KEEP:-0}" = 1 ]; then
	trap 'echo "check-deb: scratch directory kept: $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi

pass=0
failn=0
ok() { echo "check-deb: PASS: $*"; pass=$((pass + 1)); }
bad() { echo "check-deb: FAIL: $*" >&2; failn=$((failn + 1)); }
die() {
	bad "$*"
	echo "$pass passed, $failn failed"
	exit 1
}

[ -f "$top/debian/control" ] || die "no debian/control in $top"

# --- 1. a clean copy of the tree -----------------------------------------
version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$top/debian/changelog")
[ -n "$version" ] || die "cannot read the version from debian/changelog"
upstream=${version%-*}
src=$work/src/libnfq-batch-$upstream
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Deleted-but-tracked files are listed by ls-files yet absent: skip them.
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -C "$src" -xf -
	echo "check-deb: copied $(cd "$src" && find . -type f | wc -l) files (git ls-files) to $src"
else
	# Not a git checkout: copy everything but build directories, then let
	# the package build's clean step (dh_auto_clean) remove the rest.
	tar -C "$top" --exclude=./.git --exclude='./build' \
		--exclude='./build-*' -cf - . | tar -C "$src" -xf -
	echo "check-deb: copied the tree (no git) to $src"
fi

# --- 2. build dependencies ----------------------------------------------
need_apt=0
command -v dpkg-buildpackage >/dev/null 2>&1 || need_apt=1
if [ $need_apt = 0 ] && ! (cd "$src" && dpkg-checkbuilddeps) >/dev/null 2>&1; then
	need_apt=1
fi
if [ $need_apt = 1 ]; then
	if [ "${NFQB_NO_APT:-0}" = 1 ]; then
		(cd "$src" && dpkg-checkbuilddeps) || true
		die "build dependencies missing and NFQB_NO_APT=1"
	fi
	[ "$(id -u)" -eq 0 ] || die "build dependencies missing; run as root"
	echo "check-deb: installing build dependencies"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; die "apt-get update"; }
	apt-get install -y -q --no-install-recommends dpkg-dev build-essential \
		>>"$work/apt.log" 2>&1 || { cat "$work/apt.log"; die "apt-get install dpkg-dev"; }
	apt-get build-dep -y -q "$src" >>"$work/apt.log" 2>&1 ||
		{ cat "$work/apt.log"; die "apt-get build-dep"; }
fi
if ! command -v lintian >/dev/null 2>&1 && [ "${NFQB_NO_APT:-0}" != 1 ] &&
   [ "$(id -u)" -eq 0 ]; then
	echo "check-deb: installing lintian (optional)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends lintian >"$work/apt-lintian.log" 2>&1 ||
		echo "check-deb: lintian could not be installed; skipping it"
fi
ok "build dependencies present"

# --- 3. build -----------------------------------------------------------
echo "check-deb: dpkg-buildpackage -us -uc -b (log: build.log)"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=${NFQB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -n 80 "$work/build.log" >&2
	die "dpkg-buildpackage"
fi
# The unit tests' summary, from the log.
sed -n '/^# TOTAL:/p;/^# PASS:/p;/^# FAIL:/p;/^# ERROR:/p' "$work/build.log" |
	sed 's/^/check-deb:   make check: /'
# as many as debian/rules' UNIT_TESTS names
nunit=$(sed -n '/^UNIT_TESTS *=/,/[^\\]$/p' "$src/debian/rules" |
	tr ' \t\\' '\n\n\n' | grep -c '^tests/')
grep -q "^# PASS: *$nunit\$" "$work/build.log" ||
	bad "make check in the package build did not pass its $nunit tests (debian/rules' UNIT_TESTS)"
ok "dpkg-buildpackage -us -uc -b"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb_lib=$work/src/libnfq-batch0_${version}_${arch}.deb
deb_dev=$work/src/libnfq-batch-dev_${version}_${arch}.deb
deb_tools=$work/src/libnfq-batch-tools_${version}_${arch}.deb
deb_py=$work/src/python3-nfq-batch_${version}_${arch}.deb
for d in "$deb_lib" "$deb_dev" "$deb_tools" "$deb_py"; do
	[ -f "$d" ] || die "not built: ${d##*/}"
done
echo "check-deb: built:"
for d in "$work/src"/*.deb; do
	echo "check-deb:   ${d##*/}"
done

# --- 4. lintian ---------------------------------------------------------
if command -v lintian >/dev/null 2>&1; then
	changes=("$work/src/libnfq-batch_${version}_"*.changes)
	echo "check-deb: lintian (reported, not fatal):"
	lintian --display-info --pedantic "${changes[0]}" 2>&1 |
		grep -v '^running with root privileges' |
		sed 's/^/check-deb:   /' || true
	if lintian "${changes[0]}" >/dev/null 2>&1; then
		echo "check-deb:   lintian: no errors"
	else
		echo "check-deb:   lintian: reported errors (see above)"
	fi
else
	echo "check-deb: lintian not installed: skipped"
fi

# --- 5. contents --------------------------------------------------------
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
expect() {	# expect DEB PATH...: each PATH (a grep -x regex) is in DEB
	local deb=$1 list p missing=
	shift
	list=$(contents "$deb")
	for p in "$@"; do
		grep -qx -- "$p" <<<"$list" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		bad "${deb##*/} lacks:$missing"
	else
		ok "${deb##*/} holds its $# expected files"
	fi
}
refuse() {	# refuse DEB REGEX...: nothing in DEB matches any REGEX
	local deb=$1 list p found=
	shift
	list=$(contents "$deb")
	for p in "$@"; do
		found="$found$(printf '%s\n' "$list" | { grep -x -- "$p" || true; } | tr '\n' ' ')"
	done
	if [ -n "$found" ]; then
		bad "${deb##*/} must not hold: $found"
	else
		ok "${deb##*/} holds none of the files of the other packages"
	fi
}
L=/usr/lib/$ma
expect "$deb_lib" "$L/libnfq-batch.so.0" "$L/libnfq-batch.so.0.2.0" \
	/usr/share/doc/libnfq-batch0/copyright
refuse "$deb_lib" "$L/libnfq-batch.so" '.*\.la' '.*\.a' '/usr/include/.*' \
	'/usr/bin/.*' '/usr/sbin/.*' '/usr/share/man/.*'
set --
for m in "$src"/man/man3/*.3; do
	set -- "$@" "/usr/share/man/man3/${m##*/}.gz"
done
expect "$deb_dev" /usr/include/libnfq-batch/libnfq-batch.h \
	/usr/include/libnfq-batch/pool.h "$L/libnfq-batch.so" \
	"$L/pkgconfig/libnfq-batch.pc" "$@"
refuse "$deb_dev" "$L/libnfq-batch.so.0.*" '.*\.la' '.*\.a' '/usr/bin/.*' \
	'/usr/sbin/.*' \
	'/usr/share/man/man8/.*' '/usr/share/man/man3/nfqb-python.*' \
	'/usr/lib/python3/.*'
X=/usr/share/doc/libnfq-batch-tools/examples
expect "$deb_tools" /usr/bin/nfqb-stat /usr/bin/nfqb-verdict \
	/usr/sbin/nfqb-ips \
	/usr/share/man/man8/nfqb-stat.8.gz /usr/share/man/man8/nfqb-verdict.8.gz \
	/usr/share/man/man8/nfqb-ips.8.gz \
	"$X/nfqb-ips\.service" "$X/nfqb-ips\.rules\.example"
# nfqb-ips's unit is an example: nothing enabled or started at install
# the benchmark is a developer's tool (bench/): in no package
refuse "$deb_tools" "$L/.*" '/usr/include/.*' '/usr/share/man/man3/.*' \
	'/lib/systemd/.*' '/usr/lib/systemd/.*' '/etc/.*' '.*nfqb-bench.*'
P=/usr/lib/python3/dist-packages/nfqb
expect "$deb_py" $P/__init__.py $P/netfilterqueue.py $P/aio.py $P/shim.py \
	$P/_protocols.py $P/_nfqb.pyi $P/py.typed \
	$P/_shim/netfilterqueue/__init__.py "$P/_nfqb\.cpython-.*\.so" \
	/usr/share/man/man3/nfqb-python.3.gz
refuse "$deb_py" "$L/.*" '.*\.la' '/usr/include/.*' '/usr/bin/.*' '/usr/sbin/.*' \
	'/usr/share/man/man3/nfqb_.*' '/usr/share/man/man3/libnfq-batch.*'

# Dependencies as debian/control promises them.
dep_dev=$(dpkg-deb -f "$deb_dev" Depends)
case $dep_dev in
*"libnfq-batch0 (= $version)"*libmnl-dev*liburcu-dev*) ok "libnfq-batch-dev Depends: $dep_dev" ;;
*) bad "libnfq-batch-dev Depends: $dep_dev" ;;
esac
dep_py=$(dpkg-deb -f "$deb_py" Depends)
case $dep_py in
*python3*) case $dep_py in
	*libnfq-batch0*) ok "python3-nfq-batch Depends: $dep_py" ;;
	*) bad "python3-nfq-batch Depends: $dep_py (no libnfq-batch0)" ;;
	esac ;;
*) bad "python3-nfq-batch Depends: $dep_py (no python3)" ;;
esac
dep_tools=$(dpkg-deb -f "$deb_tools" Depends)
case $dep_tools in
*libnfq-batch0*) ok "libnfq-batch-tools Depends: $dep_tools" ;;
*) bad "libnfq-batch-tools Depends: $dep_tools" ;;
esac
# The symbols file that went into the package lists versioned symbols.
ctl=$work/control
mkdir -p "$ctl"
dpkg-deb -e "$deb_lib" "$ctl"
if grep -q ' nfqb_version@LIBNFQB_0.1 ' "$ctl/symbols" &&
   grep -q ' nfqb_pool_create@LIBNFQB_0.2 ' "$ctl/symbols" &&
   grep -q ' nfqb_pool_create@LIBNFQB_0.4 ' "$ctl/symbols"; then
	ok "libnfq-batch0 symbols file: $(grep -c '@LIBNFQB_' "$ctl/symbols") versioned entries"
else
	bad "libnfq-batch0 has no (versioned) symbols file"
fi

# --- 6. build and run a program against the unpacked packages ------------
root=$work/root
mkdir -p "$root"
dpkg-deb -x "$deb_lib" "$root"
dpkg-deb -x "$deb_dev" "$root"
dpkg-deb -x "$deb_tools" "$root"
cat >"$work/outside.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

int main(int argc, char **argv)
{
	const char *v = nfqb_version();
	/* One symbol of each version node (LIBNFQB_0.1 .. LIBNFQB_0.4). */
	volatile void *pool_stop = (void *)nfqb_pool_stop;
	volatile void *interrupt = (void *)nfqb_queue_interrupt;
	volatile void *pool_create = (void *)nfqb_pool_create;

	printf("nfqb_version() = %s, nfqb_verdict_name(NFQB_DROP) = %s\n",
	       v ? v : "(null)", nfqb_verdict_name(NFQB_DROP));
	return pool_stop && interrupt && pool_create && argc > 1 && v &&
	       strcmp(v, argv[1]) == 0 ? 0 : 1;
}
EOC
export PKG_CONFIG_PATH=$root$L/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$root
if flags=$(pkg-config --cflags --libs libnfq-batch); then
	ok "pkg-config libnfq-batch from the unpacked -dev: $flags"
else
	die "pkg-config libnfq-batch from the unpacked -dev"
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH
# shellcheck disable=SC2086 # word splitting of $flags is wanted
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$work/outside" \
	"$work/outside.c" $flags; then
	ok "program built against the unpacked headers and library"
else
	die "program does not build against the unpacked packages"
fi
needed=$(objdump -T "$work/outside" | awk '/nfqb_/ { print $(NF - 1), $NF }' | tr -d '()' | sort)
# (here-strings, not pipes: with pipefail, grep -q closing the pipe early
# can fail the writer with SIGPIPE)
if grep -qx 'LIBNFQB_0.1 nfqb_version' <<<"$needed" &&
   grep -qx 'LIBNFQB_0.2 nfqb_pool_stop' <<<"$needed" &&
   grep -qx 'LIBNFQB_0.3 nfqb_queue_interrupt' <<<"$needed" &&
   grep -qx 'LIBNFQB_0.4 nfqb_pool_create' <<<"$needed"; then
	ok "program binds versioned symbols: $(printf '%s\n' "$needed" | tr '\n' ' ')"
else
	bad "program's nfqb_ symbols are not versioned: $needed"
fi
uversion=${version%-*}
if out=$(LD_LIBRARY_PATH=$root$L "$work/outside" "$uversion"); then
	ok "program runs with the unpacked library: $out"
else
	bad "program with the unpacked library: ${out:-no output} (expected $uversion)"
fi
# It must have loaded the unpacked library, not one installed elsewhere.
lddout=$(LD_LIBRARY_PATH=$root$L ldd "$work/outside")
if grep -qF "$root$L/libnfq-batch.so.0" <<<"$lddout"; then
	ok "program loads libnfq-batch.so.0 from the unpacked package"
else
	bad "program does not load the unpacked library"
fi
for t in bin/nfqb-stat bin/nfqb-verdict sbin/nfqb-ips; do
	if LD_LIBRARY_PATH=$root$L "$root/usr/$t" --help >/dev/null 2>&1; then
		ok "unpacked ${t#*/} --help runs"
	else
		bad "unpacked ${t#*/} --help"
	fi
done
unit=$root/usr/share/doc/libnfq-batch-tools/examples/nfqb-ips.service
if grep -q '^ExecStart=/usr/sbin/nfqb-ips ' "$unit"; then
	ok "nfqb-ips.service (example) runs the packaged /usr/sbin/nfqb-ips"
else
	bad "nfqb-ips.service (example): $(grep '^ExecStart=' "$unit" || echo 'no ExecStart=')"
fi

# --- 7. the Python binding ----------------------------------------------
dpkg-deb -x "$deb_py" "$root"
pydir=$root/usr/lib/python3/dist-packages
if out=$(cd / && PYTHONPATH=$pydir LD_LIBRARY_PATH=$root$L python3 -c \
	'import nfqb, nfqb.netfilterqueue, nfqb.aio, nfqb.shim; print(nfqb.__file__, nfqb.library_version())'); then
	case $out in
	"$pydir/nfqb/__init__.py $uversion") ok "unpacked nfqb imports: $out" ;;
	*) bad "unpacked nfqb: $out (expected $pydir/nfqb/__init__.py $uversion)" ;;
	esac
else
	bad "the unpacked nfqb does not import"
fi
ext=$(ls "$pydir"/nfqb/_nfqb.cpython-*.so 2>/dev/null | head -n 1)
lddout=
[ -z "$ext" ] || lddout=$(LD_LIBRARY_PATH=$root$L ldd "$ext" 2>&1) || true
# a here-string, not a pipe (see above: ldd | grep -q failed once so)
if [ -n "$ext" ] && grep -qF "$root$L/libnfq-batch.so.0" <<<"$lddout"; then
	ok "the extension loads libnfq-batch.so.0 from the unpacked package"
else
	bad "the extension ${ext:-(missing)} does not load the unpacked library: $(grep -F libnfq-batch <<<"$lddout" || echo "$lddout")"
fi
if [ "$(id -u)" -eq 0 ] && command -v iptables >/dev/null 2>&1; then
	if "$src/python/tests/smoke-shim.sh" python3 PYTHONPATH="$pydir" \
		LD_LIBRARY_PATH="$root$L"; then
		ok "the unpacked nfqb runs an unchanged python-netfilterqueue program (shim): 3 packets marked and accepted"
	else
		bad "the unpacked nfqb on packets (python/tests/smoke-shim.sh, above)"
	fi
else
	echo "check-deb: not root: the unpacked nfqb is not run on packets"
fi

echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
