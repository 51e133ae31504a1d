// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decisions: the application decides a packet, from any thread. A decision
 * is only recorded here (PENDING -> DECIDED, atomically, against the
 * generation of the handle); the owner thread plans and sends it. A handle
 * is dead after its verdict: a second decision on it fails and never
 * reaches the packet that came into its descriptor since.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "queue-int.h"
#include "sys.h"

/* PENDING -> CLAIMED for the generation of the handle; 0 or an errno. */
static int claim(struct nfqb_queue *q, struct nfqb_packet *p, uint32_t tag,
		 uint64_t *sgp)
{
	int err = nfqb_pkt_claim(p, tag, sgp);

	if (err)
		nfqb_stat_inc(&q->ctr, late_verdicts);
	return err;
}

/* Record @d on a claimed packet. */
static void record(struct nfqb_queue *q, struct nfqb_packet *p, uint64_t sg,
		   const struct nfqb_decision *d, bool owner)
{
	/* the owner decides what its last read brought: that read's time
	 * is early enough for the latency bound (a held decision goes out no
	 * later for it), and saves a clock read per packet */
	nfqb_pkt_decide(p, sg, d, owner ? q->rx.read_ns : nfqb_now_ns());
	if (owner) {
		q->post.own++;
		return;
	}
	atomic_fetch_add_explicit(&q->post.posted, 1, memory_order_seq_cst);
	nfqb_wake_ring(&q->wake, q->sk.evfd);
}

void nfqb_post_quiesce(struct nfqb_post *po)
{
	while (atomic_load_explicit(&po->inflight, memory_order_acquire))
		sched_yield();
}

/*
 * Record a decision. Another thread may be closing the queue as soon as it
 * sees the decision: a deciding thread other than the owner holds
 * q->post.inflight across every access to the queue, and close waits for it.
 * Returns 0 or an errno.
 */
static int decide(struct nfqb_packet *h, const struct nfqb_decision *d)
{
	struct nfqb_packet *p = nfqb_handle_ptr(h);
	struct nfqb_queue *q;
	bool owner;
	uint64_t sg;
	int err;

	if (!h)
		return EINVAL;
	q = p->q;
	owner = nfqb_wake_is_owner(&q->wake);
	if (!owner)
		atomic_fetch_add_explicit(&q->post.inflight, 1,
					  memory_order_acq_rel);
	if (atomic_load(&q->shut)) {
		nfqb_stat_inc(&q->ctr, late_verdicts);
		err = ESHUTDOWN;
	} else {
		err = claim(q, p, nfqb_handle_tag(h), &sg);
		if (!err)
			record(q, p, sg, d, owner);
	}
	if (!owner)
		atomic_fetch_sub_explicit(&q->post.inflight, 1,
					  memory_order_release);
	return err;
}

static int decided(int err)
{
	if (!err)
		return 0;
	errno = err;
	return -1;
}

static bool verdict_ok(uint32_t v)
{
	return v == NFQB_ACCEPT || v == NFQB_DROP || v == NFQB_REPEAT;
}

NFQB_EXPORT int nfqb_verdict(struct nfqb_packet *p, uint32_t verdict)
{
	struct nfqb_decision d = { .verdict = verdict };

	if (!verdict_ok(verdict))
		return decided(EINVAL);
	return decided(decide(p, &d));
}

NFQB_EXPORT int nfqb_verdict_mark(struct nfqb_packet *p, uint32_t verdict,
				  uint32_t mark)
{
	struct nfqb_decision d = {
		.verdict = verdict,
		.flags = NFQB_V_MARK,
		.mark = mark,
	};

	if (!verdict_ok(verdict))
		return decided(EINVAL);
	return decided(decide(p, &d));
}

/* The conntrack part of @v (a batch verdict carries none: the flag
 * NFQB_D_SINGLE sends it by itself). A mask of 0 is every bit. */
static void ct_of(const struct nfqb_verdict *v, struct nfqb_decision *d)
{
	static const uint8_t none[16];

	if (v->flags & NFQB_V_CT_MARK) {
		d->ct_mark_mask = v->ct_mark_mask ? v->ct_mark_mask : ~0u;
		d->ct_mark = v->ct_mark & d->ct_mark_mask;
	}
	if (v->flags & NFQB_V_CT_LABELS) {
		size_t i;

		if (!memcmp(v->ct_labels_mask, none, sizeof(none)))
			memset(d->ct_labels_mask, 0xff,
			       sizeof(d->ct_labels_mask));
		else
			memcpy(d->ct_labels_mask, v->ct_labels_mask,
			       sizeof(d->ct_labels_mask));
		for (i = 0; i < sizeof(d->ct_labels); i++)
			d->ct_labels[i] = v->ct_labels[i] &
					  d->ct_labels_mask[i];
	}
}

/* The decision of @v, without its payload; 0 or an errno. */
static int decision_of(const struct nfqb_verdict *v, struct nfqb_decision *d)
{
	if (!v || (v->flags & ~(NFQB_V_MARK | NFQB_V_PAYLOAD |
				NFQB_V_PRIORITY | NFQB_V_BYPASS |
				NFQB_V_CT_MARK | NFQB_V_CT_LABELS)))
		return EINVAL;
	if (v->verdict == NFQB_QUEUE) {
		d->verdict = ((uint32_t)v->queue_num << 16) | NFQB_QUEUE;
		if (v->flags & NFQB_V_BYPASS)
			d->verdict |= 0x8000;	/* NF_VERDICT_FLAG_QUEUE_BYPASS */
		d->flags |= NFQB_D_SINGLE;
	} else if (verdict_ok(v->verdict) && !(v->flags & NFQB_V_BYPASS)) {
		d->verdict = v->verdict;
	} else {
		return EINVAL;
	}
	d->flags |= v->flags & (NFQB_V_MARK | NFQB_V_PRIORITY | NFQB_V_PAYLOAD |
				NFQB_V_CT_MARK | NFQB_V_CT_LABELS);
	d->mark = v->mark;
	d->priority = v->priority;
	if (v->flags & (NFQB_V_PRIORITY | NFQB_V_PAYLOAD | NFQB_V_CT_MARK |
			NFQB_V_CT_LABELS))
		d->flags |= NFQB_D_SINGLE;
	ct_of(v, d);
	if (!(v->flags & NFQB_V_PAYLOAD))
		return 0;
	if (!v->payload && v->payload_len)
		return EINVAL;
	/* nla_len is 16 bits and counts its 4-byte header */
	_Static_assert(NFQB_MAX_PAYLOAD == 0xffff - MNL_ATTR_HDRLEN,
		       "NFQB_MAX_PAYLOAD is an attribute's longest payload");
	if (v->payload_len > NFQB_MAX_PAYLOAD)
		return EMSGSIZE;
	return 0;
}

NFQB_EXPORT int nfqb_verdict_ex(struct nfqb_packet *p,
				const struct nfqb_verdict *uv, size_t size)
{
	struct nfqb_decision d = { 0 };
	struct nfqb_verdict v;
	int err;

	err = nfqb_struct_in(&v, sizeof(v), NFQB_VERDICT_SIZE_MIN, uv, size);
	if (!err)
		err = decision_of(&v, &d);
	if (err)
		return decided(err);
	if (d.flags & NFQB_V_PAYLOAD) {
		d.payload = nfqb_malloc(v.payload_len ? v.payload_len : 1);
		if (!d.payload)
			return decided(ENOMEM);
		if (v.payload_len)
			memcpy(d.payload, v.payload, v.payload_len);
		d.payload_len = v.payload_len;
	}
	err = decide(p, &d);
	if (err)
		free(d.payload);
	return decided(err);
}

NFQB_EXPORT int nfqb_verdict_ct_mark(struct nfqb_packet *p, uint32_t verdict,
				     uint32_t ct_mark)
{
	struct nfqb_decision d = {
		.verdict = verdict,
		.flags = NFQB_V_CT_MARK | NFQB_D_SINGLE,
		.ct_mark = ct_mark,
		.ct_mark_mask = ~0u,
	};

	if (!verdict_ok(verdict))
		return decided(EINVAL);
	return decided(decide(p, &d));
}

NFQB_EXPORT int nfqb_verdict_batch(struct nfqb_queue *q, uint32_t max_id,
				   uint32_t verdict, const uint32_t *mark)
{
	struct nfqb_decision d = { .verdict = verdict };
	struct nfqb_book *b;
	int n = 0;
	uint32_t i;

	if (!q || !verdict_ok(verdict))
		return decided(EINVAL);
	b = &q->book;
	if (atomic_load(&q->shut))
		return decided(ESHUTDOWN);
	if (mark) {
		d.flags = NFQB_V_MARK;
		d.mark = *mark;
	}
	for (i = b->head; i != b->tail; i++) {
		struct nfqb_entry *e = nfqb_book_at(b, i);
		uint64_t sg;

		if (e->kind != NFQB_E_PKT)
			continue;
		if (nfqb_id_after(e->id, max_id))
			break;
		sg = atomic_load_explicit(&e->p->sg, memory_order_acquire);
		/* only packets handed out: those still waiting in the
		 * library are not the application's to decide */
		if (NFQB_SG_STATE(sg) != NFQB_PS_PENDING ||
		    claim(q, e->p, nfqb_sg_tag(sg), &sg))
			continue;
		record(q, e->p, sg, &d, true);
		n++;
	}
	if (!n)
		return decided(ENOENT);
	return n;
}
