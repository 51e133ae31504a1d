/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the libnfq-batch consumers, written as an application would
 * use the library (public header only).
 *
 * all:   nfqb_recv() a vector, nfqb_verdict(accept) each packet in order.
 * mixed: every packet whose seq is a multiple of 13 dropped, the others
 *        accepted with a mark per flow (from the source address), decided
 *        in reverse order within each received vector.
 * pool2: two queues (flows split by source address), one thread owning
 *        each queue — queue per worker, emulated with threads until the
 *        library's pool API exists.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <libnfq-batch/libnfq-batch.h>

#include "nfqb-bench.h"

struct lib_worker {
	struct nfqb_queue *q;
	bool mixed;
	uint64_t packets;
	uint64_t enobufs;
	int err;
	const char *what;
	pthread_t tid;
	volatile int done;
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

/* sum the library's counters of @q into @c */
static void lib_account(struct nfqb_queue *q, const struct lib_worker *w,
			struct bench_cons *c)
{
	struct nfqb_stats st;

	c->packets += w->packets;
	c->enobufs += w->enobufs;
	memset(&st, 0, sizeof(st));
	if (nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return;
	c->recv_calls += st.recv_calls;
	c->send_calls += st.send_calls;
	c->verdict_msgs += st.verdict_msgs;
	c->batch_msgs += st.batch_msgs;
	c->kernel_errors += st.kernel_errors;
	c->lib_flushes += st.flushes;
	c->lib_flush_limit += st.flush_limit;
	c->lib_flush_idle += st.flush_idle;
	c->lib_flush_latency += st.flush_latency;
	c->lib_fallbacks += st.fallbacks;
	c->lib_timeouts += st.timeouts;
	c->lib_rejected += st.rejected_foreign + st.rejected_malformed +
			   st.rejected_truncated;
}

static int lib_single(const struct bench_cfg *cfg, struct bench_cons *c,
		      bool mixed)
{
	struct lib_worker w = { .mixed = mixed };
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

/* --- pool over 2 queues, emulated: a thread per queue ------------------- */

static void on_wake(int sig)
{
	(void)sig;
}

static void *pool_worker(void *arg)
{
	struct lib_worker *w = arg;

	if (lib_loop(w) < 0)
		kill(getpid(), SIGTERM);	/* wake the main thread */
	w->done = 1;
	return NULL;
}

int bench_lib_pool2(const struct bench_cfg *cfg, struct bench_cons *c)
{
	struct sigaction sa = { .sa_handler = on_wake };
	struct lib_worker w[2];
	sigset_t set, old;
	int i, n = 0, ret = 0, sig;

	memset(w, 0, sizeof(w));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: ends nfqb_recv */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, &old);

	for (i = 0; i < 2; i++) {
		w[i].q = lib_open(cfg, (uint16_t)i, c);
		if (!w[i].q) {
			ret = -1;
			goto out;
		}
	}
	for (n = 0; n < 2; n++) {
		errno = pthread_create(&w[n].tid, NULL, pool_worker, &w[n]);
		if (errno) {
			bench_cons_fail(c, "pthread_create", errno);
			bench_stop = 1;
			ret = -1;
			goto stop;
		}
	}
	bench_cons_ready(c);
	sigwait(&set, &sig);
	bench_stop = 1;
stop:
	/* a wake-up may land just before a blocking call: repeat it */
	for (i = 0; i < n; i++) {
		while (!w[i].done) {
			pthread_kill(w[i].tid, SIGUSR1);
			usleep(1000);
		}
		pthread_join(w[i].tid, NULL);
		if (w[i].what) {
			bench_cons_fail(c, w[i].what, w[i].err);
			ret = -1;
		}
	}
out:
	for (i = 0; i < 2; i++) {
		if (!w[i].q)
			continue;
		lib_account(w[i].q, &w[i], c);
		if (nfqb_queue_close(w[i].q) < 0 && ret == 0) {
			bench_cons_fail(c, "nfqb_queue_close", errno);
			ret = -1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}
