// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Model-based property test of the whole verdict path against a model of
 * the kernel's nfnetlink_queue (issue 9).
 *
 * The model kernel assigns packet ids to queue QNUM, strictly increasing
 * (some cases start just below the 2^32 wrap), holds every id it queued and
 * puts one datagram per packet in a model socket. The library reads them
 * through nfqbt_rx_inject() and hands packets out through nfqb_book_serve().
 * Some ids never reach the library properly:
 *   lost           the id is consumed, nothing is queued (a harmless gap,
 *                  as when the kernel could not deliver: ENOBUFS)
 *   malformed      an attribute length is broken; NFQA_PACKET_HDR is first
 *                  and intact, so the id is readable
 *   unreadable     NFQA_PACKET_HDR itself is broken: no readable id
 *   truncated      MSG_TRUNC; cut after the header (id readable) or inside
 *                  it (id unreadable)
 *   foreign        an extra message from port id != 0 carrying the id of a
 *                  packet that IS queued (the kernel never sends those: it
 *                  is a spoof and must not verdict that packet)
 * Everything the library sends goes, through the test seam (tests/seam/seam.h),
 * to the model of the kernel's queue (kmodel.c, shared with test_plan and
 * the fuzz oracle), which parses each datagram strictly and applies it as
 * nfnetlink_queue does: NFQNL_MSG_VERDICT finds the id (ENOENT if it is
 * not queued, answered with an NLMSG_ERROR in the model socket);
 * NFQNL_MSG_VERDICT_BATCH walks the queue from its head while the id is
 * not after max (serial arithmetic), ENOENT if nothing matched. A send can
 * fail (ENOBUFS, ENOMEM, EAGAIN, EINTR) before anything of it is applied.
 * The clock is the model's (it advances only when the test says so), and
 * allocations can be made to fail.
 *
 * The application decides in random order (nfqb_verdict, _mark, _ex with
 * mark, priority, payload, queue-to-N; nfqb_verdict_batch), flushes at
 * random, lets time pass (latency bound, verdict timeout), calls verdicts
 * again on dead handles, and closes with packets undecided. In the
 * "threads" case two more threads decide deferred packets while the main
 * thread injects and flushes.
 *
 * Properties (checked as the kernel applies each message, and after
 * nfqb_queue_close()):
 *  P1 each id's final verdict is exactly the application's decision
 *     (verdict, mark, priority, payload), or the configured default for a
 *     packet the application never saw, that timed out, or that was still
 *     undecided at close; a decided packet never gets the default or
 *     another packet's decision; a foreign message is never handed out;
 *  P2 no id is verdicted twice (a verdict for an id already verdicted, or
 *     a batch that matches nothing);
 *  P3 nothing is left queued after close, except ids of unreadable
 *     messages in an open gap (rule below);
 *  P4 no message reaches an id with another decision: a batch never spans
 *     an undecided packet, a rejected or unreadable message, or a packet
 *     whose message the library has not read yet;
 *  P5 a decision is never applied before the application made it, and a
 *     default by timeout never before the verdict timeout;
 *  P6 a dead handle (verdict given, refused by timeout, or finalized by
 *     nfqb_verdict_batch) is refused with EALREADY or ETIMEDOUT and changes
 *     nothing, whatever the descriptor holds now; nfqb_verdict_batch()
 *     finalizes exactly the packets the application holds undecided (or
 *     also those waiting in the ready list, which are then never handed
 *     out);
 *  P7 liveness: after two nfqb_flush() calls with working sends, every
 *     decision older than the latency bound, every expired packet and every
 *     rejected message with a readable id has its verdict in the kernel;
 *     nfqb_queue_next_timeout() tells the truth ("truth" cases): 0 when
 *     something is overdue, no later than the next deadline, -1 when
 *     nothing is pending; the receive buffers of verdicted packets come
 *     back (no EAGAIN from nfqbt_rx_inject() while fewer packets than
 *     buffers wait for their verdict); a view stays intact until its
 *     verdict;
 *  P8 the counters (read just before close) match the model: timeouts,
 *     defaults + rejected_defaults, gap_ids, late_verdicts, send_failures
 *     (> 0 once an nfqb_flush() gave up on a failed send, never more than
 *     the failed calls), rejected_foreign/_truncated/_malformed, kernel and
 *     ENOENT errors, verdict and batch messages. A mismatch is reported
 *     after every case of the run, so that a safety failure comes first.
 *
 * Allowed outcomes the model accepts: an allocation failure may refuse a
 * verdict call or a datagram with ENOMEM (the application or the socket
 * tries again later), or make the library drop a well-formed message (it
 * then owes it the default verdict and must never hand it out); EINTR and
 * the like may be retried inside the same call; a packet whose timeout
 * passed may get its default or the application's decision, whichever the
 * library took first, as long as the return value says which.
 *
 * Gap rule assumed: ids around an unreadable message are bounded by the
 * nearest readable ids before and after it. Once both are known the gap is
 * closed and every id in it gets the default verdict one by one (ENOENT for
 * an id the kernel never queued is expected; those verdicts are what
 * gap_ids counts). Before a readable id follows (trailing gap) or when no
 * readable id preceded it (leading gap), the gap is open: the library cannot
 * name those ids, so they may stay queued at close (the kernel drops them
 * when the queue is unbound) or get the default, and nothing else. A guess
 * that reaches a packet whose message is still in the socket is a failure.
 * The only batch allowed over an unreadable message is one carrying the
 * default verdict over a leading gap (there is no other way to reach ids
 * with no known lower bound); any other batch over one fails (P4).
 *
 * The "scenarios" case holds exact cases against the same model: one batch
 * per flush for an in-order stream, a decision held behind an undecided
 * packet, the orphans of an adopted queue, the verdict timeout, an
 * explicit nfqb_verdict_batch() around the 2^32 wrap, and a kernel that
 * breaks the monotonic-id contract (random ids out of order).
 *
 * NFQB_SEED=<n> replays one case (with CK_RUN_CASE=<case> to pick the
 * case; the failure message prints both); NFQB_CASES=<n> sets the number of
 * cases of every case; NFQB_TRACE=1 prints every event; NFQB_COUNTERS=0
 * skips P8 (to see the safety properties first). The threaded case
 * prints its seed too, but thread scheduling makes it nondeterministic.
 *
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "testq.h"
#include "parse.h"
#include "plan.h"
#include "kmodel.h"
#include "nlbuild.h"
#include "../integration/harness.h"

#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED	0x100
#endif

#define QNUM		7
#define MAXIDS		320
#define FIFO_CAP	4096u
#define WQ_CAP		1024u
#define PMAX		16
#define NWORKERS	2
#define NDEAD		32
#define LOGN		48
#define MS		1000000ull
#define T0		1000000000000ull	/* model time at start */
#define SPOOF_TAG	"SPF!"

/* the kernel's verdict codes (linux/netfilter.h) */
#define KV_QUEUE	3
#define KV_BYPASS	0x8000u
/* the kernel's side of packet @k: the model of its queue */
#define KP(m, k)	(&(m)->km.p[(k) - (m)->p])

struct scen {
	const char *name;
	unsigned int cases;	/* default number of cases */
	bool sendfail;		/* sendmsg fails at random */
	bool malformed;		/* messages with a broken attribute */
	bool unreadable;	/* messages with a broken packet header */
	bool truncated;		/* MSG_TRUNC datagrams */
	bool spoof;		/* foreign messages */
	bool dead;		/* verdicts on dead handles */
	bool timeouts;		/* verdict timeout and clock jumps */
	bool lazy;		/* packets wait in the ready list */
	bool allocfail;		/* allocations fail at random */
	bool truth;		/* check nfqb_queue_next_timeout() */
	bool flaky_close;	/* isolated send failures during close */
	bool threads;		/* two more threads decide */
};

static const struct scen scens[] = {
	{ .name = "baseline", .cases = 500, .spoof = true },
	{ .name = "send_failures", .cases = 500, .spoof = true,
	  .sendfail = true, .flaky_close = true },
	{ .name = "malformed", .cases = 400, .malformed = true,
	  .truncated = true },
	{ .name = "unreadable", .cases = 400, .unreadable = true,
	  .truncated = true },
	{ .name = "dead_handles", .cases = 400, .dead = true },
	{ .name = "timeouts", .cases = 400, .timeouts = true },
	{ .name = "ready_batch", .cases = 400, .lazy = true },
	{ .name = "next_timeout", .cases = 400, .truth = true },
	{ .name = "alloc_failures", .cases = 300, .allocfail = true },
	{ .name = "everything", .cases = 1500, .sendfail = true,
	  .malformed = true, .unreadable = true, .truncated = true,
	  .spoof = true, .dead = true, .timeouts = true, .lazy = true,
	  .allocfail = true, .truth = true, .flaky_close = true },
	{ .name = "threads", .cases = 300, .sendfail = true, .malformed = true,
	  .unreadable = true, .truncated = true, .spoof = true, .dead = true,
	  .timeouts = true, .lazy = true, .allocfail = true, .truth = true,
	  .threads = true },
};

enum kind {
	K_LOST, K_GOOD, K_MALFORMED, K_UNREADABLE, K_TRUNC, K_TRUNC_UNREADABLE,
};

static const char *const kind_names[] = {
	[K_LOST] = "lost message, id never queued",
	[K_GOOD] = "well-formed message",
	[K_MALFORMED] = "malformed message, id readable",
	[K_UNREADABLE] = "malformed message, id unreadable",
	[K_TRUNC] = "truncated message, id readable",
	[K_TRUNC_UNREADABLE] = "truncated message, id unreadable",
};

enum app {
	A_NONE,		/* undecided */
	A_DECIDING,	/* a thread is inside nfqb_verdict*() */
	A_DECIDED,	/* nfqb_verdict*() returned 0 */
	A_BATCHED,	/* finalized by nfqb_verdict_batch() */
	A_TIMEDOUT,	/* nfqb_verdict*() said ETIMEDOUT */
};

struct mpkt {
	uint32_t id;
	uint8_t kind;
	uint8_t app;
	bool delivered;		/* its datagram went into the library */
	bool in_ready;		/* delivered, not handed out yet */
	bool popped;		/* handed to the application */
	bool rejected;		/* well-formed, never handed out */
	bool finalized_ready;	/* nfqb_verdict_batch() took it from ready */
	bool handed_off;	/* given to a worker thread */
	bool expired;		/* default by the verdict timeout */
	uint64_t arrival, decided_at, gap_closed_at;
	struct km_dec d;	/* the application's decision */
	struct nfqb_packet *view;
};

enum dg_what { D_PACKET, D_SPOOF, D_REPLY };

struct dgram {
	uint8_t *buf;
	uint32_t len;
	uint32_t from;
	int flags;
	int idx;
	int err;
	uint8_t what;
};

struct model;

struct worker {
	struct model *m;
	pthread_t th;
	uint64_t rs;
	struct nfqb_packet *dead[NDEAD];
	uint32_t dead_id[NDEAD];
	unsigned int ndead;
};

struct model {
	const struct scen *sc;
	unsigned long seed;
	uint64_t rs;		/* the application and the kernel */
	uint64_t fs;		/* send failures */
	_Atomic uint64_t actr;	/* allocation failures */
	pthread_mutex_t mu;	/* everything below; never held across a
				 * library call that may send or allocate */
	pthread_mutex_t logmu;
	pthread_cond_t cv;
	_Atomic uint64_t now;
	_Atomic bool failed;
	bool trace;
	char err[1024];
	char log[LOGN][224];
	unsigned int nlog;

	/* kernel: the ids it used (p[i] has id first + i; its queue is km,
	 * at the same index) */
	struct kmodel km;
	uint32_t first;
	unsigned int n, target;
	struct mpkt p[MAXIDS];
	struct dgram fifo[FIFO_CAP];
	unsigned int fh, ft;

	/* configuration */
	uint32_t dflt, tmo_ms, latency_us;
	unsigned int nbuf, batch_limit;
	bool coalesce;

	/* faults */
	int send_mode;		/* 0 off, 1 bursts, 2 isolated */
	unsigned int burst;
	bool last_failed;	/* isolated mode: the last send failed */
	bool last_send_failed;	/* the last sendmsg of all failed */
	unsigned int unabsorbed;	/* library calls that ended on a failure */
	_Atomic bool alloc_faults;
	bool in_close;

	/* tallies */
	unsigned int sends_ok, sends_failed, close_sends_failed;
	_Atomic unsigned int allocs_failed;
	unsigned int gap_verdicts;
	unsigned int spoof_dlv, trunc_dlv, bad_dlv, replies_dlv, enoent_dlv;
	unsigned int late_calls;

	/* application */
	struct nfqb_packet *dead[NDEAD];
	uint32_t dead_id[NDEAD];
	unsigned int ndead;

	/* worker threads */
	struct worker w[NWORKERS];
	bool workers_running;
	int wq[WQ_CAP];
	unsigned int wqh, wqt;
	bool stop;
};

/* ------------------------------------------------------------------ */
/* PRNG, log, failures                                                  */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t next64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static unsigned int rnd(uint64_t *s, unsigned int n)
{
	return n ? (unsigned int)(next64(s) % n) : 0;
}

static bool chance(uint64_t *s, unsigned int pct)
{
	return rnd(s, 100) < pct;
}

static uint64_t mnow(struct model *m)
{
	return atomic_load(&m->now);
}

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void ev(struct model *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mfail(struct model *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ev(struct model *m, const char *fmt, ...)
{
	char line[224];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "[%9.3f ms] ", ms_of(mnow(m) - T0));
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&m->logmu);
	memcpy(m->log[m->nlog++ % LOGN], line, sizeof(line));
	pthread_mutex_unlock(&m->logmu);
	if (m->trace)
		fprintf(stderr, "%s\n", line);
}

/* Record the first failure; the main thread reports it (check_ok). */
static void mfail(struct model *m, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&m->logmu);
	if (!atomic_load(&m->failed)) {
		va_start(ap, fmt);
		vsnprintf(m->err, sizeof(m->err), fmt, ap);
		va_end(ap);
		atomic_store(&m->failed, true);
	}
	pthread_mutex_unlock(&m->logmu);
}

static void stop_workers(struct model *m)
{
	int i;

	if (!m->workers_running)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(m->w[i].th, NULL);
	m->workers_running = false;
}

/* Main thread: abort the case with the first recorded failure. */
static void check_ok(struct model *m)
{
	unsigned int i, start;

	if (!atomic_load(&m->failed))
		return;
	stop_workers(m);
	fprintf(stderr,
		"\ntest_model [%s] seed %lu FAILED: %s\n"
		"  replay: NFQB_SEED=%lu CK_RUN_CASE=%s tests/unit/test_model"
		"%s\n"
		"  case: ids from %u, %u ids, %u buffers, default %s, "
		"timeout %u ms, latency %u us, batch limit %u, coalesce %s; "
		"%u sends failed, %u allocations failed\n  last events:\n",
		m->sc->name, m->seed, m->err, m->seed, m->sc->name,
		m->sc->threads ? " (threads: scheduling may differ)" : "",
		m->first, m->n, m->nbuf,
		m->dflt == NFQB_DROP ? "DROP" : "ACCEPT", m->tmo_ms,
		m->latency_us, m->batch_limit, m->coalesce ? "on" : "off",
		m->sends_failed, atomic_load(&m->allocs_failed));
	start = m->nlog > LOGN ? m->nlog - LOGN : 0;
	for (i = start; i < m->nlog; i++)
		fprintf(stderr, "    %s\n", m->log[i % LOGN]);
	ck_abort_msg("[%s] seed %lu: %s (replay: NFQB_SEED=%lu CK_RUN_CASE=%s)",
		     m->sc->name, m->seed, m->err, m->seed, m->sc->name);
}

/* ------------------------------------------------------------------ */
/* Decisions                                                            */

/* What the application does: one of the three calls, and the decision the
 * kernel should see for it. */
struct choice {
	int how;		/* 0 nfqb_verdict, 1 _mark, 2 _ex */
	struct nfqb_verdict v;
	uint8_t pl[PMAX];
	struct km_dec d;
};

static void random_choice(uint64_t *s, struct choice *c)
{
	static const uint32_t marks[] = { 0, 1, 2, 3, 0x80000000u, 0xffffffffu };
	unsigned int r = rnd(s, 100), i;
	uint16_t qn = 0;
	bool bypass = false;

	memset(c, 0, sizeof(*c));
	c->how = (int)rnd(s, 3);
	if (r < 50) {
		c->v.verdict = NFQB_ACCEPT;
	} else if (r < 80) {
		c->v.verdict = NFQB_DROP;
	} else if (r < 90) {
		c->v.verdict = NFQB_REPEAT;
	} else {
		c->v.verdict = NFQB_QUEUE;
		c->how = 2;
	}
	if (c->how == 1) {
		c->v.flags = NFQB_V_MARK;
		c->v.mark = marks[rnd(s, 6)];
	} else if (c->how == 2) {
		if (chance(s, 50)) {
			c->v.flags |= NFQB_V_MARK;
			c->v.mark = marks[rnd(s, 6)];
		}
		if (chance(s, 15)) {
			c->v.flags |= NFQB_V_PRIORITY;
			c->v.priority = rnd(s, 8);
		}
		if (chance(s, 15)) {
			c->v.flags |= NFQB_V_PAYLOAD;
			c->v.payload_len = 1 + rnd(s, PMAX);
			for (i = 0; i < c->v.payload_len; i++)
				c->pl[i] = (uint8_t)next64(s);
		}
		if (c->v.verdict == NFQB_QUEUE) {
			qn = (uint16_t)rnd(s, 65536);
			c->v.queue_num = qn;
			bypass = chance(s, 50);
			if (bypass)
				c->v.flags |= NFQB_V_BYPASS;
		}
	}
	c->d.verdict = c->v.verdict == NFQB_QUEUE ?
		       ((uint32_t)qn << 16) | KV_QUEUE |
		       (bypass ? KV_BYPASS : 0) : c->v.verdict;
	c->d.has_mark = c->v.flags & NFQB_V_MARK;
	c->d.mark = c->v.mark;
	c->d.has_prio = c->v.flags & NFQB_V_PRIORITY;
	c->d.prio = c->v.priority;
	c->d.has_payload = c->v.flags & NFQB_V_PAYLOAD;
	c->d.plen = c->v.payload_len;
	c->d.phash = km_hash(c->pl, c->v.payload_len);
}

static int do_call(struct nfqb_packet *p, struct choice *c)
{
	switch (c->how) {
	case 0:
		return nfqb_verdict(p, c->v.verdict);
	case 1:
		return nfqb_verdict_mark(p, c->v.verdict, c->v.mark);
	default:
		c->v.payload = c->pl;
		return nfqb_verdict_ex(p, &c->v, sizeof(c->v));
	}
}

static const char *const call_names[] = {
	"nfqb_verdict", "nfqb_verdict_mark", "nfqb_verdict_ex",
};

/* ------------------------------------------------------------------ */
/* Model kernel: ids, messages, the socket                              */

static bool readable(const struct mpkt *k)
{
	return k->kind == K_GOOD || k->kind == K_MALFORMED ||
	       k->kind == K_TRUNC;
}

static bool unreadable(const struct mpkt *k)
{
	return k->kind == K_UNREADABLE || k->kind == K_TRUNC_UNREADABLE;
}

/* Position of @id relative to the first id (negative: before it). */
static long pos_of(const struct model *m, uint32_t id)
{
	return (long)(int32_t)(id - m->first);
}

static struct mpkt *entry(struct model *m, uint32_t id)
{
	long pos = pos_of(m, id);

	return pos >= 0 && pos < (long)m->n ? &m->p[pos] : NULL;
}

static const char *kstate(const struct mpkt *k, char *b, size_t n)
{
	char d[96];

	if (k->kind != K_GOOD) {
		snprintf(b, n, "%s", kind_names[k->kind]);
		return b;
	}
	if (k->rejected) {
		snprintf(b, n, "well-formed, never handed out by the library");
		return b;
	}
	switch (k->app) {
	case A_NONE:
		snprintf(b, n, "%s", k->popped ?
			 "held undecided by the application" :
			 "waiting in the ready list");
		break;
	case A_DECIDING:
		snprintf(b, n, "being decided %s", km_dec_str(&k->d, d, sizeof(d)));
		break;
	case A_DECIDED:
		snprintf(b, n, "decided %s", km_dec_str(&k->d, d, sizeof(d)));
		break;
	case A_BATCHED:
		snprintf(b, n, "decided %s by nfqb_verdict_batch()%s",
			 km_dec_str(&k->d, d, sizeof(d)),
			 k->finalized_ready ? " before it was handed out" : "");
		break;
	case A_TIMEDOUT:
		snprintf(b, n, "timed out (the application got ETIMEDOUT)");
		break;
	}
	return b;
}

static unsigned int pkt_plen(uint32_t id)
{
	return 4 + (id * 7u) % 37u;
}

static uint8_t pkt_byte(uint32_t id, unsigned int i)
{
	return (uint8_t)(id * 31u + i * 7u + (id >> 11));
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* One NFQNL_MSG_PACKET: header (at 20), NFQA_MARK (at 32), payload (at 40). */
static size_t build_packet(struct nlb *b, uint32_t id, bool spoof)
{
	uint8_t pl[48];
	unsigned int i, plen = pkt_plen(id);

	for (i = 0; i < plen; i++)
		pl[i] = pkt_byte(id, i);
	if (spoof)
		memcpy(pl, SPOOF_TAG, 4);
	nlb_init_ipv4(b, QNUM, id);
	nlb_attr_be32(b, NFQA_MARK, id ^ 0x5a5a5a5au);
	nlb_attr(b, NFQA_PAYLOAD, pl, plen);
	return nlb_finish(b);
}

static void push_dgram(struct model *m, const void *buf, size_t len,
		       uint32_t from, int flags, int idx, uint8_t what, int err)
{
	struct dgram *g;

	if (m->ft - m->fh >= FIFO_CAP) {
		mfail(m, "test: model socket full");
		return;
	}
	g = &m->fifo[m->ft++ % FIFO_CAP];
	g->buf = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(g->buf);
	memcpy(g->buf, buf, len);
	g->len = (uint32_t)len;
	g->from = from;
	g->flags = flags;
	g->idx = idx;
	g->what = what;
	g->err = err;
}

/* The kernel queues the next id (or loses it). */
static void gen_one(struct model *m)
{
	const struct scen *sc = m->sc;
	unsigned int idx = m->n, r = rnd(&m->rs, 100);
	struct mpkt *k = &m->p[idx];
	struct nlb b;
	size_t len;
	int flags = 0;

	memset(k, 0, sizeof(*k));
	m->n++;
	k->id = m->first + idx;
	if (r < 10)
		k->kind = K_LOST;
	else if (sc->malformed && r < 18)
		k->kind = K_MALFORMED;
	else if (sc->unreadable && r < 25)
		k->kind = K_UNREADABLE;
	else if (sc->truncated && r < 31)
		k->kind = sc->unreadable && chance(&m->rs, 35) ?
			  K_TRUNC_UNREADABLE : K_TRUNC;
	else
		k->kind = K_GOOD;
	km_add(&m->km, k->id, k->kind != K_LOST);
	if (k->kind == K_LOST) {
		ev(m, "kernel: id %u lost (never queued)", k->id);
		return;
	}
	len = build_packet(&b, k->id, false);
	switch (k->kind) {
	case K_MALFORMED:	/* the packet header stays first and intact */
		switch (rnd(&m->rs, 3)) {
		case 0:
			put16(b.buf + 32, 7);	/* NFQA_MARK of 3 bytes */
			break;
		case 1:			/* payload runs past the end */
			put16(b.buf + 40, (uint16_t)(len - 40 + 8));
			break;
		default:
			put16(b.buf + 40, 2);	/* shorter than its header */
			break;
		}
		break;
	case K_UNREADABLE:
		switch (rnd(&m->rs, 3)) {
		case 0:
			put16(b.buf + 20, 6);	/* header of 2 bytes */
			break;
		case 1:
			put16(b.buf + 20, 0xfff0);
			break;
		default:
			put16(b.buf + 22, 0x7ff0);	/* not a header */
			break;
		}
		break;
	case K_TRUNC:
		len = 32 + rnd(&m->rs, (unsigned int)len - 32);
		flags = MSG_TRUNC;
		break;
	case K_TRUNC_UNREADABLE:
		len = 12 + rnd(&m->rs, 19);
		flags = MSG_TRUNC;
		break;
	}
	push_dgram(m, b.buf, len, 0, flags, (int)idx, D_PACKET, 0);
	ev(m, "kernel: id %u queued (%s)", k->id, kind_names[k->kind]);
	if (sc->spoof && chance(&m->rs, 8)) {
		unsigned int t, j = idx;

		for (t = 0; t < 8; t++) {
			j = rnd(&m->rs, idx + 1);
			if (m->km.p[j].queued)
				break;
		}
		if (!m->km.p[j].queued)
			j = idx;
		len = build_packet(&b, m->p[j].id, true);
		push_dgram(m, b.buf, len, 1 + rnd(&m->rs, 0x7ffffffe), 0,
			   (int)j, D_SPOOF, 0);
		ev(m, "foreign port: message claiming id %u", m->p[j].id);
	}
}

static bool fifo_empty(struct model *m)
{
	bool e;

	pthread_mutex_lock(&m->mu);
	e = m->fh == m->ft;
	pthread_mutex_unlock(&m->mu);
	return e;
}

static void push_reply(struct model *m, const struct nlmsghdr *req, int err)
{
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} r;

	memset(&r, 0, sizeof(r));
	r.h.nlmsg_len = sizeof(r);
	r.h.nlmsg_type = NLMSG_ERROR;
	r.h.nlmsg_flags = NLM_F_CAPPED;
	r.h.nlmsg_seq = req->nlmsg_seq;
	r.h.nlmsg_pid = req->nlmsg_pid;
	r.e.error = err;
	r.e.msg = *req;
	push_dgram(m, &r, sizeof(r), 0, 0, -1, D_REPLY, err);
}

/* Going from position @j by @step: is a delivered unreadable message met
 * before a delivered readable one? */
static bool unreadable_first(const struct model *m, long j, long step)
{
	for (; j >= 0 && j < (long)m->n; j += step) {
		const struct mpkt *k = &m->p[j];

		if (!k->delivered)
			continue;
		if (readable(k))
			return false;
		if (unreadable(k))
			return true;
	}
	return false;
}

/*
 * Can a verdict for the never-queued position @pos come from a library
 * that fills a gap around an unreadable message? Yes when an unreadable
 * message the library has read lies on the same side of every readable
 * message it has read.
 */
static bool gap_eligible(const struct model *m, long pos)
{
	return unreadable_first(m, (pos < (long)m->n ? pos : (long)m->n) - 1,
				-1) ||
	       unreadable_first(m, pos < 0 ? 0 : pos + 1, 1);
}


/* An unreadable message no readable id bounds on one side. */
static bool open_gap(const struct model *m, unsigned int idx)
{
	bool before = false, after = false;
	unsigned int j;

	for (j = 0; j < m->n; j++) {
		if (!m->p[j].delivered || !readable(&m->p[j]))
			continue;
		if (j < idx)
			before = true;
		else if (j > idx)
			after = true;
	}
	return !before || !after;
}

/* No readable message before it: the library cannot bound its gap below. */
static bool leading_gap(const struct model *m, const struct mpkt *k)
{
	const struct mpkt *j;

	for (j = m->p; j < k; j++)
		if (j->delivered && readable(j))
			return false;
	return true;
}

static bool timeout_ok(const struct model *m, const struct mpkt *k,
		       uint64_t now)
{
	return m->tmo_ms && now - k->arrival >= m->tmo_ms * MS;
}

/* The kernel applies @v to queued packet @kp (the model's callback; model
 * mutex held). */
static void apply(struct kmodel *km, struct km_pkt *kp, const struct km_dec *v,
		  bool batch, uint32_t max)
{
	struct model *m = km->data;
	struct mpkt *k = &m->p[kp - km->p];
	uint64_t now = mnow(m);
	bool def = km_is_default(v, m->dflt);
	char how[64], got[96], want[96], st[160], note[96] = "";

	if (!batch && unreadable(k))
		m->gap_verdicts++;
	if (batch)
		snprintf(how, sizeof(how), "a batch verdict up to id %u", max);
	else
		snprintf(how, sizeof(how), "a single verdict");
	if (kp->failed_sends)
		snprintf(note, sizeof(note),
			 " (a verdict for it was in %u failed sendmsg call%s)",
			 kp->failed_sends, kp->failed_sends > 1 ? "s" : "");
	km_dec_str(v, got, sizeof(got));
	kstate(k, st, sizeof(st));
	ev(m, "kernel: id %u <- %s by %s%s", k->id, got, how,
	   m->in_close ? " (close)" : "");
	if (!k->delivered) {
		mfail(m, "id %u got %s by %s before the library read its "
		     "message", k->id, got, how);
		return;
	}
	if (k->kind != K_GOOD || k->rejected) {
		/* a batch of the default up to the first readable id is how
		 * a leading gap (no lower bound) can be given its verdicts */
		if (batch && unreadable(k) && !(def && leading_gap(m, k)))
			mfail(m, "id %u (%s) got %s by %s: a batch spanned a "
			     "message nobody could read (ids around it must "
			     "get the default one by one)", k->id, st, got, how);
		else if (!def)
			mfail(m, "id %u (%s) got %s by %s: a packet the "
			     "application never saw must get the default "
			     "verdict", k->id, st, got, how);
		return;
	}
	switch (k->app) {
	case A_DECIDED:
	case A_BATCHED:
		if (!km_dec_eq(v, &k->d))
			mfail(m, "id %u: the application decided %s, the kernel "
			     "got %s by %s%s%s", k->id,
			     km_dec_str(&k->d, want, sizeof(want)), got, how,
			     batch ? " (another packet's decision)" : "", note);
		return;
	case A_TIMEDOUT:
		if (!def)
			mfail(m, "id %u timed out (ETIMEDOUT) but got %s by %s",
			     k->id, got, how);
		return;
	case A_DECIDING:
		if (km_dec_eq(v, &k->d) || (def && (m->in_close ||
						    timeout_ok(m, k, now))))
			return;
		mfail(m, "id %u got %s by %s while the application was "
		     "deciding %s", k->id, got, how,
		     km_dec_str(&k->d, want, sizeof(want)));
		return;
	case A_NONE:
		if (!def) {
			mfail(m, "id %u got %s by %s before the application "
			     "decided it (%s)%s", k->id, got, how, st, note);
			return;
		}
		if (m->in_close)
			return;
		if (timeout_ok(m, k, now)) {
			k->expired = true;
			return;
		}
		/* a packet the library could not take (allocation failure):
		 * confirmed when it is never handed out */
		if (!k->popped && atomic_load(&m->allocs_failed))
			return;
		mfail(m, "id %u got the default verdict by %s while %s, %.3f ms "
		     "after it arrived (verdict timeout %u ms)", k->id, how, st,
		     ms_of(now - k->arrival), m->tmo_ms);
		return;
	}
}

/* A verdict message that reached nothing: the kernel answers ENOENT. */
static void enoent(struct kmodel *km, uint32_t id, const struct km_dec *v,
		   bool batch)
{
	struct model *m = km->data;
	struct mpkt *k = entry(m, id);
	long pos = pos_of(m, id);
	char got[96], had[96];

	km_dec_str(v, got, sizeof(got));
	if (batch) {
		mfail(m, "batch %s up to id %u matched nothing (ENOENT): every "
		     "id it covers already had its verdict (P2)", got, id);
		return;
	}
	if (k && KP(m, k)->applied) {
		mfail(m, "id %u verdicted twice: %s after %s (P2)", id, got,
		     km_dec_str(&KP(m, k)->got, had, sizeof(had)));
	} else if (pos < -64 || pos > (long)m->n + 64) {
		mfail(m, "verdict %s for id %u, far from any id the kernel "
		     "assigned (%u..%u)", got, id, m->first,
		     m->first + m->n - 1);
	} else if (!gap_eligible(m, pos)) {
		mfail(m, "verdict %s for id %u, which the kernel never queued "
		     "and no unreadable message could hide", got, id);
	} else {
		m->gap_verdicts++;
		ev(m, "kernel: id %u ENOENT (gap id never queued)", id);
	}
	if (!km_is_default(v, m->dflt) && !atomic_load(&m->failed))
		mfail(m, "gap id %u got %s: ids in a gap get the default", id,
		     got);
}

static void wrong(struct kmodel *km, const char *msg)
{
	mfail(km->data, "%s", msg);
}

/* The kernel answers an error, or the ack asked for, in the socket. */
static void answer(struct kmodel *km, const struct nlmsghdr *req, int err)
{
	if (err || (req->nlmsg_flags & NLM_F_ACK))
		push_reply(km->data, req, err);
}

static const struct km_ops model_ops = {
	.apply = apply,
	.enoent = enoent,
	.fail = wrong,
	.answer = answer,
};

static int send_fault(struct model *m)
{
	static const int errs[] = { ENOBUFS, ENOMEM, EAGAIN, EINTR };

	switch (m->send_mode) {
	case 1:
		if (m->burst) {
			m->burst--;
			return errs[rnd(&m->fs, 4)];
		}
		if (!chance(&m->fs, 10))
			return 0;
		m->burst = rnd(&m->fs, 6);
		return errs[rnd(&m->fs, 4)];
	case 2:
		if (m->last_failed || !chance(&m->fs, 30)) {
			m->last_failed = false;
			return 0;
		}
		m->last_failed = true;
		return errs[rnd(&m->fs, 4)];
	default:
		return 0;
	}
}

/* The seam's sendmsg: the model kernel. */
static ssize_t model_sendmsg(void *data, int fd, const struct msghdr *msg,
			     int flags)
{
	struct model *m = data;
	ssize_t r;
	int err;

	(void)fd;
	(void)flags;
	pthread_mutex_lock(&m->mu);
	err = send_fault(m);
	m->last_send_failed = err != 0;
	if (err) {
		m->sends_failed++;
		if (m->in_close)
			m->close_sends_failed++;
		km_sendmsg(&m->km, msg, KM_FAILED);
		ev(m, "sendmsg fails: %s", strerror(err));
		pthread_mutex_unlock(&m->mu);
		errno = err;
		return -1;
	}
	m->sends_ok++;
	ev(m, "sendmsg");
	r = km_sendmsg(&m->km, msg, KM_APPLY);
	pthread_mutex_unlock(&m->mu);
	return r;
}

static uint64_t model_now_ns(void *data)
{
	return mnow(data);
}

static int model_fail_alloc(void *data, size_t size)
{
	struct model *m = data;
	uint64_t c;

	(void)size;
	if (!atomic_load(&m->alloc_faults))
		return 0;
	c = atomic_fetch_add(&m->actr, 1);
	if (splitmix(m->seed * 0x9e3779b1u + c) % 100 >= 25)
		return 0;
	atomic_fetch_add(&m->allocs_failed, 1);
	return 1;
}

/* ------------------------------------------------------------------ */
/* The application side                                                 */

/* Packets the library holds a receive buffer for, legitimately. */
static unsigned int held_count(const struct model *m, unsigned int *expired)
{
	unsigned int i, n = 0;

	*expired = 0;
	for (i = 0; i < m->n; i++) {
		const struct mpkt *k = &m->p[i];

		if (k->kind != K_GOOD || !k->delivered || k->rejected)
			continue;
		if (!KP(m, k)->applied)
			n++;
		else if (k->expired && k->app == A_NONE)
			(*expired)++;
	}
	return n;
}

/* Inject the datagram at the head of the model socket: 1 done, 0 not now
 * (allocation failure), -1 EAGAIN (no free buffer). */
static int deliver_one(struct model *m, struct nfqb_queue *q)
{
	unsigned int af0 = atomic_load(&m->allocs_failed);
	struct dgram g;
	struct mpkt *k;
	int r, e;

	pthread_mutex_lock(&m->mu);
	if (m->fh == m->ft) {
		pthread_mutex_unlock(&m->mu);
		return 0;
	}
	g = m->fifo[m->fh % FIFO_CAP];
	pthread_mutex_unlock(&m->mu);
	r = nfqbt_rx_inject(q, g.buf, g.len, g.from, g.flags);
	e = errno;
	pthread_mutex_lock(&m->mu);
	if (r < 0) {
		pthread_mutex_unlock(&m->mu);
		if (e == EAGAIN)
			return -1;
		if (e != ENOMEM || atomic_load(&m->allocs_failed) == af0)
			mfail(m, "nfqbt_rx_inject() failed: %s", strerror(e));
		return 0;
	}
	m->fh++;
	switch (g.what) {
	case D_SPOOF:
		m->spoof_dlv++;
		ev(m, "library reads a foreign message (port %u, id %u)",
		   g.from, m->p[g.idx].id);
		break;
	case D_REPLY:
		m->replies_dlv += g.err != 0;
		m->enoent_dlv += g.err == -ENOENT;
		ev(m, "library reads an error reply (%d)", g.err);
		break;
	case D_PACKET:
		k = &m->p[g.idx];
		k->delivered = true;
		k->arrival = mnow(m);
		if (k->kind == K_GOOD)
			k->in_ready = true;
		if (k->kind == K_TRUNC || k->kind == K_TRUNC_UNREADABLE)
			m->trunc_dlv++;
		if (k->kind == K_MALFORMED || k->kind == K_UNREADABLE)
			m->bad_dlv++;
		if (readable(k)) {	/* closes the gaps before it */
			long j;

			for (j = g.idx - 1; j >= 0; j--) {
				struct mpkt *u = &m->p[j];

				if (u->delivered && readable(u))
					break;
				if (u->delivered && unreadable(u) &&
				    !u->gap_closed_at && !open_gap(m, (unsigned int)j))
					u->gap_closed_at = mnow(m);
			}
		}
		ev(m, "library reads id %u (%s)", k->id, kind_names[k->kind]);
		break;
	}
	pthread_mutex_unlock(&m->mu);
	free(g.buf);
	return 1;
}

static void add_dead(struct nfqb_packet **dead, uint32_t *ids,
		     unsigned int *n, uint64_t *rs, struct nfqb_packet *p,
		     uint32_t id)
{
	unsigned int i = *n < NDEAD ? (*n)++ : rnd(rs, NDEAD);

	dead[i] = p;
	ids[i] = id;
}

static bool view_intact(const struct mpkt *k)
{
	const uint8_t *pl;
	uint32_t len, i;

	if (nfqb_pkt_id(k->view) != k->id)
		return false;
	pl = nfqb_pkt_payload(k->view, &len);
	if (!pl || len != pkt_plen(k->id))
		return false;
	for (i = 0; i < len; i++)
		if (pl[i] != pkt_byte(k->id, i))
			return false;
	return true;
}

/* " (the dead handle of id N is this descriptor)", or "". */
static const char *shared_with_dead(const struct model *m,
				    const struct nfqb_packet *view, uint32_t id,
				    char *b, size_t n)
{
	unsigned int i, w;

	*b = 0;
	if (!m->sc->dead)
		return b;	/* no verdict is called on dead handles */
	for (i = 0; i < m->ndead; i++)
		if (m->dead[i] == view && m->dead_id[i] != id)
			snprintf(b, n, " (the application called a verdict on "
				 "the dead handle of id %u: same descriptor)",
				 m->dead_id[i]);
	for (w = 0; w < NWORKERS; w++)
		for (i = 0; i < m->w[w].ndead; i++)
			if (m->w[w].dead[i] == view &&
			    m->w[w].dead_id[i] != id)
				snprintf(b, n, " (a worker called a verdict on "
					 "the dead handle of id %u: same "
					 "descriptor)", m->w[w].dead_id[i]);
	return b;
}

/*
 * Packets before position @upto still in the ready list were not handed out
 * (before @by, or at all): the library dropped them, which it may only do
 * when an allocation failed (it then owes them the default verdict) or
 * when the verdict timeout gave them the default while they waited there
 * (the timeout counts from arrival).
 */
static void skipped(struct model *m, unsigned int upto, const struct mpkt *by,
		    bool any_final, const char *hint)
{
	unsigned int j;

	for (j = 0; j < upto; j++) {
		struct mpkt *k = &m->p[j];

		if (!k->in_ready)
			continue;
		if (timeout_ok(m, k, mnow(m))) {
			k->in_ready = false;
			ev(m, "library did not hand out id %u: its verdict "
			   "timeout passed in the ready list", k->id);
		} else if (atomic_load(&m->allocs_failed)) {
			k->in_ready = false;
			k->rejected = true;
			ev(m, "library did not hand out id %u", k->id);
		} else if (by) {
			mfail(m, "handed out id %u before id %u, which waits in "
			      "the ready list%s%s", by->id, k->id, any_final ?
			      ": a descriptor nfqb_verdict_batch() finalized in "
			      "the ready list was reused and handed out" : "",
			      hint);
			return;
		} else {
			mfail(m, "id %u waits in the ready list, but "
			      "nfqb_book_serve() has nothing more to hand out",
			      k->id);
			return;
		}
	}
}

/* Take up to @max packets out of the ready list; returns how many. */
static unsigned int pop_some(struct model *m, struct nfqb_queue *q,
			     unsigned int max)
{
	struct nfqb_packet *vec[64];
	unsigned int n, i;
	bool any_final = false;

	if (max > 64)
		max = 64;
	n = nfqbt_serve(q, vec, max);
	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->n; i++)
		any_final |= m->p[i].finalized_ready;
	for (i = 0; i < n; i++) {
		uint32_t id = nfqb_pkt_id(vec[i]), len;
		const uint8_t *pl = nfqb_pkt_payload(vec[i], &len);
		struct mpkt *k = entry(m, id);
		char st[160];

		if (pl && len >= 4 && !memcmp(pl, SPOOF_TAG, 4)) {
			mfail(m, "a foreign message (not from the kernel) was "
			     "handed to the application as id %u", id);
			break;
		}
		if (!k || k->kind != K_GOOD) {
			mfail(m, "handed out id %u, %s", id, k ?
			     kind_names[k->kind] : "which the kernel never queued");
			break;
		}
		if (!k->in_ready) {
			mfail(m, "handed out id %u, which is not waiting to be "
			     "handed out (%s)%s", id, kstate(k, st, sizeof(st)),
			     any_final ? "; nfqb_verdict_batch() finalized "
			     "packets of the ready list before" : "");
			break;
		}
		if (KP(m, k)->applied && !k->expired) {
			mfail(m, "handed out id %u after the kernel got its "
			     "verdict (%s)", id, km_dec_str(&KP(m, k)->got, st, sizeof(st)));
			break;
		}
		/* the ready list is in id order */
		skipped(m, (unsigned int)(k - m->p), k, any_final,
			shared_with_dead(m, vec[i], id, st, sizeof(st)));
		if (atomic_load(&m->failed))
			break;
		k->in_ready = false;
		k->popped = true;
		k->view = vec[i];
		if (!KP(m, k)->applied && !view_intact(k)) {
			mfail(m, "the view handed out for id %u is not its "
			     "message", id);
			break;
		}
		ev(m, "application gets id %u", id);
	}
	if (n < max && !atomic_load(&m->failed))
		skipped(m, m->n, NULL, any_final, "");
	pthread_mutex_unlock(&m->mu);
	return n;
}

static void pop_all(struct model *m, struct nfqb_queue *q)
{
	while (pop_some(m, q, 64) == 64 && !atomic_load(&m->failed))
		;
}

/* The outcome of a decision call (model mutex held); true if the handle
 * is dead now. */
static bool finish_decision(struct model *m, struct mpkt *k, int how,
			    int ret, int e, unsigned int af0)
{
	uint64_t now = mnow(m);
	char d[96], g[96];

	if (ret == 0) {
		if (KP(m, k)->applied && !km_dec_eq(&KP(m, k)->got, &k->d))
			mfail(m, "id %u: %s(%s) returned 0, but the kernel had "
			     "already got %s for it: the decision is lost",
			     k->id, call_names[how], km_dec_str(&k->d, d, sizeof(d)),
			     km_dec_str(&KP(m, k)->got, g, sizeof(g)));
		k->app = A_DECIDED;
		k->decided_at = now;
		ev(m, "application decides id %u: %s (%s)", k->id,
		   km_dec_str(&k->d, d, sizeof(d)), call_names[how]);
		return true;
	}
	if (ret == -1 && e == ETIMEDOUT) {
		if (!timeout_ok(m, k, now))
			mfail(m, "id %u: %s() refused with ETIMEDOUT %.3f ms after "
			     "it arrived (verdict timeout %u ms)", k->id,
			     call_names[how], ms_of(now - k->arrival), m->tmo_ms);
		else if (KP(m, k)->applied && !km_is_default(&KP(m, k)->got, m->dflt))
			mfail(m, "id %u: %s() refused with ETIMEDOUT, but the "
			     "kernel got %s", k->id, call_names[how],
			     km_dec_str(&KP(m, k)->got, g, sizeof(g)));
		k->app = A_TIMEDOUT;
		k->expired = true;
		k->decided_at = now;
		m->late_calls++;
		ev(m, "application decides id %u: ETIMEDOUT", k->id);
		return true;
	}
	k->app = A_NONE;
	if (ret == -1 && e == ENOMEM && atomic_load(&m->allocs_failed) != af0)
		return false;	/* the application tries again later */
	if (ret == -1 && k->expired)
		mfail(m, "id %u: the verdict timeout gave it the default, so "
		      "the late %s() must report ETIMEDOUT; it returned %s%s",
		      k->id, call_names[how], strerror(e),
		      shared_with_dead(m, k->view, k->id, d, sizeof(d)));
	mfail(m, "id %u: %s() on a packet the application holds undecided "
	     "returned %d (%s)%s%s", k->id, call_names[how], ret, strerror(e),
	     timeout_ok(m, k, now) ? " (its verdict timeout had passed: a "
	     "late verdict must report ETIMEDOUT)" : "",
	     shared_with_dead(m, k->view, k->id, d, sizeof(d)));
	return false;
}

/* The main thread decides a random packet it holds. */
static void main_decide(struct model *m, struct nfqb_queue *q, bool any)
{
	unsigned int cand[MAXIDS], nc = 0, i, af0;
	struct choice c;
	struct mpkt *k;
	bool check;
	int ret, e;

	(void)q;
	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->n; i++) {
		k = &m->p[i];
		if (k->popped && k->app == A_NONE && (any || !k->handed_off))
			cand[nc++] = i;
	}
	if (!nc) {
		pthread_mutex_unlock(&m->mu);
		return;
	}
	k = &m->p[cand[rnd(&m->rs, nc)]];
	random_choice(&m->rs, &c);
	k->app = A_DECIDING;
	k->d = c.d;
	/* the buffer is the application's until its verdict (unless the
	 * timeout may have given it back) */
	check = !KP(m, k)->applied && !timeout_ok(m, k, mnow(m));
	pthread_mutex_unlock(&m->mu);
	if (check && !view_intact(k))
		mfail(m, "id %u: its view changed while the application held "
		     "it undecided", k->id);
	af0 = atomic_load(&m->allocs_failed);
	ret = do_call(k->view, &c);
	e = errno;
	pthread_mutex_lock(&m->mu);
	if (finish_decision(m, k, c.how, ret, e, af0))
		add_dead(m->dead, m->dead_id, &m->ndead, &m->rs, k->view, k->id);
	pthread_mutex_unlock(&m->mu);
}

/* A verdict on a dead handle must be refused and change nothing. */
static void dead_call(struct model *m, struct nfqb_packet **dead,
		      uint32_t *ids, unsigned int n, uint64_t *rs)
{
	unsigned int i = rnd(rs, n), j, af0;
	struct choice c;
	char now_holds[96] = "not handed out, or free";
	int ret, e;

	random_choice(rs, &c);
	af0 = atomic_load(&m->allocs_failed);
	ret = do_call(dead[i], &c);
	e = errno;
	pthread_mutex_lock(&m->mu);
	if (ret < 0 && e == ENOMEM && atomic_load(&m->allocs_failed) != af0) {
		/* nfqb_verdict_ex() could not copy its payload: refused
		 * before it looked at the handle, nothing changed */
	} else if (ret == 0) {
		for (j = 0; j < m->n; j++)
			if (m->p[j].view == dead[i] && m->p[j].popped &&
			    m->p[j].id != ids[i])
				snprintf(now_holds, sizeof(now_holds),
					 "now the view of id %u", m->p[j].id);
		mfail(m, "%s() on the dead handle of id %u returned 0 (the "
		     "descriptor is %s): it decides whatever packet uses "
		     "that descriptor now (P6)", call_names[c.how], ids[i],
		     now_holds);
	} else if (e != EALREADY && e != ETIMEDOUT) {
		mfail(m, "%s() on the dead handle of id %u: %s, not EALREADY or "
		     "ETIMEDOUT", call_names[c.how], ids[i], strerror(e));
	} else {
		m->late_calls++;
		ev(m, "dead handle of id %u refused: %s", ids[i], strerror(e));
	}
	pthread_mutex_unlock(&m->mu);
}

/*
 * What nfqb_verdict_batch(@max) should finalize: @ns packets the application
 * holds undecided, maybe @nr waiting in the ready list. False if the answer
 * is not certain (a timeout may have passed, a worker owns one, a packet
 * may have been dropped): the application tries another time.
 */
static bool batch_range(struct model *m, uint32_t max, unsigned int *ns,
			unsigned int *nr)
{
	unsigned int i;

	*ns = *nr = 0;
	for (i = 0; i < m->n; i++) {
		struct mpkt *k = &m->p[i];

		if (k->kind != K_GOOD || !k->delivered || k->rejected ||
		    nfqb_id_after(k->id, max))
			continue;
		if ((k->app == A_NONE && !KP(m, k)->applied && timeout_ok(m, k, mnow(m))) ||
		    (k->handed_off && (k->app == A_NONE || k->app == A_DECIDING)) ||
		    (k->in_ready && atomic_load(&m->allocs_failed)))
			return false;
		if (k->popped && k->app == A_NONE && !KP(m, k)->applied)
			(*ns)++;
		if (k->in_ready && !KP(m, k)->applied)
			(*nr)++;
	}
	return true;
}

/* nfqb_verdict_batch() finalized these (model mutex held). */
static void batch_record(struct model *m, uint32_t max, const struct km_dec *d,
			 bool ready_too)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		struct mpkt *k = &m->p[i];

		if (k->kind != K_GOOD || !k->delivered || k->rejected ||
		    KP(m, k)->applied || nfqb_id_after(k->id, max))
			continue;
		if (k->popped && k->app == A_NONE) {
			add_dead(m->dead, m->dead_id, &m->ndead, &m->rs, k->view,
				 k->id);
		} else if (k->in_ready && ready_too) {
			k->in_ready = false;
			k->finalized_ready = true;
		} else {
			continue;
		}
		k->app = A_BATCHED;
		k->d = *d;
		k->decided_at = mnow(m);
	}
}

/* nfqb_verdict_batch() from the main thread. */
static void main_batch(struct model *m, struct nfqb_queue *q)
{
	unsigned int i, ns, nr, af0 = atomic_load(&m->allocs_failed);
	struct km_dec d = { 0 };
	uint32_t max;
	char b[96];
	int ret, e;

	pthread_mutex_lock(&m->mu);
	if (!m->n) {
		pthread_mutex_unlock(&m->mu);
		return;
	}
	/* up to a packet the application holds, or anywhere */
	max = m->p[rnd(&m->rs, m->n)].id + rnd(&m->rs, 3) - 1;
	for (i = 0; i < 8 && chance(&m->rs, 70); i++) {
		const struct mpkt *k = &m->p[rnd(&m->rs, m->n)];

		if (k->popped && k->app == A_NONE) {
			max = k->id;
			break;
		}
	}
	if (!batch_range(m, max, &ns, &nr)) {
		pthread_mutex_unlock(&m->mu);
		return;
	}
	d.verdict = chance(&m->rs, 50) ? NFQB_ACCEPT :
		    chance(&m->rs, 80) ? NFQB_DROP : NFQB_REPEAT;
	d.has_mark = chance(&m->rs, 50);
	d.mark = d.has_mark ? rnd(&m->rs, 4) : 0;
	pthread_mutex_unlock(&m->mu);
	ret = nfqb_verdict_batch(q, max, d.verdict, d.has_mark ? &d.mark : NULL);
	e = errno;
	pthread_mutex_lock(&m->mu);
	ev(m, "application: nfqb_verdict_batch(max %u, %s) = %d (holds %u, "
	   "%u in the ready list)", max, km_dec_str(&d, b, sizeof(b)), ret, ns, nr);
	if (ret < 0 && e == ENOMEM && atomic_load(&m->allocs_failed) != af0)
		;	/* refused, nothing changed */
	else if (ret < 0 && !(e == ENOENT && ns == 0))
		mfail(m, "nfqb_verdict_batch(max %u): %s, with %u undecided "
		      "packets held by the application in range", max,
		      strerror(e), ns);
	else if (ret >= 0 && (unsigned int)ret != ns &&
		 !(nr && (unsigned int)ret == ns + nr))
		mfail(m, "nfqb_verdict_batch(max %u) finalized %d packets; the "
		      "application held %u undecided (and %u waited in the "
		      "ready list)", max, ret, ns, nr);
	else if (ret > 0)
		batch_record(m, max, &d, nr && (unsigned int)ret == ns + nr);
	pthread_mutex_unlock(&m->mu);
}

/*
 * What the library owes packet @k, and by when: @run_by, when it must run
 * (nfqb_queue_next_timeout()); @done_by, when the kernel must have it.
 */
static bool owed(const struct model *m, const struct mpkt *k,
		 uint64_t *run_by, uint64_t *done_by, const char **what)
{
	uint64_t lat = m->latency_us * 1000ull, tmo = m->tmo_ms * MS;

	if (!KP(m, k)->queued || !k->delivered)
		return false;
	if (unreadable(k)) {
		if (!k->gap_closed_at)
			return false;
		*run_by = *done_by = k->gap_closed_at + lat;
		*what = "in a closed gap";
		return true;
	}
	if (k->kind != K_GOOD || k->rejected) {
		*run_by = *done_by = k->arrival + lat;
		*what = "owed the default";
		return true;
	}
	switch (k->app) {
	case A_DECIDED:
	case A_BATCHED:
		*run_by = *done_by = k->decided_at + lat;
		*what = "decided";
		return true;
	case A_TIMEDOUT:
		*run_by = k->arrival + tmo;
		*done_by = k->arrival + tmo + lat;
		*what = "timed out";
		return true;
	case A_NONE:
		if (!tmo)
			return false;
		*run_by = k->arrival + tmo;
		*done_by = k->arrival + tmo + lat;
		*what = "undecided, verdict timeout running";
		return true;
	default:
		return false;
	}
}

/* After nfqb_flush() with working sends: does the library say the truth
 * about when it must run again? */
static void check_truth(struct model *m, struct nfqb_queue *q)
{
	int nt = nfqb_queue_next_timeout(q);
	uint64_t now, run_by, done_by, best = UINT64_MAX, lim;
	const struct mpkt *kb = NULL, *ko = NULL;
	const char *what = "", *wb = "";
	bool any = false, open = false, unsure = false;
	char st[160];
	unsigned int i;

	pthread_mutex_lock(&m->mu);
	now = mnow(m);
	for (i = 0; i < m->n; i++) {
		const struct mpkt *k = &m->p[i];
		uint64_t eff;

		if (k->delivered && unreadable(k) && !KP(m, k)->applied &&
		    open_gap(m, i))
			open = true;
		if (k->in_ready && atomic_load(&m->allocs_failed))
			unsure = true;
		if (!owed(m, k, &run_by, &done_by, &what))
			continue;
		any = true;
		if (done_by <= now) {
			ko = k;
			wb = what;
			break;
		}
		eff = run_by > now ? run_by : done_by;
		if (eff < best) {
			best = eff;
			kb = k;
			wb = what;
		}
	}
	if (ko && nt != 0) {
		mfail(m, "nfqb_queue_next_timeout() = %d after nfqb_flush(), but "
		     "id %u (%s; %s) is overdue: the library must run now%s", nt,
		     ko->id, kstate(ko, st, sizeof(st)), wb, KP(m, ko)->failed_sends ? " (a verdict for it was in "
		     "a failed sendmsg)" : "");
	} else if (!ko && kb) {
		lim = (best - now + MS - 1) / MS;
		if (nt < 0 || (uint64_t)nt > lim)
			mfail(m, "nfqb_queue_next_timeout() = %d, but id %u (%s; "
			     "%s) is due in %.3f ms%s", nt, kb->id,
			     kstate(kb, st, sizeof(st)), wb,
			     ms_of(best - now), KP(m, kb)->failed_sends ? " (a verdict "
			     "for it was in a failed sendmsg)" : "");
	} else if (!any && !open && !unsure && nt != -1) {
		mfail(m, "nfqb_queue_next_timeout() = %d with nothing pending "
		     "(no decision to send, no verdict timeout running): an "
		     "idle owner would wake for nothing%s", nt,
		     nt == 0 ? ", again and again" : "");
	}
	pthread_mutex_unlock(&m->mu);
}

/* Everything overdue must be in the kernel now. */
static void check_owed(struct model *m)
{
	uint64_t now, run_by, done_by;
	const char *what;
	unsigned int i;
	char st[160], note[64] = "";

	pthread_mutex_lock(&m->mu);
	now = mnow(m);
	for (i = 0; i < m->n && !atomic_load(&m->failed); i++) {
		const struct mpkt *k = &m->p[i];

		if (!owed(m, k, &run_by, &done_by, &what) || done_by > now)
			continue;
		if (KP(m, k)->failed_sends)
			snprintf(note, sizeof(note), "; a verdict for it was "
				 "in %u failed sendmsg call%s", KP(m, k)->failed_sends,
				 KP(m, k)->failed_sends > 1 ? "s" : "");
		mfail(m, "id %u (%s) is owed a verdict since %.3f ms ago, and "
		     "the kernel still has none after two nfqb_flush() calls "
		     "with working sends%s", k->id, kstate(k, st, sizeof(st)),
		     ms_of(now - done_by), note);
	}
	pthread_mutex_unlock(&m->mu);
}

static int do_flush(struct model *m, struct nfqb_queue *q, bool truth)
{
	unsigned int sf0, af0 = atomic_load(&m->allocs_failed);
	int ret, e;

	pthread_mutex_lock(&m->mu);
	sf0 = m->sends_failed;
	pthread_mutex_unlock(&m->mu);
	ret = nfqb_flush(q);
	e = errno;
	pthread_mutex_lock(&m->mu);
	ev(m, "application: nfqb_flush() = %d", ret);
	if (m->sends_failed != sf0 && m->last_send_failed)
		m->unabsorbed++;	/* the library gave up for now */
	if (m->sends_failed != sf0 || atomic_load(&m->allocs_failed) != af0) {
		pthread_mutex_unlock(&m->mu);
		return 1;	/* not clean */
	}
	if (ret < 0)
		mfail(m, "nfqb_flush() failed (%s) with no failure injected",
		     strerror(e));
	pthread_mutex_unlock(&m->mu);
	if (truth)
		check_truth(m, q);
	return 0;
}

/* Flush twice with working sends and check what is owed. */
static void settle(struct model *m, struct nfqb_queue *q, bool check)
{
	int mode;
	bool af;

	pthread_mutex_lock(&m->mu);
	mode = m->send_mode;
	m->send_mode = 0;
	pthread_mutex_unlock(&m->mu);
	af = atomic_exchange(&m->alloc_faults, false);
	do_flush(m, q, false);
	do_flush(m, q, check && m->sc->truth);
	if (check)
		check_owed(m);
	atomic_store(&m->alloc_faults, af);
	pthread_mutex_lock(&m->mu);
	m->send_mode = mode;
	pthread_mutex_unlock(&m->mu);
}

/* EAGAIN from nfqbt_rx_inject(): are the buffers really all in use? */
static void on_eagain(struct model *m, struct nfqb_queue *q)
{
	unsigned int held, exp;

	pthread_mutex_lock(&m->mu);
	held = held_count(m, &exp);
	pthread_mutex_unlock(&m->mu);
	if (held >= m->nbuf)
		return;
	do_flush(m, q, false);	/* let it run once more */
	if (deliver_one(m, q) != -1)
		return;
	pthread_mutex_lock(&m->mu);
	held = held_count(m, &exp);
	if (held < m->nbuf)
		mfail(m, "nfqbt_rx_inject(): EAGAIN (no free buffer), but only %u "
		     "packets of %u buffers wait for their verdict%s: the "
		     "buffers of verdicted packets are not given back", held,
		     m->nbuf, exp ? " (the application holds packets the "
		     "verdict timeout already gave the default)" : "");
	pthread_mutex_unlock(&m->mu);
}

/* ------------------------------------------------------------------ */
/* Worker threads                                                       */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct model *m = w->m;

	pthread_mutex_lock(&m->mu);
	for (;;) {
		struct choice c;
		struct mpkt *k;
		struct nfqb_packet *view;
		unsigned int af0;
		int ret, e;

		while (!m->stop && m->wqh == m->wqt)
			pthread_cond_wait(&m->cv, &m->mu);
		if (m->wqh == m->wqt || atomic_load(&m->failed))
			break;
		k = &m->p[m->wq[m->wqh++ % WQ_CAP]];
		view = k->view;
		random_choice(&w->rs, &c);
		k->app = A_DECIDING;
		k->d = c.d;
		af0 = atomic_load(&m->allocs_failed);
		pthread_mutex_unlock(&m->mu);
		if (rnd(&w->rs, 4) == 0)
			sched_yield();
		ret = do_call(view, &c);
		e = errno;
		pthread_mutex_lock(&m->mu);
		if (finish_decision(m, k, c.how, ret, e, af0))
			add_dead(w->dead, w->dead_id, &w->ndead, &w->rs, view,
				 k->id);
		else if (k->app == A_NONE && !atomic_load(&m->failed))
			m->wq[m->wqt++ % WQ_CAP] = (int)(k - m->p);
		if (m->sc->dead && w->ndead && rnd(&w->rs, 3) == 0) {
			pthread_mutex_unlock(&m->mu);
			dead_call(m, w->dead, w->dead_id, w->ndead, &w->rs);
			pthread_mutex_lock(&m->mu);
		}
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

static void handoff(struct model *m)
{
	unsigned int i, n = 1 + rnd(&m->rs, 4);

	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->n && n; i++) {
		struct mpkt *k = &m->p[rnd(&m->rs, m->n)];

		if (!k->popped || k->app != A_NONE || k->handed_off)
			continue;
		k->handed_off = true;
		m->wq[m->wqt++ % WQ_CAP] = (int)(k - m->p);
		n--;
		ev(m, "application hands id %u to a worker", k->id);
	}
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* ------------------------------------------------------------------ */
/* A case                                                               */

struct expect {
	unsigned int timeouts, unseen, unseen_batch, gap, late, spoof, trunc;
	unsigned int bad, replies;
	unsigned int enoent, sends_failed, unabsorbed, single, batch;
	unsigned int allocs_failed;
};

static void expectations(struct model *m, struct expect *x)
{
	unsigned int i;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < m->n; i++) {
		const struct mpkt *k = &m->p[i];

		if (!KP(m, k)->applied || !km_is_default(&KP(m, k)->got, m->dflt))
			continue;
		if (k->kind == K_GOOD && k->expired)
			x->timeouts++;
		else if (k->kind == K_MALFORMED || k->kind == K_TRUNC ||
			 (k->kind == K_GOOD && k->rejected)) {
			x->unseen++;
			x->unseen_batch += KP(m, k)->by_batch;
		}
	}
	x->gap = m->gap_verdicts;
	x->late = m->late_calls;
	x->spoof = m->spoof_dlv;
	x->trunc = m->trunc_dlv;
	x->bad = m->bad_dlv;
	x->replies = m->replies_dlv;
	x->enoent = m->enoent_dlv;
	x->sends_failed = m->sends_failed;
	x->unabsorbed = m->unabsorbed;
	x->single = m->km.singles;
	x->batch = m->km.batches;
	x->allocs_failed = atomic_load(&m->allocs_failed);
}

/* The first counter mismatch of a run: reported after every case has run,
 * so that a safety failure in any case is reported first. */
static char counter_err[1280];

static void counter_fail(struct model *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void counter_fail(struct model *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (counter_err[0])
		return;
	n = snprintf(counter_err, sizeof(counter_err), "[%s] seed %lu: ",
		     m->sc->name, m->seed);
	va_start(ap, fmt);
	n += vsnprintf(counter_err + n, sizeof(counter_err) - (size_t)n, fmt, ap);
	va_end(ap);
	if ((size_t)n < sizeof(counter_err))
		snprintf(counter_err + n, sizeof(counter_err) - (size_t)n,
			 " (P8; replay: NFQB_SEED=%lu CK_RUN_CASE=%s)", m->seed,
			 m->sc->name);
}

#define COUNTER(cond, ...) do { if (!(cond)) { counter_fail(m, __VA_ARGS__); \
	return; } } while (0)

static void check_counters(struct model *m, const struct nfqb_stats *st,
			   const struct expect *x)
{
	char want[512], why[256];

	/* what the model read and the kernel got: foreign, truncated and
	 * (at least) malformed messages, error replies (ENOENT of them),
	 * single and batch verdict messages, ids in gaps around unreadable
	 * messages given the default one by one, verdicts refused with
	 * EALREADY or ETIMEDOUT */
	snprintf(want, sizeof(want), "rejected_foreign=%u "
		 "rejected_truncated=%u rejected_malformed>=%u "
		 "kernel_errors=%u enoent_errors=%u verdict_msgs=%u "
		 "batch_msgs=%u gap_ids=%u late_verdicts=%u", x->spoof,
		 x->trunc, x->bad, x->replies, x->enoent, x->single, x->batch,
		 x->gap, x->late);
	COUNTER(nfqbt_stats_match(st, want, why, sizeof(why)), "counter %s",
		why);
	COUNTER(x->allocs_failed || st->timeouts == x->timeouts,
		"counter timeouts = %" PRIu64 ", %u packets got the default "
		"by the verdict timeout", st->timeouts, x->timeouts);
	COUNTER(st->timeouts + st->defaults + st->rejected_defaults ==
		x->timeouts + x->unseen,
		"counters timeouts + defaults + rejected_defaults = %" PRIu64
		" + %" PRIu64 " + %" PRIu64 ", the kernel got %u defaults by "
		"timeout and %u for messages the application never saw%s",
		st->timeouts, st->defaults, st->rejected_defaults, x->timeouts,
		x->unseen, x->unseen_batch ? " (some by a batch verdict over "
		"them: a batch spanned a rejected message, by chance with the "
		"default verdict)" : "");
	COUNTER(st->send_failures <= x->sends_failed &&
		(st->send_failures > 0 || !x->unabsorbed),
		"counter send_failures = %" PRIu64 ", %u sendmsg calls failed, "
		"%u nfqb_flush() calls ended on a failed send",
		st->send_failures, x->sends_failed, x->unabsorbed);
}

/* After close: every id's final verdict (P1, P3). */
static void final_check(struct model *m)
{
	unsigned int i;
	char st[160], d[96], g[96];

	for (i = 0; i < m->n && !atomic_load(&m->failed); i++) {
		const struct mpkt *k = &m->p[i];

		if (k->kind == K_LOST)
			continue;
		kstate(k, st, sizeof(st));
		if (!KP(m, k)->applied) {
			if (unreadable(k) && k->delivered && open_gap(m, i))
				continue;	/* dropped at unbind */
			mfail(m, "id %u (%s) was left queued after "
			     "nfqb_queue_close(): it never got a verdict%s%s",
			     k->id, st, KP(m, k)->failed_sends ?
			     " (its verdict was in a failed sendmsg)" : "",
			     m->close_sends_failed ? " (sends failed during "
			     "close, each alone)" : "");
			continue;
		}
		if (k->kind == K_GOOD && !k->rejected &&
		    (k->app == A_DECIDED || k->app == A_BATCHED)) {
			if (!km_dec_eq(&KP(m, k)->got, &k->d))
				mfail(m, "id %u: decided %s, got %s", k->id,
				     km_dec_str(&k->d, d, sizeof(d)),
				     km_dec_str(&KP(m, k)->got, g, sizeof(g)));
		} else if (!km_is_default(&KP(m, k)->got, m->dflt)) {
			mfail(m, "id %u (%s) got %s, not the default", k->id,
			     st, km_dec_str(&KP(m, k)->got, g, sizeof(g)));
		}
	}
}

static void drain(struct model *m, struct nfqb_queue *q)
{
	unsigned int guard;

	for (guard = 0; !fifo_empty(m); guard++) {
		int r;

		check_ok(m);
		if (guard > 100000) {
			mfail(m, "the library makes no progress reading the "
			     "socket");
			check_ok(m);
		}
		r = deliver_one(m, q);
		if (r == 1) {
			if (!m->sc->lazy)
				pop_all(m, q);
			continue;
		}
		if (r == -1)
			on_eagain(m, q);
		check_ok(m);
		pop_all(m, q);
		main_decide(m, q, true);
		do_flush(m, q, false);
	}
}

static struct nfqb_queue *setup(struct model *m)
{
	const struct scen *sc = m->sc;
	static const uint32_t lats[] = { 0, 100, 1000, 5000 };
	struct nfqb_queue *q;

	switch (rnd(&m->rs, 4)) {
	case 0:
		m->first = 0xffffffffu - rnd(&m->rs, 150);	/* wraps */
		break;
	case 1:
		m->first = 1;
		break;
	default:
		m->first = (uint32_t)next64(&m->rs);
		break;
	}
	m->target = 1 + rnd(&m->rs, chance(&m->rs, 20) ? 300 : 120);
	/* few buffers, or more than there can be packets outstanding */
	m->nbuf = chance(&m->rs, sc->timeouts || sc->lazy ? 40 : 15) ?
		  2 + rnd(&m->rs, 14) : m->target + 4;
	m->dflt = chance(&m->rs, 50) ? NFQB_DROP : NFQB_ACCEPT;
	m->tmo_ms = sc->timeouts && chance(&m->rs, 75) ? 1 + rnd(&m->rs, 20) : 0;
	m->latency_us = lats[rnd(&m->rs, 4)];
	m->coalesce = !chance(&m->rs, 15);
	m->batch_limit = 1 + rnd(&m->rs, 80);
	atomic_store(&m->now, T0);

	q = nfqbt_queue_detached(QNUM, m->nbuf);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(q, m->dflt), 0);
	ck_assert_int_eq(nfqb_queue_set_batch_limit(q, m->batch_limit), 0);
	ck_assert_int_eq(nfqb_queue_set_latency(q, m->latency_us), 0);
	ck_assert_int_eq(nfqb_queue_set_coalesce(q, m->coalesce), 0);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(q, m->tmo_ms), 0);
	ev(m, "case: ids from %u, %u ids, %u buffers, default %s, timeout %u "
	   "ms, latency %u us, coalesce %d", m->first, m->target, m->nbuf,
	   m->dflt == NFQB_DROP ? "DROP" : "ACCEPT", m->tmo_ms, m->latency_us,
	   m->coalesce);
	return q;
}

enum op {
	OP_GEN, OP_RECV, OP_POP, OP_DECIDE, OP_HANDOFF, OP_DEAD, OP_BATCH,
	OP_FLUSH, OP_TICK, OP_JUMP, OP_SETTLE, OP_N,
};

static enum op pick_op(struct model *m)
{
	const struct scen *sc = m->sc;
	unsigned int w[OP_N] = {
		[OP_GEN] = m->n < m->target ? 8 : 0,
		[OP_RECV] = 14,
		[OP_POP] = sc->lazy ? 8 : 0,
		[OP_DECIDE] = sc->threads ? 6 : 14,
		[OP_HANDOFF] = sc->threads ? 10 : 0,
		[OP_DEAD] = sc->dead ? 5 : 0,
		[OP_BATCH] = 2,
		[OP_FLUSH] = 10,
		[OP_TICK] = 8,
		[OP_JUMP] = m->tmo_ms ? 2 : 0,
		[OP_SETTLE] = 2,
	};
	unsigned int total = 0, r, i;

	for (i = 0; i < OP_N; i++)
		total += w[i];
	r = rnd(&m->rs, total);
	for (i = 0; i < OP_N; i++) {
		if (r < w[i])
			return (enum op)i;
		r -= w[i];
	}
	return OP_FLUSH;
}

static void step(struct model *m, struct nfqb_queue *q)
{
	const struct scen *sc = m->sc;
	unsigned int i, n;

	switch (pick_op(m)) {
	case OP_GEN:
		pthread_mutex_lock(&m->mu);
		for (n = 1 + rnd(&m->rs, 3); n && m->n < m->target; n--)
			gen_one(m);
		pthread_mutex_unlock(&m->mu);
		break;
	case OP_RECV:
		for (n = 1 + rnd(&m->rs, 6); n; n--) {
			int r = deliver_one(m, q);

			if (r == -1)
				on_eagain(m, q);
			if (r != 1)
				break;
		}
		if (!sc->lazy)
			pop_all(m, q);
		break;
	case OP_POP:
		pop_some(m, q, 1 + rnd(&m->rs, 8));
		break;
	case OP_DECIDE:
		for (n = 1 + rnd(&m->rs, 2); n; n--)
			main_decide(m, q, false);
		break;
	case OP_HANDOFF:
		handoff(m);
		break;
	case OP_DEAD:
		if (m->ndead)
			dead_call(m, m->dead, m->dead_id, m->ndead, &m->rs);
		break;
	case OP_BATCH:
		main_batch(m, q);
		break;
	case OP_FLUSH:
		do_flush(m, q, sc->truth && !sc->threads);
		break;
	case OP_TICK:
		atomic_fetch_add(&m->now, rnd(&m->rs, 1500) * 1000ull);
		break;
	case OP_JUMP:
		i = m->tmo_ms + rnd(&m->rs, m->tmo_ms + 1);
		atomic_fetch_add(&m->now, i * MS);
		ev(m, "time jumps %u ms", i);
		break;
	case OP_SETTLE:
		settle(m, q, !sc->threads);
		break;
	default:
		break;
	}
}

static unsigned long env_ul(const char *name, unsigned long dflt)
{
	const char *e = getenv(name);

	return e && *e ? strtoul(e, NULL, 0) : dflt;
}

static struct model *model_new(const struct scen *sc, unsigned long seed)
{
	struct model *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->sc = sc;
	m->seed = seed;
	m->rs = splitmix(seed) | 1;
	m->fs = splitmix(seed ^ 0x5eedf00dull) | 1;
	m->trace = getenv("NFQB_TRACE") != NULL;
	km_init(&m->km, QNUM, &model_ops, m);
	pthread_mutex_init(&m->mu, NULL);
	pthread_mutex_init(&m->logmu, NULL);
	pthread_cond_init(&m->cv, NULL);
	atomic_store(&m->now, T0);
	{
		struct nfqb_seam seam = {
			.sendmsg = model_sendmsg,
			.now_ns = model_now_ns,
			.fail_alloc = model_fail_alloc,
			.data = m,
		};

		nfqbt_seam_install(&seam);
	}
	return m;
}

static void model_free(struct model *m)
{
	nfqbt_seam_install(NULL);
	km_free(&m->km);
	while (m->fh != m->ft)
		free(m->fifo[m->fh++ % FIFO_CAP].buf);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->logmu);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

static void start_workers(struct model *m)
{
	unsigned int i;

	for (i = 0; i < NWORKERS; i++) {
		m->w[i].m = m;
		m->w[i].rs = splitmix(m->seed * 31 + i + 1) | 1;
		ck_assert_int_eq(pthread_create(&m->w[i].th, NULL, worker_main,
						&m->w[i]), 0);
	}
	m->workers_running = true;
}

/* The end: workers finish what they were given, sends work again, the
 * kernel says what it still has to say; the counters are read; close. */
static void finish_case(struct model *m, struct nfqb_queue *q)
{
	struct nfqb_stats st;
	struct expect x;
	int ret, e;

	stop_workers(m);
	check_ok(m);
	pthread_mutex_lock(&m->mu);
	m->send_mode = 0;
	atomic_store(&m->alloc_faults, false);
	while (m->n < m->target)
		gen_one(m);
	pthread_mutex_unlock(&m->mu);
	drain(m, q);
	if (!m->sc->lazy || chance(&m->rs, 50))
		pop_all(m, q);
	check_ok(m);
	settle(m, q, true);
	check_ok(m);
	ck_assert_int_eq(nfqb_queue_stats(q, &st, sizeof(st)), 0);
	expectations(m, &x);
	ev(m, "so far: %u sends, %u failed (%u calls ended on a failure), %u "
	   "allocations failed, %u verdict and %u batch messages", m->sends_ok,
	   m->sends_failed, m->unabsorbed, atomic_load(&m->allocs_failed),
	   m->km.singles, m->km.batches);

	/* close, with undecided packets (and sends failing now and then) */
	pthread_mutex_lock(&m->mu);
	m->in_close = true;
	if (m->sc->flaky_close && chance(&m->rs, 40))
		m->send_mode = 2;
	ev(m, "application: nfqb_queue_close()%s",
	   m->send_mode ? " with isolated send failures" : "");
	pthread_mutex_unlock(&m->mu);
	ret = nfqb_queue_close(q);
	e = errno;
	if (ret != 0 && !m->close_sends_failed)
		mfail(m, "nfqb_queue_close() failed: %s", strerror(e));
	check_ok(m);
	final_check(m);
	check_ok(m);
	if (env_ul("NFQB_COUNTERS", 1))
		check_counters(m, &st, &x);
}

static void run_case(const struct scen *sc, unsigned long seed)
{
	struct model *m = model_new(sc, seed);
	struct nfqb_queue *q = setup(m);
	unsigned int s, steps;

	m->send_mode = sc->sendfail ? 1 : 0;
	atomic_store(&m->alloc_faults, sc->allocfail);
	if (sc->threads)
		start_workers(m);
	/* until the kernel has queued every id and the socket is empty,
	 * at least 3 steps per id */
	steps = 3 * m->target + 20;
	for (s = 0; s < 4 * steps; s++) {
		if (s >= steps && m->n == m->target && fifo_empty(m))
			break;
		step(m, q);
		check_ok(m);
	}
	finish_case(m, q);
	model_free(m);
}

/*
 * The random cases of a property run within CASES_BUDGET_S (a sanitizer on
 * a loaded machine runs them many times slower than the test's time limit
 * allows), at least CASES_MIN of them.
 */
#define CASES_BUDGET_S	120
#define CASES_MIN	100

static bool out_of_budget(time_t t0, unsigned long done)
{
	return done >= CASES_MIN && time(NULL) - t0 >= CASES_BUDGET_S;
}

/*
 * Run @one for consecutive seeds within the time budget: NFQB_SEED alone,
 * or NFQB_CASES (default @dflt) from the clock's seed plus @salt.
 */
static void run_cases(const char *name, unsigned long salt,
		      unsigned long dflt,
		      void (*one)(const void *arg, unsigned long seed),
		      const void *arg)
{
	unsigned long seed, i, n;
	time_t t0 = time(NULL);

	if (getenv("NFQB_SEED")) {
		seed = env_ul("NFQB_SEED", 0);
		n = 1;
	} else {
		seed = (unsigned long)time(NULL) * 16 + salt;
		n = env_ul("NFQB_CASES", dflt);
	}
	fprintf(stderr, "test_model [%s]: %lu case%s, seeds %lu..%lu\n",
		name, n, n == 1 ? "" : "s", seed, seed + n - 1);
	for (i = 0; i < n && !out_of_budget(t0, i); i++)
		one(arg, seed + i);
	if (i < n)
		fprintf(stderr, "test_model [%s]: time budget: %lu of %lu "
			"cases\n", name, i, n);
}

static void scen_case(const void *arg, unsigned long seed)
{
	run_case(arg, seed);
}

START_TEST(model_property)
{
	const struct scen *sc = &scens[_i];

	counter_err[0] = 0;
	run_cases(sc->name, (unsigned long)_i * 1000003ul, sc->cases,
		  scen_case, sc);
	if (counter_err[0]) {
		fprintf(stderr, "\ntest_model %s\n", counter_err);
		ck_abort_msg("%s", counter_err);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Scenarios: exact cases, the same model of the kernel                 */

/* What the application decided of a packet, to hold the kernel's against. */
struct scn_pkt {
	struct nfqb_packet *view;
	bool decided;
	bool expired;		/* the library's default is expected */
	struct km_dec d;
};

#define SCN_MAX		512

struct scn {
	struct kmodel km;	/* the kernel's queue, at the same index */
	struct nfqb_queue *q;
	struct scn_pkt p[SCN_MAX];
	uint64_t ahead_ns;	/* the library's clock: the real one + this */
};

static void scn_apply(struct kmodel *km, struct km_pkt *k,
		      const struct km_dec *v, bool batch, uint32_t max)
{
	const struct scn_pkt *sp = &((struct scn *)km->data)->p[k - km->p];

	(void)v;
	(void)batch;
	(void)max;
	ck_assert_msg(sp->decided || sp->expired,
		      "id %u verdicted before it was decided", k->id);
}

static void scn_enoent(struct kmodel *km, uint32_t id, const struct km_dec *v,
		       bool batch)
{
	(void)km;
	(void)v;
	ck_abort_msg("%s to id %u: ENOENT", batch ? "batch" : "verdict", id);
}

static void scn_wrong(struct kmodel *km, const char *msg)
{
	(void)km;
	ck_abort_msg("%s", msg);
}

static const struct km_ops scn_ops = {
	.apply = scn_apply,
	.enoent = scn_enoent,
	.fail = scn_wrong,
};

static ssize_t scn_send(void *data, int fd, const struct msghdr *msg,
			int flags)
{
	(void)fd;
	(void)flags;
	return km_sendmsg(&((struct scn *)data)->km, msg, KM_APPLY);
}

static uint64_t scn_now(void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	       ((struct scn *)data)->ahead_ns;
}

static struct scn *scn_new(unsigned int nbuf)
{
	struct scn *s = calloc(1, sizeof(*s));
	struct nfqb_seam seam = { .sendmsg = scn_send, .now_ns = scn_now };

	ck_assert_ptr_nonnull(s);
	seam.data = s;
	km_init(&s->km, QNUM, &scn_ops, s);
	s->q = nfqbt_queue_detached(QNUM, nbuf);
	ck_assert_ptr_nonnull(s->q);
	nfqbt_seam_install(&seam);
	return s;
}

static void scn_free(struct scn *s)
{
	ck_assert_int_eq(nfqb_queue_close(s->q), 0);
	nfqbt_seam_install(NULL);
	km_free(&s->km);
	free(s);
}

/* The kernel queues @id; the library reads it and hands it out. */
static void scn_arrive(struct scn *s, uint32_t id)
{
	unsigned int i = km_add(&s->km, id, true);
	struct nlb b;

	ck_assert_uint_lt(i, SCN_MAX);
	nlb_simple_packet(&b, QNUM, id, 28);
	ck_assert_int_eq(nfqbt_rx_inject(s->q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(s->q, &s->p[i].view, 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(s->p[i].view), id);
}

/* The application decides packet @i (@mark, if @has_mark). */
static void scn_decide(struct scn *s, unsigned int i, uint32_t verdict,
		       bool has_mark, uint32_t mark)
{
	struct scn_pkt *sp = &s->p[i];

	sp->decided = true;
	sp->d = (struct km_dec){ .verdict = verdict, .has_mark = has_mark,
				 .mark = mark };
	if (has_mark)
		ck_assert_int_eq(nfqb_verdict_mark(sp->view, verdict, mark), 0);
	else
		ck_assert_int_eq(nfqb_verdict(sp->view, verdict), 0);
}

/* Every packet has its verdict: its decision, or the default @dflt. */
static void scn_done(struct scn *s, uint32_t dflt)
{
	unsigned int i;
	char want[96], got[96];

	for (i = 0; i < s->km.n; i++) {
		const struct km_pkt *k = &s->km.p[i];
		const struct scn_pkt *sp = &s->p[i];

		ck_assert_msg(k->applied, "id %u never verdicted", k->id);
		if (sp->expired)
			ck_assert_msg(km_is_default(&k->got, dflt),
				      "id %u got %s, not the default", k->id,
				      km_dec_str(&k->got, got, sizeof(got)));
		else
			ck_assert_msg(km_dec_eq(&k->got, &sp->d),
				      "id %u got %s, decided %s", k->id,
				      km_dec_str(&k->got, got, sizeof(got)),
				      km_dec_str(&sp->d, want, sizeof(want)));
	}
}

/* An all-accept stream decided in order goes as one batch per flush; a
 * decision behind an undecided packet is held. */
START_TEST(batch_and_hold)
{
	struct scn *s = scn_new(64);
	struct nfqb_stats st;
	unsigned int i;

	/* held decisions stay held however slow the machine (a sanitizer):
	 * the latency bound is not what this test is about */
	ck_assert_int_eq(nfqb_queue_set_latency(s->q, 60000000), 0);
	for (i = 0; i < 10; i++)
		scn_arrive(s, 100 + i);
	/* decide 0..3 and 5..9; 4 stays undecided */
	for (i = 0; i < 10; i++)
		if (i != 4)
			scn_decide(s, i, NFQB_ACCEPT, false, 0);
	ck_assert_int_eq(nfqb_flush(s->q), 1);	/* one batch: ids 100..103 */
	ck_assert_uint_eq(s->km.batches, 1);
	for (i = 0; i < 4; i++)
		ck_assert(s->km.p[i].applied);
	for (i = 5; i < 10; i++)
		ck_assert(!s->km.p[i].applied);	/* held behind 104 */
	scn_decide(s, 4, NFQB_DROP, false, 0);
	ck_assert_int_eq(nfqb_verdict(s->p[4].view, NFQB_DROP), -1);
	ck_assert_int_eq(errno, EALREADY);
	/* 104 alone (single drop), then one batch 105..109 */
	ck_assert_int_eq(nfqb_flush(s->q), 2);
	ck_assert_uint_eq(s->km.batches, 2);
	scn_done(s, NFQB_ACCEPT);
	nfqb_queue_stats(s->q, &st, sizeof(st));
	ck_assert_uint_eq(st.batch_msgs, 2);
	ck_assert_uint_eq(st.batch_packets, 9);
	ck_assert_uint_eq(st.verdict_msgs, 1);
	ck_assert_uint_eq(st.accepted, 9);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.outstanding, 0);
	scn_free(s);
}
END_TEST

/* An adopted queue (nfqb_queue_adopt()): packets 90..99 of the previous
 * owner, which died before deciding them, are still in the kernel queue.
 * The new owner's decisions (accept with a mark) for 100..109 must not
 * reach them: one default batch up to 99 comes first. A queue not
 * adopted (nothing before its first packet) sends no such batch. */
START_TEST(adopted_orphans)
{
	struct scn *s = scn_new(64);
	struct nfqb_stats st;
	unsigned int i;

	s->q->sk.adopted = true;
	for (i = 0; i < 10; i++) {	/* the orphans: never seen by us */
		km_add(&s->km, 90 + i, true);
		s->p[i].expired = true;	/* expect the default verdict */
	}
	for (i = 0; i < 10; i++)
		scn_arrive(s, 100 + i);
	for (i = 10; i < 20; i++)
		scn_decide(s, i, NFQB_ACCEPT, true, 7);
	ck_assert_int_eq(nfqb_flush(s->q), 2);	/* orphans, then ours */
	ck_assert_uint_eq(s->km.batches, 2);
	scn_done(s, NFQB_ACCEPT);
	nfqb_queue_stats(s->q, &st, sizeof(st));
	ck_assert_uint_eq(st.outstanding, 0);
	scn_free(s);

	/* not adopted: one batch, ours */
	s = scn_new(64);
	for (i = 0; i < 10; i++)
		scn_arrive(s, 100 + i);
	for (i = 0; i < 10; i++)
		scn_decide(s, i, NFQB_ACCEPT, false, 0);
	ck_assert_int_eq(nfqb_flush(s->q), 1);
	scn_done(s, NFQB_ACCEPT);
	scn_free(s);
}
END_TEST

/* The verdict timeout gives an undecided packet the default verdict; the
 * application's late decision is refused with ETIMEDOUT. */
START_TEST(timeout_default)
{
	struct scn *s = scn_new(64);
	struct nfqb_stats st;

	ck_assert_int_eq(nfqb_queue_set_default_verdict(s->q, NFQB_DROP), 0);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(s->q, 5), 0);
	scn_arrive(s, 7);
	ck_assert_int_eq(nfqb_flush(s->q), 0);
	ck_assert(!s->km.p[0].applied);
	s->p[0].expired = true;
	s->ahead_ns += 6000000;		/* past the timeout */
	ck_assert_int_eq(nfqb_flush(s->q), 1);
	ck_assert(s->km.p[0].applied);
	ck_assert_uint_eq(s->km.p[0].got.verdict, NFQB_DROP);
	ck_assert_int_eq(nfqb_verdict(s->p[0].view, NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	nfqb_queue_stats(s->q, &st, sizeof(st));
	ck_assert_uint_eq(st.timeouts, 1);
	scn_done(s, NFQB_DROP);
	scn_free(s);
}
END_TEST

/* An explicit batch finalizes every undecided packet up to max id (around
 * the 2^32 wrap); packets decided before keep their decision. */
START_TEST(explicit_batch)
{
	struct scn *s = scn_new(64);
	uint32_t mark = 77;
	unsigned int i;

	for (i = 0; i < 6; i++)
		scn_arrive(s, 0xfffffffdu + i);	/* wraps after 3 */
	scn_decide(s, 1, NFQB_DROP, false, 0);
	for (i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		s->p[i].decided = true;
		s->p[i].d = (struct km_dec){ .verdict = NFQB_ACCEPT,
					     .has_mark = true, .mark = mark };
	}
	ck_assert_int_eq(nfqb_verdict_batch(s->q, 1, NFQB_ACCEPT, &mark), 4);
	ck_assert_int_eq(nfqb_flush(s->q), 3);	/* batch, single, batch */
	ck_assert(!s->km.p[5].applied);
	ck_assert_int_eq(nfqb_verdict_batch(s->q, 1, NFQB_ACCEPT, NULL), -1);
	ck_assert_int_eq(errno, ENOENT);
	scn_decide(s, 5, NFQB_ACCEPT, false, 0);
	ck_assert_int_eq(nfqb_flush(s->q), 1);
	scn_done(s, NFQB_ACCEPT);
	scn_free(s);
}
END_TEST

/* Decisions in order, all accept: far fewer messages than packets. */
START_TEST(all_accept_ratio)
{
	struct scn *s = scn_new(SCN_MAX);
	struct nfqb_stats st;
	unsigned int i, j;

	for (j = 0; j < 8; j++) {
		for (i = 0; i < 64; i++)
			scn_arrive(s, 1 + j * 64 + i);
		for (i = 0; i < 64; i++)
			scn_decide(s, j * 64 + i, NFQB_ACCEPT, false, 0);
		ck_assert_int_eq(nfqb_flush(s->q), 1);
	}
	scn_done(s, NFQB_ACCEPT);
	nfqb_queue_stats(s->q, &st, sizeof(st));
	ck_assert_uint_eq(st.batch_msgs, 8);
	ck_assert_uint_eq(st.send_calls, 8);
	ck_assert_uint_eq(s->km.batches, 8);
	scn_free(s);
}
END_TEST

static bool scn_has(const struct scn *s, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < s->km.n; i++)
		if (s->km.p[i].id == id)
			return true;
	return false;
}

/* A kernel that broke the monotonic-id contract: now and then an id not
 * after the last one (still unique). Random arrivals (with ids never
 * delivered), decisions in random order, flushes and latency-bound runs;
 * every packet gets exactly its decision (per-packet verdicts from the
 * first id out of order on). NFQB_SEED, NFQB_CASES as above. */
static void nonmonotonic_case(unsigned long seed)
{
	struct scn *s = scn_new(SCN_MAX);
	uint64_t rs = splitmix(seed) | 1;
	unsigned int order[SCN_MAX], nund = 0, total;
	uint32_t id = chance(&rs, 30) ? 0xffffffffu - rnd(&rs, 200) :
		      (uint32_t)next64(&rs);

	nfqb_queue_set_batch_limit(s->q, 1 + rnd(&rs, 80));
	total = 1 + rnd(&rs, SCN_MAX - 1);
	while (s->km.n < total || nund) {
		unsigned int op = rnd(&rs, 100);

		if (s->km.n < total && (op < 45 || !nund)) {
			if (chance(&rs, 17))	/* ids never delivered */
				id += 1 + rnd(&rs, 3);
			if (chance(&rs, 2) &&	/* out of order */
			    !scn_has(s, id - 1 - (op & 3)))
				id = id - 1 - (op & 3);
			while (scn_has(s, id))
				id++;
			order[nund++] = s->km.n;
			scn_arrive(s, id++);
		} else if (op < 85 && nund) {
			unsigned int j = rnd(&rs, nund), k = order[j];

			order[j] = order[--nund];
			scn_decide(s, k, chance(&rs, 8) ? NFQB_DROP :
				   NFQB_ACCEPT, chance(&rs, 40), rnd(&rs, 3));
		} else if (op < 95) {
			ck_assert_int_ge(nfqb_flush(s->q), 0);
		} else {
			/* the latency bound passes for held decisions */
			s->ahead_ns += 10000000000ull;
			ck_assert_int_ge(nfqb_flush(s->q), 0);
		}
	}
	ck_assert_int_ge(nfqb_flush(s->q), 0);
	s->ahead_ns += 10000000000ull;
	ck_assert_int_ge(nfqb_flush(s->q), 0);
	scn_done(s, NFQB_ACCEPT);
	scn_free(s);
}

static void nonmonotonic_one(const void *arg, unsigned long seed)
{
	(void)arg;
	nonmonotonic_case(seed);
}

START_TEST(nonmonotonic_ids)
{
	run_cases("nonmonotonic_ids", 7777777ul, 1000, nonmonotonic_one, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	unsigned int i;

	for (i = 0; i < sizeof(scens) / sizeof(scens[0]); i++) {
		TCase *tc = tcase_create(scens[i].name);

		tcase_set_timeout(tc, 600);
		tcase_add_loop_test(tc, model_property, (int)i, (int)i + 1);
		suite_add_tcase(s, tc);
	}
	{
		TCase *tc = tcase_create("scenarios");

		tcase_add_test(tc, batch_and_hold);
		tcase_add_test(tc, adopted_orphans);
		tcase_add_test(tc, timeout_default);
		tcase_add_test(tc, explicit_batch);
		tcase_add_test(tc, all_accept_ratio);
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, nonmonotonic_ids);
		suite_add_tcase(s, tc);
	}
	return nfqbt_run(s);
}
