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
  (``nfqb.LateVerdictError``) and touches no other packet.
"""
from ._nfqb import COPY_NONE, COPY_META, COPY_PACKET, NetfilterQueue, Packet
# for default_verdict (an extension: not in __all__)
from ._nfqb import ACCEPT, DROP  # noqa: F401
from ._protocols import PROTOCOLS

# The version of python-netfilterqueue whose API this module offers.
VERSION = (1, 1, 0)
__version__ = "1.1.0"

__all__ = ["COPY_NONE", "COPY_META", "COPY_PACKET", "NetfilterQueue",
           "Packet", "PROTOCOLS", "VERSION", "__version__"]
