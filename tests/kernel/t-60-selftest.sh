# The series' own kselftest (tools/testing/selftests/net/netfilter/
# nft_queue_netdev.sh, lib.sh style: setup_ns, busywait), run with bash as
# kselftest would: UDP and TCP, IPv4 and IPv6, with and without GSO, at
# netdev ingress and egress and from an inet ingress chain; hash fanout,
# bypass without listener, device deletion with a packet queued.
d=/selftest/net/netfilter
if [ ! -x $d/nf_queue ] || [ ! -e $d/nft_queue_netdev.sh ]; then
	echo "  FAIL: the series' selftest is not in this initramfs"
	exit 1
fi
cd $d && KSFT_MACHINE_SLOW=yes /bin/bash ./nft_queue_netdev.sh
