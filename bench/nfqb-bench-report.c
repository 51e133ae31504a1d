/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the tables of an invocation's result, by scenario (what was
 * run) and consumer: the ratios of the UDP modes, TCP, latency, the
 * targets of TCP and latency, the Python consumers, and one application
 * binary on two libraries (app against app-old). Ratios are paired
 * per repetition (nfqb-bench-stats.c); a reference whose own runs spread
 * more than the noise limit is said to be noisy next to the figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <libnfq-batch/libnfq-batch.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-report.h"

static void print_noise(FILE *f, const struct bench_set *s, int scen,
			const enum bench_metric *m, const char *const *mname,
			unsigned int nm)
{
	unsigned int i, j;
	bool few = false;

	for (i = 0; i < BENCH_NREFS; i++) {
		if (!bench_has_kind(s, bench_refs[i]))
			continue;
		for (j = 0; j < nm; j++) {
			struct bench_stat st = bench_stat_of(s, scen,
							     bench_refs[i],
							      m[j]);
			double sp = bench_spread_pct(&st);

			if (st.n && st.n < 2)
				few = true;
			if (sp > s->noise_pct)
				fprintf(f, "  noisy: %s, %s spread %.0f%% over "
					"%u runs (limit %.0f%%): ratios against "
					"it do not hold\n",
					bench_consumers[bench_refs[i]].label,
					mname[j], sp, st.n, s->noise_pct);
		}
	}
	if (few)
		fprintf(f, "  (one run per consumer: no spread, noise not "
			"judged)\n");
}

/* @k's metric @m in scenario @scen, "median (min..max)" */
static void fmt_of(char *buf, size_t len, const struct bench_set *s,
		   int scen, enum bench_kind k, enum bench_metric m, int prec)
{
	struct bench_stat st = bench_stat_of(s, scen, k, m);

	bench_fmt_stat(buf, len, &st, prec);
}

/* the same of @k against @ref, paired per repetition: ratios, or
 * differences if @diff */
static void fmt_paired(char *buf, size_t len, const struct bench_set *s,
		       int scen, enum bench_kind k, enum bench_kind ref,
		       enum bench_metric m, bool diff, int prec)
{
	struct bench_stat st = bench_paired(s, scen, k, ref, m, diff);

	bench_fmt_stat(buf, len, &st, prec);
}

/* in @scen, @k's runs: how many failed, and the sums of its lost
 * datagrams, round trips and queue drops */
struct run_sums {
	unsigned int fails;
	unsigned long long lost, rtts, qdrops;
};

static struct run_sums run_sums(const struct bench_set *s, int scen,
				enum bench_kind k)
{
	struct run_sums sum = { 0 };
	unsigned int j;

	for (j = 0; j < s->nres; j++) {
		const struct bench_result *r = &s->res[j];

		if (r->scen != scen || r->kind != k)
			continue;
		if (r->failed)
			sum.fails++;
		sum.lost += r->lost;
		sum.rtts += r->pings;
		sum.qdrops += r->kq_dropped + r->kq_user_dropped;
	}
	return sum;
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
		bool refb = k == BENCH_REF_B;

		if (k == BENCH_REF_A || !bench_consumers[k].queues)
			continue;
		fmt_paired(a, sizeof(a), s, scen, k, BENCH_REF_A, BM_CPU_NS,
			   false, 2);
		fmt_paired(b, sizeof(b), s, scen, k, BENCH_REF_B, BM_CPU_NS,
			   false, 2);
		if (sc->drain) {
			fprintf(f, "  %-22s CPU/pkt xA %-18s xB %s\n",
				bench_consumers[k].label, a, refb ? "1" : b);
			continue;
		}
		fmt_paired(c, sizeof(c), s, scen, k, BENCH_REF_A, BM_PPS,
			   false, 2);
		fmt_paired(d, sizeof(d), s, scen, k, BENCH_REF_B, BM_PPS,
			   false, 2);
		fprintf(f, "  %-22s CPU/pkt xA %-18s xB %-18s | pkt/s xA %-18s xB %s\n",
			bench_consumers[k].label, a, refb ? "1" : b, c,
			refb ? "1" : d);
	}
	print_noise(f, s, scen, ms + first, names + first, 2 - first);
}

/* --- TCP ------------------------------------------------------------------ */

static void tcp_row(FILE *f, const struct bench_set *s, int si,
		    enum bench_kind k)
{
	char g[64], gr[64], c[64], cr[64];
	struct bench_stat gso, pb, re;
	struct run_sums sum = run_sums(s, si, k);
	bool refa = k == BENCH_REF_A;

	fmt_of(g, sizeof(g), s, si, k, BM_GBPS, 2);
	fmt_paired(gr, sizeof(gr), s, si, k, BENCH_REF_A, BM_GBPS, false, 2);
	fmt_of(c, sizeof(c), s, si, k, BM_CPU_GBIT, -1);
	fmt_paired(cr, sizeof(cr), s, si, k, BENCH_REF_A, BM_CPU_GBIT, false,
		   2);
	gso = bench_stat_of(s, si, k, BM_GSO_PCT);
	pb = bench_stat_of(s, si, k, BM_PKT_BYTES);
	re = bench_stat_of(s, si, k, BM_RETRANS);
	fprintf(f, "  %-24s %-24s %-18s | %-22s %-18s | ",
		bench_consumers[k].label, g, refa ? "1" : gr, c,
		refa ? "1" : cr);
	if (gso.n)
		fprintf(f, "%4.0f%% %6.0f", gso.med, pb.med);
	else
		fprintf(f, "%5s %6s", "-", "-");
	fprintf(f, " %6.0f %6llu | %u\n", re.n ? re.med : 0, sum.qdrops,
		sum.fails);
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
		if (s->scen[si].work != BENCH_WORK_TCP)
			continue;
		fprintf(f, "%s\n", s->scen[si].name);
		for (i = 0; i < s->nkinds; i++)
			if (BENCH_KIND_ANY_TRAFFIC(s->kinds[i]))
				tcp_row(f, s, si, s->kinds[i]);
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

static void lat_row(FILE *f, const struct bench_set *s, int si,
		    enum bench_kind k)
{
	char p50[64], p99[64], p999[64], rr[64], dd[64];
	struct bench_stat mx = bench_stat_of(s, si, k, BM_MAX);
	struct run_sums sum = run_sums(s, si, k);
	bool refa = k == BENCH_REF_A;

	fmt_of(p50, sizeof(p50), s, si, k, BM_P50, 1);
	fmt_of(p99, sizeof(p99), s, si, k, BM_P99, 1);
	fmt_of(p999, sizeof(p999), s, si, k, BM_P999, 0);
	fmt_paired(rr, sizeof(rr), s, si, k, BENCH_REF_A, BM_P99, false, 2);
	fmt_paired(dd, sizeof(dd), s, si, k, BENCH_REF_A, BM_P99, true, 1);
	fprintf(f, "  %-24s %-22s %-22s %-20s %7.0f | %-18s | %-24s | %6llu %4llu%s\n",
		bench_consumers[k].label, p50, p99, p999, mx.n ? mx.med : 0,
		refa ? "1" : rr, refa ? "0" : dd, sum.rtts, sum.lost,
		sum.fails ? " FAILED" : "");
}

static void lat_head(FILE *f, const struct bench_set *s)
{
	const struct bench_cfg *cfg = s->cfg;

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
}

void bench_print_latency(FILE *f, const struct bench_set *s)
{
	static const char *const names[] = { "p99" };
	enum bench_metric ms[1] = { BM_P99 };
	unsigned int si, i;

	lat_head(f, s);
	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];
		char title[200];

		if (sc->work != BENCH_WORK_PING_UDP &&
		    sc->work != BENCH_WORK_PING_TCP)
			continue;
		lat_title(title, sizeof(title), s, sc);
		fprintf(f, "%s\n", title);
		for (i = 0; i < s->nkinds; i++)
			if (BENCH_KIND_ANY_TRAFFIC(s->kinds[i]))
				lat_row(f, s, si, s->kinds[i]);
		print_noise(f, s, si, ms, names, 1);
	}
	fprintf(f, "Each round trip timed with CLOCK_MONOTONIC by the client; "
		"percentiles per run (nearest rank), then median (min..max) "
		"over the runs. xA and - ref A: paired within each "
		"repetition. rtts, lost: summed over the runs (lost: requests "
		"unanswered for 1 s, and load datagrams).\n");
}

/* --- targets of the TCP and latency modes ---------------------------------- */

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
			bench_target_met(&t[i]) ? "met" : "NOT met");
	}
}

/* --- Python --------------------------------------------------------------- */

struct py_target {
	char name[80];
	struct bench_stat st;
	double limit;
	bool le;
};

/* ours, against python-netfilterqueue */
static const enum bench_kind py_ours[] = { BENCH_PY_COMPAT, BENCH_PY_BATCH };

/* the table of scenario @si: UDP streaming (@udp) or TCP */
static void py_table(FILE *f, const struct bench_set *s, int si, bool udp)
{
	const struct bench_scen *sc = &s->scen[si];
	enum bench_metric perf = udp ? BM_PPS : BM_GBPS;
	enum bench_metric cpu = udp ? BM_CPU_NS : BM_CPU_GBIT;
	unsigned int i;

	if (udp)
		fprintf(f, "UDP %u B, streaming\n", sc->payload);
	else
		fprintf(f, "TCP, %s\n", sc->name);
	fprintf(f, "  %-26s %-24s %-22s | %-24s %-22s\n", "consumer",
		udp ? "pkt/s" : "Gbit/s", "x py-nfq",
		udp ? "CPU ns/pkt" : "CPU ms/Gbit", "x py-nfq");
	for (i = 0; i < 3; i++) {
		enum bench_kind k = i == 0 ? BENCH_PY_NFQ : py_ours[i - 1];
		bool ref = k == BENCH_PY_NFQ;
		char a[64], b[64], c[64], d[64];

		if (!bench_has_kind(s, k))
			continue;
		fmt_of(a, sizeof(a), s, si, k, perf, udp ? -1 : 2);
		fmt_paired(b, sizeof(b), s, si, k, BENCH_PY_NFQ, perf, false,
			   2);
		fmt_of(c, sizeof(c), s, si, k, cpu, -1);
		fmt_paired(d, sizeof(d), s, si, k, BENCH_PY_NFQ, cpu, false, 2);
		fprintf(f, "  %-26s %-24s %-22s | %-24s %-22s\n",
			bench_consumers[k].label, a, ref ? "1" : b, c,
			ref ? "1" : d);
	}
}

/* the Python targets (doc/benchmarks.md) in scenario @si, into @t: how
 * many */
static unsigned int py_targets(const struct bench_set *s, int si, bool udp,
			       struct py_target *t)
{
	const struct bench_scen *sc = &s->scen[si];
	unsigned int i, n = 0;

	for (i = 0; i < 2; i++) {
		enum bench_kind k = py_ours[i];

		if (!bench_has_kind(s, k))
			continue;
		if (udp && sc->payload == 64) {
			snprintf(t[n].name, sizeof(t[n].name),
				 "%s CPU/pkt, UDP 64 B", bench_consumers[k].name);
			t[n].st = bench_paired(s, si, k, BENCH_PY_NFQ,
					       BM_CPU_NS, false);
			t[n].limit = k == BENCH_PY_COMPAT ? 0.7 : 0.6;
			t[n++].le = true;
		} else if (!udp) {
			snprintf(t[n].name, sizeof(t[n].name),
				 "%s Gbit/s, TCP %s", bench_consumers[k].name,
				 sc->name);
			t[n].st = bench_paired(s, si, k, BENCH_PY_NFQ,
					       BM_GBPS, false);
			t[n].limit = 1.0;
			t[n++].le = false;
		}
	}
	return n;
}

void bench_print_py(FILE *f, const struct bench_set *s)
{
	struct py_target t[2 * BENCH_MAX_SCEN];
	unsigned int si, i, nt = 0;

	if (!bench_has_kind(s, BENCH_PY_NFQ))
		return;
	fprintf(f, "\nPython consumers against python-netfilterqueue 1.1.0 "
		"(py-nfq), ratios paired per repetition, median (min..max):\n");
	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];
		bool udp = sc->work == BENCH_WORK_UDP && !sc->drain;

		if (!udp && sc->work != BENCH_WORK_TCP)
			continue;
		py_table(f, s, si, udp);
		nt += py_targets(s, si, udp, &t[nt]);
	}
	if (!nt)
		return;
	fprintf(f, "targets (x python-netfilterqueue, paired "
		"medians (min..max)):\n");
	for (i = 0; i < nt; i++) {
		char v[64];
		bool met = t[i].st.n && (t[i].le ? t[i].st.med <= t[i].limit :
					  t[i].st.med >= t[i].limit);

		bench_fmt_stat(v, sizeof(v), &t[i].st, 2);
		fprintf(f, "  %-44s %-20s (%s %.2f)  %s\n", t[i].name, v,
			t[i].le ? "<=" : ">=", t[i].limit,
			!t[i].st.n ? "not measured" : met ? "met" : "NOT met");
	}
}

/* --- one application on two libraries ------------------------------------ */

/* the table of UDP streaming scenario @si: app-old, then app */
static void app_table(FILE *f, const struct bench_set *s, int si)
{
	static const enum bench_kind kinds[] = { BENCH_APP_OLD, BENCH_APP };
	unsigned int i;

	fprintf(f, "UDP %u B, streaming\n", s->scen[si].payload);
	fprintf(f, "  %-26s %-24s %-22s | %-24s %-22s\n", "consumer",
		"pkt/s", "x app-old", "CPU ns/pkt", "x app-old");
	for (i = 0; i < 2; i++) {
		enum bench_kind k = kinds[i];
		bool ref = k == BENCH_APP_OLD;
		char a[64], b[64], c[64], d[64];

		fmt_of(a, sizeof(a), s, si, k, BM_PPS, -1);
		fmt_paired(b, sizeof(b), s, si, k, BENCH_APP_OLD, BM_PPS,
			   false, 2);
		fmt_of(c, sizeof(c), s, si, k, BM_CPU_NS, -1);
		fmt_paired(d, sizeof(d), s, si, k, BENCH_APP_OLD, BM_CPU_NS,
			   false, 2);
		fprintf(f, "  %-26s %-24s %-22s | %-24s %-22s\n",
			bench_consumers[k].label, a, ref ? "1" : b, c,
			ref ? "1" : d);
	}
}

static bool udp_stream(const struct bench_scen *sc)
{
	return sc->work == BENCH_WORK_UDP && !sc->drain;
}

void bench_print_app(FILE *f, const struct bench_set *s)
{
	const char *old = getenv("NFQB_BENCH_OLD_LIB");
	unsigned int si, n = 0;

	if (!bench_has_kind(s, BENCH_APP) || !bench_has_kind(s, BENCH_APP_OLD))
		return;
	for (si = 0; si < s->nscen; si++)
		n += udp_stream(&s->scen[si]);
	if (!n)
		return;
	fprintf(f, "\nThe same application on this library and on another "
		"build (app-old: NFQB_BENCH_OLD_LIB%s%s), nfqb-bench-app, "
		"ratios paired per repetition, median (min..max):\n",
		old ? "=" : "", old ? old : "");
	for (si = 0; si < s->nscen; si++)
		if (udp_stream(&s->scen[si]))
			app_table(f, s, (int)si);
	fprintf(f, "x app-old: app / app-old within each repetition; below 1 "
		"is less CPU (or fewer pkt/s) on this library.\n");
}

/* --- the first line ---------------------------------------------------- */

void bench_title(char *buf, size_t len)
{
	char date[32];
	struct utsname u;
	time_t now = time(NULL);

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(buf, len, "nfqb-bench, libnfq-batch %s, %s, kernel %s, %ld "
		 "CPUs", nfqb_version(), date, u.release,
		 sysconf(_SC_NPROCESSORS_ONLN));
}

void bench_print_header(FILE *f, const struct bench_opts *o)
{
	char title[256];

	bench_title(title, sizeof(title));
	fprintf(f, "%s, rule in %s, nice %d%s\n", title,
		o->cfg.hook == BENCH_HOOK_OUTPUT ? "OUTPUT" : "INPUT",
		o->cfg.nice, o->cfg.rt_prio ? ", SCHED_FIFO" : "");
}
