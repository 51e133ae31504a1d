// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb._nfqb's helpers: errors, argument conversion, counters as dicts,
 * the lists of open objects. The lowest layer of python/src: it calls no
 * other file of the extension.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

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
