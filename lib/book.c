// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The book: every message of the queue the kernel sent us, in id order,
 * until the kernel took the verdict that decides it. Packets we hand out,
 * and also what we could not hand out: a message with a readable id gets
 * the default verdict by id; messages we could not read leave a gap whose
 * ids each get the default verdict by itself once the next readable id
 * tells where the gap ends. Owner thread only.
 */
#include <errno.h>
#include <stdlib.h>

#include "plan.h"
#include "queue.h"
#include "seam.h"

/* (nfqb_book_at() for the others) */
static struct nfqb_entry *entry(const struct nfqb_book *b, uint32_t i)
{
	return &b->v[i & (b->cap - 1)];
}

int nfqb_book_alloc(struct nfqb_book *b, uint32_t cap)
{
	uint32_t c = 1;

	while (c < cap)
		c <<= 1;
	*b = (struct nfqb_book){ 0 };
	b->v = nfqb_calloc(c, sizeof(*b->v));
	if (!b->v)
		return -1;
	b->cap = c;
	return 0;
}

void nfqb_book_free(struct nfqb_book *b)
{
	free(b->v);
	b->v = NULL;
	b->cap = 0;
}

static void book_trim(struct nfqb_book *b)
{
	while (b->head != b->tail && entry(b, b->head)->kind == NFQB_E_DONE)
		b->head++;
}

bool nfqb_book_settled(struct nfqb_book *b)
{
	book_trim(b);
	return nfqb_book_empty(b);
}

/* Per-packet verdicts from now on. */
static void fall_back(struct nfqb_queue *q)
{
	if (q->book.fallback)
		return;
	q->book.fallback = true;
	nfqb_stat_inc(q, fallbacks);
}

void nfqb_book_fallback(struct nfqb_queue *q)
{
	fall_back(q);
}

/* Room for one more entry, keeping the last one for an open gap. */
static bool book_room(const struct nfqb_book *b)
{
	return b->tail - b->head < b->cap - 1;
}

static struct nfqb_entry *book_push(struct nfqb_book *b, uint8_t kind,
				    uint32_t id)
{
	struct nfqb_entry *e = entry(b, b->tail++);

	e->kind = kind;
	e->id = id;
	e->n = 1;
	e->p = NULL;
	return e;
}

static struct nfqb_entry *book_last(struct nfqb_book *b)
{
	if (b->head == b->tail)
		return NULL;
	return entry(b, b->tail - 1);
}

/*
 * A readable id arrives: end an open gap before it. The gap covers the ids
 * between the last id we tracked and this one; without a last id (the
 * first messages of the queue were unreadable) it covers as many ids as
 * unreadable messages came, just before this one.
 */
static void close_gap(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_book *b = &q->book;
	struct nfqb_entry *e = book_last(b);
	uint32_t first, n;

	if (!e || e->kind != NFQB_E_GAP_OPEN)
		return;
	if (!b->have_last) {
		/* nothing before it: no lower bound. One default batch up
		 * to the id before this one reaches them all (and nothing
		 * else: nothing was queued to us before) */
		e->kind = NFQB_E_GAP_HEAD;
		e->id = id - 1;
		e->n = b->unreadable;
		b->unreadable = 0;
		return;
	}
	first = b->last_id + 1;
	n = id - first;
	if (!nfqb_id_after(id, first - 1) || n > NFQB_GAP_MAX) {
		/* ids went backwards or jumped too far: we cannot tell which
		 * ids the unreadable messages had. Per-packet verdicts from
		 * now on; the kernel drops them at unbind. */
		fall_back(q);
		e->kind = NFQB_E_DONE;
		book_trim(b);
		b->unreadable = 0;
		return;
	}
	e->kind = n ? NFQB_E_GAP : NFQB_E_DONE;
	e->id = first;
	e->n = n;
	nfqb_stat_add(q, gap_ids, n);
	b->unreadable = 0;
	book_trim(b);
}

/*
 * An id came out of order: if a gap we have not sent yet counted it as an
 * unreadable message's, or a message we could not use claimed it, they
 * were not its. Take it out of the gap (the rest of a split gap goes last:
 * out of order, nothing is batched any more), drop the claim.
 */
static void gap_exclude(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_book *b = &q->book;
	uint32_t i, tail = b->tail;

	for (i = b->head; i != tail; i++) {
		struct nfqb_entry *e = entry(b, i);
		uint32_t off = id - e->id;

		if (e->kind == NFQB_E_DEFAULT && e->id == id) {
			/* a message we could not use said it was this
			 * packet's: the packet is here, that was not it */
			e->kind = NFQB_E_DONE;
			nfqb_stat_sub(q, outstanding, 1);
			continue;
		}
		if (e->kind != NFQB_E_GAP || off >= e->n)
			continue;
		if (off + 1 < e->n && book_room(b)) {
			struct nfqb_entry *r = book_push(b, NFQB_E_GAP, id + 1);

			r->n = e->n - off - 1;
		}
		e->n = off;
		if (!e->n)
			e->kind = NFQB_E_DONE;
	}
}

/*
 * The first id of a queue adopted from another process (nfqb_queue_adopt()):
 * every packet queued before it was the previous owner's. One it left
 * undecided (it died) is still queued, and our first batch would decide it
 * with our verdict: one default batch up to the id before ours decides
 * those first (the kernel answers ENOENT when there are none).
 */
static void orphans_head(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_book *b = &q->book;
	struct nfqb_entry *e = book_last(b);

	if (e && e->kind == NFQB_E_GAP_OPEN)
		return;		/* close_gap() makes it a head gap */
	e = book_push(b, NFQB_E_GAP_HEAD, id - 1);
	e->n = 0;
}

/* Ids must grow: if not, the kernel broke the monotonic-id contract. */
static void note_id(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_book *b = &q->book;

	if (q->sk.adopted && !b->have_last)
		orphans_head(q, id);
	close_gap(q, id);
	if (b->have_last && !nfqb_id_after(id, b->last_id)) {
		/* the last id stays the highest seen: gaps are reckoned
		 * from it */
		fall_back(q);
		gap_exclude(q, id);
		return;
	}
	b->have_last = true;
	b->last_id = id;
}

int nfqb_book_add_packet(struct nfqb_queue *q, struct nfqb_packet *p)
{
	struct nfqb_book *b = &q->book;
	struct nfqb_entry *e;

	if (!book_room(b)) {
		errno = ENOSPC;
		return -1;
	}
	note_id(q, p->id);
	e = book_push(b, NFQB_E_PKT, p->id);
	e->p = p;
	nfqb_stat_inc(q, outstanding);
	if (q->conf.timeout_ms) {
		uint64_t due = p->arrival_ns + q->conf.timeout_ms * 1000000ull;

		if (!b->expire_due || due < b->expire_due)
			b->expire_due = due;
	}
	return 0;
}

/* Is @id the id of an entry we track? */
static bool book_has_id(const struct nfqb_book *b, uint32_t id)
{
	uint32_t i;

	for (i = b->head; i != b->tail; i++) {
		const struct nfqb_entry *e = entry(b, i);

		if ((e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT) &&
		    e->id == id)
			return true;
	}
	return false;
}

void nfqb_book_add_default(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_book *b = &q->book;

	nfqb_stat_inc(q, rejected_defaults);
	if (!book_room(b)) {
		nfqb_book_add_unreadable(q);
		return;
	}
	if (b->have_last && !nfqb_id_after(id, b->last_id)) {
		/* out of order: the kernel broke the monotonic-id contract,
		 * or the message is corrupt. Per-packet verdicts from now on;
		 * its id gets the default unless it is the id of a packet we
		 * track (then it cannot be its own). */
		fall_back(q);
		if (book_has_id(b, id)) {
			nfqb_book_add_unreadable(q);
			return;
		}
		gap_exclude(q, id);
	} else {
		note_id(q, id);
	}
	book_push(b, NFQB_E_DEFAULT, id);
	nfqb_stat_inc(q, outstanding);
}

void nfqb_book_add_unreadable(struct nfqb_queue *q)
{
	struct nfqb_book *b = &q->book;
	struct nfqb_entry *e = book_last(b);

	b->unreadable++;
	if (e && e->kind == NFQB_E_GAP_OPEN)
		return;
	/* book_room() always keeps this last entry free */
	book_push(b, NFQB_E_GAP_OPEN, 0);
}

void nfqb_book_expire(struct nfqb_queue *q, uint64_t now)
{
	struct nfqb_book *b = &q->book;
	uint64_t tmo = q->conf.timeout_ms * 1000000ull;
	uint64_t next = 0;
	uint32_t i;

	b->expire_due = 0;
	if (!tmo)
		return;
	for (i = b->head; i != b->tail; i++) {
		struct nfqb_entry *e = entry(b, i);
		uint32_t st;

		if (e->kind != NFQB_E_PKT)
			continue;
		st = nfqb_pkt_state(e->p);
		/* handed out or not: the timeout counts from arrival */
		if (st != NFQB_PS_PENDING && st != NFQB_PS_NEW)
			continue;
		if (e->p->arrival_ns + tmo > now) {
			if (!next || e->p->arrival_ns + tmo < next)
				next = e->p->arrival_ns + tmo;
			continue;
		}
		if (nfqb_pkt_default(e->p, NFQB_PS_EXPIRED,
				     q->conf.default_verdict, now)) {
			nfqb_stat_inc(q, timeouts);
			nfqb_post_add(&q->post, 1);
		}
	}
	b->expire_due = next;
}

unsigned int nfqb_book_default_all(struct nfqb_queue *q)
{
	struct nfqb_book *b = &q->book;
	uint64_t now = nfqb_now_ns();
	unsigned int n = 0;
	uint32_t i;

	for (i = b->head; i != b->tail; i++) {
		struct nfqb_entry *e = entry(b, i);

		if (e->kind == NFQB_E_PKT &&
		    nfqb_pkt_default(e->p, NFQB_PS_DEFAULTED,
				     q->conf.default_verdict, now))
			n++;
	}
	nfqb_stat_add(q, defaults, n);
	nfqb_post_add(&q->post, n);
	return n;
}

/* --- what the kernel took ------------------------------------------------ */

static void release_entry(struct nfqb_queue *q, struct nfqb_entry *e)
{
	if (e->kind == NFQB_E_PKT)
		nfqb_pkt_put(&q->bufs, e->p);
	if (e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT)
		nfqb_stat_sub(q, outstanding, 1);
	e->kind = NFQB_E_DONE;
	e->p = NULL;
}

static void release_run(struct nfqb_queue *q, uint32_t first, uint32_t last)
{
	uint32_t k;

	for (k = first; k != last + 1; k++) {
		struct nfqb_entry *e = entry(&q->book, k);

		if (e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT ||
		    e->kind == NFQB_E_GAP_HEAD)
			release_entry(q, e);
	}
}

/* The first @count ids of a gap were sent. */
static void release_gap(struct nfqb_entry *e, uint32_t count)
{
	e->id += count;
	e->n -= count;
	if (!e->n)
		e->kind = NFQB_E_DONE;
}

void nfqb_book_release(struct nfqb_queue *q, const struct nfqb_plan *pl)
{
	struct nfqb_book *b = &q->book;
	unsigned int i;

	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];

		switch (it->type) {
		case NFQB_I_SINGLE:
			release_entry(q, entry(b, it->first));
			break;
		case NFQB_I_BATCH:
			release_run(q, it->first, it->last);
			break;
		case NFQB_I_GAP:
			release_gap(entry(b, it->first), it->count);
			break;
		}
	}
	book_trim(b);
}
