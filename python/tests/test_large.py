# SPDX-License-Identifier: LGPL-2.1-or-later
"""The large-packet policy (nfqb_queue_set_large()): Queue(large=),
Queue.set_large(), Pool(large=), and the drop-in's queue. A UDP datagram
of 65535 bytes in all (65507 of payload over IPv4 on lo) is longer than
the kernel copies (MAX_PAYLOAD, 65531): LARGE_PASS hands it out cut,
LARGE_WHOLE drops it unseen and counts it."""
import time

import pytest

import nfqb
from nfqb.netfilterqueue import NetfilterQueue
from nsutil import send, udp_payload

BIG = 65535 - 20 - 8            # the most an IPv4 UDP datagram carries
SHORT = b"short"


def big_then_short():
    """The long datagram, then a short one (queued in that order)."""
    send(5000, [b"L" * BIG, SHORT])


def until_short(q, timeout=3.0):
    """Packets of q, each accepted, up to the short datagram."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for p in q.recv(64, block=False):
            seen.append((p.truncated, p.orig_len, len(p.payload)))
            short = udp_payload(p.payload) == SHORT
            p.accept()
            if short:
                q.flush()
                return seen
        time.sleep(0.005)
    pytest.fail("the short datagram never came: %r" % (seen,))


def large_counters(st):
    return {k: st[k] for k in ("truncated", "large_dropped",
                               "large_resent", "mss_clamped")}


def test_pass_hands_out_cut(ns, rx):
    ns.queue_rule(0, 5000)
    with nfqb.Queue(0, large=nfqb.LARGE_PASS) as q:
        big_then_short()
        seen = until_short(q)
        assert len(seen) == 2
        cut, orig_len, got = seen[0]
        assert cut and orig_len == 65535 and got == nfqb.MAX_PAYLOAD
        assert seen[1][0] is False
        rx.collect(2)
        assert large_counters(q.stats()) == {
            "truncated": 1, "large_dropped": 0, "large_resent": 0,
            "mss_clamped": 0}
    # the accept passed it whole
    assert [len(d) for d in rx.payloads()] == [BIG, len(SHORT)]


@pytest.mark.parametrize("how", ["Queue(large=)", "set_large()"])
def test_whole_drops_unseen_and_counts(ns, rx, how):
    ns.queue_rule(0, 5000)
    if how == "set_large()":
        q = nfqb.Queue(0)
        q.set_large(nfqb.LARGE_WHOLE)
    else:
        q = nfqb.Queue(0, large=nfqb.LARGE_WHOLE)
    with q:
        big_then_short()
        seen = until_short(q)
        assert seen == [(False, len(SHORT) + 28, len(SHORT) + 28)]
        rx.collect(1)
        assert large_counters(q.stats()) == {
            "truncated": 1, "large_dropped": 1, "large_resent": 0,
            "mss_clamped": 0}
    assert rx.payloads() == [SHORT]


def test_set_large_back_to_pass(ns, rx):
    ns.queue_rule(0, 5000)
    with nfqb.Queue(0, large=nfqb.LARGE_WHOLE) as q:
        q.set_large(nfqb.LARGE_PASS)
        big_then_short()
        assert [c for c, _, _ in until_short(q)] == [True, False]
        assert q.stats()["large_dropped"] == 0
        rx.collect(2)


def test_pool_large_whole(ns, rx):
    ns.queue_rule(0, 5000)
    seen = []

    def cb(pkt, policy):
        seen.append((pkt.truncated, udp_payload(pkt.payload)))
        return nfqb.ACCEPT

    with nfqb.Pool(cb, large=nfqb.LARGE_WHOLE) as pool:
        pool.start()
        big_then_short()
        rx.collect(1)
        pool.stop()
        pool.wait(5)
        st = pool.queue_stats(0)
    assert seen == [(False, SHORT)]
    assert rx.payloads() == [SHORT]
    assert large_counters(st) == {
        "truncated": 1, "large_dropped": 1, "large_resent": 0,
        "mss_clamped": 0}


def test_pool_large_pass_default(ns, rx):
    ns.queue_rule(0, 5000)
    seen = []

    def cb(pkt, policy):
        seen.append(pkt.truncated)
        return nfqb.ACCEPT

    with nfqb.Pool(cb) as pool:
        pool.start()
        big_then_short()
        rx.collect(2)
        pool.stop()
        pool.wait(5)
        st = pool.queue_stats(0)
    assert seen == [True, False]
    assert st["truncated"] == 1 and st["large_dropped"] == 0
    assert [len(d) for d in rx.payloads()] == [BIG, len(SHORT)]


def test_compat_queue_set_large(ns, rx):
    """The drop-in keeps python-netfilterqueue's way (cut packets reach the
    callback); its queue takes the policy."""
    ns.queue_rule(0, 5000)
    got = []

    def cb(pkt):
        got.append(pkt.get_payload_len())
        pkt.accept()

    nfq = NetfilterQueue()
    nfq.bind(0, cb)
    try:
        nfq.queue.set_large(nfqb.LARGE_WHOLE)
        big_then_short()
        end = time.monotonic() + 3
        while not got and time.monotonic() < end:
            nfq.run(block=False)
            time.sleep(0.01)
        st = nfq.queue.stats()
    finally:
        nfq.unbind()
    assert got == [len(SHORT) + 28]
    assert st["truncated"] == 1 and st["large_dropped"] == 1
    rx.collect(1)
    assert rx.payloads() == [SHORT]


def test_bad_policy(ns):
    with nfqb.Queue(0) as q:
        with pytest.raises(ValueError):
            q.set_large(7)
        with pytest.raises(OverflowError):
            q.set_large(-1)
        with pytest.raises(TypeError):
            q.set_large("whole")
    with pytest.raises(ValueError):
        nfqb.Queue(0, large=2)
    with pytest.raises(ValueError):
        nfqb.Pool(lambda p, pol: None, large=2)
    assert nfqb.LARGE_PASS == 0 and nfqb.LARGE_WHOLE == 1
