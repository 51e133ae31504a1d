// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Packet descriptors and receive buffers: a fixed table of descriptors
 * reused oldest first, handles that carry a generation so a dead handle is
 * never mistaken for the packet now in its descriptor, every change of a
 * descriptor's state, and the buffers received datagrams live in until
 * their packets are verdicted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "pkt.h"
#include "sys.h"

struct nfqb_packet *nfqb_pkt_handle(struct nfqb_packet *p)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
	uint64_t h = (uintptr_t)p;

	/* an address with bits where the tag goes (64-bit: above 48
	 * bits, never given without asking; 32-bit: not aligned, which
	 * the library's descriptors always are) goes untagged */
	if (NFQB_TAG_MASK && !(h & ~(uint64_t)NFQB_ADDR_MASK))
		h |= (uint64_t)nfqb_sg_tag(sg) << (NFQB_TAG_SHIFT & 63);
	return (struct nfqb_packet *)(uintptr_t)h;
}

struct nfqb_packet *nfqb_pkt_from_handle(const struct nfqb_packet *h)
{
	struct nfqb_packet *p;
	uint64_t sg;

	if (!h)
		return NULL;
	p = nfqb_handle_ptr(h);
	sg = atomic_load_explicit(&p->sg, memory_order_acquire);
	if (nfqb_handle_tag(h) != nfqb_sg_tag(sg))
		return NULL;
	if (nfqb_ps_free(NFQB_SG_STATE(sg)))
		return NULL;
	return p;
}

/* The descriptor table: oldest-freed first, so a descriptor is reused as
 * late as possible. */
static int alloc_pkts(struct nfqb_bufs *b, struct nfqb_queue *q,
		      unsigned int n)
{
	unsigned int i;

	/* aligned: on 32-bit builds the low bits of a handle are its tag */
	b->pkts = nfqb_aligned_alloc(_Alignof(struct nfqb_packet),
				     (size_t)n * sizeof(*b->pkts));
	if (!b->pkts)
		return -1;
	memset(b->pkts, 0, (size_t)n * sizeof(*b->pkts));
	b->npkts = n;
	b->free_head = b->free_tail = NULL;
	for (i = 0; i < n; i++) {
		struct nfqb_packet *p = &b->pkts[i];

		p->q = q;
		if (b->free_tail)
			b->free_tail->next_free = p;
		else
			b->free_head = p;
		b->free_tail = p;
	}
	return 0;
}

static void free_pkts(struct nfqb_packet *pkts, unsigned int n)
{
	unsigned int i;

	for (i = 0; pkts && i < n; i++)
		if (!(pkts[i].d.flags & NFQB_D_BORROWED))
			free(pkts[i].d.payload);
	free(pkts);
}

/* @count buffers of the largest message: reserved, committed only where
 * the kernel writes; a free stack, lowest on top (hot buffers get
 * reused). */
static int alloc_slots(struct nfqb_bufs *b, unsigned int count)
{
	unsigned int i;

	b->slot_mem = nfqb_reserve((size_t)NFQB_SLOT_SIZE * count);
	if (!b->slot_mem)
		return -1;
	b->nslots = count;
	b->slots = nfqb_calloc(count, sizeof(*b->slots));
	b->free_slots = nfqb_calloc(count, sizeof(*b->free_slots));
	if (!b->slots || !b->free_slots)
		return -1;
	for (i = 0; i < count; i++) {
		struct nfqb_slot *s = &b->slots[count - 1 - i];

		s->data = b->slot_mem + (size_t)(count - 1 - i) * NFQB_SLOT_SIZE;
		s->at = i;
		b->free_slots[i] = s;
	}
	b->nfree_slots = count;
	return 0;
}

static void free_slots(struct nfqb_bufs *b)
{
	if (b->slot_mem)
		nfqb_unreserve(b->slot_mem, (size_t)NFQB_SLOT_SIZE * b->nslots);
	free(b->slots);
	free(b->free_slots);
	b->slot_mem = NULL;
	b->slots = NULL;
	b->free_slots = NULL;
	b->nslots = b->nfree_slots = 0;
}

/* A packet keeps @s: off the free stack (the top one takes its place). */
static void slot_take(struct nfqb_bufs *b, struct nfqb_slot *s)
{
	struct nfqb_slot *top = b->free_slots[--b->nfree_slots];

	b->free_slots[s->at] = top;
	top->at = s->at;
}

/* Descriptors twice as many as buffers: a dead handle finds its descriptor
 * reused as late as possible. */
int nfqb_bufs_alloc(struct nfqb_bufs *b, struct nfqb_queue *q,
		    unsigned int count)
{
	*b = (struct nfqb_bufs){ 0 };
	if (alloc_slots(b, count) < 0 || alloc_pkts(b, q, count * 2) < 0) {
		nfqb_bufs_free(b);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void nfqb_bufs_free(struct nfqb_bufs *b)
{
	free_slots(b);
	free_pkts(b->pkts, b->npkts);
	b->pkts = NULL;
	b->npkts = 0;
	while (b->retired_n)
		free(b->retired[--b->retired_n]);
}

int nfqb_bufs_replace(struct nfqb_bufs *b, struct nfqb_bufs *fresh)
{
	if (b->retired_n == NFQB_MAX_RETIRED) {
		errno = EBUSY;
		return -1;
	}
	/* nothing is outstanding: no payload copy in the old table */
	fresh->retired_n = b->retired_n;
	memcpy(fresh->retired, b->retired, sizeof(b->retired));
	fresh->retired[fresh->retired_n++] = b->pkts;
	free_slots(b);
	*b = *fresh;
	return 0;
}

/* Descriptors are reused oldest first (a dead handle meets its descriptor
 * reused as late as possible), so the next one is cold: fetch it while
 * this one is parsed. */
static void prefetch_pkt(const struct nfqb_packet *p)
{
	const char *c = (const char *)p;
	size_t i;

	for (i = 0; i < sizeof(*p); i += 64)
		__builtin_prefetch(c + i, 1);
}

struct nfqb_packet *nfqb_pkt_get(struct nfqb_bufs *b, struct nfqb_slot *s,
				 uint64_t now)
{
	struct nfqb_packet *p = b->free_head;
	uint64_t sg;

	if (!p)
		return NULL;
	b->free_head = p->next_free;
	if (b->free_head)
		prefetch_pkt(b->free_head);
	else
		b->free_tail = NULL;
	p->next_free = NULL;
	p->slot = s;
	if (!s->refs++ && !s->heap)
		slot_take(b, s);
	p->arrival_ns = now;
	p->user = NULL;
	p->changed = false;
	memset(&p->d, 0, sizeof(p->d));
	sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
	atomic_store_explicit(&p->expired_bits,
			      atomic_load_explicit(&p->expired_bits,
						   memory_order_relaxed) << 1,
			      memory_order_relaxed);
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg) + 1, NFQB_PS_NEW),
			      memory_order_release);
	return p;
}

void nfqb_pkt_put(struct nfqb_bufs *b, struct nfqb_packet *p)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
	uint32_t st = NFQB_PS_FREE;

	if (!(p->d.flags & NFQB_D_BORROWED))
		free(p->d.payload);
	p->d.payload = NULL;
	if (p->slot)
		nfqb_slot_put(b, p->slot);
	p->slot = NULL;
	if (NFQB_SG_STATE(sg) == NFQB_PS_EXPIRED) {
		st = NFQB_PS_FREE_EXPIRED;
		atomic_fetch_or_explicit(&p->expired_bits, 1,
					 memory_order_relaxed);
	}
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg), st),
			      memory_order_release);
	/* the handle dead before its buffer is written again: a thread
	 * that copied the packet's data and then finds the handle alive
	 * (guarantee 4 of the public header) read this packet's bytes */
	atomic_thread_fence(memory_order_release);
	p->next_free = NULL;
	if (b->free_tail)
		b->free_tail->next_free = p;
	else
		b->free_head = p;
	b->free_tail = p;
}

void nfqb_pkt_put_all(struct nfqb_bufs *b, struct nfqb_packet *const *v,
		      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		nfqb_pkt_put(b, v[i]);
}

/* --- state changes ------------------------------------------------------- */

struct nfqb_packet *nfqb_pkt_hand_out(struct nfqb_packet *p)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_relaxed);

	if (NFQB_SG_STATE(sg) != NFQB_PS_NEW)
		return NULL;	/* decided while waiting */
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg), NFQB_PS_PENDING),
			      memory_order_release);
	return nfqb_pkt_handle(p);
}

bool nfqb_pkt_take_back(struct nfqb_packet *p)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_relaxed);

	if (NFQB_SG_STATE(sg) != NFQB_PS_PENDING)
		return false;
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg), NFQB_PS_NEW),
			      memory_order_release);
	return true;
}

/* Why a decision on a handle is refused. */
static int refusal(const struct nfqb_packet *p, uint64_t sg, uint32_t tag)
{
	uint32_t st = NFQB_SG_STATE(sg);
	uint32_t age = (nfqb_sg_tag(sg) - tag) & NFQB_TAG_MASK;
	uint64_t bits;

	if (!age)
		return st == NFQB_PS_EXPIRED || st == NFQB_PS_FREE_EXPIRED ?
		       ETIMEDOUT : EALREADY;
	/* reused since: was its packet decided by the timeout? */
	bits = atomic_load_explicit(&p->expired_bits, memory_order_relaxed);
	return age < 64 && (bits >> age) & 1 ? ETIMEDOUT : EALREADY;
}

int nfqb_pkt_claim(struct nfqb_packet *p, uint32_t tag, uint64_t *sgp)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_acquire);

	for (;;) {
		if (nfqb_sg_tag(sg) != tag ||
		    NFQB_SG_STATE(sg) != NFQB_PS_PENDING)
			return refusal(p, sg, tag);
		if (atomic_compare_exchange_weak_explicit(&p->sg, &sg,
				NFQB_SG(NFQB_SG_GEN(sg), NFQB_PS_CLAIMED),
				memory_order_acq_rel, memory_order_acquire)) {
			*sgp = sg;
			return 0;
		}
	}
}

void nfqb_pkt_changed(struct nfqb_packet *p)
{
	p->changed = true;
}

/* A changed packet's decision carries its bytes, unless it drops it or
 * brings a payload of its own. */
static void carry_change(struct nfqb_packet *p)
{
	const struct nlattr *a = p->tb[NFQA_PAYLOAD];

	if (!p->changed || !a || (p->d.flags & NFQB_V_PAYLOAD) ||
	    (p->d.verdict & 0xffff) == NFQB_DROP)
		return;
	p->d.payload = mnl_attr_get_payload(a);
	p->d.payload_len = mnl_attr_get_payload_len(a);
	p->d.flags |= NFQB_V_PAYLOAD | NFQB_D_SINGLE | NFQB_D_BORROWED;
}

void nfqb_pkt_decide(struct nfqb_packet *p, uint64_t sg,
		     const struct nfqb_decision *d, uint64_t now)
{
	p->d = *d;
	carry_change(p);
	p->decided_ns = now;
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg), NFQB_PS_DECIDED),
			      memory_order_release);
}

uint32_t nfqb_pkt_default(struct nfqb_packet *p, uint32_t to,
			  uint32_t verdict, uint64_t now)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_acquire);
	uint32_t st = NFQB_SG_STATE(sg);

	if (st != NFQB_PS_NEW && st != NFQB_PS_PENDING)
		return NFQB_PS_FREE;
	if (!atomic_compare_exchange_strong_explicit(&p->sg, &sg,
			NFQB_SG(NFQB_SG_GEN(sg), to),
			memory_order_acq_rel, memory_order_acquire))
		return NFQB_PS_FREE;	/* decided meanwhile */
	p->decided_ns = now;
	p->d = (struct nfqb_decision){ .verdict = verdict };
	carry_change(p);
	return st;
}

/* --- the application's pointer ------------------------------------------ */

NFQB_EXPORT void nfqb_pkt_set_user(struct nfqb_packet *h, void *user)
{
	struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (p)
		p->user = user;
}

NFQB_EXPORT void *nfqb_pkt_user(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	return p ? p->user : NULL;
}

/* --- receive buffers ------------------------------------------------------ */

/* An allocated buffer for a datagram read while none is free; the caller
 * holds a reference. */
struct nfqb_slot *nfqb_slot_get_heap(void)
{
	struct nfqb_slot *s = nfqb_malloc(sizeof(*s));

	if (!s)
		return NULL;
	s->data = nfqb_malloc(NFQB_SLOT_SIZE);
	if (!s->data) {
		free(s);
		return NULL;
	}
	s->heap = true;
	s->refs = 1;
	s->at = 0;
	return s;
}

void nfqb_slot_put(struct nfqb_bufs *b, struct nfqb_slot *s)
{
	if (--s->refs)
		return;
	if (s->heap) {
		free(s->data);
		free(s);
		return;
	}
	s->at = b->nfree_slots;
	b->free_slots[b->nfree_slots++] = s;
}
