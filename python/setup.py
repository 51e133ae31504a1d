# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build nfqb, the Python binding of libnfq-batch, with pip (offline).

From a clone, on Debian 12 (no network needed)::

    apt-get install build-essential pkg-config python3-dev python3-venv \\
        python3-setuptools python3-wheel libmnl-dev liburcu-dev
    python3 -m venv --system-site-packages /opt/nfqb
    /opt/nfqb/bin/pip install --no-index --no-build-isolation ./python

The library: by default its sources (../lib, beside this file) are built
into the extension, so nothing else needs installing; with
NFQB_PY_LIBRARY=system the extension links the installed libnfq-batch
instead (found with pkg-config, e.g. Debian's libnfq-batch-dev).
`make` in a configured tree builds the same extension against the tree's
shared library (python/local.mk); Debian's python3-nfq-batch is that one.

pyproject.toml names setuptools as the build backend: pip builds in an
isolated environment with setuptools and wheel from its index (online),
from --find-links (offline: python/check-pip.sh makes such a directory
from Debian's packages), or, with --no-build-isolation, with those
installed. The code needs Python 3.9 (PyObject_Vectorcall, ...).
"""
import glob
import os
import re
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def rel(*parts):
    """A path relative to this directory (setuptools wants those)."""
    return os.path.relpath(os.path.join(*parts), HERE)


def pkg_config(flag, *pkgs):
    try:
        out = subprocess.run(["pkg-config", flag] + list(pkgs), check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("nfqb: pkg-config %s %s failed: install pkg-config "
                         "and the development packages (%s)"
                         % (flag, " ".join(pkgs), " ".join(pkgs)))
    return out.split()


def version():
    with open(os.path.join(TOP, "configure.ac")) as f:
        m = re.search(r"AC_INIT\(\[libnfq-batch\], \[([^]]+)\]", f.read())
    return m.group(1) if m else "0.0.0"


def flags_of(words):
    inc = [w[2:] for w in words if w.startswith("-I")]
    libdirs = [w[2:] for w in words if w.startswith("-L")]
    libs = [w[2:] for w in words if w.startswith("-l")]
    other = [w for w in words if w[:2] not in ("-I", "-L", "-l")]
    return inc, libdirs, libs, other


def extension():
    mode = os.environ.get("NFQB_PY_LIBRARY", "bundled")
    sources = sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
    cflags = ["-std=gnu11", "-fvisibility=hidden", "-fno-strict-aliasing",
              "-Wall", "-Wextra"]
    macros = [("_GNU_SOURCE", None)]
    if mode == "system":
        words = pkg_config("--cflags", "libnfq-batch")
        words += pkg_config("--libs", "libnfq-batch")
        include = []
    elif mode == "bundled":
        lib = os.path.join(TOP, "lib")
        if not os.path.isdir(lib):
            raise SystemExit("nfqb: no ../lib beside python/ (build from "
                             "a clone, or set NFQB_PY_LIBRARY=system)")
        # every library source but the symbol-version shims of the
        # shared library (lib/compat.c)
        sources += sorted(f for f in glob.glob(os.path.join(lib, "*.c"))
                          if os.path.basename(f) != "compat.c")
        pkgs = ("libmnl", "liburcu-qsbr", "liburcu-cds")
        words = pkg_config("--cflags", *pkgs) + pkg_config("--libs", *pkgs)
        include = [rel(TOP, "include"), rel(lib)]
        macros += [("NFQB_BUILD", None),
                   ("PACKAGE_VERSION", '"%s"' % version())]
        words.append("-lpthread")
    else:
        raise SystemExit("nfqb: NFQB_PY_LIBRARY is bundled or system, "
                         "not %r" % mode)
    inc, libdirs, libs, other = flags_of(words)
    return Extension(
        "nfqb._nfqb",
        sources=[rel(s) for s in sources],
        include_dirs=include + inc,
        library_dirs=libdirs,
        libraries=libs,
        define_macros=macros,
        extra_compile_args=cflags + other,
    )


setup(
    name="nfqb",
    version=version(),
    description="libnfq-batch for Python: batched NFQUEUE packets and "
                "verdicts, and a drop-in for python-netfilterqueue 1.1",
    long_description=open(os.path.join(HERE, "README.md")).read(),
    long_description_content_type="text/markdown",
    license="LGPL-2.1-or-later",
    python_requires=">=3.9",
    packages=["nfqb"],
    # the opt-in shim: a directory put on sys.path by nfqb.shim
    package_data={"nfqb": ["py.typed", "_nfqb.pyi",
                           "_shim/netfilterqueue/__init__.py"]},
    ext_modules=[extension()],
    zip_safe=False,
    classifiers=[
        "Operating System :: POSIX :: Linux",
        "Programming Language :: C",
        "Programming Language :: Python :: 3",
        "Topic :: System :: Networking :: Firewalls",
        "License :: OSI Approved :: GNU Lesser General Public License v2 "
        "or later (LGPLv2+)",
    ],
)
