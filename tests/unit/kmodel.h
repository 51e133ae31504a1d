/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests: a model of the kernel's nfnetlink_queue, shared by test_model,
 * test_plan and the fuzz oracle (tests/fuzz/fuzz_datagram.c).
 *
 * The queue holds the packets the kernel queued for us, in the order it
 * queued them. What the library sends (through the test seam: km_sendmsg())
 * is checked strictly, every byte (framing, attribute types and lengths,
 * zeroed padding, a verdict the kernel takes, our queue, to the kernel),
 * then applied as nfnetlink_queue does:
 *   NFQNL_MSG_VERDICT        the queued packet with that id; ENOENT if none
 *   NFQNL_MSG_VERDICT_BATCH  from the head of the queue, every packet whose
 *                            id is not after max (serial arithmetic);
 *                            ENOENT if that is none
 * A send that fails applies nothing: the model only notes which packets
 * it would have reached (failed_sends).
 *
 * The model judges nothing by itself: each test says, through its km_ops,
 * whether a verdict that reaches a packet is the right one, and what a
 * message that reaches nothing means.
 */
#ifndef NFQBT_KMODEL_H
#define NFQBT_KMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/netlink.h>

/* A decision as the kernel sees it in a verdict message. */
struct km_dec {
	uint32_t verdict;	/* incl. queue number and bypass flag */
	bool has_mark, has_prio, has_payload;
	uint32_t mark, prio;
	uint32_t plen;
	uint32_t phash;		/* km_hash() of the payload */
	/* NFQA_CT: the conntrack entry's mark (and mask), labels */
	bool has_ct_mark, has_ct_labels;
	uint32_t ct_mark, ct_mark_mask;
	uint32_t ct_lhash;	/* km_hash() of labels and their mask */
};

/* A packet the kernel queued (or an id it used for nothing: not queued). */
struct km_pkt {
	uint32_t id;
	bool queued;		/* in the kernel's queue */
	bool applied;		/* a verdict took it out */
	bool by_batch;		/* ... a batch verdict */
	struct km_dec got;	/* ... that verdict */
	uint16_t failed_sends;	/* failed datagrams that would have reached it */
};

/* A verdict message the kernel took, in the log. */
struct km_msg {
	uint8_t type;		/* NFQNL_MSG_VERDICT or _BATCH */
	uint32_t id;		/* id, or the batch's max */
	struct km_dec d;
	int err;		/* 0, or -ENOENT */
};

#define KM_LOG		1024

struct kmodel;

struct km_ops {
	/* A verdict message reached queued packet @k (k->got is set): is it
	 * the right one? */
	void (*apply)(struct kmodel *m, struct km_pkt *k,
		      const struct km_dec *v, bool batch, uint32_t max);
	/* A verdict message reached nothing: the kernel answers ENOENT. */
	void (*enoent)(struct kmodel *m, uint32_t id, const struct km_dec *v,
		       bool batch);
	/* What the library sent is wrong (@msg says how). NULL: the first
	 * one is kept in m->err. */
	void (*fail)(struct kmodel *m, const char *msg);
	/* After each verdict message: its result (0, -ENOENT). NULL: none. */
	void (*answer)(struct kmodel *m, const struct nlmsghdr *req, int err);
};

struct kmodel {
	uint16_t qnum;
	bool config_ok;		/* NFQNL_MSG_CONFIG may be sent too */
	const struct km_ops *ops;
	void *data;		/* the test's */
	/* the queue, in the order the kernel queued */
	struct km_pkt *p;
	unsigned int n, cap;
	unsigned int head;	/* nothing queued before it */
	/* what the kernel took */
	unsigned int singles, batches, sends, sends_failed;
	struct km_msg log[KM_LOG];
	unsigned int nlog;	/* (counts on past KM_LOG) */
	char err[256];
};

enum km_mode {
	KM_CHECK,	/* framing only */
	KM_FAILED,	/* the send failed: note what it would have reached */
	KM_APPLY,	/* the kernel takes it */
};

void km_init(struct kmodel *m, uint16_t qnum, const struct km_ops *ops,
	     void *data);
void km_free(struct kmodel *m);
/* The kernel used @id: queued a packet with it, or (@queued false) lost
 * it. Returns its index in m->p. */
unsigned int km_add(struct kmodel *m, uint32_t id, bool queued);
/* The index of the queued packet with @id, -1 if none. */
long km_find(const struct kmodel *m, uint32_t id);
/* A datagram the library sent. Returns false if it was wrong (reported
 * through ops->fail; nothing of it applied). */
bool km_take(struct kmodel *m, const void *buf, size_t len, enum km_mode mode);
/* The seam's sendmsg: @msg gathered, its address checked, km_take(). */
ssize_t km_sendmsg(struct kmodel *m, const struct msghdr *msg,
		   enum km_mode mode);

uint32_t km_hash(const void *p, size_t n);
bool km_dec_eq(const struct km_dec *a, const struct km_dec *b);
bool km_is_default(const struct km_dec *d, uint32_t dflt);
/* "DROP", "ACCEPT mark 0x7", "QUEUE:3+bypass payload[12]"... */
const char *km_dec_str(const struct km_dec *d, char *b, size_t n);
/* Serial number arithmetic, as the kernel compares ids. */
static inline bool km_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

#endif /* NFQBT_KMODEL_H */
