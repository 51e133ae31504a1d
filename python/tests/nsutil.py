# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers of the nfqb tests: a private network namespace per test, its
iptables rules, and loopback UDP traffic checked at a receiver.

The test's thread enters the namespace with setns(2) (threads it starts
and processes it runs inherit it); leaving it and deleting the namespace
removes its rules and sockets, even when the test failed.
"""
import ctypes
import itertools
import os
import socket
import struct
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
SO_RCVMARK = 75          # Linux 5.19: the skb mark of received datagrams

_libc = ctypes.CDLL(None, use_errno=True)
_seq = itertools.count()


def setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "setns: " + os.strerror(err))


def run(*cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def remove_stale():
    """Namespaces of test runs that were killed (their process is gone)."""
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "nfqbpy" and parts[1].isdigit():
            if not os.path.exists("/proc/" + parts[1]):
                run("ip", "netns", "del", name, check=False)


class Netns:
    """A named network namespace with loopback up, entered by this
    thread until close()."""

    def __init__(self):
        self.name = "nfqbpy-%d-%d" % (os.getpid(), next(_seq))
        run("ip", "netns", "add", self.name)
        self.fd = os.open("/run/netns/" + self.name, os.O_RDONLY)
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        setns(self.fd)
        run("ip", "link", "set", "lo", "up")

    def ipt(self, *args):
        """iptables in this namespace (we are in it)."""
        run("iptables", "-w", *args)

    def queue_rule(self, num, port, chain="INPUT", extra=(), bypass=False):
        args = ["-A", chain, "-p", "udp", "--dport", str(port)]
        args += list(extra)
        args += ["-j", "NFQUEUE", "--queue-num", str(num)]
        if bypass:
            args.append("--queue-bypass")
        self.ipt(*args)

    def close(self):
        try:
            setns(self.home)
        finally:
            os.close(self.home)
            os.close(self.fd)
            run("ip", "netns", "del", self.name, check=False)


def kstat(num):
    """The kernel's line for queue num: dict, or None if not bound."""
    with open("/proc/net/netfilter/nfnetlink_queue") as f:
        for line in f:
            v = line.split()
            if int(v[0]) == num:
                return {"portid": int(v[1]), "waiting": int(v[2]),
                        "dropped": int(v[5]), "user_dropped": int(v[6]),
                        "id": int(v[7])}
    return None


class Receiver:
    """UDP datagrams at 127.0.0.1:port, with their marks."""

    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVMARK, 1)
        self.sock.bind(("127.0.0.1", port))
        self.port = port
        self.got = []            # (payload, mark)

    def collect(self, want=None, timeout=2.0, quiet=0.3):
        """Read until `want` datagrams came in total (then `quiet` more
        seconds for extra ones), or `timeout` seconds passed."""
        end = time.monotonic() + timeout
        settle = None
        while True:
            now = time.monotonic()
            if want is not None and len(self.got) >= want and settle is None:
                settle = now + quiet
            limit = min(end, settle) if settle else end
            if now >= limit:
                break
            self.sock.settimeout(max(0.001, limit - now))
            try:
                data, anc, _, _ = self.sock.recvmsg(65536, 64)
            except socket.timeout:
                continue
            mark = 0
            for level, typ, val in anc:
                if level == socket.SOL_SOCKET and typ == 36 and len(val) >= 4:
                    mark = struct.unpack("I", val[:4])[0]
            self.got.append((data, mark))
        return self.got

    def payloads(self):
        return [d for d, _ in self.got]

    def close(self):
        self.sock.close()


def send(port, payloads, gap=0.0, src=None):
    """Send each payload as one datagram to 127.0.0.1:port (from address
    src, default 127.0.0.1)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        if src:
            s.bind((src, 0))
        for p in payloads:
            s.sendto(p, ("127.0.0.1", port))
            if gap:
                time.sleep(gap)
    finally:
        s.close()


def numbered(n, prefix=b"d"):
    return [prefix + b"%06d" % i for i in range(n)]


def udp_payload(ip_packet):
    """The UDP payload of an IPv4 packet (bytes)."""
    ihl = (ip_packet[0] & 0x0f) * 4
    return ip_packet[ihl + 8:]


def in_thread(fn, *args, **kw):
    """Start fn in a daemon thread (it inherits this thread's namespace);
    returns the thread, with .error set if fn raised."""
    def body():
        try:
            t.result = fn(*args, **kw)
        except BaseException as e:  # noqa: B902 - reported to the test
            t.error = e

    t = threading.Thread(target=body, daemon=True)
    t.error = None
    t.result = None
    t.start()
    return t
