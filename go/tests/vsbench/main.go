// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build vsbench

// vsbench: one program, built three times by go/tests/vs-go-nfqueue.sh:
// with gonfq.go on go-nfqueue 2.0.0 and on go/nfqueue (only the import
// path differs), and with native.go on go/nfqb. Every packet is accepted;
// the process's CPU time (user + system, getrusage), allocations and
// context switches per packet queued are printed. "-mode send" is the
// traffic: UDP datagrams to 127.0.0.1:port, from another process, so that
// their CPU is not counted.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// cpu is the process's CPU time (user + system) and its context switches
// (voluntary and not) so far.
func cpu() (time.Duration, int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}

func send(port, n, size, pps int) error {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		return err
	}
	defer rx.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
		}
	}()
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		return err
	}
	buf := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		_, _ = tx.Write(buf)
		if pps > 0 && i%64 == 63 {
			if d := time.Until(start.Add(time.Duration(i+1) * time.Second / time.Duration(pps))); d > 0 {
				time.Sleep(d)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	return nil
}

func main() {
	mode := flag.String("mode", "recv", "recv or send")
	n := flag.Int("n", 100000, "packets")
	port := flag.Int("port", 5201, "UDP port (send)")
	pps := flag.Int("pps", 50000, "packets per second (send)")
	queue := flag.Int("queue", 3, "queue number (recv)")
	label := flag.String("label", "", "name printed with the result")
	flag.Parse()
	if *mode == "send" {
		if err := send(*port, *n, 64, *pps); err != nil {
			fmt.Fprintln(os.Stderr, "send:", err)
			os.Exit(1)
		}
		return
	}
	var seen int64
	first := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	closeQ, err := recv(ctx, uint16(*queue), &seen, first)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	<-first
	c0, w0 := cpu()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s0 := atomic.LoadInt64(&seen)
	t0 := time.Now()
	last, idle := s0, 0
	for atomic.LoadInt64(&seen) < int64(*n) && idle < 20 {
		time.Sleep(50 * time.Millisecond)
		if s := atomic.LoadInt64(&seen); s == last {
			idle++
		} else {
			last, idle = s, 0
		}
	}
	c1, w1 := cpu()
	runtime.ReadMemStats(&m1)
	pk := atomic.LoadInt64(&seen) - s0
	el := time.Since(t0)
	cancel()
	closeQ()
	if pk <= 0 {
		fmt.Println(*label, "no packets")
		os.Exit(1)
	}
	fmt.Printf("%s: %d packets, CPU %.0f ns/packet, %.2f allocations/packet, %.2f context switches/packet, %.0f packets/s\n",
		*label, pk, float64(c1-c0)/float64(pk), float64(m1.Mallocs-m0.Mallocs)/float64(pk),
		float64(w1-w0)/float64(pk), float64(pk)/el.Seconds())
}
