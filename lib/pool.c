// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The worker pool: queue-per-worker and flow-dispatch pipelines over the
 * public queue API, policy hot swap with liburcu QSBR, stop and drain.
 *
 * Sleeping and waking: every pool thread has an eventfd and a `sleeping`
 * flag. A thread about to sleep sets the flag, looks once more for work,
 * then polls; whoever makes work for it (ring push, decisions posted) makes
 * that visible first and then writes the eventfd if the flag was set
 * (Dekker, with seq_cst fences on both sides).
 *
 * Stop: nfqb_pool_stop() sets a flag and writes the stop eventfd every
 * thread polls. Queue-per-worker: the worker stops reading, waits up to
 * drain_ms for deferred packets, shuts its queue down (default verdicts,
 * drain the socket, unbind). Dispatch: a reader stops reading, gives the
 * default verdict to what it has not handed to a worker, tells the workers
 * it is done; workers empty their rings and exit once every reader is done;
 * the readers wait for that, then for deferred packets, then shut down.
 *
 * Shut down, not closed: nfqb_queue_shutdown() keeps the queue's memory,
 * so a deferred packet the application decides late (after the stop, from
 * any thread) meets a queue that refuses it with ESHUTDOWN instead of freed
 * memory. Only nfqb_pool_destroy() frees the queues (nfqb_queue_close()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* liburcu's inline fast paths (LGPL, like us); not under ThreadSanitizer:
 * their plain accesses to liburcu's shared state are by design, and TSan
 * does not see the library's own barriers. The calls cost a few ns per
 * batch, not per packet. */
#ifndef __SANITIZE_THREAD__
#define _LGPL_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/eventfd.h>

#include <urcu/urcu-qsbr.h>

#include "internal.h"
#include <libnfq-batch/pool.h>

#define POOL_VEC		64
#define POOL_RING_DEFAULT	1024
#define POOL_DRAIN_DEFAULT_MS	1000
#define POOL_SNAP_NS		(100ull * 1000000)
#define POOL_IDLE_MS		1000	/* longest sleep without a reason */
#define POOL_DEFER_POLL_MS	1	/* see sleep_timeout() */

#define NSTAT (sizeof(struct nfqb_pool_stats) / sizeof(uint64_t))
#define PSTAT(field) (offsetof(struct nfqb_pool_stats, field) / sizeof(uint64_t))

/* One single-producer single-consumer ring: reader r -> worker w. */
struct pool_ring {
	_Atomic uint32_t head __attribute__((aligned(64)));	/* consumer */
	_Atomic uint32_t tail __attribute__((aligned(64)));	/* producer */
	uint32_t mask;
	struct nfqb_packet **v;
};

struct pool_thread {
	struct nfqb_pool *pool;
	pthread_t tid;
	bool started;
	bool reader;		/* dispatch reader */
	unsigned int index;	/* worker index, or queue index of a reader */
	unsigned int qi;	/* queue index (owners) */
	int cpu;		/* -1: not pinned */
	int evfd;
	int err;		/* errno that stopped it */
	bool finished;		/* owner: its queue is shut down */
	_Atomic bool sleeping;
	_Atomic uint64_t posted;	/* reader: decisions by workers */
	_Atomic bool done_pushing;	/* reader: no more ring pushes */
	_Atomic uint64_t qs_seq;	/* worker: quiescent-state handshake */
	uint64_t qs_local;
	uint64_t snap_ns;
	_Atomic uint64_t st[NSTAT];
	uint64_t loc[NSTAT];	/* owner's running totals */
};

struct pool_qsnap {
	pthread_mutex_t lock;
	struct nfqb_stats st;
};

struct nfqb_pool {
	struct nfqb_pool_config cfg;
	int *cpus;
	uint32_t default_verdict;
	unsigned int nqueues;
	unsigned int nworkers;
	unsigned int nthreads;
	struct nfqb_queue **queues;
	struct pool_qsnap *qsnap;
	struct pool_thread *threads;	/* workers, then readers */
	struct pool_ring *rings;	/* [reader * nworkers + worker] */
	struct nfqb_packet **ring_mem;
	int stop_evfd;
	_Atomic bool stop;
	_Atomic unsigned int workers_exited;
	_Atomic bool any_defer;
	_Atomic bool handover;	/* nfqb_pool_handover(): keep the bindings */
	int *handed;		/* ... the socket of each queue, or -1 */
	bool started;
	bool waited;
	int err;		/* what nfqb_pool_wait() reports */
	void *_Atomic policy;
	pthread_mutex_t policy_lock;
	_Atomic uint64_t swaps;
};

static __thread struct pool_thread *cur_thread;

/* --- small helpers ------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool pool_stopping(const struct nfqb_pool *pool)
{
	return atomic_load_explicit(&pool->stop, memory_order_acquire);
}

static void evfd_signal(int fd)
{
	uint64_t one = 1;
	int saved = errno;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so it is readable anyway */
	}
	errno = saved;
}

static void evfd_clear(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to clear */
	}
}

static void thread_wake(struct pool_thread *t)
{
	if (atomic_load(&t->sleeping) && atomic_exchange(&t->sleeping, false))
		evfd_signal(t->evfd);
}

/* Publish the owner's running totals (one writer per counter). */
static void stats_publish(struct pool_thread *t)
{
	unsigned int i;

	for (i = 0; i < NSTAT; i++)
		atomic_store_explicit(&t->st[i], t->loc[i],
				      memory_order_relaxed);
}

/* Copy the queue's library counters for nfqb_pool_queue_stats(); owner
 * thread only (nfqb_queue_stats() walks the owner's ring). */
static void queue_snapshot(struct pool_thread *t, struct nfqb_queue *q,
			   bool force)
{
	struct pool_qsnap *s = &t->pool->qsnap[t->qi];
	uint64_t now = now_ns();
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

static unsigned int queue_outstanding(struct nfqb_queue *q)
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
static int sleep_timeout(struct pool_thread *t, struct nfqb_queue *q)
{
	int tmo = nfqb_queue_next_timeout(q);

	if (tmo < 0 || tmo > POOL_IDLE_MS)
		tmo = POOL_IDLE_MS;
	if (atomic_load_explicit(&t->pool->any_defer, memory_order_relaxed) &&
	    tmo > POOL_DEFER_POLL_MS && queue_outstanding(q))
		tmo = POOL_DEFER_POLL_MS;
	return tmo;
}

/* --- RCU ------------------------------------------------------------------ */

/*
 * A worker announces a quiescent state. The release store before it is for
 * race detectors, which do not see liburcu's own synchronization: the
 * policy setter acquire-loads every qs_seq after the grace period, which
 * orders every read of the old policy before its free in their model too.
 */
static void worker_quiescent(struct pool_thread *t)
{
	atomic_store_explicit(&t->qs_seq, ++t->qs_local, memory_order_release);
	urcu_qsbr_quiescent_state();
}

static void worker_offline(struct pool_thread *t)
{
	atomic_store_explicit(&t->qs_seq, ++t->qs_local, memory_order_release);
	urcu_qsbr_thread_offline();
}

static void worker_online(void)
{
	urcu_qsbr_thread_online();
}

/* --- deciding one packet --------------------------------------------------- */

static void count_verdict(struct pool_thread *t, const struct nfqb_verdict *v)
{
	switch (v->verdict) {
	case NFQB_ACCEPT:
		t->loc[PSTAT(accepted)]++;
		break;
	case NFQB_DROP:
		t->loc[PSTAT(dropped)]++;
		break;
	default:
		t->loc[PSTAT(other)]++;
		break;
	}
	if (v->flags & NFQB_V_MARK)
		t->loc[PSTAT(marked)]++;
}

static void decide_packet(struct pool_thread *t, struct nfqb_packet *p)
{
	struct nfqb_pool *pool = t->pool;
	struct nfqb_verdict v = { .verdict = pool->default_verdict };
	void *policy;
	int r;

	policy = atomic_load_explicit(&pool->policy, memory_order_acquire);
	t->loc[PSTAT(packets)]++;
	r = pool->cfg.cb(p, policy, pool->cfg.cb_data, &v);
	if (r == NFQB_POOL_DEFER) {
		t->loc[PSTAT(deferred)]++;
		if (!atomic_load_explicit(&pool->any_defer,
					  memory_order_relaxed))
			atomic_store(&pool->any_defer, true);
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
	t->loc[PSTAT(errors)]++;
	nfqb_verdict(p, pool->default_verdict);
}

/* --- flow hash (dispatch) --------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t load_be32(const uint8_t *b)
{
	return (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 |
	       (uint64_t)b[2] << 8 | b[3];
}

static bool has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_UDPLITE || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_DCCP;
}

/* Both directions of a flow hash alike: each endpoint (address, port) is
 * mixed alone and the two are combined with a symmetric operation. */
static uint64_t flow_hash(const struct nfqb_pool *pool,
			  const struct nfqb_packet *p)
{
	uint64_t e1 = 0, e2 = 0, proto;
	const uint8_t *d;
	uint32_t len, off, id;

	if ((pool->cfg.queue_flags & NFQB_F_CONNTRACK) && nfqb_pkt_ct_id(p, &id))
		return mix64(id);
	d = nfqb_pkt_payload(p, &len);
	off = nfqb_pkt_network_offset(p);
	if (!d || off >= len)
		return 0;
	d += off;
	len -= off;
	if (len >= 20 && (d[0] >> 4) == 4) {
		uint32_t ihl = (d[0] & 0x0fu) * 4;
		bool frag = ((d[6] & 0x1f) | d[7]) != 0;

		proto = d[9];
		e1 = load_be32(d + 12) << 16;
		e2 = load_be32(d + 16) << 16;
		if (!frag && !(d[6] & 0x20) && has_ports((uint8_t)proto) &&
		    ihl >= 20 && len >= ihl + 4) {
			e1 |= (uint64_t)d[ihl] << 8 | d[ihl + 1];
			e2 |= (uint64_t)d[ihl + 2] << 8 | d[ihl + 3];
		}
	} else if (len >= 40 && (d[0] >> 4) == 6) {
		unsigned int i;

		proto = d[6];
		for (i = 0; i < 16; i += 4) {
			e1 = mix64(e1 ^ load_be32(d + 8 + i));
			e2 = mix64(e2 ^ load_be32(d + 24 + i));
		}
		if (has_ports((uint8_t)proto) && len >= 44) {
			e1 = e1 << 16 | ((uint64_t)d[40] << 8 | d[41]);
			e2 = e2 << 16 | ((uint64_t)d[42] << 8 | d[43]);
		}
	} else {
		return 0;
	}
	return mix64(mix64(e1) ^ mix64(e2) ^ proto);
}

/* --- rings ------------------------------------------------------------- */

static bool ring_push(struct pool_ring *r, struct nfqb_packet *p)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

	if (t - h > r->mask)
		return false;
	r->v[t & r->mask] = p;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

static unsigned int ring_pop(struct pool_ring *r, struct nfqb_packet **out,
			     unsigned int max)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	unsigned int n = 0;

	while (h != t && n < max)
		out[n++] = r->v[h++ & r->mask];
	if (n)
		atomic_store_explicit(&r->head, h, memory_order_release);
	return n;
}

static uint32_t ring_count(const struct pool_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_acquire);
}

static struct pool_ring *ring_of(struct nfqb_pool *pool, unsigned int reader,
				 unsigned int worker)
{
	return &pool->rings[reader * pool->nworkers + worker];
}

/* --- sleeping ----------------------------------------------------------- */

/* Poll the thread's eventfd, the stop eventfd (unless stopping) and @qfd
 * (unless -1) for up to @tmo ms. The caller has set t->sleeping and found
 * no work after a seq_cst fence. */
static void thread_sleep(struct pool_thread *t, int qfd, int tmo)
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
		evfd_clear(t->evfd);
	atomic_store(&t->sleeping, false);
}

static void thread_fail(struct pool_thread *t, int err)
{
	if (!t->err)
		t->err = err;
	nfqb_pool_stop(t->pool);
}

/* Wait (bounded by drain_ms) until no packet of @q is out with the
 * application, sending decisions as they come. */
static void drain_deferred(struct pool_thread *t, struct nfqb_queue *q)
{
	uint64_t deadline = now_ns() + t->pool->cfg.drain_ms * 1000000ull;

	for (;;) {
		if (nfqb_flush(q) < 0 && errno != EINTR) {
			thread_fail(t, errno);
			return;
		}
		if (!queue_outstanding(q) || now_ns() >= deadline)
			return;
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		thread_sleep(t, -1, POOL_DEFER_POLL_MS);
	}
}

/* Default verdicts, drain, unbind; the memory stays until
 * nfqb_pool_destroy(), so late verdicts fail with ESHUTDOWN. The snapshot
 * after it counts the default verdicts it gave. */
static void queue_finish(struct pool_thread *t, struct nfqb_queue *q)
{
	struct nfqb_pool *pool = t->pool;

	if (atomic_load(&pool->handover)) {
		/* nfqb_pool_handover(): every verdict sent, still bound */
		int fd = nfqb_queue_release(q);

		pool->handed[t->qi] = fd;
		if (fd < 0) {
			thread_fail(t, errno);
			nfqb_queue_shutdown(q);	/* unbind, as a stop */
		}
	} else if (nfqb_queue_shutdown(q) < 0) {
		thread_fail(t, errno);
	}
	t->finished = true;
	queue_snapshot(t, q, true);
	stats_publish(t);
}

static void thread_setup(struct pool_thread *t)
{
	char name[16];

	cur_thread = t;
	snprintf(name, sizeof(name), "nfqb-%c%u", t->reader ? 'r' : 'w',
		 t->index);
	pthread_setname_np(pthread_self(), name);
}

/* --- queue per worker --------------------------------------------------- */

/* Stop and handover: packets the library read (a linger's read) and did
 * not hand out yet go through the callback too. */
static void decide_ready(struct pool_thread *t, struct nfqb_queue *q,
			 struct nfqb_packet **vec)
{
	unsigned int k;

	for (k = 0; q->nready && k < 1000; k++) {
		int i, n = nfqb_recv(q, vec, POOL_VEC);

		if (n <= 0)
			continue;	/* EINTR, a refusal: reported once */
		t->loc[PSTAT(received)] += (unsigned int)n;
		t->loc[PSTAT(batches)]++;
		for (i = 0; i < n; i++)
			decide_packet(t, vec[i]);
	}
}

static void *qpw_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct nfqb_queue *q = pool->queues[t->qi];
	struct nfqb_packet *vec[POOL_VEC];
	int qfd = nfqb_queue_fd(q);
	bool streaming = false;

	thread_setup(t);
	urcu_qsbr_register_thread();
	while (!pool_stopping(pool)) {
		int i, n = nfqb_recv(q, vec, POOL_VEC);

		if (n > 0) {
			if (n >= 2)
				streaming = true;
			t->loc[PSTAT(received)] += (unsigned int)n;
			t->loc[PSTAT(batches)]++;
			for (i = 0; i < n; i++)
				decide_packet(t, vec[i]);
			queue_snapshot(t, q, false);
			stats_publish(t);
			worker_quiescent(t);
			continue;
		}
		if (errno == EINTR || errno == ENOBUFS)
			continue;
		if (errno != EAGAIN) {
			thread_fail(t, errno);
			break;
		}
		/* drained in the middle of a stream: the queue's adaptive
		 * linger (nfqb_queue_set_linger()) may pause to let the next
		 * packets gather, one wake-up and one batch for many */
		if (streaming) {
			int r;

			streaming = false;
			worker_offline(t);
			r = nfqb_loop_linger(q, POOL_VEC);
			worker_online();
			if (r < 0 && errno != EINTR) {
				thread_fail(t, errno);
				break;
			}
			if (r > 0)
				continue;
		}
		queue_snapshot(t, q, false);
		stats_publish(t);
		atomic_store(&t->sleeping, true);
		worker_offline(t);
		thread_sleep(t, qfd, sleep_timeout(t, q));
		worker_online();
	}
	/* packets the library read and did not hand out (the linger's
	 * read): the callback decides them now; left there, they would
	 * count as outstanding and drain_deferred() would wait drain_ms
	 * for them with the socket unread (the soak saw it overflow) */
	decide_ready(t, q, vec);
	worker_offline(t);
	urcu_qsbr_unregister_thread();
	drain_deferred(t, q);
	queue_finish(t, q);
	return NULL;
}

/* --- dispatch: readers ---------------------------------------------------- */

static void wake_workers(struct nfqb_pool *pool, const bool *touched)
{
	unsigned int w;

	atomic_thread_fence(memory_order_seq_cst);
	for (w = 0; w < pool->nworkers; w++)
		if (!touched || touched[w])
			thread_wake(&pool->threads[w]);
}

static void *reader_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct nfqb_queue *q = pool->queues[t->qi];
	struct nfqb_packet *vec[POOL_VEC];
	unsigned int dest[POOL_VEC];
	unsigned int pos = 0, cnt = 0, i;
	bool touched[pool->nworkers];
	int qfd = nfqb_queue_fd(q);
	uint64_t seen = 0;

	thread_setup(t);
	while (!pool_stopping(pool)) {
		bool blocked = false;
		uint64_t posted;
		int n;

		memset(touched, 0, sizeof(touched));
		/* hand on what is waiting (after a full ring) */
		while (pos < cnt) {
			if (!ring_push(ring_of(pool, t->index, dest[pos]),
				       vec[pos])) {
				blocked = true;
				break;
			}
			touched[dest[pos]] = true;
			pos++;
		}
		n = -1;
		errno = EAGAIN;
		if (!blocked) {
			n = nfqb_recv(q, vec, POOL_VEC);
			if (n > 0) {
				cnt = (unsigned int)n;
				pos = 0;
				t->loc[PSTAT(received)] += cnt;
				t->loc[PSTAT(batches)]++;
				for (i = 0; i < cnt; i++)
					dest[i] = (unsigned int)
						(((flow_hash(pool, vec[i]) >> 32) *
						  pool->nworkers) >> 32);
				while (pos < cnt) {
					if (!ring_push(ring_of(pool, t->index,
							       dest[pos]),
						       vec[pos])) {
						blocked = true;
						break;
					}
					touched[dest[pos]] = true;
					pos++;
				}
			}
		} else if (nfqb_flush(q) < 0 && errno != EINTR) {
			thread_fail(t, errno);
			break;
		}
		if (blocked)
			t->loc[PSTAT(dispatch_full)]++;
		wake_workers(pool, touched);
		if (n > 0 && !blocked)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EINTR &&
		    errno != ENOBUFS) {
			thread_fail(t, errno);
			break;
		}
		if (n < 0 && errno != EAGAIN)
			continue;
		queue_snapshot(t, q, false);
		stats_publish(t);
		/* sleep until packets come, workers post decisions (which
		 * also frees ring room), a timer is due, or stop */
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		posted = atomic_load(&t->posted);
		if (posted != seen) {
			seen = posted;
			atomic_store(&t->sleeping, false);
			continue;
		}
		thread_sleep(t, blocked ? -1 : qfd,
			     blocked ? POOL_DEFER_POLL_MS : sleep_timeout(t, q));
		seen = atomic_load(&t->posted);
	}
	/* what was never handed to a worker: the default verdict */
	for (; pos < cnt; pos++) {
		nfqb_verdict(vec[pos], pool->default_verdict);
		t->loc[PSTAT(defaults)]++;
	}
	atomic_store(&t->done_pushing, true);
	wake_workers(pool, NULL);
	/* the workers decide what they hold, then exit */
	for (i = 0; atomic_load(&pool->workers_exited) < pool->nworkers; i++) {
		if (nfqb_flush(q) < 0 && errno != EINTR) {
			thread_fail(t, errno);
			break;
		}
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&pool->workers_exited) >= pool->nworkers)
			break;
		thread_sleep(t, -1, 10);
	}
	atomic_store(&t->sleeping, false);
	drain_deferred(t, q);
	queue_finish(t, q);
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
		if (ring_count(ring_of(pool, r, w)))
			return false;
	return true;
}

static void *worker_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct nfqb_packet *vec[POOL_VEC];
	unsigned int r, i, n, idle = 0;

	thread_setup(t);
	urcu_qsbr_register_thread();
	for (;;) {
		bool any = false, fin;
		uint64_t depth = 0;

		for (r = 0; r < pool->nqueues; r++) {
			struct pool_ring *ring = ring_of(pool, r, t->index);
			struct pool_thread *rd = &pool->threads[pool->nworkers + r];

			n = ring_pop(ring, vec, POOL_VEC);
			if (!n)
				continue;
			any = true;
			t->loc[PSTAT(batches)]++;
			for (i = 0; i < n; i++)
				decide_packet(t, vec[i]);
			atomic_fetch_add(&rd->posted, n);
			thread_wake(rd);
			depth += ring_count(ring);
		}
		if (any) {
			t->loc[PSTAT(ring_depth)] = depth;
			stats_publish(t);
			worker_quiescent(t);
			idle = 0;
			continue;
		}
		/* nothing in any ring: done, or sleep */
		fin = pool_stopping(pool) && readers_done(pool);
		if (fin && rings_empty(pool, t->index))
			break;
		t->loc[PSTAT(ring_depth)] = 0;
		stats_publish(t);
		if (idle++ < 2)
			continue;	/* a little spinning before sleeping */
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (!rings_empty(pool, t->index) ||
		    (pool_stopping(pool) && readers_done(pool))) {
			atomic_store(&t->sleeping, false);
			continue;
		}
		worker_offline(t);
		thread_sleep(t, -1, POOL_IDLE_MS);
		worker_online();
	}
	worker_offline(t);
	urcu_qsbr_unregister_thread();
	atomic_fetch_add(&pool->workers_exited, 1);
	for (r = 0; r < pool->nqueues; r++)
		thread_wake(&pool->threads[pool->nworkers + r]);
	return NULL;
}

/* --- the API ------------------------------------------------------------- */

static int config_queue(struct nfqb_pool *pool, struct nfqb_queue *q)
{
	const struct nfqb_pool_config *c = &pool->cfg;

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
	if (c->buffers && c->buffers != q->nslots &&
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

NFQB_EXPORT bool nfqb_pool_stopping(const struct nfqb_pool *pool)
{
	return pool_stopping(pool);
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
	free(pool->handed);
	free(pool);
}

/* Create, binding the queues (@fds NULL) or adopting the sockets in @fds. */
static struct nfqb_pool *pool_new(const struct nfqb_pool_config *ucfg,
				  size_t size, const int *fds)
{
	const struct nfqb_pool_config *cfg;
	struct nfqb_pool_config c;
	struct nfqb_pool *pool;
	unsigned int i, ring_size;
	int err;

	err = nfqb_struct_in(&c, sizeof(c), NFQB_POOL_CONFIG_SIZE_1_0, ucfg,
			     size);
	if (err) {
		errno = err;
		return NULL;
	}
	cfg = &c;
	if (!cfg->cb || !cfg->queue_count ||
	    (unsigned int)cfg->queue_first + cfg->queue_count > 65536 ||
	    (cfg->mode != NFQB_POOL_QUEUE_PER_WORKER &&
	     cfg->mode != NFQB_POOL_DISPATCH) ||
	    (cfg->ring_size & (cfg->ring_size - 1)) ||
	    cfg->ring_size > (1u << 24) || (cfg->ncpus && !cfg->cpus) ||
	    (cfg->mode == NFQB_POOL_DISPATCH && cfg->workers > 1024)) {
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool) {
		errno = ENOMEM;
		return NULL;
	}
	pool->cfg = *cfg;
	pool->stop_evfd = -1;
	pthread_mutex_init(&pool->policy_lock, NULL);
	atomic_init(&pool->policy, cfg->policy);
	if (!pool->cfg.drain_ms)
		pool->cfg.drain_ms = POOL_DRAIN_DEFAULT_MS;
	pool->default_verdict = cfg->default_drop ? NFQB_DROP : NFQB_ACCEPT;
	pool->nqueues = cfg->queue_count;
	if (cfg->mode == NFQB_POOL_DISPATCH) {
		pool->nworkers = cfg->workers ? cfg->workers : cfg->queue_count;
		pool->nthreads = pool->nworkers + pool->nqueues;
	} else {
		pool->nworkers = pool->nqueues;
		pool->nthreads = pool->nqueues;
	}
	if (cfg->ncpus) {
		pool->cpus = calloc(cfg->ncpus, sizeof(int));
		if (!pool->cpus)
			goto fail_nomem;
		memcpy(pool->cpus, cfg->cpus, cfg->ncpus * sizeof(int));
		pool->cfg.cpus = pool->cpus;
	}
	pool->queues = calloc(pool->nqueues, sizeof(*pool->queues));
	pool->handed = malloc(pool->nqueues * sizeof(*pool->handed));
	pool->qsnap = calloc(pool->nqueues, sizeof(*pool->qsnap));
	pool->threads = calloc(pool->nthreads, sizeof(*pool->threads));
	if (pool->threads)	/* pool_free() closes what is not -1 */
		for (i = 0; i < pool->nthreads; i++)
			pool->threads[i].evfd = -1;
	if (!pool->queues || !pool->qsnap || !pool->threads || !pool->handed)
		goto fail_nomem;
	for (i = 0; i < pool->nqueues; i++)
		pool->handed[i] = -1;
	for (i = 0; i < pool->nqueues; i++)
		pthread_mutex_init(&pool->qsnap[i].lock, NULL);
	for (i = 0; i < pool->nthreads; i++) {
		struct pool_thread *t = &pool->threads[i];

		t->pool = pool;
		t->evfd = -1;
		t->reader = cfg->mode == NFQB_POOL_DISPATCH &&
			    i >= pool->nworkers;
		t->index = t->reader ? i - pool->nworkers : i;
		t->qi = t->index;
		t->cpu = cfg->ncpus ? pool->cpus[i % cfg->ncpus] : -1;
		t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (t->evfd < 0) {
			err = errno;
			goto fail;
		}
	}
	pool->stop_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (pool->stop_evfd < 0) {
		err = errno;
		goto fail;
	}
	if (cfg->mode == NFQB_POOL_DISPATCH) {
		size_t nr = (size_t)pool->nqueues * pool->nworkers;

		ring_size = cfg->ring_size ? cfg->ring_size : POOL_RING_DEFAULT;
		pool->rings = calloc(nr, sizeof(*pool->rings));
		pool->ring_mem = calloc(nr * ring_size, sizeof(void *));
		if (!pool->rings || !pool->ring_mem)
			goto fail_nomem;
		for (i = 0; i < nr; i++) {
			pool->rings[i].mask = ring_size - 1;
			pool->rings[i].v = pool->ring_mem + (size_t)i * ring_size;
		}
	}
	for (i = 0; i < pool->nqueues; i++) {
		struct nfqb_queue *q;

		if (fds)
			q = nfqb_queue_adopt_n(fds[i],
					       (uint16_t)(cfg->queue_first + i),
					       cfg->buffers ? cfg->buffers :
					       NFQB_DEFAULT_BUFFERS);
		else
			q = nfqb_queue_open((uint16_t)(cfg->queue_first + i));
		pool->queues[i] = q;
		if (!q || config_queue(pool, q) < 0) {
			err = errno;
			goto fail;
		}
	}
	return pool;

fail_nomem:
	err = ENOMEM;
fail:
	atomic_store(&pool->policy, NULL);
	if (fds) {
		/* the sockets stay the caller's: not closed, not unbound */
		for (i = 0; i < pool->nqueues; i++) {
			struct nfqb_queue *q = pool->queues[i];

			if (q && nfqb_queue_release(q) < 0) {
				/* what it read and could not verdict is
				 * still queued: the next owner defaults it
				 * (orphans, see nfqb_queue_adopt()) */
				atomic_store(&q->shut, true);
				q->fd = -1;
			}
		}
	}
	pool_free(pool);
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
	if (!pool)
		return;
	atomic_store_explicit(&pool->stop, true, memory_order_release);
	evfd_signal(pool->stop_evfd);
}

/* The thread that owns queue queue_first + @qi. */
static struct pool_thread *queue_owner(struct nfqb_pool *pool, unsigned int qi)
{
	if (pool->cfg.mode == NFQB_POOL_DISPATCH)
		return &pool->threads[pool->nworkers + qi];
	return &pool->threads[qi];
}

static int join_all(struct nfqb_pool *pool)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < pool->nthreads; i++) {
		struct pool_thread *t = &pool->threads[i];

		if (!t->started)
			continue;
		pthread_join(t->tid, NULL);
		t->started = false;
		if (t->err && !err)
			err = t->err;
	}
	return err;
}

NFQB_EXPORT int nfqb_pool_start(struct nfqb_pool *pool)
{
	unsigned int i;
	int ret;

	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	if (pool->started) {
		errno = EALREADY;
		return -1;
	}
	pool->started = true;
	for (i = 0; i < pool->nthreads; i++) {
		struct pool_thread *t = &pool->threads[i];
		void *(*fn)(void *);
		pthread_attr_t attr;

		if (pool->cfg.mode == NFQB_POOL_QUEUE_PER_WORKER)
			fn = qpw_main;
		else
			fn = t->reader ? reader_main : worker_main;
		pthread_attr_init(&attr);
		if (t->cpu >= 0) {
			cpu_set_t set;

			if (t->cpu >= CPU_SETSIZE) {
				ret = EINVAL;
				pthread_attr_destroy(&attr);
				goto fail;
			}
			CPU_ZERO(&set);
			CPU_SET(t->cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		ret = pthread_create(&t->tid, &attr, fn, t);
		pthread_attr_destroy(&attr);
		if (ret)
			goto fail;
		t->started = true;
	}
	return 0;

fail:
	nfqb_pool_stop(pool);
	/* the started threads shut their queues down; the queues of owners
	 * that never ran are shut down below, after the join */
	if (pool->cfg.mode == NFQB_POOL_DISPATCH) {
		/* readers never started: mark them done so workers exit */
		for (i = pool->nworkers; i < pool->nthreads; i++)
			if (!pool->threads[i].started)
				atomic_store(&pool->threads[i].done_pushing, true);
		for (i = 0; i < pool->nworkers; i++)
			if (!pool->threads[i].started)
				atomic_fetch_add(&pool->workers_exited, 1);
	}
	join_all(pool);
	for (i = 0; i < pool->nqueues; i++) {
		struct pool_thread *o = queue_owner(pool, i);

		if (!o->finished) {
			nfqb_queue_shutdown(pool->queues[i]);
			o->finished = true;
		}
	}
	pool->waited = true;
	pool->err = ret;
	errno = ret;
	return -1;
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
		fds[i] = pool->handed[i];
		pool->handed[i] = -1;
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
	if (policy && pool->cfg.policy_free)
		pool->cfg.policy_free(policy);
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
	if (cur_thread && cur_thread->pool == pool) {
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
	if (old && old != policy && pool->cfg.policy_free)
		pool->cfg.policy_free(old);
	return 0;
}

NFQB_EXPORT unsigned int nfqb_pool_threads(const struct nfqb_pool *pool)
{
	return pool ? pool->nthreads : 0;
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
	if (!cur_thread || cur_thread->reader)
		return -1;
	return (int)cur_thread->index;
}
