# Issue 43 item 1: packet ids across a rebind. The ids of a binding start
# at 1, so a new binding's first packet has an id that a late packet of
# the binding before it may carry too. A CPU that looked the queue up
# (RCU) just before the unbind went on to give the packet an id of the old
# instance and to unicast it to the same portid after the program had
# bound again: the program, taking it for the new binding's, gave its
# verdict, and nfqnl_recv_verdict() applied it to the new binding's
# packet of the same id. A verdict applied to another packet.
#
# The window is forced with the test-only patch of kernel/test-patches:
# test_enqueue_delay_ms holds the next packet 3 s between its queue's
# lookup and the rest of the enqueue. In a, "nfqt rebind" binds queue 0;
# a datagram to port 9 (X) is held in the window; the program unbinds,
# binds again and sends a datagram to port 10 (Y, the new binding's, id
# 1), which it holds; any other packet message (X's) it accepts with mark
# 0x43. Before the fix X's message (id 1 of the old instance) arrived
# after the new bind and its verdict took Y: Y went on with the mark and
# was delivered, X was dropped with the old instance. Now X finds its
# queue gone (bypass: accepted, unmarked, delivered) and Y stays held.
. ./lib.sh
knob=/sys/module/nfnetlink_queue/parameters/test_enqueue_delay_ms
if [ ! -w "$knob" ]; then
	fail "no $knob: the kernel lacks kernel/test-patches"
	finish
fi
setup_veth
A nft -f - <<NFT || { fail "nft refuses the ruleset"; finish; }
table inet t {
	chain q {
		type filter hook output priority 0;
		udp dport { 9, 10 } queue num 0 bypass
	}
	chain after {
		type filter hook output priority 10;
		udp dport 9 counter
		udp dport 10 meta mark 0x43 counter
		udp dport 10 counter
	}
}
NFT
rm -f /tmp/rb.out /tmp/r9.out /tmp/r10.out /tmp/x.out
"$IP" netns exec b nfqt recv 9 30000 > /tmp/r9.out 2>&1 &
r9=$!
"$IP" netns exec b nfqt recv 10 30000 > /tmp/r10.out 2>&1 &
r10=$!
"$IP" netns exec a nfqt rebind 0 10.0.0.2 10 0x43 > /tmp/rb.out 2>&1 &
rb=$!
wait_line /tmp/r9.out receiving && wait_line /tmp/r10.out receiving &&
	wait_line /tmp/rb.out 'bound queue' || { kill $r9 $r10 $rb; finish; }
held=$(dmesg | grep -c 'test: queue 0 looked up')
echo 3000 > "$knob"
# X: the packet held between the lookup and the enqueue
"$IP" netns exec a nfqt send 10.0.0.2 9 1 0 > /tmp/x.out 2>&1 &
xs=$!
n=100
while [ "$(dmesg | grep -c 'test: queue 0 looked up')" = "$held" ] && [ $n -gt 0 ]; do
	sleep 0.05
	n=$((n - 1))
done
if [ $n = 0 ]; then
	fail "X never reached the delay after the queue lookup"
	kill $r9 $r10 $rb $xs
	finish
fi
log "X is held between the queue lookup and the enqueue"
# unbind, bind again, send Y, while X waits
kill -USR1 $rb
wait_line /tmp/rb.out 'sent the new' || { kill $r9 $r10 $rb $xs; finish; }
if dmesg | grep -q 'test: queue 0 enqueue goes on'; then
	fail "X went on before the rebind was done: the window was missed"
fi
wait $xs
# X's message, if any, and the verdict given for it
sleep 2
kill -TERM $rb
wait $rb
check "listener status" "$?" 0
sed 's/^/    /' /tmp/rb.out
dmesg | grep 'test: queue 0' | sed 's/^/    dmesg: /'
kill -TERM $r9 $r10
wait $r9 $r10
got9=$(sed -n 's/^received //p' /tmp/r9.out)
got10=$(sed -n 's/^received //p' /tmp/r10.out)
set -- $(counters a inet t after)
log "after chain: dport 9: ${1:-?}, dport 10 with mark 0x43: ${2:-?}, dport 10: ${3:-?}"
old=$(grep -c 'after the new bind' /tmp/rb.out)
check "messages of the first binding read after the new bind" "$old" 0
check "the new binding's packet (Y) queued to the program" \
	"$(grep -c "dport 10 (the new binding's packet)" /tmp/rb.out)" 1
check "the new binding's packet went on with the verdict given for an old id" "${2:-?}" 0
check "Y delivered (it is held, then dropped at exit)" "${got10:-?}" 0
check "X delivered (its queue was gone: bypass)" "${got9:-?}" 1
teardown
finish
