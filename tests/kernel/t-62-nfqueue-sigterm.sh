# v3 defect 7: the selftest's nf_queue -c stops on SIGTERM and prints its
# counts (the selftest stops its listeners that way). v2's handler did
# nothing: a SIGTERM that arrived outside recv() (while nf_queue slept
# with -d before a verdict, or handled a packet) was lost, and nf_queue
# ran on until its idle timeout. Here: a packet is held by nf_queue -d
# 10000 (10 s before its verdict), SIGTERM comes during that sleep, and
# nf_queue must end within 60 s of it, not after its 300 s idle timeout.
. ./lib.sh
d=/selftest/net/netfilter
[ -x $d/nf_queue ] || { fail "the series' nf_queue is not in this initramfs"; finish; }
setup_veth
queue_rule b ingress veth1 "udp dport 9000" 0
now() { cut -d' ' -f1 /proc/uptime | cut -d. -f1; }
"$IP" netns exec b $d/nf_queue -c -q 0 -d 10000 -t 300 > /tmp/nfq.out 2>&1 &
pid=$!
n=0
until B cat /proc/net/netfilter/nfnetlink_queue | grep -q '^ *0 '; do
	n=$((n + 1))
	[ $n -gt 300 ] && { fail "nf_queue did not bind queue 0 in 30 s"; kill -9 $pid; finish; }
	sleep 0.1
done
A nfqt send 10.0.0.2 9000 1 0
n=0
until [ "$(queue_total b 0)" = 1 ]; do
	n=$((n + 1))
	[ $n -gt 300 ] && { fail "the datagram was not queued in 30 s"; kill -9 $pid; finish; }
	sleep 0.1
done
# nf_queue is in its 10 s sleep now
t0=$(now)
kill -TERM $pid
while kill -0 $pid 2>/dev/null && [ $(($(now) - t0)) -lt 60 ]; do
	sleep 0.5
done
if kill -0 $pid 2>/dev/null; then
	fail "nf_queue still running 60 s after SIGTERM"
	kill -9 $pid
	wait $pid
else
	wait $pid
	check "nf_queue status" "$?" 0
	log "stopped $(($(now) - t0)) s after SIGTERM"
fi
sed 's/^/    /' /tmp/nfq.out
check "nf_queue printed its count" "$(grep -c '^hook 0 packets 0*1$' /tmp/nfq.out)" 1
teardown
finish
