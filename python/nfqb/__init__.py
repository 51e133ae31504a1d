# SPDX-License-Identifier: LGPL-2.1-or-later
"""nfqb: libnfq-batch for Python 3.

Take packets from the Linux kernel's nfnetlink_queue (the iptables and
nftables NFQUEUE target) many per system call, and give verdicts back
coalesced into few messages, from any thread and in any order.

Three ways in:

- ``nfqb.netfilterqueue``: python-netfilterqueue 1.1's API, a drop-in
  (``from nfqb.netfilterqueue import NetfilterQueue``; or ``import
  nfqb.shim; nfqb.shim.install()`` before ``import netfilterqueue``).
- :class:`Queue`: the native API: ``recv()`` returns a list of
  :class:`Packet` objects, decided with ``accept()``, ``drop()``,
  ``repeat()`` or ``verdict()`` from any thread; ``nfqb.aio`` for asyncio.
- :class:`Pool`: the library's worker pool (several queues, several
  threads) calling a Python callback, with a policy object swapped at run
  time.

Every packet handed to Python gets exactly one verdict: the
application's, or the queue's default verdict (accept unless set) when its
Packet object dies undecided, and at close. See nfqb-python(3).
"""
import atexit as _atexit

from ._nfqb import (  # noqa: F401
    ACCEPT, DROP, QUEUE, REPEAT,
    COPY_NONE, COPY_META, COPY_PACKET,
    F_FAIL_OPEN, F_CONNTRACK, F_GSO, F_UID_GID, F_SECCTX,
    ENOBUFS_REPORT, ENOBUFS_IGNORE, LINGER_AUTO, MAX_PAYLOAD, DEFAULT_BUFFERS,
    LARGE_PASS, LARGE_WHOLE,
    POOL_QUEUE_PER_WORKER, POOL_DISPATCH,
    HOOK_UNKNOWN, HOOK_PREROUTING, HOOK_INPUT, HOOK_FORWARD, HOOK_OUTPUT,
    HOOK_POSTROUTING, HOOK_INGRESS, HOOK_EGRESS, HOOK_ARP_IN, HOOK_ARP_OUT,
    HOOK_ARP_FORWARD,
    FAMILY_INET, FAMILY_IPV4, FAMILY_ARP, FAMILY_NETDEV, FAMILY_BRIDGE,
    FAMILY_IPV6,
    LateVerdictError, Packet, Queue, Pool,
    kstats, verdict_name, library_version,
)
from . import _nfqb

__version__ = "1.1.0"

__all__ = [
    "ACCEPT", "DROP", "QUEUE", "REPEAT",
    "COPY_NONE", "COPY_META", "COPY_PACKET",
    "F_FAIL_OPEN", "F_CONNTRACK", "F_GSO", "F_UID_GID", "F_SECCTX",
    "ENOBUFS_REPORT", "ENOBUFS_IGNORE", "LINGER_AUTO", "MAX_PAYLOAD",
    "DEFAULT_BUFFERS", "LARGE_PASS", "LARGE_WHOLE",
    "POOL_QUEUE_PER_WORKER", "POOL_DISPATCH",
    "HOOK_UNKNOWN", "HOOK_PREROUTING", "HOOK_INPUT", "HOOK_FORWARD",
    "HOOK_OUTPUT", "HOOK_POSTROUTING", "HOOK_INGRESS", "HOOK_EGRESS",
    "HOOK_ARP_IN", "HOOK_ARP_OUT", "HOOK_ARP_FORWARD",
    "FAMILY_INET", "FAMILY_IPV4", "FAMILY_ARP", "FAMILY_NETDEV",
    "FAMILY_BRIDGE", "FAMILY_IPV6",
    "LateVerdictError", "Packet", "Queue", "Pool",
    "kstats", "verdict_name", "library_version",
]

# Pools still running at exit are stopped (their packets get their
# decisions or the default verdict) before the interpreter goes.
_atexit.register(_nfqb._atexit)
