/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the UDP modes' result (stream and drain). */
#ifndef NFQB_BENCH_UDP_H
#define NFQB_BENCH_UDP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nfqb-bench-opts.h"
#include "nfqb-bench-stats.h"

/* one line of a table: medians over the repetitions */
struct bench_summary {
	enum bench_kind kind;
	unsigned int payload;
	bool drain;
	unsigned int runs;
	double pps, pps_min, pps_max;
	double cpu_ns, user_ns, sys_ns;		/* consumer, per packet */
	double cpu_min, cpu_max;
	double traffic_ns;			/* traffic process, per packet */
	double sc_pkt;				/* kernel-counted syscalls */
	double sc_self_pkt;			/* consumer-counted */
	double vmsg_pkt;
	double util_t, util_c;			/* process CPU / elapsed, % */
	double busy_t, busy_c;			/* /proc/stat CPU busy, % */
	uint64_t lost;
	unsigned int failed;
};

/* the summaries of every (payload, mode, consumer) that @o ran, in the
 * order of the tables; their number (at most BENCH_MAX_SIZES * 2 *
 * BENCH_NKINDS) */
unsigned int bench_summarize(const struct bench_opts *o,
			     const struct bench_set *set,
			     struct bench_summary *sum);
/* the summary of @kind, NULL if it has no timed run */
const struct bench_summary *bench_find_sum(const struct bench_summary *s,
					   unsigned int n,
					   enum bench_kind kind,
					   unsigned int payload, bool drain);
/* the targets of the 64-byte runs, into @t (room for 16): how many */
unsigned int bench_udp_targets(const struct bench_summary *sum,
			       unsigned int nsum, struct bench_target *t);
/* the streaming and drain tables, and what they mean */
void bench_print_udp(FILE *f, const struct bench_opts *o,
		     const struct bench_summary *sum, unsigned int nsum,
		     const struct bench_set *set);
/* the targets (the 64-byte runs' if @udp), zero loss and saturation */
void bench_print_udp_targets(FILE *f, const struct bench_summary *sum,
			     unsigned int nsum, unsigned int bad_runs,
			     bool udp);

#endif /* NFQB_BENCH_UDP_H */
