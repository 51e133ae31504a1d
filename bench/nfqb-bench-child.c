/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: consumers that are another program (daqtest, a Python
 * process), forked by the consumer process: the child's start (the child
 * side of the fork), its readiness (its queue bound in the kernel's
 * list), the stop passed on, and what it printed ("packets N ...
 * outside_user_ns N outside_sys_ns N", as python/bench/pyconsumer.py and
 * nfqb-bench-app print it).
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

const char *bench_env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

uint64_t bench_num_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

bool bench_queue_bound(unsigned int num)
{
	char line[256];
	unsigned int q;
	bool found = false;
	FILE *f;

	f = fopen("/proc/net/netfilter/nfnetlink_queue", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u", &q) == 1 && q == num)
			found = true;
	fclose(f);
	return found;
}

int bench_child_output(const char *name, struct bench_cons *c)
{
	char tmpl[64];
	int fd;

	snprintf(tmpl, sizeof(tmpl), "/tmp/nfqb-bench-%s.XXXXXX", name);
	fd = mkstemp(tmpl);
	if (fd < 0) {
		bench_cons_fail(c, "mkstemp", errno);
		return -1;
	}
	unlink(tmpl);
	return fd;
}

void bench_child_setup(int out_fd)
{
	sigset_t set;

	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	dup2(out_fd, STDOUT_FILENO);
	dup2(out_fd, STDERR_FILENO);
}

int bench_child_bound(pid_t pid, unsigned int num, double max_s, int *status)
{
	double waited = 0;

	while (!bench_queue_bound(num)) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		if (bench_stop || waited > max_s) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -1;
		}
		usleep(2000);
		waited += 0.002;
	}
	return 0;
}

int bench_child_wait(pid_t pid, int *status)
{
	/* the stop signal ends waitpid() (no SA_RESTART): pass it on */
	for (;;) {
		pid_t r = waitpid(pid, status, 0);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (bench_stop)
			kill(pid, SIGTERM);
	}
}

int bench_child_run(pid_t pid, struct bench_cons *c, const char *what,
		    int *status)
{
	char name[64];
	int err;

	bench_cons_ready(c);
	if (bench_child_wait(pid, status) < 0) {
		err = errno;
		snprintf(name, sizeof(name), "waitpid(%s)", what);
		bench_cons_fail(c, name, err);
		return -1;
	}
	bench_cons_quiet();
	return 0;
}

/* @c's counters from the child's output */
static void child_parse(const char *buf, struct bench_cons *c)
{
	if (!strncmp(buf, "packets ", 8) || strstr(buf, "\npackets "))
		c->packets = bench_num_after(buf, "packets ");
	c->recv_calls = bench_num_after(buf, " recv_calls ");
	c->send_calls = bench_num_after(buf, " send_calls ");
	c->verdict_msgs = bench_num_after(buf, " verdict_msgs ");
	c->batch_msgs = bench_num_after(buf, " batch_msgs ");
	c->enobufs = bench_num_after(buf, "enobufs ");
	c->outside_user_ns = bench_num_after(buf, "outside_user_ns ");
	c->outside_sys_ns = bench_num_after(buf, "outside_sys_ns ");
}

const char *bench_child_read(int fd, struct bench_cons *c, char *tail,
			     size_t tail_len)
{
	static char buf[65536];
	ssize_t n;

	buf[0] = '\0';
	if (tail_len)
		tail[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		buf[0] = '\0';
		return buf;
	}
	buf[n] = '\0';
	child_parse(buf, c);
	if (tail_len) {
		const char *t = n > (ssize_t)tail_len - 1 ?
				buf + n - (tail_len - 1) : buf;

		snprintf(tail, tail_len, "%.*s", (int)(tail_len - 1), t);
		for (char *p = tail; *p; p++)
			if (*p == '\n')
				*p = ' ';
	}
	return buf;
}

const char *bench_last_chars(const char *s, size_t n)
{
	size_t l = strlen(s);

	return l > n ? s + l - n : s;
}

int bench_child_fail(struct bench_cons *c, const char *msg)
{
	snprintf(c->err, sizeof(c->err), "%.*s", (int)sizeof(c->err) - 1, msg);
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
	return -1;
}

/* child @pid of bench_child_consume(), output in @fd: 0 with its output
 * in *@out, or -1 with @c failed */
static int consume_run(struct bench_cons *c, const char *name, pid_t pid,
		       int fd, const char **out)
{
	char tail[150], msg[256];
	int st;

	switch (bench_child_bound(pid, 0, 20, &st)) {
	case 0:
		break;
	case 1:
		bench_child_read(fd, c, tail, sizeof(tail));
		snprintf(msg, sizeof(msg), "%s exited before binding: %s",
			 name, bench_last_chars(tail, 120));
		return bench_child_fail(c, msg);
	default:
		snprintf(msg, sizeof(msg), "%s did not bind queue 0 in 20 s",
			 name);
		return bench_child_fail(c, msg);
	}
	if (bench_child_run(pid, c, name, &st) < 0)
		return -1;
	*out = bench_child_read(fd, c, tail, sizeof(tail));
	if (!bench_stop || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(msg, sizeof(msg), "%s %s (%s %d): %s", name,
			 bench_stop ? "failed" : "exited during the run",
			 WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 bench_last_chars(tail, 100));
		return bench_child_fail(c, msg);
	}
	return 0;
}

int bench_child_consume(struct bench_cons *c, const char *name,
			pid_t (*spawn)(const void *ctx, int fd),
			const void *ctx, const char **out)
{
	int fd, ret;
	pid_t pid;

	fd = bench_child_output(name, c);
	if (fd < 0)
		return -1;
	pid = spawn(ctx, fd);
	if (pid < 0) {
		bench_cons_fail(c, "fork", errno);
		close(fd);
		return -1;
	}
	ret = consume_run(c, name, pid, fd, out);
	close(fd);
	return ret;
}
