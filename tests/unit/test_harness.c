// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The test harness's own logic that a test relies on to fail: the
 * expected-counters checks (nfqbt_stats_match(), nfqbt_kstats_match(),
 * tests/integration/harness-expect.c). A check that cannot fail would
 * make every test that uses it pass whatever the library does.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/harness.h"

static struct nfqb_stats stats(void)
{
	struct nfqb_stats st;

	memset(&st, 0, sizeof(st));
	st.packets = 64;
	st.accepted = 32;
	st.dropped = 32;
	st.bytes = 0x10000;
	st.linger_waiting = 7;	/* the last field */
	return st;
}

static bool holds(const char *want)
{
	struct nfqb_stats st = stats();
	char why[256] = "";

	return nfqbt_stats_match(&st, want, why, sizeof(why));
}

/* @want fails, and says so with @reason. */
static void fails(const char *want, const char *reason)
{
	struct nfqb_stats st = stats();
	char why[256] = "";

	ck_assert_msg(!nfqbt_stats_match(&st, want, why, sizeof(why)),
		      "\"%s\" held", want);
	ck_assert_msg(strstr(why, reason), "\"%s\": \"%s\", want \"%s\"",
		      want, why, reason);
}

START_TEST(test_true)
{
	ck_assert(holds("packets=64"));
	ck_assert(holds("packets=64 accepted=32 dropped=32 outstanding=0"));
	ck_assert(holds("  accepted+dropped=64  timeouts+defaults=0 "));
	ck_assert(holds("packets!=63 packets<65 packets<=64 packets>63 "
			"packets>=64"));
	ck_assert(holds("bytes=0x10000 bytes=65536 linger_waiting=7"));
}
END_TEST

START_TEST(test_false)
{
	fails("packets=63", "packets is 64, want =63");
	fails("accepted=32 dropped=31", "dropped is 32, want =31");
	fails("accepted+dropped=63", "accepted+dropped is 64, want =63");
	fails("packets!=64", "want !=64");
	fails("packets<64", "want <64");
	fails("packets<=63", "want <=63");
	fails("packets>64", "want >64");
	fails("packets>=65", "want >=65");
	fails("linger_waiting=0", "linger_waiting is 7");
}
END_TEST

START_TEST(test_unreadable)
{
	fails("", "no check");
	fails("   ", "no check");
	fails("packet=64", "no counter \"packet\"");
	fails("accepted+=32", "no counter \"\"");
	fails("=64", "no counter \"\"");
	fails("packets", "cannot read");
	fails("packets=", "cannot read");
	fails("packets==64", "cannot read the value");
	fails("packets=64x", "cannot read the value");
	fails("packets=-1", "cannot read the value");
	fails("packets=64 dropped", "cannot read");
	fails("queue_total=0", "no counter \"queue_total\"");
}
END_TEST

START_TEST(test_kstats)
{
	struct nfqb_kstats ks;
	char why[256] = "";

	memset(&ks, 0, sizeof(ks));
	ks.queue_num = 7;
	ks.id_sequence = 0xffffffffu;
	ck_assert(nfqbt_kstats_match(&ks, "queue_num=7 queue_total=0 "
				     "id_sequence=4294967295", why,
				     sizeof(why)));
	ck_assert(!nfqbt_kstats_match(&ks, "queue_dropped+queue_total>0",
				      why, sizeof(why)));
	ck_assert_msg(strstr(why, "is 0, want >0"), "%s", why);
	ck_assert(!nfqbt_kstats_match(&ks, "packets=0", why, sizeof(why)));
	ck_assert_msg(strstr(why, "no counter"), "%s", why);
}
END_TEST

static Suite *harness_suite(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = nfqbt_tcase(s, "expect", NFQBT_TCASE_TIMEOUT);

	tcase_add_test(tc, test_true);
	tcase_add_test(tc, test_false);
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_kstats);
	return s;
}

int main(void)
{
	return nfqbt_run(harness_suite());
}
