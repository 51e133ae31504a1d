// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The coalescer: decisions are recorded (from any thread), and the queue's
 * owner turns them into as few verdict messages as is safe.
 *
 * A NFQNL_MSG_VERDICT_BATCH(max, verdict, mark) reaches every packet still
 * queued in the kernel with an id not after max. So on flush:
 *  1. a decision a batch cannot carry (payload, priority, queue-to-N) goes
 *     out as a single verdict, before any batch whose span covers it;
 *  2. the decided prefix (oldest outstanding up to the first undecided) is
 *     cut into runs of equal (verdict, mark), each sent as one batch with
 *     the run's last id (a run of one as a single verdict), oldest first;
 *  3. everything of one flush leaves in one sendmsg.
 * Decided packets behind an undecided one wait, at most the latency bound,
 * then go out as single verdicts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "internal.h"

int nfqb_ring_push(struct nfqb_queue *q, struct nfqb_packet *p)
{
	struct nfqb_ring *r = &q->ring;

	if (r->tail - r->head >= r->cap) {
		/* compact holes left by single verdicts before giving up */
		uint32_t i, j = r->head;

		for (i = r->head; i != r->tail; i++) {
			struct nfqb_packet *e = r->v[i & (r->cap - 1)];

			if (e)
				r->v[j++ & (r->cap - 1)] = e;
		}
		r->tail = j;
		if (r->tail - r->head >= r->cap) {
			errno = ENOSPC;
			return -1;
		}
	}
	r->v[r->tail++ & (r->cap - 1)] = p;
	return 0;
}

int nfqb_tx_reserve(struct nfqb_queue *q, size_t len, void **out)
{
	struct nfqb_txbuf *t = &q->tx;

	if (t->len && t->len + len > NFQB_TX_CHUNK && nfqb_tx_send(q) < 0)
		return -1;
	if (t->len + len > t->cap) {
		size_t cap = t->cap ? t->cap : 16384;
		unsigned char *b;

		while (cap < t->len + len)
			cap *= 2;
		b = realloc(t->buf, cap);
		if (!b)
			return -1;
		t->buf = b;
		t->cap = cap;
	}
	*out = t->buf + t->len;
	return 0;
}

int nfqb_tx_send(struct nfqb_queue *q)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfqb_txbuf *t = &q->tx;
	int tries = 0;
	ssize_t r;

	if (!t->len)
		return 0;
	if (q->tx_hook) {
		r = q->tx_hook(q, t->buf, t->len, q->tx_hook_data);
		nfqb_stat_inc(q, send_calls);
		t->len = 0;
		t->nmsgs = 0;
		return r < 0 ? -1 : 0;
	}
	for (;;) {
		r = sendto(q->fd, t->buf, t->len, 0, (struct sockaddr *)&sa,
			   sizeof(sa));
		nfqb_stat_inc(q, send_calls);
		if (r >= 0 || (errno != EINTR && errno != ENOBUFS &&
			       errno != ENOMEM && errno != EAGAIN) ||
		    ++tries > 3)
			break;
	}
	t->len = 0;
	t->nmsgs = 0;
	return r < 0 ? -1 : 0;
}

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

static int emit_single(struct nfqb_queue *q, uint32_t id,
		       const struct nfqb_decision *d)
{
	void *out;

	if (nfqb_tx_reserve(q, nfqb_msg_verdict_size(d->payload_len), &out) < 0)
		return -1;
	q->tx.len += nfqb_msg_verdict(out, ++q->seq, q->num, id, d);
	q->tx.nmsgs++;
	nfqb_stat_inc(q, verdict_msgs);
	nfqb_count_verdict(q, d, 1);
	return 0;
}

struct run {
	uint32_t n;
	uint32_t last_id;
	struct nfqb_decision d;		/* verdict, flags & NFQB_V_MARK, mark */
};

static int emit_run(struct nfqb_queue *q, struct run *r)
{
	void *out;

	if (!r->n)
		return 0;
	if (r->n == 1) {
		if (emit_single(q, r->last_id, &r->d) < 0)
			return -1;
		r->n = 0;
		return 0;
	}
	if (nfqb_tx_reserve(q, nfqb_msg_verdict_size(0), &out) < 0)
		return -1;
	q->tx.len += nfqb_msg_verdict_batch(out, ++q->seq, q->num, r->last_id,
					    r->d.verdict,
					    (r->d.flags & NFQB_V_MARK) ?
					    &r->d.mark : NULL);
	q->tx.nmsgs++;
	nfqb_stat_inc(q, batch_msgs);
	nfqb_stat_add(q, batch_packets, r->n);
	nfqb_count_verdict(q, &r->d, r->n);
	r->n = 0;
	return 0;
}

static bool run_takes(const struct run *r, const struct nfqb_decision *d)
{
	if (!r->n || r->d.verdict != d->verdict)
		return false;
	if ((r->d.flags & NFQB_V_MARK) != (d->flags & NFQB_V_MARK))
		return false;
	return !(d->flags & NFQB_V_MARK) || r->d.mark == d->mark;
}

static void ring_trim(struct nfqb_ring *r)
{
	while (r->head != r->tail && !r->v[r->head & (r->cap - 1)])
		r->head++;
	if (r->head == r->tail)
		r->head = r->tail = 0;
}

/*
 * One pass over the outstanding packets. @force sends every decided packet,
 * even those behind an undecided one (as single verdicts).
 */
static int flush_pass(struct nfqb_queue *q, bool force)
{
	struct nfqb_ring *r = &q->ring;
	bool singles = q->fallback || !q->coalesce;
	bool prefix = true;
	struct run run = { 0 };
	uint64_t oldest_held = 0;
	uint32_t i;

	q->held = 0;
	for (i = r->head; i != r->tail; i++) {
		struct nfqb_packet **slot = &r->v[i & (r->cap - 1)];
		struct nfqb_packet *p = *slot;
		uint32_t st;

		if (!p)
			continue;
		st = atomic_load_explicit(&p->state, memory_order_acquire);
		if (st != NFQB_PS_DECIDED) {
			if (prefix && emit_run(q, &run) < 0)
				return -1;
			prefix = false;
			continue;
		}
		if (singles || (p->d.flags & NFQB_D_SINGLE) ||
		    (!prefix && force)) {
			if (emit_single(q, p->id, &p->d) < 0)
				return -1;
		} else if (!prefix) {
			q->held++;
			if (!oldest_held || p->decided_ns < oldest_held)
				oldest_held = p->decided_ns;
			continue;
		} else if (run_takes(&run, &p->d)) {
			run.n++;
			run.last_id = p->id;
		} else {
			if (emit_run(q, &run) < 0)
				return -1;
			run.n = 1;
			run.last_id = p->id;
			run.d.verdict = p->d.verdict;
			run.d.flags = p->d.flags & NFQB_V_MARK;
			run.d.mark = p->d.mark;
		}
		*slot = NULL;
		nfqb_pkt_release(q, p);
	}
	if (emit_run(q, &run) < 0)
		return -1;
	ring_trim(r);
	if (q->held) {
		uint64_t due = oldest_held + q->latency_us * 1000ull;

		if (!q->next_timer_ns || due < q->next_timer_ns)
			q->next_timer_ns = due;
	}
	return 0;
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

int nfqb_coalesce_flush(struct nfqb_queue *q, enum nfqb_flush_reason why)
{
	uint32_t posted = atomic_load_explicit(&q->posted,
					       memory_order_acquire);
	unsigned int before = q->tx.nmsgs;
	unsigned int sends;
	int ret;

	sends = (unsigned int)atomic_load_explicit(
			&q->ctr.v[NFQB_STAT_IDX(send_calls)],
			memory_order_relaxed);
	if (flush_pass(q, why == NFQB_FLUSH_CLOSE) < 0)
		return -1;
	atomic_store_explicit(&q->posted_seen, posted, memory_order_relaxed);
	q->unsent_since = 0;
	if (q->tx.nmsgs != before ||
	    sends != atomic_load_explicit(&q->ctr.v[NFQB_STAT_IDX(send_calls)],
					  memory_order_relaxed))
		count_flush(q, why);
	ret = q->tx.nmsgs;
	if (nfqb_tx_send(q) < 0)
		return -1;
	return ret;
}

int nfqb_coalesce_next_timeout(const struct nfqb_queue *q, uint64_t now)
{
	uint64_t due = q->next_timer_ns;

	if (atomic_load_explicit(&q->posted, memory_order_relaxed) !=
	    q->posted_seen) {
		uint64_t lat = (q->unsent_since ? q->unsent_since : now) +
			       q->latency_us * 1000ull;

		if (!due || lat < due)
			due = lat;
	}
	if (!due)
		return -1;
	if (due <= now)
		return 0;
	return (int)((due - now + 999999) / 1000000);
}

static void sweep_zombies(struct nfqb_queue *q, bool all)
{
	struct nfqb_packet **pp = &q->zombies;

	while (*pp) {
		struct nfqb_packet *p = *pp;

		if (all || atomic_load_explicit(&p->state, memory_order_acquire) ==
		    NFQB_PS_RELEASED) {
			*pp = p->next_free;
			nfqb_pkt_release(q, p);
		} else {
			pp = &p->next_free;
		}
	}
}

int nfqb_coalesce_timers(struct nfqb_queue *q, uint64_t now)
{
	struct nfqb_ring *r = &q->ring;
	uint64_t tmo = q->timeout_ms * 1000000ull;
	uint64_t lat = q->latency_us * 1000ull;
	uint64_t next = 0;
	bool prefix = true;
	unsigned int before = q->tx.nmsgs;
	uint32_t i;

	if (q->zombies)
		sweep_zombies(q, false);
	if (!tmo && !q->held)
		return 0;
	if (q->next_timer_ns && now < q->next_timer_ns)
		return 0;
	q->next_timer_ns = 0;
	q->held = 0;
	for (i = r->head; i != r->tail; i++) {
		struct nfqb_packet **slot = &r->v[i & (r->cap - 1)];
		struct nfqb_packet *p = *slot;
		uint32_t st;
		uint64_t due;

		if (!p)
			continue;
		st = atomic_load_explicit(&p->state, memory_order_acquire);
		if (st == NFQB_PS_PENDING && tmo) {
			struct nfqb_decision d = { .verdict = q->default_verdict };
			uint32_t exp = NFQB_PS_PENDING;

			due = p->arrival_ns + tmo;
			if (due > now) {
				if (!next || due < next)
					next = due;
				prefix = false;
				continue;
			}
			if (!atomic_compare_exchange_strong(&p->state, &exp,
							    NFQB_PS_SENT)) {
				prefix = false;
				continue;
			}
			if (emit_single(q, p->id, &d) < 0)
				return -1;
			nfqb_stat_inc(q, timeouts);
			p->expired = true;
			*slot = NULL;
			p->next_free = q->zombies;
			q->zombies = p;
			continue;
		}
		if (st != NFQB_PS_DECIDED) {
			prefix = false;
			continue;
		}
		if (prefix)
			continue;	/* the next flush sends it */
		due = p->decided_ns + lat;
		if (due > now) {
			q->held++;
			if (!next || due < next)
				next = due;
			continue;
		}
		if (emit_single(q, p->id, &p->d) < 0)
			return -1;
		*slot = NULL;
		nfqb_pkt_release(q, p);
	}
	ring_trim(r);
	q->next_timer_ns = next;
	if (q->tx.nmsgs != before) {
		count_flush(q, NFQB_FLUSH_LATENCY);
		return nfqb_tx_send(q);
	}
	return 0;
}

/*
 * Record a decision. Another thread may be closing the queue as soon as it
 * sees the decision: a deciding thread other than the owner holds
 * q->inflight across every access to the queue, and close waits for it.
 */
static int decide(struct nfqb_packet *p, const struct nfqb_decision *d)
{
	struct nfqb_queue *q = p->q;
	uint32_t exp = NFQB_PS_PENDING;
	bool owner = atomic_load_explicit(&q->owner, memory_order_relaxed) ==
		     (unsigned long)pthread_self();
	uint32_t old;
	int ret = 0;

	if (!owner)
		atomic_fetch_add_explicit(&q->inflight, 1, memory_order_acquire);
	if (!atomic_compare_exchange_strong_explicit(&p->state, &exp,
						     NFQB_PS_CLAIMED,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		if (exp == NFQB_PS_SENT) {
			atomic_store_explicit(&p->state, NFQB_PS_RELEASED,
					      memory_order_release);
			errno = ETIMEDOUT;
		} else {
			errno = EALREADY;
		}
		ret = -1;
		goto out;
	}
	p->d = *d;
	p->decided_ns = nfqb_now_ns();
	atomic_store_explicit(&p->state, NFQB_PS_DECIDED, memory_order_release);
	old = atomic_fetch_add_explicit(&q->posted, 1, memory_order_seq_cst);
	if (owner)
		return 0;	/* the owner flushes at its next nfqb_recv() */
	/* wake the owner: it waits in nfqb_recv(), or polls nfqb_queue_fd()
	 * and this is the first decision since its last flush (a race here
	 * only costs the latency bound: nfqb_queue_next_timeout() covers it) */
	if (atomic_load(&q->sleeping) ||
	    (q->nonblock &&
	     old == atomic_load_explicit(&q->posted_seen,
					 memory_order_relaxed))) {
		uint64_t one = 1;

		if (!atomic_exchange(&q->wake_pending, true) &&
		    write(q->evfd, &one, sizeof(one)) < 0)
			ret = 0;	/* already readable */
	}
out:
	if (!owner)
		atomic_fetch_sub_explicit(&q->inflight, 1, memory_order_release);
	return ret;
}

static bool verdict_ok(uint32_t v)
{
	return v == NFQB_ACCEPT || v == NFQB_DROP || v == NFQB_REPEAT;
}

NFQB_EXPORT int nfqb_verdict(struct nfqb_packet *p, uint32_t verdict)
{
	struct nfqb_decision d = { .verdict = verdict };

	if (!verdict_ok(verdict)) {
		errno = EINVAL;
		return -1;
	}
	return decide(p, &d);
}

NFQB_EXPORT int nfqb_verdict_mark(struct nfqb_packet *p, uint32_t verdict,
				  uint32_t mark)
{
	struct nfqb_decision d = {
		.verdict = verdict,
		.flags = NFQB_V_MARK,
		.mark = mark,
	};

	if (!verdict_ok(verdict)) {
		errno = EINVAL;
		return -1;
	}
	return decide(p, &d);
}

NFQB_EXPORT int nfqb_verdict_ex(struct nfqb_packet *p,
				const struct nfqb_verdict *v)
{
	struct nfqb_decision d = { 0 };
	int ret;

	if (!v || (v->flags & ~(NFQB_V_MARK | NFQB_V_PAYLOAD |
				NFQB_V_PRIORITY | NFQB_V_BYPASS))) {
		errno = EINVAL;
		return -1;
	}
	if (v->verdict == NFQB_QUEUE) {
		d.verdict = ((uint32_t)v->queue_num << 16) | NFQB_QUEUE;
		if (v->flags & NFQB_V_BYPASS)
			d.verdict |= 0x8000;	/* NF_VERDICT_FLAG_QUEUE_BYPASS */
		d.flags |= NFQB_D_SINGLE;
	} else if (verdict_ok(v->verdict) && !(v->flags & NFQB_V_BYPASS)) {
		d.verdict = v->verdict;
	} else {
		errno = EINVAL;
		return -1;
	}
	d.flags |= v->flags & (NFQB_V_MARK | NFQB_V_PRIORITY | NFQB_V_PAYLOAD);
	d.mark = v->mark;
	d.priority = v->priority;
	if (v->flags & NFQB_V_PRIORITY)
		d.flags |= NFQB_D_SINGLE;
	if (v->flags & NFQB_V_PAYLOAD) {
		if (!v->payload && v->payload_len) {
			errno = EINVAL;
			return -1;
		}
		/* nla_len is 16 bits and counts its 4-byte header */
		if (v->payload_len > 0xffff - MNL_ATTR_HDRLEN) {
			errno = EMSGSIZE;
			return -1;
		}
		d.payload = malloc(v->payload_len ? v->payload_len : 1);
		if (!d.payload)
			return -1;
		memcpy(d.payload, v->payload, v->payload_len);
		d.payload_len = v->payload_len;
		d.flags |= NFQB_D_SINGLE;
	}
	ret = decide(p, &d);
	if (ret < 0)
		free(d.payload);
	return ret;
}

NFQB_EXPORT int nfqb_verdict_batch(struct nfqb_queue *q, uint32_t max_id,
				   uint32_t verdict, const uint32_t *mark)
{
	struct nfqb_ring *r = &q->ring;
	struct nfqb_decision d = { .verdict = verdict };
	int n = 0;
	uint32_t i;

	if (!verdict_ok(verdict)) {
		errno = EINVAL;
		return -1;
	}
	if (mark) {
		d.flags = NFQB_V_MARK;
		d.mark = *mark;
	}
	for (i = r->head; i != r->tail; i++) {
		struct nfqb_packet *p = r->v[i & (r->cap - 1)];

		if (!p)
			continue;
		if (nfqb_id_after(p->id, max_id))
			break;
		if (decide(p, &d) == 0)
			n++;
	}
	if (!n) {
		errno = ENOENT;
		return -1;
	}
	return n;
}

NFQB_EXPORT int nfqb_flush(struct nfqb_queue *q)
{
	int ret;

	ret = nfqb_coalesce_timers(q, nfqb_now_ns());
	if (ret < 0)
		return -1;
	return nfqb_coalesce_flush(q, NFQB_FLUSH_EXPLICIT);
}

int nfqb_coalesce_finish(struct nfqb_queue *q)
{
	struct nfqb_ring *r = &q->ring;
	struct nfqb_decision d = { .verdict = q->default_verdict };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int rounds;
	int err = 0;
	uint32_t i;

	if (nfqb_coalesce_flush(q, NFQB_FLUSH_CLOSE) < 0)
		err = errno;
	/* let nothing new in while we drain: the kernel applies the default
	 * (fail-open accepts, otherwise drops) past a zero queue length */
	if (!q->detached &&
	    nfqb_config_send(q, buf, nfqb_msg_config_flags(buf, ++q->seq,
			     q->num, d.verdict == NFQB_ACCEPT ?
			     NFQB_F_FAIL_OPEN : 0, NFQB_F_FAIL_OPEN)) == 0)
		nfqb_config_send(q, buf, nfqb_msg_config_maxlen(buf, ++q->seq,
								 q->num, 0));
	/* read what the socket still holds */
	for (rounds = 0; rounds < 100000; rounds++) {
		for (i = r->head; i != r->tail; i++) {
			struct nfqb_packet *p = r->v[i & (r->cap - 1)];

			if (p && decide(p, &d) == 0)
				nfqb_stat_inc(q, defaults);
		}
		q->nready = 0;
		if (nfqb_coalesce_flush(q, NFQB_FLUSH_CLOSE) < 0 && !err)
			err = errno;
		if (q->detached || nfqb_rx(q, q->vlen, false, 0) <= 0)
			break;
	}
	for (i = r->head; i != r->tail; i++) {
		struct nfqb_packet *p = r->v[i & (r->cap - 1)];

		if (p && decide(p, &d) == 0)
			nfqb_stat_inc(q, defaults);
	}
	q->nready = 0;
	if (nfqb_coalesce_flush(q, NFQB_FLUSH_CLOSE) < 0 && !err)
		err = errno;
	sweep_zombies(q, true);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
