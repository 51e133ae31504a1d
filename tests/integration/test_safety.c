// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Verdict safety under injected failures, against the real kernel (issue 9):
 * each test in its own network namespace (see harness.h), with its own
 * iptables NFQUEUE rule and loopback UDP traffic carrying sequence numbers;
 * what happened is checked where it shows, at the receiver (SO_RCVMARK) and
 * in the kernel's queue_total.
 *
 * Faults are injected by interposition: this program defines sendmsg(),
 * sendto(), send(), sendmmsg(), recvmmsg(), recvmsg() and read(). The
 * library calls them through its PLT, so these definitions win (the
 * program is linked with -export-dynamic so that they are in its dynamic
 * symbol table whatever the library references); each forwards to the next
 * definition (libc, or a sanitizer's interceptor) found with
 * dlsym(RTLD_NEXT). They act only on the queue's own socket (fi_fd; read():
 * on eventfds) and only while armed; all their state is atomic (the library
 * sends from whichever thread flushes).
 *
 * - Sends: a datagram whose first netlink message is NFQNL_MSG_VERDICT or
 *   NFQNL_MSG_VERDICT_BATCH fails with a chosen errno, N times (count mode)
 *   or until a deadline (time mode). Configuration messages always pass.
 * - Receives: one chosen packet message (found by the seq in its payload)
 *   is corrupted in the library's buffer after the real recvmmsg/recvmsg:
 *   a bad NFQA_PAYLOAD length (the id still readable), or a destroyed
 *   NFQA_PACKET_HDR (the id unreadable).
 * - Preemption: reads of 8 bytes from an eventfd (the owner draining its
 *   wake-up eventfd) and reads of the queue's socket are delayed, as if the
 *   thread were preempted there: other threads' decisions land in the
 *   middle of the owner's wake-up.
 *
 * nfqb_queue_interrupt() is new in 0.2: it is looked up with dlsym() so this
 * file links against a library without it (the test that needs it fails).
 *
 * The tests (test case in brackets; CK_RUN_CASE=name runs one case):
 *  [send]    send_fail_drop_kept, send_fail_long_blocked_owner,
 *            send_fail_long_flush_poll, send_fail_no_cover: a failed
 *            verdict send keeps its decisions, is retried and counted, is
 *            never covered by a later batch, and is not reported as a
 *            receive overflow (ENOBUFS).
 *  [handle]  dead_handle: EALREADY on a handle after its verdict, whatever
 *            became of its descriptor.
 *  [wake]    blocked_owner_wake(_poll): decisions of other threads wake an
 *            owner blocked in nfqb_recv() or polling nfqb_queue_fd().
 *  [timers]  head_expiry_no_traffic, idle_after_held, timeout_frees_buffers:
 *            nothing decided waits behind an expired head,
 *            nfqb_queue_next_timeout() tells the truth, an idle owner uses
 *            no CPU and is interrupted (signal, nfqb_queue_interrupt()),
 *            expired packets give their buffers back.
 *  [config]  config_buffers_held, config_full_socket: configuration and
 *            close complete promptly without a free buffer or socket room.
 *  [corrupt] corrupt_payload_len, corrupt_packet_hdr: a packet message we
 *            cannot parse gets the default verdict, by id or by gap.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define PORT		5031
#define QNUM		11
/* A seq the owner threads take as "stop"; they drop that packet. */
#define STOP_SEQ	60000u

#define NLT(t)		((uint16_t)((NFNL_SUBSYS_QUEUE << 8) | (t)))

/* ======================================================================
 * Fault injection
 * ====================================================================== */

/* The queue socket the faults apply to (-1: none). */
static atomic_int fi_fd = -1;

/* sends: count mode (failures left) and time mode (fail until, ns) */
static atomic_int fi_send_left;
static _Atomic uint64_t fi_send_until;
static atomic_int fi_send_errno = ENOBUFS;
static atomic_uint fi_send_injected;	/* verdict sends made to fail */
static atomic_uint fi_send_passed;	/* verdict sends let through */

/* receives: 0 off, RX_BAD_PAYLOAD_LEN or RX_BAD_PACKET_HDR */
enum { RX_OFF = 0, RX_BAD_PAYLOAD_LEN = 1, RX_BAD_PACKET_HDR = 2 };
static atomic_int fi_rx_mode;
static atomic_uint fi_rx_seq;		/* seq of the packet to corrupt */
static atomic_uint fi_rx_done;		/* corruptions made (at most 1) */
static _Atomic uint32_t fi_rx_id;	/* kernel id of the corrupted one */

/* eventfd reads: delay (us, 0 off), and how many were delayed */
static atomic_uint fi_evread_delay_us;
static atomic_uint fi_evread_delayed;
/* the queue socket's reads: the same */
static atomic_uint fi_sockread_delay_us;
static atomic_uint fi_sockread_delayed;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *real_sym(void *_Atomic *cache, const char *name)
{
	void *f = atomic_load(cache);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		atomic_store(cache, f);
	}
	return f;
}

#define REAL(name, type) \
	({ static void *_Atomic cache_; (type)real_sym(&cache_, #name); })

/* Watch the socket of @q from now on; nothing armed. */
static void fi_watch(struct nfqb_queue *q)
{
	atomic_store(&fi_send_left, 0);
	atomic_store(&fi_send_until, 0);
	atomic_store(&fi_send_injected, 0);
	atomic_store(&fi_send_passed, 0);
	atomic_store(&fi_rx_mode, RX_OFF);
	atomic_store(&fi_rx_done, 0);
	atomic_store(&fi_evread_delay_us, 0);
	atomic_store(&fi_evread_delayed, 0);
	atomic_store(&fi_sockread_delay_us, 0);
	atomic_store(&fi_sockread_delayed, 0);
	atomic_store(&fi_fd, q ? nfqb_queue_socket_fd(q) : -1);
}

/* The next @n verdict sends fail with @err. */
static void fi_send_fail_count(int err, int n)
{
	atomic_store(&fi_send_errno, err);
	atomic_store(&fi_send_left, n);
}

/* Every verdict send fails with @err for @ms from now. */
static void fi_send_fail_for(int err, unsigned int ms)
{
	atomic_store(&fi_send_errno, err);
	atomic_store(&fi_send_until, mono_ns() + (uint64_t)ms * 1000000ull);
}

static void fi_send_disarm(void)
{
	atomic_store(&fi_send_left, 0);
	atomic_store(&fi_send_until, 0);
}

static bool is_verdict_type(uint16_t type)
{
	return type == NLT(NFQNL_MSG_VERDICT) ||
	       type == NLT(NFQNL_MSG_VERDICT_BATCH);
}

/* Decide whether this verdict send fails; counts it either way. */
static bool fi_send_should_fail(int fd, uint16_t type)
{
	uint64_t until;
	int left;

	if (fd < 0 || fd != atomic_load(&fi_fd) || !is_verdict_type(type))
		return false;
	until = atomic_load(&fi_send_until);
	if (until && mono_ns() < until) {
		atomic_fetch_add(&fi_send_injected, 1);
		return true;
	}
	left = atomic_load(&fi_send_left);
	while (left > 0) {
		if (atomic_compare_exchange_weak(&fi_send_left, &left,
						 left - 1)) {
			atomic_fetch_add(&fi_send_injected, 1);
			return true;
		}
	}
	atomic_fetch_add(&fi_send_passed, 1);
	return false;
}

/* nlmsg_type of the first message in @iov (gathered across iovecs). */
static bool first_type_iov(const struct iovec *iov, size_t iovlen,
			   uint16_t *type)
{
	struct nlmsghdr h;
	size_t got = 0, i;

	for (i = 0; iov && i < iovlen && got < sizeof(h); i++) {
		size_t n = iov[i].iov_len;

		if (n > sizeof(h) - got)
			n = sizeof(h) - got;
		if (n && iov[i].iov_base)
			memcpy((char *)&h + got, iov[i].iov_base, n);
		got += n;
	}
	if (got < sizeof(h))
		return false;
	*type = h.nlmsg_type;
	return true;
}

static bool send_fails_msg(int fd, const struct msghdr *msg)
{
	uint16_t type;

	return msg && fd == atomic_load(&fi_fd) &&
	       first_type_iov(msg->msg_iov, msg->msg_iovlen, &type) &&
	       fi_send_should_fail(fd, type);
}

static bool send_fails_buf(int fd, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	uint16_t type;

	return fd == atomic_load(&fi_fd) && first_type_iov(&iov, 1, &type) &&
	       fi_send_should_fail(fd, type);
}

/* Fail an interposed send: the injected error, or ENOSYS without a real
 * function to forward to. */
static bool refuse(bool inject, bool have_real)
{
	if (inject) {
		errno = atomic_load(&fi_send_errno);
		return true;
	}
	if (!have_real) {
		errno = ENOSYS;
		return true;
	}
	return false;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t (*real)(int, const struct msghdr *, int) =
		REAL(sendmsg, ssize_t (*)(int, const struct msghdr *, int));

	if (refuse(send_fails_msg(fd, msg), real != NULL))
		return -1;
	return real(fd, msg, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       __CONST_SOCKADDR_ARG addr, socklen_t alen)
{
	ssize_t (*real)(int, const void *, size_t, int, __CONST_SOCKADDR_ARG,
			socklen_t) =
		REAL(sendto, ssize_t (*)(int, const void *, size_t, int,
					 __CONST_SOCKADDR_ARG, socklen_t));

	if (refuse(send_fails_buf(fd, buf, len), real != NULL))
		return -1;
	return real(fd, buf, len, flags, addr, alen);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	ssize_t (*real)(int, const void *, size_t, int) =
		REAL(send, ssize_t (*)(int, const void *, size_t, int));

	if (refuse(send_fails_buf(fd, buf, len), real != NULL))
		return -1;
	return real(fd, buf, len, flags);
}

int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	int (*real)(int, struct mmsghdr *, unsigned int, int) =
		REAL(sendmmsg, int (*)(int, struct mmsghdr *, unsigned int,
				       int));

	if (refuse(vec && vlen && send_fails_msg(fd, &vec[0].msg_hdr),
		   real != NULL))
		return -1;
	return real(fd, vec, vlen, flags);
}

/* The seq in the UDP payload of an IPv4 packet, as nfqbt_pkt_seq(). */
static bool ip_seq(const uint8_t *d, size_t len, uint32_t *seq)
{
	size_t ihl;
	uint32_t v;

	if (len < 20 || (d[0] >> 4) != 4 || d[9] != IPPROTO_UDP)
		return false;
	ihl = (size_t)(d[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8 + 4)
		return false;
	memcpy(&v, d + ihl + 8, 4);
	*seq = ntohl(v);
	return true;
}

/* Corrupt the packet message of the armed seq in one received datagram. */
static void fi_corrupt_datagram(uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off + NLMSG_HDRLEN <= len) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(buf + off);
		size_t mlen = nlh->nlmsg_len, a;
		struct nlattr *hdr = NULL, *pl = NULL;
		unsigned int zero = 0;
		uint32_t seq, id;
		int mode;

		if (mlen < NLMSG_HDRLEN || off + mlen > len)
			return;
		a = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
		while (nlh->nlmsg_type == NLT(NFQNL_MSG_PACKET) &&
		       a + NLA_HDRLEN <= mlen) {
			struct nlattr *at = (struct nlattr *)((uint8_t *)nlh +
							      a);

			if (at->nla_len < NLA_HDRLEN || a + at->nla_len > mlen)
				break;
			if ((at->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR)
				hdr = at;
			else if ((at->nla_type & NLA_TYPE_MASK) == NFQA_PAYLOAD)
				pl = at;
			a += NLA_ALIGN(at->nla_len);
		}
		mode = atomic_load(&fi_rx_mode);
		if (hdr && pl &&
		    hdr->nla_len >= NLA_HDRLEN +
				    sizeof(struct nfqnl_msg_packet_hdr) &&
		    ip_seq((uint8_t *)pl + NLA_HDRLEN, pl->nla_len - NLA_HDRLEN,
			   &seq) &&
		    seq == atomic_load(&fi_rx_seq) &&
		    atomic_compare_exchange_strong(&fi_rx_done, &zero, 1)) {
			struct nfqnl_msg_packet_hdr *ph =
				(void *)((uint8_t *)hdr + NLA_HDRLEN);
			size_t rest = mlen - (size_t)((uint8_t *)pl -
						      (uint8_t *)nlh);

			id = ntohl(ph->packet_id);
			atomic_store(&fi_rx_id, id);
			if (mode == RX_BAD_PAYLOAD_LEN) {
				/* runs past the end of the message */
				pl->nla_len = (uint16_t)(rest + 8);
			} else {
				/* shorter than an attribute header, and the
				 * id is gone */
				memset(ph, 0, sizeof(*ph));
				hdr->nla_len = 2;
				hdr->nla_type = 0x7fff;
			}
		}
		off += NLMSG_ALIGN(mlen);
	}
}

static void fi_corrupt_msg(int fd, struct msghdr *mh, size_t len, int flags)
{
	if (fd != atomic_load(&fi_fd) || atomic_load(&fi_rx_mode) == RX_OFF ||
	    atomic_load(&fi_rx_done) || (flags & MSG_PEEK) ||
	    (mh->msg_flags & MSG_TRUNC) || !mh->msg_iovlen ||
	    !mh->msg_iov || mh->msg_iov[0].iov_len < len)
		return;
	fi_corrupt_datagram(mh->msg_iov[0].iov_base, len);
}

/* The queue's socket read: the same preemption as the eventfd's. */
static void fi_preempt_sock(int fd)
{
	unsigned int delay = atomic_load(&fi_sockread_delay_us);

	if (delay && fd >= 0 && fd == atomic_load(&fi_fd)) {
		struct timespec ts = { .tv_nsec = (long)delay * 1000 };

		atomic_fetch_add(&fi_sockread_delayed, 1);
		nanosleep(&ts, NULL);
	}
}

int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
	     struct timespec *tmo)
{
	int (*real)(int, struct mmsghdr *, unsigned int, int,
		    struct timespec *) =
		REAL(recvmmsg, int (*)(int, struct mmsghdr *, unsigned int,
				       int, struct timespec *));
	int r, i, err;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	fi_preempt_sock(fd);
	r = real(fd, vec, vlen, flags, tmo);
	err = errno;
	for (i = 0; i < r; i++)
		fi_corrupt_msg(fd, &vec[i].msg_hdr, vec[i].msg_len, flags);
	errno = err;
	return r;
}

ssize_t recvmsg(int fd, struct msghdr *mh, int flags)
{
	ssize_t (*real)(int, struct msghdr *, int) =
		REAL(recvmsg, ssize_t (*)(int, struct msghdr *, int));
	ssize_t r;
	int err;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	fi_preempt_sock(fd);
	r = real(fd, mh, flags);
	err = errno;
	if (r > 0)
		fi_corrupt_msg(fd, mh, (size_t)r, flags);
	errno = err;
	return r;
}

/*
 * Preemption at the worst moment: while armed, every read() of 8 bytes from
 * an eventfd (how the library drains its wake-up eventfd) is delayed, as if
 * the reading thread were preempted just before it. A wake-up scheme that
 * loses no decision is indifferent to such a delay; one that clears a
 * "wake-up pending" flag and then reads the eventfd loses the decisions
 * posted in between.
 */
static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t (*real)(int, void *, size_t) =
		REAL(read, ssize_t (*)(int, void *, size_t));
	unsigned int delay = atomic_load(&fi_evread_delay_us);

	if (delay && count == sizeof(uint64_t) && fd >= 0 && is_eventfd(fd)) {
		struct timespec ts = { .tv_nsec = (long)delay * 1000 };

		atomic_fetch_add(&fi_evread_delayed, 1);
		nanosleep(&ts, NULL);
	}
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(fd, buf, count);
}

/* ======================================================================
 * Helpers
 * ====================================================================== */

static struct nfqb_queue *open_queue(uint16_t num)
{
	struct nfqb_queue *q = nfqbt_queue_open(num);

	fi_watch(q);
	return q;
}

static void close_queue(struct nfqb_queue *q)
{
	fi_watch(NULL);
	ck_assert_msg(nfqb_queue_close(q) == 0, "nfqb_queue_close: %s",
		      strerror(errno));
}

/* nfqbt_flow_start() on PORT and QNUM, the queue the faults apply to. */
static void flow_start(struct nfqbt_flow *f, const struct nfqbt_rx_opts *ro,
		       nfqbt_decide_fn decide, void *data)
{
	nfqbt_flow_start(f, PORT, QNUM, ro, decide, data);
	fi_watch(f->q);
}

static void flow_end(struct nfqbt_flow *f)
{
	fi_watch(NULL);
	nfqbt_flow_end(f);
}

static uint32_t kq_total(void)
{
	return nfqbt_kstats(QNUM).queue_total;
}

static void send_seqs(uint32_t first, unsigned int n)
{
	nfqbt_send_seqs(PORT, first, n);
}

static void send_one(uint32_t seq)
{
	send_seqs(seq, 1);
}

/* Packets received and held undecided, by seq. */
#define HOLD_MAX	256

struct hold {
	struct nfqb_packet *p[HOLD_MAX];
	unsigned int n;
	unsigned int bad;	/* packets with a seq outside [0, HOLD_MAX) */
};

static int decide_hold(struct nfqb_packet *p, uint32_t seq, void *data)
{
	struct hold *h = data;

	if (seq >= HOLD_MAX || h->p[seq]) {
		h->bad++;
		ck_assert_int_eq(nfqb_verdict(p, NFQB_DROP), 0);
		return 0;
	}
	h->p[seq] = p;
	h->n++;
	return 0;
}

/* Receive (non-blocking) until @n packets are held, ck_assert it. */
static void hold_n(struct nfqbt_cons *c, struct hold *h, unsigned int n)
{
	ck_assert_uint_eq(nfqbt_cons_run(c, n, 5000), n);
	ck_assert_uint_eq(h->bad, 0);
	ck_assert_uint_eq(h->n, n);
}

static uint64_t thread_cpu_ns(pthread_t th)
{
	struct timespec ts;
	clockid_t cid;

	ck_assert_int_eq(pthread_getcpuclockid(th, &cid), 0);
	ck_assert_int_eq(clock_gettime(cid, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t self_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Drive the queue as an owner with its own poll loop (non-blocking mode),
 * handing any packet to @decide, until @done returns true or @bound_ms
 * passed. nfqb_recv() may fail while sends fail; it must never say ENOBUFS
 * (nothing overflows here: that errno means a receive-side overflow).
 * Returns whether @done became true.
 */
struct pump {
	unsigned int handled;
	unsigned int errors;		/* -1 other than EAGAIN/EINTR/ENOSPC */
	int first_error;
	unsigned int enobufs;		/* -1 ENOBUFS */
};

static bool pump_until(struct nfqb_queue *q, bool (*done)(void *),
		       void *data, nfqbt_decide_fn decide, void *ddata,
		       unsigned int bound_ms, struct pump *pm)
{
	uint64_t start = nfqbt_now_ms();

	for (;;) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(q),
				      .events = POLLIN };
		struct nfqb_packet *vec[64];
		int got, i, wait;

		if (done && done(data))
			return true;
		if (nfqbt_now_ms() - start >= bound_ms)
			return false;
		got = nfqb_recv(q, vec, 64);
		for (i = 0; i < got; i++) {
			uint32_t seq = UINT32_MAX;

			nfqbt_pkt_seq(vec[i], &seq);
			pm->handled++;
			ck_assert_ptr_nonnull(decide);
			decide(vec[i], seq, ddata);
		}
		if (got > 0)
			continue;
		if (errno == ENOBUFS) {
			pm->enobufs++;
		} else if (errno != EAGAIN && errno != EINTR &&
			   errno != ENOSPC) {
			if (!pm->errors++)
				pm->first_error = errno;
		}
		wait = nfqb_queue_next_timeout(q);
		if (wait < 0 || wait > 5)
			wait = 5;
		poll(&pfd, 1, wait);
	}
}

struct kq_rx {
	const struct nfqbt_rx *rx;
	unsigned int rx_total;
};

/* The kernel holds nothing and the receiver has what it should. */
static bool kq_empty_rx(void *data)
{
	struct kq_rx *k = data;

	return kq_total() == 0 && (!k->rx || nfqbt_rx_total(k->rx) >=
				   k->rx_total);
}

/* pump_until() the kernel holds nothing of @f's and its receiver has
 * @rx_total datagrams. */
static bool pump_settled(struct nfqbt_flow *f, unsigned int rx_total,
			 nfqbt_decide_fn decide, void *data,
			 unsigned int bound_ms, struct pump *pm)
{
	struct kq_rx kr = { .rx = f->rx, .rx_total = rx_total };

	return pump_until(f->q, kq_empty_rx, &kr, decide, data, bound_ms, pm);
}

static bool at_least_32(uint32_t seq, void *data)
{
	(void)data;
	return seq >= 32;
}

/*
 * The end of the tests of seqs 0..63 where 0..31 were dropped and 32..63
 * accepted: only 32..63 arrived, the counters say so, nothing was taken
 * for a receive-side overflow, and nothing is outstanding.
 */
static void check_dropped_32_accepted_32(struct nfqbt_flow *f)
{
	nfqbt_sleep_ms(200);
	nfqbt_rx_stop(f->rx);
	nfqbt_rx_assert_exact(f->rx, 0, 64, at_least_32, NULL);
	/* a failed send is not a receive-side overflow (enobufs) */
	nfqbt_assert_stats(f->q, "dropped=32 accepted=32 outstanding=0 "
			   "enobufs=0");
}

/* ======================================================================
 * 1. A failed verdict send: the decisions are kept and retried
 * ====================================================================== */

/*
 * 32 packets decided DROP while sendmsg fails with ENOBUFS 4 times: none of
 * them may ever be delivered, in particular not by the ACCEPT batch of the
 * traffic that follows; all of it is then delivered and nothing stays
 * queued.
 */
START_TEST(test_send_fail_drop_kept)
{
	struct hold h = { .n = 0 };
	struct nfqbt_flow f;
	struct pump pm = { 0 };
	unsigned int i;
	int ret;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.quiet_ms = 5000, .timeout_ms = 15000 }, decide_hold, &h);
	send_seqs(0, 32);
	hold_n(&f.c, &h, 32);
	ck_assert_uint_eq(kq_total(), 32);

	fi_send_fail_count(ENOBUFS, 4);
	for (i = 0; i < 32; i++)
		ck_assert_int_eq(nfqb_verdict(h.p[i], NFQB_DROP), 0);
	errno = 0;
	ret = nfqb_flush(f.q);
	fprintf(stderr, "safety send_fail_drop_kept: nfqb_flush -> %d (%s), "
		"%u sends failed\n", ret, ret < 0 ? strerror(errno) : "-",
		atomic_load(&fi_send_injected));
	ck_assert_uint_ge(atomic_load(&fi_send_injected), 1);

	/* accept traffic afterwards (the failures may not all be used up
	 * yet: nfqb_recv() and the flushes in it may still fail) */
	send_seqs(32, 32);
	ck_assert_msg(pump_settled(&f, 32, nfqbt_decide_accept, NULL, 3000,
				   &pm),
		      "3 s after the ACCEPT traffic: kernel queue %u, "
		      "receiver %u of 32, %u of 32 handled, %d failures left",
		      kq_total(), nfqbt_rx_total(f.rx), pm.handled,
		      atomic_load(&fi_send_left));
	ck_assert_uint_eq(pm.handled, 32);
	ck_assert_uint_eq(pm.enobufs, 0);
	/* every failure was used: the library did send again */
	ck_assert_int_eq(atomic_load(&fi_send_left), 0);
	ck_assert_uint_eq(atomic_load(&fi_send_injected), 4);

	check_dropped_32_accepted_32(&f);
	/* send_failures: one per failed sendmsg */
	nfqbt_assert_stats(f.q, "packets=64 send_failures=4 kernel_errors=0 "
			   "defaults+timeouts=0");
	nfqbt_assert_kstats(QNUM, "queue_total=0 id_sequence=64");
	flow_end(&f);
}
END_TEST

/* --- 1b. a longer failure: every pending decision reaches the kernel --- */

#define LONG_N		32u
#define LONG_FAIL_MS	100u
/* After the socket recovers, every decision is in the kernel within: */
#define RECOVER_MS	1000u

static bool long_accepted(uint32_t seq, void *data)
{
	(void)data;
	return seq % 2 == 1;
}

static uint32_t long_mark(uint32_t seq)
{
	return 0x100 + seq;
}

static void long_decide_all(struct hold *h)
{
	uint32_t seq;

	for (seq = 0; seq < LONG_N; seq++) {
		if (long_accepted(seq, NULL))
			ck_assert_int_eq(nfqb_verdict_mark(h->p[seq],
							   NFQB_ACCEPT,
							   long_mark(seq)), 0);
		else
			ck_assert_int_eq(nfqb_verdict(h->p[seq], NFQB_DROP),
					 0);
	}
}

static void long_check(const struct nfqbt_flow *f)
{
	uint32_t seq;

	/* no new traffic was needed */
	nfqbt_assert_kstats(QNUM, "id_sequence=%u queue_total=0", LONG_N);
	nfqbt_sleep_ms(100);
	nfqbt_rx_stop(f->rx);
	nfqbt_rx_assert_exact(f->rx, 0, LONG_N, long_accepted, NULL);
	for (seq = 1; seq < LONG_N; seq += 2)
		ck_assert_uint_eq(nfqbt_rx_mark_of(f->rx, seq), long_mark(seq));
	/* send_failures: one per sendmsg call that failed */
	nfqbt_assert_stats(f->q, "accepted=%u dropped=%u outstanding=0 "
			   "enobufs=0 send_failures=%u", LONG_N / 2,
			   LONG_N / 2, atomic_load(&fi_send_injected));
}

/* Owner threads: blocking nfqb_recv() (or a poll loop in non-blocking
 * mode) until the stop seq; every other packet goes to on_pkt(). */
struct owner {
	struct nfqb_queue *q;
	bool poll_mode;
	void (*on_pkt)(struct owner *o, struct nfqb_packet *p, uint32_t seq);
	void *data;
	unsigned int bound_ms;
	atomic_uint received;
	atomic_bool in_recv;
	atomic_bool stopped;
	/* nfqb_recv() failures: ENOBUFS, and other than EAGAIN/EINTR */
	unsigned int enobufs, errors;
	int first_error;
	int flush_err;
};

static void *owner_main(void *arg)
{
	struct owner *o = arg;
	uint64_t start = nfqbt_now_ms();

	while (!atomic_load(&o->stopped) &&
	       nfqbt_now_ms() - start < o->bound_ms) {
		struct nfqb_packet *vec[64];
		int got, i;

		atomic_store(&o->in_recv, true);
		got = nfqb_recv(o->q, vec, 64);
		atomic_store(&o->in_recv, false);
		if (got < 0) {
			struct pollfd pfd = { .fd = nfqb_queue_fd(o->q),
					      .events = POLLIN };
			int wait;

			if (errno == ENOBUFS) {
				o->enobufs++;
			} else if (errno != EAGAIN && errno != EINTR) {
				if (!o->errors++)
					o->first_error = errno;
				if (!o->poll_mode)
					usleep(1000);	/* no hot loop */
			}
			if (!o->poll_mode)
				continue;
			/* as documented: poll for nfqb_queue_next_timeout();
			 * 3 s when nothing is due (a missed wake-up shows) */
			wait = nfqb_queue_next_timeout(o->q);
			if (wait < 0 || wait > 3000)
				wait = 3000;
			poll(&pfd, 1, wait);
			continue;
		}
		for (i = 0; i < got; i++) {
			uint32_t seq = UINT32_MAX;

			nfqbt_pkt_seq(vec[i], &seq);
			if (seq == STOP_SEQ) {
				nfqb_verdict(vec[i], NFQB_DROP);
				atomic_store(&o->stopped, true);
				continue;
			}
			atomic_fetch_add(&o->received, 1);
			o->on_pkt(o, vec[i], seq);
		}
	}
	if (nfqb_flush(o->q) < 0)
		o->flush_err = errno;
	return NULL;
}

static void owner_start(struct owner *o, pthread_t *th)
{
	if (!o->bound_ms)
		o->bound_ms = 25000;
	if (o->poll_mode)
		ck_assert_int_eq(nfqb_queue_set_nonblock(o->q, true), 0);
	ck_assert_int_eq(pthread_create(th, NULL, owner_main, o), 0);
}

/* Stop the owner with a stop datagram (new traffic: only at the end). */
static void owner_stop(struct owner *o, pthread_t th)
{
	send_one(STOP_SEQ);
	pthread_join(th, NULL);
	ck_assert_msg(atomic_load(&o->stopped), "the owner never saw the "
		      "stop datagram");
	ck_assert_msg(o->enobufs == 0, "nfqb_recv() failed %u times with "
		      "ENOBUFS, though nothing overflowed", o->enobufs);
}

/* Wait until the owner has been inside nfqb_recv() for a while. */
static void owner_wait_blocked(struct owner *o)
{
	uint64_t start = nfqbt_now_ms();

	while (!atomic_load(&o->in_recv) && nfqbt_now_ms() - start < 5000)
		usleep(100);
	ck_assert(atomic_load(&o->in_recv));
	nfqbt_sleep_ms(50);
}

static void store_pkt(struct owner *o, struct nfqb_packet *p, uint32_t seq)
{
	struct hold *h = o->data;

	if (seq >= HOLD_MAX || h->p[seq]) {
		h->bad++;
		nfqb_verdict(p, NFQB_DROP);
		return;
	}
	h->p[seq] = p;
	h->n++;
}

/* Wait for the kernel to hold nothing and the receiver to have @n; returns
 * ms taken, or UINT64_MAX past @bound_ms. */
static uint64_t wait_settled(const struct nfqbt_rx *rx, unsigned int n,
			     unsigned int bound_ms)
{
	uint64_t start = nfqbt_now_ms();

	for (;;) {
		uint64_t t = nfqbt_now_ms() - start;

		if (kq_total() == 0 && (!rx || nfqbt_rx_total(rx) >= n))
			return t;
		if (t >= bound_ms)
			return UINT64_MAX;
		usleep(500);
	}
}

/* The owner sits in a blocking nfqb_recv(); the decisions come from this
 * thread while every verdict send fails for 100 ms. */
START_TEST(test_send_fail_long_blocked_owner)
{
	struct hold h = { .n = 0 };
	struct owner o;
	struct nfqbt_flow f;
	pthread_t th;
	uint64_t t_end, took;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.quiet_ms = 10000, .timeout_ms = 20000 }, NULL, NULL);
	memset(&o, 0, sizeof(o));
	o.q = f.q;
	o.on_pkt = store_pkt;
	o.data = &h;
	owner_start(&o, &th);
	send_seqs(0, LONG_N);
	ck_assert(nfqbt_wait_count(&o.received, LONG_N, 5000));
	owner_wait_blocked(&o);
	ck_assert_uint_eq(h.bad, 0);

	fi_send_fail_for(ENOBUFS, LONG_FAIL_MS);
	t_end = nfqbt_now_ms() + LONG_FAIL_MS;
	long_decide_all(&h);
	took = wait_settled(f.rx, LONG_N / 2, LONG_FAIL_MS + RECOVER_MS);
	ck_assert_msg(took != UINT64_MAX,
		      "%u ms after the sends recovered: kernel queue %u, "
		      "receiver %u of %u (%u sends failed, %u passed)",
		      RECOVER_MS, kq_total(), nfqbt_rx_total(f.rx), LONG_N / 2,
		      atomic_load(&fi_send_injected),
		      atomic_load(&fi_send_passed));
	fprintf(stderr, "safety send_fail_long_blocked_owner: settled %lld ms "
		"after the failure ended; %u sends failed\n",
		(long long)(nfqbt_now_ms() - t_end),
		atomic_load(&fi_send_injected));
	ck_assert_uint_ge(atomic_load(&fi_send_injected), 1);
	long_check(&f);

	owner_stop(&o, th);
	fprintf(stderr, "safety send_fail_long_blocked_owner: nfqb_recv "
		"failed %u times (first: %s)\n", o.errors,
		o.errors ? strerror(o.first_error) : "-");
	flow_end(&f);
}
END_TEST

/* The owner polls nfqb_flush() while every verdict send fails for 100 ms. */
START_TEST(test_send_fail_long_flush_poll)
{
	struct hold h = { .n = 0 };
	unsigned int flush_fail = 0, enobufs_ret = 0;
	struct nfqb_packet *vec[1];
	uint64_t start, t_end, now;
	struct nfqbt_flow f;
	bool settled = false;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.quiet_ms = 10000, .timeout_ms = 20000 }, decide_hold, &h);
	send_seqs(0, LONG_N);
	hold_n(&f.c, &h, LONG_N);

	fi_send_fail_for(ENOBUFS, LONG_FAIL_MS);
	start = nfqbt_now_ms();
	t_end = start + LONG_FAIL_MS;
	long_decide_all(&h);
	do {
		if (nfqb_flush(f.q) < 0)
			flush_fail++;
		nfqbt_sleep_ms(2);
		now = nfqbt_now_ms();
		settled = kq_total() == 0 &&
			  nfqbt_rx_total(f.rx) >= LONG_N / 2;
	} while (!settled && now < t_end + RECOVER_MS);
	ck_assert_msg(settled, "%u ms after the sends recovered: kernel queue "
		      "%u, receiver %u of %u (%u sends failed, %u passed)",
		      RECOVER_MS, kq_total(), nfqbt_rx_total(f.rx), LONG_N / 2,
		      atomic_load(&fi_send_injected),
		      atomic_load(&fi_send_passed));
	fprintf(stderr, "safety send_fail_long_flush_poll: %u sends failed, "
		"nfqb_flush failed %u times\n",
		atomic_load(&fi_send_injected), flush_fail);
	/* it was tried again while the socket failed */
	ck_assert_uint_ge(atomic_load(&fi_send_injected), 2);
	/* and nfqb_recv() has nothing to report: no overflow */
	errno = 0;
	if (nfqb_recv(f.q, vec, 1) < 0 && errno == ENOBUFS)
		enobufs_ret++;
	ck_assert_uint_eq(enobufs_ret, 0);
	long_check(&f);
	flow_end(&f);
}
END_TEST

/* ======================================================================
 * 2. An ACCEPT batch never covers DROP decisions whose send failed
 * ====================================================================== */

START_TEST(test_send_fail_no_cover)
{
	struct hold h = { .n = 0 };
	struct nfqbt_flow f;
	struct pump pm = { 0 };
	unsigned int i;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.quiet_ms = 5000, .timeout_ms = 15000 }, decide_hold, &h);
	send_seqs(0, 64);
	hold_n(&f.c, &h, 64);

	/* the first 32 dropped while every send fails */
	fi_send_fail_count(ENOBUFS, 1000);
	for (i = 0; i < 32; i++)
		ck_assert_int_eq(nfqb_verdict(h.p[i], NFQB_DROP), 0);
	nfqb_flush(f.q);
	nfqb_flush(f.q);
	ck_assert_uint_ge(atomic_load(&fi_send_injected), 1);
	ck_assert_uint_eq(kq_total(), 64);
	fi_send_disarm();

	/* the next 32 accepted after the socket recovered */
	for (i = 32; i < 64; i++)
		ck_assert_int_eq(nfqb_verdict(h.p[i], NFQB_ACCEPT), 0);
	nfqb_flush(f.q);
	ck_assert_msg(pump_settled(&f, 32, NULL, NULL, 2000, &pm),
		      "2 s after the sends recovered: kernel queue %u, "
		      "receiver %u of 32", kq_total(), nfqbt_rx_total(f.rx));
	ck_assert_uint_eq(pm.handled, 0);
	ck_assert_uint_eq(pm.enobufs, 0);

	check_dropped_32_accepted_32(&f);
	nfqbt_assert_stats(f.q, "send_failures>=1 send_failures=%u",
			   atomic_load(&fi_send_injected));
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
}
END_TEST

/* ======================================================================
 * 3. A dead handle never reaches another packet
 * ====================================================================== */

START_TEST(test_dead_handle)
{
	struct hold h = { .n = 0 };
	struct nfqb_packet *dead;
	struct nfqbt_flow f;
	unsigned int i, refused = 0, reused = 0, failed = 0;
	int ret;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.expected = 33, .linger_ms = 300, .timeout_ms = 15000 },
		decide_hold, &h);

	/* seq 0: accepted and flushed; its handle is dead from here on */
	send_one(0);
	hold_n(&f.c, &h, 1);
	dead = h.p[0];
	ck_assert_int_eq(nfqb_verdict(dead, NFQB_ACCEPT), 0);
	/* a second verdict before the flush: refused, the first one holds */
	errno = 0;
	ck_assert_int_eq(nfqb_verdict(dead, NFQB_DROP), -1);
	ck_assert_int_eq(errno, EALREADY);
	refused++;
	ck_assert_int_ge(nfqb_flush(f.q), 1);
	ck_assert(nfqbt_rx_wait_total(f.rx, 1, 2000));

	/* seq 1..32 received: the library reuses its descriptors */
	send_seqs(1, 32);
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, 32, 5000), 32);
	ck_assert_uint_eq(h.bad, 0);
	for (i = 1; i <= 32; i++)
		reused += h.p[i] == dead;
	fprintf(stderr, "safety dead_handle: the dead handle's descriptor "
		"%s reused\n", reused ? "was" : "was not");

	/* every call on the dead handle is refused */
	errno = 0;
	ret = nfqb_verdict(dead, NFQB_DROP);
	ck_assert_msg(ret == -1 && errno == EALREADY,
		      "nfqb_verdict on a dead handle: %d (%s), want -1 "
		      "EALREADY", ret, strerror(errno));
	refused++;
	errno = 0;
	ck_assert_int_eq(nfqb_verdict_mark(dead, NFQB_DROP, 77), -1);
	ck_assert_int_eq(errno, EALREADY);
	refused++;
	errno = 0;
	ck_assert_int_eq(nfqb_verdict_ex(dead, &(struct nfqb_verdict){
		.verdict = NFQB_DROP }, sizeof(struct nfqb_verdict)), -1);
	ck_assert_int_eq(errno, EALREADY);
	refused++;

	/* and every new packet keeps its own decision */
	for (i = 1; i <= 32; i++)
		failed += nfqb_verdict(h.p[i], NFQB_ACCEPT) != 0;
	ck_assert_uint_eq(failed, 0);
	ck_assert_int_ge(nfqb_flush(f.q), 1);

	/* dead still once its descriptor is free again */
	errno = 0;
	ck_assert_int_eq(nfqb_verdict(dead, NFQB_DROP), -1);
	ck_assert_int_eq(errno, EALREADY);
	refused++;
	ck_assert_int_eq(nfqb_flush(f.q), 0);

	nfqbt_rx_wait_exact(f.rx, 0, 33, NULL, NULL);
	nfqbt_assert_stats(f.q, "accepted=33 dropped=0 outstanding=0 "
			   "late_verdicts=%u", refused);
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
}
END_TEST

/* ======================================================================
 * 4. A blocked owner is woken by decisions of other threads
 * ====================================================================== */

#define WAKE_ROUNDS	100u
#define WAKE_ROUND_N	50u
#define WAKE_N		(WAKE_ROUNDS * WAKE_ROUND_N)
/* Every decision of a round is in the kernel within: */
#define WAKE_BOUND_MS	1000u
/* The latency bound: far beyond WAKE_BOUND_MS. */
#define WAKE_LATENCY_US	(5u * 1000 * 1000)
/* How long the owner is held up when it drains its eventfd. */
#define WAKE_PREEMPT_US	300u

static bool wake_accepted(uint32_t seq, void *data)
{
	(void)data;
	return seq % 7 != 3;
}

static uint32_t wake_mark(uint32_t seq)
{
	return 1 + seq % 5;
}

static unsigned int wake_accepted_below(uint32_t n)
{
	unsigned int k = 0;
	uint32_t s;

	for (s = 0; s < n; s++)
		k += wake_accepted(s, NULL);
	return k;
}

struct decider {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nfqb_packet *v[WAKE_N];
	unsigned int head, tail;
	bool closed;
	unsigned int seed;
	atomic_uint *decided;
	unsigned int errors, bad_seq;
	int first_errno;
};

struct wake {
	struct decider d[2];
	atomic_uint decided;
};

static void wake_on_pkt(struct owner *o, struct nfqb_packet *p, uint32_t seq)
{
	struct wake *w = o->data;
	struct decider *d = &w->d[seq % 2];

	pthread_mutex_lock(&d->lock);
	if (d->tail < WAKE_N)
		d->v[d->tail++] = p;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* Decide what comes, in random order. */
static void *decider_main(void *arg)
{
	struct decider *d = arg;
	uint64_t start = nfqbt_now_ms();

	for (;;) {
		struct nfqb_packet *batch[64];
		unsigned int n = 0, i;

		pthread_mutex_lock(&d->lock);
		while (d->head == d->tail && !d->closed &&
		       nfqbt_now_ms() - start < 25000) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&d->cond, &d->lock, &ts);
		}
		while (n < 64 && d->head != d->tail)
			batch[n++] = d->v[d->head++];
		pthread_mutex_unlock(&d->lock);
		if (!n)
			break;
		for (i = n; i > 1; i--) {
			unsigned int k = (unsigned int)rand_r(&d->seed) % i;
			struct nfqb_packet *t = batch[k];

			batch[k] = batch[i - 1];
			batch[i - 1] = t;
		}
		for (i = 0; i < n; i++) {
			uint32_t seq;
			int ret;

			if (!nfqbt_pkt_seq(batch[i], &seq)) {
				d->bad_seq++;
				seq = 3;	/* drop it */
			}
			if (wake_accepted(seq, NULL))
				ret = nfqb_verdict_mark(batch[i], NFQB_ACCEPT,
							wake_mark(seq));
			else
				ret = nfqb_verdict(batch[i], NFQB_DROP);
			if (ret < 0 && !d->errors++)
				d->first_errno = errno;
			atomic_fetch_add(d->decided, 1);
			/* inspection takes its time: half of the decisions
			 * come back to back, the others after up to 400 us,
			 * so the owner goes to sleep between decisions and
			 * decisions land while it wakes up */
			if (rand_r(&d->seed) % 2) {
				struct timespec ts = {
					.tv_nsec = 1000L * (rand_r(&d->seed) %
							    400),
				};

				nanosleep(&ts, NULL);
			}
		}
	}
	return NULL;
}

static void run_wake(bool poll_mode)
{
	struct wake *w = calloc(1, sizeof(*w));
	pthread_t th, dth[2];
	struct nfqbt_flow f;
	struct owner o;
	unsigned int r, i, n_acc = wake_accepted_below(WAKE_N);
	uint64_t worst = 0;
	uint32_t seq;

	ck_assert_ptr_nonnull(w);
	flow_start(&f, &(struct nfqbt_rx_opts){
		.expected = n_acc, .linger_ms = 200, .quiet_ms = 5000,
		.timeout_ms = 25000 }, NULL, NULL);
	/* only the wake-up may bring the decisions out, not the latency
	 * timer of packets held behind undecided ones: once woken, the
	 * owner finds the socket idle and sends the decided prefix */
	ck_assert_int_eq(nfqb_queue_set_latency(f.q, WAKE_LATENCY_US), 0);
	atomic_init(&w->decided, 0);
	for (i = 0; i < 2; i++) {
		pthread_mutex_init(&w->d[i].lock, NULL);
		pthread_cond_init(&w->d[i].cond, NULL);
		w->d[i].seed = (unsigned int)time(NULL) * 2 + i;
		w->d[i].decided = &w->decided;
		ck_assert_int_eq(pthread_create(&dth[i], NULL, decider_main,
						&w->d[i]), 0);
	}
	memset(&o, 0, sizeof(o));
	o.q = f.q;
	o.poll_mode = poll_mode;
	o.on_pkt = wake_on_pkt;
	o.data = w;
	/* the owner is "preempted" whenever it drains its wake-up eventfd
	 * and, polling, whenever it reads the socket, while the deciders go
	 * on posting: decisions land in the middle of its wake-up */
	atomic_store(&fi_evread_delay_us, WAKE_PREEMPT_US);
	if (poll_mode)
		atomic_store(&fi_sockread_delay_us, WAKE_PREEMPT_US);
	owner_start(&o, &th);

	for (r = 0; r < WAKE_ROUNDS; r++) {
		unsigned int upto = (r + 1) * WAKE_ROUND_N;
		uint64_t took;

		send_seqs(r * WAKE_ROUND_N, WAKE_ROUND_N);
		ck_assert_msg(nfqbt_wait_count(&w->decided, upto, 5000),
			      "round %u: %u of %u decided", r,
			      atomic_load(&w->decided), upto);
		/* no new traffic until every decision is in the kernel */
		took = wait_settled(f.rx, wake_accepted_below(upto),
				    WAKE_BOUND_MS);
		ck_assert_msg(took != UINT64_MAX,
			      "round %u: %u ms after the last decision the "
			      "kernel still holds %u packets, receiver %u of "
			      "%u: the owner was not woken", r, WAKE_BOUND_MS,
			      kq_total(), nfqbt_rx_total(f.rx),
			      wake_accepted_below(upto));
		if (took > worst)
			worst = took;
	}
	fprintf(stderr, "safety blocked_owner_wake%s: %u rounds of %u, worst "
		"%llu ms from the last decision to the kernel; %u eventfd "
		"and %u socket reads preempted\n", poll_mode ? "_poll" : "",
		WAKE_ROUNDS, WAKE_ROUND_N, (unsigned long long)worst,
		atomic_load(&fi_evread_delayed),
		atomic_load(&fi_sockread_delayed));
	atomic_store(&fi_evread_delay_us, 0);
	atomic_store(&fi_sockread_delay_us, 0);

	owner_stop(&o, th);
	ck_assert_msg(o.errors == 0, "nfqb_recv failed %u times, first: %s",
		      o.errors, strerror(o.first_error));
	ck_assert_int_eq(o.flush_err, 0);
	for (i = 0; i < 2; i++) {
		pthread_mutex_lock(&w->d[i].lock);
		w->d[i].closed = true;
		pthread_cond_signal(&w->d[i].cond);
		pthread_mutex_unlock(&w->d[i].lock);
		pthread_join(dth[i], NULL);
		ck_assert_uint_eq(w->d[i].bad_seq, 0);
		ck_assert_msg(w->d[i].errors == 0, "%u verdict errors, first: "
			      "%s", w->d[i].errors,
			      strerror(w->d[i].first_errno));
	}
	ck_assert_uint_eq(atomic_load(&w->decided), WAKE_N);

	nfqbt_rx_wait_exact(f.rx, 0, WAKE_N, wake_accepted, NULL);
	for (seq = 0; seq < WAKE_N; seq++) {
		uint32_t mark = 0;

		if (!wake_accepted(seq, NULL))
			continue;
		ck_assert_msg(nfqbt_rx_mark(f.rx, seq, &mark) &&
			      mark == wake_mark(seq),
			      "seq %u: mark %u, want %u", seq, mark,
			      wake_mark(seq));
	}
	/* the stop datagram is the one more, dropped */
	nfqbt_assert_stats(f.q, "packets=%u accepted=%u dropped=%u "
			   "outstanding=0 kernel_errors+enobufs+timeouts=0",
			   WAKE_N + 1, n_acc, WAKE_N - n_acc + 1);
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
	for (i = 0; i < 2; i++) {
		pthread_mutex_destroy(&w->d[i].lock);
		pthread_cond_destroy(&w->d[i].cond);
	}
	free(w);
}

START_TEST(test_blocked_owner_wake)
{
	run_wake(false);
}
END_TEST

START_TEST(test_blocked_owner_wake_poll)
{
	run_wake(true);
}
END_TEST

/* ======================================================================
 * 5. An expired head does not hold back the decided packets behind it
 * ====================================================================== */

#define HEAD_N		10u
#define HEAD_TIMEOUT_MS	100u
#define HEAD_LATENCY_MS	150u
#define HEAD_MARGIN_MS	250u

static bool not_zero(uint32_t seq, void *data)
{
	(void)data;
	return seq != 0;
}

START_TEST(test_head_expiry_no_traffic)
{
	struct hold h = { .n = 0 };
	struct nfqbt_flow f;
	uint64_t t_dec, t_done = 0, now;
	unsigned int zeros = 0, consec = 0, max_consec = 0, lies = 0;
	unsigned int samples = 0, i;
	int first_lie_total = -1, w;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.quiet_ms = 5000, .timeout_ms = 15000 }, decide_hold, &h);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(f.q, HEAD_TIMEOUT_MS),
			 0);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(f.q, NFQB_DROP), 0);
	ck_assert_int_eq(nfqb_queue_set_latency(f.q, HEAD_LATENCY_MS * 1000),
			 0);
	send_seqs(0, HEAD_N);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, HEAD_N, 2000));
	hold_n(&f.c, &h, HEAD_N);

	/* the head never decided, the others accepted at once */
	t_dec = nfqbt_now_ms();
	for (i = 1; i < HEAD_N; i++)
		ck_assert_int_eq(nfqb_verdict(h.p[i], NFQB_ACCEPT), 0);

	/* the owner's own poll loop, trusting nfqb_queue_next_timeout();
	 * no new traffic */
	for (;;) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(f.q),
				      .events = POLLIN };
		struct nfqb_packet *vec[4];
		uint32_t kq;
		int got;

		now = nfqbt_now_ms();
		if (now - t_dec >= HEAD_LATENCY_MS + HEAD_MARGIN_MS + 1000)
			break;
		got = nfqb_recv(f.q, vec, 4);
		ck_assert_int_lt(got, 1);
		ck_assert_msg(errno == EAGAIN || errno == EINTR,
			      "nfqb_recv: %s", strerror(errno));
		w = nfqb_queue_next_timeout(f.q);
		kq = kq_total();
		samples++;
		if (kq && w < 0) {
			/* the kernel holds packets we decided or that are
			 * due to expire, yet nothing is due */
			if (!lies++)
				first_lie_total = (int)kq;
		}
		if (w == 0) {
			zeros++;
			if (++consec > max_consec)
				max_consec = consec;
		} else {
			consec = 0;
		}
		/* the kernel applies verdicts as it takes them */
		if (!t_done && kq == 0)
			t_done = nfqbt_now_ms();
		/* then sample a while longer: nothing is due */
		if (t_done && now - t_done >= 200)
			break;
		/* trusting it: -1 means nothing to do until traffic */
		poll(&pfd, 1, w >= 0 ? w : t_done ? 50 : 1000);
	}
	fprintf(stderr, "safety head_expiry_no_traffic: kernel queue empty "
		"after %lld ms; %u samples of nfqb_queue_next_timeout(), %u zero (%u in "
		"a row), %u said -1 while the kernel held packets\n",
		t_done ? (long long)(t_done - t_dec) : -1LL, samples, zeros,
		max_consec, lies);
	ck_assert_msg(t_done && t_done - t_dec <= HEAD_LATENCY_MS +
		      HEAD_MARGIN_MS,
		      "decided packets behind an expired head: kernel queue "
		      "%u, receiver %u of %u, %lld ms after the decisions",
		      kq_total(), nfqbt_rx_total(f.rx), HEAD_N - 1,
		      (long long)(nfqbt_now_ms() - t_dec));
	ck_assert(nfqbt_rx_wait_total(f.rx, HEAD_N - 1, 2000));
	ck_assert_msg(lies == 0, "nfqb_queue_next_timeout() said -1 %u times "
		      "while the kernel held packets (first: %d)", lies,
		      first_lie_total);
	ck_assert_msg(max_consec <= 3 && zeros <= 20,
		      "nfqb_queue_next_timeout() returned a stale 0: %u "
		      "times, %u in a row", zeros, max_consec);
	/* nothing is due any more */
	ck_assert_int_eq(nfqb_queue_next_timeout(f.q), -1);

	/* the head got the default verdict: too late to decide it */
	errno = 0;
	ck_assert_int_eq(nfqb_verdict(h.p[0], NFQB_ACCEPT), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_ge(nfqb_flush(f.q), 0);

	nfqbt_rx_stop(f.rx);
	nfqbt_rx_assert_exact(f.rx, 0, HEAD_N, not_zero, NULL);
	nfqbt_assert_stats(f.q, "timeouts=1 accepted=%u dropped=1 "
			   "outstanding=0 kernel_errors=0", HEAD_N - 1);
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
}
END_TEST

/* ======================================================================
 * 6. Idle after held decisions: no CPU, EINTR on a signal, interrupt
 * ====================================================================== */

typedef int (*interrupt_fn)(struct nfqb_queue *);

static atomic_uint sig_hits;

static void on_sigusr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&sig_hits, 1);
}

struct idle {
	struct nfqb_queue *q;
	atomic_int phase;	/* what the owner is at (see idle_owner) */
	atomic_int go;		/* what the test lets it do next */
	int ret[4], err[4];
	int setup_err;
};

static void idle_set(struct idle *o, int phase)
{
	atomic_store(&o->phase, phase);
}

static bool idle_wait(atomic_int *v, int want, unsigned int ms)
{
	uint64_t start = nfqbt_now_ms();

	while (atomic_load(v) < want) {
		if (nfqbt_now_ms() - start >= ms)
			return false;
		usleep(200);
	}
	return true;
}

/*
 * Phases: 1 set up (two packets decided out of order, flushed);
 * 2 in a blocking nfqb_recv() (the signal ends it) -> 3 returned;
 * 4 in a blocking nfqb_recv() again (interrupt ends it) -> 5 returned;
 * 6 waits for go 6 (an interrupt posted while none runs), then two
 * non-blocking calls -> 7.
 */
static void *idle_owner(void *arg)
{
	struct idle *o = arg;
	struct nfqb_packet *vec[4], *p[2] = { NULL, NULL };
	uint64_t start = nfqbt_now_ms();
	unsigned int n = 0;

	nfqb_queue_set_nonblock(o->q, true);
	while (n < 2 && nfqbt_now_ms() - start < 5000) {
		int got = nfqb_recv(o->q, vec, 4), i;

		for (i = 0; i < got; i++) {
			uint32_t seq = UINT32_MAX;

			if (nfqbt_pkt_seq(vec[i], &seq) && seq < 2 && !p[seq])
				p[seq] = vec[i];
			else
				o->setup_err = EPROTO;
			n++;
		}
		if (got <= 0)
			usleep(1000);
	}
	if (n != 2 || !p[0] || !p[1]) {
		o->setup_err = o->setup_err ? o->setup_err : ETIMEDOUT;
		idle_set(o, 1);
		return NULL;
	}
	/* the second first: it is held behind the first */
	if (nfqb_verdict(p[1], NFQB_ACCEPT) < 0 || nfqb_flush(o->q) < 0 ||
	    nfqb_verdict(p[0], NFQB_ACCEPT) < 0 || nfqb_flush(o->q) < 0) {
		o->setup_err = errno;
		idle_set(o, 1);
		return NULL;
	}
	nfqb_queue_set_nonblock(o->q, false);
	idle_set(o, 1);

	idle_set(o, 2);
	o->ret[0] = nfqb_recv(o->q, vec, 4);
	o->err[0] = errno;
	idle_set(o, 3);

	idle_set(o, 4);
	o->ret[1] = nfqb_recv(o->q, vec, 4);
	o->err[1] = errno;
	idle_set(o, 5);

	nfqb_queue_set_nonblock(o->q, true);
	idle_set(o, 6);
	if (!idle_wait(&o->go, 6, 5000)) {
		idle_set(o, 7);
		return NULL;
	}
	o->ret[2] = nfqb_recv(o->q, vec, 4);
	o->err[2] = errno;
	o->ret[3] = nfqb_recv(o->q, vec, 4);
	o->err[3] = errno;
	idle_set(o, 7);
	return NULL;
}

START_TEST(test_idle_after_held)
{
	struct sigaction sa;
	struct idle o;
	struct nfqbt_rx *rx;
	interrupt_fn intr;
	uint64_t c0, c1, cpu_ms;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = 0;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);

	nfqbt_rule_queue(PORT, QNUM, false);
	memset(&o, 0, sizeof(o));
	o.q = open_queue(QNUM);
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = 2, .linger_ms = 200, .quiet_ms = 10000,
		.timeout_ms = 20000 });
	send_seqs(0, 2);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 2, 2000));
	ck_assert_int_eq(pthread_create(&th, NULL, idle_owner, &o), 0);
	ck_assert(idle_wait(&o.phase, 1, 6000));
	ck_assert_msg(o.setup_err == 0, "owner setup: %s",
		      strerror(o.setup_err));
	ck_assert(nfqbt_rx_wait_total(rx, 2, 2000));
	ck_assert_uint_eq(kq_total(), 0);

	/* idle in a blocking nfqb_recv(): no CPU */
	ck_assert(idle_wait(&o.phase, 2, 2000));
	nfqbt_sleep_ms(100);
	c0 = thread_cpu_ns(th);
	nfqbt_sleep_ms(1000);
	c1 = thread_cpu_ns(th);
	cpu_ms = (c1 - c0) / 1000000;
	fprintf(stderr, "safety idle_after_held: %llu ms of CPU in 1 s idle\n",
		(unsigned long long)cpu_ms);
	ck_assert_msg(cpu_ms < 100, "an idle blocking nfqb_recv() used %llu "
		      "ms of CPU in 1 s", (unsigned long long)cpu_ms);
	ck_assert_msg(atomic_load(&o.phase) == 2, "nfqb_recv() returned %d "
		      "(%s) while idle", o.ret[0], strerror(o.err[0]));

	/* a signal ends it with EINTR */
	ck_assert_int_eq(pthread_kill(th, SIGUSR1), 0);
	ck_assert_msg(idle_wait(&o.phase, 3, 1000),
		      "a signal did not end a blocked nfqb_recv() (handler "
		      "ran %u times)", atomic_load(&sig_hits));
	ck_assert_uint_eq(atomic_load(&sig_hits), 1);
	ck_assert_msg(o.ret[0] == -1 && o.err[0] == EINTR,
		      "nfqb_recv after a signal: %d (%s), want -1 EINTR",
		      o.ret[0], strerror(o.err[0]));

	/* nfqb_queue_interrupt() from this thread ends it with EINTR */
	intr = (interrupt_fn)dlsym(RTLD_DEFAULT, "nfqb_queue_interrupt");
	ck_assert_msg(intr != NULL, "the library has no nfqb_queue_interrupt");
	ck_assert(idle_wait(&o.phase, 4, 2000));
	nfqbt_sleep_ms(50);
	ck_assert_int_eq(atomic_load(&o.phase), 4);
	ck_assert_int_eq(intr(o.q), 0);
	ck_assert_msg(idle_wait(&o.phase, 5, 1000),
		      "nfqb_queue_interrupt() did not end a blocked nfqb_recv()");
	ck_assert_msg(o.ret[1] == -1 && o.err[1] == EINTR,
		      "nfqb_recv after nfqb_queue_interrupt: %d (%s), want -1 "
		      "EINTR", o.ret[1], strerror(o.err[1]));

	/* posted while no nfqb_recv() runs: the next call, once */
	ck_assert(idle_wait(&o.phase, 6, 2000));
	ck_assert_int_eq(intr(o.q), 0);
	atomic_store(&o.go, 6);
	ck_assert(idle_wait(&o.phase, 7, 2000));
	ck_assert_msg(o.ret[2] == -1 && o.err[2] == EINTR,
		      "nfqb_recv after an earlier interrupt: %d (%s), want -1 "
		      "EINTR", o.ret[2], strerror(o.err[2]));
	ck_assert_msg(o.ret[3] == -1 && o.err[3] == EAGAIN,
		      "the interrupt ended a second call: %d (%s), want -1 "
		      "EAGAIN", o.ret[3], strerror(o.err[3]));
	pthread_join(th, NULL);

	nfqbt_assert_stats(o.q, "interrupts=2 accepted=2 outstanding=0");
	nfqbt_rx_wait_exact(rx, 0, 2, NULL, NULL);
	ck_assert_int_eq(nfqb_queue_next_timeout(o.q), -1);
	close_queue(o.q);
	nfqbt_rx_free(rx);
}
END_TEST

/* ======================================================================
 * 7. Configuration with every buffer held, and with a full socket
 * ====================================================================== */

#define CONFIG_PROMPT_MS	1000u
#define CONFIG_CPU_MS		100u
#define CLOSE_PROMPT_MS		2000u

struct timed {
	int ret, err;
	uint64_t ms, cpu_ms;
};

#define TIMED(call) ({						\
	struct timed t_;					\
	uint64_t w0_ = mono_ns(), c0_ = self_cpu_ns();		\
	errno = 0;						\
	t_.ret = (call);					\
	t_.err = errno;						\
	t_.ms = (mono_ns() - w0_) / 1000000;			\
	t_.cpu_ms = (self_cpu_ns() - c0_) / 1000000;		\
	t_; })

/* Prompt (wall clock and CPU), then @ok. */
static void assert_prompt(const char *what, struct timed t, bool ok)
{
	fprintf(stderr, "safety: %s -> %d (%s) in %llu ms, %llu ms CPU\n",
		what, t.ret, t.ret < 0 ? strerror(t.err) : "-",
		(unsigned long long)t.ms, (unsigned long long)t.cpu_ms);
	ck_assert_msg(t.ms < CONFIG_PROMPT_MS, "%s took %llu ms", what,
		      (unsigned long long)t.ms);
	ck_assert_msg(t.cpu_ms < CONFIG_CPU_MS, "%s used %llu ms of CPU",
		      what, (unsigned long long)t.cpu_ms);
	ck_assert_msg(ok, "%s: %d (%s)", what, t.ret, strerror(t.err));
}

static void assert_prompt_ok(const char *what, struct timed t)
{
	assert_prompt(what, t, t.ret == 0);
}

/* ok, or a clear errno (not a timeout that leaves the setting unknown) */
static void assert_prompt_clear(const char *what, struct timed t)
{
	assert_prompt(what, t, t.ret == 0 || (t.ret == -1 && t.err != 0 &&
					      t.err != ETIMEDOUT));
}

START_TEST(test_config_buffers_held)
{
	struct hold h = { .n = 0 };
	struct nfqbt_flow f;
	struct pump pm = { 0 };
	unsigned int i;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.expected = 16, .linger_ms = 200, .timeout_ms = 15000 },
		decide_hold, &h);
	ck_assert_int_eq(nfqb_queue_set_buffers(f.q, 8), 0);
	/* a packet the library would give up on must not pass */
	ck_assert_int_eq(nfqb_queue_set_default_verdict(f.q, NFQB_DROP), 0);
	send_seqs(0, 16);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 16, 2000));
	hold_n(&f.c, &h, 8);
	for (i = 0; i < 8; i++)
		ck_assert_ptr_nonnull(h.p[i]);

	/* every buffer held, 8 more packets in the socket */
	assert_prompt_ok("set_maxlen, every buffer held",
			 TIMED(nfqb_queue_set_maxlen(f.q, 2048)));
	assert_prompt_ok("set_flags, every buffer held",
			 TIMED(nfqb_queue_set_flags(f.q, 0, NFQB_F_FAIL_OPEN)));
	ck_assert_uint_eq(kq_total(), 16);

	/* nothing was lost on the way: all 16 are the application's */
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(nfqb_verdict(h.p[i], NFQB_ACCEPT), 0);
	ck_assert_msg(pump_settled(&f, 16, nfqbt_decide_accept, NULL, 3000,
				   &pm),
		      "kernel queue %u, receiver %u of 16", kq_total(),
		      nfqbt_rx_total(f.rx));
	ck_assert_uint_eq(pm.handled, 8);
	ck_assert_uint_eq(pm.errors + pm.enobufs, 0);
	nfqbt_rx_wait_exact(f.rx, 0, 16, NULL, NULL);
	nfqbt_assert_stats(f.q, "packets=16 accepted=16 outstanding=0 "
			   "defaults+rejected_defaults+timeouts=0");

	ck_assert_int_eq(nfqb_queue_close(f.q), 0);
	fi_watch(NULL);
	errno = 0;
	{
		struct nfqb_kstats ks;

		ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), -1);
		ck_assert_int_eq(errno, ENOENT);
	}
	nfqbt_rx_free(f.rx);
}
END_TEST

/* Overflow the queue's socket: a burst nobody reads. */
static void flood(struct nfqb_queue *q, uint32_t first)
{
	struct nfqb_kstats before = nfqbt_kstats(QNUM), after;

	(void)q;
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .first_seq = first, .count = 200,
		.size = 1000 }), 200);
	after = nfqbt_kstats(QNUM);
	ck_assert_msg(after.queue_user_dropped > before.queue_user_dropped,
		      "the socket did not overflow");
}

START_TEST(test_config_full_socket)
{
	struct nfqb_queue *q;
	struct nfqb_kstats ks;
	struct timed t;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_queue(QNUM);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(q, 4096), 0);
	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);

	flood(q, 0);
	assert_prompt_clear("set_maxlen, full socket",
			    TIMED(nfqb_queue_set_maxlen(q, 2048)));
	flood(q, 200);
	assert_prompt_clear("set_flags, full socket",
			    TIMED(nfqb_queue_set_flags(q, 0,
						       NFQB_F_FAIL_OPEN)));
	flood(q, 400);
	fi_watch(NULL);
	t = TIMED(nfqb_queue_close(q));
	fprintf(stderr, "safety: close, full socket -> %d (%s) in %llu ms, "
		"%llu ms CPU\n", t.ret, t.ret < 0 ? strerror(t.err) : "-",
		(unsigned long long)t.ms, (unsigned long long)t.cpu_ms);
	ck_assert_msg(t.ms < CLOSE_PROMPT_MS, "close took %llu ms",
		      (unsigned long long)t.ms);
	ck_assert_msg(t.ret == 0, "close: %s", strerror(t.err));
	/* unbound: the kernel let go of everything */
	errno = 0;
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* ======================================================================
 * 8. The verdict timeout gives buffers back
 * ====================================================================== */

static bool at_least_8(uint32_t seq, void *data)
{
	(void)data;
	return seq >= 8;
}

static bool rx_at_least_8(void *data)
{
	return nfqbt_rx_total(data) >= 8;
}

struct collect {
	struct hold *h;
	unsigned int got;
};

static int decide_collect_accept(struct nfqb_packet *p, uint32_t seq,
				 void *data)
{
	struct collect *cl = data;

	if (seq >= 8 && seq < 16)
		cl->got++;
	else
		cl->h->bad++;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return 0;
}

static bool collected_8(void *data)
{
	return ((struct collect *)data)->got >= 8;
}

START_TEST(test_timeout_frees_buffers)
{
	struct hold h = { .n = 0 };
	struct collect cl = { .h = &h };
	struct nfqbt_flow f;
	struct pump pm = { 0 };
	uint64_t t0;
	unsigned int i, late = 0;

	flow_start(&f, &(struct nfqbt_rx_opts){
		.expected = 8, .linger_ms = 300, .timeout_ms = 15000 },
		decide_hold, &h);
	ck_assert_int_eq(nfqb_queue_set_buffers(f.q, 8), 0);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(f.q, 100), 0);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(f.q, NFQB_DROP), 0);
	send_seqs(0, 8);
	hold_n(&f.c, &h, 8);

	/* never decided; 8 more come */
	send_seqs(8, 8);
	t0 = nfqbt_now_ms();
	ck_assert_msg(pump_until(f.q, collected_8, &cl, decide_collect_accept,
				 &cl, 2000, &pm),
		      "%u of 8 new packets received in 2 s with every buffer "
		      "held by expired packets (kernel queue %u)", cl.got,
		      kq_total());
	fprintf(stderr, "safety timeout_frees_buffers: 8 new packets after "
		"%llu ms\n", (unsigned long long)(nfqbt_now_ms() - t0));
	ck_assert_uint_eq(h.bad, 0);
	ck_assert_uint_eq(pm.errors + pm.enobufs, 0);
	ck_assert_msg(pump_until(f.q, rx_at_least_8, f.rx, decide_collect_accept,
				 &cl, 2000, &pm),
		      "the 8 accepted did not arrive");

	/* the expired ones: too late, refused */
	for (i = 0; i < 8; i++) {
		errno = 0;
		if (nfqb_verdict(h.p[i], NFQB_ACCEPT) == -1 &&
		    errno == ETIMEDOUT)
			late++;
	}
	ck_assert_uint_eq(late, 8);
	ck_assert_int_ge(nfqb_flush(f.q), 0);

	nfqbt_rx_wait_exact(f.rx, 0, 16, at_least_8, NULL);
	nfqbt_assert_stats(f.q, "timeouts=8 accepted=8 dropped=8 "
			   "late_verdicts=8 outstanding=0");
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
}
END_TEST

/* ======================================================================
 * 9. A corrupted packet message gets the default verdict
 * ====================================================================== */

#define CORRUPT_N	16u
#define CORRUPT_SEQ	5u

static bool not_corrupt(uint32_t seq, void *data)
{
	(void)data;
	return seq != CORRUPT_SEQ;
}

struct seen {
	unsigned int n, corrupt_seen, foreign;
};

static int decide_accept_seen(struct nfqb_packet *p, uint32_t seq,
			      void *data)
{
	struct seen *s = data;

	s->n++;
	if (seq == CORRUPT_SEQ)
		s->corrupt_seen++;
	else if (seq >= CORRUPT_N)
		s->foreign++;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return 0;
}

static void run_corrupt(int mode)
{
	struct seen s = { 0 };
	struct nfqbt_flow f;
	struct nfqb_stats st;
	struct pump pm = { 0 };

	flow_start(&f, &(struct nfqbt_rx_opts){
		.expected = CORRUPT_N - 1, .linger_ms = 300,
		.timeout_ms = 15000 }, decide_accept_seen, &s);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(f.q, NFQB_DROP), 0);
	atomic_store(&fi_rx_seq, CORRUPT_SEQ);
	atomic_store(&fi_rx_mode, mode);
	send_seqs(0, CORRUPT_N);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, CORRUPT_N, 2000));

	ck_assert_uint_eq(nfqbt_cons_run(&f.c, CORRUPT_N - 1, 3000),
			  CORRUPT_N - 1);
	ck_assert_uint_eq(atomic_load(&fi_rx_done), 1);
	ck_assert_msg(pump_settled(&f, CORRUPT_N - 1, decide_accept_seen, &s,
				   1000, &pm),
		      "kernel queue %u, receiver %u of %u", kq_total(),
		      nfqbt_rx_total(f.rx), CORRUPT_N - 1);
	ck_assert_uint_eq(s.corrupt_seen, 0);
	ck_assert_uint_eq(s.foreign, 0);
	ck_assert_uint_eq(s.n, CORRUPT_N - 1);

	nfqbt_rx_wait_exact(f.rx, 0, CORRUPT_N, not_corrupt, NULL);
	st = nfqbt_queue_stats(f.q);
	fprintf(stderr, "safety corrupt (%s, id %u): malformed %llu, "
		"rejected_defaults %llu, gap_ids %llu, kernel_errors %llu\n",
		mode == RX_BAD_PAYLOAD_LEN ? "bad payload length" :
		"packet header destroyed", atomic_load(&fi_rx_id),
		(unsigned long long)st.rejected_malformed,
		(unsigned long long)st.rejected_defaults,
		(unsigned long long)st.gap_ids,
		(unsigned long long)st.kernel_errors);
	nfqbt_assert_counters(&st, "rejected_malformed=1 %s>=1 accepted=%u "
			      "outstanding=0 kernel_errors=0",
			      mode == RX_BAD_PAYLOAD_LEN ? "rejected_defaults" :
			      "gap_ids", CORRUPT_N - 1);
	ck_assert_uint_eq(kq_total(), 0);
	flow_end(&f);
}

START_TEST(test_corrupt_payload_len)
{
	run_corrupt(RX_BAD_PAYLOAD_LEN);
}
END_TEST

START_TEST(test_corrupt_packet_hdr)
{
	run_corrupt(RX_BAD_PACKET_HDR);
}
END_TEST

/* One test case per concern: CK_RUN_CASE=wake runs only those. */
static Suite *safety_suite(void)
{
	Suite *s = suite_create("integration-safety");
	TCase *tc = nfqbt_tcase_netns(s, "send", NFQBT_TCASE_TIMEOUT);

	tcase_add_test(tc, test_send_fail_drop_kept);
	tcase_add_test(tc, test_send_fail_long_blocked_owner);
	tcase_add_test(tc, test_send_fail_long_flush_poll);
	tcase_add_test(tc, test_send_fail_no_cover);
	tc = nfqbt_tcase_netns(s, "handle", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_dead_handle);
	tc = nfqbt_tcase_netns(s, "wake", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_blocked_owner_wake);
	tcase_add_test(tc, test_blocked_owner_wake_poll);
	tc = nfqbt_tcase_netns(s, "timers", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_head_expiry_no_traffic);
	tcase_add_test(tc, test_idle_after_held);
	tcase_add_test(tc, test_timeout_frees_buffers);
	tc = nfqbt_tcase_netns(s, "config", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_config_buffers_held);
	tcase_add_test(tc, test_config_full_socket);
	tc = nfqbt_tcase_netns(s, "corrupt", NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_corrupt_payload_len);
	tcase_add_test(tc, test_corrupt_packet_hdr);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_safety", safety_suite());
}
