/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The book (book.c): what we owe the kernel, in id order.
 *
 * Every message of the queue the kernel sent us leaves an entry here until
 * the kernel took the verdict message that decides it:
 *   PKT      a packet descriptor (NEW, PENDING, DECIDED or DEFAULTED)
 *   DEFAULT  a packet we could not hand out but know the id of: default
 *   GAP      messages we could not read: ids [id, id + n) each get the
 *            default verdict by itself (those never queued answer ENOENT)
 *   GAP_OPEN like GAP, its end not known yet: the next readable id ends it
 *   GAP_HEAD unreadable messages before any readable id: no lower bound,
 *            so one default batch up to .id (the id before the first
 *            readable one) decides them; .n counts the messages
 *   DONE     sent; skipped, trimmed from the head
 *
 * Owner: book.c alone writes struct nfqb_book and its entries (owner
 * thread); the planner and nfqb_verdict_batch() read them.
 */
#ifndef NFQB_BOOK_H
#define NFQB_BOOK_H

#include "pkt.h"

/* Ids of a gap given the default verdict one by one, at most. */
#define NFQB_GAP_MAX		65536u

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

/* Room for @cap entries (rounded up to a power of two); 0 or -1. */
int nfqb_book_alloc(struct nfqb_book *b, uint32_t cap);
void nfqb_book_free(struct nfqb_book *b);
/* Track @p (NEW). Returns 0, or -1 if the book is full. */
int nfqb_book_add_packet(struct nfqb_queue *q, struct nfqb_packet *p);
/* A message of this queue with readable @id we cannot hand out. */
void nfqb_book_add_default(struct nfqb_queue *q, uint32_t id);
/* A message we could not read the id of. */
void nfqb_book_add_unreadable(struct nfqb_queue *q);
/* The kernel refused a verdict: no batch from now on. */
void nfqb_book_fallback(struct nfqb_queue *q);
/* Give packets past the verdict timeout the default verdict. */
void nfqb_book_expire(struct nfqb_queue *q, uint64_t now);
/* Give every NEW or PENDING packet the default verdict (close). */
unsigned int nfqb_book_default_all(struct nfqb_queue *q);
/* Drop DONE entries at the head; true if nothing is left. */
bool nfqb_book_settled(struct nfqb_book *b);
/* The kernel took the messages of @pl: what they decided is done (its
 * packets go back to the free list). */
struct nfqb_plan;
void nfqb_book_release(struct nfqb_queue *q, const struct nfqb_plan *pl);

#endif /* NFQB_BOOK_H */
