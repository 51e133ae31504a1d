// SPDX-License-Identifier: LGPL-2.1-or-later

// Package nstest gives each test a network namespace of its own, with
// loopback up, iptables in it, and UDP sockets made in it. For the tests of
// this module only: they need root and the real kernel.
package nstest

/*
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
static int nstest_setns(int fd) { return setns(fd, CLONE_NEWNET) ? errno : 0; }
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var seq int32

// NS is a network namespace made by ip netns add, deleted at the end of
// the test.
type NS struct {
	Name string
	Fd   int // open on /run/netns/Name: Config.NetNS
	t    testing.TB
}

// RequireRoot fails the test (skips it outside CI) without root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the tests need root (CI=true: not skipped)")
		}
		t.Skip("the tests need root")
	}
}

// New makes a namespace for t, with lo up; removed (with its rules and
// sockets' traffic) when t ends, even on failure.
func New(t testing.TB) *NS {
	t.Helper()
	RequireRoot(t)
	name := fmt.Sprintf("nfqbgo-%d-%d", os.Getpid(), atomic.AddInt32(&seq, 1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	ns := &NS{Name: name, Fd: -1, t: t}
	t.Cleanup(ns.del)
	fd, err := syscall.Open("/run/netns/"+name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open netns %s: %v", name, err)
	}
	ns.Fd = fd
	ns.Run("ip", "link", "set", "lo", "up")
	return ns
}

func (ns *NS) del() {
	if ns.Fd >= 0 {
		syscall.Close(ns.Fd)
		ns.Fd = -1
	}
	// the queue's socket may still be closing: retry a moment
	for i := 0; i < 50; i++ {
		if exec.Command("ip", "netns", "del", ns.Name).Run() == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ns.t.Errorf("ip netns del %s failed", ns.Name)
}

// Run runs a command in the namespace and fails the test if it fails.
func (ns *NS) Run(args ...string) string {
	ns.t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, args...)...).CombinedOutput()
	if err != nil {
		ns.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Iptables runs iptables in the namespace with args split on spaces.
func (ns *NS) Iptables(rule string) {
	ns.t.Helper()
	ns.Run(append([]string{"iptables", "-w"}, strings.Fields(rule)...)...)
}

// Do runs f on an OS thread inside the namespace (sockets f makes belong
// to it, wherever they are used later).
func (ns *NS) Do(f func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// the thread is not given back unless it came back to its
		// own namespace: this goroutine may end locked
		self, err := syscall.Open("/proc/thread-self/ns/net", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			ch <- err
			return
		}
		defer syscall.Close(self)
		if e := C.nstest_setns(C.int(ns.Fd)); e != 0 {
			ch <- fmt.Errorf("setns: %w", syscall.Errno(e))
			return
		}
		err = f()
		if C.nstest_setns(C.int(self)) == 0 {
			runtime.UnlockOSThread()
		}
		ch <- err
	}()
	return <-ch
}

// UDP makes a receiving socket on 127.0.0.1:port and a sending one, in the
// namespace; closed at the end of the test.
func (ns *NS) UDP(port int) (rx, tx *net.UDPConn) {
	ns.t.Helper()
	err := ns.Do(func() error {
		var err error
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return err
		}
		tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		return err
	})
	if err != nil {
		ns.t.Fatalf("udp sockets: %v", err)
	}
	if c, err := rx.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, 32<<20)
		})
	}
	ns.t.Cleanup(func() { rx.Close(); tx.Close() })
	return rx, tx
}

// Drain reads what arrives at rx until quiet for the given time, and
// returns the datagrams.
func Drain(rx *net.UDPConn, quiet time.Duration) [][]byte {
	var got [][]byte
	buf := make([]byte, 65536)
	for {
		_ = rx.SetReadDeadline(time.Now().Add(quiet))
		n, err := rx.Read(buf)
		if err != nil {
			return got
		}
		got = append(got, append([]byte(nil), buf[:n]...))
	}
}

// Counter counts the datagrams arriving at rx in a goroutine of its own.
type Counter struct {
	n    int64
	done chan struct{}
}

// Count starts counting what arrives at rx (until rx is closed).
func Count(rx *net.UDPConn) *Counter {
	c := &Counter{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 65536)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
			atomic.AddInt64(&c.n, 1)
		}
	}()
	return c
}

// N is how many arrived so far.
func (c *Counter) N() int64 { return atomic.LoadInt64(&c.n) }

// WaitFor waits until n arrived or the time passed; returns the count.
func (c *Counter) WaitFor(n int64, max time.Duration) int64 {
	end := time.Now().Add(max)
	for time.Now().Before(end) {
		if c.N() >= n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return c.N()
}

// Send sends n datagrams of size bytes on tx at about pps per second (0:
// as fast as it can), the first byte of each set by kind(i).
func Send(tx *net.UDPConn, n, size, pps int, kind func(i int) byte) error {
	buf := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if kind != nil {
			buf[0] = kind(i)
		}
		if _, err := tx.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EPERM) {
				// the kernel dropped it (queue full, no bypass)
				continue
			}
			return err
		}
		if pps > 0 && i%64 == 63 {
			due := start.Add(time.Duration(i+1) * time.Second / time.Duration(pps))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
	}
	return nil
}

// UDPData is the UDP payload of an IPv4 packet (nil if not UDP/IPv4).
func UDPData(pkt []byte) []byte {
	if len(pkt) < 28 || pkt[0]>>4 != 4 || pkt[9] != 17 {
		return nil
	}
	ihl := int(pkt[0]&15) * 4
	if len(pkt) < ihl+8 {
		return nil
	}
	return pkt[ihl+8:]
}

// Modprobe loads kernel modules, ignoring failures (built in, or loaded).
func Modprobe(mods ...string) {
	for _, m := range mods {
		_ = exec.Command("modprobe", "-q", m).Run()
	}
}
