/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: statistics over every run of an invocation, by scenario
 * (what was run) and consumer.
 *
 * Ratios are paired: within one repetition the consumers run one after the
 * other (the order rotating from repetition to repetition), so a ratio is
 * taken between the runs of the same repetition, and its median and range
 * over the repetitions are reported. A reference whose own runs spread by
 * more than the noise limit ((max - min) / median) makes the ratios against
 * it unreliable: the reports say so next to the figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-stats.h"

const enum bench_kind bench_refs[BENCH_NREFS] = { BENCH_KERNEL, BENCH_REF_A,
						  BENCH_REF_B };

int bench_scen_add(struct bench_set *s, const struct bench_scen *sc)
{
	if (s->nscen == BENCH_MAX_SCEN)
		return -1;
	s->scen[s->nscen] = *sc;
	return (int)s->nscen++;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool has_consumer(const struct bench_result *r)
{
	return bench_consumers[r->kind].queues > 0;
}

bool bench_metric(const struct bench_result *r, enum bench_metric m,
		  double *v)
{
	double cons = (double)(r->cons_user_ns + r->cons_sys_ns);
	double gbit = r->tcp_bytes * 8 / 1e9;

	switch (m) {
	case BM_PPS:
		*v = r->pps;
		return r->work == BENCH_WORK_UDP && r->sent && r->elapsed > 0;
	case BM_CPU_NS:
		*v = r->sent ? cons / (double)r->sent : 0;
		return r->work == BENCH_WORK_UDP && r->sent && has_consumer(r);
	case BM_GBPS:
		*v = r->gbps;
		return r->work == BENCH_WORK_TCP && r->tcp_bytes;
	case BM_CPU_GBIT:
		*v = gbit > 0 ? cons / 1e6 / gbit : 0;
		return r->work == BENCH_WORK_TCP && gbit > 0 &&
		       has_consumer(r);
	case BM_TRAFFIC_CPU:
		*v = gbit > 0 ? (r->traffic_user_ns + r->traffic_sys_ns) /
				1e6 / gbit : 0;
		return r->work == BENCH_WORK_TCP && gbit > 0;
	case BM_P50:
		*v = r->lat_p50;
		return r->pings > 0;
	case BM_P99:
		*v = r->lat_p99;
		return r->pings > 0;
	case BM_P999:
		*v = r->lat_p999;
		return r->pings > 0;
	case BM_MAX:
		*v = r->lat_max;
		return r->pings > 0;
	case BM_LOAD_PPS:
		*v = r->load_pps;
		return r->load_sent > 0;
	case BM_GSO_PCT:
		*v = r->cons.packets ? 100.0 * r->cons.gso_packets /
				       r->cons.packets : 0;
		return r->work == BENCH_WORK_TCP && r->cons.packets;
	case BM_PKT_BYTES:
		*v = r->cons.packets ? (double)r->cons.bytes / r->cons.packets :
				       0;
		return r->work == BENCH_WORK_TCP && r->cons.packets;
	case BM_RETRANS:
		*v = (double)r->retransmits;
		return r->work == BENCH_WORK_TCP && r->tcp_bytes;
	case BM_QDROP:
		*v = (double)(r->kq_dropped + r->kq_user_dropped);
		return r->work == BENCH_WORK_TCP && r->tcp_bytes &&
		       has_consumer(r);
	}
	return false;
}

/* a run that counts for the statistics of its scenario */
static bool usable(const struct bench_result *r)
{
	if (!r->done || !r->timed || r->calibration)
		return false;
	return r->work == BENCH_WORK_UDP || !r->failed;
}

/* the median and range of @v (sorted) */
static struct bench_stat stat_from(double *v, unsigned int n)
{
	struct bench_stat st = { .n = n };

	if (!n)
		return st;
	st.med = bench_median(v, n);
	st.min = v[0];
	st.max = v[n - 1];
	return st;
}

struct bench_stat bench_stat_of(const struct bench_set *s, int scen,
				enum bench_kind k, enum bench_metric m)
{
	struct bench_stat st = { 0 };
	double v[s->nres + 1];
	unsigned int i;

	for (i = 0; i < s->nres; i++) {
		const struct bench_result *r = &s->res[i];

		if (r->scen != scen || r->kind != k || !usable(r) ||
		    !bench_metric(r, m, &v[st.n]))
			continue;
		st.n++;
	}
	return stat_from(v, st.n);
}

struct bench_stat bench_paired(const struct bench_set *s, int scen,
			       enum bench_kind k, enum bench_kind ref,
			       enum bench_metric m, bool diff)
{
	struct bench_stat st = { 0 };
	double v[s->nres + 1];
	unsigned int i, j;

	for (i = 0; i < s->nres; i++) {
		const struct bench_result *x = &s->res[i];
		double a, b;

		if (x->scen != scen || x->kind != k || !usable(x) ||
		    !bench_metric(x, m, &a))
			continue;
		for (j = 0; j < s->nres; j++) {
			const struct bench_result *y = &s->res[j];

			if (y->scen == scen && y->kind == ref &&
			    y->rep == x->rep && usable(y) &&
			    bench_metric(y, m, &b))
				break;
		}
		if (j == s->nres || (!diff && b <= 0))
			continue;
		v[st.n++] = diff ? a - b : a / b;
	}
	return stat_from(v, st.n);
}

double bench_spread_pct(const struct bench_stat *st)
{
	if (st->n < 2 || st->med <= 0)
		return -1;
	return 100.0 * (st->max - st->min) / st->med;
}

bool bench_has_kind(const struct bench_set *s, enum bench_kind k)
{
	unsigned int i;

	for (i = 0; i < s->nkinds; i++)
		if (s->kinds[i] == k)
			return true;
	return false;
}

static void fmt_num(char *buf, size_t len, double v, int prec)
{
	if (prec < 0)		/* automatic: 3 significant digits or more */
		prec = fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2;
	snprintf(buf, len, "%.*f", prec, v);
}

void bench_fmt_stat(char *buf, size_t len, const struct bench_stat *st,
		    int prec)
{
	char a[16], b[16], c[16];

	if (!st->n) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(a, sizeof(a), st->med, prec);
	if (st->n == 1) {
		snprintf(buf, len, "%s", a);
		return;
	}
	fmt_num(b, sizeof(b), st->min, prec);
	fmt_num(c, sizeof(c), st->max, prec);
	snprintf(buf, len, "%s (%s..%s)", a, b, c);
}

static void target(struct bench_target *t, const char *name,
		   struct bench_stat st, double limit, bool le)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->known = st.n > 0;
	t->value = st.med;
	t->vmin = st.min;
	t->vmax = st.max;
	t->limit = limit;
	t->le = le;
}

unsigned int bench_targets_new(const struct bench_set *s,
			       struct bench_target *t, unsigned int max)
{
	unsigned int si, i, n = 0, tcp_runs = 0;
	unsigned long long drops = 0;
	char name[64];

	for (i = 0; i < s->nres; i++) {
		const struct bench_result *r = &s->res[i];

		if (r->work == BENCH_WORK_TCP && r->timed) {
			tcp_runs++;
			drops += r->kq_dropped + r->kq_user_dropped;
		}
	}
	if (tcp_runs && n < max) {
		struct bench_stat st = { .n = 1, .med = (double)drops,
					 .min = (double)drops,
					 .max = (double)drops };

		target(&t[n++], "TCP: packets dropped by the queue, all runs",
		       st, 0, true);
	}
	for (si = 0; si < s->nscen && n < max; si++) {
		const struct bench_scen *sc = &s->scen[si];

		if (sc->work == BENCH_WORK_TCP &&
		    (sc->streams == 1 || sc->streams == 8)) {
			snprintf(name, sizeof(name),
				 "TCP lib Gbit/s vs ref A, %s", sc->name);
			target(&t[n++], name,
			       bench_paired(s, si, BENCH_LIB, BENCH_REF_A,
					    BM_GBPS, false), sc->streams == 1 ?
			       1.0 : 1.3, false);
		} else if (sc->work == BENCH_WORK_PING_UDP ||
			   sc->work == BENCH_WORK_PING_TCP) {
			snprintf(name, sizeof(name),
				 "p99 lib - ref A (us), %s", sc->name);
			target(&t[n++], name,
			       bench_paired(s, si, BENCH_LIB, BENCH_REF_A,
					    BM_P99, true), 50, true);
		}
	}
	return n;
}

bool bench_target_met(const struct bench_target *t)
{
	return t->known && (t->le ? t->value <= t->limit :
			    t->value >= t->limit);
}
