// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-ips: the command line. It runs the daemon (daemon.c), or its demo
 * or benchmark (demo.c), as nfqb-ips(8) describes:
 *
 *   nfqb-ips [-q FIRST[:LAST]] [-m qpw|dispatch] [-w WORKERS] [-u USER]
 *            [-l whole|pass] -r RULES
 *   nfqb-ips --demo [-m MODE] [-l whole|pass]
 *   nfqb-ips --bench [-m MODE]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "nfqb-ips.h"

/* The options: what the daemon runs, and which of demo and bench instead
 * (--bench first). */
struct cli {
	struct ips_opts o;
	bool demo, bench;
};

static void usage(const char *argv0)
{
	printf("usage: %s [-q FIRST[:LAST]] [-m qpw|dispatch] [-w WORKERS] "
	       "[-u USER] [-l whole|pass] -r RULES\n       %s --demo [-m MODE] "
	       "[-l whole|pass]\n       %s --bench [-m MODE]\n", argv0, argv0,
	       argv0);
}

/* -q FIRST[:LAST] into @o; false if it is not a range of queues. */
static bool parse_queues(const char *arg, struct ips_opts *o)
{
	unsigned int first, last;
	int c = sscanf(arg, "%u:%u", &first, &last);

	if (c < 1 || first > 65535 || (c == 2 &&
	    (last < first || last > 65535)))
		return false;
	o->first = (uint16_t)first;
	o->count = (uint16_t)(c == 2 ? last - first + 1 : 1);
	return true;
}

/* The options into @cli. Returns -1 to go on, or the exit status: 0 after
 * --help, 2 on a bad option. */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	static const struct option lopts[] = {
		{ "demo", no_argument, NULL, 'd' },
		{ "bench", no_argument, NULL, 'b' },
		{ "queues", required_argument, NULL, 'q' },
		{ "mode", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "rules", required_argument, NULL, 'r' },
		{ "user", required_argument, NULL, 'u' },
		{ "large", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "dbq:m:w:r:u:l:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			cli->demo = true;
			break;
		case 'b':
			cli->bench = true;
			break;
		case 'q':
			if (!parse_queues(optarg, &cli->o)) {
				fprintf(stderr, "nfqb-ips: bad queue range\n");
				return 2;
			}
			break;
		case 'm':
			cli->o.mode = strcmp(optarg, "dispatch") ?
				    NFQB_POOL_QUEUE_PER_WORKER : NFQB_POOL_DISPATCH;
			break;
		case 'w':
			cli->o.workers = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			cli->o.rules = optarg;
			break;
		case 'u':
			cli->o.user = optarg;
			break;
		case 'l':
			if (!strcmp(optarg, "whole")) {
				cli->o.large = NFQB_LARGE_WHOLE;
			} else if (!strcmp(optarg, "pass")) {
				cli->o.large = NFQB_LARGE_PASS;
			} else {
				fprintf(stderr, "nfqb-ips: --large: whole or "
					"pass, not %s\n", optarg);
				return 2;
			}
			break;
		default:
			usage(argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cli c = {
		.o = { .first = 0, .count = 1, .argv = argv,
		       .large = NFQB_LARGE_WHOLE },
	};
	int ret = parse_args(argc, argv, &c);

	if (ret >= 0)
		return ret;
	ips_install_signals();
	if (c.bench)
		return ips_bench(c.o.mode);
	if (c.demo)
		return ips_demo(&c.o);
	if (!c.o.rules) {
		usage(argv[0]);
		return 2;
	}
	return ips_serve(&c.o, NULL);
}
