# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/snort: Snort 3 itself inline on daq_nfqb and on the stock nfq
# module (root, network namespaces). Built and run with the DAQ module
# (--with-daq) against the libdaq of a prefix that tests/snort/build-snort.sh
# made (libdaq and Snort together, cached outside the clone); without a
# Snort there, test-snort.sh skips (NFQB_SNORT_REQUIRED=1: fails).
# tests/snort/bench-snort.sh measures both modules side by side.

EXTRA_DIST += tests/snort/test-snort.sh tests/snort/build-snort.sh \
	tests/snort/lib.sh \
	tests/snort/bench-snort.sh

if BUILD_DAQ_MODULE
check_PROGRAMS += tests/snort/snort-traffic
tests_snort_snort_traffic_SOURCES = tests/snort/snort-traffic.c
TESTS += tests/snort/test-snort.sh
AM_TESTS_ENVIRONMENT += \
	NFQB_SNORT_PREFIX=$${NFQB_SNORT_PREFIX:-'$(DAQ_PREFIX)'}; \
	export NFQB_SNORT_PREFIX; \
	NFQB_SNORT_TRAFFIC='$(abs_top_builddir)/tests/snort/snort-traffic'; \
	export NFQB_SNORT_TRAFFIC;
else
EXTRA_DIST += tests/snort/snort-traffic.c
endif
