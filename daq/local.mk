# SPDX-License-Identifier: LGPL-2.1-or-later
# daq/: the libdaq 3 module daq_nfqb (its source is GPL-2.0, see
# daq/daq_nfqb.c), built with --with-daq when pkg-config finds libdaq.
# It links the shared libnfq-batch; libdaq loads it with dlopen() from its
# module directories (daqtest -m DIR, snort --daq-dir DIR).

EXTRA_DIST += daq/COPYING daq/README.md

if BUILD_DAQ_MODULE
daqmod_LTLIBRARIES = daq/daq_nfqb.la
daq_daq_nfqb_la_SOURCES = daq/daq_nfqb.c
daq_daq_nfqb_la_CFLAGS = $(AM_CFLAGS) $(LIBDAQ_CFLAGS) -fvisibility=hidden
daq_daq_nfqb_la_LDFLAGS = -module -avoid-version -shared -Wl,--no-undefined
daq_daq_nfqb_la_LIBADD = lib/libnfq-batch.la
dist_man_MANS += man/man8/daq_nfqb.8
else
EXTRA_DIST += daq/daq_nfqb.c man/man8/daq_nfqb.8
endif
