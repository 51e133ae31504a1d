/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the clock, and helper programs started and reaped within a
 * deadline (see nfqb-bench-proc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "nfqb-bench-proc.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int bench_spawn(char *const argv[], const char *env_override, int out_fd)
{
	const char *env = env_override ? getenv(env_override) : NULL;
	pid_t pid;
	int fd;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	/* never SCHED_FIFO (--rt): two busy FIFO processes on one CPU, as
	 * an iperf3 client and server, starve each other and the run */
	if (sched_getscheduler(0) != SCHED_OTHER) {
		struct sched_param sp = { .sched_priority = 0 };

		sched_setscheduler(0, SCHED_OTHER, &sp);
	}
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(out_fd >= 0 ? out_fd : fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (env && *env)
		execv(env, argv);
	execvp(argv[0], argv);
	_exit(127);
}

int bench_wait_deadline(int pid, double seconds, int *status)
{
	double t0 = bench_now();
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (bench_now() - t0 > seconds) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		usleep(2000);
	}
}
