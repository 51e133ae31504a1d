# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/integration: real kernel, root, one network namespace per test.
# See tests/integration/harness.h for how each test cleans up after itself.

# The test helper library of every Check program (unit and integration):
# the harness (namespaces, traffic, queues, pools, expected counters,
# suites), the hand-made netlink messages (nlbuild) and the model of the
# kernel's queue (kmodel) of tests/unit, and the header-only helpers of
# the library's test seam (testq.h, txhook.h: a copy per program). The
# fuzz targets build nlbuild.c and kmodel.c themselves (tests/fuzz/run.sh).
check_LTLIBRARIES += tests/integration/libnfqbt-harness.la
tests_integration_libnfqbt_harness_la_SOURCES = \
	tests/integration/harness.c tests/integration/harness.h \
	tests/integration/harness-expect.c tests/integration/harness-pool.c \
	tests/integration/harness-seam.c \
	tests/unit/kmodel.c tests/unit/kmodel.h \
	tests/unit/nlbuild.c tests/unit/nlbuild.h \
	tests/unit/testq.h tests/unit/txhook.h
tests_integration_libnfqbt_harness_la_CFLAGS = $(NFQBT_CFLAGS) $(NFQBT_SEAM_CFLAGS) \
	-I$(top_srcdir)/lib

# Compile and link lines of the tests: every Check program gets
# NFQBT_CFLAGS; through the shared library (public API only), or through
# the internal convenience library with the test seam in place of the
# library's system calls (all of the library, statically: internal
# headers, the seam's hooks) with NFQBT_INTERNAL_CFLAGS too.
NFQBT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
NFQBT_PUBLIC_LDADD = tests/integration/libnfqbt-harness.la \
	lib/libnfq-batch.la $(CHECK_LIBS) -lpthread
NFQBT_INTERNAL_CFLAGS = $(LIBMNL_CFLAGS) $(NFQBT_SEAM_CFLAGS)
NFQBT_INTERNAL_LDADD = tests/integration/libnfqbt-harness.la \
	$(NFQBT_SEAM_LDADD) $(CHECK_LIBS) $(LIBMNL_LIBS) $(URCU_LIBS) \
	-lpthread

check_PROGRAMS += tests/integration/test_core tests/integration/test_diff
TESTS += tests/integration/test_core tests/integration/test_diff

# The core suite uses the public API only, through the shared library.
tests_integration_test_core_CFLAGS = $(NFQBT_CFLAGS) $(LIBMNL_CFLAGS)
tests_integration_test_core_LDADD = tests/integration/libnfqbt-harness.la \
	lib/libnfq-batch.la $(CHECK_LIBS) $(LIBMNL_LIBS) -lpthread

# The differential test reaches the internal parser, so it links the
# internal convenience library (all of the library, statically, its own
# system calls too) instead.
tests_integration_test_diff_CFLAGS = $(NFQBT_CFLAGS) $(LIBMNL_CFLAGS) \
	$(NFQ_CFLAGS) -I$(top_srcdir)
tests_integration_test_diff_LDADD = tests/integration/libnfqbt-harness.la \
	lib/libnfqb-internal.la lib/libnfqb-sys.la $(CHECK_LIBS) $(NFQ_LIBS) \
	$(LIBMNL_LIBS) -lpthread

# The coalescer against the real kernel (two 200,000-packet runs).
check_PROGRAMS += tests/integration/test_coalesce_kernel
TESTS += tests/integration/test_coalesce_kernel
tests_integration_test_coalesce_kernel_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_coalesce_kernel_LDADD = $(NFQBT_PUBLIC_LDADD)

# The packet helpers (<libnfq-batch/packet.h>) against the kernel: a
# changed UDP payload and a clamped TCP SYN arrive and are taken, over
# IPv4 and IPv6 (public API only).
check_PROGRAMS += tests/integration/test_helpers
TESTS += tests/integration/test_helpers
tests_integration_test_helpers_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_helpers_LDADD = $(NFQBT_PUBLIC_LDADD)

# The worker pool, through the shared library (public API only).
check_PROGRAMS += tests/integration/test_pool
TESTS += tests/integration/test_pool
tests_integration_test_pool_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_pool_LDADD = $(NFQBT_PUBLIC_LDADD)

# Verdicts a batch cannot carry: queue-to-N (mark, priority, bypass), repeat.
check_PROGRAMS += tests/integration/test_verdicts
TESTS += tests/integration/test_verdicts
tests_integration_test_verdicts_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_verdicts_LDADD = $(NFQBT_PUBLIC_LDADD)

# Verdict safety under injected faults (issue 9), through the shared
# library (public API only). The test program interposes sendmsg/sendto/
# send/sendmmsg and recvmmsg/recvmsg (the library calls them through its
# PLT): -export-dynamic puts its definitions in the dynamic symbol table
# whatever the library references; -ldl for dlsym(RTLD_NEXT).
check_PROGRAMS += tests/integration/test_safety
TESTS += tests/integration/test_safety
tests_integration_test_safety_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_safety_LDFLAGS = -export-dynamic
tests_integration_test_safety_LDADD = \
	tests/integration/libnfqbt-harness.la lib/libnfq-batch.la \
	$(CHECK_LIBS) -ldl -lpthread

# The adaptive linger on the real kernel, watched through the test seam
# (so it links the internal library, as test_diff does).
check_PROGRAMS += tests/integration/test_linger
TESTS += tests/integration/test_linger
tests_integration_test_linger_CFLAGS = $(NFQBT_CFLAGS) $(NFQBT_INTERNAL_CFLAGS)
tests_integration_test_linger_LDADD = $(NFQBT_INTERNAL_LDADD)

# Every way nfqb_recv() sleeps, woken by a signal and by an interrupt
# (issue 20); the seam makes verdict sends fail.
check_PROGRAMS += tests/integration/test_sleep
TESTS += tests/integration/test_sleep
tests_integration_test_sleep_CFLAGS = $(NFQBT_CFLAGS) $(NFQBT_INTERNAL_CFLAGS)
tests_integration_test_sleep_LDADD = $(NFQBT_INTERNAL_LDADD)

# The documented poll loop (non-blocking, poll on nfqb_queue_fd() for
# nfqb_queue_next_timeout()): calls per packet and idle CPU (issue 20).
check_PROGRAMS += tests/integration/test_pollloop
TESTS += tests/integration/test_pollloop
tests_integration_test_pollloop_CFLAGS = $(NFQBT_CFLAGS) $(NFQBT_INTERNAL_CFLAGS)
tests_integration_test_pollloop_LDADD = $(NFQBT_INTERNAL_LDADD)

# Every documented errno of every public function, one table row each, and
# the headers checked against the table. Links the internal library for
# the seam (failing allocations and sends, a clock that runs ahead).
check_PROGRAMS += tests/integration/test_errors
TESTS += tests/integration/test_errors
tests_integration_test_errors_SOURCES = tests/integration/test_errors.c
tests_integration_test_errors_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(NFQBT_INTERNAL_CFLAGS) \
	-DNFQB_TOP_SRCDIR='"$(abs_top_srcdir)"'
tests_integration_test_errors_LDADD = $(NFQBT_INTERNAL_LDADD)

# The ABI promises through the shared library: the 0.1.0 interfaces by
# their symbol versions, and structs that can grow.
check_PROGRAMS += tests/integration/test_abi
TESTS += tests/integration/test_abi
tests_integration_test_abi_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_abi_LDADD = $(NFQBT_PUBLIC_LDADD)

# Lifecycle without loss (issue 12): stop under load, handover across
# exec() ten times (the test re-executes itself as the consumer), privilege
# drop. Public API only, through the shared library.
check_PROGRAMS += tests/integration/test_lifecycle
TESTS += tests/integration/test_lifecycle
tests_integration_test_lifecycle_SOURCES = tests/integration/test_lifecycle.c \
	utils/nfqb-privdrop.c utils/nfqb-privdrop.h
tests_integration_test_lifecycle_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_test_lifecycle_LDADD = $(NFQBT_PUBLIC_LDADD)

# The soak (issue 12): nfqb-ips under mixed load with reloads, upgrades and
# restarts; not in TESTS (time): `make soak` runs NFQB_SOAK_SECONDS (600),
# tests/run-all.sh runs 60.
check_PROGRAMS += tests/integration/soak
tests_integration_soak_CFLAGS = $(NFQBT_CFLAGS)
tests_integration_soak_LDADD = $(NFQBT_PUBLIC_LDADD)

NFQB_SOAK_SECONDS ?= 600
.PHONY: soak
soak: tests/integration/soak ips/nfqb-ips
	NFQB_SOAK_SECONDS=$(NFQB_SOAK_SECONDS) ./tests/integration/soak

# nfqb-ips under a real systemd (issue 12): ips/nfqb-ips.service
# run by a systemd user manager the test starts (/lib/systemd/systemd, the
# systemd package: tests/deps.sh), restarted, killed and reloaded under
# load; nothing lost or duplicated, the queue never unbound. The unit
# runs a copy of nfqb-ips staged under /run (its sandbox hides /tmp,
# /root, /home, where the tree may be: issue 21); a second test makes
# the start fail on purpose and checks that systemd's reason is printed.
check_PROGRAMS += tests/integration/test_systemd
TESTS += tests/integration/test_systemd
tests_integration_test_systemd_CFLAGS = $(NFQBT_CFLAGS) \
	-DNFQB_TOP_SRCDIR='"$(abs_top_srcdir)"'
tests_integration_test_systemd_LDADD = $(NFQBT_PUBLIC_LDADD)
