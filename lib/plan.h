/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner (plan.c): pure. The book's entries in, the list of verdict
 * messages out, and those messages written (msg.c) into a buffer; no
 * syscalls, no clock, no globals. It reads the book and the decisions and
 * writes only the plan and the buffer (owner: plan.c writes struct
 * nfqb_plan, whose memory the transport keeps).
 */
#ifndef NFQB_PLAN_H
#define NFQB_PLAN_H

#include "book.h"
#include "msg.h"

struct nfqb_plan_in {
	const struct nfqb_book *book;
	const struct nfqb_decision *dflt;	/* the default verdict */
	bool singles;		/* no batches (fallback, coalescer off) */
	bool force;		/* decided packets behind an undecided one go
				 * out too (as singles) */
	uint64_t held_cutoff;	/* ... and so do those decided at or
				 * before this time (latency bound) */
	size_t budget;		/* bytes the messages may take */
};

struct nfqb_plan {
	struct nfqb_item *items;
	unsigned int nitems, cap;
	size_t bytes;
	bool more;		/* stopped at the budget, more to send */
	unsigned int singles;	/* NFQNL_MSG_VERDICT messages written */
	unsigned int batches;	/* NFQNL_MSG_VERDICT_BATCH messages written */
	unsigned int batched;	/* ... and the packets they decide */
	uint32_t held;		/* decided, waiting behind an undecided one */
	uint64_t oldest_held_ns;	/* decision time of the oldest held */
	uint64_t oldest_pending_ns;	/* arrival of the oldest undecided */
};

/* Plan the messages for what is decided. Fills @out (items up to its
 * cap). Returns the number of items. */
unsigned int nfqb_plan(const struct nfqb_plan_in *in, struct nfqb_plan *out);
/* Write the messages of @pl for queue @num into @buf (pl->bytes long at
 * most), numbered from *@seq + 1 on (*@seq: the last one's). Returns the
 * length, and counts the messages in pl->singles, pl->batches, and
 * pl->batched. */
size_t nfqb_plan_write(struct nfqb_plan *pl, void *buf, uint32_t *seq,
		       uint16_t num);

#endif /* NFQB_PLAN_H */
