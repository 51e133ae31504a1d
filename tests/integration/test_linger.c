// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The adaptive linger against the real kernel: a UDP stream through the
 * queue, a consumer that accepts everything with nfqb_recv(). The test
 * seam's sleep hook looks at the queue every time the library pauses:
 *
 *  - adaptive (the default) and fixed (nfqb_queue_set_linger(q, 200)):
 *    a bulk stream, where no flow waits on our verdicts, has its
 *    decisions held across the pauses for bigger batches (one verdict
 *    message for the packets of a pause and those before it; sending
 *    them before every pause cost twice 0.1.0's messages per packet).
 *    Where a flow waits on us (TCP below) there is no pause at all.
 *
 * Every packet must arrive, whatever the mode.
 *
 * TCP through the queue (a bulk transfer over loopback at MTU 1500): its
 * sender waits on our verdicts (acknowledgements), so the adaptive linger
 * never pauses and the flow shows as waiting; with the defaults GSO
 * packets come whole (bigger than the MTU, nfqb_pkt_is_gso()), with
 * NFQB_F_GSO off the kernel segments them first. Every byte must arrive.
 *
 * Links the internal library (the seam is not exported).
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnfq-batch/pool.h>

#include "harness.h"
#include "queue-int.h"
#include "seam.h"

#define PORT	5300
#define QNUM	0
#define COUNT	3000u

static struct nfqb_queue *watched;
static unsigned int pauses, pauses_holding;
/* fail every fail_every-th pause with EINTR (0: none), as a signal would;
 * how many failed */
static unsigned int fail_every, pauses_failed;

static int watch_sleep(void *data, uint64_t ns)
{
	struct timespec ts = { .tv_nsec = (long)ns };
	struct nfqb_queue *q = watched;

	(void)data;
	pauses++;
	if (nfqb_tx_posted(&q->tx_in) != q->tx.posted_seen)
		pauses_holding++;
	if (fail_every && pauses % fail_every == 0) {
		pauses_failed++;
		errno = EINTR;
		return -1;
	}
	return nanosleep(&ts, NULL);
}

static void stream(bool fixed)
{
	struct nfqb_seam seam = { .sleep_ns = watch_sleep };
	struct nfqbt_rx_opts ro = { .expected = COUNT, .timeout_ms = 25000 };
	struct nfqb_packet *vec[64];
	struct nfqbt_tx_opts to = {
		.port = PORT, .count = COUNT, .window = 64, .timeout_ms = 20000,
	};
	struct nfqbt_rx *rx;
	struct nfqbt_tx *tx;
	struct nfqb_queue *q;
	unsigned int done = 0;
	uint64_t end;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	rx = nfqbt_rx_start(PORT, &ro);
	q = nfqbt_queue_open(QNUM);
	if (fixed)
		ck_assert_int_eq(nfqb_queue_set_linger(q, 200), 0);
	/* a batch limit above one read (and the sender's window): the
	 * decisions of a read wait for a bigger batch across the pause.
	 * At 64 (the default, one full read) a full read flushed before
	 * its pause, and only the rarer short reads held anything: a
	 * loaded machine, whose reads are fuller, saw none held in 46 */
	ck_assert_int_eq(nfqb_queue_set_batch_limit(q, 256), 0);
	watched = q;
	pauses = pauses_holding = 0;
	nfqb_seam_install(&seam);
	to.progress = nfqbt_rx_total_ptr(rx);
	tx = nfqbt_tx_start(&to);
	end = nfqbt_now_ms() + 20000;
	while (done < COUNT && nfqbt_now_ms() < end) {
		int i, n = nfqb_recv(q, vec, 64);

		if (n < 0) {
			ck_assert_msg(errno == EINTR || errno == ENOBUFS,
				      "nfqb_recv: %s", strerror(errno));
			continue;
		}
		for (i = 0; i < n; i++)
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		done += (unsigned int)n;
	}
	ck_assert_uint_eq(nfqbt_tx_join(tx), COUNT);
	ck_assert_uint_eq(done, COUNT);
	ck_assert_int_ge(nfqb_flush(q), 0);
	nfqbt_rx_wait(rx);
	nfqb_seam_install(NULL);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	ck_assert_uint_eq(nfqbt_rx_total(rx), COUNT);
	nfqbt_rx_free(rx);
	fprintf(stderr, "linger %s: %u pauses, %u of them holding decisions\n",
		fixed ? "fixed 200 us" : "adaptive", pauses, pauses_holding);
	ck_assert_msg(pauses > 0, "the stream never made the library pause");
	ck_assert_msg(pauses_holding > 0,
		      "the %s linger sent every decision before its pauses "
		      "(%u pauses): no bigger batches",
		      fixed ? "fixed" : "adaptive", pauses);
}

START_TEST(test_linger_adaptive_holds)
{
	stream(false);
}
END_TEST

START_TEST(test_linger_fixed_holds)
{
	stream(true);
}
END_TEST

/* The adaptive pause gathers no more than fits in half the socket's
 * receive buffer or a quarter of the queue (test_plan's test_linger_room),
 * and no more decisions are held than a quarter of the queue: the library
 * knows the buffer the kernel gave the socket, at open and after
 * nfqb_queue_set_rcvbuf() (which the kernel doubles), and the queue's
 * length (the kernel's default, 1024, until nfqb_queue_set_maxlen()). */
START_TEST(test_linger_knows_room)
{
	struct nfqb_queue *q;
	socklen_t len = sizeof(int);
	int v = 0;

	nfqbt_netns_enter();
	q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(getsockopt(q->sk.fd, SOL_SOCKET, SO_RCVBUF, &v, &len),
			 0);
	ck_assert_int_gt(v, 0);
	ck_assert_uint_eq(q->set.rcvbuf, (unsigned int)v);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(q, 32768), 0);
	ck_assert_uint_eq(q->set.rcvbuf, 65536);
	ck_assert_uint_eq(q->set.maxlen, 1024);
	ck_assert_int_eq(nfqb_queue_set_maxlen(q, 128), 0);
	ck_assert_uint_eq(q->set.maxlen, 128);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

/* A pause that fails (EINTR, as a signal would end it): nfqb_recv() says
 * so, and the next call goes on; every packet still arrives once. */
START_TEST(test_linger_pause_fails)
{
	fail_every = 2;
	pauses_failed = 0;
	stream(false);
	fprintf(stderr, "linger: %u pauses failed\n", pauses_failed);
	ck_assert_uint_gt(pauses_failed, 0);
	fail_every = 0;
}
END_TEST

/* --- TCP ----------------------------------------------------------------- */

#define TCP_PORT	5301
#define TCP_BYTES	(8u << 20)

/* A namespace with lo at MTU 1500 and TCP to TCP_PORT queued. */
static void tcp_netns(void)
{
	nfqbt_netns_enter();
	ck_assert_int_eq(system("ip link set lo mtu 1500"), 0);
	nfqbt_iptables("-A INPUT -p tcp --dport %u -j NFQUEUE --queue-num %u",
		       TCP_PORT, QNUM);
}

static void tcp_bulk(bool gso)
{
	struct nfqb_seam seam = { .sleep_ns = watch_sleep };
	struct nfqbt_tcp sink;
	unsigned int packets = 0, big = 0, marked_gso = 0;
	struct nfqb_packet *vec[64];
	struct nfqb_stats st;
	struct nfqb_queue *q;
	uint64_t end;

	tcp_netns();
	q = nfqbt_queue_open(QNUM);
	if (!gso)
		ck_assert_int_eq(nfqb_queue_set_flags(q, 0, NFQB_F_GSO), 0);
	watched = q;
	pauses = pauses_holding = 0;
	nfqb_seam_install(&seam);
	nfqbt_tcp_start(&sink, TCP_PORT, TCP_BYTES, q);
	end = nfqbt_now_ms() + 20000;
	/* blocking receives, as a daemon's loop; the sink interrupts the
	 * last one when it has everything (FIN included) */
	while (!atomic_load(&sink.done) && nfqbt_now_ms() < end) {
		int i, n = nfqb_recv(q, vec, 64);

		if (n < 0) {
			ck_assert_msg(errno == EINTR || errno == ENOBUFS,
				      "nfqb_recv: %s", strerror(errno));
			continue;
		}
		for (i = 0; i < n; i++) {
			uint32_t len = 0;

			nfqb_pkt_payload(vec[i], &len);
			packets++;
			big += len > 1500;
			marked_gso += nfqb_pkt_is_gso(vec[i]);
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		}
	}
	ck_assert_msg(atomic_load(&sink.done), "the transfer did not end");
	nfqbt_tcp_join(&sink);
	nfqb_seam_install(NULL);
	st = nfqbt_queue_stats(q);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	fprintf(stderr, "tcp, gso %s: %u packets, %u bigger than the MTU, %u "
		"marked GSO, %u pauses, %llu reads showed a waiting flow\n",
		gso ? "on" : "off", packets, big, marked_gso, pauses,
		(unsigned long long)st.linger_waiting);
	ck_assert_uint_eq(sink.got, TCP_BYTES);
	ck_assert_uint_eq(pauses, 0);
	ck_assert_uint_eq(st.linger_pauses, 0);
	ck_assert_uint_gt(st.linger_waiting, 0);
	if (gso) {
		ck_assert_uint_gt(big, 0);
		ck_assert_uint_gt(marked_gso, 0);
	} else {
		ck_assert_uint_eq(big, 0);
		ck_assert_uint_eq(marked_gso, 0);
	}
}

/* The pool: its queues have GSO on too, and queue_flags_off turns it off. */
static _Atomic unsigned int pool_big, pool_gso, pool_packets;

static int pool_count(struct nfqb_packet *p, void *policy, void *data,
		      struct nfqb_verdict *v)
{
	uint32_t len = 0;

	(void)policy;
	(void)data;
	(void)v;	/* preset: accept */
	nfqb_pkt_payload(p, &len);
	atomic_fetch_add(&pool_packets, 1);
	if (len > 1500)
		atomic_fetch_add(&pool_big, 1);
	if (nfqb_pkt_is_gso(p))
		atomic_fetch_add(&pool_gso, 1);
	return NFQB_POOL_VERDICT;
}

static void tcp_bulk_pool(bool gso)
{
	struct nfqb_pool_config cfg = {
		.queue_first = QNUM, .queue_count = 1,
		.mode = NFQB_POOL_QUEUE_PER_WORKER, .cb = pool_count,
		.queue_flags_off = gso ? 0 : NFQB_F_GSO,
	};
	struct nfqbt_tcp sink;
	struct nfqb_pool *pool;
	uint64_t end;

	tcp_netns();
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	ck_assert_int_eq(nfqb_pool_start(pool), 0);
	nfqbt_tcp_start(&sink, TCP_PORT, TCP_BYTES, NULL);
	for (end = nfqbt_now_ms() + 20000;
	     !atomic_load(&sink.done) && nfqbt_now_ms() < end;)
		nfqbt_sleep_ms(5);
	ck_assert_msg(atomic_load(&sink.done), "the transfer did not end");
	nfqbt_tcp_join(&sink);
	nfqb_pool_stop(pool);
	ck_assert_int_eq(nfqb_pool_wait(pool), 0);
	nfqb_pool_destroy(pool);
	fprintf(stderr, "pool tcp, gso %s: %u packets, %u bigger than the MTU,"
		" %u marked GSO\n", gso ? "on" : "off", pool_packets, pool_big,
		pool_gso);
	ck_assert_uint_eq(sink.got, TCP_BYTES);
	if (gso) {
		ck_assert_uint_gt(pool_big, 0);
		ck_assert_uint_gt(pool_gso, 0);
	} else {
		ck_assert_uint_gt(pool_packets, 0);
		ck_assert_uint_eq(pool_big, 0);
		ck_assert_uint_eq(pool_gso, 0);
	}
}

START_TEST(test_tcp_pool_gso)
{
	tcp_bulk_pool(true);
}
END_TEST

START_TEST(test_tcp_pool_gso_off)
{
	tcp_bulk_pool(false);
}
END_TEST

START_TEST(test_tcp_gso_default)
{
	tcp_bulk(true);
}
END_TEST

START_TEST(test_tcp_gso_off)
{
	tcp_bulk(false);
}
END_TEST

static Suite *linger_suite(void)
{
	Suite *s = suite_create("linger");

	nfqbt_tcase_tests(s, "stream", NFQBT_TCASE_TIMEOUT, (const TTest *[]){
		test_linger_adaptive_holds, test_linger_fixed_holds,
		test_linger_pause_fails, test_linger_knows_room, NULL });
	nfqbt_tcase_tests(s, "tcp", NFQBT_TCASE_TIMEOUT, (const TTest *[]){
		test_tcp_gso_default, test_tcp_gso_off, test_tcp_pool_gso,
		test_tcp_pool_gso_off, NULL });
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_linger", linger_suite());
}
