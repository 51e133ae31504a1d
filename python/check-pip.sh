#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/check-pip.sh - nfqb installs with pip on Debian 12, offline, and
# works: from a copy of what the build needs (python/, lib/, include/,
# configure.ac), into two fresh virtual environments, never touching the
# network (--no-index), with the library's sources built into the
# extension (NFQB_BUNDLE=1: nothing of libnfq-batch is installed here;
# without it setup.py links the installed library, found by pkg-config):
#
#  1. python3 -m venv V && V/bin/pip install --no-index --find-links W ./python
#     (pyproject.toml: pip's isolated build, with setuptools and wheel from
#     W, a directory of wheels made here from Debian's packages:
#     python3-setuptools-whl's, and one packed from python3-wheel);
#  2. python3 -m venv --system-site-packages V &&
#     V/bin/pip install --no-index --no-build-isolation ./python
#     (Debian's python3-setuptools and python3-wheel);
#  3. if pkg-config finds an installed libnfq-batch: as 2. without
#     NFQB_BUNDLE, the default, and the extension must link that library
#     and hold no copy of its own (no nfqb_* function defined in it).
#
# Each installed nfqb must import from its environment (outside the tree)
# and pass packets (python/tests/smoke-shim.sh: an unchanged
# python-netfilterqueue program through the shim, in a private network
# namespace, checked at a receiver). Needs root, python3-venv, build-essential, pkg-config,
# libmnl-dev, liburcu-dev, python3-setuptools, python3-wheel. Ends with
# "N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
python=${NFQB_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-pip.XXXXXX")
pass=0
fail=0
trap 'rm -rf "$work"' EXIT
ok() { echo "check-pip: PASS: $*"; pass=$((pass + 1)); }
bad() { echo "check-pip: FAIL: $*" >&2; fail=$((fail + 1)); }

mkdir -p "$work/src"
(cd "$top" && tar cf - --exclude=python/build --exclude='python/*.egg-info' \
	--exclude='*.o' --exclude='*.lo' --exclude='.libs' --exclude='.deps' \
	configure.ac include lib python) |
	tar -C "$work/src" -xf -

smoke() {	# smoke VENV NAME
	v=$1
	where=$(cd / && "$v/bin/python" -c 'import nfqb._nfqb as m; print(m.__file__)') ||
		{ bad "$2: import nfqb"; return; }
	case $where in
	"$v"/*) ok "$2: nfqb imports from the environment ($where)" ;;
	*) bad "$2: nfqb imported from $where"; return ;;
	esac
	if "$top/python/tests/smoke-shim.sh" "$v/bin/python"; then
		ok "$2: an unchanged python-netfilterqueue program through the shim: 3 packets marked and accepted"
	else
		bad "$2: the shim program on packets (above)"
	fi
}

# 1. a plain venv, pip's isolated build from a local wheelhouse
wh=$work/wheels
mkdir -p "$wh"
cp /usr/share/python-wheels/setuptools-*.whl "$wh/" 2>/dev/null ||
	bad "no setuptools wheel in /usr/share/python-wheels (python3-setuptools-whl)"
# a wheel of the installed wheel package (Debian ships it unpacked)
/usr/bin/python3 - "$wh" <<'PY' || bad "packing Debian's python3-wheel into a wheel"
import base64, hashlib, importlib.metadata as md, os, sys, zipfile
dist = md.distribution("wheel")
ver, top = dist.version, os.path.dirname(dist.locate_file("wheel/__init__.py"))
info = "wheel-%s.dist-info" % ver
files = {}
for root, dirs, names in os.walk(top):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for n in names:
        path = os.path.join(root, n)
        with open(path, "rb") as f:
            files[os.path.relpath(path, os.path.dirname(top))] = f.read()
files[info + "/METADATA"] = dist.read_text("PKG-INFO").encode()
files[info + "/entry_points.txt"] = (dist.read_text("entry_points.txt") or "").encode()
files[info + "/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: check-pip.sh\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n")
record = []
for name, data in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    record.append("%s,sha256=%s,%d" % (name, h.decode(), len(data)))
record.append(info + "/RECORD,,")
files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
with zipfile.ZipFile(os.path.join(sys.argv[1], "wheel-%s-py3-none-any.whl" % ver), "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
PY
"$python" -m venv "$work/v1" || { bad "python3 -m venv (python3-venv)"; echo "$pass passed, $fail failed"; exit 1; }
if (cd "$work/src" && NFQB_BUNDLE=1 "$work/v1/bin/pip" install --no-index --find-links "$wh" ./python) >"$work/pip1.log" 2>&1; then
	ok "python3 -m venv V && V/bin/pip install --no-index --find-links W ./python (isolated build)"
	smoke "$work/v1" "plain venv"
else
	tail -n 30 "$work/pip1.log" >&2
	bad "pip install in a plain venv"
fi

# 2. with Debian's setuptools and wheel, no build isolation
"$python" -m venv --system-site-packages "$work/v2"
if (cd "$work/src" && NFQB_BUNDLE=1 "$work/v2/bin/pip" install --no-index --no-build-isolation ./python) >"$work/pip2.log" 2>&1; then
	ok "python3 -m venv --system-site-packages V && V/bin/pip install --no-index --no-build-isolation ./python"
	smoke "$work/v2" "venv with system site packages"
else
	tail -n 30 "$work/pip2.log" >&2
	bad "pip install --no-build-isolation in a venv with system site packages"
fi

# 3. the default: the installed library, linked
if pkg-config --exists libnfq-batch 2>/dev/null; then
	"$python" -m venv --system-site-packages "$work/v3"
	rm -rf "$work/src/python/build"	# (the bundled builds above)
	if (cd "$work/src" && env -u NFQB_BUNDLE "$work/v3/bin/pip" install --no-index --no-build-isolation ./python) >"$work/pip3.log" 2>&1; then
		ok "pip install ./python against the installed libnfq-batch $(pkg-config --modversion libnfq-batch)"
		so=$(ls "$work"/v3/lib/python3*/site-packages/nfqb/_nfqb*.so 2>/dev/null | head -n 1)
		if [ -n "$so" ] && ldd "$so" | grep -q 'libnfq-batch\.so' &&
		   ! nm -D --defined-only "$so" | grep -q ' nfqb_'; then
			ok "the extension links libnfq-batch.so and holds no copy of it"
		else
			bad "the extension ($so) does not link libnfq-batch.so, or defines nfqb_* itself"
		fi
		smoke "$work/v3" "venv against the installed library"
	else
		tail -n 30 "$work/pip3.log" >&2
		bad "pip install against the installed libnfq-batch"
	fi
else
	echo "check-pip: no installed libnfq-batch (pkg-config): the default build, linking it, not tried"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
