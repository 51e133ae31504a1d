# netdev egress: queue UDP at veth0's egress hook in namespace a; accept,
# drop, mark, batch verdict; exact outcome at the receiver in b. A second
# egress chain at a later priority counts what comes back and its mark.
. ./lib.sh
setup_veth
verdict_table a egress veth0
# family 5 (netdev), hook 1 (egress), payload starts with the Ethernet
# header, equal to NFQA_L2HDR
verdict_cases a -F 5 -k 1 -P 0800 -L -E
teardown
finish
