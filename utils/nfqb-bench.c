/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench - measure libnfq-batch against hand-written NFQUEUE consumers
 * and against the kernel alone, side by side, in one run.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include <libnfq-batch/libnfq-batch.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-json.h"
#include "nfqb-bench-plot.h"
#include "nfqb-bench-report.h"
#include "nfqb-bench-run.h"
#include "nfqb-bench-stats.h"

#define MAX_SIZES 8
#define MAX_LIST 8

struct opts {
	struct bench_cfg cfg;
	unsigned int reps;
	unsigned int sizes[MAX_SIZES];
	unsigned int nsizes;
	enum bench_kind kinds[BENCH_NKINDS];
	unsigned int nkinds;
	bool json;
	bool memcheck;
	bool packets_set, reps_set, sizes_set, kinds_set;
	bool syscount;
	bool stream, drain, tcp, latency;	/* modes to run */
	/* TCP */
	bool tcp_time_set;
	unsigned int tcp_flows[MAX_LIST];
	unsigned int ntcp_flows;
	int gso[3];				/* -1 default, 0 off, 1 on */
	unsigned int ngso;
	/* latency */
	bool pings_set, ping_time_set;
	unsigned int load_pct[MAX_LIST];	/* % of ref A's rate */
	unsigned int nload_pct;
	unsigned int load_pps[MAX_LIST];	/* fixed rates instead */
	unsigned int nload_pps;
	uint64_t calib_packets;
	double noise_pct;
	const char *plot;			/* PNG to draw */
	const char *replot;			/* --json file to draw from */
	const char *save;			/* --save: the --json result too */
};

/* one line of the summary: medians over the repetitions */
struct summary {
	enum bench_kind kind;
	unsigned int payload;
	bool drain;
	unsigned int runs;
	double pps, pps_min, pps_max;
	double cpu_ns, user_ns, sys_ns;		/* consumer, per packet */
	double cpu_min, cpu_max;
	double traffic_ns;			/* traffic process, per packet */
	double sc_pkt;				/* kernel-counted syscalls */
	double sc_self_pkt;			/* consumer-counted */
	double vmsg_pkt;
	double util_t, util_c;			/* process CPU / elapsed, % */
	double busy_t, busy_c;			/* /proc/stat CPU busy, % */
	uint64_t lost;
	unsigned int failed;
};

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: nfqb-bench [options]\n"
"Compare libnfq-batch with hand-written NFQUEUE consumers and the kernel\n"
"alone, in private network namespaces on loopback (needs root).\n"
"\n"
"  -n, --packets N      datagrams per run (default 500000)\n"
"  -r, --reps N         repetitions of each consumer (default 5)\n"
"  -s, --sizes LIST     UDP payload sizes in bytes (default 64,1024)\n"
"  -c, --consumers LIST kernel,ref-a,ref-b,lib,lib-mixed,lib-pool2 (default\n"
"                       all of these), daq-nfq,daq-nfqb (daqtest -p on libdaq's\n"
"                       nfq module and on daq_nfqb; built --with-daq; stream\n"
"                       mode only), py-nfq,py-compat,py-batch (Python:\n"
"                       python-netfilterqueue 1.1.0, nfqb.netfilterqueue,\n"
"                       nfqb.Queue; stream and tcp modes; make bench-python)\n"
"  -q, --quick          100000 datagrams, 3 repetitions, shorter TCP and\n"
"                       latency runs\n"
"  -j, --json           machine-readable result on stdout\n"
"  -m, --memcheck       max RSS of the lib consumers after N and 10*N\n"
"                       datagrams (N = --packets, default 1000000)\n"
"  -w, --window N       datagrams in flight at most (default 512)\n"
"  -b, --burst N        datagrams per sendmmsg (default 32)\n"
"  -f, --flows N        sending sockets / source addresses (default 8)\n"
"      --batch N        verdict batch of ref B and the library (default 64)\n"
"      --maxlen N       kernel queue length of every consumer (default 4096)\n"
"      --cpus T,C       CPUs of the traffic and consumer processes (default 0,1)\n"
"      --hook H         input (default) or output\n"
"      --timeout S      seconds a run may take (default 120)\n"
"      --mode LIST      stream,drain,tcp,latency; both = stream,drain\n"
"                       (default), all = every mode\n"
"      --tcp-time S     iperf3 seconds per TCP run (default 3, --quick 2)\n"
"      --tcp-flows LIST iperf3 -P values (default 1,8)\n"
"      --gso LIST       the queue's GSO flag: off,on (default) or default\n"
"      --mtu N          loopback MTU of the TCP runs (default 1500)\n"
"      --pings N        measured round trips per latency run (default\n"
"                       20000, --quick 5000)\n"
"      --ping-time S    seconds a latency run may take (default 10,\n"
"                       --quick 5)\n"
"      --ping-size N    bytes per request and response (default 64)\n"
"      --load LIST      background load in %% of ref A's calibrated rate\n"
"                       (default 25,50,90; none: no load runs)\n"
"      --load-pps LIST  fixed background loads in pkt/s instead\n"
"      --both-ways      TCP and latency: queue the replies too\n"
"      --noise PCT      a reference whose runs spread more is noisy\n"
"                       (default 15)\n"
"      --plot FILE.png  draw throughput and latency with gnuplot\n"
"      --replot FILE    draw --plot from a saved --json result, no runs\n"
"      --save FILE      also write the --json result to FILE (with the\n"
"                       tables on stdout)\n"
"      --no-syscount    skip the untimed syscall-counting runs\n"
"      --nice N         nice value of the measured processes (default 0)\n"
"      --rt[=PRIO]      run them SCHED_FIFO (default priority 10): for a\n"
"                       machine with other load\n"
"  -h, --help\n");
}

static int parse_list(const char *s, unsigned int *out, unsigned int max)
{
	unsigned int n = 0;
	char *end;

	while (*s) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || n == max || v == 0 || v > 65000)
			return -1;
		out[n++] = (unsigned int)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return (int)n;
}

static int parse_kinds(const char *s, struct opts *o)
{
	char buf[256], *tok, *save = NULL;
	int k;

	snprintf(buf, sizeof(buf), "%s", s);
	o->nkinds = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < BENCH_NKINDS; k++)
			if (!strcmp(tok, bench_consumers[k].name))
				break;
		if (k == BENCH_NKINDS || o->nkinds == BENCH_NKINDS)
			return -1;
		o->kinds[o->nkinds++] = k;
	}
	return o->nkinds ? 0 : -1;
}

static unsigned long num_arg(const char *s, unsigned long min,
			     unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v < min || v > max) {
		fprintf(stderr, "nfqb-bench: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

enum { OPT_BATCH = 256, OPT_CPUS, OPT_HOOK, OPT_TIMEOUT, OPT_NOSYS, OPT_NICE,
       OPT_RT, OPT_MODE, OPT_TCP_TIME, OPT_TCP_FLOWS, OPT_GSO, OPT_MTU,
       OPT_PINGS, OPT_PING_TIME, OPT_PING_SIZE, OPT_LOAD, OPT_LOAD_PPS,
       OPT_BOTH, OPT_NOISE, OPT_PLOT, OPT_REPLOT, OPT_MAXLEN, OPT_SAVE };

static void parse_modes(const char *arg, struct opts *o)
{
	char buf[128], *tok, *save = NULL;

	o->stream = o->drain = o->tcp = o->latency = false;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "stream")) {
			o->stream = true;
		} else if (!strcmp(tok, "drain")) {
			o->drain = true;
		} else if (!strcmp(tok, "both")) {
			o->stream = o->drain = true;
		} else if (!strcmp(tok, "tcp")) {
			o->tcp = true;
		} else if (!strcmp(tok, "latency")) {
			o->latency = true;
		} else if (!strcmp(tok, "all")) {
			o->stream = o->drain = o->tcp = o->latency = true;
		} else {
			fprintf(stderr, "nfqb-bench: bad --mode '%s'\n", tok);
			exit(2);
		}
	}
	if (!o->stream && !o->drain && !o->tcp && !o->latency) {
		fprintf(stderr, "nfqb-bench: bad --mode\n");
		exit(2);
	}
}

static void parse_gso(const char *arg, struct opts *o)
{
	char buf[64], *tok, *save = NULL;

	o->ngso = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->ngso == 3)
			goto bad;
		if (!strcmp(tok, "off"))
			o->gso[o->ngso++] = 0;
		else if (!strcmp(tok, "on"))
			o->gso[o->ngso++] = 1;
		else if (!strcmp(tok, "default"))
			o->gso[o->ngso++] = -1;
		else
			goto bad;
	}
	if (o->ngso)
		return;
bad:
	fprintf(stderr, "nfqb-bench: bad --gso (off, on, default)\n");
	exit(2);
}

/* a list of numbers in [min, max] */
static unsigned int parse_nums(const char *arg, unsigned int *out,
			       unsigned long min, unsigned long max,
			       const char *what)
{
	unsigned int n = 0;
	const char *p = arg;
	char *end;

	while (*p) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || n == MAX_LIST || v < min || v > max)
			goto bad;
		out[n++] = (unsigned int)v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (n)
		return n;
bad:
	fprintf(stderr, "nfqb-bench: bad %s '%s'\n", what, arg);
	exit(2);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "packets", required_argument, NULL, 'n' },
		{ "reps", required_argument, NULL, 'r' },
		{ "sizes", required_argument, NULL, 's' },
		{ "consumers", required_argument, NULL, 'c' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "memcheck", no_argument, NULL, 'm' },
		{ "window", required_argument, NULL, 'w' },
		{ "burst", required_argument, NULL, 'b' },
		{ "flows", required_argument, NULL, 'f' },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "hook", required_argument, NULL, OPT_HOOK },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "no-syscount", no_argument, NULL, OPT_NOSYS },
		{ "nice", required_argument, NULL, OPT_NICE },
		{ "rt", optional_argument, NULL, OPT_RT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "tcp-time", required_argument, NULL, OPT_TCP_TIME },
		{ "tcp-flows", required_argument, NULL, OPT_TCP_FLOWS },
		{ "gso", required_argument, NULL, OPT_GSO },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "pings", required_argument, NULL, OPT_PINGS },
		{ "ping-time", required_argument, NULL, OPT_PING_TIME },
		{ "ping-size", required_argument, NULL, OPT_PING_SIZE },
		{ "load", required_argument, NULL, OPT_LOAD },
		{ "load-pps", required_argument, NULL, OPT_LOAD_PPS },
		{ "both-ways", no_argument, NULL, OPT_BOTH },
		{ "noise", required_argument, NULL, OPT_NOISE },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "replot", required_argument, NULL, OPT_REPLOT },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "maxlen", required_argument, NULL, OPT_MAXLEN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool quick = false;
	int c, k;

	memset(o, 0, sizeof(*o));
	o->cfg = (struct bench_cfg) {
		.packets = 500000, .payload = 64, .window = 512, .burst = 32,
		.flows = 8, .batch = 64, .maxlen = 4096,
		.rcvbuf = 16u << 20, .cpu_traffic = 0, .cpu_consumer = 1,
		.hook = BENCH_HOOK_INPUT, .timeout = 120, .stall = 3,
		.sys_enter_id = -1, .gso = -1, .tcp_time = 3,
		.tcp_streams = 1, .mtu = 1500, .ping_count = 20000,
		.ping_size = 64, .ping_time = 10,
	};
	o->tcp_flows[0] = 1;
	o->tcp_flows[1] = 8;
	o->ntcp_flows = 2;
	o->gso[0] = 0;
	o->gso[1] = 1;
	o->ngso = 2;
	o->load_pct[0] = 25;
	o->load_pct[1] = 50;
	o->load_pct[2] = 90;
	o->nload_pct = 3;
	o->calib_packets = 100000;
	o->noise_pct = 15;
	o->reps = 5;
	o->sizes[0] = 64;
	o->sizes[1] = 1024;
	o->nsizes = 2;
	o->syscount = true;
	o->stream = o->drain = true;
	for (k = 0; k < BENCH_NKINDS_DEFAULT; k++)
		o->kinds[o->nkinds++] = k;

	while ((c = getopt_long(argc, argv, "n:r:s:c:qjmw:b:f:h", lo,
				NULL)) != -1) {
		switch (c) {
		case 'n':
			o->cfg.packets = num_arg(optarg, 1, 1000000000);
			o->packets_set = true;
			break;
		case 'r':
			o->reps = num_arg(optarg, 1, 1000);
			o->reps_set = true;
			break;
		case 's':
			c = parse_list(optarg, o->sizes, MAX_SIZES);
			if (c <= 0) {
				fprintf(stderr, "nfqb-bench: bad sizes\n");
				exit(2);
			}
			o->nsizes = c;
			o->sizes_set = true;
			break;
		case 'c':
			if (parse_kinds(optarg, o) < 0) {
				fprintf(stderr, "nfqb-bench: bad consumers\n");
				exit(2);
			}
			o->kinds_set = true;
			break;
		case 'q':
			quick = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'm':
			o->memcheck = true;
			break;
		case 'w':
			o->cfg.window = num_arg(optarg, 1, 60000);
			break;
		case 'b':
			o->cfg.burst = num_arg(optarg, 1, 1024);
			break;
		case 'f':
			o->cfg.flows = num_arg(optarg, 1, BENCH_MAX_FLOWS);
			break;
		case OPT_BATCH:
			o->cfg.batch = num_arg(optarg, 1, 65536);
			break;
		case OPT_CPUS:
			if (sscanf(optarg, "%d,%d", &o->cfg.cpu_traffic,
				   &o->cfg.cpu_consumer) != 2) {
				fprintf(stderr, "nfqb-bench: bad --cpus\n");
				exit(2);
			}
			break;
		case OPT_HOOK:
			if (!strcmp(optarg, "input")) {
				o->cfg.hook = BENCH_HOOK_INPUT;
			} else if (!strcmp(optarg, "output")) {
				o->cfg.hook = BENCH_HOOK_OUTPUT;
			} else {
				fprintf(stderr, "nfqb-bench: bad --hook\n");
				exit(2);
			}
			break;
		case OPT_TIMEOUT:
			o->cfg.timeout = num_arg(optarg, 1, 100000);
			break;
		case OPT_NOSYS:
			o->syscount = false;
			break;
		case OPT_NICE:
			o->cfg.nice = atoi(optarg);
			if (o->cfg.nice < -20 || o->cfg.nice > 19) {
				fprintf(stderr, "nfqb-bench: bad --nice\n");
				exit(2);
			}
			break;
		case OPT_MODE:
			parse_modes(optarg, o);
			break;
		case OPT_TCP_TIME:
			o->cfg.tcp_time = num_arg(optarg, 1, 600);
			o->tcp_time_set = true;
			break;
		case OPT_TCP_FLOWS:
			o->ntcp_flows = parse_nums(optarg, o->tcp_flows, 1,
						   BENCH_MAX_TCP_STREAMS,
						   "--tcp-flows");
			break;
		case OPT_GSO:
			parse_gso(optarg, o);
			break;
		case OPT_MTU:
			o->cfg.mtu = num_arg(optarg, 576, 65536);
			break;
		case OPT_PINGS:
			o->cfg.ping_count = num_arg(optarg, 10, 10000000);
			o->pings_set = true;
			break;
		case OPT_PING_TIME:
			o->cfg.ping_time = num_arg(optarg, 1, 3600);
			o->ping_time_set = true;
			break;
		case OPT_PING_SIZE:
			o->cfg.ping_size = num_arg(optarg, 8, 1400);
			break;
		case OPT_LOAD:
			if (!strcmp(optarg, "none"))
				o->nload_pct = 0;
			else
				o->nload_pct = parse_nums(optarg, o->load_pct,
							  1, 200, "--load");
			break;
		case OPT_LOAD_PPS:
			o->nload_pps = parse_nums(optarg, o->load_pps, 1,
						  10000000, "--load-pps");
			break;
		case OPT_BOTH:
			o->cfg.both_ways = true;
			break;
		case OPT_NOISE:
			o->noise_pct = num_arg(optarg, 1, 1000);
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_REPLOT:
			o->replot = optarg;
			break;
		case OPT_SAVE:
			o->save = optarg;
			break;
		case OPT_MAXLEN:
			o->cfg.maxlen = num_arg(optarg, 1, 1000000);
			break;
		case OPT_RT:
			o->cfg.rt_prio = optarg ? (int)num_arg(optarg, 1, 99) :
				10;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(2);
	}
	if (quick) {
		if (!o->packets_set)
			o->cfg.packets = 100000;
		if (!o->reps_set)
			o->reps = 3;
		if (!o->tcp_time_set)
			o->cfg.tcp_time = 2;
		if (!o->pings_set)
			o->cfg.ping_count = 5000;
		if (!o->ping_time_set)
			o->cfg.ping_time = 5;
		o->calib_packets = 50000;
	}
	if (o->replot && !o->plot) {
		fprintf(stderr, "nfqb-bench: --replot needs --plot FILE.png\n");
		exit(2);
	}
	if (o->memcheck && !o->packets_set)
		o->cfg.packets = 1000000;
	for (k = 0; k < (int)o->nsizes; k++) {
		if (o->sizes[k] < 8 || o->sizes[k] > 1400) {
			fprintf(stderr, "nfqb-bench: sizes must be 8..1400\n");
			exit(2);
		}
	}
	if (o->cfg.burst > o->cfg.window) {
		fprintf(stderr, "nfqb-bench: burst must not exceed window\n");
		exit(2);
	}
}

/* --- statistics --------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void summarize(const struct bench_result *res, unsigned int nres,
		      enum bench_kind kind, unsigned int payload, bool drain,
		      struct summary *s)
{
	double pps[nres + 1], cpu[nres + 1], usr[nres + 1], sys[nres + 1];
	double tr[nres + 1], sc[nres + 1], scs[nres + 1], vm[nres + 1];
	double bt[nres + 1], bc[nres + 1], ut[nres + 1], uc[nres + 1];
	unsigned int i, n = 0, nsc = 0;

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->payload = payload;
	s->drain = drain;
	s->sc_pkt = -1;
	for (i = 0; i < nres; i++) {
		const struct bench_result *r = &res[i];
		double pk;

		if (r->work != BENCH_WORK_UDP || r->calibration ||
		    r->kind != kind || r->payload != payload || !r->done ||
		    r->drain != drain)
			continue;
		s->lost += r->lost;
		if (r->failed)
			s->failed++;
		if (!r->sent || r->elapsed <= 0)
			continue;
		pk = (double)r->sent;
		if (!r->timed) {
			if (r->syscalls >= 0)
				sc[nsc++] = r->syscalls / pk;
			continue;
		}
		pps[n] = r->pps;
		usr[n] = r->cons_user_ns / pk;
		sys[n] = r->cons_sys_ns / pk;
		cpu[n] = usr[n] + sys[n];
		tr[n] = (r->traffic_user_ns + r->traffic_sys_ns) / pk;
		scs[n] = (r->cons.recv_calls + r->cons.send_calls +
			  r->cons.other_calls) / pk;
		vm[n] = (r->cons.verdict_msgs + r->cons.batch_msgs) / pk;
		ut[n] = (r->traffic_user_ns + r->traffic_sys_ns) /
			(r->elapsed * 1e7);
		uc[n] = (r->cons_user_ns + r->cons_sys_ns) / (r->elapsed * 1e7);
		bt[n] = r->busy_traffic;
		bc[n] = r->busy_consumer;
		n++;
	}
	s->runs = n;
	if (nsc)
		s->sc_pkt = median(sc, nsc);
	if (!n)
		return;
	s->pps = median(pps, n);
	s->pps_min = pps[0];
	s->pps_max = pps[n - 1];
	s->cpu_ns = median(cpu, n);
	s->cpu_min = cpu[0];
	s->cpu_max = cpu[n - 1];
	s->user_ns = median(usr, n);
	s->sys_ns = median(sys, n);
	s->traffic_ns = median(tr, n);
	s->sc_self_pkt = median(scs, n);
	s->vmsg_pkt = median(vm, n);
	s->util_t = median(ut, n);
	s->util_c = median(uc, n);
	s->busy_t = median(bt, n);
	s->busy_c = median(bc, n);
}

static const struct summary *find_sum(const struct summary *s, unsigned int n,
				      enum bench_kind kind, unsigned int payload,
				      bool drain)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (s[i].kind == kind && s[i].payload == payload &&
		    s[i].drain == drain && s[i].runs)
			return &s[i];
	return NULL;
}

/* --- output ------------------------------------------------------------- */

static void fmt_pps(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else
		snprintf(buf, len, "%.0fk", v / 1e3);
}

static void fmt_ratio(char *buf, size_t len, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(buf, len, "%.2f", a / b);
	else
		snprintf(buf, len, "-");
}

static void print_header(FILE *f, const struct opts *o)
{
	struct utsname u;
	char date[32];
	time_t now = time(NULL);

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "nfqb-bench, libnfq-batch %s, %s, kernel %s, %ld CPUs, "
		"rule in %s, nice %d%s\n", nfqb_version(), date, u.release,
		sysconf(_SC_NPROCESSORS_ONLN),
		o->cfg.hook == BENCH_HOOK_OUTPUT ? "OUTPUT" : "INPUT",
		o->cfg.nice, o->cfg.rt_prio ? ", SCHED_FIFO" : "");
}

static void print_stream(FILE *f, const struct opts *o, unsigned int pl,
			 const struct summary *sum, unsigned int nsum)
{
	const struct summary *A = find_sum(sum, nsum, BENCH_REF_A, pl, false);
	const struct summary *B = find_sum(sum, nsum, BENCH_REF_B, pl, false);
	const struct summary *K = find_sum(sum, nsum, BENCH_KERNEL, pl, false);
	unsigned int i;

	fprintf(f, "\npayload %u B, streaming: %llu datagrams x %u reps, "
		"window %u, CPU %d traffic / %d consumer\n", pl,
		(unsigned long long)o->cfg.packets, o->reps, o->cfg.window,
		o->cfg.cpu_traffic, o->cfg.cpu_consumer);
	fprintf(f, "%-22s %22s %5s %5s %5s | %6s %6s %6s %5s %5s | %6s %6s %6s | %4s %4s | %s\n",
		"consumer", "pkt/s median (min..max)", "xA", "xB", "xkern",
		"ns/pkt", "user", "sys", "xA", "xB", "sc/pkt", "sc(k)",
		"vm/pkt", "utlT", "utlC", "lost");
	for (i = 0; i < nsum; i++) {
		const struct summary *s = &sum[i];
		char p[16], pmin[16], pmax[16], range[64];
		char ra[8], rb[8], rk[8], ca[8], cb[8];
		char sc[16], sck[16], vm[16], ns[16], us[16], sy[16];

		if (s->payload != pl || s->drain)
			continue;
		if (!s->runs) {
			fprintf(f, "%-22s failed (%u runs)\n",
				bench_consumers[s->kind].label, s->failed);
			continue;
		}
		fmt_pps(p, sizeof(p), s->pps);
		fmt_pps(pmin, sizeof(pmin), s->pps_min);
		fmt_pps(pmax, sizeof(pmax), s->pps_max);
		snprintf(range, sizeof(range), "%s (%s..%s)", p, pmin, pmax);
		fmt_ratio(ra, sizeof(ra), s->pps, A ? A->pps : 0);
		fmt_ratio(rb, sizeof(rb), s->pps, B ? B->pps : 0);
		fmt_ratio(rk, sizeof(rk), s->pps, K ? K->pps : 0);
		strcpy(ns, "-");
		strcpy(us, "-");
		strcpy(sy, "-");
		strcpy(ca, "-");
		strcpy(cb, "-");
		strcpy(sc, "-");
		strcpy(sck, "-");
		strcpy(vm, "-");
		if (bench_consumers[s->kind].queues) {
			snprintf(ns, sizeof(ns), "%.0f", s->cpu_ns);
			snprintf(us, sizeof(us), "%.0f", s->user_ns);
			snprintf(sy, sizeof(sy), "%.0f", s->sys_ns);
			fmt_ratio(ca, sizeof(ca), s->cpu_ns, A ? A->cpu_ns : 0);
			fmt_ratio(cb, sizeof(cb), s->cpu_ns, B ? B->cpu_ns : 0);
			snprintf(sc, sizeof(sc), "%.3f", s->sc_self_pkt);
			if (s->sc_pkt >= 0)
				snprintf(sck, sizeof(sck), "%.3f", s->sc_pkt);
			snprintf(vm, sizeof(vm), "%.3f", s->vmsg_pkt);
		}
		fprintf(f, "%-22s %22s %5s %5s %5s | %6s %6s %6s %5s %5s | %6s %6s %6s | %3.0f%% %3.0f%% | %llu%s\n",
			bench_consumers[s->kind].label, range, ra, rb, rk, ns,
			us, sy, ca, cb, sc, sck, vm, s->util_t, s->util_c,
			(unsigned long long)s->lost,
			s->failed ? " FAILED" : "");
	}
}

static void print_drain(FILE *f, const struct opts *o, unsigned int pl,
			const struct summary *sum, unsigned int nsum)
{
	const struct summary *A = find_sum(sum, nsum, BENCH_REF_A, pl, true);
	const struct summary *B = find_sum(sum, nsum, BENCH_REF_B, pl, true);
	unsigned int i;

	fprintf(f, "\npayload %u B, consumer saturated (drain mode, %u "
		"queued at a time): %llu datagrams x %u reps\n", pl,
		o->cfg.window, (unsigned long long)o->cfg.packets, o->reps);
	fprintf(f, "%-22s %22s %6s %6s %5s %5s | %9s | %6s %6s | %s\n",
		"consumer", "ns/pkt median (min..max)", "user", "sys", "xA",
		"xB", "capacity", "sc/pkt", "vm/pkt", "lost");
	for (i = 0; i < nsum; i++) {
		const struct summary *s = &sum[i];
		char range[64], ra[8], rb[8], cap[16];

		if (s->payload != pl || !s->drain)
			continue;
		if (!s->runs) {
			fprintf(f, "%-22s failed (%u runs)\n",
				bench_consumers[s->kind].label, s->failed);
			continue;
		}
		snprintf(range, sizeof(range), "%.0f (%.0f..%.0f)", s->cpu_ns,
			 s->cpu_min, s->cpu_max);
		fmt_ratio(ra, sizeof(ra), s->cpu_ns, A ? A->cpu_ns : 0);
		fmt_ratio(rb, sizeof(rb), s->cpu_ns, B ? B->cpu_ns : 0);
		fmt_pps(cap, sizeof(cap), s->cpu_ns > 0 ? 1e9 / s->cpu_ns : 0);
		fprintf(f, "%-22s %22s %6.0f %6.0f %5s %5s | %7s/s | %6.3f %6.3f | %llu%s\n",
			bench_consumers[s->kind].label, range, s->user_ns,
			s->sys_ns, ra, rb, cap, s->sc_self_pkt, s->vmsg_pkt,
			(unsigned long long)s->lost,
			s->failed ? " FAILED" : "");
	}
}

static int find_scen_udp(const struct bench_set *set, unsigned int pl,
			 bool drain)
{
	unsigned int i;

	for (i = 0; i < set->nscen; i++)
		if (set->scen[i].work == BENCH_WORK_UDP &&
		    set->scen[i].payload == pl && set->scen[i].drain == drain)
			return (int)i;
	return -1;
}

static void print_table(FILE *f, const struct opts *o,
			const struct summary *sum, unsigned int nsum,
			const struct bench_set *set)
{
	unsigned int si;
	int sc;

	print_header(f, o);
	for (si = 0; si < o->nsizes && (o->stream || o->drain); si++) {
		if (o->stream) {
			print_stream(f, o, o->sizes[si], sum, nsum);
			sc = find_scen_udp(set, o->sizes[si], false);
			if (sc >= 0)
				bench_print_ratios(f, set, sc);
		}
		if (o->drain) {
			print_drain(f, o, o->sizes[si], sum, nsum);
			sc = find_scen_udp(set, o->sizes[si], true);
			if (sc >= 0)
				bench_print_ratios(f, set, sc);
		}
	}
	if (!o->stream && !o->drain)
		return;
	fprintf(f, "\nStreaming: the traffic process keeps up to the window in "
		"flight. pkt/s: datagrams through the queue per second, first "
		"send to last delivery. ns/pkt: CPU time (user+sys) of the "
		"consumer process per datagram, user and sys separately. "
		"sc/pkt: the consumer's syscalls per datagram as it counts them "
		"(the library: its recv_calls+send_calls, without the pool's "
		"poll and eventfd calls); sc(k): counted by the kernel "
		"(raw_syscalls:sys_enter, all threads) in one extra untimed "
		"run. "
		"vm/pkt: verdict messages per datagram. utlT/utlC: CPU time of "
		"the traffic / consumer process over the elapsed time. x: ratio "
		"of the medians.\n");
	if (o->drain)
		fprintf(f, "Drain: the consumer is stopped while a window of "
			"datagrams is queued, then drains it; it always finds "
			"work, as under overload. capacity = 1e9 / ns/pkt.\n");
}

struct target {
	const char *name;
	double value;
	double limit;
	bool le;		/* value <= limit is met; else >= */
	bool known;
};

static void set_target(struct target *t, const char *name,
		       const struct summary *x, const struct summary *ref,
		       bool cpu, double limit)
{
	t->name = name;
	t->limit = limit;
	t->le = cpu;		/* CPU: at most; packets/s: at least */
	t->known = x && ref && (cpu ? ref->cpu_ns > 0 : ref->pps > 0);
	t->value = !t->known ? 0 : cpu ? x->cpu_ns / ref->cpu_ns :
		   x->pps / ref->pps;
}

static unsigned int eval_targets(const struct summary *sum, unsigned int nsum,
				 struct target *t)
{
	const struct summary *A = find_sum(sum, nsum, BENCH_REF_A, 64, false);
	const struct summary *B = find_sum(sum, nsum, BENCH_REF_B, 64, false);
	const struct summary *L = find_sum(sum, nsum, BENCH_LIB, 64, false);
	const struct summary *M = find_sum(sum, nsum, BENCH_LIB_MIXED, 64,
					   false);
	const struct summary *dA = find_sum(sum, nsum, BENCH_REF_A, 64, true);
	const struct summary *dB = find_sum(sum, nsum, BENCH_REF_B, 64, true);
	const struct summary *dL = find_sum(sum, nsum, BENCH_LIB, 64, true);
	const struct summary *dM = find_sum(sum, nsum, BENCH_LIB_MIXED, 64,
					    true);

	set_target(&t[0], "all-accept CPU/pkt vs ref A, saturated", dL, dA,
		   true, 0.40);
	set_target(&t[1], "all-accept CPU/pkt vs ref B, saturated", dL, dB,
		   true, 0.90);
	set_target(&t[2], "mixed CPU/pkt vs ref A, saturated", dM, dA, true,
		   0.50);
	set_target(&t[3], "all-accept CPU/pkt vs ref A, streaming", L, A,
		   true, 0.40);
	set_target(&t[4], "all-accept CPU/pkt vs ref B, streaming", L, B,
		   true, 0.90);
	set_target(&t[5], "mixed CPU/pkt vs ref A, streaming", M, A, true,
		   0.50);
	set_target(&t[6], "all-accept pkt/s vs ref A", L, A, false, 1.8);
	set_target(&t[7], "all-accept pkt/s vs ref B", L, B, false, 1.0);
	set_target(&t[8], "mixed pkt/s vs ref A", M, A, false, 1.5);
	return 9;
}

static bool target_met(const struct target *t)
{
	return t->known && (t->le ? t->value <= t->limit : t->value >= t->limit);
}

static void print_targets(FILE *f, const struct summary *sum,
			  unsigned int nsum, unsigned int bad_runs, bool udp)
{
	struct target t[16];
	unsigned int i, n = udp ? eval_targets(sum, nsum, t) : 0;

	fprintf(f, "\ntargets%s:\n", udp ? " (64-byte payload, medians)" : "");
	for (i = 0; i < n; i++) {
		if (!t[i].known) {
			fprintf(f, "  %-40s    -   (%s %.2f)  not measured\n",
				t[i].name, t[i].le ? "<=" : ">=", t[i].limit);
			continue;
		}
		fprintf(f, "  %-40s %5.2f (%s %.2f)  %s\n", t[i].name,
			t[i].value, t[i].le ? "<=" : ">=", t[i].limit,
			target_met(&t[i]) ? "met" : "NOT met");
	}
	fprintf(f, "  %-40s %s\n", "zero lost packets, every run",
		bad_runs ? "NOT met" : "met");
	for (i = 0; i < nsum; i++) {
		const struct summary *s = &sum[i];

		if (s->payload != 64 || !s->runs || s->drain ||
		    !bench_consumers[s->kind].queues)
			continue;
		fprintf(f, "  saturated core, %-22s %s (traffic %.0f%%, consumer %.0f%%)\n",
			bench_consumers[s->kind].label,
			s->util_t >= 90 && s->util_t >= s->util_c ? "traffic" :
			s->util_c >= 90 ? "consumer" : "neither",
			s->util_t, s->util_c);
	}
}

static void print_json_header(FILE *f, const struct opts *o, const char *mode)
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
	fprintf(f, "  \"config\": {\"packets\": %llu, \"reps\": %u, "
		"\"window\": %u, \"burst\": %u, \"flows\": %u, \"batch\": %u, "
		"\"maxlen\": %u, \"cpu_traffic\": %d, \"cpu_consumer\": %d, "
		"\"hook\": \"%s\", \"nice\": %d, \"rt_prio\": %d, "
		"\"syscount\": %s, \"rcvbuf\": %u, \"tcp_time_s\": %u, "
		"\"tcp_mtu\": %u, \"both_ways\": %s, \"ping_count\": %u, "
		"\"ping_size\": %u, \"ping_time_s\": %.0f, "
		"\"calib_packets\": %llu, \"noise_pct\": %.1f, "
		"\"modes\": [%s%s%s%s%s%s%s]},\n",
		(unsigned long long)o->cfg.packets, o->reps, o->cfg.window,
		o->cfg.burst, o->cfg.flows, o->cfg.batch, o->cfg.maxlen,
		o->cfg.cpu_traffic, o->cfg.cpu_consumer,
		o->cfg.hook == BENCH_HOOK_OUTPUT ? "output" : "input",
		o->cfg.nice, o->cfg.rt_prio,
		o->cfg.sys_enter_id >= 0 ? "true" : "false", o->cfg.rcvbuf,
		o->cfg.tcp_time, o->cfg.mtu,
		o->cfg.both_ways ? "true" : "false", o->cfg.ping_count,
		o->cfg.ping_size, o->cfg.ping_time,
		(unsigned long long)o->calib_packets, o->noise_pct,
		o->stream ? "\"stream\"" : "",
		o->stream && (o->drain || o->tcp || o->latency) ? ", " : "",
		o->drain ? "\"drain\"" : "",
		o->drain && (o->tcp || o->latency) ? ", " : "",
		o->tcp ? "\"tcp\"" : "",
		o->tcp && o->latency ? ", " : "",
		o->latency ? "\"latency\"" : "");
}

static void print_json_run(FILE *f, const struct bench_result *r, bool last)
{
	const struct bench_cons *c = &r->cons;

	fprintf(f, "    {\"consumer\": \"%s\", \"payload\": %u, \"rep\": %u, "
		"\"mode\": \"%s\", \"timed\": %s, \"failed\": %s, "
		"\"error\": ", bench_consumers[r->kind].name, r->payload,
		r->rep, r->drain ? "drain" : "stream",
		r->timed ? "true" : "false", r->failed ? "true" : "false");
	bench_json_str(f, r->err);
	fprintf(f, ", \"sent\": %llu, \"expected\": %llu, \"delivered\": %llu, "
		"\"lost\": %llu, \"dups\": %llu, \"wrong_verdict\": %llu, "
		"\"bad_mark\": %llu, \"kq_dropped\": %llu, "
		"\"kq_user_dropped\": %llu, \"elapsed_s\": %.6f, \"pps\": %.0f, "
		"\"cons_user_ns\": %llu, \"cons_sys_ns\": %llu, "
		"\"cons_maxrss_kb\": %ld, \"traffic_user_ns\": %llu, "
		"\"traffic_sys_ns\": %llu, \"busy_traffic_pct\": %.1f, "
		"\"busy_consumer_pct\": %.1f, \"syscalls\": %lld, "
		"\"cons_packets\": %llu, \"cons_recv_calls\": %llu, "
		"\"cons_send_calls\": %llu, \"verdict_msgs\": %llu, "
		"\"batch_msgs\": %llu, \"enobufs\": %llu, \"kernel_errors\": %llu, "
		"\"lib_flushes\": %llu, \"lib_flush_limit\": %llu, "
		"\"lib_flush_idle\": %llu, \"lib_flush_latency\": %llu, "
		"\"lib_fallbacks\": %llu, \"lib_timeouts\": %llu, "
		"\"lib_rejected\": %llu, ",
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
		r->busy_consumer, (long long)r->syscalls,
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
		"\"load_delivered\": %llu}%s\n",
		r->work == BENCH_WORK_TCP ? "tcp" :
		r->work == BENCH_WORK_PING_UDP ? "ping-udp" :
		r->work == BENCH_WORK_PING_TCP ? "ping-tcp" :
		r->drain ? "drain" : "stream", r->scen,
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
		(unsigned long long)r->load_delivered, last ? "" : ",");
}

static void print_json(FILE *f, const struct opts *o,
		       const struct bench_result *res, unsigned int nres,
		       const struct summary *sum, unsigned int nsum,
		       unsigned int bad_runs, const struct bench_set *set)
{
	struct target t[16];
	unsigned int i, nt;

	print_json_header(f, o, "compare");
	fprintf(f, "  \"runs\": [\n");
	for (i = 0; i < nres; i++)
		print_json_run(f, &res[i], i + 1 == nres);
	fprintf(f, "  ],\n  \"summary\": [\n");
	for (i = 0; i < nsum; i++) {
		const struct summary *s = &sum[i];
		const struct summary *A = find_sum(sum, nsum, BENCH_REF_A,
						   s->payload, s->drain);
		const struct summary *B = find_sum(sum, nsum, BENCH_REF_B,
						   s->payload, s->drain);
		const struct summary *K = find_sum(sum, nsum, BENCH_KERNEL,
						   s->payload, s->drain);

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
			A && A->pps ? s->pps / A->pps : 0,
			B && B->pps ? s->pps / B->pps : 0,
			K && K->pps ? s->pps / K->pps : 0,
			A && A->cpu_ns ? s->cpu_ns / A->cpu_ns : 0,
			B && B->cpu_ns ? s->cpu_ns / B->cpu_ns : 0,
			i + 1 == nsum ? "" : ",");
	}
	fprintf(f, "  ],\n");
	bench_json_extra(f, set);
	fprintf(f, "  \"targets\": [\n");
	nt = eval_targets(sum, nsum, t);
	for (i = 0; i < nt; i++)
		fprintf(f, "    {\"name\": \"%s\", \"value\": %.3f, "
			"\"limit\": %.2f, \"cmp\": \"%s\", \"measured\": %s, "
			"\"met\": %s},\n", t[i].name, t[i].value, t[i].limit,
			t[i].le ? "<=" : ">=", t[i].known ? "true" : "false",
			target_met(&t[i]) ? "true" : "false");
	fprintf(f, "    {\"name\": \"zero lost packets\", \"met\": %s}\n  ],\n",
		bad_runs ? "false" : "true");
	fprintf(f, "  \"ok\": %s\n}\n", bad_runs ? "false" : "true");
}

/* --- progress ------------------------------------------------------------ */

static void progress(unsigned int i, unsigned int n,
		     const struct bench_result *r, const struct bench_set *set)
{
	bool tty = isatty(STDERR_FILENO);
	double pk = r->sent ? (double)r->sent : 1;
	const char *scen = set && r->scen >= 0 && (unsigned int)r->scen <
			   set->nscen ? set->scen[r->scen].name : "";
	char rep[16], what[128];

	if (r->calibration)
		snprintf(rep, sizeof(rep), "calib");
	else if (r->timed)
		snprintf(rep, sizeof(rep), "%s %u", r->drain ? "drain" : "rep",
			 r->rep + 1);
	else
		snprintf(rep, sizeof(rep), "syscalls");
	switch (r->work) {
	case BENCH_WORK_TCP:
		if (r->tcp_bytes && bench_consumers[r->kind].queues)
			snprintf(what, sizeof(what),
				 "%-18s %6.2f Gbit/s %6.0f ms/Gbit", scen,
				 r->gbps, (r->cons_user_ns + r->cons_sys_ns) /
				 1e6 / (r->tcp_bytes * 8 / 1e9));
		else
			snprintf(what, sizeof(what), "%-18s %6.2f Gbit/s",
				 scen, r->gbps);
		break;
	case BENCH_WORK_PING_UDP:
	case BENCH_WORK_PING_TCP:
		snprintf(what, sizeof(what),
			 "%-18s p50 %6.1f p99 %7.1f us %6llu rtts lost %llu",
			 scen, r->lat_p50, r->lat_p99,
			 (unsigned long long)r->pings,
			 (unsigned long long)r->lost);
		break;
	case BENCH_WORK_UDP:
	default:
		snprintf(what, sizeof(what),
			 "%5u B %8.0f pkt/s %6.0f ns/pkt lost %llu",
			 r->payload, r->pps,
			 (r->cons_user_ns + r->cons_sys_ns) / pk,
			 (unsigned long long)r->lost);
		break;
	}
	fprintf(stderr, "%s[%3u/%3u] %-22s %-8s %s%s%s%s",
		tty ? "\r\033[K" : "", i, n, bench_consumers[r->kind].label,
		rep, what, r->failed ? " FAILED: " : "",
		r->failed ? r->err : "", tty && !r->failed ? "" : "\n");
	fflush(stderr);
}

/* --- modes --------------------------------------------------------------- */

struct runner {
	struct opts *o;
	struct bench_set *set;
	unsigned int cap;	/* runs planned */
	unsigned int bad;	/* runs failed */
};

/* one run of @k in scenario @scen; NULL when the plan is exhausted */
static struct bench_result *one_run(struct runner *rn, enum bench_kind k,
				    int scen, unsigned int rep, bool timed)
{
	struct bench_set *set = rn->set;
	struct bench_result *r;

	if (set->nres == rn->cap || interrupted)
		return NULL;
	r = &set->res[set->nres++];
	bench_run(&rn->o->cfg, k, r);
	r->rep = rep;
	r->timed = timed;
	r->scen = scen;
	if (r->failed)
		rn->bad++;
	progress(set->nres, rn->cap, r, set);
	return r;
}

/* the asked consumers that take part in TCP and latency runs */
static unsigned int traffic_kinds(const struct opts *o, enum bench_kind *k)
{
	unsigned int i, n = 0;

	for (i = 0; i < o->nkinds; i++)
		if (BENCH_KIND_ANY_TRAFFIC(o->kinds[i]))
			k[n++] = o->kinds[i];
	return n;
}

static unsigned int load_count(const struct opts *o)
{
	return o->nload_pps ? o->nload_pps : o->nload_pct;
}

static unsigned int plan_runs(const struct opts *o, int sys_id)
{
	enum bench_kind k[BENCH_NKINDS];
	unsigned int j, nq = 0, n = 0, nt = traffic_kinds(o, k);

	for (j = 0; j < o->nkinds; j++)
		if (bench_consumers[o->kinds[j]].queues)
			nq++;
	n += o->nsizes * ((o->stream ? o->reps * o->nkinds : 0) +
			  (o->drain ? o->reps * nq : 0) +
			  (o->stream && sys_id >= 0 ? nq : 0));
	if (o->tcp)
		n += o->reps * o->ntcp_flows * o->ngso * nt;
	if (o->latency)
		n += 1 + o->reps * (2 + load_count(o)) * nt;
	return n;
}

static void run_udp(struct runner *rn)
{
	struct opts *o = rn->o;
	int sys_id = o->cfg.sys_enter_id;
	unsigned int si, rep, m, j;

	o->cfg.work = BENCH_WORK_UDP;
	o->cfg.gso = -1;
	for (si = 0; si < o->nsizes && !interrupted; si++) {
		struct bench_scen sc = { .work = BENCH_WORK_UDP, .gso = -1,
					 .payload = o->sizes[si] };
		int scen[2] = { -1, -1 };

		for (m = 0; m < 2; m++) {
			if ((m == 0 && !o->stream) || (m == 1 && !o->drain))
				continue;
			sc.drain = m == 1;
			snprintf(sc.name, sizeof(sc.name), "%s %u B",
				 m ? "drain" : "stream", sc.payload);
			scen[m] = bench_scen_add(rn->set, &sc);
		}
		o->cfg.payload = o->sizes[si];
		/* timed runs; counting syscalls would slow them */
		o->cfg.sys_enter_id = -1;
		for (rep = 0; rep < o->reps && !interrupted; rep++) {
			for (m = 0; m < 2 && !interrupted; m++) {
				o->cfg.drain = m == 1;
				if ((m == 0 && !o->stream) || (m == 1 && !o->drain))
					continue;
				/* alternate: each repetition starts one further */
				for (j = 0; j < o->nkinds && !interrupted; j++) {
					enum bench_kind k =
						o->kinds[(j + rep) % o->nkinds];

					if (o->cfg.drain &&
					    !bench_consumers[k].queues)
						continue;
					one_run(rn, k, scen[m], rep, true);
				}
			}
		}
		/* one untimed streaming run per consumer to count syscalls */
		o->cfg.drain = false;
		o->cfg.sys_enter_id = sys_id;
		for (j = 0; j < o->nkinds && o->stream && sys_id >= 0 &&
		     !interrupted; j++) {
			if (!bench_consumers[o->kinds[j]].queues)
				continue;
			one_run(rn, o->kinds[j], scen[0], 0, false);
		}
	}
	o->cfg.sys_enter_id = sys_id;
	o->cfg.drain = false;
}

/* TCP: per repetition every (flows, GSO) scenario, the consumers rotating */
static void run_tcp(struct runner *rn)
{
	struct opts *o = rn->o;
	enum bench_kind k[BENCH_NKINDS];
	unsigned int nk = traffic_kinds(o, k), f, g, rep, j, ns = 0;
	int scen[MAX_LIST * 3];
	int sys_id = o->cfg.sys_enter_id;

	if (!nk)
		return;
	for (f = 0; f < o->ntcp_flows; f++) {
		for (g = 0; g < o->ngso; g++) {
			struct bench_scen sc = {
				.work = BENCH_WORK_TCP,
				.streams = o->tcp_flows[f], .gso = o->gso[g],
			};

			snprintf(sc.name, sizeof(sc.name), "%u flow%s, GSO %s",
				 sc.streams, sc.streams == 1 ? "" : "s",
				 sc.gso < 0 ? "default" : sc.gso ? "on" : "off");
			scen[ns++] = bench_scen_add(rn->set, &sc);
		}
	}
	o->cfg.work = BENCH_WORK_TCP;
	o->cfg.sys_enter_id = -1;
	o->cfg.drain = false;
	for (rep = 0; rep < o->reps && !interrupted; rep++) {
		for (f = 0; f < ns && !interrupted; f++) {
			const struct bench_scen *sc = &rn->set->scen[scen[f]];

			o->cfg.tcp_streams = sc->streams;
			o->cfg.gso = sc->gso;
			for (j = 0; j < nk && !interrupted; j++)
				one_run(rn, k[(j + rep) % nk], scen[f], rep,
					true);
		}
	}
	o->cfg.work = BENCH_WORK_UDP;
	o->cfg.gso = -1;
	o->cfg.sys_enter_id = sys_id;
}

/*
 * Latency: UDP and TCP ping-pong when idle, then UDP ping-pong under each
 * background load; rates in % of ref A's streaming rate, measured first
 * (one short run), unless fixed rates were given.
 */
static void run_latency(struct runner *rn)
{
	struct opts *o = rn->o;
	struct bench_set *set = rn->set;
	enum bench_kind k[BENCH_NKINDS];
	unsigned int nk = traffic_kinds(o, k), i, rep, j, ns = 0;
	int scen[2 + MAX_LIST];
	int sys_id = o->cfg.sys_enter_id;
	struct bench_scen sc;

	if (!nk)
		return;
	o->cfg.sys_enter_id = -1;
	o->cfg.drain = false;
	o->cfg.gso = -1;
	if (o->nload_pct && !o->nload_pps) {
		uint64_t packets = o->cfg.packets;
		unsigned int payload = o->cfg.payload;
		struct bench_result *r;

		o->cfg.work = BENCH_WORK_UDP;
		o->cfg.packets = o->calib_packets;
		o->cfg.payload = 64;
		r = one_run(rn, BENCH_REF_A, -1, 0, false);
		o->cfg.packets = packets;
		o->cfg.payload = payload;
		if (r) {
			r->calibration = true;
			set->calib_run = (int)(r - set->res);
			if (!r->failed && r->pps > 0)
				set->calib_pps = r->pps;
			else
				fprintf(stderr, "nfqb-bench: the load "
					"calibration (ref A) failed: no runs "
					"under load\n");
		}
	}
	memset(&sc, 0, sizeof(sc));
	sc.work = BENCH_WORK_PING_UDP;
	sc.gso = -1;
	snprintf(sc.name, sizeof(sc.name), "UDP, idle");
	scen[ns++] = bench_scen_add(set, &sc);
	sc.work = BENCH_WORK_PING_TCP;
	snprintf(sc.name, sizeof(sc.name), "TCP, idle");
	scen[ns++] = bench_scen_add(set, &sc);
	sc.work = BENCH_WORK_PING_UDP;
	for (i = 0; i < o->nload_pps; i++) {
		sc.load_pps = o->load_pps[i];
		snprintf(sc.name, sizeof(sc.name), "UDP, load %.0fk pkt/s",
			 sc.load_pps / 1e3);
		scen[ns++] = bench_scen_add(set, &sc);
	}
	for (i = 0; !o->nload_pps && set->calib_pps > 0 &&
	     i < o->nload_pct; i++) {
		sc.load_pct = o->load_pct[i];
		sc.load_pps = set->calib_pps * o->load_pct[i] / 100.0;
		snprintf(sc.name, sizeof(sc.name), "UDP, load %u%%",
			 o->load_pct[i]);
		scen[ns++] = bench_scen_add(set, &sc);
	}
	for (rep = 0; rep < o->reps && !interrupted; rep++) {
		for (i = 0; i < ns && !interrupted; i++) {
			const struct bench_scen *c = &set->scen[scen[i]];

			o->cfg.work = c->work;
			o->cfg.load_pps = c->load_pps;
			for (j = 0; j < nk && !interrupted; j++)
				one_run(rn, k[(j + rep) % nk], scen[i], rep,
					true);
		}
	}
	o->cfg.work = BENCH_WORK_UDP;
	o->cfg.load_pps = 0;
	o->cfg.sys_enter_id = sys_id;
}

static void plot_title(char *buf, size_t len)
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

static int do_compare(struct opts *o)
{
	unsigned int si, j, m, nsum = 0, cap;
	struct summary sum[MAX_SIZES * BENCH_NKINDS * 2];
	struct bench_set set;
	struct runner rn;
	struct bench_result *res;
	int ret;

	cap = plan_runs(o, o->cfg.sys_enter_id);
	res = mmap(NULL, (cap + 1) * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("nfqb-bench: mmap");
		return 1;
	}
	memset(&set, 0, sizeof(set));
	set.res = res;
	for (j = 0; j < o->nkinds; j++)
		set.kinds[j] = o->kinds[j];
	set.nkinds = o->nkinds;
	set.reps = o->reps;
	set.noise_pct = o->noise_pct;
	set.cfg = &o->cfg;
	set.calib_run = -1;
	set.load_fixed = o->nload_pps > 0;
	set.ping_warmup = o->cfg.ping_count / 10 > 200 ? 200 :
			  o->cfg.ping_count / 10;
	rn = (struct runner) { .o = o, .set = &set, .cap = cap };

	if (o->stream || o->drain)
		run_udp(&rn);
	if (o->tcp && !interrupted)
		run_tcp(&rn);
	if (o->latency && !interrupted)
		run_latency(&rn);
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
	if (interrupted) {
		fprintf(stderr, "nfqb-bench: interrupted\n");
		munmap(res, (cap + 1) * sizeof(*res));
		return 130;
	}
	for (si = 0; si < o->nsizes; si++) {
		for (m = 0; m < 2; m++) {
			if ((m == 0 && !o->stream) || (m == 1 && !o->drain))
				continue;
			for (j = 0; j < o->nkinds; j++) {
				if (m == 1 && !bench_consumers[o->kinds[j]].queues)
					continue;
				summarize(res, set.nres, o->kinds[j],
					  o->sizes[si], m == 1, &sum[nsum++]);
			}
		}
	}
	if (o->json) {
		print_json(stdout, o, res, set.nres, sum, nsum, rn.bad, &set);
	} else {
		print_table(stdout, o, sum, nsum, &set);
		if (o->tcp)
			bench_print_tcp(stdout, &set);
		if (o->latency)
			bench_print_latency(stdout, &set);
		print_targets(stdout, sum, nsum, rn.bad, o->stream || o->drain);
		bench_print_targets_new(stdout, &set);
		bench_print_py(stdout, &set);
	}
	if (o->save) {
		FILE *f = fopen(o->save, "w");

		if (!f || (print_json(f, o, res, set.nres, sum, nsum, rn.bad,
				      &set), fclose(f)) != 0)
			fprintf(stderr, "nfqb-bench: %s: %s\n", o->save,
				strerror(errno));
	}
	ret = rn.bad ? 1 : 0;
	if (o->plot) {
		struct bench_plot_row *rows = calloc(1024, sizeof(*rows));
		char title[256];
		unsigned int n = rows ? bench_plot_rows(&set, rows, 1024) : 0;

		plot_title(title, sizeof(title));
		if (bench_plot(o->plot, title, rows, n) < 0)
			ret = 1;
		else
			fprintf(stderr, "nfqb-bench: drew %s\n", o->plot);
		free(rows);
	}
	munmap(res, (cap + 1) * sizeof(*res));
	if (rn.bad)
		fprintf(stderr, "nfqb-bench: %u run(s) failed or lost packets\n",
			rn.bad);
	return ret;
}

static int do_memcheck(struct opts *o)
{
	uint64_t counts[2] = { o->cfg.packets, o->cfg.packets * 10 };
	enum bench_kind kinds[BENCH_NKINDS];
	unsigned int i, j, n = 0, nres, bad = 0;
	struct bench_result *res;

	for (j = 0; j < o->nkinds; j++) {
		enum bench_kind k = o->kinds[j];

		if (k != BENCH_LIB && k != BENCH_LIB_MIXED &&
		    k != BENCH_LIB_POOL2)
			continue;
		/* default: the single-queue library consumers */
		if (!o->kinds_set && k == BENCH_LIB_POOL2)
			continue;
		kinds[n++] = k;
	}
	if (!n) {
		fprintf(stderr, "nfqb-bench: --memcheck needs a lib consumer\n");
		return 2;
	}
	nres = 2 * n;
	res = mmap(NULL, nres * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("nfqb-bench: mmap");
		return 1;
	}
	o->cfg.payload = o->sizes[0];
	o->cfg.timeout = 3600;
	o->cfg.sys_enter_id = -1;
	for (i = 0; i < 2 && !interrupted; i++) {
		for (j = 0; j < n && !interrupted; j++) {
			struct bench_result *r = &res[j * 2 + i];

			o->cfg.packets = counts[i];
			bench_run(&o->cfg, kinds[j], r);
			r->timed = true;
			if (r->failed)
				bad++;
			progress(i * n + j + 1, nres, r, NULL);
		}
	}
	o->cfg.packets = counts[0];
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
	if (interrupted)
		return 130;
	if (o->json) {
		print_json_header(stdout, o, "memcheck");
		fprintf(stdout, "  \"runs\": [\n");
		for (i = 0; i < nres; i++)
			print_json_run(stdout, &res[i], i + 1 == nres);
		fprintf(stdout, "  ],\n  \"memcheck\": [\n");
	} else {
		printf("\nconsumer max RSS (ru_maxrss), payload %u B, target: "
		       "within 1024 KiB\n", o->cfg.payload);
		printf("%-22s %12s %12s %10s\n", "consumer", "after N",
		       "after 10*N", "diff");
	}
	for (j = 0; j < n; j++) {
		const struct bench_result *a = &res[j * 2], *b = &res[j * 2 + 1];
		long diff = b->cons_maxrss_kb - a->cons_maxrss_kb;
		bool met = diff <= 1024 && !a->failed && !b->failed;

		if (o->json) {
			fprintf(stdout, "    {\"consumer\": \"%s\", "
				"\"packets\": [%llu, %llu], "
				"\"maxrss_kb\": [%ld, %ld], \"diff_kb\": %ld, "
				"\"met\": %s}%s\n",
				bench_consumers[kinds[j]].name,
				(unsigned long long)counts[0],
				(unsigned long long)counts[1],
				a->cons_maxrss_kb, b->cons_maxrss_kb, diff,
				met ? "true" : "false", j + 1 == n ? "" : ",");
		} else {
			printf("%-22s %8ld KiB %8ld KiB %6ld KiB  %s\n",
			       bench_consumers[kinds[j]].label,
			       a->cons_maxrss_kb, b->cons_maxrss_kb, diff,
			       met ? "met" : "NOT met");
		}
	}
	if (o->json)
		fprintf(stdout, "  ],\n  \"ok\": %s\n}\n",
			bad ? "false" : "true");
	else
		printf("N = %llu datagrams\n", (unsigned long long)counts[0]);
	munmap(res, nres * sizeof(*res));
	if (bad)
		fprintf(stderr, "nfqb-bench: %u run(s) failed or lost packets\n",
			bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_int };
	struct opts o;

	parse_opts(argc, argv, &o);
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
