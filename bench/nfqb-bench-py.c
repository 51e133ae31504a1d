/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the Python consumers (asked for by name: -c
 * py-nfq,py-compat,py-batch). One Python process per run, forked by the
 * consumer process (so it runs on the consumer's CPU, in the run's
 * namespace, and its CPU time is the consumer's: wait4, children
 * included), python/bench/pyconsumer.py with:
 *
 * - py-nfq: python-netfilterqueue 1.1.0 (built from its tarball by
 *   python/bench/build-pynfq.sh into a cache outside the clone), a
 *   callback that counts and accepts every packet;
 * - py-compat: nfqb.netfilterqueue, the same callback;
 * - py-batch: nfqb.Queue.recv(64), accept() for each packet.
 *
 * GSO packets are segmented by the kernel for all three
 * (python-netfilterqueue cannot ask for them whole), whatever --gso says.
 * Readiness is queue 0 showing up bound; at the stop signal the consumer
 * passes SIGTERM on and reads "packets N" from the script's output, and
 * the CPU time the script spent outside the measured window (before its
 * queue was bound, after the stop), which the run takes off the
 * consumer's: an interpreter's start costs 20 to 200 ms of CPU, as much
 * as 100000 packets.
 *
 * Where things are, from the environment (`make bench-python` sets them
 * all for the build tree; no build path is compiled in):
 * NFQB_BENCH_PYTHON (the interpreter, default /usr/bin/python3),
 * NFQB_BENCH_PYCONSUMER (python/bench/pyconsumer.py), NFQB_BENCH_PYNFQB_DIR
 * (the directory holding the nfqb package; unset: the installed one),
 * NFQB_BENCH_PYNFQ_DIR (python-netfilterqueue's: the output of
 * build-pynfq.sh).
 *
 * nfqb-bench-report.c reports them against python-netfilterqueue: paired
 * ratios per repetition and the Python targets of doc/benchmarks.md.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nfqb-bench-child.h"
#include "nfqb-bench-cons.h"
#include "nfqb-bench-py.h"


/* what runs: the interpreter, the script, the implementation and where
 * its package is ("": the installed nfqb) */
struct py_where {
	const char *python, *script, *impl, *path;
};

/* what bench_child_consume() starts */
struct py_run {
	const struct bench_cfg *cfg;
	struct py_where w;
};

/* it can run: 0, or -1 with @c failed */
static int py_check(const struct bench_cfg *cfg, struct bench_cons *c,
		    struct py_where *w)
{
	char msg[256];

	w->python = bench_env_or("NFQB_BENCH_PYTHON", "/usr/bin/python3");
	w->script = bench_env_or("NFQB_BENCH_PYCONSUMER", "");
	if (cfg->drain)
		return bench_child_fail(c, "the Python consumers cannot run in drain mode (SIGSTOP does not reach them): use --mode stream");
	if (!strcmp(w->impl, "pynfq")) {
		w->path = getenv("NFQB_BENCH_PYNFQ_DIR");
		if (!w->path || !*w->path)
			return bench_child_fail(c, "NFQB_BENCH_PYNFQ_DIR is not set: build python-netfilterqueue with python/bench/build-pynfq.sh (make bench-python does)");
	} else {
		w->path = bench_env_or("NFQB_BENCH_PYNFQB_DIR", "");
	}
	if (!*w->script || access(w->script, R_OK)) {
		snprintf(msg, sizeof(msg),
			 "no consumer script '%.100s': set NFQB_BENCH_PYCONSUMER to python/bench/pyconsumer.py (make bench-python does)",
			 w->script);
		return bench_child_fail(c, msg);
	}
	return 0;
}

/* the script, forked, its output into @fd: its pid, or -1 */
static pid_t py_spawn(const void *ctx, int fd)
{
	const struct py_run *r = ctx;
	const struct bench_cfg *cfg = r->cfg;
	const struct py_where *w = &r->w;
	char maxlen[16], sock[16];
	pid_t pid;

	snprintf(maxlen, sizeof(maxlen), "%u", cfg->maxlen);
	/* the kernel doubles it: the same buffer as the C consumers */
	snprintf(sock, sizeof(sock), "%u", cfg->rcvbuf / 2);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)w->python, (char *)w->script,
				 (char *)w->impl, "--maxlen", maxlen,
				 "--sock-len", sock, NULL };

		bench_child_setup(fd);
		if (*w->path)
			setenv("PYTHONPATH", w->path, 1);
		setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
		execv(w->python, argv);
		_exit(127);
	}
	return pid;
}

static int bench_py(const struct bench_cfg *cfg, struct bench_cons *c,
		   const char *impl)
{
	struct py_run r = { .cfg = cfg, .w = { .impl = impl } };
	const char *out;

	if (py_check(cfg, c, &r.w) < 0)
		return -1;
	return bench_child_consume(c, impl, py_spawn, &r, &out);
}

int bench_py_nfq(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_py(cfg, c, "pynfq");
}

int bench_py_compat(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_py(cfg, c, "compat");
}

int bench_py_batch(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_py(cfg, c, "batch");
}

