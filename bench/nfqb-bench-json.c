/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the machine-readable result: the configuration, every run,
 * the UDP summaries, then by scenario: the scenarios, the statistics of
 * every consumer, the paired ratios, the noise of the references, the
 * load's calibration, the targets of TCP and latency and the plot's rows
 * (which --replot reads back); last the UDP targets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <libnfq-batch/libnfq-batch.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-json.h"
#include "nfqb-bench-plot.h"

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

static const char *gso_name(int gso)
{
	return gso < 0 ? "default" : gso ? "on" : "off";
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

static void json_scenarios(FILE *f, const struct bench_set *s)
{
	unsigned int si;

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
	fprintf(f, "  ],\n");
}

/* the statistics of consumer @k in scenario @si, if it ran there; @first:
 * no element before */
static void json_stats_of(FILE *f, const struct bench_set *s,
			  unsigned int si, enum bench_kind k, bool *first)
{
	unsigned int j, runs = 0, fails = 0;
	unsigned long long lost = 0;

	for (j = 0; j < s->nres; j++) {
		const struct bench_result *r = &s->res[j];

		if (r->scen != (int)si || r->kind != k || !r->timed ||
		    r->calibration)
			continue;
		runs++;
		lost += r->lost;
		if (r->failed)
			fails++;
	}
	if (!runs)
		return;
	fprintf(f, "%s    {\"scenario\": %u, \"consumer\": \"%s\", "
		"\"runs\": %u, \"failed\": %u, \"lost\": %llu",
		*first ? "" : ",\n", si, bench_consumers[k].name, runs, fails,
		lost);
	*first = false;
	for (j = 0; j < sizeof(json_metrics) / sizeof(json_metrics[0]); j++) {
		struct bench_stat st = bench_stat_of(s, si, k,
						     json_metrics[j].m);

		if (!st.n)
			continue;
		fputs(", ", f);
		json_stat(f, json_metrics[j].name, &st);
	}
	fputc('}', f);
}

static void json_stats(FILE *f, const struct bench_set *s)
{
	unsigned int si, i;
	bool first = true;

	fprintf(f, "  \"stats\": [\n");
	for (si = 0; si < s->nscen; si++)
		for (i = 0; i < s->nkinds; i++)
			json_stats_of(f, s, si, s->kinds[i], &first);
	fprintf(f, "\n  ],\n");
}

/* consumer @k against reference @ref in scenario @si, metric @m */
static void json_ratio(FILE *f, const struct bench_set *s, unsigned int si,
		       enum bench_kind k, enum bench_kind ref,
		       enum bench_metric m, bool *first)
{
	struct bench_stat q = bench_paired(s, si, k, ref, m, false);
	struct bench_stat d = bench_paired(s, si, k, ref, m, true);

	if (!q.n || k == ref)
		return;
	fprintf(f, "%s    {\"scenario\": %u, \"consumer\": \"%s\", "
		"\"ref\": \"%s\", \"metric\": \"%s\", ", *first ? "" : ",\n",
		si, bench_consumers[k].name, bench_consumers[ref].name,
		metric_name(m));
	json_stat(f, "ratio", &q);
	fputs(", ", f);
	json_stat(f, "difference", &d);
	fputc('}', f);
	*first = false;
}

static void json_ratios(FILE *f, const struct bench_set *s)
{
	unsigned int si, i, j, r, nm;
	enum bench_metric m[4];
	bool first = true;

	fprintf(f, "  \"ratios\": [\n");
	for (si = 0; si < s->nscen; si++) {
		nm = ratio_metrics(&s->scen[si], m);
		for (i = 0; i < s->nkinds; i++)
			for (r = 1; r < 3; r++)	/* vs ref A, ref B */
				for (j = 0; j < nm; j++)
					json_ratio(f, s, si, s->kinds[i],
						   bench_refs[r], m[j], &first);
		/* one application on two libraries: app vs app-old */
		for (j = 0; j < nm; j++)
			json_ratio(f, s, si, BENCH_APP, BENCH_APP_OLD, m[j],
				   &first);
	}
	fprintf(f, "\n  ],\n");
}

/* the spread of reference @ref's runs in scenario @si, metric @m */
static void json_noise_of(FILE *f, const struct bench_set *s,
			  unsigned int si, enum bench_kind ref,
			  enum bench_metric m, bool *first)
{
	struct bench_stat st = bench_stat_of(s, si, ref, m);
	double sp = bench_spread_pct(&st);

	if (!st.n)
		return;
	fprintf(f, "%s    {\"scenario\": %u, \"consumer\": \"%s\", "
		"\"metric\": \"%s\", \"runs\": %u, \"spread_pct\": ",
		*first ? "" : ",\n", si, bench_consumers[ref].name,
		metric_name(m), st.n);
	if (sp < 0)	/* one run: not judged */
		fprintf(f, "null");
	else
		fprintf(f, "%.1f", sp);
	fprintf(f, ", \"limit_pct\": %.1f, \"noisy\": %s}", s->noise_pct,
		sp > s->noise_pct ? "true" : "false");
	*first = false;
}

static void json_noise(FILE *f, const struct bench_set *s)
{
	unsigned int si, j, r, nm;
	enum bench_metric m[4];
	bool first = true;

	fprintf(f, "  \"noise\": [\n");
	for (si = 0; si < s->nscen; si++) {
		nm = ratio_metrics(&s->scen[si], m);
		for (r = 0; r < BENCH_NREFS; r++)
			for (j = 0; j < nm; j++)
				json_noise_of(f, s, si, bench_refs[r], m[j],
					      &first);
	}
	fprintf(f, "\n  ],\n");
}

static void json_calibration(FILE *f, const struct bench_set *s)
{
	const struct bench_result *r;

	fprintf(f, "  \"calibration\": ");
	if (s->calib_run < 0) {
		fprintf(f, "{\"fixed_rates\": %s},\n",
			s->load_fixed ? "true" : "false");
		return;
	}
	r = &s->res[s->calib_run];
	fprintf(f, "{\"consumer\": \"ref-a\", \"payload\": 64, "
		"\"sent\": %llu, \"pps\": %.0f, \"failed\": %s, "
		"\"error\": ", (unsigned long long)r->sent, r->pps,
		r->failed ? "true" : "false");
	bench_json_str(f, r->err);
	fputs("},\n", f);
}

static void json_targets(FILE *f, const struct bench_set *s)
{
	struct bench_target t[BENCH_MAX_SCEN];
	unsigned int i, n = bench_targets_new(s, t, BENCH_MAX_SCEN);

	fprintf(f, "  \"targets_tcp_latency\": [\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "    {\"name\": ");
		bench_json_str(f, t[i].name);
		fprintf(f, ", \"value\": %.3f, \"min\": %.3f, \"max\": %.3f, "
			"\"limit\": %.2f, \"cmp\": \"%s\", \"measured\": %s, "
			"\"met\": %s}%s\n", t[i].value, t[i].vmin, t[i].vmax,
			t[i].limit, t[i].le ? "<=" : ">=",
			t[i].known ? "true" : "false",
			bench_target_met(&t[i]) ? "true" : "false",
			i + 1 == n ? "" : ",");
	}
	fprintf(f, "  ],\n");
}

static void json_plot(FILE *f, const struct bench_set *s)
{
	struct bench_plot_row *rows = calloc(1024, sizeof(*rows));
	unsigned int i, n = rows ? bench_plot_rows(s, rows, 1024) : 0;

	fprintf(f, "  \"plot\": [\n");
	for (i = 0; i < n; i++) {
		/* one row per line: nfqb-bench --replot reads them back */
		fprintf(f, "    {\"panel\": \"%s\", \"series\": ",
			rows[i].panel);
		bench_json_str(f, rows[i].series);
		fprintf(f, ", \"consumer\": \"%s\", \"value\": %.6g, "
			"\"min\": %.6g, \"max\": %.6g}%s\n", rows[i].consumer,
			rows[i].value, rows[i].min, rows[i].max,
			i + 1 == n ? "" : ",");
	}
	free(rows);
	fprintf(f, "  ],\n");
}

void bench_json_extra(FILE *f, const struct bench_set *s)
{
	json_scenarios(f, s);
	json_stats(f, s);
	json_ratios(f, s);
	json_noise(f, s);
	json_calibration(f, s);
	json_targets(f, s);
	json_plot(f, s);
}

/* --- the whole result -------------------------------------------------- */

static void json_config(FILE *f, const struct bench_opts *o)
{
	const struct bench_cfg *cfg = &o->cfg;
	unsigned int m;
	bool first = true;

	fprintf(f, "  \"config\": {\"packets\": %llu, \"reps\": %u, "
		"\"window\": %u, \"burst\": %u, \"flows\": %u, \"batch\": %u, "
		"\"maxlen\": %u, \"cpu_traffic\": %d, \"cpu_consumer\": %d, "
		"\"hook\": \"%s\", \"nice\": %d, \"rt_prio\": %d, "
		"\"syscount\": %s, \"rcvbuf\": %u, \"tcp_time_s\": %u, "
		"\"tcp_mtu\": %u, \"both_ways\": %s, \"ping_count\": %u, "
		"\"ping_size\": %u, \"ping_time_s\": %.0f, "
		"\"calib_packets\": %llu, \"noise_pct\": %.1f, \"modes\": [",
		(unsigned long long)cfg->packets, o->plan.reps, cfg->window,
		cfg->burst, cfg->flows, cfg->batch, cfg->maxlen,
		cfg->cpu_traffic, cfg->cpu_consumer,
		cfg->hook == BENCH_HOOK_OUTPUT ? "output" : "input",
		cfg->nice, cfg->rt_prio,
		cfg->sys_enter_id >= 0 ? "true" : "false", cfg->rcvbuf,
		cfg->tcp_time, cfg->mtu, cfg->both_ways ? "true" : "false",
		cfg->ping_count, cfg->ping_size, cfg->ping_time,
		(unsigned long long)o->plan.calib_packets, o->noise_pct);
	for (m = 0; m < BENCH_NMODES; m++) {
		if (!bench_plan_has(&o->plan, m))
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ", ", bench_mode_name(m));
		first = false;
	}
	fprintf(f, "]},\n");
}

void bench_json_header(FILE *f, const struct bench_opts *o, const char *mode)
{
	struct utsname u;
	char date[32];
	time_t now = time(NULL);

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\n  \"tool\": \"nfqb-bench\",\n  \"mode\": \"%s\",\n"
		"  \"library\": ", mode);
	bench_json_str(f, nfqb_version());
	fprintf(f, ",\n  \"date\": \"%s\",\n  \"kernel\": ", date);
	bench_json_str(f, u.release);
	fprintf(f, ",\n  \"cpus_online\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
	json_config(f, o);
}

/* a run's counts and times */
static void json_run_counts(FILE *f, const struct bench_result *r)
{
	fprintf(f, ", \"sent\": %llu, \"expected\": %llu, \"delivered\": %llu, "
		"\"lost\": %llu, \"dups\": %llu, \"wrong_verdict\": %llu, "
		"\"bad_mark\": %llu, \"kq_dropped\": %llu, "
		"\"kq_user_dropped\": %llu, \"elapsed_s\": %.6f, \"pps\": %.0f, "
		"\"cons_user_ns\": %llu, \"cons_sys_ns\": %llu, "
		"\"cons_maxrss_kb\": %ld, \"traffic_user_ns\": %llu, "
		"\"traffic_sys_ns\": %llu, \"busy_traffic_pct\": %.1f, "
		"\"busy_consumer_pct\": %.1f, \"syscalls\": %lld, ",
		(unsigned long long)r->sent, (unsigned long long)r->expected,
		(unsigned long long)r->delivered, (unsigned long long)r->lost,
		(unsigned long long)r->dups,
		(unsigned long long)r->wrong_verdict,
		(unsigned long long)r->bad_mark,
		(unsigned long long)r->kq_dropped,
		(unsigned long long)r->kq_user_dropped, r->elapsed, r->pps,
		(unsigned long long)r->cons_user_ns,
		(unsigned long long)r->cons_sys_ns, r->cons_maxrss_kb,
		(unsigned long long)r->traffic_user_ns,
		(unsigned long long)r->traffic_sys_ns, r->busy_traffic,
		r->busy_consumer, (long long)r->syscalls);
}

/* what the consumer counted */
static void json_run_cons(FILE *f, const struct bench_cons *c)
{
	fprintf(f, "\"cons_packets\": %llu, \"cons_recv_calls\": %llu, "
		"\"cons_send_calls\": %llu, \"verdict_msgs\": %llu, "
		"\"batch_msgs\": %llu, \"enobufs\": %llu, \"kernel_errors\": %llu, "
		"\"lib_flushes\": %llu, \"lib_flush_limit\": %llu, "
		"\"lib_flush_idle\": %llu, \"lib_flush_latency\": %llu, "
		"\"lib_fallbacks\": %llu, \"lib_timeouts\": %llu, "
		"\"lib_rejected\": %llu, ",
		(unsigned long long)c->packets,
		(unsigned long long)c->recv_calls,
		(unsigned long long)c->send_calls,
		(unsigned long long)c->verdict_msgs,
		(unsigned long long)c->batch_msgs,
		(unsigned long long)c->enobufs,
		(unsigned long long)c->kernel_errors,
		(unsigned long long)c->lib_flushes,
		(unsigned long long)c->lib_flush_limit,
		(unsigned long long)c->lib_flush_idle,
		(unsigned long long)c->lib_flush_latency,
		(unsigned long long)c->lib_fallbacks,
		(unsigned long long)c->lib_timeouts,
		(unsigned long long)c->lib_rejected);
}

/* the TCP, request/response and load figures */
static void json_run_work(FILE *f, const struct bench_result *r)
{
	const struct bench_cons *c = &r->cons;

	fprintf(f, "\"work\": \"%s\", \"scenario\": %d, \"calibration\": %s, "
		"\"gso_packets\": %llu, \"cons_bytes\": %llu, "
		"\"cons_other_calls\": %llu, "
		"\"gbps\": %.4f, \"tcp_bytes\": %llu, \"tcp_seconds\": %.3f, "
		"\"retransmits\": %llu, \"iperf_cpu_host_pct\": %.1f, "
		"\"iperf_cpu_remote_pct\": %.1f, \"pings\": %llu, "
		"\"ping_lost\": %llu, \"lat_min_us\": %.2f, "
		"\"lat_mean_us\": %.2f, \"lat_p50_us\": %.2f, "
		"\"lat_p99_us\": %.2f, \"lat_p999_us\": %.2f, "
		"\"lat_max_us\": %.2f, \"load_target_pps\": %.0f, "
		"\"load_pps\": %.0f, \"load_sent\": %llu, "
		"\"load_delivered\": %llu}",
		work_name(r->work, r->drain), r->scen,
		r->calibration ? "true" : "false",
		(unsigned long long)c->gso_packets,
		(unsigned long long)c->bytes,
		(unsigned long long)c->other_calls, r->gbps,
		(unsigned long long)r->tcp_bytes, r->tcp_seconds,
		(unsigned long long)r->retransmits, r->iperf_cpu_host,
		r->iperf_cpu_remote, (unsigned long long)r->pings,
		(unsigned long long)r->ping_lost, r->lat_min, r->lat_mean,
		r->lat_p50, r->lat_p99, r->lat_p999, r->lat_max,
		r->load_target_pps, r->load_pps,
		(unsigned long long)r->load_sent,
		(unsigned long long)r->load_delivered);
}

void bench_json_run(FILE *f, const struct bench_result *r, bool last)
{
	fprintf(f, "    {\"consumer\": \"%s\", \"payload\": %u, \"rep\": %u, "
		"\"mode\": \"%s\", \"timed\": %s, \"failed\": %s, "
		"\"error\": ", bench_consumers[r->kind].name, r->payload,
		r->rep, r->drain ? "drain" : "stream",
		r->timed ? "true" : "false", r->failed ? "true" : "false");
	bench_json_str(f, r->err);
	json_run_counts(f, r);
	json_run_cons(f, &r->cons);
	json_run_work(f, r);
	fprintf(f, "%s\n", last ? "" : ",");
}

static double ratio(double a, const struct bench_summary *ref, bool cpu)
{
	double b = !ref ? 0 : cpu ? ref->cpu_ns : ref->pps;

	return b ? a / b : 0;
}

static void json_summary(FILE *f, const struct bench_summary *sum,
			 unsigned int nsum, const struct bench_summary *s)
{
	const struct bench_summary *A, *B, *K;

	A = bench_find_sum(sum, nsum, BENCH_REF_A, s->payload, s->drain);
	B = bench_find_sum(sum, nsum, BENCH_REF_B, s->payload, s->drain);
	K = bench_find_sum(sum, nsum, BENCH_KERNEL, s->payload, s->drain);
	fprintf(f, "    {\"consumer\": \"%s\", \"payload\": %u, "
		"\"mode\": \"%s\", \"runs\": %u, \"failed\": %u, \"lost\": %llu, "
		"\"pps_median\": %.0f, \"pps_min\": %.0f, "
		"\"pps_max\": %.0f, \"cpu_ns_per_pkt\": %.1f, "
		"\"cpu_ns_min\": %.1f, \"cpu_ns_max\": %.1f, "
		"\"user_ns_per_pkt\": %.1f, \"sys_ns_per_pkt\": %.1f, "
		"\"traffic_ns_per_pkt\": %.1f, "
		"\"syscalls_per_pkt\": %.4f, "
		"\"self_syscalls_per_pkt\": %.4f, "
		"\"verdict_msgs_per_pkt\": %.4f, "
		"\"util_traffic_pct\": %.1f, "
		"\"util_consumer_pct\": %.1f, "
		"\"busy_traffic_pct\": %.1f, "
		"\"busy_consumer_pct\": %.1f, "
		"\"pps_vs_ref_a\": %.3f, \"pps_vs_ref_b\": %.3f, "
		"\"pps_vs_kernel\": %.3f, \"cpu_vs_ref_a\": %.3f, "
		"\"cpu_vs_ref_b\": %.3f}%s\n",
		bench_consumers[s->kind].name, s->payload,
		s->drain ? "drain" : "stream", s->runs,
		s->failed, (unsigned long long)s->lost, s->pps,
		s->pps_min, s->pps_max, s->cpu_ns, s->cpu_min,
		s->cpu_max, s->user_ns,
		s->sys_ns, s->traffic_ns, s->sc_pkt, s->sc_self_pkt,
		s->vmsg_pkt, s->util_t, s->util_c, s->busy_t, s->busy_c,
		ratio(s->pps, A, false), ratio(s->pps, B, false),
		ratio(s->pps, K, false), ratio(s->cpu_ns, A, true),
		ratio(s->cpu_ns, B, true), s == &sum[nsum - 1] ? "" : ",");
}

void bench_json_compare(FILE *f, const struct bench_opts *o,
			const struct bench_set *set,
			const struct bench_summary *sum, unsigned int nsum,
			unsigned int bad_runs)
{
	struct bench_target t[16];
	unsigned int i, nt;

	bench_json_header(f, o, "compare");
	fprintf(f, "  \"runs\": [\n");
	for (i = 0; i < set->nres; i++)
		bench_json_run(f, &set->res[i], i + 1 == set->nres);
	fprintf(f, "  ],\n  \"summary\": [\n");
	for (i = 0; i < nsum; i++)
		json_summary(f, sum, nsum, &sum[i]);
	fprintf(f, "  ],\n");
	bench_json_extra(f, set);
	fprintf(f, "  \"targets\": [\n");
	nt = bench_udp_targets(sum, nsum, t);
	for (i = 0; i < nt; i++)
		fprintf(f, "    {\"name\": \"%s\", \"value\": %.3f, "
			"\"limit\": %.2f, \"cmp\": \"%s\", \"measured\": %s, "
			"\"met\": %s},\n", t[i].name, t[i].value, t[i].limit,
			t[i].le ? "<=" : ">=", t[i].known ? "true" : "false",
			bench_target_met(&t[i]) ? "true" : "false");
	fprintf(f, "    {\"name\": \"zero lost packets\", \"met\": %s}\n  ],\n",
		bad_runs ? "false" : "true");
	fprintf(f, "  \"ok\": %s\n}\n", bad_runs ? "false" : "true");
}
