/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnfq-batch worker pool: a multi-queue, multi-thread packet pipeline
 * driven by one callback and one policy object.
 *
 * Include it explicitly (libnfq-batch.h does not): #include
 * <libnfq-batch/pool.h>.
 *
 * Two modes:
 *
 * - NFQB_POOL_QUEUE_PER_WORKER: worker i owns queue queue_first + i (the
 *   match for iptables `--queue-balance a:b` or nft `queue num a-b
 *   fanout`); it receives, runs the callback and sends the verdicts.
 * - NFQB_POOL_DISPATCH: one reader thread per queue hands each packet to one
 *   of `workers` worker threads chosen by flow (the conntrack id when
 *   NFQB_F_CONNTRACK is in queue_flags and the kernel sent one, else a hash
 *   of addresses and ports that is the same in both directions), over
 *   bounded lock-free rings. When a worker's ring is full its reader stops
 *   reading until there is room (the kernel queue absorbs the burst, up to
 *   its maxlen). Decisions go back to the reader, which coalesces and sends.
 *
 * The policy: an application object the callback receives with every
 * packet. nfqb_pool_set_policy() publishes a new one at any time; workers
 * see it from their next packet; the old one is given to policy_free after
 * every worker has finished the packets it was deciding with it (liburcu
 * QSBR: the workers pay nothing per packet for this).
 *
 * Error convention, as everywhere in libnfq-batch: -1 (or NULL) and errno;
 * a NULL @pool fails with EINVAL (see <libnfq-batch/libnfq-batch.h>: where
 * the return type cannot carry -1, its zero value and errno EINVAL;
 * nfqb_pool_destroy() takes NULL as nothing to do).
 */
#ifndef LIBNFQ_BATCH_POOL_H
#define LIBNFQ_BATCH_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnfq-batch/libnfq-batch.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nfqb_pool;

enum nfqb_pool_mode {
	NFQB_POOL_QUEUE_PER_WORKER = 0,
	NFQB_POOL_DISPATCH = 1,
};

/* Return values of the callback. */
#define NFQB_POOL_VERDICT	0	/* apply the verdict in *v */
#define NFQB_POOL_DEFER		1	/* the application decides it (later) */

/**
 * nfqb_pool_cb - decide one packet
 * @p: the packet; readable until it gets its verdict (the application's,
 *	or the default one the pool gives when it stops); the handle itself
 *	stays valid until nfqb_pool_destroy(): a verdict on it after the
 *	pool stopped fails with ESHUTDOWN
 * @policy: the current policy object (NULL if none was ever set); valid
 *	until the callback returns
 * @cb_data: the config's cb_data
 * @v: the verdict to apply, preset to the pool's default verdict with no
 *	options; fill it as for nfqb_verdict_ex(): any verdict (NFQB_ACCEPT,
 *	NFQB_DROP, NFQB_REPEAT, NFQB_QUEUE with queue_num and optionally
 *	NFQB_V_BYPASS), with mark, priority, payload (see struct nfqb_verdict).
 *	It is the library's struct: fields added after the caller's header
 *	keep their presets (no flag of theirs is set)
 *
 * Return NFQB_POOL_VERDICT and the pool applies *v with nfqb_verdict_ex()
 * (a payload in *v is copied before the pool goes on). Return
 * NFQB_POOL_DEFER if the callback decided @p itself with nfqb_verdict*(),
 * or will decide it later from any thread (it must then not keep @policy,
 * and should decide within drain_ms of nfqb_pool_stop()). Return a negative
 * value on error: the pool gives @p the default verdict and counts an
 * error; so it does when nfqb_verdict_ex() refuses *v.
 *
 * Runs on a worker thread; nfqb_pool_worker_index() tells which.
 */
typedef int (*nfqb_pool_cb)(struct nfqb_packet *p, void *policy,
			    void *cb_data, struct nfqb_verdict *v);

/*
 * The configuration of a pool, passed to nfqb_pool_create() with its size.
 * Zero is the default of every field but cb; new fields are only ever
 * added at the end (see "Structs that can grow" in libnfq-batch.h).
 */
struct nfqb_pool_config {
	uint16_t queue_first;		/* queues queue_first .. */
	uint16_t queue_count;		/* ... + queue_count - 1 (>= 1) */
	enum nfqb_pool_mode mode;
	/* NFQB_POOL_DISPATCH: worker threads (0: one per queue) */
	unsigned int workers;
	/* optional CPU pinning: pool thread k runs on cpus[k % ncpus]; threads
	 * are numbered as in nfqb_pool_stats() */
	const int *cpus;
	unsigned int ncpus;
	uint32_t queue_flags;		/* NFQB_F_* set on every queue, on top
					 * of NFQB_F_GSO (nfqb_queue_open()) */
	uint32_t copy_range;		/* bytes copied per packet (0: 65535) */
	uint32_t maxlen;		/* kernel queue length (0: kernel's) */
	unsigned int buffers;		/* per queue, see nfqb_queue_set_buffers
					 * (0: the library's default) */
	size_t rcvbuf;			/* socket receive buffer bytes, see
					 * nfqb_queue_set_rcvbuf (0: leave) */
	/* the verdict of packets nobody decides (at stop, on callback
	 * errors): NFQB_DROP when set, else NFQB_ACCEPT */
	bool default_drop;
	/* NFQB_POOL_DISPATCH: slots of each reader-to-worker ring, a power of
	 * two (0: 1024) */
	unsigned int ring_size;
	/* at stop, how long to wait for deferred packets before they get the
	 * default verdict, in ms (0: 1000) */
	unsigned int drain_ms;
	nfqb_pool_cb cb;		/* required */
	void *cb_data;
	void *policy;			/* the initial policy (may be NULL) */
	/* frees a policy replaced by nfqb_pool_set_policy() or left at
	 * nfqb_pool_destroy(); may be NULL */
	void (*policy_free)(void *policy);
	/* the coalescer of every queue (see nfqb_queue_set_latency(),
	 * nfqb_queue_set_batch_limit(), nfqb_queue_set_verdict_timeout());
	 * 0 keeps the library's default (verdict timeout: never) */
	uint32_t latency_us;
	unsigned int batch_limit;
	uint32_t verdict_timeout_ms;
	/* NFQB_F_* turned off on every queue, for instance NFQB_F_GSO to have
	 * the kernel segment GSO packets before queueing (0: none; a flag
	 * also in queue_flags stays on) */
	uint32_t queue_flags_off;
	/* since 1.1.0: what every queue does with packets longer than the
	 * copy range (nfqb_queue_set_large(); 0: NFQB_LARGE_PASS) */
	enum nfqb_large large;
};

/*
 * Counters of one pool thread, or of the whole pool. New fields are only
 * ever added at the end; read them with nfqb_pool_stats().
 */
struct nfqb_pool_stats {
	uint64_t received;	/* packets read from the kernel */
	uint64_t packets;	/* packets given to the callback */
	uint64_t accepted;	/* callback verdicts: accept */
	uint64_t dropped;	/* ... drop */
	uint64_t other;		/* ... repeat or queue-to-N */
	uint64_t marked;	/* ... carrying a mark */
	uint64_t deferred;	/* callback returned NFQB_POOL_DEFER */
	uint64_t errors;	/* callback or verdict failed: default verdict */
	uint64_t batches;	/* groups of packets handled at once */
	uint64_t queue_depth;	/* packets the library holds (received, no
				 * verdict sent yet), as last seen */
	uint64_t ring_depth;	/* dispatch: packets waiting in rings */
	uint64_t dispatch_full;	/* dispatch: a reader found a ring full and
				 * waited (per reader) */
	uint64_t defaults;	/* packets given the default verdict by the
				 * library (timeouts, at stop) as last seen */
	uint64_t policy_swaps;	/* nfqb_pool_set_policy() calls (total) */
};

/**
 * nfqb_pool_create - open and configure the queues of a pool
 * @cfg: the configuration (copied; cpus too)
 * @size: sizeof(*cfg) as the caller knows it
 *
 * Binds every queue (in the caller's network namespace) and sets copy
 * range, flags, maxlen and buffers; starts no thread. Returns the pool, or
 * NULL with errno: EINVAL (NULL @cfg, no callback, queue_count 0 or the
 * queues past 65535, ring_size not a power of two or above 2^24, mode
 * unknown, more than 1024 workers, ncpus without cpus, @size below the end
 * of the struct's first version: verdict_timeout_ms), E2BIG (@size larger than the library's struct and a
 * byte past it not zero), ENOMEM, or the error of
 * nfqb_queue_open()/nfqb_queue_set_*() (EBUSY, EPERM, EOPNOTSUPP, ...).
 * On failure the initial policy is not freed.
 */
struct nfqb_pool *nfqb_pool_create(const struct nfqb_pool_config *cfg,
				   size_t size);

/**
 * nfqb_pool_start - start the pool's threads
 *
 * Returns 0, or -1 with errno: EALREADY if started before, EINVAL for a NULL
 * @pool or if a CPU in the pinning list does not exist, or pthread_create's error. On error
 * the pool has stopped when this returns: the threads already started are
 * stopped and joined, every queue is shut down (default verdicts, unbound),
 * and nfqb_pool_wait() returns the same error.
 */
int nfqb_pool_start(struct nfqb_pool *pool);

/**
 * nfqb_pool_stop - ask the pool to stop
 *
 * Returns at once; nfqb_pool_wait() waits for the end. Async-signal-safe
 * (an atomic flag and an eventfd write): callable from a signal handler or
 * any thread, any number of times. Reading from the kernel ends; packets
 * already given to the callback complete (in queue-per-worker mode, so do
 * those the library had read and not handed out yet); deferred packets get drain_ms to
 * be decided; then every packet still undecided gets the default verdict,
 * the sockets are drained and the queues unbound (their memory stays until
 * nfqb_pool_destroy(), see nfqb_pool_wait()). A NULL @pool: nothing is
 * done, errno is set to EINVAL.
 */
void nfqb_pool_stop(struct nfqb_pool *pool);

/**
 * nfqb_pool_wait - wait until the pool has stopped and its queues are
 * unbound (call nfqb_pool_stop() first, or this waits for a thread error)
 *
 * Deferred packets not decided in time got the default verdict. From then
 * on nfqb_verdict*() on any packet of the pool fails with ESHUTDOWN and
 * changes nothing: packets and queues stay allocated until
 * nfqb_pool_destroy(), so a late verdict from another thread is safe. A
 * pool runs once. Returns 0, or -1 with errno: EINVAL if @pool is NULL or
 * was never started, the error that made nfqb_pool_start() fail, or the first error a
 * pool thread met (which made the pool stop by itself). Later calls return
 * the same at once.
 */
int nfqb_pool_wait(struct nfqb_pool *pool);

/**
 * nfqb_pool_handover - stop the pool and give up its queues without
 * unbinding them, for the next process (upgrade, restart)
 * @fds: filled with the netlink socket of queue queue_first + i in
 *	fds[i] (-1 for a queue that could not be handed over)
 * @nfds: room in @fds, at least queue_count
 *
 * As nfqb_pool_stop() then nfqb_pool_wait(): reading ends, packets given
 * to the callback complete (as at a stop, so do those the library had
 * read and not handed out yet, in queue-per-worker mode), deferred
 * packets get drain_ms
 * to be decided, the rest gets the default verdict (in dispatch mode also
 * the packets a reader had not handed to a worker), every verdict is
 * sent. Then, unlike
 * a stop, nothing more is read from the sockets (what they hold stays for
 * the next owner) and the queues stay bound, their length and flags
 * unchanged: in between the kernel queues packets (up to maxlen), drops
 * none and lets none bypass. Pass the sockets to the next process
 * (clear close-on-exec before exec(), or use SCM_RIGHTS or systemd's fd
 * store), which takes them with nfqb_pool_adopt() or nfqb_queue_adopt().
 * Late verdicts fail with ESHUTDOWN, as after a stop; the pool is then
 * only good for nfqb_pool_destroy(), which leaves the sockets open.
 *
 * A queue that could not be handed over (its verdicts could not be sent,
 * or a gap of unreadable messages is open: see nfqb_queue_detach()) is
 * unbound as at a stop and gets -1 in @fds; the others are handed over
 * all the same.
 *
 * Returns 0, or -1 with errno: EINVAL (NULL @pool or @fds, @nfds too
 * small, pool not started); EALREADY (the pool was stopping or stopped
 * already: nothing handed over); or the first error of a pool thread, as
 * nfqb_pool_wait() reports it.
 */
int nfqb_pool_handover(struct nfqb_pool *pool, int *fds, unsigned int nfds);

/**
 * nfqb_pool_adopt - nfqb_pool_create() on queues already bound
 * @cfg: as for nfqb_pool_create()
 * @size: sizeof(*cfg) as the caller knows it, as for nfqb_pool_create()
 * @fds: queue_count netlink sockets, fds[i] bound to queue
 *	queue_first + i (from nfqb_pool_handover() or nfqb_queue_detach()
 *	in the previous process)
 *
 * Each socket is checked and taken as by nfqb_queue_adopt(), then
 * configured from @cfg as nfqb_pool_create() does; the pool reads on where
 * the previous owner stopped once started. Returns the pool, which owns
 * the sockets, or NULL with errno: those of nfqb_pool_create() and of
 * nfqb_queue_adopt() (EINVAL also for NULL @fds). On failure every socket
 * stays open and bound (the caller's again); packets read from it
 * meanwhile are left queued, and the next owner gives them the default
 * verdict (see nfqb_queue_adopt()).
 */
struct nfqb_pool *nfqb_pool_adopt(const struct nfqb_pool_config *cfg,
				  size_t size, const int *fds);

/**
 * nfqb_pool_destroy - stop and wait if needed, free the queues and the
 * pool, and give the current policy to policy_free. @pool may be NULL.
 *
 * The end of every packet of the pool: no thread may use one afterwards,
 * not even for a verdict.
 */
void nfqb_pool_destroy(struct nfqb_pool *pool);

/**
 * nfqb_pool_set_policy - publish a new policy object
 *
 * Workers use @policy from their next packet. Waits for a grace period (no
 * worker still deciding with the old policy), then calls policy_free on
 * the old one (unless it is @policy itself). Any thread but a pool thread;
 * not async-signal-safe. Returns 0, or -1 with errno: EDEADLK when called
 * from a pool thread (the callback), EINVAL for a NULL @pool.
 */
int nfqb_pool_set_policy(struct nfqb_pool *pool, void *policy);

/**
 * nfqb_pool_stopping - true once the pool was asked to stop: by
 * nfqb_pool_stop(), or by itself after a fatal error of a thread
 * (nfqb_pool_error(); nfqb_pool_wait() then returns it). Never blocks; any
 * thread. Returns false with errno EINVAL for a NULL @pool.
 */
bool nfqb_pool_stopping(const struct nfqb_pool *pool);

/**
 * nfqb_pool_fd - a file descriptor that becomes readable when the pool stops
 *
 * For the application's poll()/epoll loop: POLLIN from the moment the pool
 * stops reading, asked to (nfqb_pool_stop(), nfqb_pool_handover()) or by
 * itself after a fatal error (nfqb_pool_error() then tells which), and for
 * good. The pool owns it: poll it, never read or close it. Valid from
 * nfqb_pool_create() to nfqb_pool_destroy(). Any thread. Returns the fd, or
 * -1 with errno EINVAL for a NULL @pool.
 */
int nfqb_pool_fd(const struct nfqb_pool *pool);

/**
 * nfqb_pool_error - why the pool stopped by itself
 *
 * Conditions that pass are not errors: a signal, a send that failed for now
 * (retried), a socket overflow (ENOBUFS, counted), every buffer held by the
 * application (ENOSPC: it ends with the application's decisions), an
 * allocation that failed: the pool goes on through them. Any other error
 * of a pool thread's queue is fatal: the pool stops (nfqb_pool_stopping()
 * is true, nfqb_pool_fd() readable) and gives every outstanding packet its
 * decision or the default verdict. Returns 0 while that has not happened,
 * else the errno of the first fatal error (or of a failed
 * nfqb_pool_start()): what nfqb_pool_wait() will return. Never blocks;
 * async-signal-safe; any thread. EINVAL for a NULL @pool.
 */
int nfqb_pool_error(const struct nfqb_pool *pool);

/**
 * nfqb_pool_threads - number of pool threads: queue_count in
 * NFQB_POOL_QUEUE_PER_WORKER mode, workers + queue_count in dispatch mode.
 * Returns 0 with errno EINVAL for a NULL @pool.
 */
unsigned int nfqb_pool_threads(const struct nfqb_pool *pool);

/**
 * nfqb_pool_stats - copy counters into @st
 * @thread: -1 for the pool's total; else a thread: in queue-per-worker
 *	mode worker i (owner of queue queue_first + i); in dispatch mode
 *	0 .. workers-1 are the workers and workers + r the reader of queue
 *	queue_first + r
 * @size: sizeof(*st) as the caller knows it
 *
 * Any thread, any time (values may be a few packets apart). Returns 0 or
 * -1 with EINVAL (NULL @pool or @st, bad @thread, or @size not a multiple
 * of 8).
 */
int nfqb_pool_stats(const struct nfqb_pool *pool, int thread,
		    struct nfqb_pool_stats *st, size_t size);

/**
 * nfqb_pool_queue_stats - the library counters (struct nfqb_stats) of
 * queue queue_first + @index, as its owner thread last copied them (at
 * most about 100 ms old while running; final after nfqb_pool_wait(),
 * the default verdicts of the shutdown included).
 * Returns 0 or -1 with EINVAL (NULL @pool or @st, @index past the last
 * queue, @size not a multiple of 8).
 */
int nfqb_pool_queue_stats(const struct nfqb_pool *pool, unsigned int index,
			  struct nfqb_stats *st, size_t size);

/**
 * nfqb_pool_worker_index - on a pool worker thread (in the callback), the
 * worker's index (0 .. workers-1, or the queue index in queue-per-worker
 * mode); -1 on any other thread.
 */
int nfqb_pool_worker_index(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFQ_BATCH_POOL_H */
