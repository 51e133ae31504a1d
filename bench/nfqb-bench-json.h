/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the machine-readable result (--json, --save). */
#ifndef NFQB_BENCH_JSON_H
#define NFQB_BENCH_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "nfqb-bench-opts.h"
#include "nfqb-bench-stats.h"
#include "nfqb-bench-udp.h"

/* @str as a JSON string, quoted */
void bench_json_str(FILE *f, const char *str);
/* the members of the top-level object by scenario, each followed by
 * ",\n" */
void bench_json_extra(FILE *f, const struct bench_set *s);

/* "{", the tool, @mode, the library, the date, the kernel and the
 * configuration, each member followed by ",\n" */
void bench_json_header(FILE *f, const struct bench_opts *o, const char *mode);
/* one element of "runs" */
void bench_json_run(FILE *f, const struct bench_result *r, bool last);
/* the whole result of the compare mode */
void bench_json_compare(FILE *f, const struct bench_opts *o,
			const struct bench_set *set,
			const struct bench_summary *sum, unsigned int nsum,
			unsigned int bad_runs);

#endif /* NFQB_BENCH_JSON_H */
