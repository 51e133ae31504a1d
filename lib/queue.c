// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Queue life and configuration: open/bind, the settings the kernel keeps
 * (each acknowledged, its error returned), the socket options, close.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <libmnl/libmnl.h>

#include "internal.h"

static void free_buffers(struct nfqb_queue *q)
{
	if (q->slot_mem)
		munmap(q->slot_mem, (size_t)NFQB_SLOT_SIZE * q->nslots);
	free(q->slots);
	free(q->mmsg);
	free(q->iov);
	free(q->addrs);
	free(q->rx_slots);
	free(q->ready);
	nfqb_book_free(&q->book);
	q->slot_mem = NULL;
	q->slots = NULL;
	q->mmsg = NULL;
	q->iov = NULL;
	q->addrs = NULL;
	q->rx_slots = NULL;
	q->ready = NULL;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t c = 1;

	while (c < n)
		c <<= 1;
	return c;
}

/*
 * The receive buffers (@count of the largest message: reserved, committed
 * only where the kernel writes), descriptors (twice as many: a dead handle
 * finds its descriptor reused as late as possible), the book and the ready
 * list. Only while nothing is outstanding.
 */
static int alloc_buffers(struct nfqb_queue *q, unsigned int count)
{
	unsigned int i, npkts = count * 2;

	q->nslots = count;
	q->slot_mem = mmap(NULL, (size_t)NFQB_SLOT_SIZE * count,
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (q->slot_mem == MAP_FAILED) {
		q->slot_mem = NULL;
		return -1;
	}
	q->slots = nfqb_calloc(count, sizeof(*q->slots));
	q->vlen = NFQB_RECV_VLEN;
	q->mmsg = nfqb_calloc(q->vlen, sizeof(*q->mmsg));
	q->iov = nfqb_calloc(q->vlen, sizeof(*q->iov));
	q->addrs = nfqb_calloc(q->vlen, sizeof(*q->addrs));
	q->rx_slots = nfqb_calloc(q->vlen, sizeof(*q->rx_slots));
	q->ready_cap = pow2_at_least(npkts);
	q->ready = nfqb_calloc(q->ready_cap, sizeof(*q->ready));
	if (!q->slots || !q->mmsg || !q->iov || !q->addrs || !q->rx_slots ||
	    !q->ready || nfqb_book_alloc(&q->book, npkts * 2 + 64) < 0 ||
	    nfqb_pkt_alloc_all(q, npkts) < 0) {
		free_buffers(q);
		nfqb_pkt_free_all(q);
		errno = ENOMEM;
		return -1;
	}
	/* LIFO free list, lowest first: hot buffers get reused */
	q->free_slots = NULL;
	for (i = count; i-- > 0;) {
		q->slots[i].data = q->slot_mem + (size_t)i * NFQB_SLOT_SIZE;
		q->slots[i].next_free = q->free_slots;
		q->free_slots = &q->slots[i];
	}
	q->nfree_slots = count;
	q->ready_head = q->nready = 0;
	return 0;
}

/* New buffers for an idle queue. The old descriptors stay until close: a
 * dead handle may still point there. */
static int resize_buffers(struct nfqb_queue *q, unsigned int count)
{
	struct nfqb_queue old = { 0 };

	if (q->retired_n == NFQB_MAX_RETIRED) {
		errno = EBUSY;
		return -1;
	}
	old.slot_mem = q->slot_mem;
	old.nslots = q->nslots;
	old.slots = q->slots;
	old.mmsg = q->mmsg;
	old.iov = q->iov;
	old.addrs = q->addrs;
	old.rx_slots = q->rx_slots;
	old.ready = q->ready;
	old.ready_cap = q->ready_cap;
	old.book = q->book;
	old.pkts = q->pkts;
	old.npkts = q->npkts;
	old.free_slots = q->free_slots;
	old.nfree_slots = q->nfree_slots;
	old.free_head = q->free_head;
	old.free_tail = q->free_tail;
	q->pkts = NULL;
	q->book.v = NULL;
	if (alloc_buffers(q, count) < 0) {
		int err = errno;

		q->slot_mem = old.slot_mem;
		q->nslots = old.nslots;
		q->slots = old.slots;
		q->mmsg = old.mmsg;
		q->iov = old.iov;
		q->addrs = old.addrs;
		q->rx_slots = old.rx_slots;
		q->ready = old.ready;
		q->ready_cap = old.ready_cap;
		q->book = old.book;
		q->pkts = old.pkts;
		q->npkts = old.npkts;
		q->free_slots = old.free_slots;
		q->nfree_slots = old.nfree_slots;
		q->free_head = old.free_head;
		q->free_tail = old.free_tail;
		errno = err;
		return -1;
	}
	q->retired[q->retired_n++] = old.pkts;
	free_buffers(&old);
	return 0;
}

static bool queue_idle(const struct nfqb_queue *q)
{
	return nfqb_book_empty(&q->book) && q->nfree_slots == q->nslots &&
	       !q->nready;
}

/* Configuration requests, built by the transport with its own seq. */
static size_t build_cmd(void *buf, uint32_t seq, const struct nfqb_queue *q,
			const void *arg)
{
	return nfqb_msg_config_cmd(buf, seq, q->num, *(const uint8_t *)arg, 0);
}

struct params {
	uint8_t mode;
	uint32_t range;
};

static size_t build_params(void *buf, uint32_t seq, const struct nfqb_queue *q,
			   const void *arg)
{
	const struct params *p = arg;

	return nfqb_msg_config_params(buf, seq, q->num, p->mode, p->range);
}

static size_t build_bind(void *buf, uint32_t seq, const struct nfqb_queue *q,
			 const void *arg)
{
	(void)arg;
	return nfqb_msg_config_bind(buf, seq, q->num, (uint8_t)q->copy_mode,
				    q->copy_range);
}

static size_t build_maxlen(void *buf, uint32_t seq, const struct nfqb_queue *q,
			   const void *arg)
{
	return nfqb_msg_config_maxlen(buf, seq, q->num, *(const uint32_t *)arg);
}

static size_t build_flags(void *buf, uint32_t seq, const struct nfqb_queue *q,
			  const void *arg)
{
	const uint32_t *fm = arg;

	return nfqb_msg_config_flags(buf, seq, q->num, fm[0], fm[1]);
}

static int config_cmd(struct nfqb_queue *q, uint8_t cmd)
{
	return nfqb_tx_config(q, build_cmd, &cmd);
}

static int config_params(struct nfqb_queue *q, uint8_t mode, uint32_t range)
{
	struct params p = { .mode = mode, .range = range };

	return nfqb_tx_config(q, build_params, &p);
}

static int config_maxlen(struct nfqb_queue *q, uint32_t maxlen)
{
	return nfqb_tx_config(q, build_maxlen, &maxlen);
}

static int config_flags(struct nfqb_queue *q, uint32_t flags, uint32_t mask)
{
	uint32_t fm[2] = { flags, mask };

	return nfqb_tx_config(q, build_flags, fm);
}

static int bind_queue(struct nfqb_queue *q)
{
	struct nfqb_kstats ks;
	bool bound, ours;
	int err;

	/* bound and in our copy mode at once: no packet queued in between
	 * (the kernel drops what comes to a queue without a copy mode) */
	if (nfqb_tx_config(q, build_bind, NULL) == 0)
		return 0;
	/* The kernel answers EPERM both without CAP_NET_ADMIN and for a
	 * queue another socket holds, and EBUSY to a bind sent again after
	 * its first acknowledgement was lost: tell them apart (the bind's
	 * errno kept: looking at the kernel's table sets its own). */
	err = errno;
	bound = nfqb_kstats_get(q->num, &ks, sizeof(ks)) == 0;
	ours = bound && ks.portid == q->portid;
	if ((err == EPERM || err == EBUSY) && ours)	/* mode again */
		return config_params(q, q->copy_mode, q->copy_range);
	if (err == EPERM && bound)
		err = EBUSY;
	else if (err == ENOENT)
		err = EPERM;
	errno = err;
	return -1;
}

static void queue_defaults(struct nfqb_queue *q, uint16_t num)
{
	q->fd = q->epfd = q->evfd = q->tfd = -1;
	q->num = num;
	q->coalesce = true;
	q->default_verdict = NFQB_ACCEPT;
	q->batch_limit = NFQB_DEFAULT_BATCH_LIMIT;
	q->latency_us = NFQB_DEFAULT_LATENCY_US;
	q->linger.us = NFQB_DEFAULT_LINGER_US;
	q->copy_mode = NFQB_COPY_PACKET;
	q->copy_range = 0xffff;
	q->seq = (uint32_t)time(NULL);
}

static void queue_free(struct nfqb_queue *q)
{
	if (q->fd >= 0)
		close(q->fd);
	if (q->evfd >= 0)
		close(q->evfd);
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->tfd >= 0)
		close(q->tfd);
	free_buffers(q);
	nfqb_pkt_free_all(q);
	while (q->retired_n)
		free(q->retired[--q->retired_n]);
	free(q->tx.buf);
	free(q->tx.plan.items);
	free(q);
}

/* Memory of a queue, no socket. */
static struct nfqb_queue *queue_new(uint16_t num, unsigned int nbuffers)
{
	struct nfqb_queue *q = nfqb_calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	queue_defaults(q, num);
	q->tx.buf = malloc(NFQB_TX_SIZE);
	q->tx.plan.cap = NFQB_TX_SIZE / 32 + 1;
	q->tx.plan.items = calloc(q->tx.plan.cap, sizeof(*q->tx.plan.items));
	if (!q->tx.buf || !q->tx.plan.items ||
	    alloc_buffers(q, nbuffers) < 0) {
		queue_free(q);
		errno = ENOMEM;
		return NULL;
	}
	return q;
}

struct nfqb_queue *nfqb_queue_alloc_detached(uint16_t num,
					     unsigned int nbuffers)
{
	struct nfqb_queue *q = queue_new(num, nbuffers);

	if (!q)
		return NULL;
	q->seq = 0;
	q->detached = true;
	return q;
}

/* Socket options, wake-up eventfd and epoll around the bound socket. */
static int setup_socket(struct nfqb_queue *q)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;

	/* error replies carry only the header of what failed (a verdict
	 * with a payload would otherwise come back whole) */
	setsockopt(q->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(q->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	q->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (q->evfd < 0 || q->epfd < 0 || q->tfd < 0)
		return -1;
	ev.data.fd = q->fd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->fd, &ev) < 0)
		return -1;
	ev.data.fd = q->evfd;
	return epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->evfd, &ev);
}

static int open_socket(struct nfqb_queue *q)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);

	q->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (q->fd < 0)
		return -1;
	if (bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(q->fd, (struct sockaddr *)&sa, &salen) < 0)
		return -1;
	q->portid = sa.nl_pid;
	return setup_socket(q);
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_open(uint16_t num)
{
	struct nfqb_queue *q = queue_new(num, NFQB_DEFAULT_BUFFERS);
	int err;

	if (!q)
		return NULL;
	if (open_socket(q) < 0 || bind_queue(q) < 0)
		goto fail;
	/* GSO packets whole: no segmentation in the kernel before queueing
	 * (one message, one verdict per super-packet); a kernel without the
	 * flag segments them, as it always did */
	if (config_flags(q, NFQB_F_GSO, NFQB_F_GSO) < 0 &&
	    errno != EOPNOTSUPP && errno != EINVAL)
		goto fail_unbind;
	return q;

fail_unbind:
	err = errno;
	config_cmd(q, NFQNL_CFG_CMD_UNBIND);
	errno = err;
fail:
	err = errno;
	queue_free(q);
	errno = err;
	return NULL;
}

/* Send what is decided, retrying a failing socket for a while. */
static int flush_all(struct nfqb_queue *q)
{
	unsigned int tries;

	for (tries = 0; tries < 200; tries++) {
		struct timespec ts = { .tv_nsec = 5 * 1000 * 1000 };

		if (nfqb_tx_flush(q, NFQB_FLUSH_CLOSE, true, nfqb_now_ns()) >= 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
		nanosleep(&ts, NULL);
	}
	errno = EAGAIN;
	return -1;
}

/* Wait for threads still inside a decision on this queue. */
static void wait_deciders(struct nfqb_queue *q)
{
	while (atomic_load_explicit(&q->inflight, memory_order_acquire))
		sched_yield();
}

/*
 * Close and pool stop: every packet the kernel queued to us before the
 * stop gets its decision or the default verdict. New packets are kept out
 * first (queue length 0: the kernel drops them, or accepts them when the
 * default is accept, as with fail-open), what the socket still holds is
 * read and given the default, then the queue is unbound.
 */
static int finish(struct nfqb_queue *q)
{
	uint32_t fm[2] = { q->default_verdict == NFQB_ACCEPT ?
			   NFQB_F_FAIL_OPEN : 0, NFQB_F_FAIL_OPEN };
	unsigned int rounds;
	int err = 0;

	wait_deciders(q);
	nfqb_book_default_all(q);
	if (flush_all(q) < 0)
		err = errno;
	if (!q->detached) {
		if (config_flags(q, fm[0], fm[1]) == 0)
			config_maxlen(q, 0);
		for (rounds = 0; rounds < 1000; rounds++) {
			int r = nfqb_rx_read(q, q->vlen, true);

			if (r < 0 && errno != ENOBUFS)
				break;
			nfqb_book_default_all(q);
		}
	}
	/* From here on a decision is refused (ESHUTDOWN): once the threads
	 * inside one are out, every packet is decided or gets the default,
	 * and all of it is sent before the unbind. */
	atomic_store(&q->shut, true);
	wait_deciders(q);
	nfqb_book_default_all(q);
	if (flush_all(q) < 0 && !err)
		err = errno;
	if (!q->detached && config_cmd(q, NFQNL_CFG_CMD_UNBIND) < 0 &&
	    errno != ENODEV && !err)
		err = errno;
	return err;
}

/*
 * Any thread; other threads may be deciding packets of @q meanwhile (a
 * decision that returned 0 is sent before the unbind; one that comes later
 * is refused with ESHUTDOWN). The memory stays until nfqb_queue_close().
 */
int nfqb_queue_shutdown(struct nfqb_queue *q)
{
	int err;

	if (atomic_load(&q->shut))
		return 0;
	err = finish(q);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

NFQB_EXPORT int nfqb_queue_close(struct nfqb_queue *q)
{
	int ret;

	if (!q)
		return 0;
	ret = nfqb_queue_shutdown(q);
	queue_free(q);
	return ret;
}

NFQB_EXPORT int nfqb_queue_close_stats(struct nfqb_queue *q,
				      struct nfqb_stats *st, size_t size)
{
	int ret;

	if (!q || !st || !size || size % sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	ret = nfqb_queue_shutdown(q);
	nfqb_queue_stats(q, st, size);
	queue_free(q);
	return ret;
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
	/* the kernel takes any mode without a word: refuse them here; and
	 * NONE too: in it the kernel queues nothing, it drops every packet
	 * sent to the queue (counted nowhere, bypass or not) */
	if (mode != NFQB_COPY_META && mode != NFQB_COPY_PACKET) {
		errno = EINVAL;
		return -1;
	}
	/* every buffer holds the largest message: nothing to resize */
	if (config_params(q, (uint8_t)mode, range) < 0)
		return -1;
	q->copy_mode = (uint8_t)mode;
	q->copy_range = (range > 0xffff || range == 0) ? 0xffff : range;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_maxlen(struct nfqb_queue *q, uint32_t maxlen)
{
	return config_maxlen(q, maxlen);
}

NFQB_EXPORT int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags,
				     uint32_t mask)
{
	return config_flags(q, flags, mask);
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
	if (!queue_idle(q)) {
		errno = EBUSY;
		return -1;
	}
	return resize_buffers(q, count);
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
	if (usec == NFQB_LINGER_AUTO) {
		q->linger.fixed = false;
		q->linger.us = NFQB_DEFAULT_LINGER_US;
		return 0;
	}
	if (usec >= 1000000) {
		errno = EINVAL;
		return -1;
	}
	q->linger.fixed = true;
	q->linger.us = usec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_verdict_timeout(struct nfqb_queue *q,
					       uint32_t msec)
{
	q->timeout_ms = msec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_recv_timeout(struct nfqb_queue *q,
					    uint32_t msec)
{
	q->recv_timeout_ms = msec;
	return 0;
}

NFQB_EXPORT bool nfqb_queue_fallback(const struct nfqb_queue *q)
{
	return q->fallback;
}



/* --- Handing a bound queue from one process to the next ------------------ */

/* Send every decision, the default verdict for what is undecided; true if
 * nothing is owed to the kernel any more (an open gap of unreadable
 * messages is: its packets are queued and undecided). */
static int settle(struct nfqb_queue *q)
{
	wait_deciders(q);
	nfqb_book_default_all(q);
	if (flush_all(q) < 0)
		return -1;
	nfqb_book_trim(&q->book);
	if (!nfqb_book_empty(&q->book)) {
		errno = EBUSY;
		return -1;
	}
	return 0;
}

/*
 * Give up @q without unbinding it: every packet the library tracks gets
 * its decision or the default verdict and every verdict is sent; nothing is
 * read from the socket any more (what it holds stays for the next owner),
 * the queue length and flags stay as they are. Then later decisions are
 * refused (ESHUTDOWN) and the socket is no longer the queue's: its fd is
 * returned and @q keeps its memory (nfqb_queue_close() frees it without
 * touching the socket). Returns the fd, or -1 with errno: EAGAIN or a
 * send's error, EBUSY (an open gap of unreadable messages), ESHUTDOWN;
 * a failure before the refusal point leaves @q usable, one after it (only
 * for decisions that came in between) leaves @q shut down with its
 * socket, which nfqb_queue_close() closes (the kernel unbinds).
 */
int nfqb_queue_release(struct nfqb_queue *q)
{
	struct epoll_event ev = { 0 };
	int fd;

	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (q->detached) {
		errno = ENOTSOCK;
		return -1;
	}
	if (settle(q) < 0)
		return -1;
	atomic_store(&q->shut, true);
	if (settle(q) < 0)
		return -1;
	fd = q->fd;
	epoll_ctl(q->epfd, EPOLL_CTL_DEL, fd, &ev);
	q->fd = -1;
	return fd;
}

NFQB_EXPORT int nfqb_queue_detach(struct nfqb_queue *q)
{
	int fd;

	if (!q) {
		errno = EINVAL;
		return -1;
	}
	if (q->nready) {
		/* read from the socket, not handed out: only the application
		 * may decide them (nfqb_recv() hands them out first) */
		errno = EBUSY;
		return -1;
	}
	fd = nfqb_queue_release(q);
	if (fd < 0)
		return -1;
	queue_free(q);
	return fd;
}

struct nfqb_queue *nfqb_queue_adopt_n(int fd, uint16_t num,
				      unsigned int nbuffers)
{
	struct sockaddr_nl sa = { 0 };
	socklen_t len = sizeof(sa);
	struct nfqb_kstats ks;
	struct nfqb_queue *q;
	int v[2], err, listed;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	len = sizeof(v[0]);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v[0], &len) < 0)
		return NULL;
	len = sizeof(v[1]);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v[1], &len) < 0)
		return NULL;
	if (v[0] != AF_NETLINK || v[1] != NETLINK_NETFILTER) {
		errno = EPROTOTYPE;
		return NULL;
	}
	len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return NULL;
	if (!sa.nl_pid) {
		errno = ENOTCONN;
		return NULL;
	}
	/* The kernel's own word, read without touching the socket (what it
	 * holds is the queue's packets, for us to take only once the queue
	 * is ours): queue @num is bound to this socket's port id. The file
	 * is root's (0440): a user keeping only CAP_NET_ADMIN asks the
	 * kernel instead, below. */
	listed = nfqb_kstats_get(num, &ks, sizeof(ks)) == 0;
	if (!listed && errno != EACCES && errno != EPERM) {
		errno = ENODEV;
		return NULL;
	}
	if (listed && ks.portid != sa.nl_pid) {
		errno = EBUSY;
		return NULL;
	}
	q = queue_new(num, nbuffers);
	if (!q)
		return NULL;
	q->fd = fd;
	q->portid = sa.nl_pid;
	if (listed) {
		q->copy_mode = (uint8_t)ks.copy_mode;
		q->copy_range = ks.copy_range;
	}
	/* replies to the previous owner's requests may still wait in the
	 * socket: no sequence number of ours should match them */
	q->seq = (uint32_t)(nfqb_now_ns() ^ ((uint64_t)getpid() << 20));
	/* packets the previous owner received and never decided (it died)
	 * are still queued: they get the default verdict before anything
	 * of ours is batched (see nfqb_book_add_packet()) */
	q->adopted = true;
	/* unlisted: a flags request that changes nothing (mask 0) is
	 * answered 0 only for the queue's own socket (EPERM for another's,
	 * or without CAP_NET_ADMIN; ENODEV if it is not bound) */
	if (setup_socket(q) < 0 || (!listed && config_flags(q, 0, 0) < 0) ||
	    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC) < 0) {
		err = errno;
		q->fd = -1;	/* the caller's still */
		queue_free(q);
		errno = err;
		return NULL;
	}
	return q;
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_adopt(int fd, uint16_t num)
{
	return nfqb_queue_adopt_n(fd, num, NFQB_DEFAULT_BUFFERS);
}
