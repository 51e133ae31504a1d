// SPDX-License-Identifier: LGPL-2.1-or-later

package nfqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libnfq-batch/libnfq-batch/go/internal/nstest"
	nfqueue "github.com/libnfq-batch/libnfq-batch/go/nfqueue"
)

const qnum = 9

func open(t testing.TB, ns *nstest.NS, flags uint32) *nfqueue.Nfqueue {
	nf, err := nfqueue.Open(&nfqueue.Config{
		NetNS:        ns.Fd,
		NfQueue:      qnum,
		MaxPacketLen: 0xFFFF,
		MaxQueueLen:  0xFFF,
		Copymode:     nfqueue.NfQnlCopyPacket,
		Flags:        flags,
		WriteTimeout: 15 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nf.Close() })
	return nf
}

func queueRule(ns *nstest.NS, port int, extra string) {
	ns.Iptables(fmt.Sprintf("-A OUTPUT -o lo -p udp --dport %d -j NFQUEUE --queue-num %d %s", port, qnum, extra))
}

func kind(a nfqueue.Attribute) byte {
	if a.Payload == nil {
		return 0
	}
	d := nstest.UDPData(*a.Payload)
	if len(d) == 0 {
		return 0
	}
	return d[0]
}

// SetVerdict from the hook and from another goroutine; SetVerdictWithMark
// seen at INPUT; the Attribute's payload kept after the verdict.
func TestVerdictsAndMark(t *testing.T) {
	ns := nstest.New(t)
	queueRule(ns, 5101, "")
	ns.Iptables("-A INPUT -p udp --dport 5101 -m mark --mark 0x9 -j DROP")
	rx, tx := ns.UDP(5101)
	cnt := nstest.Count(rx)
	nf := open(t, ns, 0)
	later := make(chan uint32, 1024)
	var kept [][]byte
	var seen int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.RegisterWithErrorFunc(ctx, func(a nfqueue.Attribute) int {
		atomic.AddInt64(&seen, 1)
		id := *a.PacketID
		switch kind(a) {
		case 'd':
			nf.SetVerdict(id, nfqueue.NfDrop)
		case 'm': // marked 9: dropped at INPUT
			nf.SetVerdictWithMark(id, nfqueue.NfAccept, 9)
		case 'l':
			later <- id
		default:
			nf.SetVerdict(id, nfqueue.NfAccept)
		}
		if a.Hook == nil || a.HwProtocol == nil || *a.HwProtocol != 0x0800 {
			t.Errorf("attribute without hook or hw protocol: %+v", a)
		}
		kept = append(kept, *a.Payload)
		return 0
	}, func(e error) int {
		t.Errorf("error func: %v", e)
		return 1
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for id := range later {
			if err := nf.SetVerdict(id, nfqueue.NfAccept); err != nil {
				t.Errorf("late verdict: %v", err)
			}
		}
	}()
	kinds := []byte("admla")
	if err := nstest.Send(tx, 500, 64, 0, func(i int) byte { return kinds[i%5] }); err != nil {
		t.Fatal(err)
	}
	cnt.WaitFor(300, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := nf.Close(); err != nil {
		t.Fatal(err)
	}
	close(later)
	if n := cnt.N(); n != 300 || seen != 500 {
		t.Fatalf("received %d (want 300), queued %d (want 500)", n, seen)
	}
	for i, p := range kept {
		if d := nstest.UDPData(p); len(d) != 64 || d[0] != kinds[i%5] {
			t.Fatalf("payload %d changed after its verdict", i)
		}
	}
}

// SetVerdictModPacket: the receiver gets the changed datagram.
func TestModPacket(t *testing.T) {
	ns := nstest.New(t)
	queueRule(ns, 5102, "")
	rx, tx := ns.UDP(5102)
	nf := open(t, ns, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		p := append([]byte(nil), *a.Payload...)
		d := nstest.UDPData(p)
		copy(d, "changed")
		ihl := int(p[0]&15) * 4
		p[ihl+6], p[ihl+7] = 0, 0 // no UDP checksum
		if err := nf.SetVerdictModPacketWithMark(*a.PacketID, nfqueue.NfAccept, 1, p); err != nil {
			t.Errorf("mod packet: %v", err)
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nstest.Send(tx, 3, 32, 0, nil); err != nil {
		t.Fatal(err)
	}
	got := nstest.Drain(rx, 500*time.Millisecond)
	if len(got) != 3 {
		t.Fatalf("received %d of 3", len(got))
	}
	for _, g := range got {
		if !bytes.HasPrefix(g, []byte("changed")) {
			t.Fatalf("datagram not changed: %q", g)
		}
	}
}

// SetVerdictWithConnMark: with ctnetlink, the flow's later packets pass
// the connmark rule and never reach the queue.
func TestConnMark(t *testing.T) {
	nstest.Modprobe("nf_conntrack_netlink", "xt_connmark", "xt_NFQUEUE")
	ns := nstest.New(t)
	ns.Iptables("-A OUTPUT -o lo -p udp --dport 5103 -m connmark --mark 0x6 -j ACCEPT")
	queueRule(ns, 5103, "")
	rx, tx := ns.UDP(5103)
	cnt := nstest.Count(rx)
	nf := open(t, ns, nfqueue.NfQaCfgFlagConntrack)
	var seen, glue int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		atomic.AddInt64(&seen, 1)
		if a.Ct != nil {
			atomic.StoreInt64(&glue, 1)
		}
		nf.SetVerdictWithConnMark(*a.PacketID, nfqueue.NfAccept, 6)
		return 0
	})
	if errors.Is(err, syscall.EOPNOTSUPP) {
		nf = open(t, ns, 0)
		err = nf.Register(ctx, func(a nfqueue.Attribute) int {
			atomic.AddInt64(&seen, 1)
			nf.SetVerdictWithConnMark(*a.PacketID, nfqueue.NfAccept, 6)
			return 0
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = nstest.Send(tx, 1, 64, 0, nil)
	if cnt.WaitFor(1, 5*time.Second) != 1 {
		t.Fatal("first packet lost")
	}
	_ = nstest.Send(tx, 30, 64, 0, nil)
	cnt.WaitFor(31, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	nf.Close()
	want := int64(31)
	if glue != 0 {
		want = 1
	}
	t.Logf("conntrack verdicts taken by the kernel: %v; %d of 31 queued", glue != 0, seen)
	if n := cnt.N(); n != 31 || seen != want {
		t.Fatalf("received %d (want 31), queued %d (want %d)", n, seen, want)
	}
}

// A hook that blocks until an earlier packet of its batch, decided by
// another goroutine, got through: that verdict is not held for the batch.
func TestBlockingHook(t *testing.T) {
	ns := nstest.New(t)
	queueRule(ns, 5107, "")
	rx, tx := ns.UDP(5107)
	cnt := nstest.Count(rx)
	nf := open(t, ns, 0)
	ids := make(chan uint32, 16)
	var blocked int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		if kind(a) == 'a' {
			ids <- *a.PacketID
			time.Sleep(time.Millisecond) // the other goroutine decides now
			return 0
		}
		if cnt.WaitFor(1, 3*time.Second) < 1 {
			atomic.AddInt64(&blocked, 1)
		}
		nf.SetVerdict(*a.PacketID, nfqueue.NfAccept)
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for id := range ids {
			nf.SetVerdict(id, nfqueue.NfAccept)
		}
	}()
	_ = nstest.Send(tx, 2, 64, 0, func(i int) byte { return "ab"[i] })
	n := cnt.WaitFor(2, 5*time.Second)
	cancel()
	nf.Close()
	close(ids)
	if n != 2 || blocked != 0 {
		t.Fatalf("received %d of 2; the first verdict held while the hook waited: %v", n, blocked != 0)
	}
}

// SetVerdictBatch from the hook: every packet of the batch up to the id.
func TestVerdictBatch(t *testing.T) {
	ns := nstest.New(t)
	queueRule(ns, 5104, "")
	rx, tx := ns.UDP(5104)
	cnt := nstest.Count(rx)
	nf := open(t, ns, 0)
	var seen int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		if atomic.AddInt64(&seen, 1)%10 == 0 {
			nf.SetVerdictBatch(*a.PacketID, nfqueue.NfAccept)
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = nstest.Send(tx, 100, 64, 2000, nil)
	if n := cnt.WaitFor(100, 5*time.Second); n != 100 {
		t.Fatalf("received %d of 100", n)
	}
}

// Cancel under 20k packets/s: every packet queued gets one verdict, the
// hook's or the default one; none is lost (the rule has bypass and the
// queue fail-open).
func TestCancelUnderTraffic(t *testing.T) {
	ns := nstest.New(t)
	queueRule(ns, 5105, "--queue-bypass")
	rx, tx := ns.UDP(5105)
	cnt := nstest.Count(rx)
	nf := open(t, ns, nfqueue.NfQaCfgFlagFailOpen)
	var seen int64
	ctx, cancel := context.WithCancel(context.Background())
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		if atomic.AddInt64(&seen, 1)%2 == 0 {
			nf.SetVerdict(*a.PacketID, nfqueue.NfAccept)
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	const total = 20000
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		_ = nstest.Send(tx, total, 64, 20000, nil)
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := nf.Close(); err != nil {
		t.Fatal(err)
	}
	<-sent
	if n := cnt.WaitFor(total, 5*time.Second); n != total {
		t.Fatalf("received %d of %d (queued %d)", n, total, seen)
	}
	t.Logf("%d of %d queued before the cancel", seen, total)
}

// The go-nfqueue path: allocations and cgo calls per packet, the hook
// accepting each packet by SetVerdict.
func BenchmarkCompatAccept(b *testing.B) {
	ns := nstest.New(b)
	queueRule(ns, 5106, "")
	rx, tx := ns.UDP(5106)
	cnt := nstest.Count(rx)
	nf := open(b, ns, 0)
	var seen int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := nf.Register(ctx, func(a nfqueue.Attribute) int {
		nf.SetVerdict(*a.PacketID, nfqueue.NfAccept)
		atomic.AddInt64(&seen, 1)
		return 0
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = nstest.Send(tx, 1000, 64, 0, nil)
	cnt.WaitFor(1000, 5*time.Second)
	s0 := atomic.LoadInt64(&seen)
	st0, _ := nf.Stats()
	c0 := runtime.NumCgoCall()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ReportAllocs()
	b.ResetTimer()
	_ = nstest.Send(tx, b.N, 64, 0, nil)
	cnt.WaitFor(1000+int64(b.N), 10*time.Second)
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	if pk := float64(atomic.LoadInt64(&seen) - s0); pk > 0 {
		b.ReportMetric(float64(runtime.NumCgoCall()-c0)/pk, "cgo-calls/pkt")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/pk, "allocs/pkt")
		st1, _ := nf.Stats()
		b.ReportMetric(float64((st1.RecvCalls+st1.SendCalls)-(st0.RecvCalls+st0.SendCalls))/pk, "lib-syscalls/pkt")
	}
}
