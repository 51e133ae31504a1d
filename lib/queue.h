/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue's life beyond the public API (queue.c), for the worker pool
 * (the layer above) and the tests. struct nfqb_queue is opaque here: its
 * parts and their owners are in queue-int.h, which only the queue's own
 * files include; loop.h has its receive loop's functions.
 *
 * A queue ends in one of two ways, both keeping its memory until
 * nfqb_queue_close() frees it (a late decision meets ESHUTDOWN, not freed
 * memory): it is shut down (every packet decided or given the default and
 * sent, the socket drained, the queue unbound), or handed over (every
 * packet decided or given the default and sent, the binding and the socket
 * handed on). nfqb_queue_close() is shutdown and free, nfqb_queue_detach()
 * handover and free, nfqb_pool_handover() a handover of every queue.
 */
#ifndef NFQB_QUEUE_H
#define NFQB_QUEUE_H

#include "internal.h"

/* The memory of a queue with @nbuffers receive buffers, no socket (fd
 * -1), not bound, its messages numbered from @seq + 1 on. NULL with
 * ENOMEM. */
struct nfqb_queue *nfqb_queue_new(uint16_t num, unsigned int nbuffers,
				  uint32_t seq);
/* nfqb_queue_adopt() with @nbuffers receive buffers. */
struct nfqb_queue *nfqb_queue_adopt_n(int fd, uint16_t num,
				      unsigned int nbuffers);
/* Shut @q down: every outstanding packet its verdict, the socket drained,
 * unbound, the sockets closed; later verdicts fail with ESHUTDOWN. Again:
 * 0, nothing done. Returns 0 or -1 with errno. */
int nfqb_queue_shutdown(struct nfqb_queue *q);
/* Hand the binding on (see queue.c): every verdict sent, nothing more
 * read, no unbind; returns the socket fd (no longer the queue's) or -1.
 * @anyway: on a failure too the socket is no longer the queue's (nothing
 * more is sent; what was owed stays queued for the next owner). */
int nfqb_queue_handover(struct nfqb_queue *q, bool anyway);
/* Packets read and not handed out yet. */
unsigned int nfqb_queue_nready(const struct nfqb_queue *q);
/* Its receive buffers. */
unsigned int nfqb_queue_buffers(const struct nfqb_queue *q);

#endif /* NFQB_QUEUE_H */
