# SPDX-License-Identifier: LGPL-2.1-or-later
"""asyncio integration of nfqb: receive without blocking the event loop.

::

    import asyncio, nfqb, nfqb.aio

    async def main():
        with nfqb.Queue(0) as q:
            async for pkt in nfqb.aio.packets(q):
                pkt.accept()          # or later, from another task or thread

    asyncio.run(main())

The loop sleeps on ``Queue.fileno()`` (``loop.add_reader``), which wakes
it when packets arrive, when another thread decides a packet, or on
``Queue.interrupt()``; a decision made by a task of the loop's own thread
wakes it too, and the library's timers (the latency bound, the verdict
timeout) bound the sleep: decisions are sent without delay and no packet
waits on a sleeping loop. ``Queue.close()`` (from a task or another thread)
ends a waiting ``recv()`` with ValueError, its reader taken off the loop.
"""
import asyncio
import threading
from typing import AsyncIterator, List

from ._nfqb import Packet, Pool, Queue

__all__ = ["recv", "packets", "wait_pool"]


async def recv(queue: Queue, max: int = 64) -> List[Packet]:
    """Wait, without blocking the loop, for packets; a non-empty list of at
    most ``max`` of them. Decide each once (``accept()``, ...), from any
    task or thread."""
    loop = asyncio.get_running_loop()
    fd = queue.fileno()
    me = threading.get_ident()
    while True:
        pkts = queue.recv(max, block=False)
        if pkts:
            return pkts
        fut = loop.create_future()

        def wake() -> None:
            # the reader, a decision of this thread, or close() (from
            # any thread: before it closes the fd; the next recv() then
            # raises ValueError)
            if threading.get_ident() != me:
                loop.call_soon_threadsafe(wake)
                return
            loop.remove_reader(fd)
            if not fut.done():
                fut.set_result(None)

        loop.add_reader(fd, wake)
        queue._set_wakeup(wake)
        try:
            ms = queue.next_timeout()
            if ms < 0:
                await fut
            else:
                try:
                    await asyncio.wait_for(fut, ms / 1000.0)
                except asyncio.TimeoutError:
                    pass
        finally:
            queue._set_wakeup(None)
            loop.remove_reader(fd)


async def packets(queue: Queue, max: int = 64) -> AsyncIterator[Packet]:
    """The queue's packets, one by one, as they come (an endless async
    iterator: break out of it, or cancel its task)."""
    while True:
        for pkt in await recv(queue, max):
            yield pkt


async def wait_pool(pool: Pool) -> None:
    """Wait, without blocking the loop, until the pool has stopped (stop(),
    or a callback's exception); then join it (``Pool.wait()``, which raises
    that exception)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    fd = pool.fileno()

    def ready() -> None:
        if not fut.done():
            fut.set_result(None)

    loop.add_reader(fd, ready)
    try:
        await fut
    finally:
        loop.remove_reader(fd)
    await loop.run_in_executor(None, pool.wait)
