/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb.Packet (packet.c): one packet handle, with a strong reference to
 * its queue (or pool). The handle is used only while the packet is
 * undecided and its queue (pool) alive, checked under the GIL, and the
 * GIL is held across every nfqb_verdict*() call: a close (which sets
 * `closing` under the GIL before it lets go of it) never runs beside a
 * verdict of ours.
 *
 * The queue and the pool are of the layers above (queue.h, pool.h): a
 * packet sees them only through the tables of struct pkt_queue_ops and
 * struct pkt_pool_ops, which those layers give at their init.
 */
#ifndef NFQBPY_PACKET_H
#define NFQBPY_PACKET_H

#include "util.h"

struct pyq;
struct pypool;

/* struct pypkt.flags */
#define PK_SNAP		(1u << 0)	/* the fields below are filled */
#define PK_DECIDED	(1u << 1)	/* a verdict was given */
#define PK_IN_CB	(1u << 2)	/* compat: inside its callback */
#define PK_MARK_SET	(1u << 3)	/* set_mark() */
#define PK_COMPAT	(1u << 4)	/* from a NetfilterQueue */
#define PK_HAS_TS	(1u << 5)
#define PK_HAS_HW	(1u << 6)
#define PK_HAS_MARK	(1u << 7)
#define PK_POOL_CB	(1u << 8)	/* inside its pool callback */

struct pypkt {
	PyObject_HEAD
	struct nfqb_packet *h;		/* NULL once decided */
	struct pyq *queue;		/* strong, or NULL */
	struct pypool *pool;		/* strong, or NULL */
	uint32_t id;
	uint32_t flags;
	uint32_t given_mark;
	PyObject *given_payload;	/* set_payload(), bytes */
	PyObject *owned_payload;	/* retain(), bytes */
	/* the snapshot (PK_SNAP): what stays readable after the verdict */
	uint32_t mark, indev, outdev, physindev, physoutdev;
	uint32_t payload_len;
	uint64_t ts_ns;
	uint16_t hw_protocol;
	uint8_t hook, family, hw_len;
	uint8_t hw[8];
};

/* What a packet asks of its queue (queue.c gives it). */
struct pkt_queue_ops {
	/* the queue can still take a verdict */
	bool (*usable)(struct pyq *q);
	uint32_t (*default_verdict)(const struct pyq *q);
	/* after a verdict of one of its packets (by_default: the default
	 * verdict, given here) */
	void (*decided)(struct pyq *q, bool by_default);
};

/* What a packet asks of its pool (pool.c gives it). */
struct pkt_pool_ops {
	bool (*usable)(const struct pypool *pool);
	uint32_t (*default_verdict)(const struct pypool *pool);
};

void pkt_set_queue_ops(const struct pkt_queue_ops *ops);
void pkt_set_pool_ops(const struct pkt_pool_ops *ops);

extern PyTypeObject NfqbPy_PacketType;

struct pypkt *pkt_new(struct pyq *queue, struct pypool *pool,
		      struct nfqb_packet *h, uint32_t flags);
void pkt_snapshot(struct pypkt *p);
void pkt_snapshot_held(struct pypkt *p);
int pkt_default(struct pypkt *p);
void pkt_freelist_clear(void);
int packet_module_init(PyObject *m);

#endif /* NFQBPY_PACKET_H */
