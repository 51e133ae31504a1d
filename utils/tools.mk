# SPDX-License-Identifier: LGPL-2.1-or-later
# Installed tools: the kernel's queue statistics, a verdict CLI, an IPS.
bin_PROGRAMS += utils/nfqb-stat utils/nfqb-verdict
utils_nfqb_stat_SOURCES = utils/nfqb-stat.c
utils_nfqb_stat_LDADD = lib/libnfq-batch.la
utils_nfqb_verdict_SOURCES = utils/nfqb-verdict.c utils/nfqb-privdrop.c \
	utils/nfqb-privdrop.h
utils_nfqb_verdict_LDADD = lib/libnfq-batch.la
dist_man_MANS += man/man8/nfqb-stat.8 man/man8/nfqb-verdict.8

# nfqb-ips: an IPS daemon on the worker pool (rules file, reload, upgrade in
# place, systemd's fd store). Installed in sbindir, where its unit expects
# it; the unit and a rules file are shipped as examples, not installed.
sbin_PROGRAMS += utils/nfqb-ips
utils_nfqb_ips_SOURCES = utils/nfqb-ips.c utils/nfqb-privdrop.c \
	utils/nfqb-privdrop.h
utils_nfqb_ips_LDADD = lib/libnfq-batch.la -lpthread
dist_man_MANS += man/man8/nfqb-ips.8
EXTRA_DIST += utils/nfqb-ips.service utils/nfqb-ips.rules.example
