/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the command line. Every option is a row of the table below:
 * its names, its line of --help, and what it sets (a number within its
 * bounds, a flag, a string, or what its own function parses), with the
 * value --quick and --memcheck give it unless it is given itself.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-opts.h"

enum opt_type {
	OPT_FLAG,			/* a bool set to the row's value */
	OPT_U64,			/* numbers in [min, max] */
	OPT_UINT,
	OPT_DOUBLE,
	OPT_STR,
	OPT_FUNC,			/* parsed by the row's function */
};

struct opt {
	const char *name;		/* --name */
	char letter;			/* -l, 0: none */
	/* --help: the argument (NULL: none, "[=X]": optional) and the text,
	 * its lines after the first indented */
	const char *arg;
	const char *help;
	enum opt_type type;
	size_t off;			/* in struct bench_opts */
	unsigned long min, max;		/* numbers; a flag: max is its value */
	unsigned long quick;		/* unless given: with --quick (0: -) */
	unsigned long memcheck;		/* unless given: with --memcheck */
	void (*parse)(struct bench_opts *o, const char *arg);
};

#define OPT_TYPE(field)	_Generic(((struct bench_opts *)0)->field,	\
				 bool: OPT_FLAG, uint64_t: OPT_U64,	\
				 unsigned int: OPT_UINT,		\
				 double: OPT_DOUBLE, const char *: OPT_STR)
/* a number, flag or string at @field */
#define AT(field)	.type = OPT_TYPE(field),			\
			.off = offsetof(struct bench_opts, field)
#define NUM(field, lo, hi)	AT(field), .min = (lo), .max = (hi)
#define FLAG(field, v)		AT(field), .max = (v)
#define FUNC(fn)		.type = OPT_FUNC, .parse = (fn)

/* offset 0 is no flag of any row: the configuration comes first */
_Static_assert(offsetof(struct bench_opts, cfg) == 0, "cfg first");

static void usage(FILE *f);

__attribute__((format(printf, 1, 2), noreturn))
static void bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nfqb-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long num_arg(const char *s, unsigned long min,
			     unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v < min || v > max)
		bad("bad number '%s'", s);
	return v;
}

/* a list of numbers in [min, max], at most @max_n; -1 if bad */
static int num_list(const char *arg, unsigned int *out, unsigned int max_n,
		    unsigned long min, unsigned long max)
{
	unsigned int n = 0;
	const char *p = arg;
	char *end;

	while (*p) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || n == max_n || v < min || v > max)
			return -1;
		out[n++] = (unsigned int)v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return (int)n;
}

/* a list of numbers for option @what: at least one */
static unsigned int nums(const char *arg, unsigned int *out,
			 unsigned long min, unsigned long max,
			 const char *what)
{
	int n = num_list(arg, out, BENCH_MAX_LIST, min, max);

	if (n <= 0)
		bad("bad %s '%s'", what, arg);
	return (unsigned int)n;
}

/* each comma-separated word of @arg (its first @len - 1 characters), by
 * @fn (false: bad) */
static bool words(const char *arg, size_t len, struct bench_opts *o,
		  bool (*fn)(struct bench_opts *o, const char *word))
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, len < sizeof(buf) ? len : sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!fn(o, tok))
			return false;
	return true;
}

/* --- what the options' own functions parse -------------------------------- */

static void opt_sizes(struct bench_opts *o, const char *arg)
{
	int n = num_list(arg, o->plan.sizes, BENCH_MAX_SIZES, 1, 65000);

	if (n <= 0)
		bad("bad sizes");
	o->plan.nsizes = (unsigned int)n;
}

static bool kind_word(struct bench_opts *o, const char *word)
{
	int k;

	for (k = 0; k < BENCH_NKINDS; k++)
		if (!strcmp(word, bench_consumers[k].name))
			break;
	if (k == BENCH_NKINDS || o->plan.nkinds == BENCH_NKINDS)
		return false;
	o->plan.kinds[o->plan.nkinds++] = k;
	return true;
}

static void opt_consumers(struct bench_opts *o, const char *arg)
{
	o->plan.nkinds = 0;
	if (!words(arg, 256, o, kind_word) || !o->plan.nkinds)
		bad("bad consumers");
	o->kinds_set = true;
}

static void opt_cpus(struct bench_opts *o, const char *arg)
{
	if (sscanf(arg, "%d,%d", &o->cfg.cpu_traffic,
		   &o->cfg.cpu_consumer) != 2)
		bad("bad --cpus");
}

static void opt_hook(struct bench_opts *o, const char *arg)
{
	if (!strcmp(arg, "input"))
		o->cfg.hook = BENCH_HOOK_INPUT;
	else if (!strcmp(arg, "output"))
		o->cfg.hook = BENCH_HOOK_OUTPUT;
	else
		bad("bad --hook");
}

static void opt_nice(struct bench_opts *o, const char *arg)
{
	o->cfg.nice = atoi(arg);
	if (o->cfg.nice < -20 || o->cfg.nice > 19)
		bad("bad --nice");
}

static void opt_rt(struct bench_opts *o, const char *arg)
{
	o->cfg.rt_prio = arg ? (int)num_arg(arg, 1, 99) : 10;
}

/* a mode's name, or both (stream and drain) or all */
static bool mode_word(struct bench_opts *o, const char *word)
{
	unsigned int m;

	if (!strcmp(word, "both")) {
		o->plan.modes |= BENCH_MODES_UDP;
		return true;
	}
	if (!strcmp(word, "all")) {
		o->plan.modes |= BENCH_MODES_ALL;
		return true;
	}
	for (m = 0; m < BENCH_NMODES; m++) {
		if (!strcmp(word, bench_mode_name(m))) {
			o->plan.modes |= BENCH_MODE(m);
			return true;
		}
	}
	bad("bad --mode '%s'", word);
}

static void opt_mode(struct bench_opts *o, const char *arg)
{
	o->plan.modes = 0;
	words(arg, 128, o, mode_word);
	if (!o->plan.modes)
		bad("bad --mode");
}

static void opt_tcp_flows(struct bench_opts *o, const char *arg)
{
	o->plan.ntcp_flows = nums(arg, o->plan.tcp_flows, 1,
				  BENCH_MAX_TCP_STREAMS, "--tcp-flows");
}

static bool gso_word(struct bench_opts *o, const char *word)
{
	static const char *const names[] = { "default", "off", "on" };
	int g;

	for (g = 0; g < 3; g++) {
		if (strcmp(word, names[g]) || o->plan.ngso == 3)
			continue;
		o->plan.gso[o->plan.ngso++] = g - 1;
		return true;
	}
	return false;
}

static void opt_gso(struct bench_opts *o, const char *arg)
{
	o->plan.ngso = 0;
	if (!words(arg, 64, o, gso_word) || !o->plan.ngso)
		bad("bad --gso (off, on, default)");
}

static void opt_load(struct bench_opts *o, const char *arg)
{
	if (!strcmp(arg, "none"))
		o->plan.nload_pct = 0;
	else
		o->plan.nload_pct = nums(arg, o->plan.load_pct, 1, 200,
					 "--load");
}

static void opt_load_pps(struct bench_opts *o, const char *arg)
{
	o->plan.nload_pps = nums(arg, o->plan.load_pps, 1, 10000000,
				 "--load-pps");
}

static void opt_help(struct bench_opts *o, const char *arg)
{
	(void)o;
	(void)arg;
	usage(stdout);
	exit(0);
}

/* --- the options, in the order of --help ---------------------------------- */

static const struct opt opts[] = {
	{ "packets", 'n', "N", "datagrams per run (default 500000)",
	  NUM(cfg.packets, 1, 1000000000), .quick = 100000,
	  .memcheck = 1000000 },
	{ "reps", 'r', "N", "repetitions of each consumer (default 5)",
	  NUM(plan.reps, 1, 1000), .quick = 3 },
	{ "sizes", 's', "LIST", "UDP payload sizes in bytes (default 64,1024)",
	  FUNC(opt_sizes) },
	{ "consumers", 'c', "LIST",
	  "kernel,ref-a,ref-b,lib,lib-mixed,lib-pool2 (default\n"
	  "all of these), daq-nfq,daq-nfqb (daqtest -p on libdaq's\n"
	  "nfq module and on daq_nfqb; built --with-daq; stream\n"
	  "mode only), py-nfq,py-compat,py-batch (Python:\n"
	  "python-netfilterqueue 1.1.0, nfqb.netfilterqueue,\n"
	  "nfqb.Queue; stream and tcp modes; make bench-python),\n"
	  "app,app-old (nfqb-bench-app, one binary on the 0.1.0\n"
	  "API, on this library and on NFQB_BENCH_OLD_LIB's;\n"
	  "stream and tcp modes; make bench-abi)",
	  FUNC(opt_consumers) },
	{ "quick", 'q', NULL, "100000 datagrams, 3 repetitions, shorter TCP and\n"
	  "latency runs", FLAG(quick, true) },
	{ "json", 'j', NULL, "machine-readable result on stdout",
	  FLAG(json, true) },
	{ "memcheck", 'm', NULL, "max RSS of the lib consumers after N and 10*N\n"
	  "datagrams (N = --packets, default 1000000)",
	  FLAG(memcheck, true) },
	{ "window", 'w', "N", "datagrams in flight at most (default 512)",
	  NUM(cfg.window, 1, 60000) },
	{ "burst", 'b', "N", "datagrams per sendmmsg (default 32)",
	  NUM(cfg.burst, 1, 1024) },
	{ "flows", 'f', "N", "sending sockets / source addresses (default 8)",
	  NUM(cfg.flows, 1, BENCH_MAX_FLOWS) },
	{ "batch", 0, "N", "verdict batch of ref B and the library (default 64)",
	  NUM(cfg.batch, 1, 65536) },
	{ "maxlen", 0, "N",
	  "kernel queue length of every consumer (default 4096)",
	  NUM(cfg.maxlen, 1, 1000000) },
	{ "cpus", 0, "T,C",
	  "CPUs of the traffic and consumer processes (default 0,1)",
	  FUNC(opt_cpus) },
	{ "hook", 0, "H", "input (default) or output", FUNC(opt_hook) },
	{ "timeout", 0, "S", "seconds a run may take (default 120)",
	  NUM(cfg.timeout, 1, 100000) },
	{ "mode", 0, "LIST", "stream,drain,tcp,latency; both = stream,drain\n"
	  "(default), all = every mode", FUNC(opt_mode) },
	{ "tcp-time", 0, "S", "iperf3 seconds per TCP run (default 3, --quick 2)",
	  NUM(cfg.tcp_time, 1, 600), .quick = 2 },
	{ "tcp-flows", 0, "LIST", "iperf3 -P values (default 1,8)",
	  FUNC(opt_tcp_flows) },
	{ "gso", 0, "LIST", "the queue's GSO flag: off,on (default) or default",
	  FUNC(opt_gso) },
	{ "mtu", 0, "N", "loopback MTU of the TCP runs (default 1500)",
	  NUM(cfg.mtu, 576, 65536) },
	{ "pings", 0, "N", "measured round trips per latency run (default\n"
	  "20000, --quick 5000)", NUM(cfg.ping_count, 10, 10000000),
	  .quick = 5000 },
	{ "ping-time", 0, "S", "seconds a latency run may take (default 10,\n"
	  "--quick 5)", NUM(cfg.ping_time, 1, 3600), .quick = 5 },
	{ "ping-size", 0, "N", "bytes per request and response (default 64)",
	  NUM(cfg.ping_size, 8, 1400) },
	{ "load", 0, "LIST", "background load in % of ref A's calibrated rate\n"
	  "(default 25,50,90; none: no load runs)", FUNC(opt_load) },
	{ "load-pps", 0, "LIST", "fixed background loads in pkt/s instead",
	  FUNC(opt_load_pps) },
	{ "both-ways", 0, NULL, "TCP and latency: queue the replies too",
	  FLAG(cfg.both_ways, true) },
	{ "noise", 0, "PCT", "a reference whose runs spread more is noisy\n"
	  "(default 15)", NUM(noise_pct, 1, 1000) },
	{ "plot", 0, "FILE.png", "draw throughput and latency with gnuplot",
	  AT(plot) },
	{ "replot", 0, "FILE", "draw --plot from a saved --json result, no runs",
	  AT(replot) },
	{ "save", 0, "FILE", "also write the --json result to FILE (with the\n"
	  "tables on stdout)", AT(save) },
	{ "no-syscount", 0, NULL, "skip the untimed syscall-counting runs",
	  FLAG(syscount, false) },
	{ "nice", 0, "N", "nice value of the measured processes (default 0)",
	  FUNC(opt_nice) },
	{ "rt", 0, "[=PRIO]", "run them SCHED_FIFO (default priority 10): for a\n"
	  "machine with other load", FUNC(opt_rt) },
	{ "help", 'h', NULL, NULL, FUNC(opt_help) },
};

#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

/* getopt_long()'s order, which its "ambiguous" message lists them in */
static const char *const getopt_order[NOPTS] = {
	"packets", "reps", "sizes", "consumers", "quick", "json", "memcheck",
	"window", "burst", "flows", "batch", "cpus", "hook", "timeout",
	"no-syscount", "nice", "rt", "mode", "tcp-time", "tcp-flows", "gso",
	"mtu", "pings", "ping-time", "ping-size", "load", "load-pps",
	"both-ways", "noise", "plot", "replot", "save", "maxlen", "help",
};

/* the defaults */
static void defaults(struct bench_opts *o)
{
	unsigned int k;

	*o = (struct bench_opts) {
		.cfg = {
			.packets = 500000, .payload = 64, .window = 512,
			.burst = 32, .flows = 8, .batch = 64, .maxlen = 4096,
			.rcvbuf = 16u << 20, .cpu_traffic = 0,
			.cpu_consumer = 1, .hook = BENCH_HOOK_INPUT,
			.timeout = 120, .stall = 3, .sys_enter_id = -1,
			.gso = -1, .tcp_time = 3, .tcp_streams = 1,
			.mtu = 1500, .ping_count = 20000, .ping_size = 64,
			.ping_time = 10,
		},
		.plan = {
			.modes = BENCH_MODES_UDP, .reps = 5,
			.sizes = { 64, 1024 }, .nsizes = 2,
			.tcp_flows = { 1, 8 }, .ntcp_flows = 2,
			.gso = { 0, 1 }, .ngso = 2,
			.load_pct = { 25, 50, 90 }, .nload_pct = 3,
			.calib_packets = 100000,
		},
		.noise_pct = 15,
		.syscount = true,
	};
	for (k = 0; k < BENCH_NKINDS_DEFAULT; k++)
		o->plan.kinds[o->plan.nkinds++] = k;
}

static void usage(FILE *f)
{
	const struct opt *d;
	char left[32], sname[8];
	const char *h, *nl;

	fprintf(f, "Usage: nfqb-bench [options]\n"
		"Compare libnfq-batch with hand-written NFQUEUE consumers and the kernel\n"
		"alone, in private network namespaces on loopback (needs root).\n"
		"\n");
	for (d = opts; d < opts + NOPTS; d++) {
		snprintf(sname, sizeof(sname), d->letter ? "-%c," : "", d->letter);
		snprintf(left, sizeof(left), "--%s%s%s", d->name,
			 d->arg && d->arg[0] != '[' ? " " : "",
			 d->arg ? d->arg : "");
		if (!d->help) {
			fprintf(f, "  %-4s%s\n", sname, left);
			continue;
		}
		for (h = d->help; (nl = strchr(h, '\n')); h = nl + 1) {
			fprintf(f, "  %-4s%-16s %.*s\n", sname, left,
				(int)(nl - h), h);
			sname[0] = left[0] = '\0';
		}
		fprintf(f, "  %-4s%-16s %s\n", sname, left, h);
	}
}

static const struct opt *opt_named(const char *name)
{
	const struct opt *d;

	for (d = opts; d < opts + NOPTS; d++)
		if (!strcmp(d->name, name))
			return d;
	abort();	/* getopt_order and opts disagree */
}

/* getopt_long()'s arguments: a long option's value is its letter or 256
 * plus its row */
static void getopt_args(struct option *lo, char *shorts)
{
	const struct opt *d;
	unsigned int i;

	for (i = 0; i < NOPTS; i++) {
		d = opt_named(getopt_order[i]);
		lo[i] = (struct option) {
			.name = d->name,
			.has_arg = !d->arg ? no_argument : d->arg[0] == '[' ?
				   optional_argument : required_argument,
			.val = d->letter ? d->letter : 256 + (int)(d - opts),
		};
	}
	lo[NOPTS] = (struct option) { 0 };
	for (d = opts; d < opts + NOPTS; d++) {
		if (!d->letter)
			continue;
		*shorts++ = d->letter;
		if (d->arg)
			*shorts++ = ':';
	}
	*shorts = '\0';
}

static const struct opt *opt_of(int c)
{
	const struct opt *d;

	if (c >= 256 && c < 256 + (int)NOPTS)
		return &opts[c - 256];
	for (d = opts; d < opts + NOPTS; d++)
		if (d->letter && d->letter == c)
			return d;
	return NULL;
}

/* store @v at the row's field */
static void set_num(struct bench_opts *o, const struct opt *d,
		    unsigned long v)
{
	void *p = (char *)o + d->off;

	switch (d->type) {
	case OPT_U64:
		*(uint64_t *)p = v;
		break;
	case OPT_UINT:
		*(unsigned int *)p = (unsigned int)v;
		break;
	case OPT_DOUBLE:
		*(double *)p = (double)v;
		break;
	case OPT_FLAG:
		*(bool *)p = v;
		break;
	default:
		break;
	}
}

static void apply(struct bench_opts *o, const struct opt *d, const char *arg)
{
	switch (d->type) {
	case OPT_FUNC:
		d->parse(o, arg);
		break;
	case OPT_STR:
		*(const char **)((char *)o + d->off) = arg;
		break;
	case OPT_FLAG:
		set_num(o, d, d->max);
		break;
	default:
		set_num(o, d, num_arg(arg, d->min, d->max));
		break;
	}
}

/* what the options say together */
static void check(const struct bench_opts *o)
{
	unsigned int i;

	if (o->replot && !o->plot)
		bad("--replot needs --plot FILE.png");
	for (i = 0; i < o->plan.nsizes; i++)
		if (o->plan.sizes[i] < 8 || o->plan.sizes[i] > 1400)
			bad("sizes must be 8..1400");
	if (o->cfg.burst > o->cfg.window)
		bad("burst must not exceed window");
}

void bench_parse_opts(int argc, char **argv, struct bench_opts *o)
{
	struct option lo[NOPTS + 1];
	char shorts[2 * NOPTS + 1];
	bool given[NOPTS] = { false };
	const struct opt *d;
	int c;

	defaults(o);
	getopt_args(lo, shorts);
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		d = opt_of(c);
		if (!d) {
			usage(stderr);
			exit(2);
		}
		apply(o, d, optarg);
		given[d - opts] = true;
	}
	if (optind < argc) {
		usage(stderr);
		exit(2);
	}
	for (d = opts; d < opts + NOPTS; d++) {
		if (given[d - opts])
			continue;
		if (o->quick && d->quick)
			set_num(o, d, d->quick);
		if (o->memcheck && d->memcheck)
			set_num(o, d, d->memcheck);
	}
	if (o->quick)
		o->plan.calib_packets = 50000;
	check(o);
}
