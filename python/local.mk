# SPDX-License-Identifier: LGPL-2.1-or-later
# python/: the Python 3 binding nfqb (top-relative paths, += only).
# Built when configure finds Python's headers (--with-python); the
# extension links the shared libnfq-batch. python/setup.py builds the same
# sources for pip (see README.md, "Python").

NFQBPY_PY = \
	python/nfqb/__init__.py \
	python/nfqb/netfilterqueue.py \
	python/nfqb/shim.py \
	python/nfqb/aio.py \
	python/nfqb/_protocols.py \
	python/nfqb/_nfqb.pyi \
	python/nfqb/py.typed
NFQBPY_SHIM = python/nfqb/_shim/netfilterqueue/__init__.py
# one layer each, from the lowest (tests/check-python-shape.sh)
NFQBPY_SRC = \
	python/src/util.h \
	python/src/util.c \
	python/src/packet.h \
	python/src/packet.c \
	python/src/queue.h \
	python/src/queue.c \
	python/src/pool.h \
	python/src/pool.c \
	python/src/compat.h \
	python/src/compat.c \
	python/src/module.c
NFQBPY_TESTS = \
	python/tests/conftest.py \
	python/tests/nsutil.py \
	python/tests/test_compat.py \
	python/tests/test_native.py \
	python/tests/test_pool.py \
	python/tests/test_aio.py \
	python/tests/test_leaks.py \
	python/tests/test_edges.py \
	python/tests/test_large.py

EXTRA_DIST += $(NFQBPY_PY) $(NFQBPY_SHIM) $(NFQBPY_TESTS) $(NFQBPY_SRC) \
	python/setup.py \
	python/pyproject.toml \
	python/README.md \
	python/nfqb-python.3 \
	python/tests/run.sh \
	python/tests/run-upstream.sh \
	python/tests/upstream/unshare.py \
	python/tests/upstream/pytest_trio/__init__.py \
	python/tests/upstream/pytest_trio/enable_trio_mode.py \
	python/tests/smoke-shim.sh \
	python/bench/pyconsumer.py \
	python/bench/build-pynfq.sh \
	python/check-pip.sh

# The layers of python/src (tests/check-python-shape.sh): no file includes
# a header of a layer above its own; run with or without --with-python.
TESTS += tests/check-python-shape.sh
EXTRA_DIST += tests/check-python-shape.sh

if BUILD_PYTHON
nfqbpydir = $(nfqb_pythondir)/nfqb
nfqbpyshimdir = $(nfqbpydir)/_shim/netfilterqueue
nfqbpy_LTLIBRARIES = python/_nfqb.la
python__nfqb_la_SOURCES = $(NFQBPY_SRC)
# Python's headers break strict aliasing rules; only PyInit__nfqb is
# exported (PyMODINIT_FUNC), the rest is hidden
python__nfqb_la_CFLAGS = $(AM_CFLAGS) $(PYTHON_CFLAGS) \
	-fno-strict-aliasing -fvisibility=hidden
python__nfqb_la_LIBADD = lib/libnfq-batch.la -lpthread
python__nfqb_la_LDFLAGS = -module -avoid-version -shared \
	-shrext $(PYTHON_EXT_SUFFIX)
nfqbpy_DATA = $(NFQBPY_PY)
nfqbpyshim_DATA = $(NFQBPY_SHIM)
dist_man_MANS += python/nfqb-python.3

# the extension beside the package's modules, for the tests and the
# benchmark from the build tree: python/stage/nfqb/ (symlinks)
all-local: python/stage/.stamp
python/stage/.stamp: python/_nfqb.la $(NFQBPY_PY) $(NFQBPY_SHIM)
	$(AM_V_GEN)rm -rf python/stage && \
	$(MKDIR_P) python/stage/nfqb/_shim/netfilterqueue && \
	for f in $(NFQBPY_PY) $(NFQBPY_SHIM); do \
		ln -s "$(abs_top_srcdir)/$$f" "python/stage/$${f#python/}" || exit 1; \
	done && \
	ln -s "$(abs_top_builddir)/python/.libs/_nfqb$(PYTHON_EXT_SUFFIX)" \
		python/stage/nfqb/ && \
	touch $@

# libtool's .la has no use beside a Python module; without it libtool's
# uninstall does not know the module's file name: removed here
install-data-hook:
	rm -f "$(DESTDIR)$(nfqbpydir)/_nfqb.la"

uninstall-hook:
	rm -f "$(DESTDIR)$(nfqbpydir)/_nfqb$(PYTHON_EXT_SUFFIX)"

clean-local:
	rm -rf python/stage

# The Python tests (pytest, root, a network namespace per test): through
# python/tests/run.sh, which takes the integration tests' lock itself.
TESTS += python/tests/run.sh
# python-netfilterqueue 1.1.0's own tests, unchanged, on the drop-in
# (its tarball through tests/find-third-party.sh; python3-trio)
TESTS += python/tests/run-upstream.sh
AM_TESTS_ENVIRONMENT += \
	NFQB_PYTHON="$(PYTHON)"; export NFQB_PYTHON; \
	NFQB_PY_STAGE="$(abs_top_builddir)/python/stage"; export NFQB_PY_STAGE;

# The Python benchmark (root, a few minutes): python-netfilterqueue 1.1.0
# (built from its tarball into a cache outside the clone) against
# nfqb.netfilterqueue and nfqb.Queue, side by side in one nfqb-bench run.
NFQB_PYBENCH_ARGS ?= --mode stream,tcp --sizes 64 --gso off --tcp-flows 1,8 --quick
bench-python: bench/nfqb-bench all-local
	@pynfq=$$(NFQB_PYTHON="$(PYTHON)" $(top_srcdir)/python/bench/build-pynfq.sh) && \
	NFQB_BENCH_PYNFQ_DIR=$$pynfq NFQB_BENCH_PYTHON="$(PYTHON)" \
	NFQB_BENCH_PYCONSUMER="$(abs_top_srcdir)/python/bench/pyconsumer.py" \
	NFQB_BENCH_PYNFQB_DIR="$(abs_top_builddir)/python/stage" \
	./bench/nfqb-bench -c py-nfq,py-compat,py-batch $(NFQB_PYBENCH_ARGS)
endif

