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

/* Bring queue 0 into the state of @way, blocking, about to sleep. */
static void set_up(enum way way, struct setup *s)
{
	struct nfqb_queue *q = nfqbt_queue_open(0);
	struct nfqb_packet *v[8];
	int n;

	s->q = q;
	s->held = 0;
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

static void run_way(enum way way, enum wake how)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct waker w = { .sleeper = pthread_self(), .how = how };
	struct nfqb_packet *v[8];
	uint64_t cpu0, cpu, t0, back;
	struct setup s;
	int n, err;

	nfqbt_rule_queue(PORT, 0, false);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	set_up(way, &s);
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
	tear_down(&s);
}

START_TEST(test_signal)
{
	run_way((enum way)_i, WAKE_SIGNAL);
}
END_TEST

START_TEST(test_interrupt)
{
	run_way((enum way)_i, WAKE_INTERRUPT);
}
END_TEST

static Suite *sleep_suite(void)
{
	Suite *s = suite_create("sleep");
	TCase *tc = nfqbt_tcase_netns(s, "wake", NFQBT_TCASE_TIMEOUT);

	tcase_add_loop_test(tc, test_signal, 0, NWAYS);
	tcase_add_loop_test(tc, test_interrupt, 0, NWAYS);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_sleep", sleep_suite());
}
