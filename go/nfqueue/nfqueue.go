// SPDX-License-Identifier: LGPL-2.1-or-later

// Package nfqueue is the API of github.com/florianl/go-nfqueue/v2 on
// libnfq-batch: a program switches by changing its import path.
//
// Underneath is package nfqb: packets are received in batches, one cgo
// call per batch, by a goroutine that is the library's owner thread and
// never waits for the hook; the hook runs on a goroutine of its own, batch
// by batch, and the verdicts it gives for the packets of its batch are
// recorded in Go and handed to the library in one cgo call when it is
// done with the batch (or after 2 ms if it blocks). Verdicts from other
// goroutines, or for older packets, are one cgo call each, to the
// library's thread-safe verdict functions. The library sends them to the
// kernel as few messages as it safely can.
//
// What differs from go-nfqueue: see README.md ("Switching from
// go-nfqueue").
package nfqueue

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/libnfq-batch/libnfq-batch/go/nfqb"
)

type devNull struct{}

func (devNull) Debugf(format string, args ...interface{}) {}
func (devNull) Errorf(format string, args ...interface{}) {}

// Nfqueue is a queue, bound by Register.
type Nfqueue struct {
	cfg    Config
	logger Logger

	mu          sync.Mutex
	q           *nfqb.Queue
	cancel      context.CancelFunc
	noENOBUFS   bool
	dispatching bool   // the hook runs for the batch first..last
	first, last uint32 // ids of that batch
	pending     []nfqb.Decision
	spare       []nfqb.Decision
	stuck       *time.Timer   // sends pending verdicts if the hook blocks
	hq          []*hbatch     // batches for the hook's goroutine
	bell        chan struct{} // rung when hq gets one
	wg          sync.WaitGroup
}

// stuckAfter: verdicts recorded for the batch the hook runs for wait at
// most this long for the hook to return; then they are sent from the
// timer's goroutine. A hook that blocks (until another goroutine's
// verdict took effect, say) holds no verdict for longer.
const stuckAfter = 2 * time.Millisecond

func (nf *Nfqueue) unstick() {
	nf.mu.Lock()
	if !nf.dispatching || len(nf.pending) == 0 || nf.q == nil {
		nf.mu.Unlock()
		return
	}
	ds, q := nf.pending, nf.q
	nf.pending = nil
	nf.mu.Unlock()
	if err := q.Decide(ds); err != nil {
		nf.logger.Errorf("nfqueue: %v", err)
	}
}

// ErrNotRegistered is returned by a verdict before Register.
var ErrNotRegistered = errors.New("nfqueue: no queue registered")

// Open checks the configuration; the queue is bound by Register (or
// RegisterWithErrorFunc).
func Open(config *Config) (*Nfqueue, error) {
	if config.Flags >= nfQaCfgFlagMax {
		return nil, ErrInvFlag
	}
	nf := &Nfqueue{cfg: *config, logger: config.Logger}
	if nf.logger == nil {
		nf.logger = devNull{}
	}
	return nf, nil
}

// Close stops the hook (every packet handed out and not decided gets the
// default verdict, accept), unbinds the queue and waits for the hook's
// goroutine to end.
func (nf *Nfqueue) Close() error {
	nf.mu.Lock()
	q, cancel := nf.q, nf.cancel
	nf.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	var err error
	if q != nil {
		err = q.Close()
	}
	nf.wg.Wait()
	return err
}

// Stats are the library's counters of the queue (not in go-nfqueue's
// API): after the close, those the close left.
func (nf *Nfqueue) Stats() (nfqb.Stats, error) {
	nf.mu.Lock()
	q := nf.q
	nf.mu.Unlock()
	if q == nil {
		return nfqb.Stats{}, ErrNotRegistered
	}
	return q.Stats()
}

// SetOption takes go-nfqueue's netlink options (github.com/mdlayher/netlink
// ConnOption values): NoENOBUFS is applied at Register; the others are
// refused.
func (nf *Nfqueue) SetOption(o interface{}, enable bool) error {
	v := reflect.ValueOf(o)
	if v.Kind() < reflect.Int || v.Kind() > reflect.Int64 {
		return fmt.Errorf("nfqueue: option %v: %w", o, syscall.ENOPROTOOPT)
	}
	const noENOBUFS = 2 // netlink.NoENOBUFS
	if v.Int() != noENOBUFS {
		return fmt.Errorf("nfqueue: option %v: %w", o, syscall.ENOPROTOOPT)
	}
	nf.mu.Lock()
	defer nf.mu.Unlock()
	if nf.q != nil {
		return fmt.Errorf("nfqueue: set options before Register: %w", syscall.EBUSY)
	}
	nf.noENOBUFS = enable
	return nil
}

// Register calls fn for each packet until ctx is done, fn returns other
// than 0, or a receive error other than a socket overflow (ENOBUFS, which
// is logged: the packets the kernel could not hand over were dropped by
// it, the queue goes on).
func (nf *Nfqueue) Register(ctx context.Context, fn HookFunc) error {
	return nf.RegisterWithErrorFunc(ctx, fn, func(err error) int {
		var de *nfqb.DecisionError
		if errors.Is(err, syscall.ENOBUFS) || errors.As(err, &de) {
			nf.logger.Errorf("nfqueue: %v", err)
			return 0
		}
		nf.logger.Errorf("Could not receive message: %v", err)
		return 1
	})
}

// RegisterWithErrorFunc binds the queue and calls fn for each packet, in a
// goroutine of its own, until ctx is done or fn or errfn return other than
// 0. errfn sees receive errors (ENOBUFS included) and the verdicts the
// library refused (a *nfqb.DecisionError: an unknown id, a second
// verdict).
func (nf *Nfqueue) RegisterWithErrorFunc(ctx context.Context, fn HookFunc, errfn ErrorFunc) error {
	c := &nf.cfg
	switch c.Copymode {
	case NfQnlCopyMeta, NfQnlCopyPacket:
	default:
		return fmt.Errorf("nfqueue: copy mode %d: NfQnlCopyNone drops every packet: %w", c.Copymode, syscall.EINVAL)
	}
	nf.mu.Lock()
	defer nf.mu.Unlock()
	if nf.q != nil {
		return fmt.Errorf("nfqueue: queue %d: already registered: %w", c.NfQueue, syscall.EBUSY)
	}
	q, err := nfqb.Open(&nfqb.Config{
		Queue:         c.NfQueue,
		NetNS:         c.NetNS,
		CopyMode:      c.Copymode,
		CopyRange:     c.MaxPacketLen,
		MaxQueueLen:   c.MaxQueueLen,
		Flags:         c.Flags,
		FlagsMask:     nfQaCfgFlagMax - 1,
		IDTable:       true,
		IgnoreENOBUFS: nf.noENOBUFS,
	})
	if err != nil {
		return fmt.Errorf("could not bind to requested queue %d: %w", c.NfQueue, err)
	}
	nf.q = q
	if nf.stuck == nil {
		nf.stuck = time.AfterFunc(time.Hour, nf.unstick)
		nf.stuck.Stop()
	}
	ictx, cancel := context.WithCancel(ctx)
	nf.cancel = cancel
	nf.bell = make(chan struct{}, 1)
	stop := make(chan struct{})
	nf.wg.Add(2)
	go func() {
		defer nf.wg.Done()
		nf.hook(fn, errfn, q, stop)
	}()
	go func() {
		defer nf.wg.Done()
		defer close(stop)
		defer cancel()
		err := q.Run(ictx, nf.receive, func(err error) bool {
			return errfn(err) != 0
		})
		if err != nil {
			nf.logger.Errorf("nfqueue: %v", err)
		}
	}()
	return nil
}

// vals holds the values an Attribute of a batch points to.
type vals struct {
	a                                  Attribute
	h                                  nfqb.Handle
	ts                                 time.Time
	payload, l2, hwaddr, ct, skb, exp  []byte
	secctx                             string
	id, mark, indev, outdev, pin, pout uint32
	caplen, uid, gid, ctinfo, prio     uint32
	hwproto                            uint16
	hook                               uint8
}

// hbatch is a batch handed from the receiving goroutine to the hook's.
type hbatch struct {
	vs          []vals
	first, last uint32
}

// receive is Run's function, on the receiving goroutine (the library's
// owner, which must go on sending the verdicts of every goroutine while
// the hook runs: it never waits for the hook): it copies the batch out
// of the library's buffers and queues it for the hook's goroutine.
func (nf *Nfqueue) receive(b *nfqb.Batch) {
	ps := b.Packets
	n := len(ps)
	if n == 0 {
		return
	}
	// the batch's values and bytes: a few allocations per batch, kept
	// alive by the Attributes the program keeps
	vs := make([]vals, n)
	size := 0
	for i := range ps {
		p := &ps[i]
		size += len(p.Payload) + len(p.L2Hdr) + len(p.HwAddr) + len(p.Ct) + len(p.Exp)
		if p.Has&nfqb.HasSkbInfo != 0 {
			size += 4
		}
	}
	buf := make([]byte, size)
	off := 0
	take := func(src []byte) []byte {
		k := copy(buf[off:], src)
		s := buf[off : off+k : off+k]
		off += k
		return s
	}
	for i := range ps {
		vs[i].a = attribute(&vs[i], &ps[i], take)
		vs[i].h = ps[i].Handle
	}
	nf.mu.Lock()
	nf.hq = append(nf.hq, &hbatch{vs: vs, first: ps[0].ID, last: ps[n-1].ID})
	nf.mu.Unlock()
	select {
	case nf.bell <- struct{}{}:
	default:
	}
}

// hook is the hook's goroutine: it calls fn for each packet, and sends
// the verdicts fn gave for the packets of its batch in one call after it.
func (nf *Nfqueue) hook(fn HookFunc, errfn ErrorFunc, q *nfqb.Queue, stop <-chan struct{}) {
	for {
		select {
		case <-nf.bell:
		case <-stop:
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			nf.mu.Lock()
			if len(nf.hq) == 0 {
				nf.mu.Unlock()
				break
			}
			hb := nf.hq[0]
			nf.hq[0] = nil
			nf.hq = nf.hq[1:]
			nf.mu.Unlock()
			if !nf.runBatch(hb, fn, errfn, q) {
				nf.cancel()
				return
			}
		}
	}
}

// runBatch calls fn for each packet of hb; false when fn said stop.
func (nf *Nfqueue) runBatch(hb *hbatch, fn HookFunc, errfn ErrorFunc, q *nfqb.Queue) bool {
	vs := hb.vs
	n := len(vs)
	nf.mu.Lock()
	nf.dispatching, nf.first, nf.last = true, hb.first, hb.last
	nf.mu.Unlock()
	goOn := true
	for i := range vs {
		if fn(vs[i].a) != 0 {
			goOn = false
			break
		}
	}
	nf.mu.Lock()
	nf.dispatching = false
	nf.stuck.Stop()
	pend := nf.pending
	nf.pending = nf.spare[:0]
	nf.mu.Unlock()
	for k := range pend {
		// by handle: the packet is in this batch
		d := &pend[k]
		j := int(d.ID - hb.first)
		if j < 0 || j >= n || vs[j].id != d.ID {
			for j = 0; j < n && vs[j].id != d.ID; j++ {
			}
		}
		if j < n {
			d.Handle = vs[j].h
		}
	}
	if len(pend) > 0 {
		if err := q.Decide(pend); err != nil && !errors.Is(err, nfqb.ErrClosed) {
			for k := range pend {
				if pend[k].Err != 0 && errfn(&nfqb.DecisionError{ID: pend[k].ID, Err: syscall.Errno(pend[k].Err)}) != 0 {
					goOn = false
				}
			}
		}
	}
	nf.spare = pend[:0]
	return goOn
}

func attribute(v *vals, p *nfqb.Packet, take func([]byte) []byte) Attribute {
	var a Attribute
	v.id, v.hook, v.hwproto = p.ID, p.Hook, p.HwProtocol
	a.PacketID, a.Hook, a.HwProtocol = &v.id, &v.hook, &v.hwproto
	h := p.Has
	if h&nfqb.HasPayload != 0 {
		v.payload = take(p.Payload)
		a.Payload = &v.payload
	}
	if h&nfqb.HasMark != 0 {
		v.mark = p.Mark
		a.Mark = &v.mark
	}
	if h&nfqb.HasTimestamp != 0 {
		v.ts = time.Unix(0, p.Timestamp)
		a.Timestamp = &v.ts
	}
	if h&nfqb.HasInDev != 0 {
		v.indev = p.InDev
		a.InDev = &v.indev
	}
	if h&nfqb.HasOutDev != 0 {
		v.outdev = p.OutDev
		a.OutDev = &v.outdev
	}
	if h&nfqb.HasPhysInDev != 0 {
		v.pin = p.PhysInDev
		a.PhysInDev = &v.pin
	}
	if h&nfqb.HasPhysOutDev != 0 {
		v.pout = p.PhysOutDev
		a.PhysOutDev = &v.pout
	}
	if h&nfqb.HasHwAddr != 0 {
		v.hwaddr = take(p.HwAddr)
		a.HwAddr = &v.hwaddr
	}
	if h&nfqb.HasCapLen != 0 {
		v.caplen = p.CapLen
		a.CapLen = &v.caplen
	}
	if h&nfqb.HasUID != 0 {
		v.uid = p.UID
		a.UID = &v.uid
	}
	if h&nfqb.HasGID != 0 {
		v.gid = p.GID
		a.GID = &v.gid
	}
	if h&nfqb.HasSecCtx != 0 {
		v.secctx = strings.TrimSuffix(string(p.SecCtx), "\x00")
		a.SecCtx = &v.secctx
	}
	if h&nfqb.HasL2Hdr != 0 {
		v.l2 = take(p.L2Hdr)
		a.L2Hdr = &v.l2
	}
	if h&nfqb.HasCt != 0 {
		v.ct = take(p.Ct)
		a.Ct = &v.ct
	}
	if h&nfqb.HasCtInfo != 0 {
		v.ctinfo = p.CtInfo
		a.CtInfo = &v.ctinfo
	}
	if h&nfqb.HasSkbInfo != 0 {
		var be [4]byte
		binary.BigEndian.PutUint32(be[:], p.SkbInfo)
		v.skb = take(be[:])
		a.SkbInfo = &v.skb
	}
	if h&nfqb.HasExp != 0 {
		v.exp = take(p.Exp)
		a.Exp = &v.exp
	}
	if h&nfqb.HasPriority != 0 {
		v.prio = p.Priority
		a.SkbPrio = &v.prio
	}
	return a
}

func verdictOf(verdict int) (uint32, bool) {
	switch verdict {
	case NfDrop:
		return nfqb.Drop, true
	case NfAccept:
		return nfqb.Accept, true
	case NfQeueue:
		return nfqb.ToQueue, true
	case NfRepeat:
		return nfqb.Repeat, true
	}
	return 0, false
}

// setVerdict records the verdict of a packet of the batch the hook runs
// for (applied with the next receive), or gives it now (one cgo call).
func (nf *Nfqueue) setVerdict(id uint32, verdict int, d nfqb.Decision, payload []byte, withPayload bool, labels *[16]byte) error {
	v, ok := verdictOf(verdict)
	if !ok {
		return ErrInvalidVerdict
	}
	d.Verdict = v
	d.ID = id
	nf.mu.Lock()
	q := nf.q
	if q == nil {
		nf.mu.Unlock()
		return ErrNotRegistered
	}
	if nf.dispatching && !withPayload && labels == nil && id-nf.first <= nf.last-nf.first {
		if len(nf.pending) == 0 {
			nf.stuck.Reset(stuckAfter)
		}
		nf.pending = append(nf.pending, d)
		nf.mu.Unlock()
		return nil
	}
	nf.mu.Unlock()
	if labels != nil {
		return q.VerdictByIDLabels(id, d, payload, withPayload, labels)
	}
	return q.VerdictByID(id, d, payload, withPayload)
}

// SetVerdict gives packet id its verdict.
func (nf *Nfqueue) SetVerdict(id uint32, verdict int) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{}, nil, false, nil)
}

// SetVerdictWithMark gives packet id its verdict and sets its mark.
func (nf *Nfqueue) SetVerdictWithMark(id uint32, verdict, mark int) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{Flags: nfqb.FlagMark, Mark: uint32(mark)}, nil, false, nil)
}

// SetVerdictWithConnMark gives packet id its verdict and sets the mark of
// its conntrack entry (needs nf_conntrack_netlink in the kernel).
func (nf *Nfqueue) SetVerdictWithConnMark(id uint32, verdict, mark int) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{Flags: nfqb.FlagCtMark, CtMark: uint32(mark)}, nil, false, nil)
}

// SetVerdictModPacket gives packet id its verdict and replaces it by
// packet (copied before the call returns).
func (nf *Nfqueue) SetVerdictModPacket(id uint32, verdict int, packet []byte) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{}, packet, true, nil)
}

// SetVerdictModPacketWithMark is SetVerdictModPacket with a packet mark.
func (nf *Nfqueue) SetVerdictModPacketWithMark(id uint32, verdict, mark int, packet []byte) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{Flags: nfqb.FlagMark, Mark: uint32(mark)}, packet, true, nil)
}

// SetVerdictModPacketWithConnMark is SetVerdictModPacket with a conntrack
// mark.
func (nf *Nfqueue) SetVerdictModPacketWithConnMark(id uint32, verdict, mark int, packet []byte) error {
	return nf.setVerdict(id, verdict, nfqb.Decision{Flags: nfqb.FlagCtMark, CtMark: uint32(mark)}, packet, true, nil)
}

// SetVerdictWithLabel gives packet id its verdict and sets the labels
// of its conntrack entry (16 bytes).
func (nf *Nfqueue) SetVerdictWithLabel(id uint32, verdict int, label []byte) error {
	return nf.SetVerdictWithOption(id, verdict, WithLabel(label))
}

// SetVerdictModPacketWithLabel is SetVerdictModPacket with conntrack
// labels.
func (nf *Nfqueue) SetVerdictModPacketWithLabel(id uint32, verdict int, label []byte, packet []byte) error {
	return nf.SetVerdictWithOption(id, verdict, WithAlteredPacket(packet), WithLabel(label))
}

// SetVerdictBatch gives verdict to every packet handed out with an id up
// to id and not decided yet (the packets still in the kernel's queue are
// not touched: they come to the hook). Applied by the receiving goroutine
// after the hook returns (or at once if it waits for packets).
func (nf *Nfqueue) SetVerdictBatch(id uint32, verdict int) error {
	v, ok := verdictOf(verdict)
	if !ok || v == nfqb.ToQueue {
		return ErrInvalidVerdict
	}
	nf.mu.Lock()
	q := nf.q
	nf.mu.Unlock()
	if q == nil {
		return ErrNotRegistered
	}
	return q.DecideUpTo(id, v)
}

// VerdictOption is an option of SetVerdictWithOption.
type VerdictOption func(*verdictOptions) error

type verdictOptions struct {
	d        nfqb.Decision
	payload  []byte
	modified bool
	labels   *[16]byte
}

// WithMark sets the packet's mark.
func WithMark(mark uint32) VerdictOption {
	return func(o *verdictOptions) error {
		o.d.Flags |= nfqb.FlagMark
		o.d.Mark = mark
		return nil
	}
}

// WithConnMark sets the mark of the packet's conntrack entry.
func WithConnMark(mark uint32) VerdictOption {
	return func(o *verdictOptions) error {
		o.d.Flags |= nfqb.FlagCtMark
		o.d.CtMark = mark
		return nil
	}
}

// WithLabel sets the labels of the packet's conntrack entry (16 bytes).
func WithLabel(label []byte) VerdictOption {
	return func(o *verdictOptions) error {
		if len(label) != 16 {
			return fmt.Errorf("conntrack CTA_LABELS must be 16 bytes, got %d", len(label))
		}
		var l [16]byte
		copy(l[:], label)
		o.labels = &l
		return nil
	}
}

// WithAlteredPacket replaces the packet.
func WithAlteredPacket(packet []byte) VerdictOption {
	return func(o *verdictOptions) error {
		o.payload, o.modified = packet, true
		return nil
	}
}

// SetVerdictWithOption gives packet id its verdict with the options.
func (nf *Nfqueue) SetVerdictWithOption(id uint32, verdict int, options ...VerdictOption) error {
	var o verdictOptions
	for _, opt := range options {
		if err := opt(&o); err != nil {
			return err
		}
	}
	return nf.setVerdict(id, verdict, o.d, o.payload, o.modified, o.labels)
}
