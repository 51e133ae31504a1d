// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb.netfilterqueue.NetfilterQueue: python-netfilterqueue 1.1's API on
 * libnfq-batch (written from its documentation; none of its code).
 *
 * What run() does: one nfqb_recv() for up to 64 packets, the GIL released
 * while it waits; the callback for each packet; the decisions leave,
 * coalesced, with the next nfqb_recv(). Where the original's semantics are
 * weak, these are ours (documented in nfqb-python(3)):
 * - a packet the callback neither decides nor keeps (a reference that
 *   outlives the callback) gets the default verdict (accept) when the
 *   callback returns; a kept one when its last reference goes, undecided;
 * - an exception from the callback leaves run() at once; the packets of
 *   the batch not yet given to the callback wait in the library for the
 *   next run() (or get the default verdict at unbind());
 * - a signal ends a blocked run() at once (its handler's exception,
 *   KeyboardInterrupt for Ctrl-C, comes out of run());
 * - a verdict from another thread is safe at any time, and is sent at
 *   once: a run() blocked in another thread is woken by it, and without a
 *   run() the deciding call sends it itself;
 * - unbind() gives every packet still undecided the default verdict
 *   before it unbinds, from any thread (a run() in another thread is
 *   interrupted and returns), or from the callback (run() returns after
 *   it);
 * - importing nfqb.netfilterqueue has the kernel stamp packets
 *   (get_timestamp()) from then on: stamp_packets();
 * - get_fd() is the netlink socket, as in the original; GSO packets are
 *   segmented by the kernel before queueing, as in the original; copy
 *   range up to 65531 bytes (the original capped it at 4016).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

#include <frameobject.h>

#define COMPAT_SOCK_LEN		2455552u	/* the original's default */

struct pycompat {
	PyObject_HEAD
	struct pyq *queue;		/* the bound queue, or NULL */
	int sockfd;			/* a duplicate of sockfd, or -1 */
	uint32_t default_verdict;
	PyObject *weakrefs;
};

/* CAP_NET_ADMIN in this thread's effective set (true if unknown: then
 * the bind tells) */
static bool has_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return true;
	return data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &
	       CAP_TO_MASK(CAP_NET_ADMIN);
}

/* ACCEPT or DROP from a verdict object; 0, or -1 with ValueError */
static int compat_dv_arg(PyObject *o, uint32_t *dv)
{
	if (nfqbpy_verdict_arg(o, dv) < 0)
		return -1;
	if (*dv != NFQB_ACCEPT && *dv != NFQB_DROP) {
		PyErr_SetString(PyExc_ValueError,
				"default_verdict must be ACCEPT or DROP");
		return -1;
	}
	return 0;
}

/* NFQB_DEFAULT_VERDICT=accept|drop: the default verdict of programs that
 * cannot say it (unchanged python-netfilterqueue programs on the shim);
 * 0, or -1 with ValueError */
static int compat_dv_env(uint32_t *dv)
{
	const char *e = getenv("NFQB_DEFAULT_VERDICT");

	if (!e || !*e)
		return 0;
	if (!strcasecmp(e, "accept")) {
		*dv = NFQB_ACCEPT;
	} else if (!strcasecmp(e, "drop")) {
		*dv = NFQB_DROP;
	} else {
		PyErr_Format(PyExc_ValueError,
			     "NFQB_DEFAULT_VERDICT must be accept or drop, not %.40s",
			     e);
		return -1;
	}
	return 0;
}

static PyObject *compat_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "af", "sockfd", "default_verdict", NULL };
	int af = AF_INET, sockfd = -1;
	PyObject *dvo = NULL;
	struct pycompat *self;
	uint32_t dv = NFQB_ACCEPT;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$iiO:NetfilterQueue",
					 kwlist, &af, &sockfd, &dvo))
		return NULL;
	/* (kernels since 3.8 ignore the family bind: af only names it) */
	if (dvo && dvo != Py_None) {
		if (compat_dv_arg(dvo, &dv) < 0)
			return NULL;
	} else if (compat_dv_env(&dv) < 0) {
		return NULL;
	}
	self = (struct pycompat *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	self->sockfd = -1;
	self->default_verdict = dv;
	if (sockfd >= 0) {
		/* the socket itself, as the original uses it (a duplicate:
		 * the caller keeps theirs); each bind() binds on a
		 * duplicate of this one. The original's texts: "dup2
		 * failed" for a bad fd, "Failed to open NFQueue." for one
		 * that is no netfilter netlink socket */
		int dom = 0, proto = 0;
		socklen_t len = sizeof(dom);

		self->sockfd = fcntl(sockfd, F_DUPFD_CLOEXEC, 0);
		if (self->sockfd < 0) {
			nfqbpy_oserror_text(errno, "dup2 failed");
			Py_DECREF(self);
			return NULL;
		}
		if (getsockopt(sockfd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0 ||
		    (len = sizeof(proto),
		     getsockopt(sockfd, SOL_SOCKET, SO_PROTOCOL, &proto,
				&len) < 0) ||
		    dom != AF_NETLINK || proto != NETLINK_NETFILTER) {
			nfqbpy_oserror_text(errno == ENOTSOCK ? ENOTSOCK :
					    EPROTOTYPE,
					    "Failed to open NFQueue.");
			Py_DECREF(self);
			return NULL;
		}
	}
	/* as the original, which asks the kernel for its family bind here:
	 * without CAP_NET_ADMIN no queue can be bound */
	if (!has_net_admin()) {
		char what[64];

		snprintf(what, sizeof(what),
			 "Failed to bind family %d. Are you root?", af);
		nfqbpy_oserror_text(EPERM, what);
		Py_DECREF(self);
		return NULL;
	}
	return (PyObject *)self;
}

/*
 * Close @q (the default verdict for whatever is undecided, unbind). A
 * run_socket() waiting in another thread sleeps in the recv() of its own
 * socket object, a duplicate of ours, which the close does not wake: a
 * message to ourselves, sent through a duplicate kept across the close,
 * does (it stays in the socket, so a wait that starts later returns too).
 */
static int close_queue(struct pyq *q, bool quiet)
{
	struct sockaddr_nl me;
	socklen_t len = sizeof(me);
	struct nlmsghdr wake = {
		.nlmsg_len = sizeof(wake),
		.nlmsg_type = NLMSG_NOOP,
	};
	int rc, dupfd = -1;

	if (q->q && q_usable(q))
		dupfd = fcntl(nfqb_queue_socket_fd(q->q), F_DUPFD_CLOEXEC, 0);
	rc = q_close(q, quiet);
	if (dupfd >= 0) {
		if (!q->q && getsockname(dupfd, (struct sockaddr *)&me, &len) == 0)
			sendto(dupfd, &wake, sizeof(wake), MSG_DONTWAIT,
			       (struct sockaddr *)&me, sizeof(me));
		close(dupfd);
	}
	return rc;
}

static void compat_unbind_quiet(struct pycompat *self)
{
	struct pyq *q = self->queue;

	if (!q)
		return;
	self->queue = NULL;
	Py_CLEAR(q->callback);
	close_queue(q, true);
	Py_DECREF(q);
}

static void compat_dealloc(struct pycompat *self)
{
	PyObject_GC_UnTrack(self);
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	compat_unbind_quiet(self);
	if (self->sockfd >= 0)
		close(self->sockfd);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int compat_traverse(struct pycompat *self, visitproc visit, void *arg)
{
	Py_VISIT(self->queue);
	return 0;
}

static int compat_clear(struct pycompat *self)
{
	compat_unbind_quiet(self);
	return 0;
}

/* the kernel's socket buffer is twice what was asked; warn as the
 * original does when it is not (0, or -1 when the warning raised) */
static int check_rcvbuf(struct pyq *q, uint32_t asked)
{
	int val = 0;
	socklen_t len = sizeof(val);
	int fd = nfqb_queue_socket_fd(q->q);

	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, &len) < 0)
		return 0;
	if ((uint64_t)val == 2ull * asked)
		return 0;
	return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
				"Socket rcvbuf limit is now %d, requested %u.",
				val, (unsigned int)asked);
}

/* bind()'s arguments, checked before anything is opened: 0, or -1 with
 * an exception */
static int bind_args_check(struct pycompat *self, uint32_t num,
			   PyObject *cb, int mode)
{
	if (self->queue) {
		PyErr_SetString(PyExc_RuntimeError,
				"A queue is already bound; use unbind() first");
		return -1;
	}
	if (num > 65535) {
		PyErr_SetString(PyExc_ValueError, "queue_num must be 0..65535");
		return -1;
	}
	if (!PyCallable_Check(cb)) {
		PyErr_Format(PyExc_TypeError,
			     "user_callback must be callable, not %.100s",
			     Py_TYPE(cb)->tp_name);
		return -1;
	}
	if (mode != NFQB_COPY_META && mode != NFQB_COPY_PACKET) {
		PyErr_SetString(PyExc_ValueError,
				"mode must be COPY_META or COPY_PACKET (in COPY_NONE the kernel drops every packet, unseen)");
		return -1;
	}
	return 0;
}

/* The freshly bound queue set up as bind() asked (owner role taken here,
 * given back; the kernel's round trips without the GIL): 0, or -1 with
 * an exception */
static int bind_configure(struct pyq *q, uint32_t max_len, int mode,
			  uint32_t range, uint32_t sock_len)
{
	const char *what;
	uint32_t buffers;
	int rc, err;

	/* up to max_len packets may wait in the kernel, and the
	 * application may keep as many */
	buffers = max_len < NFQB_DEFAULT_BUFFERS ? NFQB_DEFAULT_BUFFERS :
		  max_len > 16384 ? 16384 : max_len;
	nfqb_queue_set_default_verdict(q->q, q->default_verdict);
	q->busy = true;
	q->owner = (unsigned long)pthread_self();
	/* the socket's buffer and ours first: packets flow into the queue
	 * from its bind on, and come in while the requests below wait for
	 * the kernel's answers */
	what = "sock_len";
	rc = nfqb_queue_set_rcvbuf(q->q, sock_len);
	if (!rc) {
		what = "buffers";
		rc = q_set_buffers(q, buffers);
	}
	err = errno;
	if (!rc) {
		Py_BEGIN_ALLOW_THREADS
		what = "segmenting GSO packets (flags)";
		rc = nfqb_queue_set_flags(q->q, 0, NFQB_F_GSO);
		if (!rc) {
			what = "copy mode";
			rc = nfqb_queue_set_copy_mode(q->q, mode, range);
		}
		if (!rc) {
			what = "max_len";
			rc = nfqb_queue_set_maxlen(q->q, max_len);
		}
		err = errno;
		Py_END_ALLOW_THREADS
	}
	q->busy = false;
	if (rc < 0) {
		nfqbpy_oserror(err, what);
		return -1;
	}
	return 0;
}

static PyObject *compat_bind(struct pycompat *self, PyObject *args,
			     PyObject *kw)
{
	static char *kwlist[] = { "queue_num", "user_callback", "max_len",
				  "mode", "range", "sock_len", NULL };
	uint32_t num, max_len = 1024, range = 65535, sock_len = COMPAT_SOCK_LEN;
	int mode = NFQB_COPY_PACKET;
	PyObject *cb;
	struct pyq *q;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|O&iO&O&:bind", kwlist,
					 nfqbpy_conv_u32, &num, &cb,
					 nfqbpy_conv_u32, &max_len, &mode,
					 nfqbpy_conv_u32, &range,
					 nfqbpy_conv_u32, &sock_len))
		return NULL;
	if (bind_args_check(self, num, cb, mode) < 0)
		return NULL;
	q = q_new(&NfqbPy_QueueType);
	if (!q)
		return NULL;
	q->compat = true;
	q->default_verdict = self->default_verdict;
	if (q_open(q, (uint16_t)num, self->sockfd) < 0) {
		Py_DECREF(q);
		return NULL;
	}
	if (bind_configure(q, max_len, mode, range, sock_len) < 0)
		goto fail;
	if (check_rcvbuf(q, sock_len) < 0)
		goto fail;
	/* (packet timestamps: stamp_packets(), at import) */
	Py_INCREF(cb);
	q->callback = cb;
	self->queue = q;
	Py_RETURN_NONE;
fail:
	q_close(q, true);
	Py_DECREF(q);
	return NULL;
}

static PyObject *compat_unbind(struct pycompat *self, PyObject *unused)
{
	struct pyq *q = self->queue;
	int rc;

	(void)unused;
	if (!q)
		Py_RETURN_NONE;
	self->queue = NULL;
	/* the callback stays until run() is out (unbind() from it) */
	rc = close_queue(q, false);
	if (q->q == NULL)
		Py_CLEAR(q->callback);
	Py_DECREF(q);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

static struct pyq *bound(struct pycompat *self)
{
	if (!self->queue || !q_usable(self->queue)) {
		PyErr_SetString(PyExc_RuntimeError,
				"no queue bound: call bind() first");
		return NULL;
	}
	return self->queue;
}

static PyObject *compat_get_fd(struct pycompat *self, PyObject *unused)
{
	struct pyq *q = bound(self);

	(void)unused;
	if (!q)
		return NULL;
	return PyLong_FromLong(nfqb_queue_socket_fd(q->q));
}

static PyObject *compat_get_queue(struct pycompat *self, void *c)
{
	(void)c;
	if (!self->queue)
		Py_RETURN_NONE;
	Py_INCREF(self->queue);
	return (PyObject *)self->queue;
}

/* One packet to the callback. 0, or -1 with the callback's exception. */
static int deliver(struct pyq *q, struct nfqb_packet *h)
{
	struct pypkt *p;
	PyObject *r, *arg[1];

	p = pkt_new(q, NULL, h, PK_COMPAT | PK_IN_CB);
	if (!p) {
		if (!nfqb_verdict(h, q->default_verdict))
			q->py_defaults++;
		return -1;
	}
	arg[0] = (PyObject *)p;
	r = PyObject_Vectorcall(q->callback, arg, 1, NULL);
	p->flags &= ~PK_IN_CB;
	if (Py_REFCNT(p) > 1) {
		/* kept: what stays readable, now, while nothing is sent */
		if (!(p->flags & PK_SNAP))
			pkt_snapshot_held(p);
	} else if (!(p->flags & PK_DECIDED)) {
		pkt_default(p);
	}
	Py_DECREF(p);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/* Another thread's run() waits: its turn, the role let go and taken back
 * (*@held says which). 0 to go on, 1 when run() is to return (closed),
 * -1 with an exception. */
static int give_turn(struct pyq *q, bool *held)
{
	int n;

	q_leave(q);
	*held = false;
	n = q_wait_turn(q, true);
	if (n)
		return n > 0 ? 1 : -1;
	if (q_enter(q) < 0)
		return -1;
	*held = true;
	return 0;
}

/*
 * The receive loop (owner role held): until EAGAIN (non-blocking), an
 * exception, or a close. 0, or -1 with an exception. *@held: whether the
 * role is still held on return (a turn given to another thread's run()
 * may end in a close or a signal's exception while waiting).
 */
static int run_loop(struct pyq *q, bool block, bool *held)
{
	bool sw;
	int n, err;

	for (;;) {
		while (q->vec_pos < q->vec_n) {
			if (q->close_asked || q->closing)
				return 0;
			if (deliver(q, q->vec[q->vec_pos++]) < 0)
				return -1;
		}
		if (q->close_asked || q->closing)
			return 0;
		if (block && q->run_waiters) {
			n = give_turn(q, held);
			if (n)
				return n > 0 ? 0 : -1;
		}
		q_buffers_pending(q);
		sw = block && q_sigwake_begin(q);
		if (sw && q_sigwake_missed(q) < 0)
			return -1;
		q->recv_thread = (unsigned long)pthread_self();
		Py_BEGIN_ALLOW_THREADS
		n = nfqb_recv(q->q, q->vec, NFQBPY_VEC);
		err = errno;
		Py_END_ALLOW_THREADS
		q_sigwake_end(q, sw, n < 0 && err == EINTR);
		if (n > 0) {
			q->vec_n = (unsigned int)n;
			q->vec_pos = 0;
			continue;
		}
		switch (err) {
		case EINTR:
			/* a signal: its handler runs (and may raise); an
			 * interrupt: a close from another thread */
			if (PyErr_CheckSignals() < 0)
				return -1;
			continue;
		case ENOBUFS:		/* counted; go on */
			continue;
		case EAGAIN:
			return 0;
		case ENOSPC:
			/* every buffer is held by kept packets: wait for
			 * their decisions (the library waited 1 s) */
			if (!block)
				return 0;
			if (PyErr_CheckSignals() < 0)
				return -1;
			continue;
		default:
			nfqbpy_oserror_text(err, "recv failed");
			return -1;
		}
	}
}

static PyObject *run_once(struct pycompat *self, bool block)
{
	struct pyq *q = bound(self);
	bool held = true;
	int rc;

	if (!q)
		return NULL;
	if (!q->callback) {
		PyErr_SetString(PyExc_RuntimeError, "no callback");
		return NULL;
	}
	Py_INCREF(q);
	/* another thread's run(): wait for a turn */
	rc = q_wait_turn(q, false);
	if (rc) {
		Py_DECREF(q);
		if (rc < 0)
			return NULL;
		Py_RETURN_NONE;		/* unbound meanwhile */
	}
	if (q_enter(q) < 0) {
		Py_DECREF(q);
		return NULL;
	}
	if (!block)
		nfqb_queue_set_nonblock(q->q, true);
	rc = run_loop(q, block, &held);
	if (held) {
		if (!block && q->q)
			nfqb_queue_set_nonblock(q->q, false);
		/* what the callbacks decided leaves now, whatever ends
		 * run(): an exception that ends the program must not take
		 * decisions with it */
		if (q->q && !q->closing)
			q_flush_all(q);
		if (q_leave_closing(q) < 0)
			rc = -1;
	}
	if (!q->q) {
		/* unbound meanwhile (from the callback) */
		Py_CLEAR(q->callback);
		if (self->queue == q) {
			self->queue = NULL;
			Py_DECREF(q);
		}
	}
	Py_DECREF(q);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/*
 * An exception leaving run(): a traceback entry names it, as the
 * original's (Cython) do: "NetfilterQueue.run" in the traceback tells
 * where a signal's exception (Ctrl-C) came out. NULL.
 */
static PyObject *add_traceback(const char *func)
{
	PyObject *t, *v, *tb, *globals;
	PyCodeObject *code;
	PyFrameObject *frame = NULL;

	PyErr_Fetch(&t, &v, &tb);
	globals = PyDict_New();
	code = PyCode_NewEmpty("nfqb/netfilterqueue", func, 0);
	if (globals && code)
		frame = PyFrame_New(PyThreadState_Get(), code, globals, NULL);
	Py_XDECREF(code);
	Py_XDECREF(globals);
	if (!frame) {
		/* keep the exception that matters */
		PyErr_Clear();
		PyErr_Restore(t, v, tb);
		return NULL;
	}
	PyErr_Restore(t, v, tb);
	PyTraceBack_Here(frame);
	Py_DECREF(frame);
	return NULL;
}

static PyObject *compat_run(struct pycompat *self, PyObject *args,
			    PyObject *kw)
{
	static char *kwlist[] = { "block", NULL };
	int block = 1;
	PyObject *r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:run", kwlist, &block))
		return NULL;
	r = run_once(self, block);
	return r ? r : add_traceback("NetfilterQueue.run");
}

static PyObject *run_socket(struct pycompat *self, PyObject *s)
{
	PyObject *r;

	for (;;) {
		if (!self->queue || !q_usable(self->queue))
			Py_RETURN_NONE;		/* unbound */
		r = run_once(self, false);
		if (!r)
			return NULL;
		Py_DECREF(r);
		if (!self->queue)
			Py_RETURN_NONE;		/* unbound */
		/* wait through the socket object (gevent can patch it),
		 * without taking the message: the library reads it */
		r = PyObject_CallMethod(s, "recv", "ii", 1, MSG_PEEK);
		if (r) {
			Py_DECREF(r);
			continue;
		}
		if (PyErr_ExceptionMatches(PyExc_BlockingIOError)) {
			PyErr_Clear();
			Py_RETURN_NONE;	/* non-blocking: call again later */
		}
		if (PyErr_ExceptionMatches(PyExc_OSError)) {
			PyObject *t, *v, *tb, *e;
			long en = 0;

			PyErr_Fetch(&t, &v, &tb);
			PyErr_NormalizeException(&t, &v, &tb);
			e = v ? PyObject_GetAttrString(v, "errno") : NULL;
			if (e && PyLong_Check(e))
				en = PyLong_AsLong(e);
			Py_XDECREF(e);
			if (en == ENOBUFS) {
				Py_XDECREF(t);
				Py_XDECREF(v);
				Py_XDECREF(tb);
				PyErr_Clear();
				continue;
			}
			PyErr_Restore(t, v, tb);
		}
		return NULL;
	}
}

static PyObject *compat_run_socket(struct pycompat *self, PyObject *s)
{
	PyObject *r = run_socket(self, s);

	return r ? r : add_traceback("NetfilterQueue.run_socket");
}

static PyMethodDef compat_methods[] = {
	{ "bind", (PyCFunction)(void (*)(void))compat_bind,
	  METH_VARARGS | METH_KEYWORDS,
	  "bind(queue_num, user_callback, max_len=1024, mode=COPY_PACKET, range=65535, sock_len=2455552)\n\n"
	  "Bind queue queue_num (0..65535); user_callback(packet) is called for each packet by run(). "
	  "max_len: the kernel queue's length; mode: COPY_META or COPY_PACKET (COPY_NONE is refused: the kernel "
	  "would drop every packet); range: bytes of each packet to copy (up to 65531); sock_len: the socket "
	  "receive buffer. Raises OSError if the queue cannot be bound (EBUSY: another socket has it), "
	  "RuntimeError if a queue is bound already." },
	{ "unbind", (PyCFunction)compat_unbind, METH_NOARGS,
	  "unbind()\n\nGive every packet still undecided the default verdict (accept), then unbind. "
	  "From any thread (a run() elsewhere returns), or from the callback (run() returns after it)." },
	{ "get_fd", (PyCFunction)compat_get_fd, METH_NOARGS,
	  "get_fd() -> int\n\nThe netlink socket: readable when packets arrive; then call run(block=False)." },
	{ "run", (PyCFunction)(void (*)(void))compat_run,
	  METH_VARARGS | METH_KEYWORDS,
	  "run(block=True)\n\nCall the callback for every packet. Blocking: until an exception (the callback's, or "
	  "a signal handler's: Ctrl-C stops it at once) or unbind(). block=False: what is there, then return." },
	{ "run_socket", (PyCFunction)compat_run_socket, METH_O,
	  "run_socket(s)\n\nAs run(), waiting through the socket object s (made from get_fd(), e.g. with "
	  "socket.fromfd(fd, socket.AF_NETLINK, socket.SOCK_RAW)) so that gevent can patch the wait. "
	  "Returns when s is non-blocking and nothing is there." },
	{ NULL, NULL, 0, NULL },
};

static PyObject *compat_get_dv(struct pycompat *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(self->default_verdict);
}

/* from now on, the bound queue's too (owner role: not while run() holds
 * it in another thread) */
static int compat_set_dv(struct pycompat *self, PyObject *o, void *c)
{
	struct pyq *q = self->queue;
	uint32_t dv;
	int rc;

	(void)c;
	if (!o) {
		PyErr_SetString(PyExc_AttributeError,
				"default_verdict cannot be deleted");
		return -1;
	}
	if (compat_dv_arg(o, &dv) < 0)
		return -1;
	if (q && q_usable(q)) {
		bool mine = q->busy &&
			    q->owner == (unsigned long)pthread_self();

		/* (from the callback, this thread holds the role) */
		if (!mine && q_enter(q) < 0)
			return -1;
		rc = nfqb_queue_set_default_verdict(q->q, dv);
		if (!mine)
			q_leave(q);
		if (rc < 0) {
			nfqbpy_oserror(errno, "default_verdict");
			return -1;
		}
		q->default_verdict = dv;
	}
	self->default_verdict = dv;
	return 0;
}

static PyGetSetDef compat_getset[] = {
	{ "default_verdict", (getter)compat_get_dv, (setter)compat_set_dv,
	  "ACCEPT (the default) or DROP: the verdict of packets nobody decides (neither decided nor kept by "
	  "the callback, dropped undecided, undecided at unbind()). Settable at any time; "
	  "NetfilterQueue(default_verdict=) and the environment's NFQB_DEFAULT_VERDICT=accept|drop set it too. "
	  "An extension of nfqb.", NULL },
	{ "queue", (getter)compat_get_queue, NULL,
	  "The bound nfqb.Queue (stats(), kstats, settings), or None. An extension of nfqb.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject NfqbPy_CompatType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nfqb.netfilterqueue.NetfilterQueue",
	.tp_basicsize = sizeof(struct pycompat),
	.tp_dealloc = (destructor)compat_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
		    Py_TPFLAGS_BASETYPE,
	.tp_doc = "NetfilterQueue(*, af=AF_INET, sockfd=-1, default_verdict=ACCEPT)\n\n"
		  "python-netfilterqueue 1.1's NetfilterQueue on libnfq-batch. sockfd: a netfilter netlink "
		  "socket (made in another network namespace, say): the queue is bound on it (a duplicate), "
		  "so in that namespace, with no setns() and no CAP_SYS_ADMIN. "
		  "default_verdict: for packets nobody decides (an extension; default: "
		  "$NFQB_DEFAULT_VERDICT, accept or drop, else ACCEPT).",
	.tp_traverse = (traverseproc)compat_traverse,
	.tp_clear = (inquiry)compat_clear,
	.tp_weaklistoffset = offsetof(struct pycompat, weakrefs),
	.tp_methods = compat_methods,
	.tp_getset = compat_getset,
	.tp_new = compat_new,
};

/*
 * Packet timestamps (get_timestamp()). The kernel stamps a packet as it
 * comes in (skb->tstamp, sent as NFQA_TIMESTAMP) only while some socket
 * on the host asks for timestamps: net_enable_timestamp() turns a
 * host-wide switch on (whatever the socket's network namespace), and
 * does it from a workqueue a little after the setsockopt(), so a packet
 * that comes within a few milliseconds may still be unstamped. Without
 * it get_timestamp() is 0.0 unless some other program (chrony, say)
 * asked. So one socket asking for them, SO_TIMESTAMP on a UDP socket
 * (close-on-exec), is opened once, early: at the import of
 * nfqb.netfilterqueue (nfqb/netfilterqueue.py calls this), normally in
 * the namespace the program started in, and kept open for the life of the
 * process; the first bind's packets are stamped. Best effort: if it
 * cannot be had, get_timestamp() is 0.0 as with the original on such a
 * host. The native API leaves stamping alone. Under the GIL.
 */
static int stamp_fd = -1;

static PyObject *stamp_packets(PyObject *m, PyObject *unused)
{
	static const int families[] = { AF_INET, AF_INET6 };
	int one = 1;
	size_t i;

	(void)m;
	(void)unused;
	for (i = 0; stamp_fd < 0 && i < 2; i++) {
		stamp_fd = socket(families[i], SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (stamp_fd >= 0 &&
		    setsockopt(stamp_fd, SOL_SOCKET, SO_TIMESTAMP, &one,
			       sizeof(one)) < 0) {
			close(stamp_fd);
			stamp_fd = -1;
		}
	}
	return PyBool_FromLong(stamp_fd >= 0);
}

static PyMethodDef compat_functions[] = {
	{ "_stamp_packets", stamp_packets, METH_NOARGS,
	  "_stamp_packets() -> bool\n\nHas the kernel stamp packets as they come in (a socket with "
	  "SO_TIMESTAMP, kept for the life of the process); True if it could. Called by "
	  "nfqb.netfilterqueue at import." },
	{ NULL, NULL, 0, NULL },
};

int compat_module_init(PyObject *m)
{
	if (PyModule_AddFunctions(m, compat_functions) < 0)
		return -1;
	if (PyType_Ready(&NfqbPy_CompatType) < 0)
		return -1;
	Py_INCREF(&NfqbPy_CompatType);
	if (PyModule_AddObject(m, "NetfilterQueue",
			       (PyObject *)&NfqbPy_CompatType) < 0) {
		Py_DECREF(&NfqbPy_CompatType);
		return -1;
	}
	return 0;
}
