// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Configuration round trips: send a request with NLM_F_ACK, read the socket
 * (rx.c) until its acknowledgement comes, into spare buffers if the
 * application holds every receive buffer, and send it again if the socket
 * overflowed or stayed quiet (the ack may be lost). Owner thread, or any
 * thread while the owner does not run (open, close).
 */
#include <errno.h>

#include "queue.h"
#include "sys.h"

#define CONFIG_TIMEOUT_MS	5000
/* Without an acknowledgement this long after the socket went quiet, a
 * configuration request is sent again (its ack may have been lost to a
 * full socket). */
#define CONFIG_RESEND_MS	100
/* A request the socket would not take: tried this often, 1 ms apart. */
#define CONFIG_SEND_TRIES	50

static bool transient(int err)
{
	return err == ENOBUFS || err == ENOMEM || err == EAGAIN ||
	       err == EINTR;
}

static int send_request(struct nfqb_queue *q, nfqb_req_build build,
			const void *arg)
{
	struct nfqb_req *c = &q->req;
	unsigned char buf[512];
	int tries = 0;
	size_t len;

	if (!++c->seq)
		c->seq++;	/* 0 stands for no request */
	len = build(buf, c->seq, q, arg);
	if (!c->first_seq)
		c->first_seq = c->seq;
	c->last_seq = c->seq;
	for (;;) {
		int r = nfqb_tx_send(q->sk.fd, buf, len, &q->ctr);

		if (!r)
			return 0;
		if (!transient(errno) || ++tries > CONFIG_SEND_TRIES)
			return -1;
		nfqb_sys_nap(1);
	}
}

/* The first answer to the request waiting (of the request or a resend of
 * it: not a late answer to an earlier one) among what the last read
 * brought. */
static bool answered(struct nfqb_queue *q)
{
	struct nfqb_req *c = &q->req;
	unsigned int i;

	for (i = 0; i < q->rx.nacks && !c->answered; i++) {
		if (q->rx.acks[i].seq - c->first_seq >
		    c->last_seq - c->first_seq)
			continue;
		c->answered = true;
		c->answer = q->rx.acks[i].err;
	}
	return c->answered;
}

/* Wait up to @ms for the socket and read what it has, into spare buffers
 * if need be; whether it stayed quiet. */
static bool read_answers(struct nfqb_queue *q, int ms)
{
	struct pollfd pfd = { .fd = q->sk.fd, .events = POLLIN };
	int r = nfqb_sys_poll(&pfd, 1, ms);

	if (r <= 0)
		return r == 0;
	do {
		r = nfqb_rx_read_any(&q->rx, &q->rx_in, q->rx.vlen);
	} while (r > 0 && !answered(q));
	return false;
}

/* Send, read until answered, resend while the answer may be lost. */
static int round_trip(struct nfqb_queue *q, nfqb_req_build build,
		      const void *arg)
{
	uint64_t now = nfqb_now_ns();
	uint64_t deadline = now + CONFIG_TIMEOUT_MS * 1000000ull;
	uint32_t overflows = q->rx.overflows;

	if (send_request(q, build, arg) < 0)
		return -1;
	while (!answered(q) && now < deadline) {
		int ms = (int)((deadline - now) / 1000000) + 1;
		bool quiet;

		quiet = read_answers(q, ms > CONFIG_RESEND_MS ?
					CONFIG_RESEND_MS : ms);
		if (!answered(q) && (quiet || q->rx.overflows != overflows)) {
			/* quiet, or overflowed: the ack may be lost */
			overflows = q->rx.overflows;
			nfqb_stat_inc(&q->ctr, config_resends);
			if (send_request(q, build, arg) < 0)
				return -1;
		}
		now = nfqb_now_ns();
	}
	if (!answered(q)) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (q->req.answer) {
		errno = q->req.answer;
		return -1;
	}
	return 0;
}

int nfqb_req_round_trip(struct nfqb_queue *q, nfqb_req_build build,
		     const void *arg)
{
	int r, err;

	if (q->sk.fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	q->req.first_seq = 0;
	q->req.answered = false;
	r = round_trip(q, build, arg);
	err = errno;
	q->req.first_seq = 0;
	errno = err;
	return r;
}
