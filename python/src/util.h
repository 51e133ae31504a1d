/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb._nfqb's helpers (util.c), and what every file of the extension
 * includes: Python's and the library's headers. The lowest layer of
 * python/src (module.c tells the layers; tests/check-python-shape.sh
 * checks them): it includes no other header of python/src.
 */
#ifndef NFQBPY_UTIL_H
#define NFQBPY_UTIL_H

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

/* Objects still open, for the exit hook (under the GIL). */
struct nfqbpy_link {
	struct nfqbpy_link *prev, *next;
};

#define nfqbpy_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

void nfqbpy_link_add(struct nfqbpy_link **head, struct nfqbpy_link *l);
void nfqbpy_link_del(struct nfqbpy_link **head, struct nfqbpy_link *l);

PyObject *nfqbpy_oserror(int err, const char *what);
PyObject *nfqbpy_oserror_text(int err, const char *text);
int nfqbpy_u32(PyObject *o, const char *name, uint32_t *out);
int nfqbpy_conv_u32(PyObject *o, void *out);
int nfqbpy_verdict_arg(PyObject *o, uint32_t *out);
PyObject *nfqbpy_stats_dict(const struct nfqb_stats *st);

#endif /* NFQBPY_UTIL_H */
