# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel/local.mk - included from the top-level (non-recursive) Makefile.am.
#
# "make check-kernel" installs what it needs (kernel/deps.sh), builds the
# patched test kernel (kernel/build.sh; cached under $NFQB_KERNEL_CACHE,
# default /var/cache/nfqb-kernel, keyed by a hash of the source package,
# kernel/config, the patches and build.sh), boots it under qemu with 2
# CPUs and runs tests/kernel/t-*.sh in the guest (kernel/run-qemu.sh).
# Needs root for apt-get and, on first run, about 6 minutes of -j2 build;
# the guest suite takes about 14 minutes under TCG.
# NFQB_KERNEL_TESTS selects tests, e.g. NFQB_KERNEL_TESTS="t-10-ingress".
#
# tests/kernel/nfqb-netdev is the library's own guest test tool (public API,
# linked with this build's lib/libnfq-batch.la): check-kernel builds it and
# hands it to the harness in NFQB_GUEST_TOOL; run-qemu.sh copies it and the
# shared libraries ldd lists into the initramfs for t-15 and t-25.
# -no-install: libtool links the real executable in place (with a run path
# to lib/.libs) instead of a wrapper script, so ldd and cp just work.

kernel_patches = \
	kernel/patches/00-nf-0001-netfilter-nfnetlink_queue-unclone-the-skb-head-befor.patch \
	kernel/patches/00-nf-0002-netfilter-nfnetlink_queue-configure-a-new-queue-befo.patch \
	kernel/patches/00-nf-0003-netfilter-nfnetlink_queue-validate-the-protocol-of-N.patch \
	kernel/patches/00-nf-0004-netfilter-nfnetlink_queue-run-the-remaining-hooks-wi.patch \
	kernel/patches/00-nf-0005-netfilter-nfnetlink_queue-queue-nothing-to-an-unboun.patch \
	kernel/patches/00-nf-0006-netfilter-nfnetlink_queue-shorten-payloads-without-a.patch \
	kernel/patches/0000-cover-letter.patch \
	kernel/patches/0001-net-add-an-entry-point-to-resume-reception-after-the.patch \
	kernel/patches/0002-net-clear-nf_skip_egress-when-no-egress-hook-is-acti.patch \
	kernel/patches/0003-netfilter-nfnetlink_queue-never-hand-out-packet-id-0.patch \
	kernel/patches/0004-netfilter-nf_queue-queue-a-private-clone-of-a-shared.patch \
	kernel/patches/0005-netfilter-nfnetlink_queue-reinject-netdev-family-pac.patch \
	kernel/patches/0006-netfilter-nfnetlink_queue-hook-numbers-of-the-netdev.patch \
	kernel/patches/0007-netfilter-nfnetlink_queue-report-the-link-layer-head.patch \
	kernel/patches/0008-netfilter-nfnetlink_queue-keep-the-link-layer-header.patch \
	kernel/patches/0009-netfilter-nfnetlink_queue-verdict-rules-for-netdev-p.patch \
	kernel/patches/0010-netfilter-nf_queue-hash-netdev-family-packets-for-qu.patch \
	kernel/patches/0011-net-packet-resume-queued-packets-on-the-qdisc-bypass.patch \
	kernel/patches/0012-netfilter-nft_queue-allow-queueing-from-netdev-ingre.patch \
	kernel/patches/0013-netfilter-nft_queue-allow-queueing-from-inet-ingress.patch \
	kernel/patches/0014-selftests-netfilter-nf_queue-stop-on-SIGTERM-whereve.patch \
	kernel/patches/0015-selftests-netfilter-add-nft_queue_netdev.sh.patch \
	kernel/patches/0016-selftests-netfilter-nft_queue.sh-ARP-cut-short-by-a-.patch

# the series carried onto upstream (Linux 7.2.13), the form to post:
# kernel/check-upstream.sh checks that it applies
kernel_upstream_patches = \
	kernel/patches-upstream/00-nf-0000-cover-letter.patch \
	kernel/patches-upstream/00-nf-0001-netfilter-nfnetlink_queue-unclone-the-skb-head-befor.patch \
	kernel/patches-upstream/00-nf-0002-netfilter-nfnetlink_queue-configure-a-new-queue-befo.patch \
	kernel/patches-upstream/00-nf-0003-netfilter-nfnetlink_queue-validate-the-protocol-of-N.patch \
	kernel/patches-upstream/00-nf-0004-netfilter-nfnetlink_queue-run-the-remaining-hooks-wi.patch \
	kernel/patches-upstream/00-nf-0005-netfilter-nfnetlink_queue-queue-nothing-to-an-unboun.patch \
	kernel/patches-upstream/0000-cover-letter.patch \
	kernel/patches-upstream/0001-net-add-an-entry-point-to-resume-reception-after-the.patch \
	kernel/patches-upstream/0002-net-clear-nf_skip_egress-when-no-egress-hook-is-acti.patch \
	kernel/patches-upstream/0003-netfilter-nfnetlink_queue-never-hand-out-packet-id-0.patch \
	kernel/patches-upstream/0004-netfilter-nf_queue-queue-a-private-clone-of-a-shared.patch \
	kernel/patches-upstream/0005-netfilter-nfnetlink_queue-reinject-netdev-family-pac.patch \
	kernel/patches-upstream/0006-netfilter-nfnetlink_queue-hook-numbers-of-the-netdev.patch \
	kernel/patches-upstream/0007-netfilter-nfnetlink_queue-report-the-link-layer-head.patch \
	kernel/patches-upstream/0008-netfilter-nfnetlink_queue-keep-the-link-layer-header.patch \
	kernel/patches-upstream/0009-netfilter-nfnetlink_queue-accept-payload-rewrites-of.patch \
	kernel/patches-upstream/0010-netfilter-nfnetlink_queue-keep-the-EtherType-of-netd.patch \
	kernel/patches-upstream/0011-netfilter-nfnetlink_queue-accept-L2-header-and-VLAN-.patch \
	kernel/patches-upstream/0012-netfilter-nfnetlink_queue-derive-pkt_type-again-for-.patch \
	kernel/patches-upstream/0013-netfilter-nf_queue-hash-netdev-family-packets-for-qu.patch \
	kernel/patches-upstream/0014-net-packet-resume-queued-packets-on-the-qdisc-bypass.patch \
	kernel/patches-upstream/0015-netfilter-nft_queue-allow-queueing-from-netdev-ingre.patch \
	kernel/patches-upstream/0016-netfilter-nft_queue-allow-queueing-from-inet-ingress.patch \
	kernel/patches-upstream/0017-selftests-netfilter-nf_queue-stop-on-SIGTERM-whereve.patch \
	kernel/patches-upstream/0018-selftests-netfilter-add-nft_queue_netdev.sh.patch \
	kernel/patches-upstream/0019-selftests-netfilter-nft_queue_netdev.sh-verdicts-tha.patch \
	kernel/patches-upstream/BASE \
	kernel/patches-upstream/recipients-nf \
	kernel/patches-upstream/recipients-next

# test-only patches (fault injection points for guest tests), applied by
# build.sh after the series; never posted
kernel_test_patches = \
	kernel/test-patches/0001-TEST-ONLY-nfnetlink_queue-a-delay-between-queue-look.patch

check_PROGRAMS += tests/kernel/nfqb-netdev
tests_kernel_nfqb_netdev_SOURCES = tests/kernel/nfqb-netdev.c
tests_kernel_nfqb_netdev_LDADD = lib/libnfq-batch.la
tests_kernel_nfqb_netdev_LDFLAGS = -no-install

kernel_tests = \
	tests/kernel/nfqt.c \
	tests/kernel/lib.sh \
	tests/kernel/run.sh \
	tests/kernel/times \
	tests/kernel/t-00-inet-queue.sh \
	tests/kernel/t-10-ingress.sh \
	tests/kernel/t-15-lib-ingress.sh \
	tests/kernel/t-20-egress.sh \
	tests/kernel/t-25-lib-egress.sh \
	tests/kernel/t-30-arp.sh \
	tests/kernel/t-31-arp-egress-trim.sh \
	tests/kernel/t-32-bridge-arp-trim.sh \
	tests/kernel/t-35-vlan.sh \
	tests/kernel/t-36-vlan-tunnel.sh \
	tests/kernel/t-37-stacked.sh \
	tests/kernel/t-38-bridge-l2.sh \
	tests/kernel/t-39-hook-shift.sh \
	tests/kernel/t-40-monotonic.sh \
	tests/kernel/t-50-teardown.sh \
	tests/kernel/t-60-selftest.sh \
	tests/kernel/t-62-nfqueue-sigterm.sh \
	tests/kernel/t-61-kselftest-nft-queue.sh \
	tests/kernel/t-70-gso.sh \
	tests/kernel/t-71-context.sh \
	tests/kernel/t-72-fanout.sh \
	tests/kernel/t-73-inet-ingress.sh \
	tests/kernel/t-74-verdict.sh \
	tests/kernel/t-75-vlan-verdict.sh \
	tests/kernel/t-77-qdisc-bypass.sh \
	tests/kernel/t-78-bind-window.sh \
	tests/kernel/t-79-shared-skb.sh \
	tests/kernel/t-80-alloc-fail.sh \
	tests/kernel/t-81-rebind-ids.sh \
	tests/kernel/t-82-ct-verdict.sh

EXTRA_DIST += \
	kernel/README.md \
	kernel/local.mk \
	kernel/config \
	kernel/deps.sh \
	kernel/build.sh \
	kernel/run-qemu.sh \
	kernel/check.sh \
	kernel/build-each.sh \
	kernel/export-series.sh \
	kernel/series-at.sh \
	kernel/check-upstream.sh \
	kernel/upstream-source.sh \
	kernel/check-config-off.sh \
	kernel/build-each-objects.sh \
	$(kernel_patches) \
	$(kernel_upstream_patches) \
	$(kernel_test_patches) \
	$(kernel_tests)

check-kernel: tests/kernel/nfqb-netdev$(EXEEXT)
	NFQB_GUEST_TOOL=$(abs_builddir)/tests/kernel/nfqb-netdev$(EXEEXT) \
		$(SHELL) $(top_srcdir)/kernel/check.sh $(NFQB_KERNEL_TESTS)

.PHONY: check-kernel
