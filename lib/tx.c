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

#include "msg.h"
#include "post.h"
#include "settings.h"
#include "sys.h"
#include "tx.h"

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

int nfqb_tx_send(int fd, const void *buf, size_t len,
		 struct nfqb_counters *ctr)
{
	nfqb_stat_inc(ctr, send_calls);
	return nfqb_sys_send_kernel(fd, buf, len);
}

uint32_t nfqb_tx_posted(const struct nfqb_tx_in *in)
{
	return nfqb_post_count(in->post) + in->book->defaulted;
}

/* When the next flush is due with @unsent decisions not sent yet. */
static uint64_t due(const struct nfqb_tx *t, const struct nfqb_tx_in *in,
		    uint32_t unsent, uint64_t now)
{
	uint64_t since = t->unsent_since ? t->unsent_since : now;
	uint64_t lat = since + in->set->latency_us * 1000ull;

	if (t->failing)
		return t->retry_at;
	if (!unsent || (t->held_due && t->held_due < lat))
		return t->held_due;
	return lat;
}

uint64_t nfqb_tx_due(const struct nfqb_tx *t, const struct nfqb_tx_in *in,
		     uint64_t now)
{
	return due(t, in, nfqb_tx_posted(in) - t->posted_seen, now);
}

/* Plan once and send it; 1 if there is more, 0 if done, -1 on failure. */
static int flush_once(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		      bool force, uint64_t now, int *sent)
{
	const struct nfqb_decision dflt = {
		.verdict = in->set->default_verdict,
	};
	uint64_t lat = in->set->latency_us * 1000ull;
	/* flags to turn off go after the verdicts, in the same datagram */
	size_t ctl = t->flags_off ? NFQB_MSG_CONFIG_FLAGS_SIZE : 0, len;
	struct nfqb_plan_in pin = {
		.book = in->book,
		.dflt = &dflt,
		.singles = in->book->fallback || !in->set->coalesce,
		.force = force,
		.held_cutoff = now > lat ? now - lat : 0,
		.budget = NFQB_TX_SIZE - ctl,
	};
	struct nfqb_plan *pl = &t->plan;
	int tries = 0, r;

	nfqb_plan(&pin, pl);
	t->held_due = pl->held ? pl->oldest_held_ns + lat : 0;
	if (!pl->nitems && !ctl)
		return 0;
	len = nfqb_plan_write(pl, t->buf, &t->seq, in->sk->num);
	if (ctl)
		len += nfqb_msg_config_flags_quiet(t->buf + len, ++t->seq,
						   in->sk->num, 0,
						   t->flags_off);
	do {	/* a signal is retried */
		r = nfqb_tx_send(in->sk->fd, t->buf, len, in->ctr);
	} while (r < 0 && errno == EINTR && ++tries < 3);
	if (r < 0)
		return -1;
	t->failing = false;
	t->backoff_ns = 0;
	t->retry_at = 0;
	if (t->flags_off & NFQB_F_GSO)
		nfqb_stat_inc(in->ctr, gso_off);
	t->flags_off = 0;
	*sent += (int)(pl->singles + pl->batches);
	nfqb_stat_add(in->ctr, verdict_msgs, pl->singles);
	nfqb_stat_add(in->ctr, batch_msgs, pl->batches);
	nfqb_stat_add(in->ctr, batch_packets, pl->batched);
	nfqb_book_sent(in->book, in->book_in, pl->items, pl->nitems);
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

int nfqb_tx_flush(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		  enum nfqb_flush_reason why, bool force, uint64_t now)
{
	uint32_t posted = nfqb_tx_posted(in);
	int sent = 0, r, err;

	do {
		r = flush_once(t, in, force, now, &sent);
	} while (r > 0);
	err = errno;
	if (sent) {
		nfqb_stat_inc(in->ctr, flushes);
		in->ctr->v[reason_stat[why]] += 1;
	}
	if (r < 0) {
		/* retried from retry_at on, backing off */
		nfqb_stat_inc(in->ctr, send_failures);
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
static bool due_now(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		    uint32_t unsent, uint64_t now, bool hold,
		    enum nfqb_flush_reason *why)
{
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
	if (unsent >= nfqb_hold_limit(in->set))
		return true;
	*why = NFQB_FLUSH_LATENCY;
	if (now - t->unsent_since >= in->set->latency_us * 1000ull)
		return true;
	*why = NFQB_FLUSH_IDLE;
	return !hold;
}

int nfqb_tx_flush_due(struct nfqb_tx *t, const struct nfqb_tx_in *in,
		      uint64_t now, bool hold, uint32_t flags_off)
{
	uint32_t unsent = nfqb_tx_posted(in) - t->posted_seen;
	enum nfqb_flush_reason why;

	t->flags_off |= flags_off;
	if (!due_now(t, in, unsent, now, hold, &why)) {
		if (!t->flags_off || t->failing) {
			t->due = due(t, in, unsent, now);
			return 0;
		}
		why = NFQB_FLUSH_IDLE;	/* flags to send: at once */
	}
	return nfqb_tx_flush(t, in, why, false, now);
}
