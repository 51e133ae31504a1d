// SPDX-License-Identifier: LGPL-2.1-or-later

package nfqueue

import (
	"errors"
	"time"
)

// Attribute is one packet as go-nfqueue hands it over: each field points to
// its value, or is nil when the kernel did not send it. The values are the
// packet's own (copied from the library's buffer), valid for as long as
// the program keeps them.
type Attribute struct {
	PacketID   *uint32
	Hook       *uint8
	Timestamp  *time.Time
	Mark       *uint32
	InDev      *uint32
	PhysInDev  *uint32
	OutDev     *uint32
	PhysOutDev *uint32
	Payload    *[]byte
	CapLen     *uint32
	UID        *uint32
	GID        *uint32
	SecCtx     *string
	L2Hdr      *[]byte
	HwAddr     *[]byte
	HwProtocol *uint16
	Ct         *[]byte
	CtInfo     *uint32
	SkbInfo    *[]byte
	Exp        *[]byte
	SkbPrio    *uint32
}

// HookFunc is called with each packet; a return other than 0 stops the
// queue.
type HookFunc func(a Attribute) int

// ErrorFunc is called with the errors of receiving; a return other than 0
// stops the queue.
type ErrorFunc func(e error) int

// Config says which queue to bind and how, as go-nfqueue's.
type Config struct {
	// NetNS, if not 0, is a file descriptor of the network namespace the
	// queue is bound in.
	NetNS int

	// NfQueue is the queue number.
	NfQueue uint16
	// MaxQueueLen is how many packets the kernel may hold for the queue
	// (0: the kernel's default, 1024).
	MaxQueueLen uint32

	// MaxPacketLen is the copy range with NfQnlCopyPacket (0: all).
	MaxPacketLen uint32

	// Copymode: NfQnlCopyPacket or NfQnlCopyMeta (NfQnlCopyNone, in
	// which the kernel drops every packet, is refused by Register).
	Copymode uint8

	// Flags: NfQaCfgFlag* (exactly these are set on the queue).
	Flags uint32

	// AfFamily is accepted and ignored (the kernel binds queues for every
	// family since Linux 3.8).
	AfFamily uint8

	// Deprecated: Cancel the context passed to RegisterWithErrorFunc() or
	// Register() instead. Ignored.
	ReadTimeout time.Duration

	// WriteTimeout is ignored: verdicts are sent by the library, which
	// retries a socket that cannot take them.
	WriteTimeout time.Duration

	// Logger receives the errors nobody else sees.
	Logger Logger
}

// Logger is where the package logs.
type Logger interface {
	Debugf(format string, args ...interface{})
	Errorf(format string, args ...interface{})
}

// Errors, as go-nfqueue's.
var (
	ErrRecvMsg        = errors.New("received error message")
	ErrUnexpMsg       = errors.New("received unexpected message from kernel")
	ErrInvFlag        = errors.New("invalid Flag")
	ErrNotLinux       = errors.New("not implemented for OS other than linux")
	ErrInvalidVerdict = errors.New("invalid verdict")
)

// Queue flags.
const (
	NfQaCfgFlagFailOpen  = (1 << iota)
	NfQaCfgFlagConntrack = (1 << iota)
	NfQaCfgFlagGSO       = (1 << iota)
	NfQaCfgFlagUIDGid    = (1 << iota)
	NfQaCfgFlagSecCx     = (1 << iota)
	nfQaCfgFlagMax       = (1 << iota)
)

// Copy modes.
const (
	NfQnlCopyNone = iota
	NfQnlCopyMeta
	NfQnlCopyPacket
)

// Verdicts.
const (
	NfDrop = iota
	NfAccept
	NfStolen
	NfQeueue
	NfRepeat
)
