#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# python/tests/smoke-shim.sh PYTHON [NAME=VALUE...] - an installed nfqb on
# packets: in a private network namespace (as root), an unchanged
# python-netfilterqueue program (import netfilterqueue) runs on nfqb
# through its shim (PYTHON -m nfqb.shim, with the environment NAME=VALUE
# added: PYTHONPATH, LD_LIBRARY_PATH of an unpacked package), marks and
# accepts 3 datagrams, and a receiver checks that they arrived, marked
# (SO_RCVMARK). Used by python/check-pip.sh and tests/check-deb.sh.
# Exit status 0 when they did; otherwise what each side printed.
set -u

py=${1:?usage: smoke-shim.sh PYTHON [NAME=VALUE...]}
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/nfqb-smoke.XXXXXX")
ns=nfqbsmoke-$$
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$work"' EXIT

cat >"$work/prog.py" <<'EOP'
from netfilterqueue import NetfilterQueue
def cb(pkt):
    pkt.set_mark(12)
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
got = [r.recvmsg(100, 64) for _ in range(3)]
got = [(d, struct.unpack("I", a[0][2][:4])[0]) for d, a, _, _ in got]
print(got, flush=True)
sys.exit(0 if got == [(b"p%d" % i, 12) for i in range(3)] else 1)
EOP

ip netns add "$ns" && ip netns exec "$ns" ip link set lo up &&
ip netns exec "$ns" iptables -w -A INPUT -p udp --dport 5000 \
	-j NFQUEUE --queue-num 0 || exit 1
ip netns exec "$ns" python3 "$work/receive.py" >"$work/rx.out" 2>&1 &
rxpid=$!
(cd / && ip netns exec "$ns" env "$@" "$py" -m nfqb.shim "$work/prog.py") \
	>"$work/prog.out" 2>&1 &
progpid=$!
n=0
while ! grep -q bound "$work/prog.out" 2>/dev/null ||
      ! grep -q ready "$work/rx.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 100 ] || break
	sleep 0.1
done
ip netns exec "$ns" python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3):
    s.sendto(b"p%d" % i, ("127.0.0.1", 5000))'
rc=0
wait "$progpid" || rc=1
wait "$rxpid" || rc=1
if [ $rc -ne 0 ]; then
	echo "smoke-shim: program: $(cat "$work/prog.out")"
	echo "smoke-shim: receiver: $(cat "$work/rx.out")"
fi
exit $rc
