// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-ips: the driver of --demo and --bench, around the daemon
 * (daemon.c, through nfqb-ips.h; the daemon never calls back here but
 * through the hooks handed to ips_serve()).
 *
 *   nfqb-ips --demo     the daemon in a private network namespace, with
 *                       its own rule (--queue-balance 0:3), rules file
 *                       and traffic; prints live figures, reloads midway,
 *                       stops the traffic, lets the queues drain, stops,
 *                       and checks that every datagram was dropped by the
 *                       rules or delivered with its mark (exit status 1
 *                       if not, with what happened instead)
 *   nfqb-ips --bench    packets per second with 1, 2 and 4 queues
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo.h"
#include "nfqb-ips.h"

#define DEMO_PORT	5555

static int netns_setup(const char *rule)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "nfqb-ips: unshare(CLONE_NEWNET): %s (run as "
			"root)\n", strerror(errno));
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (ret == 0) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	if (ret < 0 || system(rule) != 0) {
		fprintf(stderr, "nfqb-ips: namespace set-up failed\n");
		return -1;
	}
	printf("nfqb-ips: private network namespace; %s\n", rule);
	return 0;
}

struct traffic {
	unsigned int count;	/* 0: until stopped */
	unsigned int pace_every;	/* pause 1 ms every this many */
	atomic_bool stop, tx_stop;	/* all of it; the sender only */
	atomic_ullong sent, received, marked;
	/* datagrams with "ATTACK" and "EXPLOIT": sent, delivered */
	atomic_ullong sent_attack, sent_exploit, got_attack, got_exploit;
	int rx_fd;
	pthread_t tx, rx;
	bool sending;		/* tx runs (not joined yet) */
};

static void *traffic_rx(void *arg)
{
	struct traffic *t = arg;
	char buf[2048];
	int one = 1;

	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVMARK, &one, sizeof(one));
	while (!atomic_load(&t->stop)) {
		union {
			char b[CMSG_SPACE(sizeof(uint32_t)) * 2];
			struct cmsghdr align;
		} cb;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cb.b,
				     .msg_controllen = sizeof(cb.b) };
		struct cmsghdr *cm;
		ssize_t n = recvmsg(t->rx_fd, &mh, 0);

		if (n < 0)
			continue;	/* timeout: look at stop */
		atomic_fetch_add(&t->received, 1);
		if (memmem(buf, (size_t)n, "ATTACK", 6))
			atomic_fetch_add(&t->got_attack, 1);
		else if (memmem(buf, (size_t)n, "EXPLOIT", 7))
			atomic_fetch_add(&t->got_exploit, 1);
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			uint32_t mark;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SO_MARK)
				continue;
			memcpy(&mark, CMSG_DATA(cm), sizeof(mark));
			if (mark)
				atomic_fetch_add(&t->marked, 1);
		}
	}
	return NULL;
}

/* Datagrams from 16 source addresses (the kernel spreads flows over the
 * queues by address); every 10th carries "ATTACK", every 25th "EXPLOIT"
 * (unless it is a 10th). */
static void *traffic_tx(void *arg)
{
	struct traffic *t = arg;
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd[16];
	unsigned int i;
	char buf[128];

	for (i = 0; i < 16; i++) {
		struct sockaddr_in from = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = htonl(0x7f000010 + i),
		};

		fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		bind(fd[i], (struct sockaddr *)&from, sizeof(from));
	}
	for (i = 0; (!t->count || i < t->count) && !atomic_load(&t->stop) &&
	     !atomic_load(&t->tx_stop);) {
		const char *what = i % 10 == 9 ? "ATTACK" :
				   i % 25 == 24 ? "EXPLOIT" : "hello";

		memset(buf, '.', sizeof(buf));
		snprintf(buf, sizeof(buf), "seq %u %s", i, what);
		if (sendto(fd[i % 16], buf, sizeof(buf), MSG_DONTWAIT,
			   (struct sockaddr *)&to, sizeof(to)) < 0 &&
		    errno != EPERM) {
			sched_yield();
			continue;
		}
		if (what[0] != 'h')
			atomic_fetch_add(what[0] == 'A' ? &t->sent_attack :
					 &t->sent_exploit, 1);
		i++;
		atomic_store(&t->sent, i);
		if (t->pace_every && i % t->pace_every == 0)
			usleep(1000);
	}
	for (i = 0; i < 16; i++)
		close(fd[i]);
	return NULL;
}

/* The receiver: a socket on DEMO_PORT and its thread. */
static int traffic_start(struct traffic *t)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_usec = 100000 };
	int rcvbuf = 32 << 20;

	t->rx_fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	if (bind(t->rx_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -1;
	pthread_create(&t->rx, NULL, traffic_rx, t);
	return 0;
}

/* The sender's thread (once the queues are bound: what is sent before
 * that is dropped by the kernel, the rule has no --queue-bypass). */
static void traffic_send(struct traffic *t)
{
	if (!t->sending && pthread_create(&t->tx, NULL, traffic_tx, t) == 0)
		t->sending = true;
}

static void traffic_stop_tx(struct traffic *t)
{
	atomic_store(&t->tx_stop, true);
	if (t->sending)
		pthread_join(t->tx, NULL);
	t->sending = false;
}

static void traffic_stop(struct traffic *t)
{
	traffic_stop_tx(t);
	atomic_store(&t->stop, true);
	pthread_join(t->rx, NULL);
	close(t->rx_fd);
}

/* --demo: the rules file (appended to at t=3 s), the traffic, the per
 * second figures, and the pool's totals once it stopped. */
struct demo {
	struct traffic t;
	const char *rules;
	bool started, drained, ended;
	unsigned int secs;
	uint64_t last_packets;
	struct nfqb_pool_stats end;
};

#define DEMO_SECONDS	6

/* Every queue of the demo (0..3) bound and holding no packet: every
 * datagram queued has had its verdict. */
static bool demo_queues_empty(void)
{
	struct nfqb_kstats ks;
	uint16_t q;

	for (q = 0; q < 4; q++)
		if (nfqb_kstats_get(q, &ks, sizeof(ks)) < 0 || ks.queue_total)
			return false;
	return true;
}

/* The end of the demo, before the IPS stops: the sender stops, then the
 * kernel's queues drain and the receiver goes idle (200 ms without a
 * datagram), so that the stop finds no packet left to give the default
 * verdict (accept, uninspected) to. At most 5 s; a signal ends it. */
static void demo_drain(struct demo *d)
{
	uint64_t t0 = ips_now_ms(), last = t0;
	unsigned long long seen = atomic_load(&d->t.received), now;

	traffic_stop_tx(&d->t);
	printf("demo: traffic stopped after %llu datagrams; draining the "
	       "queues\n", (unsigned long long)atomic_load(&d->t.sent));
	fflush(stdout);
	while (!ips_stopping() && ips_now_ms() - t0 < 5000) {
		now = atomic_load(&d->t.received);
		if (now != seen || !demo_queues_empty()) {
			seen = now;
			last = ips_now_ms();
		} else if (ips_now_ms() - last >= 200) {
			printf("demo: drained: queues empty, the last datagram "
			       "delivered %llu ms after the traffic stopped\n",
			       (unsigned long long)(last - t0));
			d->drained = true;
			return;
		}
		usleep(10000);
	}
	printf("demo: %s before the queues drained\n",
	       ips_stopping() ? "interrupted" : "gave up waiting 5 s");
}

static void demo_up(void *arg)
{
	struct demo *d = arg;

	if (!d->started)
		traffic_send(&d->t);
	d->started = true;
}

static bool demo_tick(struct nfqb_pool *pool, void *arg)
{
	struct demo *d = arg;
	struct traffic *t = &d->t;
	struct nfqb_pool_stats st;

	nfqb_pool_stats(pool, -1, &st, sizeof(st));
	printf("t=%2us  %7llu pkt/s | decided %llu: dropped %llu, marked %llu "
	       "| sent %llu, delivered %llu (marked %llu)\n", ++d->secs,
	       (unsigned long long)(st.packets - d->last_packets),
	       (unsigned long long)st.packets, (unsigned long long)st.dropped,
	       (unsigned long long)st.marked,
	       (unsigned long long)atomic_load(&t->sent),
	       (unsigned long long)atomic_load(&t->received),
	       (unsigned long long)atomic_load(&t->marked));
	fflush(stdout);
	d->last_packets = st.packets;
	if (d->secs == 3) {
		FILE *f = fopen(d->rules, "a");

		if (f) {
			fputs("drop EXPLOIT\n", f);
			fclose(f);
		}
		printf("demo: added \"drop EXPLOIT\" to the rules, sending "
		       "SIGHUP to myself\n");
		raise(SIGHUP);
	}
	if (d->secs < DEMO_SECONDS)
		return false;
	demo_drain(d);
	return true;
}

static void demo_down(struct nfqb_pool *pool, void *arg)
{
	struct demo *d = arg;

	nfqb_pool_stats(pool, -1, &d->end, sizeof(d->end));
	d->ended = true;
}

/* The demo's check: every datagram sent was inspected, so either dropped
 * by the IPS or delivered with its mark, and none was lost. Whatever else
 * happened is named. Returns true if it holds. */
static bool demo_check(const struct demo *d)
{
	unsigned long long sent = atomic_load(&d->t.sent);
	unsigned long long got = atomic_load(&d->t.received);
	unsigned long long marked = atomic_load(&d->t.marked);
	unsigned long long attack = atomic_load(&d->t.got_attack);
	unsigned long long dropped = d->end.dropped;
	unsigned long long defaults = d->end.defaults;
	long long lost = (long long)sent - (long long)dropped - (long long)got;
	bool ok = d->ended && marked == got && !attack && !lost;

	printf("demo: sent %llu (%llu with ATTACK, %llu with EXPLOIT): the IPS "
	       "dropped %llu; delivered %llu (with ATTACK %llu, with EXPLOIT "
	       "%llu: sent before the reload)\n", sent,
	       (unsigned long long)atomic_load(&d->t.sent_attack),
	       (unsigned long long)atomic_load(&d->t.sent_exploit), dropped,
	       got, attack, (unsigned long long)atomic_load(&d->t.got_exploit));
	printf("demo: delivered %llu, marked %llu (all marked: %s); default "
	       "verdicts at the stop: %llu; sent - dropped - delivered = %lld\n",
	       got, marked, marked == got ? "yes" : "no", defaults, lost);
	if (!d->drained)
		printf("demo: the IPS stopped before the traffic did and the "
		       "queues drained\n");
	if (defaults)
		printf("demo: %llu still queued when the IPS stopped got the "
		       "default verdict: accepted uninspected, without the "
		       "mark\n", defaults);
	if (got - marked > defaults)
		printf("demo: %llu more passed without the mark: accepted "
		       "uninspected by the kernel (fail-open: a queue was full, "
		       "or at length 0 while the IPS stopped)\n",
		       got - marked - defaults);
	if (lost > 0)
		printf("demo: %lld never arrived: sent after the IPS unbound "
		       "the queues (the rule has no --queue-bypass), or a "
		       "socket overflowed\n", lost);
	printf("demo: %s\n", ok ? "PASS: every datagram was inspected: ATTACK "
	       "dropped throughout, EXPLOIT from the reload on, every other "
	       "one delivered with its mark" : "FAIL: see above");
	return ok;
}

int ips_demo(struct ips_opts *o)
{
	static char path[] = "/tmp/nfqb-ips-demo-XXXXXX";
	struct demo d = { .t.pace_every = 64, .rules = path };
	const struct ips_hooks h = { demo_up, demo_tick, demo_down, &d };
	FILE *f;
	int fd, ret;

	if (netns_setup("iptables -w -A OUTPUT -o lo -p udp --dport 5555 "
			"-j NFQUEUE --queue-balance 0:3") < 0)
		return 1;
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return 1;
	fprintf(f, "# nfqb-ips demo rules\ndrop ATTACK\nmark %d 7\n",
		DEMO_PORT);
	fclose(f);
	printf("demo: rules file %s: drop ATTACK, mark port %d with 7\n",
	       path, DEMO_PORT);
	o->first = 0;
	o->count = 4;
	o->rules = path;
	if (traffic_start(&d.t) < 0)
		return 1;
	ret = ips_serve(o, &h);
	traffic_stop(&d.t);
	if (!demo_check(&d) && !ret)
		ret = 1;
	unlink(path);
	return ret;
}

/* Packets per second with 1, 2, 4 queues, each run in a fresh namespace
 * (a child process each: a namespace per run, nothing left behind). */
static int bench_one(enum nfqb_pool_mode mode, unsigned int nq,
		     unsigned int ms)
{
	static char path[] = "/tmp/nfqb-ips-bench-XXXXXX";
	char rule[256];
	struct traffic t = { 0 };
	struct ips_opts o = { .first = 0, .count = (uint16_t)nq, .mode = mode,
			  .large = NFQB_LARGE_WHOLE };
	struct nfqb_pool *pool;
	struct nfqb_pool_stats st;
	uint64_t t0, t1, p0;
	FILE *f;
	int fd;

	if (nq == 1)
		snprintf(rule, sizeof(rule), "iptables -w -A OUTPUT -o lo -p "
			 "udp --dport %d -j NFQUEUE --queue-num 0", DEMO_PORT);
	else
		snprintf(rule, sizeof(rule), "iptables -w -A OUTPUT -o lo -p "
			 "udp --dport %d -j NFQUEUE --queue-balance 0:%u",
			 DEMO_PORT, nq - 1);
	if (netns_setup(rule) < 0)
		return 1;
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return 1;
	fprintf(f, "drop ATTACK\nmark %d 7\n", DEMO_PORT);
	fclose(f);
	o.rules = path;
	pool = ips_pool_open(&o);
	unlink(path);
	if (!pool || nfqb_pool_start(pool) < 0)
		return 1;
	if (traffic_start(&t) < 0)
		return 1;
	traffic_send(&t);
	usleep(300 * 1000);	/* warm up */
	nfqb_pool_stats(pool, -1, &st, sizeof(st));
	p0 = st.packets;
	t0 = ips_now_ms();
	usleep(ms * 1000);
	nfqb_pool_stats(pool, -1, &st, sizeof(st));
	t1 = ips_now_ms();
	printf("bench: %s, %u queue%s: %.0f packets/s (%llu in %llu ms)\n",
	       mode == NFQB_POOL_DISPATCH ? "dispatch" : "queue-per-worker",
	       nq, nq > 1 ? "s" : "",
	       (double)(st.packets - p0) * 1000.0 / (double)(t1 - t0),
	       (unsigned long long)(st.packets - p0),
	       (unsigned long long)(t1 - t0));
	fflush(stdout);
	traffic_stop(&t);
	ips_pool_close(pool);
	return 0;
}

int ips_bench(enum nfqb_pool_mode mode)
{
	static const unsigned int nqs[] = { 1, 2, 4 };
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 3; i++) {
		pid_t pid;
		int status;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(bench_one(mode, nqs[i], 3000));
		if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			ret = 1;
	}
	return ret;
}
