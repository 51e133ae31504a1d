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
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "internal.h"

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
	struct nfqb_ack *a = &q->ack;
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
		if (a->first_seq && !a->done &&
		    seq - a->first_seq <= a->last_seq - a->first_seq) {
			a->err = -e->error;
			a->done = true;
		}
		return;		/* a late or repeated acknowledgement */
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
		q->refused = EPERM;
	if (!q->fallback) {
		q->fallback = true;
		nfqb_stat_inc(q, fallbacks);
	}
}

/* The ready list holds handles: an entry whose packet the verdict timeout
 * decided (and whose descriptor may hold another packet since) is dead and
 * skipped. */
static void ready_compact(struct nfqb_queue *q)
{
	unsigned int i, n = 0, mask = q->ready_cap - 1;

	for (i = 0; i < q->nready; i++) {
		struct nfqb_packet *h = q->ready[(q->ready_head + i) & mask];
		struct nfqb_packet *p = nfqb_pkt_from_handle(h);

		if (p && NFQB_SG_STATE(atomic_load_explicit(&p->sg,
				memory_order_relaxed)) == NFQB_PS_NEW)
			q->ready[(q->ready_head + n++) & mask] = h;
	}
	q->nready = n;
}

static void ready_push(struct nfqb_queue *q, struct nfqb_packet *p)
{
	/* there are never more live entries than descriptors */
	if (q->nready == q->ready_cap)
		ready_compact(q);
	q->ready[(q->ready_head + q->nready) & (q->ready_cap - 1)] =
		nfqb_pkt_handle(p);
	q->nready++;
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
	if (res_id != q->num)
		return;		/* not of our queue: no id of ours */
	nfqb_book_add_default(q, id);
}

static void handle_packet(struct nfqb_queue *q, struct nfqb_slot *s,
			  const struct nlmsghdr *nlh, uint64_t now)
{
	struct nfqb_packet *p = nfqb_pkt_get(q);

	if (!p) {
		track_unusable(q, nlh, nlh->nlmsg_len);
		return;
	}
	if (nfqb_parse_packet(p, nlh) != NFQB_PARSE_OK ||
	    p->res_id != q->num) {
		nfqb_stat_inc(q, rejected_malformed);
		nfqb_pkt_put(q, p);
		track_unusable(q, nlh, nlh->nlmsg_len);
		return;
	}
	p->arrival_ns = now;
	if (q->timeout_ms && (!q->expire_due ||
			      now + q->timeout_ms * 1000000ull < q->expire_due))
		q->expire_due = now + q->timeout_ms * 1000000ull;
	if (nfqb_book_add_packet(q, p) < 0) {
		nfqb_pkt_put(q, p);
		nfqb_book_add_unreadable(q);
		return;
	}
	p->slot = s;
	s->refs++;
	nfqb_stat_inc(q, packets);
	if (p->tb[NFQA_PAYLOAD])
		nfqb_stat_add(q, bytes,
			      mnl_attr_get_payload_len(p->tb[NFQA_PAYLOAD]));
	ready_push(q, p);
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
	unsigned int i;

	if (n > q->vlen)
		n = q->vlen;
	if (n > q->nfree_slots)
		n = q->nfree_slots;
	if (!n && heap) {
		q->rx_slots[0] = nfqb_slot_get_heap(q);
		n = q->rx_slots[0] ? 1 : 0;
	} else {
		for (i = 0; i < n; i++)
			q->rx_slots[i] = nfqb_slot_get(q);
	}
	for (i = 0; i < n; i++) {
		struct msghdr *m = &q->mmsg[i].msg_hdr;

		q->iov[i].iov_base = q->rx_slots[i]->data;
		q->iov[i].iov_len = NFQB_SLOT_SIZE;
		memset(m, 0, sizeof(*m));
		m->msg_name = &q->addrs[i];
		m->msg_namelen = sizeof(q->addrs[i]);
		m->msg_iov = &q->iov[i];
		m->msg_iovlen = 1;
	}
	return n;
}

int nfqb_rx_read(struct nfqb_queue *q, unsigned int want, bool heap)
{
	unsigned int i, n = rx_prepare(q, want, heap);
	uint64_t now;
	int r;

	if (!n) {
		errno = heap ? ENOMEM : ENOSPC;
		return -1;
	}
	r = recvmmsg(q->fd, q->mmsg, n, MSG_DONTWAIT, NULL);
	nfqb_stat_inc(q, recv_calls);
	if (r < 0) {
		int err = errno;

		for (i = 0; i < n; i++)
			nfqb_slot_put(q, q->rx_slots[i]);
		if (err == ENOBUFS) {
			nfqb_stat_inc(q, enobufs);
			q->ack.overflow = true;	/* an ack may be lost */
		}
		if (err == EAGAIN)
			q->last_recv_full = false;
		errno = err;
		return -1;
	}
	q->last_recv_full = (unsigned int)r == n;
	if (r >= 2)
		q->streaming = true;
	now = nfqb_now_ns();
	for (i = 0; i < n; i++) {
		struct nfqb_slot *s = q->rx_slots[i];

		if (i < (unsigned int)r)
			handle_datagram(q, s, &q->addrs[i], q->mmsg[i].msg_len,
					q->mmsg[i].msg_hdr.msg_flags, now);
		nfqb_slot_put(q, s);
	}
	return r;
}

int nfqb_rx_inject(struct nfqb_queue *q, const void *buf, size_t len,
		   uint32_t from_pid, int flags)
{
	struct sockaddr_nl from = {
		.nl_family = AF_NETLINK,
		.nl_pid = from_pid,
	};
	struct nfqb_slot *s = nfqb_slot_get(q);

	if (!s) {
		errno = EAGAIN;
		return -1;
	}
	if (len > NFQB_SLOT_SIZE) {
		len = NFQB_SLOT_SIZE;
		flags |= MSG_TRUNC;
	}
	memcpy(s->data, buf, len);
	handle_datagram(q, s, &from, len, flags, nfqb_now_ns());
	nfqb_slot_put(q, s);
	return 0;
}

unsigned int nfqb_ready_pop(struct nfqb_queue *q, struct nfqb_packet **vec,
			    unsigned int max)
{
	unsigned int n = 0;

	while (n < max && q->nready) {
		struct nfqb_packet *p = nfqb_pkt_from_handle(q->ready[q->ready_head]);
		uint64_t sg;

		q->ready_head = (q->ready_head + 1) & (q->ready_cap - 1);
		q->nready--;
		if (!p)
			continue;	/* decided while waiting, reused */
		sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
		if (NFQB_SG_STATE(sg) != NFQB_PS_NEW)
			continue;	/* decided while waiting */
		atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg),
						      NFQB_PS_PENDING),
				      memory_order_release);
		vec[n++] = nfqb_pkt_handle(p);
	}
	return n;
}

void nfqb_ready_unpop(struct nfqb_queue *q, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct nfqb_packet *p;
		uint64_t sg;

		q->ready_head = (q->ready_head - 1) & (q->ready_cap - 1);
		q->nready++;
		p = nfqb_pkt_from_handle(q->ready[q->ready_head]);
		if (!p)
			continue;
		sg = atomic_load_explicit(&p->sg, memory_order_relaxed);
		if (NFQB_SG_STATE(sg) == NFQB_PS_PENDING)
			atomic_store_explicit(&p->sg, NFQB_SG(NFQB_SG_GEN(sg),
							      NFQB_PS_NEW),
					      memory_order_release);
	}
}
