// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The worker pool (see pool-int.h for how it works and its files): its
 * life and the API.
 */
#include "pool-int.h"

/* --- the API ------------------------------------------------------------- */

static int config_queue(struct nfqb_pool *pool, struct nfqb_queue *q)
{
	const struct nfqb_pool_config *c = &pool->config;

	if (nfqb_queue_set_nonblock(q, true) < 0)
		return -1;
	if (nfqb_queue_set_default_verdict(q, pool->default_verdict) < 0)
		return -1;
	if (nfqb_queue_set_copy_mode(q, NFQB_COPY_PACKET,
				     c->copy_range ? c->copy_range : 0xffff) < 0)
		return -1;
	if ((c->queue_flags || c->queue_flags_off) &&
	    nfqb_queue_set_flags(q, c->queue_flags,
				 c->queue_flags | c->queue_flags_off) < 0)
		return -1;
	if (c->maxlen && nfqb_queue_set_maxlen(q, c->maxlen) < 0)
		return -1;
	if (c->large && nfqb_queue_set_large(q, c->large) < 0)
		return -1;
	if (c->buffers && c->buffers != nfqb_queue_buffers(q) &&
	    nfqb_queue_set_buffers(q, c->buffers) < 0)
		return -1;
	if (c->rcvbuf && nfqb_queue_set_rcvbuf(q, c->rcvbuf) < 0)
		return -1;
	if (c->latency_us && nfqb_queue_set_latency(q, c->latency_us) < 0)
		return -1;
	if (c->batch_limit &&
	    nfqb_queue_set_batch_limit(q, c->batch_limit) < 0)
		return -1;
	if (c->verdict_timeout_ms &&
	    nfqb_queue_set_verdict_timeout(q, c->verdict_timeout_ms) < 0)
		return -1;
	return 0;
}

/* A NULL @pool: false, errno EINVAL. */
NFQB_EXPORT bool nfqb_pool_stopping(const struct nfqb_pool *pool)
{
	if (!pool) {
		errno = EINVAL;
		return false;
	}
	return pool_stopping(pool);
}

NFQB_EXPORT int nfqb_pool_fd(const struct nfqb_pool *pool)
{
	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	return pool->stop_evfd;
}

NFQB_EXPORT int nfqb_pool_error(const struct nfqb_pool *pool)
{
	if (!pool)
		return EINVAL;
	return atomic_load(&pool->fatal);
}

static void pool_free(struct nfqb_pool *pool)
{
	unsigned int i;

	/* frees the queues a run shut down; shuts down and frees the others
	 * (a pool that never ran, or a failed create) */
	if (pool->queues)
		for (i = 0; i < pool->nqueues; i++)
			nfqb_queue_close(pool->queues[i]);
	if (pool->threads)
		for (i = 0; i < pool->nthreads; i++)
			if (pool->threads[i].evfd >= 0)
				close(pool->threads[i].evfd);
	if (pool->qsnap)
		for (i = 0; i < pool->nqueues; i++)
			pthread_mutex_destroy(&pool->qsnap[i].lock);
	if (pool->stop_evfd >= 0)
		close(pool->stop_evfd);
	pthread_mutex_destroy(&pool->policy_lock);
	free(pool->queues);
	free(pool->qsnap);
	free(pool->threads);
	free(pool->rings);
	free(pool->ring_mem);
	free(pool->cpus);
	free(pool);
}

/* The caller's configuration, read and checked. 0, or -1 with errno. */
static int pool_config(struct nfqb_pool_config *c,
		       const struct nfqb_pool_config *ucfg, size_t size)
{
	int err = nfqb_struct_in(c, sizeof(*c), NFQB_POOL_CONFIG_SIZE_MIN,
				 ucfg, size);

	if (err)
		return nfqb_fail(err);
	if (!c->cb || !c->queue_count ||
	    (unsigned int)c->queue_first + c->queue_count > 65536 ||
	    (c->mode != NFQB_POOL_QUEUE_PER_WORKER &&
	     c->mode != NFQB_POOL_DISPATCH) ||
	    (c->ring_size & (c->ring_size - 1)) ||
	    c->ring_size > (1u << 24) || (c->ncpus && !c->cpus) ||
	    (c->mode == NFQB_POOL_DISPATCH && c->workers > 1024))
		return nfqb_fail(EINVAL);
	return 0;
}

/* The pool's memory for @c: its tables, nothing started, no fd. */
static struct nfqb_pool *pool_alloc(const struct nfqb_pool_config *c)
{
	struct nfqb_pool *pool = nfqb_calloc(1, sizeof(*pool));
	unsigned int i;

	if (!pool)
		return NULL;
	pool->config = *c;
	pool->stop_evfd = -1;
	pthread_mutex_init(&pool->policy_lock, NULL);
	atomic_init(&pool->policy, c->policy);
	if (!pool->config.drain_ms)
		pool->config.drain_ms = POOL_DRAIN_DEFAULT_MS;
	pool->default_verdict = c->default_drop ? NFQB_DROP : NFQB_ACCEPT;
	pool->nqueues = c->queue_count;
	pool->nworkers = pool->nqueues;
	if (c->mode == NFQB_POOL_DISPATCH)
		pool->nworkers = c->workers ? c->workers : c->queue_count;
	pool->nthreads = pool->nworkers;
	if (c->mode == NFQB_POOL_DISPATCH)
		pool->nthreads += pool->nqueues;
	pool->cpus = nfqb_calloc(c->ncpus ? c->ncpus : 1, sizeof(int));
	pool->queues = nfqb_calloc(pool->nqueues, sizeof(*pool->queues));
	pool->qsnap = nfqb_calloc(pool->nqueues, sizeof(*pool->qsnap));
	pool->threads = nfqb_calloc(pool->nthreads, sizeof(*pool->threads));
	if (pool->threads)	/* pool_free() closes what is not -1 */
		for (i = 0; i < pool->nthreads; i++)
			pool->threads[i].evfd = -1;
	if (pool->qsnap)
		for (i = 0; i < pool->nqueues; i++)
			pthread_mutex_init(&pool->qsnap[i].lock, NULL);
	if (pool->cpus && c->ncpus) {
		memcpy(pool->cpus, c->cpus, c->ncpus * sizeof(int));
		pool->config.cpus = pool->cpus;
	}
	return pool;
}

/* Each thread's role, CPU and eventfd; the stop eventfd. 0, or -1 with
 * errno. */
static int pool_threads(struct nfqb_pool *pool)
{
	const struct nfqb_pool_config *c = &pool->config;
	unsigned int i;

	for (i = 0; i < pool->nthreads; i++) {
		struct pool_thread *t = &pool->threads[i];

		t->pool = pool;
		t->reader = c->mode == NFQB_POOL_DISPATCH &&
			    i >= pool->nworkers;
		t->index = t->reader ? i - pool->nworkers : i;
		t->qi = t->index;
		t->cpu = c->ncpus ? pool->cpus[i % c->ncpus] : -1;
		t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (t->evfd < 0)
			return -1;
	}
	pool->stop_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return pool->stop_evfd < 0 ? -1 : 0;
}

/* Dispatch: a ring from every reader to every worker. 0, or -1 with
 * ENOMEM. */
static int pool_rings(struct nfqb_pool *pool)
{
	size_t nr = (size_t)pool->nqueues * pool->nworkers, i;
	unsigned int size = pool->config.ring_size ? pool->config.ring_size :
			    POOL_RING_DEFAULT;

	if (pool->config.mode != NFQB_POOL_DISPATCH)
		return 0;
	pool->rings = nfqb_calloc(nr, sizeof(*pool->rings));
	pool->ring_mem = nfqb_calloc(nr * size, sizeof(void *));
	if (!pool->rings || !pool->ring_mem)
		return nfqb_fail(ENOMEM);
	for (i = 0; i < nr; i++) {
		pool->rings[i].mask = size - 1;
		pool->rings[i].v = pool->ring_mem + i * size;
	}
	return 0;
}

/* Bind the queues (@fds NULL) or adopt the sockets in @fds, and configure
 * them. 0, or -1 with errno. */
static int pool_queues(struct nfqb_pool *pool, const int *fds)
{
	const struct nfqb_pool_config *c = &pool->config;
	unsigned int i;

	for (i = 0; i < pool->nqueues; i++) {
		uint16_t num = (uint16_t)(c->queue_first + i);
		struct nfqb_queue *q;

		if (fds)
			q = nfqb_queue_adopt_n(fds[i], num, c->buffers ?
					       c->buffers :
					       NFQB_DEFAULT_BUFFERS);
		else
			q = nfqb_queue_open(num);
		pool->queues[i] = q;
		if (!q || config_queue(pool, q) < 0)
			return -1;
	}
	return 0;
}

/* A create that failed: the sockets in @fds stay the caller's, neither
 * closed nor unbound. */
static void pool_unwind(struct nfqb_pool *pool, const int *fds)
{
	unsigned int i;

	atomic_store(&pool->policy, NULL);
	for (i = 0; fds && i < pool->nqueues; i++) {
		struct nfqb_queue *q = pool->queues[i];

		/* what it read and could not verdict is still queued: the
		 * next owner defaults it (orphans, see nfqb_queue_adopt()) */
		if (q)
			nfqb_queue_handover(q, true);
	}
	pool_free(pool);
}

/* Create, binding the queues (@fds NULL) or adopting the sockets in @fds. */
static struct nfqb_pool *pool_new(const struct nfqb_pool_config *ucfg,
				  size_t size, const int *fds)
{
	struct nfqb_pool_config c;
	struct nfqb_pool *pool;
	int err;

	if (pool_config(&c, ucfg, size) < 0)
		return NULL;
	pool = pool_alloc(&c);
	if (!pool) {
		errno = ENOMEM;
		return NULL;
	}
	if (!pool->cpus || !pool->queues || !pool->qsnap || !pool->threads)
		errno = ENOMEM;
	else if (pool_threads(pool) == 0 && pool_rings(pool) == 0 &&
		 pool_queues(pool, fds) == 0)
		return pool;
	err = errno;
	pool_unwind(pool, fds);
	errno = err;
	return NULL;
}

NFQB_EXPORT struct nfqb_pool *nfqb_pool_create(const struct nfqb_pool_config *cfg,
					       size_t size)
{
	return pool_new(cfg, size, NULL);
}

NFQB_EXPORT struct nfqb_pool *nfqb_pool_adopt(const struct nfqb_pool_config *cfg,
					      size_t size, const int *fds)
{
	if (!fds) {
		errno = EINVAL;
		return NULL;
	}
	return pool_new(cfg, size, fds);
}

NFQB_EXPORT void nfqb_pool_stop(struct nfqb_pool *pool)
{
	if (!pool) {
		errno = EINVAL;
		return;
	}
	pool_signal_stop(pool);
}

/* The thread that owns queue queue_first + @qi. */
static struct pool_thread *queue_owner(struct nfqb_pool *pool, unsigned int qi)
{
	if (pool->config.mode == NFQB_POOL_DISPATCH)
		return &pool->threads[pool->nworkers + qi];
	return &pool->threads[qi];
}

/* Join every started thread; the first fatal error any of them met. */
static int join_all(struct nfqb_pool *pool)
{
	unsigned int i;

	for (i = 0; i < pool->nthreads; i++) {
		struct pool_thread *t = &pool->threads[i];

		if (!t->started)
			continue;
		pthread_join(t->tid, NULL);
		t->started = false;
	}
	return atomic_load(&pool->fatal);
}

/* 0, or -1 with errno. */
static int start_thread(struct pool_thread *t)
{
	struct nfqb_pool *pool = t->pool;
	void *(*fn)(void *);
	pthread_attr_t attr;
	int ret;

	if (pool->config.mode == NFQB_POOL_QUEUE_PER_WORKER)
		fn = pool_qpw_main;
	else
		fn = t->reader ? pool_reader_main : pool_worker_main;
	if (t->cpu >= CPU_SETSIZE)
		return nfqb_fail(EINVAL);
	pthread_attr_init(&attr);
	if (t->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	ret = pthread_create(&t->tid, &attr, fn, t);
	pthread_attr_destroy(&attr);
	if (ret)
		return nfqb_fail(ret);
	t->started = true;
	return 0;
}

/* A thread did not start (errno @ret): stop the others, and shut down the
 * queues of owners that never ran. -1 with errno @ret. */
static int start_failed(struct nfqb_pool *pool, int ret)
{
	unsigned int i;

	nfqb_pool_stop(pool);
	if (pool->config.mode == NFQB_POOL_DISPATCH) {
		/* threads that never started: the readers push nothing, the
		 * workers are gone, so that the others end */
		for (i = pool->nworkers; i < pool->nthreads; i++)
			if (!pool->threads[i].started)
				pool_reader_done(&pool->threads[i]);
		for (i = 0; i < pool->nworkers; i++)
			if (!pool->threads[i].started)
				pool_worker_gone(&pool->threads[i]);
	}
	join_all(pool);
	for (i = 0; i < pool->nqueues; i++)
		pool_queue_end_unstarted(queue_owner(pool, i),
					 pool->queues[i]);
	pool->waited = true;
	pool->err = ret;
	pool_fail(pool, ret);
	errno = ret;
	return -1;
}

NFQB_EXPORT int nfqb_pool_start(struct nfqb_pool *pool)
{
	unsigned int i;

	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	if (pool->started) {
		errno = EALREADY;
		return -1;
	}
	pool->started = true;
	for (i = 0; i < pool->nthreads; i++)
		if (start_thread(&pool->threads[i]) < 0)
			return start_failed(pool, errno);
	return 0;
}

NFQB_EXPORT int nfqb_pool_wait(struct nfqb_pool *pool)
{
	if (!pool || !pool->started) {
		errno = EINVAL;
		return -1;
	}
	if (!pool->waited) {
		pool->err = join_all(pool);
		pool->waited = true;
	}
	if (pool->err) {
		errno = pool->err;
		return -1;
	}
	return 0;
}

NFQB_EXPORT int nfqb_pool_handover(struct nfqb_pool *pool, int *fds,
				   unsigned int nfds)
{
	unsigned int i;
	int ret;

	if (!pool || !fds || nfds < pool->nqueues || !pool->started) {
		errno = EINVAL;
		return -1;
	}
	if (pool->waited || pool_stopping(pool)) {
		errno = EALREADY;
		return -1;
	}
	atomic_store(&pool->handover, true);
	nfqb_pool_stop(pool);
	ret = nfqb_pool_wait(pool);
	for (i = 0; i < pool->nqueues; i++) {
		fds[i] = queue_owner(pool, i)->handed;
		if (fds[i] < 0 && !ret) {
			errno = EALREADY;	/* stopped by someone else */
			ret = -1;
		}
	}
	return ret;
}

NFQB_EXPORT void nfqb_pool_destroy(struct nfqb_pool *pool)
{
	void *policy;

	if (!pool)
		return;
	if (pool->started && !pool->waited) {
		nfqb_pool_stop(pool);
		nfqb_pool_wait(pool);
	}
	policy = atomic_load(&pool->policy);
	if (policy && pool->config.policy_free)
		pool->config.policy_free(policy);
	pool_free(pool);
}

NFQB_EXPORT int nfqb_pool_set_policy(struct nfqb_pool *pool, void *policy)
{
	void *old;
	unsigned int i;

	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	if (pool_cur_thread && pool_cur_thread->pool == pool) {
		errno = EDEADLK;
		return -1;
	}
	pthread_mutex_lock(&pool->policy_lock);
	old = atomic_exchange_explicit(&pool->policy, policy,
				       memory_order_acq_rel);
	urcu_qsbr_synchronize_rcu();
	for (i = 0; i < pool->nthreads; i++)
		(void)atomic_load_explicit(&pool->threads[i].qs_seq,
					   memory_order_acquire);
	atomic_fetch_add(&pool->swaps, 1);
	pthread_mutex_unlock(&pool->policy_lock);
	if (old && old != policy && pool->config.policy_free)
		pool->config.policy_free(old);
	return 0;
}

/* A NULL @pool: 0, errno EINVAL. */
NFQB_EXPORT unsigned int nfqb_pool_threads(const struct nfqb_pool *pool)
{
	if (!pool) {
		errno = EINVAL;
		return 0;
	}
	return pool->nthreads;
}

NFQB_EXPORT int nfqb_pool_stats(const struct nfqb_pool *pool, int thread,
				struct nfqb_pool_stats *st, size_t size)
{
	uint64_t v[NSTAT] = { 0 };
	unsigned int i, k, first, last;

	if (!pool || !st || size % sizeof(uint64_t) || thread < -1 ||
	    (thread >= 0 && (unsigned int)thread >= pool->nthreads)) {
		errno = EINVAL;
		return -1;
	}
	first = thread < 0 ? 0 : (unsigned int)thread;
	last = thread < 0 ? pool->nthreads : first + 1;
	for (i = first; i < last; i++)
		for (k = 0; k < NSTAT; k++)
			v[k] += atomic_load_explicit(&pool->threads[i].st[k],
						     memory_order_relaxed);
	if (thread < 0)
		v[PSTAT(policy_swaps)] = atomic_load(&pool->swaps);
	if (size > sizeof(v)) {
		memset(st, 0, size);
		size = sizeof(v);
	}
	memcpy(st, v, size);
	return 0;
}

NFQB_EXPORT int nfqb_pool_queue_stats(const struct nfqb_pool *pool,
				      unsigned int index, struct nfqb_stats *st,
				      size_t size)
{
	struct nfqb_stats s;

	if (!pool || !st || index >= pool->nqueues || size % sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&pool->qsnap[index].lock);
	s = pool->qsnap[index].st;
	pthread_mutex_unlock(&pool->qsnap[index].lock);
	if (size > sizeof(s)) {
		memset(st, 0, size);
		size = sizeof(s);
	}
	memcpy(st, &s, size);
	return 0;
}

NFQB_EXPORT int nfqb_pool_worker_index(void)
{
	if (!pool_cur_thread || pool_cur_thread->reader)
		return -1;
	return (int)pool_cur_thread->index;
}
