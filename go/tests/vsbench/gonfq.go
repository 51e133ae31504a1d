// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build vsbench

package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	nfqueue "github.com/libnfq-batch/libnfq-batch/go/nfqueue"
)

// recv holds queue num on the go-nfqueue API: the hook accepts every
// packet with SetVerdict, counting them in seen (first closed at the
// first). It returns the function that closes the queue.
func recv(ctx context.Context, num uint16, seen *int64, first chan struct{}) (func(), error) {
	nf, err := nfqueue.Open(&nfqueue.Config{
		NfQueue:      num,
		MaxPacketLen: 0xFFFF,
		MaxQueueLen:  8192,
		Copymode:     nfqueue.NfQnlCopyPacket,
	})
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	err = nf.RegisterWithErrorFunc(ctx, func(a nfqueue.Attribute) int {
		if atomic.AddInt64(seen, 1) == 1 {
			close(first)
		}
		_ = nf.SetVerdict(*a.PacketID, nfqueue.NfAccept)
		return 0
	}, func(e error) int {
		fmt.Fprintln(os.Stderr, "error:", e)
		return 0
	})
	if err != nil {
		nf.Close()
		return nil, fmt.Errorf("register: %w", err)
	}
	return func() { nf.Close() }, nil
}
