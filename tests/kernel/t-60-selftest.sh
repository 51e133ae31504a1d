# The selftest shipped in the patch series
# (tools/testing/selftests/netfilter/nfqueue_netdev.sh), run with bash as
# kselftest would: load from both CPUs with batch verdicts and a mark at
# netdev ingress and egress, device deletion with packets queued.
if [ ! -x /selftest/nfqueue_netdev ]; then
	echo "  SKIP: the series' selftest is not in this initramfs"
	exit 0
fi
cd /selftest && /bin/bash ./nfqueue_netdev.sh
