// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Hand-made netlink messages for the unit tests. The layout follows the
 * uapi headers: struct nlmsghdr (host order), struct nfgenmsg (res_id big
 * endian), then struct nlattr (host order length/type) + payload padded to
 * four bytes with zeroes.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "nlbuild.h"

#define ALIGN4(x)	(((x) + 3u) & ~(size_t)3u)

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void room(struct nlb *b, size_t n)
{
	ck_assert_msg(b->len + n <= NLB_MAX, "nlb: message too large");
}

void nlb_init(struct nlb *b, uint16_t type, uint8_t family, uint16_t res_id)
{
	uint16_t be = htons(res_id);

	memset(b, 0, sizeof(*b));
	/* nlmsghdr: len (set by nlb_finish), type, flags, seq, pid */
	put16(b->buf + 4, type);
	/* nfgenmsg at 16: family, version 0, res_id */
	b->buf[16] = family;
	b->buf[17] = 0;
	memcpy(b->buf + 18, &be, 2);
	b->len = 20;
}

void nlb_init_packet(struct nlb *b, uint8_t family, uint16_t res_id)
{
	nlb_init(b, (3 << 8) | 0, family, res_id);	/* QUEUE, PACKET */
}

void nlb_raw(struct nlb *b, const void *data, size_t len)
{
	room(b, len);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
}

void nlb_attr(struct nlb *b, uint16_t type, const void *data, size_t len)
{
	size_t total = ALIGN4(4 + len);

	room(b, total);
	put16(b->buf + b->len, (uint16_t)(4 + len));
	put16(b->buf + b->len + 2, type);
	if (len)
		memcpy(b->buf + b->len + 4, data, len);
	memset(b->buf + b->len + 4 + len, 0, total - 4 - len);
	b->len += total;
}

void nlb_attr_be32(struct nlb *b, uint16_t type, uint32_t v)
{
	uint32_t be = htonl(v);

	nlb_attr(b, type, &be, 4);
}

void nlb_attr_be16(struct nlb *b, uint16_t type, uint16_t v)
{
	uint16_t be = htons(v);

	nlb_attr(b, type, &be, 2);
}

void nlb_pkt_hdr(struct nlb *b, uint32_t id, uint16_t hw_proto, uint8_t hook)
{
	uint8_t h[7];

	/* struct nfqnl_msg_packet_hdr, packed: be32 id, be16 proto, u8 hook */
	h[0] = id >> 24;
	h[1] = id >> 16;
	h[2] = id >> 8;
	h[3] = id;
	h[4] = hw_proto >> 8;
	h[5] = hw_proto;
	h[6] = hook;
	nlb_attr(b, 1, h, sizeof(h));
}

void nlb_nest_begin(struct nlb *b, uint16_t type)
{
	ck_assert_uint_lt(b->depth, NLB_MAXNEST);
	room(b, 4);
	b->nest[b->depth++] = b->len;
	put16(b->buf + b->len + 2, type);
	b->len += 4;
}

void nlb_nest_end(struct nlb *b)
{
	size_t start;

	ck_assert_uint_gt(b->depth, 0);
	start = b->nest[--b->depth];
	put16(b->buf + start, (uint16_t)(b->len - start));
}

size_t nlb_finish(struct nlb *b)
{
	ck_assert_uint_eq(b->depth, 0);
	put32(b->buf, (uint32_t)b->len);
	return b->len;
}

void *nlb_dup(const struct nlb *b, size_t len)
{
	void *m = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(m);
	memcpy(m, b->buf, len);
	return m;
}

void nlb_init_ipv4(struct nlb *b, uint16_t res_id, uint32_t id)
{
	nlb_init_packet(b, 2, res_id);
	nlb_pkt_hdr(b, id, 0x0800, 1);
}

void nlb_simple_packet(struct nlb *b, uint16_t res_id, uint32_t id,
		       size_t plen)
{
	uint8_t pl[256];
	size_t i;

	ck_assert_uint_le(plen, sizeof(pl));
	for (i = 0; i < plen; i++)
		pl[i] = (uint8_t)(0x40 + i);
	nlb_init_ipv4(b, res_id, id);
	if (plen)
		nlb_attr(b, 10, pl, plen);
	nlb_finish(b);
}
