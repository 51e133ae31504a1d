# Packets queued at netdev ingress/egress when the listener is killed, the
# device is deleted, or the table is deleted: flushed, no warning, and the
# device's references are all returned (ip link del does not hang).
. ./lib.sh

setup_tables() {
	B nft -f - <<NFT || { fail "nft refuses queue at netdev ingress"; finish; }
table netdev t {
	chain q {
		type filter hook ingress device "veth1" priority 0;
		udp dport 9000 queue num 0
	}
}
NFT
	A nft -f - <<NFT || { fail "nft refuses queue at netdev egress"; finish; }
table netdev t {
	chain q {
		type filter hook egress device "veth0" priority 0;
		udp dport 9100 queue num 0
	}
}
NFT
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

setup_veth
setup_tables
hold b 9000
kill -9 $lpid
wait $lpid 2>/dev/null
sleep 1
check "listener killed: queue gone" "$(queue_total b 0)" ""
hold a 9100
kill -9 $lpid
wait $lpid 2>/dev/null
sleep 1
check "egress listener killed: queue gone" "$(queue_total a 0)" ""
if timeout 30 $IP netns exec b $IP link del veth1; then log "ok: veth deleted"; else fail "ip link del veth1 hung or failed"; fi
teardown

setup_veth
setup_tables
hold b 9000
if timeout 30 $IP netns exec b $IP link del veth1; then
	log "ok: ingress device deleted with packets queued"
else
	fail "ip link del veth1 with packets queued hung or failed"
fi
check "ingress device deleted: queue flushed" "$(queue_total b 0)" 0
kill -9 $lpid
wait $lpid 2>/dev/null
teardown

setup_veth
setup_tables
hold a 9100
if timeout 30 $IP netns exec a $IP link del veth0; then
	log "ok: egress device deleted with packets queued"
else
	fail "ip link del veth0 with packets queued hung or failed"
fi
check "egress device deleted: queue flushed" "$(queue_total a 0)" 0
kill -9 $lpid
wait $lpid 2>/dev/null
teardown

setup_veth
setup_tables
hold b 9000
B nft delete table netdev t
sleep 0.5
check "ingress table deleted: queue flushed" "$(queue_total b 0)" 0
kill -9 $lpid
wait $lpid 2>/dev/null
hold a 9100
A nft delete table netdev t
sleep 0.5
check "egress table deleted: queue flushed" "$(queue_total a 0)" 0
kill -9 $lpid
wait $lpid 2>/dev/null
if timeout 30 $IP netns exec b $IP link del veth1; then log "ok: veth deleted"; else fail "ip link del veth1 hung or failed"; fi
teardown
# namespaces with netdev hooks are gone; let cleanup_net run
sleep 2
finish
