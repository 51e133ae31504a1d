// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The receive loop: nfqb_recv() decides when to flush (batch limit,
 * latency bound, idle socket, retry of a failed send), when to linger for
 * more packets, and how to sleep: on the socket and on the eventfd other
 * threads write when they post a decision or interrupt, never longer than
 * the next timer, never spinning.
 */
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "internal.h"

static bool unsent(const struct nfqb_queue *q)
{
	return atomic_load_explicit(&q->posted, memory_order_acquire) !=
	       q->posted_seen;
}

/* Every writer of the eventfd goes through here: the flag says it was
 * written and not read yet, so that the owner reads it (and
 * nfqb_queue_fd() stops being readable) whatever woke it. Async-signal-
 * safe (nfqb_queue_interrupt()). */
void nfqb_loop_wake(struct nfqb_queue *q)
{
	uint64_t one = 1;

	if (!atomic_exchange(&q->wake_pending, true) &&
	    write(q->evfd, &one, sizeof(one)) < 0)
		return;		/* full: it is readable anyway */
}

/* Read the eventfd first, then clear the flag: a decision posted after
 * the read sets the flag again and writes again; one posted between the
 * two is seen by the caller's next look at q->posted. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q)
{
	uint64_t v;

	if (read(q->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	atomic_store(&q->wake_pending, false);
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
	uint64_t lat = q->latency_us * 1000ull;
	uint64_t due = q->timeout_ms ? q->expire_due : 0;

	if (q->tx.failing)
		return min_due(due, q->tx.retry_at);
	due = min_due(due, q->held_due);
	if (unsent(q))
		due = min_due(due, (q->unsent_since ? q->unsent_since : now) +
				   lat);
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

/* Flush if something is due; @idle: the socket has nothing to read. */
static int flush_if_due(struct nfqb_queue *q, uint64_t now, bool idle)
{
	enum nfqb_flush_reason why;
	bool go = false;

	if (q->timeout_ms && q->expire_due && now >= q->expire_due)
		nfqb_book_expire(q, now);	/* defaults: flushed below */
	if (q->tx.failing) {
		if (now < q->tx.retry_at)
			return 0;
		why = NFQB_FLUSH_LATENCY;
		go = true;
	} else if (q->held_due && now >= q->held_due) {
		why = NFQB_FLUSH_LATENCY;
		go = true;
	}
	if (!go && unsent(q)) {
		uint32_t n = atomic_load_explicit(&q->posted,
						  memory_order_acquire) -
			     q->posted_seen;

		if (!q->unsent_since)
			q->unsent_since = now;
		if (n >= q->batch_limit) {
			why = NFQB_FLUSH_LIMIT;
			go = true;
		} else if (now - q->unsent_since >= q->latency_us * 1000ull) {
			why = NFQB_FLUSH_LATENCY;
			go = true;
		} else if (idle || (!q->last_recv_full && !q->streaming) ||
			   nfqb_pace_waiting(q, now)) {
			/* a flow waits on us: no holding for a batch */
			why = NFQB_FLUSH_IDLE;
			go = true;
		}
	}
	if (go && nfqb_tx_flush(q, why, false, now) < 0 && errno != EAGAIN)
		return -1;
	return 0;
}

/* The stream's pace: time per packet, as the ratio of two decaying sums
 * (time between reads, packets per read; 1/8 weight to the new read), so
 * that many small reads and a few big ones weigh by their packets. */
void nfqb_loop_note_read(struct nfqb_queue *q, unsigned int n, uint64_t now)
{
	struct nfqb_linger *l = &q->linger;

	if (l->last_read_ns && now > l->last_read_ns) {
		uint64_t dt = now - l->last_read_ns;

		if (dt > NFQB_LINGER_QUIET_MAX_NS)
			dt = NFQB_LINGER_QUIET_MAX_NS;
		l->sum_ns = l->sum_ns - l->sum_ns / 8 + dt;
		l->sum_pkts = l->sum_pkts - l->sum_pkts / 8 + n * 256ull;
		l->gap_ns = l->sum_ns * 256 / l->sum_pkts;
	}
	l->last_read_ns = now;
}

uint64_t nfqb_loop_linger_ns(struct nfqb_queue *q, uint64_t now)
{
	struct nfqb_linger *l = &q->linger;
	uint64_t cap = l->us * 1000ull, ns;

	if (!cap)
		return 0;
	if (l->fixed)
		return cap;
	if (now < l->quiet_until || !l->gap_ns || nfqb_pace_waiting(q, now))
		return 0;
	ns = l->gap_ns * NFQB_LINGER_TARGET;
	if (ns > cap)
		ns = cap;
	return ns < NFQB_LINGER_MIN_NS ? 0 : ns;
}

/* After a pause of @ns that brought @got packets: if the stream brought
 * under a quarter of what its pace before promised, it slowed down
 * because we paused (its sender waits on us: request/response, TCP's
 * acknowledgements), and pausing again would only stretch its round
 * trips: no pause for a while, longer each time it shows again. */
void nfqb_loop_linger_done(struct nfqb_queue *q, uint64_t ns, int got,
			   uint64_t now)
{
	struct nfqb_linger *l = &q->linger;
	uint64_t promised;

	if (l->fixed || !l->gap_ns)
		return;
	promised = ns / l->gap_ns;
	if (got > 0 && (uint64_t)got * 4 >= promised) {
		l->backoff_ns = 0;
		return;
	}
	l->backoff_ns = l->backoff_ns ? l->backoff_ns * 2 :
			NFQB_LINGER_QUIET_MIN_NS;
	if (l->backoff_ns > NFQB_LINGER_QUIET_MAX_NS)
		l->backoff_ns = NFQB_LINGER_QUIET_MAX_NS;
	l->quiet_until = now + l->backoff_ns;
}

static int read_more(struct nfqb_queue *q, unsigned int max)
{
	unsigned int first = q->nready;
	int r = nfqb_rx_read(q, max, false);

	if (r > 0) {
		uint64_t now = nfqb_now_ns();

		nfqb_loop_note_read(q, (unsigned int)r, now);
		if (!q->linger.fixed && q->linger.us)
			nfqb_pace_note_read(q, first <= q->nready ? first :
					    q->nready, now);
	}
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
	uint64_t ns = nfqb_loop_linger_ns(q, now);
	uint64_t due;
	int r;

	if (!ns)
		return 0;
	if (!q->linger.fixed && unsent(q) &&
	    nfqb_tx_flush(q, NFQB_FLUSH_IDLE, false, now) < 0 &&
	    errno != EAGAIN)
		return -1;
	due = next_due(q, now);
	if (q->recv_deadline)
		due = min_due(due, q->recv_deadline);
	if (due && due <= now)
		return 0;
	if (due && due - now < ns)
		ns = due - now;
	nfqb_stat_inc(q, linger_pauses);
	if (nfqb_sys_pause(q->tfd, q->evfd, ns) < 0)
		return -1;	/* EINTR: a signal */
	r = read_more(q, max);
	due = nfqb_now_ns();
	nfqb_loop_linger_done(q, due > now ? due - now : 0, r, due);
	if (r <= 0)
		q->streaming = false;
	return r < 0 ? -1 : r > 0;
}

/* Every buffer is with the application: wait for a decision or a timer. */
static int wait_exhausted(struct nfqb_queue *q, int timeout)
{
	struct pollfd pfd = { .fd = q->evfd, .events = POLLIN };
	int r;

	if (timeout < 0 || timeout > NFQB_EXHAUSTED_WAIT_MS)
		timeout = NFQB_EXHAUSTED_WAIT_MS;
	r = poll(&pfd, 1, timeout);
	if (r < 0)
		return -1;
	if (r > 0) {
		nfqb_loop_clear_wakeup(q);
		return 0;
	}
	if (!q->nfree_slots && nfqb_loop_next_timeout(q, nfqb_now_ns()) != 0) {
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

	r = epoll_wait(q->epfd, ev, 2, timeout);
	if (r < 0)
		return -1;
	for (k = 0; k < r; k++) {
		if (ev[k].data.fd == q->evfd) {
			nfqb_loop_clear_wakeup(q);
		} else if (read_more(q, max) < 0) {
			return -1;
		}
	}
	return 0;
}

/* The kernel refused a verdict (EPERM: the process, or the socket's
 * opener, has no CAP_NET_ADMIN): report it once. */
static bool take_refused(struct nfqb_queue *q)
{
	if (!q->refused)
		return false;
	errno = q->refused;
	q->refused = 0;
	return true;
}

static bool take_interrupt(struct nfqb_queue *q)
{
	if (!atomic_load_explicit(&q->interrupt, memory_order_relaxed) ||
	    !atomic_exchange(&q->interrupt, false))
		return false;
	nfqb_stat_inc(q, interrupts);
	errno = EINTR;
	return true;
}

/* Cap @timeout (ms, -1: none) by the receive timeout of the running
 * nfqb_recv(); -1 with EAGAIN once it has passed. */
static int cap_recv_timeout(const struct nfqb_queue *q, int timeout)
{
	uint64_t now, left;

	if (!q->recv_deadline)
		return timeout;
	now = nfqb_now_ns();
	if (now >= q->recv_deadline) {
		errno = EAGAIN;
		return -1;
	}
	left = (q->recv_deadline - now + 999999) / 1000000;
	if (timeout < 0 || (uint64_t)timeout > left)
		timeout = (int)left;
	return timeout;
}

/* Nothing handed out yet and nothing to read: sleep. 0 to go on, -1. */
static int idle_wait(struct nfqb_queue *q, unsigned int max)
{
	int timeout;

	if (flush_if_due(q, nfqb_now_ns(), true) < 0)
		return -1;
	if (q->nready)
		return 0;
	if (q->nonblock) {
		if (!q->nfree_slots)
			nfqb_stat_inc(q, buffers_exhausted);
		errno = q->nfree_slots ? EAGAIN : ENOSPC;
		return -1;
	}
	timeout = nfqb_loop_next_timeout(q, nfqb_now_ns());
	if (unsent(q) && !q->tx.failing)
		timeout = 0;	/* flush_if_due() will send them */
	if (q->recv_deadline) {
		int capped = cap_recv_timeout(q, timeout);

		if (capped < 0)
			return -1;
		timeout = capped;
	}
	if (!q->nfree_slots)
		return wait_exhausted(q, timeout);
	return wait_events(q, max, timeout);
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
	if (atomic_load_explicit(&q->owner, memory_order_relaxed) != self)
		atomic_store_explicit(&q->owner, self, memory_order_relaxed);
	q->recv_deadline = q->recv_timeout_ms && !q->nonblock ?
		nfqb_now_ns() + q->recv_timeout_ms * 1000000ull : 0;
	for (;;) {
		int r;

		/* the wake-up first: an interrupt set after it writes the
		 * eventfd again, one set before it is seen just below */
		if (atomic_load_explicit(&q->wake_pending, memory_order_relaxed))
			nfqb_loop_clear_wakeup(q);
		if (take_interrupt(q))
			return -1;
		if (take_refused(q))
			return -1;
		if (flush_if_due(q, nfqb_now_ns(), false) < 0)
			return -1;
		if (q->nready) {
			int n = (int)nfqb_ready_pop(q, vec, max);

			/* 0: every one kept was decided meanwhile (the verdict
			 * timeout): go on, as if none had been kept */
			if (n)
				return n;
			continue;
		}
		/* the last receive filled its vector: more may be waiting */
		if (q->last_recv_full || q->nonblock) {
			r = read_more(q, max);
			if (r < 0)
				return -1;
			if (r > 0)
				continue;
		}
		if (q->streaming && !q->nonblock && q->nfree_slots) {
			r = nfqb_loop_linger(q, max);
			if (r < 0)
				return -1;
			if (r > 0)
				continue;
		}
		if (idle_wait(q, max) < 0)
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
			nfqb_ready_unpop(q, (unsigned int)(n - i - 1));
			errno = ECANCELED;
			return -1;
		}
	}
	return n;
}

NFQB_EXPORT int nfqb_flush(struct nfqb_queue *q)
{
	uint64_t now = nfqb_now_ns();

	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (q->timeout_ms)
		nfqb_book_expire(q, now);
	if (take_refused(q))
		return -1;
	return nfqb_tx_flush(q, NFQB_FLUSH_EXPLICIT, false, now);
}

NFQB_EXPORT int nfqb_queue_interrupt(struct nfqb_queue *q)
{
	atomic_store(&q->interrupt, true);
	nfqb_loop_wake(q);
	return 0;
}

NFQB_EXPORT int nfqb_queue_next_timeout(const struct nfqb_queue *q)
{
	return nfqb_loop_next_timeout(q, nfqb_now_ns());
}

int nfqb_loop_run_timers(struct nfqb_queue *q, uint64_t now)
{
	if (q->timeout_ms)
		nfqb_book_expire(q, now);
	if (nfqb_tx_flush(q, NFQB_FLUSH_LATENCY, false, now) < 0)
		return -1;
	return 0;
}
