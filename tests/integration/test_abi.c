// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ABI promises, through the shared library:
 *
 * - a program linked against 0.1.0 keeps working: the interfaces that
 *   changed since are still there under their 0.1.0 symbol versions
 *   (called here by those versions, as such a program does), and do what
 *   they did;
 * - structs that can grow: a caller's struct larger than the library's is
 *   taken when the bytes past it are zero, an array of a larger struct is
 *   filled at the caller's stride, a larger output struct is zeroed past
 *   the library's fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <libnfq-batch/pool.h>

#include "harness.h"

#define PORT	5041
#define QNUM	41

/* The 0.1.0 interfaces, by their symbol versions. */
struct verdict_0_1 {
	uint32_t verdict;
	uint32_t flags;
	uint32_t mark;
	uint32_t priority;
	uint16_t queue_num;
	const void *payload;
	uint32_t payload_len;
};

__asm__(".symver old_pkt_timestamp,nfqb_pkt_timestamp@LIBNFQB_0.1");
__asm__(".symver old_verdict_ex,nfqb_verdict_ex@LIBNFQB_0.1");
__asm__(".symver old_kstats_read,nfqb_kstats_read@LIBNFQB_0.1");
__asm__(".symver old_kstats_get,nfqb_kstats_get@LIBNFQB_0.1");
__asm__(".symver old_pool_create,nfqb_pool_create@LIBNFQB_0.2");
bool old_pkt_timestamp(const struct nfqb_packet *p, struct timeval *tv);
int old_verdict_ex(struct nfqb_packet *p, const struct verdict_0_1 *v);
int old_kstats_read(struct nfqb_kstats *out, size_t max);
int old_kstats_get(uint16_t num, struct nfqb_kstats *out);
struct nfqb_pool *old_pool_create(const struct nfqb_pool_config *cfg);

/* --- 0.1.0 callers ------------------------------------------------------- */

START_TEST(test_old_kstats)
{
	struct nfqb_kstats all[4], one, cur;
	struct nfqb_queue *q = nfqbt_queue_open(QNUM);

	ck_assert_int_eq(old_kstats_read(all, 4), 1);
	ck_assert_uint_eq(all[0].queue_num, QNUM);
	ck_assert_int_eq(old_kstats_get(QNUM, &one), 0);
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &cur, sizeof(cur)), 0);
	ck_assert_uint_eq(one.portid, cur.portid);
	ck_assert_uint_eq(one.copy_range, cur.copy_range);
	errno = 0;
	ck_assert_int_eq(old_kstats_get(QNUM + 1, &one), -1);
	ck_assert_int_eq(errno, ENOENT);
	nfqb_queue_close(q);
}
END_TEST

START_TEST(test_old_verdict_and_timestamp)
{
	struct nfqb_packet *vec[2];
	struct verdict_0_1 v = { .verdict = NFQB_ACCEPT, .flags = NFQB_V_MARK,
				 .mark = 0x51 };
	struct nfqbt_rx *rx;
	struct nfqb_queue *q;
	struct timeval tv;
	uint32_t mark = 0;
	uint64_t ns;
	unsigned int i;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 2 });
	nfqbt_send_seqs(PORT, 0, 2);
	nfqbt_recv_n(q, vec, 2);
	for (i = 0; i < 2; i++) {
		bool has = nfqb_pkt_timestamp(vec[i], &ns);

		/* the same answer through both, in their own units */
		ck_assert(old_pkt_timestamp(vec[i], &tv) == has);
		if (has) {
			ck_assert_int_eq((int64_t)tv.tv_sec,
					 (int64_t)(ns / 1000000000u));
			ck_assert_int_eq((int64_t)tv.tv_usec,
					 (int64_t)(ns % 1000000000u / 1000u));
		}
	}
	/* a 0.1.0 struct nfqb_verdict, and a bad one refused as before */
	v.flags |= 1u << 9;
	errno = 0;
	ck_assert_int_eq(old_verdict_ex(vec[0], &v), -1);
	ck_assert_int_eq(errno, EINVAL);
	v.flags &= ~(1u << 9);
	ck_assert_int_eq(old_verdict_ex(vec[0], &v), 0);
	ck_assert_int_eq(nfqb_verdict(vec[1], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 1);
	nfqbt_rx_wait_exact(rx, 0, 2, NULL, NULL);
	ck_assert(nfqbt_rx_mark(rx, 0, &mark));
	ck_assert_uint_eq(mark, 0x51);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

START_TEST(test_old_pool_create)
{
	struct nfqb_pool_config c = {
		.queue_first = QNUM, .queue_count = 1, .cb = nfqbt_pool_accept,
		.buffers = 16,
	};
	struct nfqb_pool *pool;
	struct nfqb_kstats ks;

	errno = 0;
	ck_assert_ptr_null(old_pool_create(NULL));
	ck_assert_int_eq(errno, EINVAL);
	pool = old_pool_create(&c);
	ck_assert_msg(pool != NULL, "nfqb_pool_create@LIBNFQB_0.2: %s",
		      strerror(errno));
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), 0);
	nfqb_pool_destroy(pool);
}
END_TEST

/* --- Structs that can grow ----------------------------------------------- */

/* The struct of a later version: the 1.0 one and a field more. */
struct kstats_later {
	struct nfqb_kstats k;
	uint32_t later;
};

START_TEST(test_grow_kstats)
{
	struct kstats_later all[3], one;
	struct nfqb_queue *q1 = nfqbt_queue_open(QNUM);
	struct nfqb_queue *q2 = nfqbt_queue_open(QNUM + 1);
	unsigned int i;

	memset(all, 0xa5, sizeof(all));
	ck_assert_int_eq(nfqb_kstats_read(&all[0].k, 3, sizeof(all[0])), 2);
	for (i = 0; i < 2; i++) {
		ck_assert(all[i].k.queue_num == QNUM ||
			  all[i].k.queue_num == QNUM + 1);
		ck_assert_uint_eq(all[i].later, 0);	/* zeroed past ours */
	}
	ck_assert_uint_ne(all[0].k.queue_num, all[1].k.queue_num);
	ck_assert_uint_eq(all[2].later, 0xa5a5a5a5);	/* past max: kept */
	memset(&one, 0xa5, sizeof(one));
	ck_assert_int_eq(nfqb_kstats_get(QNUM + 1, &one.k, sizeof(one)), 0);
	ck_assert_uint_eq(one.k.queue_num, QNUM + 1);
	ck_assert_uint_eq(one.later, 0);
	/* a shorter one: the first fields only */
	memset(&one, 0xa5, sizeof(one));
	ck_assert_int_eq(nfqb_kstats_get(QNUM + 1, &one.k, 4), 0);
	ck_assert_uint_eq(one.k.queue_num, QNUM + 1);
	ck_assert_uint_eq(one.k.portid, 0xa5a5a5a5);
	nfqb_queue_close(q1);
	nfqb_queue_close(q2);
}
END_TEST

START_TEST(test_grow_inputs)
{
	struct {
		struct nfqb_pool_config c;
		uint64_t later;
	} pc = { .c = { .queue_first = QNUM, .queue_count = 1,
			.cb = nfqbt_pool_accept, .buffers = 16 } };
	struct {
		struct nfqb_verdict v;
		uint64_t later;
	} v = { .v = { .verdict = NFQB_ACCEPT } };
	struct nfqb_packet *p;
	struct nfqb_pool *pool;
	struct nfqb_queue *q;

	/* a later struct whose new fields are zero: taken */
	pool = nfqb_pool_create(&pc.c, sizeof(pc));
	ck_assert_msg(pool != NULL, "nfqb_pool_create: %s", strerror(errno));
	nfqb_pool_destroy(pool);

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	nfqbt_send_seqs(PORT, 0, 1);
	nfqbt_recv_n(q, &p, 1);
	ck_assert_int_eq(nfqb_verdict_ex(p, &v.v, sizeof(v)), 0);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}
END_TEST

static Suite *abi_suite(void)
{
	Suite *s = suite_create("abi");
	TCase *tc = nfqbt_tcase_netns(s, "abi", NFQBT_TCASE_TIMEOUT);

	tcase_add_test(tc, test_old_kstats);
	tcase_add_test(tc, test_old_verdict_and_timestamp);
	tcase_add_test(tc, test_old_pool_create);
	tcase_add_test(tc, test_grow_kstats);
	tcase_add_test(tc, test_grow_inputs);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_abi", abi_suite());
}
