/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: what one invocation runs (its modes, consumers, repetitions
 * and the lists its scenarios are made of) and the running of it, every
 * run into the invocation's set of results.
 */
#ifndef NFQB_BENCH_SCEN_H
#define NFQB_BENCH_SCEN_H

#include <signal.h>
#include <stdint.h>

#include "nfqb-bench-stats.h"
#include "nfqb-bench-types.h"

#define BENCH_MAX_SIZES		8
#define BENCH_MAX_LIST		8

/* the modes (--mode), in the order they run */
enum bench_mode {
	BENCH_MODE_STREAM,		/* UDP, the traffic keeping a window */
	BENCH_MODE_DRAIN,		/* UDP, the consumer saturated */
	BENCH_MODE_TCP,			/* iperf3 */
	BENCH_MODE_LATENCY,		/* request/response, idle and loaded */
	BENCH_NMODES,
};

#define BENCH_MODE(m)		(1u << (m))
#define BENCH_MODES_UDP		(BENCH_MODE(BENCH_MODE_STREAM) | \
				 BENCH_MODE(BENCH_MODE_DRAIN))
#define BENCH_MODES_ALL		((1u << BENCH_NMODES) - 1)

/* What one invocation runs, apart from each run's configuration. */
struct bench_plan {
	unsigned int modes;			/* BENCH_MODE() bits */
	enum bench_kind kinds[BENCH_NKINDS];	/* as asked, in order */
	unsigned int nkinds;
	unsigned int reps;
	unsigned int sizes[BENCH_MAX_SIZES];	/* UDP payloads */
	unsigned int nsizes;
	unsigned int tcp_flows[BENCH_MAX_LIST];	/* iperf3 -P values */
	unsigned int ntcp_flows;
	int gso[3];				/* -1 default, 0 off, 1 on */
	unsigned int ngso;
	unsigned int load_pct[BENCH_MAX_LIST];	/* % of ref A's rate */
	unsigned int nload_pct;
	unsigned int load_pps[BENCH_MAX_LIST];	/* fixed rates instead */
	unsigned int nload_pps;
	uint64_t calib_packets;			/* the load's calibration */
};

/* set on SIGINT and SIGTERM: no further run starts */
extern volatile sig_atomic_t bench_interrupted;

/* the name of mode @m (--mode, JSON) */
const char *bench_mode_name(enum bench_mode m);
/* does @p run mode @m? */
bool bench_plan_has(const struct bench_plan *p, enum bench_mode m);
/* how many runs @p makes at most (@sys_enter_id >= 0: with the untimed
 * syscall-counting runs) */
unsigned int bench_plan_runs(const struct bench_plan *p, int sys_enter_id);
/*
 * Run every scenario of @p with @cfg (changed per scenario in a copy),
 * into @set, whose results have room for @cap runs. Returns the number of
 * runs that failed.
 */
unsigned int bench_run_plan(const struct bench_plan *p,
			    const struct bench_cfg *cfg, struct bench_set *set,
			    unsigned int cap);
/* the progress line of run @i of @n (on a terminal: one line, redrawn);
 * @set names its scenario */
void bench_progress(unsigned int i, unsigned int n,
		    const struct bench_result *r, const struct bench_set *set);

#endif /* NFQB_BENCH_SCEN_H */
