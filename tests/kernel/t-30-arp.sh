# ARP at netdev ingress: queued (hw_protocol 0x0806, with L2 header);
# dropping it keeps a's neighbour entry for b unresolved, accepting it
# lets it resolve.
. ./lib.sh
setup_veth
queue_rule b ingress veth1 "ether type arp" 1
after_chain b ingress veth1 "ether type arp counter"
arp_case() {
	local desc=$1 verdict=$2 want_ping=$3 lpid lrc p seen state
	A ip neigh flush dev veth0
	B ip neigh flush dev veth1
	# $IP, not the ip function: $! must be the listener itself
	rm -f /tmp/l.out
	"$IP" netns exec b nfqt listen -q 1 -n 0 -t 8000 -v "$verdict" -F 5 -k 0 -P 0806 -L > /tmp/l.out 2>&1 &
	lpid=$!
	wait_line /tmp/l.out listening
	if A ping -c 1 -W 6 10.0.0.2 > /tmp/ping.out 2>&1; then p=ok; else p=failed; fi
	# the ping is over (answered, or given up on): stop the listener
	# (SIGTERM: summary and status, as after its idle timeout)
	kill $lpid 2>/dev/null
	wait $lpid
	lrc=$?
	sed 's/^/    /' /tmp/l.out
	check "$desc: listener status" "$lrc" 0
	seen=$(field /tmp/l.out seen)
	[ "${seen:-0}" -ge 1 ] && log "ok: $desc: $seen ARP packets queued" ||
		fail "$desc: no ARP packet queued"
	check "$desc: ping" "$p" "$want_ping"
	state=$(A ip neigh show 10.0.0.2 dev veth0 | awk '{print $NF}')
	log "$desc: neighbour state '$state'"
	case $want_ping:$state in
	ok:REACHABLE|ok:STALE|ok:DELAY|ok:PROBE) log "ok: $desc: neighbour resolved" ;;
	failed:FAILED|failed:INCOMPLETE|failed:) log "ok: $desc: neighbour unresolved" ;;
	*) fail "$desc: neighbour state '$state'" ;;
	esac
}
arp_case "ARP drop" drop failed
before=$(counters b netdev t after)
check "ARP drop: nothing past the queue" "$before" 0
arp_case "ARP accept" accept ok
after=$(counters b netdev t after)
[ "$after" -ge 1 ] && log "ok: ARP accept: $after past the queue" ||
	fail "ARP accept: nothing past the queue"
teardown
finish
