/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Receiving (rx.c): datagrams from the socket, checked, parsed into packet
 * descriptors and tracked in the book; the packets not handed out yet (the
 * ready list); the kernel's answers (acknowledgements, refused verdicts).
 *
 * Owner: rx.c alone writes struct nfqb_rx (owner thread).
 */
#ifndef NFQB_RX_H
#define NFQB_RX_H

#include <sys/socket.h>
#include <linux/netlink.h>

#include "pkt.h"

#define NFQB_RECV_VLEN		64

struct nfqb_rx {
	/* packets parsed but not yet handed to the application (handles) */
	struct nfqb_packet **ready;
	unsigned int nready, ready_head, ready_cap;
	/* scratch for recvmmsg */
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs;
	struct nfqb_slot **slots;
	unsigned int vlen;
	bool last_full;		/* the last recvmmsg filled its vector */
	uint64_t read_ns;	/* when the last one returned */
	int refused;		/* errno of a verdict the kernel refused, not
				 * reported yet (EPERM: no CAP_NET_ADMIN) */
	/* acknowledgements of configuration requests (cfg.c asks) */
	uint32_t ack_for;	/* first seq of the request answered */
	int ack_err;		/* the kernel's errno in that answer */
	uint32_t overflows;	/* ENOBUFS: an acknowledgement may be lost */
};

/* Ready list and scratch for up to @npkts packets; 0 or -1 (ENOMEM). */
int nfqb_rx_alloc(struct nfqb_rx *rx, unsigned int npkts);
void nfqb_rx_free(struct nfqb_rx *rx);

/* Read up to @want datagrams without waiting and track what they carry.
 * @heap: when no receive buffer is free, read into allocated ones (a
 * configuration round trip must read its ack whatever the application
 * holds). Returns the number of datagrams, or -1 with errno (EAGAIN:
 * nothing to read, ENOSPC: no buffer). */
int nfqb_rx_read(struct nfqb_queue *q, unsigned int want, bool heap);
/* Hand out up to @max parsed packets (as handles) to @vec. */
unsigned int nfqb_ready_pop(struct nfqb_rx *rx, struct nfqb_packet **vec,
			    unsigned int max);
/* Give back the last @n handed out by nfqb_ready_pop(), unused. */
void nfqb_ready_unpop(struct nfqb_rx *rx, unsigned int n);
/* Forget the ready list (its packets were given the default verdict). */
void nfqb_ready_clear(struct nfqb_rx *rx);
/* The packet at @i in the ready list, NULL if it is dead. */
static inline const struct nfqb_packet *nfqb_ready_at(const struct nfqb_rx *rx,
						      unsigned int i)
{
	return nfqb_pkt_from_handle(rx->ready[(rx->ready_head + i) &
					      (rx->ready_cap - 1)]);
}
/* The errno of a refused verdict not reported yet, cleared; 0 if none. */
int nfqb_rx_take_refused(struct nfqb_rx *rx);

#endif /* NFQB_RX_H */
