/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: request/response through the queue, optionally under load. */
#ifndef NFQB_BENCH_PING_H
#define NFQB_BENCH_PING_H

#include "nfqb-bench-types.h"

/* request/response (and load), results into @res: 0, or -1 with res->err
 * set */
int bench_ping(const struct bench_cfg *cfg, const volatile int *abort_flag,
	       struct bench_result *res);

#endif /* NFQB_BENCH_PING_H */
