# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/unit: Check programs on crafted netlink messages, no kernel needed.
# They link the internal convenience library to reach internal symbols.

UNIT_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMNL_CFLAGS) \
	$(NFQBT_SEAM_CFLAGS)
UNIT_TEST_LDADD = $(NFQBT_SEAM_LDADD) $(LIBMNL_LIBS) $(CHECK_LIBS) \
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
