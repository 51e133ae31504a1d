/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The book (book.c): what we owe the kernel, in id order.
 *
 * Every message of the queue the kernel sent us leaves an entry here until
 * the kernel took the verdict message that decides it (and packets are
 * handed out to the application from here, oldest first):
 *   PKT      a packet descriptor (NEW, PENDING, DECIDED or DEFAULTED)
 *   DEFAULT  a packet we could not hand out but know the id of: default
 *   GAP      messages we could not read at all (no id): ids [id, id + n)
 *            each get the default verdict by itself (those never queued
 *            answer ENOENT)
 *   GAP_OPEN like GAP, its end not known yet: the next readable id ends it
 *   GAP_HEAD unreadable messages before any readable id: no lower bound,
 *            so one default batch up to .id (the id before the first
 *            readable one) decides them; .n counts the messages
 *   DONE     sent; skipped, trimmed from the head
 *
 * Owner: book.c alone writes struct nfqb_book and its entries (owner
 * thread); the planner and nfqb_verdict_batch() read them. Its functions
 * take the book and their view of the rest (struct nfqb_book_in): they
 * read the settings, write the counters they keep, and take and give
 * back descriptors only through pkt.c's functions.
 */
#ifndef NFQB_BOOK_H
#define NFQB_BOOK_H

#include "pkt.h"

/* Ids of a gap given the default verdict one by one, at most. */
#define NFQB_GAP_MAX		65536u
/* Entries a book grows to at most (nfqb_book_grow(): ENOMEM past it). */
#define NFQB_BOOK_GROW_MAX	(1u << 20)

enum nfqb_entry_kind {
	NFQB_E_DONE = 0,
	NFQB_E_PKT,
	NFQB_E_DEFAULT,
	NFQB_E_GAP,
	NFQB_E_GAP_OPEN,
	NFQB_E_GAP_HEAD,
};

struct nfqb_entry {
	struct nfqb_packet *p;	/* NFQB_E_PKT */
	uint32_t id;		/* packet id, or the first id of a gap */
	uint32_t n;		/* ids of a gap */
	uint8_t kind;
};

struct nfqb_book {
	struct nfqb_entry *v;
	uint32_t cap;		/* power of two */
	uint32_t head;		/* oldest */
	uint32_t tail;		/* one past newest */
	bool have_last;
	uint32_t last_id;	/* last id tracked */
	uint32_t unreadable;	/* messages in the open gap */
	bool fallback;		/* contract broken, or a verdict refused:
				 * single verdicts only */
	uint64_t expire_due;	/* verdict timeout of the oldest, 0: none */
	/* hand-out: the entries from .next on are not handed out yet,
	 * .nready of them NEW packets */
	uint32_t next;
	uint32_t nready;
	uint32_t defaulted;	/* default verdicts given (timeout, close):
				 * the transport sends them as decisions */
	/* the descriptors nfqb_book_sent() gives back to pkt.c */
	struct nfqb_packet **put;
	uint32_t nput;
};

static inline struct nfqb_entry *nfqb_book_at(const struct nfqb_book *b,
					      uint32_t i)
{
	return &b->v[i & (b->cap - 1)];
}

static inline bool nfqb_book_empty(const struct nfqb_book *b)
{
	return b->head == b->tail;
}

/*
 * Datagrams of the kernel a read may take: each adds one entry at most
 * (the kernel sends one message a datagram), and one more entry may come
 * once (the head of an adopted queue's orphans); the last entry stays
 * free for an open gap. A read never takes more: a packet read and not
 * tracked would get the default verdict for our bookkeeping's sake, so
 * what does not fit waits in the kernel's queue.
 */
static inline uint32_t nfqb_book_space(const struct nfqb_book *b)
{
	uint32_t used = b->tail - b->head;

	return used + 2 < b->cap ? b->cap - 2 - used : 0;
}

/* What one verdict message (or a run of them, for a gap) decides of the
 * book: the planner (plan.c) makes these, the book drops what the kernel
 * took of them. */
enum nfqb_item_type {
	NFQB_I_SINGLE,		/* one NFQNL_MSG_VERDICT for entry .first */
	NFQB_I_BATCH,		/* one NFQNL_MSG_VERDICT_BATCH, entries
				 * [.first, .last] of one run */
	NFQB_I_GAP,		/* .count single default verdicts from .id */
};

struct nfqb_item {
	uint8_t type;
	uint32_t first, last;	/* book positions */
	uint32_t id;		/* SINGLE: id; BATCH: max id; GAP: first id */
	uint32_t count;		/* BATCH: packets; GAP: ids */
	const struct nfqb_decision *d;
	size_t size;		/* bytes of its message(s) */
};

/* What rx.c read of one message of the queue, for the book. */
struct nfqb_arrival {
	struct nfqb_slot *slot;	/* the buffer it came in */
	uint64_t now;		/* when */
	struct nfqb_packet *p;	/* a packet to hand out, parsed into the next
				 * free descriptor (the book takes it) */
	bool unusable;		/* a packet message that cannot be handed
				 * out (malformed, truncated, no descriptor) */
	bool have_id;		/* ... its id could be read: */
	uint32_t id;
	bool refused;		/* the kernel refused one of our verdicts */
};

/* What the book reads of the queue, and the owners it writes through:
 * its caller's view (the queue builds it once). */
struct nfqb_settings;
struct nfqb_sock;
struct nfqb_book_in {
	const struct nfqb_settings *set;	/* timeout_ms,
						 * default_verdict */
	const struct nfqb_sock *sk;	/* adopted: a previous owner's
					 * packets may be queued */
	struct nfqb_bufs *bufs;		/* pkt.c's: a kept packet takes its
					 * descriptor (nfqb_pkt_get()), a sent
					 * one gives it back */
	struct nfqb_counters *ctr;
};

/* Room for @cap entries (rounded up to a power of two); 0 or -1. */
int nfqb_book_alloc(struct nfqb_book *b, uint32_t cap);
void nfqb_book_free(struct nfqb_book *b);
/* Replace @b by @fresh (nfqb_book_alloc()'s), which it takes: a queue with
 * nothing in its book gets new buffers. */
void nfqb_book_replace(struct nfqb_book *b, struct nfqb_book *fresh);
/* Room for @cap entries at least (NFQB_BOOK_GROW_MAX at most), what it
 * tracks kept at the same positions (a plan's items stay valid); 0, or -1
 * with nothing changed. */
int nfqb_book_grow(struct nfqb_book *b, uint32_t cap);
/* Track what @a says: a packet takes its descriptor and buffer (pkt.c)
 * and waits to be handed out (the reads leave room for it:
 * nfqb_book_space(); a datagram of several packet messages, which the
 * kernel never sends, may still find the book full: the rest leave a
 * gap); a message
 * that cannot be handed out gets the default verdict by id, or leaves a
 * gap; a refused verdict stops batching. True if it kept a packet. */
bool nfqb_book_add(struct nfqb_book *b, const struct nfqb_book_in *in,
		   const struct nfqb_arrival *a);
/* Give packets past the verdict timeout the default verdict. */
void nfqb_book_expire(struct nfqb_book *b, const struct nfqb_book_in *in,
		      uint64_t now);
/* Give every NEW or PENDING packet the default verdict, those not handed
 * out yet too (close): nothing is left to hand out. */
unsigned int nfqb_book_default_all(struct nfqb_book *b,
				   const struct nfqb_book_in *in);
/* The application's turn: packets past the verdict timeout at @now get
 * the default verdict (nfqb_book_expire(); @now 0: no timer runs), and up
 * to @max packets not handed out yet are, oldest first: their handles in
 * @vec. Returns how many. */
unsigned int nfqb_book_serve(struct nfqb_book *b, const struct nfqb_book_in *in,
			     uint64_t now, struct nfqb_packet **vec,
			     unsigned int max);
/* Take back the last @n handed out, unused (@vec: their handles, in the
 * order they were handed out): the next hand-out starts with them. */
void nfqb_book_give_back(struct nfqb_book *b, struct nfqb_packet *const *vec,
			 unsigned int n);
/* Drop DONE entries at the head; true if nothing is left. */
bool nfqb_book_settled(struct nfqb_book *b);
/* The kernel took the messages of the @n items of @v: what they decided
 * is done (its packets go back to the free list). */
void nfqb_book_sent(struct nfqb_book *b, const struct nfqb_book_in *in,
		    const struct nfqb_item *v, unsigned int n);

#endif /* NFQB_BOOK_H */
