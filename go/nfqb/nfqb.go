// SPDX-License-Identifier: LGPL-2.1-or-later

// Package nfqb is a Go binding of libnfq-batch, the C library that
// receives packets from nfnetlink_queue many per system call and sends
// their verdicts back as few messages as it safely can.
//
// The costs a Go program pays for a C library are the cgo calls and the
// allocations, and this package is shaped around them:
//
//   - One cgo call per batch: Run's loop makes a single call that applies
//     the decisions recorded for the last batch, receives up to
//     Config.BatchSize packets, and copies what Go reads of each (numbers,
//     and pointers with lengths into the library's buffers) into an array
//     Go reads in place.
//   - Nothing allocated per packet: the Batch, its Packets and its
//     decisions are reused from one batch to the next, and a Packet's byte
//     slices (Payload, HwAddr, Ct, L2Hdr, ...) alias the library's receive
//     buffer of that packet. They are valid until the packet's verdict
//     (and never after Close); copy what must outlive it.
//   - Verdicts from any goroutine: a packet left undecided by the batch
//     function is decided later, from any goroutine, with its Handle
//     (Queue.Verdict and friends, one cgo call each, or Queue.Decide for
//     many at once, one cgo call); the library's verdict functions are
//     thread-safe and wake the receiving thread themselves.
//
// Run locks its goroutine to its OS thread for its whole life: the
// library's receiving calls belong to one thread (it knows the owner by
// its thread), and that thread also sends the verdicts decided from other
// goroutines. The batch function must not block: slow work goes to other
// goroutines, which decide by Handle.
package nfqb

/*
#cgo LDFLAGS: -lnfq-batch
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Verdicts.
const (
	Drop    = uint32(C.NFQB_DROP)
	Accept  = uint32(C.NFQB_ACCEPT)
	ToQueue = uint32(C.NFQB_QUEUE) // to another queue: Decision.QueueNum
	Repeat  = uint32(C.NFQB_REPEAT)
)

// Decision flags: which optional parts of a Decision are set.
const (
	FlagMark     = uint32(C.NFQB_V_MARK)     // the packet's mark (Decision.Mark)
	FlagPriority = uint32(C.NFQB_V_PRIORITY) // skb->priority (Decision.Priority)
	FlagBypass   = uint32(C.NFQB_V_BYPASS)   // ToQueue: accept if nobody listens
	FlagCtMark   = uint32(C.NFQB_V_CT_MARK)  // its conntrack entry's mark (Decision.CtMark)
)

// Queue flags (Config.Flags, Config.FlagsMask), the kernel's NFQA_CFG_F_*.
const (
	QueueFailOpen  = uint32(C.NFQB_F_FAIL_OPEN)
	QueueConntrack = uint32(C.NFQB_F_CONNTRACK)
	QueueGSO       = uint32(C.NFQB_F_GSO)
	QueueUIDGID    = uint32(C.NFQB_F_UID_GID)
	QueueSecCtx    = uint32(C.NFQB_F_SECCTX)
)

// Copy modes.
const (
	CopyMeta   = uint8(C.NFQB_COPY_META)
	CopyPacket = uint8(C.NFQB_COPY_PACKET)
)

// Has bits: which optional attributes a Packet carries.
const (
	HasMark       = uint32(C.NFQBGO_HAS_MARK)
	HasTimestamp  = uint32(C.NFQBGO_HAS_TIMESTAMP)
	HasInDev      = uint32(C.NFQBGO_HAS_INDEV)
	HasOutDev     = uint32(C.NFQBGO_HAS_OUTDEV)
	HasPhysInDev  = uint32(C.NFQBGO_HAS_PHYSINDEV)
	HasPhysOutDev = uint32(C.NFQBGO_HAS_PHYSOUTDEV)
	HasHwAddr     = uint32(C.NFQBGO_HAS_HWADDR)
	HasUID        = uint32(C.NFQBGO_HAS_UID)
	HasGID        = uint32(C.NFQBGO_HAS_GID)
	HasCtInfo     = uint32(C.NFQBGO_HAS_CTINFO)
	HasSkbInfo    = uint32(C.NFQBGO_HAS_SKBINFO)
	HasPriority   = uint32(C.NFQBGO_HAS_PRIORITY)
	HasCapLen     = uint32(C.NFQBGO_HAS_CAPLEN)
	HasCt         = uint32(C.NFQBGO_HAS_CT)
	HasSecCtx     = uint32(C.NFQBGO_HAS_SECCTX)
	HasL2Hdr      = uint32(C.NFQBGO_HAS_L2HDR)
	HasExp        = uint32(C.NFQBGO_HAS_EXP)
	HasPayload    = uint32(C.NFQBGO_HAS_PAYLOAD)
)

// ErrClosed is returned for a queue already closed.
var ErrClosed = errors.New("nfqb: queue closed")

// Config says which queue to open and how.
type Config struct {
	Queue uint16 // the queue number

	// NetNS, if not 0, is a file descriptor of the network namespace to
	// open the queue in (the queue's socket is made there).
	NetNS int

	CopyMode  uint8  // CopyPacket (0 means CopyPacket) or CopyMeta
	CopyRange uint32 // bytes of payload copied; 0: as much as the kernel can

	// MaxQueueLen, if not 0, is how many packets the kernel may hold for
	// the queue (the kernel's default is 1024).
	MaxQueueLen uint32

	// Flags sets the queue flags in FlagsMask (Queue*; the library sets
	// QueueGSO at open, the others are off).
	Flags, FlagsMask uint32

	Buffers   int // packets outstanding at most (0: the library's 1024)
	BatchSize int // packets per batch at most (0: 64)

	// DefaultDrop makes drop the verdict of packets nobody decides (at
	// Close, on a verdict timeout); by default they are accepted.
	DefaultDrop bool

	// IDTable keeps an id -> packet table, for VerdictByID (the
	// go-nfqueue API decides by packet id).
	IDTable bool

	// IgnoreENOBUFS: the kernel does not report socket overflows
	// (NETLINK_NO_ENOBUFS); Run's error function never sees ENOBUFS.
	IgnoreENOBUFS bool

	// VerdictTimeout, if not 0, gives the default verdict to packets
	// left undecided that long.
	VerdictTimeout time.Duration
}

// Handle names one packet of a queue, for a verdict from any goroutine.
// It dies with the packet's verdict: a second verdict fails (EALREADY)
// and never reaches another packet.
type Handle uintptr

// Packet is one packet of a Batch. Its slices alias the library's buffer
// of the packet: valid until its verdict. The Packet itself is reused by
// the next batch: copy the value (or keep its Handle and slices) to decide
// it later.
type Packet struct {
	Handle     Handle
	ID         uint32
	Has        uint32 // Has* bits for the optional fields below
	HwProtocol uint16 // host byte order
	Hook       uint8
	Family     uint8
	Payload    []byte
	CapLen     uint32 // the packet's length when the payload was cut
	Mark       uint32
	Timestamp  int64 // nanoseconds since the epoch
	InDev      uint32
	OutDev     uint32
	PhysInDev  uint32
	PhysOutDev uint32
	UID, GID   uint32
	CtInfo     uint32
	SkbInfo    uint32
	Priority   uint32
	HwAddr     []byte
	Ct         []byte // the raw NFQA_CT nest (CTA_* attributes)
	SecCtx     []byte
	L2Hdr      []byte
	Exp        []byte
}

// Decision is a verdict with its options, for Batch.Decide and
// Queue.Decide. Its layout is the C side's (struct nfqbgo_v).
type Decision struct {
	Handle   Handle // the packet; 0: by ID (Config.IDTable)
	ID       uint32
	Verdict  uint32 // Accept, Drop, Repeat, ToQueue
	Flags    uint32 // Flag*
	Mark     uint32
	CtMark   uint32
	Priority uint32
	QueueNum uint16 // ToQueue: the target queue
	_        uint16
	Err      int32 // after the call: 0, or the errno of this verdict
}

func init() {
	var d Decision
	var c C.struct_nfqbgo_v
	if unsafe.Sizeof(d) != unsafe.Sizeof(c) ||
		unsafe.Offsetof(d.Err) != unsafe.Offsetof(c.err) ||
		unsafe.Offsetof(d.QueueNum) != unsafe.Offsetof(c.queue_num) {
		panic("nfqb: Decision does not match struct nfqbgo_v")
	}
}

// Batch is what Run hands its function: the packets of one receive, and
// the decisions recorded for them, applied by the next receive's cgo call.
type Batch struct {
	Packets []Packet
	q       *Queue
	dec     []Decision
	stop    bool
}

// Queue is an open queue.
type Queue struct {
	g   *C.struct_nfqbgo
	cfg Config

	closed   int32 // atomic: no more C calls
	inflight int32 // atomic: C calls from other goroutines in progress
	running  int32 // atomic: Run's loop owns the queue
	stopping int32 // atomic: Run must return
	nupto    int32 // atomic: upto is not empty

	mu        sync.Mutex
	upto      []upto // batch verdicts asked from other goroutines
	inFn      bool   // Run is calling its function (mu)
	done      chan struct{}
	closeErr  error
	closeOnce sync.Once
	last      C.struct_nfqb_stats
	lastValid bool
}

type upto struct {
	id, verdict uint32
}

func errnoErr(e C.int) error {
	if e == 0 {
		return nil
	}
	return syscall.Errno(e)
}

// Open binds the queue in cfg. The queue is bound at once: packets the
// rules send to it wait in the kernel (up to its length) until Run.
func Open(cfg *Config) (*Queue, error) {
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 64
	}
	if c.BatchSize > 1024 {
		c.BatchSize = 1024
	}
	if c.CopyMode == 0 {
		c.CopyMode = CopyPacket
	}
	bufs := c.Buffers
	if bufs <= 0 {
		bufs = int(C.NFQB_DEFAULT_BUFFERS)
	}
	fd := -1
	if c.NetNS != 0 {
		var err error
		if fd, err = socketIn(c.NetNS); err != nil {
			return nil, err
		}
	}
	var cerr C.int
	idt := C.int(0)
	if c.IDTable {
		idt = 1
	}
	g := C.nfqbgo_open(C.int(fd), C.uint16_t(c.Queue), C.uint(c.BatchSize),
		idt, C.uint(bufs), &cerr)
	if g == nil {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return nil, fmt.Errorf("nfqb: open queue %d: %w", c.Queue, errnoErr(cerr))
	}
	q := &Queue{g: g, cfg: c, done: make(chan struct{})}
	if err := q.configure(); err != nil {
		C.nfqbgo_close(g, nil)
		return nil, err
	}
	return q, nil
}

func (q *Queue) configure() error {
	qq := q.g.q
	c := &q.cfg
	check := func(what string, rc C.int, err error) error {
		if rc != 0 {
			return fmt.Errorf("nfqb: queue %d: %s: %w", c.Queue, what, err)
		}
		return nil
	}
	if c.Buffers > 0 {
		rc, err := C.nfqb_queue_set_buffers(qq, C.uint(c.Buffers))
		if e := check("buffers", rc, err); e != nil {
			return e
		}
	}
	if c.CopyMode != CopyPacket || c.CopyRange != 0 {
		rc, err := C.nfqb_queue_set_copy_mode(qq, C.enum_nfqb_copy_mode(c.CopyMode), C.uint32_t(c.CopyRange))
		if e := check("copy mode", rc, err); e != nil {
			return e
		}
	}
	if c.MaxQueueLen != 0 {
		rc, err := C.nfqb_queue_set_maxlen(qq, C.uint32_t(c.MaxQueueLen))
		if e := check("queue length", rc, err); e != nil {
			return e
		}
	}
	if c.FlagsMask != 0 {
		rc, err := C.nfqb_queue_set_flags(qq, C.uint32_t(c.Flags), C.uint32_t(c.FlagsMask))
		if e := check("flags", rc, err); e != nil {
			return e
		}
	}
	if c.DefaultDrop {
		rc, err := C.nfqb_queue_set_default_verdict(qq, C.NFQB_DROP)
		if e := check("default verdict", rc, err); e != nil {
			return e
		}
	}
	if c.IgnoreENOBUFS {
		rc, err := C.nfqb_queue_set_enobufs(qq, C.NFQB_ENOBUFS_IGNORE)
		if e := check("enobufs", rc, err); e != nil {
			return e
		}
	}
	if c.VerdictTimeout > 0 {
		ms := c.VerdictTimeout.Milliseconds()
		if ms == 0 {
			ms = 1
		}
		rc, err := C.nfqb_queue_set_verdict_timeout(qq, C.uint32_t(ms))
		if e := check("verdict timeout", rc, err); e != nil {
			return e
		}
	}
	return nil
}

// socketIn makes a NETLINK_NETFILTER socket in the network namespace nsfd.
func socketIn(nsfd int) (int, error) {
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// a thread that may be left in another namespace is never
		// given back to the runtime: this goroutine exits locked
		runtime.LockOSThread()
		restored := C.int(0)
		fd := C.nfqbgo_socket_in(C.int(nsfd), &restored)
		if restored != 0 {
			runtime.UnlockOSThread()
		}
		if fd < 0 {
			ch <- res{-1, fmt.Errorf("nfqb: socket in netns: %w", syscall.Errno(-fd))}
			return
		}
		ch <- res{int(fd), nil}
	}()
	r := <-ch
	return r.fd, r.err
}

// enter guards a C call on the queue from any goroutine against Close.
func (q *Queue) enter() bool {
	atomic.AddInt32(&q.inflight, 1)
	if atomic.LoadInt32(&q.closed) != 0 {
		atomic.AddInt32(&q.inflight, -1)
		return false
	}
	return true
}

func (q *Queue) leave() { atomic.AddInt32(&q.inflight, -1) }

// Num is the queue's number.
func (q *Queue) Num() uint16 { return q.cfg.Queue }

// Run receives batches and calls fn with each, on this goroutine (locked
// to its OS thread), until ctx is done, Close is called, fn calls
// Batch.Stop, or an error that ends the queue. errfn, if not nil, sees
// the errors that do not end it (ENOBUFS: the socket overflowed) and
// those of decisions recorded in a batch; it returns true to stop.
// When Run returns, the queue is closed: every packet handed out and not
// decided got the default verdict. Run returns nil when stopped, or the
// error that ended it. Run may be called once.
func (q *Queue) Run(ctx context.Context, fn func(*Batch), errfn func(error) bool) error {
	if !atomic.CompareAndSwapInt32(&q.running, 0, 1) {
		return errors.New("nfqb: Run called twice, or after Close")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	stopWatch := make(chan struct{})
	if ctx != nil && ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				q.interrupt()
			case <-stopWatch:
			}
		}()
	}
	err := q.loop(ctx, fn, errfn)
	close(stopWatch)
	q.finish()
	close(q.done)
	if err == nil && q.closeErr != nil {
		err = q.closeErr
	}
	return err
}

func (q *Queue) stopped(ctx context.Context) bool {
	if atomic.LoadInt32(&q.stopping) != 0 {
		return true
	}
	return ctx != nil && ctx.Err() != nil
}

func (q *Queue) loop(ctx context.Context, fn func(*Batch), errfn func(error) bool) error {
	n := q.cfg.BatchSize
	b := &Batch{
		Packets: make([]Packet, n),
		q:       q,
		dec:     make([]Decision, 0, 2*n),
	}
	cp := unsafe.Slice(q.g.pkts, n)
	for {
		if q.stopped(ctx) {
			q.flushBatch(b, errfn)
			return nil
		}
		if atomic.LoadInt32(&q.nupto) != 0 {
			// batch verdicts: after the batch's own decisions
			q.flushBatch(b, errfn)
		}
		var dp *C.struct_nfqbgo_v
		nd := len(b.dec)
		if nd > 0 {
			dp = (*C.struct_nfqbgo_v)(unsafe.Pointer(&b.dec[0]))
		}
		got := C.nfqbgo_step(q.g, dp, C.uint(nd))
		if nd > 0 {
			stop := q.decisionErrors(b.dec, errfn)
			b.dec = b.dec[:0]
			if stop {
				return nil
			}
		}
		if got < 0 {
			cerr := syscall.Errno(-got)
			switch cerr {
			case syscall.EINTR, syscall.EAGAIN, syscall.ENOSPC:
				continue
			case syscall.ENOBUFS:
				if errfn != nil && errfn(fmt.Errorf("nfqb: queue %d: receive: %w", q.cfg.Queue, cerr)) {
					return nil
				}
				continue
			}
			err := fmt.Errorf("nfqb: queue %d: receive: %w", q.cfg.Queue, cerr)
			if errfn != nil && !errfn(err) {
				continue
			}
			return err
		}
		k := int(got)
		b.Packets = b.Packets[:k]
		for i := 0; i < k; i++ {
			fillPacket(&b.Packets[i], &cp[i])
		}
		q.mu.Lock()
		q.inFn = true
		q.mu.Unlock()
		fn(b)
		q.mu.Lock()
		q.inFn = false
		q.mu.Unlock()
		if b.stop {
			q.flushBatch(b, errfn)
			return nil
		}
	}
}

// flushBatch applies what the last batch recorded (before the close).
func (q *Queue) flushBatch(b *Batch, errfn func(error) bool) {
	if len(b.dec) > 0 {
		C.nfqbgo_apply(q.g, (*C.struct_nfqbgo_v)(unsafe.Pointer(&b.dec[0])), C.uint(len(b.dec)))
		q.decisionErrors(b.dec, errfn)
		b.dec = b.dec[:0]
	}
	if atomic.LoadInt32(&q.nupto) == 0 {
		return
	}
	q.mu.Lock()
	ups := q.upto
	q.upto = nil
	atomic.StoreInt32(&q.nupto, 0)
	q.mu.Unlock()
	for _, u := range ups {
		C.nfqb_verdict_batch(q.g.q, C.uint32_t(u.id), C.uint32_t(u.verdict), nil)
	}
}

// DecisionError is a verdict recorded in a batch that the library refused.
type DecisionError struct {
	ID  uint32
	Err syscall.Errno
}

func (e *DecisionError) Error() string {
	return fmt.Sprintf("nfqb: verdict on packet %d: %v", e.ID, e.Err)
}

func (e *DecisionError) Unwrap() error { return e.Err }

func (q *Queue) decisionErrors(ds []Decision, errfn func(error) bool) bool {
	stop := false
	for i := range ds {
		if ds[i].Err != 0 && errfn != nil {
			if errfn(&DecisionError{ID: ds[i].ID, Err: syscall.Errno(ds[i].Err)}) {
				stop = true
			}
		}
	}
	return stop
}

func fillPacket(p *Packet, c *C.struct_nfqbgo_pkt) {
	has := uint32(c.has)
	p.Handle = Handle(c.h)
	p.ID = uint32(c.id)
	p.Has = has
	p.HwProtocol = uint16(c.hw_protocol)
	p.Hook = uint8(c.hook)
	p.Family = uint8(c.family)
	p.Payload = cbytes(c.payload, int(c.payload_len))
	p.CapLen = uint32(c.cap_len)
	p.Mark = uint32(c.mark)
	p.Timestamp = int64(c.ts_ns)
	p.InDev = uint32(c.indev)
	p.OutDev = uint32(c.outdev)
	p.PhysInDev = uint32(c.physindev)
	p.PhysOutDev = uint32(c.physoutdev)
	p.UID = uint32(c.uid)
	p.GID = uint32(c.gid)
	p.CtInfo = uint32(c.ctinfo)
	p.SkbInfo = uint32(c.skbinfo)
	p.Priority = uint32(c.priority)
	p.HwAddr = cbytes(c.hwaddr, int(c.hwaddr_len))
	p.Ct = cbytes(c.ct, int(c.ct_len))
	p.SecCtx = cbytes(c.secctx, int(c.secctx_len))
	p.L2Hdr = cbytes(c.l2hdr, int(c.l2hdr_len))
	p.Exp = cbytes(c.exp, int(c.exp_len))
}

// cbytes is a slice over C memory (nil for NULL), without a copy.
func cbytes(p *C.uint8_t, n int) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
}

// Stop makes Run return after this batch (its recorded decisions are
// applied; its undecided packets get the default verdict at the close).
func (b *Batch) Stop() { b.stop = true }

// Queue is the batch's queue.
func (b *Batch) Queue() *Queue { return b.q }

// Accept records accept for packet i; applied by the next receive (the
// same cgo call).
func (b *Batch) Accept(i int) { b.Decide(i, Decision{Verdict: Accept}) }

// Drop records drop for packet i.
func (b *Batch) Drop(i int) { b.Decide(i, Decision{Verdict: Drop}) }

// Verdict records verdict v for packet i.
func (b *Batch) Verdict(i int, v uint32) { b.Decide(i, Decision{Verdict: v}) }

// VerdictMark records verdict v and the packet mark for packet i.
func (b *Batch) VerdictMark(i int, v, mark uint32) {
	b.Decide(i, Decision{Verdict: v, Flags: FlagMark, Mark: mark})
}

// VerdictCtMark records verdict v for packet i and sets the mark of its
// conntrack entry: a rule on `ct mark` (or -m connmark) then decides the
// flow's later packets without queueing them.
func (b *Batch) VerdictCtMark(i int, v, ctmark uint32) {
	b.Decide(i, Decision{Verdict: v, Flags: FlagCtMark, CtMark: ctmark})
}

// Decide records d for packet i (d.Handle and d.ID are set from it).
func (b *Batch) Decide(i int, d Decision) {
	p := &b.Packets[i]
	d.Handle, d.ID, d.Err = p.Handle, p.ID, 0
	b.dec = append(b.dec, d)
}

// DecideRaw records d as it is (by d.Handle, or by d.ID with
// Config.IDTable), applied with the next receive.
func (b *Batch) DecideRaw(d Decision) {
	d.Err = 0
	b.dec = append(b.dec, d)
}

// Verdict decides the packet h now, from any goroutine (one cgo call).
func (q *Queue) Verdict(h Handle, v uint32) error {
	return q.decide1(&Decision{Handle: h, Verdict: v}, nil, false)
}

// VerdictMark decides h with a packet mark, from any goroutine.
func (q *Queue) VerdictMark(h Handle, v, mark uint32) error {
	return q.decide1(&Decision{Handle: h, Verdict: v, Flags: FlagMark, Mark: mark}, nil, false)
}

// VerdictCtMark decides h and sets its conntrack entry's mark, from any
// goroutine.
func (q *Queue) VerdictCtMark(h Handle, v, ctmark uint32) error {
	return q.decide1(&Decision{Handle: h, Verdict: v, Flags: FlagCtMark, CtMark: ctmark}, nil, false)
}

// VerdictPayload decides d's packet with a new payload (copied before
// the call returns), from any goroutine.
func (q *Queue) VerdictPayload(d Decision, payload []byte) error {
	return q.decide1(&d, payload, true)
}

// VerdictByID decides packet id (Config.IDTable), with d's verdict and
// options, and a new payload when withPayload; any goroutine.
func (q *Queue) VerdictByID(id uint32, d Decision, payload []byte, withPayload bool) error {
	d.Handle, d.ID = 0, id
	return q.decide1(&d, payload, withPayload)
}

// VerdictByIDLabels is VerdictByID that also sets the labels of the
// packet's conntrack entry (its 128 bits).
func (q *Queue) VerdictByIDLabels(id uint32, d Decision, payload []byte, withPayload bool, labels *[16]byte) error {
	d.Handle, d.ID = 0, id
	return q.decide(&d, payload, withPayload, labels)
}

func (q *Queue) decide1(d *Decision, payload []byte, withPayload bool) error {
	return q.decide(d, payload, withPayload, nil)
}

func (q *Queue) decide(d *Decision, payload []byte, withPayload bool, labels *[16]byte) error {
	if !q.enter() {
		return ErrClosed
	}
	defer q.leave()
	var pp unsafe.Pointer
	if len(payload) > 0 {
		pp = unsafe.Pointer(&payload[0])
	}
	wp := C.int(0)
	if withPayload {
		wp = 1
	}
	rc := C.nfqbgo_decide(q.g, C.uintptr_t(d.Handle), C.uint32_t(d.ID),
		C.uint32_t(d.Verdict), C.uint32_t(d.Flags), C.uint32_t(d.Mark),
		C.uint32_t(d.CtMark), C.uint32_t(d.Priority), C.uint16_t(d.QueueNum),
		pp, C.uint32_t(len(payload)), wp, (*C.uint8_t)(unsafe.Pointer(labels)))
	if rc != 0 {
		return &DecisionError{ID: d.ID, Err: syscall.Errno(rc)}
	}
	return nil
}

// Decide applies many decisions at once, from any goroutine: one cgo
// call. Each one's Err is set; the error returned is the first failure.
func (q *Queue) Decide(ds []Decision) error {
	if len(ds) == 0 {
		return nil
	}
	if !q.enter() {
		return ErrClosed
	}
	bad := C.nfqbgo_apply(q.g, (*C.struct_nfqbgo_v)(unsafe.Pointer(&ds[0])), C.uint(len(ds)))
	q.leave()
	if bad == 0 {
		return nil
	}
	for i := range ds {
		if ds[i].Err != 0 {
			return &DecisionError{ID: ds[i].ID, Err: syscall.Errno(ds[i].Err)}
		}
	}
	return nil
}

// DecideUpTo gives verdict v to every packet handed out with an id not
// after id and still undecided (the kernel's batch verdict), from any
// goroutine: the receiving loop applies it with its next receive.
func (q *Queue) DecideUpTo(id, v uint32) error {
	if v != Accept && v != Drop && v != Repeat {
		return syscall.EINVAL
	}
	if atomic.LoadInt32(&q.closed) != 0 {
		return ErrClosed
	}
	q.mu.Lock()
	q.upto = append(q.upto, upto{id, v})
	atomic.StoreInt32(&q.nupto, 1)
	wake := !q.inFn
	q.mu.Unlock()
	if wake {
		q.interrupt()
	}
	return nil
}

func (q *Queue) interrupt() {
	if q.enter() {
		C.nfqb_queue_interrupt(q.g.q)
		q.leave()
	}
}

// Stats are the queue's counters (the library's struct nfqb_stats).
type Stats struct {
	Packets, RecvCalls, SendCalls, VerdictMsgs, BatchMsgs, BatchPackets uint64
	Accepted, Dropped, Marked, Mangled, Enobufs, Defaults, Timeouts     uint64
	LateVerdicts, Outstanding                                           uint64
}

func statsOf(s *C.struct_nfqb_stats) Stats {
	return Stats{
		Packets: uint64(s.packets), RecvCalls: uint64(s.recv_calls),
		SendCalls: uint64(s.send_calls), VerdictMsgs: uint64(s.verdict_msgs),
		BatchMsgs: uint64(s.batch_msgs), BatchPackets: uint64(s.batch_packets),
		Accepted: uint64(s.accepted), Dropped: uint64(s.dropped),
		Marked: uint64(s.marked), Mangled: uint64(s.mangled),
		Enobufs: uint64(s.enobufs), Defaults: uint64(s.defaults),
		Timeouts: uint64(s.timeouts), LateVerdicts: uint64(s.late_verdicts),
		Outstanding: uint64(s.outstanding),
	}
}

// Stats reads the queue's counters, from any goroutine; after the close,
// the counters the close left.
func (q *Queue) Stats() (Stats, error) {
	if !q.enter() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.lastValid {
			return statsOf(&q.last), nil
		}
		return Stats{}, ErrClosed
	}
	defer q.leave()
	var st C.struct_nfqb_stats
	if rc := C.nfqbgo_stats(q.g, &st); rc != 0 {
		return Stats{}, syscall.Errno(rc)
	}
	return statsOf(&st), nil
}

// finish closes the C queue: no C call from another goroutine runs or
// starts after this.
func (q *Queue) finish() {
	q.closeOnce.Do(func() {
		atomic.StoreInt32(&q.closed, 1)
		for atomic.LoadInt32(&q.inflight) != 0 {
			runtime.Gosched()
		}
		var st C.struct_nfqb_stats
		rc := C.nfqbgo_close(q.g, &st)
		q.g = nil
		q.mu.Lock()
		q.last, q.lastValid = st, true
		q.mu.Unlock()
		if rc != 0 {
			q.closeErr = fmt.Errorf("nfqb: close queue %d: %w", q.cfg.Queue, syscall.Errno(rc))
		}
	})
}

// Close stops Run (and waits for it) or, without Run, closes the queue:
// every packet gets a verdict (the default one if undecided) and the
// queue is unbound. Safe from any goroutine, more than once.
func (q *Queue) Close() error {
	atomic.StoreInt32(&q.stopping, 1)
	if atomic.CompareAndSwapInt32(&q.running, 0, 1) {
		// Run never ran, and now never will
		q.finish()
		close(q.done)
		return q.closeErr
	}
	q.interrupt()
	<-q.done
	return q.closeErr
}

// Done is closed once the queue is closed.
func (q *Queue) Done() <-chan struct{} { return q.done }
