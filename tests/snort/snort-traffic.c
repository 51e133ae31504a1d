// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snort-traffic: the senders and receivers of the Snort tests and of
 * tests/snort/bench-snort.sh.  Every check is made here, at the receiver.
 *
 *   snort-traffic udp-recv PORT IDLE_MS MAX_MS
 *	Receive UDP datagrams on PORT until IDLE_MS pass without one (after
 *	the first) or MAX_MS in all; print "received N", "distinct N" (of
 *	the sequence numbers), "dup N", "evil N" (datagrams holding EVIL),
 *	"bad N" (shorter than a sequence number), "first_ms N" and "span_ms
 *	N" (from the first to the last one).
 *   snort-traffic udp-send ADDR PORT COUNT PPS [EVIL_EVERY [SIZE]]
 *	Send COUNT datagrams (sequence number first, SIZE bytes, default
 *	64) at PPS per second (0: as fast as the socket takes them); with
 *	EVIL_EVERY K > 0, datagram i holds "EVIL" when i % K == K - 1.
 *	With SNORT_TRAFFIC_SPORT=N in the environment the datagrams leave
 *	from source port N, so that two runs are one flow (one conntrack
 *	entry: a flow bypass test).
 *   snort-traffic tcp-recv PORT IDLE_MS MAX_MS
 *	Accept one connection and read it to its end (or IDLE_MS without
 *	data, MAX_MS in all); print "bytes N", "bad N" (bytes not as sent),
 *	"evil N" (EVIL markers seen), "end eof|reset|idle|max".
 *   snort-traffic tcp-send ADDR PORT BYTES [EVIL_AT [MAX_MS]]
 *	Connect and send BYTES of the pattern (no "EVIL" in it), with
 *	"EVIL" at offset EVIL_AT (-1: none); print "sent N" and "end
 *	done|reset|timeout|error".
 *   snort-traffic echo PORT MAX_MS [tcp]
 *	An echo server for rr (UDP, or one TCP connection).
 *   snort-traffic rr ADDR PORT COUNT MAX_MS [tcp]
 *	COUNT requests of 64 bytes, one at a time; print "done N", "lost N",
 *	"p50_us", "p90_us", "p99_us" of the round trips.
 *
 * Every loop is bounded in count and time; exit status 0 when the tool
 * itself worked (whatever arrived), 1 on errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNT	100000000u
#define MAX_MS		600000u
#define RR_SIZE		64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000u;
}

static unsigned long arg_num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max) {
		fprintf(stderr, "snort-traffic: bad number '%s'\n", s);
		exit(1);
	}
	return v;
}

static void die(const char *what)
{
	fprintf(stderr, "snort-traffic: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void addr_of(const char *ip, unsigned int port, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &a->sin_addr) != 1) {
		fprintf(stderr, "snort-traffic: bad address '%s'\n", ip);
		exit(1);
	}
}

static int bound_socket(int type, unsigned int port)
{
	struct sockaddr_in a;
	int one = 1, fd;

	fd = socket(AF_INET, type, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr_of("0.0.0.0", port, &a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind");
	return fd;
}

/* Wait up to @ms for @fd to be readable: 1, 0 on timeout. */
static int wait_in(int fd, int64_t ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	if (ms < 0)
		ms = 0;
	r = poll(&p, 1, (int)ms);
	if (r < 0 && errno != EINTR)
		die("poll");
	return r > 0;
}

static bool has_evil(const uint8_t *b, size_t n)
{
	return memmem(b, n, "EVIL", 4) != NULL;
}

/* --- UDP ------------------------------------------------------------------ */

static int udp_recv(int argc, char **argv)
{
	unsigned int port, idle, max;
	uint64_t received = 0, dup = 0, evil = 0, bad = 0, distinct = 0;
	uint64_t t0, first = 0, last = 0, rcvbuf = 32u << 20;
	uint8_t *seen, buf[65536];
	int fd;

	if (argc != 5)
		return 2;
	port = arg_num(argv[2], 65535);
	idle = arg_num(argv[3], MAX_MS);
	max = arg_num(argv[4], MAX_MS);
	seen = calloc(MAX_COUNT / 8 + 1, 1);
	if (!seen)
		die("calloc");
	fd = bound_socket(SOCK_DGRAM, port);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(int));
	printf("ready\n");
	fflush(stdout);
	t0 = now_ms();
	for (;;) {
		uint64_t now = now_ms(), left = t0 + max - now;
		ssize_t n;
		uint32_t seq;

		if (now >= t0 + max)
			break;
		if (received && now - last >= idle)
			break;
		if (received && idle - (now - last) < left)
			left = idle - (now - last);
		if (!wait_in(fd, (int64_t)left))
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recv");
		}
		last = now_ms();
		if (!received)
			first = last;
		received++;
		if (n < 4) {
			bad++;
			continue;
		}
		memcpy(&seq, buf, 4);
		seq = ntohl(seq);
		if (has_evil(buf, (size_t)n))
			evil++;
		if (seq >= MAX_COUNT)
			bad++;
		else if (seen[seq / 8] & (1u << (seq % 8)))
			dup++;
		else {
			seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
			distinct++;
		}
	}
	printf("received %llu\ndistinct %llu\ndup %llu\nevil %llu\nbad %llu\n"
	       "first_ms %llu\nspan_ms %llu\n",
	       (unsigned long long)received, (unsigned long long)distinct,
	       (unsigned long long)dup, (unsigned long long)evil,
	       (unsigned long long)bad,
	       (unsigned long long)(received ? first - t0 : 0),
	       (unsigned long long)(received ? last - first : 0));
	free(seen);
	close(fd);
	return 0;
}

static int udp_send(int argc, char **argv)
{
	unsigned long count, pps, evil_every = 0, size = 64, i;
	const char *sport;
	struct sockaddr_in a;
	uint8_t buf[65536];
	uint64_t t0;
	int fd;

	if (argc < 6 || argc > 8)
		return 2;
	addr_of(argv[2], arg_num(argv[3], 65535), &a);
	count = arg_num(argv[4], MAX_COUNT);
	pps = arg_num(argv[5], 10000000);
	if (argc > 6)
		evil_every = arg_num(argv[6], MAX_COUNT);
	if (argc > 7)
		size = arg_num(argv[7], 65507);
	if (size < 8)
		size = 8;
	sport = getenv("SNORT_TRAFFIC_SPORT");
	if (sport)
		fd = bound_socket(SOCK_DGRAM, arg_num(sport, 65535));
	else
		fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	memset(buf, 'x', sizeof(buf));
	t0 = now_ns();
	for (i = 0; i < count; i++) {
		uint32_t seq = htonl((uint32_t)i);

		memcpy(buf, &seq, 4);
		memcpy(buf + 4, "xxxx", 4);
		if (evil_every && i % evil_every == evil_every - 1)
			memcpy(buf + 4, "EVIL", 4);
		if (pps) {
			uint64_t due = t0 + i * 1000000000ull / pps;

			while (now_ns() < due) {
				struct timespec d = { 0, 20000 };

				nanosleep(&d, NULL);
			}
		}
		while (sendto(fd, buf, size, 0, (struct sockaddr *)&a,
			      sizeof(a)) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN &&
			    errno != EPERM && errno != ECONNREFUSED)
				die("sendto");
			if (errno == EPERM)	/* dropped by a verdict */
				break;
			usleep(100);
		}
	}
	printf("sent %lu\n", count);
	close(fd);
	return 0;
}

/* --- TCP ------------------------------------------------------------------ */

/* The byte at stream offset @i: lowercase letters, never "EVIL". */
static inline uint8_t pattern(uint64_t i)
{
	return (uint8_t)('a' + (i * 7 + i / 26) % 26);
}

static int tcp_recv(int argc, char **argv)
{
	unsigned int port, idle, max;
	uint64_t bytes = 0, bad = 0, evil = 0, t0, last;
	const char *end = "max";
	static uint8_t buf[1 << 16];
	uint8_t tail[3] = { 0 };
	int lfd, fd, one = 1;

	if (argc != 5)
		return 2;
	port = arg_num(argv[2], 65535);
	idle = arg_num(argv[3], MAX_MS);
	max = arg_num(argv[4], MAX_MS);
	lfd = bound_socket(SOCK_STREAM, port);
	if (listen(lfd, 4) < 0)
		die("listen");
	printf("ready\n");
	fflush(stdout);
	t0 = now_ms();
	if (!wait_in(lfd, max)) {
		printf("bytes 0\nbad 0\nevil 0\nend noconn\n");
		return 0;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	last = now_ms();
	for (;;) {
		uint64_t now = now_ms();
		int64_t left = (int64_t)(t0 + max) - (int64_t)now;
		ssize_t n, k;

		if (left <= 0) {
			end = "max";
			break;
		}
		if (now - last >= idle) {
			end = "idle";
			break;
		}
		if ((int64_t)(idle - (now - last)) < left)
			left = (int64_t)(idle - (now - last));
		if (!wait_in(fd, left))
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0) {
			end = "eof";
			break;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			end = errno == ECONNRESET ? "reset" : "error";
			break;
		}
		last = now_ms();
		for (k = 0; k < n; k++) {
			uint8_t c = buf[k];

			if (c != pattern(bytes + (uint64_t)k)) {
				bad++;
				/* E V I L across reads: the last 3 bytes */
				if (c == 'L' && tail[0] == 'E' &&
				    tail[1] == 'V' && tail[2] == 'I')
					evil++;
			}
			tail[0] = tail[1];
			tail[1] = tail[2];
			tail[2] = c;
		}
		bytes += (uint64_t)n;
	}
	printf("bytes %llu\nbad %llu\nevil %llu\nend %s\n",
	       (unsigned long long)bytes, (unsigned long long)bad,
	       (unsigned long long)evil, end);
	close(fd);
	close(lfd);
	return 0;
}

static int tcp_send(int argc, char **argv)
{
	unsigned long long bytes, sent = 0;
	long long evil_at = -1;
	unsigned int max = 60000;
	static uint8_t buf[1 << 16];
	struct sockaddr_in a;
	const char *end = "done";
	uint64_t t0;
	int fd;

	if (argc < 5 || argc > 7)
		return 2;
	addr_of(argv[2], arg_num(argv[3], 65535), &a);
	bytes = arg_num(argv[4], 1ul << 40);
	if (argc > 5 && strcmp(argv[5], "-1"))
		evil_at = (long long)arg_num(argv[5], 1ul << 40);
	if (argc > 6)
		max = arg_num(argv[6], MAX_MS);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	t0 = now_ms();
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	while (sent < bytes) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		size_t n = sizeof(buf), k;
		int64_t left = (int64_t)(t0 + max) - (int64_t)now_ms();
		ssize_t w;

		if (left <= 0) {
			end = "timeout";
			break;
		}
		if (n > bytes - sent)
			n = (size_t)(bytes - sent);
		for (k = 0; k < n; k++) {
			unsigned long long off = sent + k;

			if (evil_at >= 0 && off >= (unsigned long long)evil_at &&
			    off < (unsigned long long)evil_at + 4)
				buf[k] = (uint8_t)"EVIL"[off - evil_at];
			else
				buf[k] = pattern(off);
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		w = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			end = errno == ECONNRESET || errno == EPIPE ? "reset" :
			      "error";
			break;
		}
		sent += (unsigned long long)w;
	}
	if (!strcmp(end, "done"))
		shutdown(fd, SHUT_WR);
	printf("sent %llu\nend %s\n", sent, end);
	close(fd);
	return 0;
}

/* --- Request/response ----------------------------------------------------- */

static int echo(int argc, char **argv)
{
	bool tcp = argc > 4 && !strcmp(argv[4], "tcp");
	unsigned int port, max;
	uint8_t buf[RR_SIZE * 16];
	uint64_t t0;
	int fd, one = 1;

	if (argc < 4)
		return 2;
	port = arg_num(argv[2], 65535);
	max = arg_num(argv[3], MAX_MS);
	fd = bound_socket(tcp ? SOCK_STREAM : SOCK_DGRAM, port);
	t0 = now_ms();
	if (tcp) {
		int lfd = fd;

		if (listen(lfd, 1) < 0)
			die("listen");
		printf("ready\n");
		fflush(stdout);
		if (!wait_in(lfd, max))
			return 0;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept");
		close(lfd);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	} else {
		printf("ready\n");
		fflush(stdout);
	}
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		int64_t left = (int64_t)(t0 + max) - (int64_t)now_ms();
		ssize_t n;

		if (left <= 0 || !wait_in(fd, left))
			break;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &fl);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		if (tcp)
			(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL);
		else
			(void)!sendto(fd, buf, (size_t)n, 0,
				      (struct sockaddr *)&from, fl);
	}
	close(fd);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int rr(int argc, char **argv)
{
	bool tcp = argc > 6 && !strcmp(argv[6], "tcp");
	unsigned long count, max, i, done = 0, lost = 0;
	struct sockaddr_in a;
	uint8_t buf[RR_SIZE];
	uint64_t *rtt, t0;
	int fd, one = 1;

	if (argc < 6)
		return 2;
	addr_of(argv[2], arg_num(argv[3], 65535), &a);
	count = arg_num(argv[4], 10000000);
	max = arg_num(argv[5], MAX_MS);
	rtt = calloc(count + 1, sizeof(*rtt));
	if (!rtt)
		die("calloc");
	fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	memset(buf, 'r', sizeof(buf));
	t0 = now_ms();
	for (i = 0; i < count && now_ms() < t0 + max; i++) {
		uint32_t seq = htonl((uint32_t)i), got;
		uint64_t s = now_ns();
		size_t have = 0;
		bool ok = false;

		memcpy(buf, &seq, 4);
		if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) < 0) {
			if (errno == EINTR || errno == ENOBUFS ||
			    errno == ECONNREFUSED)
				continue;
			die("send");
		}
		/* one answer within 1 s, or the request is lost (UDP) */
		while (wait_in(fd, 1000)) {
			uint8_t in[RR_SIZE];
			ssize_t n = recv(fd, in + have, sizeof(in) - have, 0);

			if (n <= 0) {
				if (n < 0 && (errno == EINTR ||
					      errno == ECONNREFUSED))
					continue;
				break;
			}
			have += (size_t)n;
			if (have < sizeof(in) && tcp)
				continue;
			memcpy(&got, in, 4);
			if (got != seq) {	/* a late answer (UDP) */
				have = 0;
				continue;
			}
			ok = true;
			break;
		}
		if (!ok) {
			lost++;
			if (tcp || lost > 100)
				break;
			continue;
		}
		rtt[done++] = (now_ns() - s) / 1000u;
	}
	qsort(rtt, done, sizeof(*rtt), cmp_u64);
	printf("done %lu\nlost %lu\n", done, lost);
	if (done)
		printf("p50_us %llu\np90_us %llu\np99_us %llu\n",
		       (unsigned long long)rtt[done / 2],
		       (unsigned long long)rtt[done * 9 / 10],
		       (unsigned long long)rtt[done * 99 / 100]);
	free(rtt);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int r = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		;
	else if (!strcmp(argv[1], "udp-recv"))
		r = udp_recv(argc, argv);
	else if (!strcmp(argv[1], "udp-send"))
		r = udp_send(argc, argv);
	else if (!strcmp(argv[1], "tcp-recv"))
		r = tcp_recv(argc, argv);
	else if (!strcmp(argv[1], "tcp-send"))
		r = tcp_send(argc, argv);
	else if (!strcmp(argv[1], "echo"))
		r = echo(argc, argv);
	else if (!strcmp(argv[1], "rr"))
		r = rr(argc, argv);
	if (r == 2)
		fprintf(stderr, "usage: see the comment at the top of tests/snort/snort-traffic.c\n");
	return r;
}
