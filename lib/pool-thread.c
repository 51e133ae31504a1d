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

/* Stop: the flag, then the eventfd every thread polls (nfqb_pool_fd()). */
void pool_signal_stop(struct nfqb_pool *pool)
{
	atomic_store_explicit(&pool->stop, true, memory_order_release);
	pool_evfd_signal(pool->stop_evfd);
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
	pool_count_set(t, PSTAT(queue_depth), st.outstanding);
	pool_count_set(t, PSTAT(defaults), st.defaults + st.timeouts);
}

unsigned int pool_queue_outstanding(struct nfqb_queue *q)
{
	struct nfqb_stats st;

	if (nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return 0;
	return (unsigned int)st.outstanding;
}

/* How long an owner may sleep: until the library's next timer, at most
 * POOL_IDLE_MS. Decisions of other threads wake it through the queue's
 * eventfd (pool_thread_sleep() polls it), so no polling for them. */
int pool_sleep_timeout(struct pool_thread *t, struct nfqb_queue *q)
{
	int tmo = nfqb_queue_next_timeout(q);

	(void)t;
	if (tmo < 0 || tmo > POOL_IDLE_MS)
		tmo = POOL_IDLE_MS;
	return tmo;
}

/*
 * What a pool thread may meet from nfqb_recv(), nfqb_flush() or the
 * linger and go on: a signal or interrupt (EINTR), nothing to read or a
 * send failed for now (EAGAIN: the library retries it), the socket
 * overflowed (ENOBUFS: counted), every buffer is with the application
 * (ENOSPC: ends with its decisions), an allocation failed (ENOMEM).
 * Anything else is fatal to the thread's queue and stops the pool.
 */
bool pool_transient(int err)
{
	return err == EINTR || err == EAGAIN || err == ENOBUFS ||
	       err == ENOSPC || err == ENOMEM;
}

/* --- RCU ------------------------------------------------------------------ */

/*
 * A worker announces a quiescent state. The release store before it is for
 * race detectors, which do not see liburcu's own synchronization: the
 * policy setter acquire-loads every qs_seq after the grace period, which
 * orders every read of the old policy before its free in their model too.
 */
void pool_rcu_quiescent(struct pool_thread *t)
{
	atomic_store_explicit(&t->qs_seq, ++t->qs_local, memory_order_release);
	urcu_qsbr_quiescent_state();
}

void pool_rcu_offline(struct pool_thread *t)
{
	atomic_store_explicit(&t->qs_seq, ++t->qs_local, memory_order_release);
	urcu_qsbr_thread_offline();
}

void pool_rcu_online(void)
{
	urcu_qsbr_thread_online();
}

/* --- sleeping ----------------------------------------------------------- */

/* Poll the thread's eventfd, the stop eventfd (unless stopping), the
 * wake-up eventfd of @q (decisions posted by other threads, interrupts;
 * unless @q is NULL) and, if @readable, @q's socket, for up to @tmo ms.
 * The caller has set t->sleeping and found no work after a seq_cst
 * fence. */
static void pool_thread_sleep(struct pool_thread *t, struct nfqb_queue *q,
			      bool readable, int tmo)
{
	struct pollfd pfd[4];
	nfds_t n = 0, qev = 0;

	pfd[n++] = (struct pollfd){ .fd = t->evfd, .events = POLLIN };
	if (!pool_stopping(t->pool))
		pfd[n++] = (struct pollfd){ .fd = t->pool->stop_evfd,
					    .events = POLLIN };
	if (q) {
		qev = n;
		pfd[n++] = (struct pollfd){ .fd = nfqb_loop_wakeup_fd(q),
					    .events = POLLIN };
	}
	if (q && readable)
		pfd[n++] = (struct pollfd){ .fd = nfqb_queue_fd(q),
					    .events = POLLIN };
	if (nfqb_sys_poll(pfd, n, tmo) > 0) {
		if (pfd[0].revents & POLLIN)
			pool_evfd_clear(t->evfd);
		if (qev && (pfd[qev].revents & POLLIN))
			nfqb_loop_clear_wakeup(q);
	}
	atomic_store(&t->sleeping, false);
}

/*
 * The one way a pool thread goes to sleep: it says so (t->sleeping), a
 * fence, one more look for work (@busy; NULL: nothing to look at), then
 * pool_thread_sleep(). Whoever makes work for it makes that visible first
 * and then wakes a thread that says it sleeps (pool_thread_wake(): Dekker,
 * seq_cst on both sides). @rcu: a worker, offline while it sleeps. False
 * if it found work instead of sleeping.
 */
bool pool_thread_doze(struct pool_thread *t, const struct pool_doze *z)
{
	atomic_store(&t->sleeping, true);
	atomic_thread_fence(memory_order_seq_cst);
	if (z->busy && z->busy(t)) {
		atomic_store(&t->sleeping, false);
		return false;
	}
	if (z->rcu)
		pool_rcu_offline(t);
	pool_thread_sleep(t, z->q, z->readable, z->tmo);
	if (z->rcu)
		pool_rcu_online();
	return true;
}

/* A fatal error: the first one is the pool's (nfqb_pool_error(),
 * nfqb_pool_wait()); stop the pool, which makes nfqb_pool_fd() readable. */
void pool_fail(struct nfqb_pool *pool, int err)
{
	int none = 0;

	atomic_compare_exchange_strong(&pool->fatal, &none, err);
	pool_signal_stop(pool);
}

void pool_thread_fail(struct pool_thread *t, int err)
{
	pool_fail(t->pool, err);
}

/* Wait (bounded by drain_ms) until no packet of @q is out with the
 * application, sending decisions as they come. */
void pool_drain_deferred(struct pool_thread *t, struct nfqb_queue *q)
{
	uint64_t deadline = nfqb_now_ns() +
			    t->pool->config.drain_ms * 1000000ull;

	for (;;) {
		uint64_t now;
		int tmo;

		if (nfqb_flush(q) < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			return;
		}
		now = nfqb_now_ns();
		if (!pool_queue_outstanding(q) || now >= deadline)
			return;
		tmo = pool_sleep_timeout(t, q);
		if ((uint64_t)tmo * 1000000ull > deadline - now)
			tmo = (int)((deadline - now + 999999) / 1000000);
		pool_thread_doze(t, &(struct pool_doze){ .q = q, .tmo = tmo });
	}
}

/* Default verdicts, drain, unbind; the memory stays until
 * nfqb_pool_destroy(), so late verdicts fail with ESHUTDOWN. The snapshot
 * after it counts the default verdicts it gave. */
void pool_queue_end(struct pool_thread *t, struct nfqb_queue *q)
{
	struct nfqb_pool *pool = t->pool;

	if (atomic_load(&pool->handover)) {
		/* nfqb_pool_handover(): every verdict sent, still bound */
		int fd = nfqb_queue_handover(q, false);

		t->handed = fd;
		if (fd < 0) {
			pool_thread_fail(t, errno);
			nfqb_queue_shutdown(q);	/* unbind, as a stop */
		}
	} else if (nfqb_queue_shutdown(q) < 0) {
		pool_thread_fail(t, errno);
	}
	t->ended = true;
	pool_queue_snapshot(t, q, true);
	pool_stats_publish(t);
}

/* The queue of an owner that never ran (its thread did not start): shut
 * down as a stop does. */
void pool_queue_end_unstarted(struct pool_thread *t, struct nfqb_queue *q)
{
	if (t->ended)
		return;
	nfqb_queue_shutdown(q);
	t->ended = true;
}

void pool_thread_setup(struct pool_thread *t)
{
	char name[16];

	pool_cur_thread = t;
	t->handed = -1;
	snprintf(name, sizeof(name), "nfqb-%c%u", t->reader ? 'r' : 'w',
		 t->index);
	pthread_setname_np(pthread_self(), name);
}
