/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: TCP bulk through the queue with iperf3 (Debian package
 * iperf3; NFQB_BENCH_IPERF3 names another binary).
 *
 * In the run's network namespace and on the traffic CPU (both inherited):
 *   iperf3 -s -1 -B 127.0.0.1 -p 5201
 *   iperf3 -c 127.0.0.1 -p 5201 -t T -P N --cport 40000 -i 0 -J
 * The client sends; the rules queue the segments to port 5201 (data and the
 * control connection), and with --both-ways those from it (ACKs) too. The
 * result is the receiver's count from the client's JSON report: every
 * process of a run is bounded in time (client: T + 20 s, server: 3 s more),
 * then killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "nfqb-bench-proc.h"
#include "nfqb-bench-tcp.h"

#define IPERF_ENV	"NFQB_BENCH_IPERF3"
#define JSON_MAX	(1u << 20)

/* is something listening on TCP @port in this namespace? */
static bool tcp_listening(unsigned int port)
{
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/net/tcp", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int laddr, lport, raddr, rport, st;

		if (sscanf(line, " %*u: %x:%x %x:%x %x", &laddr, &lport, &raddr,
			   &rport, &st) == 5 && lport == port && st == 0x0a)
			found = true;
	}
	fclose(f);
	return found;
}

/* wait until @port listens, @pid still alive; 0 or -1 */
static int wait_listen(unsigned int port, int pid, double seconds)
{
	double t0 = bench_now();
	int st;

	while (!tcp_listening(port)) {
		if (waitpid(pid, &st, WNOHANG) == pid || bench_now() - t0 > seconds)
			return -1;
		usleep(2000);
	}
	return 0;
}

/* the object that follows "key": in [from, to), as [*b, *e) */
static bool json_obj(const char *from, const char *to, const char *key,
		     const char **b, const char **e)
{
	char pat[64];
	const char *p;
	int depth = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (p = from;; p++) {		/* the key whose value is an object */
		p = strstr(p, pat);
		if (!p || p >= to)
			return false;
		p += strlen(pat);
		p += strspn(p, " \t\r\n");
		if (*p == '{')
			break;
	}
	*b = p;
	for (; p < to; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth == 0) {
			*e = p + 1;
			return true;
		}
	}
	return false;
}

/* the number that follows "key": in [b, e) (at its top level or not) */
static bool json_num(const char *b, const char *e, const char *key, double *v)
{
	char pat[64], *end;
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(b, pat);
	if (!p || p >= e)
		return false;
	p += strlen(pat);
	*v = strtod(p, &end);
	return end != p;
}

static void iperf_error(const char *json, char *err, size_t len)
{
	const char *p = strstr(json, "\"error\":");
	size_t n;

	if (!p) {
		snprintf(err, len, "iperf3 gave no result");
		return;
	}
	p = strchr(p + 8, '"');
	if (!p) {
		snprintf(err, len, "iperf3 failed");
		return;
	}
	p++;
	n = strcspn(p, "\"");
	snprintf(err, len, "iperf3: %.*s", (int)(n > 150 ? 150 : n), p);
}

static int parse_iperf(const char *json, struct bench_result *res)
{
	const char *end = json + strlen(json), *eb, *ee, *b, *e;
	double v;

	if (!json_obj(json, end, "end", &eb, &ee) ||
	    !json_obj(eb, ee, "sum_received", &b, &e) ||
	    !json_num(b, e, "bits_per_second", &v)) {
		iperf_error(json, res->err, sizeof(res->err));
		return -1;
	}
	res->gbps = v / 1e9;
	if (json_num(b, e, "bytes", &v))
		res->tcp_bytes = (uint64_t)v;
	if (json_num(b, e, "seconds", &v))
		res->tcp_seconds = v;
	if (json_obj(eb, ee, "sum_sent", &b, &e) &&
	    json_num(b, e, "retransmits", &v))
		res->retransmits = (uint64_t)v;
	if (json_obj(eb, ee, "cpu_utilization_percent", &b, &e)) {
		if (json_num(b, e, "host_total", &v))
			res->iperf_cpu_host = v;
		if (json_num(b, e, "remote_total", &v))
			res->iperf_cpu_remote = v;
	}
	if (!res->tcp_bytes) {
		snprintf(res->err, sizeof(res->err),
			 "iperf3: nothing received");
		return -1;
	}
	return 0;
}

/* the client's JSON report from @fd into @json, until it ends, @limit
 * seconds after @t0 or the run's abort (res->err set) */
static size_t read_report(int fd, char *json, double t0, double limit,
			  const volatile int *abort_flag,
			  struct bench_result *res)
{
	size_t got = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (*abort_flag) {
			snprintf(res->err, sizeof(res->err), "aborted");
			break;
		}
		if (bench_now() - t0 > limit) {
			snprintf(res->err, sizeof(res->err),
				 "iperf3 did not end within %.0f s", limit);
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, json + got, JSON_MAX - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == JSON_MAX - 1)
			break;
	}
	json[got] = '\0';
	return got;
}

/* the server, listening: its pid, or -1 (res->err set) */
static int start_server(char *port, struct bench_result *res)
{
	char *argv[] = { "iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port,
			 NULL };
	int srv, st;

	srv = bench_spawn(argv, IPERF_ENV, -1);
	if (srv < 0) {
		snprintf(res->err, sizeof(res->err), "fork: %s",
			 strerror(errno));
		return -1;
	}
	if (wait_listen(BENCH_TCP_PORT, srv, 5) < 0) {
		snprintf(res->err, sizeof(res->err),
			 "iperf3 server did not start (is iperf3 installed?)");
		bench_wait_deadline(srv, 0, &st);
		return -1;
	}
	return srv;
}

int bench_tcp(const struct bench_cfg *cfg, const volatile int *abort_flag,
	      struct bench_result *res)
{
	char port[8], secs[8], streams[8], cport[8];
	char *cargv[] = { "iperf3", "-c", "127.0.0.1", "-p", port, "-t", secs,
			  "-P", streams, "--cport", cport, "-i", "0", "-J",
			  "--connect-timeout", "3000", NULL };
	double t0, limit = cfg->tcp_time + 20.0;
	int pfd[2], srv, cli, st, ret = -1;
	char *json;

	snprintf(port, sizeof(port), "%u", BENCH_TCP_PORT);
	snprintf(secs, sizeof(secs), "%u", cfg->tcp_time);
	snprintf(streams, sizeof(streams), "%u", cfg->tcp_streams);
	snprintf(cport, sizeof(cport), "%u", BENCH_TCP_CPORT);
	json = malloc(JSON_MAX);
	if (!json) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		return -1;
	}
	srv = start_server(port, res);
	if (srv < 0)
		goto out;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(res->err, sizeof(res->err), "pipe: %s",
			 strerror(errno));
		bench_wait_deadline(srv, 0, &st);
		goto out;
	}
	t0 = bench_now();
	cli = bench_spawn(cargv, IPERF_ENV, pfd[1]);
	close(pfd[1]);
	if (cli < 0) {
		snprintf(res->err, sizeof(res->err), "fork: %s",
			 strerror(errno));
		close(pfd[0]);
		bench_wait_deadline(srv, 0, &st);
		goto out;
	}
	read_report(pfd[0], json, t0, limit, abort_flag, res);
	close(pfd[0]);
	res->elapsed = bench_now() - t0;
	/* the client is done or overdue; the one-off server ends with it */
	bench_wait_deadline(cli, res->err[0] ? 0 : 3, &st);
	bench_wait_deadline(srv, res->err[0] ? 0 : 3, &st);
	if (res->err[0] || parse_iperf(json, res) < 0)
		goto out;
	if (res->tcp_seconds > 0)
		res->elapsed = res->tcp_seconds;
	ret = 0;
out:
	free(json);
	return ret;
}
