// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb.Pool: the library's worker pool with a Python callback.
 *
 * The pool's threads are the library's; each takes the GIL for one packet
 * (its Python thread state is made once per thread and kept until the
 * thread ends) and gives it back before it goes back to the library, so
 * every wait (the sockets, the rings, the other threads) happens without
 * the GIL. Python code runs one callback at a time (the GIL); the
 * receiving, dispatching, coalescing and sending run in parallel.
 *
 * The callback: callback(packet, policy) returns
 * - ACCEPT, DROP or REPEAT: that verdict (with set_mark()/set_payload());
 * - None: the callback decided the packet itself (packet.accept(), ...),
 *   or keeps it to decide later from any thread (a reference that
 *   outlives the callback); a packet neither decided nor kept gets the
 *   pool's default verdict;
 * - or raises: the packet gets the default verdict, the pool stops, and
 *   wait() (run()) raises the exception.
 *
 * A started pool holds a reference to itself until it has stopped and
 * been waited for (as a running thread does): it never vanishes while its
 * threads use it. At interpreter exit every pool still running is stopped
 * (nfqb/__init__.py registers _atexit()).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>

#include "pool.h"

static pthread_key_t tstate_key;
static PyInterpreterState *interp;	/* the pools' callbacks run in it */
static struct nfqbpy_link *live_pools;	/* under the GIL */

/* A pool thread ends: its Python thread state goes with it. */
static void tstate_end(void *ts)
{
	if (!ts || nfqbpy_finalizing())
		return;
	PyEval_RestoreThread(ts);
	PyThreadState_Clear(ts);
	PyThreadState_DeleteCurrent();	/* and gives the GIL back */
}

/* The GIL, on a pool thread: its thread state is made at the first
 * packet (known to PyGILState_*() too) and kept until the thread ends. */
static void gil_take(void)
{
	PyThreadState *ts = pthread_getspecific(tstate_key);

	if (!ts) {
		ts = PyThreadState_New(interp);
		pthread_setspecific(tstate_key, ts);
	}
	PyEval_RestoreThread(ts);
}

static void gil_give(void)
{
	PyEval_SaveThread();
}

/* A policy the library let go of (after a grace period, or at destroy):
 * on a thread of ours that has released the GIL, or a pool thread. */
static void policy_free(void *policy)
{
	PyGILState_STATE g;

	if (!policy || nfqbpy_finalizing())
		return;
	g = PyGILState_Ensure();
	Py_DECREF((PyObject *)policy);
	PyGILState_Release(g);
}

static void keep_error(struct pypool *self)
{
	self->cb_errors++;
	if (!self->exc_type) {
		PyErr_Fetch(&self->exc_type, &self->exc_value, &self->exc_tb);
		if (self->pool)
			nfqb_pool_stop(self->pool);
	} else {
		PyErr_Clear();
	}
}

/* The callback returned @r, a verdict, for @p it did not decide: the
 * verdict in @v, or sent here (with a payload); pool_cb()'s return */
static int cb_verdict(struct pypool *self, struct pypkt *p, PyObject *r,
		      struct nfqb_verdict *v)
{
	uint32_t verdict;

	if (nfqbpy_verdict_arg(r, &verdict) < 0 || verdict == NFQB_QUEUE) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError,
					"return QUEUE through packet.verdict(QUEUE, queue=N)");
		keep_error(self);
		p->flags |= PK_DECIDED;
		return -1;
	}
	if (p->given_payload) {
		/* the payload is copied by the verdict call */
		PyObject *res = PyObject_CallMethod((PyObject *)p, "verdict",
						    "I", verdict);

		if (res)
			Py_DECREF(res);
		else
			keep_error(self);
		p->flags |= PK_DECIDED;
		return res ? NFQB_POOL_DEFER : -1;
	}
	if (Py_REFCNT(p) > 1)
		pkt_snapshot(p);	/* kept: before the pool sends */
	v->verdict = verdict;
	if (p->flags & PK_MARK_SET) {
		v->flags |= NFQB_V_MARK;
		v->mark = p->given_mark;
	}
	p->flags |= PK_DECIDED;
	return NFQB_POOL_VERDICT;
}

/* What the callback's result @r (NULL: it raised) makes of @p:
 * pool_cb()'s return */
static int cb_result(struct pypool *self, struct pypkt *p, PyObject *r,
		     struct nfqb_verdict *v)
{
	if (!r) {
		keep_error(self);
		if (p->flags & PK_DECIDED)
			return NFQB_POOL_DEFER;
		p->flags |= PK_DECIDED;	/* the pool defaults it */
		return -1;
	}
	if (r == Py_None) {
		if (p->flags & PK_DECIDED || Py_REFCNT(p) > 1)
			return NFQB_POOL_DEFER;	/* decided, or kept */
		p->flags |= PK_DECIDED;	/* the preset default */
		return NFQB_POOL_VERDICT;
	}
	if (p->flags & PK_DECIDED) {
		PyErr_SetString(PyExc_RuntimeError,
				"the callback decided the packet and returned a verdict too");
		keep_error(self);
		return NFQB_POOL_DEFER;
	}
	return cb_verdict(self, p, r, v);
}

static int pool_cb(struct nfqb_packet *h, void *policy, void *cb_data,
		   struct nfqb_verdict *v)
{
	struct pypool *self = cb_data;
	struct pypkt *p;
	PyObject *r, *args[2];
	int ret;

	if (nfqbpy_finalizing())
		return NFQB_POOL_VERDICT;	/* the preset default */
	gil_take();
	p = pkt_new(NULL, self, h, PK_POOL_CB);
	if (!p) {
		keep_error(self);
		gil_give();
		return -1;
	}
	args[0] = (PyObject *)p;
	args[1] = policy ? (PyObject *)policy : Py_None;
	r = PyObject_Vectorcall(self->callback, args, 2, NULL);
	p->flags &= ~PK_POOL_CB;
	ret = cb_result(self, p, r, v);
	Py_XDECREF(r);
	Py_DECREF(p);
	gil_give();
	return ret;
}

/* --- creation ------------------------------------------------------------ */

static const char *const pool_kwlist[] = {
	"callback", "queue", "count", "mode", "workers", "cpus", "flags",
	"flags_off", "copy_range", "maxlen", "buffers", "rcvbuf",
	"default_verdict", "ring_size", "drain_ms", "policy", "latency_us",
	"batch_limit", "verdict_timeout_ms", "large", NULL,
};

static void live_add(struct pypool *self)
{
	nfqbpy_link_add(&live_pools, &self->live);
}

static void live_del(struct pypool *self)
{
	nfqbpy_link_del(&live_pools, &self->live);
}

/* Pool()'s arguments (pool_kwlist) */
struct pool_args {
	PyObject *cb, *cpus, *dvo, *policy;
	uint32_t first, count, workers, flags, off, copy_range, maxlen;
	uint32_t buffers, rcvbuf, ring, drain, lat, batch, vto, dv, large;
	int mode;
};

/* Pool()'s arguments, parsed and checked: 0, or -1 with an exception */
static int pool_args_parse(PyObject *args, PyObject *kw, struct pool_args *a)
{
	*a = (struct pool_args){
		.cpus = Py_None, .policy = Py_None, .count = 1,
		.mode = NFQB_POOL_QUEUE_PER_WORKER,
	};
	if (!PyArg_ParseTupleAndKeywords(args, kw,
			"O|$O&O&iO&OO&O&O&O&O&O&OO&O&OO&O&O&O&:Pool",
			(char **)pool_kwlist, &a->cb,
			nfqbpy_conv_u32, &a->first, nfqbpy_conv_u32, &a->count,
			&a->mode, nfqbpy_conv_u32, &a->workers, &a->cpus,
			nfqbpy_conv_u32, &a->flags, nfqbpy_conv_u32, &a->off,
			nfqbpy_conv_u32, &a->copy_range,
			nfqbpy_conv_u32, &a->maxlen,
			nfqbpy_conv_u32, &a->buffers,
			nfqbpy_conv_u32, &a->rcvbuf, &a->dvo,
			nfqbpy_conv_u32, &a->ring, nfqbpy_conv_u32, &a->drain,
			&a->policy, nfqbpy_conv_u32, &a->lat,
			nfqbpy_conv_u32, &a->batch, nfqbpy_conv_u32, &a->vto,
			nfqbpy_conv_u32, &a->large))
		return -1;
	if (!PyCallable_Check(a->cb)) {
		PyErr_Format(PyExc_TypeError,
			     "callback must be callable, not %.100s",
			     Py_TYPE(a->cb)->tp_name);
		return -1;
	}
	if (a->first > 65535 || a->count < 1 || a->first + a->count > 65536) {
		PyErr_SetString(PyExc_ValueError,
				"queues queue .. queue + count - 1 must be within 0..65535, count >= 1");
		return -1;
	}
	if (a->mode != NFQB_POOL_QUEUE_PER_WORKER &&
	    a->mode != NFQB_POOL_DISPATCH) {
		PyErr_SetString(PyExc_ValueError,
				"mode must be POOL_QUEUE_PER_WORKER or POOL_DISPATCH");
		return -1;
	}
	if (a->large != NFQB_LARGE_PASS && a->large != NFQB_LARGE_WHOLE) {
		PyErr_SetString(PyExc_ValueError,
				"large must be LARGE_PASS or LARGE_WHOLE");
		return -1;
	}
	a->dv = NFQB_ACCEPT;
	if (a->dvo && (nfqbpy_verdict_arg(a->dvo, &a->dv) < 0))
		return -1;
	if (a->dv != NFQB_ACCEPT && a->dv != NFQB_DROP) {
		PyErr_SetString(PyExc_ValueError,
				"default_verdict must be ACCEPT or DROP");
		return -1;
	}
	return 0;
}

/* cpus=, a sequence of ints, as an array for the library in *cpuvp
 * (PyMem_Free() it; stays NULL for None), its length in *ncpus: 0, or
 * -1 with an exception */
static int cpus_arg(PyObject *cpus, int **cpuvp, Py_ssize_t *ncpus)
{
	PyObject *seq;
	Py_ssize_t i;
	int *cpuv;

	if (cpus == Py_None)
		return 0;
	seq = PySequence_Fast(cpus, "cpus must be a sequence of ints");
	if (!seq)
		return -1;
	*ncpus = PySequence_Fast_GET_SIZE(seq);
	cpuv = PyMem_Calloc(*ncpus ? (size_t)*ncpus : 1, sizeof(int));
	for (i = 0; cpuv && i < *ncpus; i++) {
		uint32_t c;

		if (nfqbpy_u32(PySequence_Fast_GET_ITEM(seq, i), "cpu",
			       &c) < 0 || c > 0x7fffffff) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_ValueError, "bad cpu");
			Py_DECREF(seq);
			PyMem_Free(cpuv);
			return -1;
		}
		cpuv[i] = (int)c;
	}
	Py_DECREF(seq);
	if (!cpuv) {
		PyErr_NoMemory();
		return -1;
	}
	*cpuvp = cpuv;
	return 0;
}

/* adopt()'s @fdlist, @count sockets, as an array for the library in
 * *fdsp (PyMem_Free() it; stays NULL without @fdlist): 0, or -1 with an
 * exception */
static int fds_arg(PyObject *fdlist, uint32_t count, int **fdsp)
{
	PyObject *seq;
	Py_ssize_t i;
	int *fds;

	if (!fdlist)
		return 0;
	seq = PySequence_Fast(fdlist, "fds must be a sequence");
	if (!seq)
		return -1;
	if (PySequence_Fast_GET_SIZE(seq) != (Py_ssize_t)count) {
		PyErr_Format(PyExc_ValueError,
			     "fds must hold count (%u) sockets",
			     (unsigned int)count);
		Py_DECREF(seq);
		return -1;
	}
	fds = PyMem_Calloc(count, sizeof(int));
	for (i = 0; fds && i < (Py_ssize_t)count; i++) {
		fds[i] = PyObject_AsFileDescriptor(
				PySequence_Fast_GET_ITEM(seq, i));
		if (fds[i] < 0) {
			Py_DECREF(seq);
			PyMem_Free(fds);
			return -1;
		}
	}
	Py_DECREF(seq);
	if (!fds) {
		PyErr_NoMemory();
		return -1;
	}
	*fdsp = fds;
	return 0;
}

/* The library's configuration of the pool @self from @a */
static void pool_config_fill(struct nfqb_pool_config *cfg,
			     const struct pool_args *a, struct pypool *self,
			     const int *cpuv, Py_ssize_t ncpus)
{
	cfg->queue_first = (uint16_t)a->first;
	cfg->queue_count = (uint16_t)a->count;
	cfg->mode = a->mode;
	cfg->workers = a->workers;
	cfg->cpus = cpuv;
	cfg->ncpus = (unsigned int)ncpus;
	cfg->queue_flags = a->flags;
	cfg->queue_flags_off = a->off;
	cfg->copy_range = a->copy_range;
	cfg->maxlen = a->maxlen;
	cfg->buffers = a->buffers;
	cfg->rcvbuf = a->rcvbuf;
	cfg->default_drop = a->dv == NFQB_DROP;
	cfg->ring_size = a->ring;
	cfg->drain_ms = a->drain;
	cfg->cb = pool_cb;
	cfg->cb_data = self;
	cfg->policy = a->policy == Py_None ? NULL : a->policy;
	cfg->policy_free = policy_free;
	cfg->latency_us = a->lat;
	cfg->batch_limit = a->batch;
	cfg->verdict_timeout_ms = a->vto;
	cfg->large = (enum nfqb_large)a->large;
}

static PyObject *pool_make(PyTypeObject *type, PyObject *args, PyObject *kw,
			   PyObject *fdlist)
{
	struct nfqb_pool_config cfg = { 0 };
	int *cpuv = NULL, *fds = NULL, err = 0;
	struct pool_args a;
	struct pypool *self;
	Py_ssize_t ncpus = 0;
	struct nfqb_pool *pool;

	if (pool_args_parse(args, kw, &a) < 0)
		return NULL;
	if (cpus_arg(a.cpus, &cpuv, &ncpus) < 0)
		return NULL;
	if (fds_arg(fdlist, a.count, &fds) < 0) {
		PyMem_Free(cpuv);
		return NULL;
	}
	self = (struct pypool *)type->tp_alloc(type, 0);
	if (!self) {
		PyMem_Free(cpuv);
		PyMem_Free(fds);
		return NULL;
	}
	Py_INCREF(a.cb);
	self->callback = a.cb;
	self->default_verdict = a.dv;
	self->queue_first = (uint16_t)a.first;
	self->queue_count = (uint16_t)a.count;

	pool_config_fill(&cfg, &a, self, cpuv, ncpus);
	Py_BEGIN_ALLOW_THREADS
	pool = fds ? nfqb_pool_adopt(&cfg, sizeof(cfg), fds) :
		     nfqb_pool_create(&cfg, sizeof(cfg));
	err = errno;
	Py_END_ALLOW_THREADS
	PyMem_Free(cpuv);
	PyMem_Free(fds);
	if (!pool) {
		Py_DECREF(self);
		if (err == EINVAL)
			PyErr_SetString(PyExc_ValueError,
					"invalid pool configuration (ring_size a power of two, workers <= 1024, ...)");
		else
			nfqbpy_oserror(err, fdlist ? "adopt pool" : "create pool");
		return NULL;
	}
	/* the library holds the initial policy now */
	if (cfg.policy)
		Py_INCREF(a.policy);
	self->policy = cfg.policy;
	self->pool = pool;
	live_add(self);
	return (PyObject *)self;
}

static PyObject *pool_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	return pool_make(type, args, kw, NULL);
}

static PyObject *pool_adopt(PyObject *cls, PyObject *args, PyObject *kw)
{
	PyObject *rest, *res;
	Py_ssize_t n = PyTuple_GET_SIZE(args);

	if (n < 2) {
		PyErr_SetString(PyExc_TypeError,
				"adopt(fds, callback, **options): fds and callback are required");
		return NULL;
	}
	rest = PyTuple_GetSlice(args, 1, n);
	if (!rest)
		return NULL;
	res = pool_make((PyTypeObject *)cls, rest, kw,
			PyTuple_GET_ITEM(args, 0));
	Py_DECREF(rest);
	return res;
}

/* Stop, wait and free (GIL released around the waits); quiet. */
static void pool_destroy(struct pypool *self)
{
	struct nfqb_pool *pool = self->pool;

	if (!pool)
		return;
	self->closing = true;	/* no verdict of ours from now on */
	live_del(self);
	Py_BEGIN_ALLOW_THREADS
	nfqb_pool_destroy(pool);
	Py_END_ALLOW_THREADS
	self->pool = NULL;
}

static int pool_traverse(struct pypool *self, visitproc visit, void *arg)
{
	Py_VISIT(self->callback);
	Py_VISIT(self->exc_type);
	Py_VISIT(self->exc_value);
	Py_VISIT(self->exc_tb);
	return 0;
}

static int pool_clear(struct pypool *self)
{
	/* a running pool holds itself: never cleared while running */
	pool_destroy(self);
	Py_CLEAR(self->callback);
	Py_CLEAR(self->exc_type);
	Py_CLEAR(self->exc_value);
	Py_CLEAR(self->exc_tb);
	return 0;
}

static void pool_dealloc(struct pypool *self)
{
	PyObject_GC_UnTrack(self);
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	if (!nfqbpy_finalizing())
		pool_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int need_pool(struct pypool *self)
{
	if (self->pool && !self->closing)
		return 0;
	PyErr_SetString(PyExc_ValueError, "operation on a closed pool");
	return -1;
}

/* --- running --------------------------------------------------------------- */

static PyObject *pool_start(struct pypool *self, PyObject *unused)
{
	sigset_t all, old;
	int rc, err;

	(void)unused;
	if (need_pool(self) < 0)
		return NULL;
	if (self->started) {
		PyErr_SetString(PyExc_RuntimeError, "the pool was started already (a pool runs once)");
		return NULL;
	}
	/* the pool's threads take no signal: they stay with Python's
	 * main thread (Ctrl-C) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	Py_BEGIN_ALLOW_THREADS
	rc = nfqb_pool_start(self->pool);
	err = errno;
	Py_END_ALLOW_THREADS
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	self->started = true;
	if (rc < 0) {
		self->waited = true;
		return nfqbpy_oserror(err, "start");
	}
	Py_INCREF(self);	/* held while running, see above */
	Py_RETURN_NONE;
}

static PyObject *pool_stop(struct pypool *self, PyObject *unused)
{
	(void)unused;
	if (self->pool)
		nfqb_pool_stop(self->pool);
	self->stop_asked = true;
	Py_RETURN_NONE;
}

/* The first callback exception, raised (moved out); 1 if one was set. */
static int raise_kept(struct pypool *self)
{
	if (!self->exc_type)
		return 0;
	PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
	self->exc_type = self->exc_value = self->exc_tb = NULL;
	return 1;
}

/* After the pool stopped: join it (GIL released), drop the running
 * reference. 0, or -1 with an exception. */
static int finish(struct pypool *self)
{
	int rc, err;

	Py_BEGIN_ALLOW_THREADS
	rc = nfqb_pool_wait(self->pool);
	err = errno;
	Py_END_ALLOW_THREADS
	if (!self->waited) {
		self->waited = true;
		Py_DECREF(self);	/* the running reference */
	}
	if (raise_kept(self))
		return -1;
	if (rc < 0) {
		nfqbpy_oserror(err, "pool");
		return -1;
	}
	return 0;
}

/* CLOCK_MONOTONIC in seconds */
static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait (GIL released) for the started pool to stop, up to @timeout
 * seconds (< 0: no limit): 1 stopped, 0 timed out, -1 with an exception
 * (poll() failed, or a signal handler raised) */
static int wait_stopped(struct pypool *self, double timeout)
{
	struct pollfd pfd;
	double deadline = 0, left;
	int r, err;

	pfd.fd = nfqb_pool_fd(self->pool);
	pfd.events = POLLIN;
	if (timeout >= 0)
		deadline = mono_now() + timeout;
	for (;;) {
		int ms = -1;

		if (timeout >= 0) {
			left = deadline - mono_now();
			ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
		}
		Py_BEGIN_ALLOW_THREADS
		r = poll(&pfd, 1, ms);
		err = errno;
		Py_END_ALLOW_THREADS
		if (r > 0)
			return 1;
		if (r < 0 && err != EINTR) {
			nfqbpy_oserror(err, "poll");
			return -1;
		}
		if (PyErr_CheckSignals() < 0)
			return -1;
		if (r == 0 && ms >= 0)
			return 0;
	}
}

static PyObject *pool_wait(struct pypool *self, PyObject *args,
			   PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *to = Py_None;
	double timeout = -1;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait", kwlist, &to))
		return NULL;
	if (to != Py_None) {
		timeout = PyFloat_AsDouble(to);
		if (timeout == -1 && PyErr_Occurred())
			return NULL;
		if (timeout < 0)
			timeout = 0;
	}
	if (need_pool(self) < 0)
		return NULL;
	if (!self->started) {
		PyErr_SetString(PyExc_RuntimeError, "the pool was never started");
		return NULL;
	}
	Py_INCREF(self);
	if (!self->waited) {
		r = wait_stopped(self, timeout);
		if (r <= 0) {
			Py_DECREF(self);
			if (r < 0)
				return NULL;
			Py_RETURN_FALSE;
		}
		if (finish(self) < 0) {
			Py_DECREF(self);
			return NULL;
		}
	}
	if (raise_kept(self)) {
		Py_DECREF(self);
		return NULL;
	}
	Py_DECREF(self);
	Py_RETURN_TRUE;
}

static PyObject *pool_run(struct pypool *self, PyObject *unused)
{
	PyObject *r, *noargs;

	(void)unused;
	if (!self->started) {
		r = pool_start(self, NULL);
		if (!r)
			return NULL;
		Py_DECREF(r);
	}
	noargs = PyTuple_New(0);
	if (!noargs)
		return NULL;
	r = pool_wait(self, noargs, NULL);
	Py_DECREF(noargs);
	if (r)
		return r;
	/* Ctrl-C or another exception in this thread: stop, then wait
	 * for the end, and raise what came */
	if (self->pool && !self->waited) {
		PyObject *t, *v, *tb;

		PyErr_Fetch(&t, &v, &tb);
		nfqb_pool_stop(self->pool);
		Py_INCREF(self);
		if (finish(self) < 0)
			PyErr_Clear();
		Py_DECREF(self);
		PyErr_Restore(t, v, tb);
	}
	return NULL;
}

static PyObject *pool_close(struct pypool *self, PyObject *unused)
{
	int err = 0;

	(void)unused;
	if (!self->pool)
		Py_RETURN_NONE;
	Py_INCREF(self);
	if (self->started && !self->waited) {
		nfqb_pool_stop(self->pool);
		err = finish(self);
	}
	pool_destroy(self);
	Py_DECREF(self);
	if (err < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *pool_handover(struct pypool *self, PyObject *unused)
{
	PyObject *list;
	int *fds, rc, err;
	unsigned int i, n;

	(void)unused;
	if (need_pool(self) < 0)
		return NULL;
	if (!self->started || self->waited) {
		PyErr_SetString(PyExc_RuntimeError,
				"handover() needs a running pool");
		return NULL;
	}
	n = self->queue_count;
	fds = PyMem_Calloc(n, sizeof(int));
	if (!fds)
		return PyErr_NoMemory();
	Py_BEGIN_ALLOW_THREADS
	rc = nfqb_pool_handover(self->pool, fds, n);
	err = errno;
	Py_END_ALLOW_THREADS
	if (!self->waited) {
		self->waited = true;
		self->stop_asked = true;
		Py_DECREF(self);	/* never the last one: the caller's */
	}
	if (rc < 0 && err != EALREADY) {
		PyMem_Free(fds);
		if (raise_kept(self))
			return NULL;
		return nfqbpy_oserror(err, "handover");
	}
	list = PyList_New(n);
	for (i = 0; list && i < n; i++) {
		PyObject *v = PyLong_FromLong(fds[i]);

		if (!v) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, i, v);
	}
	PyMem_Free(fds);
	return list;
}

/*
 * The library keeps one reference to the policy it holds and lets go of
 * the old one only when it differs (nfqb_pool_set_policy()): publishing
 * the same object again must not take another. What the library holds is
 * known here (self->policy, borrowed) because set_policy() calls are
 * serialized by this lock (taken without the GIL).
 */
static pthread_mutex_t policy_lock = PTHREAD_MUTEX_INITIALIZER;

static PyObject *pool_set_policy(struct pypool *self, PyObject *policy)
{
	PyObject *held;
	int rc, err;

	if (need_pool(self) < 0)
		return NULL;
	if (nfqb_pool_worker_index() >= 0) {
		PyErr_SetString(PyExc_RuntimeError,
				"set_policy() from a pool callback would wait for itself");
		return NULL;
	}
	Py_INCREF(policy);		/* the library's now */
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&policy_lock);
	held = self->policy;
	rc = nfqb_pool_set_policy(self->pool, policy);
	err = errno;
	if (rc == 0)
		self->policy = policy;
	pthread_mutex_unlock(&policy_lock);
	Py_END_ALLOW_THREADS
	if (rc < 0 || held == policy) {
		/* refused, or the library holds it already */
		Py_DECREF(policy);
		if (rc < 0)
			return nfqbpy_oserror(err, "set_policy");
	}
	Py_RETURN_NONE;
}

static PyObject *pool_stats_dict(const struct nfqb_pool_stats *st)
{
	return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsKsKsKsKsK}",
			     "received", st->received, "packets", st->packets,
			     "accepted", st->accepted, "dropped", st->dropped,
			     "other", st->other, "marked", st->marked,
			     "deferred", st->deferred, "errors", st->errors,
			     "batches", st->batches,
			     "queue_depth", st->queue_depth,
			     "ring_depth", st->ring_depth,
			     "dispatch_full", st->dispatch_full,
			     "defaults", st->defaults,
			     "policy_swaps", st->policy_swaps);
}

static PyObject *pool_stats(struct pypool *self, PyObject *args)
{
	struct nfqb_pool_stats st;
	int thread = -1;

	if (!PyArg_ParseTuple(args, "|i:stats", &thread))
		return NULL;
	if (need_pool(self) < 0)
		return NULL;
	if (nfqb_pool_stats(self->pool, thread, &st, sizeof(st)) < 0) {
		PyErr_SetString(PyExc_ValueError, "no such thread");
		return NULL;
	}
	return pool_stats_dict(&st);
}

static PyObject *pool_queue_stats(struct pypool *self, PyObject *arg)
{
	struct nfqb_stats st;
	uint32_t i;

	if (nfqbpy_u32(arg, "index", &i) < 0)
		return NULL;
	if (need_pool(self) < 0)
		return NULL;
	if (nfqb_pool_queue_stats(self->pool, i, &st, sizeof(st)) < 0) {
		PyErr_SetString(PyExc_ValueError, "no such queue index");
		return NULL;
	}
	return nfqbpy_stats_dict(&st);
}

static PyObject *pool_fileno(struct pypool *self, PyObject *unused)
{
	(void)unused;
	if (need_pool(self) < 0)
		return NULL;
	return PyLong_FromLong(nfqb_pool_fd(self->pool));
}

static PyObject *pool_worker_index(PyObject *cls, PyObject *unused)
{
	(void)cls;
	(void)unused;
	return PyLong_FromLong(nfqb_pool_worker_index());
}

static PyObject *get_threads(struct pypool *self, void *c)
{
	(void)c;
	if (need_pool(self) < 0)
		return NULL;
	return PyLong_FromUnsignedLong(nfqb_pool_threads(self->pool));
}

static PyObject *get_stopping(struct pypool *self, void *c)
{
	(void)c;
	if (!self->pool)
		Py_RETURN_TRUE;
	return PyBool_FromLong(nfqb_pool_stopping(self->pool));
}

static PyObject *get_error(struct pypool *self, void *c)
{
	(void)c;
	if (!self->pool)
		return PyLong_FromLong(0);
	return PyLong_FromLong(nfqb_pool_error(self->pool));
}

static PyObject *get_cb_errors(struct pypool *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->cb_errors);
}

static PyObject *pool_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	Py_INCREF(self);
	return self;
}

static PyObject *pool_exit(struct pypool *self, PyObject *args)
{
	PyObject *r;

	(void)args;
	r = pool_close(self, NULL);
	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

/* At interpreter exit: stop and free every pool still there (module.c's
 * _atexit()). */
void pool_close_all(void)
{
	while (live_pools) {
		struct pypool *p = nfqbpy_of(live_pools, struct pypool, live);
		PyObject *r;

		Py_INCREF(p);
		r = pool_close(p, NULL);
		if (!r)
			PyErr_WriteUnraisable((PyObject *)p);
		Py_XDECREF(r);
		live_del(p);	/* in case close failed early */
		Py_DECREF(p);
	}
}

static PyGetSetDef pool_getset[] = {
	{ "threads", (getter)get_threads, NULL, "Number of pool threads.", NULL },
	{ "stopping", (getter)get_stopping, NULL, "True once the pool was asked to stop (or stopped by itself).", NULL },
	{ "error", (getter)get_error, NULL, "errno of the fatal error that stopped the pool, 0 if none.", NULL },
	{ "callback_errors", (getter)get_cb_errors, NULL, "Exceptions raised by the callback.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef pool_methods[] = {
	{ "start", (PyCFunction)pool_start, METH_NOARGS,
	  "start()\n\nStart the pool's threads (once)." },
	{ "stop", (PyCFunction)pool_stop, METH_NOARGS,
	  "stop()\n\nAsk the pool to stop; returns at once (any thread)." },
	{ "wait", (PyCFunction)(void (*)(void))pool_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait(timeout=None) -> bool\n\nWait (without the GIL) until the pool has stopped and unbound its "
	  "queues; False on timeout. Raises the callback's exception if one stopped the pool. Signals are "
	  "handled while waiting (Ctrl-C raises KeyboardInterrupt; the pool keeps running)." },
	{ "run", (PyCFunction)pool_run, METH_NOARGS,
	  "run()\n\nstart() if needed, then wait(); on an exception in this thread (Ctrl-C) the pool is "
	  "stopped and waited for before it is raised." },
	{ "close", (PyCFunction)pool_close, METH_NOARGS,
	  "close()\n\nStop, wait, unbind, free. Packets kept past their callback then raise LateVerdictError." },
	{ "handover", (PyCFunction)pool_handover, METH_NOARGS,
	  "handover() -> list[int]\n\nStop, send every verdict, and return the queues' netlink sockets still "
	  "bound (-1 for one that could not be handed over) for Pool.adopt() in the next process." },
	{ "adopt", (PyCFunction)(void (*)(void))pool_adopt,
	  METH_VARARGS | METH_KEYWORDS | METH_CLASS,
	  "Pool.adopt(fds, callback, **options) -> Pool\n\nA pool on queues already bound (from handover())." },
	{ "set_policy", (PyCFunction)pool_set_policy, METH_O,
	  "set_policy(policy)\n\nPublish a new policy object: callbacks get it from their next packet. "
	  "Returns once no callback uses the old one (never from a callback)." },
	{ "stats", (PyCFunction)pool_stats, METH_VARARGS,
	  "stats(thread=-1) -> dict\n\nCounters of a pool thread, or of the whole pool." },
	{ "queue_stats", (PyCFunction)pool_queue_stats, METH_O,
	  "queue_stats(index) -> dict\n\nThe library counters of queue queue + index." },
	{ "fileno", (PyCFunction)pool_fileno, METH_NOARGS,
	  "fileno() -> int\n\nReadable once the pool stops (for event loops). Never read or close it." },
	{ "worker_index", (PyCFunction)pool_worker_index, METH_NOARGS | METH_STATIC,
	  "Pool.worker_index() -> int\n\nIn a callback, the worker's index; -1 on other threads." },
	{ "__enter__", (PyCFunction)pool_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)pool_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject NfqbPy_PoolType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nfqb.Pool",
	.tp_basicsize = sizeof(struct pypool),
	.tp_dealloc = (destructor)pool_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "Pool(callback, *, queue=0, count=1, mode=POOL_QUEUE_PER_WORKER, workers=0, cpus=None, "
		  "flags=0, flags_off=0, copy_range=0, maxlen=0, buffers=0, rcvbuf=0, default_verdict=ACCEPT, "
		  "ring_size=0, drain_ms=0, policy=None, latency_us=0, batch_limit=0, verdict_timeout_ms=0, "
		  "large=LARGE_PASS)\n\n"
		  "The library's worker pool on queues queue .. queue + count - 1. callback(packet, policy) "
		  "returns ACCEPT, DROP or REPEAT, or None when it decided (or keeps) the packet itself. "
		  "Runs on the pool's threads, one callback at a time (the GIL); every wait is without the GIL. "
		  "large=LARGE_WHOLE: every queue hands out whole packets only (Queue.set_large()); the counters "
		  "are in queue_stats().",
	.tp_traverse = (traverseproc)pool_traverse,
	.tp_clear = (inquiry)pool_clear,
	.tp_weaklistoffset = offsetof(struct pypool, weakrefs),
	.tp_methods = pool_methods,
	.tp_getset = pool_getset,
	.tp_new = pool_new,
};

static bool pool_usable(const struct pypool *self)
{
	return self->pool && !self->closing;
}

static uint32_t pool_default_verdict(const struct pypool *self)
{
	return self->default_verdict;
}

/* what a packet (packet.c, the layer below) asks of its pool */
static const struct pkt_pool_ops pool_ops = {
	.usable = pool_usable,
	.default_verdict = pool_default_verdict,
};

int pool_module_init(PyObject *m)
{
	pkt_set_pool_ops(&pool_ops);
	interp = PyInterpreterState_Get();
	if (pthread_key_create(&tstate_key, tstate_end)) {
		PyErr_SetString(PyExc_OSError, "pthread_key_create");
		return -1;
	}
	if (PyType_Ready(&NfqbPy_PoolType) < 0)
		return -1;
	Py_INCREF(&NfqbPy_PoolType);
	if (PyModule_AddObject(m, "Pool", (PyObject *)&NfqbPy_PoolType) < 0) {
		Py_DECREF(&NfqbPy_PoolType);
		return -1;
	}
	return 0;
}
