/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the machine-readable result (--json, --save). */
#ifndef NFQB_BENCH_JSON_H
#define NFQB_BENCH_JSON_H

#include <stdio.h>

#include "nfqb-bench-stats.h"

/* @str as a JSON string, quoted */
void bench_json_str(FILE *f, const char *str);
/* the members of the top-level object by scenario, each followed by
 * ",\n" */
void bench_json_extra(FILE *f, const struct bench_set *s);

#endif /* NFQB_BENCH_JSON_H */
