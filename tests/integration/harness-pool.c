// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration test harness: the worker pool (see harness.h). A file of its
 * own: a test that does not use the pool links without it (and without
 * liburcu, which the pool needs, when it links the internal library).
 */
#include <errno.h>
#include <string.h>

#include "harness.h"

/* --- The worker pool ---------------------------------------------------- */

struct nfqb_pool *nfqbt_pool_start(const struct nfqb_pool_config *cfg)
{
	struct nfqb_pool *pool = nfqb_pool_create(cfg, sizeof(*cfg));

	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_msg(nfqb_pool_start(pool) == 0, "nfqb_pool_start: %s",
		      strerror(errno));
	return pool;
}

void nfqbt_pool_stop(struct nfqb_pool *pool)
{
	nfqb_pool_stop(pool);
	ck_assert_msg(nfqb_pool_wait(pool) == 0, "nfqb_pool_wait: %s",
		      strerror(errno));
}
