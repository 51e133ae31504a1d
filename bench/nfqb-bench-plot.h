/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the picture, drawn by gnuplot (NFQB_BENCH_GNUPLOT names
 * another binary). */
#ifndef NFQB_BENCH_PLOT_H
#define NFQB_BENCH_PLOT_H

#include "nfqb-bench-stats.h"

struct bench_plot_row {
	char panel[8];			/* tcp, udp, p50, p99 */
	char series[48];
	char consumer[16];
	double value, min, max;
};

unsigned int bench_plot_rows(const struct bench_set *s,
			     struct bench_plot_row *rows, unsigned int max);
int bench_plot(const char *png, const char *title,
	       const struct bench_plot_row *rows, unsigned int n);
/* draw a saved --json result into @png */
int bench_replot(const char *json_path, const char *png);

#endif /* NFQB_BENCH_PLOT_H */
