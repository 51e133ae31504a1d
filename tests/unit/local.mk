# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/unit: Check programs on crafted netlink messages, no kernel needed.
# They link the internal convenience library to reach internal symbols.

UNIT_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMNL_CFLAGS) \
	-I$(top_srcdir)/lib
UNIT_TEST_LDADD = lib/libnfqb-internal.la $(LIBMNL_LIBS) $(CHECK_LIBS) \
	-lpthread

check_PROGRAMS += tests/unit/test_msg tests/unit/test_parse
TESTS += tests/unit/test_msg tests/unit/test_parse

tests_unit_test_msg_SOURCES = tests/unit/test_msg.c \
	tests/unit/nlbuild.c tests/unit/nlbuild.h tests/unit/testq.h \
	tests/unit/txhook.h
tests_unit_test_msg_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_msg_LDADD = $(UNIT_TEST_LDADD)

tests_unit_test_parse_SOURCES = tests/unit/test_parse.c \
	tests/unit/nlbuild.c tests/unit/nlbuild.h tests/unit/testq.h \
	tests/unit/txhook.h
tests_unit_test_parse_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_parse_LDADD = $(UNIT_TEST_LDADD)

# The harness's own checks that tests rely on to fail (the expected
# counters of tests/integration/harness-expect.c); no kernel needed.
check_PROGRAMS += tests/unit/test_harness
TESTS += tests/unit/test_harness
tests_unit_test_harness_SOURCES = tests/unit/test_harness.c
tests_unit_test_harness_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_harness_LDADD = $(NFQBT_PUBLIC_LDADD)
