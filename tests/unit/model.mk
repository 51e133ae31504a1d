# SPDX-License-Identifier: LGPL-2.1-or-later
# The tests against the model of the kernel's queue (kmodel.c, which the
# fuzz oracle tests/fuzz/fuzz_datagram.c shares): the planner's exact
# plans and the transport's failed sends (seam: test_plan); the
# model-based property test of the whole verdict path (issue 9) and exact
# scenarios (test_model; NFQB_SEED, NFQB_CASES: see the file).
check_PROGRAMS += tests/unit/test_plan tests/unit/test_model
TESTS += tests/unit/test_plan tests/unit/test_model
tests_unit_test_plan_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_plan_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_model_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_model_LDADD = $(UNIT_TEST_LDADD)
