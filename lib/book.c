// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The book: every message of the queue the kernel sent us, in id order,
 * until the kernel took the verdict that decides it. Packets we hand out,
 * and also what we could not hand out: a message with a readable id gets
 * the default verdict by id; messages we could not read leave a gap whose
 * ids each get the default verdict by itself once the next readable id
 * tells where the gap ends. Packets are handed out from here in the order
 * they came. Owner thread only.
 */
#include <errno.h>
#include <stdlib.h>

#include "book.h"
#include "settings.h"
#include "sys.h"

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
	b->put = nfqb_calloc(c, sizeof(*b->put));
	if (!b->v || !b->put) {
		nfqb_book_free(b);
		return -1;
	}
	b->cap = c;
	return 0;
}

void nfqb_book_free(struct nfqb_book *b)
{
	free(b->v);
	free(b->put);
	b->v = NULL;
	b->put = NULL;
	b->cap = 0;
}

void nfqb_book_replace(struct nfqb_book *b, struct nfqb_book *fresh)
{
	nfqb_book_free(b);
	*b = *fresh;
}

int nfqb_book_grow(struct nfqb_book *b, uint32_t cap)
{
	struct nfqb_book nb;
	uint32_t i;

	if (cap <= b->cap)
		return 0;
	if (cap > NFQB_BOOK_GROW_MAX)
		return -1;
	if (nfqb_book_alloc(&nb, cap) < 0)
		return -1;
	for (i = b->head; i != b->tail; i++)
		nb.v[i & (nb.cap - 1)] = *entry(b, i);
	free(b->v);
	free(b->put);
	b->v = nb.v;
	b->put = nb.put;
	b->cap = nb.cap;
	return 0;
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
static void fall_back(struct nfqb_book *b, const struct nfqb_book_in *in)
{
	if (b->fallback)
		return;
	b->fallback = true;
	nfqb_stat_inc(in->ctr, fallbacks);
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
static void close_gap(struct nfqb_book *b, const struct nfqb_book_in *in,
		      uint32_t id)
{
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
		fall_back(b, in);
		e->kind = NFQB_E_DONE;
		book_trim(b);
		b->unreadable = 0;
		return;
	}
	e->kind = n ? NFQB_E_GAP : NFQB_E_DONE;
	e->id = first;
	e->n = n;
	nfqb_stat_add(in->ctr, gap_ids, n);
	b->unreadable = 0;
	book_trim(b);
}

/*
 * An id came out of order: if a gap we have not sent yet counted it as an
 * unreadable message's, or a message we could not use claimed it, they
 * were not its. Take it out of the gap (the rest of a split gap goes last:
 * out of order, nothing is batched any more), drop the claim.
 */
static void gap_exclude(struct nfqb_book *b, const struct nfqb_book_in *in,
			uint32_t id)
{
	uint32_t i, tail = b->tail;

	for (i = b->head; i != tail; i++) {
		struct nfqb_entry *e = entry(b, i);
		uint32_t off = id - e->id;

		if (e->kind == NFQB_E_DEFAULT && e->id == id) {
			/* a message we could not use said it was this
			 * packet's: the packet is here, that was not it */
			e->kind = NFQB_E_DONE;
			nfqb_stat_sub(in->ctr, outstanding, 1);
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
static void orphans_head(struct nfqb_book *b, uint32_t id)
{
	struct nfqb_entry *e = book_last(b);

	if (e && e->kind == NFQB_E_GAP_OPEN)
		return;		/* close_gap() makes it a head gap */
	e = book_push(b, NFQB_E_GAP_HEAD, id - 1);
	e->n = 0;
}

/* Ids must grow: if not, the kernel broke the monotonic-id contract. */
static void note_id(struct nfqb_book *b, const struct nfqb_book_in *in,
		    uint32_t id)
{
	if (!b->have_last && in->sk->adopted)
		orphans_head(b, id);
	close_gap(b, in, id);
	if (b->have_last && !nfqb_id_after(id, b->last_id)) {
		/* the last id stays the highest seen: gaps are reckoned
		 * from it */
		fall_back(b, in);
		gap_exclude(b, in, id);
		return;
	}
	b->have_last = true;
	b->last_id = id;
}

/* A message we could not read the id of. */
static void add_unreadable(struct nfqb_book *b)
{
	struct nfqb_entry *e = book_last(b);

	b->unreadable++;
	if (e && e->kind == NFQB_E_GAP_OPEN)
		return;
	/* book_room() always keeps this last entry free */
	book_push(b, NFQB_E_GAP_OPEN, 0);
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

/* A message of this queue with readable @id we cannot hand out. */
static void add_default(struct nfqb_book *b, const struct nfqb_book_in *in,
			uint32_t id)
{
	nfqb_stat_inc(in->ctr, rejected_defaults);
	if (!book_room(b)) {
		add_unreadable(b);
		return;
	}
	if (b->have_last && !nfqb_id_after(id, b->last_id)) {
		/* out of order: the kernel broke the monotonic-id contract,
		 * or the message is corrupt. Per-packet verdicts from now on;
		 * its id gets the default unless it is the id of a packet we
		 * track (then it cannot be its own). */
		fall_back(b, in);
		if (book_has_id(b, id)) {
			add_unreadable(b);
			return;
		}
		gap_exclude(b, in, id);
	} else {
		note_id(b, in, id);
	}
	book_push(b, NFQB_E_DEFAULT, id);
	nfqb_stat_inc(in->ctr, outstanding);
}

/* A packet: it takes the descriptor it was parsed into, and its buffer;
 * with the book full, it leaves a gap instead. */
static bool add_packet(struct nfqb_book *b, const struct nfqb_book_in *in,
		       const struct nfqb_arrival *a)
{
	struct nfqb_entry *e;
	uint32_t tmo_ms;

	if (!book_room(b)) {
		add_unreadable(b);
		return false;
	}
	note_id(b, in, a->p->id);
	e = book_push(b, NFQB_E_PKT, a->p->id);
	e->p = a->p;
	b->nready++;
	nfqb_stat_inc(in->ctr, outstanding);
	tmo_ms = in->set->timeout_ms;
	if (tmo_ms) {
		uint64_t due = a->now + tmo_ms * 1000000ull;

		if (!b->expire_due || due < b->expire_due)
			b->expire_due = due;
	}
	/* the next free descriptor: rx.c parsed into it */
	nfqb_pkt_get(in->bufs, a->slot, a->now);
	return true;
}

bool nfqb_book_add(struct nfqb_book *b, const struct nfqb_book_in *in,
		   const struct nfqb_arrival *a)
{
	if (a->refused)
		fall_back(b, in);
	if (a->unusable && a->have_id)
		add_default(b, in, a->id);
	else if (a->unusable)
		add_unreadable(b);
	return a->p && add_packet(b, in, a);
}

void nfqb_book_expire(struct nfqb_book *b, const struct nfqb_book_in *in,
		      uint64_t now)
{
	uint64_t tmo = in->set->timeout_ms * 1000000ull;
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
		st = nfqb_pkt_default(e->p, NFQB_PS_EXPIRED,
				      in->set->default_verdict, now);
		if (st == NFQB_PS_FREE)
			continue;	/* decided meanwhile */
		if (st == NFQB_PS_NEW)
			b->nready--;
		nfqb_stat_inc(in->ctr, timeouts);
		b->defaulted++;
	}
	b->expire_due = next;
}

unsigned int nfqb_book_default_all(struct nfqb_book *b,
				   const struct nfqb_book_in *in)
{
	uint64_t now = nfqb_now_ns();
	unsigned int n = 0;
	uint32_t i;

	for (i = b->head; i != b->tail; i++) {
		struct nfqb_entry *e = entry(b, i);

		if (e->kind == NFQB_E_PKT &&
		    nfqb_pkt_default(e->p, NFQB_PS_DEFAULTED,
				     in->set->default_verdict, now))
			n++;
	}
	/* nothing is left to hand out */
	b->next = b->tail;
	b->nready = 0;
	nfqb_stat_add(in->ctr, defaults, n);
	b->defaulted += n;
	return n;
}

/* --- hand-out ------------------------------------------------------------ */

/* The oldest packets not handed out yet, up to @max, into @vec (their
 * descriptors): the cursor moves past them. How many. */
static unsigned int next_new(struct nfqb_book *b, struct nfqb_packet **vec,
			     unsigned int max)
{
	unsigned int n = 0;

	/* the head passed the cursor: what it trimmed was done */
	if (b->next - b->head > b->tail - b->head)
		b->next = b->head;
	while (n < max && n < b->nready && b->next != b->tail) {
		struct nfqb_entry *e = entry(b, b->next++);

		if (e->kind == NFQB_E_PKT &&
		    nfqb_pkt_state(e->p) == NFQB_PS_NEW)
			vec[n++] = e->p;
	}
	return n;
}

/*
 * The packets to hand out are chosen first, then the verdict timeout runs
 * (it may take some of them: they are not handed out), then those still
 * NEW are handed out: their handles replace them in @vec.
 */
unsigned int nfqb_book_serve(struct nfqb_book *b, const struct nfqb_book_in *in,
			     uint64_t now, struct nfqb_packet **vec,
			     unsigned int max)
{
	unsigned int i, k = 0, n = next_new(b, vec, max);

	if (b->expire_due && now >= b->expire_due && in->set->timeout_ms)
		nfqb_book_expire(b, in, now);
	for (i = 0; i < n; i++) {
		struct nfqb_packet *h = nfqb_pkt_hand_out(vec[i]);

		if (h)
			vec[k++] = h;
	}
	b->nready -= k;
	return k;
}

void nfqb_book_give_back(struct nfqb_book *b, struct nfqb_packet *const *vec,
			 unsigned int n)
{
	/* back over what was handed out since (and what was skipped) */
	while (n && b->next != b->head) {
		struct nfqb_entry *e = entry(b, b->next - 1);

		if (e->kind == NFQB_E_PKT && e->p == nfqb_handle_ptr(vec[n - 1])) {
			if (nfqb_pkt_take_back(e->p))
				b->nready++;
			n--;
		}
		b->next--;
	}
}

/* --- what the kernel took ------------------------------------------------ */

static void count_verdict(struct nfqb_counters *ctr,
			  const struct nfqb_decision *d, uint64_t n)
{
	switch (d->verdict & 0xff) {
	case NFQB_ACCEPT:
		nfqb_stat_add(ctr, accepted, n);
		break;
	case NFQB_DROP:
		nfqb_stat_add(ctr, dropped, n);
		break;
	case NFQB_QUEUE:
		nfqb_stat_add(ctr, requeued, n);
		break;
	case NFQB_REPEAT:
		nfqb_stat_add(ctr, repeated, n);
		break;
	}
	if (d->flags & NFQB_V_MARK)
		nfqb_stat_add(ctr, marked, n);
	if (d->flags & NFQB_V_PAYLOAD)
		nfqb_stat_add(ctr, mangled, n);
}

/* @e is decided: done, its packet (if any) on the list for pkt.c. Whether
 * it was outstanding. */
static bool done_entry(struct nfqb_book *b, struct nfqb_entry *e)
{
	bool owed = e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT;

	if (e->kind == NFQB_E_PKT)
		b->put[b->nput++] = e->p;
	e->kind = NFQB_E_DONE;
	e->p = NULL;
	return owed;
}

static unsigned int done_run(struct nfqb_book *b, uint32_t first,
				uint32_t last)
{
	unsigned int owed = 0;
	uint32_t k;

	for (k = first; k != last + 1; k++) {
		struct nfqb_entry *e = entry(b, k);

		if (e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT ||
		    e->kind == NFQB_E_GAP_HEAD)
			owed += done_entry(b, e);
	}
	return owed;
}

/* The first @count ids of a gap were sent. */
static void done_gap(struct nfqb_entry *e, uint32_t count)
{
	e->id += count;
	e->n -= count;
	if (!e->n)
		e->kind = NFQB_E_DONE;
}

void nfqb_book_sent(struct nfqb_book *b, const struct nfqb_book_in *in,
		    const struct nfqb_item *v, unsigned int n)
{
	unsigned int i, owed = 0;

	b->nput = 0;
	for (i = 0; i < n; i++) {
		const struct nfqb_item *it = &v[i];

		count_verdict(in->ctr, it->d, it->count);
		switch (it->type) {
		case NFQB_I_SINGLE:
			owed += done_entry(b, entry(b, it->first));
			break;
		case NFQB_I_BATCH:
			owed += done_run(b, it->first, it->last);
			break;
		case NFQB_I_GAP:
			done_gap(entry(b, it->first), it->count);
			break;
		}
	}
	book_trim(b);
	nfqb_stat_sub(in->ctr, outstanding, owed);
	nfqb_pkt_put_all(in->bufs, b->put, b->nput);
}
