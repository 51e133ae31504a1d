/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker pool: queue-per-worker and flow-dispatch pipelines over the
 * public queue API, policy hot swap with liburcu QSBR, stop and drain.
 *
 * Sleeping and waking: every pool thread has an eventfd and a `sleeping`
 * flag. A thread about to sleep sets the flag, looks once more for work,
 * then polls (pool_thread_doze(), the one place that does); whoever makes
 * work for it (ring push, decisions posted) makes that visible first and
 * then writes the eventfd if the flag was set (Dekker, with seq_cst fences
 * on both sides).
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
 *
 * The files of the pool, each about one thing:
 *   pool.c           its life and the API: create, start, stop, wait,
 *                    destroy, the policy, the counters
 *   pool-thread.c    what every pool thread does: sleep and wake, publish
 *                    its counters, wait for deferred packets, shut its
 *                    queue down
 *   pool-dispatch.c  dispatch mode's readers, the flow hash and the
 *                    reader-to-worker rings
 *   pool-worker.c    the workers: deciding a packet through the callback,
 *                    RCU quiescent states, the queue-per-worker loop and
 *                    the dispatch workers' loop
 * The clock is the core's (nfqb_now_ns(), sys.h's), and so is the
 * linger (nfqb_loop_linger()). Nothing here is ABI.
 */
#ifndef NFQB_POOL_INT_H
#define NFQB_POOL_INT_H

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


#include "loop.h"
#include "queue.h"
#include "sys.h"
#include <libnfq-batch/pool.h>

#define POOL_VEC		64
#define POOL_RING_DEFAULT	1024
#define POOL_DRAIN_DEFAULT_MS	1000
#define POOL_SNAP_NS		(100ull * 1000000)
#define POOL_IDLE_MS		1000	/* longest sleep without a reason */
#define POOL_BLOCKED_POLL_MS	1	/* a reader waiting for ring room */

#define NSTAT (sizeof(struct nfqb_pool_stats) / sizeof(uint64_t))
#define PSTAT(field) (offsetof(struct nfqb_pool_stats, field) / sizeof(uint64_t))

/*
 * Who writes what. struct nfqb_pool: pool.c (create, the API), but for
 * .stop (pool-thread.c: pool_signal_stop()), .fatal (pool-thread.c:
 * pool_fail()), .workers_exited (pool-worker.c: pool_worker_gone()) and
 * the snapshots .qsnap[i].st (pool-thread.c, under their lock).
 * A ring: pool.c sets it up; then pool-dispatch.c's functions move it
 * (.tail: ring_push() on its reader, .head: pool_ring_pop() on its
 * worker). A thread: pool.c sets up who it is (the fields up to .evfd)
 * and starts and joins it; the rest is written on the thread itself,
 * each field by the file below (or through its functions).
 */

/* One single-producer single-consumer ring: reader r -> worker w. */
struct pool_ring {
	_Atomic uint32_t head __attribute__((aligned(64)));	/* consumer */
	_Atomic uint32_t tail __attribute__((aligned(64)));	/* producer */
	uint32_t mask;
	struct nfqb_packet **v;
};

struct pool_thread {
	/* pool.c */
	struct nfqb_pool *pool;
	pthread_t tid;
	bool started;
	bool reader;		/* dispatch reader */
	unsigned int index;	/* worker index, or queue index of a reader */
	unsigned int qi;	/* queue index (owners) */
	int cpu;		/* -1: not pinned */
	int evfd;
	/* pool-thread.c */
	bool ended;		/* owner: its queue shut down or handed over */
	int handed;		/* ... handed over: the socket, else -1 */
	_Atomic bool sleeping;
	_Atomic uint64_t qs_seq;	/* worker: quiescent-state handshake */
	uint64_t qs_local;
	uint64_t snap_ns;
	_Atomic uint64_t st[NSTAT];	/* published counters */
	uint64_t loc[NSTAT];	/* running totals: pool_count(), only on the
				 * thread itself */
	/* pool-worker.c */
	_Atomic uint64_t posted;	/* reader: decisions by workers */
	/* pool-dispatch.c */
	uint64_t posted_seen;		/* reader: ... when it last looked */
	_Atomic bool done_pushing;	/* reader: no more ring pushes */
};

struct pool_qsnap {
	pthread_mutex_t lock;
	struct nfqb_stats st;
};

struct nfqb_pool {
	struct nfqb_pool_config config;
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
	int stop_evfd;		/* readable once stopping: nfqb_pool_fd() */
	_Atomic bool stop;
	_Atomic int fatal;	/* the first fatal error: nfqb_pool_error() */
	_Atomic unsigned int workers_exited;
	_Atomic bool handover;	/* nfqb_pool_handover(): keep the bindings */
	bool started;
	bool waited;
	int err;		/* what nfqb_pool_wait() reports */
	void *_Atomic policy;
	pthread_mutex_t policy_lock;
	_Atomic uint64_t swaps;
};

/* The pool thread running now (NULL on other threads). */
extern __thread struct pool_thread *pool_cur_thread;

/* How a thread sleeps (pool_thread_doze()): on @q's wake-up eventfd (NULL:
 * none) and, if @readable, its socket, for up to @tmo ms, unless @busy. */
struct pool_doze {
	struct nfqb_queue *q;
	bool readable;
	int tmo;
	bool (*busy)(struct pool_thread *t);
	bool rcu;
};

/* --- pool-thread.c -------------------------------------------------------- */
/* Count @n in the running total @i of the calling thread @t (published
 * by pool_stats_publish()); set it. */
static inline void pool_count(struct pool_thread *t, size_t i, uint64_t n)
{
	t->loc[i] += n;
}

static inline void pool_count_set(struct pool_thread *t, size_t i,
				  uint64_t v)
{
	t->loc[i] = v;
}

bool pool_stopping(const struct nfqb_pool *pool);
void pool_signal_stop(struct nfqb_pool *pool);
/* A fatal error: the first is the pool's; stop the pool. */
void pool_fail(struct nfqb_pool *pool, int err);
void pool_evfd_signal(int fd);
void pool_evfd_clear(int fd);
void pool_thread_wake(struct pool_thread *t);
void pool_stats_publish(struct pool_thread *t);
void pool_queue_snapshot(struct pool_thread *t, struct nfqb_queue *q,
			 bool force);
unsigned int pool_queue_outstanding(struct nfqb_queue *q);
int pool_sleep_timeout(struct pool_thread *t, struct nfqb_queue *q);
bool pool_transient(int err);
bool pool_thread_doze(struct pool_thread *t, const struct pool_doze *z);
void pool_rcu_quiescent(struct pool_thread *t);
void pool_rcu_offline(struct pool_thread *t);
void pool_rcu_online(void);
void pool_thread_fail(struct pool_thread *t, int err);
void pool_drain_deferred(struct pool_thread *t, struct nfqb_queue *q);
void pool_queue_end(struct pool_thread *t, struct nfqb_queue *q);
void pool_queue_end_unstarted(struct pool_thread *t, struct nfqb_queue *q);
void pool_thread_setup(struct pool_thread *t);

/* --- pool-dispatch.c ------------------------------------------------------ */
void *pool_reader_main(void *arg);
unsigned int pool_ring_pop(struct pool_ring *r, struct nfqb_packet **out,
			   unsigned int max);
uint32_t pool_ring_count(const struct pool_ring *r);
struct pool_ring *pool_ring_of(struct nfqb_pool *pool, unsigned int reader,
			       unsigned int worker);
/* Reader @t pushes no more (it stopped, or never started): the workers
 * may end. */
void pool_reader_done(struct pool_thread *t);

/* --- pool-worker.c --------------------------------------------------------- */
void *pool_qpw_main(void *arg);
void *pool_worker_main(void *arg);
/* Worker @t is gone (it ended, or never started): the readers may end. */
void pool_worker_gone(struct pool_thread *t);

#endif /* NFQB_POOL_INT_H */
