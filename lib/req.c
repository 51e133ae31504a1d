// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Configuration round trips: send a request with NLM_F_ACK, read the socket
 * (rx.c) until its acknowledgement comes, into spare buffers if the
 * application holds every receive buffer, and send it again if the socket
 * overflowed or stayed quiet (the ack may be lost). Owner thread, or any
 * thread while the owner does not run (open, close).
 */
#include <errno.h>

#include "req.h"
#include "rx.h"
#include "settings.h"
#include "sys.h"
#include "tx.h"

#define CONFIG_TIMEOUT_MS	5000
/* Without an acknowledgement this long after the socket went quiet, a
 * configuration request is sent again (its ack may have been lost to a
 * full socket). */
#define CONFIG_RESEND_MS	100
/* A request the socket would not take: tried this often, 1 ms apart. */
#define CONFIG_SEND_TRIES	50

void nfqb_req_init(struct nfqb_req *r, uint32_t seq)
{
	*r = (struct nfqb_req){ .seq = seq };
}

static bool transient(int err)
{
	return err == ENOBUFS || err == ENOMEM || err == EAGAIN ||
	       err == EINTR;
}

/* Send @msg (@len bytes) under the next sequence number. */
static int send_request(struct nfqb_req *r, const struct nfqb_req_in *in,
			struct nlmsghdr *msg, size_t len)
{
	int tries = 0;

	if (!++r->seq)
		r->seq++;	/* 0 stands for no request */
	msg->nlmsg_seq = r->seq;
	if (!r->first_seq)
		r->first_seq = r->seq;
	r->last_seq = r->seq;
	for (;;) {
		if (!nfqb_tx_send(in->sk->fd, msg, len, in->ctr))
			return 0;
		if (!transient(errno) || ++tries > CONFIG_SEND_TRIES)
			return -1;
		nfqb_sys_nap(1);
	}
}

/* The first answer to the request waiting (of the request or a resend of
 * it: not a late answer to an earlier one) among what the last read
 * brought. */
static bool answered(struct nfqb_req *r, const struct nfqb_rx *rx)
{
	unsigned int i;

	for (i = 0; i < rx->nacks && !r->answered; i++) {
		if (rx->acks[i].seq - r->first_seq >
		    r->last_seq - r->first_seq)
			continue;
		r->answered = true;
		r->answer = rx->acks[i].err;
	}
	return r->answered;
}

/* Wait up to @ms for the socket and read what it has, into spare buffers
 * if need be; whether it stayed quiet. */
static bool read_answers(struct nfqb_req *r, const struct nfqb_req_in *in,
			 int ms)
{
	struct pollfd pfd = { .fd = in->sk->fd, .events = POLLIN };
	int n = nfqb_sys_poll(&pfd, 1, ms);

	if (n <= 0)
		return n == 0;
	do {
		n = nfqb_rx_read_any(in->rx, in->rx_in, in->rx->vlen);
	} while (n > 0 && !answered(r, in->rx));
	return false;
}

/* Send, read until answered, resend while the answer may be lost. */
static int round_trip(struct nfqb_req *r, const struct nfqb_req_in *in,
		      struct nlmsghdr *msg, size_t len)
{
	uint64_t now = nfqb_now_ns();
	uint64_t deadline = now + CONFIG_TIMEOUT_MS * 1000000ull;
	uint32_t overflows = in->rx->overflows;

	if (send_request(r, in, msg, len) < 0)
		return -1;
	while (!answered(r, in->rx) && now < deadline) {
		int ms = (int)((deadline - now) / 1000000) + 1;
		bool quiet;

		quiet = read_answers(r, in, ms > CONFIG_RESEND_MS ?
					    CONFIG_RESEND_MS : ms);
		if (!answered(r, in->rx) &&
		    (quiet || in->rx->overflows != overflows)) {
			/* quiet, or overflowed: the ack may be lost */
			overflows = in->rx->overflows;
			nfqb_stat_inc(in->ctr, config_resends);
			if (send_request(r, in, msg, len) < 0)
				return -1;
		}
		now = nfqb_now_ns();
	}
	if (!answered(r, in->rx)) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (r->answer) {
		errno = r->answer;
		return -1;
	}
	return 0;
}

int nfqb_req_round_trip(struct nfqb_req *r, const struct nfqb_req_in *in,
			void *msg, size_t len)
{
	int ret, err;

	if (in->sk->fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	r->first_seq = 0;
	r->answered = false;
	ret = round_trip(r, in, msg, len);
	err = errno;
	r->first_seq = 0;
	errno = err;
	return ret;
}
