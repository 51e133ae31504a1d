/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the traffic process. It sends numbered UDP datagrams over
 * loopback with sendmmsg and receives the delivered ones itself: a closed
 * loop that never has more than cfg->window datagrams in flight.
 *
 * Datagram seq goes out on flow (seq / burst) % flows: one UDP socket per
 * flow, each bound to its own source address, so the order of a flow's
 * datagrams is the order of their seq numbers. In mixed mode the consumer
 * drops every seq that is a multiple of BENCH_DROP_EVERY; the sender knows a
 * dropped datagram has left the kernel queue once a later datagram of the
 * same flow arrived (one queue verdicts in id order).
 *
 * Drain mode saturates the consumer, which a sender on one CPU cannot do
 * otherwise: the consumer is stopped (SIGSTOP) while a window of datagrams
 * is sent and queued, then continued, and the next window only goes out
 * when every datagram of this one is accounted for. The consumer then always
 * finds a full socket, as under overload, and its CPU time per datagram is
 * its cost at capacity. Meanwhile the traffic process polls the receiving
 * socket (sleeping 100 us when it is empty) instead of blocking on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "nfqb-bench-traffic.h"

#ifndef SO_RCVMARK
#define SO_RCVMARK 75
#endif

#define RECV_BUF	2048

bool bench_seq_dropped(uint64_t seq, bool drops)
{
	return drops && seq % BENCH_DROP_EVERY == 0;
}

unsigned int bench_seq_flow(const struct bench_cfg *cfg, uint64_t seq)
{
	return (seq / cfg->burst) % cfg->flows;
}

/* 127.0.{1,2}.{10+flow}: the second byte splits flows between 2 queues */
uint32_t bench_flow_addr(unsigned int flow)
{
	return 0x7f000000u | ((1u + flow % 2) << 8) | (10u + flow);
}

int bench_flow_of_addr(uint32_t addr)
{
	int flow = (int)(addr & 0xff) - 10;

	if (addr >> 24 != 127 || flow < 0 || flow >= BENCH_MAX_FLOWS)
		return -1;
	if (((addr >> 8) & 0xff) != 1u + (unsigned int)flow % 2)
		return -1;
	return flow;
}

bool bench_parse_pkt(const uint8_t *pl, uint32_t len, uint64_t *seq,
		     int *flow)
{
	uint32_t ihl, saddr;

	if (len < 20 || pl[0] >> 4 != 4 || pl[9] != IPPROTO_UDP)
		return false;
	ihl = (pl[0] & 0x0f) * 4u;
	if (ihl < 20 || len < ihl + 8 + sizeof(*seq))
		return false;
	memcpy(&saddr, pl + 12, sizeof(saddr));
	*flow = bench_flow_of_addr(ntohl(saddr));
	memcpy(seq, pl + ihl + 8, sizeof(*seq));
	return *flow >= 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* how many seq in [0, x] are multiples of BENCH_DROP_EVERY */
static uint64_t mult_upto(int64_t x)
{
	return x < 0 ? 0 : (uint64_t)x / BENCH_DROP_EVERY + 1;
}

/* dropped seq numbers of @flow within [lo, hi] */
static uint64_t flow_drops(const struct bench_cfg *cfg, unsigned int flow,
			   uint64_t lo, uint64_t hi)
{
	uint64_t b, first = lo / cfg->burst, last = hi / cfg->burst, n = 0;

	if (lo > hi)
		return 0;
	b = first + (flow + cfg->flows - first % cfg->flows) % cfg->flows;
	for (; b <= last; b += cfg->flows) {
		uint64_t a = b * cfg->burst, z = a + cfg->burst - 1;

		if (a < lo)
			a = lo;
		if (z > hi)
			z = hi;
		n += mult_upto((int64_t)z) - mult_upto((int64_t)a - 1);
	}
	return n;
}

struct rx {
	struct mmsghdr msg[BENCH_VEC];
	struct iovec iov[BENCH_VEC];
	uint8_t buf[BENCH_VEC][RECV_BUF];
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(uint32_t))];
	} ctl[BENCH_VEC];
};

static int open_receiver(const struct bench_cfg *cfg, char *err,
			 size_t errlen)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(BENCH_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 0, .tv_usec = 50000 };
	int one = 1, sz = (int)cfg->rcvbuf, fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVMARK, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail_close;
	return fd;
fail_close:
	close(fd);
fail:
	snprintf(err, errlen, "receiver socket: %s", strerror(errno));
	return -1;
}

static int open_sender(const struct bench_cfg *cfg, unsigned int flow,
		       char *err, size_t errlen)
{
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(bench_flow_addr(flow)),
	};
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(BENCH_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int sz = (int)cfg->rcvbuf, fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0 ||
	    bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0)
		goto fail_close;
	return fd;
fail_close:
	close(fd);
fail:
	snprintf(err, errlen, "sender socket %u: %s", flow, strerror(errno));
	return -1;
}

static uint32_t rx_mark(struct msghdr *mh)
{
	struct cmsghdr *cm;
	uint32_t mark = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_MARK &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(mark)))
			memcpy(&mark, CMSG_DATA(cm), sizeof(mark));
	}
	return mark;
}

struct tstate {
	const struct bench_cfg *cfg;
	bool drops, marks;
	uint8_t *seen;			/* bitmap of seq numbers received */
	int64_t hi[BENCH_MAX_FLOWS];	/* highest seq received per flow */
	uint64_t resolved;		/* dropped seq known to be gone */
	uint64_t bogus;
	struct bench_traffic *t;
};

static void rx_one(struct tstate *s, struct mmsghdr *m)
{
	struct bench_traffic *t = s->t;
	uint32_t mark, exp_mark = 0;
	unsigned int flow;
	uint64_t seq;

	if (m->msg_len < sizeof(seq) || (m->msg_hdr.msg_flags & MSG_TRUNC)) {
		s->bogus++;
		return;
	}
	memcpy(&seq, m->msg_hdr.msg_iov->iov_base, sizeof(seq));
	if (seq >= t->sent) {
		s->bogus++;
		return;
	}
	if (s->seen[seq / 8] & (1u << (seq % 8))) {
		t->dups++;
		return;
	}
	s->seen[seq / 8] |= 1u << (seq % 8);
	flow = bench_seq_flow(s->cfg, seq);
	if (bench_seq_dropped(seq, s->drops))
		t->wrong_verdict++;
	else
		t->delivered++;
	if (s->marks)
		exp_mark = BENCH_MARK_BASE + flow;
	mark = rx_mark(&m->msg_hdr);
	if (mark != exp_mark && !t->bad_mark++) {
		t->first_bad_seq = seq;
		t->first_bad_mark = mark;
		t->first_bad_expected = exp_mark;
	}
	if ((int64_t)seq > s->hi[flow]) {
		if (s->drops && seq > 0)
			s->resolved += flow_drops(s->cfg, flow,
						  (uint64_t)(s->hi[flow] + 1),
						  seq - 1);
		s->hi[flow] = (int64_t)seq;
	}
}

/* stop @pid and wait until it is stopped */
static int consumer_pause(int pid, char *err, size_t errlen)
{
	int st;

	if (kill(pid, SIGSTOP) < 0)
		goto fail;
	for (;;) {
		if (waitpid(pid, &st, WUNTRACED) < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (WIFSTOPPED(st))
			return 0;
		snprintf(err, errlen, "consumer ended");
		return -1;
	}
fail:
	snprintf(err, errlen, "stopping the consumer: %s", strerror(errno));
	return -1;
}

static int send_burst(int fd, struct mmsghdr *msg, unsigned int n,
		      char *err, size_t errlen)
{
	unsigned int done = 0;

	while (done < n) {
		int r = sendmmsg(fd, msg + done, n - done, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "sendmmsg: %s", strerror(errno));
			return -1;
		}
		done += r;
	}
	return 0;
}

/* one UDP run of the traffic process */
struct traffic {
	const struct bench_cfg *cfg;
	struct tstate s;
	bool drain, paused;		/* drain mode; the consumer stopped */
	int consumer_pid;
	uint64_t seq;			/* datagrams sent */
	int sfd[BENCH_MAX_FLOWS], rfd;
	unsigned int nf;		/* sending sockets open */
	struct mmsghdr *smsg;
	struct iovec *siov;
	uint8_t *sbuf;
	struct rx *rx;
	char *err;
	size_t errlen;
};

/* the sockets and buffers: 0 or -1 */
static int traffic_open(struct traffic *tr)
{
	const struct bench_cfg *cfg = tr->cfg;
	unsigned int i;

	for (tr->nf = 0; tr->nf < cfg->flows; tr->nf++) {
		tr->sfd[tr->nf] = open_sender(cfg, tr->nf, tr->err,
					      tr->errlen);
		if (tr->sfd[tr->nf] < 0)
			return -1;
	}
	tr->s.seen = calloc(cfg->packets / 8 + 1, 1);
	tr->smsg = calloc(cfg->burst, sizeof(*tr->smsg));
	tr->siov = calloc(cfg->burst, sizeof(*tr->siov));
	tr->sbuf = calloc(cfg->burst, cfg->payload);
	tr->rx = calloc(1, sizeof(*tr->rx));
	if (!tr->s.seen || !tr->smsg || !tr->siov || !tr->sbuf || !tr->rx) {
		snprintf(tr->err, tr->errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < cfg->burst; i++) {
		tr->siov[i].iov_base = tr->sbuf + (size_t)i * cfg->payload;
		tr->siov[i].iov_len = cfg->payload;
		tr->smsg[i].msg_hdr.msg_iov = &tr->siov[i];
		tr->smsg[i].msg_hdr.msg_iovlen = 1;
	}
	for (i = 0; i < BENCH_VEC; i++) {
		tr->rx->iov[i].iov_base = tr->rx->buf[i];
		tr->rx->iov[i].iov_len = RECV_BUF;
		tr->rx->msg[i].msg_hdr.msg_iov = &tr->rx->iov[i];
		tr->rx->msg[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

static void traffic_close(struct traffic *tr)
{
	if (tr->paused)
		kill(tr->consumer_pid, SIGCONT);
	while (tr->nf > 0)
		close(tr->sfd[--tr->nf]);
	close(tr->rfd);
	free(tr->s.seen);
	free(tr->smsg);
	free(tr->siov);
	free(tr->sbuf);
	free(tr->rx);
}

/* Send what the window allows (drain mode: the next window, the consumer
 * stopped meanwhile, once all of this one is back): 0 or -1. */
static int traffic_send(struct traffic *tr)
{
	const struct bench_cfg *cfg = tr->cfg;
	struct bench_traffic *t = tr->s.t;
	uint64_t accounted = t->delivered + t->wrong_verdict + tr->s.resolved;
	bool drops = tr->s.drops, hold = false;
	unsigned int i;

	if (tr->drain) {
		accounted = tr->seq;
		if (t->delivered + t->wrong_verdict < tr->seq -
		    (drops ? mult_upto((int64_t)tr->seq - 1) : 0)) {
			hold = true;
		} else if (tr->seq < cfg->packets) {
			if (consumer_pause(tr->consumer_pid, tr->err,
					   tr->errlen) < 0)
				return -1;
			tr->paused = true;
		}
	}
	while (tr->seq < cfg->packets && !hold) {
		unsigned int n = cfg->burst;

		if (cfg->packets - tr->seq < n)
			n = (unsigned int)(cfg->packets - tr->seq);
		if (tr->seq - accounted + n > cfg->window)
			break;
		for (i = 0; i < n; i++) {
			uint64_t v = tr->seq + i;

			memcpy(tr->siov[i].iov_base, &v, sizeof(v));
		}
		if (send_burst(tr->sfd[bench_seq_flow(cfg, tr->seq)], tr->smsg,
			       n, tr->err, tr->errlen) < 0)
			return -1;
		tr->seq += n;
		t->sent = tr->seq;
	}
	if (tr->paused) {
		tr->paused = false;
		if (kill(tr->consumer_pid, SIGCONT) < 0) {
			snprintf(tr->err, tr->errlen,
				 "continuing the consumer: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* what arrived: 0 go on, 1 stop (stalled or timed out), -1 failed;
 * *@last: when something last arrived */
static int traffic_recv(struct traffic *tr, double t0, double *last)
{
	const struct timespec poll_ts = { .tv_sec = 0, .tv_nsec = 100000 };
	struct rx *rx = tr->rx;
	double now;
	int i, r;

	for (i = 0; i < BENCH_VEC; i++) {
		rx->msg[i].msg_hdr.msg_control = rx->ctl[i].b;
		rx->msg[i].msg_hdr.msg_controllen = sizeof(rx->ctl[i].b);
		rx->msg[i].msg_hdr.msg_flags = 0;
	}
	/* drain mode polls: a receiver asleep on the socket would make
	 * the consumer pay a cross-CPU wake-up per reinjected packet */
	r = recvmmsg(tr->rfd, rx->msg, BENCH_VEC,
		     tr->drain ? MSG_DONTWAIT : MSG_WAITFORONE, NULL);
	if (r < 0 && tr->drain && errno == EAGAIN)
		nanosleep(&poll_ts, NULL);
	now = now_s();
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			snprintf(tr->err, tr->errlen, "recvmmsg: %s",
				 strerror(errno));
			return -1;
		}
		if (now - *last > tr->cfg->stall) {
			tr->s.t->stalled = true;
			return 1;
		}
		if (now - t0 > tr->cfg->timeout) {
			tr->s.t->timed_out = true;
			return 1;
		}
		return 0;
	}
	for (i = 0; i < r; i++)
		rx_one(&tr->s, &rx->msg[i]);
	*last = now;
	return 0;
}

int bench_traffic(const struct bench_cfg *cfg, bool drops, bool marks,
		  int consumer_pid, const volatile int *abort_flag,
		  struct bench_traffic *t, char *err, size_t errlen)
{
	struct traffic tr = {
		.cfg = cfg, .drain = cfg->drain && consumer_pid > 0,
		.consumer_pid = consumer_pid, .err = err, .errlen = errlen,
		.s = { .cfg = cfg, .drops = drops, .marks = marks, .t = t },
	};
	double t0, last;
	int ret = -1, r;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->expected = cfg->packets -
		      (drops ? mult_upto((int64_t)cfg->packets - 1) : 0);
	for (i = 0; i < BENCH_MAX_FLOWS; i++)
		tr.s.hi[i] = -1;
	tr.rfd = open_receiver(cfg, err, errlen);
	if (tr.rfd < 0)
		return -1;
	if (traffic_open(&tr) < 0)
		goto out;
	t0 = last = now_s();
	for (;;) {
		if (*abort_flag) {
			snprintf(err, errlen, "aborted");
			goto out;
		}
		if (traffic_send(&tr) < 0)
			goto out;
		if (tr.seq == cfg->packets && t->delivered >= t->expected)
			break;
		r = traffic_recv(&tr, t0, &last);
		if (r < 0)
			goto out;
		if (r > 0)
			break;
	}
	t->elapsed = last - t0;
	if (tr.s.bogus) {
		snprintf(err, errlen, "%llu datagrams not ours",
			 (unsigned long long)tr.s.bogus);
		goto out;
	}
	ret = 0;
out:
	traffic_close(&tr);
	return ret;
}
