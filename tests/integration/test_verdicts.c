// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration tests of the verdicts a batch cannot carry, against the real
 * kernel: queue-to-N (with mark and priority applied on the way, seen by
 * the second queue), queue-to-N with and without bypass to a queue nobody
 * holds, and repeat (the packet runs through the hook again).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PORT	5101
#define QA	3
#define QB	5
#define QNONE	9
#define N	300

struct seen {
	struct nfqb_queue *qa, *qb;	/* qb: NULL if not open */
	struct nfqbt_rx *rx;
	unsigned int a[N], b[N];	/* times each seq was seen on A / B */
	bool prio_ok[N], mark_ok[N];
	unsigned int handled_a, handled_b;
};

typedef int (*decide_a_fn)(struct nfqb_packet *p, uint32_t seq,
			   unsigned int times);

/* Serve queue A (and B if open) until @want packets were handled on A and
 * @want_b on B, or 10 s pass. */
static void serve(struct seen *s, decide_a_fn decide_a, unsigned int want,
		  unsigned int want_b)
{
	struct nfqb_queue *qa = s->qa, *qb = s->qb;
	uint64_t end = nfqbt_now_ms() + 10000;

	while ((s->handled_a < want || s->handled_b < want_b) &&
	       nfqbt_now_ms() < end) {
		struct pollfd pfd[2] = {
			{ .fd = nfqb_queue_fd(qa), .events = POLLIN },
			{ .fd = qb ? nfqb_queue_fd(qb) : -1, .events = POLLIN },
		};
		struct nfqb_packet *vec[32];
		int n, i;

		poll(pfd, 2, 50);
		n = nfqb_recv(qa, vec, 32);
		ck_assert_msg(n > 0 || errno == EAGAIN, "recv A: %s",
			      strerror(errno));
		for (i = 0; i < n; i++) {
			uint32_t seq;

			ck_assert(nfqbt_pkt_seq(vec[i], &seq) && seq < N);
			s->a[seq]++;
			s->handled_a++;
			ck_assert_int_eq(decide_a(vec[i], seq, s->a[seq]), 0);
		}
		if (!qb)
			continue;
		n = nfqb_recv(qb, vec, 32);
		ck_assert_msg(n > 0 || errno == EAGAIN, "recv B: %s",
			      strerror(errno));
		for (i = 0; i < n; i++) {
			uint32_t seq, v;

			ck_assert(nfqbt_pkt_seq(vec[i], &seq) && seq < N);
			s->b[seq]++;
			s->handled_b++;
			s->prio_ok[seq] = nfqb_pkt_priority(vec[i], &v) &&
					  v == seq + 100;
			s->mark_ok[seq] = nfqb_pkt_mark(vec[i], &v) &&
					  v == seq * 7 + 1;
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		}
	}
	nfqb_flush(qa);
	if (qb)
		nfqb_flush(qb);
}

/* Send N datagrams through queue A (queue B open too if @with_b), served
 * as serve() does; ck_assert that exactly those @expect returns true for
 * arrived (all: NULL), once each. Free it with run_end(). */
static struct seen *run(bool with_b, decide_a_fn decide_a, unsigned int want,
			unsigned int want_b, nfqbt_expect_fn expect)
{
	struct seen *s = calloc(1, sizeof(*s));
	unsigned int expected = 0;
	struct nfqbt_tx *tx;
	uint32_t seq;

	ck_assert_ptr_nonnull(s);
	for (seq = 0; seq < N; seq++)
		expected += !expect || expect(seq, NULL);
	nfqbt_rule_queue(PORT, QA, false);
	s->qa = nfqbt_queue_open_nb(QA);
	if (with_b)
		s->qb = nfqbt_queue_open_nb(QB);
	s->rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = expected });
	tx = nfqbt_tx_start(&(struct nfqbt_tx_opts){
		.port = PORT, .count = N });
	serve(s, decide_a, want, want_b);
	ck_assert_uint_eq(nfqbt_tx_join(tx), N);
	nfqbt_rx_wait_exact(s->rx, 0, N, expect, NULL);
	return s;
}

static void run_end(struct seen *s)
{
	ck_assert_int_eq(nfqb_queue_close(s->qa), 0);
	if (s->qb)
		ck_assert_int_eq(nfqb_queue_close(s->qb), 0);
	nfqbt_rx_free(s->rx);
	free(s);
}

static int to_b(struct nfqb_packet *p, uint32_t seq, unsigned int times)
{
	struct nfqb_verdict v = {
		.verdict = NFQB_QUEUE,
		.queue_num = QB,
		.flags = NFQB_V_MARK | NFQB_V_PRIORITY,
		.mark = seq * 7 + 1,
		.priority = seq + 100,
	};

	(void)times;
	return nfqb_verdict_ex(p, &v, sizeof(v));
}

START_TEST(test_requeue_mark_priority)
{
	struct seen *s = run(true, to_b, N, N, NULL);
	uint32_t seq;

	for (seq = 0; seq < N; seq++) {
		uint32_t mark = 0;

		ck_assert_uint_eq(s->a[seq], 1);
		ck_assert_uint_eq(s->b[seq], 1);
		ck_assert_msg(s->prio_ok[seq], "seq %u: queue %u saw no "
			      "priority %u", seq, QB, seq + 100);
		ck_assert_msg(s->mark_ok[seq], "seq %u: queue %u saw no "
			      "mark %u", seq, QB, seq * 7 + 1);
		ck_assert(nfqbt_rx_mark(s->rx, seq, &mark));
		ck_assert_uint_eq(mark, seq * 7 + 1);
	}
	/* never batched */
	nfqbt_assert_stats(s->qa, "requeued=%u batch_msgs=0 verdict_msgs=%u", N,
			   N);
	run_end(s);
}
END_TEST

static int to_none_bypass(struct nfqb_packet *p, uint32_t seq,
			  unsigned int times)
{
	struct nfqb_verdict v = {
		.verdict = NFQB_QUEUE,
		.queue_num = QNONE,
		.flags = (seq % 2) ? NFQB_V_BYPASS : 0,
	};

	(void)times;
	return nfqb_verdict_ex(p, &v, sizeof(v));
}

static bool is_odd(uint32_t seq, void *data)
{
	(void)data;
	return seq % 2;
}

/* Odd seqs go to a queue nobody holds with bypass (accepted), even ones
 * without (dropped by the kernel). */
START_TEST(test_requeue_bypass)
{
	run_end(run(false, to_none_bypass, N, 0, is_odd));
}
END_TEST

static int repeat_once(struct nfqb_packet *p, uint32_t seq,
		       unsigned int times)
{
	(void)seq;
	return nfqb_verdict(p, times == 1 ? NFQB_REPEAT : NFQB_ACCEPT);
}

/* Repeat: the packet runs through the hook again, is queued again (a new
 * id), and the second time it is accepted. */
START_TEST(test_repeat)
{
	struct seen *s = run(false, repeat_once, 2 * N, 0, NULL);
	uint32_t seq;

	for (seq = 0; seq < N; seq++)
		ck_assert_msg(s->a[seq] == 2, "seq %u queued %u times", seq,
			      s->a[seq]);
	nfqbt_assert_stats(s->qa, "repeated=%u accepted=%u", N, N);
	ck_assert(!nfqb_queue_fallback(s->qa));
	run_end(s);
}
END_TEST

static Suite *verdicts_suite(void)
{
	Suite *s = suite_create("verdicts");
	TCase *tc = nfqbt_tcase_netns(s, "kernel", NFQBT_TCASE_TIMEOUT_LONG);

	tcase_add_test(tc, test_requeue_mark_priority);
	tcase_add_test(tc, test_requeue_bypass);
	tcase_add_test(tc, test_repeat);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_verdicts", verdicts_suite());
}
