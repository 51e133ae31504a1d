/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue (queue.c): open, configure, close, hand on; and the struct that
 * holds the state of every module, each part written by one file:
 *
 *   sk, set, shut    queue.c     bufs    pkt.c      rx      rx.c
 *   book             book.c      tx      tx.c       req     req.c
 *   pace             pace.c      loop    loop.c     post    verdict.c
 *   wake             loop.c
 *   ctr              the counters: each one by the file that counts it
 *                    (late_verdicts from any thread, the rest from the
 *                    owner's)
 *
 * post and wake are written by other threads too: each is on its own cache
 * line, apart from the owner's state.
 */
#ifndef NFQB_QUEUE_H
#define NFQB_QUEUE_H

#include "book.h"
#include "req.h"
#include "loop.h"
#include "pace.h"
#include "rx.h"
#include "settings.h"
#include "tx.h"
#include "verdict.h"

struct nfqb_queue {
	struct nfqb_sock sk;
	struct nfqb_settings set;
	struct nfqb_bufs bufs;
	struct nfqb_rx rx;
	struct nfqb_book book;
	struct nfqb_tx tx;
	struct nfqb_req req;
	struct nfqb_pace pace;
	struct nfqb_loop loop;
	/* the steps' views of the rest (queue.c links them) */
	struct nfqb_book_in book_in;
	struct nfqb_rx_in rx_in;
	struct nfqb_tx_in tx_in;
	struct nfqb_req_in req_in;
	struct nfqb_counters ctr;
	/* other threads read or write these */
	struct nfqb_post post;
	struct nfqb_wake wake;
	_Alignas(64) _Atomic bool shut;	/* nfqb_queue_shutdown() done */
};

/* The memory of a queue with @nbuffers receive buffers, no socket (fd
 * -1), not bound, its messages numbered from @seq + 1 on. NULL with
 * ENOMEM. */
struct nfqb_queue *nfqb_queue_new(uint16_t num, unsigned int nbuffers,
				  uint32_t seq);
/* Give every outstanding packet its verdict, drain the socket, unbind and
 * close the sockets, keep the memory: later verdicts fail with ESHUTDOWN.
 * nfqb_queue_close() frees it. Returns 0 or -1 with errno. */
int nfqb_queue_shutdown(struct nfqb_queue *q);
/* Hand the binding on (see queue.c): every verdict sent, nothing more
 * read, no unbind; returns the socket fd (no longer the queue's) or -1.
 * @anyway: on a failure too the socket is no longer the queue's (nothing
 * more is sent; what was owed stays queued for the next owner). The
 * memory stays until nfqb_queue_close(). */
int nfqb_queue_handover(struct nfqb_queue *q, bool anyway);
/* nfqb_queue_adopt() with @nbuffers receive buffers. */
struct nfqb_queue *nfqb_queue_adopt_n(int fd, uint16_t num,
				      unsigned int nbuffers);
/* Packets read and not handed out yet. */
static inline unsigned int nfqb_queue_nready(const struct nfqb_queue *q)
{
	return q->book.nready;
}

#endif /* NFQB_QUEUE_H */
