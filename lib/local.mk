# SPDX-License-Identifier: LGPL-2.1-or-later
# The library.  All objects but its system calls go into the internal
# convenience library (tests link it to reach internal symbols); the system
# calls (lib/sys.c: the real ones, nothing else) into a convenience library
# of their own, which tests that inject failures replace by their seam
# (tests/seam/libnfqbt-seam.la) and the others link as it is.
# libnfq-batch.la is both plus the version script, which exports only the
# public nfqb_* API.

lib_LTLIBRARIES += lib/libnfq-batch.la
noinst_LTLIBRARIES += lib/libnfqb-internal.la lib/libnfqb-sys.la

lib_libnfqb_internal_la_SOURCES = \
	lib/internal.h \
	lib/sys.h \
	lib/sys-real.h \
	lib/abi.c \
	lib/pkt.h \
	lib/pkt.c \
	lib/parse.h \
	lib/parse.c \
	lib/rx.h \
	lib/rx.c \
	lib/book.h \
	lib/book.c \
	lib/post.h \
	lib/verdict.c \
	lib/plan.h \
	lib/plan.c \
	lib/msg.h \
	lib/msg.c \
	lib/tx.h \
	lib/tx.c \
	lib/req.h \
	lib/req.c \
	lib/wake.h \
	lib/wake.c \
	lib/loop.h \
	lib/loop.c \
	lib/large.h \
	lib/large.c \
	lib/pace.h \
	lib/pace.c \
	lib/settings.h \
	lib/queue.h \
	lib/queue-int.h \
	lib/queue.c \
	lib/stats.c \
	lib/pool-int.h \
	lib/pool.c \
	lib/pool-thread.c \
	lib/pool-dispatch.c \
	lib/pool-worker.c \
	lib/hdrs.h \
	lib/hdrs.c \
	lib/csum.h \
	lib/csum.c \
	lib/mss.c \
	lib/mangle.c
lib_libnfqb_internal_la_CFLAGS = $(AM_CFLAGS) $(LIBMNL_CFLAGS) \
	$(URCU_CFLAGS) -fvisibility=hidden -DNFQB_BUILD

lib_libnfqb_sys_la_SOURCES = lib/sys.h lib/sys-real.h lib/sys.c
lib_libnfqb_sys_la_CFLAGS = $(lib_libnfqb_internal_la_CFLAGS)

# Its own source: the 0.1.0 interfaces kept under their old symbol
# versions (only a shared library has symbol versions).
lib_libnfq_batch_la_SOURCES = lib/compat.c
lib_libnfq_batch_la_CFLAGS = $(lib_libnfqb_internal_la_CFLAGS)
lib_libnfq_batch_la_LIBADD = lib/libnfqb-internal.la lib/libnfqb-sys.la \
	$(LIBMNL_LIBS) $(URCU_LIBS) -lpthread
lib_libnfq_batch_la_LDFLAGS = \
	-version-info $(LIBNFQB_CURRENT):$(LIBNFQB_REVISION):$(LIBNFQB_AGE) \
	-Wl,--version-script=$(srcdir)/lib/libnfq-batch.map \
	-Wl,--no-undefined
EXTRA_lib_libnfq_batch_la_DEPENDENCIES = lib/libnfq-batch.map

EXTRA_DIST += lib/libnfq-batch.map

# The worker pool's public header (users include it explicitly).
pkginclude_HEADERS += include/libnfq-batch/pool.h

# The packet helpers' public header (users include it explicitly).
pkginclude_HEADERS += include/libnfq-batch/packet.h
