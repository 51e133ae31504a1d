/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: consumers that are another program (daqtest, a Python
 * process, nfqb-bench-app), forked by the consumer process.
 */
#ifndef NFQB_BENCH_CHILD_H
#define NFQB_BENCH_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nfqb-bench-types.h"

/* the variable @name if set and not empty, else @def */
const char *bench_env_or(const char *name, const char *def);
/* the number right after the first @key in @text, 0 if none */
uint64_t bench_num_after(const char *text, const char *key);
/* is queue @num bound (in this namespace)? */
bool bench_queue_bound(unsigned int num);
/* a file for the child's output, already unlinked: its fd, or -1 with
 * @c failed */
int bench_child_output(const char *name, struct bench_cons *c);
/* in the forked child: signals as by default, output into @out_fd */
void bench_child_setup(int out_fd);
/* Wait until child @pid has bound queue @num: 0; 1 if it exited first
 * (*status set); -1 if not within @max_s seconds or the run was stopped
 * (the child is killed and reaped). */
int bench_child_bound(pid_t pid, unsigned int num, double max_s,
		      int *status);
/* Wait for child @pid to end, passing the run's stop on as SIGTERM: 0
 * (*status set), or -1 with errno. */
int bench_child_wait(pid_t pid, int *status);
/* The run of a bound child @pid: tell the run the consumer is ready, wait
 * for the child to end (bench_child_wait()), then quiet down. 0 (*status
 * set), or -1 with @c failed ("waitpid(@what)"). */
int bench_child_run(pid_t pid, struct bench_cons *c, const char *what,
		    int *status);
/* Read what the child printed (from the start of @fd): its counters into
 * @c ("packets N", "enobufs N", "outside_user_ns N", ...), its last
 * characters into @tail (newlines as spaces, if @tail_len). Returns the
 * text ("" if none), valid until the next call. */
const char *bench_child_read(int fd, struct bench_cons *c, char *tail,
			     size_t tail_len);
/* the last @n characters of @s: where an error message says what failed */
const char *bench_last_chars(const char *s, size_t n);
/* @c failed with the message @msg: -1 */
int bench_child_fail(struct bench_cons *c, const char *msg);
/* A consumer that is another program, from start to end: @spawn forks it
 * (@ctx, its output into the file it is given: its pid, or -1 with
 * errno); it must bind queue 0 within 20 s and exit 0 after the run's
 * stop; @name names it in messages. 0 with what it printed in *@out
 * (bench_child_read()), or -1 with @c failed. */
int bench_child_consume(struct bench_cons *c, const char *name,
			pid_t (*spawn)(const void *ctx, int fd),
			const void *ctx, const char **out);

#endif /* NFQB_BENCH_CHILD_H */
