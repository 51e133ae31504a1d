# SPDX-License-Identifier: LGPL-2.1-or-later
"""nfqb.aio: the native API in an asyncio event loop."""
import asyncio
import time

import nfqb
import nfqb.aio
from nsutil import in_thread, numbered, send


def test_async_for_accepts_everything(ns, rx):
    ns.queue_rule(0, 5000)

    async def main():
        n = 0
        with nfqb.Queue(0) as q:
            send(5000, numbered(50))
            async for pkt in nfqb.aio.packets(q):
                pkt.accept()
                n += 1
                if n == 50:
                    break
            await asyncio.sleep(0.05)   # the loop keeps going meanwhile
        return n

    assert asyncio.run(asyncio.wait_for(main(), 5)) == 50
    rx.collect(50)
    assert rx.payloads() == numbered(50)


def test_decisions_of_other_tasks_leave_at_once(ns, rx):
    """A task decides after an await: the sleeping receive is woken (no
    packet waits on a sleeping loop)."""
    ns.queue_rule(0, 5000)
    arrived = []

    async def decide_later(pkt):
        await asyncio.sleep(0.05)
        pkt.verdict(nfqb.ACCEPT, mark=8)

    async def main():
        with nfqb.Queue(0) as q:
            tasks = []
            reader = asyncio.ensure_future(consume(q, tasks))
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, send, 5000, numbered(10))
            t0 = time.monotonic()
            await loop.run_in_executor(None, rx.collect, 10, 2.0, 0.0)
            arrived.append(time.monotonic() - t0)
            reader.cancel()
            await asyncio.gather(*tasks)

    async def consume(q, tasks):
        async for pkt in nfqb.aio.packets(q):
            tasks.append(asyncio.ensure_future(decide_later(pkt)))

    asyncio.run(asyncio.wait_for(main(), 5))
    assert rx.payloads() == numbered(10)
    assert {m for _, m in rx.got} == {8}
    assert arrived[0] < 0.5


def test_decisions_from_a_thread(ns, rx):
    ns.queue_rule(0, 5000)

    async def main():
        with nfqb.Queue(0) as q:
            send(5000, numbered(20))
            pkts = []
            while len(pkts) < 20:
                pkts += await nfqb.aio.recv(q)
            t = in_thread(lambda: [p.drop() if i % 2 else p.accept()
                                   for i, p in enumerate(pkts)])
            # the loop sleeps in recv(): the thread's decisions wake it
            waiter = asyncio.ensure_future(nfqb.aio.recv(q))
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, rx.collect, 10, 2.0)
            waiter.cancel()
            t.join(2)

    asyncio.run(asyncio.wait_for(main(), 5))
    assert rx.payloads() == numbered(20)[::2]


def test_wait_pool(ns, rx):
    ns.queue_rule(0, 5000)

    async def main():
        with nfqb.Pool(lambda p, pol: nfqb.ACCEPT) as pool:
            pool.start()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, send, 5000, numbered(5))
            await loop.run_in_executor(None, rx.collect, 5)
            loop.call_later(0.1, pool.stop)
            await nfqb.aio.wait_pool(pool)
            return pool.stopping

    assert asyncio.run(asyncio.wait_for(main(), 5))
    assert rx.payloads() == numbered(5)
