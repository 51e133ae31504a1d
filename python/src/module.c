// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb._nfqb: module set-up, constants, argument helpers and errors.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "nfqbpy.h"

PyObject *NfqbPy_LateVerdictError;

PyObject *nfqbpy_oserror(int err, const char *what)
{
	PyObject *msg, *exc;

	msg = PyUnicode_FromFormat("%s: %s", what, strerror(err));
	if (!msg)
		return NULL;
	/* OSError(errno, msg) makes the subclass of errno (PermissionError,
	 * BlockingIOError, ...) */
	exc = PyObject_CallFunction(PyExc_OSError, "iO", err, msg);
	Py_DECREF(msg);
	if (!exc)
		return NULL;
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return NULL;
}

/* OSError(err, text): @text is the exception's strerror as it is (the
 * texts python-netfilterqueue 1.1 raises, for the compat API). NULL. */
PyObject *nfqbpy_oserror_text(int err, const char *text)
{
	PyObject *exc = PyObject_CallFunction(PyExc_OSError, "is", err, text);

	if (!exc)
		return NULL;
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return NULL;
}

/* O& converter: an unsigned int argument, range-checked. */
int nfqbpy_conv_u32(PyObject *o, void *out)
{
	return nfqbpy_u32(o, "argument", out) < 0 ? 0 : 1;
}

void nfqbpy_link_add(struct nfqbpy_link **head, struct nfqbpy_link *l)
{
	l->prev = NULL;
	l->next = *head;
	if (*head)
		(*head)->prev = l;
	*head = l;
}

/* unlinks @l if it is linked (a second call does nothing) */
void nfqbpy_link_del(struct nfqbpy_link **head, struct nfqbpy_link *l)
{
	if (l->prev)
		l->prev->next = l->next;
	else if (*head == l)
		*head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
}

/* An int in 0..2**32-1 (TypeError, OverflowError otherwise). */
int nfqbpy_u32(PyObject *o, const char *name, uint32_t *out)
{
	unsigned long long v;
	int overflow;
	long long s;

	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s",
			     name, Py_TYPE(o)->tp_name);
		return -1;
	}
	s = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (s == -1 && PyErr_Occurred())
		return -1;
	if (overflow || s < 0 || s > 0xffffffffLL) {
		PyErr_Format(PyExc_OverflowError, "%s must be 0..4294967295",
			     name);
		return -1;
	}
	v = (unsigned long long)s;
	*out = (uint32_t)v;
	return 0;
}

int nfqbpy_verdict_arg(PyObject *o, uint32_t *out)
{
	uint32_t v;

	if (nfqbpy_u32(o, "verdict", &v) < 0)
		return -1;
	if (v != NFQB_ACCEPT && v != NFQB_DROP && v != NFQB_REPEAT &&
	    v != NFQB_QUEUE) {
		PyErr_Format(PyExc_ValueError,
			     "verdict must be ACCEPT, DROP, REPEAT or QUEUE, not %u",
			     (unsigned int)v);
		return -1;
	}
	*out = v;
	return 0;
}

/* struct nfqb_stats, field by field, in its order */
static const char *const stats_names[] = {
	"packets", "bytes", "recv_calls", "send_calls", "verdict_msgs",
	"batch_msgs", "batch_packets", "accepted", "dropped", "requeued",
	"repeated", "marked", "mangled", "enobufs", "rejected_foreign",
	"rejected_malformed", "rejected_truncated", "kernel_errors",
	"enoent_errors", "flushes", "flush_limit", "flush_idle",
	"flush_latency", "flush_explicit", "fallbacks", "timeouts",
	"defaults", "outstanding", "send_failures", "rejected_defaults",
	"gap_ids", "verdict_errors", "interrupts", "buffers_exhausted",
	"config_resends", "late_verdicts", "linger_pauses", "linger_waiting",
	"book_full", "truncated", "large_resent", "large_dropped",
	"mss_clamped", "gso_off",
};

PyObject *nfqbpy_stats_dict(const struct nfqb_stats *st)
{
	const uint64_t *f = (const uint64_t *)st;
	size_t i, n = sizeof(stats_names) / sizeof(stats_names[0]);
	PyObject *d = PyDict_New();

	/* every field is a uint64_t, named above in order */
	_Static_assert(sizeof(stats_names) / sizeof(stats_names[0]) ==
		       sizeof(struct nfqb_stats) / sizeof(uint64_t),
		       "stats_names must name every field of struct nfqb_stats");
	for (i = 0; d && i < n; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(f[i]);

		if (!v || PyDict_SetItemString(d, stats_names[i], v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

static PyObject *kstats_dict(const struct nfqb_kstats *k)
{
	return Py_BuildValue("{sIsIsIsIsIsIsIsI}",
			     "queue_num", k->queue_num, "portid", k->portid,
			     "queue_total", k->queue_total,
			     "copy_mode", k->copy_mode,
			     "copy_range", k->copy_range,
			     "queue_dropped", k->queue_dropped,
			     "queue_user_dropped", k->queue_user_dropped,
			     "id_sequence", k->id_sequence);
}

static PyObject *mod_kstats(PyObject *m, PyObject *args)
{
	struct nfqb_kstats one, *all;
	PyObject *numo = Py_None, *list;
	uint32_t num;
	int n, i, err, cap;

	(void)m;
	if (!PyArg_ParseTuple(args, "|O:kstats", &numo))
		return NULL;
	if (numo != Py_None) {
		if (nfqbpy_u32(numo, "num", &num) < 0)
			return NULL;
		if (num > 65535) {
			PyErr_SetString(PyExc_ValueError, "num must be 0..65535");
			return NULL;
		}
		if (nfqb_kstats_get((uint16_t)num, &one, sizeof(one)) < 0) {
			if (errno == ENOENT)
				Py_RETURN_NONE;
			return nfqbpy_oserror(errno, "kstats");
		}
		return kstats_dict(&one);
	}
	n = nfqb_kstats_read(NULL, 0, sizeof(one));
	if (n < 0) {
		if (errno == ENOENT)
			return PyList_New(0);
		return nfqbpy_oserror(errno, "kstats");
	}
	all = PyMem_Calloc((size_t)n + 16, sizeof(*all));
	if (!all)
		return PyErr_NoMemory();
	cap = n + 16;
	n = nfqb_kstats_read(all, (size_t)cap, sizeof(*all));
	err = errno;
	if (n < 0) {
		PyMem_Free(all);
		return nfqbpy_oserror(err, "kstats");
	}
	if (n > cap)
		n = cap;
	list = PyList_New(0);
	for (i = 0; list && i < n; i++) {
		PyObject *d = kstats_dict(&all[i]);

		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	PyMem_Free(all);
	return list;
}

static PyObject *mod_verdict_name(PyObject *m, PyObject *arg)
{
	uint32_t v;

	(void)m;
	if (nfqbpy_u32(arg, "verdict", &v) < 0)
		return NULL;
	return PyUnicode_FromString(nfqb_verdict_name(v));
}

static PyObject *mod_library_version(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyUnicode_FromString(nfqb_version());
}

static PyMethodDef mod_methods[] = {
	{ "kstats", mod_kstats, METH_VARARGS,
	  "kstats(num=None)\n\nThe kernel's view of queue num (a dict, None if not bound), or of every "
	  "queue of this network namespace (a list), from /proc/net/netfilter/nfnetlink_queue." },
	{ "verdict_name", mod_verdict_name, METH_O,
	  "verdict_name(v) -> str\n\n'accept', 'drop', ... for a verdict code." },
	{ "library_version", mod_library_version, METH_NOARGS,
	  "library_version() -> str\n\nThe version of libnfq-batch in use." },
	{ NULL, NULL, 0, NULL },
};

static void mod_free(void *m)
{
	(void)m;
	pkt_freelist_clear();
}

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "nfqb._nfqb",
	.m_doc = "The C part of nfqb (libnfq-batch for Python); import nfqb instead.",
	.m_size = -1,
	.m_methods = mod_methods,
	.m_free = mod_free,
};

struct iconst {
	const char *name;
	long value;
};

static const struct iconst iconsts[] = {
	{ "ACCEPT", NFQB_ACCEPT }, { "DROP", NFQB_DROP },
	{ "QUEUE", NFQB_QUEUE }, { "REPEAT", NFQB_REPEAT },
	{ "COPY_NONE", NFQB_COPY_NONE }, { "COPY_META", NFQB_COPY_META },
	{ "COPY_PACKET", NFQB_COPY_PACKET },
	{ "F_FAIL_OPEN", NFQB_F_FAIL_OPEN }, { "F_CONNTRACK", NFQB_F_CONNTRACK },
	{ "F_GSO", NFQB_F_GSO }, { "F_UID_GID", NFQB_F_UID_GID },
	{ "F_SECCTX", NFQB_F_SECCTX },
	{ "ENOBUFS_REPORT", NFQB_ENOBUFS_REPORT },
	{ "ENOBUFS_IGNORE", NFQB_ENOBUFS_IGNORE },
	{ "LINGER_AUTO", (long)NFQB_LINGER_AUTO },
	{ "LARGE_PASS", NFQB_LARGE_PASS }, { "LARGE_WHOLE", NFQB_LARGE_WHOLE },
	{ "MAX_PAYLOAD", NFQB_MAX_PAYLOAD },
	{ "DEFAULT_BUFFERS", NFQB_DEFAULT_BUFFERS },
	{ "POOL_QUEUE_PER_WORKER", NFQB_POOL_QUEUE_PER_WORKER },
	{ "POOL_DISPATCH", NFQB_POOL_DISPATCH },
	{ "HOOK_UNKNOWN", NFQB_HOOK_UNKNOWN },
	{ "HOOK_PREROUTING", NFQB_HOOK_PREROUTING },
	{ "HOOK_INPUT", NFQB_HOOK_INPUT }, { "HOOK_FORWARD", NFQB_HOOK_FORWARD },
	{ "HOOK_OUTPUT", NFQB_HOOK_OUTPUT },
	{ "HOOK_POSTROUTING", NFQB_HOOK_POSTROUTING },
	{ "HOOK_INGRESS", NFQB_HOOK_INGRESS }, { "HOOK_EGRESS", NFQB_HOOK_EGRESS },
	{ "HOOK_ARP_IN", NFQB_HOOK_ARP_IN }, { "HOOK_ARP_OUT", NFQB_HOOK_ARP_OUT },
	{ "HOOK_ARP_FORWARD", NFQB_HOOK_ARP_FORWARD },
	{ "FAMILY_INET", NFQB_FAMILY_INET }, { "FAMILY_IPV4", NFQB_FAMILY_IPV4 },
	{ "FAMILY_ARP", NFQB_FAMILY_ARP }, { "FAMILY_NETDEV", NFQB_FAMILY_NETDEV },
	{ "FAMILY_BRIDGE", NFQB_FAMILY_BRIDGE },
	{ "FAMILY_IPV6", NFQB_FAMILY_IPV6 },
};

PyMODINIT_FUNC PyInit__nfqb(void)
{
	PyObject *m, *dict;
	size_t i;

	m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	for (i = 0; i < sizeof(iconsts) / sizeof(iconsts[0]); i++)
		if (PyModule_AddIntConstant(m, iconsts[i].name,
					    iconsts[i].value) < 0)
			goto fail;
	dict = Py_BuildValue("{s:i}", "errno", 0);
	if (!dict)
		goto fail;
	NfqbPy_LateVerdictError = PyErr_NewExceptionWithDoc(
		"nfqb.LateVerdictError",
		"A verdict (or a read of its data) on a packet that has its verdict already, whose "
		"queue or pool is closed, or that the verdict timeout decided. A RuntimeError, as "
		"python-netfilterqueue raises; errno tells which: EALREADY, ESHUTDOWN or ETIMEDOUT. "
		"No other packet is touched.",
		PyExc_RuntimeError, dict);
	Py_DECREF(dict);
	if (!NfqbPy_LateVerdictError)
		goto fail;
	Py_INCREF(NfqbPy_LateVerdictError);
	if (PyModule_AddObject(m, "LateVerdictError",
			       NfqbPy_LateVerdictError) < 0) {
		Py_DECREF(NfqbPy_LateVerdictError);
		goto fail;
	}
	if (packet_module_init(m) < 0 || queue_module_init(m) < 0 ||
	    compat_module_init(m) < 0 || pool_module_init(m) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
