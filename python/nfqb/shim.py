# SPDX-License-Identifier: LGPL-2.1-or-later
"""The opt-in ``netfilterqueue`` shim: programs written for
python-netfilterqueue run on nfqb without a change.

In code, before the program imports netfilterqueue::

    import nfqb.shim
    nfqb.shim.install()

For a program you do not edit::

    python3 -m nfqb.shim program.py [args...]
    python3 -m nfqb.shim -m package.module [args...]
    PYTHONPATH=$(python3 -m nfqb.shim --path) python3 program.py

Nothing is installed under the name ``netfilterqueue``: a real
python-netfilterqueue stays importable when the shim is not asked for.
"""
import os
import runpy
import sys

from . import netfilterqueue as _compat

__all__ = ["install", "path"]


def path() -> str:
    """The directory holding the ``netfilterqueue`` shim package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")


def install() -> None:
    """Make ``import netfilterqueue`` give nfqb.netfilterqueue."""
    mod = sys.modules.get("netfilterqueue")
    if mod is not None and mod is not _compat:
        raise RuntimeError("netfilterqueue was imported already: call "
                           "nfqb.shim.install() before it is")
    sys.modules["netfilterqueue"] = _compat


def _main(argv) -> int:
    usage = ("usage: python3 -m nfqb.shim PROGRAM.py [ARGS...] | "
             "-m MODULE [ARGS...] | --path")
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] == "--path":
        print(path())
        return 0
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(usage, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv[:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
