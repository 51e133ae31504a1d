// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The documented loop of an application that sleeps in its own poll():
 * a non-blocking queue, nfqb_recv() until EAGAIN, then poll() on
 * nfqb_queue_fd() for nfqb_queue_next_timeout() milliseconds (Snort's DAQ
 * module does this with its receive timeout). Against the real kernel,
 * through TCP on lo (65535-byte packets) and at MTU 1500, UDP bursts,
 * decisions held back a round, failing sends, and interrupts, it must
 * never spin: at most 2 nfqb_recv() calls per packet, and while nothing
 * arrives, next to no calls and no CPU. Every packet arrives once.
 *
 * Links the internal library (statically) for the seam: verdict sends made
 * to fail (nfqbt_fail_verdicts()).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define UDP_PORT	5421
#define TCP_PORT	5422
#define QNUM		0
#define IDLE_MS		600	/* the idle phase after the traffic */
#define IDLE_CALLS_MAX	4
#define IDLE_CPU_MAX_MS	20

/* --- the application's loop ---------------------------------------------- */

struct app {
	struct nfqb_queue *q;
	unsigned int hold_every;	/* keep every Nth packet a round */
	struct nfqb_packet *held[64];
	unsigned int nheld;
	unsigned long seen;
	unsigned long calls;		/* nfqb_recv() calls */
	unsigned long packets;
	unsigned long eintr;
	unsigned long enobufs;
};

/* One round of the documented loop: receive and decide, or sleep in
 * poll() as long as the library allows. Decisions held back from the last
 * round are made after this round's nfqb_recv(), as an application that
 * finishes its inspection later would. */
static void app_round(struct app *a, int max_ms)
{
	struct pollfd pfd = { .fd = nfqb_queue_fd(a->q), .events = POLLIN };
	struct nfqb_packet *vec[64];
	unsigned int k;
	int n, i, tmo;

	n = nfqb_recv(a->q, vec, 64);
	a->calls++;
	for (k = 0; k < a->nheld; k++)
		ck_assert_int_eq(nfqb_verdict(a->held[k], NFQB_ACCEPT), 0);
	a->nheld = 0;
	if (n > 0) {
		a->packets += (unsigned int)n;
		for (i = 0; i < n; i++) {
			if (a->hold_every && ++a->seen % a->hold_every == 0 &&
			    a->nheld < 64) {
				a->held[a->nheld++] = vec[i];
				continue;
			}
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		}
		return;
	}
	ck_assert_msg(errno == EAGAIN || errno == EINTR || errno == ENOBUFS,
		      "nfqb_recv: %s", strerror(errno));
	if (errno == EINTR) {
		a->eintr++;
		return;
	}
	if (errno == ENOBUFS)
		a->enobufs++;
	if (errno != EAGAIN)
		return;
	tmo = nfqb_queue_next_timeout(a->q);
	if (tmo < 0 || tmo > max_ms)
		tmo = max_ms;
	ck_assert_int_ge(poll(&pfd, 1, tmo), 0);
}

/* After the traffic: nothing arrives, nothing is due; the loop must
 * sleep. */
static void assert_idle(struct app *a, const char *what)
{
	unsigned long calls = a->calls;
	uint64_t cpu = nfqbt_thread_cpu_ms(), end = nfqbt_now_ms() + IDLE_MS;

	while (nfqbt_now_ms() < end)
		app_round(a, (int)(end - nfqbt_now_ms()) + 1);
	fprintf(stderr, "%s: idle %u ms: %lu calls, %llu ms CPU\n", what,
		IDLE_MS, a->calls - calls,
		(unsigned long long)(nfqbt_thread_cpu_ms() - cpu));
	ck_assert_msg(a->calls - calls <= IDLE_CALLS_MAX,
		      "%s: %lu nfqb_recv() calls in %u ms of idle", what,
		      a->calls - calls, IDLE_MS);
	ck_assert_msg(nfqbt_thread_cpu_ms() - cpu <= IDLE_CPU_MAX_MS,
		      "%s: %llu ms of CPU in %u ms of idle", what,
		      (unsigned long long)(nfqbt_thread_cpu_ms() - cpu), IDLE_MS);
}

static void assert_calls(const struct app *a, const char *what)
{
	fprintf(stderr, "%s: %lu packets, %lu nfqb_recv() calls: %.2f per "
		"packet\n", what, a->packets, a->calls,
		a->packets ? (double)a->calls / (double)a->packets : 0.0);
	ck_assert_uint_gt(a->packets, 0);
	ck_assert_msg(a->calls <= 2 * a->packets,
		      "%s: %lu nfqb_recv() calls for %lu packets", what,
		      a->calls, a->packets);
}

static struct nfqb_queue *open_nonblock(void)
{
	struct nfqb_queue *q = nfqbt_queue_open_nb(QNUM);

	/* the bursts are sent by the test's thread, which reads only after
	 * each (and may be preempted on a busy machine): room for them */
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(q, 16 << 20), 0);
	ck_assert_int_eq(nfqb_queue_set_maxlen(q, 65536), 0);
	return q;
}

/* --- TCP ----------------------------------------------------------------- */

static void run_tcp(unsigned int mtu, bool gso, size_t bytes,
		    const char *what)
{
	struct app a = { 0 };
	struct nfqbt_tcp k;
	uint64_t end;

	if (mtu) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "ip link set lo mtu %u", mtu);
		ck_assert_int_eq(system(cmd), 0);
	}
	nfqbt_iptables("-A INPUT -p tcp --dport %u -j NFQUEUE --queue-num %u",
		       TCP_PORT, QNUM);
	a.q = open_nonblock();
	if (!gso)
		ck_assert_int_eq(nfqb_queue_set_flags(a.q, 0, NFQB_F_GSO), 0);
	nfqbt_tcp_start(&k, TCP_PORT, bytes, NULL);
	end = nfqbt_now_ms() + 25000;
	while (!atomic_load(&k.done) && nfqbt_now_ms() < end)
		app_round(&a, 100);
	ck_assert_msg(atomic_load(&k.done), "%s: the transfer did not end",
		      what);
	nfqbt_tcp_join(&k);
	ck_assert_uint_eq(k.got, bytes);
	assert_calls(&a, what);
	assert_idle(&a, what);
	ck_assert_int_eq(nfqb_queue_close(a.q), 0);
}

START_TEST(test_tcp_lo)
{
	run_tcp(0, true, 64u << 20, "tcp, lo (MTU 65536)");
}
END_TEST

START_TEST(test_tcp_1500)
{
	run_tcp(1500, false, 16u << 20, "tcp, MTU 1500, no GSO");
}
END_TEST

/* --- UDP ------------------------------------------------------------------ */

enum udp_case { UDP_BURSTS, UDP_HELD, UDP_FAILING, UDP_INTERRUPT };

static const char *const udp_name[] = {
	"udp bursts", "udp, held decisions", "udp, failing sends",
	"udp, interrupts",
};

#define BURSTS		40
#define BURST		250

static void run_udp(enum udp_case c)
{
	const unsigned int n = BURSTS * BURST;
	struct nfqbt_rx_opts ro = { .expected = n, .timeout_ms = 25000 };
	struct app a = { .hold_every = c == UDP_HELD ? 8 : 0 };
	struct nfqbt_tx_opts o = { .port = UDP_PORT, .count = BURST };
	struct nfqbt_rx *rx;
	unsigned int b;
	uint64_t end;

	nfqbt_rule_queue(UDP_PORT, QNUM, false);
	rx = nfqbt_rx_start(UDP_PORT, &ro);
	a.q = open_nonblock();
	if (c == UDP_FAILING)	/* every fourth verdict send, for now */
		nfqbt_fail_verdicts(ENOBUFS, 4);
	for (b = 0; b < BURSTS; b++) {
		uint64_t next = nfqbt_now_ms() + 10;

		o.first_seq = b * BURST;
		ck_assert_uint_eq(nfqbt_send(&o), BURST);
		if (c == UDP_INTERRUPT && b % 4 == 0)
			ck_assert_int_eq(nfqb_queue_interrupt(a.q), 0);
		while (nfqbt_now_ms() < next)
			app_round(&a, (int)(next - nfqbt_now_ms()) + 1);
	}
	/* the rest, the last held decisions and retries */
	end = nfqbt_now_ms() + 15000;
	while (nfqbt_rx_total(rx) < n && nfqbt_now_ms() < end)
		app_round(&a, 10);
	nfqbt_rx_wait(rx);
	nfqbt_fail_verdicts(0, 0);
	{
		struct nfqb_kstats ks = nfqbt_kstats(QNUM);

		ck_assert_msg(!ks.queue_dropped && !ks.queue_user_dropped,
			      "%s: the kernel dropped %u (queue full) and %u "
			      "(socket full)", udp_name[c], ks.queue_dropped,
			      ks.queue_user_dropped);
	}
	ck_assert_uint_eq(a.enobufs, 0);
	nfqbt_rx_assert_exact(rx, 0, n, NULL, NULL);
	if (c == UDP_INTERRUPT)
		ck_assert_uint_gt(a.eintr, 0);
	if (c == UDP_FAILING) {
		struct nfqb_stats st;

		st = nfqbt_queue_stats(a.q);
		ck_assert_uint_gt(st.send_failures, 0);
	}
	assert_calls(&a, udp_name[c]);
	assert_idle(&a, udp_name[c]);
	nfqbt_seam_off();
	ck_assert_int_eq(nfqb_queue_close(a.q), 0);
	nfqbt_rx_free(rx);
}

START_TEST(test_udp)
{
	run_udp((enum udp_case)_i);
}
END_TEST

/* An interrupt while idle: one EINTR, then nfqb_queue_fd() is quiet again
 * (it stayed readable for good, and every poll() returned at once). */
START_TEST(test_interrupt_idle)
{
	struct app a = { 0 };

	nfqbt_rule_queue(UDP_PORT, QNUM, false);
	a.q = open_nonblock();
	ck_assert_int_eq(nfqb_queue_interrupt(a.q), 0);
	app_round(&a, 100);
	ck_assert_uint_eq(a.eintr, 1);
	assert_idle(&a, "after an interrupt");
	ck_assert_int_eq(nfqb_queue_close(a.q), 0);
}
END_TEST

static Suite *pollloop_suite(void)
{
	Suite *s = suite_create("pollloop");
	TCase *tc = nfqbt_tcase_netns(s, "pollloop", NFQBT_TCASE_TIMEOUT_LONG);

	tcase_add_test(tc, test_interrupt_idle);
	tcase_add_test(tc, test_tcp_lo);
	tcase_add_test(tc, test_tcp_1500);
	tcase_add_loop_test(tc, test_udp, UDP_BURSTS, UDP_INTERRUPT + 1);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_pollloop", pollloop_suite());
}
