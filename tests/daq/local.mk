# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/daq: libdaq's daqtest drives the stock nfq module and our daq_nfqb
# on a real NFQUEUE in a network namespace (root).  Built and run only
# with the DAQ module (--with-daq); tests/daq/build-libdaq.sh builds the
# libdaq they need from its tarball (tests/run-all.sh does that in CI).

EXTRA_DIST += tests/daq/test-daq.sh tests/daq/build-libdaq.sh \
	tests/daq/find-tarball.sh tests/daq/test-contract.sh

if BUILD_DAQ_MODULE
check_PROGRAMS += tests/daq/daq-traffic tests/daq/daq-contract
tests_daq_daq_traffic_SOURCES = tests/daq/daq-traffic.c
# daq-contract drives the module through libdaq itself (libdaq.so of the
# prefix pkg-config found, by rpath); it exports the few libnfq-batch
# functions it interposes (netdev egress, emulated)
tests_daq_daq_contract_SOURCES = tests/daq/daq-contract.c
tests_daq_daq_contract_CFLAGS = $(AM_CFLAGS) $(LIBDAQ_CFLAGS)
tests_daq_daq_contract_LDADD = $(LIBDAQ_LIBS) -lpthread -ldl
tests_daq_daq_contract_LDFLAGS = -Wl,-rpath,$(DAQ_PREFIX)/lib \
	-Wl,--export-dynamic
TESTS += tests/daq/test-daq.sh tests/daq/test-contract.sh
# `make check` builds `all` (the module) first.
AM_TESTS_ENVIRONMENT += \
	NFQB_DAQTEST='$(DAQTEST)'; export NFQB_DAQTEST; \
	NFQB_DAQ_STOCK_DIR='$(DAQ_STOCK_MODULEDIR)'; export NFQB_DAQ_STOCK_DIR; \
	NFQB_DAQ_MODULE_DIR='$(abs_top_builddir)/daq/.libs'; \
	export NFQB_DAQ_MODULE_DIR; \
	NFQB_DAQ_TRAFFIC='$(abs_top_builddir)/tests/daq/daq-traffic'; \
	export NFQB_DAQ_TRAFFIC; \
	NFQB_DAQ_LIBDIR='$(abs_top_builddir)/lib/.libs'; export NFQB_DAQ_LIBDIR; \
	NFQB_DAQ_CONTRACT='$(abs_top_builddir)/tests/daq/daq-contract'; \
	export NFQB_DAQ_CONTRACT;
else
EXTRA_DIST += tests/daq/daq-traffic.c tests/daq/daq-contract.c
endif
