# SPDX-License-Identifier: LGPL-2.1-or-later
# Examples: small programs a user copies from. Built, not installed.
noinst_PROGRAMS += examples/nfqb-example
examples_nfqb_example_SOURCES = examples/nfqb-example.c
examples_nfqb_example_LDADD = lib/libnfq-batch.la -lpthread
