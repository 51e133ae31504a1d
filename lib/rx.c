// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Receiving: many datagrams per recvmmsg into the queue's buffers, checked
 * (sender, truncation, every length by us), split into packet views and
 * tracked in the book. What cannot be handed out is tracked all the same,
 * so that it gets the default verdict: by id when the id is readable, as a
 * gap otherwise. Error replies are matched to the configuration request
 * waiting for its acknowledgement, or counted (a refused verdict stops
 * batching). Nothing is sent here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "book.h"
#include "parse.h"
#include "queue.h"
#include "seam.h"

#define PACKET_TYPE	((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)

/* Our own check of a message's length against what is left (unsigned: a
 * length of 2^31 or more must not pass, whatever libmnl thinks). */
static bool msg_fits(const struct nlmsghdr *nlh, size_t rem)
{
	return rem >= sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= rem;
}

/* An NLMSG_ERROR from the kernel: the ack of our configuration request,
 * or an error about one of our verdicts. */
static void handle_error(struct nfqb_queue *q, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e;
	struct nfqb_rx *rx = &q->rx;
	uint32_t seq;
	uint16_t type;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
		nfqb_stat_inc(q, rejected_malformed);
		return;
	}
	e = mnl_nlmsg_get_payload(nlh);
	seq = e->msg.nlmsg_seq;
	type = e->msg.nlmsg_type & 0xff;
	if (type == NFQNL_MSG_CONFIG) {
		/* the first answer to the request waiting (not a late or a
		 * repeated acknowledgement) */
		if (nfqb_cfg_waiting(&q->cfg, seq) &&
		    rx->ack_for != q->cfg.first_seq) {
			rx->ack_for = q->cfg.first_seq;
			rx->ack_err = -e->error;
		}
		return;
	}
	if (e->error == 0)
		return;
	nfqb_stat_inc(q, kernel_errors);
	if (e->error == -ENOENT) {
		/* nothing to decide: a gap id never queued, or a packet the
		 * kernel dropped itself (device gone) */
		nfqb_stat_inc(q, enoent_errors);
		return;
	}
	/* The kernel refused a verdict: its packets may still be queued
	 * there, and a later batch could reach them. No batch from now on. */
	nfqb_stat_inc(q, verdict_errors);
	if (e->error == -EPERM)	/* no CAP_NET_ADMIN: nfqb_recv() says so */
		rx->refused = EPERM;
	nfqb_book_fallback(q);
}

int nfqb_rx_take_refused(struct nfqb_rx *rx)
{
	int err = rx->refused;

	rx->refused = 0;
	return err;
}

/* The ready list holds handles: an entry whose packet the verdict timeout
 * decided (and whose descriptor may hold another packet since) is dead and
 * skipped. */
static void ready_compact(struct nfqb_rx *rx)
{
	unsigned int i, n = 0, mask = rx->ready_cap - 1;

	for (i = 0; i < rx->nready; i++) {
		struct nfqb_packet *h = rx->ready[(rx->ready_head + i) & mask];
		struct nfqb_packet *p = nfqb_pkt_from_handle(h);

		if (p && nfqb_pkt_state(p) == NFQB_PS_NEW)
			rx->ready[(rx->ready_head + n++) & mask] = h;
	}
	rx->nready = n;
}

static void ready_push(struct nfqb_rx *rx, struct nfqb_packet *p)
{
	/* there are never more live entries than descriptors */
	if (rx->nready == rx->ready_cap)
		ready_compact(rx);
	rx->ready[(rx->ready_head + rx->nready) & (rx->ready_cap - 1)] =
		nfqb_pkt_handle(p);
	rx->nready++;
}

/* A message of ours we cannot hand out: the default verdict by id if we
 * can read it, else a gap. */
static void track_unusable(struct nfqb_queue *q, const void *msg, size_t len)
{
	uint32_t id;
	uint16_t res_id;

	if (!nfqb_parse_id(msg, len, &id, &res_id)) {
		nfqb_book_add_unreadable(q);
		return;
	}
	if (res_id != q->sk.num)
		return;		/* not of our queue: no id of ours */
	nfqb_book_add_default(q, id);
}

static void handle_packet(struct nfqb_queue *q, struct nfqb_slot *s,
			  const struct nlmsghdr *nlh, uint64_t now)
{
	struct nfqb_packet *p = nfqb_pkt_get(&q->bufs);

	if (!p) {
		track_unusable(q, nlh, nlh->nlmsg_len);
		return;
	}
	if (nfqb_parse_packet(p, nlh) != NFQB_PARSE_OK ||
	    p->res_id != q->sk.num) {
		nfqb_stat_inc(q, rejected_malformed);
		nfqb_pkt_put(&q->bufs, p);
		track_unusable(q, nlh, nlh->nlmsg_len);
		return;
	}
	nfqb_pkt_attach(p, s, now);
	if (nfqb_book_add_packet(q, p) < 0) {
		nfqb_pkt_put(&q->bufs, p);
		nfqb_book_add_unreadable(q);
		return;
	}
	nfqb_stat_inc(q, packets);
	if (p->tb[NFQA_PAYLOAD])
		nfqb_stat_add(q, bytes,
			      mnl_attr_get_payload_len(p->tb[NFQA_PAYLOAD]));
	ready_push(&q->rx, p);
}

/* Walk the messages of one datagram from the kernel. */
static void walk_datagram(struct nfqb_queue *q, struct nfqb_slot *s,
			  size_t len, uint64_t now)
{
	size_t off = 0;

	while (off < len && len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh =
			(const struct nlmsghdr *)(s->data + off);

		if (!msg_fits(nlh, len - off)) {
			/* a length that lies: nothing in it can be trusted,
			 * the id neither; if a packet was there, it leaves a
			 * gap */
			nfqb_stat_inc(q, rejected_malformed);
			nfqb_book_add_unreadable(q);
			return;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			handle_error(q, nlh);
			break;
		case NLMSG_NOOP:
		case NLMSG_DONE:
			break;
		case PACKET_TYPE:
			handle_packet(q, s, nlh, now);
			break;
		default:
			nfqb_stat_inc(q, rejected_malformed);
			break;
		}
		/* the last message may lack its padding */
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	if (off < len)	/* bytes too few for a header: no message */
		nfqb_stat_inc(q, rejected_malformed);
}

static void handle_datagram(struct nfqb_queue *q, struct nfqb_slot *s,
			    const struct sockaddr_nl *from, size_t len,
			    int flags, uint64_t now)
{
	if (from->nl_family != AF_NETLINK || from->nl_pid != 0) {
		/* anyone may write to our port: not a kernel message */
		nfqb_stat_inc(q, rejected_foreign);
		return;
	}
	if (len > NFQB_SLOT_SIZE)
		len = NFQB_SLOT_SIZE;
	s->len = (uint32_t)len;
	if (flags & MSG_TRUNC) {
		nfqb_stat_inc(q, rejected_truncated);
		track_unusable(q, s->data, len);
		return;
	}
	walk_datagram(q, s, len, now);
}

/* Buffers for up to @n datagrams; allocated ones if none is free and
 * @heap. Returns how many. */
static unsigned int rx_prepare(struct nfqb_queue *q, unsigned int n, bool heap)
{
	struct nfqb_rx *rx = &q->rx;
	unsigned int i;

	if (n > rx->vlen)
		n = rx->vlen;
	if (n > q->bufs.nfree_slots)
		n = q->bufs.nfree_slots;
	if (!n && heap) {
		rx->slots[0] = nfqb_slot_get_heap();
		n = rx->slots[0] ? 1 : 0;
	} else {
		for (i = 0; i < n; i++)
			rx->slots[i] = nfqb_slot_get(&q->bufs);
	}
	for (i = 0; i < n; i++) {
		struct msghdr *m = &rx->mmsg[i].msg_hdr;

		rx->iov[i].iov_base = rx->slots[i]->data;
		rx->iov[i].iov_len = NFQB_SLOT_SIZE;
		memset(m, 0, sizeof(*m));
		m->msg_name = &rx->addrs[i];
		m->msg_namelen = sizeof(rx->addrs[i]);
		m->msg_iov = &rx->iov[i];
		m->msg_iovlen = 1;
	}
	return n;
}

/* The socket failed us: give the buffers back, count. */
static int rx_failed(struct nfqb_queue *q, unsigned int n)
{
	struct nfqb_rx *rx = &q->rx;
	int err = errno;
	unsigned int i;

	for (i = 0; i < n; i++)
		nfqb_slot_put(&q->bufs, rx->slots[i]);
	if (err == ENOBUFS) {
		nfqb_stat_inc(q, enobufs);
		rx->overflows++;	/* an ack may be lost */
	}
	if (err == EAGAIN)
		rx->last_full = false;
	errno = err;
	return -1;
}

int nfqb_rx_read(struct nfqb_queue *q, unsigned int want, bool heap)
{
	struct nfqb_rx *rx = &q->rx;
	unsigned int i, n = rx_prepare(q, want, heap);
	uint64_t now;
	int r;

	if (!n) {
		errno = heap ? ENOMEM : ENOSPC;
		return -1;
	}
	r = nfqb_sys_recvmmsg(q->sk.fd, rx->mmsg, n);
	nfqb_stat_inc(q, recv_calls);
	if (r < 0)
		return rx_failed(q, n);
	rx->last_full = (unsigned int)r == n;
	now = nfqb_now_ns();
	rx->read_ns = now;
	for (i = 0; i < n; i++) {
		struct nfqb_slot *s = rx->slots[i];

		if (i < (unsigned int)r)
			handle_datagram(q, s, &rx->addrs[i], rx->mmsg[i].msg_len,
					rx->mmsg[i].msg_hdr.msg_flags, now);
		nfqb_slot_put(&q->bufs, s);
	}
	return r;
}

unsigned int nfqb_ready_pop(struct nfqb_rx *rx, struct nfqb_packet **vec,
			    unsigned int max)
{
	unsigned int n = 0;

	while (n < max && rx->nready) {
		struct nfqb_packet *h = rx->ready[rx->ready_head];
		struct nfqb_packet *p = nfqb_pkt_from_handle(h);

		rx->ready_head = (rx->ready_head + 1) & (rx->ready_cap - 1);
		rx->nready--;
		/* decided while waiting (and maybe reused): skipped */
		if (p && nfqb_pkt_hand_out(p))
			vec[n++] = h;
	}
	return n;
}

void nfqb_ready_unpop(struct nfqb_rx *rx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct nfqb_packet *p;

		rx->ready_head = (rx->ready_head - 1) & (rx->ready_cap - 1);
		rx->nready++;
		p = nfqb_pkt_from_handle(rx->ready[rx->ready_head]);
		if (p)
			nfqb_pkt_take_back(p);
	}
}

void nfqb_ready_clear(struct nfqb_rx *rx)
{
	rx->nready = 0;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t c = 1;

	while (c < n)
		c <<= 1;
	return c;
}

int nfqb_rx_alloc(struct nfqb_rx *rx, unsigned int npkts)
{
	*rx = (struct nfqb_rx){ .vlen = NFQB_RECV_VLEN };
	rx->mmsg = nfqb_calloc(rx->vlen, sizeof(*rx->mmsg));
	rx->iov = nfqb_calloc(rx->vlen, sizeof(*rx->iov));
	rx->addrs = nfqb_calloc(rx->vlen, sizeof(*rx->addrs));
	rx->slots = nfqb_calloc(rx->vlen, sizeof(*rx->slots));
	rx->ready_cap = pow2_at_least(npkts);
	rx->ready = nfqb_calloc(rx->ready_cap, sizeof(*rx->ready));
	if (!rx->mmsg || !rx->iov || !rx->addrs || !rx->slots || !rx->ready) {
		nfqb_rx_free(rx);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void nfqb_rx_free(struct nfqb_rx *rx)
{
	free(rx->mmsg);
	free(rx->iov);
	free(rx->addrs);
	free(rx->slots);
	free(rx->ready);
	rx->mmsg = NULL;
	rx->iov = NULL;
	rx->addrs = NULL;
	rx->slots = NULL;
	rx->ready = NULL;
}
