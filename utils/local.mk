# SPDX-License-Identifier: LGPL-2.1-or-later
# utils: installed tools (top-relative paths, += only).

# nfqb-bench: libnfq-batch against hand-written consumers and the kernel.
bin_PROGRAMS += utils/nfqb-bench
utils_nfqb_bench_SOURCES = \
	utils/nfqb-bench.c \
	utils/nfqb-bench-types.h \
	utils/nfqb-bench-opts.h utils/nfqb-bench-opts.c \
	utils/nfqb-bench-scen.h utils/nfqb-bench-scen.c \
	utils/nfqb-bench-consumers.h utils/nfqb-bench-consumers.c \
	utils/nfqb-bench-run.h utils/nfqb-bench-run.c \
	utils/nfqb-bench-proc.h utils/nfqb-bench-proc.c \
	utils/nfqb-bench-traffic.h utils/nfqb-bench-traffic.c \
	utils/nfqb-bench-tcp.h utils/nfqb-bench-tcp.c \
	utils/nfqb-bench-ping.h utils/nfqb-bench-ping.c \
	utils/nfqb-bench-cons.h utils/nfqb-bench-cons.c \
	utils/nfqb-bench-ref.h utils/nfqb-bench-ref.c \
	utils/nfqb-bench-lib.h utils/nfqb-bench-lib.c \
	utils/nfqb-bench-daq.h utils/nfqb-bench-daq.c \
	utils/nfqb-bench-child.h utils/nfqb-bench-child.c \
	utils/nfqb-bench-py.h utils/nfqb-bench-py.c \
	utils/nfqb-bench-ext.h utils/nfqb-bench-ext.c \
	utils/nfqb-bench-stats.h utils/nfqb-bench-stats.c \
	utils/nfqb-bench-udp.h utils/nfqb-bench-udp.c \
	utils/nfqb-bench-report.h utils/nfqb-bench-report.c \
	utils/nfqb-bench-json.h utils/nfqb-bench-json.c \
	utils/nfqb-bench-plot.h utils/nfqb-bench-plot.c
utils_nfqb_bench_CFLAGS = $(AM_CFLAGS) $(NFQ_CFLAGS) $(LIBMNL_CFLAGS)
if BUILD_DAQ_MODULE
# the daqtest consumers: where daqtest and the modules are
utils_nfqb_bench_CFLAGS += -DNFQB_BENCH_DAQ \
	-DNFQB_DAQTEST='"$(DAQTEST)"' \
	-DNFQB_DAQ_STOCK_DIR='"$(DAQ_STOCK_MODULEDIR)"' \
	-DNFQB_DAQ_INSTALL_DIR='"$(daqmoddir)"' \
	-DNFQB_DAQ_BUILD_DIR='"$(abs_top_builddir)/daq/.libs"' \
	-DNFQB_LIB_BUILD_DIR='"$(abs_top_builddir)/lib/.libs"'
endif
utils_nfqb_bench_LDADD = lib/libnfq-batch.la $(LIBMNL_LIBS) $(NFQ_LIBS) \
	-lpthread -lm
dist_man_MANS += man/man8/nfqb-bench.8

# nfqb-bench-app: the app and app-old consumers' binary, an application on
# the 0.1.0 API (one binary, two libraries: nfqb-bench-ext.c). -no-install:
# the real executable in place, with a run path (RUNPATH, which
# LD_LIBRARY_PATH overrides: app-old) to lib/.libs instead of a wrapper
# script; -ldl: dladdr(), to say which library it runs on.
noinst_PROGRAMS += utils/nfqb-bench-app
utils_nfqb_bench_app_SOURCES = utils/nfqb-bench-app.c
utils_nfqb_bench_app_LDADD = lib/libnfq-batch.la -ldl
utils_nfqb_bench_app_LDFLAGS = -no-install -Wl,--enable-new-dtags
dist_noinst_SCRIPTS += utils/bench-old-lib.sh

# A short benchmark run (root, a few minutes at most); it reports, it never
# fails on speed, only when a run lost packets or a consumer failed.
NFQB_BENCH_ARGS ?= --quick
.PHONY: bench
bench: utils/nfqb-bench
	./utils/nfqb-bench $(NFQB_BENCH_ARGS)

# The same application binary on release 0.1.0's library and on this one,
# side by side in one nfqb-bench run (root, a minute or two): 0.1.0's
# library is built once into a cache outside the clone
# (utils/bench-old-lib.sh; NFQB_BENCH_OLD_CACHE, default
# /var/cache/nfqb-bench-0.1.0; BENCH_ABI_OLD_COMMIT: another commit).
BENCH_ABI_ARGS ?=
BENCH_ABI_OLD_COMMIT ?=
.PHONY: bench-abi
bench-abi: utils/nfqb-bench utils/nfqb-bench-app
	@old=$$($(top_srcdir)/utils/bench-old-lib.sh $(BENCH_ABI_OLD_COMMIT)) && \
	NFQB_BENCH_APP="$(abs_top_builddir)/utils/nfqb-bench-app" \
	NFQB_BENCH_OLD_LIB="$$old" \
	./utils/nfqb-bench -c app-old,app -s 64 --mode stream -w 1024 \
		$(BENCH_ABI_ARGS)
