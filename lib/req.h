/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Configuration round trips (req.c): send a request with NLM_F_ACK, read
 * the socket (rx.c) until its acknowledgement comes, send it again if it
 * may have been lost.
 *
 * Owner: req.c alone writes struct nfqb_req (the requests' sequence
 * numbers and the answer waited for). Its functions take it and their
 * view of the rest (struct nfqb_req_in): the socket, the reads they ask
 * of rx.c and the answers those bring (q->rx.acks, read only), the
 * counters.
 */
#ifndef NFQB_REQ_H
#define NFQB_REQ_H

#include "internal.h"

struct nfqb_req {
	uint32_t seq;		/* of the last request */
	uint32_t first_seq;	/* of the request waiting, 0: none */
	uint32_t last_seq;	/* ... and of its last resend */
	bool answered;		/* the kernel answered it: */
	int answer;		/* ... its errno, 0: done */
};

/* What a round trip reads of the queue, and the reads it asks for: its
 * caller's view (the queue builds it once). */
struct nfqb_sock;
struct nfqb_rx;
struct nfqb_rx_in;
struct nfqb_req_in {
	const struct nfqb_sock *sk;	/* fd */
	struct nfqb_rx *rx;		/* rx.c's: reads the answers
					 * (nfqb_rx_read_any()); .acks and
					 * .overflows read here */
	const struct nfqb_rx_in *rx_in;	/* ... with its view */
	struct nfqb_counters *ctr;
};

/* Requests numbered from @seq + 1 on. */
void nfqb_req_init(struct nfqb_req *r, uint32_t seq);
/* Send the request @msg (one message of @len bytes, with NLM_F_ACK; its
 * sequence number is set here) and wait for its acknowledgement. Returns
 * 0 or -1 with the kernel's errno (ETIMEDOUT, ENOTCONN without a
 * socket). */
int nfqb_req_round_trip(struct nfqb_req *r, const struct nfqb_req_in *in,
			void *msg, size_t len);

#endif /* NFQB_REQ_H */
