/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the datagrams of a UDP run (their numbers, flows and source
 * addresses, as the consumers read them back) and the traffic process
 * that sends and receives them.
 */
#ifndef NFQB_BENCH_TRAFFIC_H
#define NFQB_BENCH_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfqb-bench-types.h"

/* mixed decisions: is datagram @seq one to drop? */
bool bench_seq_dropped(uint64_t seq, bool drops);
/* the flow (sending socket) of datagram @seq */
unsigned int bench_seq_flow(const struct bench_cfg *cfg, uint64_t seq);
/* the source address of @flow, and back (-1: not one of ours) */
uint32_t bench_flow_addr(unsigned int flow);
int bench_flow_of_addr(uint32_t addr);
/* seq number and flow of a queued IPv4/UDP packet; false if not ours */
bool bench_parse_pkt(const uint8_t *pl, uint32_t len, uint64_t *seq,
		     int *flow);

/* what the traffic process counted */
struct bench_traffic {
	uint64_t sent, expected, delivered, dups, wrong_verdict, bad_mark;
	uint64_t first_bad_seq;		/* first datagram with a wrong mark */
	uint32_t first_bad_mark, first_bad_expected;
	double elapsed;
	bool timed_out, stalled;
};

/* Send cfg->packets datagrams and receive them (see
 * nfqb-bench-traffic.c): 0, or -1 with a message in @err. */
int bench_traffic(const struct bench_cfg *cfg, bool drops, bool marks,
		  int consumer_pid, const volatile int *abort_flag,
		  struct bench_traffic *t, char *err, size_t errlen);

#endif /* NFQB_BENCH_TRAFFIC_H */
