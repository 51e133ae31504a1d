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
	/* The read sleep (nfqb_queue_set_read_sleep()): the owner sleeps in
	 * the socket's read, not on the eventfd, so a wake-up also sends a
	 * datagram to the socket's own port. in_read: set by loop.c around
	 * the read; poke_failed: a poke was refused (not EAGAIN), the owner
	 * sleeps on the eventfd again; poke_fd and portid: set by queue.c
	 * before the read sleep is first used. */
	_Atomic bool in_read;
	_Atomic bool poke_failed;
	int poke_fd;
	uint32_t portid;
};

/* Write eventfd @evfd unless it is written and not read yet; if this
 * wrote it and the owner sleeps in the read, poke the socket too. Any
 * thread, async-signal-safe. */
void nfqb_wake_ring(struct nfqb_wake *w, int evfd);
/* Send one NLMSG_NOOP from the queue's socket to its own port, without
 * waiting: it ends a read that sleeps, and the read drops it. 0, or -1
 * with errno (EAGAIN, ENOBUFS: the socket's buffer is full, so it is
 * readable anyway; else poke_failed is set). Async-signal-safe. */
int nfqb_wake_poke(struct nfqb_wake *w);
/* Is the calling thread the owner? */
bool nfqb_wake_is_owner(const struct nfqb_wake *w);

#endif /* NFQB_WAKE_H */
