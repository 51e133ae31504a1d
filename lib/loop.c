// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The receive loop: nfqb_recv() decides when to flush (batch limit,
 * latency bound, idle socket, retry of a failed send), when to linger for
 * more packets (pace.c says how long), and how to sleep: on the socket and
 * on the eventfd other threads write when they post a decision or
 * interrupt, never longer than the next timer, never spinning.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "queue.h"
#include "seam.h"

/* Every writer of the eventfd goes through here: the flag says it was
 * written and not read yet, so that the owner reads it (and
 * nfqb_queue_fd() stops being readable) whatever woke it. Async-signal-
 * safe (nfqb_queue_interrupt()). */
void nfqb_loop_wake(struct nfqb_queue *q)
{
	uint64_t one = 1;

	if (!atomic_exchange(&q->wake.pending, true) &&
	    write(q->sk.evfd, &one, sizeof(one)) < 0)
		return;		/* full: it is readable anyway */
}

/* Read the eventfd first, then clear the flag: a decision posted after
 * the read sets the flag again and writes again; one posted between the
 * two is seen by the caller's next look at the posted decisions. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q)
{
	uint64_t v;

	if (read(q->sk.evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	atomic_store(&q->wake.pending, false);
}

bool nfqb_loop_is_owner(const struct nfqb_queue *q)
{
	return atomic_load_explicit(&q->wake.owner, memory_order_relaxed) ==
	       (unsigned long)pthread_self();
}

static uint64_t min_due(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/* When the owner must run next (ns, 0: nothing due). */
static uint64_t next_due(const struct nfqb_queue *q, uint64_t now)
{
	uint64_t due = q->conf.timeout_ms ? q->book.expire_due : 0;
	uint64_t since = q->tx.unsent_since ? q->tx.unsent_since : now;

	if (q->tx.failing)
		return min_due(due, q->tx.retry_at);
	due = min_due(due, q->tx.held_due);
	if (nfqb_tx_unsent(q))
		due = min_due(due, since + q->conf.latency_us * 1000ull);
	return due;
}

int nfqb_loop_next_timeout(const struct nfqb_queue *q, uint64_t now)
{
	uint64_t due = next_due(q, now);

	if (!due)
		return -1;
	if (due <= now)
		return 0;
	return (int)((due - now + 999999) / 1000000);
}

/* Why to flush now, if at all; @idle: the socket has nothing to read. */
static bool flush_due(struct nfqb_queue *q, uint64_t now, bool idle,
		      enum nfqb_flush_reason *why)
{
	uint64_t since;
	uint32_t n;

	*why = NFQB_FLUSH_LATENCY;
	if (q->tx.failing)
		return now >= q->tx.retry_at;
	if (q->tx.held_due && now >= q->tx.held_due)
		return true;
	n = nfqb_tx_unsent(q);
	if (!n)
		return false;
	since = nfqb_tx_unsent_since(q, now);
	*why = NFQB_FLUSH_LIMIT;
	if (n >= q->conf.batch_limit)
		return true;
	*why = NFQB_FLUSH_LATENCY;
	if (now - since >= q->conf.latency_us * 1000ull)
		return true;
	/* the stream paused, or a flow waits on us: no holding for a batch */
	*why = NFQB_FLUSH_IDLE;
	return idle || (!q->rx.last_full && !q->pace.streaming) ||
	       nfqb_pace_waiting(&q->pace, now);
}

/* Flush if something is due. */
static int flush_if_due(struct nfqb_queue *q, uint64_t now, bool idle)
{
	enum nfqb_flush_reason why;

	if (q->conf.timeout_ms && q->book.expire_due &&
	    now >= q->book.expire_due)
		nfqb_book_expire(q, now);	/* defaults: flushed below */
	if (flush_due(q, now, idle, &why) &&
	    nfqb_tx_flush(q, why, false, now) < 0 && errno != EAGAIN)
		return -1;
	return 0;
}

static int read_more(struct nfqb_queue *q, unsigned int max)
{
	unsigned int first = q->rx.nready;
	int r = nfqb_rx_read(q, max, false);

	if (r > 0)
		nfqb_pace_note_read(q, (unsigned int)r,
				    first <= q->rx.nready ? first : q->rx.nready,
				    nfqb_now_ns());
	if (r < 0 && (errno == EAGAIN || errno == ENOSPC))
		return 0;
	return r;
}

/* Linger: while packets stream in, pause briefly and take what came
 * meanwhile (see nfqb_queue_set_linger()). Never past the latency bound
 * of a held decision; adaptive, it first sends every decision. The pause
 * ends early on the eventfd (an interrupt, a decision posted by another
 * thread). 1: got some, 0: none (the stream ended), -1: error. */
int nfqb_loop_linger(struct nfqb_queue *q, unsigned int max)
{
	uint64_t now = nfqb_now_ns();
	uint64_t ns = nfqb_pace_linger_ns(q, now);
	uint64_t due;
	int r;

	if (!ns)
		return 0;
	if (!q->conf.linger_fixed && nfqb_tx_unsent(q) &&
	    nfqb_tx_flush(q, NFQB_FLUSH_IDLE, false, now) < 0 &&
	    errno != EAGAIN)
		return -1;
	due = next_due(q, now);
	if (due && due <= now)
		return 0;
	if (due && due - now < ns)
		ns = due - now;
	nfqb_stat_inc(q, linger_pauses);
	if (nfqb_sys_pause(q->sk.tfd, q->sk.evfd, ns) < 0)
		return -1;	/* EINTR: a signal */
	r = read_more(q, max);
	due = nfqb_now_ns();
	nfqb_pace_linger_done(q, due > now ? due - now : 0, r, due);
	return r < 0 ? -1 : r > 0;
}

/* Every buffer is with the application: wait for a decision or a timer. */
static int wait_exhausted(struct nfqb_queue *q, int timeout)
{
	struct pollfd pfd = { .fd = q->sk.evfd, .events = POLLIN };
	int r;

	if (timeout < 0 || timeout > NFQB_EXHAUSTED_WAIT_MS)
		timeout = NFQB_EXHAUSTED_WAIT_MS;
	r = nfqb_sys_poll(&pfd, 1, timeout);
	if (r < 0)
		return -1;
	if (r > 0) {
		nfqb_loop_clear_wakeup(q);
		return 0;
	}
	if (!q->bufs.nfree_slots &&
	    nfqb_loop_next_timeout(q, nfqb_now_ns()) != 0) {
		nfqb_stat_inc(q, buffers_exhausted);
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

/* Sleep until the socket is readable, a decision or an interrupt comes,
 * or @timeout ms pass. */
static int wait_events(struct nfqb_queue *q, unsigned int max, int timeout)
{
	struct epoll_event ev[2];
	int k, r;

	r = nfqb_sys_epoll_wait(q->sk.epfd, ev, 2, timeout);
	if (r < 0)
		return -1;
	for (k = 0; k < r; k++) {
		if (ev[k].data.fd == q->sk.evfd)
			nfqb_loop_clear_wakeup(q);
		else if (read_more(q, max) < 0)
			return -1;
	}
	return 0;
}

/* An interrupt, or a verdict the kernel refused (EPERM: the process, or
 * the socket's opener, has no CAP_NET_ADMIN): reported once. */
static bool take_event(struct nfqb_queue *q)
{
	int err;

	/* the wake-up first: an interrupt set after it writes the eventfd
	 * again, one set before it is seen just below */
	if (atomic_load_explicit(&q->wake.pending, memory_order_relaxed))
		nfqb_loop_clear_wakeup(q);
	if (atomic_load_explicit(&q->wake.interrupt, memory_order_relaxed) &&
	    atomic_exchange(&q->wake.interrupt, false)) {
		nfqb_stat_inc(q, interrupts);
		errno = EINTR;
		return true;
	}
	err = nfqb_rx_take_refused(&q->rx);
	if (err)
		errno = err;
	return err != 0;
}

/* Nothing handed out yet and nothing to read: sleep. 0 to go on, -1. */
static int idle_wait(struct nfqb_queue *q, unsigned int max)
{
	int timeout;

	if (flush_if_due(q, nfqb_now_ns(), true) < 0)
		return -1;
	if (q->rx.nready)
		return 0;
	if (q->conf.nonblock) {
		if (!q->bufs.nfree_slots)
			nfqb_stat_inc(q, buffers_exhausted);
		errno = q->bufs.nfree_slots ? EAGAIN : ENOSPC;
		return -1;
	}
	timeout = nfqb_loop_next_timeout(q, nfqb_now_ns());
	if (nfqb_tx_unsent(q) && !q->tx.failing)
		timeout = 0;	/* flush_if_due() will send them */
	if (!q->bufs.nfree_slots)
		return wait_exhausted(q, timeout);
	return wait_events(q, max, timeout);
}

/* Get packets to hand out: read on while the socket has more, linger
 * while they stream in, else sleep. 0 to look again, -1. */
static int fetch(struct nfqb_queue *q, unsigned int max)
{
	int r;

	/* the last receive filled its vector: more may be waiting */
	if (q->rx.last_full || q->conf.nonblock) {
		r = read_more(q, max);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	if (q->pace.streaming && !q->conf.nonblock && q->bufs.nfree_slots) {
		r = nfqb_loop_linger(q, max);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	return idle_wait(q, max);
}

NFQB_EXPORT int nfqb_recv(struct nfqb_queue *q, struct nfqb_packet **vec,
			  unsigned int max)
{
	unsigned long self = (unsigned long)pthread_self();

	if (!q || !vec || !max) {
		errno = EINVAL;
		return -1;
	}
	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (atomic_load_explicit(&q->wake.owner, memory_order_relaxed) != self)
		atomic_store_explicit(&q->wake.owner, self, memory_order_relaxed);
	for (;;) {
		if (take_event(q))
			return -1;
		if (flush_if_due(q, nfqb_now_ns(), false) < 0)
			return -1;
		if (q->rx.nready)
			return (int)nfqb_ready_pop(&q->rx, vec, max);
		if (fetch(q, max) < 0)
			return -1;
	}
}

NFQB_EXPORT int nfqb_dispatch(struct nfqb_queue *q, nfqb_packet_cb cb,
			      void *data)
{
	struct nfqb_packet *vec[NFQB_RECV_VLEN];
	int n, i;

	if (!cb) {
		errno = EINVAL;
		return -1;
	}
	n = nfqb_recv(q, vec, NFQB_RECV_VLEN);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (cb(vec[i], data) < 0) {
			/* the rest stay with the library: the next
			 * nfqb_recv() hands them out again */
			nfqb_ready_unpop(&q->rx, (unsigned int)(n - i - 1));
			errno = ECANCELED;
			return -1;
		}
	}
	return n;
}

NFQB_EXPORT int nfqb_flush(struct nfqb_queue *q)
{
	uint64_t now = nfqb_now_ns();
	int err;

	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (q->conf.timeout_ms)
		nfqb_book_expire(q, now);
	err = nfqb_rx_take_refused(&q->rx);
	if (err) {
		errno = err;
		return -1;
	}
	return nfqb_tx_flush(q, NFQB_FLUSH_EXPLICIT, false, now);
}

NFQB_EXPORT int nfqb_queue_interrupt(struct nfqb_queue *q)
{
	atomic_store(&q->wake.interrupt, true);
	nfqb_loop_wake(q);
	return 0;
}

NFQB_EXPORT int nfqb_queue_next_timeout(const struct nfqb_queue *q)
{
	return nfqb_loop_next_timeout(q, nfqb_now_ns());
}

int nfqb_loop_run_timers(struct nfqb_queue *q, uint64_t now)
{
	if (q->conf.timeout_ms)
		nfqb_book_expire(q, now);
	if (nfqb_tx_flush(q, NFQB_FLUSH_LATENCY, false, now) < 0)
		return -1;
	return 0;
}
