// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration tests of the worker pool against the real kernel: four queues
 * behind `--queue-balance 0:3`, traffic from several source addresses (the
 * kernel spreads flows over the queues by address), both pool modes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libnfq-batch/pool.h>

#include "harness.h"

#define PORT		5301
#define NQUEUES		4
#define NFLOWS		12	/* source addresses 127.0.0.10 .. */
#define WINDOW		1024	/* datagrams in flight at most */

/* --- traffic: seq i leaves from flow i % NFLOWS ---------------------------- */

struct sender {
	pthread_t thread;
	unsigned int count;
	struct nfqbt_rx *rx;
	struct nfqb_pool *pool;	/* for the window: what the pool dropped */
	atomic_uint sent;
	atomic_uint eperm;
	int err;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	uint64_t start = nfqbt_now_ms();
	int fd[NFLOWS];
	uint8_t buf[64];
	unsigned int i;

	for (i = 0; i < NFLOWS; i++) {
		struct sockaddr_in src = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = htonl(0x7f00000a + i),
		};
		struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };

		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 ||
		    bind(fd[i], (struct sockaddr *)&src, sizeof(src)) < 0) {
			s->err = errno;
			return NULL;
		}
		setsockopt(fd[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	for (i = 0; i < s->count && nfqbt_now_ms() - start < 20000;) {
		struct nfqb_pool_stats ps = { 0 };
		unsigned int done;

		nfqb_pool_stats(s->pool, -1, &ps, sizeof(ps));
		done = nfqbt_rx_total(s->rx) + (unsigned int)ps.dropped;
		if (i > done && i - done >= WINDOW) {
			usleep(50);
			continue;
		}
		nfqbt_fill_payload(buf, sizeof(buf), i);
		if (sendto(fd[i % NFLOWS], buf, sizeof(buf), 0,
			   (struct sockaddr *)&dst, sizeof(dst)) < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ENOBUFS) {
				usleep(100);
				continue;
			}
			if (errno != EPERM) {
				s->err = errno;
				break;
			}
			atomic_fetch_add(&s->eperm, 1);
		}
		i++;
		atomic_store(&s->sent, i);
	}
	for (i = 0; i < NFLOWS; i++)
		close(fd[i]);
	return NULL;
}

static void sender_start(struct sender *s, unsigned int count,
			 struct nfqbt_rx *rx, struct nfqb_pool *pool)
{
	memset(s, 0, sizeof(*s));
	s->count = count;
	s->rx = rx;
	s->pool = pool;
	ck_assert_int_eq(pthread_create(&s->thread, NULL, sender_main, s), 0);
}

static unsigned int sender_join(struct sender *s)
{
	pthread_join(s->thread, NULL);
	ck_assert_msg(s->err == 0, "sender: %s", strerror(s->err));
	return atomic_load(&s->sent);
}

static void rule_balance(bool bypass)
{
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE "
		       "--queue-balance 0:%u%s", PORT, NQUEUES - 1,
		       bypass ? " --queue-bypass" : "");
}

/* --- policies ---------------------------------------------------------- */

#define POLICY_ALIVE	0x600d9011u
#define POLICY_DEAD	0xdeadbeefu

struct policy {
	uint32_t magic;
	uint32_t mark;		/* 0: mark by seq bucket */
};

static atomic_uint policies_freed;
static atomic_uint dead_seen;

static struct policy *policy_new(uint32_t mark)
{
	struct policy *p = malloc(sizeof(*p));

	ck_assert(p != NULL);
	p->magic = POLICY_ALIVE;
	p->mark = mark;
	return p;
}

static void policy_free(void *arg)
{
	struct policy *p = arg;

	p->magic = POLICY_DEAD;	/* if ASan is not there to catch it */
	free(p);
	atomic_fetch_add(&policies_freed, 1);
}

static bool seq_dropped(uint32_t seq)
{
	return seq % 11 == 0;
}

static uint32_t seq_mark(uint32_t seq)
{
	return 100 + seq / 1000;
}

struct cb_data {
	atomic_uint per_worker[64];
	atomic_uint not_udp;
};

static int decide(struct nfqb_packet *p, void *policy, void *data,
		  struct nfqb_verdict *v)
{
	struct cb_data *cd = data;
	const struct policy *pol = policy;
	int w = nfqb_pool_worker_index();
	uint32_t seq;

	if (w >= 0 && w < 64)
		atomic_fetch_add_explicit(&cd->per_worker[w], 1,
					  memory_order_relaxed);
	if (!pol || pol->magic != POLICY_ALIVE)
		atomic_fetch_add(&dead_seen, 1);
	if (!nfqbt_pkt_seq(p, &seq)) {
		atomic_fetch_add(&cd->not_udp, 1);
		return NFQB_POOL_VERDICT;	/* the default: accept */
	}
	if (seq_dropped(seq)) {
		v->verdict = NFQB_DROP;
		return NFQB_POOL_VERDICT;
	}
	v->verdict = NFQB_ACCEPT;
	v->flags = NFQB_V_MARK;
	v->mark = pol && pol->mark ? pol->mark : seq_mark(seq);
	return NFQB_POOL_VERDICT;
}

/* Every third accepted packet is deferred and decided by a helper thread:
 * the deferred path, from a thread that is not the queue's owner. */
struct deferrer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nfqb_packet *v[4096];
	uint32_t mark[4096];
	unsigned int n;
	bool stop;
	pthread_t thread;
	struct cb_data cd;
};

static int decide_defer(struct nfqb_packet *p, void *policy, void *data,
			struct nfqb_verdict *v)
{
	struct deferrer *d = data;
	uint32_t seq;
	int r = decide(p, policy, &d->cd, v);

	if (v->verdict != NFQB_ACCEPT || !nfqbt_pkt_seq(p, &seq) || seq % 3)
		return r;
	pthread_mutex_lock(&d->lock);
	if (d->n == 4096) {
		pthread_mutex_unlock(&d->lock);
		return r;
	}
	d->mark[d->n] = v->mark;
	d->v[d->n++] = p;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NFQB_POOL_DEFER;
}

static void *deferrer_main(void *arg)
{
	struct deferrer *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop || d->n) {
		if (!d->n) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		d->n--;
		nfqb_verdict_mark(d->v[d->n], NFQB_ACCEPT, d->mark[d->n]);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* --- checks ------------------------------------------------------------ */

static struct nfqb_pool *pool_new(enum nfqb_pool_mode mode,
				  unsigned int workers, nfqb_pool_cb cb,
				  void *data, void *policy, uint32_t flags)
{
	struct nfqb_pool_config cfg = {
		.queue_first = 0,
		.queue_count = NQUEUES,
		.mode = mode,
		.workers = workers,
		.queue_flags = flags,
		.copy_range = 256,
		.maxlen = 8192,
		.rcvbuf = 4 << 20,
		.ring_size = 256,
		.cb = cb,
		.cb_data = data,
		.policy = policy,
		.policy_free = policy_free,
	};
	struct nfqb_pool *pool = nfqb_pool_create(&cfg);

	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	return pool;
}

static struct nfqb_pool_stats pstats(struct nfqb_pool *pool, int t)
{
	struct nfqb_pool_stats st;

	ck_assert_int_eq(nfqb_pool_stats(pool, t, &st, sizeof(st)), 0);
	return st;
}

static bool expect_kept(uint32_t seq, void *data)
{
	(void)data;
	return !seq_dropped(seq);
}

/* After nfqb_pool_wait(): every queue unbound or empty. */
static void assert_queues_empty(void)
{
	unsigned int i;

	for (i = 0; i < NQUEUES; i++) {
		struct nfqb_kstats ks;

		if (nfqb_kstats_get((uint16_t)i, &ks) == 0)
			ck_assert_uint_eq(ks.queue_total, 0);
		else
			ck_assert_int_eq(errno, ENOENT);
	}
}

/* How many queues got packets, from the pool's per-queue library stats. */
static unsigned int queues_used(struct nfqb_pool *pool)
{
	unsigned int i, used = 0;

	for (i = 0; i < NQUEUES; i++) {
		struct nfqb_stats st;

		ck_assert_int_eq(nfqb_pool_queue_stats(pool, i, &st,
						       sizeof(st)), 0);
		used += st.packets > 0;
	}
	return used;
}

static void run_mixed(enum nfqb_pool_mode mode, unsigned int workers,
		      bool defer)
{
	const unsigned int n = 20000;
	unsigned int expected = n - (n + 10) / 11, sent, i;
	struct nfqbt_rx_opts ro = { .expected = expected, .timeout_ms = 25000 };
	struct deferrer d = { .lock = PTHREAD_MUTEX_INITIALIZER,
			      .cond = PTHREAD_COND_INITIALIZER };
	struct nfqb_pool_stats st;
	struct nfqbt_rx *rx;
	struct nfqb_pool *pool;
	struct sender s;

	rule_balance(false);
	rx = nfqbt_rx_start(PORT, &ro);
	if (defer) {
		pool = pool_new(mode, workers, decide_defer, &d,
				policy_new(0), 0);
		ck_assert_int_eq(pthread_create(&d.thread, NULL,
						deferrer_main, &d), 0);
	} else {
		pool = pool_new(mode, workers, decide, &d.cd, policy_new(0),
				0);
	}
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	ck_assert_int_eq(nfqb_pool_start(pool), -1);
	ck_assert_int_eq(errno, EALREADY);
	sender_start(&s, n, rx, pool);
	sent = sender_join(&s);
	ck_assert_uint_eq(sent, n);
	ck_assert_uint_eq(atomic_load(&s.eperm), 0);
	nfqbt_rx_wait(rx);
	if (defer) {
		/* every deferred packet was decided (the receiver has them
		 * all); the deferrer's last nfqb_verdict() call must also
		 * have returned before the pool frees its queues */
		pthread_mutex_lock(&d.lock);
		d.stop = true;
		pthread_cond_signal(&d.cond);
		pthread_mutex_unlock(&d.lock);
		pthread_join(d.thread, NULL);
	}
	nfqb_pool_stop(pool);
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	assert_queues_empty();

	nfqbt_rx_assert_exact(rx, 0, n, expect_kept, NULL);
	for (i = 0; i < n; i++) {
		uint32_t mark;

		if (seq_dropped(i))
			continue;
		ck_assert_msg(nfqbt_rx_mark(rx, i, &mark), "seq %u: no mark", i);
		ck_assert_msg(mark == seq_mark(i), "seq %u: mark %u, not %u",
			      i, mark, seq_mark(i));
	}
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.packets, n);
	ck_assert_uint_eq(st.received, n);
	ck_assert_uint_eq(st.dropped, n - expected);
	ck_assert_uint_eq(st.accepted + st.deferred, expected);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(atomic_load(&d.cd.not_udp), 0);
	ck_assert_uint_eq(atomic_load(&dead_seen), 0);
	if (defer)
		ck_assert_uint_gt(st.deferred, 0);
	/* flows spread: more than one queue and, dispatching, more than one
	 * worker had packets */
	ck_assert_uint_ge(queues_used(pool), 2);
	if (mode == NFQB_POOL_DISPATCH) {
		unsigned int busy = 0;

		for (i = 0; i < workers; i++)
			busy += atomic_load(&d.cd.per_worker[i]) > 0;
		ck_assert_uint_ge(busy, 2);
	}
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	ck_assert_uint_eq(atomic_load(&policies_freed), 1);
}

START_TEST(test_qpw_mixed)
{
	run_mixed(NFQB_POOL_QUEUE_PER_WORKER, 0, false);
}
END_TEST

START_TEST(test_dispatch_mixed)
{
	run_mixed(NFQB_POOL_DISPATCH, 3, false);
}
END_TEST

START_TEST(test_qpw_deferred)
{
	run_mixed(NFQB_POOL_QUEUE_PER_WORKER, 0, true);
}
END_TEST

START_TEST(test_dispatch_deferred)
{
	run_mixed(NFQB_POOL_DISPATCH, 2, true);
}
END_TEST

/* --- hot swap ------------------------------------------------------------ */

#define SWAPS 20

static void run_swap(enum nfqb_pool_mode mode, unsigned int workers)
{
	const unsigned int n = 24000;
	unsigned int expected = n - (n + 10) / 11, i, k, swaps = 0;
	struct nfqbt_rx_opts ro = { .expected = expected, .timeout_ms = 25000 };
	struct cb_data cd;
	uint32_t last[NFLOWS] = { 0 };
	unsigned int changes[NFLOWS] = { 0 };
	bool seen[SWAPS + 2] = { false };
	struct nfqb_pool_stats st;
	struct nfqbt_rx *rx;
	struct nfqb_pool *pool;
	struct sender s;

	memset(&cd, 0, sizeof(cd));
	rule_balance(false);
	rx = nfqbt_rx_start(PORT, &ro);
	pool = pool_new(mode, workers, decide, &cd, policy_new(1), 0);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	sender_start(&s, n, rx, pool);
	/* swap policies while the traffic flows: marks 2 .. SWAPS+1 */
	for (k = 0; k < SWAPS; k++) {
		unsigned int at = (k + 1) * n / (SWAPS + 2);

		for (i = 0; i < 20000; i++) {
			st = pstats(pool, -1);
			if (st.packets >= at)
				break;
			usleep(500);
		}
		ck_assert_int_eq(nfqb_pool_set_policy(pool, policy_new(k + 2)),
				 0);
		swaps++;
	}
	ck_assert_uint_eq(atomic_load(&policies_freed), SWAPS);
	ck_assert_uint_eq(sender_join(&s), n);
	nfqbt_rx_wait(rx);
	nfqb_pool_stop(pool);
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	assert_queues_empty();

	nfqbt_rx_assert_exact(rx, 0, n, expect_kept, NULL);
	/* per flow, in sending order, marks never go back */
	for (i = 0; i < n; i++) {
		uint32_t mark;

		if (seq_dropped(i))
			continue;
		ck_assert_msg(nfqbt_rx_mark(rx, i, &mark), "seq %u: no mark", i);
		ck_assert_msg(mark >= 1 && mark <= SWAPS + 1,
			      "seq %u: mark %u", i, mark);
		seen[mark] = true;
		ck_assert_msg(mark >= last[i % NFLOWS],
			      "flow %u: mark %u after %u (seq %u)",
			      i % NFLOWS, mark, last[i % NFLOWS], i);
		if (mark != last[i % NFLOWS])
			changes[i % NFLOWS]++;
		last[i % NFLOWS] = mark;
	}
	/* the first and the last policy decided packets, and the outcome
	 * changed within every flow */
	ck_assert(seen[1]);
	ck_assert(seen[SWAPS + 1]);
	for (k = 0; k < NFLOWS; k++)
		ck_assert_uint_ge(changes[k], 2);
	ck_assert_uint_eq(atomic_load(&dead_seen), 0);
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.policy_swaps, swaps);
	ck_assert_uint_eq(st.packets, n);
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	ck_assert_uint_eq(atomic_load(&policies_freed), SWAPS + 1);
}

START_TEST(test_qpw_swap)
{
	run_swap(NFQB_POOL_QUEUE_PER_WORKER, 0);
}
END_TEST

START_TEST(test_dispatch_swap)
{
	run_swap(NFQB_POOL_DISPATCH, 3);
}
END_TEST

/* --- stop under load -------------------------------------------------------- */

static void run_stop(enum nfqb_pool_mode mode, unsigned int workers)
{
	const unsigned int n = 30000;
	struct nfqbt_rx_opts ro = { .quiet_ms = 1500, .timeout_ms = 25000 };
	struct nfqb_pool_stats st;
	struct cb_data cd;
	struct nfqbt_rx *rx;
	struct nfqb_pool *pool;
	struct sender s;
	unsigned int sent, delivered = 0, missing = 0, i;

	memset(&cd, 0, sizeof(cd));
	/* bypass: once the queues are unbound, traffic passes */
	rule_balance(true);
	rx = nfqbt_rx_start(PORT, &ro);
	pool = pool_new(mode, workers, decide, &cd, policy_new(0),
			NFQB_F_FAIL_OPEN);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	sender_start(&s, n, rx, pool);
	for (i = 0; i < 20000; i++) {
		st = pstats(pool, -1);
		if (st.packets >= n / 3)
			break;
		usleep(500);
	}
	ck_assert(!nfqb_pool_stopping(pool));
	nfqb_pool_stop(pool);
	ck_assert(nfqb_pool_stopping(pool));
	nfqb_pool_stop(pool);	/* twice is fine */
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	ck_assert_msg(atomic_load(&s.sent) < n,
		      "the sender had finished before the pool stopped");
	assert_queues_empty();
	sent = sender_join(&s);
	ck_assert_uint_eq(sent, n);
	ck_assert_uint_eq(atomic_load(&s.eperm), 0);
	nfqbt_rx_wait(rx);
	nfqbt_rx_stop(rx);

	st = pstats(pool, -1);
	for (i = 0; i < n; i++) {
		unsigned int c = nfqbt_rx_count(rx, i);

		ck_assert_msg(c <= 1, "seq %u arrived %u times", i, c);
		delivered += c;
		if (!c) {
			missing++;
			ck_assert_msg(seq_dropped(i),
				      "seq %u lost (not a policy drop)", i);
		}
	}
	ck_assert_uint_eq(nfqbt_rx_total(rx), delivered);
	/* exact accounting: default accept, fail-open while draining */
	ck_assert_uint_eq(missing, st.dropped);
	ck_assert_uint_eq(sent, delivered + st.dropped);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(atomic_load(&dead_seen), 0);
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
}

START_TEST(test_qpw_stop)
{
	run_stop(NFQB_POOL_QUEUE_PER_WORKER, 0);
}
END_TEST

START_TEST(test_dispatch_stop)
{
	run_stop(NFQB_POOL_DISPATCH, 3);
}
END_TEST

/* --- API edges -------------------------------------------------------------- */

static int accept_cb(struct nfqb_packet *p, void *policy, void *data,
		     struct nfqb_verdict *v)
{
	(void)p;
	(void)policy;
	(void)data;
	(void)v;
	return NFQB_POOL_VERDICT;
}

START_TEST(test_api_edges)
{
	struct nfqb_pool_config cfg = {
		.queue_first = 0,
		.queue_count = 2,
		.cb = accept_cb,
	};
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool, *busy;

	ck_assert_ptr_null(nfqb_pool_create(NULL));
	cfg.cb = NULL;
	ck_assert_ptr_null(nfqb_pool_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.cb = accept_cb;
	cfg.ring_size = 100;
	cfg.mode = NFQB_POOL_DISPATCH;
	ck_assert_ptr_null(nfqb_pool_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.ring_size = 0;
	pool = nfqb_pool_create(&cfg);
	ck_assert_ptr_nonnull(pool);
	ck_assert_uint_eq(nfqb_pool_threads(pool), 4);
	/* the queues are taken */
	cfg.queue_first = 1;
	busy = nfqb_pool_create(&cfg);
	ck_assert_ptr_null(busy);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(nfqb_pool_wait(pool), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_pool_stats(pool, 4, &st, sizeof(st)), -1);
	ck_assert_int_eq(nfqb_pool_stats(pool, -1, &st, sizeof(st)), 0);
	ck_assert_int_eq(nfqb_pool_worker_index(), -1);
	/* policy before start: no grace period to wait for */
	ck_assert_int_eq(nfqb_pool_set_policy(pool, NULL), 0);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqb_pool_stop(pool);
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	ck_assert_int_eq(nfqb_kstats_get(0, &(struct nfqb_kstats){ 0 }), -1);
	nfqb_pool_destroy(pool);
	nfqb_pool_destroy(NULL);
	/* destroy of a running pool stops it */
	cfg.queue_first = 0;
	cfg.mode = NFQB_POOL_QUEUE_PER_WORKER;
	pool = nfqb_pool_create(&cfg);
	ck_assert_ptr_nonnull(pool);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqb_pool_destroy(pool);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("integration-pool");
	TCase *tc = tcase_create("pool");

	tcase_add_checked_fixture(tc, nfqbt_netns_enter, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_api_edges);
	tcase_add_test(tc, test_qpw_mixed);
	tcase_add_test(tc, test_dispatch_mixed);
	tcase_add_test(tc, test_qpw_deferred);
	tcase_add_test(tc, test_dispatch_deferred);
	tcase_add_test(tc, test_qpw_swap);
	tcase_add_test(tc, test_dispatch_swap);
	tcase_add_test(tc, test_qpw_stop);
	tcase_add_test(tc, test_dispatch_stop);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "test_pool: needs root; skipped\n");
		return 77;
	}
	sr = srunner_create(pool_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
