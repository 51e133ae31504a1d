// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The receive loop. nfqb_recv() runs one pass after another, each step in
 * the file that owns it, once, in the order the data flows:
 *
 *   the verdict timeout   book.c   undecided packets past it get the default
 *   the flush             tx.c     what is due goes to the kernel
 *   the hand-out          book.c   packets read and not handed out yet
 *                         large.c  what the application may not see cut
 *   the wait              pace.c   a linger pause, or sleep
 *   the read              rx.c     datagrams into the book
 *   the stream's pace     pace.c   what the read says of the traffic
 *
 * At the start of a pass this file decides how the pass will wait, and so
 * whether decisions may be held for a batch (no: before a sleep, or while
 * a flow waits on us). Also here: interrupts, the wake-up read (wake.c
 * rings it from other threads), and the timers of an application that
 * polls nfqb_queue_fd() itself.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "large.h"
#include "loop.h"
#include "queue-int.h"
#include "sys.h"

/* Read the eventfd first, then clear the flag: a decision posted after
 * the read sets the flag again and writes again (wake.c); one posted
 * between the two is seen by the caller's next look at the posted
 * decisions. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q)
{
	uint64_t v;

	if (read(q->sk.evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	atomic_store(&q->wake.pending, false);
}

int nfqb_loop_wakeup_fd(const struct nfqb_queue *q)
{
	return q->sk.evfd;
}

bool nfqb_loop_streaming(const struct nfqb_queue *q)
{
	return q->pace.streaming;
}

/* How this pass waits for more packets, if it finds none to hand out;
 * @dry: a read of this nfqb_recv() found nothing. */
static enum nfqb_wait next_wait(const struct nfqb_queue *q, bool dry)
{
	bool room = nfqb_rx_room(&q->bufs, &q->book);

	if (q->book.nready)
		return NFQB_WAIT_NONE;	/* (they are handed out) */
	if (q->set.nonblock)
		return dry || !room ? NFQB_WAIT_NOT : NFQB_WAIT_NONE;
	if (!room)
		return NFQB_WAIT_SLEEP;
	/* the last read filled its vector: more may be waiting */
	if (q->rx.last_full && !dry)
		return NFQB_WAIT_NONE;
	return q->pace.streaming ? NFQB_WAIT_LINGER : NFQB_WAIT_SLEEP;
}

/* May decisions wait for a batch in this pass? Only while packets keep
 * coming and no flow waits on us (the adaptive linger pauses only then
 * too), and never before a sleep: a linger wait holds them only if it
 * will pause. A pause, fixed or adaptive, holds them for a bigger batch,
 * within the latency bound: sending them before every pause cost a
 * verdict message per pause, twice 0.1.0's per packet. */
static bool may_hold(const struct nfqb_queue *q, enum nfqb_wait w,
		     uint64_t now)
{
	if (w == NFQB_WAIT_SLEEP || w == NFQB_WAIT_NOT ||
	    (w == NFQB_WAIT_LINGER &&
	     !nfqb_pace_pauses(&q->pace, &q->pace_in, now)))
		return false;
	return now >= q->pace.waiting_until &&
	       (q->rx.last_full || q->pace.streaming);
}

/* A verdict the kernel refused since the last report (EPERM: the process,
 * or the socket's opener, has no CAP_NET_ADMIN). */
static bool refused(struct nfqb_queue *q)
{
	if (q->rx.refusals == q->loop.refusals_told)
		return false;
	q->loop.refusals_told = q->rx.refusals;
	errno = EPERM;
	return true;
}

/* A failed send not reported yet, a refused verdict, or an interrupt. */
static bool take_event(struct nfqb_queue *q)
{
	/* the wake-up first: an interrupt set after it writes the eventfd
	 * again, one set before it is seen just below */
	if (atomic_load_explicit(&q->wake.pending, memory_order_relaxed))
		nfqb_loop_clear_wakeup(q);
	if (q->loop.error) {
		errno = q->loop.error;
		q->loop.error = 0;
		return true;
	}
	if (refused(q))
		return true;
	if (!atomic_load_explicit(&q->wake.interrupt, memory_order_relaxed) ||
	    !atomic_exchange(&q->wake.interrupt, false))
		return false;
	nfqb_stat_inc(&q->ctr, interrupts);
	errno = EINTR;
	return true;
}

/* The read sleep: in_read set before pending is looked at, cleared
 * after the read (wake.c pokes the socket while it is set). Returns as
 * nfqb_rx_read(), or -2 without reading: a wake-up is pending. */
static int read_sleeping(struct nfqb_queue *q)
{
	int n;

	atomic_store(&q->wake.in_read, true);
	if (atomic_load(&q->wake.pending)) {
		atomic_store(&q->wake.in_read, false);
		return -2;
	}
	n = nfqb_rx_read_wait(&q->rx, &q->rx_in, q->rx.vlen,
			      q->pace.sleep_ms);
	atomic_store_explicit(&q->wake.in_read, false, memory_order_relaxed);
	return n;
}

NFQB_EXPORT int nfqb_recv(struct nfqb_queue *q, struct nfqb_packet **vec,
			  unsigned int max)
{
	unsigned long self = (unsigned long)pthread_self();
	bool dry = false;

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
	q->loop.recv_deadline = q->set.recv_timeout_ms && !q->set.nonblock ?
		nfqb_now_ns() + q->set.recv_timeout_ms * 1000000ull : 0;
	for (;;) {
		uint64_t now = nfqb_now_ns();
		enum nfqb_wait w = next_wait(q, dry);
		bool hold = may_hold(q, w, now);
		uint32_t flags_off = 0;
		int n;

		if (take_event(q))
			return -1;
		n = (int)nfqb_book_serve(&q->book, &q->book_in, now, vec,
					 max);
		if (n)
			n = (int)nfqb_large_sift(q, vec, (unsigned int)n,
						 &flags_off);
		if (nfqb_tx_flush_due(&q->tx, &q->tx_in, now, hold,
				      flags_off) < 0 &&
		    errno != EAGAIN) {
			if (!n)
				return -1;
			q->loop.error = errno;	/* told by the next call */
		}
		if (n)
			return n;
		n = nfqb_pace_wait(&q->pace, &q->pace_in, w, now);
		if (n <= 0) {
			if (n < 0)
				return -1;
			continue;
		}
		if (n == NFQB_PACE_READ_SLEEP)
			n = read_sleeping(q);
		else
			n = nfqb_rx_read(&q->rx, &q->rx_in, q->rx.vlen);
		if (n == -2)
			continue;	/* a wake-up came first */
		nfqb_pace_note_read(&q->pace, &q->pace_in);
		if (n < 0 && errno != EAGAIN && errno != ENOSPC)
			return -1;
		dry = n <= 0;
	}
}

/* The worker pool's queue per worker (nonblocking): its nfqb_recv() found
 * the socket dry in the middle of a stream. Send what may not wait, and
 * pause if the linger says so, then read. 1: packets came, 0: none (no
 * pause, or the stream ended), -1 with errno. */
int nfqb_loop_linger(struct nfqb_queue *q)
{
	uint64_t now = nfqb_now_ns();
	int r;

	if (nfqb_tx_flush_due(&q->tx, &q->tx_in, now,
			      may_hold(q, NFQB_WAIT_LINGER, now), 0) < 0 &&
	    errno != EAGAIN)
		return -1;
	r = nfqb_pace_wait(&q->pace, &q->pace_in, NFQB_WAIT_PAUSE, now);
	if (r <= 0)
		return r;
	r = nfqb_rx_read(&q->rx, &q->rx_in, q->rx.vlen);
	nfqb_pace_note_read(&q->pace, &q->pace_in);
	if (r < 0 && errno != EAGAIN && errno != ENOSPC)
		return -1;
	return r > 0;
}

NFQB_EXPORT int nfqb_dispatch(struct nfqb_queue *q, nfqb_packet_cb cb,
			      void *data)
{
	struct nfqb_packet *vec[NFQB_RECV_VLEN];
	int n, i;

	if (!q || !cb)
		return nfqb_fail(EINVAL);
	n = nfqb_recv(q, vec, NFQB_RECV_VLEN);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (cb(vec[i], data) < 0) {
			/* the rest stay with the library: the next
			 * nfqb_recv() hands them out again */
			nfqb_book_give_back(&q->book, vec + i + 1,
					    (unsigned int)(n - i - 1));
			errno = ECANCELED;
			return -1;
		}
	}
	return n;
}

NFQB_EXPORT int nfqb_flush(struct nfqb_queue *q)
{
	uint64_t now;

	if (!q)
		return nfqb_fail(EINVAL);
	now = nfqb_now_ns();
	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (q->set.timeout_ms)
		nfqb_book_expire(&q->book, &q->book_in, now);
	if (refused(q))
		return -1;
	return nfqb_tx_flush(&q->tx, &q->tx_in, NFQB_FLUSH_EXPLICIT, false,
			     now);
}

NFQB_EXPORT int nfqb_queue_interrupt(struct nfqb_queue *q)
{
	if (!q)
		return nfqb_fail(EINVAL);
	atomic_store(&q->wake.interrupt, true);
	nfqb_wake_ring(&q->wake, q->sk.evfd);
	return 0;
}

/* A NULL @q: -1 as when nothing is due, but with errno EINVAL (nothing
 * due leaves errno alone). */
NFQB_EXPORT int nfqb_queue_next_timeout(const struct nfqb_queue *q)
{
	uint64_t now;

	if (!q)
		return nfqb_fail(EINVAL);
	now = nfqb_now_ns();
	return nfqb_pace_next_timeout(&q->pace_in,
				      nfqb_tx_due(&q->tx, &q->tx_in, now), now);
}
