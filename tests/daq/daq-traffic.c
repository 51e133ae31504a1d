// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daq-traffic: the traffic and the receiver of the DAQ module tests.
 *
 *   daq-traffic [-n COUNT] [-p UDP_PORT] [-i INTERVAL_MS] [-w SETTLE_MS]
 *
 * On loopback (127.0.0.1), sends COUNT ICMP echo requests (56 bytes of
 * data, byte i = i, as iputils ping fills them: what daqtest's ping
 * "replace" action recognizes) and COUNT UDP datagrams to UDP_PORT, one of
 * each every INTERVAL_MS; receives them at a raw ICMP socket and a UDP
 * socket until SETTLE_MS after the last send, and prints what arrived:
 *
 *   icmp_sent N, icmp_normal N (data as sent), icmp_replaced N (data
 *   turned into 'A's, as daqtest's replace does), icmp_other N,
 *   icmp_dup N (a sequence number seen again), icmp_replies N (echo
 *   replies the kernel sent back), udp_sent N, udp_received N (distinct
 *   sequence numbers), udp_dup N, udp_bad N.
 *
 * Exits 0 when it could send and receive (whatever arrived), 1 on errors.
 * Every loop is bounded: COUNT <= 10000, SETTLE_MS <= 60000.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DATA_LEN	56
#define TS_LEN		16	/* daqtest skips sizeof(struct timeval) */
#define MAX_COUNT	10000

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint16_t csum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

struct counts {
	unsigned int icmp_normal, icmp_replaced, icmp_other, icmp_dup;
	unsigned int icmp_replies;
	unsigned int udp_received, udp_dup, udp_bad;
};

static void rx_icmp(int fd, uint16_t ident, unsigned int count,
		    uint8_t *seen, struct counts *c)
{
	uint8_t buf[2048];
	const struct iphdr *ip;
	const struct icmphdr *ic;
	const uint8_t *data;
	ssize_t n;
	size_t hl, dlen, i;
	uint16_t seq;
	bool normal = true, replaced = true;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < (ssize_t)sizeof(*ip))
		return;
	ip = (const struct iphdr *)buf;
	hl = ip->ihl * 4u;
	if ((size_t)n < hl + sizeof(*ic))
		return;
	ic = (const struct icmphdr *)(buf + hl);
	if (ntohs(ic->un.echo.id) != ident)
		return;
	if (ic->type == ICMP_ECHOREPLY) {
		c->icmp_replies++;
		return;
	}
	if (ic->type != ICMP_ECHO)
		return;
	seq = ntohs(ic->un.echo.sequence);
	data = buf + hl + sizeof(*ic);
	dlen = (size_t)n - hl - sizeof(*ic);
	if (dlen != DATA_LEN)
		normal = replaced = false;
	for (i = TS_LEN; i < dlen; i++) {
		if (data[i] != (uint8_t)i)
			normal = false;
		if (data[i] != 'A')
			replaced = false;
	}
	if (seq == 0 || seq > count) {
		c->icmp_other++;
		return;
	}
	if (seen[seq]) {
		c->icmp_dup++;
		return;
	}
	seen[seq] = 1;
	if (normal)
		c->icmp_normal++;
	else if (replaced)
		c->icmp_replaced++;
	else
		c->icmp_other++;
}

static void rx_udp(int fd, unsigned int count, uint8_t *seen,
		   struct counts *c)
{
	char buf[256];
	unsigned int seq;
	ssize_t n;

	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "nfqb-daq %u", &seq) != 1 || seq == 0 || seq > count) {
		c->udp_bad++;
		return;
	}
	if (seen[seq]) {
		c->udp_dup++;
		return;
	}
	seen[seq] = 1;
	c->udp_received++;
}

int main(int argc, char **argv)
{
	unsigned int count = 10, interval = 5, settle = 700, port = 9999;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	uint8_t *icmp_seen, *udp_seen;
	struct counts c;
	uint16_t ident;
	uint64_t next, end;
	unsigned int sent = 0;
	int opt, ifd, ufd, sfd;

	while ((opt = getopt(argc, argv, "n:p:i:w:")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoul(optarg, NULL, 10);
			break;
		case 'p':
			port = strtoul(optarg, NULL, 10);
			break;
		case 'i':
			interval = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			settle = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: daq-traffic [-n COUNT] [-p UDP_PORT] [-i INTERVAL_MS] [-w SETTLE_MS]\n");
			return 1;
		}
	}
	if (count == 0 || count > MAX_COUNT || port == 0 || port > 65535 ||
	    interval > 10000 || settle > 60000) {
		fprintf(stderr, "daq-traffic: bad arguments\n");
		return 1;
	}
	memset(&c, 0, sizeof(c));
	icmp_seen = calloc(count + 1, 1);
	udp_seen = calloc(count + 1, 1);
	if (!icmp_seen || !udp_seen)
		return 1;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ident = (uint16_t)getpid();

	ifd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	sfd = socket(AF_INET, SOCK_DGRAM, 0);
	if (ifd < 0 || ufd < 0 || sfd < 0) {
		perror("daq-traffic: socket");
		return 1;
	}
	{
		struct sockaddr_in a = dst;

		a.sin_port = htons(port);
		if (bind(ufd, (struct sockaddr *)&a, sizeof(a))) {
			perror("daq-traffic: bind");
			return 1;
		}
	}

	next = now_ms();
	end = 0;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = ifd, .events = POLLIN },
			{ .fd = ufd, .events = POLLIN },
		};
		uint64_t t = now_ms();
		int wait;

		if (sent < count && t >= next) {
			uint8_t pkt[sizeof(struct icmphdr) + DATA_LEN];
			struct icmphdr *ic = (struct icmphdr *)pkt;
			struct sockaddr_in u = dst;
			char msg[64];
			unsigned int i;
			int len;

			sent++;
			memset(pkt, 0, sizeof(pkt));
			ic->type = ICMP_ECHO;
			ic->un.echo.id = htons(ident);
			ic->un.echo.sequence = htons((uint16_t)sent);
			for (i = 0; i < DATA_LEN; i++)
				pkt[sizeof(*ic) + i] = (uint8_t)i;
			ic->checksum = csum(pkt, sizeof(pkt));
			if (sendto(ifd, pkt, sizeof(pkt), 0,
				   (struct sockaddr *)&dst, sizeof(dst)) < 0 &&
			    errno != EPERM) {
				/* EPERM: the queue dropped it at once (no
				 * listener); anything else is ours */
				perror("daq-traffic: sendto icmp");
				return 1;
			}
			len = snprintf(msg, sizeof(msg), "nfqb-daq %u", sent);
			u.sin_port = htons(port);
			if (sendto(sfd, msg, len, 0, (struct sockaddr *)&u,
				   sizeof(u)) < 0 && errno != EPERM) {
				perror("daq-traffic: sendto udp");
				return 1;
			}
			next = t + interval;
			if (sent == count)
				end = t + settle;
			continue;
		}
		if (sent == count && t >= end)
			break;
		wait = (int)((sent < count ? next : end) - t);
		if (poll(pfd, 2, wait) < 0 && errno != EINTR) {
			perror("daq-traffic: poll");
			return 1;
		}
		if (pfd[0].revents & POLLIN)
			rx_icmp(ifd, ident, count, icmp_seen, &c);
		if (pfd[1].revents & POLLIN)
			rx_udp(ufd, count, udp_seen, &c);
	}

	printf("icmp_sent %u\nicmp_normal %u\nicmp_replaced %u\n"
	       "icmp_other %u\nicmp_dup %u\nicmp_replies %u\n"
	       "udp_sent %u\nudp_received %u\nudp_dup %u\nudp_bad %u\n",
	       count, c.icmp_normal, c.icmp_replaced, c.icmp_other,
	       c.icmp_dup, c.icmp_replies, count, c.udp_received, c.udp_dup,
	       c.udp_bad);
	free(icmp_seen);
	free(udp_seen);
	return 0;
}
