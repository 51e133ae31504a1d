// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration tests of the worker pool against the real kernel: four queues
 * behind `--queue-balance 0:3`, traffic from several source addresses (the
 * kernel spreads flows over the queues by address, with a seed drawn once
 * per boot: the checks hold for any mapping, which each run records and
 * prints, and NFQBT_FLOW_SET moves the flows to other addresses, see
 * harness.h), both pool modes; every
 * kind of verdict given through the callback, checked where it lands (the
 * receiver, a second queue); the stop contract (a verdict after the pool
 * stopped fails with ESHUTDOWN); failed starts and create errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

#include <libnfq-batch/pool.h>

#include "harness.h"

#define PORT		5301
#define NQUEUES		4
#define NFLOWS		12	/* sources nfqbt_flow_addr(10 + i) */
#define WINDOW		1024	/* datagrams in flight at most */

/* --- traffic: seq i leaves from flow i % NFLOWS ---------------------------- */

struct sender {
	pthread_t thread;
	unsigned int count;
	struct nfqbt_rx *rx;
	struct nfqb_pool *pool;	/* for the window: what the pool dropped */
	unsigned int window;	/* datagrams in flight at most (0: WINDOW) */
	atomic_uint sent;
	atomic_uint eperm;
	int err;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_in dst = nfqbt_lo_addr(PORT);
	uint64_t start = nfqbt_now_ms();
	unsigned int window = s->window ? s->window : WINDOW;
	int fd[NFLOWS];
	uint8_t buf[64];
	unsigned int i;

	for (i = 0; i < NFLOWS; i++) {	/* a flow each: 127.0.K.10 + i */
		fd[i] = nfqbt_udp_socket(nfqbt_flow_addr(10 + i));
		if (fd[i] < 0) {
			s->err = errno;
			return NULL;
		}
	}
	for (i = 0; i < s->count && nfqbt_now_ms() - start < 20000;) {
		struct nfqb_pool_stats ps = { 0 };
		unsigned int done;

		nfqb_pool_stats(s->pool, -1, &ps, sizeof(ps));
		done = nfqbt_rx_total(s->rx) + (unsigned int)ps.dropped;
		if (i > done && i - done >= window) {
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
			 struct nfqbt_rx *rx, struct nfqb_pool *pool,
			 unsigned int window)
{
	memset(s, 0, sizeof(*s));
	s->count = count;
	s->window = window;
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
	/* where each flow (seq % NFLOWS) went: bit q for queue q, bit w
	 * for worker w */
	atomic_uint flow_queues[NFLOWS];
	atomic_uint flow_workers[NFLOWS];
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
	if (nfqb_pkt_queue_num(p) < 32)
		atomic_fetch_or_explicit(&cd->flow_queues[seq % NFLOWS],
					 1u << nfqb_pkt_queue_num(p),
					 memory_order_relaxed);
	if (w >= 0 && w < 32)
		atomic_fetch_or_explicit(&cd->flow_workers[seq % NFLOWS],
					 1u << w, memory_order_relaxed);
	if (seq_dropped(seq)) {
		v->verdict = NFQB_DROP;
		return NFQB_POOL_VERDICT;
	}
	v->verdict = NFQB_ACCEPT;
	v->flags = NFQB_V_MARK;
	v->mark = pol && pol->mark ? pol->mark : seq_mark(seq);
	return NFQB_POOL_VERDICT;
}

/* decide() into @v; whether @p, accepted, is one in @every (by seq) that
 * a deferring callback keeps for later. */
static bool decide_keep(struct nfqb_packet *p, void *policy,
			struct cb_data *cd, struct nfqb_verdict *v,
			uint32_t every)
{
	uint32_t seq;

	decide(p, policy, cd, v);
	return v->verdict == NFQB_ACCEPT && nfqbt_pkt_seq(p, &seq) &&
	       seq % every == 0;
}

/* Every third accepted packet is deferred and decided by a helper thread:
 * the deferred path, from a thread that is not the queue's owner. */
struct deferrer {
	struct cb_data cd;	/* decide()'s */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nfqb_packet *v[4096];
	uint32_t mark[4096];
	unsigned int n;
	bool stop;
	pthread_t thread;
};

static int decide_defer(struct nfqb_packet *p, void *policy, void *data,
			struct nfqb_verdict *v)
{
	struct deferrer *d = data;

	if (!decide_keep(p, policy, &d->cd, v, 3))
		return NFQB_POOL_VERDICT;
	pthread_mutex_lock(&d->lock);
	if (d->n == 4096) {
		pthread_mutex_unlock(&d->lock);
		return NFQB_POOL_VERDICT;
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
	struct nfqb_pool *pool = nfqb_pool_create(&cfg, sizeof(cfg));

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

		if (nfqb_kstats_get((uint16_t)i, &ks, sizeof(ks)) == 0)
			ck_assert_uint_eq(ks.queue_total, 0);
		else
			ck_assert_int_eq(errno, ENOENT);
	}
}

/* Stop @pool (cleanly), every queue unbound or empty; the kept seqs of @n
 * arrived at @rx, each once, nothing else. */
static void stop_kept(struct nfqb_pool *pool, struct nfqbt_rx *rx,
		      unsigned int n)
{
	nfqbt_pool_stop(pool);
	assert_queues_empty();
	nfqbt_rx_assert_exact(rx, 0, n, expect_kept, NULL);
}

/* Each kept seq of @n carries the mark of the callback (decide()): none
 * passed uninspected. */
static void assert_marked(const struct nfqbt_rx *rx, unsigned int n)
{
	uint32_t i, mark;

	for (i = 0; i < n; i++) {
		if (seq_dropped(i))
			continue;
		mark = nfqbt_rx_mark_of(rx, i);
		ck_assert_msg(mark == seq_mark(i), "seq %u: mark %u, not %u "
			      "(passed uninspected?)", i, mark, seq_mark(i));
	}
}

/* The one bit of @mask (a flow's queues or workers), -1 if none or
 * several. */
static int one_bit(unsigned int mask)
{
	return mask && !(mask & (mask - 1)) ? __builtin_ctz(mask) : -1;
}

/*
 * Where the @n datagrams' flows went, printed as "flow:queue/worker": the
 * kernel's hash of their addresses (a seed per boot, and the flow set),
 * and dispatching, the pool's hash of addresses and ports. Which mapping
 * comes is not for the test to choose; whatever it is, each flow stayed
 * on one queue (@nq from 0) and one worker, and the pool counted on each
 * queue and each worker exactly its flows' packets.
 */
static void assert_flow_map(struct nfqb_pool *pool, struct cb_data *cd,
			    unsigned int nq, unsigned int n, const char *what)
{
	unsigned long long per_queue[NQUEUES] = { 0 }, per_worker[32] = { 0 };
	char map[NFLOWS * 8 + 1];
	unsigned int f, i, len = 0;

	for (f = 0; f < NFLOWS; f++) {
		unsigned int qm = atomic_load(&cd->flow_queues[f]);
		unsigned int wm = atomic_load(&cd->flow_workers[f]);
		int q = one_bit(qm), w = one_bit(wm);

		ck_assert_msg(q >= 0 && (unsigned int)q < nq, "%s: flow %u "
			      "on queues %#x", what, f, qm);
		ck_assert_msg(w >= 0, "%s: flow %u on workers %#x", what, f,
			      wm);
		/* seqs f, f + NFLOWS, ... below n */
		per_queue[q] += (n - f + NFLOWS - 1) / NFLOWS;
		per_worker[w] += (n - f + NFLOWS - 1) / NFLOWS;
		len += (unsigned int)snprintf(map + len, sizeof(map) - len,
					      " %u:%d/%d", f, q, w);
	}
	printf("%s: flow set %d, flow:queue/worker%s\n", what,
	       nfqbt_flow_set(), map);
	fflush(stdout);
	for (i = 0; i < nq; i++) {
		struct nfqb_stats st;

		ck_assert_int_eq(nfqb_pool_queue_stats(pool, i, &st,
						       sizeof(st)), 0);
		ck_assert_msg(st.packets == per_queue[i], "%s: queue %u read "
			      "%llu packets, its flows sent %llu", what, i,
			      (unsigned long long)st.packets, per_queue[i]);
	}
	for (i = 0; i < 32; i++)
		ck_assert_msg(atomic_load(&cd->per_worker[i]) == per_worker[i],
			      "%s: worker %u decided %u packets, its flows "
			      "sent %llu", what, i,
			      atomic_load(&cd->per_worker[i]), per_worker[i]);
}

static void run_mixed(enum nfqb_pool_mode mode, unsigned int workers,
		      bool defer)
{
	const unsigned int n = 20000;
	unsigned int expected = n - (n + 10) / 11, sent;
	struct nfqbt_rx_opts ro = { .expected = expected, .timeout_ms = 25000,
				    .expect = expect_kept };
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
	sender_start(&s, n, rx, pool, 0);
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
	stop_kept(pool, rx, n);
	assert_marked(rx, n);
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
	assert_flow_map(pool, &d.cd, NQUEUES, n, mode == NFQB_POOL_DISPATCH ?
			"mixed (dispatch)" : "mixed (queue per worker)");
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	ck_assert_uint_eq(atomic_load(&policies_freed), 1);
}

/* The mixed runs (a loop test): each mode, every packet decided in the
 * callback, then with a third of the accepted ones deferred. */
static const struct {
	enum nfqb_pool_mode mode;
	unsigned int workers;
	bool defer;
} mixed[] = {
	{ NFQB_POOL_QUEUE_PER_WORKER, 0, false },
	{ NFQB_POOL_DISPATCH, 3, false },
	{ NFQB_POOL_QUEUE_PER_WORKER, 0, true },
	{ NFQB_POOL_DISPATCH, 2, true },
};

START_TEST(test_mixed)
{
	run_mixed(mixed[_i].mode, mixed[_i].workers, mixed[_i].defer);
}
END_TEST

/* --- hot swap ------------------------------------------------------------ */

#define SWAPS 20

static void run_swap(enum nfqb_pool_mode mode, unsigned int workers)
{
	const unsigned int n = 24000;
	unsigned int expected = n - (n + 10) / 11, i, k, swaps = 0;
	struct nfqbt_rx_opts ro = { .expected = expected, .timeout_ms = 25000,
				    .expect = expect_kept };
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
	sender_start(&s, n, rx, pool, 0);
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
	stop_kept(pool, rx, n);
	/* per flow, in sending order, marks never go back */
	for (i = 0; i < n; i++) {
		uint32_t mark;

		if (seq_dropped(i))
			continue;
		mark = nfqbt_rx_mark_of(rx, i);
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
	sender_start(&s, n, rx, pool, 0);
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

/* Queues 0 and 1, @workers threads in @mode, every packet accepted. */
static struct nfqb_pool_config two_queues(enum nfqb_pool_mode mode,
					  unsigned int workers)
{
	return (struct nfqb_pool_config){
		.queue_first = 0,
		.queue_count = 2,
		.mode = mode,
		.workers = workers,
		.cb = nfqbt_pool_accept,
	};
}

START_TEST(test_api_edges)
{
	struct nfqb_pool_config cfg = two_queues(NFQB_POOL_QUEUE_PER_WORKER, 0);
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool, *busy;

	ck_assert_ptr_null(nfqb_pool_create(NULL, sizeof(struct nfqb_pool_config)));
	cfg.cb = NULL;
	ck_assert_ptr_null(nfqb_pool_create(&cfg, sizeof(cfg)));
	ck_assert_int_eq(errno, EINVAL);
	cfg.cb = nfqbt_pool_accept;
	cfg.ring_size = 100;
	cfg.mode = NFQB_POOL_DISPATCH;
	ck_assert_ptr_null(nfqb_pool_create(&cfg, sizeof(cfg)));
	ck_assert_int_eq(errno, EINVAL);
	cfg.ring_size = 0;
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_ptr_nonnull(pool);
	ck_assert_uint_eq(nfqb_pool_threads(pool), 4);
	/* the queues are taken */
	cfg.queue_first = 1;
	busy = nfqb_pool_create(&cfg, sizeof(cfg));
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
	nfqbt_pool_stop(pool);
	ck_assert_int_eq(nfqb_kstats_get(0, NULL, sizeof(struct nfqb_kstats)), -1);
	nfqb_pool_destroy(pool);
	nfqb_pool_destroy(NULL);
	/* destroy of a running pool stops it */
	cfg.queue_first = 0;
	cfg.mode = NFQB_POOL_QUEUE_PER_WORKER;
	nfqb_pool_destroy(nfqbt_pool_start(&cfg));
}
END_TEST

/* --- every verdict kind through the callback ------------------------------ */

/*
 * One pool queue QV (rule: UDP to VPORT), VN datagrams, the callback gives
 * each the verdict of the test's kind. Where the verdict lands is checked
 * by the receiver (arrival, SO_RCVMARK mark, payload) or by a plain queue
 * the test serves itself: QT, the target of queue-to-N, and QO, an observer
 * in mangle POSTROUTING that sees skb->priority after the pool's accept.
 * Once the pool has called back for every datagram, a sentinel (seq VN,
 * which the callback accepts) follows them on the same path: the test
 * waits for it, so "nothing else arrived" is checked after every verdict
 * has been applied, not after a guessed delay.
 */
#define VPORT		5302
#define QV		6	/* the pool's queue */
#define QT		7	/* queue-to-N target, served by the test */
#define QO		8	/* POSTROUTING observer, test-served */
#define QNONE		9	/* bound by nobody */
#define VN		100

enum vkind {
	VK_ACCEPT,
	VK_DROP,
	VK_REPEAT,		/* REPEAT once, then ACCEPT */
	VK_QUEUE,		/* to QT, no flags */
	VK_QUEUE_MARK,		/* to QT with a mark */
	VK_QUEUE_NOBODY,	/* to QNONE without bypass: dropped */
	VK_QUEUE_BYPASS,	/* to QNONE with bypass: accepted */
	VK_QUEUE_BYPASS_HELD,	/* to QT with bypass: QT gets it */
	VK_MARK,		/* ACCEPT with a mark */
	VK_PRIORITY,		/* ACCEPT with a priority */
	VK_PAYLOAD,		/* ACCEPT with a new payload */
};

struct vtest {
	enum vkind kind;
	atomic_uint calls[VN + 1];	/* callbacks per seq */
	atomic_uint bad;		/* packets without a known seq */
	atomic_uint build_failed;
	/* side queue (QT or QO), served by the test thread */
	unsigned int side_seen[VN + 1];
	bool side_ok[VN + 1];		/* mark / priority as expected */
	unsigned int side_n;		/* test packets seen there */
};

static uint32_t vmark(uint32_t seq)
{
	return 0x5000 + seq;
}

static uint32_t vprio(uint32_t seq)
{
	return 1000 + seq;
}

/* The payload VK_PAYLOAD puts in datagram @seq (longer than the 64 bytes
 * sent, and different). */
static size_t vpayload(uint32_t seq, uint8_t *buf)
{
	uint32_t nseq = htonl(seq);
	size_t i, len = 100;

	memcpy(buf, &nseq, 4);
	for (i = 4; i < len; i++)
		buf[i] = (uint8_t)(0x3c ^ (seq * 7 + i));
	return len;
}

static bool vk_uses_qt(enum vkind k)
{
	return k == VK_QUEUE || k == VK_QUEUE_MARK || k == VK_QUEUE_BYPASS_HELD;
}

static bool vk_arrives(enum vkind k)
{
	return k != VK_DROP && k != VK_QUEUE_NOBODY;
}

/* The verdict of each kind; the mark, the priority and the payload (as
 * the flags say) are the seq's, VK_REPEAT accepts the second time. */
static const struct nfqb_verdict vk_verdict[] = {
	[VK_ACCEPT] = { .verdict = NFQB_ACCEPT },
	[VK_DROP] = { .verdict = NFQB_DROP },
	[VK_REPEAT] = { .verdict = NFQB_REPEAT },
	[VK_QUEUE] = { .verdict = NFQB_QUEUE, .queue_num = QT },
	[VK_QUEUE_MARK] = { .verdict = NFQB_QUEUE, .queue_num = QT,
			    .flags = NFQB_V_MARK },
	[VK_QUEUE_NOBODY] = { .verdict = NFQB_QUEUE, .queue_num = QNONE },
	[VK_QUEUE_BYPASS] = { .verdict = NFQB_QUEUE, .queue_num = QNONE,
			      .flags = NFQB_V_BYPASS },
	[VK_QUEUE_BYPASS_HELD] = { .verdict = NFQB_QUEUE, .queue_num = QT,
				   .flags = NFQB_V_BYPASS },
	[VK_MARK] = { .verdict = NFQB_ACCEPT, .flags = NFQB_V_MARK },
	[VK_PRIORITY] = { .verdict = NFQB_ACCEPT, .flags = NFQB_V_PRIORITY },
	[VK_PAYLOAD] = { .verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD },
};

static int vt_cb(struct nfqb_packet *p, void *policy, void *data,
		 struct nfqb_verdict *v)
{
	static __thread uint8_t pkt[2048];
	struct vtest *t = data;
	unsigned int times;
	uint8_t pl[256];
	const uint8_t *orig;
	uint32_t seq, olen;
	size_t len = 0;

	(void)policy;
	if (!nfqbt_pkt_seq(p, &seq) || seq > VN) {
		atomic_fetch_add(&t->bad, 1);
		return NFQB_POOL_VERDICT;
	}
	times = atomic_fetch_add(&t->calls[seq], 1) + 1;
	if (seq == VN)
		return NFQB_POOL_VERDICT;	/* the sentinel: the default */
	if (t->kind == VK_PAYLOAD) {
		orig = nfqb_pkt_payload(p, &olen);
		len = nfqbt_build_udp4(pkt, sizeof(pkt), orig, olen, pl,
				       vpayload(seq, pl));
		if (!len) {
			atomic_fetch_add(&t->build_failed, 1);
			return -1;
		}
	}
	*v = vk_verdict[t->kind];
	if (t->kind == VK_REPEAT && times > 1)
		v->verdict = NFQB_ACCEPT;
	if (v->flags & NFQB_V_MARK)
		v->mark = vmark(seq);
	if (v->flags & NFQB_V_PRIORITY)
		v->priority = vprio(seq);
	if (v->flags & NFQB_V_PAYLOAD) {
		v->payload = pkt;
		v->payload_len = (uint32_t)len;
	}
	return NFQB_POOL_VERDICT;
}

/* Receive what the side queue holds, record it, accept it. */
static void side_serve(struct vtest *t, struct nfqb_queue *q)
{
	struct nfqb_packet *vec[32];
	int i, n, rounds;

	for (rounds = 0; rounds < 16; rounds++) {
		n = nfqb_recv(q, vec, 32);
		if (n <= 0) {
			ck_assert_msg(errno == EAGAIN || errno == EINTR,
				      "side recv: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			uint32_t seq, val;

			ck_assert(nfqbt_pkt_seq(vec[i], &seq) && seq <= VN);
			if (seq < VN) {
				t->side_seen[seq]++;
				t->side_n++;
			}
			if (t->kind == VK_PRIORITY)
				t->side_ok[seq] =
					nfqb_pkt_priority(vec[i], &val) &&
					val == vprio(seq);
			else if (t->kind == VK_QUEUE_MARK)
				t->side_ok[seq] = nfqb_pkt_mark(vec[i], &val) &&
						  val == vmark(seq);
			else
				t->side_ok[seq] = true;
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		}
	}
	ck_assert_int_ge(nfqb_flush(q), 0);
}

/* UDP to VPORT queued to QV, a pool of two workers (@mode, @drain_ms)
 * on it, started, its callback @cb with @data. */
static struct nfqb_pool *qv_pool(enum nfqb_pool_mode mode,
				 unsigned int drain_ms, nfqb_pool_cb cb,
				 void *data)
{
	struct nfqb_pool_config cfg = {
		.queue_first = QV,
		.queue_count = 1,
		.mode = mode,
		.workers = 2,
		.drain_ms = drain_ms,
		.cb = cb,
		.cb_data = data,
	};

	nfqbt_rule_queue(VPORT, QV, false);
	return nfqbt_pool_start(&cfg);
}

static void run_verdict(enum vkind kind, enum nfqb_pool_mode mode)
{
	bool arrives = vk_arrives(kind), sentinel = false;
	unsigned int want_calls = kind == VK_REPEAT ? 2 * VN : VN;
	unsigned int expected = (arrives ? VN : 0) + 1;
	struct nfqb_queue *side = NULL;
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool;
	struct nfqbt_rx *rx;
	struct nfqbt_tx *tx;
	struct vtest *t;
	uint64_t end;
	uint32_t seq;

	t = calloc(1, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	t->kind = kind;
	if (kind == VK_PRIORITY) {
		nfqbt_iptables("-t mangle -A POSTROUTING -o lo -p udp "
			       "--dport %u -j NFQUEUE --queue-num %u",
			       VPORT, QO);
		side = nfqbt_queue_open_nb(QO);
	} else if (vk_uses_qt(kind)) {
		side = nfqbt_queue_open_nb(QT);
	}
	rx = nfqbt_rx_start(VPORT, &(struct nfqbt_rx_opts){
		.expected = expected, .quiet_ms = 5000, .timeout_ms = 20000 });
	pool = qv_pool(mode, 0, vt_cb, t);
	tx = nfqbt_tx_start(&(struct nfqbt_tx_opts){
		.port = VPORT, .count = VN });

	/* serve the side queue until the pool called back for every
	 * datagram, the sentinel went out after them and arrived, and the
	 * side queue saw what it should (bounded: 15 s) */
	end = nfqbt_now_ms() + 15000;
	while (nfqbt_now_ms() < end) {
		struct pollfd pfd = {
			.fd = side ? nfqb_queue_fd(side) : -1,
			.events = POLLIN,
		};

		if (side)
			side_serve(t, side);
		st = pstats(pool, -1);
		if (!sentinel && st.packets >= want_calls) {
			nfqbt_send_seqs(VPORT, VN, 1);
			sentinel = true;
		}
		/* nfqbt_rx_total(), the getter safe while the receiver
		 * runs: with every verdict right, the sentinel is the last
		 * arrival (or the only one) */
		if (sentinel && nfqbt_rx_total(rx) >= expected &&
		    (!side || t->side_n >= VN))
			break;
		poll(&pfd, 1, 5);
	}
	ck_assert_uint_eq(nfqbt_tx_join(tx), VN);
	ck_assert_msg(sentinel, "the pool called back %llu times, not %u",
		      (unsigned long long)pstats(pool, -1).packets, want_calls);
	if (side)
		ck_assert_msg(t->side_n >= VN, "queue %u saw %u of %u packets",
			      kind == VK_PRIORITY ? QO : QT, t->side_n, VN);
	nfqbt_rx_wait(rx);
	nfqbt_pool_stop(pool);

	/* the receiver: each test datagram once or never, the sentinel
	 * once, nothing else */
	for (seq = 0; seq < VN; seq++)
		ck_assert_msg(nfqbt_rx_count(rx, seq) == (arrives ? 1u : 0u),
			      "seq %u arrived %u times, want %u", seq,
			      nfqbt_rx_count(rx, seq), arrives ? 1 : 0);
	ck_assert_uint_eq(nfqbt_rx_count(rx, VN), 1);
	ck_assert_uint_eq(nfqbt_rx_total(rx), expected);
	ck_assert_uint_eq(nfqbt_rx_bad(rx), 0);
	/* the callback: every datagram once (twice for repeat) */
	for (seq = 0; seq < VN; seq++)
		ck_assert_uint_eq(atomic_load(&t->calls[seq]),
				  kind == VK_REPEAT ? 2 : 1);
	ck_assert_uint_eq(atomic_load(&t->bad), 0);
	ck_assert_uint_eq(atomic_load(&t->build_failed), 0);
	/* where it landed */
	for (seq = 0; seq < VN; seq++) {
		uint32_t mark = 0;

		if (side) {
			ck_assert_msg(t->side_seen[seq] == 1,
				      "seq %u seen %u times by the side queue",
				      seq, t->side_seen[seq]);
			ck_assert_msg(t->side_ok[seq], "seq %u: side queue "
				      "saw no %s", seq, kind == VK_PRIORITY ?
				      "priority" : "mark");
		}
		if (kind == VK_MARK || kind == VK_QUEUE_MARK) {
			ck_assert_msg(nfqbt_rx_mark(rx, seq, &mark),
				      "seq %u: no mark", seq);
			ck_assert_uint_eq(mark, vmark(seq));
		}
		if (kind == VK_PAYLOAD && seq < NFQBT_RX_STORE) {
			uint8_t want[256];
			size_t wlen = vpayload(seq, want), glen = 0;
			const uint8_t *got = nfqbt_rx_payload(rx, seq, &glen);

			ck_assert_ptr_nonnull(got);
			ck_assert_uint_eq(glen, wlen);
			ck_assert_msg(memcmp(got, want, wlen) == 0,
				      "seq %u: payload not replaced", seq);
		}
	}
	/* the pool's counters */
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(st.packets, want_calls + 1);
	switch (kind) {
	case VK_DROP:
		ck_assert_uint_eq(st.dropped, VN);
		break;
	case VK_REPEAT:
		ck_assert_uint_eq(st.other, VN);
		ck_assert_uint_eq(st.accepted, VN + 1);
		break;
	case VK_QUEUE:
	case VK_QUEUE_MARK:
	case VK_QUEUE_NOBODY:
	case VK_QUEUE_BYPASS:
	case VK_QUEUE_BYPASS_HELD:
		ck_assert_uint_eq(st.other, VN);
		ck_assert_uint_eq(st.marked, kind == VK_QUEUE_MARK ? VN : 0);
		break;
	default:
		ck_assert_uint_eq(st.accepted, VN + 1);
		ck_assert_uint_eq(st.marked, kind == VK_MARK ? VN : 0);
		break;
	}
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	if (side)
		ck_assert_int_eq(nfqb_queue_close(side), 0);
	free(t);
}

START_TEST(test_cb_accept)
{
	run_verdict(VK_ACCEPT, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_drop)
{
	run_verdict(VK_DROP, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_repeat)
{
	run_verdict(VK_REPEAT, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_queue)
{
	run_verdict(VK_QUEUE, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_queue_mark)
{
	run_verdict(VK_QUEUE_MARK, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_queue_nobody)
{
	run_verdict(VK_QUEUE_NOBODY, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_queue_bypass)
{
	run_verdict(VK_QUEUE_BYPASS, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_queue_bypass_held)
{
	run_verdict(VK_QUEUE_BYPASS_HELD, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_mark)
{
	run_verdict(VK_MARK, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_priority)
{
	run_verdict(VK_PRIORITY, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_payload)
{
	run_verdict(VK_PAYLOAD, NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_cb_dispatch_queue)
{
	run_verdict(VK_QUEUE, NFQB_POOL_DISPATCH);
}
END_TEST

START_TEST(test_cb_dispatch_queue_mark)
{
	run_verdict(VK_QUEUE_MARK, NFQB_POOL_DISPATCH);
}
END_TEST

START_TEST(test_cb_dispatch_payload)
{
	run_verdict(VK_PAYLOAD, NFQB_POOL_DISPATCH);
}
END_TEST

/* --- verdicts after the pool stopped -------------------------------------- */

/*
 * The callback defers the first LATE_N datagrams and keeps them; after
 * nfqb_pool_wait() returned (the default verdict, accept, let them pass,
 * and the queue is unbound) a verdict on them must fail with ESHUTDOWN and
 * touch nothing freed (the queues live until nfqb_pool_destroy(); run it
 * under --enable-sanitizers to see the difference).
 */
#define LATE_N		8

struct late {
	atomic_uint n;
	struct nfqb_packet *p[LATE_N];
};

static int late_cb(struct nfqb_packet *p, void *policy, void *data,
		   struct nfqb_verdict *v)
{
	struct late *l = data;
	unsigned int i;
	uint32_t seq;

	(void)policy;
	(void)v;
	if (!nfqbt_pkt_seq(p, &seq) || seq >= LATE_N)
		return NFQB_POOL_VERDICT;
	i = atomic_fetch_add(&l->n, 1);
	if (i >= LATE_N)
		return NFQB_POOL_VERDICT;
	l->p[i] = p;
	return NFQB_POOL_DEFER;
}

static void assert_shutdown(int ret, const char *what, unsigned int i)
{
	int err = errno;

	ck_assert_msg(ret == -1 && err == ESHUTDOWN,
		      "%s on deferred packet %u after the pool stopped: "
		      "%d (%s), want -1 (ESHUTDOWN)", what, i, ret,
		      ret < 0 ? strerror(err) : "success");
}

/* qv_pool() whose callback @cb (with @data) defers what it gets; @n
 * datagrams sent to it, all of them deferred. */
static struct nfqb_pool *deferred_n(enum nfqb_pool_mode mode,
				    unsigned int drain_ms, nfqb_pool_cb cb,
				    void *data, unsigned int n)
{
	struct nfqb_pool *pool = qv_pool(mode, drain_ms, cb, data);
	unsigned int i;

	nfqbt_send_seqs(VPORT, 0, n);
	for (i = 0; i < 10000 && pstats(pool, -1).deferred < n; i++)
		nfqbt_sleep_ms(1);
	ck_assert_uint_eq(pstats(pool, -1).deferred, n);
	return pool;
}

static void run_late(enum nfqb_pool_mode mode)
{
	struct nfqb_verdict ex = {
		.verdict = NFQB_QUEUE, .queue_num = QT,
		.flags = NFQB_V_MARK, .mark = 7,
	};
	struct nfqb_stats qs;
	struct nfqb_kstats ks;
	struct nfqb_pool *pool;
	struct nfqbt_rx *rx;
	struct late l;
	unsigned int i;

	memset(&l, 0, sizeof(l));
	rx = nfqbt_rx_start(VPORT, &(struct nfqbt_rx_opts){
		.expected = LATE_N, .timeout_ms = 20000 });
	pool = deferred_n(mode, 20, late_cb, &l, LATE_N);
	ck_assert_uint_eq(nfqbt_rx_total(rx), 0);	/* held by the app */

	nfqbt_pool_stop(pool);
	/* the queue is unbound, its packets got the default verdict */
	ck_assert_int_eq(nfqb_kstats_get(QV, &ks, sizeof(ks)), -1);
	nfqbt_rx_wait_exact(rx, 0, LATE_N, NULL, NULL);

	/* the late verdicts: all refused, every kind, twice */
	ck_assert_uint_eq(atomic_load(&l.n), LATE_N);
	for (i = 0; i < LATE_N; i++) {
		assert_shutdown(nfqb_verdict(l.p[i], NFQB_DROP),
				"nfqb_verdict", i);
		assert_shutdown(nfqb_verdict_mark(l.p[i], NFQB_ACCEPT, 3),
				"nfqb_verdict_mark", i);
		assert_shutdown(nfqb_verdict_ex(l.p[i], &ex, sizeof(ex)),
				"nfqb_verdict_ex", i);
		assert_shutdown(nfqb_verdict(l.p[i], NFQB_ACCEPT),
				"nfqb_verdict (again)", i);
	}
	/* and once more after another wait, which changes nothing */
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	assert_shutdown(nfqb_verdict(l.p[0], NFQB_DROP), "nfqb_verdict", 0);
	ck_assert_uint_eq(pstats(pool, -1).errors, 0);
	/* the queue's counters are final after the wait: they include the
	 * default verdicts the shutdown gave */
	ck_assert_int_eq(nfqb_pool_queue_stats(pool, 0, &qs, sizeof(qs)), 0);
	ck_assert_uint_eq(qs.defaults, LATE_N);
	ck_assert_uint_eq(qs.outstanding, 0);
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
}

START_TEST(test_qpw_late_verdict)
{
	run_late(NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_dispatch_late_verdict)
{
	run_late(NFQB_POOL_DISPATCH);
}
END_TEST

/*
 * Deferred verdicts racing the stop: the callback defers every datagram;
 * once all are held, a thread decides them one by one, a little apart,
 * while the main thread stops the pool and waits for it (drain_ms 1: the
 * default verdicts and the shutdown meet the late verdicts). Every call
 * returns 0 or fails with ESHUTDOWN, or EALREADY when the default verdict
 * got there first; after nfqb_pool_wait() returned, only ESHUTDOWN. The
 * last RACE_KEEP packets are the main thread's, decided after the wait.
 * Under --enable-sanitizers this is the test of "never touches freed
 * memory".
 */
#define RACE_N		200
#define RACE_KEEP	16

struct race {
	pthread_mutex_t lock;
	struct nfqb_packet *p[RACE_N];
	unsigned int n;
	atomic_uint done;
	atomic_bool waited;
	unsigned int ok, shut, already, after_wait, after_wait_bad;
	int bad_errno;
	pthread_t thread;
};

static int race_cb(struct nfqb_packet *p, void *policy, void *data,
		   struct nfqb_verdict *v)
{
	struct race *r = data;
	bool kept = false;

	(void)policy;
	(void)v;
	pthread_mutex_lock(&r->lock);
	if (r->n < RACE_N) {
		r->p[r->n++] = p;
		kept = true;
	}
	pthread_mutex_unlock(&r->lock);
	return kept ? NFQB_POOL_DEFER : NFQB_POOL_VERDICT;
}

static void *race_main(void *arg)
{
	struct race *r = arg;
	struct timespec pause = { .tv_nsec = 20000 };
	unsigned int i;

	for (i = 0; i < RACE_N - RACE_KEEP; i++) {
		bool waited = atomic_load(&r->waited);
		struct nfqb_packet *p;
		int ret, err;

		pthread_mutex_lock(&r->lock);	/* what race_cb stored */
		p = r->p[i];
		pthread_mutex_unlock(&r->lock);
		ret = nfqb_verdict_mark(p, NFQB_ACCEPT, 9);
		err = errno;
		if (waited) {
			r->after_wait++;
			if (ret != -1 || err != ESHUTDOWN)
				r->after_wait_bad++;
		}
		if (ret == 0)
			r->ok++;
		else if (err == ESHUTDOWN)
			r->shut++;
		else if (err == EALREADY)
			r->already++;
		else
			r->bad_errno = err;
		atomic_store(&r->done, i + 1);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

START_TEST(test_late_verdict_race)
{
	struct nfqb_pool *pool;
	struct race *r;
	unsigned int i;

	r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	pthread_mutex_init(&r->lock, NULL);
	pool = deferred_n(NFQB_POOL_DISPATCH, 1, race_cb, r, RACE_N);
	ck_assert_int_eq(pthread_create(&r->thread, NULL, race_main, r), 0);
	/* stop once the deciding thread is well under way */
	for (i = 0; i < 10000 && atomic_load(&r->done) < RACE_N / 4; i++)
		nfqbt_sleep_ms(1);
	nfqbt_pool_stop(pool);
	atomic_store(&r->waited, true);
	for (i = RACE_N - RACE_KEEP; i < RACE_N; i++) {
		errno = 0;
		ck_assert_int_eq(nfqb_verdict(r->p[i], NFQB_DROP), -1);
		ck_assert_int_eq(errno, ESHUTDOWN);
	}
	pthread_join(r->thread, NULL);

	ck_assert_msg(r->bad_errno == 0, "a late verdict failed with %s",
		      strerror(r->bad_errno));
	ck_assert_uint_eq(r->ok + r->shut + r->already, RACE_N - RACE_KEEP);
	ck_assert_uint_ge(r->ok, RACE_N / 4);
	ck_assert_msg(r->after_wait_bad == 0, "%u of %u verdicts after the "
		      "wait did not fail with ESHUTDOWN", r->after_wait_bad,
		      r->after_wait);
	nfqb_pool_destroy(pool);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
END_TEST

/* --- under pressure: a deferred backlog as big as the buffers ---------- */

#define PRESSURE_N		20000
#define PRESSURE_WINDOW		16384
#define PRESSURE_BUFFERS	64
#define PRESSURE_HOLD_MS	200
#define BACKLOG_CAP		32768	/* a power of two, > PRESSURE_N */

/* An application thread that decides every fourth accepted packet later,
 * oldest first, in rounds: it lets the deferred packets pile up until
 * there are twice as many as a queue has buffers (or the oldest waited
 * PRESSURE_HOLD_MS, whichever comes first: a queue may run dry), then
 * decides them all. So a queue runs out of buffers again and again, and
 * only the application's decisions end it, at whatever speed the machine
 * (or a sanitizer) lets the traffic flow. */
struct backlog {
	struct cb_data cd;	/* decide()'s */
	pthread_mutex_t lock;
	struct nfqb_packet *v[BACKLOG_CAP];
	uint32_t mark[BACKLOG_CAP];
	uint64_t at_ms[BACKLOG_CAP];
	unsigned int head, tail;
	bool stop;
	atomic_uint refused;
	pthread_t thread;
};

static int decide_backlog(struct nfqb_packet *p, void *policy, void *data,
			  struct nfqb_verdict *v)
{
	struct backlog *b = data;
	unsigned int k;

	if (!decide_keep(p, policy, &b->cd, v, 4))
		return NFQB_POOL_VERDICT;
	pthread_mutex_lock(&b->lock);
	ck_assert_uint_lt(b->tail - b->head, BACKLOG_CAP);
	k = b->tail++ % BACKLOG_CAP;
	b->v[k] = p;
	b->mark[k] = v->mark;
	b->at_ms[k] = nfqbt_now_ms();
	pthread_mutex_unlock(&b->lock);
	return NFQB_POOL_DEFER;
}

/* Whether the round is due; the lock held. */
static bool backlog_due(const struct backlog *b, uint64_t now)
{
	if (b->head == b->tail)
		return false;
	return b->stop || b->tail - b->head >= 2 * PRESSURE_BUFFERS ||
	       now >= b->at_ms[b->head % BACKLOG_CAP] + PRESSURE_HOLD_MS;
}

static void *backlog_main(void *arg)
{
	struct backlog *b = arg;

	pthread_mutex_lock(&b->lock);
	while (!b->stop || b->head != b->tail) {
		unsigned int end;

		if (!backlog_due(b, nfqbt_now_ms())) {
			pthread_mutex_unlock(&b->lock);
			nfqbt_sleep_ms(1);
			pthread_mutex_lock(&b->lock);
			continue;
		}
		for (end = b->tail; b->head != end;) {
			unsigned int k = b->head++ % BACKLOG_CAP;

			pthread_mutex_unlock(&b->lock);
			if (nfqb_verdict_mark(b->v[k], NFQB_ACCEPT,
					      b->mark[k]) < 0)
				atomic_fetch_add(&b->refused, 1);
			pthread_mutex_lock(&b->lock);
		}
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void backlog_stop(struct backlog *b)
{
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->thread, NULL);
}

static uint64_t buffers_exhausted(struct nfqb_pool *pool, unsigned int nq)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < nq; i++) {
		struct nfqb_stats st;

		ck_assert_int_eq(nfqb_pool_queue_stats(pool, i, &st,
						       sizeof(st)), 0);
		sum += st.buffers_exhausted;
	}
	return sum;
}

/*
 * Two queues behind --queue-balance 0:1 --queue-bypass, 16384 datagrams
 * in flight, one accepted packet in four deferred to the backlog thread:
 * the buffers run out many times (counted), which is transient; the pool
 * must keep running through it. A pool that stopped by itself would
 * unbind its queues and, with bypass, let the rest through uninspected:
 * every datagram must arrive once and carry the callback's mark, and the
 * pool must still be running (no error) at the end.
 */
static void run_pressure(enum nfqb_pool_mode mode, unsigned int workers)
{
	const unsigned int n = PRESSURE_N;
	unsigned int expected = n - (n + 10) / 11;
	struct nfqbt_rx_opts ro = { .expected = expected, .timeout_ms = 25000,
				    .expect = expect_kept };
	struct nfqb_pool_config cfg = {
		.queue_first = 0,
		.queue_count = 2,
		.mode = mode,
		.workers = workers,
		.copy_range = 256,
		.maxlen = PRESSURE_WINDOW,
		.buffers = PRESSURE_BUFFERS,
		.rcvbuf = 8 << 20,
		.ring_size = 256,
		.cb = decide_backlog,
		.policy = policy_new(0),
		.policy_free = policy_free,
	};
	struct backlog *b = calloc(1, sizeof(*b));
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool;
	struct nfqbt_rx *rx;
	struct sender s;

	ck_assert(b != NULL);
	pthread_mutex_init(&b->lock, NULL);
	cfg.cb_data = b;
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE "
		       "--queue-balance 0:1 --queue-bypass", PORT);
	rx = nfqbt_rx_start(PORT, &ro);
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_int_eq(pthread_create(&b->thread, NULL, backlog_main, b), 0);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	sender_start(&s, n, rx, pool, PRESSURE_WINDOW);
	ck_assert_uint_eq(sender_join(&s), n);
	nfqbt_rx_wait(rx);
	ck_assert_msg(!nfqb_pool_stopping(pool),
		      "the pool stopped by itself under pressure (%u of %u "
		      "datagrams arrived)", nfqbt_rx_total(rx), n);
	backlog_stop(b);
	nfqbt_pool_stop(pool);
	/* first, so that any failure below comes with its mapping */
	assert_flow_map(pool, &b->cd, 2, n, mode == NFQB_POOL_DISPATCH ?
			"pressure (dispatch)" : "pressure (queue per worker)");
	ck_assert_uint_eq(atomic_load(&b->refused), 0);
	nfqbt_rx_assert_exact(rx, 0, n, expect_kept, NULL);
	assert_marked(rx, n);
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.packets, n);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_gt(st.deferred, n / 8);
	/* the scenario did what it is for: buffers ran out */
	ck_assert_uint_gt(buffers_exhausted(pool, 2), 0);
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	free(b);
}

START_TEST(test_qpw_pressure)
{
	run_pressure(NFQB_POOL_QUEUE_PER_WORKER, 0);
}
END_TEST

START_TEST(test_dispatch_pressure)
{
	run_pressure(NFQB_POOL_DISPATCH, 3);
}
END_TEST

/* --- a callback that fails: the pool's default verdict ------------------ */

#define CBERR_N		300

/* seq % 5 == 2: the callback fails; seq % 5 == 4: it returns a verdict
 * the library refuses (no such code). Both get the pool's default, drop
 * here, counted in errors; the others are accepted with their mark. */
static bool cberr_failed(uint32_t seq)
{
	return seq % 5 == 2 || seq % 5 == 4;
}

static bool cberr_kept(uint32_t seq, void *data)
{
	(void)data;
	return !cberr_failed(seq);
}

static int cberr_cb(struct nfqb_packet *p, void *policy, void *data,
		    struct nfqb_verdict *v)
{
	uint32_t seq;

	(void)policy;
	(void)data;
	if (!nfqbt_pkt_seq(p, &seq))
		return NFQB_POOL_VERDICT;
	if (seq % 5 == 2)
		return -1;
	v->verdict = seq % 5 == 4 ? 99 : NFQB_ACCEPT;
	v->flags = NFQB_V_MARK;
	v->mark = seq_mark(seq);
	return NFQB_POOL_VERDICT;
}

START_TEST(test_cb_error_default)
{
	enum nfqb_pool_mode mode = _i ? NFQB_POOL_DISPATCH :
				  NFQB_POOL_QUEUE_PER_WORKER;
	struct nfqb_pool_config cfg = {
		.queue_first = 0,
		.queue_count = 1,
		.mode = mode,
		.workers = _i ? 2 : 0,
		.copy_range = 256,
		.default_drop = true,
		.cb = cberr_cb,
	};
	struct nfqbt_rx_opts ro = { .expected = CBERR_N * 3 / 5,
				    .expect = cberr_kept };
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool;
	struct nfqbt_rx *rx;
	uint32_t i;

	nfqbt_rule_queue(PORT, 0, false);
	rx = nfqbt_rx_start(PORT, &ro);
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqbt_send_seqs(PORT, 0, CBERR_N);
	nfqbt_rx_wait(rx);
	nfqbt_pool_stop(pool);
	nfqbt_rx_assert_exact(rx, 0, CBERR_N, cberr_kept, NULL);
	for (i = 0; i < CBERR_N; i++)
		if (!cberr_failed(i))
			ck_assert_uint_eq(nfqbt_rx_mark_of(rx, i), seq_mark(i));
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.packets, CBERR_N);
	ck_assert_uint_eq(st.errors, CBERR_N * 2 / 5);
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
}
END_TEST

/* --- one packet held while thousands flow ------------------------------- */

#define HELD_N		6000
#define HELD_EVERY	2000	/* the kept seq 1 of every HELD_EVERY is held */
#define HELD_MS		3000	/* ... until @seen more were decided, or
				 * this long */
#define HELD_WINDOW	512	/* datagrams in flight at most */
#define HELD_BUFFERS	64	/* a small book, unless sized by maxlen */

/*
 * The callback holds one packet in HELD_EVERY (deferred) and decides all
 * the others at once; a thread gives the held one its verdict once the
 * callback decided @seen more packets, or after HELD_MS. While it is
 * held the packets behind it are read, decided and sent, and the book
 * spans every id since the held one.
 */
struct holder {
	struct cb_data cd;	/* decide()'s */
	pthread_mutex_t lock;
	struct nfqb_packet *held;
	uint32_t mark;
	uint64_t at_ms;
	unsigned int seen;	/* release after this many more decided */
	unsigned int seen_at;	/* decided when it was held */
	atomic_uint decided;	/* by the callback */
	unsigned int nheld, by_time;
	atomic_bool stop;
	atomic_uint refused;
	pthread_t thread;
};

static int decide_hold(struct nfqb_packet *p, void *policy, void *data,
		       struct nfqb_verdict *v)
{
	struct holder *h = data;
	uint32_t seq;
	bool hold;

	decide(p, policy, &h->cd, v);
	hold = v->verdict == NFQB_ACCEPT && nfqbt_pkt_seq(p, &seq) &&
	       seq % HELD_EVERY == 1;
	pthread_mutex_lock(&h->lock);
	if (hold && !h->held) {
		h->held = p;
		h->mark = v->mark;
		h->at_ms = nfqbt_now_ms();
		h->seen_at = atomic_load(&h->decided);
		h->nheld++;
		pthread_mutex_unlock(&h->lock);
		return NFQB_POOL_DEFER;
	}
	pthread_mutex_unlock(&h->lock);
	atomic_fetch_add(&h->decided, 1);
	return NFQB_POOL_VERDICT;
}

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	for (;;) {
		struct nfqb_packet *p = NULL;
		bool stop = atomic_load(&h->stop);
		uint32_t mark = 0;

		pthread_mutex_lock(&h->lock);
		if (h->held && (stop ||
				atomic_load(&h->decided) - h->seen_at >=
				h->seen ||
				nfqbt_now_ms() - h->at_ms >= HELD_MS)) {
			if (atomic_load(&h->decided) - h->seen_at < h->seen)
				h->by_time++;
			p = h->held;
			mark = h->mark;
			h->held = NULL;
		}
		pthread_mutex_unlock(&h->lock);
		if (p && nfqb_verdict_mark(p, NFQB_ACCEPT, mark) < 0)
			atomic_fetch_add(&h->refused, 1);
		if (stop && !p)
			break;
		nfqbt_sleep_ms(1);
	}
	return NULL;
}

static uint64_t book_full(struct nfqb_pool *pool)
{
	struct nfqb_stats st;

	ck_assert_int_eq(nfqb_pool_queue_stats(pool, 0, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.gap_ids, 0);
	ck_assert_uint_eq(st.rejected_defaults, 0);
	return st.book_full;
}

/*
 * One queue (no hash: the same on every boot), HELD_N datagrams, one
 * packet held in HELD_EVERY while the rest flow. Every packet must reach
 * the callback: every kept datagram arrives once with the callback's
 * mark, no dropped one arrives. With a long queue (@maxlen) the book
 * takes what flows while one is held (nothing waits: each is released by
 * count); with the kernel's default length (1024) and a packet held while
 * more than twice that many are decided (@seen), the book fills, the
 * packets wait in the kernel's queue (counted) until the held one is
 * decided by time.
 */
static void run_held(enum nfqb_pool_mode mode, unsigned int workers,
		     uint32_t maxlen, unsigned int seen)
{
	const unsigned int n = HELD_N;
	struct nfqbt_rx_opts ro = { .expected = n - (n + 10) / 11,
				    .quiet_ms = HELD_MS + 2000,
				    .timeout_ms = 25000,
				    .expect = expect_kept };
	struct nfqb_pool_config cfg = {
		.queue_first = 0,
		.queue_count = 1,
		.mode = mode,
		.workers = workers,
		.copy_range = 256,
		.maxlen = maxlen,
		.buffers = HELD_BUFFERS,
		.rcvbuf = 8 << 20,
		.cb = decide_hold,
		.policy = policy_new(0),
		.policy_free = policy_free,
	};
	struct holder *h = calloc(1, sizeof(*h));
	struct nfqb_pool_stats st;
	struct nfqb_pool *pool;
	struct nfqbt_rx *rx;
	struct sender s;
	uint64_t full;

	ck_assert(h != NULL);
	pthread_mutex_init(&h->lock, NULL);
	cfg.cb_data = h;
	h->seen = seen;
	nfqbt_rule_queue(PORT, 0, false);
	rx = nfqbt_rx_start(PORT, &ro);
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_int_eq(pthread_create(&h->thread, NULL, holder_main, h), 0);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	sender_start(&s, n, rx, pool, HELD_WINDOW);
	ck_assert_uint_eq(sender_join(&s), n);
	nfqbt_rx_wait(rx);
	atomic_store(&h->stop, true);
	pthread_join(h->thread, NULL);
	nfqbt_pool_stop(pool);
	ck_assert_uint_eq(atomic_load(&h->refused), 0);
	nfqbt_rx_assert_exact(rx, 0, n, expect_kept, NULL);
	assert_marked(rx, n);
	st = pstats(pool, -1);
	ck_assert_uint_eq(st.packets, n);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_ge(h->nheld, 2);
	full = book_full(pool);
	if (maxlen) {
		/* the book spans what flowed while one was held */
		ck_assert_uint_eq(h->by_time, 0);
		ck_assert_uint_eq(full, 0);
	} else {
		/* the scenario did what it is for: the book filled, and
		 * only time released the held packets */
		ck_assert_uint_gt(full, 0);
		ck_assert_uint_eq(h->by_time, h->nheld);
	}
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static const struct {
	enum nfqb_pool_mode mode;
	unsigned int workers;
	uint32_t maxlen;
	unsigned int seen;
} held_cases[] = {
	{ NFQB_POOL_QUEUE_PER_WORKER, 0, 8192, 1500 },
	{ NFQB_POOL_DISPATCH, 2, 8192, 1500 },
	{ NFQB_POOL_QUEUE_PER_WORKER, 0, 0, 4000 },
	{ NFQB_POOL_DISPATCH, 2, 0, 4000 },
};

START_TEST(test_held)
{
	run_held(held_cases[_i].mode, held_cases[_i].workers,
		 held_cases[_i].maxlen, held_cases[_i].seen);
}
END_TEST

/* --- a fatal error: the application is told at once ---------------------- */

/* The pool's netlink sockets (NETLINK_NETFILTER) among our fds. */
static unsigned int queue_sockets(int *fds, unsigned int max)
{
	unsigned int n = 0;
	int fd;

	for (fd = 3; fd < 1024 && n < max; fd++) {
		int dom = 0, proto = 0;
		socklen_t len = sizeof(int);

		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0)
			continue;
		len = sizeof(int);
		if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) < 0)
			continue;
		if (dom == AF_NETLINK && proto == NETLINK_NETFILTER)
			fds[n++] = fd;
	}
	return n;
}

/*
 * The socket of a queue is closed under its thread (replaced by /dev/null
 * with dup2(): the next receive fails with ENOTSOCK), a fatal error. The
 * pool must stop by itself and say so at once: nfqb_pool_fd() readable,
 * nfqb_pool_error() and nfqb_pool_wait() with the error; every other
 * queue shut down (unbound), the deferred packets' late verdicts refused.
 */
static void run_fatal(enum nfqb_pool_mode mode, unsigned int workers)
{
	struct nfqb_pool_config cfg = two_queues(mode, workers);
	struct pollfd pfd;
	struct nfqb_pool *pool;
	int fds[4], null;
	uint64_t t0;

	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_uint_eq(queue_sockets(fds, 4), 2);
	pfd = (struct pollfd){ .fd = nfqb_pool_fd(pool), .events = POLLIN };
	ck_assert_int_ge(pfd.fd, 0);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqbt_sleep_ms(100);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);	/* running: not readable */
	ck_assert_int_eq(nfqb_pool_error(pool), 0);
	ck_assert(!nfqb_pool_stopping(pool));

	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(null, 0);
	t0 = nfqbt_now_ms();
	ck_assert_int_eq(dup2(null, fds[0]), fds[0]);
	close(null);
	ck_assert_msg(poll(&pfd, 1, 2000) == 1,
		      "the pool did not report its fatal error within 2 s");
	ck_assert_uint_le(nfqbt_now_ms() - t0, 1000);
	ck_assert(nfqb_pool_stopping(pool));
	ck_assert_int_eq(nfqb_pool_error(pool), ENOTSOCK);
	errno = 0;
	ck_assert_int_eq(nfqb_pool_wait(pool), -1);
	ck_assert_int_eq(errno, ENOTSOCK);
	ck_assert_int_eq(nfqb_pool_error(pool), ENOTSOCK);
	/* the other queue was shut down (unbound) */
	{
		struct nfqb_kstats ks;
		unsigned int i, bound = 0;

		for (i = 0; i < 2; i++)
			bound += nfqb_kstats_get((uint16_t)i, &ks,
						 sizeof(ks)) == 0;
		ck_assert_uint_eq(bound, 0);
	}
	nfqb_pool_destroy(pool);
}

START_TEST(test_qpw_fatal)
{
	run_fatal(NFQB_POOL_QUEUE_PER_WORKER, 0);
}
END_TEST

START_TEST(test_dispatch_fatal)
{
	run_fatal(NFQB_POOL_DISPATCH, 2);
}
END_TEST

/* --- failed start, create errors ------------------------------------------ */

/* A pinning CPU past CPU_SETSIZE makes the start fail at thread @bad.
 * nfqb_pool_wait() must then report that failure (every time) and return
 * only once every queue is unbound. */
static void run_failed_start(enum nfqb_pool_mode mode, const int *cpus,
			     unsigned int ncpus)
{
	struct nfqb_pool_config cfg = two_queues(mode, 2);
	struct nfqb_kstats ks;
	struct nfqb_pool *pool;
	unsigned int i;

	cfg.cpus = cpus;
	cfg.ncpus = ncpus;
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_int_eq(nfqb_kstats_get(0, &ks, sizeof(ks)), 0);
	errno = 0;
	ck_assert_int_eq(nfqb_pool_start(pool), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert(nfqb_pool_stopping(pool));
	for (i = 0; i < 2; i++) {
		errno = 0;
		ck_assert_msg(nfqb_pool_wait(pool) == -1,
			      "nfqb_pool_wait() after a failed start: 0");
		ck_assert_int_eq(errno, EINVAL);
	}
	/* stopped means unbound, also the queues whose thread never ran */
	for (i = 0; i < 2; i++) {
		ck_assert_msg(nfqb_kstats_get((uint16_t)i, &ks, sizeof(ks)) == -1,
			      "queue %u still bound after nfqb_pool_wait()", i);
		ck_assert_int_eq(errno, ENOENT);
	}
	ck_assert_int_eq(nfqb_pool_start(pool), -1);
	ck_assert_int_eq(errno, EALREADY);
	nfqb_pool_destroy(pool);
}

START_TEST(test_qpw_failed_start)
{
	static const int cpus[] = { CPU_SETSIZE + 1 };

	run_failed_start(NFQB_POOL_QUEUE_PER_WORKER, cpus, 1);
}
END_TEST

START_TEST(test_dispatch_failed_start)
{
	/* worker 0 starts (unpinned), worker 1 cannot: no reader runs */
	static const int cpus[] = { -1, CPU_SETSIZE + 1 };

	run_failed_start(NFQB_POOL_DISPATCH, cpus, 2);
}
END_TEST

static unsigned int open_fds(void)
{
	unsigned int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl((int)fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* Every failure of nfqb_pool_create() sets errno to its own cause, never a
 * value left over from before (preset to EXDEV here), and leaks nothing. */
START_TEST(test_create_errno)
{
	struct nfqb_pool_config cfg = two_queues(NFQB_POOL_DISPATCH, 2);
	struct rlimit old, rl;
	struct nfqb_queue *held;
	struct nfqb_pool *pool;
	unsigned int base, lim, fails = 0;

	errno = EXDEV;
	ck_assert_ptr_null(nfqb_pool_create(NULL, sizeof(struct nfqb_pool_config)));
	ck_assert_int_eq(errno, EINVAL);
	/* a queue taken by someone else: EBUSY, and the pool's other queue
	 * is let go */
	held = nfqbt_queue_open(1);
	errno = EXDEV;
	ck_assert_ptr_null(nfqb_pool_create(&cfg, sizeof(cfg)));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(nfqb_kstats_get(0, NULL, sizeof(struct nfqb_kstats)), -1);
	ck_assert_int_eq(nfqb_queue_close(held), 0);
	/* a flag the kernel does not know */
	cfg.queue_flags = 1u << 30;
	errno = EXDEV;
	ck_assert_ptr_null(nfqb_pool_create(&cfg, sizeof(cfg)));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	cfg.queue_flags = 0;
	/* out of descriptors at every step: EMFILE, nothing leaked */
	base = open_fds();
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	for (lim = base; lim < base + 32; lim++) {
		rl = old;
		rl.rlim_cur = lim;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
		errno = EXDEV;
		pool = nfqb_pool_create(&cfg, sizeof(cfg));
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
		if (pool) {
			nfqb_pool_destroy(pool);
			break;
		}
		fails++;
		ck_assert_msg(errno == EMFILE, "limit %u fds: %s", lim,
			      strerror(errno));
		ck_assert_uint_eq(open_fds(), base);
	}
	ck_assert_msg(lim < base + 32, "no pool even with %u fds", lim);
	ck_assert_uint_gt(fails, 4);
	ck_assert_uint_eq(open_fds(), base);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("integration-pool");
	TCase *tc = nfqbt_tcase_netns(s, "pool", NFQBT_TCASE_TIMEOUT_LONG);

	tcase_add_test(tc, test_api_edges);
	tcase_add_loop_test(tc, test_mixed, 0,
			    (int)(sizeof(mixed) / sizeof(mixed[0])));
	tcase_add_test(tc, test_qpw_swap);
	tcase_add_test(tc, test_dispatch_swap);
	tcase_add_test(tc, test_qpw_stop);
	tcase_add_test(tc, test_dispatch_stop);
	tcase_add_test(tc, test_cb_accept);
	tcase_add_test(tc, test_cb_drop);
	tcase_add_test(tc, test_cb_repeat);
	tcase_add_test(tc, test_cb_queue);
	tcase_add_test(tc, test_cb_queue_mark);
	tcase_add_test(tc, test_cb_queue_nobody);
	tcase_add_test(tc, test_cb_queue_bypass);
	tcase_add_test(tc, test_cb_queue_bypass_held);
	tcase_add_test(tc, test_cb_mark);
	tcase_add_test(tc, test_cb_priority);
	tcase_add_test(tc, test_cb_payload);
	tcase_add_test(tc, test_cb_dispatch_queue);
	tcase_add_test(tc, test_cb_dispatch_queue_mark);
	tcase_add_test(tc, test_cb_dispatch_payload);
	tcase_add_test(tc, test_qpw_late_verdict);
	tcase_add_test(tc, test_dispatch_late_verdict);
	tcase_add_test(tc, test_late_verdict_race);
	tcase_add_test(tc, test_qpw_pressure);
	tcase_add_test(tc, test_dispatch_pressure);
	tcase_add_loop_test(tc, test_cb_error_default, 0, 2);
	tcase_add_loop_test(tc, test_held, 0,
			    (int)(sizeof(held_cases) / sizeof(held_cases[0])));
	tcase_add_test(tc, test_qpw_fatal);
	tcase_add_test(tc, test_dispatch_fatal);
	tcase_add_test(tc, test_qpw_failed_start);
	tcase_add_test(tc, test_dispatch_failed_start);
	tcase_add_test(tc, test_create_errno);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_pool", pool_suite());
}
