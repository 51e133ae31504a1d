// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-verdict: bind a queue and give every packet one fixed verdict (with
 * an optional mark), printing each packet's metadata if asked. For
 * operators and tests: drain a queue, mark a class of traffic, watch what a
 * rule sends to userspace.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnfq-batch/libnfq-batch.h>

#include "nfqb-privdrop.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	uint32_t verdict;
	bool mark_set;
	uint32_t mark;
	bool ct_mark_set;
	uint32_t ct_mark;
	bool verbose;
	unsigned long count;
	unsigned long seen;
};

static void print_packet(const struct nfqb_packet *p)
{
	uint32_t v, len = 0;
	const uint8_t *pl = nfqb_pkt_payload(p, &len);

	printf("id %u family %u hook %u proto 0x%04x len %u", nfqb_pkt_id(p),
	       nfqb_pkt_family(p), nfqb_pkt_hook(p), nfqb_pkt_hw_protocol(p),
	       nfqb_pkt_orig_len(p));
	if (nfqb_pkt_mark(p, &v))
		printf(" mark %u", v);
	if (nfqb_pkt_indev(p, &v))
		printf(" in %u", v);
	if (nfqb_pkt_outdev(p, &v))
		printf(" out %u", v);
	if (nfqb_pkt_uid(p, &v))
		printf(" uid %u", v);
	if (pl && len >= 20 && (pl[0] >> 4) == 4)
		printf(" %u.%u.%u.%u > %u.%u.%u.%u ipproto %u", pl[12], pl[13],
		       pl[14], pl[15], pl[16], pl[17], pl[18], pl[19], pl[9]);
	printf("\n");
}

static int on_packet(struct nfqb_packet *p, void *data)
{
	struct opts *o = data;

	if (o->verbose)
		print_packet(p);
	o->seen++;
	if (o->ct_mark_set) {
		struct nfqb_verdict v = {
			.verdict = o->verdict,
			.flags = NFQB_V_CT_MARK | (o->mark_set ? NFQB_V_MARK : 0),
			.mark = o->mark,
			.ct_mark = o->ct_mark,
		};

		return nfqb_verdict_ex(p, &v, sizeof(v));
	}
	if (o->mark_set)
		return nfqb_verdict_mark(p, o->verdict, o->mark);
	return nfqb_verdict(p, o->verdict);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s -q QUEUE (--accept | --drop) [--mark M] "
		"[--ct-mark M] [--count N] [--fail-open] [--user USER] [--verbose]\n", prog);
}

struct args {
	struct opts o;
	long num;			/* the queue, -1: not given */
	bool fail_open;
	const char *user;
};

/* the command line into @a: 0, or the exit status (after --help, or a
 * bad one) */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option lopts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "accept", no_argument, NULL, 'a' },
		{ "drop", no_argument, NULL, 'd' },
		{ "mark", required_argument, NULL, 'm' },
		{ "ct-mark", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "fail-open", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "q:adm:c:n:fvu:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			a->num = strtol(optarg, NULL, 0);
			break;
		case 'a':
			a->o.verdict = NFQB_ACCEPT;
			break;
		case 'd':
			a->o.verdict = NFQB_DROP;
			break;
		case 'm':
			a->o.mark_set = true;
			a->o.mark = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			a->o.ct_mark_set = true;
			a->o.ct_mark = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			a->o.count = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			a->fail_open = true;
			break;
		case 'v':
			a->o.verbose = true;
			break;
		case 'u':
			a->user = optarg;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (a->num < 0 || a->num > 65535 || a->o.verdict == 0xffffffff) {
		usage(stderr, argv[0]);
		return 2;
	}
	return -1;
}

/* bind the queue, then (as --user if given) a verdict for each packet */
static int run(struct args *a)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct opts *o = &a->o;
	struct nfqb_queue *q;
	char why[256];

	/* no SA_RESTART: a signal ends a blocking receive */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	q = nfqb_queue_open((uint16_t)a->num);
	if (!q) {
		fprintf(stderr, "nfqb-verdict: queue %ld: %s\n", a->num,
			errno == EBUSY ? "already bound by another program" :
			strerror(errno));
		return 1;
	}
	if (a->fail_open &&
	    nfqb_queue_set_flags(q, NFQB_F_FAIL_OPEN, NFQB_F_FAIL_OPEN) < 0)
		fprintf(stderr, "nfqb-verdict: fail-open: %s\n",
			strerror(errno));
	/* bound: go on as @user with CAP_NET_ADMIN alone (every verdict
	 * needs it) */
	if (a->user && nfqb_privdrop(a->user, why, sizeof(why)) < 0) {
		fprintf(stderr, "nfqb-verdict: --user %s: %s\n", a->user, why);
		nfqb_queue_close(q);
		return 1;
	}
	while (!stop && (!o->count || o->seen < o->count)) {
		if (nfqb_dispatch(q, on_packet, o) < 0 && errno != EINTR &&
		    errno != ENOBUFS) {
			fprintf(stderr, "nfqb-verdict: %s\n", strerror(errno));
			break;
		}
	}
	if (nfqb_queue_close(q) < 0)
		fprintf(stderr, "nfqb-verdict: close: %s\n", strerror(errno));
	fprintf(stderr, "nfqb-verdict: %lu packets, verdict %s\n", o->seen,
		nfqb_verdict_name(o->verdict));
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .o = { .verdict = 0xffffffff }, .num = -1 };
	int ret = parse_args(argc, argv, &a);

	return ret >= 0 ? ret : run(&a);
}
