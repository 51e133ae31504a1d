// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The worker pool (see pool-int.h): what every pool thread does, reader or
 * worker: sleep and be woken, publish its counters, wait for deferred
 * packets, shut its queue down.
 */
#include "pool-int.h"

__thread struct pool_thread *pool_cur_thread;

/* --- small helpers ------------------------------------------------------ */

bool pool_stopping(const struct nfqb_pool *pool)
{
	return atomic_load_explicit(&pool->stop, memory_order_acquire);
}

void pool_evfd_signal(int fd)
{
	uint64_t one = 1;
	int saved = errno;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so it is readable anyway */
	}
	errno = saved;
}

void pool_evfd_clear(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to clear */
	}
}

void pool_thread_wake(struct pool_thread *t)
{
	if (atomic_load(&t->sleeping) && atomic_exchange(&t->sleeping, false))
		pool_evfd_signal(t->evfd);
}

/* Publish the owner's running totals (one writer per counter). */
void pool_stats_publish(struct pool_thread *t)
{
	unsigned int i;

	for (i = 0; i < NSTAT; i++)
		atomic_store_explicit(&t->st[i], t->loc[i],
				      memory_order_relaxed);
}

/* Copy the queue's library counters for nfqb_pool_queue_stats(); owner
 * thread only (nfqb_queue_stats() walks the owner's ring). */
void pool_queue_snapshot(struct pool_thread *t, struct nfqb_queue *q,
			 bool force)
{
	struct pool_qsnap *s = &t->pool->qsnap[t->qi];
	uint64_t now = nfqb_now_ns();
	struct nfqb_stats st;

	if (!force && now - t->snap_ns < POOL_SNAP_NS)
		return;
	t->snap_ns = now;
	if (nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	s->st = st;
	pthread_mutex_unlock(&s->lock);
	t->loc[PSTAT(queue_depth)] = st.outstanding;
	t->loc[PSTAT(defaults)] = st.defaults + st.timeouts;
}

unsigned int pool_queue_outstanding(struct nfqb_queue *q)
{
	struct nfqb_stats st;

	if (nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return 0;
	return (unsigned int)st.outstanding;
}

/* How long an owner may sleep: until the library's next timer, and, while
 * packets are out with the application, no more than a millisecond: a
 * decision posted by an application thread does not wake a non-blocking
 * queue's fd, so the owner looks for it itself. */
int pool_sleep_timeout(struct pool_thread *t, struct nfqb_queue *q)
{
	int tmo = nfqb_queue_next_timeout(q);

	if (tmo < 0 || tmo > POOL_IDLE_MS)
		tmo = POOL_IDLE_MS;
	if (atomic_load_explicit(&t->pool->any_defer, memory_order_relaxed) &&
	    tmo > POOL_DEFER_POLL_MS && pool_queue_outstanding(q))
		tmo = POOL_DEFER_POLL_MS;
	return tmo;
}

/* --- sleeping ----------------------------------------------------------- */

/* Poll the thread's eventfd, the stop eventfd (unless stopping) and @qfd
 * (unless -1) for up to @tmo ms. The caller has set t->sleeping and found
 * no work after a seq_cst fence. */
void pool_thread_sleep(struct pool_thread *t, int qfd, int tmo)
{
	struct pollfd pfd[3];
	nfds_t n = 0;

	pfd[n++] = (struct pollfd){ .fd = t->evfd, .events = POLLIN };
	if (!pool_stopping(t->pool))
		pfd[n++] = (struct pollfd){ .fd = t->pool->stop_evfd,
					    .events = POLLIN };
	if (qfd >= 0)
		pfd[n++] = (struct pollfd){ .fd = qfd, .events = POLLIN };
	if (poll(pfd, n, tmo) > 0 && (pfd[0].revents & POLLIN))
		pool_evfd_clear(t->evfd);
	atomic_store(&t->sleeping, false);
}

void pool_thread_fail(struct pool_thread *t, int err)
{
	if (!t->err)
		t->err = err;
	nfqb_pool_stop(t->pool);
}

/* Wait (bounded by drain_ms) until no packet of @q is out with the
 * application, sending decisions as they come. */
void pool_drain_deferred(struct pool_thread *t, struct nfqb_queue *q)
{
	uint64_t deadline = nfqb_now_ns() + t->pool->cfg.drain_ms * 1000000ull;

	for (;;) {
		if (nfqb_flush(q) < 0 && errno != EINTR) {
			pool_thread_fail(t, errno);
			return;
		}
		if (!pool_queue_outstanding(q) || nfqb_now_ns() >= deadline)
			return;
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		pool_thread_sleep(t, -1, POOL_DEFER_POLL_MS);
	}
}

/* Default verdicts, drain, unbind; the memory stays until
 * nfqb_pool_destroy(), so late verdicts fail with ESHUTDOWN. The snapshot
 * after it counts the default verdicts it gave. */
void pool_queue_finish(struct pool_thread *t, struct nfqb_queue *q)
{
	struct nfqb_pool *pool = t->pool;

	if (atomic_load(&pool->handover)) {
		/* nfqb_pool_handover(): every verdict sent, still bound */
		int fd = nfqb_queue_release(q);

		pool->handed[t->qi] = fd;
		if (fd < 0) {
			pool_thread_fail(t, errno);
			nfqb_queue_shutdown(q);	/* unbind, as a stop */
		}
	} else if (nfqb_queue_shutdown(q) < 0) {
		pool_thread_fail(t, errno);
	}
	t->finished = true;
	pool_queue_snapshot(t, q, true);
	pool_stats_publish(t);
}

void pool_thread_setup(struct pool_thread *t)
{
	char name[16];

	pool_cur_thread = t;
	snprintf(name, sizeof(name), "nfqb-%c%u", t->reader ? 'r' : 'w',
		 t->index);
	pthread_setname_np(pthread_self(), name);
}
