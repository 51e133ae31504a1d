#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/check-pip.sh - nfqb installs with pip on Debian 12, offline, and
# works: from a copy of what the build needs (python/, lib/, include/,
# configure.ac), into two fresh virtual environments, never touching the
# network (--no-index):
#
#  1. python3 -m venv V && V/bin/pip install --no-index ./python
#     (pip's own setuptools; no pyproject.toml, so no build isolation);
#  2. python3 -m venv --system-site-packages V &&
#     V/bin/pip install --no-index --no-build-isolation ./python
#     (Debian's python3-setuptools and python3-wheel).
#
# Each installed nfqb must import from its environment (outside the tree)
# and pass packets: an unchanged python-netfilterqueue program run through
# the shim (python3 -m nfqb.shim) in a private network namespace, checked
# at a receiver. Needs root, python3-venv, build-essential, pkg-config,
# libmnl-dev, liburcu-dev. Ends with "N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
python=${NFQB_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-pip.XXXXXX")
ns=nfqbpip-$$
pass=0
fail=0
cleanup() {
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ok() { echo "check-pip: PASS: $*"; pass=$((pass + 1)); }
bad() { echo "check-pip: FAIL: $*" >&2; fail=$((fail + 1)); }

mkdir -p "$work/src"
(cd "$top" && tar cf - --exclude=python/build --exclude='python/*.egg-info' \
	--exclude='*.o' --exclude='*.lo' --exclude='.libs' --exclude='.deps' \
	configure.ac include lib python) |
	tar -C "$work/src" -xf -

# an unchanged python-netfilterqueue program: marks and accepts 3 packets
cat >"$work/prog.py" <<'EOP'
from netfilterqueue import NetfilterQueue
def cb(pkt):
    pkt.set_mark(11)
    pkt.accept()
    if pkt.id == 3:
        raise SystemExit(0)
q = NetfilterQueue()
q.bind(0, cb)
print("bound", flush=True)
q.run()
EOP
cat >"$work/receive.py" <<'EOP'
import socket, struct, sys
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.setsockopt(socket.SOL_SOCKET, 75, 1)        # SO_RCVMARK
r.bind(("127.0.0.1", 5000))
r.settimeout(5)
print("ready", flush=True)
got = []
for _ in range(3):
    data, anc, _, _ = r.recvmsg(100, 64)
    got.append((data, struct.unpack("I", anc[0][2][:4])[0]))
print(got, flush=True)
sys.exit(0 if got == [(b"p%d" % i, 11) for i in range(3)] else 1)
EOP

smoke() {	# smoke VENV NAME
	v=$1
	where=$(cd / && "$v/bin/python" -c 'import nfqb._nfqb as m; print(m.__file__)') ||
		{ bad "$2: import nfqb"; return; }
	case $where in
	"$v"/*) ok "$2: nfqb imports from the environment ($where)" ;;
	*) bad "$2: nfqb imported from $where"; return ;;
	esac
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" && ip netns exec "$ns" ip link set lo up &&
	ip netns exec "$ns" iptables -w -A INPUT -p udp --dport 5000 \
		-j NFQUEUE --queue-num 0 || { bad "$2: namespace set-up"; return; }
	ip netns exec "$ns" "$python" "$work/receive.py" >"$work/rx.out" 2>&1 &
	rxpid=$!
	ip netns exec "$ns" "$v/bin/python" -m nfqb.shim "$work/prog.py" \
		>"$work/prog.out" 2>&1 &
	pid=$!
	n=0
	while ! grep -q bound "$work/prog.out" || ! grep -q ready "$work/rx.out"; do
		n=$((n + 1))
		[ $n -lt 100 ] || break
		sleep 0.1
	done
	ip netns exec "$ns" "$python" -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3):
    s.sendto(b"p%d" % i, ("127.0.0.1", 5000))'
	if wait "$pid" && wait "$rxpid"; then
		ok "$2: an unchanged python-netfilterqueue program through the shim: 3 packets marked and accepted"
	else
		bad "$2: the shim program: $(cat "$work/prog.out") / receiver: $(cat "$work/rx.out")"
	fi
	ip netns del "$ns"
}

# 1. a plain venv
"$python" -m venv "$work/v1" || { bad "python3 -m venv (python3-venv)"; echo "$pass passed, $fail failed"; exit 1; }
if (cd "$work/src" && "$work/v1/bin/pip" install --no-index ./python) >"$work/pip1.log" 2>&1; then
	ok "python3 -m venv V && V/bin/pip install --no-index ./python"
	smoke "$work/v1" "plain venv"
else
	tail -n 30 "$work/pip1.log" >&2
	bad "pip install in a plain venv"
fi

# 2. with Debian's setuptools and wheel, no build isolation
"$python" -m venv --system-site-packages "$work/v2"
if (cd "$work/src" && "$work/v2/bin/pip" install --no-index --no-build-isolation ./python) >"$work/pip2.log" 2>&1; then
	ok "python3 -m venv --system-site-packages V && V/bin/pip install --no-index --no-build-isolation ./python"
	smoke "$work/v2" "venv with system site packages"
else
	tail -n 30 "$work/pip2.log" >&2
	bad "pip install --no-build-isolation in a venv with system site packages"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
