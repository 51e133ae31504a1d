/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transport (tx.c): the only code that sends verdicts. It plans (plan.c)
 * what is decided, builds the messages into its one send buffer, sends them
 * in one sendmsg, and has the book release what the kernel took.
 *
 * Owner: tx.c alone writes struct nfqb_tx (owner thread).
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
	uint32_t posted_seen;	/* decisions posted at the last flush */
	uint64_t unsent_since;	/* decisions first seen unsent */
	uint64_t held_due;	/* latency due of held decisions */
};

int nfqb_tx_alloc(struct nfqb_tx *t, uint32_t seq);
void nfqb_tx_free(struct nfqb_tx *t);
/* Plan and send what may be sent. Returns the number of verdict messages
 * the kernel took, or -1 with errno: EAGAIN when a send failed for now
 * (decisions kept, retried), else the send's error. */
int nfqb_tx_flush(struct nfqb_queue *q, enum nfqb_flush_reason why,
		  bool force, uint64_t now);
/* Decisions posted since the last flush: how many (0: none), and since
 * when the owner knows of them (set at @now the first time). */
uint32_t nfqb_tx_unsent(const struct nfqb_queue *q);
uint64_t nfqb_tx_unsent_since(struct nfqb_queue *q, uint64_t now);

#endif /* NFQB_TX_H */
