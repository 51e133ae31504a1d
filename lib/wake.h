/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waking a queue's owner (wake.c): the eventfd that other threads write
 * when they post a decision or interrupt the owner, and whether the
 * calling thread is the owner. Below the queue, so that deciding
 * (verdict.c) never calls back into the receive loop.
 *
 * Owner: struct nfqb_wake is written by any thread (atomics, on a cache
 * line of their own): .pending set by wake.c and cleared by loop.c,
 * .owner and .interrupt by loop.c.
 */
#ifndef NFQB_WAKE_H
#define NFQB_WAKE_H

#include "internal.h"

struct nfqb_wake {
	_Alignas(64) _Atomic bool pending;	/* eventfd written, not read */
	_Atomic bool interrupt;		/* nfqb_queue_interrupt() */
	_Atomic unsigned long owner;	/* pthread_self() of the last
					 * nfqb_recv() */
};

/* Write eventfd @evfd unless it is written and not read yet. Any thread,
 * async-signal-safe. */
void nfqb_wake_ring(struct nfqb_wake *w, int evfd);
/* Is the calling thread the owner? */
bool nfqb_wake_is_owner(const struct nfqb_wake *w);

#endif /* NFQB_WAKE_H */
