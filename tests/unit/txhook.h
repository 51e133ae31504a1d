/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: see every datagram a queue sends, through the library's test
 * seam (tests/seam/seam.h). One queue at a time (the seam is process-wide).
 */
#ifndef NFQBT_TXHOOK_H
#define NFQBT_TXHOOK_H

#include <string.h>
#include <sys/socket.h>

#include "testq.h"

typedef int (*nfqbt_tx_fn)(struct nfqb_queue *q, const void *buf, size_t len,
			   void *data);

struct nfqbt_txhook {
	struct nfqb_queue *q;
	nfqbt_tx_fn fn;
	void *data;
	unsigned char buf[256 * 1024];
};

static struct nfqbt_txhook nfqbt_txhook;

static ssize_t nfqbt_txhook_send(void *data, int fd, const struct msghdr *m,
				 int flags)
{
	struct nfqbt_txhook *h = data;
	size_t len = 0;
	size_t i;

	(void)fd;
	(void)flags;
	for (i = 0; i < m->msg_iovlen; i++) {
		if (len + m->msg_iov[i].iov_len > sizeof(h->buf))
			return -1;
		memcpy(h->buf + len, m->msg_iov[i].iov_base,
		       m->msg_iov[i].iov_len);
		len += m->msg_iov[i].iov_len;
	}
	if (h->fn(h->q, h->buf, len, h->data) < 0)
		return -1;
	return (ssize_t)len;
}

/* Call @fn with each datagram @q sends (NULL @fn: back to the system). */
static inline void nfqbt_set_tx_hook(struct nfqb_queue *q, nfqbt_tx_fn fn,
				     void *data)
{
	struct nfqb_seam s = {
		.sendmsg = nfqbt_txhook_send,
		.data = &nfqbt_txhook,
	};

	nfqbt_txhook.q = q;
	nfqbt_txhook.fn = fn;
	nfqbt_txhook.data = data;
	nfqbt_seam_install(fn ? &s : NULL);
}

#endif
