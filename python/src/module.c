// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb._nfqb: the Python 3 extension over libnfq-batch (CPython C API):
 * module set-up, constants, the module's functions.
 *
 * The files are layers, each calling only those below it (a file includes
 * the headers of its own layer or below; tests/check-python-shape.sh
 * checks it):
 *
 *   6  module.c             the module: calls each file's init
 *   5  compat.c, compat.h   nfqb.netfilterqueue.NetfilterQueue
 *   4  pool.c, pool.h       nfqb.Pool
 *   3  queue.c, queue.h     nfqb.Queue, and the queue of a NetfilterQueue
 *   2  packet.c, packet.h   nfqb.Packet, LateVerdictError
 *   1  util.c, util.h       errors, arguments, counters, lists
 *
 * What a packet needs of its queue or pool (usable, the default verdict,
 * a decision made) it asks through the tables queue.c and pool.c give it
 * at their init (struct pkt_queue_ops, struct pkt_pool_ops).
 *
 * The rule of the library holds here too: every packet handed to Python
 * gets exactly one verdict, the application's or the default one (when
 * its Packet object dies undecided, when a callback leaves it undecided
 * and unkept, at close), and no verdict of ours ever reaches another
 * packet.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "compat.h"
#include "pool.h"

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

/* At interpreter exit: every pool stopped and freed, then every queue
 * still open closed. */
static PyObject *mod_atexit(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	pool_close_all();
	q_close_all();
	Py_RETURN_NONE;
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
	{ "_atexit", mod_atexit, METH_NOARGS,
	  "_atexit()\n\nStop and free every pool, then close every queue still open (registered by nfqb at import)." },
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
	PyObject *m;
	size_t i;

	m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	for (i = 0; i < sizeof(iconsts) / sizeof(iconsts[0]); i++)
		if (PyModule_AddIntConstant(m, iconsts[i].name,
					    iconsts[i].value) < 0)
			goto fail;
	if (packet_module_init(m) < 0 || queue_module_init(m) < 0 ||
	    compat_module_init(m) < 0 || pool_module_init(m) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
