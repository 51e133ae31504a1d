# SPDX-License-Identifier: LGPL-2.1-or-later
# Installed tools: the kernel's queue statistics and a verdict CLI (the
# IPS daemon, nfqb-ips, is in ips/).
bin_PROGRAMS += utils/nfqb-stat utils/nfqb-verdict
utils_nfqb_stat_SOURCES = utils/nfqb-stat.c
utils_nfqb_stat_LDADD = lib/libnfq-batch.la
utils_nfqb_verdict_SOURCES = utils/nfqb-verdict.c utils/nfqb-privdrop.c \
	utils/nfqb-privdrop.h
utils_nfqb_verdict_LDADD = lib/libnfq-batch.la
dist_man_MANS += man/man8/nfqb-stat.8 man/man8/nfqb-verdict.8
