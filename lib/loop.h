/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The receive loop (loop.c): nfqb_recv() and when to flush, linger, sleep
 * and wake up.
 *
 * Owner: loop.c alone writes struct nfqb_wake; other threads do too
 * (atomics, on a cache line of their own: decisions posted, interrupts).
 */
#ifndef NFQB_LOOP_H
#define NFQB_LOOP_H

#include "internal.h"

/* A blocked nfqb_recv() holding no free buffer waits this long for a
 * decision before failing with ENOSPC. */
#define NFQB_EXHAUSTED_WAIT_MS	1000

struct nfqb_wake {
	_Alignas(64) _Atomic bool pending;	/* eventfd written, not read */
	_Atomic bool interrupt;		/* nfqb_queue_interrupt() */
	_Atomic unsigned long owner;	/* pthread_self() of the last
					 * nfqb_recv() */
};

/* Wake the owner (a decision was posted, or an interrupt). Any thread,
 * async-signal-safe. */
void nfqb_loop_wake(struct nfqb_queue *q);
/* Drain the wake-up eventfd. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q);
/* Is the calling thread the queue's owner (the last to call
 * nfqb_recv())? */
bool nfqb_loop_is_owner(const struct nfqb_queue *q);
/* ms until the owner must run (latency bound, timeout, retry), -1 never */
int nfqb_loop_next_timeout(const struct nfqb_queue *q, uint64_t now);
/* Run the timers as if it were @now: verdict timeout, latency bound of
 * held decisions (tests, and nfqb_flush()). Returns 0 or -1. */
int nfqb_loop_run_timers(struct nfqb_queue *q, uint64_t now);
/* While packets stream in, pause briefly and take what came meanwhile
 * (see nfqb_queue_set_linger()). 1: got some, 0: none, -1: error. */
int nfqb_loop_linger(struct nfqb_queue *q, unsigned int max);

#endif /* NFQB_LOOP_H */
