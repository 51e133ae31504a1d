/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: what one invocation measured (every run, by scenario and
 * consumer), its statistics and the targets of the TCP and latency modes.
 */
#ifndef NFQB_BENCH_STATS_H
#define NFQB_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "nfqb-bench-types.h"

/* A scenario: what was run, apart from the consumer and the repetition. */
struct bench_scen {
	enum bench_work work;
	bool drain;			/* UDP: drain mode */
	unsigned int payload;		/* UDP stream/drain */
	unsigned int streams;		/* TCP: iperf3 -P */
	int gso;			/* TCP: -1 default, 0 off, 1 on */
	double load_pct;		/* ping: % of ref A's rate, 0: idle */
	double load_pps;		/* ping: load, 0: idle */
	char name[48];
};

#define BENCH_MAX_SCEN		64

struct bench_set {
	struct bench_result *res;
	unsigned int nres;
	struct bench_scen scen[BENCH_MAX_SCEN];
	unsigned int nscen;
	enum bench_kind kinds[BENCH_NKINDS];	/* as asked, in order */
	unsigned int nkinds;
	unsigned int reps;
	double noise_pct;		/* spread of a reference that is noisy */
	const struct bench_cfg *cfg;	/* as for the last run */
	unsigned int ping_warmup;
	/* latency under load */
	double calib_pps;		/* ref A's streaming rate, 0: none */
	int calib_run;			/* its index in res, -1: none */
	bool load_fixed;		/* rates given with --load-pps */
};

enum bench_metric {
	BM_PPS,			/* UDP: datagrams/s */
	BM_CPU_NS,		/* UDP: consumer CPU ns per datagram */
	BM_GBPS,		/* TCP: Gbit/s received */
	BM_CPU_GBIT,		/* TCP: consumer CPU ms per Gbit */
	BM_P50, BM_P99, BM_P999, BM_MAX,	/* ping: us */
	BM_LOAD_PPS,		/* ping: achieved load */
	BM_GSO_PCT,		/* TCP: % of queued packets marked GSO */
	BM_PKT_BYTES,		/* TCP: bytes per queued packet */
	BM_RETRANS,		/* TCP: sender's retransmits */
	BM_TRAFFIC_CPU,		/* TCP: iperf3 processes' CPU ms per Gbit */
	BM_QDROP,		/* TCP: packets the kernel queue dropped */
};

struct bench_stat {
	unsigned int n;
	double med, min, max;
};

struct bench_target {
	char name[64];
	double value, vmin, vmax;	/* median and spread of paired values */
	double limit;
	bool le;			/* value <= limit is met; else >= */
	bool known;
};

/* the references, whose noise is judged: kernel, ref A, ref B */
#define BENCH_NREFS		3
extern const enum bench_kind bench_refs[BENCH_NREFS];

int bench_scen_add(struct bench_set *s, const struct bench_scen *sc);
bool bench_metric(const struct bench_result *r, enum bench_metric m,
		  double *v);
struct bench_stat bench_stat_of(const struct bench_set *s, int scen,
				enum bench_kind k, enum bench_metric m);
struct bench_stat bench_paired(const struct bench_set *s, int scen,
			       enum bench_kind k, enum bench_kind ref,
			       enum bench_metric m, bool diff);
double bench_median(double *v, unsigned int n);
/* (max - min) / median in percent, -1 if fewer than 2 runs */
double bench_spread_pct(const struct bench_stat *st);
bool bench_has_kind(const struct bench_set *s, enum bench_kind k);
/* "median (min..max)", "-" without runs; @prec digits (-1: automatic) */
void bench_fmt_stat(char *buf, size_t len, const struct bench_stat *st,
		    int prec);
unsigned int bench_targets_new(const struct bench_set *s,
			       struct bench_target *t, unsigned int max);
bool bench_target_met(const struct bench_target *t);

#endif /* NFQB_BENCH_STATS_H */
