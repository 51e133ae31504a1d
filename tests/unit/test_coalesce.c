// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Model-based property test of the coalescer.
 *
 * Random streams of packets (with id gaps, around the 2^32 wrap) go into a
 * socketless queue; random decisions (verdicts, marks, payloads) are made in
 * random order with random flushes and timer runs in between. Everything the
 * library sends is replayed against a model of the kernel queue with the
 * semantics of nfqnl_recv_verdict() (find by id, ENOENT if absent) and
 * nfqnl_recv_verdict_batch() (walk from the head while the id is not after
 * max; ENOENT if nothing matched). Every packet must get exactly its decided
 * verdict and mark, exactly once, never before it was decided.
 *
 * NFQB_SEED=<n> replays one seed; NFQB_CASES=<n> sets the number of cases.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>

#include "testq.h"
#include "parse.h"
#include "plan.h"
#include "txhook.h"

#define MAXPKT 512
#define QNUM 3

struct mpkt {
	uint32_t id;
	bool queued;		/* still in the model kernel queue */
	bool decided;
	bool verdicted;
	bool expired;		/* library gave it the default verdict */
	uint32_t verdict;
	bool has_mark;
	uint32_t mark;
	uint32_t plen;
	uint8_t payload[8];
	/* what the kernel applied */
	uint32_t got_verdict;
	bool got_has_mark;
	uint32_t got_mark;
	struct nfqb_packet *view;
};

struct model {
	unsigned int seed;
	struct mpkt p[MAXPKT];
	unsigned int n;
	unsigned int msgs;
	unsigned int batches;
	char err[256];
};

static unsigned int rnd(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static struct mpkt *find(struct model *m, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->p[i].queued && m->p[i].id == id)
			return &m->p[i];
	return NULL;
}

static bool find_any(const struct model *m, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->p[i].id == id)
			return true;
	return false;
}

static void apply(struct model *m, struct mpkt *k, uint32_t verdict,
		  const struct nlattr *mark, const struct nlattr *payload)
{
	if (m->err[0])
		return;
	if (!k->decided && !k->expired) {
		snprintf(m->err, sizeof(m->err),
			 "id %u verdicted before it was decided", k->id);
		return;
	}
	k->queued = false;
	k->verdicted = true;
	k->got_verdict = verdict;
	k->got_has_mark = mark != NULL;
	if (mark)
		k->got_mark = ntohl(mnl_attr_get_u32(mark));
	if (k->expired)
		return;
	if (payload && (mnl_attr_get_payload_len(payload) != k->plen ||
			memcmp(mnl_attr_get_payload(payload), k->payload,
			       k->plen))) {
		snprintf(m->err, sizeof(m->err), "id %u wrong payload", k->id);
		return;
	}
	if (!payload && k->plen) {
		snprintf(m->err, sizeof(m->err), "id %u payload lost", k->id);
		return;
	}
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= NFQA_PRIORITY)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* The kernel side: replay one datagram of verdict messages. */
static int kernel_rx(struct nfqb_queue *q, const void *buf, size_t len,
		     void *data)
{
	struct model *m = data;
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len;

	(void)q;
	while (mnl_nlmsg_ok(nlh, rem)) {
		const struct nlattr *tb[NFQA_PRIORITY + 1] = { 0 };
		const struct nfqnl_msg_verdict_hdr *vh;
		uint8_t type = nlh->nlmsg_type & 0xff;
		uint32_t verdict, id;

		m->msgs++;
		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb);
		if ((nlh->nlmsg_type >> 8) != NFNL_SUBSYS_QUEUE ||
		    !tb[NFQA_VERDICT_HDR]) {
			snprintf(m->err, sizeof(m->err), "bad message sent");
			return -1;
		}
		vh = mnl_attr_get_payload(tb[NFQA_VERDICT_HDR]);
		verdict = ntohl(vh->verdict);
		id = ntohl(vh->id);
		if (getenv("NFQB_TRACE"))
			fprintf(stderr, "  %s id %u verdict %u\n",
				type == NFQNL_MSG_VERDICT ? "single" : "batch",
				id, verdict);
		if (type == NFQNL_MSG_VERDICT) {
			struct mpkt *k = find(m, id);

			if (!k) {
				snprintf(m->err, sizeof(m->err),
					 "verdict for id %u: ENOENT", id);
				return -1;
			}
			apply(m, k, verdict, tb[NFQA_MARK], tb[NFQA_PAYLOAD]);
		} else if (type == NFQNL_MSG_VERDICT_BATCH) {
			unsigned int i, hit = 0;

			m->batches++;
			if (tb[NFQA_PAYLOAD]) {
				snprintf(m->err, sizeof(m->err),
					 "batch with a payload");
				return -1;
			}
			/* the kernel queue is in id order: walk from head */
			for (i = 0; i < m->n; i++) {
				if (!m->p[i].queued)
					continue;
				if (nfqb_id_after(m->p[i].id, id))
					break;
				apply(m, &m->p[i], verdict, tb[NFQA_MARK],
				      NULL);
				hit++;
			}
			if (!hit) {
				snprintf(m->err, sizeof(m->err),
					 "batch to %u: ENOENT", id);
				return -1;
			}
		} else {
			snprintf(m->err, sizeof(m->err), "unexpected type %u",
				 type);
			return -1;
		}
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	return 0;
}

static size_t build_packet(void *buf, uint32_t id)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nfqnl_msg_packet_hdr ph = {
		.packet_id = htonl(id),
		.hw_protocol = htons(0x0800),
		.hook = 3,
	};
	uint8_t payload[28] = { 0x45 };

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	nfg->res_id = htons(QNUM);
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(payload), payload);
	return nlh->nlmsg_len;
}

static void arrive(struct nfqb_queue *q, struct model *m, uint32_t id)
{
	char buf[256];
	struct nfqb_packet *v;
	struct mpkt *k = &m->p[m->n++];

	memset(k, 0, sizeof(*k));
	if (getenv("NFQB_TRACE"))
		fprintf(stderr, "arrive %u\n", id);
	k->id = id;
	k->queued = true;
	ck_assert_int_eq(nfqbt_rx_inject(q, buf, build_packet(buf, id), 0, 0),
			 0);
	ck_assert_uint_eq(nfqb_book_serve(q, 0, &v, 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(v), id);
	k->view = v;
}

static void decide_one(struct model *m, struct mpkt *k, unsigned int *s)
{
	unsigned int r = rnd(s) % 100;
	struct nfqb_verdict v = { 0 };
	int ret;

	k->verdict = rnd(s) % 13 == 0 ? NFQB_DROP : NFQB_ACCEPT;
	if (r < 40) {
		k->has_mark = true;
		k->mark = rnd(s) % 3;
	}
	if (r >= 95) {
		unsigned int i;

		k->plen = 1 + rnd(s) % 8;
		for (i = 0; i < k->plen; i++)
			k->payload[i] = (uint8_t)rnd(s);
	}
	v.verdict = k->verdict;
	if (k->has_mark) {
		v.flags |= NFQB_V_MARK;
		v.mark = k->mark;
	}
	if (k->plen) {
		v.flags |= NFQB_V_PAYLOAD;
		v.payload = k->payload;
		v.payload_len = k->plen;
	}
	k->decided = true;
	if (!k->has_mark && !k->plen && rnd(s) % 2)
		ret = nfqb_verdict(k->view, k->verdict);
	else
		ret = nfqb_verdict_ex(k->view, &v, sizeof(v));
	if (ret < 0 && errno == ETIMEDOUT) {
		ck_assert(k->expired);
		return;
	}
	ck_assert_msg(ret == 0, "seed %u: verdict failed: %s", m->seed,
		      strerror(errno));
	ck_assert(!k->expired);
}

static void check_done(struct model *m, uint32_t dflt)
{
	unsigned int i;

	ck_assert_msg(!m->err[0], "seed %u: %s", m->seed, m->err);
	for (i = 0; i < m->n; i++) {
		struct mpkt *k = &m->p[i];

		ck_assert_msg(k->verdicted && !k->queued,
			      "seed %u: id %u never verdicted", m->seed, k->id);
		if (k->expired) {
			ck_assert_msg(k->got_verdict == dflt && !k->got_has_mark,
				      "seed %u: expired id %u", m->seed, k->id);
			continue;
		}
		ck_assert_msg(k->got_verdict == k->verdict,
			      "seed %u: id %u verdict %u, decided %u", m->seed,
			      k->id, k->got_verdict, k->verdict);
		ck_assert_msg(k->got_has_mark == k->has_mark &&
			      (!k->has_mark || k->got_mark == k->mark),
			      "seed %u: id %u mark %d/%u, decided %d/%u",
			      m->seed, k->id, k->got_has_mark, k->got_mark,
			      k->has_mark, k->mark);
	}
}

/* One random case; @monotonic: ids only grow; @timeouts: undecided
 * packets may expire. */
static void run_case(unsigned int seed, bool monotonic, bool timeouts)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q;
	unsigned int s = seed, order[MAXPKT], nund, i;
	uint32_t id;
	unsigned int total;

	ck_assert_ptr_nonnull(m);
	m->seed = seed;
	q = nfqbt_queue_detached(QNUM, MAXPKT);
	ck_assert_ptr_nonnull(q);
	nfqbt_set_tx_hook(q, kernel_rx, m);
	/* long enough that only the forced timer runs below expire packets */
	if (timeouts)
		q->conf.timeout_ms = 1000000;
	nfqb_queue_set_batch_limit(q, 1 + rnd(&s) % 80);

	switch (rnd(&s) % 3) {
	case 0:
		id = 0xffffffffu - rnd(&s) % 200;	/* wraps */
		break;
	case 1:
		id = 1;
		break;
	default:
		id = (uint32_t)rnd(&s) << 17 | rnd(&s);
		break;
	}
	total = 1 + rnd(&s) % (MAXPKT - 1);
	nund = 0;
	while (m->n < total || nund) {
		unsigned int op = rnd(&s) % 100;

		if (m->n < total && (op < 45 || !nund)) {
			/* ids the kernel used for packets it never delivered */
			if (rnd(&s) % 6 == 0)
				id += 1 + rnd(&s) % 3;
			/* a broken kernel: an id not after the last one
			 * (still unique: duplicates cannot be told apart) */
			if (!monotonic && rnd(&s) % 50 == 0) {
				uint32_t back = id - 1 - rnd(&s) % 5;
				bool used = false;

				for (i = 0; i < m->n; i++)
					used |= m->p[i].id == back;
				if (!used)
					id = back;
			}
			while (!monotonic && find_any(m, id))
				id++;
			arrive(q, m, id);
			order[nund++] = m->n - 1;
			id++;
		} else if (op < 85 && nund) {
			/* decide a random undecided packet */
			unsigned int j = rnd(&s) % nund;
			struct mpkt *k = &m->p[order[j]];

			order[j] = order[--nund];
			decide_one(m, k, &s);
		} else if (op < 95) {
			ck_assert_int_ge(nfqb_flush(q), 0);
		} else if (timeouts) {
			/* time passes: undecided packets expire */
			for (i = 0; i < m->n; i++)
				if (!m->p[i].decided && !m->p[i].expired)
					m->p[i].expired = true;
			ck_assert_int_eq(nfqb_loop_run_timers(q,
					 nfqb_now_ns() + 2000000000000ull), 0);
		} else {
			/* the latency bound passes for held decisions */
			ck_assert_int_eq(nfqb_loop_run_timers(q,
					 nfqb_now_ns() + 10000000000ull), 0);
		}
		ck_assert_msg(!m->err[0], "seed %u: %s", seed, m->err);
	}
	ck_assert_int_ge(nfqb_flush(q), 0);
	if (!monotonic || !timeouts)
		ck_assert_int_ge(nfqb_loop_run_timers(q, nfqb_now_ns() +
						      10000000000ull), 0);
	check_done(m, NFQB_ACCEPT);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	free(m);
}

/* The first seed of a test: NFQB_SEED replays exactly that case. */
static unsigned int base_seed(unsigned int offset)
{
	const char *e = getenv("NFQB_SEED");

	if (e)
		return (unsigned int)strtoul(e, NULL, 0);
	return (unsigned int)time(NULL) + offset;
}

static unsigned int ncases(unsigned int dflt)
{
	const char *e = getenv("NFQB_SEED");
	const char *c = getenv("NFQB_CASES");

	if (e)
		return 1;
	return c ? (unsigned int)strtoul(c, NULL, 0) : dflt;
}

START_TEST(property_monotonic)
{
	unsigned int seed = base_seed(0), i, n = ncases(3000);

	fprintf(stderr, "coalescer property: seed %u, %u cases\n", seed, n);
	for (i = 0; i < n; i++)
		run_case(seed + i, true, false);
}
END_TEST

START_TEST(property_timeouts)
{
	unsigned int seed = base_seed(1000003u), i, n = ncases(1000);

	for (i = 0; i < n; i++)
		run_case(seed + i, true, true);
}
END_TEST

START_TEST(property_nonmonotonic)
{
	unsigned int seed = base_seed(2000003u), i, n = ncases(1000);

	for (i = 0; i < n; i++)
		run_case(seed + i, false, false);
}
END_TEST

/* Deterministic: an all-accept stream decided in order is sent as one batch
 * per flush; a decision behind an undecided packet is held. */
START_TEST(batch_and_hold)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, 64);
	struct nfqb_stats st;
	unsigned int i;

	nfqbt_set_tx_hook(q, kernel_rx, m);
	for (i = 0; i < 10; i++)
		arrive(q, m, 100 + i);
	/* decide 0..3 and 5..9; 4 stays undecided */
	for (i = 0; i < 10; i++) {
		if (i == 4)
			continue;
		m->p[i].decided = true;
		m->p[i].verdict = NFQB_ACCEPT;
		ck_assert_int_eq(nfqb_verdict(m->p[i].view, NFQB_ACCEPT), 0);
	}
	ck_assert_int_eq(nfqb_flush(q), 1);	/* one batch: ids 100..103 */
	ck_assert_uint_eq(m->batches, 1);
	for (i = 0; i < 4; i++)
		ck_assert(m->p[i].verdicted);
	for (i = 5; i < 10; i++)
		ck_assert(!m->p[i].verdicted);	/* held behind 104 */
	m->p[4].decided = true;
	m->p[4].verdict = NFQB_DROP;
	ck_assert_int_eq(nfqb_verdict(m->p[4].view, NFQB_DROP), 0);
	ck_assert_int_eq(nfqb_verdict(m->p[4].view, NFQB_DROP), -1);
	ck_assert_int_eq(errno, EALREADY);
	/* 104 alone (single drop), then one batch 105..109 */
	ck_assert_int_eq(nfqb_flush(q), 2);
	ck_assert_uint_eq(m->batches, 2);
	check_done(m, NFQB_ACCEPT);
	nfqb_queue_stats(q, &st, sizeof(st));
	ck_assert_uint_eq(st.batch_msgs, 2);
	ck_assert_uint_eq(st.batch_packets, 9);
	ck_assert_uint_eq(st.verdict_msgs, 1);
	ck_assert_uint_eq(st.accepted, 9);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.outstanding, 0);
	nfqb_queue_close(q);
	free(m);
}
END_TEST

/* An adopted queue (nfqb_queue_adopt()): packets 90..99 of the previous
 * owner, which died before deciding them, are still in the kernel queue.
 * The new owner's decisions (accept with a mark) for 100..109 must not
 * reach them: one default batch up to 99 comes first. A queue not
 * adopted (nothing before its first packet) sends no such batch. */
START_TEST(adopted_orphans)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, 64);
	struct nfqb_stats st;
	unsigned int i;

	q->sk.adopted = true;
	nfqbt_set_tx_hook(q, kernel_rx, m);
	for (i = 0; i < 10; i++) {	/* the orphans: never seen by us */
		struct mpkt *k = &m->p[m->n++];

		memset(k, 0, sizeof(*k));
		k->id = 90 + i;
		k->queued = true;
		k->expired = true;	/* expect the default verdict */
	}
	for (i = 0; i < 10; i++)
		arrive(q, m, 100 + i);
	for (i = 10; i < 20; i++) {
		m->p[i].decided = true;
		m->p[i].verdict = NFQB_ACCEPT;
		m->p[i].has_mark = true;
		m->p[i].mark = 7;
		ck_assert_int_eq(nfqb_verdict_mark(m->p[i].view, NFQB_ACCEPT,
						   7), 0);
	}
	ck_assert_int_eq(nfqb_flush(q), 2);	/* orphans, then ours */
	ck_assert_uint_eq(m->batches, 2);
	check_done(m, NFQB_ACCEPT);
	nfqb_queue_stats(q, &st, sizeof(st));
	ck_assert_uint_eq(st.outstanding, 0);
	nfqbt_set_tx_hook(NULL, NULL, NULL);
	nfqb_queue_close(q);

	/* not adopted: one batch, ours */
	memset(m, 0, sizeof(*m));
	q = nfqbt_queue_detached(QNUM, 64);
	nfqbt_set_tx_hook(q, kernel_rx, m);
	for (i = 0; i < 10; i++)
		arrive(q, m, 100 + i);
	for (i = 0; i < 10; i++) {
		m->p[i].decided = true;
		m->p[i].verdict = NFQB_ACCEPT;
		ck_assert_int_eq(nfqb_verdict(m->p[i].view, NFQB_ACCEPT), 0);
	}
	ck_assert_int_eq(nfqb_flush(q), 1);
	check_done(m, NFQB_ACCEPT);
	nfqbt_set_tx_hook(NULL, NULL, NULL);
	nfqb_queue_close(q);
	free(m);
}
END_TEST

/* The verdict timeout gives an undecided packet the default verdict; the
 * application's late decision is refused with ETIMEDOUT. */
START_TEST(timeout_default)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, 64);
	struct nfqb_stats st;

	nfqbt_set_tx_hook(q, kernel_rx, m);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(q, NFQB_DROP), 0);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(q, 5), 0);
	arrive(q, m, 7);
	ck_assert_int_eq(nfqb_loop_run_timers(q, nfqb_now_ns()), 0);
	ck_assert(!m->p[0].verdicted);
	m->p[0].expired = true;
	ck_assert_int_eq(nfqb_loop_run_timers(q, nfqb_now_ns() + 6000000), 0);
	ck_assert(m->p[0].verdicted);
	ck_assert_uint_eq(m->p[0].got_verdict, NFQB_DROP);
	ck_assert_int_eq(nfqb_verdict(m->p[0].view, NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	nfqb_queue_stats(q, &st, sizeof(st));
	ck_assert_uint_eq(st.timeouts, 1);
	nfqb_queue_close(q);
	free(m);
}
END_TEST

/* An explicit batch finalizes every undecided packet up to max id; packets
 * decided before keep their decision. */
START_TEST(explicit_batch)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, 64);
	uint32_t mark = 77;
	unsigned int i;

	nfqbt_set_tx_hook(q, kernel_rx, m);
	for (i = 0; i < 6; i++)
		arrive(q, m, 0xfffffffdu + i);	/* wraps after 3 */
	m->p[1].decided = true;
	m->p[1].verdict = NFQB_DROP;
	ck_assert_int_eq(nfqb_verdict(m->p[1].view, NFQB_DROP), 0);
	for (i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		m->p[i].decided = true;
		m->p[i].verdict = NFQB_ACCEPT;
		m->p[i].has_mark = true;
		m->p[i].mark = mark;
	}
	ck_assert_int_eq(nfqb_verdict_batch(q, 1, NFQB_ACCEPT, &mark), 4);
	ck_assert_int_eq(nfqb_flush(q), 3);	/* batch, single, batch */
	ck_assert(!m->p[5].verdicted);
	ck_assert_int_eq(nfqb_verdict_batch(q, 1, NFQB_ACCEPT, NULL), -1);
	ck_assert_int_eq(errno, ENOENT);
	m->p[5].decided = true;
	m->p[5].verdict = NFQB_ACCEPT;
	ck_assert_int_eq(nfqb_verdict(m->p[5].view, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);
	check_done(m, NFQB_ACCEPT);
	nfqb_queue_close(q);
	free(m);
}
END_TEST

/* Decisions in order, all accept: far fewer messages than packets. */
START_TEST(all_accept_ratio)
{
	struct model *m = calloc(1, sizeof(*m));
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, MAXPKT);
	struct nfqb_stats st;
	unsigned int i, j;

	nfqbt_set_tx_hook(q, kernel_rx, m);
	for (j = 0; j < 8; j++) {
		unsigned int base = m->n;

		for (i = 0; i < 64; i++)
			arrive(q, m, 1 + base + i);
		for (i = 0; i < 64; i++) {
			m->p[base + i].decided = true;
			m->p[base + i].verdict = NFQB_ACCEPT;
			ck_assert_int_eq(nfqb_verdict(m->p[base + i].view,
						      NFQB_ACCEPT), 0);
		}
		ck_assert_int_eq(nfqb_flush(q), 1);
	}
	check_done(m, NFQB_ACCEPT);
	nfqb_queue_stats(q, &st, sizeof(st));
	ck_assert_uint_eq(st.batch_msgs, 8);
	ck_assert_uint_eq(st.send_calls, 8);
	nfqb_queue_close(q);
	free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("coalescer");
	TCase *tc = tcase_create("model");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, batch_and_hold);
	tcase_add_test(tc, adopted_orphans);
	tcase_add_test(tc, timeout_default);
	tcase_add_test(tc, explicit_batch);
	tcase_add_test(tc, all_accept_ratio);
	tcase_add_test(tc, property_monotonic);
	tcase_add_test(tc, property_timeouts);
	tcase_add_test(tc, property_nonmonotonic);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
