/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: statistics and reports over every run of an invocation, by
 * scenario (what was run) and consumer.
 *
 * Ratios are paired: within one repetition the consumers run one after the
 * other (the order rotating from repetition to repetition), so a ratio is
 * taken between the runs of the same repetition, and its median and range
 * over the repetitions are reported. A reference whose own runs spread by
 * more than the noise limit ((max - min) / median) makes the ratios against
 * it unreliable: that is said next to the figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfqb-bench.h"

static const enum bench_kind refs[] = { BENCH_KERNEL, BENCH_REF_A,
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
	if (!st.n)
		return st;
	st.med = bench_median(v, st.n);
	st.min = v[0];
	st.max = v[st.n - 1];
	return st;
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
	if (!st.n)
		return st;
	st.med = bench_median(v, st.n);
	st.min = v[0];
	st.max = v[st.n - 1];
	return st;
}

/* (max - min) / median in percent, -1 if fewer than 2 runs */
static double spread_pct(const struct bench_stat *st)
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

/* --- formatting ----------------------------------------------------------- */

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

static void print_noise(FILE *f, const struct bench_set *s, int scen,
			const enum bench_metric *m, const char *const *mname,
			unsigned int nm)
{
	unsigned int i, j;
	bool few = false;

	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		if (!bench_has_kind(s, refs[i]))
			continue;
		for (j = 0; j < nm; j++) {
			struct bench_stat st = bench_stat_of(s, scen, refs[i],
							      m[j]);
			double sp = spread_pct(&st);

			if (st.n && st.n < 2)
				few = true;
			if (sp > s->noise_pct)
				fprintf(f, "  noisy: %s, %s spread %.0f%% over "
					"%u runs (limit %.0f%%): ratios against "
					"it do not hold\n",
					bench_consumers[refs[i]].label,
					mname[j], sp, st.n, s->noise_pct);
		}
	}
	if (few)
		fprintf(f, "  (one run per consumer: no spread, noise not "
			"judged)\n");
}

/*
 * After a UDP streaming or drain table: the ratios of every consumer to ref
 * A and ref B, paired per repetition, and the noise of the references.
 */
void bench_print_ratios(FILE *f, const struct bench_set *s, int scen)
{
	const struct bench_scen *sc = &s->scen[scen];
	static const char *const names[] = { "pkt/s", "CPU/pkt" };
	enum bench_metric ms[2] = { BM_PPS, BM_CPU_NS };
	unsigned int i, first = sc->drain ? 1 : 0;

	fprintf(f, "ratios per repetition, median (min..max):\n");
	for (i = 0; i < s->nkinds; i++) {
		enum bench_kind k = s->kinds[i];
		char a[64], b[64], c[64], d[64];
		struct bench_stat st;

		if (k == BENCH_REF_A || !bench_consumers[k].queues)
			continue;
		st = bench_paired(s, scen, k, BENCH_REF_A, BM_CPU_NS, false);
		bench_fmt_stat(a, sizeof(a), &st, 2);
		st = bench_paired(s, scen, k, BENCH_REF_B, BM_CPU_NS, false);
		bench_fmt_stat(b, sizeof(b), &st, 2);
		if (sc->drain) {
			fprintf(f, "  %-22s CPU/pkt xA %-18s xB %s\n",
				bench_consumers[k].label, a,
				k == BENCH_REF_B ? "1" : b);
			continue;
		}
		st = bench_paired(s, scen, k, BENCH_REF_A, BM_PPS, false);
		bench_fmt_stat(c, sizeof(c), &st, 2);
		st = bench_paired(s, scen, k, BENCH_REF_B, BM_PPS, false);
		bench_fmt_stat(d, sizeof(d), &st, 2);
		fprintf(f, "  %-22s CPU/pkt xA %-18s xB %-18s | pkt/s xA %-18s xB %s\n",
			bench_consumers[k].label, a,
			k == BENCH_REF_B ? "1" : b, c,
			k == BENCH_REF_B ? "1" : d);
	}
	print_noise(f, s, scen, ms + first, names + first, 2 - first);
}

/* --- TCP ------------------------------------------------------------------ */

static const char *gso_name(int gso)
{
	return gso < 0 ? "default" : gso ? "on" : "off";
}

void bench_print_tcp(FILE *f, const struct bench_set *s)
{
	static const char *const names[] = { "Gbit/s", "CPU/Gbit" };
	enum bench_metric ms[2] = { BM_GBPS, BM_CPU_GBIT };
	const struct bench_cfg *cfg = s->cfg;
	unsigned int si, i;

	fprintf(f, "\nTCP bulk through the queue: iperf3 -t %u, %u reps, "
		"loopback MTU %u, rule %s -p tcp --dport %u%s, CPU %d iperf3 "
		"/ %d consumer\n", cfg->tcp_time, s->reps, cfg->mtu,
		cfg->hook == BENCH_HOOK_OUTPUT ? "OUTPUT" : "INPUT",
		BENCH_TCP_PORT, cfg->both_ways ? " and --sport (both ways)" :
		" (client to server only)", cfg->cpu_traffic,
		cfg->cpu_consumer);
	fprintf(f, "%-26s %-24s %-18s | %-22s %-18s | %5s %6s %6s %6s | %s\n",
		"consumer", "Gbit/s median (min..max)", "xA", "CPU ms/Gbit",
		"xA", "GSO%", "B/pkt", "retr", "qdrop", "fail");
	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];

		if (sc->work != BENCH_WORK_TCP)
			continue;
		fprintf(f, "%s\n", sc->name);
		for (i = 0; i < s->nkinds; i++) {
			enum bench_kind k = s->kinds[i];
			char g[64], gr[64], c[64], cr[64];
			struct bench_stat st, gso, pb, re;
			unsigned int j, fails = 0;
			unsigned long long qd = 0;

			if (!BENCH_KIND_ANY_TRAFFIC(k))
				continue;
			for (j = 0; j < s->nres; j++) {
				const struct bench_result *r = &s->res[j];

				if (r->scen != (int)si || r->kind != k)
					continue;
				if (r->failed)
					fails++;
				qd += r->kq_dropped + r->kq_user_dropped;
			}
			st = bench_stat_of(s, si, k, BM_GBPS);
			bench_fmt_stat(g, sizeof(g), &st, 2);
			st = bench_paired(s, si, k, BENCH_REF_A, BM_GBPS, false);
			bench_fmt_stat(gr, sizeof(gr), &st, 2);
			st = bench_stat_of(s, si, k, BM_CPU_GBIT);
			bench_fmt_stat(c, sizeof(c), &st, -1);
			st = bench_paired(s, si, k, BENCH_REF_A, BM_CPU_GBIT,
					  false);
			bench_fmt_stat(cr, sizeof(cr), &st, 2);
			gso = bench_stat_of(s, si, k, BM_GSO_PCT);
			pb = bench_stat_of(s, si, k, BM_PKT_BYTES);
			re = bench_stat_of(s, si, k, BM_RETRANS);
			fprintf(f, "  %-24s %-24s %-18s | %-22s %-18s | ",
				bench_consumers[k].label, g,
				k == BENCH_REF_A ? "1" : gr, c,
				k == BENCH_REF_A ? "1" : cr);
			if (gso.n)
				fprintf(f, "%4.0f%% %6.0f", gso.med, pb.med);
			else
				fprintf(f, "%5s %6s", "-", "-");
			fprintf(f, " %6.0f %6llu | %u\n", re.n ? re.med : 0, qd,
				fails);
		}
		print_noise(f, s, si, ms, names, 2);
	}
	fprintf(f, "Gbit/s: iperf3's receiver rate. CPU ms/Gbit: CPU time "
		"(user+sys) of the consumer process over the run, all its "
		"threads, per gigabit received. GSO%%: queued packets the "
		"kernel marked GSO; B/pkt: bytes per queued packet. retr: the "
		"sender's retransmits (median). qdrop: packets the kernel queue dropped "
		"(full queue or socket), summed over the runs; TCP sends them "
		"again. xA: ratio to ref A within each "
		"repetition, median (min..max).\n");
}

/* --- latency ---------------------------------------------------------------- */

static void lat_title(char *buf, size_t len, const struct bench_set *s,
		      const struct bench_scen *sc)
{
	double v[s->nres + 1];
	unsigned int i, n = 0;
	int scen = (int)(sc - s->scen);

	if (sc->load_pps <= 0) {
		snprintf(buf, len, "%s", sc->name);
		return;
	}
	/* the rate the sender achieved, over every run of the scenario */
	for (i = 0; i < s->nres; i++)
		if (s->res[i].scen == scen && s->res[i].timed &&
		    bench_metric(&s->res[i], BM_LOAD_PPS, &v[n]))
			n++;
	if (sc->load_pct > 0)
		snprintf(buf, len, "%s: %.0f%% of ref A's %.0fk pkt/s = "
			 "%.0fk pkt/s of 64-byte datagrams (sent at %.0fk, "
			 "median)", sc->name, sc->load_pct, s->calib_pps / 1e3,
			 sc->load_pps / 1e3, bench_median(v, n) / 1e3);
	else
		snprintf(buf, len, "%s: %.0fk pkt/s of 64-byte datagrams "
			 "(sent at %.0fk, median)", sc->name,
			 sc->load_pps / 1e3, bench_median(v, n) / 1e3);
}

void bench_print_latency(FILE *f, const struct bench_set *s)
{
	static const char *const names[] = { "p99" };
	enum bench_metric ms[1] = { BM_P99 };
	const struct bench_cfg *cfg = s->cfg;
	unsigned int si, i;

	fprintf(f, "\nRequest/response through the queue: %u B each way, "
		"%u warm-up then up to %u round trips (%.0f s at most), %u "
		"reps; rules %s -p udp --dport %u:%u, -p tcp --dport %u%s; "
		"microseconds\n", cfg->ping_size, s->ping_warmup,
		cfg->ping_count, cfg->ping_time, s->reps,
		cfg->hook == BENCH_HOOK_OUTPUT ? "OUTPUT" : "INPUT",
		BENCH_LOAD_PORT, BENCH_PORT, BENCH_PING_PORT,
		cfg->both_ways ? ", and the responses (--sport)" :
		" (requests only)");
	if (s->calib_run >= 0) {
		const struct bench_result *r = &s->res[s->calib_run];

		fprintf(f, "load calibration: ref A streamed %llu 64-byte "
			"datagrams at %.0fk pkt/s%s%s\n",
			(unsigned long long)r->sent, r->pps / 1e3,
			r->failed ? ", FAILED: " : "", r->failed ? r->err : "");
	}
	fprintf(f, "%-26s %-22s %-22s %-20s %7s | %-18s | %-24s | %6s %4s\n",
		"consumer", "p50 median (min..max)", "p99 median (min..max)",
		"p99.9", "max", "p99 xA", "p99 - ref A", "rtts", "lost");
	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];
		char title[200];

		if (sc->work != BENCH_WORK_PING_UDP &&
		    sc->work != BENCH_WORK_PING_TCP)
			continue;
		lat_title(title, sizeof(title), s, sc);
		fprintf(f, "%s\n", title);
		for (i = 0; i < s->nkinds; i++) {
			enum bench_kind k = s->kinds[i];
			char p50[64], p99[64], p999[64], rr[64], dd[64];
			struct bench_stat st, mx;
			unsigned long long rtts = 0, lost = 0;
			unsigned int j, fails = 0;

			if (!BENCH_KIND_ANY_TRAFFIC(k))
				continue;
			for (j = 0; j < s->nres; j++) {
				const struct bench_result *r = &s->res[j];

				if (r->scen != (int)si || r->kind != k)
					continue;
				rtts += r->pings;
				lost += r->lost;
				if (r->failed)
					fails++;
			}
			st = bench_stat_of(s, si, k, BM_P50);
			bench_fmt_stat(p50, sizeof(p50), &st, 1);
			st = bench_stat_of(s, si, k, BM_P99);
			bench_fmt_stat(p99, sizeof(p99), &st, 1);
			st = bench_stat_of(s, si, k, BM_P999);
			bench_fmt_stat(p999, sizeof(p999), &st, 0);
			mx = bench_stat_of(s, si, k, BM_MAX);
			st = bench_paired(s, si, k, BENCH_REF_A, BM_P99, false);
			bench_fmt_stat(rr, sizeof(rr), &st, 2);
			st = bench_paired(s, si, k, BENCH_REF_A, BM_P99, true);
			bench_fmt_stat(dd, sizeof(dd), &st, 1);
			fprintf(f, "  %-24s %-22s %-22s %-20s %7.0f | %-18s | %-24s | %6llu %4llu%s\n",
				bench_consumers[k].label, p50, p99, p999,
				mx.n ? mx.med : 0, k == BENCH_REF_A ? "1" : rr,
				k == BENCH_REF_A ? "0" : dd, rtts, lost,
				fails ? " FAILED" : "");
		}
		print_noise(f, s, si, ms, names, 1);
	}
	fprintf(f, "Each round trip timed with CLOCK_MONOTONIC by the client; "
		"percentiles per run (nearest rank), then median (min..max) "
		"over the runs. xA and - ref A: paired within each "
		"repetition. rtts, lost: summed over the runs (lost: requests "
		"unanswered for 1 s, and load datagrams).\n");
}

/* --- targets of the TCP and latency modes ---------------------------------- */

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

static bool target_met(const struct bench_target *t)
{
	return t->known && (t->le ? t->value <= t->limit :
			    t->value >= t->limit);
}

void bench_print_targets_new(FILE *f, const struct bench_set *s)
{
	struct bench_target t[BENCH_MAX_SCEN];
	unsigned int i, n = bench_targets_new(s, t, BENCH_MAX_SCEN);

	if (!n)
		return;
	fprintf(f, "\ntargets of TCP and latency (lib = the library with its "
		"defaults; paired medians (min..max)):\n");
	for (i = 0; i < n; i++) {
		if (!t[i].known) {
			fprintf(f, "  %-48s    -   (%s %.2f)  not measured\n",
				t[i].name, t[i].le ? "<=" : ">=", t[i].limit);
			continue;
		}
		fprintf(f, "  %-48s %7.2f (%.2f..%.2f) (%s %.2f)  %s\n",
			t[i].name, t[i].value, t[i].vmin, t[i].vmax,
			t[i].le ? "<=" : ">=", t[i].limit,
			target_met(&t[i]) ? "met" : "NOT met");
	}
}

/* --- JSON ---------------------------------------------------------------- */

void bench_json_str(FILE *f, const char *str)
{
	fputc('"', f);
	for (; *str; str++) {
		if (*str == '"' || *str == '\\')
			fprintf(f, "\\%c", *str);
		else if ((unsigned char)*str < 0x20)
			fprintf(f, "\\u%04x", *str);
		else
			fputc(*str, f);
	}
	fputc('"', f);
}

static const char *work_name(enum bench_work w, bool drain)
{
	switch (w) {
	case BENCH_WORK_TCP:
		return "tcp";
	case BENCH_WORK_PING_UDP:
		return "ping-udp";
	case BENCH_WORK_PING_TCP:
		return "ping-tcp";
	case BENCH_WORK_UDP:
	default:
		return drain ? "drain" : "stream";
	}
}

static void json_stat(FILE *f, const char *key, const struct bench_stat *st)
{
	fprintf(f, "\"%s\": {\"n\": %u, \"median\": %.6g, \"min\": %.6g, "
		"\"max\": %.6g}", key, st->n, st->med, st->min, st->max);
}

static const struct {
	enum bench_metric m;
	const char *name;
} json_metrics[] = {
	{ BM_PPS, "pps" }, { BM_CPU_NS, "cpu_ns_per_pkt" },
	{ BM_GBPS, "gbps" }, { BM_CPU_GBIT, "cpu_ms_per_gbit" },
	{ BM_TRAFFIC_CPU, "traffic_cpu_ms_per_gbit" },
	{ BM_GSO_PCT, "gso_pct" }, { BM_PKT_BYTES, "bytes_per_pkt" },
	{ BM_RETRANS, "retransmits" }, { BM_QDROP, "queue_drops" },
	{ BM_P50, "p50_us" }, { BM_P99, "p99_us" }, { BM_P999, "p999_us" },
	{ BM_MAX, "max_us" }, { BM_LOAD_PPS, "load_pps" },
};

/* the metrics that carry ratios, per kind of work */
static unsigned int ratio_metrics(const struct bench_scen *sc,
				  enum bench_metric *m)
{
	switch (sc->work) {
	case BENCH_WORK_TCP:
		m[0] = BM_GBPS;
		m[1] = BM_CPU_GBIT;
		return 2;
	case BENCH_WORK_PING_UDP:
	case BENCH_WORK_PING_TCP:
		m[0] = BM_P50;
		m[1] = BM_P99;
		m[2] = BM_P999;
		return 3;
	case BENCH_WORK_UDP:
	default:
		m[0] = BM_CPU_NS;
		if (sc->drain)
			return 1;
		m[1] = BM_PPS;
		return 2;
	}
}

static const char *metric_name(enum bench_metric m)
{
	unsigned int i;

	for (i = 0; i < sizeof(json_metrics) / sizeof(json_metrics[0]); i++)
		if (json_metrics[i].m == m)
			return json_metrics[i].name;
	return "?";
}

/*
 * Members of the top-level object, each followed by ",\n": scenarios,
 * per-scenario statistics of every consumer, paired ratios, noise,
 * calibration, the new targets and the plot's rows.
 */
void bench_json_extra(FILE *f, const struct bench_set *s)
{
	struct bench_plot_row *rows;
	struct bench_target t[BENCH_MAX_SCEN];
	unsigned int si, i, j, n, nr;
	bool first = true;

	fprintf(f, "  \"scenarios\": [\n");
	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];

		fprintf(f, "    {\"index\": %u, \"mode\": \"%s\", \"name\": ",
			si, work_name(sc->work, sc->drain));
		bench_json_str(f, sc->name);
		fprintf(f, ", \"payload\": %u, \"streams\": %u, \"gso\": \"%s\", "
			"\"load_pct\": %.1f, \"load_pps\": %.0f}%s\n",
			sc->payload, sc->streams, gso_name(sc->gso),
			sc->load_pct, sc->load_pps,
			si + 1 == s->nscen ? "" : ",");
	}
	fprintf(f, "  ],\n  \"stats\": [\n");
	for (si = 0; si < s->nscen; si++) {
		for (i = 0; i < s->nkinds; i++) {
			enum bench_kind k = s->kinds[i];
			unsigned int runs = 0, fails = 0;
			unsigned long long lost = 0;

			for (j = 0; j < s->nres; j++) {
				const struct bench_result *r = &s->res[j];

				if (r->scen != (int)si || r->kind != k ||
				    !r->timed || r->calibration)
					continue;
				runs++;
				lost += r->lost;
				if (r->failed)
					fails++;
			}
			if (!runs)
				continue;
			fprintf(f, "%s    {\"scenario\": %u, \"consumer\": \"%s\", "
				"\"runs\": %u, \"failed\": %u, \"lost\": %llu",
				first ? "" : ",\n", si,
				bench_consumers[k].name, runs, fails, lost);
			first = false;
			for (j = 0; j < sizeof(json_metrics) /
				    sizeof(json_metrics[0]); j++) {
				struct bench_stat st = bench_stat_of(
					s, si, k, json_metrics[j].m);

				if (!st.n)
					continue;
				fputs(", ", f);
				json_stat(f, json_metrics[j].name, &st);
			}
			fputc('}', f);
		}
	}
	fprintf(f, "\n  ],\n  \"ratios\": [\n");
	first = true;
	for (si = 0; si < s->nscen; si++) {
		enum bench_metric m[4];
		unsigned int nm = ratio_metrics(&s->scen[si], m), r;

		for (i = 0; i < s->nkinds; i++) {
			for (r = 1; r < 3; r++) {	/* vs ref A, ref B */
				for (j = 0; j < nm; j++) {
					struct bench_stat q = bench_paired(
						s, si, s->kinds[i], refs[r],
						m[j], false);
					struct bench_stat d = bench_paired(
						s, si, s->kinds[i], refs[r],
						m[j], true);

					if (!q.n || s->kinds[i] == refs[r])
						continue;
					fprintf(f, "%s    {\"scenario\": %u, "
						"\"consumer\": \"%s\", "
						"\"ref\": \"%s\", "
						"\"metric\": \"%s\", ",
						first ? "" : ",\n", si,
						bench_consumers[s->kinds[i]].name,
						bench_consumers[refs[r]].name,
						metric_name(m[j]));
					json_stat(f, "ratio", &q);
					fputs(", ", f);
					json_stat(f, "difference", &d);
					fputc('}', f);
					first = false;
				}
			}
		}
	}
	fprintf(f, "\n  ],\n  \"noise\": [\n");
	first = true;
	for (si = 0; si < s->nscen; si++) {
		enum bench_metric m[4];
		unsigned int nm = ratio_metrics(&s->scen[si], m), r;

		for (r = 0; r < 3; r++) {
			for (j = 0; j < nm; j++) {
				struct bench_stat st = bench_stat_of(
					s, si, refs[r], m[j]);
				double sp = spread_pct(&st);

				if (!st.n)
					continue;
				fprintf(f, "%s    {\"scenario\": %u, "
					"\"consumer\": \"%s\", \"metric\": "
					"\"%s\", \"runs\": %u, "
					"\"spread_pct\": ",
					first ? "" : ",\n", si,
					bench_consumers[refs[r]].name,
					metric_name(m[j]), st.n);
				if (sp < 0)	/* one run: not judged */
					fprintf(f, "null");
				else
					fprintf(f, "%.1f", sp);
				fprintf(f, ", \"limit_pct\": %.1f, "
					"\"noisy\": %s}", s->noise_pct,
					sp > s->noise_pct ? "true" : "false");
				first = false;
			}
		}
	}
	fprintf(f, "\n  ],\n  \"calibration\": ");
	if (s->calib_run >= 0) {
		const struct bench_result *r = &s->res[s->calib_run];

		fprintf(f, "{\"consumer\": \"ref-a\", \"payload\": 64, "
			"\"sent\": %llu, \"pps\": %.0f, \"failed\": %s, "
			"\"error\": ", (unsigned long long)r->sent, r->pps,
			r->failed ? "true" : "false");
		bench_json_str(f, r->err);
		fputs("},\n", f);
	} else {
		fprintf(f, "{\"fixed_rates\": %s},\n",
			s->load_fixed ? "true" : "false");
	}
	fprintf(f, "  \"targets_tcp_latency\": [\n");
	n = bench_targets_new(s, t, BENCH_MAX_SCEN);
	for (i = 0; i < n; i++) {
		fprintf(f, "    {\"name\": ");
		bench_json_str(f, t[i].name);
		fprintf(f, ", \"value\": %.3f, \"min\": %.3f, \"max\": %.3f, "
			"\"limit\": %.2f, \"cmp\": \"%s\", \"measured\": %s, "
			"\"met\": %s}%s\n", t[i].value, t[i].vmin, t[i].vmax,
			t[i].limit, t[i].le ? "<=" : ">=",
			t[i].known ? "true" : "false",
			target_met(&t[i]) ? "true" : "false",
			i + 1 == n ? "" : ",");
	}
	fprintf(f, "  ],\n  \"plot\": [\n");
	rows = calloc(1024, sizeof(*rows));
	nr = rows ? bench_plot_rows(s, rows, 1024) : 0;
	for (i = 0; i < nr; i++) {
		/* one row per line: nfqb-bench --replot reads them back */
		fprintf(f, "    {\"panel\": \"%s\", \"series\": ",
			rows[i].panel);
		bench_json_str(f, rows[i].series);
		fprintf(f, ", \"consumer\": \"%s\", \"value\": %.6g, "
			"\"min\": %.6g, \"max\": %.6g}%s\n", rows[i].consumer,
			rows[i].value, rows[i].min, rows[i].max,
			i + 1 == nr ? "" : ",");
	}
	free(rows);
	fprintf(f, "  ],\n");
}
