/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-ips: the demo and bench driver (demo.c), for main.c.
 */
#ifndef NFQB_IPS_DEMO_H
#define NFQB_IPS_DEMO_H

#include "nfqb-ips.h"

/* --demo: the daemon with @o's mode, workers and large-packet policy, on
 * queues 0..3 of a private network namespace with generated traffic and
 * a rules file of its own (@o's queues and rules are set here), reloaded
 * midway; then the check that every datagram was inspected. Returns the
 * exit status (1 if the check failed). */
int ips_demo(struct ips_opts *o);

/* --bench: packets per second with 1, 2 and 4 queues in @mode, each in
 * a fresh namespace of its own. Returns the exit status. */
int ips_bench(enum nfqb_pool_mode mode);

#endif
