/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb.netfilterqueue.NetfilterQueue (compat.c): python-netfilterqueue
 * 1.1's API over a struct pyq (queue.h) and its packets (packet.h).
 */
#ifndef NFQBPY_COMPAT_H
#define NFQBPY_COMPAT_H

#include "queue.h"

extern PyTypeObject NfqbPy_CompatType;

int compat_module_init(PyObject *m);

#endif /* NFQBPY_COMPAT_H */
