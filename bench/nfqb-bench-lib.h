/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the libnfq-batch consumers. */
#ifndef NFQB_BENCH_LIB_H
#define NFQB_BENCH_LIB_H

#include "nfqb-bench-types.h"

int bench_lib(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_mixed(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_pool2(const struct bench_cfg *cfg, struct bench_cons *c);

#endif /* NFQB_BENCH_LIB_H */
