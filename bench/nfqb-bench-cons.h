/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the consumer process's side of a run, shared by every
 * consumer: the stop signal's flag, and what it tells the run through
 * struct bench_cons (ready, failed).
 */
#ifndef NFQB_BENCH_CONS_H
#define NFQB_BENCH_CONS_H

#include <signal.h>

#include "nfqb-bench-types.h"

/* set by the stop signal (SIGTERM, SIGINT) in the consumer process */
extern volatile sig_atomic_t bench_stop;

/* @c failed: "@what: strerror(@err)" */
void bench_cons_fail(struct bench_cons *c, const char *what, int err);
/* the queues are bound: the run may start the traffic */
void bench_cons_ready(struct bench_cons *c);
/* the signals that stop a consumer: SIGTERM, SIGINT, and SIGUSR1 (its
 * own wake-up) */
void bench_cons_stop_signals(sigset_t *set);
/* After the loop: no stop signal may interrupt the consumer's cleanup. */
void bench_cons_quiet(void);

#endif /* NFQB_BENCH_CONS_H */
