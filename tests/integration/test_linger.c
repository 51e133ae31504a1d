// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The adaptive linger against the real kernel: a UDP stream through the
 * queue, a consumer that accepts everything with nfqb_recv(). The test
 * seam's sleep hook looks at the queue every time the library pauses:
 *
 *  - adaptive (the default): no decision is ever held across a pause (the
 *    flow it delays may be waiting on our verdicts, as TCP does);
 *  - fixed (nfqb_queue_set_linger(q, 200)): decisions are held for bigger
 *    batches, as before; this case shows the probe can see it.
 *
 * Every packet must arrive, whatever the mode. Links the internal library
 * (the seam is not exported).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "internal.h"

#define PORT	5300
#define QNUM	0
#define COUNT	3000u

static struct nfqb_queue *watched;
static unsigned int pauses, pauses_holding;

static int watch_sleep(void *data, uint64_t ns)
{
	struct timespec ts = { .tv_nsec = (long)ns };
	struct nfqb_queue *q = watched;

	(void)data;
	pauses++;
	if (atomic_load(&q->posted) != q->posted_seen)
		pauses_holding++;
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
	q = nfqb_queue_open(QNUM);
	ck_assert_ptr_nonnull(q);
	if (fixed)
		ck_assert_int_eq(nfqb_queue_set_linger(q, 200), 0);
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
	if (fixed)
		ck_assert_msg(pauses_holding > 0,
			      "a fixed linger holds decisions for bigger batches");
	else
		ck_assert_msg(pauses_holding == 0,
			      "%u adaptive pauses held decisions back",
			      pauses_holding);
}

START_TEST(test_linger_adaptive_sends_first)
{
	stream(false);
}
END_TEST

START_TEST(test_linger_fixed_holds)
{
	stream(true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("linger");
	TCase *tc = tcase_create("stream");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, NFQBT_TCASE_TIMEOUT);
	tcase_add_test(tc, test_linger_adaptive_sends_first);
	tcase_add_test(tc, test_linger_fixed_holds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
