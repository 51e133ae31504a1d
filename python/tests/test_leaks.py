# SPDX-License-Identifier: LGPL-2.1-or-later
"""No growth: many packets through the compat API and the native API
leave the process's memory and Python's object count where they were."""
import gc
import os
import threading
import time

import nfqb
from nfqb.netfilterqueue import NetfilterQueue
from nsutil import in_thread, numbered, send


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def burst(n, seen):
    """n datagrams, never more than 1000 ahead of the consumer."""
    for i in range(0, n, 200):
        while i - seen[0] > 1000:
            time.sleep(0.001)
        send(5000, numbered(200))


def compat_round(n):
    nfq = NetfilterQueue()
    seen = [0]

    def cb(pkt):
        seen[0] += 1
        pkt.get_payload()
        if seen[0] % 3:
            pkt.set_mark(1)
            pkt.accept()
        elif seen[0] % 2:
            pkt.retain()
            pkt.drop()
        if seen[0] >= n:
            nfq.unbind()

    nfq.bind(0, cb, max_len=4096, sock_len=4 << 20)
    t = in_thread(burst, n, seen)
    nfq.run()
    t.join()


def native_round(n):
    got = [0]
    with nfqb.Queue(0, maxlen=4096, rcvbuf=8 << 20) as q:
        t = in_thread(burst, n, got)
        end = time.monotonic() + 30
        while got[0] < n:
            assert time.monotonic() < end, (got[0], q.stats())
            pkts = q.recv(block=False)
            if not pkts:
                time.sleep(0.001)
            for i, p in enumerate(pkts):
                if i % 4 == 0:
                    p.payload
                    p.verdict(nfqb.ACCEPT, mark=3)
                elif i % 4 == 1:
                    p.accept()
                # the others: dropped undecided, the default
            got[0] += len(pkts)
        t.join()


def test_no_growth(ns):
    ns.queue_rule(0, 5000)
    compat_round(2000)
    native_round(2000)
    gc.collect()
    rss0, obj0 = rss_kb(), len(gc.get_objects())
    for _ in range(3):
        compat_round(5000)
        native_round(5000)
    gc.collect()
    rss1, obj1 = rss_kb(), len(gc.get_objects())
    assert obj1 - obj0 < 200, (obj0, obj1)
    # (under ASan freed memory waits in its quarantine: RSS grows)
    if not os.environ.get("NFQB_PY_ASAN"):
        assert rss1 - rss0 < 4096, (rss0, rss1)
    assert threading.active_count() < 5
