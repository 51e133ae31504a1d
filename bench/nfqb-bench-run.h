/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: one run, in a network namespace of its own. */
#ifndef NFQB_BENCH_RUN_H
#define NFQB_BENCH_RUN_H

#include "nfqb-bench-types.h"

/* one run of consumer @kind as @cfg says, into @res (shared memory): 0, or
 * -1 if it failed (res->failed, res->err) */
int bench_run(const struct bench_cfg *cfg, enum bench_kind kind,
	      struct bench_result *res);
/* the id of the raw_syscalls:sys_enter tracepoint, -1 if none */
int bench_find_sys_enter_id(void);

#endif /* NFQB_BENCH_RUN_H */
