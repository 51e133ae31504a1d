// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Queue life and configuration: open/bind, the settings the kernel keeps
 * (each acknowledged, its error returned), the socket options, close.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "msg.h"
#include "queue-int.h"
#include "queue.h"
#include "sys.h"

/* The memory of the parts that depend on the number of buffers: the
 * buffers and descriptors, the book. */
struct parts {
	struct nfqb_bufs bufs;
	struct nfqb_book book;
};

/* The book's entries at most (a power of two). */
#define BOOK_MAX	(1u << 18)

/*
 * Entries of the book of a queue with @count buffers and a kernel queue
 * of @maxlen: it tracks every id from the oldest packet not settled to
 * the newest read, decided ones behind an undecided one too, so it takes
 * twice the queue's length: a packet held while the queue keeps flowing
 * stops nothing until that many ids have come after it. Past that, reads
 * wait (nfqb_book_space()): the packets stay in the kernel's queue.
 */
static uint32_t book_size(unsigned int count, uint32_t maxlen)
{
	uint64_t n = (uint64_t)count * 4 + 64;

	if (n < 2ull * maxlen)
		n = 2ull * maxlen;
	return n < BOOK_MAX ? (uint32_t)n : BOOK_MAX;
}

static int alloc_parts(struct parts *m, struct nfqb_queue *q,
		       unsigned int count)
{
	if (nfqb_bufs_alloc(&m->bufs, q, count) < 0)
		return -1;
	if (nfqb_book_alloc(&m->book, book_size(count, q->set.maxlen)) < 0) {
		nfqb_bufs_free(&m->bufs);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* New buffers for an idle queue. The old descriptors stay until close: a
 * dead handle may still point there. */
static int resize_buffers(struct nfqb_queue *q, unsigned int count)
{
	struct parts m;

	if (q->bufs.retired_n == NFQB_MAX_RETIRED) {
		errno = EBUSY;
		return -1;
	}
	if (alloc_parts(&m, q, count) < 0)
		return -1;
	nfqb_bufs_replace(&q->bufs, &m.bufs);
	nfqb_book_replace(&q->book, &m.book);
	return 0;
}

static bool queue_idle(struct nfqb_queue *q)
{
	return nfqb_book_settled(&q->book) && nfqb_bufs_all_free(&q->bufs);
}

/* Configuration requests: msg.c builds each (numbered 0), req.c numbers
 * it and waits for its answer. */
#define REQ_WORDS	64

static int request(struct nfqb_queue *q, uint32_t *msg, size_t len)
{
	return nfqb_req_round_trip(&q->req, &q->req_in, msg, len);
}

static int config_cmd(struct nfqb_queue *q, uint8_t cmd)
{
	uint32_t m[REQ_WORDS];

	return request(q, m, nfqb_msg_config_cmd(m, 0, q->sk.num, cmd, 0));
}

static int config_params(struct nfqb_queue *q, uint8_t mode, uint32_t range)
{
	uint32_t m[REQ_WORDS];

	return request(q, m, nfqb_msg_config_params(m, 0, q->sk.num, mode,
						    range));
}

static int config_maxlen(struct nfqb_queue *q, uint32_t maxlen)
{
	uint32_t m[REQ_WORDS];

	return request(q, m, nfqb_msg_config_maxlen(m, 0, q->sk.num, maxlen));
}

static int config_flags(struct nfqb_queue *q, uint32_t flags, uint32_t mask)
{
	uint32_t m[REQ_WORDS];

	return request(q, m, nfqb_msg_config_flags(m, 0, q->sk.num, flags,
						   mask));
}

/* Bound and in our copy mode at once (one message). */
static int config_bind(struct nfqb_queue *q)
{
	uint32_t m[REQ_WORDS];

	return request(q, m, nfqb_msg_config_bind(m, 0, q->sk.num,
						  q->set.copy_mode,
						  q->set.copy_range));
}

static int bind_queue(struct nfqb_queue *q)
{
	struct nfqb_kstats ks;
	bool bound, ours;
	int err;

	/* bound and in our copy mode at once: no packet queued in between
	 * (the kernel drops what comes to a queue without a copy mode) */
	if (config_bind(q) == 0)
		return 0;
	/* The kernel answers EPERM both without CAP_NET_ADMIN and for a
	 * queue another socket holds, and EBUSY to a bind sent again after
	 * its first acknowledgement was lost: tell them apart (the bind's
	 * errno kept: looking at the kernel's table sets its own). */
	err = errno;
	bound = nfqb_kstats_get(q->sk.num, &ks, sizeof(ks)) == 0;
	ours = bound && ks.portid == q->sk.portid;
	if ((err == EPERM || err == EBUSY) && ours)	/* mode again */
		return config_params(q, q->set.copy_mode, q->set.copy_range);
	if (err == EPERM && bound)
		err = EBUSY;
	else if (err == ENOENT)
		err = EPERM;
	errno = err;
	return -1;
}

static void queue_defaults(struct nfqb_queue *q, uint16_t num)
{
	q->sk = (struct nfqb_sock){
		.fd = -1, .epfd = -1, .evfd = -1, .tfd = -1, .wake_fd = -1, .num = num,
	};
	q->set = (struct nfqb_settings){
		.coalesce = true,
		.default_verdict = NFQB_ACCEPT,
		.batch_limit = NFQB_DEFAULT_BATCH_LIMIT,
		.latency_us = NFQB_DEFAULT_LATENCY_US,
		.linger_us = NFQB_DEFAULT_LINGER_US,
		.copy_mode = NFQB_COPY_PACKET,
		.copy_range = 0xffff,
		.maxlen = NFQB_KERNEL_MAXLEN,
	};
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void queue_free(struct nfqb_queue *q)
{
	close_fd(q->sk.fd);
	close_fd(q->sk.evfd);
	close_fd(q->sk.epfd);
	close_fd(q->sk.tfd);
	nfqb_rx_free(&q->rx);
	nfqb_book_free(&q->book);
	nfqb_bufs_free(&q->bufs);
	nfqb_tx_free(&q->tx);
	free(q);
}

/* What each step sees of the rest of @q. */
static void link_views(struct nfqb_queue *q)
{
	q->book_in = (struct nfqb_book_in){
		.set = &q->set,
		.sk = &q->sk,
		.bufs = &q->bufs,
		.ctr = &q->ctr,
	};
	q->rx_in = (struct nfqb_rx_in){
		.sk = &q->sk,
		.set = &q->set,
		.bufs = &q->bufs,
		.book = &q->book,
		.book_in = &q->book_in,
		.ctr = &q->ctr,
	};
	q->req_in = (struct nfqb_req_in){
		.sk = &q->sk,
		.rx = &q->rx,
		.rx_in = &q->rx_in,
		.ctr = &q->ctr,
	};
	q->pace_in = (struct nfqb_pace_in){
		.sk = &q->sk,
		.set = &q->set,
		.rx = &q->rx,
		.bufs = &q->bufs,
		.book = &q->book,
		.expire_due = &q->book.expire_due,
		.tx_due = &q->tx.due,
		.deadline = &q->loop.recv_deadline,
		.woken = &q->wake.pending,
		.poke_failed = &q->wake.poke_failed,
		.ctr = &q->ctr,
	};
	q->tx_in = (struct nfqb_tx_in){
		.sk = &q->sk,
		.set = &q->set,
		.post = &q->post,
		.book = &q->book,
		.book_in = &q->book_in,
		.ctr = &q->ctr,
	};
}

struct nfqb_queue *nfqb_queue_new(uint16_t num, unsigned int nbuffers,
				  uint32_t seq)
{
	struct nfqb_queue *q = nfqb_calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	queue_defaults(q, num);
	nfqb_req_init(&q->req, seq);
	if (nfqb_tx_alloc(&q->tx, seq) < 0) {
		free(q);
		return NULL;
	}
	if (nfqb_rx_alloc(&q->rx) < 0 ||
	    nfqb_bufs_alloc(&q->bufs, q, nbuffers) < 0 ||
	    nfqb_book_alloc(&q->book, book_size(nbuffers, q->set.maxlen)) < 0) {
		queue_free(q);
		errno = ENOMEM;
		return NULL;
	}
	link_views(q);
	return q;
}

/* The socket's receive buffer, for the linger (pace.c): a pause gathers
 * no more than fits in half of it. */
static void note_rcvbuf(struct nfqb_queue *q)
{
	socklen_t len = sizeof(int);
	int v = 0;

	if (getsockopt(q->sk.fd, SOL_SOCKET, SO_RCVBUF, &v, &len) < 0 || v < 0)
		v = 0;
	q->set.rcvbuf = (uint32_t)v;
}

/* Socket options, wake-up eventfd and epoll around the bound socket. */
static int setup_socket(struct nfqb_queue *q)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;

	/* error replies carry only the header of what failed (a verdict
	 * with a payload would otherwise come back whole) */
	struct nfqb_sock *sk = &q->sk;

	setsockopt(sk->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(sk->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	note_rcvbuf(q);
	sk->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	sk->epfd = epoll_create1(EPOLL_CLOEXEC);
	sk->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sk->evfd < 0 || sk->epfd < 0 || sk->tfd < 0)
		return -1;
	ev.data.fd = sk->fd;
	if (epoll_ctl(sk->epfd, EPOLL_CTL_ADD, sk->fd, &ev) < 0)
		return -1;
	ev.data.fd = sk->evfd;
	return epoll_ctl(sk->epfd, EPOLL_CTL_ADD, sk->evfd, &ev);
}

static int check_socket(int fd, struct sockaddr_nl *sa);

/* q->sk.fd, a netfilter netlink socket, bound to a port id (the kernel
 * picks one if it has none yet), with its wake-up eventfd and epoll. */
static int use_socket(struct nfqb_queue *q)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);

	if (getsockname(q->sk.fd, (struct sockaddr *)&sa, &salen) < 0)
		return -1;
	if (!sa.nl_pid) {
		sa = (struct sockaddr_nl){ .nl_family = AF_NETLINK };
		salen = sizeof(sa);
		if (bind(q->sk.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    getsockname(q->sk.fd, (struct sockaddr *)&sa, &salen) < 0)
			return -1;
	}
	q->sk.portid = sa.nl_pid;
	return setup_socket(q);
}

/* Bind queue @q (its socket set up) as nfqb_queue_open() does. */
static int start_queue(struct nfqb_queue *q)
{
	int err;

	if (bind_queue(q) < 0)
		return -1;
	/* GSO packets whole: no segmentation in the kernel before queueing
	 * (one message, one verdict per super-packet); a kernel without the
	 * flag segments them, as it always did */
	if (config_flags(q, NFQB_F_GSO, NFQB_F_GSO) < 0 &&
	    errno != EOPNOTSUPP && errno != EINVAL) {
		err = errno;
		config_cmd(q, NFQNL_CFG_CMD_UNBIND);
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * The end of setting up a queue on the caller's socket q->sk.fd: if @ok,
 * close-on-exec set and the queue returned; else (or if that fails) the
 * queue freed, the socket left to the caller, NULL with errno.
 */
static struct nfqb_queue *own_fd(struct nfqb_queue *q, bool ok)
{
	int fd = q->sk.fd, err;

	if (ok && fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC) == 0)
		return q;
	err = errno;
	q->sk.fd = -1;	/* the caller's still */
	queue_free(q);
	errno = err;
	return NULL;
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_open_fd(int fd, uint16_t num)
{
	struct sockaddr_nl sa;
	struct nfqb_queue *q;

	/* a netfilter netlink socket, bound or not (ENOTCONN: bound next) */
	if (check_socket(fd, &sa) < 0 && errno != ENOTCONN)
		return NULL;
	q = nfqb_queue_new(num, NFQB_DEFAULT_BUFFERS, (uint32_t)time(NULL));
	if (!q)
		return NULL;
	q->sk.fd = fd;
	return own_fd(q, use_socket(q) == 0 && start_queue(q) == 0);
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_open(uint16_t num)
{
	struct nfqb_queue *q = nfqb_queue_new(num, NFQB_DEFAULT_BUFFERS,
					       (uint32_t)time(NULL));
	int err;

	if (!q)
		return NULL;
	q->sk.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			  NETLINK_NETFILTER);
	if (q->sk.fd < 0 || use_socket(q) < 0)
		goto fail;
	if (start_queue(q) < 0)
		goto fail;
	return q;

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
		if (nfqb_tx_flush(&q->tx, &q->tx_in, NFQB_FLUSH_CLOSE, true,
				  nfqb_now_ns()) >= 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
		nfqb_sys_nap(5);
	}
	errno = EAGAIN;
	return -1;
}

/*
 * Close and pool stop: every packet the kernel queued to us before the
 * stop gets its decision or the default verdict. New packets are kept out
 * first (queue length 0: the kernel drops them, or accepts them when the
 * default is accept, as with fail-open), what the socket still holds is
 * read and given the default, then the queue is unbound. Every step is
 * taken whatever failed before: 0, or -1 with the errno of the first
 * failure.
 */
static int drain_and_unbind(struct nfqb_queue *q)
{
	uint32_t fm[2] = { q->set.default_verdict == NFQB_ACCEPT ?
			   NFQB_F_FAIL_OPEN : 0, NFQB_F_FAIL_OPEN };
	unsigned int rounds;
	int err = 0;

	nfqb_post_quiesce(&q->post);
	nfqb_book_default_all(&q->book, &q->book_in);
	if (flush_all(q) < 0)
		err = errno;
	if (q->sk.fd >= 0) {
		if (config_flags(q, fm[0], fm[1]) == 0)
			config_maxlen(q, 0);
		for (rounds = 0; rounds < 1000; rounds++) {
			int r = nfqb_rx_read_any(&q->rx, &q->rx_in, q->rx.vlen);

			if (r < 0 && errno != ENOBUFS)
				break;
			nfqb_book_default_all(&q->book, &q->book_in);
		}
	}
	/* From here on a decision is refused (ESHUTDOWN): once the threads
	 * inside one are out, every packet is decided or gets the default,
	 * and all of it is sent before the unbind. */
	atomic_store(&q->shut, true);
	nfqb_post_quiesce(&q->post);
	nfqb_book_default_all(&q->book, &q->book_in);
	if (flush_all(q) < 0 && !err)
		err = errno;
	if (q->sk.fd >= 0 && config_cmd(q, NFQNL_CFG_CMD_UNBIND) < 0 &&
	    errno != ENODEV && !err)
		err = errno;
	return err ? nfqb_fail(err) : 0;
}

/*
 * Any thread; other threads may be deciding packets of @q meanwhile (a
 * decision that returned 0 is sent before the unbind; one that comes later
 * is refused with ESHUTDOWN). The memory stays until nfqb_queue_close().
 */
int nfqb_queue_shutdown(struct nfqb_queue *q)
{
	if (atomic_load(&q->shut))
		return 0;
	return drain_and_unbind(q);
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

NFQB_EXPORT int nfqb_queue_stats(const struct nfqb_queue *q,
				 struct nfqb_stats *st, size_t size)
{
	if (!q || !st || size % sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	nfqb_counters_read(&q->ctr, st, size);
	return 0;
}

/* A NULL @q: 0 (which cannot carry -1), errno EINVAL. */
NFQB_EXPORT uint16_t nfqb_queue_num(const struct nfqb_queue *q)
{
	if (!q) {
		errno = EINVAL;
		return 0;
	}
	return q->sk.num;
}

NFQB_EXPORT int nfqb_queue_fd(const struct nfqb_queue *q)
{
	if (!q)
		return nfqb_fail(EINVAL);
	return q->sk.epfd;
}

NFQB_EXPORT int nfqb_queue_socket_fd(const struct nfqb_queue *q)
{
	if (!q)
		return nfqb_fail(EINVAL);
	return q->sk.fd;
}

NFQB_EXPORT int nfqb_queue_set_nonblock(struct nfqb_queue *q, bool on)
{
	if (!q)
		return nfqb_fail(EINVAL);
	q->set.nonblock = on;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_copy_mode(struct nfqb_queue *q,
					 enum nfqb_copy_mode mode,
					 uint32_t range)
{
	/* the kernel takes any mode without a word: refuse them here; and
	 * NONE too: in it the kernel queues nothing, it drops every packet
	 * sent to the queue (counted nowhere, bypass or not) */
	if (!q || (mode != NFQB_COPY_META && mode != NFQB_COPY_PACKET))
		return nfqb_fail(EINVAL);
	/* every buffer holds the largest message: nothing to resize */
	if (config_params(q, (uint8_t)mode, range) < 0)
		return -1;
	q->set.copy_mode = (uint8_t)mode;
	q->set.copy_range = (range > 0xffff || range == 0) ? 0xffff : range;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_maxlen(struct nfqb_queue *q, uint32_t maxlen)
{
	if (!q)
		return nfqb_fail(EINVAL);
	/* the book first: a longer queue needs it longer (never shorter) */
	if (nfqb_book_grow(&q->book, book_size(q->bufs.nslots, maxlen)) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (config_maxlen(q, maxlen) < 0)
		return -1;
	q->set.maxlen = maxlen;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags,
				     uint32_t mask)
{
	if (!q)
		return nfqb_fail(EINVAL);
	return config_flags(q, flags, mask);
}

NFQB_EXPORT int nfqb_queue_set_large(struct nfqb_queue *q,
				     enum nfqb_large policy)
{
	if (!q || (policy != NFQB_LARGE_PASS && policy != NFQB_LARGE_WHOLE))
		return nfqb_fail(EINVAL);
	q->set.large = (uint8_t)policy;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_rcvbuf(struct nfqb_queue *q, size_t bytes)
{
	int v = bytes > 0x7fffffff / 2 ? 0x7fffffff / 2 : (int)bytes;

	if (!q)
		return nfqb_fail(EINVAL);
	if (setsockopt(q->sk.fd, SOL_SOCKET, SO_RCVBUFFORCE, &v,
		       sizeof(v)) < 0 &&
	    setsockopt(q->sk.fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
		return -1;
	note_rcvbuf(q);
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_enobufs(struct nfqb_queue *q,
				       enum nfqb_enobufs_policy policy)
{
	int on;

	if (!q ||
	    (policy != NFQB_ENOBUFS_REPORT && policy != NFQB_ENOBUFS_IGNORE))
		return nfqb_fail(EINVAL);
	on = policy == NFQB_ENOBUFS_IGNORE;
	return setsockopt(q->sk.fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on,
			  sizeof(on));
}

NFQB_EXPORT int nfqb_queue_set_buffers(struct nfqb_queue *q,
				       unsigned int count)
{
	if (!q || count == 0 || count > 65536)
		return nfqb_fail(EINVAL);
	if (!queue_idle(q)) {
		errno = EBUSY;
		return -1;
	}
	return resize_buffers(q, count);
}

NFQB_EXPORT int nfqb_queue_set_default_verdict(struct nfqb_queue *q,
					       uint32_t verdict)
{
	if (!q || (verdict != NFQB_ACCEPT && verdict != NFQB_DROP))
		return nfqb_fail(EINVAL);
	q->set.default_verdict = verdict;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_coalesce(struct nfqb_queue *q, bool on)
{
	if (!q)
		return nfqb_fail(EINVAL);
	q->set.coalesce = on;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_batch_limit(struct nfqb_queue *q,
					   unsigned int limit)
{
	if (!q || limit == 0 || limit > 65536)
		return nfqb_fail(EINVAL);
	q->set.batch_limit = limit;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_latency(struct nfqb_queue *q, uint32_t usec)
{
	if (!q)
		return nfqb_fail(EINVAL);
	q->set.latency_us = usec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_linger(struct nfqb_queue *q, uint32_t usec)
{
	if (!q)
		return nfqb_fail(EINVAL);
	if (usec == NFQB_LINGER_AUTO) {
		q->set.linger_fixed = false;
		q->set.linger_us = NFQB_DEFAULT_LINGER_US;
		return 0;
	}
	if (usec >= 1000000)
		return nfqb_fail(EINVAL);
	q->set.linger_fixed = true;
	q->set.linger_us = usec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_verdict_timeout(struct nfqb_queue *q,
					       uint32_t msec)
{
	if (!q)
		return nfqb_fail(EINVAL);
	q->set.timeout_ms = msec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_recv_timeout(struct nfqb_queue *q,
					    uint32_t msec)
{
	if (!q)
		return nfqb_fail(EINVAL);
	q->set.recv_timeout_ms = msec;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_read_sleep(struct nfqb_queue *q, bool on)
{
	if (!q)
		return nfqb_fail(EINVAL);
	if (on) {
		if (q->sk.fd < 0)
			return nfqb_fail(EINVAL);	/* no socket */
		q->wake.poke_fd = q->sk.fd;
		q->wake.portid = q->sk.portid;
		/* may this process wake a read that sleeps? One poke tells
		 * (the next read drops it): EPERM without CAP_NET_ADMIN */
		atomic_store(&q->wake.poke_failed, false);
		if (nfqb_wake_poke(&q->wake) < 0 && errno != EAGAIN &&
		    errno != ENOBUFS) {
			atomic_store(&q->wake.poke_failed, false);
			return -1;
		}
	}
	q->set.read_sleep = on;
	return 0;
}

NFQB_EXPORT int nfqb_queue_set_wake_fd(struct nfqb_queue *q, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (!q || fd < -1 || (fd >= 0 && (fd == q->sk.fd || fd == q->sk.evfd ||
					  fd == q->sk.epfd || fd == q->sk.tfd))) {
		errno = EINVAL;
		return -1;
	}
	if (q->sk.epfd < 0) {
		errno = EINVAL;		/* no socket (a unit test's queue) */
		return -1;
	}
	if (fd == q->sk.wake_fd)
		return 0;
	if (fd >= 0 && epoll_ctl(q->sk.epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -1;
	/* (the old one may be closed already: its entry went with it) */
	if (q->sk.wake_fd >= 0)
		epoll_ctl(q->sk.epfd, EPOLL_CTL_DEL, q->sk.wake_fd, NULL);
	q->sk.wake_fd = fd;
	return 0;
}

unsigned int nfqb_queue_nready(const struct nfqb_queue *q)
{
	return q->book.nready;
}

unsigned int nfqb_queue_buffers(const struct nfqb_queue *q)
{
	return q->bufs.nslots;
}

/* A NULL @q: false, errno EINVAL. */
NFQB_EXPORT bool nfqb_queue_fallback(const struct nfqb_queue *q)
{
	if (!q) {
		errno = EINVAL;
		return false;
	}
	return q->book.fallback;
}



/* --- Handing a bound queue from one process to the next ------------------ */

/* Send every decision, the default verdict for what is undecided; true if
 * nothing is owed to the kernel any more (an open gap of unreadable
 * messages is: its packets are queued and undecided). */
static int send_all_owed(struct nfqb_queue *q)
{
	nfqb_post_quiesce(&q->post);
	nfqb_book_default_all(&q->book, &q->book_in);
	if (flush_all(q) < 0)
		return -1;
	if (!nfqb_book_settled(&q->book)) {
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
static int hand_over(struct nfqb_queue *q)
{
	struct epoll_event ev = { 0 };
	int fd;

	if (atomic_load(&q->shut)) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (q->sk.fd < 0) {
		errno = ENOTSOCK;
		return -1;
	}
	if (send_all_owed(q) < 0)
		return -1;
	atomic_store(&q->shut, true);
	if (send_all_owed(q) < 0)
		return -1;
	fd = q->sk.fd;
	epoll_ctl(q->sk.epfd, EPOLL_CTL_DEL, fd, &ev);
	q->sk.fd = -1;
	return fd;
}

int nfqb_queue_handover(struct nfqb_queue *q, bool anyway)
{
	int fd = hand_over(q), err;

	if (fd >= 0 || !anyway)
		return fd;
	/* the socket is the caller's all the same: nothing more is sent
	 * (what was owed stays queued, for the next owner's default) */
	err = errno;
	atomic_store(&q->shut, true);
	q->sk.fd = -1;
	errno = err;
	return -1;
}

NFQB_EXPORT int nfqb_queue_detach(struct nfqb_queue *q)
{
	int fd;

	if (!q) {
		errno = EINVAL;
		return -1;
	}
	if (q->book.nready) {
		/* read from the socket, not handed out: only the application
		 * may decide them (nfqb_recv() hands them out first) */
		errno = EBUSY;
		return -1;
	}
	fd = nfqb_queue_handover(q, false);
	if (fd < 0)
		return -1;
	queue_free(q);
	return fd;
}

/* @fd is a bound netfilter netlink socket: its address in @sa. */
static int check_socket(int fd, struct sockaddr_nl *sa)
{
	socklen_t len;
	int v[2];

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	len = sizeof(v[0]);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v[0], &len) < 0)
		return -1;
	len = sizeof(v[1]);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v[1], &len) < 0)
		return -1;
	if (v[0] != AF_NETLINK || v[1] != NETLINK_NETFILTER) {
		errno = EPROTOTYPE;
		return -1;
	}
	len = sizeof(*sa);
	if (getsockname(fd, (struct sockaddr *)sa, &len) < 0)
		return -1;
	if (!sa->nl_pid) {
		errno = ENOTCONN;
		return -1;
	}
	return 0;
}

/*
 * The kernel's own word, read without touching the socket (what it holds
 * is the queue's packets, for us to take only once the queue is ours):
 * queue @num is bound to port id @portid. The file is root's (0440): a
 * user keeping only CAP_NET_ADMIN asks the kernel instead (the caller).
 * 1: listed in @ks, 0: not readable, -1 with errno: not ours.
 */
static int kernel_says(uint16_t num, uint32_t portid, struct nfqb_kstats *ks)
{
	if (nfqb_kstats_get(num, ks, sizeof(*ks)) < 0) {
		if (errno == EACCES || errno == EPERM)
			return 0;
		errno = ENODEV;
		return -1;
	}
	if (ks->portid != portid) {
		errno = EBUSY;
		return -1;
	}
	return 1;
}

struct nfqb_queue *nfqb_queue_adopt_n(int fd, uint16_t num,
				      unsigned int nbuffers)
{
	struct sockaddr_nl sa = { 0 };
	struct nfqb_kstats ks;
	struct nfqb_queue *q;
	uint32_t seq;
	int listed;

	if (check_socket(fd, &sa) < 0)
		return NULL;
	listed = kernel_says(num, sa.nl_pid, &ks);
	if (listed < 0)
		return NULL;
	/* replies to the previous owner's requests may still wait in the
	 * socket: no sequence number of ours should match them */
	seq = (uint32_t)(nfqb_now_ns() ^ ((uint64_t)getpid() << 20));
	q = nfqb_queue_new(num, nbuffers, seq);
	if (!q)
		return NULL;
	q->sk.fd = fd;
	q->sk.portid = sa.nl_pid;
	if (listed) {
		q->set.copy_mode = (uint8_t)ks.copy_mode;
		q->set.copy_range = ks.copy_range;
	}
	/* packets the previous owner received and never decided (it died)
	 * are still queued: they get the default verdict before anything
	 * of ours is batched (see book.c's orphans_head()) */
	q->sk.adopted = true;
	/* unlisted: a flags request that changes nothing (mask 0) is
	 * answered 0 only for the queue's own socket (EPERM for another's,
	 * or without CAP_NET_ADMIN; ENODEV if it is not bound) */
	return own_fd(q, setup_socket(q) == 0 &&
			 (listed || config_flags(q, 0, 0) == 0));
}

NFQB_EXPORT struct nfqb_queue *nfqb_queue_adopt(int fd, uint16_t num)
{
	return nfqb_queue_adopt_n(fd, num, NFQB_DEFAULT_BUFFERS);
}
