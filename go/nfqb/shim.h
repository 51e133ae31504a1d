/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The C side of package nfqb: what one cgo call does for a whole batch.
 *
 * nfqbgo_step() applies the decisions the Go side recorded for the last
 * batch, then receives the next one and copies what Go reads of every
 * packet (scalars, and pointers with lengths into the library's buffers)
 * into an array of struct nfqbgo_pkt that Go reads in place: one cgo call
 * per batch on the steady path, nothing allocated.
 */
#ifndef NFQBGO_SHIM_H
#define NFQBGO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <libnfq-batch/libnfq-batch.h>

/* struct nfqbgo_pkt.has: which optional attributes the kernel sent */
#define NFQBGO_HAS_MARK		(1u << 0)
#define NFQBGO_HAS_TIMESTAMP	(1u << 1)
#define NFQBGO_HAS_INDEV	(1u << 2)
#define NFQBGO_HAS_OUTDEV	(1u << 3)
#define NFQBGO_HAS_PHYSINDEV	(1u << 4)
#define NFQBGO_HAS_PHYSOUTDEV	(1u << 5)
#define NFQBGO_HAS_HWADDR	(1u << 6)
#define NFQBGO_HAS_UID		(1u << 7)
#define NFQBGO_HAS_GID		(1u << 8)
#define NFQBGO_HAS_CTINFO	(1u << 9)
#define NFQBGO_HAS_SKBINFO	(1u << 10)
#define NFQBGO_HAS_PRIORITY	(1u << 11)
#define NFQBGO_HAS_CAPLEN	(1u << 12)
#define NFQBGO_HAS_CT		(1u << 13)
#define NFQBGO_HAS_SECCTX	(1u << 14)
#define NFQBGO_HAS_L2HDR	(1u << 15)
#define NFQBGO_HAS_EXP		(1u << 16)
#define NFQBGO_HAS_PAYLOAD	(1u << 17)

/* One packet as Go sees it; the pointers point into the library's
 * receive buffer of the packet and stay valid until its verdict. */
struct nfqbgo_pkt {
	uintptr_t h;			/* struct nfqb_packet * (a tagged handle) */
	const uint8_t *payload;
	const uint8_t *hwaddr;
	const uint8_t *ct;
	const uint8_t *secctx;
	const uint8_t *l2hdr;
	const uint8_t *exp;
	uint64_t ts_ns;
	uint32_t id;
	uint32_t payload_len;
	uint32_t cap_len;
	uint32_t mark;
	uint32_t indev, outdev, physindev, physoutdev;
	uint32_t uid, gid;
	uint32_t ctinfo;
	uint32_t skbinfo;
	uint32_t priority;
	uint32_t ct_len;
	uint32_t secctx_len;
	uint32_t l2hdr_len;
	uint32_t has;			/* NFQBGO_HAS_* */
	uint16_t hw_protocol;
	uint16_t hwaddr_len;
	uint16_t exp_len;
	uint8_t hook;
	uint8_t family;
};

/* One decision (Go's nfqb.Decision has this layout). h 0: look the packet
 * up by id (needs the id table). err: 0, or the errno of the verdict. */
struct nfqbgo_v {
	uintptr_t h;
	uint32_t id;
	uint32_t verdict;		/* NFQB_ACCEPT, ..., NFQB_QUEUE */
	uint32_t flags;			/* NFQB_V_MARK, _PRIORITY, _CT_MARK, _BYPASS */
	uint32_t mark;
	uint32_t ct_mark;
	uint32_t priority;
	uint16_t queue_num;
	uint16_t pad;
	int32_t err;
};

struct nfqbgo {
	struct nfqb_queue *q;
	struct nfqb_packet **vec;
	struct nfqbgo_pkt *pkts;
	unsigned int max;
	/* id -> handle (open addressing, see shim.c), NULL when unused */
	uintptr_t *tab;
	uint32_t tab_mask;
	uint64_t tab_full;		/* packets the table had no room for */
};

/* Open queue @num (on @fd when @fd >= 0), with room for @max packets per
 * batch and an id table when @idtab; NULL and *err on failure. */
struct nfqbgo *nfqbgo_open(int fd, uint16_t num, unsigned int max,
			   int idtab, unsigned int buffers, int *err);
/* Close the queue (default verdict to the undecided), free @g; 0 or errno.
 * @st (may be NULL) gets the last counters. */
int nfqbgo_close(struct nfqbgo *g, struct nfqb_stats *st);
/* Apply @nv decisions (each one's err set), then receive (owner only).
 * Returns the packets received, or -errno. */
int nfqbgo_step(struct nfqbgo *g, struct nfqbgo_v *v, unsigned int nv);
/* Apply @nv decisions, any thread; returns how many failed. */
unsigned int nfqbgo_apply(struct nfqbgo *g, struct nfqbgo_v *v,
			  unsigned int nv);
/* One decision, with a payload (NFQB_V_PAYLOAD) when @with_payload; any
 * thread; 0 or errno. Scalars only, for cgo: nothing escapes. @ct_labels
 * (16 bytes, NULL: none) sets the conntrack entry's labels. */
int nfqbgo_decide(struct nfqbgo *g, uintptr_t h, uint32_t id,
		  uint32_t verdict, uint32_t flags, uint32_t mark,
		  uint32_t ct_mark, uint32_t priority, uint16_t queue_num,
		  const void *payload, uint32_t len, int with_payload,
		  const uint8_t *ct_labels);
/* The queue's counters; 0 or errno. */
int nfqbgo_stats(struct nfqbgo *g, struct nfqb_stats *st);

/* A NETLINK_NETFILTER socket made in the network namespace @nsfd (the
 * calling thread enters it and comes back: *restored says it did); the
 * fd or -errno. */
int nfqbgo_socket_in(int nsfd, int *restored);

#endif
