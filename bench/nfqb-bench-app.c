/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench-app: nfqb-bench's app and app-old consumers, an application
 * as a user writes it on the API of release 0.1.0: queue 0, its setup as
 * nfqb-bench's lib consumer does it, then nfqb_recv() a vector of 64 and
 * nfqb_verdict(accept) each packet until SIGTERM.
 *
 * It calls only functions that release 0.1.0 has with the same
 * signature, so that this one binary runs on the library it was built
 * with and on 0.1.0's (LD_LIBRARY_PATH): `objdump -T` shows every nfqb_
 * symbol it imports at LIBNFQB_0.1. Do not add a newer call here.
 *
 * Options: --maxlen N, --rcvbuf N (bytes, as nfqb_queue_set_rcvbuf()),
 * --batch N (the batch limit), --window N (datagrams in flight: buffers
 * for window + 64 when that is over 1024), --gso on|off (absent: left).
 *
 * At its end it prints "library PATH" (the libnfq-batch it ran on, from
 * dladdr()) and "packets N enobufs N outside_user_ns N outside_sys_ns N"
 * (outside: the CPU time, getrusage(RUSAGE_SELF), it spent before its
 * queue was set up and after the stop signal, which nfqb-bench takes off
 * the consumer's), then the library's "recv_calls N send_calls N
 * verdict_msgs N batch_msgs N" (nfqb_queue_stats()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <libnfq-batch/libnfq-batch.h>

#define APP_VEC		64

static volatile sig_atomic_t app_stop;

struct app_opts {
	uint32_t maxlen;
	size_t rcvbuf;
	unsigned int batch;
	unsigned int window;
	int gso;			/* -1 leave, 0 off, 1 on */
};

struct app_counts {
	uint64_t packets;
	uint64_t enobufs;
	struct nfqb_stats st;		/* the library's, at the stop */
};

static void app_on_term(int sig)
{
	(void)sig;
	app_stop = 1;
}

static void __attribute__((noreturn)) app_usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: nfqb-bench-app [--maxlen N] [--rcvbuf BYTES] "
		"[--batch N] [--window N] [--gso on|off]\n");
	exit(status);
}

static unsigned long app_num(const char *arg, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > max) {
		fprintf(stderr, "nfqb-bench-app: bad number '%s'\n", arg);
		app_usage(2);
	}
	return v;
}

static void app_parse(int argc, char **argv, struct app_opts *o)
{
	static const struct option longopts[] = {
		{ "maxlen", required_argument, NULL, 'm' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "batch", required_argument, NULL, 'b' },
		{ "window", required_argument, NULL, 'w' },
		{ "gso", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->maxlen = app_num(optarg, UINT32_MAX);
			break;
		case 'r':
			o->rcvbuf = app_num(optarg, 1ul << 31);
			break;
		case 'b':
			o->batch = app_num(optarg, 65536);
			break;
		case 'w':
			o->window = app_num(optarg, 1000000);
			break;
		case 'g':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				app_usage(2);
			o->gso = !strcmp(optarg, "on");
			break;
		case 'h':
			app_usage(0);
		default:
			app_usage(2);
		}
	}
	if (optind < argc)
		app_usage(2);
}

/* queue 0, set up as nfqb-bench's lib consumer does: the queue or NULL */
static struct nfqb_queue *app_open(const struct app_opts *o)
{
	struct nfqb_queue *q;
	const char *what;

	q = nfqb_queue_open(0);
	if (!q) {
		fprintf(stderr, "nfqb-bench-app: nfqb_queue_open(0): %s\n",
			strerror(errno));
		return NULL;
	}
	if (nfqb_queue_set_maxlen(q, o->maxlen) < 0)
		what = "nfqb_queue_set_maxlen";
	else if (nfqb_queue_set_rcvbuf(q, o->rcvbuf) < 0)
		what = "nfqb_queue_set_rcvbuf";
	else if (nfqb_queue_set_batch_limit(q, o->batch) < 0)
		what = "nfqb_queue_set_batch_limit";
	else if (o->window + APP_VEC > 1024 &&
		 nfqb_queue_set_buffers(q, o->window + APP_VEC) < 0)
		what = "nfqb_queue_set_buffers";
	else if (o->gso >= 0 &&
		 nfqb_queue_set_flags(q, o->gso ? NFQB_F_GSO : 0,
				      NFQB_F_GSO) < 0)
		what = "nfqb_queue_set_flags(GSO)";
	else
		return q;
	fprintf(stderr, "nfqb-bench-app: %s: %s\n", what, strerror(errno));
	nfqb_queue_close(q);
	return NULL;
}

/* receive and accept until the stop signal: 0, or -1 (reported) */
static int app_loop(struct nfqb_queue *q, struct app_counts *n)
{
	struct nfqb_packet *vec[APP_VEC];
	int i, got;

	while (!app_stop) {
		got = nfqb_recv(q, vec, APP_VEC);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENOBUFS) {
				n->enobufs++;
				continue;
			}
			fprintf(stderr, "nfqb-bench-app: nfqb_recv: %s\n",
				strerror(errno));
			return -1;
		}
		n->packets += got;
		for (i = 0; i < got; i++) {
			if (nfqb_verdict(vec[i], NFQB_ACCEPT) < 0) {
				fprintf(stderr, "nfqb-bench-app: nfqb_verdict: "
					"%s\n", strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* "library PATH": the libnfq-batch this process runs on */
static void app_print_lib(void)
{
	Dl_info di;

	if (dladdr((void *)nfqb_recv, &di) && di.dli_fname)
		printf("library %s\n", di.dli_fname);
}

/* this process's CPU time so far, user and system, in ns */
static void app_cpu(uint64_t ns[2])
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	ns[0] = ru.ru_utime.tv_sec * 1000000000ull +
		ru.ru_utime.tv_usec * 1000ull;
	ns[1] = ru.ru_stime.tv_sec * 1000000000ull +
		ru.ru_stime.tv_usec * 1000ull;
}

int main(int argc, char **argv)
{
	struct app_opts o = { .maxlen = 4096, .rcvbuf = 16u << 20,
			      .batch = 64, .window = 512, .gso = -1 };
	struct app_counts n = { 0 };
	uint64_t bound[2], stop[2], end[2];
	struct sigaction sa;
	struct nfqb_queue *q;
	int ret;

	app_parse(argc, argv, &o);
	/* before the queue is bound: nfqb-bench's stop comes after that; no
	 * SA_RESTART, so that it ends a waiting nfqb_recv() (EINTR) */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	q = app_open(&o);
	if (!q)
		return 1;
	app_cpu(bound);
	ret = app_loop(q, &n);
	app_cpu(stop);
	/* 0.1.0's counters are a prefix of today's: its size */
	memset(&n.st, 0, sizeof(n.st));
	(void)nfqb_queue_stats(q, &n.st, sizeof(n.st));
	if (nfqb_queue_close(q) < 0 && ret == 0) {
		fprintf(stderr, "nfqb-bench-app: nfqb_queue_close: %s\n",
			strerror(errno));
		ret = -1;
	}
	app_cpu(end);
	app_print_lib();
	printf("packets %llu enobufs %llu outside_user_ns %llu "
	       "outside_sys_ns %llu recv_calls %llu send_calls %llu "
	       "verdict_msgs %llu batch_msgs %llu\n",
	       (unsigned long long)n.packets, (unsigned long long)n.enobufs,
	       (unsigned long long)(bound[0] + end[0] - stop[0]),
	       (unsigned long long)(bound[1] + end[1] - stop[1]),
	       (unsigned long long)n.st.recv_calls,
	       (unsigned long long)n.st.send_calls,
	       (unsigned long long)n.st.verdict_msgs,
	       (unsigned long long)n.st.batch_msgs);
	return ret < 0 || fflush(stdout) ? 1 : 0;
}
