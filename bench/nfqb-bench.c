/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench - measure libnfq-batch against hand-written NFQUEUE consumers
 * and against the kernel alone, side by side, in one run.
 *
 * Its parts: the command line (nfqb-bench-opts.c), the scenarios and
 * their running (nfqb-bench-scen.c), one run (nfqb-bench-run.c, with
 * the traffic, the consumers and their table), and the result: statistics
 * (nfqb-bench-stats.c), tables (nfqb-bench-udp.c, nfqb-bench-report.c),
 * JSON (nfqb-bench-json.c) and the picture (nfqb-bench-plot.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-json.h"
#include "nfqb-bench-opts.h"
#include "nfqb-bench-plot.h"
#include "nfqb-bench-report.h"
#include "nfqb-bench-run.h"
#include "nfqb-bench-scen.h"
#include "nfqb-bench-udp.h"

static void on_int(int sig)
{
	(void)sig;
	bench_interrupted = 1;
}

/* results in shared memory: each run's process writes its own */
static struct bench_result *map_results(unsigned int n)
{
	struct bench_result *res;

	res = mmap(NULL, n * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("nfqb-bench: mmap");
		return NULL;
	}
	return res;
}

static void end_progress(void)
{
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
}

static void report_failed(unsigned int bad)
{
	if (bad)
		fprintf(stderr, "nfqb-bench: %u run(s) failed or lost packets\n",
			bad);
}

/* --- compare: every mode, every consumer -------------------------------- */

static void set_init(struct bench_set *set, const struct bench_opts *o,
		     struct bench_result *res)
{
	unsigned int j;

	memset(set, 0, sizeof(*set));
	set->res = res;
	for (j = 0; j < o->plan.nkinds; j++)
		set->kinds[j] = o->plan.kinds[j];
	set->nkinds = o->plan.nkinds;
	set->reps = o->plan.reps;
	set->noise_pct = o->noise_pct;
	set->cfg = &o->cfg;
	set->calib_run = -1;
	set->load_fixed = o->plan.nload_pps > 0;
	set->ping_warmup = o->cfg.ping_count / 10 > 200 ? 200 :
			   o->cfg.ping_count / 10;
}

static void print_tables(const struct bench_opts *o,
			 const struct bench_set *set,
			 const struct bench_summary *sum, unsigned int nsum,
			 unsigned int bad)
{
	const struct bench_plan *p = &o->plan;

	bench_print_header(stdout, o);
	bench_print_udp(stdout, o, sum, nsum, set);
	if (bench_plan_has(p, BENCH_MODE_TCP))
		bench_print_tcp(stdout, set);
	if (bench_plan_has(p, BENCH_MODE_LATENCY))
		bench_print_latency(stdout, set);
	bench_print_udp_targets(stdout, sum, nsum, bad,
				p->modes & BENCH_MODES_UDP);
	bench_print_targets_new(stdout, set);
	bench_print_py(stdout, set);
	bench_print_app(stdout, set);
}

static void save_json(const struct bench_opts *o,
		      const struct bench_set *set,
		      const struct bench_summary *sum, unsigned int nsum,
		      unsigned int bad)
{
	FILE *f = fopen(o->save, "w");

	if (!f || (bench_json_compare(f, o, set, sum, nsum, bad),
		   fclose(f)) != 0)
		fprintf(stderr, "nfqb-bench: %s: %s\n", o->save,
			strerror(errno));
}

static int plot(const struct bench_opts *o, const struct bench_set *set)
{
	struct bench_plot_row *rows = calloc(1024, sizeof(*rows));
	char title[256];
	unsigned int n = rows ? bench_plot_rows(set, rows, 1024) : 0;
	int ret = 0;

	bench_title(title, sizeof(title));
	if (bench_plot(o->plot, title, rows, n) < 0)
		ret = 1;
	else
		fprintf(stderr, "nfqb-bench: drew %s\n", o->plot);
	free(rows);
	return ret;
}

static int do_compare(const struct bench_opts *o)
{
	struct bench_summary sum[BENCH_MAX_SIZES * BENCH_NKINDS * 2];
	unsigned int nsum, cap, bad;
	struct bench_set set;
	struct bench_result *res;
	int ret;

	cap = bench_plan_runs(&o->plan, o->cfg.sys_enter_id);
	res = map_results(cap + 1);
	if (!res)
		return 1;
	set_init(&set, o, res);
	bad = bench_run_plan(&o->plan, &o->cfg, &set, cap);
	end_progress();
	if (bench_interrupted) {
		fprintf(stderr, "nfqb-bench: interrupted\n");
		munmap(res, (cap + 1) * sizeof(*res));
		return 130;
	}
	nsum = bench_summarize(o, &set, sum);
	if (o->json)
		bench_json_compare(stdout, o, &set, sum, nsum, bad);
	else
		print_tables(o, &set, sum, nsum, bad);
	if (o->save)
		save_json(o, &set, sum, nsum, bad);
	ret = bad ? 1 : 0;
	if (o->plot && plot(o, &set))
		ret = 1;
	munmap(res, (cap + 1) * sizeof(*res));
	report_failed(bad);
	return ret;
}

/* --- memcheck: the library consumers' memory after N and 10 * N ------- */

/* the lib consumers asked for (by default the single-queue ones) */
static unsigned int memcheck_kinds(const struct bench_opts *o,
				   enum bench_kind *kinds)
{
	unsigned int j, n = 0;

	for (j = 0; j < o->plan.nkinds; j++) {
		enum bench_kind k = o->plan.kinds[j];

		if (k != BENCH_LIB && k != BENCH_LIB_MIXED &&
		    k != BENCH_LIB_POOL2)
			continue;
		if (!o->kinds_set && k == BENCH_LIB_POOL2)
			continue;
		kinds[n++] = k;
	}
	return n;
}

static void memcheck_row(const struct bench_opts *o, enum bench_kind k,
			 const struct bench_result *a,
			 const struct bench_result *b, bool last)
{
	long diff = b->cons_maxrss_kb - a->cons_maxrss_kb;
	bool met = diff <= 1024 && !a->failed && !b->failed;

	if (o->json)
		fprintf(stdout, "    {\"consumer\": \"%s\", "
			"\"packets\": [%llu, %llu], "
			"\"maxrss_kb\": [%ld, %ld], \"diff_kb\": %ld, "
			"\"met\": %s}%s\n", bench_consumers[k].name,
			(unsigned long long)o->cfg.packets,
			(unsigned long long)o->cfg.packets * 10,
			a->cons_maxrss_kb, b->cons_maxrss_kb, diff,
			met ? "true" : "false", last ? "" : ",");
	else
		printf("%-22s %8ld KiB %8ld KiB %6ld KiB  %s\n",
		       bench_consumers[k].label, a->cons_maxrss_kb,
		       b->cons_maxrss_kb, diff, met ? "met" : "NOT met");
}

static void memcheck_print(const struct bench_opts *o,
			   const struct bench_cfg *cfg,
			   const enum bench_kind *kinds, unsigned int n,
			   const struct bench_result *res, unsigned int bad)
{
	unsigned int i, j;

	if (o->json) {
		bench_json_header(stdout, o, "memcheck");
		fprintf(stdout, "  \"runs\": [\n");
		for (i = 0; i < 2 * n; i++)
			bench_json_run(stdout, &res[i], i + 1 == 2 * n);
		fprintf(stdout, "  ],\n  \"memcheck\": [\n");
	} else {
		printf("\nconsumer max RSS (ru_maxrss), payload %u B, target: "
		       "within 1024 KiB\n", cfg->payload);
		printf("%-22s %12s %12s %10s\n", "consumer", "after N",
		       "after 10*N", "diff");
	}
	for (j = 0; j < n; j++)
		memcheck_row(o, kinds[j], &res[j * 2], &res[j * 2 + 1],
			     j + 1 == n);
	if (o->json)
		fprintf(stdout, "  ],\n  \"ok\": %s\n}\n",
			bad ? "false" : "true");
	else
		printf("N = %llu datagrams\n",
		       (unsigned long long)o->cfg.packets);
}

static int do_memcheck(const struct bench_opts *o)
{
	struct bench_cfg cfg = o->cfg;
	enum bench_kind kinds[BENCH_NKINDS];
	unsigned int i, j, n, nres, bad = 0;
	struct bench_result *res;

	n = memcheck_kinds(o, kinds);
	if (!n) {
		fprintf(stderr, "nfqb-bench: --memcheck needs a lib consumer\n");
		return 2;
	}
	nres = 2 * n;
	res = map_results(nres);
	if (!res)
		return 1;
	cfg.payload = o->plan.sizes[0];
	cfg.timeout = 3600;
	cfg.sys_enter_id = -1;
	for (i = 0; i < 2 && !bench_interrupted; i++) {
		for (j = 0; j < n && !bench_interrupted; j++) {
			struct bench_result *r = &res[j * 2 + i];

			cfg.packets = o->cfg.packets * (i ? 10 : 1);
			bench_run(&cfg, kinds[j], r);
			r->timed = true;
			if (r->failed)
				bad++;
			bench_progress(i * n + j + 1, nres, r, NULL);
		}
	}
	end_progress();
	if (bench_interrupted)
		return 130;
	memcheck_print(o, &cfg, kinds, n, res, bad);
	munmap(res, nres * sizeof(*res));
	report_failed(bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_int };
	struct bench_opts o;

	bench_parse_opts(argc, argv, &o);
	if (o.replot)		/* draws a saved result, measures nothing */
		return bench_replot(o.replot, o.plot) < 0 ? 1 : 0;
	if (geteuid() != 0)
		fprintf(stderr, "nfqb-bench: needs root (namespaces, NFQUEUE)\n");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.syscount && !o.memcheck)
		o.cfg.sys_enter_id = bench_find_sys_enter_id();
	if (o.syscount && !o.memcheck && o.cfg.sys_enter_id < 0)
		fprintf(stderr, "nfqb-bench: raw_syscalls:sys_enter not "
			"available, no kernel count of syscalls (sc(k))\n");
	return o.memcheck ? do_memcheck(&o) : do_compare(&o);
}
