# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/seam: the library's system calls (lib/sys.h) with hooks a test
# installs (seam.h), for tests that inject failures. A test links it with
# the internal library in place of lib/libnfqb-sys.la (the real calls):
# $(NFQBT_SEAM_LDADD), and compiles with $(NFQBT_SEAM_CFLAGS).

check_LTLIBRARIES += tests/seam/libnfqbt-seam.la
tests_seam_libnfqbt_seam_la_SOURCES = tests/seam/seam.h tests/seam/seam.c
tests_seam_libnfqbt_seam_la_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/lib

NFQBT_SEAM_CFLAGS = -I$(top_srcdir)/lib -I$(top_srcdir)/tests/seam
NFQBT_SEAM_LDADD = lib/libnfqb-internal.la tests/seam/libnfqbt-seam.la
