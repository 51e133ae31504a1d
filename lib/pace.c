// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The stream's pace, and waiting for the next read: while packets stream
 * in, nfqb_recv() pauses briefly before reading again and takes what came
 * meanwhile (one wake-up and one batch for many); otherwise it sleeps
 * until the socket is readable, a decision or an interrupt comes, or a
 * timer is due. A fixed pause is the application's
 * (nfqb_queue_set_linger()); the adaptive one aims at NFQB_LINGER_TARGET
 * packets at the stream's rate, within a cap, and keeps off while a flow
 * waits on us or after a pause showed that the stream slowed down for it.
 *
 * Which flows wait on us. The adaptive linger pauses, and decisions are
 * held for a batch, only while no flow in the traffic waits for our
 * verdicts before it sends again: a TCP (SCTP, DCCP) connection, clocked
 * by its acknowledgements, always does; so does a request/response
 * exchange over UDP. Such a flow shows up alone: one packet in a read,
 * then nothing until we answered. A bulk stream shows up in runs:
 * several packets of the same flow in one read.
 *
 * A small table (direct mapped by the flow's tag: a hash of the addresses,
 * the protocol and the ports, nfqb_parse_flow()) remembers, per flow, the read it was last seen in, how
 * many of its packets that read brought, and for how many of its
 * appearances in a row it came alone in a read of NFQB_PACE_MANY packets
 * or more (a small read says nothing: a bulk flow comes alone too when we
 * keep up with it). After NFQB_PACE_LONE such appearances (within
 * NFQB_PACE_MEMORY_NS of each other) the flow waits on us, and each of
 * its appearances keeps the linger off until the next read and for
 * NFQB_PACE_QUIET_NS. A collision in
 * the table only resets an entry: at worst a waiting flow is seen late.
 * Only the owner thread of the queue touches any of it.
 */
#include <errno.h>

#include "book.h"
#include "pace.h"
#include "parse.h"
#include "rx.h"
#include "settings.h"
#include "sys.h"

/* One packet of the read numbered @round, which brought @many packets or
 * more if @many (only such a read tells a lone flow from a small read).
 * True if its flow shows that it waits on us. */
static bool note_flow(struct nfqb_pace *pc, uint32_t tag, uint32_t round,
		      bool many, uint64_t now)
{
	struct nfqb_pace_flow *f = &pc->flows[(tag >> 2) % NFQB_PACE_FLOWS];

	if (f->tag != tag || now - f->seen_ns > NFQB_PACE_MEMORY_NS) {
		*f = (struct nfqb_pace_flow){ .tag = tag, .round = round,
					      .count = 1, .many = many,
					      .seen_ns = now };
		return false;
	}
	f->seen_ns = now;
	if (f->round == round) {
		if (f->count < UINT16_MAX)
			f->count++;
		f->lone = 0;	/* a run: it does not wait on us */
		return false;
	}
	/* its first packet in this read: how did the last one bring it? */
	if (f->count > 1)
		f->lone = 0;
	else if (f->many && f->lone < UINT8_MAX)
		f->lone++;
	f->round = round;
	f->count = 1;
	f->many = many;
	return f->lone >= NFQB_PACE_LONE;
}

/* The flows of the packets the last read brought (rx.c noted them): does
 * one wait on us? Until a read shows none, and for the quiet time after
 * the last that did, it does. */
static void note_flows(struct nfqb_pace *pc, const struct nfqb_rx *rx,
		       struct nfqb_counters *ctr, uint64_t now)
{
	bool waiting = false, many = rx->npkts >= NFQB_PACE_MANY;
	unsigned int i;

	if (!rx->nflows)
		return;
	pc->round++;
	for (i = 0; i < rx->nflows; i++) {
		uint32_t tag = rx->flows[i];

		if (tag == NFQB_FLOW_ACKED ||
		    (tag && note_flow(pc, tag, pc->round, many, now)))
			waiting = true;
	}
	if (waiting) {
		pc->waiting_until = UINT64_MAX;
		pc->shown_ns = now;
		nfqb_stat_inc(ctr, linger_waiting);
	} else if (pc->waiting_until == UINT64_MAX) {
		pc->waiting_until = pc->shown_ns + NFQB_PACE_QUIET_NS;
	}
}

/* The stream's pace: time per packet, as the ratio of two decaying sums
 * (time between reads, packets per read; 1/8 weight to the new read), so
 * that many small reads and a few big ones weigh by their packets. */
static void note_rate(struct nfqb_pace *pc, unsigned int n, uint64_t now)
{
	if (pc->last_read_ns && now > pc->last_read_ns) {
		uint64_t dt = now - pc->last_read_ns;

		if (dt > NFQB_LINGER_QUIET_MAX_NS)
			dt = NFQB_LINGER_QUIET_MAX_NS;
		pc->sum_ns = pc->sum_ns - pc->sum_ns / 8 + dt;
		pc->sum_pkts = pc->sum_pkts - pc->sum_pkts / 8 + n * 256ull;
		pc->gap_ns = pc->sum_ns * 256 / pc->sum_pkts;
	}
	pc->last_read_ns = now;
}

/* The payload per packet, a decaying average (1/8 weight to the read). */
static void note_size(struct nfqb_pace *pc, const struct nfqb_rx *rx)
{
	uint64_t avg;

	if (!rx->npkts)
		return;
	avg = rx->nbytes / rx->npkts;
	pc->sum_bytes = pc->sum_bytes ? pc->sum_bytes - pc->sum_bytes / 8 + avg :
			avg * 8;
}

/* A pause of @ns (asked for: we may have slept longer) brought @got
 * datagrams. Nothing ends the stream; but the decisions went out before
 * it, so an empty pause stretched nobody's round trip. If the stream
 * brought some, but under a quarter of what its pace before promised, it
 * slowed down because we paused (its sender waits on us: request/response,
 * TCP's acknowledgements), and pausing again would only stretch its round
 * trips: no pause for a while, longer each time it shows again. A read
 * that filled its vector brought at least that much, maybe more: it shows
 * no slowing down. */
static void paused(struct nfqb_pace *pc, const struct nfqb_rx *rx,
		   const struct nfqb_settings *set, uint64_t ns)
{
	unsigned int got = rx->got;
	uint64_t promised;

	if (!got)
		pc->streaming = false;
	if (!got || set->linger_fixed || !pc->gap_ns)
		return;
	promised = ns / pc->gap_ns;
	if (rx->last_full || (uint64_t)got * 4 >= promised) {
		pc->backoff_ns = 0;
		return;
	}
	pc->backoff_ns = pc->backoff_ns ? pc->backoff_ns * 2 :
			 NFQB_LINGER_QUIET_MIN_NS;
	if (pc->backoff_ns > NFQB_LINGER_QUIET_MAX_NS)
		pc->backoff_ns = NFQB_LINGER_QUIET_MAX_NS;
	pc->quiet_until = rx->read_ns + pc->backoff_ns;
}

void nfqb_pace_note_read(struct nfqb_pace *pc, const struct nfqb_pace_in *in)
{
	const struct nfqb_rx *rx = in->rx;
	unsigned int n = rx->got;
	uint64_t now = rx->read_ns;

	if (pc->paused_at) {
		paused(pc, rx, in->set, pc->pause_ns);
		pc->paused_at = 0;
	}
	if (!n)
		return;
	if (n >= 2)
		pc->streaming = true;
	note_rate(pc, n, now);
	note_size(pc, rx);
	if (rx->want_flows)
		note_flows(pc, rx, in->ctr, now);
}

/* Packets an adaptive pause gathers: NFQB_LINGER_TARGET, or fewer if
 * their messages would fill over half the socket's receive buffer, or if
 * they would be over a quarter of the queue's length (the kernel drops
 * what does not fit, or lets it through with fail-open). */
static uint64_t gather_pkts(const struct nfqb_pace *pc,
			    const struct nfqb_settings *set)
{
	uint64_t each = 2 * (pc->sum_bytes / 8 + NFQB_PACE_MSG_HEAD) +
			NFQB_PACE_SKB_COST;
	uint64_t n = NFQB_LINGER_TARGET;

	if (set->rcvbuf && set->rcvbuf / 2 / each < n)
		n = set->rcvbuf / 2 / each;
	return set->maxlen / 4 < n ? set->maxlen / 4 : n;
}

/* How long to pause before reading again (0: do not). */
static uint64_t linger_ns(const struct nfqb_pace *pc,
			  const struct nfqb_settings *set, uint64_t now)
{
	uint64_t cap = set->linger_us * 1000ull, ns;

	if (!cap)
		return 0;
	if (set->linger_fixed)
		return cap;
	if (now < pc->quiet_until || !pc->gap_ns || now < pc->waiting_until)
		return 0;
	ns = pc->gap_ns * gather_pkts(pc, set);
	if (ns > cap)
		ns = cap;
	return ns < NFQB_LINGER_MIN_NS ? 0 : ns;
}

bool nfqb_pace_pauses(const struct nfqb_pace *pc,
		      const struct nfqb_pace_in *in, uint64_t now)
{
	return nfqb_rx_room(in->bufs, in->book) && linger_ns(pc, in->set, now);
}

/* When the owner must run next, the transport's next flush being due at
 * @tx_due: that, or the verdict timeout (0: nothing is due). */
static uint64_t owner_due(const struct nfqb_pace_in *in, uint64_t tx_due)
{
	uint64_t due = in->set->timeout_ms ? *in->expire_due : 0;

	return !due || (tx_due && tx_due < due) ? tx_due : due;
}

/* Milliseconds from @now until @due, rounded up (-1: no deadline). */
static int ms_until(uint64_t due, uint64_t now)
{
	if (!due)
		return -1;
	return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

int nfqb_pace_next_timeout(const struct nfqb_pace_in *in, uint64_t tx_due,
			   uint64_t now)
{
	return ms_until(owner_due(in, tx_due), now);
}

/* What a wait does. */
enum how_wait {
	LOOK_AGAIN,	/* nothing: a timer is due, or a pause is not wanted */
	PAUSE_READ,	/* pause, then read */
	PAUSE_LOOK,	/* pause (for a decision: no free buffer), then look */
	SLEEP,		/* sleep on the socket and the eventfd */
};

/* Every buffer is with the application, or the book is full: wait for a
 * decision (the eventfd) or a timer, ENOSPC once none came for
 * NFQB_EXHAUSTED_WAIT_MS since reading stopped. */
static int starved(struct nfqb_pace *pc, const struct nfqb_pace_in *in,
		   uint64_t due, uint64_t now, uint64_t *ns)
{
	uint64_t end;

	if (!pc->starved_at)
		pc->starved_at = now;
	end = pc->starved_at + NFQB_EXHAUSTED_WAIT_MS * 1000000ull;
	if (now >= end && !atomic_load(in->woken)) {
		pc->starved_at = now;	/* the next call waits as long */
		if (!in->bufs->nfree_slots)
			nfqb_stat_inc(in->ctr, buffers_exhausted);
		errno = ENOSPC;
		return -1;
	}
	*ns = (due && due < end ? due : end) - now;
	return PAUSE_LOOK;
}

/* Whether a read has room (nfqb_rx_room()); a stop for the book's sake
 * is counted once, when it begins: the packets wait in the kernel's
 * queue until the oldest one we track is decided. */
static bool read_room(struct nfqb_pace *pc, const struct nfqb_pace_in *in)
{
	bool book = nfqb_book_space(in->book) > 0;

	if (!book && !pc->book_stopped)
		nfqb_stat_inc(in->ctr, book_full);
	pc->book_stopped = !book;
	return book && in->bufs->nfree_slots;
}

/* How to wait as @how says, never past a timer nor the receive timeout of
 * the running nfqb_recv(): the pause in *@ns, the sleep's timeout (ms) in
 * *@ms; -1 with errno (EAGAIN: nothing in non-blocking mode, or the
 * receive timeout passed; ENOSPC). */
static int plan_wait(struct nfqb_pace *pc, const struct nfqb_pace_in *in,
		     enum nfqb_wait how, uint64_t now, uint64_t *ns, int *ms)
{
	uint64_t due = owner_due(in, *in->tx_due);
	uint64_t end = how == NFQB_WAIT_PAUSE ? 0 : *in->deadline;
	uint64_t wake = !end || (due && due < end) ? due : end;
	bool room = read_room(pc, in);

	*ms = ms_until(wake, now);
	*ns = 0;
	if (room)
		pc->starved_at = 0;
	if (how == NFQB_WAIT_NOT) {
		errno = EAGAIN;
		if (room)
			return -1;
		if (!in->bufs->nfree_slots)
			nfqb_stat_inc(in->ctr, buffers_exhausted);
		errno = ENOSPC;
		return -1;
	}
	if (due && due <= now)
		return LOOK_AGAIN;	/* the caller runs the timer first */
	if (end && end <= now) {
		errno = EAGAIN;		/* the receive timeout passed */
		return -1;
	}
	if (!room)
		return how == NFQB_WAIT_PAUSE ? LOOK_AGAIN :
		       starved(pc, in, wake, now, ns);
	if (how != NFQB_WAIT_SLEEP)
		*ns = linger_ns(pc, in->set, now);
	if (*ns && wake && wake - now < *ns)
		*ns = wake - now;
	if (*ns) {
		nfqb_stat_inc(in->ctr, linger_pauses);
		pc->paused_at = now;
		pc->pause_ns = *ns;
		return PAUSE_READ;
	}
	return how == NFQB_WAIT_PAUSE ? LOOK_AGAIN : SLEEP;
}

int nfqb_pace_wait(struct nfqb_pace *pc, const struct nfqb_pace_in *in,
		   enum nfqb_wait how, uint64_t now)
{
	const struct nfqb_sock *sk;
	struct epoll_event ev[3];
	uint64_t ns;
	int k, r, ms;

	if (how == NFQB_WAIT_NONE)
		return 1;
	sk = in->sk;
	r = plan_wait(pc, in, how, now, &ns, &ms);
	if (r < 0 || r == LOOK_AGAIN)
		return r < 0 ? -1 : 0;
	if (r != SLEEP) {
		if (nfqb_sys_pause(sk->tfd, sk->evfd, ns) < 0) {
			pc->paused_at = 0;
			return -1;	/* EINTR: a signal */
		}
		return r == PAUSE_READ;
	}
	if (in->set->read_sleep && sk->wake_fd < 0 &&
	    !atomic_load_explicit(in->poke_failed, memory_order_relaxed)) {
		pc->sleep_ms = ms;
		return NFQB_PACE_READ_SLEEP;
	}
	r = nfqb_sys_epoll_wait(sk->epfd, ev, 3, ms);
	for (k = 0; k < r; k++)
		if (ev[k].data.fd == sk->fd)
			return 1;	/* the socket is readable: packets first */
	for (k = 0; k < r; k++) {
		if (ev[k].data.fd == sk->wake_fd) {
			/* the application's wake fd (a signal's self-pipe):
			 * EINTR as for a signal; its caller drains it */
			errno = EINTR;
			return -1;
		}
	}
	return r < 0 ? -1 : 0;
}
