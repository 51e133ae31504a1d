// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transport: the only code that sends verdicts. It owns the send
 * buffer, builds the planner's messages into it, sends them in one
 * sendmsg, and the book releases the packets they decide only once the
 * kernel took them. A send that fails sends nothing more and releases
 * nothing: every decision stays in the book, so no later message can reach
 * a packet whose own verdict was not taken, and the next flush (a timer
 * with backoff, or the application's) plans and sends it again.
 */
#include <errno.h>
#include <stdlib.h>

#include "queue.h"
#include "seam.h"

static void count_verdict(struct nfqb_queue *q, const struct nfqb_decision *d,
			  uint64_t n)
{
	switch (d->verdict & 0xff) {
	case NFQB_ACCEPT:
		nfqb_stat_add(q, accepted, n);
		break;
	case NFQB_DROP:
		nfqb_stat_add(q, dropped, n);
		break;
	case NFQB_QUEUE:
		nfqb_stat_add(q, requeued, n);
		break;
	case NFQB_REPEAT:
		nfqb_stat_add(q, repeated, n);
		break;
	}
	if (d->flags & NFQB_V_MARK)
		nfqb_stat_add(q, marked, n);
	if (d->flags & NFQB_V_PAYLOAD)
		nfqb_stat_add(q, mangled, n);
}

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

uint32_t nfqb_tx_unsent(const struct nfqb_queue *q)
{
	return nfqb_posted(&q->post) - q->tx.posted_seen;
}

uint64_t nfqb_tx_unsent_since(struct nfqb_queue *q, uint64_t now)
{
	if (!q->tx.unsent_since)
		q->tx.unsent_since = now;
	return q->tx.unsent_since;
}

static size_t build_items(struct nfqb_tx *t, uint16_t num,
			  const struct nfqb_plan *pl)
{
	unsigned char *buf = t->buf;
	size_t len = 0;
	unsigned int i;
	uint32_t k;

	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];
		const uint32_t *mark = it->d->flags & NFQB_V_MARK ?
				       &it->d->mark : NULL;

		switch (it->type) {
		case NFQB_I_SINGLE:
			len += nfqb_msg_verdict(buf + len, ++t->seq, num,
						it->id, it->d);
			break;
		case NFQB_I_BATCH:
			len += nfqb_msg_verdict_batch(buf + len, ++t->seq,
						      num, it->id,
						      it->d->verdict, mark);
			break;
		case NFQB_I_GAP:
			for (k = 0; k < it->count; k++)
				len += nfqb_msg_verdict(buf + len, ++t->seq,
							num, it->id + k, it->d);
			break;
		}
	}
	return len;
}

/* Count what the kernel took; the number of verdict messages. */
static unsigned int count_items(struct nfqb_queue *q,
				const struct nfqb_plan *pl)
{
	unsigned int i, msgs = 0;

	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];

		count_verdict(q, it->d, it->count);
		switch (it->type) {
		case NFQB_I_SINGLE:
			nfqb_stat_inc(q, verdict_msgs);
			msgs++;
			break;
		case NFQB_I_BATCH:
			nfqb_stat_inc(q, batch_msgs);
			nfqb_stat_add(q, batch_packets, it->count);
			msgs++;
			break;
		case NFQB_I_GAP:
			nfqb_stat_add(q, verdict_msgs, it->count);
			msgs += it->count;
			break;
		}
	}
	return msgs;
}

/* One datagram to the kernel; a signal is retried. */
static int send_all(struct nfqb_queue *q, size_t len)
{
	int tries = 0, r;

	do {
		r = nfqb_sys_send_kernel(q->sk.fd, q->tx.buf, len);
		nfqb_stat_inc(q, send_calls);
	} while (r < 0 && errno == EINTR && ++tries < 3);
	return r;
}

static bool transient(int err)
{
	return err == ENOBUFS || err == ENOMEM || err == EAGAIN ||
	       err == EINTR;
}

static void send_failed(struct nfqb_queue *q, uint64_t now)
{
	struct nfqb_tx *t = &q->tx;

	nfqb_stat_inc(q, send_failures);
	t->failing = true;
	t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 : NFQB_RETRY_MIN_NS;
	if (t->backoff_ns > NFQB_RETRY_MAX_NS)
		t->backoff_ns = NFQB_RETRY_MAX_NS;
	t->retry_at = now + t->backoff_ns;
}

static void count_flush(struct nfqb_queue *q, enum nfqb_flush_reason why)
{
	nfqb_stat_inc(q, flushes);
	switch (why) {
	case NFQB_FLUSH_LIMIT:
		nfqb_stat_inc(q, flush_limit);
		break;
	case NFQB_FLUSH_IDLE:
		nfqb_stat_inc(q, flush_idle);
		break;
	case NFQB_FLUSH_LATENCY:
		nfqb_stat_inc(q, flush_latency);
		break;
	case NFQB_FLUSH_EXPLICIT:
	case NFQB_FLUSH_CLOSE:
		nfqb_stat_inc(q, flush_explicit);
		break;
	}
}

/* Plan once and send it; 1 if there is more, 0 if done, -1 on failure. */
static int flush_once(struct nfqb_queue *q, bool force, uint64_t now,
		      int *sent)
{
	const struct nfqb_decision dflt = { .verdict = q->conf.default_verdict };
	uint64_t lat = q->conf.latency_us * 1000ull;
	struct nfqb_plan_in in = {
		.book = &q->book,
		.dflt = &dflt,
		.singles = q->book.fallback || !q->conf.coalesce,
		.force = force,
		.held_cutoff = now > lat ? now - lat : 0,
		.budget = NFQB_TX_SIZE,
	};
	struct nfqb_tx *t = &q->tx;
	struct nfqb_plan *pl = &t->plan;

	nfqb_plan(&in, pl);
	t->held_due = pl->held ? pl->oldest_held_ns + lat : 0;
	if (!pl->nitems)
		return 0;
	if (send_all(q, build_items(t, q->sk.num, pl)) < 0) {
		send_failed(q, now);
		return -1;
	}
	t->failing = false;
	t->backoff_ns = 0;
	t->retry_at = 0;
	*sent += (int)count_items(q, pl);
	nfqb_book_release(q, pl);
	return pl->more;
}

int nfqb_tx_flush(struct nfqb_queue *q, enum nfqb_flush_reason why,
		  bool force, uint64_t now)
{
	uint32_t posted = nfqb_posted(&q->post);
	int sent = 0, r, err;

	do {
		r = flush_once(q, force, now, &sent);
	} while (r > 0);
	err = errno;
	if (sent)
		count_flush(q, why);
	if (r < 0) {
		errno = transient(err) ? EAGAIN : err;
		return -1;
	}
	q->tx.posted_seen = posted;
	q->tx.unsent_since = 0;
	return sent;
}
