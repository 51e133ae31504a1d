/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Packet descriptors and receive buffers (pkt.c).
 *
 * A descriptor's life, in the low byte of its state word (the rest is its
 * generation, bumped at every reuse), so that every change, and why, is
 * one atomic step:
 *
 *   FREE -> NEW (parsed, not handed out) -> PENDING (the application has
 *   it) -> CLAIMED (a thread writes the decision) -> DECIDED -> FREE once
 *   the kernel took the message that carries the decision.
 *   NEW/PENDING -> EXPIRED when the verdict timeout gives it the default
 *   verdict; -> FREE_EXPIRED once that is sent.
 *   NEW/PENDING -> DEFAULTED when close gives it the default; -> FREE.
 *
 * Owners: pkt.c (and the inlines here) writes every field of a descriptor
 * but its parsed view, which parse.c writes: tb, vlan_proto, vlan_tci, id,
 * hw_protocol, res_id, hook, family (and the payload's bytes, which
 * large.c may change before the hand-out: nfqb_pkt_changed()). pkt.c alone writes struct nfqb_bufs.
 */
#ifndef NFQB_PKT_H
#define NFQB_PKT_H

#include "internal.h"

/* Every receive buffer holds the largest message (a 64 KiB payload): the
 * memory is reserved, not committed, so a copy range change never needs
 * new buffers. */
#define NFQB_MSG_OVERHEAD	4096
#define NFQB_SLOT_SIZE		(0x10000 + NFQB_MSG_OVERHEAD)
/* (NFQB_DEFAULT_BUFFERS: the public header) */
/* tables replaced by nfqb_queue_set_buffers(), freed at close */
#define NFQB_MAX_RETIRED	8

enum nfqb_pkt_state {
	NFQB_PS_FREE = 0,
	NFQB_PS_NEW,
	NFQB_PS_PENDING,
	NFQB_PS_CLAIMED,
	NFQB_PS_DECIDED,
	NFQB_PS_DEFAULTED,
	NFQB_PS_EXPIRED,
	NFQB_PS_FREE_EXPIRED,
};

static inline bool nfqb_ps_free(uint32_t st)
{
	return st == NFQB_PS_FREE || st == NFQB_PS_FREE_EXPIRED;
}

/* A decision is there to send. */
static inline bool nfqb_ps_decided(uint32_t st)
{
	return st == NFQB_PS_DECIDED || st == NFQB_PS_DEFAULTED ||
	       st == NFQB_PS_EXPIRED;
}

#define NFQB_SG(gen, st)	(((uint64_t)(gen) << 8) | (st))
#define NFQB_SG_STATE(sg)	((uint32_t)((sg) & 0xff))
#define NFQB_SG_GEN(sg)		((uint32_t)((sg) >> 8))

/* Decision flags beyond the public NFQB_V_* ones. */
#define NFQB_D_SINGLE		(1u << 16)	/* must go as a single verdict */
#define NFQB_D_BORROWED		(1u << 17)	/* .payload is the packet's own
						 * (changed) bytes, not a copy */

struct nfqb_decision {
	uint32_t verdict;	/* full kernel verdict (incl. queue number) */
	uint32_t flags;		/* NFQB_V_* | NFQB_D_* */
	uint32_t mark;
	uint32_t priority;
	void *payload;		/* owned copy */
	uint32_t payload_len;
	/* NFQB_V_CT_MARK, NFQB_V_CT_LABELS (masks never 0: all bits) */
	uint32_t ct_mark, ct_mark_mask;
	uint8_t ct_labels[16], ct_labels_mask[16];
};

/*
 * Handles. On 64-bit builds user-space addresses fit in 48 bits: the top
 * 16 bits of a handle carry the low 16 bits of the descriptor's generation.
 * On 32-bit builds descriptors are aligned to 256 bytes: the low 8 bits of
 * a handle carry the low 8 bits of the generation. A dead handle is
 * mistaken for a live one only if its descriptor was reused a multiple of
 * 65536 (32-bit: 256) times in between (descriptors are reused oldest
 * first: at least that many times the number of descriptors packets
 * later).
 */
#if UINTPTR_MAX > 0xffffffffu
#define NFQB_TAG_SHIFT		48
#define NFQB_TAG_MASK		0xffffu
#define NFQB_ADDR_MASK		(((uintptr_t)1 << 48) - 1)
#define NFQB_PKT_ALIGN		8
#else
#define NFQB_TAG_SHIFT		0
#define NFQB_TAG_MASK		0xffu
#define NFQB_ADDR_MASK		(~(uintptr_t)0xff)
#define NFQB_PKT_ALIGN		256
#endif

/* One receive buffer: holds one datagram from the kernel. */
struct nfqb_slot {
	uint32_t refs;		/* packets pointing into it (free: 0) */
	uint32_t at;		/* free: its place in the free stack */
	bool heap;		/* an overflow buffer (config wait), freed */
	unsigned char *data;
};

struct nfqb_packet {
	/* (32-bit builds: the low 8 bits of a handle are its tag) */
	_Alignas(NFQB_PKT_ALIGN) struct nfqb_queue *q;
	struct nfqb_slot *slot;
	/* the parsed view (parse.c) */
	const struct nlattr *tb[NFQB_NFQA_MAX + 1];
	const struct nlattr *vlan_proto, *vlan_tci;
	uint32_t id;
	uint16_t hw_protocol;	/* host order */
	uint16_t res_id;	/* queue number from the message */
	uint8_t hook;
	uint8_t family;
	/* its life (pkt.c) */
	_Atomic uint64_t sg;	/* generation << 8 | enum nfqb_pkt_state */
	/* bit i: the packet of generation (current - i) was decided by the
	 * verdict timeout (a late verdict on its handle reports ETIMEDOUT
	 * after the descriptor was reused, for the last 64 reuses) */
	_Atomic uint64_t expired_bits;
	uint64_t arrival_ns;
	uint64_t decided_ns;
	void *user;
	bool changed;		/* its payload was changed in place
				 * (nfqb_pkt_changed()) */
	struct nfqb_decision d;
	struct nfqb_packet *next_free;
};

/* The receive buffers and the descriptor table of a queue. rx.c reads
 * into the free buffers on top of the free stack without taking them, and
 * parses into the descriptor at the head of the free list: a packet kept
 * takes both (nfqb_pkt_get()). */
struct nfqb_bufs {
	struct nfqb_slot *slots;
	unsigned char *slot_mem;
	unsigned int nslots;
	/* the free buffers, a stack: the last freed (hot) on top */
	struct nfqb_slot **free_slots;
	unsigned int nfree_slots;
	/* descriptors: a fixed table, reused oldest first */
	struct nfqb_packet *pkts;
	unsigned int npkts;
	struct nfqb_packet *free_head, *free_tail;
	struct nfqb_packet *retired[NFQB_MAX_RETIRED];
	unsigned int retired_n;
};

static inline uint32_t nfqb_handle_tag(const struct nfqb_packet *h)
{
	return (uint32_t)((uint64_t)(uintptr_t)h >> NFQB_TAG_SHIFT) &
	       NFQB_TAG_MASK;
}

static inline struct nfqb_packet *nfqb_handle_ptr(const struct nfqb_packet *h)
{
	return (struct nfqb_packet *)((uintptr_t)h & NFQB_ADDR_MASK);
}

static inline uint32_t nfqb_sg_tag(uint64_t sg)
{
	return NFQB_SG_GEN(sg) & NFQB_TAG_MASK;
}

static inline uint32_t nfqb_pkt_state(const struct nfqb_packet *p)
{
	return NFQB_SG_STATE(atomic_load_explicit(&p->sg,
						  memory_order_acquire));
}

/* The descriptor behind a handle, or NULL if the handle is dead (its
 * descriptor was reused since, or is free). */
struct nfqb_packet *nfqb_pkt_from_handle(const struct nfqb_packet *h);
/* The handle of a live descriptor. */
struct nfqb_packet *nfqb_pkt_handle(struct nfqb_packet *p);

/* The buffers of @q: @count receive buffers, twice as many descriptors.
 * 0, or -1 with ENOMEM (nothing allocated). */
int nfqb_bufs_alloc(struct nfqb_bufs *b, struct nfqb_queue *q,
		    unsigned int count);
/* Free them; @retire: keep the descriptor table until
 * nfqb_bufs_free() (a dead handle may still point there). */
void nfqb_bufs_free(struct nfqb_bufs *b);
/* Replace @b by @fresh, keeping the old descriptor table for dead
 * handles. 0, or -1 with EBUSY (too many replaced). */
int nfqb_bufs_replace(struct nfqb_bufs *b, struct nfqb_bufs *fresh);
static inline bool nfqb_bufs_all_free(const struct nfqb_bufs *b)
{
	return b->nfree_slots == b->nslots;
}

/* The descriptor at the head of the free list (state NEW, generation
 * bumped) for a message in @s that arrived at @now: it keeps @s (taken
 * off the free stack) until it is put back. NULL if none is free. */
struct nfqb_packet *nfqb_pkt_get(struct nfqb_bufs *b, struct nfqb_slot *s,
				 uint64_t now);
/* Return a descriptor: payload copy and buffer reference dropped. */
void nfqb_pkt_put(struct nfqb_bufs *b, struct nfqb_packet *p);
/* Return the @n descriptors of @v, in that order. */
void nfqb_pkt_put_all(struct nfqb_bufs *b, struct nfqb_packet *const *v,
		      unsigned int n);

/* State changes. NEW -> PENDING (handed out): its handle, NULL if it is
 * not NEW. */
struct nfqb_packet *nfqb_pkt_hand_out(struct nfqb_packet *p);
/* PENDING -> NEW (given back unused): false if it was not PENDING. */
bool nfqb_pkt_take_back(struct nfqb_packet *p);
/* PENDING -> CLAIMED for the generation of @tag; 0, or the errno why not
 * (EALREADY, ETIMEDOUT). *@sgp: the state word it claimed. */
int nfqb_pkt_claim(struct nfqb_packet *p, uint32_t tag, uint64_t *sgp);
/* CLAIMED -> DECIDED with @d, decided at @now. */
void nfqb_pkt_decide(struct nfqb_packet *p, uint64_t sg,
		     const struct nfqb_decision *d, uint64_t now);
/* NEW or PENDING -> @to (EXPIRED, DEFAULTED) with @verdict at @now: the
 * state it left (NEW or PENDING), or FREE if it was decided meanwhile. */
uint32_t nfqb_pkt_default(struct nfqb_packet *p, uint32_t to,
			  uint32_t verdict, uint64_t now);

/* @p's payload was changed in place, before it was handed out (the
 * large-packet policy): a decision that lets it go on (any but drop, the
 * default too) carries its bytes to the kernel, a single verdict. */
void nfqb_pkt_changed(struct nfqb_packet *p);

/* Receive buffers: an allocated one (a reference held), and dropping a
 * reference. */
struct nfqb_slot *nfqb_slot_get_heap(void);
void nfqb_slot_put(struct nfqb_bufs *b, struct nfqb_slot *s);

#endif /* NFQB_PKT_H */
