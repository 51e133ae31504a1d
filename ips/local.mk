# SPDX-License-Identifier: LGPL-2.1-or-later
# nfqb-ips (top-relative paths, += only): an IPS daemon on the worker pool
# (rules file, reload, upgrade in place, systemd's fd store), with its
# demo and benchmark. Installed in sbindir, where its unit expects it; the
# unit and a rules file are shipped as examples, not installed.
sbin_PROGRAMS += ips/nfqb-ips
ips_nfqb_ips_SOURCES = \
	ips/main.c \
	ips/nfqb-ips.h ips/daemon.c \
	ips/demo.h ips/demo.c \
	utils/nfqb-privdrop.c utils/nfqb-privdrop.h
ips_nfqb_ips_LDADD = lib/libnfq-batch.la -lpthread
dist_man_MANS += man/man8/nfqb-ips.8
EXTRA_DIST += ips/nfqb-ips.service ips/nfqb-ips.rules.example
