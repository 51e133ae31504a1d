// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Receiving: many datagrams per recvmmsg into the free receive buffers
 * (which stay free until a packet keeps one), checked (sender, truncation,
 * every length by us), each message read into what the book needs to know
 * of it: a packet parsed into the next free descriptor, or, for one that
 * cannot be handed out, its id (it gets the default verdict by id) or the
 * fact that its id is unreadable (a gap). Answers to configuration
 * requests are kept for req.c, errors about verdicts counted (a refused
 * verdict stops batching). Nothing is sent here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "book.h"
#include "parse.h"
#include "rx.h"
#include "settings.h"
#include "sys.h"

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
static void read_error(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		       const struct nlmsghdr *nlh, struct nfqb_arrival *a)
{
	const struct nlmsgerr *e;
	uint32_t seq;
	uint16_t type;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
		nfqb_stat_inc(in->ctr, rejected_malformed);
		return;
	}
	e = mnl_nlmsg_get_payload(nlh);
	seq = e->msg.nlmsg_seq;
	type = e->msg.nlmsg_type & 0xff;
	if (type == NFQNL_MSG_CONFIG) {
		if (rx->nacks < NFQB_RX_ACKS)
			rx->acks[rx->nacks++] = (struct nfqb_rx_ack){
				.seq = seq, .err = -e->error };
		else
			rx->overflows++;	/* req.c may miss its own */
		return;
	}
	if (e->error == 0)
		return;
	nfqb_stat_inc(in->ctr, kernel_errors);
	if (e->error == -ENOENT) {
		/* nothing to decide: a gap id never queued, or a packet the
		 * kernel dropped itself (device gone) */
		nfqb_stat_inc(in->ctr, enoent_errors);
		return;
	}
	/* The kernel refused a verdict: its packets may still be queued
	 * there, and a later batch could reach them. No batch from now on. */
	nfqb_stat_inc(in->ctr, verdict_errors);
	if (e->error == -EPERM)	/* no CAP_NET_ADMIN: nfqb_recv() says so */
		rx->refusals++;
	a->refused = true;
}

/* A packet message of @len bytes (@whole: all of it came): parsed into
 * the next free descriptor, which the book takes if it keeps it; if it
 * cannot be handed out, its id, if that can be read. */
static void read_packet(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
			const struct nlmsghdr *nlh, size_t len, bool whole,
			struct nfqb_arrival *a)
{
	struct nfqb_packet *p = whole ? in->bufs->free_head : NULL;
	uint16_t res_id;

	if (p && nfqb_parse_packet(p, nlh) == NFQB_PARSE_OK &&
	    p->res_id == in->sk->num) {
		a->p = p;
		if (rx->want_flows && rx->nflows < NFQB_RX_FLOWS)
			rx->flows[rx->nflows++] = nfqb_parse_flow(p);
		return;
	}
	if (p)
		nfqb_stat_inc(in->ctr, rejected_malformed);
	a->unusable = true;
	a->have_id = nfqb_parse_id(nlh, len, &a->id, &res_id);
	if (a->have_id && res_id != in->sk->num)
		a->unusable = false;	/* not of our queue: no id of ours */
}

/* The message at @off of the datagram in @a->slot (@len bytes, @trunc:
 * cut by MSG_TRUNC) into @a. Returns the offset of the next one. */
static size_t read_msg(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		       size_t off, size_t len, bool trunc,
		       struct nfqb_arrival *a)
{
	const struct nlmsghdr *nlh =
		(const struct nlmsghdr *)(a->slot->data + off);
	bool fits = !trunc && msg_fits(nlh, len - off);
	/* (a truncated datagram: its first message, as far as it came) */
	uint16_t type = trunc ? PACKET_TYPE : nlh->nlmsg_type;

	if (!trunc && !fits) {
		/* a length that lies: nothing in it can be trusted, the id
		 * neither; if a packet was there, it leaves a gap */
		nfqb_stat_inc(in->ctr, rejected_malformed);
		a->unusable = true;
		return len;
	}
	if (type == NLMSG_ERROR)
		read_error(rx, in, nlh, a);
	else if (type == PACKET_TYPE)
		read_packet(rx, in, nlh, fits ? nlh->nlmsg_len : len, fits, a);
	else if (type != NLMSG_NOOP && type != NLMSG_DONE)
		nfqb_stat_inc(in->ctr, rejected_malformed);
	/* the last message may lack its padding */
	return fits ? off + NLMSG_ALIGN(nlh->nlmsg_len) : len;
}

/* The messages of one datagram from the kernel, each to the book. */
static void walk_datagram(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
			  struct nfqb_slot *s, size_t len, bool trunc,
			  uint64_t now)
{
	size_t off = 0;

	/* (a truncated one: its first message, however short) */
	while (off < len && (trunc || len - off >= sizeof(struct nlmsghdr))) {
		struct nfqb_arrival a = { .slot = s, .now = now };

		off = read_msg(rx, in, off, len, trunc, &a);
		if (!nfqb_book_add(in->book, in->book_in, &a))
			continue;
		rx->npkts++;
		if (a.p->tb[NFQA_PAYLOAD])
			rx->nbytes += a.p->tb[NFQA_PAYLOAD]->nla_len -
				      NLA_HDRLEN;	/* its payload */
	}
	if (off < len)	/* bytes too few for a header: no message */
		nfqb_stat_inc(in->ctr, rejected_malformed);
}

static void read_datagram(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
			  unsigned int i, uint64_t now)
{
	const struct sockaddr_nl *from = &rx->addrs[i];
	const struct msghdr *m = &rx->mmsg[i].msg_hdr;
	size_t len = rx->mmsg[i].msg_len;

	if (from->nl_family == AF_NETLINK && from->nl_pid &&
	    from->nl_pid == in->sk->portid) {
		rx->pokes++;	/* from our own port: a wake-up (wake.c) */
		return;
	}
	if (from->nl_family != AF_NETLINK || from->nl_pid != 0) {
		/* anyone may write to our port: not a kernel message */
		nfqb_stat_inc(in->ctr, rejected_foreign);
		return;
	}
	if (len > NFQB_SLOT_SIZE)
		len = NFQB_SLOT_SIZE;
	if (m->msg_flags & MSG_TRUNC)
		nfqb_stat_inc(in->ctr, rejected_truncated);
	walk_datagram(rx, in, rx->slots[i], len, m->msg_flags & MSG_TRUNC,
		      now);
}

unsigned int nfqb_rx_room(const struct nfqb_bufs *bufs,
			  const struct nfqb_book *book)
{
	uint32_t space = nfqb_book_space(book);

	return bufs->nfree_slots < space ? bufs->nfree_slots : space;
}

/* Up to @n free buffers to read into (they stay free: a packet that keeps
 * one takes it), or the spare one when none is free; never more datagrams
 * than the book has room for. How many. */
static unsigned int rx_prepare(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
			       unsigned int n)
{
	const struct nfqb_bufs *b = in->bufs;
	uint32_t space = nfqb_book_space(in->book);
	unsigned int i;

	if (n > rx->vlen)
		n = rx->vlen;
	if (n > space)
		n = space;
	if (n > b->nfree_slots)
		n = b->nfree_slots;
	for (i = 0; i < n; i++)
		rx->slots[i] = b->free_slots[b->nfree_slots - 1 - i];
	if (!n && rx->spare && space)
		rx->slots[n++] = rx->spare;
	for (i = 0; i < n; i++) {
		rx->iov[i].iov_base = rx->slots[i]->data;
		rx->mmsg[i].msg_hdr.msg_namelen = sizeof(rx->addrs[i]);
	}
	return n;
}

static int rx_read(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		   unsigned int want, bool sleep)
{
	unsigned int i, n = rx_prepare(rx, in, want);
	int r, err;

	rx->got = rx->npkts = rx->nflows = rx->nacks = 0;
	rx->nbytes = 0;
	rx->want_flows = !in->set->linger_fixed && in->set->linger_us;
	if (!n)
		r = -1;
	else if (sleep)
		r = nfqb_sys_recvmmsg_wait(in->sk->fd, rx->mmsg, n);
	else
		r = nfqb_sys_recvmmsg(in->sk->fd, rx->mmsg, n);
	err = n ? errno : ENOSPC;
	rx->read_ns = nfqb_now_ns();
	if (n)
		nfqb_stat_inc(in->ctr, recv_calls);
	if (r < 0) {
		if (err == ENOBUFS) {
			nfqb_stat_inc(in->ctr, enobufs);
			rx->overflows++;	/* an ack may be lost */
		}
		if (err == EAGAIN)
			rx->last_full = false;
		errno = err;
		return -1;
	}
	rx->last_full = (unsigned int)r == n;
	rx->got = (unsigned int)r;
	rx->pokes = 0;
	for (i = 0; i < rx->got; i++)
		read_datagram(rx, in, i, rx->read_ns);
	rx->got -= rx->pokes;	/* not the stream's */
	if (rx->npkts) {
		nfqb_stat_add(in->ctr, packets, rx->npkts);
		nfqb_stat_add(in->ctr, bytes, rx->nbytes);
	}
	return r;
}

int nfqb_rx_read(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		 unsigned int want)
{
	return rx_read(rx, in, want, false);
}

int nfqb_rx_read_wait(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		      unsigned int want, int ms)
{
	int set = rx->rcvtimeo_ms;

	if (ms <= 0 || ms > NFQB_READ_SLEEP_MAX_MS)
		ms = NFQB_READ_SLEEP_MAX_MS;
	/* the one set last, if it ends the sleep no later and at most an
	 * eighth early (the same receive timeout, from one call to the
	 * next); else set it again */
	if (set <= 0 || set > ms || ms - set > ms / 8) {
		if (nfqb_sys_rcvtimeo(in->sk->fd, ms) < 0)
			return -1;
		rx->rcvtimeo_ms = ms;
	}
	return rx_read(rx, in, want, true);
}

int nfqb_rx_read_any(struct nfqb_rx *rx, const struct nfqb_rx_in *in,
		     unsigned int want)
{
	struct nfqb_slot *s = NULL;
	int r, err;

	/* what the application holds must not stop this read either: the
	 * book grows to take it (its room bounds the read) */
	if (nfqb_book_space(in->book) < want &&
	    nfqb_book_grow(in->book, in->book->cap * 2) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (!in->bufs->nfree_slots) {
		s = nfqb_slot_get_heap();
		if (!s) {
			errno = ENOMEM;
			return -1;
		}
		rx->spare = s;
	}
	r = nfqb_rx_read(rx, in, want);
	err = errno;
	rx->spare = NULL;
	if (s)
		nfqb_slot_put(in->bufs, s);	/* the packets keep it */
	errno = err;
	return r;
}

int nfqb_rx_alloc(struct nfqb_rx *rx)
{
	unsigned int i;

	*rx = (struct nfqb_rx){ .vlen = NFQB_RECV_VLEN };
	rx->mmsg = nfqb_calloc(rx->vlen, sizeof(*rx->mmsg));
	rx->iov = nfqb_calloc(rx->vlen, sizeof(*rx->iov));
	rx->addrs = nfqb_calloc(rx->vlen, sizeof(*rx->addrs));
	rx->slots = nfqb_calloc(rx->vlen, sizeof(*rx->slots));
	if (!rx->mmsg || !rx->iov || !rx->addrs || !rx->slots) {
		nfqb_rx_free(rx);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < rx->vlen; i++) {
		struct msghdr *m = &rx->mmsg[i].msg_hdr;

		rx->iov[i].iov_len = NFQB_SLOT_SIZE;
		m->msg_name = &rx->addrs[i];
		m->msg_iov = &rx->iov[i];
		m->msg_iovlen = 1;
	}
	return 0;
}

void nfqb_rx_free(struct nfqb_rx *rx)
{
	free(rx->mmsg);
	free(rx->iov);
	free(rx->addrs);
	free(rx->slots);
	rx->mmsg = NULL;
	rx->iov = NULL;
	rx->addrs = NULL;
	rx->slots = NULL;
}
