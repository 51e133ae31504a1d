# SPDX-License-Identifier: LGPL-2.1-or-later
"""nfqb.netfilterqueue: python-netfilterqueue 1.1's API, on the real
kernel, each test in its own network namespace, checked at a receiver."""
import errno
import os
import queue as pyqueue
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.packet import Raw

import nfqb
from nfqb.netfilterqueue import (COPY_META, COPY_NONE, COPY_PACKET,
                                 PROTOCOLS, NetfilterQueue, Packet)
from nsutil import (Netns, Receiver, in_thread, kstat, numbered, send,
                    setns, udp_payload)


def start(nfq):
    """run() in a thread; stopped by unbind() from the test."""
    return in_thread(nfq.run)


def stop(nfq, t):
    nfq.unbind()
    t.join(3)
    assert not t.is_alive(), "run() did not return after unbind()"
    if t.error:
        raise t.error


def through(cb, rx, msgs, want=None, **bind):
    """Bind queue 0 to cb, run() in a thread, send msgs to port 5000,
    collect want (default: all) at rx, unbind."""
    nfq = NetfilterQueue()
    nfq.bind(0, cb, **bind)
    t = start(nfq)
    send(5000, msgs)
    rx.collect(len(msgs) if want is None else want)
    stop(nfq, t)


def test_constants():
    assert (COPY_NONE, COPY_META, COPY_PACKET) == (0, 1, 2)
    assert PROTOCOLS[6] == "TCP" and PROTOCOLS[17] == "UDP"
    assert PROTOCOLS[1] == "ICMP" and PROTOCOLS[58] == "IPv6-ICMP"
    assert Packet is nfqb.Packet
    import nfqb.netfilterqueue as m
    assert m.__version__ == "1.1.0"


SO_TIMESTAMP = 29           # (x86, arm, most: <asm/socket.h>)
SO_TIMESTAMPING = 37        # SO_TIMESTAMPING_OLD
SOF_TIMESTAMPING_SOFTWARE = 1 << 4


def stamping_sockets():
    """The fds of this process's UDP sockets with SO_TIMESTAMP on."""
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            s = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue                # not a socket (or already closed)
        with s:
            if (s.family in (socket.AF_INET, socket.AF_INET6) and
                    s.type == socket.SOCK_DGRAM and
                    s.getsockopt(socket.SOL_SOCKET, SO_TIMESTAMP)):
                fds.append(int(name))
    return fds


def test_import_turns_stamping_on(ns):
    # importing nfqb.netfilterqueue opened one socket with SO_TIMESTAMP,
    # kept for the life of the process, so the kernel stamps packets as
    # they come in (a host-wide switch: here, in another network
    # namespace, too); again, it opens no other
    held = stamping_sockets()
    assert held
    assert nfqb._nfqb._stamp_packets() is True
    assert stamping_sockets() == held
    # a datagram's arrival stamp, reported (SO_TIMESTAMPING, software
    # reporting only: it turns no stamping on, and without a stamp no
    # control message comes; SO_TIMESTAMP would make one up at recvmsg())
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with r, s:
        r.bind(("127.0.0.1", 0))
        r.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                     SOF_TIMESTAMPING_SOFTWARE)
        t0 = time.time()
        s.sendto(b"stamp", r.getsockname())
        data, anc, _, _ = r.recvmsg(16, 256)
    assert data == b"stamp"
    stamps = [d for (level, kind, d) in anc
              if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPING)]
    assert stamps, "the datagram came unstamped"
    sec, nsec = struct.unpack("@ll", stamps[0][:struct.calcsize("@ll")])
    assert t0 - 1 <= sec + nsec / 1e9 <= time.time() + 1


def test_accept_all_attributes(ns, rx):
    ns.queue_rule(0, 5000)
    seen = []
    t0 = time.time()

    def cb(pkt):
        seen.append((pkt.id, pkt.hook, pkt.hw_protocol, pkt.indev,
                     pkt.outdev, pkt.physindev, pkt.physoutdev, pkt.mark,
                     pkt.get_mark(), pkt.get_payload(),
                     pkt.get_payload_len(), pkt.get_timestamp(),
                     pkt.get_hw(), str(pkt)))
        pkt.accept()

    # the kernel stamps packets once a socket asks for timestamps
    # (SO_TIMESTAMP; the kernel turns stamping on asynchronously)
    rx.sock.setsockopt(socket.SOL_SOCKET, 29, 1)
    time.sleep(0.2)
    msgs = numbered(200)
    through(cb, rx, msgs)
    assert rx.payloads() == msgs          # each once, in order
    assert [s[0] for s in seen] == list(range(1, 201))
    lo = socket.if_nametoindex("lo")
    for (pid, hook, hwp, indev, outdev, pin, pout, mark, gmark, pl, plen,
         ts, hw, text) in seen:
        assert hook == 1                  # NF_INET_LOCAL_IN
        assert hwp == 0x0800
        assert (indev, outdev, pin, pout) == (lo, 0, 0, 0)
        assert mark == 0 and gmark == 0
        assert len(pl) == plen == 28 + 7
        assert udp_payload(pl) in msgs
        assert t0 - 1 <= ts <= time.time() + 1
        assert hw is None or len(hw) == 6
        assert text == "UDP packet, 35 bytes"
    assert kstat(0) is None               # unbound


def test_drop_and_mark_checked_at_receiver(ns, rx):
    ns.queue_rule(0, 5000)

    def cb(pkt):
        n = int(udp_payload(pkt.get_payload())[1:])
        if n % 3 == 0:
            pkt.drop()
        else:
            pkt.set_mark(1000 + n)
            assert pkt.get_mark() == 1000 + n
            assert pkt.mark == 0          # the packet's own, unchanged
            pkt.accept()

    through(cb, rx, numbered(90), 60)
    got = {int(d[1:]): m for d, m in rx.got}
    assert sorted(got) == [n for n in range(90) if n % 3]
    assert all(m == 1000 + n for n, m in got.items())


def test_mark_of_the_packet(ns, rx):
    ns.ipt("-t", "mangle", "-A", "OUTPUT", "-p", "udp", "--dport", "5000",
           "-j", "MARK", "--set-mark", "7")
    ns.queue_rule(0, 5000)
    marks = []

    def cb(pkt):
        marks.append((pkt.mark, pkt.get_mark()))
        pkt.set_mark(9)
        marks.append((pkt.mark, pkt.get_mark()))
        pkt.accept()

    through(cb, rx, numbered(3), 3)
    assert marks == [(7, 7), (7, 9)] * 3
    assert [m for _, m in rx.got] == [9, 9, 9]


def rewrite(pkt, new):
    """The packet with a new UDP payload, lengths and checksums redone."""
    ip = IP(pkt.get_payload())
    ip[UDP].remove_payload()
    ip[UDP].add_payload(Raw(new))
    del ip.len, ip.chksum, ip[UDP].len, ip[UDP].chksum
    return bytes(ip)


@pytest.mark.parametrize("how", ["same length", "shorter", "longer"])
def test_set_payload_checked_at_receiver(ns, rx, how):
    ns.queue_rule(0, 5000)

    def cb(pkt):
        old = udp_payload(pkt.get_payload())
        new = {"same length": old.upper(), "shorter": old[:3],
               "longer": old * 20}[how]
        pkt.set_payload(rewrite(pkt, new))
        assert udp_payload(pkt.get_payload()) == new
        assert pkt.get_payload_len() == 28 + len(new)
        pkt.accept()

    msgs = numbered(20)
    through(cb, rx, msgs)
    want = {"same length": [m.upper() for m in msgs],
            "shorter": [m[:3] for m in msgs],
            "longer": [m * 20 for m in msgs]}[how]
    assert rx.payloads() == want


def test_scapy_parses_the_payload(ns, rx):
    ns.queue_rule(0, 5000)
    parsed = []

    def cb(pkt):
        ip = IP(pkt.get_payload())
        parsed.append((ip.src, ip.dst, ip.proto, ip[UDP].dport,
                       bytes(ip[UDP].payload), ip.len))
        pkt.accept()

    through(cb, rx, [b"scapy-parsed"], 1)
    assert parsed == [("127.0.0.1", "127.0.0.1", 17, 5000, b"scapy-parsed",
                       28 + 12)]


def test_repeat(ns, rx):
    # the second pass skips the queue: the mark set with repeat()
    ns.queue_rule(0, 5000, extra=["-m", "mark", "!", "--mark", "1"])
    calls = []

    def cb(pkt):
        calls.append(pkt.id)
        pkt.set_mark(1)
        pkt.repeat()

    through(cb, rx, numbered(10), 10)
    assert len(calls) == 10
    assert rx.payloads() == numbered(10)
    assert {m for _, m in rx.got} == {1}


def test_retain_and_late_verdicts_from_the_main_thread(ns, rx):
    ns.queue_rule(0, 5000)
    kept = []

    def cb(pkt):
        n = int(udp_payload(pkt.get_payload())[1:])
        if n < 10:
            if n % 2 == 0:
                pkt.retain()
            kept.append(pkt)          # decided later
        else:
            pkt.accept()

    nfq = NetfilterQueue()
    nfq.bind(0, cb)
    t = start(nfq)
    msgs = numbered(20)
    send(5000, msgs)
    rx.collect(10, timeout=1)
    assert sorted(rx.payloads()) == msgs[10:]   # the kept ones wait
    assert len(kept) == 10
    for pkt in kept:
        n = kept.index(pkt)
        if n % 2 == 0:
            assert udp_payload(pkt.get_payload()) == msgs[n]
        else:
            with pytest.raises(RuntimeError):
                pkt.get_payload()     # not retained: gone with the callback
        assert pkt.id == n + 1 and pkt.hook == 1
    for pkt in reversed(kept):        # any order
        if kept.index(pkt) == 3:
            pkt.drop()
        else:
            pkt.accept()
    rx.collect(19, timeout=2)
    stop(nfq, t)
    assert sorted(rx.payloads()) == [m for i, m in enumerate(msgs) if i != 3]
    # retained payloads stay after the verdict
    assert udp_payload(kept[0].get_payload()) == msgs[0]


@pytest.mark.parametrize("dv", [nfqb.ACCEPT, nfqb.DROP])
def test_undecided_unkept_gets_the_default(ns, rx, dv):
    ns.queue_rule(0, 5000)
    nfq = NetfilterQueue(default_verdict=dv)
    nfq.bind(0, lambda pkt: None)
    t = start(nfq)
    send(5000, numbered(30))
    rx.collect(30 if dv == nfqb.ACCEPT else None, timeout=1)
    assert nfq.queue.stats()["py_defaults"] == 30
    stop(nfq, t)
    assert rx.payloads() == (numbered(30) if dv == nfqb.ACCEPT else [])


def test_second_verdict_raises_and_touches_nothing(ns, rx):
    ns.queue_rule(0, 5000)
    errors = []

    def cb(pkt):
        if pkt.id == 1:
            pkt.accept()
            for again in (pkt.accept, pkt.drop, pkt.repeat):
                try:
                    again()
                except RuntimeError as e:
                    errors.append((type(e), e.errno))
        else:
            pkt.drop()

    nfq = NetfilterQueue()
    nfq.bind(0, cb)
    t = start(nfq)
    send(5000, numbered(5))
    rx.collect(1, timeout=1)
    stop(nfq, t)
    assert errors == [(nfqb.LateVerdictError, errno.EALREADY)] * 3
    assert rx.payloads() == numbered(1)     # the others dropped


def test_unbind_with_packets_outstanding(ns, rx):
    ns.queue_rule(0, 5000)
    kept = []
    nfq = NetfilterQueue()
    nfq.bind(0, kept.append)
    t = start(nfq)
    msgs = numbered(25)
    send(5000, msgs)
    deadline = time.monotonic() + 2
    while len(kept) < 25 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(kept) == 25 and not rx.collect(timeout=0.2)
    assert kstat(0)["waiting"] == 25
    stop(nfq, t)                      # every kept packet: the default
    rx.collect(25)
    assert rx.payloads() == msgs
    for pkt in kept:
        with pytest.raises(RuntimeError, match="unbound") as e:
            pkt.accept()
        assert e.value.errno == errno.ESHUTDOWN
        assert pkt.id >= 1            # still readable (kept past the cb)
        with pytest.raises(RuntimeError):
            pkt.get_payload()
    nfq.unbind()                      # twice: nothing


def test_exception_in_callback_propagates_nothing_lost(ns, rx):
    ns.queue_rule(0, 5000)
    calls = []

    class Boom(Exception):
        pass

    def cb(pkt):
        calls.append(pkt.id)
        if pkt.id == 5:
            raise Boom("five")
        pkt.accept()

    nfq = NetfilterQueue()
    nfq.bind(0, cb)
    msgs = numbered(20)
    send(5000, msgs)
    time.sleep(0.2)                   # all 20 queued, one batch
    with pytest.raises(Boom):
        nfq.run()
    assert calls == [1, 2, 3, 4, 5]
    # the rest of the batch waits for the next run()
    t = start(nfq)
    rx.collect(20)
    stop(nfq, t)
    assert calls == list(range(1, 21))
    assert sorted(rx.payloads()) == msgs        # 5 too: the default


def test_ctrl_c_stops_a_blocked_run_at_once(ns, rx):
    ns.queue_rule(0, 5000)
    nfq = NetfilterQueue()
    nfq.bind(0, lambda p: p.accept())
    sent = []

    def interrupt():
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    in_thread(interrupt)
    with pytest.raises(KeyboardInterrupt):
        nfq.run()                     # blocked: no traffic
    took = time.monotonic() - sent[0]
    assert took < 0.1, "run() took %.3f s to stop" % took
    # the queue goes on
    t = start(nfq)
    send(5000, numbered(5))
    rx.collect(5)
    stop(nfq, t)
    assert rx.payloads() == numbered(5)


def test_signal_handler_that_returns_keeps_run_going(ns, rx):
    ns.queue_rule(0, 5000)
    hits = []
    old = signal.signal(signal.SIGUSR1, lambda s, f: hits.append(s))
    try:
        nfq = NetfilterQueue()
        nfq.bind(0, lambda p: p.accept())

        def traffic():
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.1)
            send(5000, numbered(5))
            rx.collect(5)
            nfq.unbind()

        t = in_thread(traffic)
        nfq.run()                     # returns at unbind()
        t.join(3)
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert hits == [signal.SIGUSR1]
    assert rx.payloads() == numbered(5)


def test_sigterm_handler_raising_stops_run(ns):
    ns.queue_rule(0, 5000)

    class Term(Exception):
        pass

    def handler(s, f):
        raise Term()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        nfq = NetfilterQueue()
        nfq.bind(0, lambda p: p.accept())
        in_thread(lambda: (time.sleep(0.2),
                           os.kill(os.getpid(), signal.SIGTERM)))
        with pytest.raises(Term):
            nfq.run()
        nfq.unbind()
    finally:
        signal.signal(signal.SIGTERM, old)


def test_threads_decide_in_any_order(ns, rx):
    ns.queue_rule(0, 5000)
    work = pyqueue.Queue()

    def cb(pkt):
        pkt.retain()
        work.put(pkt)

    def worker():
        rnd = random.Random(threading.get_ident())
        while True:
            pkt = work.get()
            if pkt is None:
                return
            time.sleep(rnd.random() * 0.003)
            if int(udp_payload(pkt.get_payload())[1:]) % 7 == 0:
                pkt.drop()
            else:
                pkt.set_mark(5)
                pkt.accept()

    workers = [in_thread(worker) for _ in range(4)]
    nfq = NetfilterQueue()
    nfq.bind(0, cb)
    t = start(nfq)
    msgs = numbered(400)
    send(5000, msgs, gap=0.0002)
    want = [m for i, m in enumerate(msgs) if i % 7]
    rx.collect(len(want), timeout=5)
    for _ in workers:
        work.put(None)
    for w in workers:
        w.join(3)
        assert w.error is None
    stop(nfq, t)
    assert sorted(rx.payloads()) == want
    assert {m for _, m in rx.got} == {5}


def test_verdict_outside_run_is_sent_at_once(ns, rx):
    """run(block=False) then a decision outside any run(): sent by the
    deciding call, as python-netfilterqueue does."""
    ns.queue_rule(0, 5000)
    kept = []
    nfq = NetfilterQueue()
    nfq.bind(0, kept.append)
    send(5000, numbered(3))
    time.sleep(0.1)
    nfq.run(block=False)
    assert len(kept) == 3
    kept[1].accept()
    rx.collect(1, timeout=0.5, quiet=0.1)
    assert rx.payloads() == [numbered(3)[1]]
    kept[0].drop()
    kept[2].accept()
    rx.collect(2, timeout=0.5)
    assert rx.payloads() == [numbered(3)[1], numbered(3)[2]]
    nfq.unbind()


def test_unbind_from_the_callback(ns, rx):
    ns.queue_rule(0, 5000)
    holder = {}

    def cb(pkt):
        if pkt.id == 3:
            holder["nfq"].unbind()
            pkt.accept()              # still ours until run() returns
            holder["pkt"] = pkt
        elif pkt.id < 3:
            pkt.accept()
        else:
            raise AssertionError("called after unbind()")

    nfq = NetfilterQueue()
    holder["nfq"] = nfq
    nfq.bind(0, cb)
    msgs = numbered(10)
    send(5000, msgs)
    time.sleep(0.2)
    nfq.run()                         # returns after the unbind
    rx.collect(10)
    assert sorted(rx.payloads()) == msgs   # 4..10: the default
    with pytest.raises(RuntimeError):
        holder["pkt"].drop()
    with pytest.raises(RuntimeError, match="bind"):
        nfq.run()


def test_run_nonblocking_with_get_fd(ns, rx):
    ns.queue_rule(0, 5000)
    nfq = NetfilterQueue()
    nfq.bind(0, lambda p: p.accept())
    fd = nfq.get_fd()
    assert isinstance(fd, int) and fd >= 0
    nfq.run(block=False)              # nothing there: returns at once
    send(5000, numbered(50))
    deadline = time.monotonic() + 3
    while len(rx.got) < 50 and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            nfq.run(block=False)
        rx.collect(timeout=0.01, quiet=0)
    nfq.unbind()
    assert rx.payloads() == numbered(50)


@pytest.mark.parametrize("blocking", [True, False])
def test_run_socket(ns, rx, blocking):
    ns.queue_rule(0, 5000)
    nfq = NetfilterQueue()
    nfq.bind(0, lambda p: p.accept())
    s = socket.fromfd(nfq.get_fd(), socket.AF_NETLINK, socket.SOCK_RAW)
    s.setblocking(blocking)
    if blocking:
        t = in_thread(nfq.run_socket, s)
        send(5000, numbered(40))
        rx.collect(40)
        stop(nfq, t)                  # unbind() wakes run_socket()
    else:
        nfq.run_socket(s)             # nothing: returns
        send(5000, numbered(40))
        deadline = time.monotonic() + 3
        while len(rx.got) < 40 and time.monotonic() < deadline:
            select.select([s], [], [], 0.1)
            nfq.run_socket(s)
            rx.collect(timeout=0.01, quiet=0)
        nfq.unbind()
    s.close()
    assert rx.payloads() == numbered(40)


def test_copy_meta_and_range(ns, rx):
    ns.queue_rule(0, 5000)
    ns.queue_rule(1, 5001)
    rx1 = Receiver(5001)
    seen = []

    def meta(pkt):
        with pytest.raises(RuntimeError, match="COPY_META"):
            pkt.get_payload()
        seen.append(("meta", pkt.get_payload_len()))
        pkt.accept()

    def short(pkt):
        seen.append(("range", pkt.get_payload()))
        pkt.accept()

    a, b = NetfilterQueue(), NetfilterQueue()
    a.bind(0, meta, mode=COPY_META)
    b.bind(1, short, range=20)
    ta, tb = start(a), start(b)
    send(5000, [b"m"])
    send(5001, [b"r" * 100])
    rx.collect(1)
    rx1.collect(1)
    stop(a, ta)
    stop(b, tb)
    rx1.close()
    assert ("meta", 0) in seen
    rng = [v for k, v in seen if k == "range"]
    assert len(rng) == 1 and len(rng[0]) == 20 and rng[0][9] == 17
    assert rx.payloads() == [b"m"] and rx1.payloads() == [b"r" * 100]


def test_max_len_kernel_drops_beyond_it(ns, rx):
    ns.queue_rule(0, 5000)
    kept = []
    nfq = NetfilterQueue()
    nfq.bind(0, kept.append, max_len=8)
    t = start(nfq)
    send(5000, numbered(20))
    time.sleep(0.3)
    assert len(kept) == 8 and kstat(0)["dropped"] == 12
    for p in kept:
        p.accept()
    rx.collect(8)
    stop(nfq, t)
    assert rx.payloads() == numbered(20)[:8]


def test_output_hook(ns, rx):
    ns.queue_rule(0, 5000, chain="OUTPUT")
    seen = []

    def cb(pkt):
        seen.append((pkt.hook, pkt.indev, pkt.outdev, pkt.get_timestamp(),
                     pkt.get_hw()))
        pkt.accept()

    through(cb, rx, [b"out"], 1)
    assert seen == [(3, 0, socket.if_nametoindex("lo"), 0.0, None)]


def test_hardware_address_over_veth(ns):
    peer = Netns()                    # the sender's namespace
    try:
        setns(ns.fd)
        subprocess.run(["ip", "link", "add", "nfqa", "type", "veth", "peer",
                        "name", "nfqb", "netns", peer.name], check=True)
        subprocess.run(["ip", "addr", "add", "10.77.0.1/24", "dev", "nfqa"],
                       check=True)
        subprocess.run(["ip", "link", "set", "nfqa", "up"], check=True)
        ns.ipt("-A", "INPUT", "-i", "nfqa", "-p", "udp", "--dport", "5000",
               "-j", "NFQUEUE", "--queue-num", "0")
        r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        r.bind(("10.77.0.1", 5000))
        r.settimeout(2)
        seen = []

        def cb(pkt):
            seen.append((pkt.get_hw(), pkt.indev))
            pkt.accept()

        nfq = NetfilterQueue()
        nfq.bind(0, cb)
        t = start(nfq)
        setns(peer.fd)
        subprocess.run(["ip", "addr", "add", "10.77.0.2/24", "dev", "nfqb"],
                       check=True)
        subprocess.run(["ip", "link", "set", "nfqb", "up"], check=True)
        link = subprocess.run(["ip", "-o", "link", "show", "nfqb"],
                              check=True, stdout=subprocess.PIPE,
                              text=True).stdout.split()
        mac = bytes.fromhex(link[link.index("link/ether") + 1]
                            .replace(":", ""))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(20):           # until the neighbour is resolved
            s.sendto(b"veth", ("10.77.0.1", 5000))
            try:
                setns(ns.fd)
                r.recv(100)
                break
            except socket.timeout:
                setns(peer.fd)
        setns(ns.fd)
        stop(nfq, t)
        r.close()
        assert seen and seen[0] == (mac, socket.if_nametoindex("nfqa"))
    finally:
        setns(ns.fd)
        peer.close()
        setns(ns.fd)


def test_sockfd_of_another_namespace(ns):
    """NetfilterQueue(sockfd=...): the queue is bound in the socket's
    namespace, while this thread stays in its own."""
    other = Netns()                   # entered: its rule, its receiver
    try:
        other.queue_rule(0, 5000)
        r = Receiver(5000)
        fd = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
        setns(ns.fd)                  # back: queue 0 here stays unbound
        nfq = NetfilterQueue(sockfd=fd.fileno())
        nfq.bind(0, lambda p: p.accept())
        assert kstat(0) is None
        t = start(nfq)
        setns(other.fd)
        assert kstat(0) is not None
        send(5000, numbered(5))
        r.collect(5)
        setns(ns.fd)
        stop(nfq, t)
        fd.close()
        r.close()
        assert r.payloads() == numbered(5)
    finally:
        other.close()
        setns(ns.fd)


def test_bad_input_clear_exceptions_nothing_lost(ns, rx):
    ns.queue_rule(0, 5000)
    nfq = NetfilterQueue()
    with pytest.raises(RuntimeError, match="bind"):
        nfq.run()
    with pytest.raises(RuntimeError, match="bind"):
        nfq.get_fd()
    with pytest.raises(TypeError):
        nfq.bind("0", print)
    with pytest.raises(OverflowError):
        nfq.bind(-1, print)
    with pytest.raises(ValueError):
        nfq.bind(70000, print)
    with pytest.raises(TypeError, match="callable"):
        nfq.bind(0, 42)
    with pytest.raises(ValueError, match="COPY_NONE"):
        nfq.bind(0, print, mode=COPY_NONE)
    with pytest.raises(ValueError):
        nfq.bind(0, print, mode=9)
    with pytest.raises(TypeError):
        NetfilterQueue(0)             # keyword-only, as the original
    with pytest.raises(TypeError):
        Packet()
    errors = []

    def cb(pkt):
        for bad, exc in ((lambda: pkt.set_mark("x"), TypeError),
                         (lambda: pkt.set_mark(-1), OverflowError),
                         (lambda: pkt.set_mark(1 << 32), OverflowError),
                         (lambda: pkt.set_payload(42), TypeError),
                         (lambda: pkt.set_payload("text"), TypeError),
                         (lambda: pkt.set_payload(b"x" * 70000), ValueError),
                         (lambda: pkt.accept(1), TypeError)):
            try:
                bad()
                errors.append("no error")
            except exc:
                errors.append("ok")
        pkt.accept()

    nfq.bind(0, cb)
    with pytest.raises(RuntimeError, match="already bound"):
        nfq.bind(0, cb)
    other = NetfilterQueue()
    with pytest.raises(OSError) as e:
        other.bind(0, cb)             # another socket has queue 0
    assert e.value.errno in (errno.EBUSY, errno.EPERM)
    t = start(nfq)
    send(5000, numbered(3))
    rx.collect(3)
    stop(nfq, t)
    assert errors == ["ok"] * 21
    assert rx.payloads() == numbered(3)


def test_shim_is_opt_in(ns):
    env = dict(os.environ)
    code = ("import nfqb.shim; nfqb.shim.install(); import netfilterqueue, "
            "nfqb.netfilterqueue as c; assert netfilterqueue is c; "
            "print(netfilterqueue.NetfilterQueue.__name__)")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    assert out.strip() == "NetfilterQueue"
    path = subprocess.run([sys.executable, "-m", "nfqb.shim", "--path"],
                          env=env, check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()
    env2 = dict(env, PYTHONPATH=path + os.pathsep + env.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c",
                          "import netfilterqueue; print(netfilterqueue.__version__, "
                          "netfilterqueue.NetfilterQueue.__module__)"],
                         env=env2, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    assert out.split() == ["1.1.0", "nfqb.netfilterqueue"]
    # without the shim, no module of that name comes from nfqb
    r = subprocess.run([sys.executable, "-c", "import netfilterqueue, sys; "
                        "sys.exit(netfilterqueue.__name__ == "
                        "'nfqb.netfilterqueue')"], env=env,
                       stderr=subprocess.DEVNULL)
    assert r.returncode != 0 or "nfqb" not in str(r)


def test_shim_runs_an_unchanged_program(ns, rx, tmp_path):
    ns.queue_rule(0, 5000)
    prog = tmp_path / "prog.py"
    prog.write_text(
        "from netfilterqueue import NetfilterQueue\n"
        "import sys\n"
        "def cb(pkt):\n"
        "    pkt.set_mark(3)\n"
        "    pkt.accept()\n"
        "    if pkt.id == 4:\n"
        "        raise SystemExit(0)\n"
        "q = NetfilterQueue()\n"
        "q.bind(0, cb)\n"
        "print('bound', flush=True)\n"
        "q.run()\n")
    p = subprocess.Popen([sys.executable, "-m", "nfqb.shim", str(prog)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "bound"
    send(5000, numbered(4))
    assert p.wait(5) == 0
    rx.collect(4)
    assert rx.payloads() == numbered(4)
    assert {m for _, m in rx.got} == {3}


def test_bind_under_traffic(ns, rx):
    """bind() while packets flow into the queue (the usual case: the rule
    is there first) succeeds every time, and unbind() after it leaves the
    queue unbound. The packets that come while bind() configures the
    queue used to make it fail: read while it waited for the kernel's
    answers, they held receive buffers before the buffer count for
    max_len was set (OSError EBUSY, "buffers")."""
    ns.queue_rule(0, 5000)
    flood = subprocess.Popen(
        [sys.executable, "-c",
         "import socket, time\n"
         "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "end = time.monotonic() + 20\n"
         "n = 0\n"
         "while time.monotonic() < end and n < 3000000:\n"
         "    try:\n"
         "        s.sendto(b'f', ('127.0.0.1', 5000))\n"
         "    except OSError:\n"
         "        pass\n"
         "    n += 1\n"])
    try:
        time.sleep(0.3)
        for i in range(20):
            nfq = NetfilterQueue()
            nfq.bind(0, lambda p: p.accept(), max_len=4096,
                     sock_len=8 << 20)
            nfq.run(block=False)
            nfq.unbind()
            k = kstat(0)
            assert k is None, "still bound after unbind()"
    finally:
        flood.kill()
        flood.wait()
