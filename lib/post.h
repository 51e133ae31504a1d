/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decisions posted: verdict.c records a decision in the descriptor
 * (pkt.c), from any thread, and counts it here for the owner to send
 * (tx.c reads the count).
 *
 * Owner: verdict.c alone writes struct nfqb_post: .own from the owner
 * thread, the rest from any thread (atomics, on a cache line of their
 * own); the owner reads it.
 */
#ifndef NFQB_POST_H
#define NFQB_POST_H

#include "internal.h"

struct nfqb_post {
	uint32_t own;		/* decisions the owner recorded (owner thread
				 * only: no atomic) */
	_Alignas(64) _Atomic uint32_t posted;	/* ... other threads did */
	_Atomic uint32_t inflight;	/* other threads inside a decision */
};

/* Decisions recorded so far, by every thread. */
static inline uint32_t nfqb_post_count(const struct nfqb_post *po)
{
	return atomic_load_explicit(&po->posted, memory_order_acquire) +
	       po->own;
}

/* Wait until no other thread is inside a decision on the queue. */
void nfqb_post_quiesce(struct nfqb_post *po);

#endif /* NFQB_POST_H */
