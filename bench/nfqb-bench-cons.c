/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the consumer process's side of a run, shared by every
 * consumer (see nfqb-bench-cons.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "nfqb-bench-cons.h"

volatile sig_atomic_t bench_stop;

void bench_cons_fail(struct bench_cons *c, const char *what, int err)
{
	snprintf(c->err, sizeof(c->err), "%s: %s", what, strerror(err));
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
}

void bench_cons_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
}

void bench_cons_quiet(void)
{
	sigset_t set;

	bench_cons_stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void bench_cons_ready(struct bench_cons *c)
{
	__atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
}
