/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb.Queue (queue.c): struct pyq, the queue of an nfqb.Queue and the
 * queue inside a compat NetfilterQueue (compat.c, the layer above): one
 * struct nfqb_queue. The library's owner role (the thread that may call
 * nfqb_recv(), nfqb_flush(), the set_*() calls, close) is taken with
 * q_enter() and given back with q_leave(), under the GIL: two Python
 * threads never hold it at once. A thread holding it may release the GIL
 * only inside the library call it makes.
 */
#ifndef NFQBPY_QUEUE_H
#define NFQBPY_QUEUE_H

#include "packet.h"

/* packets per nfqb_recv() of run() and the default of recv() */
#define NFQBPY_VEC		64
/* the most recv() may ask for at once */
#define NFQBPY_VEC_MAX		1024

struct pyq {
	PyObject_HEAD
	struct nfqb_queue *q;		/* NULL once closed or detached */
	uint16_t num;
	bool busy;			/* a thread holds the owner role */
	bool closing;			/* closed, or being closed */
	bool close_asked;		/* compat: unbind() during run() */
	bool compat;			/* a NetfilterQueue's queue */
	unsigned long owner;		/* pthread_self() of the last holder */
	unsigned long recv_thread;	/* of the last nfqb_recv() caller: the
					 * library's owner, see q_may_let_go() */
	uint32_t default_verdict;
	PyObject *wakeup;		/* one-shot callable, see Queue */
	/* compat: the callback, and packets received but not yet given to
	 * it (the rest of a batch after an exception) */
	PyObject *callback;
	struct nfqb_packet **vec;	/* NFQBPY_VEC_MAX entries */
	unsigned int vec_pos, vec_n;
	uint64_t py_defaults;		/* default verdicts given here */
	uint32_t latency_us;		/* as set (nfqb_queue_set_latency()) */
	uint32_t want_buffers;		/* asked for while packets were held
					 * (EBUSY): set once the queue is idle */
	/* compat run() from several threads: they take turns, a batch
	 * each. turn changes (written with the GIL and turn_lock held) when
	 * the role is taken or let go while a thread waits, and at close. */
	unsigned int run_waiters;	/* threads waiting in q_wait_turn() */
	uint64_t turn;
	pthread_mutex_t turn_lock;
	pthread_cond_t turn_cond;	/* CLOCK_MONOTONIC */
	int sig_rd, sig_wr;		/* the signal pipe (q_sigwake_begin()),
					 * -1 until the main thread blocks */
	struct nfqbpy_link live;	/* open queues, for the exit hook */
	PyObject *weakrefs;
};

extern PyTypeObject NfqbPy_QueueType;

int q_enter(struct pyq *self);
int q_wait_turn(struct pyq *self, bool yield);
bool q_sigwake_begin(struct pyq *self);
int q_sigwake_missed(struct pyq *self);
void q_sigwake_end(struct pyq *self, bool on, bool drain);
void q_leave(struct pyq *self);
int q_leave_closing(struct pyq *self);
bool q_usable(struct pyq *self);

/*
 * May this thread, holding the role, let go of the GIL across an
 * owner-only library call (a setting, the copy mode)? The library takes
 * the last nfqb_recv() caller for its owner, whose decisions take an
 * unlocked fast path: if that is another thread, a decision of its (made
 * with the GIL) must not run beside the call, so the GIL is kept (a data
 * race under ThreadSanitizer otherwise: the owner's decision in
 * verdict.c against the call's flush in tx.c).
 */
static inline bool q_may_let_go(const struct pyq *self)
{
	return !self->recv_thread ||
	       self->recv_thread == (unsigned long)pthread_self();
}
struct pyq *q_new(PyTypeObject *type);
int q_open(struct pyq *self, uint16_t num, int sockfd);
int q_set_buffers(struct pyq *self, uint32_t count);
void q_buffers_pending(struct pyq *self);
int q_close(struct pyq *self, bool from_gc);
int q_flush_now(struct pyq *self);
int q_flush_all(struct pyq *self);
void q_close_all(void);
int q_set_copy(struct pyq *self, int mode, uint32_t range);
int queue_module_init(PyObject *m);

#endif /* NFQBPY_QUEUE_H */
