/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the command line. */
#ifndef NFQB_BENCH_OPTS_H
#define NFQB_BENCH_OPTS_H

#include <stdbool.h>

#include "nfqb-bench-scen.h"
#include "nfqb-bench-types.h"

struct bench_opts {
	struct bench_cfg cfg;		/* first (see nfqb-bench-opts.c) */
	struct bench_plan plan;
	bool quick;
	bool json;
	bool memcheck;
	bool kinds_set;			/* --consumers given */
	bool syscount;
	double noise_pct;
	const char *plot;		/* PNG to draw */
	const char *replot;		/* --json file to draw from */
	const char *save;		/* --save: the --json result too */
};

/* Fill @o from the command line. Exits after --help (0), or with a message
 * on a bad one (2). */
void bench_parse_opts(int argc, char **argv, struct bench_opts *o);

#endif /* NFQB_BENCH_OPTS_H */
