// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parser (lib/parse.c) and the receive path (lib/recv.c) on crafted
 * NFQNL_MSG_PACKET messages: every attribute read back exactly, absent ones
 * absent, malformed messages rejected without reading out of bounds (each
 * message sits in an exact-size malloc, so ASan sees any overread), and
 * the datagram checks: foreign sender, MSG_TRUNC, NLMSG_ERROR, several
 * messages per datagram, ids going backwards.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "testq.h"
#include "parse.h"
#include "plan.h"
#include "txhook.h"
#include "nlbuild.h"
#include "../integration/harness.h"

#define QN		7
#define NESTED		0x8000	/* NLA_F_NESTED, as kernels >= 5.2 send */

/* NFQA_* numbers from the uapi enum, spelled out so a test does not lean
 * on the header the library itself was built with. */
enum {
	A_PACKET_HDR = 1, A_MARK = 3, A_TIMESTAMP = 4, A_INDEV = 5,
	A_OUTDEV = 6, A_PHYSINDEV = 7, A_PHYSOUTDEV = 8, A_HWADDR = 9,
	A_PAYLOAD = 10, A_CT = 11, A_CT_INFO = 12, A_CAP_LEN = 13,
	A_SKB_INFO = 14, A_EXP = 15, A_UID = 16, A_GID = 17, A_SECCTX = 18,
	A_VLAN = 19, A_L2HDR = 20, A_PRIORITY = 21, A_CGROUP_CLASSID = 22,
};
enum { V_PROTO = 1, V_TCI = 2 };
enum { CTA_STATUS_ = 3, CTA_ID_ = 12 };

/* --- helpers ------------------------------------------------------------ */

/* A message parsed directly: its exact-size copy and the packet view. */
struct parsed {
	void *mem;
	struct nfqb_packet p;
};

static int parse_len(struct parsed *ps, const struct nlb *b, size_t len)
{
	ps->mem = nlb_dup(b, len);
	memset(&ps->p, 0, sizeof(ps->p));
	/* a live descriptor of generation 0: its handle is its address */
	atomic_store(&ps->p.sg, NFQB_SG(0, NFQB_PS_PENDING));
	return nfqb_parse_packet(&ps->p, ps->mem);
}

static int parse(struct parsed *ps, const struct nlb *b)
{
	return parse_len(ps, b, b->len);
}

static void parsed_free(struct parsed *ps)
{
	free(ps->mem);
	ps->mem = NULL;
}

/* What the queue sent, through its tx_hook. */
struct capture {
	unsigned int n;
	size_t len[16];
	uint8_t data[16][2048];
};

static int capture_hook(struct nfqb_queue *q, const void *buf, size_t len,
			void *data)
{
	struct capture *c = data;

	(void)q;
	ck_assert_uint_lt(c->n, 16);
	ck_assert_uint_le(len, sizeof(c->data[0]));
	memcpy(c->data[c->n], buf, len);
	c->len[c->n++] = len;
	return (int)len;
}

/* A detached queue (testq.h) whose sends are captured; a message to feed
 * it (b) and room for what it serves (vec). */
struct rxq {
	struct nfqb_queue *q;
	struct capture *cap;
	struct nlb b;
	struct nfqb_packet *vec[4];
};

static struct rxq rxq_open(uint16_t num)
{
	struct rxq r;

	r.cap = calloc(1, sizeof(*r.cap));
	ck_assert_ptr_nonnull(r.cap);
	r.q = nfqbt_queue_detached(num, 16);
	ck_assert_ptr_nonnull(r.q);
	nfqbt_set_tx_hook(r.q, capture_hook, r.cap);
	return r;
}

/* Close the queue; returns how many datagrams it sent in its life. */
static unsigned int rxq_close(struct rxq *r)
{
	unsigned int n;

	ck_assert_int_eq(nfqb_queue_close(r->q), 0);
	n = r->cap->n;
	free(r->cap);
	r->cap = NULL;
	return n;
}

/* Inject @len bytes of @b as one datagram, exactly sized. */
static void inject(struct nfqb_queue *q, const struct nlb *b, size_t len,
		   uint32_t pid, int flags)
{
	void *m = nlb_dup(b, len);

	ck_assert_int_eq(nfqbt_rx_inject(q, m, len, pid, flags), 0);
	free(m);
}

/* The simple packet @id (nlb_simple_packet(), @plen payload bytes) in
 * r->b, injected from the kernel. */
static void rx_simple(struct rxq *r, uint32_t id, size_t plen)
{
	nlb_simple_packet(&r->b, QN, id, plen);
	inject(r->q, &r->b, r->b.len, 0, 0);
}

/* Inject r->b from @pid with recvmsg flags @flags; returns how many
 * packets the queue serves then, into r->vec. */
static unsigned int rx_serve(struct rxq *r, uint32_t pid, int flags)
{
	inject(r->q, &r->b, r->b.len, pid, flags);
	return nfqbt_serve(r->q, r->vec, 4);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The one datagram @c holds must be a single NFQNL_MSG_VERDICT for @id
 * of queue @num with verdict @verdict and nothing else. */
static void check_sent_verdict(const struct capture *c, unsigned int i,
			       uint16_t num, uint32_t id, uint32_t verdict)
{
	const uint8_t *d = c->data[i];

	ck_assert_uint_gt(c->n, i);
	ck_assert_uint_eq(c->len[i], 32);
	ck_assert_uint_eq(get32(d), 32);			/* nlmsg_len */
	ck_assert_uint_eq(get16(d + 4), (3 << 8) | 1);		/* VERDICT */
	ck_assert_uint_eq(get16(d + 6), 1);			/* REQUEST */
	ck_assert_uint_eq(get32(d + 12), 0);			/* pid */
	ck_assert_uint_eq(d[16], 0);
	ck_assert_uint_eq(d[17], 0);
	ck_assert_uint_eq(ntohs(get16(d + 18)), num);
	ck_assert_uint_eq(get16(d + 20), 12);			/* nla_len */
	ck_assert_uint_eq(get16(d + 22), 2);			/* VERDICT_HDR */
	ck_assert_uint_eq(ntohl(get32(d + 24)), verdict);
	ck_assert_uint_eq(ntohl(get32(d + 28)), id);
}

/* --- (a) every attribute ------------------------------------------------ */

#define F_ID		0x11223344u
#define F_MARK		0xcafe0001u
#define F_SEC		1700000000ull
#define F_USEC		654321ull
#define F_CTINFO	3u
#define F_CAPLEN	1500u
#define F_SKBINFO	7u	/* CSUMNOTREADY | GSO | CSUM_NOTVERIFIED */
#define F_UID		1000u
#define F_GID		1001u
#define F_PRIO		0x00010007u
#define F_CLASSID	0x00100001u
#define F_CTID		0x00abcdefu

static const uint8_t f_hw[8] = { 0x02, 0x00, 0x5e, 0xaa, 0xbb, 0xcc };
static const char f_secctx[] = "system_u:system_r:kernel_t:s0";
static const uint8_t f_l2[14] = {
	0x02, 0x00, 0x5e, 0x00, 0x00, 0x01, 0x02, 0x00, 0x5e, 0xaa, 0xbb, 0xcc,
	0x08, 0x00,
};
static uint8_t f_payload[29];
/* the bytes of the NFQA_CT payload, recorded while building */
static size_t f_ct_off, f_ct_len;

static void build_full(struct nlb *b, uint8_t family, uint8_t hook)
{
	uint8_t ts[16], hw[12];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(f_payload); i++)
		f_payload[i] = (uint8_t)(0x45 + 3 * i);
	nlb_init_packet(b, family, QN);
	nlb_pkt_hdr(b, F_ID, 0x0800, hook);
	nlb_attr_be32(b, A_MARK, F_MARK);
	v = htobe64(F_SEC);
	memcpy(ts, &v, 8);
	v = htobe64(F_USEC);
	memcpy(ts + 8, &v, 8);
	nlb_attr(b, A_TIMESTAMP, ts, sizeof(ts));
	nlb_attr_be32(b, A_INDEV, 3);
	nlb_attr_be32(b, A_OUTDEV, 4);
	nlb_attr_be32(b, A_PHYSINDEV, 5);
	nlb_attr_be32(b, A_PHYSOUTDEV, 6);
	/* struct nfqnl_msg_packet_hw: be16 len, u16 pad, u8 addr[8] */
	memset(hw, 0, sizeof(hw));
	hw[1] = 6;
	memcpy(hw + 4, f_hw, 8);
	nlb_attr(b, A_HWADDR, hw, sizeof(hw));
	nlb_attr(b, A_PAYLOAD, f_payload, sizeof(f_payload));
	nlb_nest_begin(b, A_CT | NESTED);
	f_ct_off = b->len;
	nlb_attr_be32(b, CTA_STATUS_, 0x188);
	nlb_attr_be32(b, CTA_ID_, F_CTID);
	f_ct_len = b->len - f_ct_off;
	nlb_nest_end(b);
	nlb_attr_be32(b, A_CT_INFO, F_CTINFO);
	nlb_attr_be32(b, A_CAP_LEN, F_CAPLEN);
	nlb_attr_be32(b, A_SKB_INFO, F_SKBINFO);
	nlb_nest_begin(b, A_EXP | NESTED);
	nlb_attr_be32(b, CTA_ID_, 99);
	nlb_nest_end(b);
	nlb_attr_be32(b, A_UID, F_UID);
	nlb_attr_be32(b, A_GID, F_GID);
	/* not NUL terminated, odd length */
	nlb_attr(b, A_SECCTX, f_secctx, strlen(f_secctx));
	nlb_nest_begin(b, A_VLAN | NESTED);
	nlb_attr_be16(b, V_PROTO, 0x8100);
	nlb_attr_be16(b, V_TCI, 0x0123);
	nlb_nest_end(b);
	nlb_attr(b, A_L2HDR, f_l2, sizeof(f_l2));
	nlb_attr_be32(b, A_PRIORITY, F_PRIO);
	nlb_attr_be32(b, A_CGROUP_CLASSID, F_CLASSID);
	nlb_finish(b);
	ck_assert_uint_eq(strlen(f_secctx) % 2, 1);
}

/* Every getter of @p returns what build_full() put in; @msg is the start
 * of the message @p points into. */
static void check_full(struct nfqb_packet *p, const uint8_t *msg)
{
	const uint8_t *addr, *pl;
	const void *ct, *l2, *raw;
	const char *ctx;
	uint64_t ns;
	uint32_t u, len;
	uint16_t alen, proto, tci;

	ck_assert_uint_eq(nfqb_pkt_id(p), F_ID);
	ck_assert_uint_eq(nfqb_pkt_queue_num(p), QN);
	ck_assert_uint_eq(nfqb_pkt_family(p), NFQB_FAMILY_IPV4);
	ck_assert_uint_eq(nfqb_pkt_hook(p), 1);
	ck_assert_int_eq(nfqb_pkt_hook_point(p), NFQB_HOOK_INPUT);
	ck_assert_uint_eq(nfqb_pkt_hw_protocol(p), 0x0800);

	u = 0;
	ck_assert(nfqb_pkt_mark(p, &u));
	ck_assert_uint_eq(u, F_MARK);
	ns = 0;
	ck_assert(nfqb_pkt_timestamp(p, &ns));
	ck_assert_uint_eq(ns, F_SEC * 1000000000ull + F_USEC * 1000ull);
	ck_assert(nfqb_pkt_indev(p, &u));
	ck_assert_uint_eq(u, 3);
	ck_assert(nfqb_pkt_outdev(p, &u));
	ck_assert_uint_eq(u, 4);
	ck_assert(nfqb_pkt_physindev(p, &u));
	ck_assert_uint_eq(u, 5);
	ck_assert(nfqb_pkt_physoutdev(p, &u));
	ck_assert_uint_eq(u, 6);

	addr = NULL;
	alen = 0;
	ck_assert(nfqb_pkt_hwaddr(p, &addr, &alen));
	ck_assert_uint_eq(alen, 6);
	ck_assert_ptr_nonnull(addr);
	ck_assert_int_eq(memcmp(addr, f_hw, 6), 0);

	len = 0;
	pl = nfqb_pkt_payload(p, &len);
	ck_assert_ptr_nonnull(pl);
	ck_assert_uint_eq(len, sizeof(f_payload));
	ck_assert_int_eq(memcmp(pl, f_payload, sizeof(f_payload)), 0);
	ck_assert_uint_eq(nfqb_pkt_orig_len(p), F_CAPLEN);
	ck_assert(nfqb_pkt_truncated(p));

	ck_assert(nfqb_pkt_skbinfo(p, &u));
	ck_assert_uint_eq(u, F_SKBINFO);
	ck_assert(nfqb_pkt_is_gso(p));
	ck_assert(nfqb_pkt_csum_not_ready(p));
	ck_assert(nfqb_pkt_csum_not_verified(p));
	ck_assert(nfqb_pkt_uid(p, &u));
	ck_assert_uint_eq(u, F_UID);
	ck_assert(nfqb_pkt_gid(p, &u));
	ck_assert_uint_eq(u, F_GID);

	ctx = NULL;
	len = 0;
	ck_assert(nfqb_pkt_secctx(p, &ctx, &len));
	ck_assert_uint_eq(len, strlen(f_secctx));
	ck_assert_int_eq(memcmp(ctx, f_secctx, len), 0);

	ck_assert(nfqb_pkt_ct_info(p, &u));
	ck_assert_uint_eq(u, F_CTINFO);
	len = 0;
	ct = nfqb_pkt_ct(p, &len);
	ck_assert_ptr_nonnull(ct);
	ck_assert_uint_eq(len, f_ct_len);
	/* a view into the message, not a copy */
	ck_assert_ptr_eq(ct, msg + f_ct_off);
	ck_assert(nfqb_pkt_ct_id(p, &u));
	ck_assert_uint_eq(u, F_CTID);

	proto = tci = 0;
	ck_assert(nfqb_pkt_vlan(p, &proto, &tci));
	ck_assert_uint_eq(proto, 0x8100);
	ck_assert_uint_eq(tci, 0x0123);

	len = 0;
	l2 = nfqb_pkt_l2hdr(p, &len);
	ck_assert_ptr_nonnull(l2);
	ck_assert_uint_eq(len, sizeof(f_l2));
	ck_assert_int_eq(memcmp(l2, f_l2, sizeof(f_l2)), 0);

	ck_assert(nfqb_pkt_priority(p, &u));
	ck_assert_uint_eq(u, F_PRIO);
	ck_assert(nfqb_pkt_cgroup_classid(p, &u));
	ck_assert_uint_eq(u, F_CLASSID);

	/* the generic accessor agrees */
	alen = 0;
	raw = nfqb_pkt_attr(p, A_UID, &alen);
	ck_assert_ptr_nonnull(raw);
	ck_assert_uint_eq(alen, 4);
	ck_assert_uint_eq(ntohl(get32(raw)), F_UID);
	raw = nfqb_pkt_attr(p, A_PAYLOAD, &alen);
	ck_assert_ptr_eq(raw, pl);
	ck_assert_uint_eq(alen, sizeof(f_payload));
	raw = nfqb_pkt_attr(p, A_EXP, &alen);
	ck_assert_ptr_nonnull(raw);
	ck_assert_uint_eq(alen, 8);
	ck_assert_ptr_null(nfqb_pkt_attr(p, 23, &alen));
	ck_assert_ptr_null(nfqb_pkt_attr(p, 0xffff, &alen));

	/* getters accept NULL out-params */
	ck_assert(nfqb_pkt_mark(p, NULL));
	ck_assert(nfqb_pkt_timestamp(p, NULL));
	ck_assert(nfqb_pkt_hwaddr(p, NULL, NULL));
	ck_assert(nfqb_pkt_vlan(p, NULL, NULL));
	ck_assert(nfqb_pkt_secctx(p, NULL, NULL));

	ck_assert_uint_eq(nfqb_pkt_network_offset(p), 0);
}

START_TEST(test_full_direct)
{
	struct parsed ps;
	struct nlb b;

	build_full(&b, NFQB_FAMILY_IPV4, 1);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	check_full(&ps.p, ps.mem);
	parsed_free(&ps);
}
END_TEST

START_TEST(test_full_rx)
{
	struct rxq r = rxq_open(QN);

	build_full(&r.b, NFQB_FAMILY_IPV4, 1);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 1);
	check_full(r.vec[0], nfqb_pkt_from_handle(r.vec[0])->slot->data);
	nfqbt_assert_stats(r.q, "packets=1 bytes=%zu rejected_malformed=0 "
				"rejected_foreign=0 rejected_truncated=0",
				sizeof(f_payload));
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_DROP), 0);
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	check_sent_verdict(r.cap, 0, QN, F_ID, NFQB_DROP);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

/* The attributes may come in any order. */
START_TEST(test_order_free)
{
	struct parsed ps;
	struct nlb b;
	uint32_t u = 0;

	nlb_init_packet(&b, NFQB_FAMILY_IPV6, QN);
	nlb_attr_be32(&b, A_CGROUP_CLASSID, 5);
	nlb_attr_be32(&b, A_MARK, 9);
	nlb_pkt_hdr(&b, 77, 0x86dd, 4);
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	ck_assert_uint_eq(nfqb_pkt_id(&ps.p), 77);
	ck_assert_uint_eq(nfqb_pkt_hw_protocol(&ps.p), 0x86dd);
	ck_assert_int_eq(nfqb_pkt_hook_point(&ps.p), NFQB_HOOK_POSTROUTING);
	ck_assert(nfqb_pkt_mark(&ps.p, &u));
	ck_assert_uint_eq(u, 9);
	ck_assert(nfqb_pkt_cgroup_classid(&ps.p, &u));
	ck_assert_uint_eq(u, 5);
	parsed_free(&ps);
}
END_TEST

/* --- (b) only the packet header ----------------------------------------- */

static void check_minimal(struct nfqb_packet *p, uint32_t id)
{
	const uint32_t S = 0x5a5a5a5a;
	const uint8_t *sent8 = (const uint8_t *)"sentinel";
	const char *sentc = "sentinel";
	const void *sentv = &S;
	const uint8_t *addr = sent8;
	const char *ctx = sentc;
	uint64_t ns = 12345;
	uint32_t u = S, len = S;
	uint16_t alen = 0x5a5a, proto = 0x5a5a, tci = 0x5a5a;
	unsigned int t;

	ck_assert_uint_eq(nfqb_pkt_id(p), id);
	ck_assert_uint_eq(nfqb_pkt_queue_num(p), QN);

	ck_assert(!nfqb_pkt_mark(p, &u));
	ck_assert(!nfqb_pkt_timestamp(p, &ns));
	ck_assert_uint_eq(ns, 12345);
	ck_assert(!nfqb_pkt_indev(p, &u));
	ck_assert(!nfqb_pkt_outdev(p, &u));
	ck_assert(!nfqb_pkt_physindev(p, &u));
	ck_assert(!nfqb_pkt_physoutdev(p, &u));
	ck_assert(!nfqb_pkt_hwaddr(p, &addr, &alen));
	ck_assert_ptr_eq(addr, sent8);
	ck_assert_uint_eq(alen, 0x5a5a);
	ck_assert(!nfqb_pkt_skbinfo(p, &u));
	ck_assert(!nfqb_pkt_is_gso(p));
	ck_assert(!nfqb_pkt_csum_not_ready(p));
	ck_assert(!nfqb_pkt_csum_not_verified(p));
	ck_assert(!nfqb_pkt_uid(p, &u));
	ck_assert(!nfqb_pkt_gid(p, &u));
	ck_assert(!nfqb_pkt_secctx(p, &ctx, &len));
	ck_assert_ptr_eq(ctx, sentc);
	ck_assert(!nfqb_pkt_ct_info(p, &u));
	ck_assert_ptr_null(nfqb_pkt_ct(p, &len));
	ck_assert(!nfqb_pkt_ct_id(p, &u));
	ck_assert(!nfqb_pkt_vlan(p, &proto, &tci));
	ck_assert_uint_eq(proto, 0x5a5a);
	ck_assert_uint_eq(tci, 0x5a5a);
	ck_assert_ptr_null(nfqb_pkt_l2hdr(p, &len));
	ck_assert(!nfqb_pkt_priority(p, &u));
	ck_assert(!nfqb_pkt_cgroup_classid(p, &u));
	ck_assert_uint_eq(u, S);
	ck_assert_uint_eq(len, S);
	for (t = 2; t <= 30; t++) {
		alen = 0x5a5a;
		ck_assert_ptr_null(nfqb_pkt_attr(p, (uint16_t)t, &alen));
		ck_assert_uint_eq(alen, 0x5a5a);
	}
	ck_assert_ptr_nonnull(nfqb_pkt_attr(p, A_PACKET_HDR, &alen));
	ck_assert_uint_eq(alen, 7);
	(void)sentv;

	/* no payload: NULL, length 0, and the original length is that */
	len = S;
	ck_assert_ptr_null(nfqb_pkt_payload(p, &len));
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(nfqb_pkt_orig_len(p), 0);
	ck_assert(!nfqb_pkt_truncated(p));
}

START_TEST(test_minimal_direct)
{
	struct parsed ps;
	struct nlb b;

	nlb_simple_packet(&b, QN, 0xfffffffe, 0);
	ck_assert_uint_eq(b.len, 32);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	check_minimal(&ps.p, 0xfffffffe);
	parsed_free(&ps);
}
END_TEST

/* The kernel pads only between attributes: a last attribute without its
 * padding is fine (nla_len 11, message ends right there). */
START_TEST(test_minimal_unpadded)
{
	struct parsed ps;
	struct nlb b;

	nlb_simple_packet(&b, QN, 5, 0);
	b.len = 31;
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	check_minimal(&ps.p, 5);
	parsed_free(&ps);
}
END_TEST

START_TEST(test_minimal_rx)
{
	struct rxq r = rxq_open(QN);

	nlb_simple_packet(&r.b, QN, 1, 0);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 1);
	check_minimal(r.vec[0], 1);
	nfqbt_assert_stats(r.q, "packets=1 bytes=0");
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	/* close sends the decision */
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

START_TEST(test_payload_no_caplen)
{
	struct parsed ps;
	struct nlb b;
	uint32_t len = 0;
	const uint8_t *pl;

	nlb_simple_packet(&b, QN, 3, 77);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	pl = nfqb_pkt_payload(&ps.p, &len);
	ck_assert_ptr_nonnull(pl);
	ck_assert_uint_eq(len, 77);
	ck_assert_uint_eq(pl[0], 0x40);
	ck_assert_uint_eq(pl[76], 0x40 + 76);
	ck_assert_uint_eq(nfqb_pkt_orig_len(&ps.p), 77);
	ck_assert(!nfqb_pkt_truncated(&ps.p));
	parsed_free(&ps);
}
END_TEST

/* CAP_LEN equal to the payload: not truncated. */
START_TEST(test_caplen_equal)
{
	struct parsed ps;
	struct nlb b;
	uint8_t pl[10] = { 0 };

	nlb_init_packet(&b, 2, QN);
	nlb_pkt_hdr(&b, 3, 0x0800, 0);
	nlb_attr(&b, A_PAYLOAD, pl, sizeof(pl));
	nlb_attr_be32(&b, A_CAP_LEN, 10);
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	ck_assert_uint_eq(nfqb_pkt_orig_len(&ps.p), 10);
	ck_assert(!nfqb_pkt_truncated(&ps.p));
	parsed_free(&ps);
}
END_TEST

/* --- (c) malformed messages --------------------------------------------- */

/* u32 attributes and the wrong lengths tried for each */
static const uint16_t u32_types[] = {
	A_MARK, A_INDEV, A_OUTDEV, A_PHYSINDEV, A_PHYSOUTDEV, A_CT_INFO,
	A_CAP_LEN, A_SKB_INFO, A_UID, A_GID, A_PRIORITY, A_CGROUP_CLASSID,
};
static const uint8_t u32_bad_lens[] = { 0, 2, 3, 5, 8 };
#define N_U32_CASES (sizeof(u32_types) / sizeof(u32_types[0]) * \
		     sizeof(u32_bad_lens))

/* the wrong-length cases of the struct attributes: too short ones */
static const struct { uint16_t type; uint8_t len; } short_cases[] = {
	{ A_PACKET_HDR, 0 }, { A_PACKET_HDR, 4 }, { A_PACKET_HDR, 6 },
	{ A_TIMESTAMP, 0 }, { A_TIMESTAMP, 8 }, { A_TIMESTAMP, 15 },
	{ A_HWADDR, 0 }, { A_HWADDR, 4 }, { A_HWADDR, 11 },
};
/* ... and too long ones */
static const struct { uint16_t type; uint8_t len; } long_cases[] = {
	{ A_PACKET_HDR, 8 }, { A_PACKET_HDR, 12 },
	{ A_TIMESTAMP, 17 }, { A_TIMESTAMP, 24 },
	{ A_HWADDR, 13 }, { A_HWADDR, 16 },
};
#define N_SHORT (sizeof(short_cases) / sizeof(short_cases[0]))
#define N_LONG (sizeof(long_cases) / sizeof(long_cases[0]))

static uint8_t junk[64];

/* A message with a good header (unless the bad one is the header) and one
 * attribute of @type with @len bytes. */
static size_t build_bad_attr(struct nlb *b, uint16_t type, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i + 1);
	junk[0] = 0;	/* hw_addrlen 0x0001.. stays small for hwaddr */
	nlb_init_packet(b, 2, QN);
	if (type != A_PACKET_HDR)
		nlb_pkt_hdr(b, 1, 0x0800, 1);
	nlb_attr(b, type, junk, len);
	if (type == A_PACKET_HDR)
		nlb_attr_be32(b, A_MARK, 1);
	return nlb_finish(b);
}

/* Other malformed messages: a row of mal_cases[] each, whose builder
 * gets the row (its numbers and bytes) and returns the datagram length. */
struct mal_case {
	const char *name;
	size_t (*build)(struct nlb *b, const struct mal_case *c);
	unsigned int x, y;
	const char *bytes;
};

/* hw_addrlen @c->x */
static size_t bad_hwaddr_len(struct nlb *b, const struct mal_case *c)
{
	uint8_t hw[12] = { 0 };

	hw[0] = c->x >> 8;
	hw[1] = c->x;
	nlb_init_ipv4(b, QN, 1);
	nlb_attr(b, A_HWADDR, hw, sizeof(hw));
	return nlb_finish(b);
}

static void set_nla_len(struct nlb *b, size_t off, uint16_t len)
{
	memcpy(b->buf + off, &len, 2);
}

/* last attribute's nla_len past the message end by @c->x bytes */
static size_t past_end(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	nlb_init_ipv4(b, QN, 1);
	off = b->len;
	nlb_attr(b, A_PAYLOAD, junk, 16);
	set_nla_len(b, off, (uint16_t)(20 + c->x));
	return nlb_finish(b);
}

static size_t past_end_max(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	(void)c;
	nlb_init_ipv4(b, QN, 1);
	off = b->len;
	nlb_attr(b, A_SECCTX, junk, 3);
	set_nla_len(b, off, 0xffff);
	return nlb_finish(b);
}

/* the header's own nla_len runs past the end */
static size_t hdr_past_end(struct nlb *b, const struct mal_case *c)
{
	(void)c;
	nlb_init_ipv4(b, QN, 1);
	set_nla_len(b, 20, 13);
	b->len = 32;
	return nlb_finish(b);
}

/* the first attribute's nla_len @c->x */
static size_t small_nla_len(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	nlb_init_ipv4(b, QN, 1);
	off = b->len;
	nlb_attr_be32(b, A_MARK, 1);
	set_nla_len(b, off, (uint16_t)c->x);
	nlb_attr_be32(b, A_UID, 1);
	return nlb_finish(b);
}

static size_t no_hdr(struct nlb *b, const struct mal_case *c)
{
	(void)c;
	nlb_init_packet(b, 2, QN);
	nlb_attr_be32(b, A_MARK, 1);
	nlb_attr(b, A_PAYLOAD, junk, 20);
	return nlb_finish(b);
}

static size_t no_attrs(struct nlb *b, const struct mal_case *c)
{
	(void)c;
	nlb_init_packet(b, 2, QN);
	return nlb_finish(b);
}

/* VLAN nest whose inner attributes have @c->x (proto) and @c->y (tci)
 * bytes */
static size_t vlan_with(struct nlb *b, const struct mal_case *c)
{
	nlb_init_ipv4(b, QN, 1);
	nlb_nest_begin(b, A_VLAN | NESTED);
	nlb_attr(b, V_PROTO, "\x81\x00\x00\x00", c->x);
	nlb_attr(b, V_TCI, "\x01\x23\x00\x00", c->y);
	nlb_nest_end(b);
	nlb_attr_be32(b, A_MARK, 1);
	return nlb_finish(b);
}

/* inner attribute running past the end of the nest (into the MARK after
 * it, which is inside the message: only the nest bound catches it) */
static size_t vlan_inner_past(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	(void)c;
	nlb_init_ipv4(b, QN, 1);
	nlb_nest_begin(b, A_VLAN | NESTED);
	nlb_attr_be16(b, V_PROTO, 0x8100);
	off = b->len;
	nlb_attr_be16(b, V_TCI, 0x0123);
	nlb_nest_end(b);
	set_nla_len(b, off, 16);
	nlb_attr_be32(b, A_MARK, 1);
	return nlb_finish(b);
}

static size_t vlan_inner_small(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	(void)c;
	nlb_init_ipv4(b, QN, 1);
	nlb_nest_begin(b, A_VLAN | NESTED);
	off = b->len;
	nlb_attr_be16(b, V_PROTO, 0x8100);
	nlb_attr_be16(b, V_TCI, 0x0123);
	nlb_nest_end(b);
	set_nla_len(b, off, 2);
	return nlb_finish(b);
}

/* nest of type @c->x whose one inner attribute overruns the nest */
static size_t nest_inner_past(struct nlb *b, const struct mal_case *c)
{
	size_t off;

	nlb_init_ipv4(b, QN, 1);
	nlb_nest_begin(b, (uint16_t)(c->x | NESTED));
	off = b->len;
	nlb_attr_be32(b, CTA_ID_, 1);
	nlb_nest_end(b);
	set_nla_len(b, off, 12);
	nlb_attr_be32(b, A_MARK, 1);
	return nlb_finish(b);
}

/* nest with 2 stray bytes at its end */
static size_t ct_inner_trailing(struct nlb *b, const struct mal_case *c)
{
	(void)c;
	nlb_init_ipv4(b, QN, 1);
	nlb_nest_begin(b, A_CT | NESTED);
	nlb_attr_be32(b, CTA_ID_, 1);
	nlb_raw(b, "\x01\x02", 2);
	nlb_nest_end(b);
	nlb_raw(b, "\0\0", 2);	/* the outer padding */
	return nlb_finish(b);
}

/* @c->x bytes: shorter than nlmsghdr + nfgenmsg */
static size_t short_msg(struct nlb *b, const struct mal_case *c)
{
	nlb_simple_packet(b, QN, 1, 0);
	b->len = c->x;
	return nlb_finish(b);
}

/* the @c->x bytes @c->bytes after the last (padded) attribute */
static size_t trailing(struct nlb *b, const struct mal_case *c)
{
	nlb_init_ipv4(b, QN, 1);
	nlb_attr_be32(b, A_MARK, 1);
	nlb_raw(b, c->bytes, c->x);
	return nlb_finish(b);
}

/* 5 bytes after an unpadded last attribute: more than its padding */
static size_t trailing_unpadded(struct nlb *b, const struct mal_case *c)
{
	(void)c;
	nlb_init_packet(b, 2, QN);
	nlb_attr_be32(b, A_MARK, 1);
	nlb_pkt_hdr(b, 1, 0x0800, 1);	/* nla_len 11 + 1 pad */
	nlb_raw(b, "\x09\x09\x09\x09", 4);
	return nlb_finish(b);
}

static const struct mal_case mal_cases[] = {
	{ "hwaddr len 9", bad_hwaddr_len, 9, 0, NULL },
	{ "hwaddr len 0xffff", bad_hwaddr_len, 0xffff, 0, NULL },
	{ "nla_len past end by 1", past_end, 1, 0, NULL },
	{ "nla_len past end by 4", past_end, 4, 0, NULL },
	{ "nla_len 0xffff", past_end_max, 0, 0, NULL },
	{ "packet hdr past end", hdr_past_end, 0, 0, NULL },
	{ "nla_len 0", small_nla_len, 0, 0, NULL },
	{ "nla_len 2", small_nla_len, 2, 0, NULL },
	{ "nla_len 3", small_nla_len, 3, 0, NULL },
	{ "no packet header", no_hdr, 0, 0, NULL },
	{ "no attributes", no_attrs, 0, 0, NULL },
	{ "vlan proto len 1", vlan_with, 1, 2, NULL },
	{ "vlan proto len 4", vlan_with, 4, 2, NULL },
	{ "vlan tci len 0", vlan_with, 2, 0, NULL },
	{ "vlan tci len 3", vlan_with, 2, 3, NULL },
	{ "vlan inner past nest", vlan_inner_past, 0, 0, NULL },
	{ "vlan inner nla_len 2", vlan_inner_small, 0, 0, NULL },
	{ "ct inner past nest", nest_inner_past, A_CT, 0, NULL },
	{ "exp inner past nest", nest_inner_past, A_EXP, 0, NULL },
	{ "ct trailing bytes", ct_inner_trailing, 0, 0, NULL },
	{ "nlmsg_len 16", short_msg, 16, 0, NULL },
	{ "nlmsg_len 18", short_msg, 18, 0, NULL },
	{ "nlmsg_len 19", short_msg, 19, 0, NULL },
	{ "trailing 1 byte", trailing, 1, 0, "\x07" },
	{ "trailing 2 bytes", trailing, 2, 0, "\x07\x07" },
	{ "trailing 3 bytes", trailing, 3, 0, "\0\0\0" },
	{ "trailing ff ff ff ff", trailing, 4, 0, "\xff\xff\xff\xff" },
	{ "trailing after unpadded", trailing_unpadded, 0, 0, NULL },
};
#define N_MAL (sizeof(mal_cases) / sizeof(mal_cases[0]))

/* Both entry points reject the @len bytes of @b. */
static void expect_rejected(const char *name, struct nlb *b, size_t len)
{
	struct rxq r;
	struct nfqb_packet *vec[2];
	struct nfqb_stats st;
	struct parsed ps;
	int ret;

	ret = parse_len(&ps, b, len);
	ck_assert_msg(ret == NFQB_PARSE_MALFORMED,
		      "%s: parse returned %d, expected MALFORMED", name, ret);
	parsed_free(&ps);

	r = rxq_open(QN);
	inject(r.q, b, len, 0, 0);
	ck_assert_msg(nfqbt_serve(r.q, vec, 2) == 0,
		      "%s: a packet came out", name);
	st = nfqbt_queue_stats(r.q);
	ck_assert_msg(st.rejected_malformed == 1,
		      "%s: rejected_malformed %llu", name,
		      (unsigned long long)st.rejected_malformed);
	ck_assert_uint_eq(st.packets, 0);
	/* the kernel still holds the packet: it gets the default verdict by
	 * id when the id is readable (and nothing is sent otherwise: an open
	 * gap, ended by no later id, which the unbind at close drops) */
	ck_assert_msg(rxq_close(&r) == (st.rejected_defaults ? 1u : 0u),
		      "%s: verdicts sent", name);
}

/* Both entry points reject a message whose attribute @type has @len
 * bytes (build_bad_attr()). */
static void expect_bad_attr(uint16_t type, size_t len)
{
	char name[64];
	struct nlb b;

	snprintf(name, sizeof(name), "attr %u len %zu", type, len);
	expect_rejected(name, &b, build_bad_attr(&b, type, len));
}

START_TEST(test_bad_u32_len)
{
	unsigned int t = (unsigned int)_i / sizeof(u32_bad_lens);
	unsigned int l = (unsigned int)_i % sizeof(u32_bad_lens);

	expect_bad_attr(u32_types[t], u32_bad_lens[l]);
}
END_TEST

START_TEST(test_good_u32_len)
{
	/* the same attributes with 4 bytes are fine: the cases above fail
	 * for their length, not for something else */
	struct parsed ps;
	struct nlb b;

	build_bad_attr(&b, u32_types[_i], 4);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	ck_assert_ptr_nonnull(nfqb_pkt_attr(&ps.p, u32_types[_i], NULL));
	parsed_free(&ps);
}
END_TEST

START_TEST(test_struct_too_short)
{
	expect_bad_attr(short_cases[_i].type, short_cases[_i].len);
}
END_TEST

START_TEST(test_struct_too_long)
{
	expect_bad_attr(long_cases[_i].type, long_cases[_i].len);
}
END_TEST

START_TEST(test_malformed)
{
	struct nlb b;
	size_t len = mal_cases[_i].build(&b, &mal_cases[_i]);

	expect_rejected(mal_cases[_i].name, &b, len);
}
END_TEST

/* --- (d) what is not ours to judge -------------------------------------- */

START_TEST(test_unknown_attr)
{
	struct parsed ps;
	struct nlb b;
	uint16_t alen = 0x5a5a;
	uint32_t u = 0;

	nlb_init_ipv4(&b, QN, 8);
	nlb_attr(&b, 40, junk, 3);		/* any length */
	nlb_attr(&b, 23, junk, 1);
	nlb_attr(&b, 0, junk, 2);		/* NFQA_UNSPEC */
	nlb_attr(&b, 40 | NESTED, junk, 9);
	nlb_attr_be32(&b, A_MARK, 0x77);
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	ck_assert_uint_eq(nfqb_pkt_id(&ps.p), 8);
	ck_assert(nfqb_pkt_mark(&ps.p, &u));
	ck_assert_uint_eq(u, 0x77);
	ck_assert_ptr_null(nfqb_pkt_attr(&ps.p, 40, &alen));
	ck_assert_ptr_null(nfqb_pkt_attr(&ps.p, 23, &alen));
	ck_assert_uint_eq(alen, 0x5a5a);
	parsed_free(&ps);
}
END_TEST

START_TEST(test_not_packet)
{
	struct parsed ps;
	struct nlb b;

	/* a verdict message (type 0x0301) is not a packet */
	nlb_init(&b, (3 << 8) | 1, 2, QN);
	nlb_pkt_hdr(&b, 8, 0x0800, 1);
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_NOT_PACKET);
	parsed_free(&ps);
}
END_TEST

/* --- (e) hook points ---------------------------------------------------- */

static const struct {
	uint8_t family, hook;
	enum nfqb_hook_point want;
	uint32_t l2len;		/* 0: no NFQA_L2HDR */
	uint32_t netoff;
} hook_cases[] = {
	{ NFQB_FAMILY_NETDEV, 0, NFQB_HOOK_INGRESS, 0, 0 },
	{ NFQB_FAMILY_NETDEV, 0, NFQB_HOOK_INGRESS, 14, 0 },
	{ NFQB_FAMILY_NETDEV, 1, NFQB_HOOK_EGRESS, 0, 14 },
	{ NFQB_FAMILY_NETDEV, 1, NFQB_HOOK_EGRESS, 18, 18 },
	{ NFQB_FAMILY_NETDEV, 2, NFQB_HOOK_UNKNOWN, 0, 0 },
	{ NFQB_FAMILY_IPV4, 0, NFQB_HOOK_PREROUTING, 0, 0 },
	{ NFQB_FAMILY_IPV4, 1, NFQB_HOOK_INPUT, 0, 0 },
	{ NFQB_FAMILY_IPV4, 2, NFQB_HOOK_FORWARD, 0, 0 },
	{ NFQB_FAMILY_IPV4, 3, NFQB_HOOK_OUTPUT, 14, 0 },
	{ NFQB_FAMILY_IPV4, 4, NFQB_HOOK_POSTROUTING, 0, 0 },
	{ NFQB_FAMILY_IPV4, 5, NFQB_HOOK_UNKNOWN, 0, 0 },
	{ NFQB_FAMILY_IPV6, 3, NFQB_HOOK_OUTPUT, 0, 0 },
	{ NFQB_FAMILY_BRIDGE, 0, NFQB_HOOK_PREROUTING, 0, 0 },
	{ NFQB_FAMILY_INET, 5, NFQB_HOOK_INGRESS, 0, 0 },
	{ NFQB_FAMILY_ARP, 0, NFQB_HOOK_ARP_IN, 0, 0 },
	{ NFQB_FAMILY_ARP, 1, NFQB_HOOK_ARP_OUT, 0, 0 },
	{ NFQB_FAMILY_ARP, 2, NFQB_HOOK_ARP_FORWARD, 0, 0 },
	{ NFQB_FAMILY_ARP, 3, NFQB_HOOK_UNKNOWN, 0, 0 },
	{ NFQB_FAMILY_UNSPEC, 0, NFQB_HOOK_UNKNOWN, 0, 0 },
	{ 99, 1, NFQB_HOOK_UNKNOWN, 0, 0 },
};
#define N_HOOK (sizeof(hook_cases) / sizeof(hook_cases[0]))

START_TEST(test_hook_point)
{
	struct parsed ps;
	struct nlb b;

	nlb_init_packet(&b, hook_cases[_i].family, QN);
	nlb_pkt_hdr(&b, 1, 0x0800, hook_cases[_i].hook);
	if (hook_cases[_i].l2len)
		nlb_attr(&b, A_L2HDR, junk, hook_cases[_i].l2len);
	nlb_finish(&b);
	ck_assert_int_eq(parse(&ps, &b), NFQB_PARSE_OK);
	ck_assert_uint_eq(nfqb_pkt_family(&ps.p), hook_cases[_i].family);
	ck_assert_uint_eq(nfqb_pkt_hook(&ps.p), hook_cases[_i].hook);
	ck_assert_msg(nfqb_pkt_hook_point(&ps.p) == hook_cases[_i].want,
		      "family %u hook %u: point %d, expected %d",
		      hook_cases[_i].family, hook_cases[_i].hook,
		      nfqb_pkt_hook_point(&ps.p), hook_cases[_i].want);
	ck_assert_uint_eq(nfqb_pkt_network_offset(&ps.p),
			  hook_cases[_i].netoff);
	parsed_free(&ps);
}
END_TEST

/* --- the receive path --------------------------------------------------- */

START_TEST(test_rx_valid)
{
	struct rxq r = rxq_open(QN);

	nlb_simple_packet(&r.b, QN, 0x100, 40);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 1);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 0x100);
	nfqbt_assert_stats(r.q, "packets=1 bytes=40 "
				"rejected_foreign+rejected_malformed+"
				"rejected_truncated+kernel_errors=0");
	ck_assert(!nfqb_queue_fallback(r.q));
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	check_sent_verdict(r.cap, 0, QN, 0x100, NFQB_ACCEPT);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

START_TEST(test_rx_foreign)
{
	struct rxq r = rxq_open(QN);

	nlb_simple_packet(&r.b, QN, 0x100, 40);
	ck_assert_uint_eq(rx_serve(&r, 1234, 0), 0);
	nfqbt_assert_stats(r.q, "packets=0 rejected_foreign=1 "
				"rejected_malformed=0");
	/* a foreign datagram even with MSG_TRUNC gets no verdict from us */
	inject(r.q, &r.b, r.b.len, 1, MSG_TRUNC);
	nfqbt_assert_stats(r.q, "rejected_foreign=2 rejected_truncated=0");
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	ck_assert_uint_eq(r.cap->n, 0);
	/* the queue still works */
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 1);
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

START_TEST(test_rx_other_queue)
{
	struct rxq r = rxq_open(QN);

	nlb_simple_packet(&r.b, QN + 1, 0x100, 40);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 0);
	nfqbt_assert_stats(r.q, "packets=0 rejected_malformed=1");
	ck_assert_uint_eq(rxq_close(&r), 0);
}
END_TEST

static void truncated(uint32_t defv)
{
	struct rxq r = rxq_open(QN);

	ck_assert_int_eq(nfqb_queue_set_default_verdict(r.q, defv), 0);
	build_full(&r.b, 2, 1);
	/* what recvmsg gave: the first 100 bytes, header intact */
	inject(r.q, &r.b, 100, 0, MSG_TRUNC);
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 0);
	nfqbt_assert_stats(r.q, "rejected_truncated=1 packets=0 "
				"rejected_malformed=0");
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	ck_assert_uint_eq(r.cap->n, 1);
	check_sent_verdict(r.cap, 0, QN, F_ID, defv);
	nfqbt_assert_stats(r.q, "verdict_msgs=1 rejected_defaults=1");
	ck_assert_uint_eq(rxq_close(&r), 1);
}

START_TEST(test_rx_truncated_accept)
{
	truncated(NFQB_ACCEPT);
}
END_TEST

START_TEST(test_rx_truncated_drop)
{
	truncated(NFQB_DROP);
}
END_TEST

/* Cut inside the packet header: nothing to salvage, nothing sent. */
START_TEST(test_rx_truncated_no_hdr)
{
	struct rxq r = rxq_open(QN);

	build_full(&r.b, 2, 1);
	inject(r.q, &r.b, 28, 0, MSG_TRUNC);
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 0);
	nfqbt_assert_stats(r.q, "rejected_truncated=1");
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	ck_assert_uint_eq(r.cap->n, 0);
	ck_assert_uint_eq(rxq_close(&r), 0);
}
END_TEST

/* NLMSG_ERROR about our message with sequence 99 */
static void build_error(struct nlb *b, int err, size_t len)
{
	int32_t e = err;

	memset(b, 0, sizeof(*b));
	/* nlmsghdr type NLMSG_ERROR (2) */
	b->buf[4] = 2;
	memcpy(b->buf + 16, &e, 4);
	/* the header of the failed message: len 32, type 0x0301, seq 99 */
	b->buf[20] = 32;
	b->buf[24] = 1;
	b->buf[25] = 3;
	b->buf[28] = 99;
	b->len = len;
	nlb_finish(b);
}

START_TEST(test_rx_error_enoent)
{
	struct rxq r = rxq_open(QN);

	build_error(&r.b, -ENOENT, 36);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 0);
	nfqbt_assert_stats(r.q, "kernel_errors=1 enoent_errors=1 packets=0 "
				"rejected_malformed=0");

	/* another error: counted, but not as ENOENT */
	build_error(&r.b, -EINVAL, 36);
	inject(r.q, &r.b, r.b.len, 0, 0);
	nfqbt_assert_stats(r.q, "kernel_errors=2 enoent_errors=1");

	/* an acknowledgement nobody waits for: ignored */
	build_error(&r.b, 0, 36);
	inject(r.q, &r.b, r.b.len, 0, 0);
	nfqbt_assert_stats(r.q, "kernel_errors=2 rejected_malformed=0");

	/* too short to hold the failed message's header */
	build_error(&r.b, -ENOENT, 24);
	inject(r.q, &r.b, r.b.len, 0, 0);
	nfqbt_assert_stats(r.q, "kernel_errors=2 rejected_malformed=1");

	/* from someone else: foreign, not a kernel error */
	build_error(&r.b, -ENOENT, 36);
	inject(r.q, &r.b, r.b.len, 42, 0);
	nfqbt_assert_stats(r.q, "kernel_errors=2 rejected_foreign=1");
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 0);
	ck_assert_uint_eq(rxq_close(&r), 0);
}
END_TEST

START_TEST(test_rx_two_in_one)
{
	struct rxq r = rxq_open(QN);
	struct nlb b2;
	uint32_t len;

	nlb_simple_packet(&r.b, QN, 20, 3);	/* 36 bytes, padded */
	nlb_simple_packet(&b2, QN, 21, 64);
	ck_assert_uint_eq(r.b.len % 4, 0);
	nlb_raw(&r.b, b2.buf, b2.len);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 2);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 20);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[1]), 21);
	ck_assert_ptr_nonnull(nfqb_pkt_payload(r.vec[0], &len));
	ck_assert_uint_eq(len, 3);
	ck_assert_ptr_nonnull(nfqb_pkt_payload(r.vec[1], &len));
	ck_assert_uint_eq(len, 64);
	nfqbt_assert_stats(r.q, "packets=2 bytes=67");
	/* decide the second first: both still valid views */
	ck_assert_int_eq(nfqb_verdict(r.vec[1], NFQB_DROP), 0);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 20);
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_DROP), 0);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

/* A packet, an error reply and a malformed message in one datagram. */
START_TEST(test_rx_mixed)
{
	struct rxq r = rxq_open(QN);
	struct nlb e, m;

	nlb_simple_packet(&r.b, QN, 30, 0);
	build_error(&e, -ENOENT, 36);
	nlb_raw(&r.b, e.buf, e.len);
	no_hdr(&m, NULL);
	nlb_raw(&r.b, m.buf, m.len);
	ck_assert_uint_eq(rx_serve(&r, 0, 0), 1);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 30);
	nfqbt_assert_stats(r.q, "packets=1 kernel_errors=1 enoent_errors=1 "
				"rejected_malformed=1");
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

/* A second message whose nlmsg_len runs past the datagram. */
START_TEST(test_rx_second_past_end)
{
	struct rxq r = rxq_open(QN);
	struct nlb b2;
	size_t first;

	nlb_simple_packet(&r.b, QN, 40, 4);
	first = r.b.len;
	nlb_simple_packet(&b2, QN, 41, 64);
	nlb_raw(&r.b, b2.buf, b2.len);
	inject(r.q, &r.b, first + 20, 0, 0);
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 1);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 40);
	nfqbt_assert_stats(r.q, "packets=1 rejected_malformed=1");
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

START_TEST(test_rx_ids_backwards)
{
	struct rxq r = rxq_open(QN);

	rx_simple(&r, 10, 0);
	ck_assert(!nfqb_queue_fallback(r.q));
	rx_simple(&r, 5, 0);
	ck_assert(nfqb_queue_fallback(r.q));
	nfqbt_assert_stats(r.q, "fallbacks=1 packets=2");
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 2);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[0]), 10);
	ck_assert_uint_eq(nfqb_pkt_id(r.vec[1]), 5);
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(r.vec[1], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(r.q), 0);
	/* after the fallback: one single verdict each, never a batch */
	nfqbt_assert_stats(r.q, "batch_msgs=0 verdict_msgs=2");
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

/* Serial arithmetic: 0xffffffff then 0 is going forwards. */
START_TEST(test_rx_ids_wrap)
{
	struct rxq r = rxq_open(QN);

	rx_simple(&r, 0xffffffff, 0);
	rx_simple(&r, 0, 0);
	ck_assert(!nfqb_queue_fallback(r.q));
	nfqbt_assert_stats(r.q, "fallbacks=0");
	ck_assert_uint_eq(nfqbt_serve(r.q, r.vec, 4), 2);
	ck_assert_int_eq(nfqb_verdict(r.vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_verdict(r.vec[1], NFQB_ACCEPT), 0);
	ck_assert_uint_eq(rxq_close(&r), 1);
}
END_TEST

/* Every buffer outstanding: the next datagram cannot be taken. */
START_TEST(test_rx_no_buffer)
{
	struct nfqb_packet *vec[20];
	struct nfqb_queue *q;
	struct capture *cap = calloc(1, sizeof(*cap));
	struct nlb b;
	unsigned int i, n;

	ck_assert_ptr_nonnull(cap);
	q = nfqbt_queue_detached(QN, 4);
	ck_assert_ptr_nonnull(q);
	nfqbt_set_tx_hook(q, capture_hook, cap);
	for (i = 0; i < 4; i++) {
		nlb_simple_packet(&b, QN, 100 + i, 8);
		inject(q, &b, b.len, 0, 0);
	}
	nlb_simple_packet(&b, QN, 200, 8);
	errno = 0;
	ck_assert_int_eq(nfqbt_rx_inject(q, b.buf, b.len, 0, 0), -1);
	ck_assert_int_eq(errno, EAGAIN);
	n = nfqbt_serve(q, vec, 20);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	/* buffers back: accepted again */
	inject(q, &b, b.len, 0, 0);
	ck_assert_uint_eq(nfqbt_serve(q, vec, 20), 1);
	ck_assert_int_eq(nfqb_verdict(vec[0], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	free(cap);
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc;

	tc = tcase_create("all_attrs");
	tcase_add_test(tc, test_full_direct);
	tcase_add_test(tc, test_full_rx);
	tcase_add_test(tc, test_order_free);
	suite_add_tcase(s, tc);

	tc = tcase_create("minimal");
	tcase_add_test(tc, test_minimal_direct);
	tcase_add_test(tc, test_minimal_unpadded);
	tcase_add_test(tc, test_minimal_rx);
	tcase_add_test(tc, test_payload_no_caplen);
	tcase_add_test(tc, test_caplen_equal);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_loop_test(tc, test_bad_u32_len, 0, (int)N_U32_CASES);
	tcase_add_loop_test(tc, test_good_u32_len, 0,
			    (int)(sizeof(u32_types) / sizeof(u32_types[0])));
	tcase_add_loop_test(tc, test_struct_too_short, 0, (int)N_SHORT);
	tcase_add_loop_test(tc, test_malformed, 0, (int)N_MAL);
	suite_add_tcase(s, tc);

	tc = tcase_create("struct_too_long");
	tcase_add_loop_test(tc, test_struct_too_long, 0, (int)N_LONG);
	suite_add_tcase(s, tc);

	tc = tcase_create("lenient");
	tcase_add_test(tc, test_unknown_attr);
	tcase_add_test(tc, test_not_packet);
	suite_add_tcase(s, tc);

	tc = tcase_create("hooks");
	tcase_add_loop_test(tc, test_hook_point, 0, (int)N_HOOK);
	suite_add_tcase(s, tc);

	tc = tcase_create("rx");
	tcase_add_test(tc, test_rx_valid);
	tcase_add_test(tc, test_rx_foreign);
	tcase_add_test(tc, test_rx_other_queue);
	tcase_add_test(tc, test_rx_truncated_accept);
	tcase_add_test(tc, test_rx_truncated_drop);
	tcase_add_test(tc, test_rx_truncated_no_hdr);
	tcase_add_test(tc, test_rx_error_enoent);
	tcase_add_test(tc, test_rx_two_in_one);
	tcase_add_test(tc, test_rx_mixed);
	tcase_add_test(tc, test_rx_second_past_end);
	tcase_add_test(tc, test_rx_ids_backwards);
	tcase_add_test(tc, test_rx_ids_wrap);
	tcase_add_test(tc, test_rx_no_buffer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return nfqbt_run(parse_suite());
}
