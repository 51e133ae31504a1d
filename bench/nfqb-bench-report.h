/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the tables of an invocation's result, by scenario. */
#ifndef NFQB_BENCH_REPORT_H
#define NFQB_BENCH_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "nfqb-bench-opts.h"
#include "nfqb-bench-stats.h"

/* "nfqb-bench, libnfq-batch VERSION, DATE, kernel RELEASE, N CPUs" */
void bench_title(char *buf, size_t len);
/* the text result's first line: the title, the rule's chain, nice, --rt */
void bench_print_header(FILE *f, const struct bench_opts *o);
void bench_print_ratios(FILE *f, const struct bench_set *s, int scen);
void bench_print_tcp(FILE *f, const struct bench_set *s);
void bench_print_latency(FILE *f, const struct bench_set *s);
void bench_print_targets_new(FILE *f, const struct bench_set *s);
/* the Python consumers against python-netfilterqueue */
void bench_print_py(FILE *f, const struct bench_set *s);
/* nfqb-bench-app on this library against another build (app, app-old) */
void bench_print_app(FILE *f, const struct bench_set *s);

#endif /* NFQB_BENCH_REPORT_H */
