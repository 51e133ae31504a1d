// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-stat: the kernel's view of the NFQUEUE queues of the current network
 * namespace (/proc/net/netfilter/nfnetlink_queue), once or every interval,
 * with per-interval rates.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnfq-batch/libnfq-batch.h>

#define MAXQ 1024

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *mode_name(uint32_t mode)
{
	switch (mode) {
	case NFQB_COPY_NONE:
		return "none";
	case NFQB_COPY_META:
		return "meta";
	case NFQB_COPY_PACKET:
		return "packet";
	}
	return "?";
}

static const struct nfqb_kstats *find_prev(const struct nfqb_kstats *prev,
					   int nprev, uint32_t num)
{
	int i;

	for (i = 0; i < nprev; i++)
		if (prev[i].queue_num == num)
			return &prev[i];
	return NULL;
}

static void print_table(const struct nfqb_kstats *k, int n,
			const struct nfqb_kstats *prev, int nprev,
			double secs, long only, bool json)
{
	int i;

	if (json) {
		printf("[");
		for (i = 0; i < n; i++) {
			if (only >= 0 && k[i].queue_num != (uint32_t)only)
				continue;
			printf("%s{\"queue\":%u,\"portid\":%u,\"waiting\":%u,"
			       "\"copy_mode\":\"%s\",\"copy_range\":%u,"
			       "\"dropped\":%u,\"user_dropped\":%u,"
			       "\"id_sequence\":%u}", i ? "," : "",
			       k[i].queue_num, k[i].portid, k[i].queue_total,
			       mode_name(k[i].copy_mode), k[i].copy_range,
			       k[i].queue_dropped, k[i].queue_user_dropped,
			       k[i].id_sequence);
		}
		printf("]\n");
		fflush(stdout);
		return;
	}
	printf("%5s %10s %8s %6s %6s %10s %12s %12s %10s\n", "queue", "portid",
	       "waiting", "mode", "range", "dropped", "user_dropped",
	       "last_id", "pkts/s");
	for (i = 0; i < n; i++) {
		const struct nfqb_kstats *p;
		char rate[32] = "-";

		if (only >= 0 && k[i].queue_num != (uint32_t)only)
			continue;
		p = prev ? find_prev(prev, nprev, k[i].queue_num) : NULL;
		if (p && secs > 0)
			snprintf(rate, sizeof(rate), "%.0f",
				 (double)(uint32_t)(k[i].id_sequence -
						    p->id_sequence) / secs);
		printf("%5u %10u %8u %6s %6u %10u %12u %12u %10s\n",
		       k[i].queue_num, k[i].portid, k[i].queue_total,
		       mode_name(k[i].copy_mode), k[i].copy_range,
		       k[i].queue_dropped, k[i].queue_user_dropped,
		       k[i].id_sequence, rate);
	}
	fflush(stdout);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [-q QUEUE] [-i SECONDS] [-c COUNT] [--json]\n"
		"  -q, --queue N      only queue N\n"
		"  -i, --interval S   print every S seconds (rates per second)\n"
		"  -c, --count N      stop after N prints\n"
		"  -j, --json         one JSON array per print\n", prog);
}

struct args {
	long only;			/* the queue, -1: all */
	long count;			/* prints, 0: no limit */
	double interval;		/* seconds, 0: once */
	bool json;
};

/* the command line into @a: 0, or the exit status (after --help, or a
 * bad one) */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "q:i:c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			a->only = strtol(optarg, NULL, 0);
			break;
		case 'i':
			a->interval = strtod(optarg, NULL);
			break;
		case 'c':
			a->count = strtol(optarg, NULL, 0);
			break;
		case 'j':
			a->json = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (a->interval < 0 || (a->only > 65535) || a->count < 0) {
		usage(stderr, argv[0]);
		return 2;
	}
	return -1;
}

/* the kernel's table into @cur: its rows, or -1 (said) */
static int read_queues(struct nfqb_kstats *cur)
{
	int n = nfqb_kstats_read(cur, MAXQ, sizeof(cur[0]));

	if (n < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "nfqb-stat: nfnetlink_queue is not "
				"loaded (no queue was ever bound in this "
				"namespace)\n");
		else
			fprintf(stderr, "nfqb-stat: %s\n", strerror(errno));
		return -1;
	}
	return n > MAXQ ? MAXQ : n;
}

static int run(const struct args *a)
{
	static struct nfqb_kstats cur[MAXQ], prev[MAXQ];
	long done = 0;
	int n, nprev = 0;

	while (!stop) {
		n = read_queues(cur);
		if (n < 0)
			return 1;
		print_table(cur, n, nprev ? prev : NULL, nprev, a->interval,
			    a->only, a->json);
		if (a->only >= 0 && !a->interval &&
		    nfqb_kstats_get((uint16_t)a->only, NULL,
				    sizeof(struct nfqb_kstats)) < 0) {
			fprintf(stderr, "nfqb-stat: queue %ld is not bound\n",
				a->only);
			return 1;
		}
		if (!a->interval || (a->count && ++done >= a->count))
			break;
		memcpy(prev, cur, sizeof(cur[0]) * (size_t)n);
		nprev = n;
		usleep((useconds_t)(a->interval * 1e6));
		if (!a->json)
			printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct args a = { .only = -1 };
	int ret = parse_args(argc, argv, &a);

	if (ret >= 0)
		return ret;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&a);
}
