// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The worker pool (see pool-int.h): the workers. Deciding one packet
 * through the application's callback, RCU quiescent states (the policy is
 * read without a lock), the queue-per-worker loop and the dispatch
 * workers' loop.
 */
#include "pool-int.h"

/* --- deciding one packet --------------------------------------------------- */

static void count_verdict(struct pool_thread *t, const struct nfqb_verdict *v)
{
	switch (v->verdict) {
	case NFQB_ACCEPT:
		pool_count(t, PSTAT(accepted), 1);
		break;
	case NFQB_DROP:
		pool_count(t, PSTAT(dropped), 1);
		break;
	default:
		pool_count(t, PSTAT(other), 1);
		break;
	}
	if (v->flags & NFQB_V_MARK)
		pool_count(t, PSTAT(marked), 1);
}

static void decide_packet(struct pool_thread *t, struct nfqb_packet *p)
{
	struct nfqb_pool *pool = t->pool;
	struct nfqb_verdict v = { .verdict = pool->default_verdict };
	void *policy;
	int r;

	policy = atomic_load_explicit(&pool->policy, memory_order_acquire);
	pool_count(t, PSTAT(packets), 1);
	r = pool->config.cb(p, policy, pool->config.cb_data, &v);
	if (r == NFQB_POOL_DEFER) {
		pool_count(t, PSTAT(deferred), 1);
		return;
	}
	if (r == NFQB_POOL_VERDICT) {
		/* every kind: nfqb_verdict() and nfqb_verdict_mark() refuse
		 * NFQB_QUEUE, which needs the queue number in *v */
		r = nfqb_verdict_ex(p, &v, sizeof(v));
		if (r == 0) {
			count_verdict(t, &v);
			return;
		}
	}
	/* callback error, or a verdict the library refused (bad code or
	 * options; EALREADY if the callback decided it and said VERDICT;
	 * ESHUTDOWN if the queue's owner already shut it down after an
	 * error) */
	pool_count(t, PSTAT(errors), 1);
	nfqb_verdict(p, pool->default_verdict);
}

/* Stop and handover: packets the library read (a linger's read) and did
 * not hand out yet go through the callback too. */
static void decide_ready(struct pool_thread *t, struct nfqb_queue *q,
			 struct nfqb_packet **vec)
{
	unsigned int k;

	for (k = 0; nfqb_queue_nready(q) && k < 1000; k++) {
		int i, n = nfqb_recv(q, vec, POOL_VEC);

		if (n <= 0)
			continue;	/* EINTR, a refusal: reported once */
		pool_count(t, PSTAT(received), (unsigned int)n);
		pool_count(t, PSTAT(batches), 1);
		for (i = 0; i < n; i++)
			decide_packet(t, vec[i]);
	}
}

/* --- queue per worker --------------------------------------------------- */

/* Decide what nfqb_recv() handed out. */
static void qpw_decide(struct pool_thread *t, struct nfqb_queue *q,
		       struct nfqb_packet **vec, int n)
{
	int i;

	pool_count(t, PSTAT(received), (unsigned int)n);
	pool_count(t, PSTAT(batches), 1);
	for (i = 0; i < n; i++)
		decide_packet(t, vec[i]);
	pool_queue_snapshot(t, q, false);
	pool_stats_publish(t);
	pool_rcu_quiescent(t);
}

/* The socket ran dry (EAGAIN), or every buffer is out (ENOSPC, ENOMEM):
 * linger in the middle of a stream, else sleep. False on a fatal error. */
static bool qpw_idle(struct pool_thread *t, struct nfqb_queue *q)
{
	/* starved: the socket stays unread until a decision (the queue's
	 * eventfd) or a timer */
	bool starved = errno != EAGAIN;
	struct pool_doze z = { .q = q, .readable = !starved, .rcu = true };

	/* drained in the middle of a stream: the queue's adaptive linger
	 * (nfqb_queue_set_linger()) may pause to let the next packets
	 * gather, one wake-up and one batch for many */
	if (!starved && nfqb_loop_streaming(q)) {
		int r;

		pool_rcu_offline(t);
		r = nfqb_loop_linger(q);
		pool_rcu_online();
		if (r < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			return false;
		}
		if (r > 0)
			return true;
	}
	pool_queue_snapshot(t, q, false);
	pool_stats_publish(t);
	z.tmo = pool_sleep_timeout(t, q);
	pool_thread_doze(t, &z);
	return true;
}

void *pool_qpw_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct nfqb_queue *q = pool->queues[t->qi];
	struct nfqb_packet *vec[POOL_VEC];

	pool_thread_setup(t);
	urcu_qsbr_register_thread();
	while (!pool_stopping(pool)) {
		int n = nfqb_recv(q, vec, POOL_VEC);

		if (n > 0) {
			qpw_decide(t, q, vec, n);
			continue;
		}
		if (!pool_transient(errno)) {
			pool_thread_fail(t, errno);
			break;
		}
		if (errno == EINTR || errno == ENOBUFS)
			continue;
		if (!qpw_idle(t, q))
			break;
	}
	/* packets the library read and did not hand out (the linger's
	 * read): the callback decides them now; left there, they would
	 * count as outstanding and pool_drain_deferred() would wait
	 * drain_ms for them with the socket unread (the soak saw it
	 * overflow) */
	decide_ready(t, q, vec);
	pool_rcu_offline(t);
	urcu_qsbr_unregister_thread();
	pool_drain_deferred(t, q);
	pool_queue_end(t, q);
	return NULL;
}

/* --- dispatch: workers ---------------------------------------------------- */

static bool readers_done(struct nfqb_pool *pool)
{
	unsigned int r;

	for (r = 0; r < pool->nqueues; r++)
		if (!atomic_load(&pool->threads[pool->nworkers + r].done_pushing))
			return false;
	return true;
}

static bool rings_empty(struct nfqb_pool *pool, unsigned int w)
{
	unsigned int r;

	for (r = 0; r < pool->nqueues; r++)
		if (pool_ring_count(pool_ring_of(pool, r, w)))
			return false;
	return true;
}

/* Work, or the end of it: a packet in a ring, or every reader done. */
static bool worker_busy(struct pool_thread *t)
{
	struct nfqb_pool *pool = t->pool;

	return !rings_empty(pool, t->index) ||
	       (pool_stopping(pool) && readers_done(pool));
}

/* Take what the rings hold and decide it; false if they were empty. */
static bool worker_round(struct pool_thread *t, struct nfqb_packet **vec)
{
	struct nfqb_pool *pool = t->pool;
	uint64_t depth = 0;
	bool any = false;
	unsigned int r, i, n;

	for (r = 0; r < pool->nqueues; r++) {
		struct pool_ring *ring = pool_ring_of(pool, r, t->index);
		struct pool_thread *rd = &pool->threads[pool->nworkers + r];

		n = pool_ring_pop(ring, vec, POOL_VEC);
		if (!n)
			continue;
		any = true;
		pool_count(t, PSTAT(batches), 1);
		for (i = 0; i < n; i++)
			decide_packet(t, vec[i]);
		atomic_fetch_add(&rd->posted, n);
		pool_thread_wake(rd);
		depth += pool_ring_count(ring);
	}
	pool_count_set(t, PSTAT(ring_depth), depth);
	pool_stats_publish(t);
	if (any)
		pool_rcu_quiescent(t);
	return any;
}

void *pool_worker_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct pool_doze z = { .tmo = POOL_IDLE_MS, .busy = worker_busy,
			       .rcu = true };
	struct nfqb_packet *vec[POOL_VEC];
	unsigned int idle = 0;

	pool_thread_setup(t);
	urcu_qsbr_register_thread();
	for (;;) {
		if (worker_round(t, vec)) {
			idle = 0;
			continue;
		}
		/* nothing in any ring: done, or sleep */
		if (pool_stopping(pool) && readers_done(pool) &&
		    rings_empty(pool, t->index))
			break;
		if (idle++ < 2)
			continue;	/* a little spinning before sleeping */
		pool_thread_doze(t, &z);
	}
	pool_rcu_offline(t);
	urcu_qsbr_unregister_thread();
	pool_worker_gone(t);
	return NULL;
}

void pool_worker_gone(struct pool_thread *t)
{
	struct nfqb_pool *pool = t->pool;
	unsigned int r;

	atomic_fetch_add(&pool->workers_exited, 1);
	for (r = 0; r < pool->nqueues; r++)
		pool_thread_wake(&pool->threads[pool->nworkers + r]);
}
