/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decisions (verdict.c), from any thread: recorded in the descriptor
 * (pkt.c), counted here for the owner to send.
 *
 * Owner: verdict.c alone writes struct nfqb_post; any thread does (atomics,
 * on a cache line of their own); the owner reads it.
 */
#ifndef NFQB_VERDICT_H
#define NFQB_VERDICT_H

#include "internal.h"

struct nfqb_post {
	_Alignas(64) _Atomic uint32_t posted;	/* decisions recorded */
	_Atomic uint32_t inflight;	/* other threads inside a decision */
};

/* @n decisions were recorded (the library's defaults, owner thread). */
static inline void nfqb_post_add(struct nfqb_post *po, uint32_t n)
{
	atomic_fetch_add_explicit(&po->posted, n, memory_order_seq_cst);
}

static inline uint32_t nfqb_posted(const struct nfqb_post *po)
{
	return atomic_load_explicit(&po->posted, memory_order_acquire);
}

/* Wait until no other thread is inside a decision on the queue. */
void nfqb_post_quiesce(struct nfqb_post *po);

#endif /* NFQB_VERDICT_H */
