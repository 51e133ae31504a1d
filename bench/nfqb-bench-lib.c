/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the libnfq-batch consumers, written as an application would
 * use the library (public header only).
 *
 * all:   nfqb_recv() a vector, nfqb_verdict(accept) each packet in order.
 * mixed: every packet whose seq is a multiple of 13 dropped, the others
 *        accepted with a mark per flow (from the source address), decided
 *        in reverse order within each received vector.
 * pool2: two queues (flows split by source address) served by the
 *        library's worker pool in queue-per-worker mode (a worker thread
 *        owns each queue), its callback accepting every packet.
 *
 * Every one sets the queues' NFQB_F_GSO as asked (cfg->gso; the pool
 * through queue_flags and queue_flags_off), and in TCP mode counts the
 * packets marked GSO and the bytes queued.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

#include "nfqb-bench-cons.h"
#include "nfqb-bench-lib.h"
#include "nfqb-bench-traffic.h"

struct lib_worker {
	struct nfqb_queue *q;
	bool mixed;
	bool count;			/* TCP mode: GSO packets and bytes */
	uint64_t gso_packets, bytes;
	uint64_t packets;
	uint64_t enobufs;
	int err;
	const char *what;
};

static struct nfqb_queue *lib_open(const struct bench_cfg *cfg, uint16_t num,
				   struct bench_cons *c)
{
	struct nfqb_queue *q;

	q = nfqb_queue_open(num);
	if (!q) {
		bench_cons_fail(c, "nfqb_queue_open", errno);
		return NULL;
	}
	if (nfqb_queue_set_maxlen(q, cfg->maxlen) < 0 ||
	    nfqb_queue_set_rcvbuf(q, cfg->rcvbuf) < 0 ||
	    nfqb_queue_set_batch_limit(q, cfg->batch) < 0 ||
	    (cfg->window + BENCH_VEC > 1024 &&
	     nfqb_queue_set_buffers(q, cfg->window + BENCH_VEC) < 0)) {
		bench_cons_fail(c, "queue setup", errno);
		nfqb_queue_close(q);
		return NULL;
	}
	if (cfg->gso >= 0 &&
	    nfqb_queue_set_flags(q, cfg->gso ? NFQB_F_GSO : 0,
				 NFQB_F_GSO) < 0) {
		bench_cons_fail(c, "nfqb_queue_set_flags(GSO)", errno);
		nfqb_queue_close(q);
		return NULL;
	}
	/* NFQB_BENCH_LINGER=<us>: a fixed linger instead of the default
	 * (adaptive), to compare the two in one build */
	if (getenv("NFQB_BENCH_LINGER") &&
	    nfqb_queue_set_linger(q, (uint32_t)strtoul(
			getenv("NFQB_BENCH_LINGER"), NULL, 10)) < 0) {
		bench_cons_fail(c, "nfqb_queue_set_linger", errno);
		nfqb_queue_close(q);
		return NULL;
	}
	return q;
}

static int decide_mixed(struct nfqb_packet *p)
{
	const uint8_t *pl;
	uint32_t len, off;
	uint64_t seq;
	int flow;

	pl = nfqb_pkt_payload(p, &len);
	off = nfqb_pkt_network_offset(p);
	if (!pl || off > len ||
	    !bench_parse_pkt(pl + off, len - off, &seq, &flow))
		return nfqb_verdict(p, NFQB_ACCEPT);	/* not ours */
	if (bench_seq_dropped(seq, true))
		return nfqb_verdict(p, NFQB_DROP);
	return nfqb_verdict_mark(p, NFQB_ACCEPT, BENCH_MARK_BASE + flow);
}

static int lib_loop(struct lib_worker *w)
{
	struct nfqb_packet *vec[BENCH_VEC];
	int i, n;

	while (!bench_stop) {
		n = nfqb_recv(w->q, vec, BENCH_VEC);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENOBUFS) {
				w->enobufs++;
				continue;
			}
			w->what = "nfqb_recv";
			w->err = errno;
			return -1;
		}
		w->packets += n;
		for (i = 0; w->count && i < n; i++) {
			uint32_t len = 0;

			if (nfqb_pkt_is_gso(vec[i]))
				w->gso_packets++;
			if (nfqb_pkt_payload(vec[i], &len))
				w->bytes += len;
		}
		if (!w->mixed) {
			for (i = 0; i < n; i++) {
				if (nfqb_verdict(vec[i], NFQB_ACCEPT) < 0)
					goto fail_verdict;
			}
			continue;
		}
		for (i = n - 1; i >= 0; i--) {
			if (decide_mixed(vec[i]) < 0)
				goto fail_verdict;
		}
	}
	return 0;
fail_verdict:
	w->what = "nfqb_verdict";
	w->err = errno;
	return -1;
}

/* add one queue's library counters to @c */
static void lib_add_stats(const struct nfqb_stats *st, struct bench_cons *c)
{
	c->recv_calls += st->recv_calls;
	c->send_calls += st->send_calls;
	c->verdict_msgs += st->verdict_msgs;
	c->batch_msgs += st->batch_msgs;
	c->kernel_errors += st->kernel_errors;
	c->lib_flushes += st->flushes;
	c->lib_flush_limit += st->flush_limit;
	c->lib_flush_idle += st->flush_idle;
	c->lib_flush_latency += st->flush_latency;
	c->lib_fallbacks += st->fallbacks;
	c->lib_timeouts += st->timeouts;
	c->lib_rejected += st->rejected_foreign + st->rejected_malformed +
			   st->rejected_truncated;
}

/* sum the library's counters of @q into @c */
static void lib_account(struct nfqb_queue *q, const struct lib_worker *w,
			struct bench_cons *c)
{
	struct nfqb_stats st;

	c->packets += w->packets;
	c->enobufs += w->enobufs;
	c->gso_packets += w->gso_packets;
	c->bytes += w->bytes;
	memset(&st, 0, sizeof(st));
	if (nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return;
	lib_add_stats(&st, c);
	if (getenv("NFQB_BENCH_STATS"))
		fprintf(stderr, "queue %u: %llu packets, %llu recv calls, "
			"%llu send calls, %llu flushes (idle %llu, limit %llu,"
			" latency %llu), %llu linger pauses, %llu reads with a"
			" flow waiting\n", nfqb_queue_num(q),
			(unsigned long long)st.packets,
			(unsigned long long)st.recv_calls,
			(unsigned long long)st.send_calls,
			(unsigned long long)st.flushes,
			(unsigned long long)st.flush_idle,
			(unsigned long long)st.flush_limit,
			(unsigned long long)st.flush_latency,
			(unsigned long long)st.linger_pauses,
			(unsigned long long)st.linger_waiting);
}

static int lib_single(const struct bench_cfg *cfg, struct bench_cons *c,
		      bool mixed)
{
	struct lib_worker w = { .mixed = mixed,
				.count = cfg->work == BENCH_WORK_TCP };
	int ret;

	w.q = lib_open(cfg, 0, c);
	if (!w.q)
		return -1;
	bench_cons_ready(c);
	ret = lib_loop(&w);
	bench_cons_quiet();
	lib_account(w.q, &w, c);
	if (ret < 0)
		bench_cons_fail(c, w.what, w.err);
	if (nfqb_queue_close(w.q) < 0 && ret == 0) {
		bench_cons_fail(c, "nfqb_queue_close", errno);
		ret = -1;
	}
	return ret;
}

int bench_lib(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return lib_single(cfg, c, false);
}

int bench_lib_mixed(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return lib_single(cfg, c, true);
}

/* --- the worker pool over 2 queues, queue per worker -------------------- */

#define POOL2_QUEUES	2

struct pool2_watch {
	struct nfqb_pool *pool;
	pthread_t main_tid;
	int ret;
	int err;
};

static int pool2_accept(struct nfqb_packet *p, void *policy, void *cb_data,
			struct nfqb_verdict *v)
{
	(void)p;
	(void)policy;
	(void)cb_data;
	v->verdict = NFQB_ACCEPT;
	return NFQB_POOL_VERDICT;
}

/* TCP mode: the same, counting GSO packets and bytes (two workers) */
static int pool2_accept_count(struct nfqb_packet *p, void *policy,
			      void *cb_data, struct nfqb_verdict *v)
{
	struct bench_cons *c = cb_data;
	uint32_t len = 0;

	(void)policy;
	if (nfqb_pkt_is_gso(p))
		__atomic_fetch_add(&c->gso_packets, 1, __ATOMIC_RELAXED);
	if (nfqb_pkt_payload(p, &len))
		__atomic_fetch_add(&c->bytes, len, __ATOMIC_RELAXED);
	v->verdict = NFQB_ACCEPT;
	return NFQB_POOL_VERDICT;
}

/* Waits for the pool's end: after the main thread's nfqb_pool_stop(), or
 * earlier when a pool thread fails (the pool then stops by itself) — that
 * case wakes the main thread. */
static void *pool2_watcher(void *arg)
{
	struct pool2_watch *w = arg;

	w->ret = nfqb_pool_wait(w->pool);
	w->err = errno;
	pthread_kill(w->main_tid, SIGUSR1);
	return NULL;
}

/* Run the pool until the stop signal (or a pool thread's failure): 0, or
 * -1 with @c failed. */
static int pool2_run(struct nfqb_pool *pool, struct bench_cons *c,
		     const sigset_t *set)
{
	struct pool2_watch w = { .pool = pool, .main_tid = pthread_self() };
	pthread_t wt;
	int sig = 0;

	errno = pthread_create(&wt, NULL, pool2_watcher, &w);
	if (errno) {
		bench_cons_fail(c, "pthread_create", errno);
		nfqb_pool_stop(pool);
		(void)nfqb_pool_wait(pool);	/* failed already */
		return -1;
	}
	bench_cons_ready(c);
	if (!bench_stop)	/* else it came before the mask */
		sigwait(set, &sig);
	nfqb_pool_stop(pool);
	pthread_join(wt, NULL);
	if (w.ret < 0) {
		bench_cons_fail(c, "nfqb_pool_wait", w.err);
		return -1;
	}
	return 0;
}

/* the pool's counters (final after nfqb_pool_wait()) into @c */
static int pool2_account(struct nfqb_pool *pool, struct bench_cons *c,
			 int ret)
{
	struct nfqb_pool_stats ps;
	struct nfqb_stats st;
	unsigned int i;

	memset(&ps, 0, sizeof(ps));
	if (nfqb_pool_stats(pool, -1, &ps, sizeof(ps)) == 0) {
		c->packets += ps.received;
		if (ps.errors && ret == 0) {	/* accept cannot fail */
			snprintf(c->err, sizeof(c->err),
				 "pool: %llu callback or verdict errors",
				 (unsigned long long)ps.errors);
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
			ret = -1;
		}
	}
	for (i = 0; i < POOL2_QUEUES; i++) {
		memset(&st, 0, sizeof(st));
		if (nfqb_pool_queue_stats(pool, i, &st, sizeof(st)) < 0)
			continue;
		c->enobufs += st.enobufs;
		lib_add_stats(&st, c);
	}
	return ret;
}

int bench_lib_pool2(const struct bench_cfg *cfg, struct bench_cons *c)
{
	struct nfqb_pool_config pc = {
		.queue_first = 0,
		.queue_count = POOL2_QUEUES,
		.mode = NFQB_POOL_QUEUE_PER_WORKER,
		.maxlen = cfg->maxlen,
		.rcvbuf = cfg->rcvbuf,
		/* the batch limit stays the library's default (64) */
		.buffers = cfg->window + BENCH_VEC > 1024 ?
			   cfg->window + BENCH_VEC : 0,
		.queue_flags = cfg->gso > 0 ? NFQB_F_GSO : 0,
		.queue_flags_off = cfg->gso == 0 ? NFQB_F_GSO : 0,
		.cb = cfg->work == BENCH_WORK_TCP ? pool2_accept_count :
			pool2_accept,
		.cb_data = c,
	};
	struct nfqb_pool *pool;
	sigset_t set;
	int ret;

	/* before the pool's threads: they inherit the mask, and only this
	 * thread takes the stop signal (SIGUSR1: the watcher) */
	bench_cons_stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	pool = nfqb_pool_create(&pc, sizeof(pc));
	if (!pool) {
		bench_cons_fail(c, "nfqb_pool_create", errno);
		return -1;
	}
	if (nfqb_pool_start(pool) < 0) {
		bench_cons_fail(c, "nfqb_pool_start", errno);
		nfqb_pool_destroy(pool);
		return -1;
	}
	ret = pool2_run(pool, c, &set);
	bench_cons_quiet();
	ret = pool2_account(pool, c, ret);
	nfqb_pool_destroy(pool);
	return ret;
}
