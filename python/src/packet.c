// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb.Packet: one packet handed to Python, by a compat NetfilterQueue's
 * callback, by Queue.recv() or by a Pool's callback.
 *
 * Lifetime of what it shows:
 * - undecided: every attribute is read from the library's packet view;
 * - decided: id, hook, hw_protocol, mark, the interfaces, the timestamp,
 *   the hardware address and the payload length stay readable (taken
 *   before the verdict, as another thread may send it and free the buffer
 *   at once); the payload only if retain() copied it (or set_payload()
 *   gave one); the other attributes raise LateVerdictError;
 * - in a compat callback the snapshot waits for the callback's end, and
 *   is taken only if the object outlives it: this thread is the queue's
 *   owner until then, so no verdict is sent meanwhile.
 *
 * A Packet that dies undecided gives its packet the default verdict.
 * Objects are recycled through a small free list. A Packet takes part in
 * garbage collection: application -> queue -> callback -> application
 * -> kept Packet -> queue is a cycle the collector must see whole, or an
 * unreachable application keeps its queue bound for good.
 */
#include <errno.h>
#include <string.h>

#include <stdatomic.h>

#include "packet.h"

#define FREELIST_MAX	256

static PyObject *NfqbPy_LateVerdictError;

static struct pypkt *freelist[FREELIST_MAX];
static int nfree;

/* what a packet asks of its queue or pool (given by queue.c and pool.c at
 * their init, before any packet is made) */
static const struct pkt_queue_ops *queue_ops;
static const struct pkt_pool_ops *pool_ops;

void pkt_set_queue_ops(const struct pkt_queue_ops *ops)
{
	queue_ops = ops;
}

void pkt_set_pool_ops(const struct pkt_pool_ops *ops)
{
	pool_ops = ops;
}

/* the queue or pool of @p can still take a verdict */
static bool owner_ok(const struct pypkt *p)
{
	if (p->queue)
		return queue_ops->usable(p->queue);
	if (p->pool)
		return pool_ops->usable(p->pool);
	return false;
}

/* its data can be read: undecided, or decided inside its compat callback
 * (nothing sent yet), and the queue is open */
static bool readable(const struct pypkt *p)
{
	if (!owner_ok(p))
		return false;
	return !(p->flags & PK_DECIDED) || (p->flags & PK_IN_CB);
}

static void late_error(int err, const char *msg)
{
	PyObject *exc, *e;

	exc = PyObject_CallFunction(NfqbPy_LateVerdictError, "s", msg);
	if (!exc)
		return;
	e = PyLong_FromLong(err);
	if (!e || PyObject_SetAttrString(exc, "errno", e) < 0) {
		Py_XDECREF(e);
		Py_DECREF(exc);
		return;
	}
	Py_DECREF(e);
	PyErr_SetObject(NfqbPy_LateVerdictError, exc);
	Py_DECREF(exc);
}

static int gone_error(const struct pypkt *p)
{
	if (!owner_ok(p)) {
		if (p->pool)
			late_error(ESHUTDOWN, "the packet's pool was closed");
		else
			late_error(ESHUTDOWN, "Parent queue has already been unbound");
	} else {
		late_error(EALREADY,
			   "the packet was decided: its data is no longer available (read it before the verdict, or retain() it)");
	}
	return -1;
}

/* Fill the snapshot from the packet view (which must be readable). */
static void snapshot_raw(struct pypkt *p)
{
	struct nfqb_packet *h = p->h;
	const uint8_t *hw;
	uint16_t hwlen;
	uint32_t len = 0;

	p->hook = nfqb_pkt_hook(h);
	p->family = nfqb_pkt_family(h);
	p->hw_protocol = nfqb_pkt_hw_protocol(h);
	p->mark = 0;
	if (nfqb_pkt_mark(h, &p->mark))
		p->flags |= PK_HAS_MARK;
	p->indev = p->outdev = p->physindev = p->physoutdev = 0;
	nfqb_pkt_indev(h, &p->indev);
	nfqb_pkt_outdev(h, &p->outdev);
	nfqb_pkt_physindev(h, &p->physindev);
	nfqb_pkt_physoutdev(h, &p->physoutdev);
	if (nfqb_pkt_timestamp(h, &p->ts_ns))
		p->flags |= PK_HAS_TS;
	if (nfqb_pkt_hwaddr(h, &hw, &hwlen)) {
		p->hw_len = hwlen > sizeof(p->hw) ? sizeof(p->hw) : hwlen;
		memcpy(p->hw, hw, p->hw_len);
		p->flags |= PK_HAS_HW;
	}
	nfqb_pkt_payload(h, &len);
	p->payload_len = len;
	p->flags |= PK_SNAP;
}

/* compat, at the end of its callback, for a Packet kept past it: it may
 * be decided already, but nothing was sent since (this thread is the
 * owner until its next nfqb_recv()) */
void pkt_snapshot_held(struct pypkt *p)
{
	if (!(p->flags & PK_SNAP) && owner_ok(p))
		snapshot_raw(p);
}

void pkt_snapshot(struct pypkt *p)
{
	if (!(p->flags & PK_SNAP) && p->h && owner_ok(p))
		snapshot_raw(p);
}

/*
 * Where an attribute read comes from: 1 the snapshot (compat, taken),
 * 0 the live packet view, -1 (with an exception) nowhere: a native
 * packet after its verdict (only id and decided stay).
 */
static int meta_src(struct pypkt *p)
{
	if (p->flags & PK_SNAP)
		return 1;
	if (!readable(p))
		return gone_error(p);
	return 0;
}

/* for the compat getters: the snapshot, taken now if need be */
static int need_snap(struct pypkt *p)
{
	int src = meta_src(p);

	if (src == 0)
		snapshot_raw(p);
	return src < 0 ? -1 : 0;
}

struct pypkt *pkt_new(struct pyq *queue, struct pypool *pool,
		      struct nfqb_packet *h, uint32_t flags)
{
	struct pypkt *p;

	if (nfree) {
		p = freelist[--nfree];
		PyObject_Init((PyObject *)p, &NfqbPy_PacketType);
	} else {
		p = PyObject_GC_New(struct pypkt, &NfqbPy_PacketType);
		if (!p)
			return NULL;
	}
	p->h = h;
	p->queue = queue;
	p->pool = pool;
	if (queue)
		Py_INCREF(queue);
	if (pool)
		Py_INCREF(pool);
	p->id = nfqb_pkt_id(h);
	p->flags = flags;
	p->given_mark = 0;
	p->given_payload = NULL;
	p->owned_payload = NULL;
	p->hw_len = 0;
	PyObject_GC_Track(p);
	return p;
}

void pkt_freelist_clear(void)
{
	while (nfree)
		PyObject_GC_Del(freelist[--nfree]);
}

/* The options of a verdict, given with it. */
struct vopts {
	bool has_mark, has_prio, bypass, has_ct_mark;
	uint32_t mark, prio, ct_mark;
	int queue_num;			/* -1: not NFQB_QUEUE */
	PyObject *payload;		/* bytes, or NULL */
};

/* The options of the verdict @v of @p: those of @o, or else those set
 * on the packet (set_mark(), set_payload()). */
static void verdict_fill(const struct pypkt *p, const struct vopts *o,
			 struct nfqb_verdict *v)
{
	PyObject *payload;

	if (o && o->has_mark) {
		v->flags |= NFQB_V_MARK;
		v->mark = o->mark;
	} else if (p->flags & PK_MARK_SET) {
		v->flags |= NFQB_V_MARK;
		v->mark = p->given_mark;
	}
	payload = o && o->payload ? o->payload : p->given_payload;
	if (payload) {
		v->flags |= NFQB_V_PAYLOAD;
		v->payload = PyBytes_AS_STRING(payload);
		v->payload_len = (uint32_t)PyBytes_GET_SIZE(payload);
	}
	if (o && o->has_prio) {
		v->flags |= NFQB_V_PRIORITY;
		v->priority = o->prio;
	}
	if (o && o->has_ct_mark) {
		v->flags |= NFQB_V_CT_MARK;
		v->ct_mark = o->ct_mark;
	}
	if (o && o->queue_num >= 0) {
		v->verdict = NFQB_QUEUE;
		v->queue_num = (uint16_t)o->queue_num;
		if (o->bypass)
			v->flags |= NFQB_V_BYPASS;
	}
}

/* A verdict refused with @err: the exception (-1). */
static int verdict_error(struct pypkt *p, int err)
{
	switch (err) {
	case EALREADY:
	case ETIMEDOUT:
	case ESHUTDOWN:
		/* decided by the library (timeout, shutdown) or by
		 * verdict_batch(): the handle is dead */
		p->flags |= PK_DECIDED;
		late_error(err, err == ETIMEDOUT ?
			   "the verdict timeout gave this packet the default verdict" :
			   err == ESHUTDOWN ? "the packet's queue was shut down" :
			   "Verdict already given for this packet");
		return -1;
	case EINVAL:
		PyErr_SetString(PyExc_ValueError, "invalid verdict");
		return -1;
	case EMSGSIZE:
		PyErr_Format(PyExc_ValueError,
			     "payload longer than %d bytes",
			     NFQB_MAX_PAYLOAD);
		return -1;
	case ENOMEM:
		PyErr_NoMemory();
		return -1;
	default:
		nfqbpy_oserror(err, "verdict");
		return -1;
	}
}

/* The verdict of @p with its options; 0, or -1 with an exception. */
static int decide(struct pypkt *p, uint32_t verdict, const struct vopts *o)
{
	struct nfqb_verdict v = { .verdict = verdict };
	int rc;

	if (p->flags & PK_DECIDED) {
		late_error(EALREADY, "Verdict already given for this packet");
		return -1;
	}
	if (!owner_ok(p))
		return gone_error(p);
	/* compat: what stays readable, before the verdict (another thread
	 * may send it and free the buffer at once); in its callback nobody
	 * can: the snapshot waits for the callback's end */
	if ((p->flags & PK_COMPAT) && !(p->flags & (PK_SNAP | PK_IN_CB)))
		snapshot_raw(p);
	verdict_fill(p, o, &v);
	if (!v.flags && v.verdict != NFQB_QUEUE)
		rc = nfqb_verdict(p->h, v.verdict);
	else if (v.flags == NFQB_V_MARK && v.verdict != NFQB_QUEUE)
		rc = nfqb_verdict_mark(p->h, v.verdict, v.mark);
	else
		rc = nfqb_verdict_ex(p->h, &v, sizeof(v));
	if (rc < 0)
		return verdict_error(p, errno);
	p->flags |= PK_DECIDED;
	if (p->queue)
		queue_ops->decided(p->queue, false);
	return 0;
}

/*
 * The default verdict for an undecided packet nobody keeps (callback end,
 * object death). 0, or -1 if none could be given (no exception set).
 */
int pkt_default(struct pypkt *p)
{
	uint32_t v;

	if ((p->flags & PK_DECIDED) || !owner_ok(p))
		return -1;
	v = p->queue ? queue_ops->default_verdict(p->queue) :
		       pool_ops->default_verdict(p->pool);
	if ((p->flags & PK_COMPAT) && !(p->flags & (PK_SNAP | PK_IN_CB)))
		snapshot_raw(p);
	p->flags |= PK_DECIDED;
	if (nfqb_verdict(p->h, v) < 0)
		return -1;
	if (p->queue)
		queue_ops->decided(p->queue, true);
	return 0;
}

/* The default verdict for an undecided packet whose object goes (death,
 * or a garbage cycle being broken), any exception kept aside. */
static void pkt_default_dying(struct pypkt *p)
{
	if (!(p->flags & PK_DECIDED) && owner_ok(p)) {
		PyObject *t, *v, *tb;

		PyErr_Fetch(&t, &v, &tb);
		pkt_default(p);
		/* (an aio wake-up that raised; never report the object
		 * being freed itself) */
		if (PyErr_Occurred())
			PyErr_WriteUnraisable(p->queue ? (PyObject *)p->queue :
						       NULL);
		PyErr_Restore(t, v, tb);
	}
}

static int pkt_traverse(struct pypkt *p, visitproc visit, void *arg)
{
	Py_VISIT(p->queue);
	Py_VISIT(p->pool);
	Py_VISIT(p->given_payload);
	Py_VISIT(p->owned_payload);
	return 0;
}

/* Breaking a cycle: the packet gets its default verdict while its queue
 * is still there (the queue is closed after, if it is garbage too). */
static int pkt_clear(struct pypkt *p)
{
	pkt_default_dying(p);
	Py_CLEAR(p->given_payload);
	Py_CLEAR(p->owned_payload);
	Py_CLEAR(p->queue);
	Py_CLEAR(p->pool);
	return 0;
}

static void pkt_dealloc(struct pypkt *p)
{
	PyObject_GC_UnTrack(p);
	pkt_clear(p);
	if (Py_TYPE(p) == &NfqbPy_PacketType && nfree < FREELIST_MAX)
		freelist[nfree++] = p;
	else
		Py_TYPE(p)->tp_free((PyObject *)p);
}

/* --- verdicts ------------------------------------------------------------ */

#define VERDICT_METHOD(name, v)						\
static PyObject *pkt_##name(struct pypkt *p, PyObject *unused)		\
{									\
	(void)unused;							\
	if (decide(p, v, NULL) < 0)					\
		return NULL;						\
	Py_RETURN_NONE;							\
}
VERDICT_METHOD(accept, NFQB_ACCEPT)
VERDICT_METHOD(drop, NFQB_DROP)
VERDICT_METHOD(repeat, NFQB_REPEAT)

/* a bytes object of at most NFQB_MAX_PAYLOAD bytes from any buffer; new
 * reference */
static PyObject *payload_arg(PyObject *o)
{
	PyObject *b;

	if (PyBytes_Check(o)) {
		Py_INCREF(o);
		b = o;
	} else if (PyObject_CheckBuffer(o) && !PyUnicode_Check(o)) {
		b = PyBytes_FromObject(o);
		if (!b)
			return NULL;
	} else {
		PyErr_Format(PyExc_TypeError,
			     "payload must be bytes (or a bytes-like object), not %.100s",
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	if (PyBytes_GET_SIZE(b) > NFQB_MAX_PAYLOAD) {
		Py_DECREF(b);
		PyErr_Format(PyExc_ValueError,
			     "payload longer than %d bytes (the kernel's limit)",
			     NFQB_MAX_PAYLOAD);
		return NULL;
	}
	return b;
}

/* An optional u32 argument of verdict(): *has set if it is not None. */
static int opt_u32(PyObject *o, const char *name, uint32_t *out, bool *has)
{
	if (o == Py_None)
		return 0;
	if (nfqbpy_u32(o, name, out) < 0)
		return -1;
	*has = true;
	return 0;
}

static PyObject *pkt_verdict(struct pypkt *p, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "verdict", "mark", "payload", "priority",
				  "queue", "bypass", "ct_mark", NULL };
	PyObject *verdict, *mark = Py_None, *payload = Py_None;
	PyObject *prio = Py_None, *queue = Py_None, *ct_mark = Py_None;
	int bypass = 0, rc;
	struct vopts o = { .queue_num = -1 };
	uint32_t v = NFQB_ACCEPT, qn;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOOpO:verdict", kwlist,
					 &verdict, &mark, &payload, &prio,
					 &queue, &bypass, &ct_mark))
		return NULL;
	if (nfqbpy_verdict_arg(verdict, &v) < 0)
		return NULL;
	if (v == NFQB_QUEUE && queue == Py_None) {
		PyErr_SetString(PyExc_ValueError,
				"verdict QUEUE needs queue=N");
		return NULL;
	}
	if (opt_u32(mark, "mark", &o.mark, &o.has_mark) < 0 ||
	    opt_u32(prio, "priority", &o.prio, &o.has_prio) < 0 ||
	    opt_u32(ct_mark, "ct_mark", &o.ct_mark, &o.has_ct_mark) < 0)
		return NULL;
	if (queue != Py_None) {
		if (nfqbpy_u32(queue, "queue", &qn) < 0)
			return NULL;
		if (qn > 65535) {
			PyErr_SetString(PyExc_ValueError,
					"queue must be 0..65535");
			return NULL;
		}
		if (v != NFQB_QUEUE && v != NFQB_ACCEPT) {
			PyErr_SetString(PyExc_ValueError,
					"queue=N goes with verdict QUEUE");
			return NULL;
		}
		o.queue_num = (int)qn;
		o.bypass = bypass;
	} else if (bypass) {
		PyErr_SetString(PyExc_ValueError, "bypass goes with queue=N");
		return NULL;
	}
	if (payload != Py_None) {
		o.payload = payload_arg(payload);
		if (!o.payload)
			return NULL;
	}
	rc = decide(p, v, &o);
	Py_XDECREF(o.payload);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* --- compat methods ------------------------------------------------------ */

/* python-netfilterqueue 1.1's texts */
static const char no_payload_text[] =
	"Packet has no payload -- perhaps you're using COPY_META mode?";
static const char payload_gone_text[] =
	"Payload data is no longer available. You must call retain() within "
	"the user_callback in order to copy the payload if you need to "
	"expect it after your callback has returned.";

static const char expired_text[] =
	"the verdict timeout decided the packet (the default verdict): its data is gone";

/*
 * The payload, copied. With a verdict timeout the owner thread may give
 * the packet the default verdict, send it and reuse its buffer while
 * another thread copies: the copy is kept only if the packet's payload is
 * still where it was after the copy (guarantee 4 of the library's
 * header), else LateVerdictError (ETIMEDOUT), never another packet's
 * bytes.
 */
static PyObject *live_payload(struct pypkt *p)
{
	const uint8_t *data;
	uint32_t len = 0;
	PyObject *b;

	data = nfqb_pkt_payload(p->h, &len);
	if (!data) {
		if (!nfqb_pkt_id(p->h) && p->id)
			late_error(ETIMEDOUT, expired_text);	/* sent */
		else
			PyErr_SetString(PyExc_RuntimeError, no_payload_text);
		return NULL;
	}
	b = PyBytes_FromStringAndSize((const char *)data, len);
	if (!b)
		return NULL;
	atomic_thread_fence(memory_order_acquire);
	if (nfqb_pkt_payload(p->h, NULL) != data) {
		Py_DECREF(b);
		late_error(ETIMEDOUT, expired_text);
		return NULL;
	}
	return b;
}

/* set_payload()'s bytes, else retain()'s, else NULL; a new reference */
static PyObject *held_payload(struct pypkt *p)
{
	PyObject *b = p->given_payload ? p->given_payload : p->owned_payload;

	Py_XINCREF(b);
	return b;
}

static PyObject *pkt_get_payload(struct pypkt *p, PyObject *unused)
{
	PyObject *b = held_payload(p);

	(void)unused;
	if (b)
		return b;
	/* compat: the payload is the callback's, unless retained */
	if ((p->flags & PK_COMPAT) && !(p->flags & PK_IN_CB)) {
		PyErr_SetString(PyExc_RuntimeError,
				(p->flags & PK_SNAP) && !p->payload_len ?
				no_payload_text : payload_gone_text);
		return NULL;
	}
	if (!readable(p)) {
		gone_error(p);
		return NULL;
	}
	return live_payload(p);
}

static PyObject *pkt_get_payload_len(struct pypkt *p, PyObject *unused)
{
	(void)unused;
	if (p->given_payload)
		return PyLong_FromSsize_t(PyBytes_GET_SIZE(p->given_payload));
	if (need_snap(p) < 0)
		return NULL;
	return PyLong_FromUnsignedLong(p->payload_len);
}

static PyObject *pkt_get_timestamp(struct pypkt *p, PyObject *unused)
{
	(void)unused;
	if (need_snap(p) < 0)
		return NULL;
	if (!(p->flags & PK_HAS_TS))
		return PyFloat_FromDouble(0.0);
	return PyFloat_FromDouble((double)(p->ts_ns / 1000) / 1e6);
}

static PyObject *pkt_get_hw(struct pypkt *p, PyObject *unused)
{
	(void)unused;
	if (need_snap(p) < 0)
		return NULL;
	if (!(p->flags & PK_HAS_HW))
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize((const char *)p->hw, p->hw_len);
}

static PyObject *pkt_get_mark(struct pypkt *p, PyObject *unused)
{
	(void)unused;
	if (p->flags & PK_MARK_SET)
		return PyLong_FromUnsignedLong(p->given_mark);
	if (need_snap(p) < 0)
		return NULL;
	return PyLong_FromUnsignedLong(p->mark);
}

static PyObject *pkt_set_mark(struct pypkt *p, PyObject *arg)
{
	uint32_t m;

	if (nfqbpy_u32(arg, "mark", &m) < 0)
		return NULL;
	if (p->flags & PK_DECIDED) {
		late_error(EALREADY,
			   "Verdict already given for this packet: set_mark() comes before it");
		return NULL;
	}
	p->given_mark = m;
	p->flags |= PK_MARK_SET;
	Py_RETURN_NONE;
}

static PyObject *pkt_set_payload(struct pypkt *p, PyObject *arg)
{
	PyObject *b;

	if (p->flags & PK_DECIDED) {
		late_error(EALREADY,
			   "Verdict already given for this packet: set_payload() comes before it");
		return NULL;
	}
	b = payload_arg(arg);
	if (!b)
		return NULL;
	Py_XSETREF(p->given_payload, b);
	Py_RETURN_NONE;
}

static PyObject *pkt_retain(struct pypkt *p, PyObject *unused)
{
	PyObject *b;

	(void)unused;
	if (p->owned_payload || p->given_payload)
		Py_RETURN_NONE;
	if (!readable(p) && !(p->flags & PK_IN_CB)) {
		gone_error(p);
		return NULL;
	}
	/* like the original: retaining a packet without payload is fine */
	if (!nfqb_pkt_payload(p->h, NULL))
		Py_RETURN_NONE;
	b = live_payload(p);
	if (!b)
		return NULL;
	p->owned_payload = b;
	Py_RETURN_NONE;
}

static const char *proto_name_fallback = "Unknown protocol";

static PyObject *pkt_str(struct pypkt *p)
{
	PyObject *pl, *mod, *protos, *name = NULL, *res;
	const unsigned char *d;
	Py_ssize_t n;
	int proto = -1;

	if (p->given_payload)
		pl = p->given_payload;
	else if (p->owned_payload)
		pl = p->owned_payload;
	else if ((p->flags & PK_IN_CB || !(p->flags & PK_COMPAT)) &&
		 readable(p))
		pl = NULL;
	else
		return PyUnicode_FromFormat("%u byte packet, contents unretained",
					    (unsigned int)(p->flags & PK_SNAP ?
							   p->payload_len : 0));
	if (pl) {
		d = (const unsigned char *)PyBytes_AS_STRING(pl);
		n = PyBytes_GET_SIZE(pl);
	} else {
		uint32_t len = 0;

		d = nfqb_pkt_payload(p->h, &len);
		n = d ? (Py_ssize_t)len : 0;
	}
	if (n >= 20 && (d[0] >> 4) == 4)
		proto = d[9];
	else if (n >= 40 && (d[0] >> 4) == 6)
		proto = d[6];
	mod = PyImport_ImportModule("nfqb._protocols");
	if (mod) {
		protos = PyObject_GetAttrString(mod, "PROTOCOLS");
		Py_DECREF(mod);
		if (protos && proto >= 0) {
			PyObject *k = PyLong_FromLong(proto);

			name = k ? PyObject_GetItem(protos, k) : NULL;
			Py_XDECREF(k);
		}
		Py_XDECREF(protos);
	}
	PyErr_Clear();
	if (name) {
		res = PyUnicode_FromFormat("%S packet, %zd bytes", name, n);
		Py_DECREF(name);
		return res;
	}
	return PyUnicode_FromFormat("%s packet, %zd bytes",
				    proto_name_fallback, n);
}

static PyObject *pkt_repr(struct pypkt *p)
{
	return PyUnicode_FromFormat("<nfqb.Packet id=%u%s>", p->id,
				    p->flags & PK_DECIDED ? " decided" : "");
}

/* --- attributes ---------------------------------------------------------- */

static uint32_t live_u32(struct nfqb_packet *h,
			 bool (*fn)(const struct nfqb_packet *, uint32_t *))
{
	uint32_t v = 0;

	fn(h, &v);
	return v;
}

#define META_GETTER(field, live)					\
static PyObject *get_##field(struct pypkt *p, void *c)			\
{									\
	struct nfqb_packet *h = p->h;					\
	int src = meta_src(p);						\
	(void)c;							\
	(void)h;							\
	if (src < 0)							\
		return NULL;						\
	return PyLong_FromUnsignedLong(src ? p->field : (live));	\
}
META_GETTER(mark, live_u32(h, nfqb_pkt_mark))
META_GETTER(indev, live_u32(h, nfqb_pkt_indev))
META_GETTER(outdev, live_u32(h, nfqb_pkt_outdev))
META_GETTER(physindev, live_u32(h, nfqb_pkt_physindev))
META_GETTER(physoutdev, live_u32(h, nfqb_pkt_physoutdev))
META_GETTER(hook, nfqb_pkt_hook(h))
META_GETTER(family, nfqb_pkt_family(h))
META_GETTER(hw_protocol, nfqb_pkt_hw_protocol(h))

static PyObject *get_payload_len(struct pypkt *p, void *c)
{
	uint32_t len = 0;
	int src;

	(void)c;
	if (p->given_payload)
		return PyLong_FromSsize_t(PyBytes_GET_SIZE(p->given_payload));
	src = meta_src(p);
	if (src < 0)
		return NULL;
	if (src)
		return PyLong_FromUnsignedLong(p->payload_len);
	nfqb_pkt_payload(p->h, &len);
	return PyLong_FromUnsignedLong(len);
}

static PyObject *get_id(struct pypkt *p, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(p->id);
}

static PyObject *get_decided(struct pypkt *p, void *c)
{
	(void)c;
	return PyBool_FromLong(!!(p->flags & PK_DECIDED));
}

/* the timestamp: 1 and *ns, 0 if none, -1 with an exception */
static int timestamp(struct pypkt *p, uint64_t *ns)
{
	int src = meta_src(p);

	if (src < 0)
		return -1;
	if (src) {
		*ns = p->ts_ns;
		return !!(p->flags & PK_HAS_TS);
	}
	return nfqb_pkt_timestamp(p->h, ns);
}

/* timestamp (closure NULL: float seconds) and timestamp_ns */
static PyObject *get_timestamp(struct pypkt *p, void *ns_wanted)
{
	uint64_t ns = 0;
	int r = timestamp(p, &ns);

	if (r < 0)
		return NULL;
	if (!r)
		Py_RETURN_NONE;
	if (ns_wanted)
		return PyLong_FromUnsignedLongLong(ns);
	return PyFloat_FromDouble((double)ns / 1e9);
}

static PyObject *get_hwaddr(struct pypkt *p, void *c)
{
	const uint8_t *hw;
	uint16_t len;
	int src = meta_src(p);

	(void)c;
	if (src < 0)
		return NULL;
	if (src) {
		if (!(p->flags & PK_HAS_HW))
			Py_RETURN_NONE;
		return PyBytes_FromStringAndSize((const char *)p->hw,
						 p->hw_len);
	}
	if (!nfqb_pkt_hwaddr(p->h, &hw, &len))
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize((const char *)hw, len);
}

static PyObject *get_payload(struct pypkt *p, void *c)
{
	PyObject *b = held_payload(p);

	(void)c;
	if (b)
		return b;
	if (!readable(p)) {
		gone_error(p);
		return NULL;
	}
	if (!nfqb_pkt_payload(p->h, NULL)) {
		if (!nfqb_pkt_id(p->h)) {
			/* the verdict timeout's default verdict was sent */
			late_error(ETIMEDOUT, expired_text);
			return NULL;
		}
		Py_RETURN_NONE;
	}
	return live_payload(p);
}

/* attributes read from the live view only */
static int live(struct pypkt *p)
{
	if (!readable(p))
		return gone_error(p);
	return 0;
}

#define LIVE_OPT_U32_GETTER(name, fn)					\
static PyObject *get_##name(struct pypkt *p, void *c)			\
{									\
	uint32_t v;							\
	(void)c;							\
	if (live(p) < 0)						\
		return NULL;						\
	if (!fn(p->h, &v))						\
		Py_RETURN_NONE;						\
	return PyLong_FromUnsignedLong(v);				\
}
LIVE_OPT_U32_GETTER(uid, nfqb_pkt_uid)
LIVE_OPT_U32_GETTER(gid, nfqb_pkt_gid)
LIVE_OPT_U32_GETTER(ct_id, nfqb_pkt_ct_id)
LIVE_OPT_U32_GETTER(ct_info, nfqb_pkt_ct_info)
LIVE_OPT_U32_GETTER(priority, nfqb_pkt_priority)
LIVE_OPT_U32_GETTER(skbinfo, nfqb_pkt_skbinfo)
LIVE_OPT_U32_GETTER(cgroup_classid, nfqb_pkt_cgroup_classid)

#define LIVE_BOOL_GETTER(name, fn)					\
static PyObject *get_##name(struct pypkt *p, void *c)			\
{									\
	(void)c;							\
	if (live(p) < 0)						\
		return NULL;						\
	return PyBool_FromLong(fn(p->h));				\
}
LIVE_BOOL_GETTER(truncated, nfqb_pkt_truncated)
LIVE_BOOL_GETTER(is_gso, nfqb_pkt_is_gso)
LIVE_BOOL_GETTER(csum_not_ready, nfqb_pkt_csum_not_ready)
LIVE_BOOL_GETTER(csum_not_verified, nfqb_pkt_csum_not_verified)

#define LIVE_U32_GETTER(name, fn)					\
static PyObject *get_##name(struct pypkt *p, void *c)			\
{									\
	(void)c;							\
	if (live(p) < 0)						\
		return NULL;						\
	return PyLong_FromUnsignedLong(fn(p->h));			\
}
LIVE_U32_GETTER(orig_len, nfqb_pkt_orig_len)
LIVE_U32_GETTER(queue_num, nfqb_pkt_queue_num)
LIVE_U32_GETTER(hook_point, nfqb_pkt_hook_point)
LIVE_U32_GETTER(network_offset, nfqb_pkt_network_offset)

static PyObject *get_secctx(struct pypkt *p, void *c)
{
	const char *ctx;
	uint32_t len;

	(void)c;
	if (live(p) < 0)
		return NULL;
	if (!nfqb_pkt_secctx(p->h, &ctx, &len))
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize(ctx, len);
}

static PyObject *get_vlan(struct pypkt *p, void *c)
{
	uint16_t proto, tci;

	(void)c;
	if (live(p) < 0)
		return NULL;
	if (!nfqb_pkt_vlan(p->h, &proto, &tci))
		Py_RETURN_NONE;
	return Py_BuildValue("(II)", (unsigned int)proto, (unsigned int)tci);
}

#define LIVE_BLOB_GETTER(name, fn)					\
static PyObject *get_##name(struct pypkt *p, void *c)			\
{									\
	const void *d;							\
	uint32_t len;							\
	(void)c;							\
	if (live(p) < 0)						\
		return NULL;						\
	d = fn(p->h, &len);						\
	if (!d)								\
		Py_RETURN_NONE;						\
	return PyBytes_FromStringAndSize(d, len);			\
}
LIVE_BLOB_GETTER(l2hdr, nfqb_pkt_l2hdr)
LIVE_BLOB_GETTER(ct, nfqb_pkt_ct)

static PyObject *pkt_attr(struct pypkt *p, PyObject *arg)
{
	const void *d;
	uint32_t type;
	uint16_t len;

	if (nfqbpy_u32(arg, "type", &type) < 0)
		return NULL;
	if (type > 0xffff) {
		PyErr_SetString(PyExc_ValueError, "type must be 0..65535");
		return NULL;
	}
	if (live(p) < 0)
		return NULL;
	d = nfqb_pkt_attr(p->h, (uint16_t)type, &len);
	if (!d)
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize(d, len);
}

static PyGetSetDef pkt_getset[] = {
	{ "id", (getter)get_id, NULL,
	  "The packet's id, given by the kernel (per queue, counting up).", NULL },
	{ "hook", (getter)get_hook, NULL,
	  "The netfilter hook number (0 PREROUTING .. 4 POSTROUTING for IPv4/IPv6; see family).", NULL },
	{ "hw_protocol", (getter)get_hw_protocol, NULL,
	  "The link-layer protocol (EtherType, e.g. 0x0800 for IPv4).", NULL },
	{ "mark", (getter)get_mark, NULL,
	  "The mark the packet had when it was queued (0 if none); set_mark() does not change it.", NULL },
	{ "indev", (getter)get_indev, NULL, "Input interface index (0: none).", NULL },
	{ "outdev", (getter)get_outdev, NULL, "Output interface index (0: none).", NULL },
	{ "physindev", (getter)get_physindev, NULL, "Bridge port the packet came in on (0: none).", NULL },
	{ "physoutdev", (getter)get_physoutdev, NULL, "Bridge port the packet goes out on (0: none).", NULL },
	{ "family", (getter)get_family, NULL, "The protocol family of the hook (2 IPv4, 10 IPv6, 5 netdev, ...).", NULL },
	{ "payload_len", (getter)get_payload_len, NULL, "Length of the payload copied to us.", NULL },
	{ "decided", (getter)get_decided, NULL, "True once the packet has its verdict.", NULL },
	{ "timestamp", (getter)get_timestamp, NULL, "Receive time (seconds since the epoch, float), or None.", NULL },
	{ "timestamp_ns", (getter)get_timestamp, NULL, "Receive time in nanoseconds since the epoch, or None.", (void *)"ns" },
	{ "hwaddr", (getter)get_hwaddr, NULL, "Source hardware address (bytes), or None.", NULL },
	{ "payload", (getter)get_payload, NULL,
	  "The payload (bytes, from the network header; None in COPY_META mode): readable until the verdict, after it only if retained or set.", NULL },
	{ "uid", (getter)get_uid, NULL, "Owner uid of the local socket (F_UID_GID), or None.", NULL },
	{ "gid", (getter)get_gid, NULL, "Owner gid of the local socket (F_UID_GID), or None.", NULL },
	{ "ct_id", (getter)get_ct_id, NULL, "Conntrack id (F_CONNTRACK), or None.", NULL },
	{ "ct_info", (getter)get_ct_info, NULL, "Conntrack state (F_CONNTRACK), or None.", NULL },
	{ "ct", (getter)get_ct, NULL, "The raw NFQA_CT attribute (bytes), or None.", NULL },
	{ "priority", (getter)get_priority, NULL, "skb->priority, or None.", NULL },
	{ "skbinfo", (getter)get_skbinfo, NULL, "NFQA_SKB_INFO flags, or None.", NULL },
	{ "cgroup_classid", (getter)get_cgroup_classid, NULL, "cgroup classid, or None.", NULL },
	{ "truncated", (getter)get_truncated, NULL, "True if the payload is shorter than the packet.", NULL },
	{ "orig_len", (getter)get_orig_len, NULL, "The packet's length before the copy range cut it.", NULL },
	{ "is_gso", (getter)get_is_gso, NULL, "True for a GSO super-packet (larger than the MTU).", NULL },
	{ "csum_not_ready", (getter)get_csum_not_ready, NULL, "True if the transport checksum is not filled in yet.", NULL },
	{ "csum_not_verified", (getter)get_csum_not_verified, NULL, "True if the checksum was not verified.", NULL },
	{ "secctx", (getter)get_secctx, NULL, "Security context (bytes, F_SECCTX), or None.", NULL },
	{ "vlan", (getter)get_vlan, NULL, "(proto, tci) of the VLAN tag, or None.", NULL },
	{ "l2hdr", (getter)get_l2hdr, NULL, "The link-layer header (bytes), or None.", NULL },
	{ "queue_num", (getter)get_queue_num, NULL, "The queue the packet came from.", NULL },
	{ "hook_point", (getter)get_hook_point, NULL, "The hook with its family (HOOK_* constants).", NULL },
	{ "network_offset", (getter)get_network_offset, NULL, "Offset of the network header in the payload.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef pkt_methods[] = {
	{ "accept", (PyCFunction)pkt_accept, METH_NOARGS,
	  "accept()\n\nAccept the packet (with set_mark()/set_payload() applied). Raises LateVerdictError if it was decided before or its queue is gone." },
	{ "drop", (PyCFunction)pkt_drop, METH_NOARGS,
	  "drop()\n\nDrop the packet." },
	{ "repeat", (PyCFunction)pkt_repeat, METH_NOARGS,
	  "repeat()\n\nSend the packet through its hook again (with set_mark()/set_payload() applied)." },
	{ "verdict", (PyCFunction)(void (*)(void))pkt_verdict,
	  METH_VARARGS | METH_KEYWORDS,
	  "verdict(verdict, *, mark=None, payload=None, priority=None, queue=None, bypass=False, ct_mark=None)\n\n"
	  "Decide the packet: ACCEPT, DROP, REPEAT, or QUEUE with queue=N (bypass: accept if nobody listens on N), "
	  "optionally setting its mark, priority or payload, and the mark of its conntrack entry "
	  "(ct_mark: a rule on the connection mark then decides the flow's later packets). From any thread." },
	{ "get_payload", (PyCFunction)pkt_get_payload, METH_NOARGS,
	  "get_payload() -> bytes\n\nThe payload, from the network header; what set_payload() gave if called. "
	  "In a NetfilterQueue callback: after the callback returns only if retain() was called." },
	{ "get_payload_len", (PyCFunction)pkt_get_payload_len, METH_NOARGS,
	  "get_payload_len() -> int\n\nThe length of get_payload()." },
	{ "get_timestamp", (PyCFunction)pkt_get_timestamp, METH_NOARGS,
	  "get_timestamp() -> float\n\nReceive time, seconds since the epoch (microseconds), 0.0 if the kernel sent none." },
	{ "get_hw", (PyCFunction)pkt_get_hw, METH_NOARGS,
	  "get_hw() -> bytes | None\n\nThe source hardware address (its real length, 6 bytes on Ethernet), or None." },
	{ "get_mark", (PyCFunction)pkt_get_mark, METH_NOARGS,
	  "get_mark() -> int\n\nThe mark given by set_mark(), else the packet's own." },
	{ "set_mark", (PyCFunction)pkt_set_mark, METH_O,
	  "set_mark(mark)\n\nThe mark (0..2**32-1) the verdict will set." },
	{ "set_payload", (PyCFunction)pkt_set_payload, METH_O,
	  "set_payload(payload)\n\nReplace the packet by these bytes (at most 65531) with its verdict; "
	  "fix the checksums and lengths yourself." },
	{ "retain", (PyCFunction)pkt_retain, METH_NOARGS,
	  "retain()\n\nCopy the payload so that get_payload() works after the callback and after the verdict." },
	{ "attr", (PyCFunction)pkt_attr, METH_O,
	  "attr(type) -> bytes | None\n\nThe payload of netlink attribute NFQA_<type>, while undecided." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject NfqbPy_PacketType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nfqb.Packet",
	.tp_basicsize = sizeof(struct pypkt),
	.tp_dealloc = (destructor)pkt_dealloc,
	.tp_repr = (reprfunc)pkt_repr,
	.tp_str = (reprfunc)pkt_str,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
		    Py_TPFLAGS_BASETYPE,
	.tp_doc = "A packet from a queue (made by the library, never by hand).\n\n"
		  "Decide it exactly once with accept(), drop(), repeat() or verdict(), from any thread. "
		  "A Packet that is dropped undecided gives its packet the queue's default verdict.",
	.tp_traverse = (traverseproc)pkt_traverse,
	.tp_clear = (inquiry)pkt_clear,
	.tp_methods = pkt_methods,
	.tp_getset = pkt_getset,
	.tp_free = PyObject_GC_Del,
};

/* nfqb.LateVerdictError, made and added to @m. */
static int late_error_init(PyObject *m)
{
	PyObject *dict;

	dict = Py_BuildValue("{s:i}", "errno", 0);
	if (!dict)
		return -1;
	NfqbPy_LateVerdictError = PyErr_NewExceptionWithDoc(
		"nfqb.LateVerdictError",
		"A verdict (or a read of its data) on a packet that has its verdict already, whose "
		"queue or pool is closed, or that the verdict timeout decided. A RuntimeError, as "
		"python-netfilterqueue raises; errno tells which: EALREADY, ESHUTDOWN or ETIMEDOUT. "
		"No other packet is touched.",
		PyExc_RuntimeError, dict);
	Py_DECREF(dict);
	if (!NfqbPy_LateVerdictError)
		return -1;
	Py_INCREF(NfqbPy_LateVerdictError);
	if (PyModule_AddObject(m, "LateVerdictError",
			       NfqbPy_LateVerdictError) < 0) {
		Py_DECREF(NfqbPy_LateVerdictError);
		return -1;
	}
	return 0;
}

int packet_module_init(PyObject *m)
{
	if (late_error_init(m) < 0)
		return -1;
	if (PyType_Ready(&NfqbPy_PacketType) < 0)
		return -1;
	Py_INCREF(&NfqbPy_PacketType);
	if (PyModule_AddObject(m, "Packet", (PyObject *)&NfqbPy_PacketType) < 0) {
		Py_DECREF(&NfqbPy_PacketType);
		return -1;
	}
	return 0;
}
