/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests: a queue without a socket, fed datagrams through the library's own
 * receive path (rx.c) by the test seam's recvmmsg (tests/seam/seam.h). One queue
 * at a time (the seam is process-wide). Header only: each test program
 * has its own copy.
 */
#ifndef NFQBT_TESTQ_H
#define NFQBT_TESTQ_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "queue-int.h"
#include "queue.h"
#include "seam.h"

/* The datagram nfqbt_rx_inject() hands to the library. */
static struct {
	const void *buf;	/* NULL: none */
	size_t len;
	uint32_t from_pid;
	int flags;
} nfqbt_dgram;

/* Every hook gets the test's data: this one uses the static above. */
static int nfqbt_inject_recvmmsg(void *data, int fd, struct mmsghdr *v,
				 unsigned int n)
{
	struct msghdr *m = &v[0].msg_hdr;
	struct sockaddr_nl *from = m->msg_name;
	size_t len = nfqbt_dgram.len;

	(void)data;
	(void)fd;
	(void)n;
	if (!nfqbt_dgram.buf) {
		errno = EAGAIN;
		return -1;
	}
	m->msg_flags = nfqbt_dgram.flags;
	if (len > m->msg_iov[0].iov_len) {
		len = m->msg_iov[0].iov_len;
		m->msg_flags |= MSG_TRUNC;
	}
	memcpy(m->msg_iov[0].iov_base, nfqbt_dgram.buf, len);
	*from = (struct sockaddr_nl){ .nl_family = AF_NETLINK,
				      .nl_pid = nfqbt_dgram.from_pid };
	v[0].msg_len = (unsigned int)len;
	nfqbt_dgram.buf = NULL;
	return 1;
}

/* Install the test's seam @s (NULL: the system's) with the injection's
 * recvmmsg. */
static inline void nfqbt_seam_install(const struct nfqb_seam *s)
{
	struct nfqb_seam w = { 0 };

	if (s)
		w = *s;
	w.recvmmsg = nfqbt_inject_recvmmsg;
	nfqb_seam_install(&w);
}

/* A queue without a socket (fd -1), everything else as nfqb_queue_open()
 * makes it, not bound; its sends go to the seam. Free it with
 * nfqb_queue_close(). */
static inline struct nfqb_queue *nfqbt_queue_detached(uint16_t num,
						      unsigned int nbuffers)
{
	return nfqb_queue_new(num, nbuffers, 0);
}

/* Up to @max packets the queue read and did not hand out yet, handed out
 * (no verdict timeout runs): their handles in @vec. How many. */
static inline unsigned int nfqbt_serve(struct nfqb_queue *q,
				       struct nfqb_packet **vec,
				       unsigned int max)
{
	return nfqb_book_serve(&q->book, &q->book_in, 0, vec, max);
}

/* Handle @len bytes as one datagram received from port @from_pid with
 * recvmsg flags @flags. Returns 0, or -1 with EAGAIN if no buffer is free
 * (ENOMEM: the seam failed an allocation). */
static inline int nfqbt_rx_inject(struct nfqb_queue *q, const void *buf,
				  size_t len, uint32_t from_pid, int flags)
{
	int r;

	nfqbt_dgram.buf = buf;
	nfqbt_dgram.len = len;
	nfqbt_dgram.from_pid = from_pid;
	nfqbt_dgram.flags = flags;
	r = nfqb_rx_read(&q->rx, &q->rx_in, 1);
	nfqbt_dgram.buf = NULL;
	if (r < 0 && errno == ENOSPC)
		errno = EAGAIN;
	return r < 0 ? -1 : 0;
}

#endif /* NFQBT_TESTQ_H */
