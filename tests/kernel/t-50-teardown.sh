# Packets queued at netdev ingress/egress when the listener is killed, the
# device is deleted, or the table is deleted: flushed, no warning, and the
# device's references are all returned (ip link del does not hang).
. ./lib.sh

# setup: fresh namespaces, UDP to port 9000 queued to queue 0 at b's
# ingress, to port 9100 at a's egress
setup() {
	setup_veth
	queue_rule b ingress veth1 "udp dport 9000" 0
	queue_rule a egress veth0 "udp dport 9100" 0
}

# hold NS PORT: start a holding listener on queue 0 in NS, send 5
# datagrams to PORT, wait until all 5 are queued
hold() {
	# $IP, not the ip function: $! must be the listener itself
	rm -f /tmp/l.out
	"$IP" netns exec "$1" nfqt listen -q 0 -n 5 -t 30000 -H > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening
	A nfqt send 10.0.0.2 "$2" 5 0
	wait_line /tmp/l.out held 300
	check "5 packets queued in $1" "$(queue_total "$1" 0)" 5
}

# unhold: kill the holding listener
unhold() {
	kill -9 $lpid
	wait $lpid 2>/dev/null
}

# del_veth1: veth deleted, in a bounded time
del_veth1() {
	if timeout 30 $IP netns exec b $IP link del veth1; then log "ok: veth deleted"; else fail "ip link del veth1 hung or failed"; fi
}

# held_dev_case NS PORT DEV WHERE: DEV (where the rule for PORT queues)
# deleted with 5 packets held in NS: no hang, the queue flushed
held_dev_case() {
	setup
	hold "$1" "$2"
	if timeout 30 $IP netns exec "$1" $IP link del "$3"; then
		log "ok: $4 device deleted with packets queued"
	else
		fail "ip link del $3 with packets queued hung or failed"
	fi
	check "$4 device deleted: queue flushed" "$(queue_total "$1" 0)" 0
	unhold
	teardown
}

setup
hold b 9000
unhold
sleep 1
check "listener killed: queue gone" "$(queue_total b 0)" ""
hold a 9100
unhold
sleep 1
check "egress listener killed: queue gone" "$(queue_total a 0)" ""
del_veth1
teardown

held_dev_case b 9000 veth1 ingress
held_dev_case a 9100 veth0 egress

setup
hold b 9000
B nft delete table netdev t
sleep 0.5
check "ingress table deleted: queue flushed" "$(queue_total b 0)" 0
unhold
hold a 9100
A nft delete table netdev t
sleep 0.5
check "egress table deleted: queue flushed" "$(queue_total a 0)" 0
unhold
del_veth1
teardown
# namespaces with netdev hooks are gone; let cleanup_net run
sleep 2
finish
