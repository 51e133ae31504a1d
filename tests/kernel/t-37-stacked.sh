# Queueing on devices that are not Ethernet or sit on another device:
# ipip and gre (no link layer header), macvlan and vxlan (Ethernet on a
# lower device), a bond, and a port of a VRF. At the ingress hook of the
# receiving device and the egress hook of the sending one: every packet
# queued as netdev family with the right hook and protocol, accepted,
# and delivered exactly once.
. ./lib.sh
setup_veth
# a second and a third pair for the bond and the VRF
ip link add veth2 netns a type veth peer name veth3 netns b || exit 2
ip link add veth4 netns a type veth peer name veth5 netns b || exit 2

A ip link add ipip0 type ipip local 10.0.0.1 remote 10.0.0.2
B ip link add ipip0 type ipip local 10.0.0.2 remote 10.0.0.1
A ip link add gre1 type gre local 10.0.0.1 remote 10.0.0.2
B ip link add gre1 type gre local 10.0.0.2 remote 10.0.0.1
A ip link add mv0 link veth0 type macvlan mode bridge
B ip link add mv0 link veth1 type macvlan mode bridge
A ip link add vx0 type vxlan id 42 remote 10.0.0.2 dstport 4789 dev veth0
B ip link add vx0 type vxlan id 42 remote 10.0.0.1 dstport 4789 dev veth1
A ip link add bond0 type bond mode active-backup
A ip link set veth2 master bond0
B ip link add vrf0 type vrf table 10
B ip link set veth5 master vrf0
B sysctl -qw net.ipv4.udp_l3mdev_accept=1
# only the device that has an address answers ARP for it: otherwise veth1
# answers for mv0's address and a sends to veth1's MAC (not macvlan's)
A sysctl -qw net.ipv4.conf.all.arp_ignore=1
B sysctl -qw net.ipv4.conf.all.arp_ignore=1
n=1
for pair in ipip0:ipip0 gre1:gre1 mv0:mv0 vx0:vx0 bond0:veth3 veth4:veth5; do
	A ip addr add 10.1.$n.1/24 dev ${pair%:*}
	B ip addr add 10.1.$n.2/24 dev ${pair#*:}
	n=$((n + 1))
done
for d in ipip0 gre1 mv0 vx0 veth2 bond0 veth4; do A ip link set $d up; done
for d in ipip0 gre1 mv0 vx0 veth3 vrf0 veth5; do B ip link set $d up; done
sleep 1

# stack_case DESC NS HOOK DEV DST [listener args...]: a chain of table
# netdev s in NS at HOOK of DEV queues UDP to port 9000; 10 datagrams from
# a to DST:9000, the listener in NS, the receiver in b
stack_case() {
	local desc=$1 ns=$2 hook=$3 dev=$4 dst=$5 rpid lpid lrc
	shift 5
	ip netns exec "$ns" nft -f - <<NFT || { fail "$desc: nft refuses the queue rule"; return; }
table netdev s {
	chain q {
		type filter hook $hook device "$dev" priority 0;
		udp dport 9000 queue num 0
	}
}
NFT
	rm -f /tmp/recv.out /tmp/l.out
	"$IP" netns exec b nfqt recv 9000 120000 10 > /tmp/recv.out &
	rpid=$!
	"$IP" netns exec "$ns" nfqt listen -t 120000 -q 0 -n 10 -F 5 "$@" > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening && wait_line /tmp/recv.out receiving
	A nfqt send "$dst" 9000 10 0
	wait $lpid
	lrc=$?
	wait $rpid
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status" "$lrc" 0
	check "$desc: datagrams received" \
		"$(sed -n 's/^received //p' /tmp/recv.out)" 10
	ip netns exec "$ns" nft delete table netdev s
}
# hook 0 ingress, 1 egress; -P: hw_protocol; -I: payload at the network
# header (no link layer header on ipip and gre, at either hook)
stack_case "ipip ingress" b ingress ipip0 10.1.1.2 -k 0 -P 0800 -I
stack_case "ipip egress" a egress ipip0 10.1.1.2 -k 1 -P 0800 -I
stack_case "gre ingress" b ingress gre1 10.1.2.2 -k 0 -P 0800 -I
stack_case "gre egress" a egress gre1 10.1.2.2 -k 1 -P 0800 -I
# Ethernet upper devices: the L2 header is reported, at egress the
# payload starts with it
stack_case "macvlan ingress" b ingress mv0 10.1.3.2 -k 0 -P 0800 -L -I
stack_case "macvlan egress" a egress mv0 10.1.3.2 -k 1 -P 0800 -L -E
stack_case "vxlan ingress" b ingress vx0 10.1.4.2 -k 0 -P 0800 -L -I
stack_case "vxlan egress" a egress vx0 10.1.4.2 -k 1 -P 0800 -L -E
stack_case "bond egress" a egress bond0 10.1.5.2 -k 1 -P 0800 -L -E
stack_case "bond port egress" a egress veth2 10.1.5.2 -k 1 -P 0800 -L -E
stack_case "VRF port ingress" b ingress veth5 10.1.6.2 -k 0 -P 0800 -L -I
teardown
finish
