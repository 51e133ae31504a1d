# The series' own kselftest (tools/testing/selftests/net/netfilter/
# nft_queue_netdev.sh, lib.sh style: setup_ns, busywait), run with bash as
# kselftest would: UDP and TCP, IPv4 and IPv6, with and without GSO, at
# netdev ingress and egress and from an inet ingress chain; hash fanout,
# bypass without listener, device deletion with a packet queued.
#
# Adaptation to this guest (TCG, on a machine that may be slow or loaded),
# applied to a copy: nf_queue's idle timeout for KSFT_MACHINE_SLOW goes
# from 15 s to 60 s, and lib.sh's busywait from 20 s to 60 s (WAIT_TIMEOUT).
# Starting a process in a namespace took seconds in a guest on a loaded
# host; nf_queue then gave up before the first datagram came, and every
# case failed ("0 of 5 datagrams delivered, 0 queued"). A passing case
# waits no longer than before: the waits end when their condition holds.
. ./lib.sh
selftest_copy nft_queue_netdev.sh nft_queue_netdev_guest.sh \
	-e 's/^\[ "\$KSFT_MACHINE_SLOW" = "yes" \] && timeout=15$/[ "$KSFT_MACHINE_SLOW" = "yes" ] \&\& timeout=60/'
if ! grep -q '^\[ "$KSFT_MACHINE_SLOW" = "yes" \] && timeout=60$' nft_queue_netdev_guest.sh; then
	echo "  FAIL: nft_queue_netdev.sh changed: the adaptation does not apply"
	exit 1
fi
WAIT_TIMEOUT=60 KSFT_MACHINE_SLOW=yes /bin/bash ./nft_queue_netdev_guest.sh
