# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for python-unshare (not in Debian 12), for
python-netfilterqueue 1.1.0's own tests (python/tests/run-upstream.sh):
unshare(flags) through libc, and the CLONE_* flags they use.

After a new mount namespace the mounts are made private (as util-linux's
unshare(1) does), so that the tests' mounts on /sys and /run stay in it
and never reach the machine's."""
import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

_MS_REC = 16384
_MS_PRIVATE = 1 << 18

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def unshare(flags):
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")
    if flags & CLONE_NEWNS:
        _check(_libc.mount(b"none", b"/", None,
                           ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None),
               "mount --make-rprivate /")
