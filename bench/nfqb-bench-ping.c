/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: request/response through the queue.
 *
 * An echo server (a child on the traffic CPU, bound to 127.0.0.1:9999, UDP
 * or TCP) sends every request back; the run process is the client: from
 * 127.0.1.10 it sends one request of cfg->ping_size bytes, waits for the
 * response, and times the round trip with CLOCK_MONOTONIC; a warm-up of
 * a few round trips first, then up to cfg->ping_count measured ones, for
 * cfg->ping_time seconds at most. TCP: one connection, TCP_NODELAY at both
 * ends. The rules queue the requests (and with --both-ways the responses).
 *
 * Under load, two more children on the traffic CPU: a sender of 64-byte
 * UDP datagrams to 127.0.0.1:9998 from 127.0.2.11 and 127.0.1.12 (the
 * pool's two queues both get load; the requests share queue 0) at
 * cfg->load_pps, paced on a 100 us tick, and a sink that counts them. The
 * load starts 0.2 s before the first request and stops after the last
 * response; then every load datagram sent must arrive.
 *
 * Every wait is bounded: a request unanswered for 1 s counts as lost (3
 * end the run), helpers are killed 1 s after being told to stop.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "nfqb-bench-ping.h"
#include "nfqb-bench-proc.h"
#include "nfqb-bench-traffic.h"

#define PING_WARMUP_MAX		200
#define PING_TIMEOUT_S		1
#define PING_MAX_LOST		3
#define PING_MAX_SIZE		1400
#define LOAD_PAYLOAD		64
#define LOAD_TICK_NS		100000
#define LOAD_MAX_BURST		64
#define LOAD_LEAD_S		0.2
#define LOAD_SETTLE_S		2.0	/* after the last send, no progress */

/* shared between the run process and its helpers */
struct ping_shared {
	int stop;			/* helpers: end now */
	int load_go;			/* sender: start */
	int load_stop;			/* sender: stop sending */
	int ready;			/* helpers ready, one each */
	int failed;
	char err[160];
	uint64_t load_sent;
	uint64_t load_delivered;
	double load_t0, load_t1;	/* first and last send */
};

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void helper_fail(struct ping_shared *sh, const char *what)
{
	snprintf(sh->err, sizeof(sh->err), "%s: %s", what, strerror(errno));
	st(&sh->failed, 1);
	_exit(1);
}

static void helper_init(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

static struct sockaddr_in sin4(uint32_t addr, unsigned int port)
{
	struct sockaddr_in s = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(addr),
	};

	return s;
}

static int set_timeo(int fd, int opt, double s)
{
	struct timeval tv = {
		.tv_sec = (time_t)s,
		.tv_usec = (suseconds_t)((s - (time_t)s) * 1e6),
	};

	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

static int bound_socket(int type, uint32_t addr, unsigned int port)
{
	struct sockaddr_in a = sin4(addr, port);
	int one = 1, fd;

	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --- helpers ---------------------------------------------------------- */

static void echo_udp(struct ping_shared *sh)
{
	uint8_t buf[PING_MAX_SIZE + 64];
	int fd;

	helper_init();
	fd = bound_socket(SOCK_DGRAM, INADDR_LOOPBACK, BENCH_PORT);
	if (fd < 0 || set_timeo(fd, SO_RCVTIMEO, 0.1) < 0)
		helper_fail(sh, "echo socket");
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!ld(&sh->stop)) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			helper_fail(sh, "echo recvfrom");
		}
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from,
			   fl) < 0 && errno != EINTR)
			helper_fail(sh, "echo sendto");
	}
	_exit(0);
}

/* read or write exactly @len bytes; 0, or -1 (errno EAGAIN: timed out, or
 * the helper was told to stop) */
static int full_io(int fd, uint8_t *buf, size_t len, bool wr, const int *stop)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? write(fd, buf + done, len - done) :
				 read(fd, buf + done, len - done);

		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (n < 0) {
			if (errno == EINTR ||
			    (errno == EAGAIN && stop && !ld(stop)))
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static void echo_tcp(struct ping_shared *sh, unsigned int size)
{
	uint8_t buf[PING_MAX_SIZE];
	int lfd, fd, one = 1;

	helper_init();
	lfd = bound_socket(SOCK_STREAM, INADDR_LOOPBACK, BENCH_PING_PORT);
	if (lfd < 0 || listen(lfd, 4) < 0 ||
	    set_timeo(lfd, SO_RCVTIMEO, 0.1) < 0)
		helper_fail(sh, "echo listen");
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!ld(&sh->stop)) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			helper_fail(sh, "echo accept");
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		set_timeo(fd, SO_RCVTIMEO, 0.1);
		while (!ld(&sh->stop)) {
			if (full_io(fd, buf, size, false, &sh->stop) < 0 ||
			    full_io(fd, buf, size, true, &sh->stop) < 0)
				break;
		}
		close(fd);
	}
	_exit(0);
}

static void load_sink(struct ping_shared *sh, unsigned int rcvbuf)
{
	struct mmsghdr msg[BENCH_VEC];
	struct iovec iov[BENCH_VEC];
	static uint8_t buf[BENCH_VEC][256];
	int fd, sz = (int)rcvbuf, i;

	helper_init();
	fd = bound_socket(SOCK_DGRAM, INADDR_LOOPBACK, BENCH_LOAD_PORT);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0 ||
	    set_timeo(fd, SO_RCVTIMEO, 0.1) < 0)
		helper_fail(sh, "load sink socket");
	memset(msg, 0, sizeof(msg));
	for (i = 0; i < BENCH_VEC; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!ld(&sh->stop)) {
		int n = recvmmsg(fd, msg, BENCH_VEC, MSG_WAITFORONE, NULL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			helper_fail(sh, "load sink recvmmsg");
		}
		__atomic_fetch_add(&sh->load_delivered, (uint64_t)n,
				   __ATOMIC_RELEASE);
	}
	_exit(0);
}

/* the sender's two sockets, from 127.0.2.11 and 127.0.1.12 (flows 1 and
 * 2: one per queue of the pool) */
static void load_sockets(struct ping_shared *sh, unsigned int sndbuf,
			 int *fd)
{
	struct sockaddr_in dst = sin4(INADDR_LOOPBACK, BENCH_LOAD_PORT);
	int sz = (int)sndbuf, i;

	for (i = 0; i < 2; i++) {
		fd[i] = bound_socket(SOCK_DGRAM, bench_flow_addr(i + 1u), 0);
		if (fd[i] < 0 ||
		    setsockopt(fd[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz,
			       sizeof(sz)) < 0 ||
		    connect(fd[i], (struct sockaddr *)&dst, sizeof(dst)) < 0)
			helper_fail(sh, "load sender socket");
	}
}

static void load_sender(struct ping_shared *sh, double pps, double limit,
			unsigned int sndbuf)
{
	struct timespec tick = { .tv_sec = 0, .tv_nsec = LOAD_TICK_NS };
	struct mmsghdr msg[LOAD_MAX_BURST];
	struct iovec iov[LOAD_MAX_BURST];
	uint8_t buf[LOAD_MAX_BURST][LOAD_PAYLOAD];
	uint64_t sent = 0;
	double t0, now;
	int fd[2], i;

	helper_init();
	prctl(PR_SET_TIMERSLACK, 1000UL);
	load_sockets(sh, sndbuf, fd);
	memset(msg, 0, sizeof(msg));
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < LOAD_MAX_BURST; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = LOAD_PAYLOAD;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!ld(&sh->load_go) && !ld(&sh->stop))
		usleep(500);
	t0 = now = bench_now();
	sh->load_t0 = t0;
	while (!ld(&sh->load_stop) && !ld(&sh->stop) && now - t0 < limit) {
		uint64_t due = (uint64_t)((now - t0) * pps);
		unsigned int n;
		int r;

		if (due <= sent) {
			nanosleep(&tick, NULL);
			now = bench_now();
			continue;
		}
		n = due - sent > LOAD_MAX_BURST ? LOAD_MAX_BURST :
			(unsigned int)(due - sent);
		for (i = 0; i < (int)n; i++)
			memcpy(buf[i], &sent, sizeof(sent));
		r = sendmmsg(fd[(sent / 32) % 2], msg, n, 0);
		if (r < 0) {
			if (errno == EINTR || errno == ENOBUFS ||
			    errno == EAGAIN)
				continue;
			helper_fail(sh, "load sendmmsg");
		}
		sent += (uint64_t)r;
		__atomic_store_n(&sh->load_sent, sent, __ATOMIC_RELEASE);
		now = bench_now();
		sh->load_t1 = now;
		/* behind schedule: let the others of this CPU run (with
		 * --rt they are SCHED_FIFO like us, and would wait) */
		sched_yield();
	}
	_exit(0);
}

/* --- the client --------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank */
static double pct(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	if (k == 0)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1] / 1e3;
}

static void lat_stats(uint64_t *v, size_t n, struct bench_result *res)
{
	double sum = 0;
	size_t i;

	res->pings = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)v[i];
	res->lat_min = v[0] / 1e3;
	res->lat_max = v[n - 1] / 1e3;
	res->lat_mean = sum / (double)n / 1e3;
	res->lat_p50 = pct(v, n, 0.50);
	res->lat_p99 = pct(v, n, 0.99);
	res->lat_p999 = pct(v, n, 0.999);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int client_socket(const struct bench_cfg *cfg, bool tcp, char *err,
			 size_t errlen)
{
	struct sockaddr_in dst = sin4(INADDR_LOOPBACK, tcp ? BENCH_PING_PORT :
				      BENCH_PORT);
	int one = 1, fd;

	(void)cfg;
	fd = bound_socket(tcp ? SOCK_STREAM : SOCK_DGRAM, bench_flow_addr(0),
			  0);
	if (fd < 0)
		goto fail;
	if (tcp && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			      sizeof(one)) < 0)
		goto fail_close;
	if (set_timeo(fd, SO_SNDTIMEO, 3) < 0 ||
	    set_timeo(fd, SO_RCVTIMEO, PING_TIMEOUT_S) < 0)
		goto fail_close;
	while (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		if (errno != EINTR)
			goto fail_close;
	}
	return fd;
fail_close:
	close(fd);
fail:
	snprintf(err, errlen, "%s client socket: %s", tcp ? "TCP" : "UDP",
		 strerror(errno));
	return -1;
}

/* one UDP round trip: 0, 1 when the response did not come, -1 on error */
static int rtt_udp(int fd, uint8_t *buf, size_t len, uint64_t seq,
		   const volatile int *abort_flag)
{
	uint8_t rbuf[PING_MAX_SIZE + 64];

	memcpy(buf, &seq, sizeof(seq));
	while (send(fd, buf, len, 0) < 0) {
		if (errno != EINTR || *abort_flag)
			return -1;
	}
	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);
		uint64_t got;

		if (n < 0) {
			if (errno == EINTR && !*abort_flag)
				continue;
			return errno == EAGAIN ? 1 : -1;
		}
		if ((size_t)n < sizeof(got))
			continue;
		memcpy(&got, rbuf, sizeof(got));
		if (got == seq)
			return 0;
		/* a late response to a request counted lost: skip it */
	}
}

static int rtt_tcp(int fd, uint8_t *buf, size_t len, uint64_t seq)
{
	memcpy(buf, &seq, sizeof(seq));
	if (full_io(fd, buf, len, true, NULL) < 0 ||
	    full_io(fd, buf, len, false, NULL) < 0)
		return errno == EAGAIN ? 1 : -1;
	return 0;
}

static int wait_flag(const int *flag, int want, const struct ping_shared *sh,
		     double seconds)
{
	double t0 = bench_now();

	while (ld(flag) < want) {
		if (ld(&sh->failed) || bench_now() - t0 > seconds)
			return -1;
		usleep(1000);
	}
	return 0;
}

/* one request/response run */
struct ping_run {
	const struct bench_cfg *cfg;
	const volatile int *abort_flag;
	struct bench_result *res;
	struct ping_shared *sh;		/* shared with the helpers */
	bool tcp, load;
	unsigned int warm, size;	/* warm-up round trips, bytes */
	pid_t pids[3];			/* the helpers */
	int np;
	uint64_t *lat;			/* round trips measured, ns */
	uint64_t n;
};

#define PING_ERR(pr, ...)	snprintf((pr)->res->err,		\
					 sizeof((pr)->res->err), __VA_ARGS__)

/* the echo server, and with a load its sink and sender: 0 or -1 */
static int start_helpers(struct ping_run *pr)
{
	const struct bench_cfg *cfg = pr->cfg;
	int i;

	/* they inherit the namespace and the traffic CPU */
	for (i = 0; i < (pr->load ? 3 : 1); i++) {
		pid_t pid = fork();

		if (pid < 0) {
			PING_ERR(pr, "fork: %s", strerror(errno));
			return -1;
		}
		if (pid == 0) {
			if (i == 0 && pr->tcp)
				echo_tcp(pr->sh, pr->size);
			else if (i == 0)
				echo_udp(pr->sh);
			else if (i == 1)
				load_sink(pr->sh, cfg->rcvbuf);
			else
				load_sender(pr->sh, cfg->load_pps,
					    cfg->ping_time + 5, cfg->rcvbuf);
			_exit(0);
		}
		pr->pids[pr->np++] = pid;
	}
	if (wait_flag(&pr->sh->ready, pr->np, pr->sh, 5) < 0) {
		PING_ERR(pr, "helpers did not start%s%s",
			 pr->sh->failed ? ": " : "",
			 pr->sh->failed ? pr->sh->err : "");
		return -1;
	}
	return 0;
}

/* the round trips, warm-up first, on @fd: 0 or -1 */
static int round_trips(struct ping_run *pr, int fd)
{
	const struct bench_cfg *cfg = pr->cfg;
	uint8_t buf[PING_MAX_SIZE];
	uint64_t seq, lost = 0;
	double t0 = bench_now(), deadline = t0 + cfg->ping_time;

	memset(buf, 0x5a, sizeof(buf));
	for (seq = 0; seq < pr->warm + (uint64_t)cfg->ping_count; seq++) {
		uint64_t a, b;
		int r;

		if (*pr->abort_flag) {
			PING_ERR(pr, "aborted");
			return -1;
		}
		if (ld(&pr->sh->failed)) {
			PING_ERR(pr, "%s", pr->sh->err);
			return -1;
		}
		if (bench_now() > deadline)
			break;
		a = mono_ns();
		r = pr->tcp ? rtt_tcp(fd, buf, pr->size, seq) :
			      rtt_udp(fd, buf, pr->size, seq, pr->abort_flag);
		b = mono_ns();
		if (r < 0) {
			PING_ERR(pr, "round trip %llu: %s",
				 (unsigned long long)seq, strerror(errno));
			return -1;
		}
		if (r > 0) {
			if (++lost >= PING_MAX_LOST || pr->tcp) {
				PING_ERR(pr, "%llu request(s) unanswered for "
					 "%d s", (unsigned long long)lost,
					 PING_TIMEOUT_S);
				pr->res->ping_lost = lost;
				return -1;
			}
			continue;
		}
		if (seq >= pr->warm)
			pr->lat[pr->n++] = b - a;
	}
	pr->res->elapsed = bench_now() - t0;
	pr->res->ping_lost = lost;
	return 0;
}

/* stop the load; every load datagram sent must arrive */
static void load_result(struct ping_run *pr)
{
	struct ping_shared *sh = pr->sh;
	struct bench_result *res = pr->res;
	uint64_t last = 0;
	double tp;

	st(&sh->load_stop, 1);
	tp = bench_now();
	for (;;) {
		uint64_t s = __atomic_load_n(&sh->load_sent, __ATOMIC_ACQUIRE);
		uint64_t d = __atomic_load_n(&sh->load_delivered,
					     __ATOMIC_ACQUIRE);

		if (d != last) {
			last = d;
			tp = bench_now();
		}
		if ((d >= s && bench_now() - tp > 0.05) ||
		    bench_now() - tp > LOAD_SETTLE_S || *pr->abort_flag)
			break;
		usleep(2000);
	}
	res->load_sent = sh->load_sent;
	res->load_delivered = sh->load_delivered;
	if (sh->load_t1 > sh->load_t0)
		res->load_pps = res->load_sent / (sh->load_t1 - sh->load_t0);
	if (res->load_delivered < res->load_sent)
		PING_ERR(pr, "load: %llu of %llu datagrams lost",
			 (unsigned long long)(res->load_sent -
					      res->load_delivered),
			 (unsigned long long)res->load_sent);
}

/* the helpers, the client's socket, the round trips: 0 or -1 */
static int ping_measure(struct ping_run *pr, int *fd)
{
	if (start_helpers(pr) < 0)
		return -1;
	*fd = client_socket(pr->cfg, pr->tcp, pr->res->err,
			    sizeof(pr->res->err));
	if (*fd < 0)
		return -1;
	if (pr->load) {
		struct timespec lead = { .tv_sec = 0,
					 .tv_nsec = (long)(LOAD_LEAD_S * 1e9) };

		st(&pr->sh->load_go, 1);
		nanosleep(&lead, NULL);
	}
	if (round_trips(pr, *fd) < 0)
		return -1;
	if (pr->load)
		load_result(pr);
	lat_stats(pr->lat, pr->n, pr->res);
	pr->res->lost = pr->res->ping_lost +
			(pr->res->load_sent - pr->res->load_delivered);
	if (!pr->n) {
		PING_ERR(pr, "no round trip measured");
		return -1;
	}
	return 0;
}

int bench_ping(const struct bench_cfg *cfg, const volatile int *abort_flag,
	       struct bench_result *res)
{
	struct ping_run pr = {
		.cfg = cfg, .abort_flag = abort_flag, .res = res,
		.tcp = cfg->work == BENCH_WORK_PING_TCP,
		.warm = cfg->ping_count / 10, .size = cfg->ping_size,
	};
	int fd = -1, ret = -1, i, status;

	pr.load = !pr.tcp && cfg->load_pps > 0;
	if (pr.warm > PING_WARMUP_MAX)
		pr.warm = PING_WARMUP_MAX;
	if (pr.size < sizeof(uint64_t))
		pr.size = sizeof(uint64_t);
	if (pr.size > PING_MAX_SIZE)
		pr.size = PING_MAX_SIZE;
	res->load_target_pps = pr.load ? cfg->load_pps : 0;
	pr.sh = mmap(NULL, sizeof(*pr.sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pr.sh == MAP_FAILED) {
		PING_ERR(&pr, "mmap: %s", strerror(errno));
		return -1;
	}
	memset(pr.sh, 0, sizeof(*pr.sh));
	pr.lat = calloc(cfg->ping_count ? cfg->ping_count : 1,
			sizeof(*pr.lat));
	if (!pr.lat)
		PING_ERR(&pr, "out of memory");
	else
		ret = ping_measure(&pr, &fd);
	if (fd >= 0)
		close(fd);
	st(&pr.sh->stop, 1);
	for (i = 0; i < pr.np; i++)
		bench_wait_deadline(pr.pids[i], 1, &status);
	if (ret == 0 && pr.sh->failed) {
		PING_ERR(&pr, "%s", pr.sh->err);
		ret = -1;
	}
	free(pr.lat);
	munmap(pr.sh, sizeof(*pr.sh));
	return ret;
}
