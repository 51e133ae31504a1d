# The kernel tree's own nfqueue selftest (tools/testing/selftests/net/
# netfilter/nft_queue.sh): regressions of the inet and bridge paths. Its
# VRF case skips (no CONFIG_NET_VRF in the test kernel). Status 4 is
# kselftest's "skip" (a missing tool).
d=/selftest/net/netfilter
if [ ! -x $d/nf_queue ] || [ ! -e $d/nft_queue.sh ]; then
	echo "  FAIL: the kernel's nft_queue.sh is not in this initramfs"
	exit 1
fi
cd $d && KSFT_MACHINE_SLOW=yes /bin/bash ./nft_queue.sh
rc=$?
[ $rc = 4 ] && exit 77
exit $rc
