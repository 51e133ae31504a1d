/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the clock, and helper programs (iperf3, gnuplot) started and
 * reaped within a deadline.
 */
#ifndef NFQB_BENCH_PROC_H
#define NFQB_BENCH_PROC_H

/* CLOCK_MONOTONIC, in seconds */
double bench_now(void);

/*
 * Start @argv[0] (or @env_override's value, if that variable is set) as a
 * child in this run's namespace and on this process's CPU, at normal
 * priority (SCHED_OTHER, the run's nice value), with standard output on
 * @out_fd (-1: /dev/null) and standard error on /dev/null. It is killed
 * when the run process dies. Returns its pid or -1.
 */
int bench_spawn(char *const argv[], const char *env_override, int out_fd);

/*
 * Wait at most @seconds for child @pid; then kill it (SIGKILL) and reap it.
 * Returns 0 if it ended by itself (status in *status), -1 if it was killed.
 */
int bench_wait_deadline(int pid, double seconds, int *status);

#endif /* NFQB_BENCH_PROC_H */
