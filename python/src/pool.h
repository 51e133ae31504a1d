/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb.Pool (pool.c): struct pypool, one struct nfqb_pool; Python
 * callbacks run on the pool's threads, each taking the GIL for one
 * packet. Above the packets (packet.h), beside the queues: a pool uses no
 * nfqb.Queue.
 */
#ifndef NFQBPY_POOL_H
#define NFQBPY_POOL_H

#include "packet.h"

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

extern PyTypeObject NfqbPy_PoolType;

void pool_close_all(void);
int pool_module_init(PyObject *m);

#endif /* NFQBPY_POOL_H */
