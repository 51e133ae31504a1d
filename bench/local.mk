# SPDX-License-Identifier: LGPL-2.1-or-later
# bench: nfqb-bench and its consumers (top-relative paths, += only): built
# by make, run by make bench, never installed nor packaged.

# nfqb-bench: libnfq-batch against hand-written consumers and the kernel.
noinst_PROGRAMS += bench/nfqb-bench
bench_nfqb_bench_SOURCES = \
	bench/nfqb-bench.c \
	bench/nfqb-bench-types.h \
	bench/nfqb-bench-opts.h bench/nfqb-bench-opts.c \
	bench/nfqb-bench-scen.h bench/nfqb-bench-scen.c \
	bench/nfqb-bench-consumers.h bench/nfqb-bench-consumers.c \
	bench/nfqb-bench-run.h bench/nfqb-bench-run.c \
	bench/nfqb-bench-proc.h bench/nfqb-bench-proc.c \
	bench/nfqb-bench-traffic.h bench/nfqb-bench-traffic.c \
	bench/nfqb-bench-tcp.h bench/nfqb-bench-tcp.c \
	bench/nfqb-bench-ping.h bench/nfqb-bench-ping.c \
	bench/nfqb-bench-cons.h bench/nfqb-bench-cons.c \
	bench/nfqb-bench-ref.h bench/nfqb-bench-ref.c \
	bench/nfqb-bench-lib.h bench/nfqb-bench-lib.c \
	bench/nfqb-bench-daq.h bench/nfqb-bench-daq.c \
	bench/nfqb-bench-child.h bench/nfqb-bench-child.c \
	bench/nfqb-bench-py.h bench/nfqb-bench-py.c \
	bench/nfqb-bench-ext.h bench/nfqb-bench-ext.c \
	bench/nfqb-bench-stats.h bench/nfqb-bench-stats.c \
	bench/nfqb-bench-udp.h bench/nfqb-bench-udp.c \
	bench/nfqb-bench-report.h bench/nfqb-bench-report.c \
	bench/nfqb-bench-json.h bench/nfqb-bench-json.c \
	bench/nfqb-bench-plot.h bench/nfqb-bench-plot.c
bench_nfqb_bench_CFLAGS = $(AM_CFLAGS) $(NFQ_CFLAGS) $(LIBMNL_CFLAGS)
if BUILD_DAQ_MODULE
# the daqtest consumers: where daqtest and the modules are
bench_nfqb_bench_CFLAGS += -DNFQB_BENCH_DAQ \
	-DNFQB_DAQTEST='"$(DAQTEST)"' \
	-DNFQB_DAQ_STOCK_DIR='"$(DAQ_STOCK_MODULEDIR)"' \
	-DNFQB_DAQ_INSTALL_DIR='"$(daqmoddir)"' \
	-DNFQB_DAQ_BUILD_DIR='"$(abs_top_builddir)/daq/.libs"' \
	-DNFQB_LIB_BUILD_DIR='"$(abs_top_builddir)/lib/.libs"'
endif
bench_nfqb_bench_LDADD = lib/libnfq-batch.la $(LIBMNL_LIBS) $(NFQ_LIBS) \
	-lpthread -lm
EXTRA_DIST += bench/nfqb-bench.8

# nfqb-bench-app: the app and app-old consumers' binary, an application on
# the 0.1.0 API (one binary, two libraries: nfqb-bench-ext.c). -no-install:
# the real executable in place, with a run path (RUNPATH, which
# LD_LIBRARY_PATH overrides: app-old) to lib/.libs instead of a wrapper
# script; -ldl: dladdr(), to say which library it runs on.
noinst_PROGRAMS += bench/nfqb-bench-app
bench_nfqb_bench_app_SOURCES = bench/nfqb-bench-app.c
bench_nfqb_bench_app_LDADD = lib/libnfq-batch.la -ldl
bench_nfqb_bench_app_LDFLAGS = -no-install -Wl,--enable-new-dtags
dist_noinst_SCRIPTS += bench/bench-old-lib.sh

# A short benchmark run (root, a few minutes at most); it reports, it never
# fails on speed, only when a run lost packets or a consumer failed.
NFQB_BENCH_ARGS ?= --quick
.PHONY: bench
bench: bench/nfqb-bench
	./bench/nfqb-bench $(NFQB_BENCH_ARGS)

# The same application binary on release 0.1.0's library and on this one,
# side by side in one nfqb-bench run (root, a minute or two): 0.1.0's
# library is built once into a cache outside the clone
# (bench/bench-old-lib.sh; NFQB_BENCH_OLD_CACHE, default
# /var/cache/nfqb-bench-0.1.0; BENCH_ABI_OLD_COMMIT: another commit).
BENCH_ABI_ARGS ?=
BENCH_ABI_OLD_COMMIT ?=
.PHONY: bench-abi
bench-abi: bench/nfqb-bench bench/nfqb-bench-app
	@old=$$($(top_srcdir)/bench/bench-old-lib.sh $(BENCH_ABI_OLD_COMMIT)) && \
	NFQB_BENCH_APP="$(abs_top_builddir)/bench/nfqb-bench-app" \
	NFQB_BENCH_OLD_LIB="$$old" \
	./bench/nfqb-bench -c app-old,app -s 64 --mode stream -w 1024 \
		$(BENCH_ABI_ARGS)
