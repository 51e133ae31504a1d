/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the DAQ consumers. libdaq's daqtest in performance mode (-p:
 * no decoding, every packet passed) on queue 0, once with libdaq's stock
 * nfq module (one recvmsg per packet, one verdict sendto per packet) and
 * once with our daq_nfqb module (libnfq-batch underneath): what a Snort 3
 * user gets by changing --daq nfq to --daq nfqb.
 *
 * The consumer process forks daqtest (on the consumer's CPU, in the run's
 * namespace) and waits for it: the run's CPU time (wait4, children
 * included) and syscall count (perf, inherited) cover daqtest. Readiness is
 * the queue showing up bound in /proc/net/netfilter/nfnetlink_queue; at
 * the stop signal the consumer passes SIGTERM on (daqtest interrupts its
 * instance, prints its statistics and exits), then reads daqtest's packet
 * count (and, for daq_nfqb, the library's counters, printed with its debug
 * variable) from its output.
 *
 * The stock module runs with a 100 ms receive timeout (-t 100; its
 * interrupt only sets a flag, so without a timeout it never stops);
 * daq_nfqb blocks (-t 0: its interrupt wakes nfqb_recv(), and the
 * adaptive linger works only in blocking mode). NFQB_BENCH_DAQ_TIMEOUT=<ms>
 * sets both.
 *
 * Where things are (compile-time defaults from configure, overridden by
 * the environment): NFQB_BENCH_DAQTEST (daqtest), NFQB_BENCH_DAQ_STOCK_DIR
 * (libdaq's module directory, with daq_nfq.so), NFQB_BENCH_DAQ_DIR (the
 * directory with daq_nfqb.so: the installed one if there, else the build
 * tree's daq/.libs).
 *
 * Drain mode stops the consumer with SIGSTOP, which does not reach
 * daqtest: these consumers refuse it (use --mode stream).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nfqb-bench-child.h"
#include "nfqb-bench-cons.h"
#include "nfqb-bench-daq.h"

#ifndef NFQB_DAQTEST
#define NFQB_DAQTEST ""
#endif
#ifndef NFQB_DAQ_STOCK_DIR
#define NFQB_DAQ_STOCK_DIR ""
#endif
#ifndef NFQB_DAQ_INSTALL_DIR
#define NFQB_DAQ_INSTALL_DIR ""
#endif
#ifndef NFQB_DAQ_BUILD_DIR
#define NFQB_DAQ_BUILD_DIR ""
#endif
#ifndef NFQB_LIB_BUILD_DIR
#define NFQB_LIB_BUILD_DIR ""
#endif

static bool file_in(const char *dir, const char *name)
{
	char path[4096];

	if (!dir || !*dir)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, R_OK) == 0;
}

/* daqtest's statistics, and daq_nfqb's counters (debug), into @c */
static void read_output(int fd, bool ours, struct bench_cons *c)
{
	static char buf[65536];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	c->packets = bench_num_after(buf, "Packets Received:");
	if (!ours || !strstr(buf, "daq_nfqb: queue"))
		return;
	c->recv_calls = bench_num_after(buf, " recv_calls ");
	c->send_calls = bench_num_after(buf, " send_calls ");
	c->verdict_msgs = bench_num_after(buf, " verdict_msgs ");
	c->batch_msgs = bench_num_after(buf, " batch_msgs ");
	c->enobufs = bench_num_after(buf, " enobufs ");
}

static int daq_fail(struct bench_cons *c)
{
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
	return -1;
}

#define DAQ_ERR(c, ...)	snprintf((c)->err, sizeof((c)->err), __VA_ARGS__)

/* where daqtest and the module are */
struct daq_where {
	const char *daqtest;
	const char *stock;		/* libdaq's module directory */
	const char *dir;		/* daq_nfqb.so's */
	const char *timeout;		/* NFQB_BENCH_DAQ_TIMEOUT, or NULL */
};

/* daqtest and the module can run here: 0, or -1 with @c failed */
static int daq_check(const struct bench_cfg *cfg, struct bench_cons *c,
		     bool ours, struct daq_where *w)
{
	w->daqtest = bench_env_or("NFQB_BENCH_DAQTEST", NFQB_DAQTEST);
	w->stock = bench_env_or("NFQB_BENCH_DAQ_STOCK_DIR",
				NFQB_DAQ_STOCK_DIR);
	w->dir = getenv("NFQB_BENCH_DAQ_DIR");
	w->timeout = getenv("NFQB_BENCH_DAQ_TIMEOUT");
#ifndef NFQB_BENCH_DAQ
	DAQ_ERR(c, "nfqb-bench was built without the DAQ module: configure --with-daq (libdaq, daqtest)");
	return daq_fail(c);
#endif
	if (cfg->drain) {
		DAQ_ERR(c, "daqtest consumers cannot run in drain mode (SIGSTOP does not reach daqtest): use --mode stream");
		return daq_fail(c);
	}
	if (!w->dir || !*w->dir)
		w->dir = file_in(NFQB_DAQ_INSTALL_DIR, "daq_nfqb.so") ?
			 NFQB_DAQ_INSTALL_DIR : NFQB_DAQ_BUILD_DIR;
	if (!*w->daqtest || access(w->daqtest, X_OK)) {
		DAQ_ERR(c, "no daqtest ('%s'): build libdaq (tests/daq/build-libdaq.sh) and set NFQB_BENCH_DAQTEST",
			w->daqtest);
		return daq_fail(c);
	}
	if (!file_in(ours ? w->dir : w->stock,
		     ours ? "daq_nfqb.so" : "daq_nfq.so")) {
		DAQ_ERR(c, "no %s in '%s' (set %s)",
			ours ? "daq_nfqb.so" : "libdaq's daq_nfq.so",
			ours ? w->dir : w->stock,
			ours ? "NFQB_BENCH_DAQ_DIR" : "NFQB_BENCH_DAQ_STOCK_DIR");
		return daq_fail(c);
	}
	return 0;
}

/* daqtest's command line */
struct daq_args {
	char batch[16], maxlen[32];
	char *argv[24];
};

static void daq_argv(const struct bench_cfg *cfg, const struct daq_where *w,
		     bool ours, struct daq_args *a)
{
	char **argv = a->argv;
	int n = 0;

	/* daqtest's default batch: the stock module's message pool is 16
	 * (daqtest cannot change it) and a larger batch ends its receive
	 * with "no buffers", which ends daqtest */
	snprintf(a->batch, sizeof(a->batch), "%u", 16);
	argv[n++] = (char *)w->daqtest;
	argv[n++] = "-d";
	argv[n++] = ours ? "nfqb" : "nfq";
	argv[n++] = "-m";
	argv[n++] = (char *)(ours ? w->dir : w->stock);
	argv[n++] = "-M";
	argv[n++] = "inline";
	argv[n++] = "-i";
	argv[n++] = "0";
	argv[n++] = "-p";
	argv[n++] = "-s";
	argv[n++] = "65535";
	argv[n++] = "-b";
	argv[n++] = a->batch;
	argv[n++] = "-t";
	argv[n++] = (char *)(w->timeout ? w->timeout : ours ? "0" : "100");
	/* the kernel queue length every consumer gets (--maxlen); both
	 * modules size the socket buffer as queue_maxlen * snaplen */
	snprintf(a->maxlen, sizeof(a->maxlen), "queue_maxlen=%u",
		 cfg->maxlen);
	argv[n++] = "-C";
	argv[n++] = a->maxlen;
	if (ours) {
		argv[n++] = "-C";
		argv[n++] = "debug";
	}
	argv[n] = NULL;
}

/* daqtest's output so far, on one line */
static void daq_said(int fd, char *msg, size_t len)
{
	ssize_t r;

	msg[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) != 0)
		return;
	r = read(fd, msg, len - 1);
	msg[r > 0 ? r : 0] = '\0';
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

/* ready once daqtest has bound queue 0 (10 s at most): 0 or -1 */
static int daq_bound(pid_t pid, int fd, bool ours, struct bench_cons *c)
{
	char msg[120];
	int st;

	switch (bench_child_bound(pid, 0, 10, &st)) {
	case 0:
		return 0;
	case 1:
		read_output(fd, ours, c);
		daq_said(fd, msg, sizeof(msg));
		DAQ_ERR(c, "daqtest exited before binding: %s", msg);
		return daq_fail(c);
	default:
		DAQ_ERR(c, "daqtest did not bind queue 0 in 10 s");
		return daq_fail(c);
	}
}

/* after the run: daqtest must have ended on the stop, and well */
static int daq_ended(int fd, int st, struct bench_cons *c)
{
	if (!bench_stop) {
		/* daqtest gave up by itself: say why (its error line) */
		char line[256] = "", buf[8192];
		FILE *f = fdopen(dup(fd), "r");

		if (f && fseek(f, 0, SEEK_SET) == 0) {
			while (fgets(buf, sizeof(buf), f))
				if (strstr(buf, "rror") || strstr(buf, "ailed") ||
				    strstr(buf, "Ran out"))
					memcpy(line, buf, sizeof(line) - 1);
		}
		if (f)
			fclose(f);
		line[strcspn(line, "\n")] = '\0';
		DAQ_ERR(c, "daqtest exited during the run (%s %d): %s",
			WIFEXITED(st) ? "exit" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), line);
		return daq_fail(c);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		DAQ_ERR(c, "daqtest failed (%s %d)",
			WIFEXITED(st) ? "exit" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return daq_fail(c);
	}
	return 0;
}

static int bench_daq(const struct bench_cfg *cfg, struct bench_cons *c,
		     bool ours)
{
	struct daq_where w;
	struct daq_args a;
	int fd, st, ret;
	pid_t pid;

	if (daq_check(cfg, c, ours, &w) < 0)
		return -1;
	fd = bench_child_output("daq", c);
	if (fd < 0)
		return -1;
	daq_argv(cfg, &w, ours, &a);
	pid = fork();
	if (pid < 0) {
		bench_cons_fail(c, "fork", errno);
		close(fd);
		return -1;
	}
	if (pid == 0) {
		bench_child_setup(fd);
		/* the build tree's libnfq-batch, for an uninstalled module */
		if (ours && *NFQB_LIB_BUILD_DIR && !getenv("LD_LIBRARY_PATH"))
			setenv("LD_LIBRARY_PATH", NFQB_LIB_BUILD_DIR, 1);
		execv(w.daqtest, a.argv);
		_exit(127);
	}
	if (daq_bound(pid, fd, ours, c) < 0 ||
	    bench_child_run(pid, c, "daqtest", &st) < 0) {
		close(fd);
		return -1;
	}
	read_output(fd, ours, c);
	ret = daq_ended(fd, st, c);
	close(fd);
	return ret;
}

int bench_daq_nfq(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_daq(cfg, c, false);
}

int bench_daq_nfqb(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_daq(cfg, c, true);
}
