# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build nfqb, the Python binding of libnfq-batch, with pip (offline).

On Debian 12, with libnfq-batch installed (no network needed)::

    apt-get install build-essential pkg-config python3-dev python3-venv \\
        python3-setuptools python3-wheel libnfq-batch-dev
    python3 -m venv --system-site-packages /opt/nfqb
    /opt/nfqb/bin/pip install --no-index --no-build-isolation ./python

The library: by default the extension links the installed libnfq-batch
(pkg-config --cflags --libs libnfq-batch; Debian's libnfq-batch-dev, or
`make install` of this tree), so a system has one copy of it. With
NFQB_BUNDLE=1 the library's sources (../lib, beside this file, in a
clone) are built into the extension instead, for a wheel that needs no
installed library (then libmnl-dev and liburcu-dev in place of
libnfq-batch-dev). `make` in a configured tree builds the same extension
against the tree's shared library (python/local.mk), never with the
sources a second time; Debian's python3-nfq-batch is that one.

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
from setuptools.command.build_ext import build_ext

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
        hint = ""
        if "libnfq-batch" in pkgs:
            hint = ("; or, from a clone, NFQB_BUNDLE=1 builds the library's "
                    "sources into the extension")
        raise SystemExit("nfqb: pkg-config %s %s failed: install pkg-config "
                         "and the development packages (%s)%s"
                         % (flag, " ".join(pkgs), " ".join(pkgs), hint))
    return out.split()


def version():
    """The clone's (configure.ac), else the installed library's."""
    try:
        with open(os.path.join(TOP, "configure.ac")) as f:
            m = re.search(r"AC_INIT\(\[libnfq-batch\], \[([^]]+)\]",
                          f.read())
        return m.group(1) if m else "0.0.0"
    except OSError:
        pass
    try:
        return subprocess.run(["pkg-config", "--modversion", "libnfq-batch"],
                              check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL,
                              text=True).stdout.strip() or "0.0.0"
    except (OSError, subprocess.CalledProcessError):
        return "0.0.0"


def flags_of(words):
    inc = [w[2:] for w in words if w.startswith("-I")]
    libdirs = [w[2:] for w in words if w.startswith("-L")]
    libs = [w[2:] for w in words if w.startswith("-l")]
    other = [w for w in words if w[:2] not in ("-I", "-L", "-l")]
    return inc, libdirs, libs, other


def bundle():
    """True if the library's sources are to be built into the extension:
    NFQB_BUNDLE=1 (NFQB_PY_LIBRARY=bundled, its older spelling)."""
    flag = os.environ.get("NFQB_BUNDLE", "")
    if flag not in ("", "0", "1"):
        raise SystemExit("nfqb: NFQB_BUNDLE is 1 or 0, not %r" % flag)
    old = os.environ.get("NFQB_PY_LIBRARY", "")
    if old not in ("", "bundled", "system"):
        raise SystemExit("nfqb: NFQB_PY_LIBRARY is bundled or system, "
                         "not %r" % old)
    return flag == "1" or (flag == "" and old == "bundled")


def extension():
    mode = "bundled" if bundle() else "system"
    sources = sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
    cflags = ["-std=gnu11", "-fvisibility=hidden", "-fno-strict-aliasing",
              "-Wall", "-Wextra"]
    macros = [("_GNU_SOURCE", None)]
    if mode == "system":
        words = pkg_config("--cflags", "libnfq-batch")
        words += pkg_config("--libs", "libnfq-batch")
        include = []
    else:
        lib = os.path.join(TOP, "lib")
        if not os.path.isdir(lib):
            raise SystemExit("nfqb: NFQB_BUNDLE=1 but no ../lib beside "
                             "python/ (bundle from a clone, or install "
                             "libnfq-batch and leave NFQB_BUNDLE unset)")
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


class BuildExt(build_ext):
    """Always built afresh: the build/ beside this file may hold the
    extension of the other way (bundled or linked), as up to date."""

    def finalize_options(self):
        super().finalize_options()
        self.force = True


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
    cmdclass={"build_ext": BuildExt},
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
