// SPDX-License-Identifier: LGPL-2.1-or-later

package nfqb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libnfq-batch/libnfq-batch/go/internal/nstest"
	"github.com/libnfq-batch/libnfq-batch/go/nfqb"
)

const queueNum = 7

// setup: a namespace, UDP sockets on port, and port's packets (OUTPUT)
// queued to queueNum; extra rules go before the NFQUEUE one.
func setup(t testing.TB, port int, ruleOpts string, before ...string) (*nstest.NS, *nfqb.Queue, *nstest.Counter, func(n, pps int, kind func(int) byte)) {
	ns := nstest.New(t)
	for _, r := range before {
		ns.Iptables(r)
	}
	ns.Iptables(fmt.Sprintf("-A OUTPUT -o lo -p udp --dport %d -j NFQUEUE --queue-num %d %s", port, queueNum, ruleOpts))
	rx, tx := ns.UDP(port)
	q, err := nfqb.Open(&nfqb.Config{Queue: queueNum, NetNS: ns.Fd})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	send := func(n, pps int, kind func(int) byte) {
		if err := nstest.Send(tx, n, 64, pps, kind); err != nil {
			t.Errorf("send: %v", err)
		}
	}
	return ns, q, nstest.Count(rx), send
}

func run(t testing.TB, q *nfqb.Queue, fn func(*nfqb.Batch)) (cancel func() error) {
	ctx, stop := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- q.Run(ctx, fn, func(err error) bool { t.Errorf("run: %v", err); return false }) }()
	return func() error {
		stop()
		return <-errc
	}
}

func kindOf(p *nfqb.Packet) byte {
	d := nstest.UDPData(p.Payload)
	if len(d) == 0 {
		return 0
	}
	return d[0]
}

// Accept and drop, decided in the batch.
func TestAcceptDrop(t *testing.T) {
	_, q, cnt, send := setup(t, 5001, "")
	var seen int64
	stop := run(t, q, func(b *nfqb.Batch) {
		for i := range b.Packets {
			atomic.AddInt64(&seen, 1)
			if kindOf(&b.Packets[i]) == 'd' {
				b.Drop(i)
			} else {
				b.Accept(i)
			}
		}
	})
	send(200, 0, func(i int) byte {
		if i%4 == 0 {
			return 'd'
		}
		return 'a'
	})
	got := cnt.WaitFor(150, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, seen := cnt.N(), atomic.LoadInt64(&seen); got != 150 || seen != 200 {
		t.Fatalf("received %d (want 150), queued %d (want 200)", got, seen)
	}
	_ = got
	st, err := q.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Dropped != 50 || st.Accepted != 150 || st.Outstanding != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// The packet mark: only marked packets pass INPUT.
func TestMark(t *testing.T) {
	_, q, cnt, send := setup(t, 5002, "",
		"-A INPUT -p udp --dport 5002 -m mark --mark 0x7 -j ACCEPT",
		"-A INPUT -p udp --dport 5002 -j DROP")
	stop := run(t, q, func(b *nfqb.Batch) {
		for i := range b.Packets {
			if kindOf(&b.Packets[i]) == 'm' {
				b.VerdictMark(i, nfqb.Accept, 7)
			} else {
				b.Accept(i)
			}
		}
	})
	send(100, 0, func(i int) byte {
		if i%2 == 0 {
			return 'm'
		}
		return 'a'
	})
	cnt.WaitFor(50, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := cnt.N(); n != 50 {
		t.Fatalf("received %d marked packets, want 50", n)
	}
}

// Verdicts from other goroutines: one by one (Verdict, VerdictMark) and
// many in one call (Decide); the payload is read before the verdict.
func TestOtherGoroutines(t *testing.T) {
	_, q, cnt, send := setup(t, 5003, "")
	type item struct {
		h    nfqb.Handle
		kind byte
	}
	ch := make(chan item, 4096)
	stop := run(t, q, func(b *nfqb.Batch) {
		for i := range b.Packets {
			ch <- item{b.Packets[i].Handle, kindOf(&b.Packets[i])}
		}
	})
	var wg sync.WaitGroup
	var failed int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var pend []nfqb.Decision
			for it := range ch {
				v := nfqb.Accept
				if it.kind == 'd' {
					v = nfqb.Drop
				}
				if w%2 == 0 {
					if err := q.Verdict(it.h, v); err != nil {
						atomic.AddInt64(&failed, 1)
					}
					continue
				}
				pend = append(pend, nfqb.Decision{Handle: it.h, Verdict: v})
				if len(pend) == 8 || len(ch) == 0 {
					if err := q.Decide(pend); err != nil {
						atomic.AddInt64(&failed, 1)
					}
					pend = pend[:0]
				}
			}
			if len(pend) > 0 {
				if err := q.Decide(pend); err != nil {
					atomic.AddInt64(&failed, 1)
				}
			}
		}(w)
	}
	send(1000, 50000, func(i int) byte {
		if i%10 == 0 {
			return 'd'
		}
		return 'a'
	})
	cnt.WaitFor(900, 5*time.Second)
	time.Sleep(200 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	close(ch)
	wg.Wait()
	if n := cnt.N(); n != 900 || failed != 0 {
		t.Fatalf("received %d (want 900), %d verdicts failed", n, failed)
	}
	st, _ := q.Stats()
	if st.Defaults != 0 || st.Dropped != 100 {
		t.Fatalf("stats: %+v", st)
	}
	// a handle is dead after its verdict, and after the close
	if err := q.Verdict(1, nfqb.Accept); !errors.Is(err, nfqb.ErrClosed) {
		t.Fatalf("verdict after close: %v", err)
	}
}

// A conntrack mark set with the verdict: the flow's later packets match
// the connmark rule ahead of the queue and never reach it. The kernel
// takes conntrack verdicts only with ctnetlink's glue (nf_conntrack_netlink
// loaded); packets carry NFQA_CT on a queue with QueueConntrack exactly
// then. Without it the verdict must still apply, the entry unchanged.
func TestConnMark(t *testing.T) {
	nstest.Modprobe("nf_conntrack_netlink", "xt_connmark", "xt_NFQUEUE")
	ns := nstest.New(t)
	ns.Iptables("-A OUTPUT -o lo -p udp --dport 5004 -m connmark --mark 0x5 -j ACCEPT")
	ns.Iptables(fmt.Sprintf("-A OUTPUT -o lo -p udp --dport 5004 -j NFQUEUE --queue-num %d", queueNum))
	rx, tx := ns.UDP(5004)
	cnt := nstest.Count(rx)
	q, err := nfqb.Open(&nfqb.Config{Queue: queueNum, NetNS: ns.Fd,
		Flags: nfqb.QueueConntrack, FlagsMask: nfqb.QueueConntrack})
	if errors.Is(err, syscall.EOPNOTSUPP) {
		q, err = nfqb.Open(&nfqb.Config{Queue: queueNum, NetNS: ns.Fd})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	var seen, glue int64
	stop := run(t, q, func(b *nfqb.Batch) {
		for i := range b.Packets {
			atomic.AddInt64(&seen, 1)
			if b.Packets[i].Has&nfqb.HasCt != 0 {
				atomic.StoreInt64(&glue, 1)
			}
			b.VerdictCtMark(i, nfqb.Accept, 5)
		}
	})
	if err := nstest.Send(tx, 1, 64, 0, nil); err != nil {
		t.Fatal(err)
	}
	if cnt.WaitFor(1, 5*time.Second) != 1 {
		t.Fatal("the first packet did not arrive")
	}
	if err := nstest.Send(tx, 50, 64, 0, nil); err != nil {
		t.Fatal(err)
	}
	cnt.WaitFor(51, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	want := int64(51)
	if glue != 0 {
		want = 1
	}
	t.Logf("the kernel %s conntrack verdicts: %d of 51 queued",
		map[bool]string{true: "takes", false: "ignores (no nf_conntrack_netlink)"}[glue != 0], seen)
	if n, s := cnt.N(), atomic.LoadInt64(&seen); n != 51 || s != want {
		t.Fatalf("received %d (want 51), queued %d (want %d)", n, s, want)
	}
	if os.Getenv("NFQB_GO_REQUIRE_CT") == "1" && glue == 0 {
		t.Fatal("NFQB_GO_REQUIRE_CT=1: this kernel does not take conntrack verdicts (nf_conntrack_netlink)")
	}
}

// Cancel under traffic (20k packets/s, some left undecided, some decided
// from another goroutine late): every packet gets exactly one verdict,
// none is lost (rule with bypass and fail-open: what the queue does not
// take passes; the default verdict is accept).
func TestCancelUnderTraffic(t *testing.T) {
	ns := nstest.New(t)
	ns.Iptables(fmt.Sprintf("-A OUTPUT -o lo -p udp --dport 5005 -j NFQUEUE --queue-num %d --queue-bypass", queueNum))
	rx, tx := ns.UDP(5005)
	cnt := nstest.Count(rx)
	q, err := nfqb.Open(&nfqb.Config{Queue: queueNum, NetNS: ns.Fd,
		Flags: nfqb.QueueFailOpen, FlagsMask: nfqb.QueueFailOpen})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	late := make(chan nfqb.Handle, 1<<16)
	var seen int64
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(b *nfqb.Batch) {
			for i := range b.Packets {
				n := atomic.AddInt64(&seen, 1)
				switch n % 3 {
				case 0:
					b.Accept(i)
				case 1:
					late <- b.Packets[i].Handle
				}
				// n%3 == 2: never decided by us
			}
		}, nil)
	}()
	go func() {
		for h := range late {
			_ = q.Verdict(h, nfqb.Accept)
		}
	}()
	const total = 20000
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if err := nstest.Send(tx, total, 64, 20000, nil); err != nil {
			t.Errorf("send: %v", err)
		}
	}()
	time.Sleep(400 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	close(late)
	<-sent
	got := cnt.WaitFor(total, 5*time.Second)
	st, err := q.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent %d, received %d, queued %d; stats %+v", total, got, atomic.LoadInt64(&seen), st)
	if got != total {
		t.Fatalf("received %d of %d", got, total)
	}
	if st.Outstanding != 0 || st.Accepted != st.Packets {
		t.Fatalf("not every packet got one verdict: %+v", st)
	}
}

// The native path: allocations, cgo calls and system calls per packet.
func BenchmarkNativeAccept(b *testing.B) {
	ns := nstest.New(b)
	ns.Iptables(fmt.Sprintf("-A OUTPUT -o lo -p udp --dport 5006 -j NFQUEUE --queue-num %d", queueNum))
	rx, tx := ns.UDP(5006)
	cnt := nstest.Count(rx)
	q, err := nfqb.Open(&nfqb.Config{Queue: queueNum, NetNS: ns.Fd, MaxQueueLen: 8192})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	var seen int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(bt *nfqb.Batch) {
			for i := range bt.Packets {
				bt.Accept(i)
			}
			atomic.AddInt64(&seen, int64(len(bt.Packets)))
		}, nil)
	}()
	// warm up
	_ = nstest.Send(tx, 1000, 64, 0, nil)
	cnt.WaitFor(1000, 5*time.Second)
	st0, _ := q.Stats()
	s0 := atomic.LoadInt64(&seen)
	c0 := runtime.NumCgoCall()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ReportAllocs()
	b.ResetTimer()
	n := b.N
	if err := nstest.Send(tx, n, 64, 0, nil); err != nil {
		b.Fatal(err)
	}
	for atomic.LoadInt64(&seen)-s0 < int64(n) {
		if cnt.WaitFor(1000+int64(n), 10*time.Second) < 1000+int64(n) {
			break
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	c1 := runtime.NumCgoCall()
	st1, _ := q.Stats()
	pk := float64(atomic.LoadInt64(&seen) - s0)
	if pk > 0 {
		b.ReportMetric(float64(c1-c0)/pk, "cgo-calls/pkt")
		b.ReportMetric(float64((st1.RecvCalls+st1.SendCalls)-(st0.RecvCalls+st0.SendCalls))/pk, "lib-syscalls/pkt")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/pk, "allocs/pkt")
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
