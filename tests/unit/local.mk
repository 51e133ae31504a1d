# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/unit: Check programs on crafted netlink messages, no kernel needed.
# They link the internal convenience library to reach internal symbols,
# and the test helper library (tests/integration/local.mk), whose
# nlbuild.c and kmodel.c are from here.

UNIT_TEST_CFLAGS = $(NFQBT_CFLAGS) $(NFQBT_INTERNAL_CFLAGS)
UNIT_TEST_LDADD = $(NFQBT_INTERNAL_LDADD)

# The byte-exact messages (test_msg), the parser and the receive path
# (test_parse); the harness's own checks that tests rely on to fail (the
# expected counters of tests/integration/harness-expect.c: test_harness).
check_PROGRAMS += tests/unit/test_msg tests/unit/test_parse \
	tests/unit/test_harness
TESTS += tests/unit/test_msg tests/unit/test_parse tests/unit/test_harness
tests_unit_test_msg_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_msg_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_parse_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_parse_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_harness_CFLAGS = $(NFQBT_CFLAGS)
tests_unit_test_harness_LDADD = $(NFQBT_PUBLIC_LDADD)

# The packet helpers (<libnfq-batch/packet.h>): headers, checksums, MSS
# clamping, on packets built byte by byte; nfqb_pkt_hdrs() on parsed
# messages and nfqb_verdict_payload() through a socketless queue.
check_PROGRAMS += tests/unit/test_hdrs
TESTS += tests/unit/test_hdrs
tests_unit_test_hdrs_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_hdrs_LDADD = $(UNIT_TEST_LDADD)

# A fixed workload of the data path for counting instructions per packet
# (valgrind --tool=callgrind tests/unit/perf_path N BURST; see the file);
# as a test, a short run that checks every packet was accepted.
check_PROGRAMS += tests/unit/perf_path
TESTS += tests/unit/perf_path
tests_unit_perf_path_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_perf_path_LDADD = $(UNIT_TEST_LDADD)
