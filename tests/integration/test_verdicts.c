// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration tests of the verdicts a batch cannot carry, against the real
 * kernel: queue-to-N (with mark and priority applied on the way, seen by
 * the second queue), queue-to-N with and without bypass to a queue nobody
 * holds, and repeat (the packet runs through the hook again); a verdict
 * that sets the conntrack mark, so that a rule on it passes the flow's
 * later packets without queueing them.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

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

/* --- conntrack verdicts ---------------------------------------------------- */

#define CT_PORT		5111
#define CT_MARK		0x2a
#define CT_N		5

/* Datagram @seq of one flow: every one from socket @fd. */
static void ct_send(int fd, uint32_t seq)
{
	struct sockaddr_in sa = nfqbt_lo_addr(CT_PORT);
	uint8_t buf[64];

	nfqbt_fill_payload(buf, sizeof(buf), seq);
	ck_assert_int_eq(sendto(fd, buf, sizeof(buf), 0,
				(struct sockaddr *)&sa, sizeof(sa)),
			 (ssize_t)sizeof(buf));
}

/* Accept what @q hands out for @ms (the first with the conntrack mark if
 * @ct), or until @stop packets; how many it handed out. *@glue (if not
 * NULL): the first came with NFQA_CT. */
static unsigned int ct_serve(struct nfqb_queue *q, unsigned int ms,
			     unsigned int stop, bool ct, bool *glue)
{
	uint64_t end = nfqbt_now_ms() + ms;
	unsigned int n = 0;
	struct nfqb_packet *p;

	while (n < stop && nfqbt_now_ms() < end) {
		if (nfqb_recv(q, &p, 1) != 1) {
			ck_assert_msg(errno == EAGAIN || errno == EINTR,
				      "nfqb_recv: %s", strerror(errno));
			continue;
		}
		if (glue && !n)
			*glue = nfqb_pkt_ct(p, NULL) != NULL;
		if (ct && !n)
			ck_assert_int_eq(nfqb_verdict_ct_mark(p, NFQB_ACCEPT,
							      CT_MARK), 0);
		else
			ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
		n++;
		ck_assert_int_ge(nfqb_flush(q), 0);
	}
	return n;
}

/*
 * The first datagram of a flow is queued and accepted with conntrack mark
 * 0x2a (nfqb_verdict_ct_mark(), NFQA_CT in its verdict); a rule before
 * the queue passes packets of connections with that mark, so the next
 * four never reach the queue, and all five arrive. The control (_i 1)
 * accepts without the mark: all five are queued.
 *
 * The kernel parses NFQA_CT only with ctnetlink's glue
 * (CONFIG_NETFILTER_NETLINK_GLUE_CT, nf_conntrack_netlink loaded): a
 * kernel built without it refuses NFQB_F_CONNTRACK (EOPNOTSUPP), and one
 * with it puts NFQA_CT into the packets of a queue with that flag while
 * the hook is there; that tells whether this kernel takes the verdict's. Without it
 * the verdict must still apply, the entry unchanged: all five queued,
 * all five arrive.
 */
START_TEST(test_ct_mark_flow)
{
	bool ct = _i == 0;
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	unsigned int seen, i;
	bool glue = false;
	int fd;

	/* ctnetlink, if a module (built in, or absent: see above) */
	if (system("modprobe -q nf_conntrack_netlink 2>/dev/null"))
		fprintf(stderr, "ct: no nf_conntrack_netlink module\n");
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -m connmark "
		       "--mark %#x -j ACCEPT", CT_PORT, CT_MARK);
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE "
		       "--queue-num %u", CT_PORT, QA);
	rx = nfqbt_rx_start(CT_PORT, NULL);
	q = nfqbt_queue_open(QA);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 50), 0);
	if (nfqb_queue_set_flags(q, NFQB_F_CONNTRACK, NFQB_F_CONNTRACK))
		ck_assert_int_eq(errno, EOPNOTSUPP);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ct_send(fd, 0);
	seen = ct_serve(q, 3000, 1, ct, &glue);
	ck_assert_uint_eq(seen, 1);
	ck_assert(nfqbt_rx_wait_total(rx, 1, 3000));
	for (i = 1; i < CT_N; i++)
		ct_send(fd, i);
	seen += ct_serve(q, 500, CT_N, false, NULL);
	ck_assert(nfqbt_rx_wait_total(rx, CT_N, 3000));
	fprintf(stderr, "ct %s: the kernel %s conntrack verdicts: %u of %u "
		"queued\n", ct ? "mark" : "control",
		glue ? "takes" : "ignores", seen, CT_N);
	ck_assert_uint_eq(seen, ct && glue ? 1 : CT_N);
	close(fd);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

static Suite *verdicts_suite(void)
{
	Suite *s = suite_create("verdicts");
	TCase *tc = nfqbt_tcase_netns(s, "kernel", NFQBT_TCASE_TIMEOUT_LONG);

	tcase_add_test(tc, test_requeue_mark_priority);
	tcase_add_test(tc, test_requeue_bypass);
	tcase_add_test(tc, test_repeat);
	tcase_add_loop_test(tc, test_ct_mark_flow, 0, 2);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_verdicts", verdicts_suite());
}
