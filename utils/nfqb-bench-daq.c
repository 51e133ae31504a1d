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

static int bench_daq(const struct bench_cfg *cfg, struct bench_cons *c,
		     bool ours)
{
	const char *daqtest = bench_env_or("NFQB_BENCH_DAQTEST", NFQB_DAQTEST);
	const char *stock = bench_env_or("NFQB_BENCH_DAQ_STOCK_DIR",
				   NFQB_DAQ_STOCK_DIR);
	const char *dir = getenv("NFQB_BENCH_DAQ_DIR");
	const char *timeout = getenv("NFQB_BENCH_DAQ_TIMEOUT");
	char batch[16], maxlen[32], tmpl[] = "/tmp/nfqb-bench-daq.XXXXXX";
	char *argv[24];
	int n = 0, fd, st;
	pid_t pid;

#ifndef NFQB_BENCH_DAQ
	snprintf(c->err, sizeof(c->err),
		 "nfqb-bench was built without the DAQ module: configure --with-daq (libdaq, daqtest)");
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
	return -1;
#endif
	if (cfg->drain) {
		snprintf(c->err, sizeof(c->err),
			 "daqtest consumers cannot run in drain mode (SIGSTOP does not reach daqtest): use --mode stream");
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		return -1;
	}
	if (!dir || !*dir)
		dir = file_in(NFQB_DAQ_INSTALL_DIR, "daq_nfqb.so") ?
			NFQB_DAQ_INSTALL_DIR : NFQB_DAQ_BUILD_DIR;
	if (!*daqtest || access(daqtest, X_OK)) {
		snprintf(c->err, sizeof(c->err),
			 "no daqtest ('%s'): build libdaq (tests/daq/build-libdaq.sh) and set NFQB_BENCH_DAQTEST",
			 daqtest);
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		return -1;
	}
	if (!file_in(ours ? dir : stock, ours ? "daq_nfqb.so" : "daq_nfq.so")) {
		snprintf(c->err, sizeof(c->err),
			 "no %s in '%s' (set %s)",
			 ours ? "daq_nfqb.so" : "libdaq's daq_nfq.so",
			 ours ? dir : stock,
			 ours ? "NFQB_BENCH_DAQ_DIR" : "NFQB_BENCH_DAQ_STOCK_DIR");
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		return -1;
	}

	fd = mkstemp(tmpl);
	if (fd < 0) {
		bench_cons_fail(c, "mkstemp", errno);
		return -1;
	}
	unlink(tmpl);
	/* daqtest's default batch: the stock module's message pool is 16
	 * (daqtest cannot change it) and a larger batch ends its receive
	 * with "no buffers", which ends daqtest */
	snprintf(batch, sizeof(batch), "%u", 16);
	argv[n++] = (char *)daqtest;
	argv[n++] = "-d";
	argv[n++] = ours ? "nfqb" : "nfq";
	argv[n++] = "-m";
	argv[n++] = (char *)(ours ? dir : stock);
	argv[n++] = "-M";
	argv[n++] = "inline";
	argv[n++] = "-i";
	argv[n++] = "0";
	argv[n++] = "-p";
	argv[n++] = "-s";
	argv[n++] = "65535";
	argv[n++] = "-b";
	argv[n++] = batch;
	argv[n++] = "-t";
	argv[n++] = (char *)(timeout ? timeout : ours ? "0" : "100");
	/* the kernel queue length every consumer gets (--maxlen); both
	 * modules size the socket buffer as queue_maxlen * snaplen */
	snprintf(maxlen, sizeof(maxlen), "queue_maxlen=%u", cfg->maxlen);
	argv[n++] = "-C";
	argv[n++] = maxlen;
	if (ours) {
		argv[n++] = "-C";
		argv[n++] = "debug";
	}
	argv[n] = NULL;

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
		execv(daqtest, argv);
		_exit(127);
	}

	/* ready once daqtest has bound queue 0 (10 s at most) */
	switch (bench_child_bound(pid, 0, 10, &st)) {
	case 0:
		break;
	case 1: {
		char msg[120] = "";

		read_output(fd, ours, c);
		if (lseek(fd, 0, SEEK_SET) == 0) {
			ssize_t r = read(fd, msg, sizeof(msg) - 1);

			msg[r > 0 ? r : 0] = '\0';
			for (char *p = msg; *p; p++)
				if (*p == '\n')
					*p = ' ';
		}
		snprintf(c->err, sizeof(c->err),
			 "daqtest exited before binding: %s", msg);
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		close(fd);
		return -1;
	}
	default:
		snprintf(c->err, sizeof(c->err),
			 "daqtest did not bind queue 0 in 10 s");
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		close(fd);
		return -1;
	}
	if (bench_child_run(pid, c, "daqtest", &st) < 0) {
		close(fd);
		return -1;
	}
	read_output(fd, ours, c);
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
		snprintf(c->err, sizeof(c->err),
			 "daqtest exited during the run (%s %d): %s",
			 WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), line);
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		close(fd);
		return -1;
	}
	close(fd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(c->err, sizeof(c->err), "daqtest failed (%s %d)",
			 WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		return -1;
	}
	return 0;
}

int bench_daq_nfq(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_daq(cfg, c, false);
}

int bench_daq_nfqb(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_daq(cfg, c, true);
}
