/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The receive loop (loop.c): nfqb_recv() and when to flush, linger, sleep
 * and wake up.
 *
 * Owner: loop.c alone writes struct nfqb_loop (owner thread) and struct
 * nfqb_wake; other threads write the latter too (atomics, on a cache line
 * of their own: decisions posted, interrupts).
 */
#ifndef NFQB_LOOP_H
#define NFQB_LOOP_H

#include "pace.h"

struct nfqb_wake {
	_Alignas(64) _Atomic bool pending;	/* eventfd written, not read */
	_Atomic bool interrupt;		/* nfqb_queue_interrupt() */
	_Atomic unsigned long owner;	/* pthread_self() of the last
					 * nfqb_recv() */
};

/* The owner's own. */
struct nfqb_loop {
	uint32_t refusals_told;	/* refused verdicts reported (rx counts
				 * them) */
	int error;		/* a failed send to report (the call that
				 * saw it handed out packets) */
	uint64_t recv_deadline;	/* ns: the running nfqb_recv()'s receive
				 * timeout (0: none) */
};

/* Wake the owner (a decision was posted, or an interrupt). Any thread,
 * async-signal-safe. */
void nfqb_loop_wake(struct nfqb_queue *q);
/* Drain the wake-up eventfd. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q);
/* Is the calling thread the queue's owner (the last to call
 * nfqb_recv())? */
bool nfqb_loop_is_owner(const struct nfqb_queue *q);
/* The wait of a pass (pace.c's nfqb_pace_wait()), with what it reads of
 * @q: the timers, the receive timeout, the free buffers. */
int nfqb_loop_wait(struct nfqb_queue *q, enum nfqb_wait how, uint64_t now);
/* The pool's queue per worker found the socket dry mid-stream: send what
 * may not wait, pause if the linger says so (nfqb_queue_set_linger()),
 * read. 1: packets came, 0: none, -1 with errno. */
int nfqb_loop_linger(struct nfqb_queue *q);

#endif /* NFQB_LOOP_H */
