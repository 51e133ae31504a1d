# netdev ingress: queue UDP at veth1's ingress hook in namespace b;
# accept, drop, mark, batch verdict; exact outcome at the receiver. A
# second ingress chain at a later priority counts what comes back from
# userspace and whether it carries the mark.
. ./lib.sh
setup_veth
verdict_table b ingress veth1
# family 5 (netdev), hook 0 (ingress), L2 header, IPv4 at payload start
verdict_cases b -F 5 -k 0 -P 0800 -L -I
teardown
finish
