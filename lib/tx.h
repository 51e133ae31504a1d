/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transport (tx.c): the only code that sends verdicts. It has the
 * planner (plan.c) plan what is decided and write the messages into its one
 * send buffer, sends them in one sendmsg, and has the book drop what the
 * kernel took.
 *
 * Owner: tx.c alone writes struct nfqb_tx (owner thread). Its functions
 * take it and their view of the rest (struct nfqb_tx_in): the socket,
 * settings and posted decisions read, the book planned from (const) and
 * told what the kernel took through its functions, the counters
 * (send_calls is counted here alone, for every datagram sent).
 */
#ifndef NFQB_TX_H
#define NFQB_TX_H

#include "plan.h"

/* The send buffer: one sendmsg carries at most this much. */
#define NFQB_TX_SIZE		(128 * 1024)
/* Retry of a failed verdict send: first after this, doubling to the max. */
#define NFQB_RETRY_MIN_NS	(500 * 1000ull)
#define NFQB_RETRY_MAX_NS	(64 * 1000 * 1000ull)

enum nfqb_flush_reason {
	NFQB_FLUSH_LIMIT,
	NFQB_FLUSH_IDLE,
	NFQB_FLUSH_LATENCY,
	NFQB_FLUSH_EXPLICIT,
	NFQB_FLUSH_CLOSE,
};

struct nfqb_tx {
	unsigned char *buf;	/* NFQB_TX_SIZE bytes */
	struct nfqb_plan plan;
	uint32_t seq;		/* of the last verdict message */
	uint64_t retry_at;	/* a failed send is retried from then on */
	uint64_t backoff_ns;
	bool failing;		/* the last send failed */
	uint32_t posted_seen;	/* decisions posted at the last flush
				 * (nfqb_tx_posted()) */
	uint64_t unsent_since;	/* decisions first seen unsent */
	uint64_t held_due;	/* latency due of held decisions */
	uint64_t due;		/* the next flush due, as of the last look
				 * (nfqb_tx_flush_due()), 0: none */
	uint32_t flags_off;	/* queue flags to turn off: a configuration
				 * message the next send carries after its
				 * verdicts, no acknowledgement asked (the
				 * large-packet policy's GSO) */
};

/* What the transport reads of the queue, and the owners it writes
 * through: its caller's view (the queue builds it once). */
struct nfqb_sock;
struct nfqb_settings;
struct nfqb_post;
struct nfqb_tx_in {
	const struct nfqb_sock *sk;	/* fd, num */
	const struct nfqb_settings *set;	/* default_verdict, coalesce,
					 * batch_limit, latency_us */
	const struct nfqb_post *post;	/* the decisions posted */
	struct nfqb_book *book;		/* book.c's: planned from; what the
					 * kernel took is done
					 * (nfqb_book_sent()) */
	const struct nfqb_book_in *book_in;	/* ... with its view */
	struct nfqb_counters *ctr;
};

/* Numbered from @seq + 1 on. */
int nfqb_tx_alloc(struct nfqb_tx *t, uint32_t seq);
void nfqb_tx_free(struct nfqb_tx *t);
/* Plan and send what may be sent. Returns the number of verdict messages
 * the kernel took, or -1 with errno: EAGAIN when a send failed for now
 * (decisions kept, retried), else the send's error. */
int nfqb_tx_flush(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		  enum nfqb_flush_reason why, bool force, uint64_t now);
/* Flush if it is due: the retry of a failed send, held decisions at the
 * latency bound, decisions posted up to the batch limit or the latency
 * bound, or any decision at all unless @hold (decisions may wait for a
 * batch: packets keep coming and no flow waits on us), or queue flags to
 * turn off (@flags_off, added to those not sent yet: due at once). Sets
 * .due. Returns as nfqb_tx_flush(), 0 if nothing was due. */
int nfqb_tx_flush_due(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		      uint64_t now, bool hold, uint32_t flags_off);
/* When a flush is due next, counting the decisions posted by now (0:
 * none). */
uint64_t nfqb_tx_due(const struct nfqb_tx *t, const struct nfqb_tx_in *in,
		     uint64_t now);
/* Decisions posted so far, to send: the application's (any thread) and
 * the defaults the book gave. */
uint32_t nfqb_tx_posted(const struct nfqb_tx_in *in);
/* Send one datagram of @len bytes to the kernel on @fd, counted in
 * send_calls: every datagram a queue sends goes through here (verdicts,
 * and req.c's requests). 0, or -1 with errno. */
int nfqb_tx_send(int fd, const void *buf, size_t len,
		 struct nfqb_counters *ctr);

#endif /* NFQB_TX_H */
