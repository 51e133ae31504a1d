# SPDX-License-Identifier: LGPL-2.1-or-later
"""The opt-in ``netfilterqueue`` shim of nfqb: python-netfilterqueue's
module name, served by nfqb.netfilterqueue (libnfq-batch underneath).

Only on sys.path when asked for: ``python3 -m nfqb.shim PROGRAM [ARGS]``,
or ``PYTHONPATH=$(python3 -m nfqb.shim --path)``.
"""
from nfqb.netfilterqueue import *  # noqa: F401,F403
from nfqb.netfilterqueue import __all__, __version__, VERSION  # noqa: F401
