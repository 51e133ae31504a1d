/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the same application binary on two libraries (app, app-old). */
#ifndef NFQB_BENCH_EXT_H
#define NFQB_BENCH_EXT_H

#include "nfqb-bench-types.h"

int bench_app(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_app_old(const struct bench_cfg *cfg, struct bench_cons *c);

#endif /* NFQB_BENCH_EXT_H */
