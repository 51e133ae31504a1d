// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The planner: the book's entries in, the verdict messages for what is
 * decided out. Pure: no syscalls, no clock, no globals; it reads the book
 * and the decisions and writes only the plan.
 *
 * A NFQNL_MSG_VERDICT_BATCH(max, verdict, mark) reaches every packet still
 * queued in the kernel with an id not after max. So:
 *  1. the decided prefix (oldest entry up to the first undecided one) is
 *     cut into runs of equal (verdict, mark); a run of two or more is one
 *     batch with the run's last id, a run of one a single verdict; runs are
 *     planned oldest first, so when the kernel reads a batch every packet
 *     before its run has already been decided by an earlier message of the
 *     same send or of an earlier one the kernel took;
 *  2. a decision a batch cannot carry (payload, priority, queue-to-N) is a
 *     single verdict planned before the batch of its run (the kernel
 *     dequeues it first, so the batch does not reach it);
 *  3. a gap (ids of messages we could not read) ends the run before it and
 *     is planned as one default single verdict per id: no batch is ever
 *     planned across a gap or an undecided packet; unreadable messages
 *     before the first readable id have no lower bound and are the one
 *     exception: nothing was queued to us before them, so one default
 *     batch up to the id before the first readable one decides them;
 *  4. behind the first undecided packet nothing is batched: a decided
 *     packet there waits (to join a batch later) until it is older than
 *     the cutoff or the plan is forced, then goes as a single verdict;
 *  5. the plan stops where the next message would exceed the budget; what
 *     follows is planned by the next call, after this plan was sent.
 * nfqb_plan_write() then writes its messages, in that order.
 */
#include "book.h"
#include "plan.h"

/* A batch walks the kernel's queue from its head while the id is not after
 * its max (serial arithmetic): a run may span at most this many ids. */
#define RUN_SPAN_MAX	0x40000000u

struct run {
	uint32_t n;
	uint32_t first, last;	/* book positions */
	uint32_t first_id, last_id;
	const struct nfqb_decision *d;
};

struct planner {
	const struct nfqb_plan_in *in;
	struct nfqb_plan *out;
	size_t single_size;
	bool stopped;
};

static bool add_item(struct planner *pl, const struct nfqb_item *it)
{
	struct nfqb_plan *out = pl->out;

	if (pl->stopped || out->nitems == out->cap ||
	    out->bytes + it->size > pl->in->budget) {
		pl->stopped = true;
		out->more = true;
		return false;
	}
	out->items[out->nitems++] = *it;
	out->bytes += it->size;
	return true;
}

static size_t decision_size(const struct nfqb_decision *d)
{
	return nfqb_msg_verdict_size(d->flags & NFQB_V_PAYLOAD ?
				     d->payload_len : 0);
}

static bool plan_single(struct planner *pl, uint32_t pos, uint32_t id,
			const struct nfqb_decision *d)
{
	struct nfqb_item it = {
		.type = NFQB_I_SINGLE,
		.first = pos,
		.last = pos,
		.id = id,
		.count = 1,
		.d = d,
		.size = decision_size(d),
	};

	return add_item(pl, &it);
}

static bool plan_run(struct planner *pl, struct run *r)
{
	struct nfqb_item it = {
		.type = NFQB_I_BATCH,
		.first = r->first,
		.last = r->last,
		.id = r->last_id,
		.count = r->n,
		.d = r->d,
		.size = pl->single_size,
	};
	bool ok;

	if (!r->n)
		return true;
	if (r->n == 1)
		ok = plan_single(pl, r->first, r->last_id, r->d);
	else
		ok = add_item(pl, &it);
	r->n = 0;
	return ok;
}

/* As many ids of the gap as fit; the rest in a later plan. */
static bool plan_gap(struct planner *pl, uint32_t pos,
		     const struct nfqb_entry *e)
{
	size_t room = pl->in->budget - pl->out->bytes;
	uint32_t count = e->n;
	struct nfqb_item it = { .type = NFQB_I_GAP, .first = pos, .last = pos,
				.id = e->id, .d = pl->in->dflt };

	if (pl->stopped)
		return false;
	if ((size_t)count * pl->single_size > room)
		count = (uint32_t)(room / pl->single_size);
	if (!count) {
		pl->stopped = true;
		pl->out->more = true;
		return false;
	}
	it.count = count;
	it.size = (size_t)count * pl->single_size;
	if (!add_item(pl, &it))
		return false;
	if (count < e->n) {
		pl->stopped = true;
		pl->out->more = true;
		return false;
	}
	return true;
}

/* Unreadable messages before any readable id (always the book's first
 * entry): one default batch up to the id before the first readable one. */
static bool plan_gap_head(struct planner *pl, uint32_t pos,
			  const struct nfqb_entry *e)
{
	struct nfqb_item it = {
		.type = NFQB_I_BATCH,
		.first = pos,
		.last = pos,
		.id = e->id,
		.count = e->n,
		.d = pl->in->dflt,
		.size = pl->single_size,
	};

	return add_item(pl, &it);
}

static bool run_takes(const struct run *r, uint32_t id,
		      const struct nfqb_decision *d)
{
	if (!r->n || r->d->verdict != d->verdict ||
	    id - r->first_id >= RUN_SPAN_MAX)
		return false;
	if ((r->d->flags & NFQB_V_MARK) != (d->flags & NFQB_V_MARK))
		return false;
	return !(d->flags & NFQB_V_MARK) || r->d->mark == d->mark;
}

/* A decided entry inside the prefix. */
static bool plan_prefix(struct planner *pl, struct run *r, uint32_t pos,
			uint32_t id, const struct nfqb_decision *d)
{
	if (pl->in->singles || (d->flags & NFQB_D_SINGLE))
		return plan_single(pl, pos, id, d);
	if (run_takes(r, id, d)) {
		r->n++;
		r->last = pos;
		r->last_id = id;
		return true;
	}
	if (!plan_run(pl, r))
		return false;
	*r = (struct run){ .n = 1, .first = pos, .last = pos, .first_id = id,
			   .last_id = id, .d = d };
	return true;
}

/* A decided entry behind an undecided one: only single verdicts. */
static bool plan_held(struct planner *pl, uint32_t pos, uint32_t id,
		      const struct nfqb_decision *d, uint64_t decided_ns)
{
	const struct nfqb_plan_in *in = pl->in;
	struct nfqb_plan *out = pl->out;

	if (in->singles || in->force || (d->flags & NFQB_D_SINGLE) ||
	    decided_ns <= in->held_cutoff)
		return plan_single(pl, pos, id, d);
	out->held++;
	if (!out->oldest_held_ns || decided_ns < out->oldest_held_ns)
		out->oldest_held_ns = decided_ns;
	return true;
}

static void note_pending(struct nfqb_plan *out, const struct nfqb_packet *p)
{
	if (!out->oldest_pending_ns || p->arrival_ns < out->oldest_pending_ns)
		out->oldest_pending_ns = p->arrival_ns;
}

/* One entry; false when the plan is full. */
static bool plan_entry(struct planner *pl, struct run *r, bool *prefix,
		       uint32_t pos, const struct nfqb_entry *e)
{
	const struct nfqb_decision *d;
	struct nfqb_packet *p = e->p;
	uint32_t st;

	switch (e->kind) {
	case NFQB_E_DONE:
		return true;
	case NFQB_E_GAP_OPEN:
		if (*prefix && !plan_run(pl, r))
			return false;
		*prefix = false;
		return true;
	case NFQB_E_GAP:
		if (*prefix && !plan_run(pl, r))
			return false;
		return plan_gap(pl, pos, e);
	case NFQB_E_GAP_HEAD:
		return plan_gap_head(pl, pos, e);
	case NFQB_E_DEFAULT:
		d = pl->in->dflt;
		if (*prefix)
			return plan_prefix(pl, r, pos, e->id, d);
		return plan_held(pl, pos, e->id, d, 0);
	}
	st = NFQB_SG_STATE(atomic_load_explicit(&p->sg, memory_order_acquire));
	if (!nfqb_ps_decided(st)) {
		note_pending(pl->out, p);
		if (*prefix && !plan_run(pl, r))
			return false;
		*prefix = false;
		return true;
	}
	if (*prefix)
		return plan_prefix(pl, r, pos, p->id, &p->d);
	return plan_held(pl, pos, p->id, &p->d, p->decided_ns);
}

unsigned int nfqb_plan(const struct nfqb_plan_in *in, struct nfqb_plan *out)
{
	const struct nfqb_book *b = in->book;
	struct planner pl = {
		.in = in,
		.out = out,
		.single_size = nfqb_msg_verdict_size(0),
	};
	struct run r = { 0 };
	bool prefix = true;
	uint32_t i;

	out->nitems = 0;
	out->bytes = 0;
	out->more = false;
	out->held = 0;
	out->oldest_held_ns = 0;
	out->oldest_pending_ns = 0;
	for (i = b->head; i != b->tail; i++)
		if (!plan_entry(&pl, &r, &prefix, i, nfqb_book_at(b, i)))
			break;
	if (!pl.stopped)
		plan_run(&pl, &r);
	return out->nitems;
}

size_t nfqb_plan_write(struct nfqb_plan *pl, void *buf, uint32_t *seq,
		       uint16_t num)
{
	unsigned char *p = buf;
	size_t len = 0;
	unsigned int i;
	uint32_t k;

	pl->singles = pl->batches = pl->batched = 0;
	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];
		const uint32_t *mark = it->d->flags & NFQB_V_MARK ?
				       &it->d->mark : NULL;

		switch (it->type) {
		case NFQB_I_SINGLE:
			len += nfqb_msg_verdict(p + len, ++*seq, num, it->id,
						it->d);
			pl->singles++;
			break;
		case NFQB_I_BATCH:
			len += nfqb_msg_verdict_batch(p + len, ++*seq, num,
						      it->id, it->d->verdict,
						      mark);
			pl->batches++;
			pl->batched += it->count;
			break;
		case NFQB_I_GAP:
			for (k = 0; k < it->count; k++)
				len += nfqb_msg_verdict(p + len, ++*seq, num,
							it->id + k, it->d);
			pl->singles += it->count;
			break;
		}
	}
	return len;
}
