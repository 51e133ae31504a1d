// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every way nfqb_recv() can go to sleep, against the real kernel, each
 * woken two ways: a signal (handler installed without SA_RESTART, sent to
 * the sleeping thread) and nfqb_queue_interrupt() from another thread.
 * Each must return -1 with EINTR within 100 ms of the wake-up and burn no
 * CPU while it sleeps. (The signal is sent again every 5 ms until the
 * call returns: one that comes between two system calls is lost to any
 * program.)
 *
 * The ways to sleep (one table row each):
 *  - idle: nothing queued, nothing held;
 *  - toggle: the sequence of issue 20 (non-blocking, two packets decided
 *    out of order with a flush after each, back to blocking, then idle);
 *  - held: a decided packet waits behind an undecided one, with a long
 *    latency bound;
 *  - timeout: an undecided packet with a verdict timeout pending;
 *  - exhausted: every receive buffer is with the application;
 *  - failing: the verdict send fails (the test seam), retried with backoff;
 *  - linger: a fixed linger pause after a stream of packets.
 *
 * Each row twice: sleeping in epoll (the default), and with the read
 * sleep (nfqb_queue_set_read_sleep()), where the library sleeps in the
 * socket's read wherever it would sleep in epoll (every row but exhausted
 * and linger, which the seam's counts check) and other threads wake it
 * with a datagram to its own port. The read_sleep case checks the read
 * sleep's own promises: two system calls per lone round trip (three
 * without), a decision from another thread sent at once, its wake-ups
 * not counted as foreign messages, and a refused wake-up send.
 *
 * Links the internal library (statically) for the seam: verdict sends made
 * to fail (nfqbt_fail_verdicts()).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "harness.h"

#define PORT		5411
#define WAKE_AFTER_MS	600	/* the sleeper is surely asleep by then */
#define WAKE_MAX_MS	100	/* EINTR at most this long after the wake */
#define CPU_MAX_MS	40	/* CPU the sleeper may use while asleep */

/* --- the waker ------------------------------------------------------------ */

enum wake { WAKE_SIGNAL, WAKE_INTERRUPT };

struct waker {
	pthread_t thread;
	pthread_t sleeper;
	struct nfqb_queue *q;
	enum wake how;
	uint64_t woken_ms;
	_Atomic bool back;	/* nfqb_recv() has returned */
	unsigned int signals;	/* sent */
};

static void on_usr1(int sig)
{
	(void)sig;
}

static void *waker_main(void *arg)
{
	struct waker *w = arg;

	nfqbt_sleep_ms(WAKE_AFTER_MS);
	w->woken_ms = nfqbt_now_ms();
	if (w->how != WAKE_SIGNAL) {
		nfqb_queue_interrupt(w->q);
		return NULL;
	}
	/*
	 * A signal interrupts a system call; one that comes while the
	 * sleeper runs between two of them (the failing way retries its
	 * send every few ms) is handled and gone, and nothing can see it:
	 * an application that must be woken calls nfqb_queue_interrupt().
	 * So the signal is sent again every 5 ms until nfqb_recv() returns
	 * (at most WAKE_MAX_MS / 5 + 1 times): a sleep that swallowed
	 * EINTR and went on still keeps it from returning.
	 */
	while (!atomic_load(&w->back) && w->signals <= WAKE_MAX_MS / 5) {
		pthread_kill(w->sleeper, SIGUSR1);
		w->signals++;
		nfqbt_sleep_ms(5);
	}
	return NULL;
}

/* --- the ways to sleep ---------------------------------------------------- */

enum way {
	WAY_IDLE,
	WAY_TOGGLE,
	WAY_HELD,
	WAY_TIMEOUT,
	WAY_EXHAUSTED,
	WAY_FAILING,
	WAY_LINGER,
	NWAYS
};

static const char *const way_name[NWAYS] = {
	"idle", "toggle", "held", "timeout", "exhausted", "failing", "linger",
};

struct setup {
	struct nfqb_queue *q;
	struct nfqb_packet *vec[8];
	unsigned int held;	/* packets of vec[] still undecided */
};

static void send_n(uint32_t first, unsigned int n)
{
	struct nfqbt_tx_opts o = { .port = PORT, .first_seq = first,
				   .count = n };

	ck_assert_uint_eq(nfqbt_send(&o), n);
	ck_assert(nfqbt_wait_kqueue_total(0, n, 5000));
}

/* No linger; @sent datagrams queued, the first @got of them received
 * (blocking) into @v. */
static void take(struct nfqb_queue *q, struct nfqb_packet **v,
		 unsigned int sent, unsigned int got)
{
	ck_assert_int_eq(nfqb_queue_set_linger(q, 0), 0);
	send_n(0, sent);
	nfqbt_recv_n(q, v, got);
}

/* Does @way sleep in the read with the read sleep on? 1: yes, 0: no,
 * -1: either (linger: the pause, or a sleep after it) */
static int reads_asleep(enum way way)
{
	if (way == WAY_LINGER)
		return -1;
	return way != WAY_EXHAUSTED;
}

/* Bring queue 0 into the state of @way, blocking, about to sleep; @rs:
 * with the read sleep. */
static void set_up(enum way way, bool rs, struct setup *s)
{
	struct nfqb_queue *q = nfqbt_queue_open(0);
	struct nfqb_packet *v[8];
	int n;

	s->q = q;
	s->held = 0;
	if (rs)
		ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), 0);
	switch (way) {
	case WAY_IDLE:
		break;
	case WAY_TOGGLE:
		ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
		send_n(0, 2);
		ck_assert_int_eq(nfqb_recv(q, v, 8), 2);
		ck_assert_int_eq(nfqb_verdict(v[1], NFQB_ACCEPT), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_int_eq(nfqb_verdict(v[0], NFQB_ACCEPT), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_int_eq(nfqb_queue_set_nonblock(q, false), 0);
		break;
	case WAY_HELD:
		ck_assert_int_eq(nfqb_queue_set_latency(q, 30000000), 0);
		take(q, v, 2, 2);
		ck_assert_int_eq(nfqb_verdict(v[1], NFQB_ACCEPT), 0);
		s->vec[s->held++] = v[0];
		break;
	case WAY_TIMEOUT:
		ck_assert_int_eq(nfqb_queue_set_verdict_timeout(q, 20000), 0);
		take(q, v, 1, 1);
		s->vec[s->held++] = v[0];
		break;
	case WAY_EXHAUSTED:
		ck_assert_int_eq(nfqb_queue_set_buffers(q, 4), 0);
		take(q, v, 6, 4);
		memcpy(s->vec, v, 4 * sizeof(v[0]));
		s->held = 4;
		break;
	case WAY_FAILING:
		take(q, v, 1, 1);
		nfqbt_fail_verdicts(ENOBUFS, 1);
		ck_assert_int_eq(nfqb_verdict(v[0], NFQB_ACCEPT), 0);
		ck_assert_int_eq(nfqb_flush(q), -1);
		ck_assert_int_eq(errno, EAGAIN);
		break;
	case WAY_LINGER:
		ck_assert_int_eq(nfqb_queue_set_linger(q, 900000), 0);
		send_n(0, 8);
		n = nfqb_recv(q, v, 8);
		ck_assert_int_ge(n, 2);	/* in one read: a stream */
		while (n-- > 0)
			ck_assert_int_eq(nfqb_verdict(v[n], NFQB_ACCEPT), 0);
		break;
	default:
		ck_abort();
	}
}

static void tear_down(struct setup *s)
{
	unsigned int i;

	nfqbt_seam_off();
	for (i = 0; i < s->held; i++)
		ck_assert_int_eq(nfqb_verdict(s->vec[i], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_queue_close(s->q), 0);
}

static void run_way(enum way way, bool rs, enum wake how)
{
	const struct nfqbt_calls *calls;
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct waker w = { .sleeper = pthread_self(), .how = how };
	struct nfqb_packet *v[8];
	uint64_t cpu0, cpu, t0, back;
	struct setup s;
	int n, err;

	nfqbt_rule_queue(PORT, 0, false);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	set_up(way, rs, &s);
	calls = nfqbt_count_calls();
	w.q = s.q;
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waker_main, &w), 0);
	t0 = nfqbt_now_ms();
	cpu0 = nfqbt_thread_cpu_ms();
	n = nfqb_recv(s.q, v, 8);
	err = errno;
	back = nfqbt_now_ms();
	cpu = nfqbt_thread_cpu_ms() - cpu0;
	atomic_store(&w.back, true);
	pthread_join(w.thread, NULL);
	if (w.signals > 1)
		fprintf(stderr, "%s: %u signals sent (the first came between "
			"two system calls)\n", way_name[way], w.signals);
	ck_assert_msg(n == -1 && err == EINTR,
		      "%s, %s: nfqb_recv() returned %d (%s) after %llu ms, "
		      "not EINTR", way_name[way],
		      how == WAKE_SIGNAL ? "signal" : "interrupt", n,
		      n < 0 ? strerror(err) : "packets",
		      (unsigned long long)(back - t0));
	ck_assert_msg(back - w.woken_ms <= WAKE_MAX_MS,
		      "%s: EINTR %llu ms after the wake-up", way_name[way],
		      (unsigned long long)(back - w.woken_ms));
	ck_assert_msg(cpu <= CPU_MAX_MS,
		      "%s: %llu ms of CPU in %llu ms of sleep", way_name[way],
		      (unsigned long long)cpu,
		      (unsigned long long)(back - t0));
	/* it slept where it should have */
	if (rs && reads_asleep(way) == 1) {
		ck_assert_uint_ge(atomic_load(&calls->reads_asleep), 1);
		ck_assert_uint_eq(atomic_load(&calls->waits), 0);
		if (how == WAKE_INTERRUPT)
			ck_assert_uint_ge(atomic_load(&calls->pokes), 1);
	} else if (!rs || !reads_asleep(way)) {
		ck_assert_uint_eq(atomic_load(&calls->reads_asleep), 0);
	}
	tear_down(&s);
}

START_TEST(test_signal)
{
	run_way((enum way)(_i % NWAYS), _i >= NWAYS, WAKE_SIGNAL);
}
END_TEST

START_TEST(test_interrupt)
{
	run_way((enum way)(_i % NWAYS), _i >= NWAYS, WAKE_INTERRUPT);
}
END_TEST

/* --- the read sleep's own promises ----------------------------------------- */

#define LONE_TRIPS	24
#define LONE_WARM	4	/* round trips before counting */

/* Lone round trips: one packet queued, received, accepted and flushed,
 * delivered before the next is sent, as a request/response loop does.
 * Counted: the library's system calls after the first few. */
START_TEST(test_lone_calls)
{
	bool rs = _i;
	struct nfqbt_rx_opts ro = { .expected = LONE_TRIPS };
	const struct nfqbt_calls *c = NULL;
	struct nfqb_packet *v[8];
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	unsigned int k, n, total;

	nfqbt_rule_queue(PORT, 0, false);
	rx = nfqbt_rx_start(PORT, &ro);
	q = nfqbt_queue_open(0);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 1000), 0);
	if (rs)
		ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), 0);
	for (k = 0; k < LONE_TRIPS; k++) {
		struct nfqbt_tx_opts o = { .port = PORT, .first_seq = k,
					   .count = 1 };

		if (k == LONE_WARM)
			c = nfqbt_count_calls();
		ck_assert_uint_eq(nfqbt_send(&o), 1);
		ck_assert_int_eq(nfqb_recv(q, v, 8), 1);
		ck_assert_int_eq(nfqb_verdict(v[0], NFQB_ACCEPT), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert(nfqbt_rx_wait_total(rx, k + 1, 2000));
	}
	n = LONE_TRIPS - LONE_WARM;
	total = atomic_load(&c->sends) + atomic_load(&c->reads) +
		atomic_load(&c->reads_asleep) + atomic_load(&c->waits) +
		atomic_load(&c->rcvtimeos) + atomic_load(&c->pokes);
	fprintf(stderr, "%s: %u round trips: %u sends, %u reads, %u reads "
		"asleep, %u waits, %u SO_RCVTIMEO, %u pokes\n",
		rs ? "read sleep" : "epoll", n, atomic_load(&c->sends),
		atomic_load(&c->reads), atomic_load(&c->reads_asleep),
		atomic_load(&c->waits), atomic_load(&c->rcvtimeos),
		atomic_load(&c->pokes));
	ck_assert_uint_eq(atomic_load(&c->sends), n);
	if (rs) {
		/* one read that sleeps and one send per round trip */
		ck_assert_uint_eq(atomic_load(&c->reads_asleep), n);
		ck_assert_uint_eq(total, 2 * n);
	} else {
		/* epoll_wait, the read, the send */
		ck_assert_uint_eq(atomic_load(&c->waits), n);
		ck_assert_uint_eq(atomic_load(&c->reads), n);
		ck_assert_uint_eq(total, 3 * n);
	}
	nfqbt_seam_off();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

struct decider {
	struct nfqb_packet *p;
	const struct nfqbt_rx *rx;
	int r;			/* nfqb_verdict()'s */
	bool delivered;		/* within 100 ms of the decision */
};

static void *decide_later(void *arg)
{
	struct decider *d = arg;

	nfqbt_sleep_ms(300);
	d->r = nfqb_verdict(d->p, NFQB_ACCEPT);
	d->delivered = nfqbt_rx_wait_total(d->rx, 1, WAKE_MAX_MS);
	return NULL;
}

/* A decision from another thread while the owner sleeps in the read: the
 * owner wakes (a poke) and sends it at once, without returning. */
START_TEST(test_decision_wakes)
{
	struct nfqbt_rx_opts ro = { .expected = 1 };
	const struct nfqbt_calls *c;
	struct decider d = { 0 };
	struct nfqb_packet *v[8];
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	pthread_t t;
	uint64_t t0;

	nfqbt_rule_queue(PORT, 0, false);
	rx = nfqbt_rx_start(PORT, &ro);
	q = nfqbt_queue_open(0);
	ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), 0);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 1500), 0);
	send_n(0, 1);
	ck_assert_int_eq(nfqb_recv(q, v, 8), 1);
	d.p = v[0];
	d.rx = rx;
	c = nfqbt_count_calls();
	ck_assert_int_eq(pthread_create(&t, NULL, decide_later, &d), 0);
	t0 = nfqbt_now_ms();
	/* nothing comes: the receive timeout ends it */
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_uint_ge(nfqbt_now_ms() - t0, 1400);
	pthread_join(t, NULL);
	ck_assert_int_eq(d.r, 0);
	/* sent at once, while the owner was still in nfqb_recv() */
	ck_assert_msg(d.delivered, "not delivered within %d ms of the "
		      "decision", WAKE_MAX_MS);
	ck_assert_uint_ge(atomic_load(&c->pokes), 1);
	ck_assert_uint_ge(atomic_load(&c->reads_asleep), 2);
	ck_assert_uint_eq(atomic_load(&c->waits), 0);
	ck_assert_uint_eq(atomic_load(&c->sends), 1);
	nfqbt_seam_off();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

/* A NLMSG_NOOP to @portid from another netlink socket (a stranger's). */
static void send_noop(uint32_t portid)
{
	struct nlmsghdr nlh = { .nlmsg_len = sizeof(nlh),
				.nlmsg_type = NLMSG_NOOP };
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = portid };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			NETLINK_NETFILTER);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sendto(fd, &nlh, sizeof(nlh), 0,
				(struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)sizeof(nlh));
	close(fd);
}

/* The wake-ups reach the read and are dropped uncounted; the same
 * message from another port is a foreign one, counted. */
START_TEST(test_pokes_uncounted)
{
	struct waker w = { .how = WAKE_INTERRUPT };
	const struct nfqbt_calls *c;
	struct nfqb_packet *v[8];
	struct nfqb_queue *q;

	q = nfqbt_queue_open(0);
	ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), 0);
	c = nfqbt_count_calls();
	w.q = q;
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waker_main, &w), 0);
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EINTR);
	pthread_join(w.thread, NULL);
	ck_assert_uint_eq(atomic_load(&c->pokes), 1);
	ck_assert_uint_ge(atomic_load(&c->reads_asleep), 1);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 200), 0);
	/* the poke is read and dropped: nothing to hand out */
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_uint_eq(nfqbt_queue_stats(q).rejected_foreign, 0);
	send_noop(nfqbt_portid(nfqb_queue_socket_fd(q)));
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_uint_eq(nfqbt_queue_stats(q).rejected_foreign, 1);
	nfqbt_seam_off();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

/* A wake-up send refused (EPERM: no CAP_NET_ADMIN): the read sleep is not
 * taken on; refused later, that wake-up comes at the sleep's bound and
 * the queue sleeps in epoll from then on. */
START_TEST(test_poke_refused)
{
	struct waker w = { .how = WAKE_INTERRUPT };
	const struct nfqbt_calls *c;
	struct nfqb_packet *v[8];
	struct nfqb_queue *q;
	uint64_t back;

	q = nfqbt_queue_open(0);
	nfqbt_fail_pokes(EPERM);
	ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), -1);
	ck_assert_int_eq(errno, EPERM);
	nfqbt_fail_pokes(0);
	ck_assert_int_eq(nfqb_queue_set_read_sleep(q, true), 0);
	nfqbt_fail_pokes(EPERM);

	/* asleep in the read, the interrupt's poke refused: the sleep ends
	 * at its bound, then the interrupt is seen */
	c = nfqbt_count_calls();
	w.q = q;
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waker_main, &w), 0);
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EINTR);
	back = nfqbt_now_ms();
	pthread_join(w.thread, NULL);
	ck_assert_uint_eq(atomic_load(&c->pokes), 1);
	ck_assert_uint_ge(atomic_load(&c->reads_asleep), 1);
	ck_assert_uint_le(back - w.woken_ms, 1000 + WAKE_MAX_MS);

	/* from then on in epoll: woken at once, no poke tried */
	c = nfqbt_count_calls();
	w = (struct waker){ .how = WAKE_INTERRUPT, .q = q };
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waker_main, &w), 0);
	ck_assert_int_eq(nfqb_recv(q, v, 8), -1);
	ck_assert_int_eq(errno, EINTR);
	back = nfqbt_now_ms();
	pthread_join(w.thread, NULL);
	ck_assert_uint_le(back - w.woken_ms, WAKE_MAX_MS);
	ck_assert_uint_eq(atomic_load(&c->reads_asleep), 0);
	ck_assert_uint_ge(atomic_load(&c->waits), 1);
	ck_assert_uint_eq(atomic_load(&c->pokes), 0);
	nfqbt_seam_off();
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

static Suite *sleep_suite(void)
{
	Suite *s = suite_create("sleep");
	TCase *tc = nfqbt_tcase_netns(s, "wake", NFQBT_TCASE_TIMEOUT);

	tcase_add_loop_test(tc, test_signal, 0, 2 * NWAYS);
	tcase_add_loop_test(tc, test_interrupt, 0, 2 * NWAYS);
	tc = nfqbt_tcase_netns(s, "read_sleep", NFQBT_TCASE_TIMEOUT);
	tcase_add_loop_test(tc, test_lone_calls, 0, 2);
	tcase_add_test(tc, test_decision_wakes);
	tcase_add_test(tc, test_pokes_uncounted);
	tcase_add_test(tc, test_poke_refused);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_sleep", sleep_suite());
}
