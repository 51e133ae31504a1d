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

	if ((pool->cfg.queue_flags & NFQB_F_CONNTRACK) && nfqb_pkt_ct_id(p, &id))
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

void *pool_reader_main(void *arg)
{
	struct pool_thread *t = arg;
	struct nfqb_pool *pool = t->pool;
	struct nfqb_queue *q = pool->queues[t->qi];
	struct nfqb_packet *vec[POOL_VEC];
	unsigned int dest[POOL_VEC];
	unsigned int pos = 0, cnt = 0, i;
	bool touched[pool->nworkers];
	uint64_t seen = 0;

	pool_thread_setup(t);
	while (!pool_stopping(pool)) {
		bool blocked = false, starved = false;
		uint64_t posted;
		int n;

		memset(touched, 0, sizeof(touched));
		/* hand on what is waiting (after a full ring) */
		while (pos < cnt) {
			if (!ring_push(pool_ring_of(pool, t->index, dest[pos]),
				       vec[pos])) {
				blocked = true;
				break;
			}
			touched[dest[pos]] = true;
			pos++;
		}
		n = -1;
		errno = EAGAIN;
		if (!blocked) {
			n = nfqb_recv(q, vec, POOL_VEC);
			if (n > 0) {
				cnt = (unsigned int)n;
				pos = 0;
				t->loc[PSTAT(received)] += cnt;
				t->loc[PSTAT(batches)]++;
				for (i = 0; i < cnt; i++)
					dest[i] = (unsigned int)
						(((flow_hash(pool, vec[i]) >> 32) *
						  pool->nworkers) >> 32);
				while (pos < cnt) {
					if (!ring_push(pool_ring_of(pool, t->index,
							       dest[pos]),
						       vec[pos])) {
						blocked = true;
						break;
					}
					touched[dest[pos]] = true;
					pos++;
				}
			}
		} else if (nfqb_flush(q) < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			break;
		} else {
			errno = EAGAIN;	/* blocked: wait for ring room */
		}
		if (blocked)
			t->loc[PSTAT(dispatch_full)]++;
		wake_workers(pool, touched);
		if (n > 0 && !blocked)
			continue;
		if (n < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			break;
		}
		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		/* ENOSPC (ENOMEM): the buffers are with the workers and the
		 * application; their decisions wake us, not the socket */
		starved = !blocked && n < 0 && errno != EAGAIN;
		pool_queue_snapshot(t, q, false);
		pool_stats_publish(t);
		/* sleep until packets come, workers post decisions (which
		 * also frees ring room), a timer is due, or stop */
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		posted = atomic_load(&t->posted);
		if (posted != seen) {
			seen = posted;
			atomic_store(&t->sleeping, false);
			continue;
		}
		pool_thread_sleep(t, q, !blocked && !starved,
				  blocked ? POOL_BLOCKED_POLL_MS :
					    pool_sleep_timeout(t, q));
		seen = atomic_load(&t->posted);
	}
	/* what was never handed to a worker: the default verdict */
	for (; pos < cnt; pos++) {
		nfqb_verdict(vec[pos], pool->default_verdict);
		t->loc[PSTAT(defaults)]++;
	}
	atomic_store(&t->done_pushing, true);
	wake_workers(pool, NULL);
	/* the workers decide what they hold, then exit */
	for (i = 0; atomic_load(&pool->workers_exited) < pool->nworkers; i++) {
		if (nfqb_flush(q) < 0 && !pool_transient(errno)) {
			pool_thread_fail(t, errno);
			break;
		}
		atomic_store(&t->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&pool->workers_exited) >= pool->nworkers)
			break;
		pool_thread_sleep(t, q, false, 10);
	}
	atomic_store(&t->sleeping, false);
	pool_drain_deferred(t, q);
	pool_queue_finish(t, q);
	return NULL;
}
