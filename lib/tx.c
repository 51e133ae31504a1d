// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transport: the only code that sends. It owns the send buffer, builds
 * the planner's messages into it, sends them in one sendmsg, and releases
 * the packets they decide only once the kernel took them. A send that
 * fails sends nothing more and releases nothing: every decision stays in
 * the book, so no later message can reach a packet whose own verdict was
 * not taken, and the next flush (a timer with backoff, or the
 * application's) plans and sends it again.
 *
 * It also does the configuration round trips: send a request with
 * NLM_F_ACK, read the socket (rx.c) until its acknowledgement comes, into
 * spare buffers if the application holds every receive buffer, and send
 * it again if the socket overflowed or stayed quiet (the ack may be lost).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "internal.h"

void nfqb_count_verdict(struct nfqb_queue *q, const struct nfqb_decision *d,
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

static ssize_t send_buf(struct nfqb_queue *q, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = {
		.msg_name = &sa,
		.msg_namelen = sizeof(sa),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	ssize_t r;

	r = nfqb_sys_sendmsg(q->fd, &m, 0);
	nfqb_stat_inc(q, send_calls);
	if (r >= 0 && (size_t)r != len) {
		/* a netlink datagram is taken whole or not at all */
		errno = EAGAIN;
		return -1;
	}
	return r;
}

static size_t build_items(struct nfqb_queue *q, const struct nfqb_plan *pl)
{
	unsigned char *buf = q->tx.buf;
	size_t len = 0;
	unsigned int i;
	uint32_t k;

	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];
		const uint32_t *mark = it->d->flags & NFQB_V_MARK ?
				       &it->d->mark : NULL;

		switch (it->type) {
		case NFQB_I_SINGLE:
			len += nfqb_msg_verdict(buf + len, ++q->seq, q->num,
						it->id, it->d);
			break;
		case NFQB_I_BATCH:
			len += nfqb_msg_verdict_batch(buf + len, ++q->seq,
						      q->num, it->id,
						      it->d->verdict, mark);
			break;
		case NFQB_I_GAP:
			for (k = 0; k < it->count; k++)
				len += nfqb_msg_verdict(buf + len, ++q->seq,
							q->num, it->id + k,
							it->d);
			break;
		}
	}
	return len;
}

static void release_entry(struct nfqb_queue *q, struct nfqb_entry *e)
{
	if (e->kind == NFQB_E_PKT)
		nfqb_pkt_put(q, e->p);
	if (e->kind == NFQB_E_PKT || e->kind == NFQB_E_DEFAULT)
		nfqb_stat_sub(q, outstanding, 1);
	e->kind = NFQB_E_DONE;
	e->p = NULL;
}

/* The kernel took the plan: what it decided is done. */
static unsigned int release_items(struct nfqb_queue *q,
				  const struct nfqb_plan *pl)
{
	struct nfqb_book *b = &q->book;
	unsigned int i, msgs = 0;
	uint32_t k;

	for (i = 0; i < pl->nitems; i++) {
		const struct nfqb_item *it = &pl->items[i];
		struct nfqb_entry *e = nfqb_book_at(b, it->first);

		nfqb_count_verdict(q, it->d, it->count);
		switch (it->type) {
		case NFQB_I_SINGLE:
			nfqb_stat_inc(q, verdict_msgs);
			msgs++;
			release_entry(q, e);
			break;
		case NFQB_I_BATCH:
			nfqb_stat_inc(q, batch_msgs);
			nfqb_stat_add(q, batch_packets, it->count);
			msgs++;
			for (k = it->first; k != it->last + 1; k++) {
				e = nfqb_book_at(b, k);
				if (e->kind == NFQB_E_PKT ||
				    e->kind == NFQB_E_DEFAULT ||
				    e->kind == NFQB_E_GAP_HEAD)
					release_entry(q, e);
			}
			break;
		case NFQB_I_GAP:
			nfqb_stat_add(q, verdict_msgs, it->count);
			msgs += it->count;
			e->id += it->count;
			e->n -= it->count;
			if (!e->n)
				e->kind = NFQB_E_DONE;
			break;
		}
	}
	nfqb_book_trim(b);
	return msgs;
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
	const struct nfqb_decision dflt = { .verdict = q->default_verdict };
	uint64_t lat = q->latency_us * 1000ull;
	struct nfqb_plan_in in = {
		.book = &q->book,
		.dflt = &dflt,
		.singles = q->fallback || !q->coalesce,
		.force = force,
		.held_cutoff = now > lat ? now - lat : 0,
		.budget = NFQB_TX_SIZE,
	};
	struct nfqb_plan *pl = &q->tx.plan;
	int tries = 0;
	size_t len;

	nfqb_plan(&in, pl);
	q->held_due = pl->held ? pl->oldest_held_ns + lat : 0;
	if (!pl->nitems)
		return 0;
	len = build_items(q, pl);
	while (send_buf(q, q->tx.buf, len) < 0) {
		if (errno == EINTR && ++tries < 3)
			continue;
		send_failed(q, now);
		return -1;
	}
	q->tx.failing = false;
	q->tx.backoff_ns = 0;
	q->tx.retry_at = 0;
	*sent += (int)release_items(q, pl);
	return pl->more;
}

int nfqb_tx_flush(struct nfqb_queue *q, enum nfqb_flush_reason why,
		  bool force, uint64_t now)
{
	uint32_t posted = atomic_load_explicit(&q->posted, memory_order_acquire);
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
	q->posted_seen = posted;
	q->unsent_since = 0;
	return sent;
}

static int send_config(struct nfqb_queue *q, nfqb_cfg_build build,
		       const void *arg)
{
	unsigned char buf[512];
	uint32_t seq = ++q->seq;
	size_t len = build(buf, seq, q, arg);
	int tries = 0;

	if (!q->ack.first_seq)
		q->ack.first_seq = seq;
	q->ack.last_seq = seq;
	while (send_buf(q, buf, len) < 0) {
		struct timespec ts = { .tv_nsec = 1000000 };

		if (!transient(errno) || ++tries > 50)
			return -1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Read what the socket has, into spare buffers if need be. */
static void config_read(struct nfqb_queue *q)
{
	int r;

	do {
		r = nfqb_rx_read(q, q->vlen, true);
	} while (r > 0 && !q->ack.done);
}

int nfqb_tx_config(struct nfqb_queue *q, nfqb_cfg_build build,
		   const void *arg)
{
	uint64_t start = nfqb_now_ns(), now = start;
	uint64_t deadline = start + NFQB_CONFIG_TIMEOUT_MS * 1000000ull;
	int err;

	if (q->detached || q->fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	q->ack.first_seq = 0;
	q->ack.done = false;
	q->ack.err = 0;
	q->ack.overflow = false;
	if (send_config(q, build, arg) < 0)
		goto out;
	while (!q->ack.done && now < deadline) {
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		int ms = (int)((deadline - now) / 1000000) + 1;
		int r;

		if (ms > NFQB_CONFIG_RESEND_MS)
			ms = NFQB_CONFIG_RESEND_MS;
		r = poll(&pfd, 1, ms);
		if (r > 0)
			config_read(q);
		if (!q->ack.done && (r == 0 || q->ack.overflow)) {
			/* quiet, or overflowed: the ack may be lost */
			q->ack.overflow = false;
			nfqb_stat_inc(q, config_resends);
			if (send_config(q, build, arg) < 0)
				goto out;
		}
		now = nfqb_now_ns();
	}
	if (!q->ack.done)
		errno = ETIMEDOUT;
	else if (q->ack.err)
		errno = q->ack.err;
out:
	err = errno;
	q->ack.first_seq = 0;
	if (q->ack.done && !q->ack.err)
		return 0;
	errno = err;
	return -1;
}
