// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-example: the smallest useful consumer of libnfq-batch.
 *
 *   nfqb-example [-q QUEUE] [-n COUNT]   verdict packets of queue QUEUE:
 *                                        drop UDP datagrams whose payload
 *                                        starts with "DROP", mark the rest
 *                                        with their UDP destination port
 *   nfqb-example --demo                  the same, in a private network
 *                                        namespace with its own NFQUEUE
 *                                        rule and generated traffic
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnfq-batch/libnfq-batch.h>

#define DEMO_PORT	5555
#define DEMO_COUNT	20000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Decide one packet: the whole policy of this example. */
static int decide(struct nfqb_packet *p, void *data)
{
	uint64_t *counts = data;
	uint32_t len;
	const uint8_t *pl = nfqb_pkt_payload(p, &len);
	uint32_t ihl;

	counts[0]++;
	if (!pl || len < 20 || (pl[0] >> 4) != 4 || pl[9] != IPPROTO_UDP)
		return nfqb_verdict(p, NFQB_ACCEPT);
	ihl = (pl[0] & 0x0f) * 4u;
	if (len >= ihl + 8 + 4 && !memcmp(pl + ihl + 8, "DROP", 4)) {
		counts[1]++;
		return nfqb_verdict(p, NFQB_DROP);
	}
	if (len < ihl + 8)
		return nfqb_verdict(p, NFQB_ACCEPT);
	return nfqb_verdict_mark(p, NFQB_ACCEPT,
				 (uint32_t)pl[ihl + 2] << 8 | pl[ihl + 3]);
}

static void print_stats(struct nfqb_queue *q, const uint64_t *counts)
{
	struct nfqb_stats st;
	struct nfqb_kstats ks;

	nfqb_queue_stats(q, &st, sizeof(st));
	printf("packets %llu (dropped by policy %llu) | recv syscalls %llu, "
	       "send syscalls %llu | verdict msgs %llu, batch msgs %llu "
	       "covering %llu packets\n",
	       (unsigned long long)counts[0], (unsigned long long)counts[1],
	       (unsigned long long)st.recv_calls,
	       (unsigned long long)st.send_calls,
	       (unsigned long long)st.verdict_msgs,
	       (unsigned long long)st.batch_msgs,
	       (unsigned long long)st.batch_packets);
	if (nfqb_kstats_get(nfqb_queue_num(q), &ks, sizeof(ks)) == 0)
		printf("kernel: queue %u waiting %u, dropped %u, "
		       "user dropped %u, last id %u\n", ks.queue_num,
		       ks.queue_total, ks.queue_dropped,
		       ks.queue_user_dropped, ks.id_sequence);
}

static int run(uint16_t num, uint64_t limit)
{
	uint64_t counts[2] = { 0, 0 };
	struct nfqb_queue *q;
	time_t last = time(NULL);

	q = nfqb_queue_open(num);
	if (!q) {
		fprintf(stderr, "nfqb-example: cannot bind queue %u: %s\n",
			num, strerror(errno));
		return 1;
	}
	nfqb_queue_set_rcvbuf(q, 8u << 20);
	printf("bound queue %u; verdicting (drop \"DROP...\", mark by port)\n",
	       num);
	while (!stop && (!limit || counts[0] < limit)) {
		int n = nfqb_dispatch(q, decide, counts);

		if (n < 0 && errno != EINTR && errno != ENOBUFS) {
			fprintf(stderr, "nfqb-example: %s\n", strerror(errno));
			break;
		}
		if (time(NULL) != last) {
			last = time(NULL);
			print_stats(q, counts);
		}
	}
	nfqb_flush(q);
	print_stats(q, counts);
	if (nfqb_queue_close(q) < 0)
		fprintf(stderr, "nfqb-example: close: %s\n", strerror(errno));
	return 0;
}

/* --- demo: a private namespace and traffic of its own ------------------ */

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int ret;

	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (ret == 0) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

struct demo_rx {
	int fd;
	uint64_t got;
};

static void *demo_receiver(void *arg)
{
	struct demo_rx *rx = arg;
	char buf[2048];

	while (recv(rx->fd, buf, sizeof(buf), 0) > 0)
		rx->got++;
	return NULL;
}

static void *demo_sender(void *arg)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[64];
	int i;

	(void)arg;
	for (i = 0; i < DEMO_COUNT && !stop; i++) {
		snprintf(buf, sizeof(buf), "%s %d", i % 10 == 9 ? "DROP" : "PASS",
			 i);
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to,
			   sizeof(to)) < 0) {
			fprintf(stderr, "demo: send %d: %s\n", i,
				strerror(errno));
			i--;	/* try that one again */
			usleep(1000);
			continue;
		}
		if (i % 256 == 255)
			usleep(2000);	/* keep it gentle */
	}
	close(fd);
	return NULL;
}

static int demo(void)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct demo_rx rx = { 0 };
	struct timeval tv = { .tv_sec = 1 };
	int rcvbuf = 16 << 20;
	pthread_t s, r;
	int ret;

	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "nfqb-example: unshare(CLONE_NEWNET): %s "
			"(run as root)\n", strerror(errno));
		return 1;
	}
	if (lo_up() < 0 ||
	    system("iptables -w -A OUTPUT -o lo -p udp --dport 5555 "
		   "-j NFQUEUE --queue-num 7") != 0) {
		fprintf(stderr, "nfqb-example: namespace set-up failed\n");
		return 1;
	}
	printf("demo: private network namespace, rule: "
	       "iptables -A OUTPUT -o lo -p udp --dport %d -j NFQUEUE "
	       "--queue-num 7\n", DEMO_PORT);
	rx.fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(rx.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(rx.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(rx.fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return 1;
	alarm(60);	/* the demo never runs away */
	pthread_create(&r, NULL, demo_receiver, &rx);
	pthread_create(&s, NULL, demo_sender, NULL);
	ret = run(7, DEMO_COUNT);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	printf("demo: sent %d datagrams (every 10th says DROP), "
	       "receiver got %llu\n", DEMO_COUNT, (unsigned long long)rx.got);
	if (rx.got != DEMO_COUNT - DEMO_COUNT / 10) {
		fprintf(stderr, "demo: expected %d delivered\n",
			DEMO_COUNT - DEMO_COUNT / 10);
		return 1;
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "demo", no_argument, NULL, 'd' },
		{ "queue", required_argument, NULL, 'q' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long num = 0, count = 0;
	int c;

	/* no SA_RESTART: a signal interrupts a blocking receive */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	while ((c = getopt_long(argc, argv, "dq:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			return demo();
		case 'q':
			num = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		default:
			printf("usage: %s [--demo] [-q QUEUE] [-n COUNT]\n",
			       argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (num > 65535) {
		fprintf(stderr, "nfqb-example: bad queue number\n");
		return 2;
	}
	return run((uint16_t)num, count);
}
