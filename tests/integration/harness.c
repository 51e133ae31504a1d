// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration test harness; see harness.h for how cleanup is guaranteed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* --- Namespace and rules ----------------------------------------------- */

uint64_t nfqbt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t nfqbt_thread_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

void nfqbt_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void nfqbt_netns_enter(void)
{
	struct ifreq ifr;
	int fd, ret;

	ret = unshare(CLONE_NEWNET);
	ck_assert_msg(ret == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ck_assert_msg(ret == 0, "SIOCGIFFLAGS lo: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	ck_assert_msg(ret == 0, "SIOCSIFFLAGS lo: %s", strerror(errno));
	close(fd);
}

static void run_tables(const char *tool, const char *fmt, va_list ap)
{
	char args[512], cmd[600];
	int n, status;

	n = vsnprintf(args, sizeof(args), fmt, ap);
	ck_assert(n > 0 && (size_t)n < sizeof(args));

	snprintf(cmd, sizeof(cmd), "%s -w %s", tool, args);
	status = system(cmd);
	ck_assert_msg(status != -1 && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
		      "'%s' failed (status %d)", cmd, status);
}

void nfqbt_iptables(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	run_tables("iptables", fmt, ap);
	va_end(ap);
}

void nfqbt_ip6tables(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	run_tables("ip6tables", fmt, ap);
	va_end(ap);
}

void nfqbt_lo6_up(void)
{
	static const char knob[] = "/proc/sys/net/ipv6/conf/lo/disable_ipv6";
	struct sockaddr_in6 sin6 = nfqbt_lo6_addr(0);
	uint64_t until = nfqbt_now_ms() + 2000;
	int fd, ret;
	FILE *f;

	/* a new namespace takes its devices' setting from the host's
	 * net.ipv6.conf.default: turn IPv6 on for lo, in this one only */
	f = fopen(knob, "w");
	ck_assert_msg(f != NULL, "%s: %s (no IPv6?)", knob, strerror(errno));
	ck_assert_msg(fputs("0\n", f) >= 0 && fclose(f) == 0, "%s: %s", knob,
		      strerror(errno));
	/* ::1 comes with lo up (no duplicate address detection there) */
	for (;;) {
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
		ret = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6));
		close(fd);
		if (ret == 0)
			return;
		ck_assert_msg(nfqbt_now_ms() < until, "bind [::1]: %s",
			      strerror(errno));
		nfqbt_sleep_ms(10);
	}
}

void nfqbt_rule_queue(uint16_t dport, uint16_t qnum, bool bypass)
{
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE --queue-num %u%s",
		       dport, qnum, bypass ? " --queue-bypass" : "");
}

/* --- UDP receiver ------------------------------------------------------ */

struct nfqbt_rx {
	int fd;
	struct nfqbt_rx_opts o;
	pthread_t thread;
	bool joined;
	atomic_bool stop;
	atomic_uint total;
	unsigned int fresh;		/* different expected seqs seen */
	unsigned int bad;
	int err;			/* errno of a failed recvmsg */
	uint16_t *count;		/* [o.max_seq] */
	uint32_t *mark;			/* [o.max_seq] */
	uint8_t *has_mark;		/* [o.max_seq] */
	size_t store_len[NFQBT_RX_STORE];
	uint8_t store[NFQBT_RX_STORE][NFQBT_RX_STORE_BYTES];
};

static void rx_record(struct nfqbt_rx *rx, const uint8_t *buf, size_t len,
		      bool has_mark, uint32_t mark)
{
	uint32_t seq;

	if (len < 4) {
		rx->bad++;
		return;
	}
	memcpy(&seq, buf, 4);
	seq = ntohl(seq);
	if (seq >= rx->o.max_seq) {
		rx->bad++;
		return;
	}
	if (!rx->count[seq] &&
	    (!rx->o.expect || rx->o.expect(seq, rx->o.expect_data)))
		rx->fresh++;
	if (rx->count[seq] < UINT16_MAX)
		rx->count[seq]++;
	rx->has_mark[seq] = has_mark;
	rx->mark[seq] = has_mark ? mark : 0;
	if (seq < NFQBT_RX_STORE) {
		rx->store_len[seq] = len;
		memcpy(rx->store[seq], buf,
		       len < NFQBT_RX_STORE_BYTES ? len : NFQBT_RX_STORE_BYTES);
	}
}

/* Read one datagram if there is one: 1, 0 if none, -1 (rx->err) if the
 * socket failed. */
static int rx_read_one(struct nfqbt_rx *rx, uint8_t *buf, size_t bufsize)
{
	union {
		char b[CMSG_SPACE(sizeof(uint32_t)) * 4];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = bufsize };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf.b,
		.msg_controllen = sizeof(cbuf.b),
	};
	struct cmsghdr *cm;
	bool has_mark = false;
	uint32_t mark = 0;
	ssize_t n;

	n = recvmsg(rx->fd, &mh, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		rx->err = errno;
		return -1;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SO_MARK &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
			memcpy(&mark, CMSG_DATA(cm), sizeof(mark));
			has_mark = true;
		}
	}
	rx_record(rx, buf, (size_t)n, has_mark, mark);
	atomic_fetch_add(&rx->total, 1);
	return 1;
}

static void *rx_main(void *arg)
{
	struct nfqbt_rx *rx = arg;
	static const size_t bufsize = 65536;
	uint64_t start = nfqbt_now_ms(), last = start, done_at = 0;
	uint8_t *buf = malloc(bufsize);

	if (!buf) {
		rx->err = ENOMEM;
		return NULL;
	}
	while (!atomic_load(&rx->stop)) {
		struct pollfd pfd = { .fd = rx->fd, .events = POLLIN };
		uint64_t now = nfqbt_now_ms();
		int r;

		if (now - start >= rx->o.timeout_ms)
			break;
		if (done_at && now - done_at >= rx->o.linger_ms)
			break;
		if (now - last >= rx->o.quiet_ms)
			break;

		if (poll(&pfd, 1, 10) <= 0)
			continue;
		r = rx_read_one(rx, buf, bufsize);
		if (r < 0)
			break;
		if (!r)
			continue;
		last = nfqbt_now_ms();
		if (!done_at && rx->o.expected && rx->fresh >= rx->o.expected)
			done_at = last;
	}
	free(buf);
	return NULL;
}

/*
 * After the thread ended (stopped, or by itself once quiet): count what the
 * socket still holds. A datagram delivered while the thread was not
 * reading any more (a quiet spell longer than quiet_ms while the
 * application held its packets, then a close that let them all go) is
 * counted, not taken for lost.
 */
static void rx_drain(struct nfqbt_rx *rx)
{
	static const size_t bufsize = 65536;
	uint8_t *buf = malloc(bufsize);
	unsigned int i;

	ck_assert(buf);
	for (i = 0; i < 1000000 && rx_read_one(rx, buf, bufsize) > 0; i++)
		;
	free(buf);
}

struct nfqbt_rx *nfqbt_rx_start(uint16_t port, const struct nfqbt_rx_opts *o)
{
	struct sockaddr_in sin = nfqbt_lo_addr(port);
	struct nfqbt_rx *rx;
	int one = 1, size = 8 << 20, ret;

	rx = calloc(1, sizeof(*rx));
	ck_assert(rx != NULL);
	if (o)
		rx->o = *o;
	if (!rx->o.max_seq)
		rx->o.max_seq = NFQBT_RX_MAX_SEQ;
	rx->count = calloc(rx->o.max_seq, sizeof(*rx->count));
	rx->mark = calloc(rx->o.max_seq, sizeof(*rx->mark));
	rx->has_mark = calloc(rx->o.max_seq, sizeof(*rx->has_mark));
	ck_assert(rx->count && rx->mark && rx->has_mark);
	if (!rx->o.linger_ms)
		rx->o.linger_ms = 100;
	if (!rx->o.quiet_ms)
		rx->o.quiet_ms = 1000;
	if (!rx->o.timeout_ms)
		rx->o.timeout_ms = 15000;

	rx->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(rx->fd >= 0, "socket: %s", strerror(errno));
	ret = setsockopt(rx->fd, SOL_SOCKET, SO_RCVMARK, &one, sizeof(one));
	ck_assert_msg(ret == 0, "SO_RCVMARK: %s", strerror(errno));
	if (setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
		       sizeof(size)) < 0)
		setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	ret = bind(rx->fd, (struct sockaddr *)&sin, sizeof(sin));
	ck_assert_msg(ret == 0, "bind 127.0.0.1:%u: %s", port,
		      strerror(errno));

	ret = pthread_create(&rx->thread, NULL, rx_main, rx);
	ck_assert_msg(ret == 0, "pthread_create: %s", strerror(ret));
	return rx;
}

void nfqbt_rx_wait(struct nfqbt_rx *rx)
{
	if (rx->joined)
		return;
	pthread_join(rx->thread, NULL);
	rx->joined = true;
	ck_assert_msg(rx->err == 0, "receiver: %s", strerror(rx->err));
	rx_drain(rx);
	ck_assert_msg(rx->err == 0, "receiver: %s", strerror(rx->err));
}

void nfqbt_rx_stop(struct nfqbt_rx *rx)
{
	atomic_store(&rx->stop, true);
	nfqbt_rx_wait(rx);
}

void nfqbt_rx_free(struct nfqbt_rx *rx)
{
	if (!rx)
		return;
	nfqbt_rx_stop(rx);
	close(rx->fd);
	free(rx->count);
	free(rx->mark);
	free(rx->has_mark);
	free(rx);
}

unsigned int nfqbt_rx_total(const struct nfqbt_rx *rx)
{
	return atomic_load(&rx->total);
}

const atomic_uint *nfqbt_rx_total_ptr(const struct nfqbt_rx *rx)
{
	return &rx->total;
}

bool nfqbt_rx_wait_total(const struct nfqbt_rx *rx, unsigned int n,
			 unsigned int timeout_ms)
{
	return nfqbt_wait_count(&rx->total, n, timeout_ms);
}

void nfqbt_rx_assert_more(const struct nfqbt_rx *rx, unsigned int n,
			  const char *what)
{
	unsigned int before = nfqbt_rx_total(rx);

	ck_assert_msg(nfqbt_rx_wait_total(rx, before + n, 15000),
		      "after %s: %u datagrams arrived, not %u more in 15 s",
		      what, before, n);
}

unsigned int nfqbt_rx_bad(const struct nfqbt_rx *rx)
{
	return rx->bad;
}

unsigned int nfqbt_rx_count(const struct nfqbt_rx *rx, uint32_t seq)
{
	return seq < rx->o.max_seq ? rx->count[seq] : 0;
}

bool nfqbt_rx_mark(const struct nfqbt_rx *rx, uint32_t seq, uint32_t *mark)
{
	if (seq >= rx->o.max_seq || !rx->count[seq] || !rx->has_mark[seq])
		return false;
	*mark = rx->mark[seq];
	return true;
}

uint32_t nfqbt_rx_mark_of(const struct nfqbt_rx *rx, uint32_t seq)
{
	uint32_t mark = 0;

	ck_assert_msg(nfqbt_rx_mark(rx, seq, &mark),
		      "seq %u arrived without SO_MARK", seq);
	return mark;
}

const uint8_t *nfqbt_rx_payload(const struct nfqbt_rx *rx, uint32_t seq,
				size_t *len)
{
	if (seq >= NFQBT_RX_STORE || !rx->count[seq])
		return NULL;
	*len = rx->store_len[seq];
	return rx->store[seq];
}

void nfqbt_rx_assert_exact(const struct nfqbt_rx *rx, uint32_t first,
			   unsigned int n, nfqbt_expect_fn expect, void *data)
{
	unsigned int want_total = 0, missing = 0, dup = 0, extra = 0;
	uint32_t first_bad = UINT32_MAX, seq;

	ck_assert_uint_le(first + (uint64_t)n, rx->o.max_seq);
	ck_assert_uint_eq(nfqbt_rx_bad(rx), 0);
	for (seq = first; seq < first + n; seq++) {
		bool want = expect ? expect(seq, data) : true;
		unsigned int got = nfqbt_rx_count(rx, seq);

		want_total += want;
		if (want && got == 0)
			missing++;
		else if (want && got > 1)
			dup++;
		else if (!want && got)
			extra++;
		else
			continue;
		if (first_bad == UINT32_MAX)
			first_bad = seq;
	}
	ck_assert_msg(!missing && !dup && !extra,
		      "receiver: %u missing, %u duplicated, %u unexpected "
		      "(first wrong seq %u, got it %u times)", missing, dup,
		      extra, first_bad, nfqbt_rx_count(rx, first_bad));
	/* and nothing outside the range */
	ck_assert_uint_eq(nfqbt_rx_total(rx), want_total);
}

/* --- UDP sender -------------------------------------------------------- */

void nfqbt_rx_wait_exact(struct nfqbt_rx *rx, uint32_t first, unsigned int n,
			 nfqbt_expect_fn expect, void *data)
{
	nfqbt_rx_wait(rx);
	nfqbt_rx_assert_exact(rx, first, n, expect, data);
}

void nfqbt_fill_payload(uint8_t *buf, size_t size, uint32_t seq)
{
	uint32_t nseq = htonl(seq);
	size_t i;

	memcpy(buf, &nseq, 4);
	for (i = 4; i < size; i++)
		buf[i] = (uint8_t)(seq * 7 + i);
}

unsigned int nfqbt_tx_size(const struct nfqbt_tx_opts *o, uint32_t seq)
{
	unsigned int size = o->size ? o->size : 64;

	if (o->size_max <= size)
		return size;
	return size + (unsigned int)((seq * 2654435761u) %
				     (o->size_max - size + 1));
}

struct nfqbt_tx {
	struct nfqbt_tx_opts o;
	pthread_t thread;
	atomic_uint sent;
	atomic_bool stop;
	atomic_bool unwindowed;
	int err;
	const char *what;
};

struct sockaddr_in nfqbt_lo_addr(uint16_t port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return sin;
}

int nfqbt_flow_set(void)
{
	const char *env = getenv("NFQBT_FLOW_SET");
	unsigned long k;
	char *end;

	if (!env || !*env)
		return 0;
	if (*env < '0' || *env > '9')
		return -1;
	errno = 0;
	k = strtoul(env, &end, 10);
	if (errno || *end || k > NFQBT_FLOW_SET_MAX)
		return -1;
	return (int)k;
}

uint32_t nfqbt_flow_addr(unsigned int host)
{
	int k = nfqbt_flow_set();

	ck_assert_msg(k >= 0, "NFQBT_FLOW_SET=%s: not a number from 0 to %u",
		      getenv("NFQBT_FLOW_SET"), NFQBT_FLOW_SET_MAX);
	ck_assert_msg(host >= 1 && host <= 254, "flow address 127.0.%d.%u",
		      k, host);
	return 0x7f000000u | (uint32_t)k << 8 | host;
}

struct sockaddr_in6 nfqbt_lo6_addr(uint16_t port)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_LOOPBACK_INIT,
	};

	return sin6;
}

int nfqbt_udp_socket(uint32_t src)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(src),
	};
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (src && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static void tx_run(struct nfqbt_tx *tx)
{
	struct nfqbt_tx_opts *o = &tx->o;
	struct sockaddr_in sin = nfqbt_lo_addr(o->port);
	unsigned int base = o->progress ? atomic_load(o->progress) : 0;
	uint64_t start = nfqbt_now_ms();
	uint8_t *buf;
	int fd;

	if (!o->size)
		o->size = 64;
	if (!o->timeout_ms)
		o->timeout_ms = 10000;
	if (o->size < 4 || o->size > 65000 || o->size_max > 65000) {
		tx->err = EINVAL;
		tx->what = "payload size";
		return;
	}
	buf = malloc(o->size_max > o->size ? o->size_max : o->size);
	fd = nfqbt_udp_socket(o->src);
	if (!buf || fd < 0) {
		tx->err = buf ? errno : ENOMEM;
		tx->what = "socket";
		goto out;
	}
	if (o->priority &&
	    setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o->priority,
		       sizeof(o->priority)) < 0) {
		tx->err = errno;
		tx->what = "SO_PRIORITY";
		goto out;
	}

	while (tx->sent < o->count) {
		uint32_t seq = o->first_seq + tx->sent;
		size_t size = nfqbt_tx_size(o, seq);
		ssize_t n;

		if (nfqbt_now_ms() - start >= o->timeout_ms ||
		    atomic_load(&tx->stop))
			break;
		if (o->window && o->progress && !atomic_load(&tx->unwindowed)) {
			unsigned int done = atomic_load(o->progress) - base;

			if (tx->sent > done && tx->sent - done >= o->window) {
				usleep(100);
				continue;
			}
		}
		nfqbt_fill_payload(buf, size, seq);
		n = sendto(fd, buf, size, 0, (struct sockaddr *)&sin,
			   sizeof(sin));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ENOBUFS) {
				usleep(100);
				continue;
			}
			if (errno != EPERM) {
				tx->err = errno;
				tx->what = "sendto";
				break;
			}
		} else if ((size_t)n != size) {
			tx->err = EMSGSIZE;
			tx->what = "short sendto";
			break;
		}
		tx->sent++;
		if (o->pace_us)
			usleep(o->pace_us);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

unsigned int nfqbt_send(const struct nfqbt_tx_opts *o)
{
	struct nfqbt_tx tx = { .o = *o };

	tx_run(&tx);
	ck_assert_msg(tx.err == 0, "sender: %s: %s", tx.what,
		      strerror(tx.err));
	return tx.sent;
}

void nfqbt_send_seqs(uint16_t port, uint32_t first, unsigned int n)
{
	struct nfqbt_tx_opts o = { .port = port, .first_seq = first,
				   .count = n };

	ck_assert_uint_eq(nfqbt_send(&o), n);
}

static void *tx_main(void *arg)
{
	tx_run(arg);
	return NULL;
}

struct nfqbt_tx *nfqbt_tx_start(const struct nfqbt_tx_opts *o)
{
	struct nfqbt_tx *tx;
	int ret;

	tx = calloc(1, sizeof(*tx));
	ck_assert(tx != NULL);
	tx->o = *o;
	ret = pthread_create(&tx->thread, NULL, tx_main, tx);
	ck_assert_msg(ret == 0, "pthread_create: %s", strerror(ret));
	return tx;
}

unsigned int nfqbt_tx_sent(const struct nfqbt_tx *tx)
{
	return atomic_load(&tx->sent);
}

void nfqbt_tx_unwindow(struct nfqbt_tx *tx)
{
	atomic_store(&tx->unwindowed, true);
}

unsigned int nfqbt_tx_stop(struct nfqbt_tx *tx)
{
	atomic_store(&tx->stop, true);
	return nfqbt_tx_join(tx);
}

unsigned int nfqbt_tx_finish(struct nfqbt_tx *tx, const struct nfqbt_rx *rx)
{
	unsigned int sent = nfqbt_tx_stop(tx);

	ck_assert_msg(nfqbt_rx_wait_total(rx, sent, 15000),
		      "sent %u, arrived %u", sent, nfqbt_rx_total(rx));
	return sent;
}

unsigned int nfqbt_tx_join(struct nfqbt_tx *tx)
{
	unsigned int sent;
	int err;
	const char *what;

	pthread_join(tx->thread, NULL);
	sent = tx->sent;
	err = tx->err;
	what = tx->what;
	free(tx);
	ck_assert_msg(err == 0, "sender: %s: %s", what, strerror(err));
	return sent;
}

/* --- Queues ----------------------------------------------------------- */

struct nfqb_queue *nfqbt_queue_open(uint16_t num)
{
	struct nfqb_queue *q = nfqb_queue_open(num);

	ck_assert_msg(q != NULL, "nfqb_queue_open(%u): %s", num,
		      strerror(errno));
	return q;
}

struct nfqb_queue *nfqbt_queue_open_nb(uint16_t num)
{
	struct nfqb_queue *q = nfqbt_queue_open(num);

	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	return q;
}

struct nfqb_stats nfqbt_queue_stats(const struct nfqb_queue *q)
{
	struct nfqb_stats st;

	memset(&st, 0xee, sizeof(st));
	ck_assert_int_eq(nfqb_queue_stats(q, &st, sizeof(st)), 0);
	return st;
}

/* --- Consumer helpers -------------------------------------------------- */

bool nfqbt_pkt_seq(const struct nfqb_packet *p, uint32_t *seq)
{
	const uint8_t *d;
	uint32_t len, ihl, v;

	d = nfqb_pkt_payload(p, &len);
	if (!d || len < 20 || (d[0] >> 4) != 4 || d[9] != IPPROTO_UDP)
		return false;
	ihl = (uint32_t)(d[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8 + 4)
		return false;
	memcpy(&v, d + ihl + 8, 4);
	*seq = ntohl(v);
	return true;
}

void nfqbt_cons_init(struct nfqbt_cons *c, struct nfqb_queue *q,
		     nfqbt_decide_fn decide, void *data)
{
	memset(c, 0, sizeof(*c));
	c->q = q;
	c->decide = decide;
	c->data = data;
	c->max_vec = 64;
	atomic_init(&c->handled, 0);
	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
}

unsigned int nfqbt_cons_run(struct nfqbt_cons *c, unsigned int n,
			    unsigned int timeout_ms)
{
	struct nfqb_packet *vec[256];
	unsigned int max = c->max_vec, done = 0;
	uint64_t start = nfqbt_now_ms();
	bool stop = false;

	if (max == 0 || max > 256)
		max = 256;
	while (done < n && !stop) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(c->q),
				      .events = POLLIN };
		uint64_t now = nfqbt_now_ms();
		int i, got, wait;

		if (now - start >= timeout_ms)
			break;
		got = nfqb_recv(c->q, vec, max);
		if (got < 0) {
			if (errno == ENOBUFS) {
				c->enobufs++;
				continue;
			}
			ck_assert_msg(errno == EAGAIN || errno == EINTR,
				      "nfqb_recv: %s", strerror(errno));
			wait = nfqb_queue_next_timeout(c->q);
			if (wait < 0 || wait > 10)
				wait = 10;
			poll(&pfd, 1, wait);
			continue;
		}
		for (i = 0; i < got; i++) {
			uint32_t seq;

			if (!nfqbt_pkt_seq(vec[i], &seq)) {
				c->not_udp++;
				seq = UINT32_MAX;
			}
			atomic_fetch_add(&c->handled, 1);
			done++;
			if (c->decide(vec[i], seq, c->data) < 0)
				stop = true;
		}
	}
	ck_assert_msg(nfqb_flush(c->q) >= 0, "nfqb_flush: %s",
		      strerror(errno));
	return done;
}

void nfqbt_cons_pump(struct nfqbt_cons *c, const struct nfqbt_tx_opts *o,
		     unsigned int timeout_ms)
{
	struct nfqbt_tx_opts to = *o;
	struct nfqbt_tx *tx;

	if (to.window && !to.progress)
		to.progress = &c->handled;
	tx = nfqbt_tx_start(&to);
	ck_assert_uint_eq(nfqbt_cons_run(c, to.count, timeout_ms), to.count);
	ck_assert_uint_eq(nfqbt_tx_join(tx), to.count);
}

void nfqbt_recv_n(struct nfqb_queue *q, struct nfqb_packet **vec,
		  unsigned int n)
{
	unsigned int got = 0, tries;

	for (tries = 0; got < n && tries < 1000; tries++) {
		int r = nfqb_recv(q, vec + got, n - got);

		ck_assert_msg(r > 0 || errno == EINTR, "nfqb_recv: %s",
			      strerror(errno));
		if (r > 0)
			got += (unsigned int)r;
	}
	ck_assert_uint_eq(got, n);
}

int nfqbt_pool_accept(struct nfqb_packet *p, void *policy, void *cb_data,
		      struct nfqb_verdict *v)
{
	(void)p;
	(void)policy;
	(void)cb_data;
	v->verdict = NFQB_ACCEPT;
	return NFQB_POOL_VERDICT;
}

int nfqbt_decide_accept(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)seq;
	(void)data;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return 0;
}

int nfqbt_decide_drop(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)seq;
	(void)data;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_DROP), 0);
	return 0;
}

/* The process that runs the suite (the tests are its children). */
static pid_t suite_pid;

/* Where nfqbt_ips_staged() puts its copy, for the suite of @pid. */
static void staged_dir(char *dir, size_t size, pid_t pid)
{
	snprintf(dir, size, "/run/nfqbt-stage.%d", (int)pid);
}

/* Run @s (@fork: each test in its own process, whatever CK_FORK says);
 * returns the failures. */
static int run_all(Suite *s, bool fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (fork)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

int nfqbt_run_suite(const char *name, Suite *s)
{
	char dir[64];
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root (network namespaces, "
			"iptables)\n", name);
		return getenv("CI") ? 1 : 77;
	}
	if (nfqbt_flow_set() < 0) {
		fprintf(stderr, "%s: NFQBT_FLOW_SET=%s: not a number from 0 "
			"to %u\n", name, getenv("NFQBT_FLOW_SET"),
			NFQBT_FLOW_SET_MAX);
		return 99;
	}
	if (nfqbt_flow_set() > 0) {
		printf("%s: flow set %d (sources 127.0.%d.x)\n", name,
		       nfqbt_flow_set(), nfqbt_flow_set());
		fflush(stdout);
	}
	suite_pid = getpid();
	failed = run_all(s, true);
	/* what nfqbt_ips_staged() made for the tests */
	staged_dir(dir, sizeof(dir), suite_pid);
	nfqbt_rm_rf(dir);
	return failed ? 1 : 0;
}

int nfqbt_run(Suite *s)
{
	return run_all(s, false) ? EXIT_FAILURE : EXIT_SUCCESS;
}

TCase *nfqbt_tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

TCase *nfqbt_tcase_tests(Suite *s, const char *name, double timeout,
			 const TTest *const *tests)
{
	TCase *tc = tcase_create(name);

	if (timeout > 0)
		tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
	return tc;
}

TCase *nfqbt_tcase_netns(Suite *s, const char *name, double timeout)
{
	TCase *tc = nfqbt_tcase(s, name, timeout);

	tcase_add_checked_fixture(tc, nfqbt_netns_enter, NULL);
	return tc;
}

void nfqbt_rm_rf(const char *dir)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			nfqbt_rm_rf(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int nfqbt_decide_mark(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)seq;
	return nfqb_verdict_mark(p, NFQB_ACCEPT, *(const uint32_t *)data);
}

void nfqbt_ips_rules(char *tmpl, const char *fmt, ...)
{
	int fd = mkstemp(tmpl);
	va_list ap;
	FILE *f;

	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	f = fdopen(fd, "w");
	ck_assert(f != NULL);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	ck_assert(fclose(f) == 0);
	ck_assert(chmod(tmpl, 0644) == 0);
}

bool nfqbt_find_ips(char *path, size_t size)
{
	char self[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int up;

	if (n <= 0)
		return false;
	self[n] = 0;
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	for (up = 0; up < 5; up++) {
		struct stat st;

		if (snprintf(path, size, "%s/ips/nfqb-ips", dir) >=
		    (int)size)
			return false;
		if (stat(path, &st) == 0)
			return true;
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/..");
	}
	return false;
}

/* Copy @src to @dst (created with @mode, replaced if there); ck_assert on
 * failure. */
static void copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(src, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(in >= 0, "%s: %s", src, strerror(errno));
	unlink(dst);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ck_assert_msg(out >= 0, "%s: %s", dst, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_msg(write(out, buf, n) == n, "%s: %s", dst,
			      strerror(errno));
	ck_assert_msg(n == 0, "%s: %s", src, strerror(errno));
	close(in);
	ck_assert_msg(close(out) == 0, "%s: %s", dst, strerror(errno));
	ck_assert(chmod(dst, mode) == 0);
}

static bool is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);
	close(fd);
	return elf;
}

void nfqbt_stage_program(const char *prog, const char *builddir,
			 const char *dir, char *exe, size_t size)
{
	char elf[PATH_MAX], top[PATH_MAX], path[PATH_MAX + 64];
	char line[PATH_MAX + 128], *base, *name, *lib, *end;
	char tmp[PATH_MAX], env[PATH_MAX + 64];
	int pfd[2], status, copied = 0;
	const char *old;
	size_t toplen;
	FILE *f;
	pid_t pid;

	/* the program itself: a libtool wrapper script runs .libs/NAME */
	snprintf(elf, sizeof(elf), "%s", prog);
	if (!is_elf(elf)) {
		snprintf(tmp, sizeof(tmp), "%s", prog);
		base = basename(tmp);
		snprintf(path, sizeof(path), "%s", prog);
		snprintf(elf, sizeof(elf), "%s/.libs/%s", dirname(path), base);
	}
	ck_assert_msg(is_elf(elf), "%s: not a program, nor a libtool wrapper "
		      "of one (%s)", prog, elf);
	ck_assert_msg(realpath(builddir, top), "%s: %s", builddir,
		      strerror(errno));
	toplen = strlen(top);

	snprintf(path, sizeof(path), "%s/bin", dir);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "%s: %s",
		      path, strerror(errno));
	snprintf(path, sizeof(path), "%s/lib", dir);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "%s: %s",
		      path, strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s", prog);
	ck_assert_msg((size_t)snprintf(exe, size, "%s/bin/%s", dir,
				       basename(tmp)) < size, "%s: too long",
		      dir);
	copy_file(elf, exe, 0755);

	/* its libraries from the build tree, as its libtool wrapper finds
	 * them (LD_LIBRARY_PATH=BUILDDIR/lib/.libs): ldd's lines
	 * "\tSONAME => PATH (ADDRESS)" */
	old = getenv("LD_LIBRARY_PATH");
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s/lib/.libs%s%s", top,
		 old && *old ? ":" : "", old ? old : "");
	ck_assert(pipe2(pfd, O_CLOEXEC) == 0);
	fflush(NULL);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		char *const argv[] = { "ldd", elf, NULL };
		char *const envp[] = { env, "PATH=/usr/bin:/bin", NULL };

		dup2(pfd[1], 1);
		execve("/usr/bin/ldd", argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ck_assert(f);
	while (fgets(line, sizeof(line), f)) {
		name = line + strspn(line, " \t");
		end = strstr(name, " => ");
		if (!end)
			continue;
		*end = 0;
		lib = end + 4;
		end = strstr(lib, " (");
		if (end)
			*end = 0;
		lib[strcspn(lib, "\n")] = 0;
		/* not found, or not from the build tree */
		if (strncmp(lib, top, toplen) || lib[toplen] != '/')
			continue;
		snprintf(path, sizeof(path), "%s/lib/%s", dir, name);
		copy_file(lib, path, 0644);
		copied++;
	}
	fclose(f);
	ck_assert(waitpid(pid, &status, 0) == pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "ldd %s failed", elf);
	ck_assert_msg(copied > 0, "ldd %s: no library of the build tree %s",
		      elf, top);
}

void nfqbt_stage_ips(const char *dir, char *exe, size_t size)
{
	char ips[PATH_MAX], top[PATH_MAX];

	ck_assert_msg(nfqbt_find_ips(ips, sizeof(ips)), "ips/nfqb-ips "
		      "not found above this program");
	/* BUILDDIR/ips/nfqb-ips */
	snprintf(top, sizeof(top), "%s", ips);
	nfqbt_stage_program(ips, dirname(dirname(top)), dir, exe, size);
}

void nfqbt_ips_staged(char *exe, size_t size)
{
	char dir[64], env[PATH_MAX + 128];
	const char *old = getenv("LD_LIBRARY_PATH");
	struct stat st;

	staged_dir(dir, sizeof(dir), suite_pid ? suite_pid : getpid());
	ck_assert_msg((size_t)snprintf(exe, size, "%s/bin/nfqb-ips", dir) <
		      size, "%s: too long", dir);
	if (stat(exe, &st) != 0) {	/* else staged by an earlier test */
		ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST,
			      "%s: %s", dir, strerror(errno));
		ck_assert(chmod(dir, 0755) == 0);
		nfqbt_stage_ips(dir, exe, size);
	}
	/* for the programs this test starts from now on */
	ck_assert((size_t)snprintf(env, sizeof(env), "%s/lib%s%s", dir,
				   old && *old ? ":" : "", old ? old : "") <
		  sizeof(env));
	setenv("LD_LIBRARY_PATH", env, 1);
}

bool nfqbt_wait_count(const atomic_uint *counter, unsigned int n,
		      unsigned int timeout_ms)
{
	uint64_t start = nfqbt_now_ms();

	while (atomic_load(counter) < n) {
		if (nfqbt_now_ms() - start >= timeout_ms)
			return false;
		usleep(500);
	}
	return true;
}

/* --- A flow: traffic through one queue --------------------------------- */

void nfqbt_flow_start(struct nfqbt_flow *f, uint16_t port, uint16_t qnum,
		      const struct nfqbt_rx_opts *ro, nfqbt_decide_fn decide,
		      void *data)
{
	f->port = port;
	nfqbt_rule_queue(port, qnum, false);
	f->q = nfqbt_queue_open(qnum);
	f->rx = nfqbt_rx_start(port, ro);
	if (decide)
		nfqbt_cons_init(&f->c, f->q, decide, data);
	else
		memset(&f->c, 0, sizeof(f->c));
}

void nfqbt_flow_end(struct nfqbt_flow *f)
{
	ck_assert_msg(nfqb_queue_close(f->q) == 0, "nfqb_queue_close: %s",
		      strerror(errno));
	nfqbt_rx_free(f->rx);
}

/* --- Kernel statistics ------------------------------------------------- */

struct nfqb_kstats nfqbt_kstats(uint16_t num)
{
	struct nfqb_kstats ks;
	int ret;

	memset(&ks, 0, sizeof(ks));
	ret = nfqb_kstats_get(num, &ks, sizeof(ks));
	ck_assert_msg(ret == 0, "nfqb_kstats_get(%u): %s", num,
		      strerror(errno));
	ck_assert_uint_eq(ks.queue_num, num);
	return ks;
}

bool nfqbt_wait_kqueue_total(uint16_t num, unsigned int n,
			     unsigned int timeout_ms)
{
	uint64_t start = nfqbt_now_ms();

	for (;;) {
		struct nfqb_kstats ks = nfqbt_kstats(num);

		if (ks.queue_total >= n)
			return true;
		if (nfqbt_now_ms() - start >= timeout_ms)
			return false;
		usleep(1000);
	}
}

uint32_t nfqbt_portid(int fd)
{
	struct sockaddr_nl snl;
	socklen_t len = sizeof(snl);
	int ret;

	memset(&snl, 0, sizeof(snl));
	ret = getsockname(fd, (struct sockaddr *)&snl, &len);
	ck_assert_msg(ret == 0, "getsockname: %s", strerror(errno));
	ck_assert_int_eq(snl.nl_family, AF_NETLINK);
	return snl.nl_pid;
}

/* --- Packets ----------------------------------------------------------- */

uint16_t nfqbt_inet_csum(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

size_t nfqbt_build_udp4(uint8_t *out, size_t out_size, const uint8_t *orig,
			size_t orig_len, const uint8_t *payload,
			size_t payload_len)
{
	size_t ihl, total;
	uint16_t v;

	if (orig_len < 20 || (orig[0] >> 4) != 4 || orig[9] != IPPROTO_UDP)
		return 0;
	ihl = (size_t)(orig[0] & 0x0f) * 4;
	if (ihl < 20 || orig_len < ihl + 8)
		return 0;
	total = ihl + 8 + payload_len;
	if (total > out_size || total > 0xffff)
		return 0;

	memcpy(out, orig, ihl + 8);
	memcpy(out + ihl + 8, payload, payload_len);
	v = htons((uint16_t)total);
	memcpy(out + 2, &v, 2);
	out[10] = out[11] = 0;
	v = nfqbt_inet_csum(out, ihl);
	memcpy(out + 10, &v, 2);
	v = htons((uint16_t)(8 + payload_len));
	memcpy(out + ihl + 4, &v, 2);
	out[ihl + 6] = out[ihl + 7] = 0;
	return total;
}

/* --- TCP transfer ------------------------------------------------------- */

static void *tcp_sink_main(void *arg)
{
	struct nfqbt_tcp *k = arg;
	char buf[65536];
	int fd = accept(k->lfd, NULL, NULL);
	ssize_t r;

	if (fd < 0)
		return NULL;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		k->got += (size_t)r;
	close(fd);
	atomic_store(&k->done, true);
	if (k->q)
		nfqb_queue_interrupt(k->q);
	return NULL;
}

static void *tcp_source_main(void *arg)
{
	static char buf[256 * 1024];
	struct nfqbt_tcp *k = arg;
	struct sockaddr_in sa = nfqbt_lo_addr(k->port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t sent = 0;

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (sent < k->bytes) {
		size_t want = k->bytes - sent < sizeof(buf) ?
			      k->bytes - sent : sizeof(buf);
		ssize_t w = write(fd, buf, want);

		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	close(fd);
	return NULL;
}

void nfqbt_tcp_start(struct nfqbt_tcp *k, uint16_t port, size_t bytes,
		     struct nfqb_queue *q)
{
	struct sockaddr_in sa = nfqbt_lo_addr(port);
	int one = 1;

	memset(k, 0, sizeof(*k));
	k->port = port;
	k->bytes = bytes;
	k->q = q;
	k->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(k->lfd, 0);
	setsockopt(k->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(k->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(k->lfd, 1), 0);
	ck_assert_int_eq(pthread_create(&k->dst, NULL, tcp_sink_main, k), 0);
	ck_assert_int_eq(pthread_create(&k->src, NULL, tcp_source_main, k), 0);
}

void nfqbt_tcp_join(struct nfqbt_tcp *k)
{
	pthread_join(k->src, NULL);
	pthread_join(k->dst, NULL);
	close(k->lfd);
	k->lfd = -1;
}
