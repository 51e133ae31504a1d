# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 32: the defects users hit first (garbage collection of queues
held in cycles, subclassing, python-netfilterqueue's exception types and
texts, reference leaks, asyncio and close, the default verdict)."""
import gc
import sys

import pytest

import nfqb
from nfqb.netfilterqueue import NetfilterQueue
from nsutil import kstat, numbered, send


def settle(qnum):
    """The kernel unbinds a queue when its socket closes: the line goes."""
    for _ in range(3):
        gc.collect()
    return kstat(qnum)


# --- 1. Packets take part in garbage collection ---------------------------

class App:
    """The usual shape: the application object owns the queue, its bound
    method is the callback, and it keeps packets to decide later."""

    def __init__(self, qnum):
        self.pending = []
        self.nfq = NetfilterQueue()
        self.nfq.bind(qnum, self.cb)

    def cb(self, pkt):
        self.pending.append(pkt)


def test_gc_compat_cycle_through_packets(ns):
    ns.queue_rule(3, 5000)
    app = App(3)
    assert kstat(3) is not None
    send(5000, numbered(3))
    app.nfq.run(block=False)
    assert len(app.pending) == 3
    del app
    assert settle(3) is None, "queue 3 still bound after gc.collect()"


def test_packet_is_gc_tracked(ns):
    ns.queue_rule(5, 5000)
    with nfqb.Queue(5) as q:
        send(5000, numbered(1))
        pkts = []
        for _ in range(100):
            pkts = q.recv(block=False)
            if pkts:
                break
            import time
            time.sleep(0.01)
        assert pkts
        assert gc.is_tracked(pkts[0])
        pkts[0].accept()


# --- 3. Subclassing, as python-netfilterqueue 1.1 (Cython classes) allows -

def test_subclass_netfilterqueue(ns, rx):
    from nfqb.netfilterqueue import Packet

    ns.queue_rule(6, 5000)

    class Q(NetfilterQueue):
        seen = 0

        def handle(self, pkt):
            self.seen += 1
            pkt.set_mark(7)
            pkt.accept()

    class P(Packet):
        pass

    assert issubclass(P, Packet)
    q = Q()
    assert isinstance(q, NetfilterQueue)
    q.bind(6, q.handle)
    send(5000, numbered(3))
    for _ in range(100):
        q.run(block=False)
        if q.seen == 3:
            break
        import time
        time.sleep(0.01)
    q.unbind()
    assert q.seen == 3
    rx.collect(3)
    assert rx.payloads() == numbered(3)
    del q
    assert settle(6) is None
