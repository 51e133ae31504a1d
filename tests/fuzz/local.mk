# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/fuzz: libFuzzer targets. Not part of `make check` (they need clang's
# -fsanitize=fuzzer): tests/fuzz/run.sh builds them from the sources itself;
# tests/run-all.sh runs it, and so does `make fuzz` (FUZZ_SECONDS each).

FUZZ_SECONDS = 30

EXTRA_DIST += \
	tests/fuzz/README.md \
	tests/fuzz/run.sh \
	tests/fuzz/fuzz.h \
	tests/fuzz/getters.c \
	tests/fuzz/fuzz_parse.c \
	tests/fuzz/fuzz_datagram.c \
	tests/fuzz/fuzz_hdrs.c \
	tests/fuzz/gen-corpus.c \
	tests/fuzz/regress

.PHONY: fuzz
fuzz:
	NFQB_FUZZ_DIR=$(abs_top_builddir)/build-fuzz \
		$(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS)
