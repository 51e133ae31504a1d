// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The coalescer against the real kernel: each test in its own network
 * namespace (see harness.h), with its own iptables NFQUEUE rule and loopback
 * UDP traffic carrying sequence numbers.
 *
 * The two 200,000-packet runs print their figures (verdict messages per
 * packet, packets per second) on stderr:
 *   make check TESTS=tests/integration/test_coalesce_kernel
 *   grep '^coalesce-kernel' tests/integration/test_coalesce_kernel.log
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define PORT		5011
#define QNUM		9

/* Packets of the two big runs. */
#define BIG_N		200000u
/* Datagrams in flight, relative to what the receiver got. */
#define BIG_WINDOW	512u

/* A seq the owner thread takes as "stop"; it drops that packet. */
#define STOP_SEQ	(BIG_N + 1000u)
#define RX_MAX_SEQ	(BIG_N + 2000u)

/* Timeout of the big test cases: their own bound is below it. */
#define BIG_TCASE_TIMEOUT	170
#define BIG_BOUND_MS		150000u

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void send_one(uint32_t seq)
{
	nfqbt_send_seqs(PORT, seq, 1);
}

static void report(const char *name, const struct nfqb_stats *st,
		   unsigned int n, uint64_t usec)
{
	double msgs = (double)(st->verdict_msgs + st->batch_msgs);

	fprintf(stderr,
		"coalesce-kernel %s: %u packets in %.3f s = %.0f packets/s; "
		"%llu batch + %llu single verdict msgs = %.5f msgs/packet "
		"(1 per %.1f); %llu sendmsg, %llu recv calls; flushes %llu "
		"(limit %llu idle %llu latency %llu explicit %llu)\n",
		name, n, (double)usec / 1e6,
		usec ? (double)n * 1e6 / (double)usec : 0.0,
		(unsigned long long)st->batch_msgs,
		(unsigned long long)st->verdict_msgs, msgs / n,
		msgs ? n / msgs : 0.0,
		(unsigned long long)st->send_calls,
		(unsigned long long)st->recv_calls,
		(unsigned long long)st->flushes,
		(unsigned long long)st->flush_limit,
		(unsigned long long)st->flush_idle,
		(unsigned long long)st->flush_latency,
		(unsigned long long)st->flush_explicit);
}

/* The kernel queue must be empty and must have lost nothing. */
static void assert_kqueue_clean(void)
{
	nfqbt_assert_kstats(QNUM, "queue_total=0 queue_dropped=0 "
			    "queue_user_dropped=0");
}

/* --- 1. out of order, from another thread, drops and marks ------------- */

static bool mixed_accepted(uint32_t seq, void *data)
{
	(void)data;
	return seq % 13 != 0;
}

static uint32_t mixed_mark(uint32_t seq)
{
	return 1 + (seq / 1000) % 7;
}

/* Owner -> decider hand-off: a mutex+condvar FIFO of packets. */
struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nfqb_packet **v;
	unsigned int cap, head, tail;
	bool closed;
};

static void handoff_init(struct handoff *h, unsigned int cap)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->v = calloc(cap, sizeof(*h->v));
	ck_assert(h->v != NULL);
	h->cap = cap;
}

static void handoff_destroy(struct handoff *h)
{
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	free(h->v);
}

/* The owner hands over packets in one go per nfqb_recv(). */
static void handoff_put(struct handoff *h, struct nfqb_packet **p,
			unsigned int n)
{
	unsigned int i;

	pthread_mutex_lock(&h->lock);
	ck_assert_uint_le(h->tail + n, h->cap);
	for (i = 0; i < n; i++)
		h->v[h->tail++] = p[i];
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void handoff_close(struct handoff *h)
{
	pthread_mutex_lock(&h->lock);
	h->closed = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

#define POOL_MAX	32

struct mixed {
	struct handoff h;
	unsigned int seed;
	atomic_uint decided;
	atomic_uint dropped;
	/* the decider's findings, checked by the test thread */
	unsigned int bad_seq, verdict_errors, first_errno;
	bool timed_out;
	/* sender window: receiver's count + drops decided */
	const struct nfqbt_rx *rx;
	atomic_uint progress;
	atomic_bool stop_pacer;
};

/*
 * Take packets off the hand-off into a pool of up to POOL_MAX and decide a
 * random one of the pool each time, pausing a few microseconds now and
 * then. Runs until the hand-off is closed and empty and the pool is empty.
 */
static void *mixed_decider(void *arg)
{
	struct mixed *m = arg;
	struct nfqb_packet *pool[POOL_MAX];
	unsigned int npool = 0, seed = m->seed, ndec = 0;
	uint64_t start = nfqbt_now_ms();

	for (;;) {
		struct nfqb_packet *p;
		unsigned int k;
		uint32_t seq;
		int ret;

		pthread_mutex_lock(&m->h.lock);
		while (npool < POOL_MAX && m->h.head != m->h.tail)
			pool[npool++] = m->h.v[m->h.head++];
		while (!npool && !m->h.closed) {
			struct timespec ts;

			if (nfqbt_now_ms() - start >= BIG_BOUND_MS) {
				m->timed_out = true;
				break;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&m->h.cond, &m->h.lock, &ts);
			while (npool < POOL_MAX && m->h.head != m->h.tail)
				pool[npool++] = m->h.v[m->h.head++];
		}
		pthread_mutex_unlock(&m->h.lock);
		if (!npool)
			break;

		k = (unsigned int)rand_r(&seed) % npool;
		p = pool[k];
		pool[k] = pool[--npool];
		if (!nfqbt_pkt_seq(p, &seq)) {
			m->bad_seq++;
			seq = 0;	/* drop what we cannot read */
		}
		if (!mixed_accepted(seq, NULL)) {
			ret = nfqb_verdict(p, NFQB_DROP);
			atomic_fetch_add(&m->dropped, 1);
		} else {
			ret = nfqb_verdict_mark(p, NFQB_ACCEPT,
						mixed_mark(seq));
		}
		if (ret < 0 && !m->verdict_errors++)
			m->first_errno = errno;
		atomic_fetch_add(&m->decided, 1);
		if (++ndec % 100 == 0)
			usleep((unsigned int)rand_r(&seed) % 50);
	}
	return NULL;
}

/* Keep the sender's window relative to what has been dealt with for good:
 * arrived at the receiver, or decided drop. */
static void *mixed_pacer(void *arg)
{
	struct mixed *m = arg;
	uint64_t start = nfqbt_now_ms();

	while (!atomic_load(&m->stop_pacer) &&
	       nfqbt_now_ms() - start < BIG_BOUND_MS) {
		atomic_store(&m->progress, nfqbt_rx_total(m->rx) +
			     atomic_load(&m->dropped));
		usleep(50);
	}
	return NULL;
}

START_TEST(test_out_of_order_mixed)
{
	const unsigned int n = BIG_N;
	struct nfqb_packet *vec[256];
	unsigned int handed = 0, ndrop = 0, i, recv_errs = 0;
	pthread_t decider, pacer;
	struct nfqb_stats st;
	struct nfqbt_rx *rx;
	struct nfqbt_tx *tx;
	struct nfqb_queue *q;
	struct mixed *m;
	uint64_t start, t0, usec;
	bool stopped = false;
	uint32_t seq;

	for (i = 0; i < n; i++)
		ndrop += !mixed_accepted(i, NULL);
	m = calloc(1, sizeof(*m));
	ck_assert(m != NULL);
	handoff_init(&m->h, n + 16);
	m->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	fprintf(stderr, "coalesce-kernel out_of_order_mixed: seed %u\n",
		m->seed);

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(q, 8 << 20), 0);
	ck_assert_int_eq(nfqb_queue_set_maxlen(q, 8192), 0);
	ck_assert_int_eq(nfqb_queue_set_buffers(q, 4096), 0);

	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = n - ndrop, .linger_ms = 300, .quiet_ms = 5000,
		.timeout_ms = BIG_BOUND_MS, .max_seq = RX_MAX_SEQ });
	m->rx = rx;
	ck_assert_int_eq(pthread_create(&pacer, NULL, mixed_pacer, m), 0);
	ck_assert_int_eq(pthread_create(&decider, NULL, mixed_decider, m), 0);
	t0 = now_us();
	tx = nfqbt_tx_start(&(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .size = 16, .window = BIG_WINDOW,
		.progress = &m->progress, .timeout_ms = BIG_BOUND_MS });

	/*
	 * The owner: blocking nfqb_recv(), so decisions of the other thread
	 * reach the kernel by the eventfd wake-up, the batch limit, the idle
	 * socket or the latency bound. After the last decision the sender
	 * thread's stop datagram ends the loop.
	 */
	start = nfqbt_now_ms();
	while (!stopped && nfqbt_now_ms() - start < BIG_BOUND_MS) {
		int got = nfqb_recv(q, vec, 256);
		unsigned int k = 0;

		if (got < 0) {
			ck_assert_msg(errno == EINTR || errno == EAGAIN,
				      "nfqb_recv: %s", strerror(errno));
			recv_errs++;
			continue;
		}
		for (i = 0; i < (unsigned int)got; i++) {
			if (nfqbt_pkt_seq(vec[i], &seq) && seq == STOP_SEQ) {
				ck_assert_int_eq(nfqb_verdict(vec[i],
							      NFQB_DROP), 0);
				stopped = true;
				continue;
			}
			vec[k++] = vec[i];
		}
		handoff_put(&m->h, vec, k);
		handed += k;
		if (handed == n && !stopped) {
			/* all handed over: once they are all decided,
			 * a stop datagram wakes us for the last time */
			ck_assert_uint_eq(nfqbt_tx_join(tx), n);
			tx = NULL;
			handoff_close(&m->h);
			ck_assert(nfqbt_wait_count(&m->decided, n,
						   BIG_BOUND_MS));
			send_one(STOP_SEQ);
		}
	}
	ck_assert_msg(stopped, "owner loop: %u of %u handed over", handed, n);
	ck_assert_int_ge(nfqb_flush(q), 0);
	pthread_join(decider, NULL);
	ck_assert(!m->timed_out);
	ck_assert_uint_eq(m->bad_seq, 0);
	ck_assert_msg(m->verdict_errors == 0, "%u verdict errors, first: %s",
		      m->verdict_errors, strerror(m->first_errno));
	ck_assert_uint_eq(atomic_load(&m->decided), n);
	ck_assert_uint_eq(atomic_load(&m->dropped), ndrop);

	nfqbt_rx_wait(rx);
	usec = now_us() - t0;
	atomic_store(&m->stop_pacer, true);
	pthread_join(pacer, NULL);

	/* exactly the accepted set, each once, with exactly its mark */
	nfqbt_rx_assert_exact(rx, 0, n, mixed_accepted, NULL);
	for (seq = 0; seq < n; seq++) {
		uint32_t mark;

		if (!mixed_accepted(seq, NULL))
			continue;
		mark = nfqbt_rx_mark_of(rx, seq);
		ck_assert_msg(mark == mixed_mark(seq),
			      "seq %u: mark %u, want %u", seq, mark,
			      mixed_mark(seq));
	}

	st = nfqbt_queue_stats(q);
	report("out_of_order_mixed", &st, n, usec);
	/* the stop datagram is the one more, dropped; every packet got
	 * exactly one verdict: batches + singles */
	nfqbt_assert_counters(&st, "packets=%u accepted=%u dropped=%u marked=%u "
			      "outstanding=0 timeouts+defaults+fallbacks=0 "
			      "kernel_errors=0 enobufs=0 rejected_foreign+"
			      "rejected_malformed+rejected_truncated=0 "
			      "batch_packets+verdict_msgs=%u", n + 1,
			      n - ndrop, ndrop + 1, n - ndrop, n + 1);
	nfqbt_assert_kstats(QNUM, "id_sequence=%u", n + 1);
	assert_kqueue_clean();

	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
	handoff_destroy(&m->h);
	free(m);
	(void)recv_errs;
}
END_TEST

/* --- 2. all accept, in order: few messages ----------------------------- */

START_TEST(test_all_accept_ratio)
{
	const unsigned int n = BIG_N;
	struct nfqb_stats st;
	struct nfqbt_flow f;
	uint64_t t0, usec;
	double msgs;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n, .linger_ms = 300, .quiet_ms = 5000,
		.timeout_ms = BIG_BOUND_MS, .max_seq = RX_MAX_SEQ },
		nfqbt_decide_accept, NULL);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(f.q, 8 << 20), 0);
	ck_assert_int_eq(nfqb_queue_set_maxlen(f.q, 8192), 0);
	f.c.max_vec = 256;
	t0 = now_us();
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .size = 16, .window = BIG_WINDOW,
		.progress = nfqbt_rx_total_ptr(f.rx),
		.timeout_ms = BIG_BOUND_MS }, BIG_BOUND_MS);
	nfqbt_rx_wait(f.rx);
	usec = now_us() - t0;
	nfqbt_rx_assert_exact(f.rx, 0, n, NULL, NULL);
	ck_assert_uint_eq(f.c.not_udp, 0);
	ck_assert_uint_eq(f.c.enobufs, 0);

	st = nfqbt_queue_stats(f.q);
	report("all_accept_ratio", &st, n, usec);
	nfqbt_assert_counters(&st, "packets=%u accepted=%u dropped+marked=0 "
			      "outstanding=0 kernel_errors+timeouts+fallbacks=0 "
			      "batch_packets+verdict_msgs=%u", n, n, n);
	msgs = (double)(st.verdict_msgs + st.batch_msgs);
	ck_assert_msg(msgs * 8 < n,
		      "%.0f verdict messages for %u packets: 1 per %.2f, "
		      "want fewer than 1 per 8", msgs, n, n / msgs);
	nfqbt_assert_kstats(QNUM, "id_sequence=%u", n);
	assert_kqueue_clean();
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 3. a lone decided packet is released ------------------------------ */

#define LONE_LATENCY_US	2000u
/* How late a release may come: scheduling slack on a loaded machine (and
 * under the sanitizers) on top of the latency bound. */
#define LONE_SLACK_MS	400u

/*
 * The owner thread: blocking nfqb_recv() until it sees the stop seq; it
 * publishes every other packet for the test thread (by seq, < 8).
 */
struct lone {
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	pthread_t owner;
	struct nfqb_packet *pkt[8];
	atomic_uint got;		/* packets published */
	atomic_bool in_recv;		/* about to block in nfqb_recv() */
	int err;
	bool stopped;
};

static void *lone_owner(void *arg)
{
	struct lone *l = arg;
	uint64_t start = nfqbt_now_ms();

	while (!l->stopped && nfqbt_now_ms() - start < 20000) {
		struct nfqb_packet *vec[8];
		int got, i;

		atomic_store(&l->in_recv, true);
		got = nfqb_recv(l->q, vec, 8);
		atomic_store(&l->in_recv, false);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			l->err = errno;
			break;
		}
		for (i = 0; i < got; i++) {
			uint32_t seq = UINT32_MAX;

			nfqbt_pkt_seq(vec[i], &seq);
			if (seq == STOP_SEQ) {
				if (nfqb_verdict(vec[i], NFQB_DROP) < 0)
					l->err = errno;
				l->stopped = true;
			} else if (seq < 8 && !l->pkt[seq]) {
				l->pkt[seq] = vec[i];
				atomic_fetch_add(&l->got, 1);
			} else {
				l->err = EPROTO;
				nfqb_verdict(vec[i], NFQB_DROP);
			}
		}
	}
	if (nfqb_flush(l->q) < 0 && !l->err)
		l->err = errno;
	return NULL;
}

/* Wait until the owner has handed out @n packets and sits in nfqb_recv()
 * again, blocked (no packet nor decision to handle). */
static void lone_wait_blocked(struct lone *l, unsigned int n)
{
	uint64_t start = nfqbt_now_ms();

	ck_assert(nfqbt_wait_count(&l->got, n, 5000));
	while (!atomic_load(&l->in_recv) && nfqbt_now_ms() - start < 5000)
		usleep(100);
	ck_assert(atomic_load(&l->in_recv));
	/* it got there; give it time to go to sleep in epoll_wait */
	nfqbt_sleep_ms(50);
}

/* The queue, its owner thread and a receiver that expects @expected;
 * then @n datagrams (seqs 0..@n-1) sent and handed out by the owner, who
 * sleeps again: the kernel holds them all, none released. */
static void lone_setup(struct lone *l, unsigned int expected, unsigned int n)
{
	memset(l, 0, sizeof(*l));
	atomic_init(&l->got, 0);
	atomic_init(&l->in_recv, false);
	nfqbt_rule_queue(PORT, QNUM, false);
	l->q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(nfqb_queue_set_latency(l->q, LONE_LATENCY_US), 0);
	l->rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = expected, .linger_ms = 200, .quiet_ms = 10000,
		.timeout_ms = 20000, .max_seq = RX_MAX_SEQ });
	ck_assert_int_eq(pthread_create(&l->owner, NULL, lone_owner, l), 0);
	nfqbt_send_seqs(PORT, 0, n);
	lone_wait_blocked(l, n);
	ck_assert_uint_eq(nfqbt_rx_total(l->rx), 0);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, n);
}

/* Decide packet @i (accept, @mark) from this thread while the owner
 * sleeps: it must be released within @bound_ms (@name: the test's). */
static void lone_release(struct lone *l, unsigned int i, uint32_t mark,
			 unsigned int bound_ms, const char *name)
{
	uint64_t t = nfqbt_now_ms();

	ck_assert_int_eq(nfqb_verdict_mark(l->pkt[i], NFQB_ACCEPT, mark), 0);
	ck_assert_msg(nfqbt_rx_wait_total(l->rx, 1, bound_ms),
		      "%s: the decided packet was not released within %u ms",
		      name, bound_ms);
	fprintf(stderr, "coalesce-kernel %s: released after %llu ms\n", name,
		(unsigned long long)(nfqbt_now_ms() - t));
}

static void lone_finish(struct lone *l)
{
	send_one(STOP_SEQ);
	pthread_join(l->owner, NULL);
	ck_assert_msg(l->err == 0, "owner thread: %s", strerror(l->err));
	ck_assert(l->stopped);
	assert_kqueue_clean();
	ck_assert_int_eq(nfqb_queue_close(l->q), 0);
	nfqbt_rx_free(l->rx);
}

START_TEST(test_lone_packet_latency)
{
	struct lone l;

	lone_setup(&l, 1, 1);
	lone_release(&l, 0, 42, 500, "lone_packet_latency");
	nfqbt_rx_wait_exact(l.rx, 0, 1, NULL, NULL);
	ck_assert_uint_eq(nfqbt_rx_mark_of(l.rx, 0), 42);
	nfqbt_assert_stats(l.q, "packets=1 verdict_msgs=1 batch_msgs=0 "
			   "outstanding=0");
	lone_finish(&l);
}
END_TEST

START_TEST(test_lone_packet_behind_undecided)
{
	struct lone l;

	lone_setup(&l, 2, 2);
	/* the second only, within the latency bound: it must leave on its
	 * own, the first stays */
	lone_release(&l, 1, 7, LONE_LATENCY_US / 1000 + LONE_SLACK_MS,
		     "lone_packet_behind_undecided");
	/* a batch would have taken the first along: nothing else arrives */
	nfqbt_sleep_ms(100);
	ck_assert_uint_eq(nfqbt_rx_total(l.rx), 1);
	ck_assert_uint_eq(nfqbt_rx_count(l.rx, 1), 1);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 1);
	nfqbt_assert_stats(l.q, "verdict_msgs=1 batch_msgs=0 outstanding=1");

	/* now the first */
	ck_assert_int_eq(nfqb_verdict_mark(l.pkt[0], NFQB_ACCEPT, 5), 0);
	nfqbt_rx_wait_exact(l.rx, 0, 2, NULL, NULL);
	ck_assert_uint_eq(nfqbt_rx_mark_of(l.rx, 0), 5);
	ck_assert_uint_eq(nfqbt_rx_mark_of(l.rx, 1), 7);
	/* the latency timer sends it; on a loaded machine the owner may
	 * first run after the bound, and then its idle flush does */
	nfqbt_assert_stats(l.q, "packets=2 verdict_msgs=2 batch_msgs=0 "
			   "marked=2 outstanding=0 flush_latency+flush_idle>=1");
	lone_finish(&l);
}
END_TEST

/*
 * The documented non-blocking use: poll(nfqb_queue_fd(q),
 * nfqb_queue_next_timeout(q)). The header says the fd becomes readable
 * when another thread posts a decision.
 */
struct poller {
	struct nfqb_queue *q;
	struct nfqb_packet *pkt;
	atomic_uint got;
	atomic_uint polling;		/* poll() calls begun */
	unsigned int polls_at_got;	/* ... when the packet came */
	atomic_uint woke;
	int err;
};

static void *poll_owner(void *arg)
{
	struct poller *o = arg;
	uint64_t start = nfqbt_now_ms();

	while (nfqbt_now_ms() - start < 8000) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(o->q),
				      .events = POLLIN };
		struct nfqb_packet *vec[4];
		int got, wait;

		got = nfqb_recv(o->q, vec, 4);
		if (got > 0) {
			if (got != 1 || o->pkt) {
				o->err = EPROTO;
				break;
			}
			o->pkt = vec[0];
			o->polls_at_got = atomic_load(&o->polling);
			atomic_store(&o->got, 1);
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			o->err = errno;
			break;
		}
		if (atomic_load(&o->woke))
			break;
		wait = nfqb_queue_next_timeout(o->q);
		/* bounded: a 2 s poll is far beyond the latency bound */
		if (wait < 0 || wait > 2000)
			wait = 2000;
		atomic_fetch_add(&o->polling, 1);
		if (poll(&pfd, 1, wait) > 0 && o->pkt)
			atomic_store(&o->woke, 1);
	}
	if (nfqb_flush(o->q) < 0 && !o->err)
		o->err = errno;
	return NULL;
}

START_TEST(test_lone_packet_nonblock_poll)
{
	struct poller o;
	struct nfqbt_rx *rx;
	pthread_t th;
	uint64_t t, late = 0;
	unsigned int polls;
	bool ok;

	memset(&o, 0, sizeof(o));
	nfqbt_rule_queue(PORT, QNUM, false);
	o.q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(nfqb_queue_set_latency(o.q, LONE_LATENCY_US), 0);
	ck_assert_int_eq(nfqb_queue_set_nonblock(o.q, true), 0);
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = 1, .linger_ms = 200, .quiet_ms = 10000,
		.timeout_ms = 10000 });
	ck_assert_int_eq(pthread_create(&th, NULL, poll_owner, &o), 0);
	send_one(0);
	ck_assert(nfqbt_wait_count(&o.got, 1, 5000));
	polls = o.polls_at_got;
	t = nfqbt_now_ms();
	while (atomic_load(&o.polling) == polls && nfqbt_now_ms() - t < 5000)
		usleep(100);
	ck_assert_uint_ne(atomic_load(&o.polling), polls);
	nfqbt_sleep_ms(50);	/* asleep in poll() */

	t = nfqbt_now_ms();
	ck_assert_int_eq(nfqb_verdict(o.pkt, NFQB_ACCEPT), 0);
	ok = nfqbt_rx_wait_total(rx, 1, 500);
	if (!ok && nfqbt_rx_wait_total(rx, 1, 3000))
		late = nfqbt_now_ms() - t;
	ck_assert_msg(ok, "poll(nfqb_queue_fd()) did not wake up for a "
		      "decision posted by another thread (released after "
		      "%llu ms, by poll's own timeout)",
		      (unsigned long long)late);
	pthread_join(th, NULL);
	ck_assert_msg(o.err == 0, "owner thread: %s", strerror(o.err));
	nfqbt_rx_wait_exact(rx, 0, 1, NULL, NULL);
	assert_kqueue_clean();
	ck_assert_int_eq(nfqb_queue_close(o.q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

/* --- 4. the verdict timeout -------------------------------------------- */

/*
 * Receive one packet, never decide it, and keep the queue running the
 * documented non-blocking way until @done says so (bounded by @bound_ms).
 * Returns the packet (still owned by the application) and when it came.
 */
static struct nfqb_packet *run_undecided(struct nfqb_queue *q,
					 bool (*done)(struct nfqb_queue *,
						      void *),
					 void *data, unsigned int bound_ms,
					 uint64_t *got_at)
{
	struct nfqb_packet *pkt = NULL;
	uint64_t start = nfqbt_now_ms();

	while (nfqbt_now_ms() - start < bound_ms) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(q),
				      .events = POLLIN };
		struct nfqb_packet *vec[4];
		int got, wait;

		got = nfqb_recv(q, vec, 4);
		if (got > 0) {
			uint32_t seq;

			ck_assert_int_eq(got, 1);
			ck_assert_ptr_null(pkt);
			ck_assert(nfqbt_pkt_seq(vec[0], &seq));
			ck_assert_uint_eq(seq, 0);
			pkt = vec[0];
			*got_at = nfqbt_now_ms();
			/* the library must want to run by the timeout */
			wait = nfqb_queue_next_timeout(q);
			ck_assert_int_ge(wait, 0);
			ck_assert_int_le(wait, 100);
			continue;
		}
		ck_assert_msg(errno == EAGAIN || errno == EINTR,
			      "nfqb_recv: %s", strerror(errno));
		if (pkt && done(q, data))
			break;
		wait = nfqb_queue_next_timeout(q);
		if (wait < 0 || wait > 20)
			wait = 20;
		poll(&pfd, 1, wait);
	}
	ck_assert_ptr_nonnull(pkt);
	return pkt;
}

static bool rx_got_one(struct nfqb_queue *q, void *data)
{
	(void)q;
	return nfqbt_rx_total(data) >= 1;
}

static bool timed_out_one(struct nfqb_queue *q, void *data)
{
	(void)data;
	return nfqbt_queue_stats(q).timeouts >= 1;
}

/* A queue (non-blocking) whose packets time out after 100 ms and get
 * @dflt, a receiver (@ro); one datagram sent, received and left undecided
 * until @done holds (3 s at most): the packet, in *@pkt. Returns how long
 * after its arrival @done held, 90 ms to 1 s. */
struct tmo {
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	struct nfqb_packet *pkt;
};

static uint64_t timeout_one(struct tmo *t, uint32_t dflt,
			    const struct nfqbt_rx_opts *ro,
			    bool (*done)(struct nfqb_queue *, void *))
{
	uint64_t got_at = 0, took;

	nfqbt_rule_queue(PORT, QNUM, false);
	t->q = nfqbt_queue_open_nb(QNUM);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(t->q, 100), 0);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(t->q, dflt), 0);
	t->rx = nfqbt_rx_start(PORT, ro);
	send_one(0);
	t->pkt = run_undecided(t->q, done, t->rx, 3000, &got_at);
	took = nfqbt_now_ms() - got_at;
	fprintf(stderr, "coalesce-kernel verdict_timeout: done after %llu "
		"ms\n", (unsigned long long)took);
	ck_assert_uint_ge(took, 90);
	ck_assert_uint_le(took, 1000);
	return took;
}

/* Nothing outstanding (and @want), the kernel holds nothing and lost
 * nothing. */
static void timeout_end(struct tmo *t, const char *want)
{
	nfqbt_assert_stats(t->q, "%s outstanding=0", want);
	assert_kqueue_clean();
	ck_assert_int_eq(nfqb_queue_close(t->q), 0);
	nfqbt_rx_free(t->rx);
}

START_TEST(test_verdict_timeout_accept)
{
	struct tmo t;

	timeout_one(&t, NFQB_ACCEPT, &(struct nfqbt_rx_opts){
		.expected = 1, .linger_ms = 200, .timeout_ms = 10000 },
		rx_got_one);
	ck_assert_msg(nfqbt_rx_total(t.rx) == 1,
		      "the verdict timeout did not release the packet");
	nfqbt_assert_stats(t.q, "timeouts=1 accepted=1 verdict_msgs=1 "
			   "batch_msgs=0");
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);

	/* too late: refused, and the packet is released all the same */
	errno = 0;
	ck_assert_int_eq(nfqb_verdict_mark(t.pkt, NFQB_DROP, 3), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(nfqb_recv(t.q, &t.pkt, 1), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(nfqb_flush(t.q), 0);
	nfqbt_rx_wait_exact(t.rx, 0, 1, NULL, NULL);
	timeout_end(&t, "verdict_msgs=1 dropped+marked+kernel_errors=0");
}
END_TEST

START_TEST(test_verdict_timeout_drop)
{
	struct tmo t;

	timeout_one(&t, NFQB_DROP, &(struct nfqbt_rx_opts){
		.quiet_ms = 500, .timeout_ms = 10000 }, timed_out_one);
	nfqbt_assert_stats(t.q, "timeouts=1 dropped=1 accepted=0 "
			   "verdict_msgs=1");
	/* the kernel has let go of it */
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);

	errno = 0;
	ck_assert_int_eq(nfqb_verdict(t.pkt, NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(nfqb_flush(t.q), 0);

	/* it never arrives */
	nfqbt_rx_wait(t.rx);
	ck_assert_uint_eq(nfqbt_rx_total(t.rx), 0);
	timeout_end(&t, "accepted+kernel_errors=0");
}
END_TEST

/* --- 5. an error reply is counted, not fatal --------------------------- */

static void set_lo_up(bool up)
{
	struct ifreq ifr;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	if (up)
		ifr.ifr_flags |= IFF_UP;
	else
		ifr.ifr_flags &= ~IFF_UP;
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

START_TEST(test_enoent_not_fatal)
{
	struct nfqb_packet *vec[8];
	struct nfqb_stats st;
	struct nfqbt_cons c;
	struct nfqbt_rx *rx;
	struct nfqb_queue *q;
	uint64_t start;
	int got, i;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open_nb(QNUM);

	/* three packets received, left undecided */
	for (i = 0; i < 3; i++)
		send_one((uint32_t)i);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 3, 2000));
	got = 0;
	start = nfqbt_now_ms();
	while (got < 3 && nfqbt_now_ms() - start < 2000) {
		int r = nfqb_recv(q, vec + got, (unsigned int)(3 - got));

		if (r > 0)
			got += r;
		else
			usleep(1000);
	}
	ck_assert_int_eq(got, 3);

	/* lo going down makes the kernel drop the packets queued through
	 * it: our verdicts then name packets the kernel no longer has */
	set_lo_up(false);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);
	set_lo_up(true);
	ck_assert_int_eq(nfqb_verdict(vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(vec[1], NFQB_ACCEPT), 0);	/* batch */
	ck_assert_int_eq(nfqb_flush(q), 1);
	ck_assert_int_eq(nfqb_verdict_mark(vec[2], NFQB_ACCEPT, 9), 0);
	ck_assert_int_eq(nfqb_flush(q), 1);	/* single */

	/* the error replies come back and are counted; nothing fails */
	start = nfqbt_now_ms();
	do {
		ck_assert_int_eq(nfqb_recv(q, vec, 8), -1);
		ck_assert_int_eq(errno, EAGAIN);
		st = nfqbt_queue_stats(q);
	} while (st.kernel_errors < 2 && nfqbt_now_ms() - start < 2000);
	ck_assert_uint_eq(st.kernel_errors, 2);
	ck_assert_uint_eq(st.enoent_errors, 2);
	ck_assert_uint_eq(st.batch_msgs, 1);
	ck_assert_uint_eq(st.verdict_msgs, 1);

	/* and the queue goes on working */
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = 100, .linger_ms = 200, .timeout_ms = 10000 });
	nfqbt_cons_init(&c, q, nfqbt_decide_accept, NULL);
	nfqbt_send_seqs(PORT, 100, 100);
	ck_assert_uint_eq(nfqbt_cons_run(&c, 100, 5000), 100);
	nfqbt_rx_wait_exact(rx, 100, 100, NULL, NULL);
	st = nfqbt_queue_stats(q);
	ck_assert_uint_eq(st.kernel_errors, 2);
	ck_assert_uint_eq(st.outstanding, 0);
	assert_kqueue_clean();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

static Suite *coalesce_kernel_suite(void)
{
	Suite *s = suite_create("integration-coalesce-kernel");
	TCase *tc = nfqbt_tcase_netns(s, "big", BIG_TCASE_TIMEOUT);

	tcase_add_test(tc, test_out_of_order_mixed);
	tcase_add_test(tc, test_all_accept_ratio);
	tc = nfqbt_tcase_netns(s, "kernel", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_lone_packet_latency);
	tcase_add_test(tc, test_lone_packet_behind_undecided);
	tcase_add_test(tc, test_lone_packet_nonblock_poll);
	tcase_add_test(tc, test_verdict_timeout_accept);
	tcase_add_test(tc, test_verdict_timeout_drop);
	tcase_add_test(tc, test_enoent_not_fatal);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_coalesce_kernel", coalesce_kernel_suite());
}
