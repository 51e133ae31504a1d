# SPDX-License-Identifier: LGPL-2.1-or-later
# Examples: small programs a user copies from. Built, not installed.
noinst_PROGRAMS += examples/nfqb-example
examples_nfqb_example_SOURCES = examples/nfqb-example.c
examples_nfqb_example_LDADD = lib/libnfq-batch.la -lpthread

# A small IPS on the worker pool (examples/ips).
noinst_PROGRAMS += examples/ips/nfqb-ips
examples_ips_nfqb_ips_SOURCES = examples/ips/nfqb-ips.c \
	utils/nfqb-privdrop.c utils/nfqb-privdrop.h
examples_ips_nfqb_ips_LDADD = lib/libnfq-batch.la -lpthread
EXTRA_DIST += examples/ips/rules.example examples/ips/nfqb-ips.service \
	examples/ips/nfqb-ips.8
