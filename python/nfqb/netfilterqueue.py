# SPDX-License-Identifier: LGPL-2.1-or-later
"""python-netfilterqueue 1.1's API on libnfq-batch.

Switch by one line::

    from nfqb.netfilterqueue import NetfilterQueue

Packets nobody decides (neither decided nor kept by the callback, dropped
undecided, still undecided at ``unbind()``) get the default verdict:
ACCEPT unless set otherwise, with ``NetfilterQueue(default_verdict=DROP)``,
``nfq.default_verdict = DROP`` at any time, or, for an unchanged program,
``NFQB_DEFAULT_VERDICT=drop`` in its environment. python-netfilterqueue
1.1 leaves such packets queued until the queue is full or unbound, where
the kernel drops them: ``NFQB_DEFAULT_VERDICT=drop`` is the nearer match.

``NetfilterQueue``, ``Packet``, ``COPY_NONE``, ``COPY_META``,
``COPY_PACKET`` and ``PROTOCOLS`` behave as python-netfilterqueue 1.1
documents them, with safe semantics where its own are weak (see
nfqb-python(3), "Compatibility"):

- a packet the callback neither decides nor keeps gets the default verdict
  (accept) when the callback returns; a kept one (a reference that outlives
  the callback) when its last reference goes, undecided;
- Ctrl-C (any signal whose handler raises) stops a blocked ``run()`` at
  once;
- verdicts from other threads are safe at any time and are sent at once;
- ``unbind()`` gives every packet still undecided the default verdict
  before it unbinds, from any thread or from the callback;
- a second verdict, or one after ``unbind()``, raises ``RuntimeError``
  (``nfqb.LateVerdictError``) and touches no other packet;
- importing this module has the kernel stamp packets (``get_timestamp()``)
  from then on: it opens one socket with ``SO_TIMESTAMP``, kept for the
  life of the process.
"""
from ._nfqb import COPY_NONE, COPY_META, COPY_PACKET, NetfilterQueue, Packet
# for default_verdict (an extension: not in __all__)
from ._nfqb import ACCEPT, DROP  # noqa: F401
from ._protocols import PROTOCOLS
from . import _nfqb

# get_timestamp() tells when a packet came in only while some socket on
# the host asks the kernel for timestamps, which it turns on a little
# after being asked: one socket with SO_TIMESTAMP, opened here, at import,
# and kept for the life of the process, so the first bind's packets are
# stamped too (best effort; see nfqb-python(3), COMPATIBILITY).
_nfqb._stamp_packets()

# The version of python-netfilterqueue whose API this module offers.
VERSION = (1, 1, 0)
__version__ = "1.1.0"

__all__ = ["COPY_NONE", "COPY_META", "COPY_PACKET", "NetfilterQueue",
           "Packet", "PROTOCOLS", "VERSION", "__version__"]
