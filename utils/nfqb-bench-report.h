/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the tables of an invocation's result, by scenario. */
#ifndef NFQB_BENCH_REPORT_H
#define NFQB_BENCH_REPORT_H

#include <stdio.h>

#include "nfqb-bench-stats.h"

void bench_print_ratios(FILE *f, const struct bench_set *s, int scen);
void bench_print_tcp(FILE *f, const struct bench_set *s);
void bench_print_latency(FILE *f, const struct bench_set *s);
void bench_print_targets_new(FILE *f, const struct bench_set *s);
/* the Python consumers against python-netfilterqueue */
void bench_print_py(FILE *f, const struct bench_set *s);

#endif /* NFQB_BENCH_REPORT_H */
