// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb.Queue: one queue of the native API, and the owner role every queue
 * object (a compat NetfilterQueue's too) goes through.
 *
 * The owner role (q_enter()/q_leave(), under the GIL) is what the
 * library's "owner thread" is: the one thread at a time that may call
 * nfqb_recv(), nfqb_flush(), nfqb_verdict_batch(), the nfqb_queue_set_*()
 * calls and close. A call that would need it while another thread holds
 * it fails with RuntimeError; close() from another thread interrupts the
 * holder and waits for it to let go.
 *
 * When decisions leave: the library sends them from the owner's next
 * nfqb_recv() or nfqb_flush(); a recv() blocked in another thread is woken
 * by the decision and sends it at once. A decision made while nobody
 * holds the role waits for the next recv(), flush() or close() (native),
 * or is sent by the deciding call itself (compat: as python-netfilterqueue
 * does, a verdict given outside run() is on its way when the call
 * returns). The asyncio helpers (nfqb.aio) are woken through a one-shot
 * callable (_set_wakeup()) by decisions of their own thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "queue.h"

static void q_next_turn(struct pyq *self);

int q_enter(struct pyq *self)
{
	if (!self->q || self->closing) {
		PyErr_SetString(PyExc_ValueError, self->compat ?
				"the queue was unbound" :
				"operation on a closed queue");
		return -1;
	}
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError,
				"the queue is in use by another call (recv()/run() in another thread?)");
		return -1;
	}
	self->busy = true;
	self->owner = (unsigned long)pthread_self();
	if (self->run_waiters)
		q_next_turn(self);
	return 0;
}

void q_leave(struct pyq *self)
{
	self->busy = false;
	if (self->run_waiters)
		q_next_turn(self);
}

/* A new turn: the role was taken or let go, or the queue is closing
 * (GIL held). */
static void q_next_turn(struct pyq *self)
{
	pthread_mutex_lock(&self->turn_lock);
	self->turn++;
	pthread_cond_broadcast(&self->turn_cond);
	pthread_mutex_unlock(&self->turn_lock);
}

/* Wait without the GIL for the turn to change, at most 100 ms (a signal
 * for the main thread is seen that often). */
static void wait_next_turn(struct pyq *self)
{
	uint64_t t = self->turn;
	struct timespec ts;

	self->run_waiters++;
	Py_BEGIN_ALLOW_THREADS
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 100000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&self->turn_lock);
	while (self->turn == t &&
	       pthread_cond_timedwait(&self->turn_cond, &self->turn_lock,
				      &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&self->turn_lock);
	Py_END_ALLOW_THREADS
	self->run_waiters--;
}

/*
 * compat run() from several threads (python-netfilterqueue 1.1 lets them
 * all recv() on the socket): they take turns, a batch each. Wait until
 * the role is free; with @yield (this thread just let it go), first let a
 * waiting thread take it. 0: free (take it with q_enter()), 1: the queue
 * was closed meanwhile, -1 with an exception (a signal handler raised).
 */
int q_wait_turn(struct pyq *self, bool yield)
{
	if (yield && self->run_waiters && q_usable(self) && !self->busy)
		wait_next_turn(self);
	while (self->busy && q_usable(self)) {
		if (self->owner == (unsigned long)pthread_self())
			return 0;	/* run() from its callback: q_enter() says */
		wait_next_turn(self);
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
	return q_usable(self) ? 0 : 1;
}

/* q_leave(), then the close asked meanwhile by this thread (a signal
 * handler, a callback): 0, or -1 with an exception */
int q_leave_closing(struct pyq *self)
{
	q_leave(self);
	if (!self->close_asked)
		return 0;
	self->close_asked = false;
	if (PyErr_Occurred()) {
		PyObject *t, *v, *tb;

		PyErr_Fetch(&t, &v, &tb);
		q_close(self, true);
		PyErr_Restore(t, v, tb);
		return -1;
	}
	return q_close(self, false);
}

bool q_usable(struct pyq *self)
{
	return self->q && !self->closing;
}

static struct nfqbpy_link *live_queues;	/* under the GIL */

static void live_add(struct pyq *self)
{
	nfqbpy_link_add(&live_queues, &self->live);
}

static void live_del(struct pyq *self)
{
	nfqbpy_link_del(&live_queues, &self->live);
}

/*
 * Send every decision made, now (owner role held): decided packets behind
 * an undecided one too, which a flush otherwise keeps for up to the
 * latency bound to batch them. 0, or -1 (errno; the decisions are kept
 * and retried by the next receive).
 */
int q_flush_all(struct pyq *self)
{
	int rc;

	nfqb_queue_set_latency(self->q, 0);
	rc = nfqb_flush(self->q);
	nfqb_queue_set_latency(self->q, self->latency_us);
	return rc < 0 ? -1 : 0;
}

/* Send what is decided, now (compat, outside run()). 0 or -1 (no
 * exception: the decisions are kept and go with the next run()). */
int q_flush_now(struct pyq *self)
{
	int rc;

	if (!q_usable(self) || self->busy)
		return -1;
	self->busy = true;
	self->owner = (unsigned long)pthread_self();
	rc = q_flush_all(self);
	self->busy = false;
	return rc;
}

/* At exit: every queue still open is closed (decisions sent, the default
 * verdict for the rest), as a pool is stopped. */
void q_close_all(void)
{
	while (live_queues) {
		struct pyq *q = nfqbpy_of(live_queues, struct pyq, live);

		Py_INCREF(q);
		if (q_close(q, true) < 0)
			PyErr_Clear();
		live_del(q);
		Py_DECREF(q);
	}
}

/* After a verdict of one of its packets (packet.c, through queue_ops):
 * compat sends it now if nobody holds the role; the aio waiter of this
 * thread is woken. */
static void q_after_decision(struct pyq *self)
{
	PyObject *w, *r;

	if (self->busy || !q_usable(self))
		return;
	if (self->compat) {
		q_flush_now(self);
		return;
	}
	/* the aio waiter of this thread: a decision of another thread
	 * wakes it through the fd (the library writes the wake-up) */
	w = self->wakeup;
	if (!w || self->owner != (unsigned long)pthread_self())
		return;
	self->wakeup = NULL;
	r = PyObject_CallNoArgs(w);
	if (r)
		Py_DECREF(r);
	else
		PyErr_WriteUnraisable(w);
	Py_DECREF(w);
}

static uint32_t q_default_verdict(const struct pyq *self)
{
	return self->default_verdict;
}

static void q_decided(struct pyq *self, bool by_default)
{
	if (by_default)
		self->py_defaults++;
	q_after_decision(self);
}

/* what a packet (packet.c, the layer below) asks of its queue */
static const struct pkt_queue_ops queue_ops = {
	.usable = q_usable,
	.default_verdict = q_default_verdict,
	.decided = q_decided,
};

struct pyq *q_new(PyTypeObject *type)
{
	struct pyq *self = (struct pyq *)type->tp_alloc(type, 0);

	if (!self)
		return NULL;
	pthread_condattr_t ca;

	self->default_verdict = NFQB_ACCEPT;
	self->latency_us = 1000;	/* the library's default */
	self->sig_rd = self->sig_wr = -1;
	pthread_mutex_init(&self->turn_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&self->turn_cond, &ca);
	pthread_condattr_destroy(&ca);
	self->vec = PyMem_Calloc(NFQBPY_VEC_MAX, sizeof(*self->vec));
	if (!self->vec) {
		Py_DECREF(self);
		PyErr_NoMemory();
		return NULL;
	}
	return self;
}

/*
 * Open queue @num; on a duplicate of the netlink socket @sockfd if >= 0
 * (made in another network namespace, say: the queue is bound there,
 * with no setns(), which needs CAP_SYS_ADMIN). 0, or -1 with an
 * exception.
 */
int q_open(struct pyq *self, uint16_t num, int sockfd)
{
	struct nfqb_queue *q = NULL;
	int err = 0, fd;

	Py_BEGIN_ALLOW_THREADS
	if (sockfd >= 0) {
		fd = fcntl(sockfd, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0) {
			q = nfqb_queue_open_fd(fd, num);
			if (!q) {
				err = errno;
				close(fd);
			}
		} else {
			err = errno;
		}
	} else {
		q = nfqb_queue_open(num);
		if (!q)
			err = errno;
	}
	Py_END_ALLOW_THREADS
	if (!q) {
		char what[64];

		if (self->compat) {
			/* python-netfilterqueue 1.1's text, whatever the
			 * cause (EBUSY: another socket has the queue) */
			snprintf(what, sizeof(what),
				 "Failed to create queue %u.", (unsigned int)num);
			nfqbpy_oserror_text(err, what);
			return -1;
		}
		snprintf(what, sizeof(what), err == EBUSY ?
			 "queue %u is bound by another socket" :
			 "open queue %u", (unsigned int)num);
		nfqbpy_oserror(err, what);
		return -1;
	}
	self->q = q;
	self->num = num;
	live_add(self);
	return 0;
}

/*
 * The buffer count (nfqb_queue_set_buffers()), or, when packets that came
 * while the queue was being configured are held already (EBUSY: traffic
 * flows as soon as the queue is bound), later: q_buffers_pending() before
 * each receive sets it once the queue is idle. 0, or -1 with errno.
 */
int q_set_buffers(struct pyq *self, uint32_t count)
{
	if (nfqb_queue_set_buffers(self->q, count) == 0)
		return 0;
	if (errno != EBUSY)
		return -1;
	self->want_buffers = count;
	return 0;
}

void q_buffers_pending(struct pyq *self)
{
	if (self->want_buffers &&
	    nfqb_queue_set_buffers(self->q, self->want_buffers) == 0)
		self->want_buffers = 0;
}

/* Wait, without the GIL, until the thread holding the role lets go. */
static void wait_not_busy(struct pyq *self)
{
	unsigned int n = 0;

	while (self->busy) {
		if (n++ % 100 == 0 && self->q)
			nfqb_queue_interrupt(self->q);
		Py_BEGIN_ALLOW_THREADS
		usleep(1000);
		Py_END_ALLOW_THREADS
	}
}

/*
 * An aio waiter (nfqb.aio.recv()) sleeping on the queue's fd: woken before
 * the fd is closed, so that it takes its reader off the loop and sees the
 * queue closed (a closed fd wakes nobody; the waiter would sleep for good).
 */
static void wake_waiter(struct pyq *self)
{
	PyObject *w = self->wakeup, *r;

	if (!w || nfqbpy_finalizing())
		return;
	self->wakeup = NULL;
	r = PyObject_CallNoArgs(w);
	if (r)
		Py_DECREF(r);
	else
		PyErr_WriteUnraisable(w);
	Py_DECREF(w);
}

/*
 * Close: every outstanding packet gets its decision or the default
 * verdict, the queue is unbound. Called with the role held by this thread
 * (compat run(): close_asked), it only asks. 0, or -1 with an exception
 * (the queue is closed anyway).
 */
int q_close(struct pyq *self, bool quiet)
{
	struct nfqb_queue *q;
	int rc, err;

	if (!self->q)
		return 0;
	if (self->busy && self->owner == (unsigned long)pthread_self()) {
		self->close_asked = true;
		return 0;
	}
	self->closing = true;		/* no verdict of ours from now on */
	if (self->run_waiters)
		q_next_turn(self);	/* waiting run()s return */
	wake_waiter(self);
	wait_not_busy(self);
	q = self->q;
	if (!q)
		return 0;		/* the holder closed it meanwhile */
	self->busy = true;
	live_del(self);
	if (nfqbpy_finalizing()) {
		/* no other thread runs Python any more: keep the GIL */
		rc = nfqb_queue_close(q);
		err = errno;
	} else {
		Py_BEGIN_ALLOW_THREADS
		rc = nfqb_queue_close(q);
		err = errno;
		Py_END_ALLOW_THREADS
	}
	self->q = NULL;
	self->busy = false;
	self->vec_pos = self->vec_n = 0;
	if (self->sig_rd >= 0) {
		close(self->sig_rd);
		close(self->sig_wr);
		self->sig_rd = self->sig_wr = -1;
	}
	if (rc < 0 && !quiet) {
		nfqbpy_oserror(err, "close (the queue is closed all the same)");
		return -1;
	}
	return 0;
}

/* --- Signals while the library sleeps ------------------------------------ */

/*
 * The interpreter's C signal handler only notes a signal (and writes its
 * wakeup fd, if one is set): one that comes after the GIL is let go and
 * before nfqb_recv() sleeps would leave the sleep to the next packet
 * (Ctrl-C lost until then). While the main thread blocks in the library,
 * the interpreter's wakeup fd is the write end of a pipe whose read end
 * the library watches (nfqb_queue_set_wake_fd()): the sleep ends at once
 * with EINTR and the handler runs. Not when the program has a wakeup fd
 * of its own (an event loop's: it does not block in recv()): that one is
 * put back and stays.
 */
static unsigned long main_thread;	/* pthread_self() of Python's main */
static PyObject *set_wakeup_fd;		/* signal.set_wakeup_fd */

/* signal.set_wakeup_fd(@fd, warn_on_full_buffer=False): the old fd, or
 * -2 (an exception, not kept: the wake stays off) */
static int wakeup_fd(int fd)
{
	PyObject *r = PyObject_CallFunction(set_wakeup_fd, "i", fd);
	long old;

	if (!r) {
		PyErr_Clear();
		return -2;
	}
	old = PyLong_AsLong(r);
	Py_DECREF(r);
	if (old == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		return -2;
	}
	return (int)old;
}

/* Before a blocking receive, role held: true if the pipe is the wakeup
 * fd now (give it to q_sigwake_end()). */
bool q_sigwake_begin(struct pyq *self)
{
	int p[2], old;

	if ((unsigned long)pthread_self() != main_thread || !self->q)
		return false;
	if (self->sig_rd < 0) {
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
			return false;	/* as before: a signal may wait */
		if (nfqb_queue_set_wake_fd(self->q, p[0]) < 0) {
			close(p[0]);
			close(p[1]);
			return false;
		}
		self->sig_rd = p[0];
		self->sig_wr = p[1];
	}
	old = wakeup_fd(self->sig_wr);
	if (old == -2)
		return false;
	if (old >= 0 && old != self->sig_wr) {
		wakeup_fd(old);		/* the program's own */
		return false;
	}
	return true;
}

/* Just after q_sigwake_begin() said true, before the GIL is let go: a
 * signal that came before the pipe was the wakeup fd wrote nothing to it
 * and would wait for the next packet; its handler runs now. 0, or -1 with
 * the handler's exception (the wakeup fd back to none). */
int q_sigwake_missed(struct pyq *self)
{
	if (PyErr_CheckSignals() == 0)
		return 0;
	q_sigwake_end(self, true, false);
	return -1;
}

/* After it: the wakeup fd back to none; with @drain (EINTR), the pipe
 * emptied so that the next sleep is not cut short again. */
void q_sigwake_end(struct pyq *self, bool on, bool drain)
{
	char buf[64];

	if (on)
		wakeup_fd(-1);
	if (drain && self->sig_rd >= 0)
		while (read(self->sig_rd, buf, sizeof(buf)) > 0)
			;
}

/* --- Queue: creation ----------------------------------------------------- */

static const char *const q_kwlist[] = {
	"num", "copy_mode", "copy_range", "maxlen", "flags", "flags_off",
	"buffers", "rcvbuf", "default_verdict", "batch_limit", "latency_us",
	"linger_us", "verdict_timeout_ms", "coalesce", "enobufs", "nonblock",
	"large", NULL,
};

struct qopts {
	int copy_mode;
	uint32_t copy_range, maxlen, buffers, rcvbuf;
	PyObject *flags, *flags_off, *dv, *batch, *lat, *linger, *vto;
	PyObject *coalesce, *enobufs, *large;
	int nonblock;
};

static int opt_u32(PyObject *o, const char *name, uint32_t *v, bool *set)
{
	*set = false;
	if (!o || o == Py_None)
		return 0;
	if (nfqbpy_u32(o, name, v) < 0)
		return -1;
	*set = true;
	return 0;
}

/* a library setter failed: OSError (ValueError for EINVAL) */
static int set_err(int err, const char *what)
{
	if (err == EINVAL)
		PyErr_Format(PyExc_ValueError, "%s: invalid value", what);
	else
		nfqbpy_oserror(err, what);
	return -1;
}

#define LARGE_WHAT	"large (LARGE_PASS or LARGE_WHOLE)"

/* The options of @o the library keeps by itself (default verdict,
 * coalescing, timeouts, ENOBUFS, the large-packet policy): 0, or -1 with
 * an exception */
static int apply_library_opts(struct pyq *self, const struct qopts *o)
{
	struct nfqb_queue *q = self->q;
	uint32_t v;
	bool set;

	if (o->dv && o->dv != Py_None) {
		if (nfqbpy_verdict_arg(o->dv, &v) < 0)
			return -1;
		if (nfqb_queue_set_default_verdict(q, v) < 0)
			return set_err(errno, "default_verdict (ACCEPT or DROP)");
		self->default_verdict = v;
	}
	if (opt_u32(o->batch, "batch_limit", &v, &set) < 0)
		return -1;
	if (set && nfqb_queue_set_batch_limit(q, v) < 0)
		return set_err(errno, "batch_limit (1..65536)");
	if (opt_u32(o->lat, "latency_us", &v, &set) < 0)
		return -1;
	if (set) {
		nfqb_queue_set_latency(q, v);
		self->latency_us = v;
	}
	if (opt_u32(o->linger, "linger_us", &v, &set) < 0)
		return -1;
	if (set && nfqb_queue_set_linger(q, v) < 0)
		return set_err(errno, "linger_us (below 1000000, or LINGER_AUTO)");
	if (opt_u32(o->vto, "verdict_timeout_ms", &v, &set) < 0)
		return -1;
	if (set)
		nfqb_queue_set_verdict_timeout(q, v);
	if (o->coalesce && o->coalesce != Py_None) {
		int on = PyObject_IsTrue(o->coalesce);

		if (on < 0)
			return -1;
		nfqb_queue_set_coalesce(q, on);
	}
	if (o->enobufs && o->enobufs != Py_None) {
		if (opt_u32(o->enobufs, "enobufs", &v, &set) < 0)
			return -1;
		if (nfqb_queue_set_enobufs(q, v) < 0)
			return set_err(errno, "enobufs (ENOBUFS_REPORT or ENOBUFS_IGNORE)");
	}
	if (opt_u32(o->large, "large", &v, &set) < 0)
		return -1;
	if (set && nfqb_queue_set_large(q, (enum nfqb_large)v) < 0)
		return set_err(errno, LARGE_WHAT);
	return 0;
}

/* The options of @o that are the kernel's (copy mode, length; with
 * @set_flags the flags: @flags of those in @mask): round trips, without
 * the GIL; 0, or -1 with an exception */
static int apply_kernel_opts(struct pyq *self, const struct qopts *o,
			     bool adopted, bool set_flags, uint32_t flags,
			     uint32_t mask)
{
	struct nfqb_queue *q = self->q;
	const char *what = NULL;
	int rc = 0, err = 0;

	Py_BEGIN_ALLOW_THREADS
	if (!adopted && (o->copy_mode != NFQB_COPY_PACKET || o->copy_range)) {
		what = "copy_mode";
		rc = nfqb_queue_set_copy_mode(q, o->copy_mode, o->copy_range);
	}
	if (!rc && o->maxlen) {
		what = "maxlen";
		rc = nfqb_queue_set_maxlen(q, o->maxlen);
	}
	if (!rc && set_flags) {
		what = "flags";
		rc = nfqb_queue_set_flags(q, flags, mask);
	}
	err = errno;
	Py_END_ALLOW_THREADS
	if (rc < 0)
		return set_err(err, what);
	return 0;
}

/* Apply @o to the open queue (owner role held, GIL held; the
 * configuration calls may wait for the kernel: without the GIL). */
static int apply_opts(struct pyq *self, const struct qopts *o, bool adopted)
{
	struct nfqb_queue *q = self->q;
	uint32_t flags = 0, off = 0;
	bool has_flags, has_off;

	if (opt_u32(o->flags, "flags", &flags, &has_flags) < 0 ||
	    opt_u32(o->flags_off, "flags_off", &off, &has_off) < 0)
		return -1;
	if (apply_library_opts(self, o) < 0)
		return -1;
	/* the socket's buffer and ours before the configuration's round
	 * trips: packets flow into the queue from its bind on */
	if (o->rcvbuf && nfqb_queue_set_rcvbuf(q, (size_t)o->rcvbuf) < 0)
		return set_err(errno, "rcvbuf");
	if (o->buffers && q_set_buffers(self, o->buffers) < 0)
		return set_err(errno, "buffers (1..65536)");
	nfqb_queue_set_nonblock(q, o->nonblock);
	/* flags stays 0 when not given */
	return apply_kernel_opts(self, o, adopted, has_flags || has_off,
				 flags, flags | off);
}

static PyObject *queue_new_common(PyTypeObject *type, PyObject *args,
				  PyObject *kw, int adopt_fd)
{
	struct qopts o = { .copy_mode = NFQB_COPY_PACKET };
	uint32_t num;
	struct pyq *self;

	if (!PyArg_ParseTupleAndKeywords(args, kw,
			"O&|$iO&O&OOO&O&OOOOOOOpO:Queue", (char **)q_kwlist,
			nfqbpy_conv_u32, &num, &o.copy_mode,
			nfqbpy_conv_u32, &o.copy_range,
			nfqbpy_conv_u32, &o.maxlen, &o.flags, &o.flags_off,
			nfqbpy_conv_u32, &o.buffers,
			nfqbpy_conv_u32, &o.rcvbuf, &o.dv, &o.batch,
			&o.lat, &o.linger, &o.vto, &o.coalesce, &o.enobufs,
			&o.nonblock, &o.large))
		return NULL;
	if (num > 65535) {
		PyErr_SetString(PyExc_ValueError, "num must be 0..65535");
		return NULL;
	}
	if (o.copy_mode != NFQB_COPY_META && o.copy_mode != NFQB_COPY_PACKET) {
		PyErr_SetString(PyExc_ValueError,
				"copy_mode must be COPY_META or COPY_PACKET (in COPY_NONE the kernel drops every packet)");
		return NULL;
	}
	self = q_new(type);
	if (!self)
		return NULL;
	if (adopt_fd >= 0) {
		struct nfqb_queue *q;
		int err;

		Py_BEGIN_ALLOW_THREADS
		q = nfqb_queue_adopt(adopt_fd, (uint16_t)num);
		err = errno;
		Py_END_ALLOW_THREADS
		if (!q) {
			nfqbpy_oserror(err, "adopt");
			Py_DECREF(self);
			return NULL;
		}
		self->q = q;
		self->num = (uint16_t)num;
		live_add(self);
	} else if (q_open(self, (uint16_t)num, -1) < 0) {
		Py_DECREF(self);
		return NULL;
	}
	self->busy = true;
	self->owner = (unsigned long)pthread_self();
	if (apply_opts(self, &o, adopt_fd >= 0) < 0) {
		self->busy = false;
		q_close(self, true);
		Py_DECREF(self);
		return NULL;
	}
	self->busy = false;
	return (PyObject *)self;
}

static PyObject *queue_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	return queue_new_common(type, args, kw, -1);
}

static PyObject *queue_adopt(PyObject *cls, PyObject *args, PyObject *kw)
{
	PyObject *fdo, *rest, *res;
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	int fd;

	if (n < 2) {
		PyErr_SetString(PyExc_TypeError,
				"adopt(fd, num, **options): fd and num are required");
		return NULL;
	}
	fdo = PyTuple_GET_ITEM(args, 0);
	fd = PyObject_AsFileDescriptor(fdo);
	if (fd < 0)
		return NULL;
	rest = PyTuple_GetSlice(args, 1, n);
	if (!rest)
		return NULL;
	res = queue_new_common((PyTypeObject *)cls, rest, kw, fd);
	Py_DECREF(rest);
	return res;
}

static int queue_traverse(struct pyq *self, visitproc visit, void *arg)
{
	Py_VISIT(self->wakeup);
	Py_VISIT(self->callback);
	return 0;
}

static int queue_clear(struct pyq *self)
{
	Py_CLEAR(self->wakeup);
	Py_CLEAR(self->callback);
	return 0;
}

static void queue_dealloc(struct pyq *self)
{
	PyObject_GC_UnTrack(self);
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	if (self->q)
		q_close(self, true);
	queue_clear(self);
	PyMem_Free(self->vec);
	pthread_cond_destroy(&self->turn_cond);
	pthread_mutex_destroy(&self->turn_lock);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* --- Queue: receiving ---------------------------------------------------- */

/* Packets for Python: a list of @n new Packet objects from @vec. If one
 * cannot be made, every packet not in the list gets the default verdict. */
static PyObject *packets_list(struct pyq *self, struct nfqb_packet **vec,
			      int n)
{
	PyObject *list = PyList_New(n);
	int i;

	for (i = 0; list && i < n; i++) {
		struct pypkt *p = pkt_new(self, NULL, vec[i], 0);

		if (!p) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, i, (PyObject *)p);
	}
	if (!list) {
		/* the Packets made so far died with the list (default
		 * verdict); the rest get it here */
		for (; i < n; i++)
			if (!nfqb_verdict(vec[i], self->default_verdict))
				self->py_defaults++;
	}
	return list;
}

/*
 * A compat queue's run() that ended in an exception leaves the rest of
 * its batch in q->vec for the next run(); recv() on the same queue hands
 * those out first (and receives nothing more this call), so that a
 * program mixing the two APIs neither overwrites nor strands them.
 */
static PyObject *pending_list(struct pyq *self, uint32_t max)
{
	struct nfqb_packet *got[NFQBPY_VEC_MAX];
	unsigned int n = self->vec_n - self->vec_pos;

	if (n > max)
		n = max;
	/* copied out before the role is given back: Packet objects are
	 * made without it (another thread may then reuse q->vec) */
	memcpy(got, self->vec + self->vec_pos, n * sizeof(got[0]));
	self->vec_pos += n;
	q_leave(self);
	return packets_list(self, got, (int)n);
}

/* Receive up to @max packets into q->vec (role held; the GIL released
 * while it waits; with @block a signal for Python wakes it), how many in
 * *np (0: none came, interrupted or timed out; when the queue closes
 * meanwhile, what nfqb_recv() returned): 0, or -1 with an exception */
static int recv_some(struct pyq *self, uint32_t max, int block, int *np)
{
	int n, err;

	for (;;) {
		bool sw;

		q_buffers_pending(self);
		sw = block && q_sigwake_begin(self);
		if (sw && q_sigwake_missed(self) < 0)
			return -1;
		self->recv_thread = (unsigned long)pthread_self();
		Py_BEGIN_ALLOW_THREADS
		n = nfqb_recv(self->q, self->vec, max);
		err = errno;
		Py_END_ALLOW_THREADS
		q_sigwake_end(self, sw, n < 0 && err == EINTR);
		if (n > 0 || self->closing)
			break;
		if (err == ENOBUFS)
			continue;	/* counted; go on */
		if (err == EINTR) {
			if (PyErr_CheckSignals() < 0)
				return -1;
			n = 0;		/* an interrupt(), or a handled signal */
			break;
		}
		if (err == EAGAIN || err == ENOSPC) {
			n = 0;
			break;
		}
		nfqbpy_oserror(err, "recv");
		return -1;
	}
	*np = n;
	return 0;
}

static PyObject *queue_recv(struct pyq *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "max", "block", NULL };
	uint32_t max = NFQBPY_VEC;
	struct nfqb_packet *got[NFQBPY_VEC_MAX];
	int block = 1, n;
	bool nb_changed = false;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&p:recv", kwlist,
					 nfqbpy_conv_u32, &max, &block))
		return NULL;
	if (max < 1 || max > NFQBPY_VEC_MAX) {
		PyErr_Format(PyExc_ValueError, "max must be 1..%d",
			     NFQBPY_VEC_MAX);
		return NULL;
	}
	if (q_enter(self) < 0)
		return NULL;
	if (self->vec_pos < self->vec_n)
		return pending_list(self, max);
	if (!block) {
		nfqb_queue_set_nonblock(self->q, true);
		nb_changed = true;
	}
	if (recv_some(self, max, block, &n) < 0)
		goto fail;
	if (nb_changed)
		nfqb_queue_set_nonblock(self->q, false);
	/* copied out while the role is held (see pending_list()) */
	if (n > 0)
		memcpy(got, self->vec, (size_t)n * sizeof(got[0]));
	if (q_leave_closing(self) < 0)
		return NULL;
	if (!q_usable(self))
		return PyList_New(0);	/* close gave them the default */
	return packets_list(self, got, n);
fail:
	if (nb_changed)
		nfqb_queue_set_nonblock(self->q, false);
	q_leave_closing(self);
	return NULL;
}

static PyObject *queue_flush(struct pyq *self, PyObject *unused)
{
	int rc, err;

	(void)unused;
	if (q_enter(self) < 0)
		return NULL;
	rc = nfqb_flush(self->q);
	err = errno;
	q_leave(self);
	if (rc < 0) {
		if (err == EAGAIN)
			return PyLong_FromLong(0);
		return nfqbpy_oserror(err, "flush");
	}
	return PyLong_FromLong(rc);
}

static PyObject *queue_verdict_batch(struct pyq *self, PyObject *args,
				     PyObject *kw)
{
	static char *kwlist[] = { "max_id", "verdict", "mark", NULL };
	PyObject *vo, *mo = Py_None;
	uint32_t max_id, v, mark;
	int rc, err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|O:verdict_batch",
					 kwlist, nfqbpy_conv_u32, &max_id,
					 &vo, &mo))
		return NULL;
	if (nfqbpy_verdict_arg(vo, &v) < 0)
		return NULL;
	if (mo != Py_None && nfqbpy_u32(mo, "mark", &mark) < 0)
		return NULL;
	if (q_enter(self) < 0)
		return NULL;
	rc = nfqb_verdict_batch(self->q, max_id, v, mo != Py_None ? &mark : NULL);
	err = errno;
	q_leave(self);
	if (rc < 0) {
		if (err == ENOENT)
			return PyLong_FromLong(0);
		if (err == EINVAL) {
			PyErr_SetString(PyExc_ValueError,
					"verdict_batch takes ACCEPT, DROP or REPEAT");
			return NULL;
		}
		return nfqbpy_oserror(err, "verdict_batch");
	}
	return PyLong_FromLong(rc);
}

static PyObject *queue_interrupt(struct pyq *self, PyObject *unused)
{
	(void)unused;
	if (q_usable(self))
		nfqb_queue_interrupt(self->q);
	Py_RETURN_NONE;
}

static int need_open(struct pyq *self)
{
	if (q_usable(self))
		return 0;
	PyErr_SetString(PyExc_ValueError, "operation on a closed queue");
	return -1;
}

static PyObject *queue_fileno(struct pyq *self, PyObject *unused)
{
	(void)unused;
	if (need_open(self) < 0)
		return NULL;
	return PyLong_FromLong(nfqb_queue_fd(self->q));
}

static PyObject *queue_socket_fd(struct pyq *self, PyObject *unused)
{
	(void)unused;
	if (need_open(self) < 0)
		return NULL;
	return PyLong_FromLong(nfqb_queue_socket_fd(self->q));
}

static PyObject *queue_next_timeout(struct pyq *self, PyObject *unused)
{
	(void)unused;
	if (need_open(self) < 0)
		return NULL;
	return PyLong_FromLong(nfqb_queue_next_timeout(self->q));
}

static PyObject *queue_stats(struct pyq *self, PyObject *unused)
{
	struct nfqb_stats st;
	PyObject *d, *v;

	(void)unused;
	if (need_open(self) < 0)
		return NULL;
	if (nfqb_queue_stats(self->q, &st, sizeof(st)) < 0)
		return nfqbpy_oserror(errno, "stats");
	d = nfqbpy_stats_dict(&st);
	if (!d)
		return NULL;
	v = PyLong_FromUnsignedLongLong(self->py_defaults);
	if (!v || PyDict_SetItemString(d, "py_defaults", v) < 0) {
		Py_XDECREF(v);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(v);
	return d;
}

static PyObject *queue_close(struct pyq *self, PyObject *unused)
{
	(void)unused;
	if (q_close(self, false) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *queue_detach(struct pyq *self, PyObject *unused)
{
	struct nfqb_queue *q;
	int fd, err;

	(void)unused;
	if (q_enter(self) < 0)
		return NULL;
	self->closing = true;		/* no verdict of ours meanwhile */
	q = self->q;
	Py_BEGIN_ALLOW_THREADS
	fd = nfqb_queue_detach(q);
	err = errno;
	Py_END_ALLOW_THREADS
	q_leave(self);
	if (fd < 0) {
		self->closing = false;	/* still open and usable */
		return nfqbpy_oserror(err, "detach");
	}
	self->q = NULL;
	live_del(self);
	return PyLong_FromLong(fd);
}

static PyObject *queue_set_wakeup(struct pyq *self, PyObject *arg)
{
	if (arg != Py_None && !PyCallable_Check(arg)) {
		PyErr_SetString(PyExc_TypeError, "wakeup must be callable or None");
		return NULL;
	}
	self->owner = (unsigned long)pthread_self();
	Py_XDECREF(self->wakeup);
	self->wakeup = arg == Py_None ? NULL : arg;
	Py_XINCREF(self->wakeup);
	Py_RETURN_NONE;
}

static PyObject *queue_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	Py_INCREF(self);
	return self;
}

static PyObject *queue_exit(struct pyq *self, PyObject *args)
{
	(void)args;
	if (q_close(self, false) < 0)
		return NULL;
	Py_RETURN_FALSE;
}

/* --- Queue: settings (owner role) ------------------------------------ */

#define ROLE_CALL(expr, what)						\
	do {								\
		int rc_, err_;						\
		if (q_enter(self) < 0)					\
			return NULL;					\
		if (q_may_let_go(self)) {				\
			Py_BEGIN_ALLOW_THREADS				\
			rc_ = (expr);					\
			err_ = errno;					\
			Py_END_ALLOW_THREADS				\
		} else {						\
			rc_ = (expr);					\
			err_ = errno;					\
		}							\
		q_leave(self);						\
		if (rc_ < 0) {						\
			set_err(err_, what);				\
			return NULL;					\
		}							\
	} while (0)

static PyObject *set_u32(struct pyq *self, PyObject *arg, const char *name,
			 int (*fn)(struct nfqb_queue *, uint32_t))
{
	uint32_t v;

	if (nfqbpy_u32(arg, name, &v) < 0)
		return NULL;
	ROLE_CALL(fn(self->q, v), name);
	Py_RETURN_NONE;
}

static int set_bl(struct nfqb_queue *q, uint32_t v)
{
	return nfqb_queue_set_batch_limit(q, v);
}

static int set_bufs(struct nfqb_queue *q, uint32_t v)
{
	return nfqb_queue_set_buffers(q, v);
}

static int set_enob(struct nfqb_queue *q, uint32_t v)
{
	return nfqb_queue_set_enobufs(q, v);
}

static int set_rcv(struct nfqb_queue *q, uint32_t v)
{
	return nfqb_queue_set_rcvbuf(q, v);
}

static PyObject *queue_set_maxlen(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "maxlen", nfqb_queue_set_maxlen);
}

static PyObject *queue_set_batch_limit(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "batch_limit", set_bl);
}

static PyObject *queue_set_latency(struct pyq *self, PyObject *a)
{
	PyObject *r = set_u32(self, a, "latency_us", nfqb_queue_set_latency);

	if (r)
		nfqbpy_u32(a, "latency_us", &self->latency_us);
	return r;
}

static PyObject *queue_set_linger(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "linger_us", nfqb_queue_set_linger);
}

static PyObject *queue_set_verdict_timeout(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "verdict_timeout_ms",
		       nfqb_queue_set_verdict_timeout);
}

static PyObject *queue_set_buffers(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "buffers", set_bufs);
}

static PyObject *queue_set_enobufs(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "enobufs", set_enob);
}

static PyObject *queue_set_rcvbuf(struct pyq *self, PyObject *a)
{
	return set_u32(self, a, "rcvbuf", set_rcv);
}

static PyObject *queue_set_large(struct pyq *self, PyObject *a)
{
	uint32_t v;

	if (nfqbpy_u32(a, "large", &v) < 0)
		return NULL;
	ROLE_CALL(nfqb_queue_set_large(self->q, (enum nfqb_large)v),
		  LARGE_WHAT);
	Py_RETURN_NONE;
}

static PyObject *queue_set_default_verdict(struct pyq *self, PyObject *a)
{
	uint32_t v;

	if (nfqbpy_verdict_arg(a, &v) < 0)
		return NULL;
	ROLE_CALL(nfqb_queue_set_default_verdict(self->q, v),
		  "default_verdict (ACCEPT or DROP)");
	self->default_verdict = v;
	Py_RETURN_NONE;
}

static PyObject *queue_set_coalesce(struct pyq *self, PyObject *a)
{
	int on = PyObject_IsTrue(a);

	if (on < 0)
		return NULL;
	ROLE_CALL(nfqb_queue_set_coalesce(self->q, on), "coalesce");
	Py_RETURN_NONE;
}

static PyObject *queue_set_nonblock(struct pyq *self, PyObject *a)
{
	int on = PyObject_IsTrue(a);

	if (on < 0)
		return NULL;
	ROLE_CALL(nfqb_queue_set_nonblock(self->q, on), "nonblock");
	Py_RETURN_NONE;
}

int q_set_copy(struct pyq *self, int mode, uint32_t range)
{
	int rc, err;

	if (mode != NFQB_COPY_META && mode != NFQB_COPY_PACKET) {
		PyErr_SetString(PyExc_ValueError,
				"copy mode must be COPY_META or COPY_PACKET (in COPY_NONE the kernel drops every packet)");
		return -1;
	}
	if (q_enter(self) < 0)
		return -1;
	if (q_may_let_go(self)) {
		Py_BEGIN_ALLOW_THREADS
		rc = nfqb_queue_set_copy_mode(self->q, mode, range);
		err = errno;
		Py_END_ALLOW_THREADS
	} else {
		rc = nfqb_queue_set_copy_mode(self->q, mode, range);
		err = errno;
	}
	q_leave(self);
	if (rc < 0)
		return set_err(err, "copy mode");
	return 0;
}

static PyObject *queue_set_copy_mode(struct pyq *self, PyObject *args)
{
	int mode;
	uint32_t range = 0;

	if (!PyArg_ParseTuple(args, "i|O&:set_copy_mode", &mode,
			      nfqbpy_conv_u32, &range))
		return NULL;
	if (q_set_copy(self, mode, range) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *queue_set_flags(struct pyq *self, PyObject *args)
{
	uint32_t flags, mask;

	if (!PyArg_ParseTuple(args, "O&O&:set_flags", nfqbpy_conv_u32, &flags,
			      nfqbpy_conv_u32, &mask))
		return NULL;
	ROLE_CALL(nfqb_queue_set_flags(self->q, flags, mask), "flags");
	Py_RETURN_NONE;
}

static PyObject *get_num(struct pyq *self, void *c)
{
	(void)c;
	return PyLong_FromLong(self->num);
}

static PyObject *get_closed(struct pyq *self, void *c)
{
	(void)c;
	return PyBool_FromLong(!q_usable(self));
}

static PyObject *get_fallback(struct pyq *self, void *c)
{
	(void)c;
	if (need_open(self) < 0)
		return NULL;
	return PyBool_FromLong(nfqb_queue_fallback(self->q));
}

static PyObject *get_dv(struct pyq *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(self->default_verdict);
}

static PyGetSetDef queue_getset[] = {
	{ "num", (getter)get_num, NULL, "The queue number.", NULL },
	{ "closed", (getter)get_closed, NULL, "True once closed or detached.", NULL },
	{ "fallback", (getter)get_fallback, NULL,
	  "True if the queue switched to one verdict message per packet for good.", NULL },
	{ "default_verdict", (getter)get_dv, NULL,
	  "The verdict of packets nobody decides (set_default_verdict()).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef queue_methods[] = {
	{ "recv", (PyCFunction)(void (*)(void))queue_recv,
	  METH_VARARGS | METH_KEYWORDS,
	  "recv(max=64, block=True) -> list[Packet]\n\n"
	  "Receive up to max packets (one system call for many). Blocking: waits, without the GIL, until packets come; "
	  "sends the decisions made so far first. Returns [] when interrupted (interrupt(), or a signal whose handler "
	  "did not raise), when non-blocking and nothing is there, or when every receive buffer is held by undecided "
	  "packets (decide some). Each packet must be decided once, from any thread, in any order. On a NetfilterQueue's "
	  "queue, packets its run() received but did not give to the callback (it raised) come first." },
	{ "flush", (PyCFunction)queue_flush, METH_NOARGS,
	  "flush() -> int\n\nSend every decision that can be sent now; returns the verdict messages sent." },
	{ "verdict_batch", (PyCFunction)(void (*)(void))queue_verdict_batch,
	  METH_VARARGS | METH_KEYWORDS,
	  "verdict_batch(max_id, verdict, mark=None) -> int\n\n"
	  "Decide every undecided packet handed out with an id up to max_id (their Packet objects then raise "
	  "LateVerdictError on a verdict). Returns how many." },
	{ "interrupt", (PyCFunction)queue_interrupt, METH_NOARGS,
	  "interrupt()\n\nMake a recv() blocked in another thread return [] at once. Any thread." },
	{ "fileno", (PyCFunction)queue_fileno, METH_NOARGS,
	  "fileno() -> int\n\nA file descriptor that becomes readable when packets arrive, another thread "
	  "decides, or interrupt() is called: poll it, then recv(block=False). Never read or close it." },
	{ "socket_fd", (PyCFunction)queue_socket_fd, METH_NOARGS,
	  "socket_fd() -> int\n\nThe netlink socket (for socket options)." },
	{ "next_timeout", (PyCFunction)queue_next_timeout, METH_NOARGS,
	  "next_timeout() -> int\n\nMilliseconds until recv()/flush() must run (latency bound, timers); -1: nothing due." },
	{ "stats", (PyCFunction)queue_stats, METH_NOARGS,
	  "stats() -> dict\n\nThe library's counters of the queue (struct nfqb_stats), plus py_defaults: "
	  "default verdicts given by the binding (Packets dropped undecided)." },
	{ "close", (PyCFunction)queue_close, METH_NOARGS,
	  "close()\n\nGive every outstanding packet its decision or the default verdict, unbind, free. "
	  "Packets of the queue then raise LateVerdictError. From another thread: interrupts a recv() and waits for it." },
	{ "detach", (PyCFunction)queue_detach, METH_NOARGS,
	  "detach() -> int\n\nHand the queue over: send every verdict (undecided packets get the default), "
	  "leave the queue bound and return its netlink socket (close-on-exec set) for Queue.adopt() in the next process." },
	{ "adopt", (PyCFunction)(void (*)(void))queue_adopt,
	  METH_VARARGS | METH_KEYWORDS | METH_CLASS,
	  "Queue.adopt(fd, num, **options) -> Queue\n\nTake over queue num, bound by netlink socket fd (from detach() "
	  "or Pool.handover() in the previous process). Options as for Queue() but copy_mode/copy_range (kept)." },
	{ "set_copy_mode", (PyCFunction)queue_set_copy_mode, METH_VARARGS,
	  "set_copy_mode(mode, range=0)\n\nCOPY_META or COPY_PACKET with range bytes (0: all)." },
	{ "set_maxlen", (PyCFunction)queue_set_maxlen, METH_O, "set_maxlen(n)\n\nThe kernel queue's length." },
	{ "set_flags", (PyCFunction)queue_set_flags, METH_VARARGS,
	  "set_flags(flags, mask)\n\nSet the F_* flags in mask to their value in flags." },
	{ "set_rcvbuf", (PyCFunction)queue_set_rcvbuf, METH_O, "set_rcvbuf(bytes)\n\nSocket receive buffer." },
	{ "set_enobufs", (PyCFunction)queue_set_enobufs, METH_O,
	  "set_enobufs(policy)\n\nENOBUFS_REPORT (counted) or ENOBUFS_IGNORE." },
	{ "set_buffers", (PyCFunction)queue_set_buffers, METH_O,
	  "set_buffers(n)\n\nHow many packets may be outstanding (1..65536); only with nothing outstanding." },
	{ "set_default_verdict", (PyCFunction)queue_set_default_verdict, METH_O,
	  "set_default_verdict(v)\n\nACCEPT (default) or DROP, for packets nobody decides." },
	{ "set_coalesce", (PyCFunction)queue_set_coalesce, METH_O,
	  "set_coalesce(on)\n\nBatch verdicts (default) or one message per packet." },
	{ "set_batch_limit", (PyCFunction)queue_set_batch_limit, METH_O,
	  "set_batch_limit(n)\n\nFlush when n decided packets wait (default 64)." },
	{ "set_latency", (PyCFunction)queue_set_latency, METH_O,
	  "set_latency(us)\n\nThe longest a decision may wait to be sent (default 1000)." },
	{ "set_linger", (PyCFunction)queue_set_linger, METH_O,
	  "set_linger(us)\n\nPause before reading again mid-stream (LINGER_AUTO: adaptive, the default)." },
	{ "set_verdict_timeout", (PyCFunction)queue_set_verdict_timeout, METH_O,
	  "set_verdict_timeout(ms)\n\nAfter ms undecided a packet gets the default verdict (0: never)." },
	{ "set_large", (PyCFunction)queue_set_large, METH_O,
	  "set_large(policy)\n\nWhat the queue does with packets longer than the copy range (the kernel cuts them: "
	  "Packet.truncated). LARGE_PASS (the default): recv() hands them out cut. LARGE_WHOLE: recv() hands out "
	  "whole packets only: a cut GSO packet turns F_GSO off on the queue (once; the kernel segments them from "
	  "then on) and, if TCP, is dropped for TCP to send again in segments; any other cut packet is dropped, "
	  "never handed out; a TCP SYN or SYN/ACK whose MSS allows segments longer than the copy range is handed "
	  "out with a lower one, and its verdict (any but drop, the default one too) carries the changed packet. "
	  "Counted in stats(): truncated, large_resent, large_dropped, mss_clamped, gso_off. From the next recv() on." },
	{ "set_nonblock", (PyCFunction)queue_set_nonblock, METH_O,
	  "set_nonblock(on)\n\nrecv() returns [] instead of waiting." },
	{ "_set_wakeup", (PyCFunction)queue_set_wakeup, METH_O,
	  "_set_wakeup(fn)\n\nfn() is called once at the next decision made by this thread outside recv() (nfqb.aio)." },
	{ "__enter__", (PyCFunction)queue_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)queue_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject NfqbPy_QueueType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nfqb.Queue",
	.tp_basicsize = sizeof(struct pyq),
	.tp_dealloc = (destructor)queue_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "Queue(num, *, copy_mode=COPY_PACKET, copy_range=0, maxlen=0, flags=None, flags_off=None, "
		  "buffers=0, rcvbuf=0, default_verdict=ACCEPT, batch_limit=None, latency_us=None, linger_us=None, "
		  "verdict_timeout_ms=None, coalesce=None, enobufs=None, nonblock=False, large=None)\n\n"
		  "Bind nfnetlink queue num (in this thread's network namespace). 0/None keep the library's "
		  "default; flags are set on top of F_GSO (flags_off=F_GSO has the kernel segment GSO packets); "
		  "large=LARGE_WHOLE hands out whole packets only (set_large()). "
		  "Receive with recv(); decide each packet once, from any thread; close() (or the with block's "
		  "end) gives every packet still undecided the default verdict and unbinds.",
	.tp_traverse = (traverseproc)queue_traverse,
	.tp_clear = (inquiry)queue_clear,
	.tp_weaklistoffset = offsetof(struct pyq, weakrefs),
	.tp_methods = queue_methods,
	.tp_getset = queue_getset,
	.tp_new = queue_new,
};

int queue_module_init(PyObject *m)
{
	PyObject *sig, *thr, *mt, *id;

	sig = PyImport_ImportModule("signal");
	set_wakeup_fd = sig ? PyObject_GetAttrString(sig, "set_wakeup_fd") : NULL;
	Py_XDECREF(sig);
	if (!set_wakeup_fd)
		return -1;
	/* the thread Python's signal handlers run in (whichever imports us) */
	thr = PyImport_ImportModule("threading");
	mt = thr ? PyObject_CallMethod(thr, "main_thread", NULL) : NULL;
	id = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
	Py_XDECREF(thr);
	Py_XDECREF(mt);
	if (!id)
		return -1;
	main_thread = PyLong_AsUnsignedLong(id);
	Py_DECREF(id);
	if (PyErr_Occurred())
		return -1;
	pkt_set_queue_ops(&queue_ops);
	if (PyType_Ready(&NfqbPy_QueueType) < 0)
		return -1;
	Py_INCREF(&NfqbPy_QueueType);
	if (PyModule_AddObject(m, "Queue", (PyObject *)&NfqbPy_QueueType) < 0) {
		Py_DECREF(&NfqbPy_QueueType);
		return -1;
	}
	return 0;
}
