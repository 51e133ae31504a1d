// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The worker pool (see pool-int.h), dispatch mode: the readers, one per
 * queue, hand each packet by flow to a worker over single-producer
 * single-consumer rings, and send the decisions the workers post.
 */
#include "pool-int.h"

/* --- flow hash (dispatch) --------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t load_be32(const uint8_t *b)
{
	return (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 |
	       (uint64_t)b[2] << 8 | b[3];
}

static bool has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_UDPLITE || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_DCCP;
}

/* Both directions of a flow hash alike: each endpoint (address, port) is
 * mixed alone and the two are combined with a symmetric operation. */
static uint64_t flow_hash(const struct nfqb_pool *pool,
			  const struct nfqb_packet *p)
{
	uint64_t e1 = 0, e2 = 0, proto;
	const uint8_t *d;
	uint32_t len, off, id;

	if ((pool->config.queue_flags & NFQB_F_CONNTRACK) && nfqb_pkt_ct_id(p, &id))
		return mix64(id);
	d = nfqb_pkt_payload(p, &len);
	off = nfqb_pkt_network_offset(p);
	if (!d || off >= len)
		return 0;
	d += off;
	len -= off;
	if (len >= 20 && (d[0] >> 4) == 4) {
		uint32_t ihl = (d[0] & 0x0fu) * 4;
		bool frag = ((d[6] & 0x1f) | d[7]) != 0;

		proto = d[9];
		e1 = load_be32(d + 12) << 16;
		e2 = load_be32(d + 16) << 16;
		if (!frag && !(d[6] & 0x20) && has_ports((uint8_t)proto) &&
		    ihl >= 20 && len >= ihl + 4) {
			e1 |= (uint64_t)d[ihl] << 8 | d[ihl + 1];
			e2 |= (uint64_t)d[ihl + 2] << 8 | d[ihl + 3];
		}
	} else if (len >= 40 && (d[0] >> 4) == 6) {
		unsigned int i;

		proto = d[6];
		for (i = 0; i < 16; i += 4) {
			e1 = mix64(e1 ^ load_be32(d + 8 + i));
			e2 = mix64(e2 ^ load_be32(d + 24 + i));
		}
		if (has_ports((uint8_t)proto) && len >= 44) {
			e1 = e1 << 16 | ((uint64_t)d[40] << 8 | d[41]);
			e2 = e2 << 16 | ((uint64_t)d[42] << 8 | d[43]);
		}
	} else {
		return 0;
	}
	return mix64(mix64(e1) ^ mix64(e2) ^ proto);
}

/* --- rings ------------------------------------------------------------- */

static bool ring_push(struct pool_ring *r, struct nfqb_packet *p)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

	if (t - h > r->mask)
		return false;
	r->v[t & r->mask] = p;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

unsigned int pool_ring_pop(struct pool_ring *r, struct nfqb_packet **out,
			   unsigned int max)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	unsigned int n = 0;

	while (h != t && n < max)
		out[n++] = r->v[h++ & r->mask];
	if (n)
		atomic_store_explicit(&r->head, h, memory_order_release);
	return n;
}

uint32_t pool_ring_count(const struct pool_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_acquire);
}

struct pool_ring *pool_ring_of(struct nfqb_pool *pool, unsigned int reader,
			       unsigned int worker)
{
	return &pool->rings[reader * pool->nworkers + worker];
}

/* --- dispatch: readers ---------------------------------------------------- */

static void wake_workers(struct nfqb_pool *pool, const bool *touched)
{
	unsigned int w;

	atomic_thread_fence(memory_order_seq_cst);
	for (w = 0; w < pool->nworkers; w++)
		if (!touched || touched[w])
			pool_thread_wake(&pool->threads[w]);
}

/* What a reader holds: the packets of its last read, up to @cnt, of which
 * those before @pos are in the rings. */
struct reader {
	struct pool_thread *t;
	struct nfqb_queue *q;
	struct nfqb_packet *vec[POOL_VEC];
	unsigned int dest[POOL_VEC];
	unsigned int pos, cnt;
	bool *touched;		/* workers whose ring got packets */
};

/* Hand on what is waiting; false if a ring is full. */
static bool reader_push(struct reader *rd)
{
	struct nfqb_pool *pool = rd->t->pool;

	while (rd->pos < rd->cnt) {
		unsigned int w = rd->dest[rd->pos];

		if (!ring_push(pool_ring_of(pool, rd->t->index, w),
			       rd->vec[rd->pos]))
			return false;
		rd->touched[w] = true;
		rd->pos++;
	}
	return true;
}

/* Read and hand on by flow: the packets read, or -1 with errno. */
static int reader_read(struct reader *rd, bool *blocked)
{
	struct pool_thread *t = rd->t;
	struct nfqb_pool *pool = t->pool;
	unsigned int i;
	int n = nfqb_recv(rd->q, rd->vec, POOL_VEC);

	if (n <= 0)
		return n;
	rd->cnt = (unsigned int)n;
	rd->pos = 0;
	pool_count(t, PSTAT(received), rd->cnt);
	pool_count(t, PSTAT(batches), 1);
	for (i = 0; i < rd->cnt; i++)
		rd->dest[i] = (unsigned int)(((flow_hash(pool, rd->vec[i]) >>
					       32) * pool->nworkers) >> 32);
	*blocked = !reader_push(rd);
	return n;
}

static bool reader_posted(struct pool_thread *t)
{
	return atomic_load(&t->posted) != t->posted_seen;
}

/* Sleep until packets come, workers post decisions (which also frees ring
 * room), a timer is due, or stop. ENOSPC (ENOMEM): the buffers are with
 * the workers and the application; their decisions wake us, not the
 * socket. */
static void reader_sleep(struct reader *rd, bool blocked, bool starved)
{
	struct pool_thread *t = rd->t;
	struct pool_doze z = {
		.q = rd->q,
		.readable = !blocked && !starved,
		.tmo = blocked ? POOL_BLOCKED_POLL_MS :
				 pool_sleep_timeout(t, rd->q),
		.busy = reader_posted,
	};

	pool_queue_snapshot(t, rd->q, false);
	pool_stats_publish(t);
	pool_thread_doze(t, &z);
	t->posted_seen = atomic_load(&t->posted);
}

/* One round: hand on, read, sleep. False when the reader must stop. */
static bool reader_round(struct reader *rd)
{
	struct pool_thread *t = rd->t;
	bool blocked;
	int n = -1;

	memset(rd->touched, 0, t->pool->nworkers * sizeof(*rd->touched));
	blocked = !reader_push(rd);	/* what waits after a full ring */
	errno = EAGAIN;
	if (!blocked)
		n = reader_read(rd, &blocked);
	else if (nfqb_flush(rd->q) < 0 && !pool_transient(errno))
		n = -1;		/* with the flush's errno */
	else
		errno = EAGAIN;	/* blocked: wait for ring room */
	if (blocked)
		pool_count(t, PSTAT(dispatch_full), 1);
	wake_workers(t->pool, rd->touched);
	if (n > 0 && !blocked)
		return true;
	if (n < 0 && !pool_transient(errno)) {
		pool_thread_fail(t, errno);
		return false;
	}
	if (n < 0 && (errno == EINTR || errno == ENOBUFS))
		return true;
	reader_sleep(rd, blocked, !blocked && n < 0 && errno != EAGAIN);
	return true;
}

static bool workers_running(struct pool_thread *t)
{
	return atomic_load(&t->pool->workers_exited) < t->pool->nworkers;
}

static bool workers_gone(struct pool_thread *t)
{
	return !workers_running(t);
}

void pool_reader_done(struct pool_thread *t)
{
	atomic_store(&t->done_pushing, true);
	wake_workers(t->pool, NULL);
}

/* Stop: the default verdict for what was never handed to a worker; the
 * workers decide what they hold, then exit; then the queue is finished. */
static void reader_finish(struct reader *rd)
{
	struct pool_thread *t = rd->t;
	struct nfqb_pool *pool = t->pool;
	struct pool_doze z = { .q = rd->q, .tmo = 10, .busy = workers_gone };

	for (; rd->pos < rd->cnt; rd->pos++) {
		nfqb_verdict(rd->vec[rd->pos], pool->default_verdict);
		pool_count(t, PSTAT(defaults), 1);
	}
	pool_reader_done(t);
	while (workers_running(t)) {
		if (nfqb_flush(rd->q) < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			break;
		}
		if (!pool_thread_doze(t, &z))
			break;
	}
	pool_drain_deferred(t, rd->q);
	pool_queue_end(t, rd->q);
}

void *pool_reader_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	bool touched[pool->nworkers];
	struct reader rd = {
		.t = t,
		.q = pool->queues[t->qi],
		.touched = touched,
	};

	pool_thread_setup(t);
	while (!pool_stopping(pool))
		if (!reader_round(&rd))
			break;
	reader_finish(&rd);
	return NULL;
}
