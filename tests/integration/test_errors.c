// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every documented errno of every public function, one table row each:
 * the row makes the situation (on the real kernel, in the test's own
 * network namespace, with the test seam for failing allocations and
 * sends, and a clock that runs ahead where the library would wait), calls
 * the function, and returns the errno it reported. The test fails if it is
 * not the row's errno, or if the call succeeded.
 *
 * A second test reads the public headers: every errno that a function's
 * comment names from its "Returns" (or "Errors") on must have a row here,
 * so a header that documents a new error without a test fails.
 *
 * Links the internal library (statically) to reach the seam and
 * nfqb_queue_shutdown(); the functions are the same as the shared
 * library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <unistd.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include <libnfq-batch/pool.h>

#include "queue.h"
#include "seam.h"
#include "../unit/testq.h"
#include "harness.h"

#define PORT	5031
#define QNUM	31

/* What a row's call did: its errno, or OK if it succeeded. */
#define OK	(-1000)

/* --- The seam: failing allocations and sends, a clock that runs ahead -- */

static struct {		/* atomic: pool threads read them */
	_Atomic bool fail_alloc;
	_Atomic int verdict_err;	/* verdict sends fail with this */
	_Atomic bool lose_config;	/* config requests "sent", never answered */
	_Atomic uint64_t ahead_ns;	/* added to the real clock */
	_Atomic bool slow_config;	/* 2 ms after each config request */
} fault;

static ssize_t seam_sendmsg(void *data, int fd, const struct msghdr *msg,
			    int flags)
{
	const struct nlmsghdr *nlh = msg->msg_iov[0].iov_base;
	uint8_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	size_t len = 0;
	size_t i;

	(void)data;
	for (i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	if (type == NFQNL_MSG_CONFIG && fault.lose_config) {
		/* lost: the library waits for an ack that never comes; its
		 * clock runs 1 s ahead at every look, so the 5 s are soon
		 * over */
		atomic_fetch_add(&fault.ahead_ns, 1000000000ull);
		return (ssize_t)len;
	}
	if (type != NFQNL_MSG_CONFIG && fault.verdict_err) {
		errno = fault.verdict_err;
		return -1;
	}
	if (type == NFQNL_MSG_CONFIG && fault.slow_config) {
		/* a consumer preempted between two requests */
		ssize_t r = sendmsg(fd, msg, flags);
		int err = errno;

		nfqbt_sleep_ms(2);
		errno = err;
		return r;
	}
	return sendmsg(fd, msg, flags);
}

static uint64_t seam_now_ns(void *data)
{
	struct timespec ts;

	(void)data;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (fault.lose_config)
		atomic_fetch_add(&fault.ahead_ns, 1000000000ull);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	       atomic_load(&fault.ahead_ns);
}

static int seam_fail_alloc(void *data, size_t size)
{
	(void)data;
	(void)size;
	return fault.fail_alloc;
}

static void seam_on(void)
{
	struct nfqb_seam s = {
		.sendmsg = seam_sendmsg,
		.now_ns = seam_now_ns,
		.fail_alloc = seam_fail_alloc,
	};

	nfqb_seam_install(&s);
}

/* --- Helpers ------------------------------------------------------------- */

/* What a row made, freed after it (nothing leaks: the sanitizer build
 * runs this too). */
static struct nfqb_queue *made_q[8];
static struct nfqb_pool *made_pool[4];
static unsigned int nmade_q, nmade_pool;

static struct nfqb_queue *keep_q(struct nfqb_queue *q)
{
	ck_assert_uint_lt(nmade_q, 8);
	made_q[nmade_q++] = q;
	return q;
}

static void forget_q(struct nfqb_queue *q)
{
	unsigned int i;

	for (i = 0; i < nmade_q; i++)
		if (made_q[i] == q)
			made_q[i] = NULL;
}

static void free_made(void)
{
	unsigned int i;

	fault.fail_alloc = false;
	fault.verdict_err = 0;
	fault.lose_config = false;
	for (i = 0; i < nmade_pool; i++)
		nfqb_pool_destroy(made_pool[i]);
	for (i = 0; i < nmade_q; i++)
		nfqb_queue_close(made_q[i]);
	nmade_q = nmade_pool = 0;
}

static int err_of_int(int r)
{
	return r < 0 ? errno : OK;
}

static int err_of_ptr(const void *p)
{
	return p ? OK : errno;
}

static struct nfqb_queue *open_q(uint16_t num)
{
	struct nfqb_queue *q = nfqb_queue_open(num);

	ck_assert_msg(q != NULL, "nfqb_queue_open(%u): %s", num,
		      strerror(errno));
	return keep_q(q);
}

/* Queue QNUM with @n of our datagrams received: their handles in @vec. */
static struct nfqb_queue *q_with(struct nfqb_packet **vec, unsigned int n)
{
	struct nfqb_queue *q;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_q(QNUM);
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = n }), n);
	nfqbt_recv_n(q, vec, n);
	return q;
}

/* --- Queues ------------------------------------------------------------ */

static int open_busy(void)
{
	open_q(QNUM);
	return err_of_ptr(nfqb_queue_open(QNUM));
}

static int open_eperm(void)
{
	/* nobody: no CAP_NET_ADMIN */
	ck_assert_int_eq(setuid(65534), 0);
	return err_of_ptr(nfqb_queue_open(QNUM));
}

static int open_nomem(void)
{
	fault.fail_alloc = true;
	return err_of_ptr(nfqb_queue_open(QNUM));
}

static int open_lost(void)
{
	fault.lose_config = true;
	return err_of_ptr(keep_q(nfqb_queue_open(QNUM)));
}

static int close_send_err(int err)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	fault.verdict_err = err;
	forget_q(q);
	return err_of_int(nfqb_queue_close(q));
}

static int close_eagain(void)
{
	return close_send_err(EAGAIN);
}

static int close_eperm(void)
{
	return close_send_err(EPERM);
}

static int close_unbind_lost(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.lose_config = true;
	forget_q(q);
	return err_of_int(nfqb_queue_close(q));
}

static int close_stats_null(void)
{
	return err_of_int(nfqb_queue_close_stats(open_q(QNUM), NULL, 8));
}

static int copy_mode_einval(void)
{
	return err_of_int(nfqb_queue_set_copy_mode(open_q(QNUM),
						   (enum nfqb_copy_mode)7, 0));
}

static int copy_mode_none(void)
{
	return err_of_int(nfqb_queue_set_copy_mode(open_q(QNUM),
						   NFQB_COPY_NONE, 0));
}

static int copy_mode_lost(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.lose_config = true;
	return err_of_int(nfqb_queue_set_copy_mode(q, NFQB_COPY_META, 0));
}

static int maxlen_lost(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.lose_config = true;
	return err_of_int(nfqb_queue_set_maxlen(q, 100));
}

/* a longer queue needs a longer book: its allocation fails */
static int maxlen_nomem(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.fail_alloc = true;
	return err_of_int(nfqb_queue_set_maxlen(q, 65536));
}

static int flags_lost(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.lose_config = true;
	return err_of_int(nfqb_queue_set_flags(q, 0, NFQB_F_GSO));
}

static int large_bad(void)
{
	return err_of_int(nfqb_queue_set_large(open_q(QNUM), 7));
}

static int flags_unknown(void)
{
	return err_of_int(nfqb_queue_set_flags(open_q(QNUM), 1u << 20,
					       1u << 20));
}

static int enobufs_policy(void)
{
	return err_of_int(nfqb_queue_set_enobufs(open_q(QNUM),
						 (enum nfqb_enobufs_policy)2));
}

static int buffers_zero(void)
{
	return err_of_int(nfqb_queue_set_buffers(open_q(QNUM), 0));
}

static int buffers_many(void)
{
	return err_of_int(nfqb_queue_set_buffers(open_q(QNUM), 65537));
}

static int buffers_outstanding(void)
{
	struct nfqb_packet *p;

	return err_of_int(nfqb_queue_set_buffers(q_with(&p, 1), 8));
}

static int buffers_replaced(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	unsigned int i;

	for (i = 0; i < 8; i++)
		ck_assert_int_eq(nfqb_queue_set_buffers(q, 4 + i), 0);
	return err_of_int(nfqb_queue_set_buffers(q, 64));
}

static int buffers_nomem(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	fault.fail_alloc = true;
	return err_of_int(nfqb_queue_set_buffers(q, 16));
}

static int default_verdict_repeat(void)
{
	return err_of_int(nfqb_queue_set_default_verdict(open_q(QNUM),
							 NFQB_REPEAT));
}

static int batch_limit_zero(void)
{
	return err_of_int(nfqb_queue_set_batch_limit(open_q(QNUM), 0));
}

static int linger_second(void)
{
	return err_of_int(nfqb_queue_set_linger(open_q(QNUM), 1000000));
}

static int stats_null(void)
{
	return err_of_int(nfqb_queue_stats(open_q(QNUM), NULL,
					   sizeof(struct nfqb_stats)));
}

static int stats_size(void)
{
	struct nfqb_stats st;

	return err_of_int(nfqb_queue_stats(open_q(QNUM), &st, 7));
}

/* --- Receiving ----------------------------------------------------------- */

static int recv_max0(void)
{
	struct nfqb_packet *vec[1];

	return err_of_int(nfqb_recv(open_q(QNUM), vec, 0));
}

static int recv_null_vec(void)
{
	return err_of_int(nfqb_recv(open_q(QNUM), NULL, 1));
}

static int recv_empty(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	struct nfqb_packet *vec[4];

	nfqb_queue_set_nonblock(q, true);
	return err_of_int(nfqb_recv(q, vec, 4));
}

static int recv_timed_out(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	struct nfqb_packet *vec[4];

	nfqb_queue_set_recv_timeout(q, 20);
	return err_of_int(nfqb_recv(q, vec, 4));
}

static int recv_exhausted(void)
{
	struct nfqb_packet *vec[2];
	struct nfqb_queue *q;
	struct nfqb_stats st;
	int r;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_q(QNUM);
	ck_assert_int_eq(nfqb_queue_set_buffers(q, 1), 0);
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = 2 }), 2);
	ck_assert_int_eq(nfqb_recv(q, vec, 2), 1);
	nfqb_queue_set_nonblock(q, true);
	r = err_of_int(nfqb_recv(q, vec + 1, 1));
	ck_assert_int_eq(nfqb_queue_stats(q, &st, sizeof(st)), 0);
	ck_assert_uint_ge(st.buffers_exhausted, 1);
	return r;
}

static int recv_overflow(void)
{
	struct nfqb_packet *vec[64];
	struct nfqb_queue *q;
	unsigned int i;
	int r = OK;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_q(QNUM);
	nfqb_queue_set_nonblock(q, true);
	/* the smallest receive buffer the kernel allows: a few messages */
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(q, 1), 0);
	nfqbt_send(&(struct nfqbt_tx_opts){ .port = PORT, .count = 200,
					    .size = 1000 });
	for (i = 0; i < 8 && r == OK; i++) {
		r = err_of_int(nfqb_recv(q, vec, 64));
		if (r == OK)
			nfqb_verdict_batch(q, UINT32_MAX, NFQB_DROP, NULL);
	}
	return r;
}

static int recv_interrupted(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	struct nfqb_packet *vec[4];

	ck_assert_int_eq(nfqb_queue_interrupt(q), 0);
	return err_of_int(nfqb_recv(q, vec, 4));
}

/* a pipe whose read end is the queue's wake fd, a byte in it */
static int recv_wake_fd(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	struct nfqb_packet *vec[4];
	int p[2], r;

	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_eq(nfqb_queue_set_wake_fd(q, p[0]), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	r = err_of_int(nfqb_recv(q, vec, 4));
	ck_assert_int_eq(nfqb_queue_set_wake_fd(q, -1), 0);
	close(p[0]);
	close(p[1]);
	return r;
}

/* the owner drops CAP_NET_ADMIN after opening: the check's send to the
 * queue's own port is refused by the kernel */
static int read_sleep_eperm(void)
{
	struct nfqb_queue *q = nfqb_queue_open(QNUM);
	int r;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(setuid(65534), 0);
	r = err_of_int(nfqb_queue_set_read_sleep(q, true));
	nfqb_queue_close(q);	/* (its unbind refused too) */
	return r;
}

static int wake_fd_below(void)
{
	return err_of_int(nfqb_queue_set_wake_fd(open_q(QNUM), -2));
}

static int wake_fd_own(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	return err_of_int(nfqb_queue_set_wake_fd(q, nfqb_queue_fd(q)));
}

static int wake_fd_closed(void)
{
	/* the queue first: its descriptors must not take the number */
	struct nfqb_queue *q = open_q(QNUM);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	close(fd);
	return err_of_int(nfqb_queue_set_wake_fd(q, fd));
}

static int wake_fd_file(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), r;

	ck_assert_int_ge(fd, 0);
	r = err_of_int(nfqb_queue_set_wake_fd(open_q(QNUM), fd));
	close(fd);
	return r;
}

static int recv_shut(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	struct nfqb_packet *vec[4];

	ck_assert_int_eq(nfqb_queue_shutdown(q), 0);
	return err_of_int(nfqb_recv(q, vec, 4));
}

static int dispatch_null_cb(void)
{
	return err_of_int(nfqb_dispatch(open_q(QNUM), NULL, NULL));
}

static int stop_cb(struct nfqb_packet *p, void *data)
{
	(void)data;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return -1;
}

static int dispatch_canceled(void)
{
	struct nfqb_queue *q;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_q(QNUM);
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = 1 }), 1);
	return err_of_int(nfqb_dispatch(q, stop_cb, NULL));
}

static int flush_failing(void)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	fault.verdict_err = EAGAIN;
	return err_of_int(nfqb_flush(q));
}

static int flush_shut(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	ck_assert_int_eq(nfqb_queue_shutdown(q), 0);
	return err_of_int(nfqb_flush(q));
}

/* --- Verdicts: every nfqb_verdict*() the same way -------------------------- */

enum how { V_PLAIN, V_MARK, V_CT, V_EX };

static int decide(enum how how, struct nfqb_packet *p, uint32_t verdict)
{
	struct nfqb_verdict v = { .verdict = verdict };

	switch (how) {
	case V_PLAIN:
		return err_of_int(nfqb_verdict(p, verdict));
	case V_MARK:
		return err_of_int(nfqb_verdict_mark(p, verdict, 1));
	case V_CT:
		return err_of_int(nfqb_verdict_ct_mark(p, verdict, 1));
	default:
		return err_of_int(nfqb_verdict_ex(p, &v, sizeof(v)));
	}
}

static int v_bad(enum how how)
{
	struct nfqb_packet *p;
	int r;

	q_with(&p, 1);
	r = decide(how, p, 99);
	/* refused: still the caller's to decide */
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return r;
}

static int v_twice(enum how how)
{
	struct nfqb_packet *p;

	q_with(&p, 1);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return decide(how, p, NFQB_DROP);
}

static int v_expired(enum how how)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	nfqb_queue_set_verdict_timeout(q, 1);
	atomic_fetch_add(&fault.ahead_ns, 10 * 1000000ull);
	ck_assert_int_ge(nfqb_flush(q), 1);	/* the default, by id */
	return decide(how, p, NFQB_DROP);
}

static int v_shut(enum how how)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	ck_assert_int_eq(nfqb_queue_shutdown(q), 0);
	return decide(how, p, NFQB_DROP);
}

static int verdict_bad(void) { return v_bad(V_PLAIN); }
static int verdict_twice(void) { return v_twice(V_PLAIN); }
static int verdict_expired(void) { return v_expired(V_PLAIN); }
static int verdict_shut(void) { return v_shut(V_PLAIN); }
static int mark_bad(void) { return v_bad(V_MARK); }
static int mark_twice(void) { return v_twice(V_MARK); }
static int mark_expired(void) { return v_expired(V_MARK); }
static int mark_shut(void) { return v_shut(V_MARK); }
static int ct_bad(void) { return v_bad(V_CT); }
static int ct_twice(void) { return v_twice(V_CT); }
static int ct_expired(void) { return v_expired(V_CT); }
static int ct_shut(void) { return v_shut(V_CT); }
static int ex_bad(void) { return v_bad(V_EX); }
static int ex_twice(void) { return v_twice(V_EX); }
static int ex_expired(void) { return v_expired(V_EX); }
static int ex_shut(void) { return v_shut(V_EX); }

/* nfqb_verdict_ex() with @v of @size bytes (with failing allocations if
 * @nomem); @p must stay decidable. */
static int ex_refused_alloc(const void *v, size_t size, bool nomem)
{
	struct nfqb_packet *p;
	int r;

	q_with(&p, 1);
	fault.fail_alloc = nomem;
	r = err_of_int(nfqb_verdict_ex(p, v, size));
	fault.fail_alloc = false;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return r;
}

static int ex_refused(const void *v, size_t size)
{
	return ex_refused_alloc(v, size, false);
}

static int ex_null_v(void)
{
	return ex_refused(NULL, sizeof(struct nfqb_verdict));
}

static int ex_flags(void)
{
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT, .flags = 1u << 9 };

	return ex_refused(&v, sizeof(v));
}

static int ex_bypass(void)
{
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
				  .flags = NFQB_V_BYPASS };

	return ex_refused(&v, sizeof(v));
}

static int ex_null_payload(void)
{
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
				  .flags = NFQB_V_PAYLOAD, .payload_len = 4 };

	return ex_refused(&v, sizeof(v));
}

static int ex_small(void)
{
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT };

	return ex_refused(&v, offsetof(struct nfqb_verdict, payload));
}

static int ex_big(void)
{
	struct {
		struct nfqb_verdict v;
		uint64_t later;		/* a field of a later version */
	} v2 = { .v = { .verdict = NFQB_ACCEPT }, .later = 1 };

	return ex_refused(&v2, sizeof(v2));
}

static int ex_msgsize(void)
{
	static uint8_t big[70000];
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
				  .flags = NFQB_V_PAYLOAD, .payload = big,
				  .payload_len = sizeof(big) };

	return ex_refused(&v, sizeof(v));
}

static int ex_nomem(void)
{
	uint8_t pl[20] = { 0x45 };
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT,
				  .flags = NFQB_V_PAYLOAD, .payload = pl,
				  .payload_len = sizeof(pl) };

	return ex_refused_alloc(&v, sizeof(v), true);
}

static int batch_bad(void)
{
	struct nfqb_packet *p;

	return err_of_int(nfqb_verdict_batch(q_with(&p, 1), UINT32_MAX,
					     NFQB_QUEUE, NULL));
}

static int batch_none(void)
{
	return err_of_int(nfqb_verdict_batch(open_q(QNUM), UINT32_MAX,
					     NFQB_ACCEPT, NULL));
}

static int batch_shut(void)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	ck_assert_int_eq(nfqb_queue_shutdown(q), 0);
	return err_of_int(nfqb_verdict_batch(q, UINT32_MAX, NFQB_ACCEPT,
					     NULL));
}

/* --- The kernel's statistics --------------------------------------------- */

static int kread_size0(void)
{
	return err_of_int(nfqb_kstats_read(NULL, 0, 0));
}

static int kread_size6(void)
{
	struct nfqb_kstats k[2];

	return err_of_int(nfqb_kstats_read(k, 2, 6));
}

/* Hide /proc/net/netfilter/nfnetlink_queue (as without nfnetlink_queue
 * loaded): an empty /proc, in a mount namespace of this test process only
 * (a mount on /proc/self/net/... does not hold: those are looked up anew
 * every time). */
static void hide_proc_netfilter(void)
{
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_msg(mount("none", "/proc", "tmpfs", 0, NULL) == 0,
		      "mount: %s", strerror(errno));
}

/* /proc back (the leak checker of the sanitizer build reads it at exit). */
static void show_proc(void)
{
	ck_assert_int_eq(umount2("/proc", MNT_DETACH), 0);
}

static int kread_noent(void)
{
	struct nfqb_kstats k[2];
	int r;

	hide_proc_netfilter();
	r = err_of_int(nfqb_kstats_read(k, 2, sizeof(k[0])));
	show_proc();
	return r;
}

static int kget_size3(void)
{
	struct nfqb_kstats k;

	open_q(QNUM);
	return err_of_int(nfqb_kstats_get(QNUM, &k, 3));
}

static int kget_unbound(void)
{
	struct nfqb_kstats k;

	open_q(QNUM);
	return err_of_int(nfqb_kstats_get(QNUM + 1, &k, sizeof(k)));
}

static int kget_noent(void)
{
	struct nfqb_kstats k;
	int r;

	open_q(QNUM);
	hide_proc_netfilter();
	r = err_of_int(nfqb_kstats_get(QNUM, &k, sizeof(k)));
	show_proc();
	return r;
}

/* --- The pool ------------------------------------------------------------- */

static struct nfqb_pool_config pool_cfg(void)
{
	return (struct nfqb_pool_config){
		.queue_first = QNUM,
		.queue_count = 1,
		.cb = nfqbt_pool_accept,
		.buffers = 16,
	};
}

static struct nfqb_pool *keep_pool(struct nfqb_pool *pool)
{
	if (pool) {
		ck_assert_uint_lt(nmade_pool, 4);
		made_pool[nmade_pool++] = pool;
	}
	return pool;
}

static int create_with(const struct nfqb_pool_config *c)
{
	return err_of_ptr(keep_pool(nfqb_pool_create(c, sizeof(*c))));
}

static int pool_null(void)
{
	return err_of_ptr(keep_pool(nfqb_pool_create(NULL,
					sizeof(struct nfqb_pool_config))));
}

static int pool_no_cb(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.cb = NULL;
	return create_with(&c);
}

static int pool_no_queues(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.queue_count = 0;
	return create_with(&c);
}

static int pool_past_65535(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.queue_first = 65535;
	c.queue_count = 2;
	return create_with(&c);
}

static int pool_ring(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.mode = NFQB_POOL_DISPATCH;
	c.ring_size = 3;
	return create_with(&c);
}

static int pool_mode(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.mode = (enum nfqb_pool_mode)9;
	return create_with(&c);
}

static int pool_workers(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.mode = NFQB_POOL_DISPATCH;
	c.workers = 1025;
	return create_with(&c);
}

static int pool_ncpus(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.ncpus = 1;
	return create_with(&c);
}

static int pool_small(void)
{
	struct nfqb_pool_config c = pool_cfg();

	return err_of_ptr(keep_pool(nfqb_pool_create(&c,
			offsetof(struct nfqb_pool_config, verdict_timeout_ms))));
}

static int pool_big(void)
{
	struct {
		struct nfqb_pool_config c;
		uint64_t later;
	} c2 = { .c = pool_cfg(), .later = 7 };

	return err_of_ptr(keep_pool(nfqb_pool_create(&c2.c, sizeof(c2))));
}

static int pool_busy(void)
{
	struct nfqb_pool_config c = pool_cfg();

	open_q(QNUM);
	return create_with(&c);
}

static int pool_eperm(void)
{
	struct nfqb_pool_config c = pool_cfg();

	ck_assert_int_eq(setuid(65534), 0);
	return create_with(&c);
}

static int pool_nomem(void)
{
	struct nfqb_pool_config c = pool_cfg();

	fault.fail_alloc = true;
	return create_with(&c);
}

static int pool_flags(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.queue_flags = 1u << 20;
	return create_with(&c);
}

static struct nfqb_pool *pool_new(const struct nfqb_pool_config *c)
{
	struct nfqb_pool *pool = nfqb_pool_create(c, sizeof(*c));

	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	return keep_pool(pool);
}

static int start_twice(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool *pool = pool_new(&c);
	int r;

	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	r = err_of_int(nfqb_pool_start(pool));
	return r;
}

static const int no_such_cpu[] = { CPU_SETSIZE };

static int start_cpu(void)
{
	struct nfqb_pool_config c = pool_cfg();

	c.cpus = no_such_cpu;
	c.ncpus = 1;
	return err_of_int(nfqb_pool_start(pool_new(&c)));
}

static int wait_unstarted(void)
{
	struct nfqb_pool_config c = pool_cfg();

	return err_of_int(nfqb_pool_wait(pool_new(&c)));
}

static int wait_failed_start(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool *pool;

	c.cpus = no_such_cpu;
	c.ncpus = 1;
	pool = pool_new(&c);
	ck_assert_int_eq(nfqb_pool_start(pool), -1);
	return err_of_int(nfqb_pool_wait(pool));
}

static _Atomic int policy_err;
static struct nfqb_pool *_Atomic policy_pool;

static int policy_cb(struct nfqb_packet *p, void *policy, void *cb_data,
		     struct nfqb_verdict *v)
{
	(void)p;
	(void)policy;
	(void)cb_data;
	atomic_store(&policy_err,
		     err_of_int(nfqb_pool_set_policy(atomic_load(&policy_pool),
						     NULL)));
	v->verdict = NFQB_ACCEPT;
	return NFQB_POOL_VERDICT;
}

static int policy_deadlock(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool *pool;
	unsigned int i;

	nfqbt_rule_queue(PORT, QNUM, false);
	atomic_store(&policy_err, 0);
	c.cb = policy_cb;
	pool = pool_new(&c);
	/* the callback needs the pool: known once it exists, before start */
	atomic_store(&policy_pool, pool);
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = 1 }), 1);
	for (i = 0; i < 10000 && !atomic_load(&policy_err); i++)
		nfqbt_sleep_ms(1);
	return atomic_load(&policy_err);
}

static int pstats_thread(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool_stats st;

	return err_of_int(nfqb_pool_stats(pool_new(&c), 1, &st, sizeof(st)));
}

static int pstats_size(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool_stats st;

	return err_of_int(nfqb_pool_stats(pool_new(&c), -1, &st, 7));
}

static int pstats_null(void)
{
	struct nfqb_pool_config c = pool_cfg();

	return err_of_int(nfqb_pool_stats(pool_new(&c), -1, NULL,
					  sizeof(struct nfqb_pool_stats)));
}

static int pqstats_index(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_stats st;

	return err_of_int(nfqb_pool_queue_stats(pool_new(&c), 1, &st,
						sizeof(st)));
}

/* --- The table ----------------------------------------------------------- */

/* --- Handover (issue 12) ---------------------------------------------- */

static int decide_then_cancel(struct nfqb_packet *p, void *data)
{
	(void)data;
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return -1;
}

/* Two packets read, one handed out (the callback stopped the dispatch):
 * the other is the library's still. */
static int detach_not_handed_out(void)
{
	struct nfqb_queue *q;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = open_q(QNUM);
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = 2 }), 2);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 2, 5000));
	ck_assert_int_eq(nfqb_dispatch(q, decide_then_cancel, NULL), -1);
	ck_assert_int_eq(errno, ECANCELED);
	return err_of_int(nfqb_queue_detach(q));
}

static int detach_send_err(int err)
{
	struct nfqb_packet *p;
	struct nfqb_queue *q = q_with(&p, 1);

	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	fault.verdict_err = err;
	return err_of_int(nfqb_queue_detach(q));
}

static int detach_eagain(void)
{
	return detach_send_err(EAGAIN);
}

static int detach_eperm(void)
{
	return detach_send_err(EPERM);
}

static int detach_shut(void)
{
	struct nfqb_queue *q = open_q(QNUM);

	ck_assert_int_eq(nfqb_queue_shutdown(q), 0);
	return err_of_int(nfqb_queue_detach(q));
}

static int detach_nosock(void)
{
	struct nfqb_queue *q = nfqbt_queue_detached(QNUM, 4);
	int err;

	ck_assert_ptr_nonnull(q);
	err = err_of_int(nfqb_queue_detach(q));
	nfqb_queue_close(q);
	return err;
}

/* A NETLINK_NETFILTER socket, bound to a port id if @bound. */
static int nl_socket(bool bound)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);

	ck_assert(fd >= 0);
	if (bound)
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)),
				 0);
	return fd;
}

/* The socket of queue QNUM, given up by nfqb_queue_detach(). */
static int detached_fd(void)
{
	struct nfqb_queue *q = open_q(QNUM);
	int fd;

	forget_q(q);	/* nfqb_queue_detach() frees it */
	fd = nfqb_queue_detach(q);

	ck_assert(fd >= 0);
	return fd;
}

static int adopt_badf(void)
{
	return err_of_ptr(nfqb_queue_adopt(-1, QNUM));
}

static int adopt_notsock(void)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	return err_of_ptr(nfqb_queue_adopt(p[0], QNUM));
}

static int adopt_prototype(void)
{
	return err_of_ptr(nfqb_queue_adopt(socket(AF_INET, SOCK_DGRAM, 0),
					   QNUM));
}

static int adopt_unbound(void)
{
	return err_of_ptr(nfqb_queue_adopt(nl_socket(false), QNUM));
}

static int adopt_no_queue(void)
{
	return err_of_ptr(nfqb_queue_adopt(nl_socket(true), QNUM));
}

static int adopt_busy(void)
{
	open_q(QNUM);
	return err_of_ptr(nfqb_queue_adopt(nl_socket(true), QNUM));
}

static int open_fd_badf(void)
{
	return err_of_ptr(nfqb_queue_open_fd(-1, QNUM));
}

static int open_fd_notsock(void)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	return err_of_ptr(nfqb_queue_open_fd(p[0], QNUM));
}

static int open_fd_prototype(void)
{
	return err_of_ptr(nfqb_queue_open_fd(socket(AF_INET, SOCK_DGRAM, 0),
					     QNUM));
}

static int open_fd_busy(void)
{
	open_q(QNUM);
	return err_of_ptr(nfqb_queue_open_fd(nl_socket(false), QNUM));
}

static int open_fd_eperm(void)
{
	int fd = nl_socket(true);

	ck_assert_int_eq(setuid(65534), 0);
	return err_of_ptr(nfqb_queue_open_fd(fd, QNUM));
}

static int open_fd_nomem(void)
{
	int fd = nl_socket(false);

	fault.fail_alloc = true;
	return err_of_ptr(nfqb_queue_open_fd(fd, QNUM));
}

static int open_fd_lost(void)
{
	int fd = nl_socket(false);

	fault.lose_config = true;
	return err_of_ptr(keep_q(nfqb_queue_open_fd(fd, QNUM)));
}

/* User and group nobody, no supplementary group, no capability. */
static void become_nobody(void)
{
	ck_assert_int_eq(setgroups(0, NULL), 0);
	ck_assert_int_eq(setgid(65534), 0);
	ck_assert_int_eq(setuid(65534), 0);
}

/* nobody cannot read /proc/net/netfilter/nfnetlink_queue (root:root
 * 0440): the kernel is asked, and refuses (no CAP_NET_ADMIN) */
static int adopt_eperm(void)
{
	int fd = detached_fd();

	become_nobody();
	return err_of_ptr(nfqb_queue_adopt(fd, QNUM));
}

static int adopt_lost(void)
{
	int fd = detached_fd();

	become_nobody();
	fault.lose_config = true;
	return err_of_ptr(nfqb_queue_adopt(fd, QNUM));
}

static int adopt_nomem(void)
{
	int fd = detached_fd();

	fault.fail_alloc = true;
	return err_of_ptr(nfqb_queue_adopt(fd, QNUM));
}

/* The kernel refuses a verdict (the process lost CAP_NET_ADMIN): the next
 * nfqb_recv() that reads the refusal says so. */
static int recv_refused(void)
{
	struct nfqb_packet *p, *vec[4];
	struct nfqb_queue *q = q_with(&p, 1);
	int i, r = 0;

	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	ck_assert_int_eq(setuid(65534), 0);
	nfqb_queue_set_nonblock(q, true);
	for (i = 0; i < 5000; i++) {
		r = nfqb_recv(q, vec, 4);
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			break;
		usleep(1000);
	}
	return err_of_int(r);
}

static int kread_eacces(void)
{
	struct nfqb_kstats ks[2];

	become_nobody();
	return err_of_int(nfqb_kstats_read(ks, 2, sizeof(ks[0])));
}

static int handover_stopped(void)
{
	struct nfqb_pool_config c = pool_cfg();
	struct nfqb_pool *pool = pool_new(&c);
	int fds[1];

	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqb_pool_stop(pool);
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	return err_of_int(nfqb_pool_handover(pool, fds, 1));
}

static int padopt_null_fds(void)
{
	struct nfqb_pool_config c = pool_cfg();

	return err_of_ptr(nfqb_pool_adopt(&c, sizeof(c), NULL));
}

struct row {
	const char *fn;
	int err;
	const char *how;
	int (*run)(void);
};

#define ROW(fn, err, how, run) { #fn, err, how, run }

static const struct row rows[] = {
	ROW(nfqb_queue_open, EBUSY, "another socket holds the queue", open_busy),
	ROW(nfqb_queue_open, EPERM, "no CAP_NET_ADMIN", open_eperm),
	ROW(nfqb_queue_open, ENOMEM, "allocations fail", open_nomem),
	ROW(nfqb_queue_open, ETIMEDOUT, "the bind is never acknowledged", open_lost),
	ROW(nfqb_queue_close, EAGAIN, "verdict sends fail with EAGAIN", close_eagain),
	ROW(nfqb_queue_close, EPERM, "verdict sends fail with EPERM", close_eperm),
	ROW(nfqb_queue_close, ETIMEDOUT, "the unbind is never acknowledged", close_unbind_lost),
	ROW(nfqb_queue_close_stats, EINVAL, "NULL st", close_stats_null),
	ROW(nfqb_queue_set_copy_mode, EINVAL, "mode 7", copy_mode_einval),
	ROW(nfqb_queue_set_copy_mode, EINVAL, "mode NONE", copy_mode_none),
	ROW(nfqb_queue_set_copy_mode, ETIMEDOUT, "never acknowledged", copy_mode_lost),
	ROW(nfqb_queue_set_maxlen, ETIMEDOUT, "never acknowledged", maxlen_lost),
	ROW(nfqb_queue_set_maxlen, ENOMEM, "the longer book cannot be had", maxlen_nomem),
	ROW(nfqb_queue_set_flags, EOPNOTSUPP, "flag 1 << 20", flags_unknown),
	ROW(nfqb_queue_set_large, EINVAL, "policy 7", large_bad),
	ROW(nfqb_queue_set_flags, ETIMEDOUT, "never acknowledged", flags_lost),
	ROW(nfqb_queue_set_enobufs, EINVAL, "policy 2", enobufs_policy),
	ROW(nfqb_queue_set_buffers, EINVAL, "count 0", buffers_zero),
	ROW(nfqb_queue_set_buffers, EINVAL, "count 65537", buffers_many),
	ROW(nfqb_queue_set_buffers, EBUSY, "a packet outstanding", buffers_outstanding),
	ROW(nfqb_queue_set_buffers, EBUSY, "replaced 8 times before", buffers_replaced),
	ROW(nfqb_queue_set_buffers, ENOMEM, "allocations fail", buffers_nomem),
	ROW(nfqb_queue_set_default_verdict, EINVAL, "NFQB_REPEAT", default_verdict_repeat),
	ROW(nfqb_queue_set_batch_limit, EINVAL, "limit 0", batch_limit_zero),
	ROW(nfqb_queue_set_linger, EINVAL, "one second", linger_second),
	ROW(nfqb_queue_stats, EINVAL, "NULL st", stats_null),
	ROW(nfqb_queue_stats, EINVAL, "size 7", stats_size),
	ROW(nfqb_recv, EINVAL, "max 0", recv_max0),
	ROW(nfqb_recv, EINVAL, "NULL vec", recv_null_vec),
	ROW(nfqb_recv, EAGAIN, "non-blocking, nothing queued", recv_empty),
	ROW(nfqb_recv, EAGAIN, "blocking, the receive timeout passed", recv_timed_out),
	ROW(nfqb_recv, ENOSPC, "every buffer held (non-blocking)", recv_exhausted),
	ROW(nfqb_recv, ENOBUFS, "the socket overflowed", recv_overflow),
	ROW(nfqb_recv, EINTR, "nfqb_queue_interrupt() before", recv_interrupted),
	ROW(nfqb_recv, EINTR, "the wake fd readable", recv_wake_fd),
	ROW(nfqb_recv, ESHUTDOWN, "the queue was shut down", recv_shut),
	ROW(nfqb_queue_set_read_sleep, EPERM, "no CAP_NET_ADMIN for the wake-up send", read_sleep_eperm),
	ROW(nfqb_queue_set_wake_fd, EINVAL, "fd -2", wake_fd_below),
	ROW(nfqb_queue_set_wake_fd, EINVAL, "the queue's own fd", wake_fd_own),
	ROW(nfqb_queue_set_wake_fd, EBADF, "a closed fd", wake_fd_closed),
	ROW(nfqb_queue_set_wake_fd, EPERM, "a regular file", wake_fd_file),
	ROW(nfqb_dispatch, EINVAL, "NULL cb", dispatch_null_cb),
	ROW(nfqb_dispatch, ECANCELED, "the callback returned -1", dispatch_canceled),
	ROW(nfqb_flush, EAGAIN, "verdict sends fail with EAGAIN", flush_failing),
	ROW(nfqb_flush, ESHUTDOWN, "the queue was shut down", flush_shut),
	ROW(nfqb_verdict, EINVAL, "verdict 99", verdict_bad),
	ROW(nfqb_verdict, EALREADY, "decided before", verdict_twice),
	ROW(nfqb_verdict, ETIMEDOUT, "the verdict timeout decided it", verdict_expired),
	ROW(nfqb_verdict, ESHUTDOWN, "the queue was shut down", verdict_shut),
	ROW(nfqb_verdict_mark, EINVAL, "verdict 99", mark_bad),
	ROW(nfqb_verdict_mark, EALREADY, "decided before", mark_twice),
	ROW(nfqb_verdict_mark, ETIMEDOUT, "the verdict timeout decided it", mark_expired),
	ROW(nfqb_verdict_mark, ESHUTDOWN, "the queue was shut down", mark_shut),
	ROW(nfqb_verdict_ct_mark, EINVAL, "verdict 99", ct_bad),
	ROW(nfqb_verdict_ct_mark, EALREADY, "decided before", ct_twice),
	ROW(nfqb_verdict_ct_mark, ETIMEDOUT, "the verdict timeout decided it",
	    ct_expired),
	ROW(nfqb_verdict_ct_mark, ESHUTDOWN, "the queue was shut down",
	    ct_shut),
	ROW(nfqb_verdict_ex, EINVAL, "verdict 99", ex_bad),
	ROW(nfqb_verdict_ex, EINVAL, "NULL v", ex_null_v),
	ROW(nfqb_verdict_ex, EINVAL, "an unknown flag", ex_flags),
	ROW(nfqb_verdict_ex, EINVAL, "NFQB_V_BYPASS without NFQB_QUEUE", ex_bypass),
	ROW(nfqb_verdict_ex, EINVAL, "NULL payload with a length", ex_null_payload),
	ROW(nfqb_verdict_ex, EINVAL, "size below the first version's fields", ex_small),
	ROW(nfqb_verdict_ex, E2BIG, "a later field set", ex_big),
	ROW(nfqb_verdict_ex, EMSGSIZE, "a 70000-byte payload", ex_msgsize),
	ROW(nfqb_verdict_ex, ENOMEM, "the payload copy fails", ex_nomem),
	ROW(nfqb_verdict_ex, EALREADY, "decided before", ex_twice),
	ROW(nfqb_verdict_ex, ETIMEDOUT, "the verdict timeout decided it", ex_expired),
	ROW(nfqb_verdict_ex, ESHUTDOWN, "the queue was shut down", ex_shut),
	ROW(nfqb_verdict_batch, EINVAL, "NFQB_QUEUE", batch_bad),
	ROW(nfqb_verdict_batch, ENOENT, "no packet handed out", batch_none),
	ROW(nfqb_verdict_batch, ESHUTDOWN, "the queue was shut down", batch_shut),
	ROW(nfqb_kstats_read, EINVAL, "size 0", kread_size0),
	ROW(nfqb_kstats_read, EINVAL, "size 6", kread_size6),
	ROW(nfqb_kstats_read, ENOENT, "no /proc/net/netfilter/nfnetlink_queue", kread_noent),
	ROW(nfqb_kstats_get, EINVAL, "size 3", kget_size3),
	ROW(nfqb_kstats_get, ENOENT, "the queue is not bound", kget_unbound),
	ROW(nfqb_kstats_get, ENOENT, "no /proc/net/netfilter/nfnetlink_queue", kget_noent),
	ROW(nfqb_pool_create, EINVAL, "NULL cfg", pool_null),
	ROW(nfqb_pool_create, EINVAL, "no callback", pool_no_cb),
	ROW(nfqb_pool_create, EINVAL, "queue_count 0", pool_no_queues),
	ROW(nfqb_pool_create, EINVAL, "queues past 65535", pool_past_65535),
	ROW(nfqb_pool_create, EINVAL, "ring_size 3", pool_ring),
	ROW(nfqb_pool_create, EINVAL, "mode 9", pool_mode),
	ROW(nfqb_pool_create, EINVAL, "1025 workers", pool_workers),
	ROW(nfqb_pool_create, EINVAL, "ncpus without cpus", pool_ncpus),
	ROW(nfqb_pool_create, EINVAL, "size below the first version's fields", pool_small),
	ROW(nfqb_pool_create, E2BIG, "a later field set", pool_big),
	ROW(nfqb_pool_create, EBUSY, "another socket holds the queue", pool_busy),
	ROW(nfqb_pool_create, EPERM, "no CAP_NET_ADMIN", pool_eperm),
	ROW(nfqb_pool_create, ENOMEM, "allocations fail", pool_nomem),
	ROW(nfqb_pool_create, EOPNOTSUPP, "queue flag 1 << 20", pool_flags),
	ROW(nfqb_pool_start, EALREADY, "started before", start_twice),
	ROW(nfqb_pool_start, EINVAL, "CPU CPU_SETSIZE", start_cpu),
	ROW(nfqb_pool_wait, EINVAL, "never started", wait_unstarted),
	ROW(nfqb_pool_wait, EINVAL, "nfqb_pool_start() failed with EINVAL", wait_failed_start),
	ROW(nfqb_pool_set_policy, EDEADLK, "from the callback", policy_deadlock),
	ROW(nfqb_pool_stats, EINVAL, "thread past the last", pstats_thread),
	ROW(nfqb_pool_stats, EINVAL, "size 7", pstats_size),
	ROW(nfqb_pool_stats, EINVAL, "NULL st", pstats_null),
	ROW(nfqb_pool_queue_stats, EINVAL, "index past the last", pqstats_index),
	ROW(nfqb_queue_detach, EBUSY, "a packet read, not handed out", detach_not_handed_out),
	ROW(nfqb_queue_detach, EAGAIN, "verdict sends fail with EAGAIN", detach_eagain),
	ROW(nfqb_queue_detach, EPERM, "verdict sends fail with EPERM", detach_eperm),
	ROW(nfqb_queue_detach, ESHUTDOWN, "the queue was shut down", detach_shut),
	ROW(nfqb_queue_detach, ENOTSOCK, "a queue without socket", detach_nosock),
	ROW(nfqb_queue_open_fd, EBADF, "fd -1", open_fd_badf),
	ROW(nfqb_queue_open_fd, ENOTSOCK, "a pipe", open_fd_notsock),
	ROW(nfqb_queue_open_fd, EPROTOTYPE, "a UDP socket", open_fd_prototype),
	ROW(nfqb_queue_open_fd, EBUSY, "another socket holds the queue", open_fd_busy),
	ROW(nfqb_queue_open_fd, EPERM, "no CAP_NET_ADMIN", open_fd_eperm),
	ROW(nfqb_queue_open_fd, ENOMEM, "allocations fail", open_fd_nomem),
	ROW(nfqb_queue_open_fd, ETIMEDOUT, "the bind is never acknowledged", open_fd_lost),
	ROW(nfqb_queue_adopt, EBADF, "fd -1", adopt_badf),
	ROW(nfqb_queue_adopt, ENOTSOCK, "a pipe", adopt_notsock),
	ROW(nfqb_queue_adopt, EPROTOTYPE, "a UDP socket", adopt_prototype),
	ROW(nfqb_queue_adopt, ENOTCONN, "an unbound netlink socket", adopt_unbound),
	ROW(nfqb_queue_adopt, ENODEV, "the queue is not bound", adopt_no_queue),
	ROW(nfqb_queue_adopt, EBUSY, "another socket holds the queue", adopt_busy),
	ROW(nfqb_queue_adopt, EPERM, "nobody: /proc unreadable, the kernel refuses", adopt_eperm),
	ROW(nfqb_queue_adopt, ETIMEDOUT, "nobody: the kernel's answer is lost", adopt_lost),
	ROW(nfqb_queue_adopt, ENOMEM, "allocations fail", adopt_nomem),
	ROW(nfqb_recv, EPERM, "the kernel refused a verdict (no CAP_NET_ADMIN)", recv_refused),
	ROW(nfqb_kstats_read, EACCES, "nobody: the file is root's", kread_eacces),
	ROW(nfqb_pool_handover, EALREADY, "stopped before", handover_stopped),
	ROW(nfqb_pool_adopt, EINVAL, "NULL fds", padopt_null_fds),
};

#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

/* --- A NULL handle, in every public function that takes one ------------ */

/*
 * Every public function with a queue, pool or packet handle, called with
 * NULL for it (its other arguments valid): the convention of
 * <libnfq-batch/libnfq-batch.h>. -1 (or NULL) and EINVAL; where the return
 * type cannot carry -1, its zero value and EINVAL; the destructors do
 * nothing and succeed; the packet getters answer "absent" and leave errno
 * alone. A third test reads the headers: a function that takes a handle
 * and has no row here fails it.
 */

/* A getter's "absent" with errno untouched. */
#define ABSENT	(-1001)

/* What a NULL call did, errno cleared before it: @failed (it returned its
 * failure or "absent" value) and errno set: that errno; @failed and errno
 * untouched: ABSENT; else OK. */
static int null_outcome(bool failed)
{
	if (!failed)
		return OK;
	return errno ? errno : ABSENT;
}

/* null_<fn>(): @fn(@args...) compared with @fail. */
#define NULL_CALL(fn, fail, ...)					\
	static int null_##fn(void)					\
	{								\
		errno = 0;						\
		return null_outcome(fn(__VA_ARGS__) == (fail));		\
	}

static struct nfqb_stats null_st;
static struct nfqb_pool_stats null_pst;
static struct nfqb_packet *null_vec[1];
static uint32_t null_u32;
static uint16_t null_u16, null_u16b;
static uint64_t null_u64;
static const uint8_t *null_addr;
static const char *null_ctx;
static int null_fds[1];

static int null_cb(struct nfqb_packet *p, void *data)
{
	(void)p;
	(void)data;
	return 0;
}

NULL_CALL(nfqb_queue_close, -1, NULL)
NULL_CALL(nfqb_queue_close_stats, -1, NULL, &null_st, sizeof(null_st))
NULL_CALL(nfqb_queue_detach, -1, NULL)
NULL_CALL(nfqb_queue_interrupt, -1, NULL)
NULL_CALL(nfqb_queue_num, 0, NULL)
NULL_CALL(nfqb_queue_fd, -1, NULL)
NULL_CALL(nfqb_queue_socket_fd, -1, NULL)
NULL_CALL(nfqb_queue_set_nonblock, -1, NULL, true)
NULL_CALL(nfqb_queue_set_recv_timeout, -1, NULL, 10)
NULL_CALL(nfqb_queue_set_wake_fd, -1, NULL, -1)
NULL_CALL(nfqb_queue_set_read_sleep, -1, NULL, true)
NULL_CALL(nfqb_queue_set_copy_mode, -1, NULL, NFQB_COPY_PACKET, 0)
NULL_CALL(nfqb_queue_set_maxlen, -1, NULL, 100)
NULL_CALL(nfqb_queue_set_flags, -1, NULL, NFQB_F_GSO, NFQB_F_GSO)
NULL_CALL(nfqb_queue_set_large, -1, NULL, NFQB_LARGE_WHOLE)
NULL_CALL(nfqb_queue_set_rcvbuf, -1, NULL, 1 << 20)
NULL_CALL(nfqb_queue_set_enobufs, -1, NULL, NFQB_ENOBUFS_IGNORE)
NULL_CALL(nfqb_queue_set_buffers, -1, NULL, 16)
NULL_CALL(nfqb_queue_set_default_verdict, -1, NULL, NFQB_DROP)
NULL_CALL(nfqb_queue_set_coalesce, -1, NULL, false)
NULL_CALL(nfqb_queue_set_batch_limit, -1, NULL, 8)
NULL_CALL(nfqb_queue_set_latency, -1, NULL, 100)
NULL_CALL(nfqb_queue_set_linger, -1, NULL, 100)
NULL_CALL(nfqb_queue_set_verdict_timeout, -1, NULL, 100)
NULL_CALL(nfqb_queue_stats, -1, NULL, &null_st, sizeof(null_st))
NULL_CALL(nfqb_queue_fallback, false, NULL)
NULL_CALL(nfqb_queue_next_timeout, -1, NULL)
NULL_CALL(nfqb_recv, -1, NULL, null_vec, 1)
NULL_CALL(nfqb_dispatch, -1, NULL, null_cb, NULL)
NULL_CALL(nfqb_flush, -1, NULL)
NULL_CALL(nfqb_pkt_id, 0, NULL)
NULL_CALL(nfqb_pkt_queue_num, 0, NULL)
NULL_CALL(nfqb_pkt_family, 0, NULL)
NULL_CALL(nfqb_pkt_hook, 0, NULL)
NULL_CALL(nfqb_pkt_hook_point, NFQB_HOOK_UNKNOWN, NULL)
NULL_CALL(nfqb_pkt_hw_protocol, 0, NULL)
NULL_CALL(nfqb_pkt_mark, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_timestamp, false, NULL, &null_u64)
NULL_CALL(nfqb_pkt_indev, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_outdev, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_physindev, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_physoutdev, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_hwaddr, false, NULL, &null_addr, &null_u16)
NULL_CALL(nfqb_pkt_payload, NULL, NULL, &null_u32)
NULL_CALL(nfqb_pkt_orig_len, 0, NULL)
NULL_CALL(nfqb_pkt_truncated, false, NULL)
NULL_CALL(nfqb_pkt_skbinfo, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_is_gso, false, NULL)
NULL_CALL(nfqb_pkt_csum_not_ready, false, NULL)
NULL_CALL(nfqb_pkt_csum_not_verified, false, NULL)
NULL_CALL(nfqb_pkt_uid, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_gid, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_secctx, false, NULL, &null_ctx, &null_u32)
NULL_CALL(nfqb_pkt_ct_info, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_ct, NULL, NULL, &null_u32)
NULL_CALL(nfqb_pkt_ct_id, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_vlan, false, NULL, &null_u16, &null_u16b)
NULL_CALL(nfqb_pkt_l2hdr, NULL, NULL, &null_u32)
NULL_CALL(nfqb_pkt_priority, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_cgroup_classid, false, NULL, &null_u32)
NULL_CALL(nfqb_pkt_attr, NULL, NULL, NFQA_MARK, &null_u16)
NULL_CALL(nfqb_pkt_network_offset, 0, NULL)
NULL_CALL(nfqb_pkt_user, NULL, NULL)
NULL_CALL(nfqb_verdict, -1, NULL, NFQB_ACCEPT)
NULL_CALL(nfqb_verdict_mark, -1, NULL, NFQB_ACCEPT, 1)
NULL_CALL(nfqb_verdict_ct_mark, -1, NULL, NFQB_ACCEPT, 1)
NULL_CALL(nfqb_verdict_batch, -1, NULL, UINT32_MAX, NFQB_ACCEPT, NULL)
NULL_CALL(nfqb_pool_start, -1, NULL)
NULL_CALL(nfqb_pool_wait, -1, NULL)
NULL_CALL(nfqb_pool_handover, -1, NULL, null_fds, 1)
NULL_CALL(nfqb_pool_set_policy, -1, NULL, NULL)
NULL_CALL(nfqb_pool_stopping, false, NULL)
NULL_CALL(nfqb_pool_fd, -1, NULL)
NULL_CALL(nfqb_pool_threads, 0, NULL)
NULL_CALL(nfqb_pool_stats, -1, NULL, -1, &null_pst, sizeof(null_pst))
NULL_CALL(nfqb_pool_queue_stats, -1, NULL, 0, &null_st, sizeof(null_st))

static int null_nfqb_verdict_ex(void)
{
	struct nfqb_verdict v = { .verdict = NFQB_ACCEPT };

	errno = 0;
	return null_outcome(nfqb_verdict_ex(NULL, &v, sizeof(v)) == -1);
}

/* The void ones: did they set errno? */
static int null_nfqb_pkt_set_user(void)
{
	errno = 0;
	nfqb_pkt_set_user(NULL, &null_u32);
	return null_outcome(true);
}

static int null_nfqb_pool_stop(void)
{
	errno = 0;
	nfqb_pool_stop(NULL);
	return null_outcome(true);
}

static int null_nfqb_pool_destroy(void)
{
	errno = 0;
	nfqb_pool_destroy(NULL);
	return null_outcome(errno != 0);
}

/* nfqb_pool_error() returns the errno value itself */
static int null_nfqb_pool_error(void)
{
	int r = nfqb_pool_error(NULL);

	return r ? r : OK;
}

#define NULL_ROW(fn, err) { #fn, err, "NULL handle", null_##fn }

static const struct row null_rows[] = {
	NULL_ROW(nfqb_queue_close, OK),		/* nothing to do, as free() */
	NULL_ROW(nfqb_queue_close_stats, EINVAL),
	NULL_ROW(nfqb_queue_detach, EINVAL),
	NULL_ROW(nfqb_queue_interrupt, EINVAL),
	NULL_ROW(nfqb_queue_num, EINVAL),
	NULL_ROW(nfqb_queue_fd, EINVAL),
	NULL_ROW(nfqb_queue_socket_fd, EINVAL),
	NULL_ROW(nfqb_queue_set_nonblock, EINVAL),
	NULL_ROW(nfqb_queue_set_recv_timeout, EINVAL),
	NULL_ROW(nfqb_queue_set_wake_fd, EINVAL),
	NULL_ROW(nfqb_queue_set_read_sleep, EINVAL),
	NULL_ROW(nfqb_queue_set_copy_mode, EINVAL),
	NULL_ROW(nfqb_queue_set_maxlen, EINVAL),
	NULL_ROW(nfqb_queue_set_flags, EINVAL),
	NULL_ROW(nfqb_queue_set_large, EINVAL),
	NULL_ROW(nfqb_queue_set_rcvbuf, EINVAL),
	NULL_ROW(nfqb_queue_set_enobufs, EINVAL),
	NULL_ROW(nfqb_queue_set_buffers, EINVAL),
	NULL_ROW(nfqb_queue_set_default_verdict, EINVAL),
	NULL_ROW(nfqb_queue_set_coalesce, EINVAL),
	NULL_ROW(nfqb_queue_set_batch_limit, EINVAL),
	NULL_ROW(nfqb_queue_set_latency, EINVAL),
	NULL_ROW(nfqb_queue_set_linger, EINVAL),
	NULL_ROW(nfqb_queue_set_verdict_timeout, EINVAL),
	NULL_ROW(nfqb_queue_stats, EINVAL),
	NULL_ROW(nfqb_queue_fallback, EINVAL),
	NULL_ROW(nfqb_queue_next_timeout, EINVAL),
	NULL_ROW(nfqb_recv, EINVAL),
	NULL_ROW(nfqb_dispatch, EINVAL),
	NULL_ROW(nfqb_flush, EINVAL),
	NULL_ROW(nfqb_pkt_id, ABSENT),
	NULL_ROW(nfqb_pkt_queue_num, ABSENT),
	NULL_ROW(nfqb_pkt_family, ABSENT),
	NULL_ROW(nfqb_pkt_hook, ABSENT),
	NULL_ROW(nfqb_pkt_hook_point, ABSENT),
	NULL_ROW(nfqb_pkt_hw_protocol, ABSENT),
	NULL_ROW(nfqb_pkt_mark, ABSENT),
	NULL_ROW(nfqb_pkt_timestamp, ABSENT),
	NULL_ROW(nfqb_pkt_indev, ABSENT),
	NULL_ROW(nfqb_pkt_outdev, ABSENT),
	NULL_ROW(nfqb_pkt_physindev, ABSENT),
	NULL_ROW(nfqb_pkt_physoutdev, ABSENT),
	NULL_ROW(nfqb_pkt_hwaddr, ABSENT),
	NULL_ROW(nfqb_pkt_payload, ABSENT),
	NULL_ROW(nfqb_pkt_orig_len, ABSENT),
	NULL_ROW(nfqb_pkt_truncated, ABSENT),
	NULL_ROW(nfqb_pkt_skbinfo, ABSENT),
	NULL_ROW(nfqb_pkt_is_gso, ABSENT),
	NULL_ROW(nfqb_pkt_csum_not_ready, ABSENT),
	NULL_ROW(nfqb_pkt_csum_not_verified, ABSENT),
	NULL_ROW(nfqb_pkt_uid, ABSENT),
	NULL_ROW(nfqb_pkt_gid, ABSENT),
	NULL_ROW(nfqb_pkt_secctx, ABSENT),
	NULL_ROW(nfqb_pkt_ct_info, ABSENT),
	NULL_ROW(nfqb_pkt_ct, ABSENT),
	NULL_ROW(nfqb_pkt_ct_id, ABSENT),
	NULL_ROW(nfqb_pkt_vlan, ABSENT),
	NULL_ROW(nfqb_pkt_l2hdr, ABSENT),
	NULL_ROW(nfqb_pkt_priority, ABSENT),
	NULL_ROW(nfqb_pkt_cgroup_classid, ABSENT),
	NULL_ROW(nfqb_pkt_attr, ABSENT),
	NULL_ROW(nfqb_pkt_network_offset, ABSENT),
	NULL_ROW(nfqb_pkt_set_user, ABSENT),
	NULL_ROW(nfqb_pkt_user, ABSENT),
	NULL_ROW(nfqb_verdict, EINVAL),
	NULL_ROW(nfqb_verdict_mark, EINVAL),
	NULL_ROW(nfqb_verdict_ct_mark, EINVAL),
	NULL_ROW(nfqb_verdict_ex, EINVAL),
	NULL_ROW(nfqb_verdict_batch, EINVAL),
	NULL_ROW(nfqb_pool_start, EINVAL),
	NULL_ROW(nfqb_pool_stop, EINVAL),
	NULL_ROW(nfqb_pool_wait, EINVAL),
	NULL_ROW(nfqb_pool_handover, EINVAL),
	NULL_ROW(nfqb_pool_destroy, OK),	/* nothing to do, as free() */
	NULL_ROW(nfqb_pool_set_policy, EINVAL),
	NULL_ROW(nfqb_pool_stopping, EINVAL),
	NULL_ROW(nfqb_pool_fd, EINVAL),
	NULL_ROW(nfqb_pool_error, EINVAL),
	NULL_ROW(nfqb_pool_threads, EINVAL),
	NULL_ROW(nfqb_pool_stats, EINVAL),
	NULL_ROW(nfqb_pool_queue_stats, EINVAL),
};

#define NNULL_ROWS ((int)(sizeof(null_rows) / sizeof(null_rows[0])))

static const char *outcome_name(int err)
{
	if (err == OK)
		return "succeeded";
	if (err == ABSENT)
		return "absent, errno untouched";
	return strerror(err);
}

START_TEST(test_null_handle)
{
	const struct row *r = &null_rows[_i];
	int got = r->run();

	ck_assert_msg(got == r->err, "%s(NULL): %s, expected %s", r->fn,
		      outcome_name(got), outcome_name(r->err));
}
END_TEST

START_TEST(test_errno)
{
	const struct row *r = &rows[_i];
	int got;

	nfqbt_netns_enter();
	seam_on();
	got = r->run();
	free_made();
	ck_assert_msg(got == r->err, "%s(), %s: %s, expected %s", r->fn,
		      r->how, got == OK ? "succeeded" : strerror(got),
		      strerror(r->err));
}
END_TEST

/* --- Header against table ------------------------------------------------ */

static bool has_row(const char *fn, int err)
{
	int i;

	for (i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].fn, fn) && rows[i].err == err)
			return true;
	for (i = 0; i < NNULL_ROWS; i++)
		if (!strcmp(null_rows[i].fn, fn) && null_rows[i].err == err)
			return true;
	return false;
}

static const struct {
	const char *name;
	int err;
} errnames[] = {
#define E(x) { #x, x }
	E(E2BIG), E(EAGAIN), E(EALREADY), E(EBUSY), E(ECANCELED),
	E(EDEADLK), E(EINTR), E(EINVAL), E(EMSGSIZE), E(ENOBUFS),
	E(ENOENT), E(ENOMEM), E(ENOSPC), E(EOPNOTSUPP), E(EPERM),
	E(ESHUTDOWN), E(ETIMEDOUT), E(EBADF), E(ENOTSOCK), E(EPROTOTYPE),
	E(ENOTCONN), E(ENODEV), E(EACCES),
#undef E
};

static int errno_of(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (strlen(errnames[i].name) == len &&
		    !strncmp(errnames[i].name, name, len))
			return errnames[i].err;
	return -1;
}

static bool ident(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* The text of @path, NUL terminated (free() it). */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

/* Check every doc comment of @path; returns the (function, errno) pairs
 * checked. */
static unsigned int check_header(const char *path)
{
	char *text = read_text(path), *c;
	unsigned int pairs = 0;

	for (c = text; (c = strstr(c, "/**")) != NULL;) {
		char *end = strstr(c, "*/"), *decl, *paren, *name, *e, *from;
		char fn[64];
		size_t len;

		ck_assert_ptr_nonnull(end);
		decl = end + 2;
		paren = strchr(decl, '(');
		ck_assert_ptr_nonnull(paren);
		/* the declared name: the identifier before the '(' */
		name = paren;
		while (name > decl && ident(name[-1]))
			name--;
		len = (size_t)(paren - name);
		while (*decl == ' ' || *decl == '\n' || *decl == '\t')
			decl++;
		if (!strncmp(decl, "typedef", 7) || len == 0 ||
		    len >= sizeof(fn)) {
			c = end;
			continue;
		}
		memcpy(fn, name, len);
		fn[len] = 0;
		/* the errors: from "Returns" or "Errors" on */
		*end = 0;
		from = strstr(c, "Returns");
		e = strstr(c, "Errors");
		if (!from || (e && e < from))
			from = e;
		for (e = from; e && *e; e++) {
			size_t k = 0, j;
			int err;

			if (*e != 'E' || ident(e[-1]))
				continue;
			while (ident(e[k]))
				k++;
			/* an errno name: capitals and digits only */
			for (j = 0; j < k; j++)
				if (!(e[j] >= 'A' && e[j] <= 'Z') &&
				    !(e[j] >= '0' && e[j] <= '9'))
					break;
			if (k < 3 || j < k) {
				e += k - 1;
				continue;
			}
			err = errno_of(e, k);
			ck_assert_msg(err >= 0, "%s: %s() documents %.*s, which "
				      "this test does not know", path, fn,
				      (int)k, e);
			ck_assert_msg(has_row(fn, err), "%s: %s() documents "
				      "%.*s, and no row of test_errors makes "
				      "it", path, fn, (int)k, e);
			pairs++;
			e += k - 1;
		}
		*end = '*';
		c = end;
	}
	free(text);
	return pairs;
}

/* Blank out the comments of @text (declarations are what is left). */
static void strip_comments(char *text)
{
	char *c, *end;

	for (c = text; (c = strstr(c, "/*")) != NULL; c = end) {
		end = strstr(c + 2, "*/");
		ck_assert_ptr_nonnull(end);
		end += 2;
		memset(c, ' ', (size_t)(end - c));
	}
}

/* Every function @path declares with a queue, pool or packet handle among
 * its parameters must have a row in null_rows; returns how many it has. */
static unsigned int check_null_rows(const char *path)
{
	static const char *const handles[] = {
		"struct nfqb_queue *", "struct nfqb_pool *",
		"struct nfqb_packet *",
	};
	char *text = read_text(path), *c;
	unsigned int found = 0;

	strip_comments(text);
	for (c = text; (c = strstr(c, "nfqb_")) != NULL;) {
		char *name = c, *open, *close, params[512], *o;
		bool handle = false;
		size_t len, i;
		int k;

		if (name > text && ident(name[-1])) {
			c++;
			continue;
		}
		for (open = name; ident(*open); open++)
			;
		if (*open != '(') {	/* a type, a callback's typedef */
			c = open;
			continue;
		}
		close = strchr(open, ')');
		ck_assert_ptr_nonnull(close);
		/* the parameters, white space made single spaces */
		for (o = params, i = 1; open + i < close &&
		     o < params + sizeof(params) - 1; i++) {
			char ch = open[i];

			if (ch == '\n' || ch == '\t')
				ch = ' ';
			if (ch == ' ' && o > params && o[-1] == ' ')
				continue;
			*o++ = ch;
		}
		*o = 0;
		for (i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
			handle |= strstr(params, handles[i]) != NULL;
		c = close;
		if (!handle)
			continue;
		len = (size_t)(open - name);
		for (k = 0; k < NNULL_ROWS; k++)
			if (strlen(null_rows[k].fn) == len &&
			    !strncmp(null_rows[k].fn, name, len))
				break;
		ck_assert_msg(k < NNULL_ROWS, "%s: %.*s() takes a handle, and "
			      "no row of null_rows calls it with NULL", path,
			      (int)len, name);
		found++;
	}
	free(text);
	return found;
}

START_TEST(test_null_rows_complete)
{
	unsigned int n;

	n = check_null_rows(NFQB_TOP_SRCDIR "/include/libnfq-batch/libnfq-batch.h");
	n += check_null_rows(NFQB_TOP_SRCDIR "/include/libnfq-batch/pool.h");
	/* every function with a handle was found, and none is left over */
	ck_assert_uint_eq(n, NNULL_ROWS);
}
END_TEST

START_TEST(test_header_errnos_tested)
{
	unsigned int pairs;

	pairs = check_header(NFQB_TOP_SRCDIR "/include/libnfq-batch/libnfq-batch.h");
	pairs += check_header(NFQB_TOP_SRCDIR "/include/libnfq-batch/pool.h");
	/* the headers were read: each names many errors */
	ck_assert_uint_ge(pairs, 50);
}
END_TEST

/* --- A start under load: bound and configured at once ------------------ */

#define START_ROUNDS	20
#define START_SENT	30000u

/*
 * The kernel creates a queue in copy mode NONE and drops every packet that
 * reaches it before a copy mode is set, uncounted and even on a rule with
 * bypass: a bind and its copy mode sent as two requests lose what comes
 * in between, at every start of a consumer. Here every config request is
 * followed by 2 ms of nothing (a consumer preempted), and a queue is
 * opened and closed 20 times under steady load on a rule with bypass:
 * every datagram must arrive exactly once (by bypass while no queue is
 * bound, by our verdict or the close's default while one is).
 */
START_TEST(test_open_under_load)
{
	struct nfqbt_rx_opts ro = { .max_seq = START_SENT, .quiet_ms = 3000,
				    .timeout_ms = 40000 };
	struct nfqbt_tx_opts to = { .port = PORT, .count = START_SENT,
				    .pace_us = 20, .timeout_ms = 30000 };
	unsigned int i, sent, queued = 0, during;
	struct nfqbt_rx *rx;
	struct nfqbt_tx *tx;

	nfqbt_netns_enter();
	seam_on();
	nfqbt_rule_queue(PORT, QNUM, true);
	rx = nfqbt_rx_start(PORT, &ro);
	tx = nfqbt_tx_start(&to);
	ck_assert(nfqbt_rx_wait_total(rx, 1000, 10000));
	fault.slow_config = true;
	for (i = 0; i < START_ROUNDS; i++) {
		struct nfqb_queue *q = nfqb_queue_open(QNUM);
		struct nfqbt_cons c;

		ck_assert_msg(q, "open: %s", strerror(errno));
		nfqbt_cons_init(&c, q, nfqbt_decide_accept, NULL);
		queued += nfqbt_cons_run(&c, START_SENT, 10);
		ck_assert_msg(nfqb_queue_close(q) == 0, "close: %s",
			      strerror(errno));
	}
	fault.slow_config = false;
	during = nfqbt_rx_total(rx);
	sent = nfqbt_tx_join(tx);
	ck_assert_msg(during < sent, "the sender ended before the last "
		      "close (%u of %u arrived)", during, sent);
	nfqbt_rx_wait_total(rx, sent, 15000);
	nfqbt_rx_stop(rx);
	printf("open under load: %u opens and closes, sent %u, arrived %u, "
	       "of them queued to us %u\n", START_ROUNDS, sent,
	       nfqbt_rx_total(rx), queued);
	ck_assert_uint_gt(queued, 0);
	nfqbt_rx_assert_exact(rx, 0, sent, NULL, NULL);
	nfqbt_rx_free(rx);
}
END_TEST

static Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = nfqbt_tcase(s, "errno", NFQBT_TCASE_TIMEOUT);

	tcase_add_loop_test(tc, test_errno, 0, NROWS);
	nfqbt_tcase_tests(s, "start", 60, (const TTest *[]){
		test_open_under_load, NULL });
	tc = nfqbt_tcase_tests(s, "null", 0, (const TTest *[]){ NULL });
	tcase_add_loop_test(tc, test_null_handle, 0, NNULL_ROWS);
	nfqbt_tcase_tests(s, "header", 0, (const TTest *[]){
		test_header_errnos_tested, test_null_rows_complete, NULL });
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_errors", errors_suite());
}
