// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the whole datagram path of a socketless queue.
 *
 * Datagrams from the input go in with nfqbt_rx_inject() as if received; the
 * packets parsed from them are taken with nfqb_book_serve(), their getters
 * called, and decided with nfqb_verdict(), nfqb_verdict_mark(),
 * nfqb_verdict_ex() or nfqb_verdict_batch(), now or later; nfqb_flush()
 * sends; nfqb_queue_close() ends it. Everything the library sends goes
 * through the test seam's sendmsg (lib/seam.h) to the model of the kernel's
 * queue the unit tests share (tests/unit/kmodel.c), and is checked:
 *
 *  - framing (always): a well-formed sequence of netlink messages, each an
 *    NFQNL_MSG_VERDICT, NFQNL_MSG_VERDICT_BATCH or NFQNL_MSG_CONFIG of
 *    NFNL_SUBSYS_QUEUE for our queue, lengths checked unsigned, attributes
 *    of the right type and size, padding zeroed, verdicts the kernel takes;
 *  - safety (NFQB_FUZZ_ORACLE >= 1): each sent verdict is applied to the
 *    model's queue (the packet messages the kernel sent us, in order; a
 *    batch walks it from the head as the kernel does): a verdict must be
 *    the one the application gave, or the default verdict for a packet
 *    nobody decided (one we rejected, or at close); a packet must not
 *    reach the application after its verdict was sent;
 *  - completeness (NFQB_FUZZ_ORACLE >= 2, the default): after close, every
 *    packet the kernel queued for us has had its verdict.
 * The model gives up (checks framing only) on an input where two queued
 * packets share an id: a real kernel never does that.
 * NFQB_FUZZ_TRACE=1 prints what happens (to read a reproducer).
 *
 * Input: a header of 5 bytes, then records, each [ctl][len lo][len hi] and
 * len bytes of datagram (fewer if the input ends first).
 *  h0  bits 0-2: buffers - 1; bit 3: coalescer off; bit 4: default verdict
 *      drop; bit 5: verdict timeout (only with the seam's clock); bits 6-7:
 *      batch limit 64, 1, 2, 4
 *  h1  sendmsg calls 0..7 that fail (bit k: the k-th), never at close
 *  h2  decisions: bits 0-2: the first kind (0 accept, 1 drop, 2 accept
 *      with mark, 3 drop with mark, 4 payload, 5 queue-to-3 with bypass,
 *      6 priority, 7 repeat); bits 3-6: run length - 1 (kinds change
 *      after that many packets); bit 7: decide every packet before close
 *      (else close gives them the default)
 *  h3  bits 0-3: latency bound in 250 us steps; bits 4-7: clock step ms
 *  h4  0, or n: every n-th allocation through the seam fails (not at close)
 *  ctl bit 0: sender port 4242 (not the kernel); bit 1: MSG_TRUNC; bit 2:
 *      take at most one packet; bits 3-4: decide all, none, every other,
 *      newest first; bit 5: nfqb_flush(); bit 6: nfqb_verdict_batch() up
 *      to the newest packet instead; bit 7: advance the clock one step
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "../unit/kmodel.h"
#include "../unit/testq.h"
#include "parse.h"
#include "plan.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_QUEUE_NUM		7
#define FZ_FOREIGN_PID		4242
#define FZ_HDR_LEN		5
#define FZ_POP_MAX		64
#define FZ_NFGEN_LEN		4	/* struct nfgenmsg */
#define FZ_PKT_HDR_LEN		7	/* struct nfqnl_msg_packet_hdr, packed */
#define FZ_QUEUE_BYPASS		0x8000u	/* NF_VERDICT_FLAG_QUEUE_BYPASS */
#define FZ_NF_STOLEN		2u

/* ------------------------------------------------------------------------
 * The library's test entry points: the one place to adapt when they change.
 */
static struct nfqb_queue *fz_queue_alloc(unsigned int nbuffers)
{
	return nfqbt_queue_detached(FZ_QUEUE_NUM, nbuffers);
}

static int fz_inject(struct nfqb_queue *q, const void *buf, size_t len,
		     uint32_t from_pid, int flags)
{
	return nfqbt_rx_inject(q, buf, len, from_pid, flags);
}

static unsigned int fz_pop(struct nfqb_queue *q, struct nfqb_packet **vec,
			   unsigned int max)
{
	return nfqbt_serve(q, vec, max);
}


/* ------------------------------------------------------------------------
 * State of one run.
 */
enum fz_state {
	FZ_UNSEEN,	/* queued by the kernel, not given to the application */
	FZ_PENDING,	/* given to the application, not decided */
	FZ_DECIDED,	/* decided: d */
	FZ_EITHER,	/* nfqb_verdict_batch() may have decided it (d), or
			 * it gets the default */
};

/* What the application did with a packet the kernel queued (the kernel's
 * side is the model's, at the same index: fz.km.p[i]). */
struct fz_ent {
	uint8_t state;
	bool delivered;
	struct km_dec d;
};

struct fz_app {
	struct nfqb_packet *p;
	uint32_t id;
	size_t ent;		/* model entry, SIZE_MAX if none */
	bool done;
};

struct fz {
	int level;		/* NFQB_FUZZ_ORACLE */
	bool trace;		/* NFQB_FUZZ_TRACE */
	/* from the input header */
	uint32_t default_verdict;
	bool timeouts;
	uint8_t send_fail;
	uint8_t alloc_every;
	uint8_t kinds;		/* h2 */
	/* run */
	bool fake_clock;
	bool closing;
	bool alloc_armed;
	uint64_t now;
	unsigned int nsend;
	unsigned int failed_sends;	/* counted here: the model may be off */
	unsigned long nalloc;
	unsigned long failed_allocs;
	unsigned int record;
	unsigned int dseq;
	size_t max_dgram;
	/* the model of the kernel queue (tests/unit/kmodel.h) and what the
	 * application did with each of its packets */
	bool model_ok;
	struct kmodel km;
	struct fz_ent *ents;
	size_t ents_cap;
	/* packets with the application */
	struct fz_app *app;
	size_t napp, app_cap;
};

static struct fz fz;

__attribute__((format(printf, 1, 2)))
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!fz.trace)
		return;
	fprintf(stderr, "trace: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xrealloc(void *p, size_t n)
{
	void *r = realloc(p, n ? n : 1);

	if (!r)
		fz_fail("out of memory");
	return r;
}

static bool is_default(const struct km_dec *d)
{
	return km_is_default(d, fz.default_verdict);
}

/* ------------------------------------------------------------------------
 * The model of the kernel queue: what the kernel queued for us, in order;
 * the verdicts the library sends are applied to it (kmodel.c) and judged
 * here.
 */
static bool model_on(void)
{
	return fz.level >= 1 && fz.model_ok;
}

static void model_add(uint32_t id)
{
	unsigned int i;

	if (!model_on())
		return;
	for (i = 0; i < fz.km.n; i++) {
		if (fz.km.p[i].id == id) {
			fz.model_ok = false;	/* ids repeat: not a kernel */
			trace("  id %u again: model off", id);
			return;
		}
	}
	i = km_add(&fz.km, id, true);
	if (i >= fz.ents_cap) {
		fz.ents_cap = fz.ents_cap ? 2 * fz.ents_cap : 64;
		fz.ents = xrealloc(fz.ents, fz.ents_cap * sizeof(*fz.ents));
	}
	fz.ents[i] = (struct fz_ent){ .state = FZ_UNSEEN };
	trace("  kernel queued id %u", id);
}

/*
 * The id of a packet message the kernel queued for us: NFQNL_MSG_PACKET of
 * our queue carrying an NFQA_PACKET_HDR (the first attribute, where the
 * kernel puts it, when @first_only), within @avail bytes.
 */
static bool queued_id(const uint8_t *m, size_t avail, bool first_only,
		      uint32_t *id)
{
	size_t off = NLMSG_HDRLEN + FZ_NFGEN_LEN;
	struct nlmsghdr h;
	uint16_t res;
	bool found = false;

	if (avail < off)
		return false;
	memcpy(&h, m, sizeof(h));
	if (h.nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
		return false;
	memcpy(&res, m + NLMSG_HDRLEN + 2, sizeof(res));
	if (ntohs(res) != FZ_QUEUE_NUM)
		return false;
	while (off <= avail && avail - off >= NLA_HDRLEN) {
		struct nlattr a;

		memcpy(&a, m + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > avail - off)
			break;
		if ((a.nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
		    a.nla_len == NLA_HDRLEN + FZ_PKT_HDR_LEN) {
			uint32_t v;

			if (found) {
				fz.model_ok = false;	/* which one? */
				return false;
			}
			memcpy(&v, m + off + NLA_HDRLEN, sizeof(v));
			*id = ntohl(v);
			found = true;
		}
		if (first_only)
			break;
		off += NLA_ALIGN(a.nla_len);
	}
	return found;
}

/* What the kernel queued for us in a datagram it sent: each whole packet
 * message; of a truncated datagram, the first message as far as it came. */
static void model_datagram(const uint8_t *b, size_t len, int flags)
{
	size_t off = 0;

	while (len - off >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		size_t mlen, step;
		uint32_t id;

		memcpy(&h, b + off, sizeof(h));
		mlen = h.nlmsg_len;
		if (flags & MSG_TRUNC) {
			if (queued_id(b + off, mlen < len - off ? mlen :
				      len - off, true, &id))
				model_add(id);
			return;
		}
		if (mlen < NLMSG_HDRLEN || mlen > len - off)
			return;
		if (queued_id(b + off, mlen, false, &id))
			model_add(id);
		step = NLMSG_ALIGN(mlen);
		if (step >= len - off)
			return;
		off += step;
	}
}

/* A packet reached the application: its entry, or SIZE_MAX. */
static size_t model_deliver(uint32_t id)
{
	unsigned int i;

	if (!model_on())
		return SIZE_MAX;
	for (i = 0; i < fz.km.n; i++)
		if (fz.km.p[i].id == id && !fz.ents[i].delivered)
			break;
	if (i == fz.km.n)
		fz_fail("record %u: packet id %u reached the application but "
			"the kernel queued no such packet (no whole message "
			"of ours carries it)", fz.record, id);
	fz.ents[i].delivered = true;
	if (fz.km.p[i].applied) {
		if (!fz.timeouts)
			fz_fail("record %u: packet id %u reached the "
				"application after its verdict was sent",
				fz.record, id);
		return i;	/* expired in the library */
	}
	fz.ents[i].state = FZ_PENDING;
	return i;
}

/* The kernel applies verdict @d to @k (@batch: one step of a batch). */
static void model_apply(struct kmodel *m, struct km_pkt *k,
			const struct km_dec *d, bool batch, uint32_t max_id)
{
	struct fz_ent *e = &fz.ents[k - m->p];
	char want[96], got[96], what[64];
	bool ok;

	if (batch)
		snprintf(what, sizeof(what), "NFQNL_MSG_VERDICT_BATCH (max %u)",
			 max_id);
	else
		snprintf(what, sizeof(what), "NFQNL_MSG_VERDICT");
	km_dec_str(d, got, sizeof(got));
	switch (e->state) {
	case FZ_UNSEEN:
		/* nobody decided it: only the library's default, and then
		 * it must not reach the application afterwards */
		if (!is_default(d))
			fz_fail("record %u: %s gives packet id %u, which the "
				"application has not seen, %s; only the "
				"default verdict %u is allowed", fz.record,
				what, k->id, got, fz.default_verdict);
		break;
	case FZ_PENDING:
		if (!is_default(d) || !(fz.closing || fz.timeouts))
			fz_fail("record %u: %s gives packet id %u, which "
				"the application has not decided yet, %s",
				fz.record, what, k->id, got);
		break;
	case FZ_DECIDED:
	case FZ_EITHER:
		ok = km_dec_eq(&e->d, d) ||
		     (e->state == FZ_EITHER && is_default(d));
		if (!ok)
			fz_fail("record %u: %s gives packet id %u %s, but the "
				"application decided %s", fz.record, what,
				k->id, got, km_dec_str(&e->d, want,
						       sizeof(want)));
		break;
	}
}

static void model_wrong(struct kmodel *m, const char *msg)
{
	(void)m;
	fz_fail("%s", msg);
}

static const struct km_ops model_ops = {
	.apply = model_apply,
	.fail = model_wrong,
	/* a verdict for no queued packet: the kernel answers ENOENT */
};

static void model_complete(void)
{
	static const char *const names[] = {
		[FZ_UNSEEN] = "never given to the application",
		[FZ_PENDING] = "undecided",
		[FZ_DECIDED] = "decided",
		[FZ_EITHER] = "decided by nfqb_verdict_batch()",
	};
	unsigned int i;

	if (fz.level < 2 || !model_on())
		return;
	for (i = fz.km.head; i < fz.km.n; i++)
		if (fz.km.p[i].queued)
			fz_fail("after close: packet id %u (%s) never got a "
				"verdict (%u send(s) failed on the way)",
				fz.km.p[i].id, names[fz.ents[i].state],
				fz.km.sends_failed);
}

/* ------------------------------------------------------------------------
 * What the library sends: checked and applied by the model.
 */
static ssize_t seam_sendmsg(void *data, int fd, const struct msghdr *msg,
			    int flags)
{
	static const int errs[] = { ENOBUFS, EAGAIN, EINTR, EPERM };
	unsigned int k = fz.nsend++;
	bool fail = !fz.closing && k < 8 && (fz.send_fail & (1u << k));

	(void)data;
	(void)fd;
	(void)flags;
	if (fail) {
		trace("  sendmsg #%u fails", k);
		fz.failed_sends++;
		km_sendmsg(&fz.km, msg, model_on() ? KM_FAILED : KM_CHECK);
		errno = errs[k & 3];
		return -1;
	}
	trace("  sendmsg #%u", k);
	return km_sendmsg(&fz.km, msg, model_on() ? KM_APPLY : KM_CHECK);
}

static uint64_t seam_now(void *data)
{
	(void)data;
	return fz.now;
}

static int seam_fail_alloc(void *data, size_t size)
{
	(void)data;
	(void)size;
	if (!fz.alloc_armed || fz.closing || !fz.alloc_every)
		return 0;
	if (++fz.nalloc % fz.alloc_every)
		return 0;
	fz.failed_allocs++;
	return 1;
}

/* ------------------------------------------------------------------------
 * The application.
 */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static uint8_t in_u8(struct fz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static void app_add(struct nfqb_packet *p)
{
	uint32_t id = nfqb_pkt_id(p);

	fz_call_getters(p, fz.max_dgram);
	trace("  app got id %u", id);
	if (fz.napp == fz.app_cap) {
		fz.app_cap = fz.app_cap ? 2 * fz.app_cap : 64;
		fz.app = xrealloc(fz.app, fz.app_cap * sizeof(*fz.app));
	}
	fz.app[fz.napp++] = (struct fz_app){
		.p = p,
		.id = id,
		.ent = model_deliver(id),
	};
}

/* Take up to @max packets (0: all). Returns how many. */
static unsigned int take(struct nfqb_queue *q, unsigned int max)
{
	struct nfqb_packet *vec[FZ_POP_MAX];
	unsigned int total = 0, n, i;

	do {
		unsigned int want = max && max - total < FZ_POP_MAX ?
				    max - total : FZ_POP_MAX;

		n = fz_pop(q, vec, want);
		for (i = 0; i < n; i++)
			app_add(vec[i]);
		total += n;
	} while (n == FZ_POP_MAX && (!max || total < max));
	return total;
}

static struct fz_ent *app_ent(const struct fz_app *a)
{
	if (a->ent == SIZE_MAX || !model_on())
		return NULL;
	return &fz.ents[a->ent];
}

static int call_verdict(struct nfqb_packet *p, unsigned int kind,
			const struct nfqb_verdict *v, const struct km_dec *d)
{
	switch (kind) {
	case 2:
	case 3:
		return nfqb_verdict_mark(p, d->verdict, d->mark);
	case 4:
	case 5:
	case 6:
		return nfqb_verdict_ex(p, v, sizeof(*v));
	default:
		return nfqb_verdict(p, d->verdict);
	}
}

/* Decide one packet. Returns true if the application is done with it. */
static bool decide(struct fz_app *a, unsigned int kind)
{
	struct nfqb_verdict v = { 0 };
	struct km_dec d = { 0 };
	struct fz_ent *e = app_ent(a);
	bool was_pending = e && e->state == FZ_PENDING;
	const uint8_t *pl;
	uint32_t plen = 0;
	int r;

	switch (kind) {
	case 0:
		d.verdict = NFQB_ACCEPT;
		break;
	case 1:
		d.verdict = NFQB_DROP;
		break;
	case 2:
		d.verdict = NFQB_ACCEPT;
		d.has_mark = true;
		d.mark = 0x5a5a5a5au;
		break;
	case 3:
		d.verdict = NFQB_DROP;
		d.has_mark = true;
		d.mark = 7;
		break;
	case 4:
		/* mangle: the first bytes of its own payload, and a mark */
		pl = nfqb_pkt_payload(a->p, &plen);
		if (plen > 40)
			plen = 40;
		v.verdict = NFQB_ACCEPT;
		v.flags = NFQB_V_PAYLOAD | NFQB_V_MARK;
		v.mark = 1;
		v.payload = pl;
		v.payload_len = plen;
		d.verdict = NFQB_ACCEPT;
		d.has_mark = d.has_payload = true;
		d.mark = 1;
		d.plen = plen;
		d.phash = km_hash(pl ? pl : (const uint8_t *)"", plen);
		break;
	case 5:
		v.verdict = NFQB_QUEUE;
		v.queue_num = 3;
		v.flags = NFQB_V_BYPASS;
		d.verdict = (3u << 16) | NFQB_QUEUE | FZ_QUEUE_BYPASS;
		break;
	case 6:
		v.verdict = NFQB_ACCEPT;
		v.flags = NFQB_V_PRIORITY;
		v.priority = 5;
		d.verdict = NFQB_ACCEPT;
		d.has_prio = true;
		d.prio = 5;
		break;
	default:
		errno = 0;
		if (nfqb_verdict(a->p, FZ_NF_STOLEN) != -1 || errno != EINVAL)
			fz_fail("nfqb_verdict(NF_STOLEN) was not refused "
				"with EINVAL");
		d.verdict = NFQB_REPEAT;
		break;
	}
	/* before the call: it may send at once */
	if (was_pending) {
		e->state = FZ_DECIDED;
		e->d = d;
	}
	{
		char ds[96];

		km_dec_str(&d, ds, sizeof(ds));
		trace("  app decides id %u: %s", a->id, ds);
	}
	r = call_verdict(a->p, kind, &v, &d);
	if (r == 0 && e && fz.km.p[a->ent].applied && !was_pending)
		fz_fail("record %u: deciding packet id %u succeeded after its "
			"default verdict was sent (ETIMEDOUT expected)",
			fz.record, a->id);
	if (r == 0)
		return true;
	if (was_pending && e->state == FZ_DECIDED)
		e->state = FZ_PENDING;
	if (errno == ETIMEDOUT && fz.timeouts)
		return true;	/* expired; released all the same */
	if (errno == ENOMEM && fz.failed_allocs)
		return false;	/* try again later */
	fz_fail("record %u: deciding packet id %u (kind %u) failed: %s",
		fz.record, a->id, kind, strerror(errno));
}

/* The kind of the next decision: runs of equal kinds, so that the
 * coalescer has something to batch. */
static unsigned int next_kind(void)
{
	unsigned int run = ((fz.kinds >> 3) & 15) + 1;

	return ((fz.kinds & 7) + fz.dseq++ / run) % 8;
}

static void app_remove(size_t i)
{
	memmove(&fz.app[i], &fz.app[i + 1],
		(fz.napp - i - 1) * sizeof(fz.app[0]));
	fz.napp--;
}

/* Decide the packets the application holds: @mode 0 all, oldest first;
 * 1 none; 2 every other; 3 all, newest first. */
static void decide_some(unsigned int mode)
{
	size_t n = fz.napp, i, j, k;

	if (mode == 1)
		return;
	for (j = 0; j < n; j++) {
		i = mode == 3 ? n - 1 - j : j;
		fz.app[i].done = false;
		if (mode == 2 && (i & 1))
			continue;
		fz.app[i].done = decide(&fz.app[i], next_kind());
	}
	for (i = 0, k = 0; i < n; i++)
		if (!fz.app[i].done)
			fz.app[k++] = fz.app[i];
	fz.napp = k;
}

static void batch_all(struct nfqb_queue *q)
{
	uint32_t max_id, mark = 9;
	struct km_dec d = { 0 };
	unsigned int kind = fz.kinds & 3;	/* accept/drop, mark or not */
	size_t i;
	int r;

	take(q, 0);
	if (!fz.napp)
		return;
	max_id = fz.app[fz.napp - 1].id;
	d.verdict = (kind & 1) ? NFQB_DROP : NFQB_ACCEPT;
	if (kind & 2) {
		d.has_mark = true;
		d.mark = mark;
	}
	/* which ones it reaches depends on the library's list: let go of
	 * every one it may reach, each decided so or (later) by default */
	for (i = fz.napp; i-- > 0;) {
		struct fz_ent *e = app_ent(&fz.app[i]);

		if (km_after(fz.app[i].id, max_id))
			continue;
		if (e && e->state == FZ_PENDING) {
			e->state = FZ_EITHER;
			e->d = d;
		}
		app_remove(i);
	}
	trace("  app nfqb_verdict_batch(max %u, verdict %u%s)", max_id,
	      d.verdict, (kind & 2) ? ", mark" : "");
	r = nfqb_verdict_batch(q, max_id, d.verdict,
			       (kind & 2) ? &mark : NULL);
	if (r < 0 && errno != ENOENT)
		fz_fail("record %u: nfqb_verdict_batch(%u) failed: %s",
			fz.record, max_id, strerror(errno));
}

static void flush(struct nfqb_queue *q)
{
	unsigned int failed = fz.failed_sends;
	unsigned long afailed = fz.failed_allocs;

	trace("  app nfqb_flush()");
	/* EPERM: an error reply of the input refused a verdict with it (no
	 * CAP_NET_ADMIN), which nfqb_flush() and nfqb_recv() report once */
	if (nfqb_flush(q) < 0 && errno != EPERM &&
	    failed == fz.failed_sends && afailed == fz.failed_allocs)
		fz_fail("record %u: nfqb_flush() failed on its own: %s",
			fz.record, strerror(errno));
}

/* One record: a datagram, then what the application does. */
static void record(struct nfqb_queue *q, struct fz_in *in, uint8_t ctl,
		   uint64_t step)
{
	bool foreign = ctl & 1;
	int flags = (ctl & 2) ? MSG_TRUNC : 0;
	size_t len = in_u8(in);
	unsigned int before = fz.km.n;
	const uint8_t *dgram;

	len |= (size_t)in_u8(in) << 8;
	if (len > in->n)
		len = in->n;
	dgram = in->p;
	in->p += len;
	in->n -= len;
	if (len > fz.max_dgram)
		fz.max_dgram = len;

	trace("record %u: %zu bytes from port %u%s", fz.record, len,
	      foreign ? FZ_FOREIGN_PID : 0, flags ? " MSG_TRUNC" : "");
	if (foreign)
		take(q, 0);	/* what is ready is the kernel's */
	else
		model_datagram(dgram, len, flags);
	if (fz_inject(q, dgram, len, foreign ? FZ_FOREIGN_PID : 0,
		      flags) < 0) {
		if (errno != EAGAIN && errno != ENOBUFS && errno != ENOSPC &&
		    !(errno == ENOMEM && fz.failed_allocs))
			fz_fail("record %u: nfqbt_rx_inject: %s", fz.record,
				strerror(errno));
		/* not received: it stays in the socket, as far as the
		 * kernel knows; this run drops it */
		if (fz.model_ok && fz.km.n >= before)
			fz.km.n = before;
	}
	if (take(q, (ctl & 4) ? 1 : 0) && foreign)
		fz_fail("record %u: a datagram from port %u gave the "
			"application a packet", fz.record, FZ_FOREIGN_PID);
	if (ctl & 0x40)
		batch_all(q);
	else
		decide_some((ctl >> 3) & 3);
	if (ctl & 0x20)
		flush(q);
	if (ctl & 0x80)
		fz.now += step;
}

static void configure(struct nfqb_queue *q, uint8_t h0, uint8_t h3)
{
	static const unsigned int limits[] = { 64, 1, 2, 4 };

	nfqb_queue_set_coalesce(q, !(h0 & 8));
	if (nfqb_queue_set_default_verdict(q, fz.default_verdict) < 0 ||
	    nfqb_queue_set_batch_limit(q, limits[h0 >> 6]) < 0)
		fz_fail("configuring the queue: %s", strerror(errno));
	/* with the real clock, keep timing out of it: reproducible runs */
	nfqb_queue_set_latency(q, fz.fake_clock ? (h3 & 15) * 250u :
			       10000000u);
	if (fz.timeouts)
		nfqb_queue_set_verdict_timeout(q, 5);
}

static int fz_level(void)
{
	const char *s = getenv("NFQB_FUZZ_ORACLE");

	return s && *s ? atoi(s) : 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfqb_seam seam = {
		.sendmsg = seam_sendmsg,
		.now_ns = seam_now,
		.fail_alloc = seam_fail_alloc,
	};
	struct fz_in in = { .p = data, .n = size };
	struct nfqb_queue *q;
	uint8_t h0, h2, h3;
	uint64_t step;

	memset(&fz, 0, sizeof(fz));
	km_init(&fz.km, FZ_QUEUE_NUM, &model_ops, NULL);
	fz.km.config_ok = true;
	fz.level = fz_level();
	fz.trace = getenv("NFQB_FUZZ_TRACE") != NULL;
	fz.model_ok = true;
	fz.now = 1000000000ull;
	nfqbt_seam_install(&seam);
	fz.fake_clock = nfqb_now_ns() == fz.now;

	h0 = in_u8(&in);
	fz.send_fail = in_u8(&in);
	h2 = in_u8(&in);
	h3 = in_u8(&in);
	fz.alloc_every = in_u8(&in);
	fz.kinds = h2;
	fz.default_verdict = (h0 & 0x10) ? NFQB_DROP : NFQB_ACCEPT;
	fz.timeouts = (h0 & 0x20) && fz.fake_clock;
	step = ((uint64_t)(h3 >> 4) + 1) * 1000000ull;

	q = fz_queue_alloc((h0 & 7) + 1);
	if (!q)
		fz_fail("nfqbt_queue_detached: %s", strerror(errno));
	configure(q, h0, h3);
	fz.alloc_armed = true;

	while (in.n) {
		uint8_t ctl = in_u8(&in);

		record(q, &in, ctl, step);
		fz.record++;
	}
	take(q, 0);
	if (h2 & 0x80)
		decide_some(0);
	flush(q);

	/* close: every outstanding packet gets its decision or the default */
	trace("close");
	fz.closing = true;
	fz.napp = 0;
	nfqb_queue_close(q);
	model_complete();
	nfqbt_seam_install(NULL);
	km_free(&fz.km);
	free(fz.ents);
	free(fz.app);
	return 0;
}
