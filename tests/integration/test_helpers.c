// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The packet helpers (<libnfq-batch/packet.h>) against the kernel: a
 * packet the application changes arrives and the receiving stack takes
 * it, over IPv4 and over IPv6, on lo in the test's own namespace.
 *
 * What this can show: what this host sends through lo leaves its TCP and
 * UDP checksums to the device (CHECKSUM_PARTIAL: a partial sum in the
 * field, nfqb_pkt_csum_not_ready()), while the kernel takes a payload
 * given with a verdict as complete (it marks the packet CHECKSUM_NONE),
 * so the receiving stack verifies every checksum of a changed packet.
 * The controls show that it does: the same change given with
 * nfqb_verdict_ex() and the old checksum never arrives, and the stack
 * counts a checksum error.
 *
 * - udp_changed: datagrams whose payload the consumer changes (same
 *   length, and longer, the test setting the IP and UDP lengths), given
 *   with nfqb_verdict_payload(): they arrive, changed (IPv4, IPv6, and
 *   IPv6 with a destination options header);
 * - udp_unfixed: the control;
 * - udp_incremental: datagrams sent with complete checksums (raw
 *   sockets), one word changed and the checksum updated for it alone
 *   (nfqb_csum_update16(), RFC 1624), given with nfqb_verdict_ex();
 * - tcp_mss: a connection whose SYN and SYN/ACK the consumer clamps to
 *   an MSS of 1000 (nfqb_tcp_mss_clamp(), nfqb_verdict_payload()): both
 *   ends take it, and data flows; a connection not queued keeps lo's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/packet.h>
#include <libnfq-batch/pool.h>

#include "harness.h"

#define QNUM		11
#define PORT		7711
#define CLAMP		1000

static uint8_t pbuf[NFQB_MAX_PAYLOAD];
static uint8_t rbuf[NFQB_MAX_PAYLOAD];

/* --- setup ---------------------------------------------------------------- */

static void rule(bool v6, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rule(bool v6, const char *fmt, ...)
{
	char r[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r, sizeof(r), fmt, ap);
	va_end(ap);
	if (v6)
		nfqbt_ip6tables("%s", r);
	else
		nfqbt_iptables("%s", r);
}

static socklen_t lo_sa(bool v6, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		*(struct sockaddr_in6 *)ss = nfqbt_lo6_addr(port);
		return sizeof(struct sockaddr_in6);
	}
	*(struct sockaddr_in *)ss = nfqbt_lo_addr(port);
	return sizeof(struct sockaddr_in);
}

/* A socket of @type bound to lo:@port (0: any), receive timeout @ms. */
static int lo_socket(bool v6, int type, uint16_t port, unsigned int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };
	struct sockaddr_storage ss;
	socklen_t sl = lo_sa(v6, port, &ss);
	int fd = socket(v6 ? AF_INET6 : AF_INET, type | SOCK_CLOEXEC, 0);
	int one = 1;

	ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				    sizeof(one)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	if (port)
		ck_assert_msg(bind(fd, (struct sockaddr *)&ss, sl) == 0,
			      "bind: %s", strerror(errno));
	return fd;
}

static struct nfqb_queue *open_queue(void)
{
	struct nfqb_queue *q = nfqbt_queue_open(QNUM);

	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 200), 0);
	return q;
}

/* UDP to PORT over lo (IPv6: turned on first) queued to QNUM: the queue,
 * and in *@rx the receiving socket (a @ms receive timeout). */
static struct nfqb_queue *udp_queued(bool v6, unsigned int ms, int *rx)
{
	if (v6)
		nfqbt_lo6_up();
	rule(v6, "-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE --queue-num %u",
	     PORT, QNUM);
	*rx = lo_socket(v6, SOCK_DGRAM, PORT, ms);
	return open_queue();
}

/* The next packet of @q, within 3 s. */
static struct nfqb_packet *recv_one(struct nfqb_queue *q)
{
	uint64_t until = nfqbt_now_ms() + 3000;
	struct nfqb_packet *p;

	while (nfqbt_now_ms() < until) {
		if (nfqb_recv(q, &p, 1) == 1)
			return p;
		ck_assert_msg(errno == EAGAIN || errno == EINTR,
			      "nfqb_recv: %s", strerror(errno));
	}
	ck_abort_msg("no packet queued within 3 s");
	return NULL;
}

/* The packet's payload copied to pbuf, its headers in *@h. */
static size_t take(struct nfqb_packet *p, struct nfqb_hdrs *h)
{
	uint32_t len = 0;
	const uint8_t *d = nfqb_pkt_payload(p, &len);

	ck_assert_ptr_nonnull(d);
	ck_assert(!nfqb_pkt_truncated(p));
	memcpy(pbuf, d, len);
	ck_assert_msg(nfqb_pkt_hdrs(p, h, sizeof(*h)) == 0, "nfqb_pkt_hdrs: %s",
		      strerror(errno));
	ck_assert_uint_eq(h->l3_off, 0);
	ck_assert_uint_eq(h->ip_len, len);
	ck_assert_uint_eq(h->flags, 0);
	return len;
}

static void pattern(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

static void set16(uint8_t *b, size_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* The stack's count of UDP datagrams with a bad checksum. */
static unsigned long udp_csum_errors(bool v6)
{
	char line[1024], names[1024] = "";
	unsigned long v = 0;
	FILE *f = fopen(v6 ? "/proc/net/snmp6" : "/proc/net/snmp", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		char *n, *x, *sn, *sx;

		if (v6) {
			if (sscanf(line, "Udp6InCsumErrors %lu", &v) == 1)
				break;
			continue;
		}
		if (strncmp(line, "Udp: ", 5))
			continue;
		if (!names[0]) {
			snprintf(names, sizeof(names), "%s", line);
			continue;
		}
		n = strtok_r(names, " \n", &sn);
		x = strtok_r(line, " \n", &sx);
		while (n && x && strcmp(n, "InCsumErrors")) {
			n = strtok_r(NULL, " \n", &sn);
			x = strtok_r(NULL, " \n", &sx);
		}
		ck_assert_msg(n && x, "no Udp InCsumErrors");
		v = strtoul(x, NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

/* --- UDP payload changed ----------------------------------------------------- */

/* Change the UDP payload in pbuf (@len bytes): every byte xor 0x5a, and
 * @grow bytes more at its end, the lengths set. The datagram's payload
 * as it must arrive goes to @want; returns the packet's new length. */
static size_t change_udp(const struct nfqb_hdrs *h, size_t len, size_t grow,
			 uint8_t *want)
{
	uint8_t *pl = pbuf + h->payload_off;
	size_t i, n = h->payload_len;

	for (i = 0; i < n; i++)
		pl[i] ^= 0x5a;
	pattern(pl + n, grow, 7);
	memcpy(want, pl, n + grow);
	if (!grow)
		return len;
	if (h->l3_proto == 0x0800)
		set16(pbuf + 2, len + grow);
	else
		set16(pbuf + 4, len + grow - 40);
	set16(pbuf + h->l4_off + 4, h->l4_len + grow);
	return len + grow;
}

static const size_t udp_sizes[] = { 1, 100, 1400, 4000, 65000 };
#define N_SIZES (sizeof(udp_sizes) / sizeof(udp_sizes[0]))

/* Variants: IPv4, IPv6, IPv6 with a destination options header. */
static void udp_changed(int variant)
{
	static uint8_t out[NFQB_MAX_PAYLOAD], want[NFQB_MAX_PAYLOAD];
	static const uint8_t dstopts[8] = { 0, 0, 1, 4, 0, 0, 0, 0 };
	bool v6 = variant > 0;
	struct sockaddr_storage to;
	socklen_t tl = lo_sa(v6, PORT, &to);
	struct nfqb_queue *q;
	struct nfqb_hdrs h;
	unsigned int i;
	int rx, tx;

	q = udp_queued(v6, 2000, &rx);
	tx = lo_socket(v6, SOCK_DGRAM, 0, 2000);
	if (variant == 2)
		ck_assert_int_eq(setsockopt(tx, IPPROTO_IPV6, IPV6_DSTOPTS,
					    dstopts, sizeof(dstopts)), 0);
	for (i = 0; i < 2 * N_SIZES; i++) {
		size_t size = udp_sizes[i / 2], grow = i & 1 ? 300 : 0, len;
		struct nfqb_packet *p;
		ssize_t got;

		pattern(out, size, i);
		ck_assert_int_eq(sendto(tx, out, size, 0,
					(struct sockaddr *)&to, tl),
				 (ssize_t)size);
		p = recv_one(q);
		len = take(p, &h);
		ck_assert_uint_eq(h.l3_proto, v6 ? 0x86dd : 0x0800);
		ck_assert_uint_eq(h.l3_len, variant == 2 ? 48 : v6 ? 40 : 20);
		ck_assert_uint_eq(h.l4_proto, IPPROTO_UDP);
		ck_assert_uint_eq(h.l4_hdr_len, 8);
		ck_assert_uint_eq(h.payload_len, size);
		ck_assert_mem_eq(pbuf + h.payload_off, out, size);
		if (size + grow > 65000)
			grow = 0;
		len = change_udp(&h, len, grow, want);
		ck_assert_msg(nfqb_verdict_payload(p, NFQB_ACCEPT, pbuf, len) ==
			      0, "nfqb_verdict_payload: %s", strerror(errno));
		ck_assert_int_ge(nfqb_flush(q), 0);
		got = recv(rx, rbuf, sizeof(rbuf), 0);
		ck_assert_msg(got == (ssize_t)(size + grow),
			      "%zu+%zu bytes: received %zd (%s)", size, grow,
			      got, got < 0 ? strerror(errno) : "");
		ck_assert_mem_eq(rbuf, want, size + grow);
	}
	ck_assert_uint_eq(nfqbt_queue_stats(q).mangled, 2 * N_SIZES);
	ck_assert_uint_eq(udp_csum_errors(v6), 0);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	close(rx);
	close(tx);
}

START_TEST(test_udp_changed)
{
	udp_changed(_i);
}
END_TEST

/* The control: the change given without the checksums fixed is dropped
 * by the receiving stack as a checksum error; the next one, fixed,
 * arrives. */
START_TEST(test_udp_unfixed)
{
	bool v6 = _i;
	struct sockaddr_storage to;
	socklen_t tl = lo_sa(v6, PORT, &to);
	static uint8_t want[NFQB_MAX_PAYLOAD];
	unsigned long errors;
	struct nfqb_queue *q;
	struct nfqb_packet *p;
	struct nfqb_hdrs h;
	unsigned int i;
	size_t len;
	int rx, tx;

	q = udp_queued(v6, 500, &rx);
	tx = lo_socket(v6, SOCK_DGRAM, 0, 500);
	errors = udp_csum_errors(v6);
	for (i = 0; i < 2; i++) {
		struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
					  .flags = NFQB_V_PAYLOAD };

		ck_assert_int_eq(sendto(tx, "control", 7, 0,
					(struct sockaddr *)&to, tl), 7);
		p = recv_one(q);
		len = take(p, &h);
		len = change_udp(&h, len, 0, want);
		v.payload = pbuf;
		v.payload_len = (uint32_t)len;
		ck_assert_int_eq(nfqb_verdict_ex(p, &v, sizeof(v)), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_int_eq(recv(rx, rbuf, sizeof(rbuf), 0), -1);
		ck_assert_int_eq(errno, EAGAIN);
	}
	ck_assert_uint_eq(udp_csum_errors(v6), errors + 2);

	ck_assert_int_eq(sendto(tx, "control", 7, 0, (struct sockaddr *)&to,
				tl), 7);
	p = recv_one(q);
	len = take(p, &h);
	len = change_udp(&h, len, 0, want);
	ck_assert_int_eq(nfqb_verdict_payload(p, NFQB_ACCEPT, pbuf, len), 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	ck_assert_int_eq(recv(rx, rbuf, sizeof(rbuf), 0), 7);
	ck_assert_mem_eq(rbuf, want, 7);
	ck_assert_uint_eq(udp_csum_errors(v6), errors + 2);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	close(rx);
	close(tx);
}
END_TEST

/* --- a complete checksum updated ------------------------------------------- */

/* A UDP datagram to lo:PORT with @n payload bytes and a complete
 * checksum (computed here: nfqbt_inet_csum() over the pseudo-header and
 * the datagram), sent on a raw socket so that the kernel leaves it so;
 * over IPv4 the IP header too (the kernel fills in its checksum). */
static void send_raw_udp(bool v6, int fd, size_t n)
{
	static uint8_t sum[64 + 2048], pkt[20 + 2048];
	struct sockaddr_storage to;
	socklen_t tl = lo_sa(v6, 0, &to);
	size_t l3 = v6 ? 0 : 20, alen = v6 ? 16 : 4, ph;
	uint8_t *u = pkt + l3;
	uint16_t c;

	memset(pkt, 0, sizeof(pkt));
	set16(u, 40000);
	set16(u + 2, PORT);
	set16(u + 4, 8 + n);
	pattern(u + 8, n, 3);
	memset(sum, 0, sizeof(sum));
	if (v6) {
		memcpy(sum, &((struct sockaddr_in6 *)&to)->sin6_addr, 16);
		memcpy(sum + 16, sum, 16);
		set16(sum + 34, 8 + n);
		sum[39] = IPPROTO_UDP;
	} else {
		memcpy(sum, &((struct sockaddr_in *)&to)->sin_addr, 4);
		memcpy(sum + 4, sum, 4);
		sum[9] = IPPROTO_UDP;
		set16(sum + 10, 8 + n);
	}
	ph = 2 * alen + (v6 ? 8 : 4);
	memcpy(sum + ph, u, 8 + n);
	c = nfqbt_inet_csum(sum, ph + 8 + n);
	memcpy(u + 6, &c, 2);
	if (!v6) {
		pkt[0] = 0x45;
		set16(pkt + 2, 20 + 8 + n);
		pkt[8] = 64;
		pkt[9] = IPPROTO_UDP;
		memcpy(pkt + 12, sum, 8);
	}
	ck_assert_int_eq(sendto(fd, pkt, l3 + 8 + n, 0,
				(struct sockaddr *)&to, tl),
			 (ssize_t)(l3 + 8 + n));
}

START_TEST(test_udp_incremental)
{
	bool v6 = _i;
	struct nfqb_queue *q;
	unsigned int i;
	int rx, raw;

	q = udp_queued(v6, 2000, &rx);
	raw = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC,
		     v6 ? IPPROTO_UDP : IPPROTO_RAW);
	ck_assert_msg(raw >= 0, "raw socket: %s", strerror(errno));
	for (i = 0; i < 16; i++) {
		struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
					  .flags = NFQB_V_PAYLOAD };
		size_t n = 2 + i * 97, len;
		uint16_t old, new = (uint16_t)(0x4242 + i * 0x1111), c;
		struct nfqb_packet *p;
		struct nfqb_hdrs h;
		uint8_t *f;

		send_raw_udp(v6, raw, n);
		p = recv_one(q);
		ck_assert(!nfqb_pkt_csum_not_ready(p));
		len = take(p, &h);
		ck_assert_uint_eq(h.payload_len, n);
		/* the first payload word, and the checksum for it alone */
		f = pbuf + h.payload_off;
		old = get16(f);
		set16(f, new);
		c = get16(pbuf + h.l4_off + 6);
		c = nfqb_csum_update16(c, old, new);
		set16(pbuf + h.l4_off + 6, c ? c : 0xffff);
		v.payload = pbuf;
		v.payload_len = (uint32_t)len;
		ck_assert_int_eq(nfqb_verdict_ex(p, &v, sizeof(v)), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_int_eq(recv(rx, rbuf, sizeof(rbuf), 0), (ssize_t)n);
		ck_assert_uint_eq(get16(rbuf), new);
		ck_assert_mem_eq(rbuf + 2, pbuf + h.payload_off + 2, n - 2);
	}
	ck_assert_uint_eq(udp_csum_errors(v6), 0);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	close(rx);
	close(raw);
}
END_TEST

/* --- MSS clamping ------------------------------------------------------------ */

/* Clamp and pass every SYN the queue has within 200 ms; how many. */
static unsigned int clamp_syns(struct nfqb_queue *q)
{
	unsigned int n = 0;
	struct nfqb_packet *p;
	struct nfqb_hdrs h;
	size_t len;

	while (nfqb_recv(q, &p, 1) == 1) {
		len = take(p, &h);
		ck_assert_uint_eq(h.l4_proto, IPPROTO_TCP);
		ck_assert_int_eq(nfqb_tcp_mss_clamp(pbuf, len, &h, CLAMP), 1);
		/* lo left the checksum partial: computed in full */
		ck_assert_int_eq(nfqb_verdict_payload(p, NFQB_ACCEPT, pbuf, len),
				 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		n++;
	}
	ck_assert_msg(errno == EAGAIN || errno == EINTR, "nfqb_recv: %s",
		      strerror(errno));
	return n;
}

static int mss_of(int fd)
{
	int mss = 0;
	socklen_t sl = sizeof(mss);

	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &sl), 0);
	return mss;
}

/* Connect to lo:@port through @q (NULL: nothing queued); the two ends in
 * @fds (client, server). */
static void tcp_connect(bool v6, uint16_t port, struct nfqb_queue *q,
			int fds[2])
{
	uint64_t until = nfqbt_now_ms() + 5000;
	struct sockaddr_storage ss;
	socklen_t sl = lo_sa(v6, port, &ss);
	int lfd = lo_socket(v6, SOCK_STREAM, port, 2000), err = 0;
	unsigned int clamped = 0;
	struct pollfd pfd;

	ck_assert_int_eq(listen(lfd, 4), 0);
	fds[0] = socket(v6 ? AF_INET6 : AF_INET,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(fds[0], 0);
	ck_assert_int_eq(connect(fds[0], (struct sockaddr *)&ss, sl), -1);
	ck_assert_int_eq(errno, EINPROGRESS);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLOUT };
	while (poll(&pfd, 1, 0) == 0) {
		ck_assert_msg(nfqbt_now_ms() < until, "not connected in 5 s");
		if (q)
			clamped += clamp_syns(q);
		else
			nfqbt_sleep_ms(10);
	}
	sl = sizeof(err);
	ck_assert_int_eq(getsockopt(fds[0], SOL_SOCKET, SO_ERROR, &err, &sl),
			 0);
	ck_assert_msg(err == 0, "connect: %s", strerror(err));
	/* the SYN and the SYN/ACK, or more if one was sent again */
	if (q)
		ck_assert_uint_ge(clamped, 2);
	fds[1] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(fds[1], 0);
	close(lfd);
	ck_assert_int_eq(fcntl(fds[0], F_SETFL, 0), 0);
}

/* @n bytes from one end to the other, read back whole. */
static void tcp_transfer(int fds[2], size_t n)
{
	size_t sent = 0, got = 0;
	ssize_t r;

	pattern(pbuf, sizeof(pbuf), 5);
	while (got < n) {
		if (sent < n) {
			r = send(fds[0], pbuf, n - sent < 16384 ? n - sent :
				 16384, MSG_DONTWAIT);
			ck_assert_msg(r > 0 || errno == EAGAIN, "send: %s",
				      strerror(errno));
			if (r > 0)
				sent += (size_t)r;
		}
		r = recv(fds[1], rbuf, sizeof(rbuf), sent < n ? MSG_DONTWAIT : 0);
		ck_assert_msg(r > 0 || (r < 0 && errno == EAGAIN),
			      "recv: %zd %s", r, strerror(errno));
		if (r > 0)
			got += (size_t)r;
	}
	ck_assert_uint_eq(got, n);
}

START_TEST(test_tcp_mss)
{
	bool v6 = _i;
	struct nfqb_queue *q;
	int fds[2], plain[2];

	if (v6)
		nfqbt_lo6_up();
	rule(v6, "-A OUTPUT -o lo -p tcp --dport %u --tcp-flags SYN SYN "
	     "-j NFQUEUE --queue-num %u", PORT, QNUM);
	rule(v6, "-A OUTPUT -o lo -p tcp --sport %u --tcp-flags SYN SYN "
	     "-j NFQUEUE --queue-num %u", PORT, QNUM);
	q = open_queue();
	tcp_connect(v6, PORT, q, fds);
	/* both ends took the clamped MSS (less their options) */
	ck_assert_int_le(mss_of(fds[0]), CLAMP);
	ck_assert_int_le(mss_of(fds[1]), CLAMP);
	ck_assert_int_ge(mss_of(fds[0]), CLAMP - 40);
	ck_assert_int_ge(mss_of(fds[1]), CLAMP - 40);
	tcp_transfer(fds, 1 << 20);
	/* the control: another port, not queued, keeps lo's MSS */
	tcp_connect(v6, PORT + 1, NULL, plain);
	ck_assert_int_gt(mss_of(plain[0]), 16000);
	ck_assert_int_gt(mss_of(plain[1]), 16000);
	close(plain[0]);
	close(plain[1]);
	close(fds[0]);
	close(fds[1]);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

/* --- the large-packet policy (nfqb_queue_set_large()) -------------------- */

/*
 * A UDP datagram of 65535 bytes with its headers, longer than the kernel
 * copies (65531), then a short one. NFQB_LARGE_PASS hands the long one
 * out cut and its accept lets it through whole; NFQB_LARGE_WHOLE never
 * hands it out and drops it (nothing would send it again smaller): only
 * the short one arrives. _i: bit 0 IPv6, bit 1 NFQB_LARGE_WHOLE.
 */
START_TEST(test_large_udp)
{
	bool v6 = _i & 1, whole = _i & 2;
	size_t big = 65535 - (v6 ? 40 : 20) - 8, len[2] = { big, 100 };
	unsigned int i, seen = 0, cut = 0, got = 0;
	struct sockaddr_storage ss;
	socklen_t sl = lo_sa(v6, PORT, &ss);
	struct nfqb_stats st;
	struct nfqb_queue *q;
	int rx, tx;
	ssize_t r;

	q = udp_queued(v6, 300, &rx);
	if (whole)
		ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	tx = lo_socket(v6, SOCK_DGRAM, 0, 0);
	pattern(pbuf, big, 3);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(sendto(tx, pbuf, len[i], 0,
					(struct sockaddr *)&ss, sl),
				 (ssize_t)len[i]);
	/* until the short one: what the consumer is handed out */
	for (;;) {
		struct nfqb_packet *p = recv_one(q);
		uint32_t plen = 0;

		nfqb_pkt_payload(p, &plen);
		seen++;
		cut += nfqb_pkt_truncated(p);
		ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
		if (plen < 1000)
			break;
	}
	ck_assert_int_ge(nfqb_flush(q), 0);
	ck_assert_uint_eq(seen, whole ? 1 : 2);
	ck_assert_uint_eq(cut, whole ? 0 : 1);
	/* what arrived: the long one (PASS), then the short one */
	while ((r = recv(rx, rbuf, sizeof(rbuf), 0)) > 0) {
		ck_assert_uint_lt(got, 2);
		ck_assert_uint_eq((size_t)r, len[got + whole]);
		got++;
	}
	ck_assert_uint_eq(got, whole ? 1 : 2);
	st = nfqbt_queue_stats(q);
	nfqbt_assert_counters(&st, "truncated=1 large_dropped=%u "
			      "large_resent=0 mss_clamped=0", whole);
	close(tx);
	close(rx);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

#define LARGE_BYTES	(8u << 20)

/* What the consumer of a bulk transfer was handed out. */
struct large_seen {
	_Atomic unsigned int packets, cut, longer;
	uint32_t range;
};

static void large_note(struct large_seen *ls, struct nfqb_packet *p)
{
	uint32_t len = 0;

	nfqb_pkt_payload(p, &len);
	atomic_fetch_add(&ls->packets, 1);
	if (nfqb_pkt_truncated(p))
		atomic_fetch_add(&ls->cut, 1);
	if (len > ls->range)
		atomic_fetch_add(&ls->longer, 1);
}

static int large_pool_cb(struct nfqb_packet *p, void *policy, void *data,
			 struct nfqb_verdict *v)
{
	(void)policy;
	(void)v;	/* preset: accept */
	large_note(data, p);
	return NFQB_POOL_VERDICT;
}

/* 8 MB over TCP on lo (MTU 65536, GSO on), every packet of the connection
 * queued, through @q or, if NULL, a pool of one queue. */
static struct nfqb_stats large_bulk(struct nfqb_queue *q,
				    struct large_seen *ls)
{
	struct nfqb_pool_config cfg = {
		.queue_first = QNUM, .queue_count = 1,
		.mode = NFQB_POOL_QUEUE_PER_WORKER, .cb = large_pool_cb,
		.cb_data = ls, .copy_range = ls->range,
		.large = NFQB_LARGE_WHOLE,
	};
	struct nfqb_pool *pool = NULL;
	struct nfqb_packet *vec[64];
	struct nfqbt_tcp sink;
	struct nfqb_stats st;
	uint64_t end;
	int i, n;

	rule(false, "-A OUTPUT -o lo -p tcp --dport %u -j NFQUEUE "
	     "--queue-num %u", PORT, QNUM);
	rule(false, "-A OUTPUT -o lo -p tcp --sport %u -j NFQUEUE "
	     "--queue-num %u", PORT, QNUM);
	if (!q) {
		pool = nfqb_pool_create(&cfg, sizeof(cfg));
		ck_assert_msg(pool, "nfqb_pool_create: %s", strerror(errno));
		ck_assert_int_eq(nfqb_pool_start(pool), 0);
	}
	nfqbt_tcp_start(&sink, PORT, LARGE_BYTES, q);
	end = nfqbt_now_ms() + 30000;
	while (!atomic_load(&sink.done) && nfqbt_now_ms() < end) {
		if (!q) {
			nfqbt_sleep_ms(5);
			continue;
		}
		n = nfqb_recv(q, vec, 64);
		/* ENOBUFS: the socket overflowed (the kernel dropped what
		 * did not fit; TCP sends it again) */
		ck_assert_msg(n >= 0 || errno == EINTR || errno == EAGAIN ||
			      errno == ENOBUFS, "nfqb_recv: %s",
			      strerror(errno));
		for (i = 0; i < n; i++) {
			large_note(ls, vec[i]);
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		}
	}
	ck_assert_msg(atomic_load(&sink.done), "the transfer did not end");
	nfqbt_tcp_join(&sink);
	ck_assert_uint_eq(sink.got, LARGE_BYTES);
	if (q) {
		st = nfqbt_queue_stats(q);
		ck_assert_int_eq(nfqb_queue_close(q), 0);
	} else {
		nfqb_pool_stop(pool);
		ck_assert_int_eq(nfqb_pool_wait(pool), 0);
		ck_assert_int_eq(nfqb_pool_queue_stats(pool, 0, &st,
						       sizeof(st)), 0);
		nfqb_pool_destroy(pool);
	}
	fprintf(stderr, "large %s, range %u: %u packets, truncated %llu, "
		"resent %llu, dropped %llu, mss_clamped %llu, gso_off %llu\n",
		q ? "queue" : "pool", ls->range, ls->packets,
		(unsigned long long)st.truncated,
		(unsigned long long)st.large_resent,
		(unsigned long long)st.large_dropped,
		(unsigned long long)st.mss_clamped,
		(unsigned long long)st.gso_off);
	return st;
}

/*
 * NFQB_LARGE_WHOLE under a bulk TCP transfer: the consumer is never handed
 * a cut packet nor one longer than the copy range, and every byte arrives.
 * Both SYNs are clamped (lo's MSS allows 65496-byte segments, more than
 * fits in either range). With a range of 1500 the first data packet is a
 * GSO packet of several segments, cut: GSO goes off, once, and it is
 * dropped for TCP to send again. _i: 0 the queue, range 65535; 1 the
 * queue, range 1500; 2 a pool, range 1500.
 */
START_TEST(test_large_tcp)
{
	struct large_seen ls = { .range = _i ? 1500 : NFQB_MAX_PAYLOAD };
	struct nfqb_queue *q = NULL;
	struct nfqb_stats st;

	if (_i < 2) {
		q = nfqbt_queue_open(QNUM);
		ck_assert_int_eq(nfqb_queue_set_copy_mode(q, NFQB_COPY_PACKET,
							  ls.range), 0);
		ck_assert_int_eq(nfqb_queue_set_large(q, NFQB_LARGE_WHOLE), 0);
	}
	st = large_bulk(q, &ls);
	ck_assert_uint_gt(ls.packets, 0);
	ck_assert_uint_eq(ls.cut, 0);
	ck_assert_uint_eq(ls.longer, 0);
	ck_assert_uint_ge(st.mss_clamped, 2);
	ck_assert_uint_eq(st.large_dropped, 0);
	ck_assert_uint_le(st.gso_off, 1);
	if (_i) {
		ck_assert_uint_eq(st.gso_off, 1);
		ck_assert_uint_ge(st.large_resent, 1);
	}
}
END_TEST

static Suite *helpers_suite(void)
{
	Suite *s = suite_create("helpers");
	TCase *tc;

	tc = nfqbt_tcase_netns(s, "udp", NFQBT_TCASE_TIMEOUT);
	tcase_add_loop_test(tc, test_udp_changed, 0, 3);
	tcase_add_loop_test(tc, test_udp_unfixed, 0, 2);
	tcase_add_loop_test(tc, test_udp_incremental, 0, 2);
	tc = nfqbt_tcase_netns(s, "tcp", NFQBT_TCASE_TIMEOUT);
	tcase_add_loop_test(tc, test_tcp_mss, 0, 2);
	tc = nfqbt_tcase_netns(s, "large", NFQBT_TCASE_TIMEOUT);
	tcase_add_loop_test(tc, test_large_udp, 0, 4);
	tcase_add_loop_test(tc, test_large_tcp, 0, 3);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_helpers", helpers_suite());
}
