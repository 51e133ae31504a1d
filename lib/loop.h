/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue's receive loop (loop.c): nfqb_recv() runs the steps; these are
 * its functions for the worker pool. struct nfqb_queue is opaque here (queue-int.h).
 */
#ifndef NFQB_LOOP_H
#define NFQB_LOOP_H

#include "internal.h"

/* The eventfd that wakes the owner (decisions posted by other threads,
 * interrupts); nfqb_loop_clear_wakeup() drains it. */
int nfqb_loop_wakeup_fd(const struct nfqb_queue *q);
void nfqb_loop_clear_wakeup(struct nfqb_queue *q);
/* Packets stream in (pace.c's reckoning): a dry socket is a pause in the
 * stream, worth a linger. */
bool nfqb_loop_streaming(const struct nfqb_queue *q);
/* The pool's queue per worker found the socket dry mid-stream: send what
 * may not wait, pause if the linger says so (nfqb_queue_set_linger()),
 * read. 1: packets came, 0: none, -1 with errno. */
int nfqb_loop_linger(struct nfqb_queue *q);

#endif /* NFQB_LOOP_H */
