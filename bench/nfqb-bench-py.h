/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the Python consumers. */
#ifndef NFQB_BENCH_PY_H
#define NFQB_BENCH_PY_H

#include "nfqb-bench-types.h"

int bench_py_nfq(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_py_compat(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_py_batch(const struct bench_cfg *cfg, struct bench_cons *c);

#endif /* NFQB_BENCH_PY_H */
