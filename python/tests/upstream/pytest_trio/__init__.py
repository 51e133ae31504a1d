# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for the pytest-trio plugin (not in Debian 12), just enough
for python-netfilterqueue 1.1.0's own tests (python/tests/run-upstream.sh):
their conftest.py does ``from pytest_trio.enable_trio_mode import *``."""
