// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transport: the only code that sends verdicts. When a flush is due it
 * has the planner plan what is decided and write those messages into its
 * send buffer, sends them in one sendmsg, and only once the kernel took
 * them does the book drop what they decided. A send that fails sends
 * nothing more and drops nothing: every decision stays in the book, so
 * no later message can reach a packet whose own verdict was not taken,
 * and the next flush (a timer with backoff, or the application's) plans
 * and sends it again.
 */
#include <errno.h>
#include <stdlib.h>

#include "queue.h"
#include "sys.h"

int nfqb_tx_alloc(struct nfqb_tx *t, uint32_t seq)
{
	*t = (struct nfqb_tx){ .seq = seq };
	t->buf = nfqb_malloc(NFQB_TX_SIZE);
	t->plan.cap = NFQB_TX_SIZE / 32 + 1;
	t->plan.items = nfqb_calloc(t->plan.cap, sizeof(*t->plan.items));
	if (!t->buf || !t->plan.items) {
		nfqb_tx_free(t);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void nfqb_tx_free(struct nfqb_tx *t)
{
	free(t->buf);
	free(t->plan.items);
	t->buf = NULL;
	t->plan.items = NULL;
}

uint32_t nfqb_tx_posted(const struct nfqb_queue *q)
{
	return atomic_load_explicit(&q->post.posted, memory_order_acquire) +
	       q->post.own + q->book.defaulted;
}

/* When the next flush is due with @unsent decisions not sent yet. */
static uint64_t due(const struct nfqb_queue *q, uint32_t unsent, uint64_t now)
{
	const struct nfqb_tx *t = &q->tx;
	uint64_t since = t->unsent_since ? t->unsent_since : now;
	uint64_t lat = since + q->set.latency_us * 1000ull;

	if (t->failing)
		return t->retry_at;
	if (!unsent || (t->held_due && t->held_due < lat))
		return t->held_due;
	return lat;
}

uint64_t nfqb_tx_due(const struct nfqb_queue *q, uint64_t now)
{
	return due(q, nfqb_tx_posted(q) - q->tx.posted_seen, now);
}

/* Plan once and send it; 1 if there is more, 0 if done, -1 on failure. */
static int flush_once(struct nfqb_queue *q, bool force, uint64_t now,
		      int *sent)
{
	const struct nfqb_decision dflt = { .verdict = q->set.default_verdict };
	uint64_t lat = q->set.latency_us * 1000ull;
	struct nfqb_plan_in in = {
		.book = &q->book,
		.dflt = &dflt,
		.singles = q->book.fallback || !q->set.coalesce,
		.force = force,
		.held_cutoff = now > lat ? now - lat : 0,
		.budget = NFQB_TX_SIZE,
	};
	struct nfqb_tx *t = &q->tx;
	struct nfqb_plan *pl = &t->plan;
	size_t len;
	int tries = 0, r;

	nfqb_plan(&in, pl);
	t->held_due = pl->held ? pl->oldest_held_ns + lat : 0;
	if (!pl->nitems)
		return 0;
	len = nfqb_plan_write(pl, t->buf, &t->seq, q->sk.num);
	do {	/* a signal is retried */
		r = nfqb_sys_send_kernel(q->sk.fd, t->buf, len);
		nfqb_stat_inc(&q->ctr, send_calls);
	} while (r < 0 && errno == EINTR && ++tries < 3);
	if (r < 0)
		return -1;
	t->failing = false;
	t->backoff_ns = 0;
	t->retry_at = 0;
	*sent += (int)(pl->singles + pl->batches);
	nfqb_stat_add(&q->ctr, verdict_msgs, pl->singles);
	nfqb_stat_add(&q->ctr, batch_msgs, pl->batches);
	nfqb_stat_add(&q->ctr, batch_packets, pl->batched);
	nfqb_book_sent(&q->book, &q->book_in, pl);
	return pl->more;
}

/* The counter of each reason. */
static const uint8_t reason_stat[] = {
	[NFQB_FLUSH_LIMIT] = NFQB_STAT_IDX(flush_limit),
	[NFQB_FLUSH_IDLE] = NFQB_STAT_IDX(flush_idle),
	[NFQB_FLUSH_LATENCY] = NFQB_STAT_IDX(flush_latency),
	[NFQB_FLUSH_EXPLICIT] = NFQB_STAT_IDX(flush_explicit),
	[NFQB_FLUSH_CLOSE] = NFQB_STAT_IDX(flush_explicit),
};

int nfqb_tx_flush(struct nfqb_queue *q, enum nfqb_flush_reason why,
		  bool force, uint64_t now)
{
	uint32_t posted = nfqb_tx_posted(q);
	struct nfqb_tx *t = &q->tx;
	int sent = 0, r, err;

	do {
		r = flush_once(q, force, now, &sent);
	} while (r > 0);
	err = errno;
	if (sent) {
		nfqb_stat_inc(&q->ctr, flushes);
		q->ctr.v[reason_stat[why]] += 1;
	}
	if (r < 0) {
		/* retried from retry_at on, backing off */
		nfqb_stat_inc(&q->ctr, send_failures);
		t->failing = true;
		t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 :
				NFQB_RETRY_MIN_NS;
		if (t->backoff_ns > NFQB_RETRY_MAX_NS)
			t->backoff_ns = NFQB_RETRY_MAX_NS;
		t->retry_at = t->due = now + t->backoff_ns;
		errno = err == ENOBUFS || err == ENOMEM || err == EAGAIN ||
			err == EINTR ? EAGAIN : err;
		return -1;
	}
	t->posted_seen = posted;
	t->unsent_since = 0;
	t->due = t->held_due;
	return sent;
}

/* Why a flush is due now with @unsent decisions not sent, if it is. */
static bool due_now(struct nfqb_queue *q, uint32_t unsent, uint64_t now,
		    bool hold, enum nfqb_flush_reason *why)
{
	struct nfqb_tx *t = &q->tx;

	*why = NFQB_FLUSH_LATENCY;
	if (t->failing)
		return now >= t->retry_at;
	if (t->held_due && now >= t->held_due)
		return true;
	if (!unsent)
		return false;
	if (!t->unsent_since)
		t->unsent_since = now;
	*why = NFQB_FLUSH_LIMIT;
	if (unsent >= q->set.batch_limit)
		return true;
	*why = NFQB_FLUSH_LATENCY;
	if (now - t->unsent_since >= q->set.latency_us * 1000ull)
		return true;
	*why = NFQB_FLUSH_IDLE;
	return !hold;
}

int nfqb_tx_flush_due(struct nfqb_queue *q, uint64_t now, bool hold)
{
	uint32_t unsent = nfqb_tx_posted(q) - q->tx.posted_seen;
	enum nfqb_flush_reason why;

	if (!due_now(q, unsent, now, hold, &why)) {
		q->tx.due = due(q, unsent, now);
		return 0;
	}
	return nfqb_tx_flush(q, why, false, now);
}
