// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Queue life and configuration: open/bind, the settings the kernel keeps
 * (each acknowledged, its error returned), the socket options, close.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "internal.h"

uint64_t nfqb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void free_buffers(struct nfqb_queue *q)
{
	if (q->slot_mem)
		munmap(q->slot_mem, q->slot_size * q->nslots);
	free(q->slots);
	free(q->mmsg);
	free(q->iov);
	free(q->addrs);
	free(q->rx_slots);
	free(q->ring.v);
	free(q->ready);
	q->slot_mem = NULL;
	q->slots = NULL;
	q->mmsg = NULL;
	q->iov = NULL;
	q->addrs = NULL;
	q->rx_slots = NULL;
	q->ring.v = NULL;
	q->ready = NULL;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t c = 1;

	while (c < n)
		c <<= 1;
	return c;
}

/* (Re)allocate the receive buffers for @count messages of the current copy
 * range. Only while nothing is outstanding. */
static int alloc_buffers(struct nfqb_queue *q, unsigned int count)
{
	size_t range = q->copy_mode == NFQB_COPY_PACKET ? q->copy_range : 0;

	/* the kernel reads a range of 0 as "the whole packet" */
	if (q->copy_mode == NFQB_COPY_PACKET && range == 0)
		range = 0xffff;
	size_t size = MNL_ALIGN(range + NFQB_MSG_OVERHEAD);
	struct nfqb_queue n = { 0 };
	unsigned int i;

	if (range > 0xffff)
		size = MNL_ALIGN(0xffff + NFQB_MSG_OVERHEAD);
	n.slot_size = size;
	n.nslots = count;
	n.slot_mem = mmap(NULL, size * count, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (n.slot_mem == MAP_FAILED) {
		n.slot_mem = NULL;
		return -1;
	}
	n.slots = calloc(count, sizeof(*n.slots));
	n.vlen = NFQB_RECV_VLEN;
	n.mmsg = calloc(n.vlen, sizeof(*n.mmsg));
	n.iov = calloc(n.vlen, sizeof(*n.iov));
	n.addrs = calloc(n.vlen, sizeof(*n.addrs));
	n.rx_slots = calloc(n.vlen, sizeof(*n.rx_slots));
	n.ring.cap = pow2_at_least(count * 2);
	n.ring.v = calloc(n.ring.cap, sizeof(*n.ring.v));
	n.ready_cap = n.ring.cap;
	n.ready = calloc(n.ready_cap, sizeof(*n.ready));
	if (!n.slots || !n.mmsg || !n.iov || !n.addrs || !n.rx_slots ||
	    !n.ring.v || !n.ready) {
		free_buffers(&n);
		errno = ENOMEM;
		return -1;
	}
	/* LIFO free list, lowest first: hot buffers get reused */
	for (i = count; i-- > 0;) {
		n.slots[i].data = n.slot_mem + (size_t)i * size;
		n.slots[i].next_free = n.free_slots;
		n.free_slots = &n.slots[i];
	}
	n.nfree_slots = count;

	free_buffers(q);
	q->slot_mem = n.slot_mem;
	q->slot_size = n.slot_size;
	q->nslots = n.nslots;
	q->slots = n.slots;
	q->free_slots = n.free_slots;
	q->nfree_slots = n.nfree_slots;
	q->mmsg = n.mmsg;
	q->iov = n.iov;
	q->addrs = n.addrs;
	q->rx_slots = n.rx_slots;
	q->vlen = n.vlen;
	q->ring = n.ring;
	q->ring.head = q->ring.tail = 0;
	q->ready = n.ready;
	q->ready_cap = n.ready_cap;
	q->ready_head = q->nready = 0;
	return 0;
}

static bool queue_idle(const struct nfqb_queue *q)
{
	return q->ring.head == q->ring.tail && q->nfree_slots == q->nslots;
}

/*
 * Send one configuration message (built with sequence q->seq) and wait for
 * the kernel's acknowledgement. Packets arriving meanwhile are kept for the
 * next nfqb_recv(). Returns 0 or -1 with the kernel's errno.
 */
int nfqb_config_send(struct nfqb_queue *q, void *msg, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint64_t deadline;

	if (q->detached) {
		errno = ENOTCONN;
		return -1;
	}
	if (q->tx.len && nfqb_tx_send(q) < 0)
		return -1;
	q->wait_seq = ((struct nlmsghdr *)msg)->nlmsg_seq;
	q->wait_done = false;
	q->wait_err = 0;
	if (sendto(q->fd, msg, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	nfqb_stat_inc(q, send_calls);
	deadline = nfqb_now_ns() + NFQB_CONFIG_TIMEOUT_MS * 1000000ull;
	while (!q->wait_done) {
		uint64_t now = nfqb_now_ns();
		int ret;

		if (now >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		ret = nfqb_rx(q, NFQB_RECV_VLEN, true,
			      (int)((deadline - now) / 1000000) + 1);
		if (ret < 0 && errno != EAGAIN && errno != EINTR &&
		    errno != ENOBUFS)
			return -1;
	}
	q->wait_seq = 0;
	if (q->wait_err) {
		errno = q->wait_err;
		return -1;
	}
	return 0;
}

static int config_params(struct nfqb_queue *q, uint8_t mode, uint32_t range)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t len = nfqb_msg_config_params(buf, ++q->seq, q->num, mode, range);

	return nfqb_config_send(q, buf, len);
}

static int bind_queue(struct nfqb_queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nfqb_kstats ks;
	size_t len;

	len = nfqb_msg_config_cmd(buf, ++q->seq, q->num, NFQNL_CFG_CMD_BIND, 0);
	if (nfqb_config_send(q, buf, len) == 0)
		return 0;
	/* The kernel answers EPERM both without CAP_NET_ADMIN and for a
	 * queue another socket holds: tell them apart. */
	if (errno == EPERM && nfqb_kstats_get(q->num, &ks) == 0 &&
	    ks.portid != q->portid)
		errno = EBUSY;
	else if (errno == ENOENT)
		errno = EPERM;
	return -1;
}

static void queue_defaults(struct nfqb_queue *q, uint16_t num)
{
	q->fd = q->epfd = q->evfd = -1;
	q->num = num;
	q->coalesce = true;
	q->default_verdict = NFQB_ACCEPT;
	q->batch_limit = NFQB_DEFAULT_BATCH_LIMIT;
	q->latency_us = NFQB_DEFAULT_LATENCY_US;
	q->linger_us = NFQB_DEFAULT_LINGER_US;
	q->copy_mode = NFQB_COPY_PACKET;
	q->copy_range = 0xffff;
	q->seq = (uint32_t)time(NULL);
}

struct nfqb_queue *nfqb_queue_alloc_detached(uint16_t num,
					     unsigned int nbuffers)
{
	struct nfqb_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	queue_defaults(q, num);
	q->seq = 0;
	q->detached = true;
	if (alloc_buffers(q, nbuffers) < 0) {
		free(q);
		return NULL;
	}
	return q;
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_open(uint16_t num)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);
	struct epoll_event ev = { .events = EPOLLIN };
	struct nfqb_queue *q;
	int one = 1, err;

	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	queue_defaults(q, num);
	q->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (q->fd < 0)
		goto fail;
	if (bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(q->fd, (struct sockaddr *)&sa, &salen) < 0)
		goto fail;
	q->portid = sa.nl_pid;
	/* error replies carry only the header of what failed (a verdict
	 * with a payload would otherwise come back whole) */
	setsockopt(q->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(q->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));

	q->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->evfd < 0 || q->epfd < 0)
		goto fail;
	ev.data.fd = q->fd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->fd, &ev) < 0)
		goto fail;
	ev.data.fd = q->evfd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->evfd, &ev) < 0)
		goto fail;
	if (alloc_buffers(q, NFQB_DEFAULT_BUFFERS) < 0)
		goto fail;
	if (bind_queue(q) < 0)
		goto fail;
	if (config_params(q, q->copy_mode, q->copy_range) < 0)
		goto fail_unbind;
	return q;

fail_unbind:
	err = errno;
	{
		char buf[MNL_SOCKET_BUFFER_SIZE];
		size_t len = nfqb_msg_config_cmd(buf, ++q->seq, q->num,
						 NFQNL_CFG_CMD_UNBIND, 0);
		nfqb_config_send(q, buf, len);
	}
	errno = err;
fail:
	err = errno;
	if (q->fd >= 0)
		close(q->fd);
	if (q->evfd >= 0)
		close(q->evfd);
	if (q->epfd >= 0)
		close(q->epfd);
	free_buffers(q);
	free(q);
	errno = err;
	return NULL;
}

static void free_packets(struct nfqb_queue *q)
{
	struct nfqb_pktchunk *c, *next;

	for (c = q->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	q->chunks = NULL;
	q->free_pkts = NULL;
}

NFQB_EXPORT int nfqb_queue_close(struct nfqb_queue *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t len;
	int ret, err = 0;

	if (!q)
		return 0;
	if (nfqb_coalesce_finish(q) < 0)
		err = errno;
	/* a thread that posted a decision may still be on its way out */
	while (atomic_load_explicit(&q->inflight, memory_order_acquire))
		sched_yield();
	if (!q->detached) {
		len = nfqb_msg_config_cmd(buf, ++q->seq, q->num,
					  NFQNL_CFG_CMD_UNBIND, 0);
		ret = nfqb_config_send(q, buf, len);
		if (ret < 0 && !err)
			err = errno;
		close(q->fd);
		close(q->evfd);
		close(q->epfd);
	}
	free_buffers(q);
	free_packets(q);
	free(q->tx.buf);
	free(q);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

NFQB_EXPORT uint16_t nfqb_queue_num(const struct nfqb_queue *q)
{
	return q->num;
}

NFQB_EXPORT int nfqb_queue_fd(const struct nfqb_queue *q)
{
	return q->epfd;
}

NFQB_EXPORT int nfqb_queue_socket_fd(const struct nfqb_queue *q)
{
	return q->fd;
}

NFQB_EXPORT int nfqb_queue_set_nonblock(struct nfqb_queue *q, bool on)
{
	q->nonblock = on;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_copy_mode(struct nfqb_queue *q,
					 enum nfqb_copy_mode mode,
					 uint32_t range)
{
	uint32_t old_range = q->copy_range;
	uint8_t old_mode = q->copy_mode;

	if (config_params(q, (uint8_t)mode, range) < 0)
		return -1;
	q->copy_mode = (uint8_t)mode;
	q->copy_range = (range > 0xffff || range == 0) ? 0xffff : range;
	/* smaller buffers for a smaller range, while nothing is in flight */
	if ((q->copy_range != old_range || q->copy_mode != old_mode) &&
	    queue_idle(q) && q->nready == 0)
		alloc_buffers(q, q->nslots);
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_maxlen(struct nfqb_queue *q, uint32_t maxlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t len = nfqb_msg_config_maxlen(buf, ++q->seq, q->num, maxlen);

	return nfqb_config_send(q, buf, len);
}

NFQB_EXPORT int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags,
				     uint32_t mask)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t len = nfqb_msg_config_flags(buf, ++q->seq, q->num, flags, mask);

	return nfqb_config_send(q, buf, len);
}

NFQB_EXPORT int nfqb_queue_set_rcvbuf(struct nfqb_queue *q, size_t bytes)
{
	int v = bytes > 0x7fffffff / 2 ? 0x7fffffff / 2 : (int)bytes;

	if (setsockopt(q->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) == 0)
		return 0;
	return setsockopt(q->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

NFQB_EXPORT int nfqb_queue_set_enobufs(struct nfqb_queue *q,
				       enum nfqb_enobufs_policy policy)
{
	int on;

	if (policy != NFQB_ENOBUFS_REPORT && policy != NFQB_ENOBUFS_IGNORE) {
		errno = EINVAL;
		return -1;
	}
	on = policy == NFQB_ENOBUFS_IGNORE;
	return setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on,
			  sizeof(on));
}

NFQB_EXPORT int nfqb_queue_set_buffers(struct nfqb_queue *q,
				       unsigned int count)
{
	if (count == 0 || count > 65536) {
		errno = EINVAL;
		return -1;
	}
	if (!queue_idle(q) || q->nready) {
		errno = EBUSY;
		return -1;
	}
	return alloc_buffers(q, count);
}

NFQB_EXPORT int nfqb_queue_set_default_verdict(struct nfqb_queue *q,
					       uint32_t verdict)
{
	if (verdict != NFQB_ACCEPT && verdict != NFQB_DROP) {
		errno = EINVAL;
		return -1;
	}
	q->default_verdict = verdict;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_coalesce(struct nfqb_queue *q, bool on)
{
	q->coalesce = on;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_batch_limit(struct nfqb_queue *q,
					   unsigned int limit)
{
	if (limit == 0 || limit > 65536) {
		errno = EINVAL;
		return -1;
	}
	q->batch_limit = limit;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_latency(struct nfqb_queue *q, uint32_t usec)
{
	q->latency_us = usec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_linger(struct nfqb_queue *q, uint32_t usec)
{
	if (usec >= 1000000) {
		errno = EINVAL;
		return -1;
	}
	q->linger_us = usec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_verdict_timeout(struct nfqb_queue *q,
					       uint32_t msec)
{
	q->timeout_ms = msec;
	return 0;
}

NFQB_EXPORT bool nfqb_queue_fallback(const struct nfqb_queue *q)
{
	return q->fallback;
}

NFQB_EXPORT int nfqb_queue_next_timeout(const struct nfqb_queue *q)
{
	return nfqb_coalesce_next_timeout(q, nfqb_now_ns());
}
