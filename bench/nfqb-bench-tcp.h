/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: TCP bulk through the queue with iperf3. */
#ifndef NFQB_BENCH_TCP_H
#define NFQB_BENCH_TCP_H

#include "nfqb-bench-types.h"

/* iperf3 in the run's namespace, results into @res: 0, or -1 with
 * res->err set */
int bench_tcp(const struct bench_cfg *cfg, const volatile int *abort_flag,
	      struct bench_result *res);

#endif /* NFQB_BENCH_TCP_H */
