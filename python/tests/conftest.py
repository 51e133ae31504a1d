# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures of the nfqb tests (run them with python/tests/run.sh:
root, the real kernel, a network namespace per test)."""
import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nsutil  # noqa: E402


def pytest_configure(config):
    if os.geteuid() != 0:
        pytest.exit("the nfqb tests need root (network namespaces, "
                    "iptables, nfnetlink_queue)", returncode=77)
    nsutil.remove_stale()


TEST_TIMEOUT = 120


@pytest.fixture(autouse=True)
def time_limit():
    """A test that hangs fails after TEST_TIMEOUT seconds (its namespace
    is cleaned up), instead of holding the integration lock for good."""
    def expired(signum, frame):
        raise TimeoutError("test still running after %d s" % TEST_TIMEOUT)

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def ns():
    """A private network namespace with loopback up, entered by the test's
    thread; deleted (with its rules) after the test, pass or fail."""
    n = nsutil.Netns()
    try:
        yield n
    finally:
        n.close()


@pytest.fixture
def rx(ns):
    """A receiver on 127.0.0.1:5000 in the test's namespace."""
    r = nsutil.Receiver(5000)
    try:
        yield r
    finally:
        r.close()
