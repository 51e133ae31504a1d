# SPDX-License-Identifier: LGPL-2.1-or-later
# The tests against the model of the kernel's queue (kmodel.c, which the
# fuzz oracle tests/fuzz/fuzz_datagram.c shares).

# The planner's exact plans, and the transport's failed sends (seam).
check_PROGRAMS += tests/unit/test_plan
TESTS += tests/unit/test_plan
tests_unit_test_plan_SOURCES = tests/unit/test_plan.c tests/unit/nlbuild.c \
	tests/unit/nlbuild.h tests/unit/kmodel.c tests/unit/kmodel.h \
	tests/unit/testq.h
tests_unit_test_plan_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(LIBMNL_CFLAGS) $(NFQBT_SEAM_CFLAGS)
tests_unit_test_plan_LDADD = $(NFQBT_SEAM_LDADD) $(LIBMNL_LIBS) \
	$(CHECK_LIBS) -lpthread

# The model-based property test of the whole verdict path (issue 9), and
# exact scenarios. NFQB_SEED, NFQB_CASES: see the file.
check_PROGRAMS += tests/unit/test_model
TESTS += tests/unit/test_model
tests_unit_test_model_SOURCES = tests/unit/test_model.c \
	tests/unit/nlbuild.c tests/unit/nlbuild.h tests/unit/kmodel.c \
	tests/unit/kmodel.h tests/unit/testq.h
tests_unit_test_model_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(LIBMNL_CFLAGS) $(NFQBT_SEAM_CFLAGS)
tests_unit_test_model_LDADD = $(NFQBT_SEAM_LDADD) $(LIBMNL_LIBS) \
	$(CHECK_LIBS) -lpthread
