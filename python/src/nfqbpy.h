/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb._nfqb: the Python 3 extension over libnfq-batch (CPython C API).
 *
 * Objects and who owns what:
 * - struct pyq (nfqb.Queue, and the queue inside a compat
 *   NetfilterQueue): one struct nfqb_queue. The library's owner role (the
 *   thread that may call nfqb_recv(), nfqb_flush(), the set_*() calls,
 *   close) is taken with q_enter() and given back with q_leave(), under
 *   the GIL: two Python threads never hold it at once. A thread holding it
 *   may release the GIL only inside the library call it makes.
 * - struct pypkt (nfqb.Packet): one packet handle, with a strong reference
 *   to its queue (or pool). The handle is used only while the packet is
 *   undecided and its queue (pool) alive, checked under the GIL, and the
 *   GIL is held across every nfqb_verdict*() call: a close (which sets
 *   `closing` under the GIL before it lets go of it) never runs beside a
 *   verdict of ours.
 * - struct pypool (nfqb.Pool): one struct nfqb_pool; Python callbacks run
 *   on the pool's threads, each taking the GIL for one packet.
 *
 * The rule of the library holds here too: every packet handed to Python
 * gets exactly one verdict, the application's or the default one (when
 * its Packet object dies undecided, when a callback leaves it undecided
 * and unkept, at close), and no verdict of ours ever reaches another
 * packet.
 */
#ifndef NFQBPY_H
#define NFQBPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

#if PY_VERSION_HEX >= 0x030D0000
#define nfqbpy_finalizing()	Py_IsFinalizing()
#else
#define nfqbpy_finalizing()	_Py_IsFinalizing()
#endif

/* packets per nfqb_recv() of run() and the default of recv() */
#define NFQBPY_VEC		64
/* the most recv() may ask for at once */
#define NFQBPY_VEC_MAX		1024

/* Objects still open, for the exit hook (under the GIL). */
struct nfqbpy_link {
	struct nfqbpy_link *prev, *next;
};

#define nfqbpy_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

void nfqbpy_link_add(struct nfqbpy_link **head, struct nfqbpy_link *l);
void nfqbpy_link_del(struct nfqbpy_link **head, struct nfqbpy_link *l);

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

struct pypool {
	PyObject_HEAD
	struct nfqb_pool *pool;		/* NULL once closed */
	PyObject *callback;
	PyObject *policy;		/* the one the library holds (borrowed:
					 * its reference), NULL for None at
					 * creation; see pool_set_policy() */
	uint16_t queue_first, queue_count;
	bool started, waited, stop_asked, closing;
	uint32_t default_verdict;
	PyObject *exc_type, *exc_value, *exc_tb;	/* first error */
	uint64_t cb_errors;
	struct nfqbpy_link live;	/* live pools, for the exit hook */
	PyObject *weakrefs;
};

extern PyTypeObject NfqbPy_QueueType;
extern PyTypeObject NfqbPy_PacketType;
extern PyTypeObject NfqbPy_CompatType;
extern PyTypeObject NfqbPy_PoolType;
extern PyObject *NfqbPy_LateVerdictError;

/* module.c */
PyObject *nfqbpy_oserror(int err, const char *what);
PyObject *nfqbpy_oserror_text(int err, const char *text);
int nfqbpy_u32(PyObject *o, const char *name, uint32_t *out);
int nfqbpy_conv_u32(PyObject *o, void *out);
int nfqbpy_verdict_arg(PyObject *o, uint32_t *out);
PyObject *nfqbpy_stats_dict(const struct nfqb_stats *st);

/* queue.c */
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
void q_after_decision(struct pyq *self);
int q_set_copy(struct pyq *self, int mode, uint32_t range);
int queue_module_init(PyObject *m);

/* packet.c */
struct pypkt *pkt_new(struct pyq *queue, struct pypool *pool,
		      struct nfqb_packet *h, uint32_t flags);
void pkt_snapshot(struct pypkt *p);
void pkt_snapshot_held(struct pypkt *p);
int pkt_default(struct pypkt *p);
void pkt_freelist_clear(void);
int packet_module_init(PyObject *m);

/* compat.c */
int compat_module_init(PyObject *m);

/* pool.c */
int pool_module_init(PyObject *m);

#endif /* NFQBPY_H */
