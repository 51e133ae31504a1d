// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The planner (lib/plan.c) on hand-made books: exactly which messages it
 * plans, in which order, for each shape of decided / undecided / gap; and
 * the transport (lib/tx.c) through the test seam, against the model of the
 * kernel's queue (kmodel.h): a failed send releases nothing and sends
 * nothing that covers its decisions, the retry sends them in order before
 * any later batch.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnfq-batch/packet.h>

#include "testq.h"
#include "parse.h"
#include "plan.h"
#include "kmodel.h"
#include "nlbuild.h"
#include "../integration/harness.h"

#define U	0xffffffffu	/* undecided */
#define MAXE	32

struct bk {
	struct nfqb_book b;
	struct nfqb_packet p[MAXE];
	struct nfqb_decision dflt;
	struct nfqb_item items[64];
	struct nfqb_plan plan;
};

static void bk_init(struct bk *k)
{
	memset(k, 0, sizeof(*k));
	ck_assert_int_eq(nfqb_book_alloc(&k->b, 64), 0);
	k->dflt.verdict = NFQB_DROP;
	k->plan.items = k->items;
	k->plan.cap = 64;
}

/* A packet entry: @verdict U for undecided; @flags NFQB_V_* | D_SINGLE. */
static void bk_pkt(struct bk *k, uint32_t id, uint32_t verdict, uint32_t flags,
		   uint32_t mark, uint64_t decided_ns)
{
	uint32_t i = k->b.tail;
	struct nfqb_packet *p = &k->p[i];
	struct nfqb_entry *e = nfqb_book_at(&k->b, k->b.tail++);

	p->id = id;
	p->decided_ns = decided_ns;
	p->arrival_ns = 1;
	p->d.verdict = verdict == U ? 0 : verdict;
	p->d.flags = flags;
	p->d.mark = mark;
	atomic_store(&p->sg, NFQB_SG(1, verdict == U ? NFQB_PS_PENDING
						       : NFQB_PS_DECIDED));
	e->kind = NFQB_E_PKT;
	e->p = p;
	e->id = id;
	e->n = 1;
}

static void bk_other(struct bk *k, uint8_t kind, uint32_t id, uint32_t n)
{
	struct nfqb_entry *e = nfqb_book_at(&k->b, k->b.tail++);

	e->kind = kind;
	e->id = id;
	e->n = n;
	e->p = NULL;
}

static unsigned int bk_plan(struct bk *k, bool singles, bool force,
			    uint64_t cutoff, size_t budget)
{
	struct nfqb_plan_in in = {
		.book = &k->b,
		.dflt = &k->dflt,
		.singles = singles,
		.force = force,
		.held_cutoff = cutoff,
		.budget = budget ? budget : NFQB_TX_SIZE,
	};

	return nfqb_plan(&in, &k->plan);
}

/* One entry of a hand-made book: a packet (NFQB_E_PKT; @verdict U for
 * undecided, @flags NFQB_V_* | D_SINGLE) or another kind (@id, @n). */
struct ent {
	uint8_t kind;
	uint32_t id;
	uint32_t verdict;
	uint32_t flags;
	uint32_t mark;
	uint64_t decided_ns;	/* for a packet; n for another kind */
};

/* An item the plan must hold: its type, last id, count, verdict and mark */
struct want {
	uint8_t type;
	uint32_t id;
	uint32_t count;
	uint32_t verdict;
	uint32_t mark;
};

#define NOCHECK	(-1)

/* One planning of the book and what it must give: @nitems items, of which
 * @want from item @first on; @held, @oldest_held and @more unless NOCHECK */
struct step {
	bool singles, force;
	uint64_t cutoff;
	unsigned int budget;	/* in single verdicts; 0: the full budget */
	unsigned int nitems, first;
	struct want want[4];
	int held;
	int64_t oldest_held;
	int more;
};

struct plan_case {
	const char *name;
	uint32_t dflt;
	struct ent book[6];
	struct step steps[3];
};

#define PKT(id, v, flags, mark, ns)	{ NFQB_E_PKT, id, v, flags, mark, ns }
#define OTHER(kind, id, n)		{ kind, id, 0, 0, 0, n }
#define SINGLE(id, v, mark)		{ NFQB_I_SINGLE, id, 1, v, mark }
#define BATCH(id, n, v, mark)		{ NFQB_I_BATCH, id, n, v, mark }

static const struct plan_case plan_cases[] = {
	{ "prefix runs", NFQB_DROP, {
		PKT(10, NFQB_ACCEPT, 0, 0, 5),
		PKT(11, NFQB_ACCEPT, 0, 0, 5),
		PKT(12, NFQB_DROP, 0, 0, 5),
		PKT(13, NFQB_ACCEPT, NFQB_V_MARK, 7, 5),
		PKT(14, NFQB_ACCEPT, NFQB_V_MARK, 7, 5),
		PKT(15, NFQB_ACCEPT, NFQB_V_MARK, 8, 5) }, {
		{ false, false, 0, 0, 4, 0, {
			BATCH(11, 2, NFQB_ACCEPT, 0),
			SINGLE(12, NFQB_DROP, 0),
			BATCH(14, 2, NFQB_ACCEPT, 7),
			SINGLE(15, NFQB_ACCEPT, 8) }, NOCHECK, NOCHECK, false } } },
	/* Nothing is batched across an undecided packet: decided ones behind
	 * it wait (held), unless forced or older than the cutoff. */
	{ "undecided stops batches", NFQB_DROP, {
		PKT(1, NFQB_ACCEPT, 0, 0, 100),
		PKT(2, U, 0, 0, 0),
		PKT(3, NFQB_ACCEPT, 0, 0, 100),
		PKT(4, NFQB_ACCEPT, 0, 0, 200) }, {
		{ false, false, 0, 0, 1, 0, { SINGLE(1, NFQB_ACCEPT, 0) },
		  2, 100, NOCHECK },
		/* the latency bound passed for the one decided at 100 */
		{ false, false, 150, 0, 2, 1, { SINGLE(3, NFQB_ACCEPT, 0) },
		  1, NOCHECK, NOCHECK },
		/* forced (close): every decided one, each by itself */
		{ false, true, 0, 0, 3, 1, {
			SINGLE(3, NFQB_ACCEPT, 0),
			SINGLE(4, NFQB_ACCEPT, 0) }, NOCHECK, NOCHECK, NOCHECK } } },
	/* A gap ends the run before it, gets one default verdict per id, and
	 * the run after it starts anew. */
	{ "gap", NFQB_DROP, {
		PKT(1, NFQB_ACCEPT, 0, 0, 5),
		PKT(2, NFQB_ACCEPT, 0, 0, 5),
		OTHER(NFQB_E_GAP, 3, 2),
		PKT(5, NFQB_ACCEPT, 0, 0, 5),
		PKT(6, NFQB_ACCEPT, 0, 0, 5) }, {
		{ false, false, 0, 0, 3, 0, {
			BATCH(2, 2, NFQB_ACCEPT, 0),
			{ NFQB_I_GAP, 3, 2, NFQB_DROP, 0 },
			BATCH(6, 2, NFQB_ACCEPT, 0) }, NOCHECK, NOCHECK, NOCHECK },
		/* a budget for two single messages: the batch and one of the
		 * gap's ids */
		{ false, false, 0, 2, 2, 1, { { NFQB_I_GAP, 3, 1, NFQB_DROP, 0 } },
		  NOCHECK, NOCHECK, true } } },
	/* An open gap (no later id yet) stops the prefix like an undecided
	 * one. */
	{ "open gap", NFQB_DROP, {
		PKT(1, NFQB_DROP, 0, 0, 5),
		PKT(2, NFQB_DROP, 0, 0, 5),
		OTHER(NFQB_E_GAP_OPEN, 0, 1) }, {
		{ false, false, 0, 0, 1, 0, { BATCH(2, 2, NFQB_DROP, 0) },
		  NOCHECK, NOCHECK, NOCHECK } } },
	/* A decision a batch cannot carry goes first, by itself; a default
	 * stub joins a run of the default verdict. */
	{ "single and default", NFQB_ACCEPT, {
		PKT(1, NFQB_ACCEPT, 0, 0, 5),
		PKT(2, NFQB_ACCEPT, NFQB_V_PAYLOAD | NFQB_D_SINGLE, 0, 5),
		OTHER(NFQB_E_DEFAULT, 3, 1),
		PKT(4, NFQB_ACCEPT, 0, 0, 5) }, {
		{ false, false, 0, 0, 2, 0, {
			SINGLE(2, NFQB_ACCEPT, 0),
			BATCH(4, 3, NFQB_ACCEPT, 0) }, NOCHECK, NOCHECK, NOCHECK },
		/* per-packet mode (fallback, coalescer off) */
		{ true, false, 0, 0, 4, 2, { SINGLE(3, NFQB_ACCEPT, 0) },
		  NOCHECK, NOCHECK, NOCHECK } } },
};

#define NPLAN	(sizeof(plan_cases) / sizeof(plan_cases[0]))

/* Each case of plan_cases: its book, then each of its steps in turn (the
 * list ends at a step of 0 items; a step's wanted items at one of count 0) */
START_TEST(test_plan_case)
{
	const struct plan_case *c = &plan_cases[_i];
	const struct step *st;
	const struct want *w;
	const struct nfqb_item *it;
	unsigned int i, j, n;
	struct bk k;

	bk_init(&k);
	k.dflt.verdict = c->dflt;
	for (i = 0; i < 6 && c->book[i].kind; i++) {
		const struct ent *e = &c->book[i];

		if (e->kind == NFQB_E_PKT)
			bk_pkt(&k, e->id, e->verdict, e->flags, e->mark,
			       e->decided_ns);
		else
			bk_other(&k, e->kind, e->id, e->decided_ns);
	}
	for (i = 0; i < 3 && c->steps[i].nitems; i++) {
		st = &c->steps[i];
		n = bk_plan(&k, st->singles, st->force, st->cutoff,
			    st->budget * nfqb_msg_verdict_size(0));
		ck_assert_msg(n == st->nitems, "%s, step %u: %u items, want %u",
			      c->name, i, n, st->nitems);
		ck_assert_uint_eq(k.plan.nitems, n);
		for (j = 0; j < 4 && st->want[j].count; j++) {
			w = &st->want[j];
			ck_assert_uint_lt(st->first + j, n);
			it = &k.plan.items[st->first + j];
			ck_assert_msg(it->type == w->type && it->id == w->id &&
				      it->count == w->count &&
				      it->d->verdict == w->verdict &&
				      it->d->mark == w->mark,
				      "%s, step %u, item %u: type %u id %u count %u verdict %u mark %u, want %u %u %u %u %u",
				      c->name, i, st->first + j, it->type,
				      it->id, it->count, it->d->verdict,
				      it->d->mark, w->type, w->id, w->count,
				      w->verdict, w->mark);
		}
		if (st->held != NOCHECK)
			ck_assert_uint_eq(k.plan.held, st->held);
		if (st->oldest_held != NOCHECK)
			ck_assert_uint_eq(k.plan.oldest_held_ns, st->oldest_held);
		if (st->more != NOCHECK)
			ck_assert_int_eq(k.plan.more, st->more);
	}
	nfqb_book_free(&k.b);
}
END_TEST

/* --- The transport through the seam, against the kernel's queue ------- */

static struct kmodel km;
static unsigned int fail_sends;	/* fail the next this many sends */

static void km_wrong(struct kmodel *m, const char *msg)
{
	(void)m;
	ck_abort_msg("%s", msg);
}

static const struct km_ops plan_ops = { .fail = km_wrong };

static ssize_t plan_send(void *data, int fd, const struct msghdr *msg,
			 int flags)
{
	(void)data;
	(void)fd;
	(void)flags;
	if (fail_sends) {
		fail_sends--;
		km_sendmsg(&km, msg, KM_FAILED);
		errno = ENOBUFS;
		return -1;
	}
	return km_sendmsg(&km, msg, KM_APPLY);
}

/* The kernel of queue @qnum takes what the library sends. */
static void kernel_on(uint16_t qnum)
{
	struct nfqb_seam s = { .sendmsg = plan_send };

	km_init(&km, qnum, &plan_ops, NULL);
	fail_sends = 0;
	nfqbt_seam_install(&s);
}

static void kernel_off(void)
{
	nfqbt_seam_install(NULL);
	km_free(&km);
}

/* A detached queue 9 of @slots packets, its kernel on (kernel_on) */
static struct nfqb_queue *kernel_queue(unsigned int slots)
{
	struct nfqb_queue *q = nfqbt_queue_detached(9, slots);

	ck_assert_ptr_nonnull(q);
	kernel_on(9);
	return q;
}

static void all_verdicted(void);

/* The end of a test of kernel_queue(): every packet the kernel queued has
 * its verdict, the queue closes without error, the kernel goes off. */
static void kernel_done(struct nfqb_queue *q)
{
	all_verdicted();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	kernel_off();
}

/* The kernel queued packet @id; the library reads it and hands it out. */
static struct nfqb_packet *rx_one(struct nfqb_queue *q, uint32_t id)
{
	struct nfqb_packet *p;
	struct nlb b;

	km_add(&km, id, true);
	nlb_simple_packet(&b, 9, id, 20);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	return p;
}

/* Message @i the kernel took was of @type, for @id, with @verdict. */
static void took(unsigned int i, uint8_t type, uint32_t id, uint32_t verdict)
{
	ck_assert_uint_lt(i, km.nlog);
	ck_assert_uint_eq(km.log[i].type, type);
	ck_assert_uint_eq(km.log[i].id, id);
	ck_assert_uint_eq(km.log[i].d.verdict, verdict);
}

/* Every packet the kernel queued has its verdict. */
static void all_verdicted(void)
{
	unsigned int i;

	for (i = 0; i < km.n; i++)
		ck_assert_msg(!km.p[i].queued, "id %u still queued",
			      km.p[i].id);
}

/* 32 DROP decisions whose send failed are not reached by the ACCEPT batch
 * of 32 later ones: the retry sends the DROP batch first, in the same
 * datagram, and nothing was released before the kernel took it. */
START_TEST(test_tx_failed_send_keeps_order)
{
	struct nfqb_queue *q = kernel_queue(128);
	struct nfqb_packet *p[64];
	unsigned int i;

	fail_sends = 4;
	for (i = 0; i < 64; i++)
		p[i] = rx_one(q, 100 + i);
	for (i = 0; i < 32; i++)
		ck_assert_int_eq(nfqb_verdict(p[i], NFQB_DROP), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(nfqb_flush(q), -1);
		ck_assert_int_eq(errno, EAGAIN);
	}
	ck_assert_uint_eq(km.nlog, 0);
	ck_assert_uint_eq(km.sends_failed, 4);
	/* each failed send would have reached the 32 decided */
	ck_assert_uint_eq(km.p[0].failed_sends, 4);
	ck_assert_uint_eq(km.p[32].failed_sends, 0);
	nfqbt_assert_stats(q, "send_failures=4 outstanding=64 dropped=0");
	/* a handle whose decision is not sent yet is still decided */
	ck_assert_int_eq(nfqb_verdict(p[0], NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, EALREADY);
	for (i = 32; i < 64; i++)
		ck_assert_int_eq(nfqb_verdict(p[i], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 2);
	ck_assert_uint_eq(km.nlog, 2);
	took(0, NFQNL_MSG_VERDICT_BATCH, 131, NFQB_DROP);
	took(1, NFQNL_MSG_VERDICT_BATCH, 163, NFQB_ACCEPT);
	for (i = 0; i < 64; i++)
		ck_assert_uint_eq(km.p[i].got.verdict,
				  i < 32 ? NFQB_DROP : NFQB_ACCEPT);
	nfqbt_assert_stats(q, "outstanding=0 dropped=32 accepted=32");
	/* dead handles: refused, and the descriptor's next packet untouched */
	p[0] = rx_one(q, 200);
	ck_assert_int_eq(nfqb_verdict(p[1], NFQB_DROP), -1);
	ck_assert_int_eq(errno, EALREADY);
	ck_assert_int_eq(nfqb_verdict(p[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	took(2, NFQNL_MSG_VERDICT, 200, NFQB_ACCEPT);
	kernel_done(q);
}
END_TEST

/* A message whose id is readable but which cannot be parsed gets the
 * default verdict by id; unreadable ones leave a gap whose ids get it one
 * by one, and no batch spans it. */
START_TEST(test_tx_malformed_defaults)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *a, *c, *d;
	struct nlb b;

	ck_assert_int_eq(nfqb_queue_set_default_verdict(q, NFQB_DROP), 0);
	a = rx_one(q, 10);
	/* 11: header readable, a bad attribute after it */
	nlb_init_ipv4(&b, 9, 11);
	nlb_attr_be16(&b, NFQA_MARK, 1);	/* 2 bytes: must be 4 */
	nlb_finish(&b);
	km_add(&km, 11, true);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	/* 12: the header itself is broken */
	nlb_init_packet(&b, 2, 9);
	nlb_attr(&b, NFQA_PACKET_HDR, "\0\0\0\x0c", 4);
	nlb_finish(&b);
	km_add(&km, 12, true);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	c = rx_one(q, 13);
	d = rx_one(q, 14);
	ck_assert_int_eq(nfqb_verdict(a, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(c, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(d, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 4);
	ck_assert_uint_eq(km.nlog, 4);
	took(0, NFQNL_MSG_VERDICT, 10, NFQB_ACCEPT);
	took(1, NFQNL_MSG_VERDICT, 11, NFQB_DROP);
	took(2, NFQNL_MSG_VERDICT, 12, NFQB_DROP);
	took(3, NFQNL_MSG_VERDICT_BATCH, 14, NFQB_ACCEPT);
	nfqbt_assert_stats(q, "rejected_malformed=2 rejected_defaults=1 gap_ids=1");
	kernel_done(q);
}
END_TEST

/* A message length of 2^31 or more is not taken for a valid one (libmnl's
 * mnl_nlmsg_ok() compares it as a signed int): rejected, nothing read
 * past the datagram, and a packet after it still parsed in a later one. */
START_TEST(test_rx_huge_nlmsg_len)
{
	struct nfqb_queue *q = kernel_queue(16);
	struct nfqb_packet *p;
	struct nlb b;
	uint32_t len;

	nlb_simple_packet(&b, 9, 5, 20);
	len = 0x80000010u;
	memcpy(b.buf, &len, sizeof(len));
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 0);
	len = 0xfffffff0u;
	memcpy(b.buf, &len, sizeof(len));
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	nfqbt_assert_stats(q, "rejected_malformed=2");
	p = rx_one(q, 7);
	ck_assert_uint_eq(nfqb_pkt_id(p), 7);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	/* a length that lies: the id in the message is not trusted, the two
	 * messages leave a gap before the first readable id, which has no
	 * lower bound: one default batch up to id 6 decides them */
	ck_assert_int_eq(nfqb_flush(q), 2);
	took(0, NFQNL_MSG_VERDICT_BATCH, 6, NFQB_ACCEPT);
	took(1, NFQNL_MSG_VERDICT, 7, NFQB_ACCEPT);
	kernel_done(q);
}
END_TEST

/* Hold packet 1 undecided on @q while every later one is read, decided
 * and sent, until the book has no room left: the book spans them all.
 * Returns the held packet; *@next gets the next id. */
static struct nfqb_packet *fill_book(struct nfqb_queue *q, uint32_t *next)
{
	uint32_t id = 1, i, room = nfqb_book_space(&q->book);
	struct nfqb_packet *head, *p;

	ck_assert_uint_gt(room, 64);
	/* a decided packet behind the held one goes at once, by itself */
	ck_assert_int_eq(nfqb_queue_set_latency(q, 0), 0);
	head = rx_one(q, id++);
	for (i = 1; i < room; i++) {
		p = rx_one(q, id++);
		ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
		ck_assert_int_eq(nfqb_flush(q), 1);
	}
	ck_assert_uint_eq(nfqb_book_space(&q->book), 0);
	*next = id;
	return head;
}

/* The kernel queued packet @id: its datagram waits in the socket. */
static void kernel_queues(struct nlb *b, uint32_t id)
{
	km_add(&km, id, true);
	nlb_simple_packet(b, 9, id, 20);
	nfqbt_dgram.buf = b->buf;
	nfqbt_dgram.len = b->len;
	nfqbt_dgram.from_pid = 0;
	nfqbt_dgram.flags = 0;
}

/* The setup of the full-book cases: the default verdict drop (a packet
 * defaulted would show), the book filled behind a held head (returned),
 * and packet *@id queued by the kernel, its datagram waiting in the
 * socket. */
static struct nfqb_packet *book_full_next_waiting(struct nfqb_queue *q,
						  uint32_t *id, struct nlb *b)
{
	struct nfqb_packet *head;

	ck_assert_int_eq(nfqb_queue_set_default_verdict(q, NFQB_DROP), 0);
	head = fill_book(q, id);
	kernel_queues(b, *id);
	return head;
}

/* Every packet the kernel queued got @verdict, none a default. */
static void all_got(uint32_t verdict)
{
	unsigned int i;

	for (i = 0; i < km.n; i++)
		ck_assert_msg(km.p[i].applied && km.p[i].got.verdict == verdict,
			      "id %u: verdict %u", km.p[i].id,
			      km.p[i].got.verdict);
}

/* A read takes no more than the book has room for: with one packet held
 * while the rest flowed, the next datagram stays in the socket (the
 * kernel's queue), nfqb_recv() says ENOSPC, counted once in book_full;
 * once the held one is decided the datagram is read and handed out.
 * Before, it was read into a gap and given the default verdict unseen. */
START_TEST(test_rx_book_bounded)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *head, *p = NULL;
	uint32_t id;
	struct nlb b;
	int i, n = 0;

	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	head = book_full_next_waiting(q, &id, &b);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(nfqb_recv(q, &p, 1), -1);
		ck_assert_int_eq(errno, ENOSPC);
	}
	ck_assert_ptr_nonnull(nfqbt_dgram.buf);	/* not read */
	nfqbt_assert_stats(q, "book_full=1 gap_ids=0 rejected_defaults=0 "
			   "buffers_exhausted=0");
	ck_assert_int_eq(nfqb_verdict(head, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	for (i = 0; i < 3 && n != 1; i++)
		n = nfqb_recv(q, &p, 1);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(nfqb_pkt_id(p), id);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	all_got(NFQB_ACCEPT);
	nfqbt_assert_stats(q, "book_full=1 gap_ids=0 rejected_defaults=0 "
			   "defaults=0 timeouts=0 outstanding=0");
	kernel_done(q);
}
END_TEST

/* --- the large-packet policy (large.c) ------------------------------------ */

/* An IPv4 TCP SYN from 127.0.0.1:40000 to :80 with MSS option @mss, its
 * checksums complete: 44 bytes into @buf. */
static size_t syn_bytes(uint8_t *buf, uint16_t mss)
{
	static const uint8_t tmpl[44] = {
		0x45, 0, 0, 44, 0, 0, 0x40, 0, 64, 6, 0, 0,
		127, 0, 0, 1, 127, 0, 0, 1,
		0x9c, 0x40, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0,
		0x60, 0x02, 0xff, 0xff, 0, 0, 0, 0,
		2, 4, 0, 0,
	};
	struct nfqb_hdrs h;

	memcpy(buf, tmpl, sizeof(tmpl));
	buf[42] = (uint8_t)(mss >> 8);
	buf[43] = (uint8_t)mss;
	ck_assert_int_eq(nfqb_hdrs_parse(buf, sizeof(tmpl), 0, &h,
					 sizeof(h)), 0);
	ck_assert_int_eq(nfqb_csum_fix(buf, sizeof(tmpl), &h), 0);
	return sizeof(tmpl);
}

/* The kernel queued packet @id with payload @pl (@len bytes), of a
 * packet @orig_len long (cut if longer), a GSO packet if @gso; read. */
static void large_inject(struct nfqb_queue *q, uint32_t id, const void *pl,
			 size_t len, uint32_t orig_len, bool gso)
{
	struct nlb b;

	km_add(&km, id, true);
	nlb_init_ipv4(&b, 9, id);
	nlb_attr(&b, NFQA_PAYLOAD, pl, len);
	if (orig_len > len)
		nlb_attr_be32(&b, NFQA_CAP_LEN, orig_len);
	if (gso)
		nlb_attr_be32(&b, NFQA_SKB_INFO, NFQA_SKB_GSO);
	nlb_finish(&b);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
}

/* The kernel's decision of packet @id. */
static const struct km_dec *km_got(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < km.n && km.p[i].id != id; i++)
		;
	ck_assert_uint_lt(i, km.n);
	ck_assert_msg(km.p[i].applied, "id %u: no verdict", id);
	return &km.p[i].got;
}

/*
 * NFQB_LARGE_WHOLE lowers the MSS of a SYN that allows segments longer
 * than the copy range (65531 - 20 - 20 = 65491 here) before the
 * application sees it; the application's plain accept then carries the
 * changed bytes (a single verdict, never a batch: a batch carries no
 * payload), and so does the default verdict at close. A SYN whose MSS
 * fits stays as it came, its verdict without a payload.
 */
START_TEST(test_large_syn_clamped)
{
	struct nfqb_queue *q = kernel_queue(64);
	uint8_t syn[44], want[44];
	struct nfqb_packet *vec[4];
	const uint8_t *pl;
	const struct km_dec *d;
	uint32_t len;
	size_t n;

	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	n = syn_bytes(syn, 65495);
	syn_bytes(want, 65491);
	large_inject(q, 1, syn, n, 0, false);
	syn_bytes(syn, 1460);
	large_inject(q, 2, syn, n, 0, false);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), 2);
	pl = nfqb_pkt_payload(vec[0], &len);
	ck_assert_uint_eq(len, n);
	ck_assert_mem_eq(pl, want, n);
	pl = nfqb_pkt_payload(vec[1], &len);
	ck_assert_mem_eq(pl, syn, n);
	ck_assert_int_eq(nfqb_verdict(vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(vec[1], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 1);
	d = km_got(1);
	ck_assert(d->verdict == NFQB_ACCEPT && d->has_payload);
	ck_assert_uint_eq(d->plen, n);
	ck_assert_uint_eq(d->phash, km_hash(want, n));
	d = km_got(2);
	ck_assert(d->verdict == NFQB_ACCEPT && !d->has_payload);
	/* a clamped SYN the application never decides: close's default
	 * carries the change too */
	syn_bytes(syn, 65495);
	large_inject(q, 3, syn, n, 0, false);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), 1);
	nfqbt_assert_stats(q, "mss_clamped=2 truncated=0 large_dropped=0");
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	d = km_got(3);
	ck_assert(d->verdict == NFQB_ACCEPT && d->has_payload);
	ck_assert_uint_eq(d->phash, km_hash(want, n));
	all_verdicted();
	kernel_off();
}
END_TEST

/*
 * A cut packet (NFQA_CAP_LEN over what came): NFQB_LARGE_PASS hands it
 * out, counted; NFQB_LARGE_WHOLE drops it unseen (it is not a TCP GSO
 * packet, which TCP would send again: nothing will), and hands out the
 * packet after it. A drop verdict carries no payload, not even a clamped
 * SYN's.
 */
START_TEST(test_large_cut_dropped)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *vec[4];
	uint8_t udp[28] = { 0x45, 0, 0xff, 0xff, 0, 0, 0, 0, 64, 17, 0, 0,
			    127, 0, 0, 1, 127, 0, 0, 1,
			    0x9c, 0x40, 0, 53, 0xff, 0xeb, 0, 0 };
	uint8_t syn[44];

	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	ck_assert_int_eq(nfqb_queue_set_latency(q, 0), 0);
	large_inject(q, 1, udp, sizeof(udp), 65535, false);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), 1);
	ck_assert(nfqb_pkt_truncated(vec[0]));
	ck_assert_int_eq(nfqb_verdict(vec[0], NFQB_ACCEPT), 0);
	nfqbt_assert_stats(q, "truncated=1 large_dropped=0");

	ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	large_inject(q, 2, udp, sizeof(udp), 65535, false);
	large_inject(q, 3, syn, syn_bytes(syn, 65495), 0, false);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), 1);
	ck_assert_uint_eq(nfqb_pkt_id(vec[0]), 3);
	ck_assert_int_eq(nfqb_verdict(vec[0], NFQB_DROP), 0);
	ck_assert_int_ge(nfqb_flush(q), 1);
	ck_assert(km_got(1)->verdict == NFQB_ACCEPT);
	ck_assert(km_got(2)->verdict == NFQB_DROP && !km_got(2)->has_payload);
	ck_assert(km_got(3)->verdict == NFQB_DROP && !km_got(3)->has_payload);
	nfqbt_assert_stats(q, "truncated=2 large_dropped=1 large_resent=0 "
			   "mss_clamped=1 gso_off=0 outstanding=0");
	ck_assert_int_eq(nfqb_queue_set_large(q, 7), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_queue_set_large(NULL, NFQB_LARGE_PASS), -1);
	kernel_done(q);
}
END_TEST

/*
 * A cut TCP GSO packet under NFQB_LARGE_WHOLE: dropped unseen for TCP to
 * send again (large_resent), and GSO turned off on the queue by a
 * configuration message the transport sends before that verdict, once
 * (the model takes it only with config_ok: without, it fails the test);
 * the second such packet asks nothing more.
 */
START_TEST(test_large_gso_off)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *vec[4];
	uint8_t syn[44];
	size_t n = syn_bytes(syn, 1460);

	km.config_ok = true;
	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	large_inject(q, 1, syn, n, 70000, true);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert(km_got(1)->verdict == NFQB_DROP);
	nfqbt_assert_stats(q, "truncated=1 large_resent=1 large_dropped=0 "
			   "gso_off=1 outstanding=0");
	large_inject(q, 2, syn, n, 70000, true);
	ck_assert_int_eq(nfqb_recv(q, vec, 4), -1);
	ck_assert(km_got(2)->verdict == NFQB_DROP);
	nfqbt_assert_stats(q, "truncated=2 large_resent=2 gso_off=1");
	kernel_done(q);
}
END_TEST

/*
 * The same when the send that carries the drop and the GSO request fails
 * (ENOBUFS): nothing is counted as sent, the drop is not applied and is
 * kept, and the next flush sends both, once; the packet never reaches the
 * application in between.
 */
START_TEST(test_large_gso_off_send_fails)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *vec[4];
	uint8_t syn[44];
	size_t n = syn_bytes(syn, 1460);
	long i;

	km.config_ok = true;
	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	large_inject(q, 1, syn, n, 70000, true);
	fail_sends = 1;
	ck_assert_int_eq(nfqb_recv(q, vec, 4), -1);
	i = km_find(&km, 1);
	ck_assert_int_ge(i, 0);
	ck_assert(!km.p[i].applied && km.p[i].failed_sends == 1);
	nfqbt_assert_stats(q, "large_resent=1 gso_off=0 send_failures=1 "
			   "outstanding=1");
	ck_assert_int_ge(nfqb_flush(q), 0);
	ck_assert(km_got(1)->verdict == NFQB_DROP);
	nfqbt_assert_stats(q, "large_resent=1 gso_off=1 outstanding=0");
	ck_assert_int_eq(nfqb_recv(q, vec, 4), -1);
	nfqbt_assert_stats(q, "gso_off=1");
	kernel_done(q);
}
END_TEST

/* --- conntrack verdicts ---------------------------------------------------- */

/*
 * A verdict that sets the conntrack entry's mark or labels (NFQA_CT) goes
 * as a single verdict, planned before the batch of its run, which does
 * not carry it: the packets around it get none. A mask of 0 means every
 * bit; a value is sent masked.
 */
START_TEST(test_ct_verdicts)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
				  .flags = NFQB_V_CT_MARK, .ct_mark = 0x2a };
	struct nfqb_packet *p[6];
	uint8_t both[32] = { 0 };
	const struct km_dec *d;
	uint32_t i;

	ck_assert_int_eq(nfqb_queue_set_latency(q, 0), 0);
	for (i = 0; i < 6; i++)
		p[i] = rx_one(q, i + 1);
	ck_assert_int_eq(nfqb_verdict(p[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict_ex(p[1], &v, sizeof(v)), 0);
	v = (struct nfqb_verdict){ .verdict = NFQB_ACCEPT,
				   .flags = NFQB_V_CT_MARK | NFQB_V_MARK,
				   .mark = 5, .ct_mark = 0x1ff,
				   .ct_mark_mask = 0xff };
	ck_assert_int_eq(nfqb_verdict_ex(p[2], &v, sizeof(v)), 0);
	v = (struct nfqb_verdict){ .verdict = NFQB_DROP,
				   .flags = NFQB_V_CT_LABELS };
	v.ct_labels[0] = 0x81;
	ck_assert_int_eq(nfqb_verdict_ex(p[3], &v, sizeof(v)), 0);
	ck_assert_int_eq(nfqb_verdict_ct_mark(p[4], NFQB_ACCEPT, 7), 0);
	/* refused: a verdict the kernel does not take, an unknown flag */
	v = (struct nfqb_verdict){ .verdict = 9, .flags = NFQB_V_CT_MARK };
	ck_assert_int_eq(nfqb_verdict_ex(p[5], &v, sizeof(v)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_verdict_ct_mark(p[5], 9, 1), -1);
	v = (struct nfqb_verdict){ .verdict = NFQB_ACCEPT, .flags = 1u << 6 };
	ck_assert_int_eq(nfqb_verdict_ex(p[5], &v, sizeof(v)), -1);
	ck_assert_int_eq(nfqb_verdict(p[5], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 1);
	all_verdicted();

	d = km_got(1);
	ck_assert(!d->has_ct_mark && !d->has_ct_labels);
	d = km_got(2);
	ck_assert(d->has_ct_mark && !d->has_ct_labels);
	ck_assert_uint_eq(d->ct_mark, 0x2a);
	ck_assert_uint_eq(d->ct_mark_mask, 0xffffffff);
	d = km_got(3);
	ck_assert(d->has_ct_mark && d->has_mark && d->mark == 5);
	ck_assert_uint_eq(d->ct_mark, 0xff);
	ck_assert_uint_eq(d->ct_mark_mask, 0xff);
	d = km_got(4);
	ck_assert(d->verdict == NFQB_DROP && d->has_ct_labels &&
		  !d->has_ct_mark);
	both[0] = 0x81;
	memset(both + 16, 0xff, 16);
	ck_assert_uint_eq(d->ct_lhash, km_hash(both, sizeof(both)));
	d = km_got(5);
	ck_assert(d->has_ct_mark && d->ct_mark == 7 &&
		  d->ct_mark_mask == 0xffffffff);
	d = km_got(6);
	ck_assert(!d->has_ct_mark && !d->has_ct_labels);
	/* none of the conntrack verdicts went in a batch */
	for (i = 0; i < km.n; i++)
		if (km.p[i].got.has_ct_mark || km.p[i].got.has_ct_labels)
			ck_assert(!km.p[i].by_batch);
	kernel_done(q);
}
END_TEST

/* A configuration round trip (or close) must read whatever the
 * application holds: with the book full, the book grows instead of
 * leaving the packets it reads without an entry. */
START_TEST(test_rx_any_grows_book)
{
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *head, *p;
	uint32_t id, cap = q->book.cap;
	struct nlb b;

	head = book_full_next_waiting(q, &id, &b);
	ck_assert_int_eq(nfqb_rx_read_any(&q->rx, &q->rx_in, 1), 1);
	ck_assert_uint_eq(q->book.cap, 2 * cap);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(p), id);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(head, NFQB_ACCEPT), 0);
	/* one batch: the ids between them were sent already */
	ck_assert_int_eq(nfqb_flush(q), 1);
	all_got(NFQB_ACCEPT);
	nfqbt_assert_stats(q, "gap_ids=0 rejected_defaults=0 outstanding=0");
	kernel_done(q);
}
END_TEST

static int always_fail(void *data, size_t size)
{
	(void)data;
	(void)size;
	return 1;
}

/* ... and when the book cannot grow (an allocation fails), that read
 * fails with ENOMEM and reads nothing: the datagram stays in the socket,
 * nothing is defaulted, and the next read, memory back, takes it. */
START_TEST(test_rx_any_grow_fails)
{
	struct nfqb_seam nomem = { .sendmsg = plan_send,
				   .fail_alloc = always_fail };
	struct nfqb_seam ok = { .sendmsg = plan_send };
	struct nfqb_queue *q = kernel_queue(64);
	struct nfqb_packet *head, *p;
	uint32_t id, cap = q->book.cap;
	struct nlb b;

	head = book_full_next_waiting(q, &id, &b);
	nfqbt_seam_install(&nomem);
	ck_assert_int_eq(nfqb_rx_read_any(&q->rx, &q->rx_in, 1), -1);
	ck_assert_int_eq(errno, ENOMEM);
	nfqbt_seam_install(&ok);
	ck_assert_ptr_nonnull(nfqbt_dgram.buf);	/* not read */
	ck_assert_uint_eq(q->book.cap, cap);
	nfqbt_assert_stats(q, "gap_ids=0 rejected_defaults=0 defaults=0");
	ck_assert_int_eq(nfqb_rx_read_any(&q->rx, &q->rx_in, 1), 1);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(p), id);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(head, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	all_got(NFQB_ACCEPT);
	kernel_done(q);
}
END_TEST

/* nfqb_verdict_batch() decides only packets handed out: one still waiting
 * in the library comes out later, intact, and takes its own verdict. */
START_TEST(test_verdict_batch_handed_only)
{
	struct nfqb_queue *q = kernel_queue(16);
	struct nfqb_packet *p[2];
	struct nlb b;

	km_add(&km, 40, true);
	nlb_simple_packet(&b, 9, 40, 20);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	km_add(&km, 41, true);
	nlb_simple_packet(&b, 9, 41, 20);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, p, 1), 1);
	ck_assert_int_eq(nfqb_verdict_batch(q, 41, NFQB_DROP, NULL), 1);
	ck_assert_int_eq(nfqb_verdict_batch(q, 41, NFQB_DROP, NULL), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(nfqb_flush(q), 1);
	took(0, NFQNL_MSG_VERDICT, 40, NFQB_DROP);
	ck_assert(km.p[1].queued);	/* 41 waits, untouched */
	ck_assert_uint_eq(nfqbt_serve(q, &p[1], 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(p[1]), 41);
	ck_assert_int_eq(nfqb_verdict(p[1], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	took(1, NFQNL_MSG_VERDICT, 41, NFQB_ACCEPT);
	ck_assert_int_eq(nfqb_verdict(p[0], NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, EALREADY);
	kernel_done(q);
}
END_TEST

/* --- The linger (pace.c) ------------------------------------------------- */

static uint64_t paused_ns;

static int record_pause(void *data, uint64_t ns)
{
	(void)data;
	paused_ns = ns;
	return 0;
}

static void pace_seam(void)
{
	struct nfqb_seam s = { .sleep_ns = record_pause };

	nfqbt_seam_install(&s);
}

/* The pause the linger takes at @t (0: none): taken, what it brought
 * comes with the next read_at(). */
static uint64_t pause_at(struct nfqb_queue *q, uint64_t t)
{
	paused_ns = 0;
	ck_assert_int_ge(nfqb_pace_wait(&q->pace, &q->pace_in,
					NFQB_WAIT_PAUSE, t), 0);
	return paused_ns;
}

/* A read at @t brought @n datagrams of a packet each. */
static void read_at(struct nfqb_queue *q, unsigned int n, uint64_t t)
{
	q->rx.got = q->rx.npkts = n;
	q->rx.nflows = 0;
	q->rx.read_ns = t;
	nfqb_pace_note_read(&q->pace, &q->pace_in);
}

/* The adaptive linger's policy: the pause gathers a full read (64 packets)
 * at the stream's pace (5..200 us), backs off when a pause shows the stream waits
 * on us, and a fixed duration or NFQB_LINGER_AUTO can be chosen. */
START_TEST(test_linger_policy)
{
	struct nfqb_queue *q = nfqbt_queue_detached(9, 16);
	uint64_t t = 1000000000ull, ns;
	unsigned int i;

	ck_assert_ptr_nonnull(q);
	pace_seam();
	/* nothing known of the pace yet: no pause */
	ck_assert_uint_eq(pause_at(q, t), 0);
	/* a packet every 2 us: 64 of them take 128 us */
	for (i = 0; i < 200; i++)
		read_at(q, 1, t += 2000);
	ns = pause_at(q, t);
	ck_assert_uint_ge(ns, 120000);
	ck_assert_uint_le(ns, 130000);
	/* a pause that brings what the pace promised: keep pausing */
	read_at(q, 64, t += ns);
	ck_assert_uint_eq(pause_at(q, t), ns);
	/* one that brings some, under a quarter: the stream waits on us, no
	 * pause for 10 ms, then 20 ms after the next such pause */
	read_at(q, 7, t += ns);
	ck_assert_uint_eq(pause_at(q, t + 9999999), 0);
	t += 10000000;
	ck_assert_uint_gt(ns = pause_at(q, t), 0);
	read_at(q, 7, t += ns);
	ck_assert_uint_eq(pause_at(q, t + 19999999), 0);
	t += 20000000;
	/* one that brings nothing ends the stream; it stretched nobody (the
	 * decisions went out before it): no quiet time */
	ck_assert_uint_gt(ns = pause_at(q, t), 0);
	read_at(q, 0, t += ns);
	ck_assert(!q->pace.streaming);
	ck_assert_uint_gt(ns = pause_at(q, t), 0);
	/* one we overslept: the pace promised for the pause asked for */
	read_at(q, 10, t += 10 * ns);
	ck_assert_uint_gt(ns = pause_at(q, t), 0);
	/* one whose read filled its vector brought at least that much */
	q->rx.last_full = true;
	read_at(q, 1, t += ns);
	q->rx.last_full = false;
	ck_assert_uint_gt(ns = pause_at(q, t), 0);
	read_at(q, 64, t += ns);
	/* a sparse stream: capped at 200 us */
	for (i = 0; i < 200; i++)
		read_at(q, 1, t += 50000);
	ck_assert_uint_eq(pause_at(q, t), 200000);
	/* a very dense one: under 5 us is not worth a syscall */
	for (i = 0; i < 400; i++)
		read_at(q, 64, t += 4800);
	ck_assert_uint_eq(pause_at(q, t), 0);
	/* fixed: always that long, never backed off; then adaptive again */
	ck_assert_int_eq(nfqb_queue_set_linger(q, 300), 0);
	ck_assert_uint_eq(pause_at(q, t), 300000);
	read_at(q, 0, t += 300000);
	ck_assert_uint_eq(pause_at(q, t), 300000);
	read_at(q, 0, t += 300000);
	ck_assert_int_eq(nfqb_queue_set_linger(q, 0), 0);
	ck_assert_uint_eq(pause_at(q, t), 0);
	ck_assert_int_eq(nfqb_queue_set_linger(q, 1000000), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_queue_set_linger(q, NFQB_LINGER_AUTO), 0);
	ck_assert_uint_eq(pause_at(q, t), 0);	/* dense */
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_seam_install(NULL);
}
END_TEST

/* A pace of a packet of @size bytes every 2 us at @t: 200 reads of one;
 * then a pause, within 1% of @want, its packets read when it ends. */
static void pause_of(struct nfqb_queue *q, uint64_t *t, unsigned int size,
			 uint64_t want)
{
	uint64_t ns;
	unsigned int i;

	q->rx.nbytes = size;
	for (i = 0; i < 200; i++)
		read_at(q, 1, *t += 2000);
	ck_assert_uint_eq(q->pace.sum_bytes / 8, size);
	ns = pause_at(q, *t);
	ck_assert_msg(ns * 100 >= want * 99 && ns * 100 <= want * 101,
		      "pause %llu ns, not %llu", (unsigned long long)ns,
		      (unsigned long long)want);
	q->rx.nbytes = size * (ns / 2000);
	read_at(q, (unsigned int)(ns / 2000), *t += ns);
}

/* A pause gathers no more than fits in half the socket's receive buffer,
 * at twice a message's length plus 256 bytes each (the kernel drops what
 * does not fit); the payload per packet follows the reads. */
START_TEST(test_linger_room)
{
	struct nfqb_queue *q = nfqbt_queue_detached(9, 16);
	uint64_t t = 1000000000ull;

	ck_assert_ptr_nonnull(q);
	pace_seam();
	/* unknown (no socket): a full read, 128 us */
	pause_of(q, &t, 92, 128000);
	/* a 64 KiB buffer holds 39 messages of a 92-byte packet in its half */
	q->set.rcvbuf = 65536;
	pause_of(q, &t, 92, 39 * 2000);
	/* of 1500-byte packets: 8 */
	pause_of(q, &t, 1500, 8 * 2000);
	/* the default buffer (212992 bytes): 29 */
	q->set.rcvbuf = 212992;
	pause_of(q, &t, 1500, 29 * 2000);
	/* one that holds 2 (4 us, under the 5 us worth a pause): none */
	q->set.rcvbuf = 16384;
	pause_of(q, &t, 1500, 0);
	/* a queue of 64: a quarter of it, 16 */
	q->set.rcvbuf = 0;
	q->set.maxlen = 64;
	pause_of(q, &t, 92, 16 * 2000);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_seam_install(NULL);
}
END_TEST

/* Decisions held unsent: the batch limit, or a quarter of the queue's
 * length if less (at least 1); a queue of 64 with the default limit
 * sends them in 16s. */
START_TEST(test_hold_limit)
{
	struct nfqb_settings set = { .batch_limit = 64, .maxlen = 1024 };

	ck_assert_uint_eq(nfqb_hold_limit(&set), 64);
	set.maxlen = 128;
	ck_assert_uint_eq(nfqb_hold_limit(&set), 32);
	set.batch_limit = 8;
	ck_assert_uint_eq(nfqb_hold_limit(&set), 8);
	set.maxlen = 3;
	ck_assert_uint_eq(nfqb_hold_limit(&set), 1);
	set.maxlen = 0;
	ck_assert_uint_eq(nfqb_hold_limit(&set), 1);
}
END_TEST

/* --- Which flows wait on us (pace.c) ------------------------------------ */

/* An IPv4 header and 4 bytes of ports: @proto, source port @sport. */
static void ip4(uint8_t *b, uint8_t proto, uint16_t sport)
{
	memset(b, 0, 24);
	b[0] = 0x45;
	b[8] = 64;
	b[9] = proto;
	memcpy(b + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	b[20] = (uint8_t)(sport >> 8);
	b[21] = (uint8_t)sport;
	b[23] = 53;
}

/* nfqb_parse_flow() of a packet whose payload is @len bytes at @b. */
static uint32_t flow(const uint8_t *b, size_t len)
{
	static struct nfqb_packet p;
	struct {
		struct nlattr a;
		uint8_t b[64];
	} attr;

	ck_assert_uint_le(len, sizeof(attr.b));
	attr.a.nla_len = (uint16_t)(sizeof(attr.a) + len);
	attr.a.nla_type = NFQA_PAYLOAD;
	memcpy(attr.b, b, len);
	p.tb[NFQA_PAYLOAD] = &attr.a;
	return nfqb_parse_flow(&p);
}

START_TEST(test_pace_flow_tag)
{
	uint8_t a[24], b[24], v6[44];
	uint32_t ta;

	ip4(a, 17, 1000);
	ip4(b, 17, 1001);
	ta = flow(a, sizeof(a));
	ck_assert_uint_gt(ta, NFQB_FLOW_ACKED);
	ck_assert_uint_eq(flow(a, sizeof(a)), ta);
	ck_assert_uint_ne(flow(b, sizeof(b)), ta);
	/* a later fragment has no ports: the same tag for any bytes there */
	a[6] = 0x01;
	ta = flow(a, sizeof(a));
	a[20] = 0x99;
	ck_assert_uint_eq(flow(a, sizeof(a)), ta);
	/* TCP: its sender waits on us */
	ip4(a, 6, 1000);
	ck_assert_uint_eq(flow(a, sizeof(a)), NFQB_FLOW_ACKED);
	/* too short, not IP */
	ck_assert_uint_eq(flow(a, 19), 0);
	a[0] = 0x55;
	ck_assert_uint_eq(flow(a, sizeof(a)), 0);
	memset(v6, 0, sizeof(v6));
	v6[0] = 0x60;
	v6[6] = 132;	/* SCTP */
	ck_assert_uint_eq(flow(v6, sizeof(v6)), NFQB_FLOW_ACKED);
	v6[6] = 17;
	ck_assert_uint_gt(flow(v6, sizeof(v6)), NFQB_FLOW_ACKED);
	ck_assert_uint_eq(flow(v6, 39), 0);
}
END_TEST

/* One read at @now: @nbulk packets of a bulk UDP flow, then @n of flow
 * @sport (@tcp: those are TCP), all in one datagram. */
static void pace_read(struct nfqb_queue *q, unsigned int nbulk,
		      uint16_t sport, unsigned int n, bool tcp, uint64_t now)
{
	static uint32_t id = 1;
	static uint8_t dgram[64 * 128];
	struct nfqb_packet *p[64];
	size_t len = 0;
	unsigned int i;
	uint8_t ip[24];
	struct nlb b;

	for (i = 0; i < nbulk + n; i++) {
		ip4(ip, i >= nbulk && tcp ? 6 : 17, i < nbulk ? 7 : sport);
		km_add(&km, id, true);
		nlb_init_ipv4(&b, 9, id++);
		nlb_attr(&b, 10, ip, sizeof(ip));
		nlb_finish(&b);
		ck_assert_uint_le(len + b.len, sizeof(dgram));
		memcpy(dgram + len, b.buf, b.len);
		len += b.len;
	}
	if (len)
		ck_assert_int_eq(nfqbt_rx_inject(q, dgram, len, 0, 0), 0);
	ck_assert_uint_eq(q->rx.npkts, nbulk + n);
	q->rx.read_ns = now;
	nfqb_pace_note_read(&q->pace, &q->pace_in);
	/* decided at once: the descriptors come back */
	i = nfqbt_serve(q, p, 64);
	while (i)
		ck_assert_int_eq(nfqb_verdict(p[--i], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
}

static bool waiting(const struct nfqb_queue *q, uint64_t t)
{
	return t < q->pace.waiting_until;
}

/* A flow that comes alone in NFQB_PACE_LONE big reads in a row waits on
 * us (no adaptive pause, no holding decisions, for NFQB_PACE_QUIET_NS);
 * alone in small reads, or in runs, it does not; TCP always does. */
START_TEST(test_pace_waiting)
{
	struct nfqb_queue *q = kernel_queue(256);
	uint64_t t = 1000000000ull;
	unsigned int i;

	/* runs of a bulk flow: nothing waits */
	for (i = 0; i < 20; i++)
		pace_read(q, 8, 0, 0, false, t += 100000);
	ck_assert(!waiting(q, t));
	/* a flow alone in small reads: no evidence */
	for (i = 0; i < 20; i++)
		pace_read(q, 1, 2000, 1, false, t += 100000);
	ck_assert(!waiting(q, t));
	/* alone in big reads: the LONE-th appearance after the first shows */
	for (i = 0; i < NFQB_PACE_LONE; i++) {
		pace_read(q, 5, 3000, 1, false, t += 100000);
		ck_assert(!waiting(q, t));
	}
	pace_read(q, 5, 3000, 1, false, t += 100000);
	ck_assert(waiting(q, t));
	ck_assert_uint_eq(pause_at(q, t), 0);
	/* until the next read, however late (its packets may still be with
	 * the application) */
	ck_assert(waiting(q, t + 10 * NFQB_PACE_QUIET_NS));
	/* then for the quiet time after it showed */
	pace_read(q, 8, 0, 0, false, t += 1000);
	ck_assert(waiting(q, t - 1000 + NFQB_PACE_QUIET_NS - 1));
	ck_assert(!waiting(q, t - 1000 + NFQB_PACE_QUIET_NS));
	/* it keeps showing while it stays alone, even in small reads */
	pace_read(q, 0, 3000, 1, false, t += NFQB_PACE_QUIET_NS);
	ck_assert(waiting(q, t));
	/* a run of it (that read still shows it: it came alone before); it
	 * no longer waits after */
	pace_read(q, 0, 3000, 2, false, t += 100000);
	pace_read(q, 5, 3000, 1, false, t += NFQB_PACE_QUIET_NS);
	ck_assert(!waiting(q, t));
	/* forgotten after the memory time: counts from zero again */
	pace_read(q, 5, 4000, 1, false, t += 100000);
	for (i = 0; i < NFQB_PACE_LONE - 1; i++)
		pace_read(q, 5, 4000, 1, false, t += 100000);
	t += NFQB_PACE_MEMORY_NS + 1;
	pace_read(q, 5, 4000, 1, false, t);
	ck_assert(!waiting(q, t));
	/* one TCP segment is enough */
	pace_read(q, 0, 5000, 1, true, t += 100000);
	ck_assert(waiting(q, t));
	nfqbt_assert_stats(q, "linger_waiting=4");
	kernel_done(q);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = nfqbt_tcase_tests(s, "plan", 0, (const TTest *[]){ NULL });

	tcase_add_loop_test(tc, test_plan_case, 0, NPLAN);
	nfqbt_tcase_tests(s, "transport", 0, (const TTest *[]){
		test_tx_failed_send_keeps_order, test_tx_malformed_defaults,
		test_rx_huge_nlmsg_len, test_rx_book_bounded,
		test_rx_any_grows_book, test_rx_any_grow_fails,
		test_verdict_batch_handed_only,
		test_linger_policy, test_linger_room, test_hold_limit, NULL });
	nfqbt_tcase_tests(s, "large", 0, (const TTest *[]){
		test_large_syn_clamped, test_large_cut_dropped,
		test_large_gso_off, test_large_gso_off_send_fails, NULL });
	nfqbt_tcase_tests(s, "conntrack", 0, (const TTest *[]){
		test_ct_verdicts, NULL });
	nfqbt_tcase_tests(s, "pace", 0, (const TTest *[]){
		test_pace_flow_tag, test_pace_waiting, NULL });
	return s;
}

int main(void)
{
	return nfqbt_run(plan_suite());
}
