/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Configuration round trips (req.c): send a request with NLM_F_ACK, read
 * the socket (rx.c) until its acknowledgement comes, send it again if it
 * may have been lost.
 *
 * Owner: req.c alone writes struct nfqb_req; it matches the answers rx.c
 * read (q->rx.acks) to its request.
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

/* Builds a request with the given seq into @buf; returns its length. */
typedef size_t (*nfqb_req_build)(void *buf, uint32_t seq,
				 const struct nfqb_queue *q, const void *arg);
/* Send one request and wait for its acknowledgement. Returns 0 or -1 with
 * the kernel's errno (ETIMEDOUT, ENOTCONN without a socket). */
int nfqb_req_round_trip(struct nfqb_queue *q, nfqb_req_build build,
		     const void *arg);

#endif /* NFQB_REQ_H */
