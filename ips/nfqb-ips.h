/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-ips, the daemon (daemon.c) as the rest of the program sees it.
 *
 * The calls go one way: main.c (the command line) calls the daemon and
 * the demo and bench driver (demo.c); the driver calls the daemon, and
 * reaches it back only through the hooks it hands to ips_serve(). The
 * daemon calls neither.
 */
#ifndef NFQB_IPS_H
#define NFQB_IPS_H

#include <stdbool.h>
#include <stdint.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

/* What the daemon runs: queues first..first+count-1, the pool's mode and
 * workers, the rules file, the user to go on as (NULL: stay root), the
 * large-packet policy, and the argv to exec() again on SIGUSR2. */
struct ips_opts {
	uint16_t first, count;
	enum nfqb_pool_mode mode;
	unsigned int workers;
	const char *rules;
	const char *user;
	enum nfqb_large large;	/* --large (default: whole) */
	char **argv;		/* to exec() again on SIGUSR2 */
};

/* What a driver adds to ips_serve() (the daemon has none): @up is called
 * once the pool runs (again after an upgrade whose exec() failed), @tick
 * every second (true: stop now), @down once the pool has stopped, before
 * it is destroyed (its counters final); each may be NULL. */
struct ips_hooks {
	void (*up)(void *data);
	bool (*tick)(struct nfqb_pool *pool, void *data);
	void (*down)(struct nfqb_pool *pool, void *data);
	void *data;
};

/* SIGHUP reloads, SIGUSR1 prints statistics, SIGUSR2 upgrades in place,
 * SIGQUIT stops for a restart, SIGINT and SIGTERM stop. */
void ips_install_signals(void);

/* True once a signal asked the daemon to stop. */
bool ips_stopping(void);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t ips_now_ms(void);

/* The daemon: serve @o until stopped, with the hooks @h (NULL: none).
 * Returns the exit status. */
int ips_serve(const struct ips_opts *o, const struct ips_hooks *h);

/* A pool on queues bound anew, with the rules of o->rules (none if they
 * do not load), not started; a stopping signal stops it. NULL on failure
 * (said on stderr). */
struct nfqb_pool *ips_pool_open(const struct ips_opts *o);

/* Stop, wait for and destroy a pool of ips_pool_open(). */
void ips_pool_close(struct nfqb_pool *pool);

#endif
