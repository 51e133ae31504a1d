// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build vsbench

package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/libnfq-batch/libnfq-batch/go/nfqb"
)

// recv holds queue num on the native API: every packet of a batch is
// accepted in the batch (one cgo call per batch), counted in seen (first
// closed at the first). It returns the function that closes the queue.
func recv(ctx context.Context, num uint16, seen *int64, first chan struct{}) (func(), error) {
	q, err := nfqb.Open(&nfqb.Config{Queue: num, MaxQueueLen: 8192})
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Run(ctx, func(b *nfqb.Batch) {
			for i := range b.Packets {
				b.Accept(i)
			}
			if atomic.AddInt64(seen, int64(len(b.Packets))) == int64(len(b.Packets)) {
				close(first)
			}
		}, func(error) bool { return false })
	}()
	return func() { q.Close(); <-done }, nil
}
