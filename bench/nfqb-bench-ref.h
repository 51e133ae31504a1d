/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the reference consumers, without libnfq-batch. */
#ifndef NFQB_BENCH_REF_H
#define NFQB_BENCH_REF_H

#include "nfqb-bench-types.h"

/* libnetfilter_queue, a verdict per packet */
int bench_ref_a(const struct bench_cfg *cfg, struct bench_cons *c);
/* libmnl, hand-written verdict batches */
int bench_ref_b(const struct bench_cfg *cfg, struct bench_cons *c);

#endif /* NFQB_BENCH_REF_H */
