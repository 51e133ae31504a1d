/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the machine-readable result by scenario: the scenarios, the
 * statistics of every consumer, the paired ratios, the noise of the
 * references, the load's calibration, the targets of TCP and latency and
 * the plot's rows (which --replot reads back).
 */
#include <stdio.h>
#include <stdlib.h>

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
						s, si, s->kinds[i], bench_refs[r],
						m[j], false);
					struct bench_stat d = bench_paired(
						s, si, s->kinds[i], bench_refs[r],
						m[j], true);

					if (!q.n || s->kinds[i] == bench_refs[r])
						continue;
					fprintf(f, "%s    {\"scenario\": %u, "
						"\"consumer\": \"%s\", "
						"\"ref\": \"%s\", "
						"\"metric\": \"%s\", ",
						first ? "" : ",\n", si,
						bench_consumers[s->kinds[i]].name,
						bench_consumers[bench_refs[r]].name,
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
					s, si, bench_refs[r], m[j]);
				double sp = bench_spread_pct(&st);

				if (!st.n)
					continue;
				fprintf(f, "%s    {\"scenario\": %u, "
					"\"consumer\": \"%s\", \"metric\": "
					"\"%s\", \"runs\": %u, "
					"\"spread_pct\": ",
					first ? "" : ",\n", si,
					bench_consumers[bench_refs[r]].name,
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
			bench_target_met(&t[i]) ? "true" : "false",
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
