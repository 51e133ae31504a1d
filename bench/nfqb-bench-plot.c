/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the picture. Throughput on the left (TCP Gbit/s per consumer,
 * UDP thousands of packets/s), latency on the right (p50 and p99 per
 * consumer), each a clustered bar chart with min..max error bars, drawn by
 * gnuplot (Debian package gnuplot-nox; NFQB_BENCH_GNUPLOT names another
 * binary) into a PNG.
 *
 * The rows drawn are those of the JSON output's "plot" array, one per line,
 * so that a saved --json result can be drawn again (--replot) without
 * measuring anything.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-plot.h"
#include "nfqb-bench-proc.h"

#define PLOT_MAX_SERIES		16
#define PLOT_MAX_CONS		16

static void add_row(struct bench_plot_row *rows, unsigned int *n,
		    unsigned int max, const char *panel, const char *series,
		    enum bench_kind k, double v, double lo, double hi)
{
	struct bench_plot_row *r;

	if (*n == max)
		return;
	r = &rows[(*n)++];
	snprintf(r->panel, sizeof(r->panel), "%s", panel);
	snprintf(r->series, sizeof(r->series), "%s", series);
	snprintf(r->consumer, sizeof(r->consumer), "%s",
		 bench_consumers[k].name);
	r->value = v;
	r->min = lo;
	r->max = hi;
}

unsigned int bench_plot_rows(const struct bench_set *s,
			     struct bench_plot_row *rows, unsigned int max)
{
	unsigned int si, i, n = 0;

	for (si = 0; si < s->nscen; si++) {
		const struct bench_scen *sc = &s->scen[si];
		char series[48];

		for (i = 0; i < s->nkinds; i++) {
			enum bench_kind k = s->kinds[i];
			struct bench_stat st;

			switch (sc->work) {
			case BENCH_WORK_TCP:
				st = bench_stat_of(s, si, k, BM_GBPS);
				if (st.n)
					add_row(rows, &n, max, "tcp", sc->name,
						k, st.med, st.min, st.max);
				break;
			case BENCH_WORK_UDP:
				if (!sc->drain) {
					st = bench_stat_of(s, si, k, BM_PPS);
					snprintf(series, sizeof(series),
						 "stream %u B", sc->payload);
					if (st.n)
						add_row(rows, &n, max, "udp",
							series, k, st.med / 1e3,
							st.min / 1e3,
							st.max / 1e3);
					break;
				}
				st = bench_stat_of(s, si, k, BM_CPU_NS);
				snprintf(series, sizeof(series),
					 "drain %u B: capacity", sc->payload);
				if (st.n && st.min > 0)
					add_row(rows, &n, max, "udp", series,
						k, 1e6 / st.med, 1e6 / st.max,
						1e6 / st.min);
				break;
			case BENCH_WORK_PING_UDP:
			case BENCH_WORK_PING_TCP:
				st = bench_stat_of(s, si, k, BM_P50);
				if (st.n)
					add_row(rows, &n, max, "p50", sc->name,
						k, st.med, st.min, st.max);
				st = bench_stat_of(s, si, k, BM_P99);
				if (st.n)
					add_row(rows, &n, max, "p99", sc->name,
						k, st.med, st.min, st.max);
				break;
			}
		}
	}
	return n;
}

/* --- drawing ---------------------------------------------------------------- */

static const struct {
	const char *panel;
	const char *title;
	const char *ylabel;
	bool log;
} panels[] = {
	{ "tcp", "TCP bulk through the queue (iperf3)", "Gbit/s", false },
	{ "p50", "request/response, median round trip", "microseconds", true },
	{ "udp", "UDP through the queue", "thousand packets/s", false },
	{ "p99", "request/response, 99th percentile", "microseconds", true },
};

/* index of @name in @list (appended if new), -1 if full */
static int intern(char list[][48], unsigned int *n, unsigned int max,
		  const char *name)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(list[i], name))
			return (int)i;
	if (*n == max)
		return -1;
	snprintf(list[*n], 48, "%s", name);
	return (int)(*n)++;
}

/* a gnuplot single-quoted string */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* data file of one panel; returns the number of series, 0 if empty */
static unsigned int write_panel(const char *path, const char *panel,
				const struct bench_plot_row *rows,
				unsigned int n, char series[][48],
				unsigned int *nseries)
{
	static double v[PLOT_MAX_CONS][PLOT_MAX_SERIES][3];
	char cons[PLOT_MAX_CONS][48];
	unsigned int i, j, nc = 0;
	FILE *f;

	*nseries = 0;
	for (i = 0; i < PLOT_MAX_CONS; i++)
		for (j = 0; j < PLOT_MAX_SERIES; j++)
			v[i][j][0] = v[i][j][1] = v[i][j][2] = NAN;
	for (i = 0; i < n; i++) {
		int c, sr;

		if (strcmp(rows[i].panel, panel))
			continue;
		c = intern(cons, &nc, PLOT_MAX_CONS, rows[i].consumer);
		sr = intern(series, nseries, PLOT_MAX_SERIES, rows[i].series);
		if (c < 0 || sr < 0)
			continue;
		v[c][sr][0] = rows[i].value;
		v[c][sr][1] = rows[i].min;
		v[c][sr][2] = rows[i].max;
	}
	if (!nc)
		return 0;
	f = fopen(path, "w");
	if (!f)
		return 0;
	for (i = 0; i < nc; i++) {
		fprintf(f, "\"%s\"", cons[i]);
		for (j = 0; j < *nseries; j++) {
			if (isnan(v[i][j][0]))
				fprintf(f, " NaN NaN NaN");
			else
				fprintf(f, " %.6g %.6g %.6g", v[i][j][0],
					v[i][j][1], v[i][j][2]);
		}
		fputc('\n', f);
	}
	fclose(f);
	return *nseries;
}

static int run_gnuplot(const char *script)
{
	const char *env = getenv("NFQB_BENCH_GNUPLOT");
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int st;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (env && *env)
			execv(env, argv);
		execvp("gnuplot", argv);
		fprintf(stderr, "nfqb-bench: gnuplot: %s (Debian package "
			"gnuplot-nox)\n", strerror(errno));
		_exit(127);
	}
	if (bench_wait_deadline(pid, 60, &st) < 0) {
		fprintf(stderr, "nfqb-bench: gnuplot did not finish in 60 s\n");
		return -1;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* the picture's data: a file per panel */
struct plot_files {
	char dir[32];
	char data[4][64];
	char script[64];
	char series[4][PLOT_MAX_SERIES][48];
	unsigned int ns[4];		/* series per panel, 0: none */
	unsigned int left, right;	/* panels per column */
};

/* one panel, the @p'th of panels[], at its place in the grid */
static void gp_panel(FILE *f, const struct plot_files *pf, unsigned int p)
{
	unsigned int j;

	fprintf(f, "set title ");
	gp_str(f, panels[p].title);
	fprintf(f, "\nset ylabel ");
	gp_str(f, panels[p].ylabel);
	fprintf(f, "\n%s\n", panels[p].log ?
		"set logscale y\nset yrange [1:*]" :
		"unset logscale y\nset yrange [0:*]");
	fprintf(f, "plot ");
	for (j = 0; j < pf->ns[p]; j++) {
		if (j)
			fprintf(f, ", \\\n     ");
		gp_str(f, pf->data[p]);
		if (j == 0)
			fprintf(f, " using 2:3:4:xtic(1)");
		else
			fprintf(f, " using %u:%u:%u", 2 + 3 * j, 3 + 3 * j,
				4 + 3 * j);
		fprintf(f, " title ");
		gp_str(f, pf->series[p][j]);
	}
	fputc('\n', f);
}

/* row by row: left column throughput, right column latency */
static void gp_grid(FILE *f, const struct plot_files *pf, unsigned int nrow)
{
	unsigned int row, col, i;

	for (row = 0; row < nrow; row++) {
		for (col = 0; col < 2; col++) {
			unsigned int seen = 0, p = 4;

			if ((col == 0 && !pf->left) || (col == 1 && !pf->right))
				continue;
			for (i = col; i < 4; i += 2) {
				if (!pf->ns[i])
					continue;
				if (seen++ == row) {
					p = i;
					break;
				}
			}
			if (p == 4)
				fprintf(f, "set multiplot next\n");
			else
				gp_panel(f, pf, p);
		}
	}
}

static int gp_script(const struct plot_files *pf, const char *png,
		     const char *title)
{
	unsigned int nrow = pf->left > pf->right ? pf->left : pf->right;
	unsigned int ncol = (pf->left > 0) + (pf->right > 0);
	FILE *f = fopen(pf->script, "w");

	if (!f)
		return -1;
	fprintf(f, "set terminal pngcairo size %u,%u font 'sans,9' "
		"noenhanced\nset output ", 720 * ncol, 60 + 420 * nrow);
	gp_str(f, png);
	fprintf(f, "\nset multiplot layout %u,%u title ", nrow, ncol);
	gp_str(f, title);
	fprintf(f, "\nset style data histograms\n"
		"set style histogram errorbars gap 1 lw 1\n"
		"set style fill solid 0.85 border -1\n"
		"set grid ytics\nset key outside bottom center horizontal noenhanced\n"
		"set xtics nomirror scale 0 noenhanced\n"
		"set datafile missing 'NaN'\n");
	gp_grid(f, pf, nrow);
	fprintf(f, "unset multiplot\n");
	fclose(f);
	return 0;
}

int bench_plot(const char *png, const char *title,
	       const struct bench_plot_row *rows, unsigned int n)
{
	static struct plot_files pf;
	unsigned int i;
	int ret = -1;

	memset(&pf, 0, sizeof(pf));
	snprintf(pf.dir, sizeof(pf.dir), "/tmp/nfqb-plot.XXXXXX");
	if (!mkdtemp(pf.dir)) {
		fprintf(stderr, "nfqb-bench: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 4; i++) {
		snprintf(pf.data[i], sizeof(pf.data[i]), "%s/%s.dat", pf.dir,
			 panels[i].panel);
		write_panel(pf.data[i], panels[i].panel, rows, n, pf.series[i],
			    &pf.ns[i]);
		if (pf.ns[i] && (i == 0 || i == 2))
			pf.left++;
		if (pf.ns[i] && (i == 1 || i == 3))
			pf.right++;
	}
	if (!pf.left && !pf.right) {
		fprintf(stderr, "nfqb-bench: nothing to plot\n");
		goto out;
	}
	snprintf(pf.script, sizeof(pf.script), "%s/plot.gp", pf.dir);
	if (gp_script(&pf, png, title) < 0)
		goto out;
	ret = run_gnuplot(pf.script);
	if (ret < 0)
		fprintf(stderr, "nfqb-bench: gnuplot failed (script kept in %s)\n",
			pf.dir);
out:
	if (ret == 0) {
		for (i = 0; i < 4; i++)
			unlink(pf.data[i]);
		unlink(pf.script);
		rmdir(pf.dir);
	}
	return ret;
}

/* --- drawing a saved --json result again -------------------------------- */

/* the string value of "key" on @line */
static bool jstr(const char *line, const char *key, char *out, size_t len)
{
	char pat[48];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	for (p += strlen(pat); *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return true;
}

static bool jnum(const char *line, const char *key, double *v)
{
	char pat[48], *end;
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	*v = strtod(p, &end);
	return end != p;
}

int bench_replot(const char *json_path, const char *png)
{
	char line[1024], lib[64] = "?", date[64] = "?", kern[96] = "?";
	char title[300];
	struct bench_plot_row *rows;
	unsigned int n = 0, max = 4096;
	int ret;
	FILE *f;

	f = fopen(json_path, "re");
	if (!f) {
		fprintf(stderr, "nfqb-bench: %s: %s\n", json_path,
			strerror(errno));
		return -1;
	}
	rows = calloc(max, sizeof(*rows));
	if (!rows) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f) && n < max) {
		struct bench_plot_row *r = &rows[n];

		if (!strncmp(line, "  \"library\":", 12))
			jstr(line, "library", lib, sizeof(lib));
		if (!strncmp(line, "  \"date\":", 9))
			jstr(line, "date", date, sizeof(date));
		if (!strncmp(line, "  \"kernel\":", 11))
			jstr(line, "kernel", kern, sizeof(kern));
		if (!jstr(line, "panel", r->panel, sizeof(r->panel)) ||
		    !jstr(line, "series", r->series, sizeof(r->series)) ||
		    !jstr(line, "consumer", r->consumer, sizeof(r->consumer)) ||
		    !jnum(line, "value", &r->value))
			continue;
		if (!jnum(line, "min", &r->min))
			r->min = r->value;
		if (!jnum(line, "max", &r->max))
			r->max = r->value;
		n++;
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "nfqb-bench: %s has no \"plot\" rows (not a "
			"nfqb-bench --json result?)\n", json_path);
		free(rows);
		return -1;
	}
	snprintf(title, sizeof(title), "nfqb-bench, libnfq-batch %s, %s, "
		 "kernel %s", lib, date, kern);
	ret = bench_plot(png, title, rows, n);
	free(rows);
	return ret;
}
