/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Receiving (rx.c): datagrams from the socket, checked, parsed into packet
 * descriptors and tracked in the book (which hands them out); what the
 * last read brought; the kernel's answers (acknowledgements, refused
 * verdicts).
 *
 * Owner: rx.c alone writes struct nfqb_rx (owner thread). Its functions
 * take it and their view of the rest (struct nfqb_rx_in): the socket and
 * settings read, the book told through its functions, the counters.
 */
#ifndef NFQB_RX_H
#define NFQB_RX_H

#include <sys/socket.h>
#include <linux/netlink.h>

#include "pkt.h"

#define NFQB_RECV_VLEN		64

/* Answers to configuration requests a read keeps, at most. */
#define NFQB_RX_ACKS		16
/* The flows of a read's packets noted for pace.c, at most. */
#define NFQB_RX_FLOWS		(2 * NFQB_RECV_VLEN)

struct nfqb_rx {
	/* scratch for recvmmsg */
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs;
	struct nfqb_slot **slots;
	unsigned int vlen;
	struct nfqb_slot *spare;	/* read into when no buffer is free
					 * (nfqb_rx_read_any()) */
	/* the last read */
	bool last_full;		/* it filled its vector: more may wait */
	uint64_t read_ns;	/* when it returned */
	unsigned int got;	/* datagrams it brought (0: none, failed),
				 * wake-ups from our own port not counted */
	unsigned int pokes;	/* ... those */
	unsigned int npkts;	/* packets they carried */
	uint64_t nbytes;	/* their payload */
	bool want_flows;	/* pace.c looks at their flows (the
				 * adaptive linger) */
	unsigned int nflows;	/* ... in flows[] (nfqb_parse_flow()) */
	uint32_t flows[NFQB_RX_FLOWS];
	/* verdicts the kernel refused with EPERM (no CAP_NET_ADMIN): loop.c
	 * reports each once */
	uint32_t refusals;
	/* answers to configuration requests the last read brought: req.c
	 * matches them to its request */
	struct nfqb_rx_ack {
		uint32_t seq;
		int err;	/* the kernel's errno, 0: done */
	} acks[NFQB_RX_ACKS];
	unsigned int nacks;
	uint32_t overflows;	/* ENOBUFS: an answer may be lost */
	int rcvtimeo_ms;	/* the socket's SO_RCVTIMEO as last set for
				 * a read that sleeps (0: none set) */
};

/* What a read reads of the queue, and the owners it hands on to: its
 * caller's view (the queue builds it once). */
struct nfqb_sock;
struct nfqb_settings;
struct nfqb_book;
struct nfqb_book_in;
struct nfqb_rx_in {
	const struct nfqb_sock *sk;	/* fd, num */
	const struct nfqb_settings *set;	/* the linger: note the
						 * flows? */
	struct nfqb_bufs *bufs;		/* pkt.c's: the free buffers read into
					 * and the next free descriptor parsed
					 * into (the book takes what it keeps);
					 * a spare buffer put back */
	struct nfqb_book *book;		/* book.c's: told what each message
					 * is (nfqb_book_add()) */
	const struct nfqb_book_in *book_in;	/* ... with its view */
	struct nfqb_counters *ctr;
};

/* Scratch for the reads; 0 or -1 (ENOMEM). */
int nfqb_rx_alloc(struct nfqb_rx *rx);
void nfqb_rx_free(struct nfqb_rx *rx);

/* Datagrams a read may take now: free buffers, and room in the book
 * (nfqb_book_space()); 0: reading waits for decisions. */
unsigned int nfqb_rx_room(const struct nfqb_bufs *bufs,
			  const struct nfqb_book *book);
/* Read up to @want datagrams into free receive buffers without waiting,
 * and tell the book what each message is. Returns the number of
 * datagrams, or -1 with errno (EAGAIN: nothing to read, ENOSPC: no free
 * buffer or no room in the book, or the socket's). */
int nfqb_rx_read(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		 unsigned int want);
/* The longest a read sleeps (nfqb_rx_read_wait()) when nothing else
 * bounds it: a signal handler installed with SA_RESTART would restart a
 * read with no receive timeout, so there always is one (it returns
 * EAGAIN, and the caller sleeps again). */
#define NFQB_READ_SLEEP_MAX_MS	1000
/* The same, but sleeping in the read until a datagram comes (a packet,
 * or a wake-up another thread sent to our own port), a signal (EINTR),
 * or about @ms milliseconds pass (EAGAIN; -1: no bound but
 * NFQB_READ_SLEEP_MAX_MS). The socket's receive timeout is set only when
 * the one set last does not fit: it may end the sleep a little early,
 * never late. */
int nfqb_rx_read_wait(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		      unsigned int want, int ms);
/* The same, and with no free buffer into an allocated one, the book
 * grown if it has no room (a configuration round trip or close must read
 * whatever the application holds; ENOMEM). */
int nfqb_rx_read_any(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		     unsigned int want);

#endif /* NFQB_RX_H */
