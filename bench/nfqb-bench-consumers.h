/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the consumers, one row each. */
#ifndef NFQB_BENCH_CONSUMERS_H
#define NFQB_BENCH_CONSUMERS_H

#include <stdbool.h>

#include "nfqb-bench-types.h"

struct bench_consumer {
	const char *name;		/* for --consumers and JSON */
	const char *label;		/* for the table */
	unsigned int queues;		/* 0: no rule */
	bool drops;			/* mixed decisions */
	bool marks;
	int (*run)(const struct bench_cfg *cfg, struct bench_cons *c);
};

extern const struct bench_consumer bench_consumers[BENCH_NKINDS];

#endif /* NFQB_BENCH_CONSUMERS_H */
