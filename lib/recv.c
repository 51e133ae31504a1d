// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Receiving: many datagrams per recvmmsg into the queue's buffers, checked
 * (sender, truncation, lengths), split into packet views, error replies
 * consumed and counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "internal.h"

#define PKT_CHUNK 256

struct nfqb_packet *nfqb_pkt_alloc(struct nfqb_queue *q)
{
	struct nfqb_packet *p = q->free_pkts;

	if (!p) {
		struct nfqb_pktchunk *c;
		unsigned int i;

		c = calloc(1, sizeof(*c) + PKT_CHUNK * sizeof(c->pkts[0]));
		if (!c)
			return NULL;
		c->next = q->chunks;
		q->chunks = c;
		for (i = 0; i < PKT_CHUNK; i++) {
			c->pkts[i].next_free = q->free_pkts;
			q->free_pkts = &c->pkts[i];
		}
		p = q->free_pkts;
	}
	q->free_pkts = p->next_free;
	p->q = q;
	p->user = NULL;
	p->expired = false;
	memset(&p->d, 0, sizeof(p->d));
	atomic_store_explicit(&p->state, NFQB_PS_PENDING, memory_order_relaxed);
	return p;
}

static void slot_put(struct nfqb_queue *q, struct nfqb_slot *s)
{
	if (--s->refs)
		return;
	s->next_free = q->free_slots;
	q->free_slots = s;
	q->nfree_slots++;
}

void nfqb_pkt_release(struct nfqb_queue *q, struct nfqb_packet *p)
{
	free(p->d.payload);
	p->d.payload = NULL;
	if (p->slot)
		slot_put(q, p->slot);
	p->slot = NULL;
	atomic_store_explicit(&p->state, NFQB_PS_FREE, memory_order_relaxed);
	p->next_free = q->free_pkts;
	q->free_pkts = p;
}

/* An error (or acknowledgement) from the kernel about one of our messages. */
static void handle_error(struct nfqb_queue *q, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(int) +
					    sizeof(struct nlmsghdr))) {
		nfqb_stat_inc(q, rejected_malformed);
		return;
	}
	e = mnl_nlmsg_get_payload(nlh);
	if (q->wait_seq && e->msg.nlmsg_seq == q->wait_seq) {
		q->wait_err = -e->error;
		q->wait_done = true;
		return;
	}
	if (e->error == 0)
		return;		/* a late acknowledgement */
	nfqb_stat_inc(q, kernel_errors);
	if (e->error == -ENOENT)
		nfqb_stat_inc(q, enoent_errors);
}

/* A datagram cut short: give the packet in it the default verdict if its
 * header survived, so the kernel does not hold it forever. */
static void salvage_truncated(struct nfqb_queue *q, const void *buf,
			      size_t len)
{
	const struct nlmsghdr *nlh = buf;
	size_t off = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg));
	const struct nlattr *a;
	const struct nfqnl_msg_packet_hdr *ph;
	struct nfqb_decision d = { .verdict = q->default_verdict };
	void *out;
	size_t n;

	nfqb_stat_inc(q, rejected_truncated);
	if (len < off + MNL_ATTR_HDRLEN + sizeof(*ph) ||
	    nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
		return;
	a = (const struct nlattr *)((const char *)buf + off);
	if (mnl_attr_get_type(a) != NFQA_PACKET_HDR ||
	    mnl_attr_get_payload_len(a) < sizeof(*ph))
		return;
	ph = mnl_attr_get_payload(a);
	if (nfqb_tx_reserve(q, nfqb_msg_verdict_size(0), &out) < 0)
		return;
	n = nfqb_msg_verdict(out, ++q->seq, q->num, ntohl(ph->packet_id), &d);
	q->tx.len += n;
	q->tx.nmsgs++;
	nfqb_stat_inc(q, verdict_msgs);
	nfqb_stat_inc(q, defaults);
	nfqb_count_verdict(q, &d, 1);
}

static void ready_push(struct nfqb_queue *q, struct nfqb_packet *p)
{
	q->ready[(q->ready_head + q->nready) & (q->ready_cap - 1)] = p;
	q->nready++;
}

static void handle_packet(struct nfqb_queue *q, struct nfqb_slot *s,
			  const struct nlmsghdr *nlh, uint64_t now)
{
	struct nfqb_packet *p = nfqb_pkt_alloc(q);

	if (!p) {
		nfqb_stat_inc(q, rejected_malformed);
		return;
	}
	if (nfqb_parse_packet(p, nlh) != NFQB_PARSE_OK || p->res_id != q->num) {
		nfqb_stat_inc(q, rejected_malformed);
		nfqb_pkt_release(q, p);
		return;
	}
	p->slot = s;
	s->refs++;
	p->arrival_ns = now;
	if (q->have_last_id && !nfqb_id_after(p->id, q->last_id)) {
		q->fallback = true;
		nfqb_stat_inc(q, fallbacks);
	}
	q->have_last_id = true;
	q->last_id = p->id;
	nfqb_stat_inc(q, packets);
	if (p->tb[NFQA_PAYLOAD])
		nfqb_stat_add(q, bytes, mnl_attr_get_payload_len(p->tb[NFQA_PAYLOAD]));
	if (nfqb_ring_push(q, p) < 0) {
		/* cannot track it: the default verdict, now */
		struct nfqb_decision d = { .verdict = q->default_verdict };
		void *out;

		if (nfqb_tx_reserve(q, nfqb_msg_verdict_size(0), &out) == 0) {
			q->tx.len += nfqb_msg_verdict(out, ++q->seq, q->num,
						      p->id, &d);
			q->tx.nmsgs++;
			nfqb_stat_inc(q, verdict_msgs);
			nfqb_stat_inc(q, defaults);
			nfqb_count_verdict(q, &d, 1);
		}
		nfqb_pkt_release(q, p);
		return;
	}
	ready_push(q, p);
}

static void handle_datagram(struct nfqb_queue *q, struct nfqb_slot *s,
			    const struct sockaddr_nl *from, size_t len,
			    int flags, uint64_t now)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)s->data;
	int rem = (int)len;

	s->len = (uint32_t)len;
	if (from->nl_family != AF_NETLINK || from->nl_pid != 0) {
		nfqb_stat_inc(q, rejected_foreign);
		return;
	}
	if (flags & MSG_TRUNC) {
		salvage_truncated(q, s->data, len > q->slot_size ?
				  q->slot_size : len);
		return;
	}
	while (rem > 0) {
		if (!mnl_nlmsg_ok(nlh, rem)) {
			nfqb_stat_inc(q, rejected_malformed);
			return;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			handle_error(q, nlh);
			break;
		case NLMSG_NOOP:
		case NLMSG_DONE:
			break;
		default:
			handle_packet(q, s, nlh, now);
			break;
		}
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
}

/* Drain the eventfd other threads poke when they post decisions. */
static void clear_wakeup(struct nfqb_queue *q)
{
	uint64_t v;

	atomic_store(&q->wake_pending, false);
	if (read(q->evfd, &v, sizeof(v)) < 0)
		return;
}

int nfqb_rx(struct nfqb_queue *q, unsigned int want, bool block,
	    int timeout_ms)
{
	unsigned int i, n = want;
	uint64_t now;
	int r;

	if (n > q->vlen)
		n = q->vlen;
	if (n > q->nfree_slots)
		n = q->nfree_slots;
	if (n == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (block && timeout_ms != NFQB_BLOCK_SOCKET) {
		struct epoll_event ev[2];
		int k;

		r = epoll_wait(q->epfd, ev, 2, timeout_ms);
		if (r < 0)
			return -1;
		for (k = 0; k < r; k++)
			if (ev[k].data.fd == q->evfd)
				clear_wakeup(q);
		if (r == 0) {
			errno = EAGAIN;
			return -1;
		}
		block = false;
	}
	{
		struct nfqb_slot *s = q->free_slots;

		for (i = 0; i < n; i++) {
			q->rx_slots[i] = s;
			q->iov[i].iov_base = s->data;
			q->iov[i].iov_len = q->slot_size;
			memset(&q->mmsg[i].msg_hdr, 0, sizeof(q->mmsg[i].msg_hdr));
			q->mmsg[i].msg_hdr.msg_name = &q->addrs[i];
			q->mmsg[i].msg_hdr.msg_namelen = sizeof(q->addrs[i]);
			q->mmsg[i].msg_hdr.msg_iov = &q->iov[i];
			q->mmsg[i].msg_hdr.msg_iovlen = 1;
			s = s->next_free;
		}
	}
	r = recvmmsg(q->fd, q->mmsg, n, block ? MSG_WAITFORONE : MSG_DONTWAIT,
		     NULL);
	nfqb_stat_inc(q, recv_calls);
	if (r < 0) {
		if (errno == ENOBUFS)
			nfqb_stat_inc(q, enobufs);
		if (errno == EAGAIN)
			q->last_recv_full = false;
		return -1;
	}
	q->last_recv_full = (unsigned int)r == n;
	if (r >= 2)
		q->streaming = true;
	now = nfqb_now_ns();
	/* take the used buffers off the free list first: packets keep them */
	for (i = 0; i < (unsigned int)r; i++) {
		q->free_slots = q->rx_slots[i]->next_free;
		q->nfree_slots--;
		q->rx_slots[i]->refs = 1;
	}
	for (i = 0; i < (unsigned int)r; i++) {
		struct nfqb_slot *s = q->rx_slots[i];

		handle_datagram(q, s, &q->addrs[i], q->mmsg[i].msg_len,
				q->mmsg[i].msg_hdr.msg_flags, now);
		slot_put(q, s);
	}
	return r;
}

unsigned int nfqb_ready_pop(struct nfqb_queue *q, struct nfqb_packet **vec,
			      unsigned int max)
{
	unsigned int n = 0;

	while (n < max && q->nready) {
		vec[n++] = q->ready[q->ready_head];
		q->ready_head = (q->ready_head + 1) & (q->ready_cap - 1);
		q->nready--;
	}
	return n;
}

/* Wait on the eventfd alone for up to @timeout ms (a second if none is
 * due). Returns 0 if woken or a timer is due, -1 with EAGAIN if nothing
 * happened (the application holds every buffer and decides nothing). */
static int wait_for_decision(struct nfqb_queue *q, int timeout)
{
	struct pollfd pfd = { .fd = q->evfd, .events = POLLIN };
	int r;

	atomic_store(&q->sleeping, true);
	if (atomic_load(&q->posted) !=
	    atomic_load_explicit(&q->posted_seen, memory_order_relaxed)) {
		atomic_store(&q->sleeping, false);
		return 0;
	}
	r = poll(&pfd, 1, timeout < 0 ? 1000 : timeout);
	atomic_store(&q->sleeping, false);
	if (r < 0)
		return -1;
	if (r > 0)
		clear_wakeup(q);
	else if (timeout < 0) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

NFQB_EXPORT int nfqb_recv(struct nfqb_queue *q, struct nfqb_packet **vec,
			  unsigned int max)
{
	unsigned long self = (unsigned long)pthread_self();

	if (!max) {
		errno = EINVAL;
		return -1;
	}
	if (atomic_load_explicit(&q->owner, memory_order_relaxed) != self)
		atomic_store_explicit(&q->owner, self, memory_order_relaxed);
	if (atomic_load_explicit(&q->wake_pending, memory_order_relaxed))
		clear_wakeup(q);
	for (;;) {
		uint64_t now = nfqb_now_ns();
		uint32_t posted;
		int timeout, r;

		if (nfqb_coalesce_timers(q, now) < 0)
			return -1;
		posted = atomic_load_explicit(&q->posted, memory_order_acquire);
		if (posted != atomic_load_explicit(&q->posted_seen, memory_order_relaxed) || q->tx.len) {
			enum nfqb_flush_reason why = NFQB_FLUSH_IDLE;
			bool go = !q->last_recv_full && !q->streaming;

			if (!q->unsent_since)
				q->unsent_since = now;
			if (posted - atomic_load_explicit(&q->posted_seen, memory_order_relaxed) >= q->batch_limit) {
				why = NFQB_FLUSH_LIMIT;
				go = true;
			} else if (now - q->unsent_since >=
				   q->latency_us * 1000ull) {
				why = NFQB_FLUSH_LATENCY;
				go = true;
			}
			if (go && nfqb_coalesce_flush(q, why) < 0)
				return -1;
		}
		if (q->nready)
			return (int)nfqb_ready_pop(q, vec, max);

		/* the last receive filled its vector: more may be waiting,
		 * read on without sleeping (otherwise the socket was drained
		 * and this would be a wasted syscall) */
		if (q->last_recv_full || q->nonblock) {
			r = nfqb_rx(q, max, false, 0);
			if (r > 0)
				continue;
			if (r < 0 && errno != EAGAIN)
				return -1;
		}
		/* Drained. While packets stream in, pause briefly and take
		 * what came meanwhile, decisions held (within the latency
		 * bound) for bigger batches: one wake-up and one verdict
		 * message for many packets. A pause that brings nothing ends
		 * the stream. */
		if (q->streaming && q->linger_us && !q->nonblock &&
		    q->nfree_slots) {
			struct timespec ts = {
				.tv_nsec = (long)q->linger_us * 1000,
			};

			nanosleep(&ts, NULL);
			r = nfqb_rx(q, max, false, 0);
			if (r > 0)
				continue;
			if (r < 0 && errno != EAGAIN)
				return -1;
			q->streaming = false;
		}
		/* nothing to read: the socket is idle, send what we have */
		posted = atomic_load_explicit(&q->posted, memory_order_acquire);
		if ((posted != atomic_load_explicit(&q->posted_seen, memory_order_relaxed) || q->tx.len) &&
		    nfqb_coalesce_flush(q, NFQB_FLUSH_IDLE) < 0)
			return -1;
		if (q->nonblock) {
			errno = EAGAIN;
			return -1;
		}
		timeout = nfqb_coalesce_next_timeout(q, nfqb_now_ns());
		if (!q->nfree_slots) {
			/* every buffer is out with the application: only a
			 * decision (another thread's) or a timer frees one */
			if (wait_for_decision(q, timeout) < 0)
				return -1;
			continue;
		}
		if (q->ring.head == q->ring.tail && timeout < 0) {
			/* nothing outstanding: block in the socket itself */
			r = nfqb_rx(q, max, true, NFQB_BLOCK_SOCKET);
			if (r < 0 && errno != EAGAIN)
				return -1;
			continue;
		}
		/* packets are out with the application: also wake up when
		 * another thread decides one, or when a timer is due */
		atomic_store(&q->sleeping, true);
		if (atomic_load(&q->posted) != atomic_load_explicit(&q->posted_seen, memory_order_relaxed)) {
			atomic_store(&q->sleeping, false);
			continue;
		}
		r = nfqb_rx(q, max, true, timeout);
		atomic_store(&q->sleeping, false);
		if (r < 0 && errno != EAGAIN)
			return -1;
	}
}

NFQB_EXPORT int nfqb_dispatch(struct nfqb_queue *q, nfqb_packet_cb cb,
			      void *data)
{
	struct nfqb_packet *vec[NFQB_RECV_VLEN];
	int n, i;

	n = nfqb_recv(q, vec, NFQB_RECV_VLEN);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (cb(vec[i], data) < 0) {
			/* the rest stay outstanding: close or a later
			 * verdict finalizes them */
			for (i++; i < n; i++)
				ready_push(q, vec[i]);
			errno = ECANCELED;
			return -1;
		}
	}
	return n;
}

int nfqb_rx_inject(struct nfqb_queue *q, const void *buf, size_t len,
		   uint32_t from_pid, int flags)
{
	struct sockaddr_nl from = {
		.nl_family = AF_NETLINK,
		.nl_pid = from_pid,
	};
	struct nfqb_slot *s = q->free_slots;

	if (!s) {
		errno = EAGAIN;
		return -1;
	}
	if (len > q->slot_size) {
		len = q->slot_size;
		flags |= MSG_TRUNC;
	}
	q->free_slots = s->next_free;
	q->nfree_slots--;
	s->refs = 1;
	memcpy(s->data, buf, len);
	handle_datagram(q, s, &from, len, flags, nfqb_now_ns());
	slot_put(q, s);
	return 0;
}
