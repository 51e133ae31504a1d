/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The struct of a queue, and who writes each part. Only the files that own
 * the queue include this header: queue.c (its life and settings), loop.c
 * (its receive loop), verdict.c (decisions, from any thread) and large.c
 * (the large-packet policy at hand-out), the files of the public
 * functions on a queue. The steps never see it: each
 * takes its own state and its view of the rest (the *_in structs, which
 * queue.c links once), and the pool sees only the functions of queue.h
 * and loop.h.
 *
 *   sk, set      queue.c     open, adopt, hand over; the setters
 *   shut         queue.c     shutdown, hand over (any thread)
 *   *_in         queue.c     the steps' views (link_views())
 *   bufs         pkt.c       rx      rx.c       book    book.c
 *   tx           tx.c        req     req.c      pace    pace.c
 *   loop         loop.c      post    verdict.c
 *   wake         wake.c (any thread; the owner by loop.c)
 *   large        large.c
 *   ctr          each counter by the file that counts it (late_verdicts
 *                from any thread, the rest from the owner's)
 *
 * post, wake and shut are written by other threads too: each is on its
 * own cache line, apart from the owner's state.
 */
#ifndef NFQB_QUEUE_INT_H
#define NFQB_QUEUE_INT_H

#include "book.h"
#include "pace.h"
#include "post.h"
#include "req.h"
#include "rx.h"
#include "settings.h"
#include "tx.h"
#include "wake.h"

/* The receive loop's own (loop.c, owner thread). */
struct nfqb_loop {
	uint32_t refusals_told;	/* refused verdicts reported (rx counts
				 * them) */
	int error;		/* a failed send to report (the call that
				 * saw it handed out packets) */
	uint64_t recv_deadline;	/* ns: the running nfqb_recv()'s receive
				 * timeout (0: none) */
};

/* The large-packet policy's own (large.c, owner thread). */
struct nfqb_large_state {
	bool gso_asked;		/* GSO off asked for: not asked again */
};

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
	struct nfqb_large_state large;
	/* the steps' views of the rest */
	struct nfqb_book_in book_in;
	struct nfqb_rx_in rx_in;
	struct nfqb_tx_in tx_in;
	struct nfqb_req_in req_in;
	struct nfqb_pace_in pace_in;
	struct nfqb_counters ctr;
	/* other threads read or write these */
	struct nfqb_post post;
	struct nfqb_wake wake;
	_Alignas(64) _Atomic bool shut;	/* shut down or handed over */
};

#endif /* NFQB_QUEUE_INT_H */
