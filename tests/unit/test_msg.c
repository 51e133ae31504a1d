// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Byte-exact checks of every message the library builds (lib/msg.c). The
 * expected bytes are written out by hand from the uapi layouts:
 *   struct nlmsghdr   { u32 len; u16 type; u16 flags; u32 seq; u32 pid; }
 *                     host order (these tests assume little endian)
 *   struct nfgenmsg   { u8 family; u8 version; be16 res_id; }
 *   struct nlattr     { u16 len; u16 type; } host order, payload padded
 *                     to 4 bytes with zeroes; nla_len excludes the padding
 * nlmsg_type is (NFNL_SUBSYS_QUEUE = 3) << 8 | NFQNL_MSG_*: VERDICT 1,
 * CONFIG 2, VERDICT_BATCH 3. Flags: NLM_F_REQUEST 1, NLM_F_ACK 4.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "testq.h"
#include "parse.h"
#include "plan.h"
#include "txhook.h"
#include "nlbuild.h"
#include "../integration/harness.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "test_msg.c spells host-order fields out as little endian"
#endif

#define SEQ	0x01020304u
#define QNUM	0x1234u
#define FILL	0xAA
#define BUFSZ	512

static uint8_t buf[BUFSZ];
/* What the buffer holds before a builder runs. The byte-exact tests use
 * zeroes, so that they check the content even where the padding is left
 * as it was; test_padding_zeroed checks the padding with a dirty buffer. */
static uint8_t fill;

static void clean_fill(void)
{
	fill = 0;
}

static void prefill(void)
{
	memset(buf, fill, sizeof(buf));
}

static void dump(const char *what, const uint8_t *b, size_t len)
{
	size_t i;

	fprintf(stderr, "%s (%zu):", what, len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 4 ? "" : " ", b[i]);
	fprintf(stderr, "\n");
}

/* The message in buf has length @len: it must be @exp exactly, and nothing
 * after it may have been written. */
static void check_bytes(const char *name, size_t len, const uint8_t *exp,
			size_t explen)
{
	size_t i;

	if (len != explen || memcmp(buf, exp, explen)) {
		dump("expected", exp, explen);
		dump("got     ", buf, len < BUFSZ ? len : BUFSZ);
	}
	ck_assert_msg(len == explen, "%s: length %zu, expected %zu", name, len,
		      explen);
	for (i = 0; i < explen; i++)
		ck_assert_msg(buf[i] == exp[i],
			      "%s: byte %zu is 0x%02x, expected 0x%02x", name,
			      i, buf[i], exp[i]);
	for (i = len; i < len + 16 && i < BUFSZ; i++)
		ck_assert_msg(buf[i] == fill, "%s: wrote past the end (%zu)",
			      name, i);
}

/* --- the byte-exact messages: one row each ------------------------------ */

/* What a row builds: a configuration request, a verdict, a batch verdict */
enum msg_kind { CFG_CMD, CFG_PARAMS, CFG_BIND, CFG_MAXLEN, CFG_FLAGS,
		VERDICT, BATCH };

struct msg_case {
	const char *name;
	enum msg_kind kind;
	uint32_t seq;
	uint16_t qnum;
	/* CFG_CMD: command, pf; CFG_PARAMS, CFG_BIND: copy mode, range;
	 * CFG_MAXLEN: maxlen; CFG_FLAGS: flags, mask; VERDICT: packet id;
	 * BATCH: max id, verdict (a mark if d.flags has NFQB_V_MARK) */
	uint32_t a, b;
	struct nfqb_decision d;	/* VERDICT */
	const uint8_t *exp;	/* the message, byte by byte */
	size_t explen;
};

#define EXP(...)	.exp = (const uint8_t[]){ __VA_ARGS__ }, \
			.explen = sizeof((const uint8_t[]){ __VA_ARGS__ })

/* nlmsghdr of a configuration request of @len bytes (type 0x0302,
 * REQUEST|ACK, seq SEQ, pid 0) + nfgenmsg (AF_UNSPEC, NFNETLINK_V0) of
 * queue QNUM */
#define CHDR(len) \
	(len), 0x00, 0x00, 0x00, 0x02, 0x03, 0x05, 0x00, \
	0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, \
	0x00, 0x00, 0x12, 0x34

/* A verdict for queue 5, seq 7, id 0x0a0b0c0d (it must also fit
 * nfqb_msg_verdict_size()) */
#define VERDICT_OF(...)	.kind = VERDICT, .seq = 7, .qnum = 5, \
			.a = 0x0a0b0c0d, .d = { __VA_ARGS__ }

/* nlmsghdr of a verdict of @len bytes, seq 7, + nfgenmsg of queue 5 +
 * NFQA_VERDICT_HDR (2), len 12: be32 verdict (the 4 bytes @...), be32 id
 * 0x0a0b0c0d */
#define VHDR(len, ...) \
	(len), 0x00, 0x00, 0x00, 0x01, 0x03, 0x01, 0x00, \
	0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, \
	0x00, 0x00, 0x00, 0x05, \
	0x0c, 0x00, 0x02, 0x00, __VA_ARGS__, 0x0a, 0x0b, 0x0c, 0x0d

/* nlmsghdr of a batch verdict of @len bytes (type 0x0303, VERDICT_BATCH,
 * REQUEST, seq 0x99, pid 0) + nfgenmsg of queue 0x0100 */
#define BHDR(len) \
	(len), 0x00, 0x00, 0x00, 0x03, 0x03, 0x01, 0x00, \
	0x99, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, \
	0x00, 0x00, 0x01, 0x00

static const struct msg_case msg_cases[] = {
	/* --- configuration --- */
	{ "bind", CFG_CMD, SEQ, QNUM, NFQNL_CFG_CMD_BIND, 2, EXP(
		CHDR(0x1c),
		/* NFQA_CFG_CMD (1), len 8: command BIND (1), pad, pf 2 */
		0x08, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02) },
	{ "unbind", CFG_CMD, 0xffffffffu, 0xfedc, NFQNL_CFG_CMD_UNBIND, 0, EXP(
		0x1c, 0x00, 0x00, 0x00, 0x02, 0x03, 0x05, 0x00,
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
		/* queue 0xfedc */
		0x00, 0x00, 0xfe, 0xdc,
		/* NFQA_CFG_CMD: UNBIND (2), pad, pf 0 */
		0x08, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00) },
	{ "params", CFG_PARAMS, SEQ, QNUM, NFQB_COPY_PACKET, 0x00012345, EXP(
		CHDR(0x20),
		/* NFQA_CFG_PARAMS (2), len 4 + 5 (packed struct):
		 * be32 copy_range 0x00012345, u8 copy_mode 2, 3 pad bytes */
		0x09, 0x00, 0x02, 0x00, 0x00, 0x01, 0x23, 0x45,
		0x02, 0x00, 0x00, 0x00) },
	{ "params meta", CFG_PARAMS, SEQ, 7, NFQB_COPY_META, 0, EXP(
		0x20, 0x00, 0x00, 0x00, 0x02, 0x03, 0x05, 0x00,
		0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x07,
		/* range 0, mode META (1) */
		0x09, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x00, 0x00) },
	/* BIND and the copy mode in one message: the kernel drops what is
	 * queued to a bound queue before its copy mode is set */
	{ "bind with params", CFG_BIND, SEQ, QNUM, NFQB_COPY_PACKET, 0xffff, EXP(
		CHDR(0x28),
		/* NFQA_CFG_CMD: BIND (1), pad, pf 0 */
		0x08, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
		/* NFQA_CFG_PARAMS: range 0xffff, mode PACKET (2), 3 pad */
		0x09, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff,
		0x02, 0x00, 0x00, 0x00) },
	{ "maxlen", CFG_MAXLEN, SEQ, QNUM, 0x00abcdef, 0, EXP(
		CHDR(0x1c),
		/* NFQA_CFG_QUEUE_MAXLEN (3), be32 0x00abcdef */
		0x08, 0x00, 0x03, 0x00, 0x00, 0xab, 0xcd, 0xef) },
	{ "flags", CFG_FLAGS, SEQ, QNUM, NFQB_F_FAIL_OPEN | NFQB_F_SECCTX, 0x1f,
	  EXP(
		CHDR(0x24),
		/* NFQA_CFG_FLAGS (5): FAIL_OPEN | SECCTX = 0x11 */
		0x08, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x11,
		/* NFQA_CFG_MASK (4): 0x1f */
		0x08, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x1f) },

	/* --- single verdicts --- */
	{ "plain", VERDICT_OF(.verdict = NFQB_ACCEPT), EXP(
		/* verdict ACCEPT (1) */
		VHDR(0x20, 0x00, 0x00, 0x00, 0x01)) },
	/* values present but not flagged must not appear */
	{ "unflagged", VERDICT_OF(
		.verdict = NFQB_DROP, .mark = 9, .priority = 9,
		.payload = (uint8_t[3]){ 1, 2, 3 }, .payload_len = 0), EXP(
		VHDR(0x20, 0x00, 0x00, 0x00, 0x00)) },
	{ "mark", VERDICT_OF(
		.verdict = NFQB_DROP, .flags = NFQB_V_MARK, .mark = 0xdeadbeef),
	  EXP(
		/* verdict DROP (0) */
		VHDR(0x28, 0x00, 0x00, 0x00, 0x00),
		/* NFQA_MARK (3), be32 0xdeadbeef */
		0x08, 0x00, 0x03, 0x00, 0xde, 0xad, 0xbe, 0xef) },
	{ "priority", VERDICT_OF(
		.verdict = NFQB_REPEAT, .flags = NFQB_V_PRIORITY,
		.priority = 0x00060005), EXP(
		/* verdict REPEAT (4) */
		VHDR(0x28, 0x00, 0x00, 0x00, 0x04),
		/* NFQA_PRIORITY (21), be32 0x00060005 */
		0x08, 0x00, 0x15, 0x00, 0x00, 0x06, 0x00, 0x05) },
	{ "payload 5", VERDICT_OF(
		.verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD,
		.payload = (uint8_t[5]){ 0x45, 0x00, 0xff, 0x01, 0x02 },
		.payload_len = 5), EXP(
		VHDR(0x2c, 0x00, 0x00, 0x00, 0x01),
		/* NFQA_PAYLOAD (10), len 4 + 5, 3 zero pad bytes */
		0x09, 0x00, 0x0a, 0x00, 0x45, 0x00, 0xff, 0x01,
		0x02, 0x00, 0x00, 0x00) },
	{ "payload 0", VERDICT_OF(
		.verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD,
		.payload = (uint8_t[1]){ 0x77 }, .payload_len = 0), EXP(
		VHDR(0x24, 0x00, 0x00, 0x00, 0x01),
		/* NFQA_PAYLOAD, no data */
		0x04, 0x00, 0x0a, 0x00) },
	{ "all", VERDICT_OF(
		.verdict = NFQB_ACCEPT,
		.flags = NFQB_V_MARK | NFQB_V_PRIORITY | NFQB_V_PAYLOAD,
		.mark = 0x11223344, .priority = 7,
		.payload = (uint8_t[3]){ 0xa1, 0xa2, 0xa3 }, .payload_len = 3),
	  EXP(
		VHDR(0x38, 0x00, 0x00, 0x00, 0x01),
		/* mark, then priority, then payload (3 bytes, 1 pad) */
		0x08, 0x00, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44,
		0x08, 0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x07, 0x00, 0x0a, 0x00, 0xa1, 0xa2, 0xa3, 0x00) },
	/* the decision carries the full kernel verdict word */
	{ "queue word", VERDICT_OF(.verdict = 0x00058003), EXP(
		VHDR(0x20, 0x00, 0x05, 0x80, 0x03)) },

	/* --- batch verdicts --- */
	{ "batch", BATCH, 0x99, 0x0100, 0x80000001, NFQB_DROP, EXP(
		BHDR(0x20),
		/* NFQA_VERDICT_HDR: DROP, max id 0x80000001 */
		0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x80, 0x00, 0x00, 0x01) },
	{ "batch mark", BATCH, 0x99, 0x0100, 0x100, NFQB_ACCEPT,
	  { .flags = NFQB_V_MARK, .mark = 0x42 }, EXP(
		BHDR(0x28),
		/* ACCEPT, max id 0x00000100 */
		0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x01, 0x00,
		/* NFQA_MARK 0x00000042 */
		0x08, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x42) },
};

#define NMSG	(sizeof(msg_cases) / sizeof(msg_cases[0]))

/* Row @_i of msg_cases: built into buf (zeroes before), then checked
 * byte by byte (check_bytes) */
START_TEST(test_msg_bytes)
{
	const struct msg_case *c = &msg_cases[_i];
	size_t len = 0;

	prefill();
	switch (c->kind) {
	case CFG_CMD:
		len = nfqb_msg_config_cmd(buf, c->seq, c->qnum, c->a, c->b);
		break;
	case CFG_PARAMS:
		len = nfqb_msg_config_params(buf, c->seq, c->qnum, c->a, c->b);
		break;
	case CFG_BIND:
		len = nfqb_msg_config_bind(buf, c->seq, c->qnum, c->a, c->b);
		break;
	case CFG_MAXLEN:
		len = nfqb_msg_config_maxlen(buf, c->seq, c->qnum, c->a);
		break;
	case CFG_FLAGS:
		len = nfqb_msg_config_flags(buf, c->seq, c->qnum, c->a, c->b);
		break;
	case VERDICT:
		len = nfqb_msg_verdict(buf, c->seq, c->qnum, c->a, &c->d);
		ck_assert_uint_le(len, nfqb_msg_verdict_size(c->d.payload_len));
		break;
	case BATCH:
		len = nfqb_msg_verdict_batch(buf, c->seq, c->qnum, c->a, c->b,
					     c->d.flags & NFQB_V_MARK ?
					     &c->d.mark : NULL);
		ck_assert_uint_le(len, nfqb_msg_verdict_size(0));
		break;
	}
	check_bytes(c->name, len, c->exp, c->explen);
}
END_TEST

/* --- nfqb_msg_verdict_size() ------------------------------------------- */

START_TEST(test_verdict_size_bound)
{
	static uint8_t pl[300];
	uint32_t plen;

	memset(pl, 0x5c, sizeof(pl));
	fill = FILL;
	for (plen = 0; plen < sizeof(pl); plen++) {
		struct nfqb_decision d = {
			.verdict = 0xffff8003,
			.flags = NFQB_V_MARK | NFQB_V_PRIORITY | NFQB_V_PAYLOAD,
			.mark = 1, .priority = 2,
			.payload = pl, .payload_len = plen,
		};
		size_t bound = nfqb_msg_verdict_size(plen);
		/* exact size: header 16 + nfgenmsg 4 + verdict hdr 12 +
		 * mark 8 + priority 8 + payload attr header 4 + plen padded */
		size_t exact = 52 + ((plen + 3) & ~3u);
		size_t len, i;

		ck_assert_uint_le(bound + 16, BUFSZ);
		prefill();
		len = nfqb_msg_verdict(buf, 1, 2, 3, &d);
		ck_assert_uint_eq(len, exact);
		ck_assert_uint_le(len, bound);
		ck_assert_uint_eq(len % 4, 0);
		for (i = len; i < bound + 16; i++)
			ck_assert_msg(buf[i] == FILL,
				      "plen %u: byte %zu written", plen, i);
		/* the payload bytes themselves */
		ck_assert_int_eq(memcmp(buf + 52, pl, plen), 0);
		/* nla_len of the payload excludes the padding */
		ck_assert_uint_eq(buf[48] | buf[49] << 8, 4 + plen);
		ck_assert_uint_eq(buf[50] | buf[51] << 8, NFQA_PAYLOAD);
	}
}
END_TEST

/* --- padding ------------------------------------------------------------ */

/* Attribute padding must be zero whatever the buffer held before (the
 * kernel's nla_put() zeroes it; so must we, or stale bytes of earlier
 * messages, or of the stack, go out with every message). */
static void check_zero(const char *name, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		ck_assert_msg(buf[i] == 0, "%s: pad byte %zu is 0x%02x", name,
			      i, buf[i]);
}

START_TEST(test_padding_zeroed)
{
	static uint8_t pl[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t plen;
	size_t len;

	fill = FILL;
	prefill();
	len = nfqb_msg_config_params(buf, SEQ, QNUM, NFQB_COPY_PACKET, 1);
	ck_assert_uint_eq(len, 32);
	check_zero("params", 29, 32);
	for (plen = 1; plen < 8; plen++) {
		struct nfqb_decision d = {
			.verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD,
			.payload = pl, .payload_len = plen,
		};

		prefill();
		len = nfqb_msg_verdict(buf, 1, 2, 3, &d);
		ck_assert_uint_eq(len, 36 + ((plen + 3) & ~3u));
		check_zero("payload", 36 + plen, len);
	}
}
END_TEST

/* --- through a queue: what nfqb_verdict_ex() makes of queue-to-N -------- */

struct capture {
	unsigned int n;
	size_t len[8];
	uint8_t data[8][1024];
};

static int capture_hook(struct nfqb_queue *q, const void *b, size_t len,
			void *data)
{
	struct capture *c = data;

	(void)q;
	ck_assert_uint_lt(c->n, 8);
	ck_assert_uint_le(len, sizeof(c->data[0]));
	memcpy(c->data[c->n], b, len);
	c->len[c->n++] = len;
	return (int)len;
}

/* One verdict for packet 42 of queue 9 sent as @exp_word. */
static void queue_to(uint16_t target, uint32_t flags, uint32_t exp_word)
{
	uint8_t exp[] = {
		0x20, 0x00, 0x00, 0x00, 0x01, 0x03, 0x01, 0x00,
		0x00, 0x00, 0x00, 0x00, /* seq: not checked */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x09,
		0x0c, 0x00, 0x02, 0x00,
		exp_word >> 24, exp_word >> 16, exp_word >> 8, exp_word,
		0x00, 0x00, 0x00, 0x2a,
	};
	struct nfqb_verdict v = {
		.verdict = NFQB_QUEUE, .flags = flags, .queue_num = target,
	};
	struct capture *cap = calloc(1, sizeof(*cap));
	struct nfqb_queue *q = nfqbt_queue_detached(9, 16);
	struct nfqb_packet *p;
	struct nlb b;
	size_t i;

	ck_assert_ptr_nonnull(cap);
	ck_assert_ptr_nonnull(q);
	nfqbt_set_tx_hook(q, capture_hook, cap);
	nlb_simple_packet(&b, 9, 42, 20);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	ck_assert_uint_eq(nfqb_pkt_id(p), 42);
	ck_assert_int_eq(nfqb_verdict_ex(p, &v, sizeof(v)), 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	ck_assert_uint_eq(cap->n, 1);
	ck_assert_uint_eq(cap->len[0], sizeof(exp));
	for (i = 0; i < sizeof(exp); i++) {
		if (i >= 8 && i < 12)
			continue;
		ck_assert_msg(cap->data[0][i] == exp[i],
			      "byte %zu: 0x%02x, expected 0x%02x", i,
			      cap->data[0][i], exp[i]);
	}
	nfqbt_assert_stats(q, "requeued=1 verdict_msgs=1 batch_msgs=0");
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	ck_assert_uint_eq(cap->n, 1);	/* nothing more at close */
	free(cap);
}

START_TEST(test_queue_to_bypass)
{
	queue_to(5, NFQB_V_BYPASS, 0x00058003);
}
END_TEST

START_TEST(test_queue_to_plain)
{
	queue_to(5, 0, 0x00050003);
}
END_TEST

START_TEST(test_queue_to_max)
{
	queue_to(0xffff, NFQB_V_BYPASS, 0xffff8003);
}
END_TEST

START_TEST(test_bypass_needs_queue)
{
	struct nfqb_verdict v = {
		.verdict = NFQB_ACCEPT, .flags = NFQB_V_BYPASS,
	};
	struct nfqb_queue *q = nfqbt_queue_detached(9, 16);
	struct capture *cap = calloc(1, sizeof(*cap));
	struct nfqb_packet *p;
	struct nlb b;

	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(cap);
	nfqbt_set_tx_hook(q, capture_hook, cap);	/* a detached queue has no socket */
	nlb_simple_packet(&b, 9, 1, 0);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	errno = 0;
	ck_assert_int_eq(nfqb_verdict_ex(p, &v, sizeof(v)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	ck_assert_uint_eq(cap->n, 1);
	free(cap);
}
END_TEST

/* --- the largest payload a verdict can carry ----------------------------- */

/* nla_len is 16 bits and counts its 4-byte header: 65531 bytes at most. */
struct big_seen {
	unsigned int n;
	size_t len;
	uint32_t nlmsg_len;
	uint16_t nla_len, nla_type;
};

static int big_hook(struct nfqb_queue *q, const void *b, size_t len,
		    void *data)
{
	struct big_seen *s = data;
	const uint8_t *p = b;

	(void)q;
	s->n++;
	s->len = len;
	if (len < 36)
		return (int)len;	/* a plain verdict: no payload */
	memcpy(&s->nlmsg_len, p, 4);
	memcpy(&s->nla_len, p + 32, 2);
	memcpy(&s->nla_type, p + 34, 2);
	return (int)len;
}

static void big_payload(uint32_t plen, bool ok)
{
	static uint8_t pl[65536];
	struct nfqb_verdict v = {
		.verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD,
		.payload = pl, .payload_len = plen,
	};
	struct big_seen seen = { 0 };
	struct nfqb_queue *q = nfqbt_queue_detached(1, 4);
	struct nfqb_packet *p;
	struct nlb b;

	ck_assert_ptr_nonnull(q);
	nfqbt_set_tx_hook(q, big_hook, &seen);
	nlb_simple_packet(&b, 1, 1, 0);
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), 0);
	ck_assert_uint_eq(nfqbt_serve(q, &p, 1), 1);
	errno = 0;
	if (!ok) {
		ck_assert_msg(nfqb_verdict_ex(p, &v, sizeof(v)) == -1 && errno == EMSGSIZE,
			      "payload of %u bytes accepted: nla_len cannot "
			      "hold %u", plen, plen + 4);
		ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_uint_eq(seen.n, 1);
		ck_assert_uint_eq(seen.len, 32);	/* sent without payload */
	} else {
		ck_assert_int_eq(nfqb_verdict_ex(p, &v, sizeof(v)), 0);
		ck_assert_int_ge(nfqb_flush(q), 0);
		ck_assert_uint_eq(seen.n, 1);
		ck_assert_uint_eq(seen.nla_len, plen + 4);
		ck_assert_uint_eq(seen.nla_type, NFQA_PAYLOAD);
		ck_assert_uint_eq(seen.nlmsg_len, 32 + ((plen + 4 + 3) & ~3u));
		ck_assert_uint_eq(seen.len, seen.nlmsg_len);
	}
	ck_assert_int_eq(nfqb_queue_close(q), 0);
}

START_TEST(test_payload_max)
{
	big_payload(65531, true);
}
END_TEST

START_TEST(test_payload_too_big)
{
	big_payload(65532 + (uint32_t)_i, false);
}
END_TEST

static Suite *msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *tc = nfqbt_tcase_tests(s, "bytes", 0, (const TTest *[]){ NULL });

	tcase_add_checked_fixture(tc, clean_fill, NULL);
	tcase_add_loop_test(tc, test_msg_bytes, 0, NMSG);
	nfqbt_tcase_tests(s, "verdict", 0, (const TTest *[]){
		test_verdict_size_bound, NULL });
	tc = nfqbt_tcase_tests(s, "payload_limit", 0, (const TTest *[]){
		test_payload_max, NULL });
	tcase_add_loop_test(tc, test_payload_too_big, 0, 4);
	nfqbt_tcase_tests(s, "padding", 0, (const TTest *[]){
		test_padding_zeroed, NULL });
	nfqbt_tcase_tests(s, "queue_to", 0, (const TTest *[]){
		test_queue_to_bypass, test_queue_to_plain, test_queue_to_max,
		test_bypass_needs_queue, NULL });
	return s;
}

int main(void)
{
	return nfqbt_run(msg_suite());
}
