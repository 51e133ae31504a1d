// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Packet descriptors and receive buffers: a fixed table of descriptors
 * reused oldest first, handles that carry a generation so a dead handle is
 * never mistaken for the packet now in its descriptor, and the buffers
 * received datagrams live in until their packets are verdicted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"


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
int nfqb_pkt_alloc_all(struct nfqb_queue *q, unsigned int n)
{
	unsigned int i;

	/* aligned: on 32-bit builds the low bits of a handle are its tag */
	q->pkts = aligned_alloc(_Alignof(struct nfqb_packet),
				(size_t)n * sizeof(*q->pkts));
	if (!q->pkts) {
		errno = ENOMEM;
		return -1;
	}
	memset(q->pkts, 0, (size_t)n * sizeof(*q->pkts));
	q->npkts = n;
	q->free_head = q->free_tail = NULL;
	for (i = 0; i < n; i++) {
		struct nfqb_packet *p = &q->pkts[i];

		p->q = q;
		if (q->free_tail)
			q->free_tail->next_free = p;
		else
			q->free_head = p;
		q->free_tail = p;
	}
	return 0;
}

void nfqb_pkt_free_all(struct nfqb_queue *q)
{
	unsigned int i;

	for (i = 0; q->pkts && i < q->npkts; i++)
		free(q->pkts[i].d.payload);
	free(q->pkts);
	q->pkts = NULL;
	q->npkts = 0;
	q->free_head = q->free_tail = NULL;
}

struct nfqb_packet *nfqb_pkt_get(struct nfqb_queue *q)
{
	struct nfqb_packet *p = q->free_head;
	uint64_t sg;

	if (!p)
		return NULL;
	q->free_head = p->next_free;
	if (!q->free_head)
		q->free_tail = NULL;
	p->next_free = NULL;
	p->slot = NULL;
	p->user = NULL;
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

void nfqb_pkt_put(struct nfqb_queue *q, struct nfqb_packet *p)
{
	uint64_t sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
	uint32_t st = NFQB_PS_FREE;

	free(p->d.payload);
	p->d.payload = NULL;
	if (p->slot)
		nfqb_slot_put(q, p->slot);
	p->slot = NULL;
	if (NFQB_SG_STATE(sg) == NFQB_PS_EXPIRED) {
		st = NFQB_PS_FREE_EXPIRED;
		atomic_fetch_or_explicit(&p->expired_bits, 1,
					 memory_order_relaxed);
	}
	atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg), st),
			      memory_order_release);
	p->next_free = NULL;
	if (q->free_tail)
		q->free_tail->next_free = p;
	else
		q->free_head = p;
	q->free_tail = p;
}

struct nfqb_slot *nfqb_slot_get(struct nfqb_queue *q)
{
	struct nfqb_slot *s = q->free_slots;

	if (!s)
		return NULL;
	q->free_slots = s->next_free;
	q->nfree_slots--;
	s->refs = 1;
	s->len = 0;
	return s;
}

/* An allocated buffer for a datagram read while none is free. */
struct nfqb_slot *nfqb_slot_get_heap(struct nfqb_queue *q)
{
	struct nfqb_slot *s = nfqb_malloc(sizeof(*s));

	(void)q;
	if (!s)
		return NULL;
	s->data = nfqb_malloc(NFQB_SLOT_SIZE);
	if (!s->data) {
		free(s);
		return NULL;
	}
	s->heap = true;
	s->refs = 1;
	s->len = 0;
	s->next_free = NULL;
	return s;
}

void nfqb_slot_put(struct nfqb_queue *q, struct nfqb_slot *s)
{
	if (--s->refs)
		return;
	if (s->heap) {
		free(s->data);
		free(s);
		return;
	}
	s->next_free = q->free_slots;
	q->free_slots = s;
	q->nfree_slots++;
}
