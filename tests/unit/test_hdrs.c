// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The packet helpers (<libnfq-batch/packet.h>: lib/hdrs.c, lib/csum.c,
 * lib/mss.c, lib/mangle.c) on packets built here byte by byte:
 *
 * - checksums against known vectors (RFC 1071's example, a textbook IPv4
 *   header, RFC 1624's example) and against a one's complement sum of
 *   this file's own (16-bit words, folded at every step: another way than
 *   the library's), over the pseudo-header built here from the addresses
 *   the test put in, never from what the parser found;
 * - RFC 1624 updates equal a full computation, over many random changes;
 * - IPv4 and IPv6 with every extension header kind, fragments, routing
 *   headers (the final destination), VLAN-tagged Ethernet;
 * - every packet cut at every length, each cut in an exactly-sized
 *   malloc (AddressSanitizer sees a read past it): the parse fails with
 *   EBADMSG while a header is cut, else reports the cut;
 * - MSS clamping: SYN, SYN/ACK, no option, lower option, other flags,
 *   options before the MSS (odd offsets), malformed option lengths;
 * - nfqb_pkt_hdrs() at the hooks (the network offset, NFQA_L2HDR) and
 *   nfqb_verdict_payload() through a socketless queue: the verdict sent
 *   carries the payload with its checksums right.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <libnfq-batch/packet.h>

#include "testq.h"
#include "txhook.h"
#include "parse.h"
#include "nlbuild.h"
#include "../integration/harness.h"

#define QN		9
#define A_PAYLOAD	10	/* NFQA_PAYLOAD */
#define A_L2HDR		20	/* NFQA_L2HDR */
#define MAXPKT		2048

/* Addresses of the packets built here: the pseudo-header is made from
 * these, not from the packet. */
static const uint8_t src4[4] = { 192, 0, 2, 1 };
static const uint8_t dst4[4] = { 198, 51, 100, 2 };
static const uint8_t src6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };
static const uint8_t via6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 3 };
static const uint8_t fin6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 3, [15] = 4 };

/* --- building packets --------------------------------------------------- */

static void be16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static uint16_t rd16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static void be32(uint8_t *b, uint32_t v)
{
	be16(b, (uint16_t)(v >> 16));
	be16(b + 2, (uint16_t)v);
}

static void fill(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 3));
}

/* A TCP header with flags @fl and options @opt (@optlen, a multiple of
 * 4), then @dlen data bytes; the checksum field holds garbage. */
static size_t tcp_seg(uint8_t *b, uint8_t fl, const uint8_t *opt,
		      size_t optlen, size_t dlen)
{
	memset(b, 0, 20);
	be16(b, 40000);
	be16(b + 2, 80);
	be32(b + 4, 0x01020304);
	be32(b + 8, fl & 0x10 ? 0x0a0b0c0d : 0);
	b[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	b[13] = fl;
	be16(b + 14, 65535);
	be16(b + 16, 0xdead);
	memcpy(b + 20, opt, optlen);
	fill(b + 20 + optlen, dlen, 1);
	return 20 + optlen + dlen;
}

static size_t udp_dgram(uint8_t *b, size_t dlen)
{
	be16(b, 5353);
	be16(b + 2, 53);
	be16(b + 4, (uint16_t)(8 + dlen));
	be16(b + 6, 0xbeef);
	fill(b + 8, dlen, 2);
	return 8 + dlen;
}

static size_t icmp_msg(uint8_t *b, uint8_t type, size_t dlen)
{
	b[0] = type;
	b[1] = 0;
	be16(b + 2, 0xface);
	be32(b + 4, 0x00420001);
	fill(b + 8, dlen, 3);
	return 8 + dlen;
}

/* IPv4 header with @optlen bytes of options (NOPs and an EOL), protocol
 * @proto, fragment field @frag, @l4len bytes after it (not written). */
static size_t ipv4_hdr(uint8_t *b, size_t optlen, uint8_t proto,
		       uint16_t frag, size_t l4len)
{
	size_t ihl = 20 + optlen;

	b[0] = (uint8_t)(0x40 | ihl / 4);
	b[1] = 0;
	be16(b + 2, (uint16_t)(ihl + l4len));
	be16(b + 4, 0x1234);
	be16(b + 6, frag);
	b[8] = 64;
	b[9] = proto;
	be16(b + 10, 0x5555);
	memcpy(b + 12, src4, 4);
	memcpy(b + 16, dst4, 4);
	memset(b + 20, 1, optlen);
	if (optlen)
		b[ihl - 1] = 0;
	return ihl;
}

/* IPv6 header, next header @nh, @plen payload bytes after it. */
static size_t ipv6_hdr(uint8_t *b, uint8_t nh, size_t plen)
{
	be32(b, 0x60012345);
	be16(b + 4, (uint16_t)plen);
	b[6] = nh;
	b[7] = 64;
	memcpy(b + 8, src6, 16);
	memcpy(b + 24, dst6, 16);
	return 40;
}

/* The L4 part of a packet: @proto 6 (SYN+options), 17, 1 or 58. */
static size_t l4_part(uint8_t *b, uint8_t proto, size_t dlen)
{
	static const uint8_t mss_opt[4] = { 2, 4, 0x05, 0xb4 };

	switch (proto) {
	case IPPROTO_TCP:
		return tcp_seg(b, 0x02, mss_opt, 4, dlen);
	case IPPROTO_UDP:
		return udp_dgram(b, dlen);
	case IPPROTO_ICMP:
		return icmp_msg(b, 8, dlen);
	case IPPROTO_ICMPV6:
		return icmp_msg(b, 128, dlen);
	}
	fill(b, dlen, 4);
	return dlen;
}

static size_t pkt4(uint8_t *b, size_t optlen, uint8_t proto, size_t dlen)
{
	size_t ihl = 20 + optlen, n = l4_part(b + ihl, proto, dlen);

	ipv4_hdr(b, optlen, proto, 0, n);
	return ihl + n;
}

/* IPv6 with the extension headers @ext (@extlen bytes, the first of type
 * @nh, the last naming @proto), then the L4 part. */
static size_t pkt6(uint8_t *b, uint8_t nh, const uint8_t *ext, size_t extlen,
		   uint8_t proto, size_t dlen)
{
	size_t n;

	if (extlen)
		memcpy(b + 40, ext, extlen);
	n = l4_part(b + 40 + extlen, proto, dlen);
	ipv6_hdr(b, extlen ? nh : proto, extlen + n);
	return 40 + extlen + n;
}

/* --- an independent checksum -------------------------------------------- */

/* One's complement sum of 16-bit words, folded at every step. */
static uint32_t ref_sum(uint32_t s, const uint8_t *d, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		s += (uint32_t)d[i] << 8 | d[i + 1];
		s = (s & 0xffff) + (s >> 16);
	}
	if (n & 1) {
		s += (uint32_t)d[n - 1] << 8;
		s = (s & 0xffff) + (s >> 16);
	}
	return s;
}

/* Whether the L4 checksum of @l4 (@len bytes) verifies, with the
 * pseudo-header of @src/@dst (@alen bytes each) when @alen is not 0. */
static bool l4_verifies(const uint8_t *src, const uint8_t *dst, size_t alen,
			uint8_t proto, const uint8_t *l4, size_t len)
{
	uint8_t ph[40] = { 0 };
	size_t plen = 0;

	if (alen == 4) {
		memcpy(ph, src, 4);
		memcpy(ph + 4, dst, 4);
		ph[9] = proto;
		be16(ph + 10, (uint16_t)len);
		plen = 12;
	} else if (alen == 16) {
		memcpy(ph, src, 16);
		memcpy(ph + 16, dst, 16);
		be32(ph + 32, (uint32_t)len);
		ph[39] = proto;
		plen = 40;
	}
	return ref_sum(ref_sum(0, ph, plen), l4, len) == 0xffff;
}

static bool ipv4_hdr_verifies(const uint8_t *ip)
{
	return ref_sum(0, ip, (size_t)(ip[0] & 15) * 4) == 0xffff;
}

static struct nfqb_hdrs parse_ok(const uint8_t *b, size_t len,
				 unsigned int flags)
{
	struct nfqb_hdrs h;

	memset(&h, 0xee, sizeof(h));
	ck_assert_msg(nfqb_hdrs_parse(b, len, flags, &h, sizeof(h)) == 0,
		      "parse of %zu bytes: %s", len, strerror(errno));
	ck_assert_uint_eq(h.reserved, 0);
	return h;
}

static void parse_fails(const uint8_t *b, size_t len, unsigned int flags,
			int err)
{
	struct nfqb_hdrs h;

	errno = 0;
	ck_assert_int_eq(nfqb_hdrs_parse(b, len, flags, &h, sizeof(h)), -1);
	ck_assert_msg(errno == err, "errno %d (%s), expected %d", errno,
		      strerror(errno), err);
}

/* --- known vectors -------------------------------------------------------- */

START_TEST(test_vectors)
{
	/* RFC 1071, 3: the words 0001 f203 f4f5 f6f7 sum to ddf2 */
	static const uint8_t rfc1071[8] = {
		0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7,
	};
	/* an IPv4 header with its checksum b861 */
	static const uint8_t iph[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	uint8_t opt[24];

	ck_assert_uint_eq(nfqb_csum_ipv4_hdr(rfc1071, 8), 0x220d);
	ck_assert_uint_eq(nfqb_csum_ipv4_hdr(iph, 20), 0xb861);
	/* the field itself does not count */
	memcpy(opt, iph, 20);
	be16(opt + 10, 0x1234);
	ck_assert_uint_eq(nfqb_csum_ipv4_hdr(opt, 20), 0xb861);
	/* with options: IHL 6, one word more */
	opt[0] = 0x46;
	be16(opt + 2, 0x0077);
	memcpy(opt + 20, "\x01\x01\x01\x00", 4);
	be16(opt + 10, nfqb_csum_ipv4_hdr(opt, 24));
	ck_assert(ipv4_hdr_verifies(opt));
	/* RFC 1624, 4: HC 0xdd2f, m 0x5555 -> 0x3285: eqn. 3 gives 0x0000 */
	ck_assert_uint_eq(nfqb_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	/* nothing changed, nothing changes */
	ck_assert_uint_eq(nfqb_csum_update16(0xb861, 0x4011, 0x4011), 0xb861);
	ck_assert_uint_eq(nfqb_csum_update32(0xb861, 0xc0a80001, 0xc0a80001),
			  0xb861);
}
END_TEST

/* A TTL decrement on the textbook header: update equals recomputation. */
START_TEST(test_update_ttl)
{
	uint8_t h[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	uint16_t c = nfqb_csum_update16(0xb861, 0x4011, 0x3f11);

	h[8] = 0x3f;
	ck_assert_uint_eq(c, nfqb_csum_ipv4_hdr(h, 20));
	ck_assert_uint_eq(c, 0xb961);
}
END_TEST

/* --- full checksums of whole packets -------------------------------------- */

static void check_fixed(uint8_t *b, size_t len, size_t ihl_or_ext,
			uint8_t proto, bool v6, const uint8_t *dst)
{
	struct nfqb_hdrs h = parse_ok(b, len, 0);
	size_t l4 = v6 ? 40 + ihl_or_ext : ihl_or_ext;

	ck_assert_uint_eq(h.l4_off, l4);
	ck_assert_uint_eq(h.l4_proto, proto);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	if (!v6)
		ck_assert(ipv4_hdr_verifies(b));
	if (proto == IPPROTO_ICMP)
		ck_assert(l4_verifies(NULL, NULL, 0, proto, b + l4, len - l4));
	else
		ck_assert(l4_verifies(v6 ? src6 : src4, dst, v6 ? 16 : 4,
				      proto, b + l4, len - l4));
}

static const struct {
	uint8_t proto;
	size_t optlen, dlen;
} full4[] = {
	{ IPPROTO_TCP, 0, 0 }, { IPPROTO_TCP, 0, 1 }, { IPPROTO_TCP, 4, 100 },
	{ IPPROTO_TCP, 40, 1001 }, { IPPROTO_UDP, 0, 0 },
	{ IPPROTO_UDP, 0, 33 }, { IPPROTO_UDP, 8, 1400 },
	{ IPPROTO_ICMP, 0, 56 }, { IPPROTO_ICMP, 4, 7 },
};
#define N_FULL4 (sizeof(full4) / sizeof(full4[0]))

START_TEST(test_fix_ipv4)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, full4[_i].optlen, full4[_i].proto,
			  full4[_i].dlen);

	check_fixed(b, len, 20 + full4[_i].optlen, full4[_i].proto, false,
		    dst4);
	/* again: still right, nothing moves */
	check_fixed(b, len, 20 + full4[_i].optlen, full4[_i].proto, false,
		    dst4);
}
END_TEST

static const struct {
	uint8_t proto;
	size_t dlen;
} full6[] = {
	{ IPPROTO_TCP, 0 }, { IPPROTO_TCP, 1 }, { IPPROTO_TCP, 1200 },
	{ IPPROTO_UDP, 0 }, { IPPROTO_UDP, 17 }, { IPPROTO_UDP, 1452 },
	{ IPPROTO_ICMPV6, 0 }, { IPPROTO_ICMPV6, 57 },
};
#define N_FULL6 (sizeof(full6) / sizeof(full6[0]))

START_TEST(test_fix_ipv6)
{
	uint8_t b[MAXPKT];
	size_t len = pkt6(b, 0, NULL, 0, full6[_i].proto, full6[_i].dlen);

	check_fixed(b, len, 0, full6[_i].proto, true, dst6);
}
END_TEST

/* UDP: 0 over IPv4 means none and stays; a sum of 0 goes out as ffff. */
START_TEST(test_udp_zero)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_UDP, 20);
	struct nfqb_hdrs h = parse_ok(b, len, 0);
	uint32_t s;
	uint16_t c, w;

	be16(b + 26, 0);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert_uint_eq(rd16(b + 26), 0);
	ck_assert(ipv4_hdr_verifies(b));

	/* IPv6 and IPv4: make the sum come to 0 by adding the checksum to
	 * a data word (one's complement addition) */
	for (int v6 = 0; v6 < 2; v6++) {
		size_t l4 = v6 ? 40 : 20;

		len = v6 ? pkt6(b, 0, NULL, 0, IPPROTO_UDP, 20) :
			   pkt4(b, 0, IPPROTO_UDP, 20);
		h = parse_ok(b, len, 0);
		ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
		c = rd16(b + l4 + 6);
		w = rd16(b + l4 + 8);
		s = (uint32_t)w + c;
		s = (s & 0xffff) + (s >> 16);
		be16(b + l4 + 8, (uint16_t)s);
		ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
		ck_assert_uint_eq(rd16(b + l4 + 6), 0xffff);
		ck_assert(l4_verifies(v6 ? src6 : src4, v6 ? dst6 : dst4,
				      v6 ? 16 : 4, IPPROTO_UDP, b + l4,
				      len - l4));
	}
}
END_TEST

/* UDP's own length decides what its checksum covers; past the packet it
 * is refused, and so is a cut packet, with nothing written. */
START_TEST(test_fix_lengths)
{
	uint8_t b[MAXPKT], was[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_UDP, 40);
	struct nfqb_hdrs h = parse_ok(b, len, 0);

	/* padding after the datagram inside the IP packet */
	be16(b + 24, 8 + 30);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src4, dst4, 4, IPPROTO_UDP, b + 20, 38));

	memcpy(was, b, len);
	be16(b + 24, 8 + 41);
	memcpy(was + 24, b + 24, 2);
	errno = 0;
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), -1);
	ck_assert_int_eq(errno, EBADMSG);
	be16(b + 24, 7);
	memcpy(was + 24, b + 24, 2);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_mem_eq(b, was, len);

	/* cut: the parse says so, the fix refuses */
	len = pkt4(b, 0, IPPROTO_TCP, 100);
	h = parse_ok(b, len - 10, 0);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_CUT);
	ck_assert_uint_eq(h.l4_len, len - 10 - 20);
	ck_assert_int_eq(nfqb_csum_fix(b, len - 10, &h), -1);
	ck_assert_int_eq(errno, EBADMSG);
	/* a buffer longer than the packet (Ethernet padding) is fine */
	memset(b + len, 0xaa, 10);
	h = parse_ok(b, len + 10, 0);
	ck_assert_uint_eq(h.flags, 0);
	ck_assert_uint_eq(h.l4_len, len - 20);
	ck_assert_int_eq(nfqb_csum_fix(b, len + 10, &h), 0);
	ck_assert(l4_verifies(src4, dst4, 4, IPPROTO_TCP, b + 20, len - 20));
}
END_TEST

/* --- RFC 1624 against full computation ------------------------------------ */

static uint32_t rng_state = 0x2545f491u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static uint16_t swab16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/* Change a random 16- or 32-bit field of a TCP segment (not its
 * checksum), update the checksum, compare with a full computation. */
static void one_random_change(bool v6)
{
	uint8_t b[MAXPKT], ref[MAXPKT];
	size_t len = v6 ? pkt6(b, 0, NULL, 0, IPPROTO_TCP, rng() % 300) :
			  pkt4(b, 4 * (rng() % 3), IPPROTO_TCP, rng() % 300);
	struct nfqb_hdrs h = parse_ok(b, len, 0);
	size_t at, l4 = h.l4_off;
	uint16_t c, from, to;
	bool wide = rng() & 1;

	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	do
		at = l4 + rng() % (len - l4 - (wide ? 3 : 1));
	while (at + (wide ? 4 : 2) > l4 + 16 && at < l4 + 18);
	c = rd16(b + l4 + 16);
	if (wide && !((at - l4) & 1)) {
		uint32_t f32 = (uint32_t)rd16(b + at) << 16 | rd16(b + at + 2);
		uint32_t t32 = rng();

		be32(b + at, t32);
		c = nfqb_csum_update32(c, f32, t32);
	} else {
		from = rd16(b + at);
		to = (uint16_t)rng();
		be16(b + at, to);
		if ((at - l4) & 1)	/* an odd offset: byte-swapped */
			c = nfqb_csum_update16(c, swab16(from), swab16(to));
		else
			c = nfqb_csum_update16(c, from, to);
	}
	memcpy(ref, b, len);
	ck_assert_int_eq(nfqb_csum_fix(ref, len, &h), 0);
	ck_assert_msg(c == rd16(ref + l4 + 16),
		      "at %zu: updated %04x, computed %04x", at - l4, c,
		      rd16(ref + l4 + 16));
}

START_TEST(test_update_random)
{
	unsigned int i;

	for (i = 0; i < 20000; i++)
		one_random_change(i & 1);
}
END_TEST

/* IPv4 header fields: an address (32 bits), TTL and protocol. */
START_TEST(test_update_ipv4_random)
{
	uint8_t b[MAXPKT];
	unsigned int i;

	for (i = 0; i < 5000; i++) {
		size_t len = pkt4(b, 4 * (i % 4), IPPROTO_UDP, i % 50);
		uint16_t c = nfqb_csum_ipv4_hdr(b, 20 + 4 * (i % 4));
		uint32_t to = rng();
		uint16_t t16 = (uint16_t)rng();
		size_t a = (i & 1) ? 12 : 16;
		uint32_t from = (uint32_t)rd16(b + a) << 16 | rd16(b + a + 2);

		(void)len;
		be32(b + a, to);
		c = nfqb_csum_update32(c, from, to);
		ck_assert_uint_eq(c, nfqb_csum_ipv4_hdr(b, 20 + 4 * (i % 4)));
		c = nfqb_csum_update16(c, rd16(b + 8), t16);
		be16(b + 8, t16);
		ck_assert_uint_eq(c, nfqb_csum_ipv4_hdr(b, 20 + 4 * (i % 4)));
	}
}
END_TEST

/* --- what the parser finds ------------------------------------------------ */

START_TEST(test_parse_ipv4)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 8, IPPROTO_TCP, 10);
	struct nfqb_hdrs h = parse_ok(b, len, 0);

	ck_assert_uint_eq(h.l3_proto, 0x0800);
	ck_assert_uint_eq(h.l3_off, 0);
	ck_assert_uint_eq(h.l3_len, 28);
	ck_assert_uint_eq(h.ip_len, len);
	ck_assert_uint_eq(h.l4_off, 28);
	ck_assert_uint_eq(h.l4_proto, IPPROTO_TCP);
	ck_assert_uint_eq(h.l4_hdr_len, 24);
	ck_assert_uint_eq(h.l4_len, len - 28);
	ck_assert_uint_eq(h.payload_off, 52);
	ck_assert_uint_eq(h.payload_len, 10);
	ck_assert_uint_eq(h.dst_off, 16);
	ck_assert_uint_eq(h.flags, 0);

	/* another protocol: no L4 header known */
	len = pkt4(b, 0, 47, 30);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l4_proto, 47);
	ck_assert_uint_eq(h.l4_hdr_len, 0);
	ck_assert_uint_eq(h.payload_off, 20);
	ck_assert_uint_eq(h.payload_len, 30);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(ipv4_hdr_verifies(b));
	/* ICMPv6 over IPv4 is not ICMP: unknown too */
	len = pkt4(b, 0, IPPROTO_ICMPV6, 30);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l4_hdr_len, 0);
}
END_TEST

START_TEST(test_parse_ipv4_frag)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_UDP, 100);
	struct nfqb_hdrs h;

	/* the first fragment: more fragments, offset 0 */
	be16(b + 6, 0x2000);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_FRAG);
	ck_assert_uint_eq(h.l4_hdr_len, 8);
	/* only the IP header checksum: the UDP one covers the datagram */
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(ipv4_hdr_verifies(b));
	ck_assert_uint_eq(rd16(b + 26), 0xbeef);
	/* a later one: no L4 header */
	be16(b + 6, 0x0010);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_FRAG | NFQB_HDRS_F_LATER);
	ck_assert_uint_eq(h.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(h.l4_hdr_len, 0);
	ck_assert_uint_eq(h.payload_off, 20);
	ck_assert_uint_eq(h.payload_len, len - 20);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(ipv4_hdr_verifies(b));
	ck_assert_uint_eq(rd16(b + 26), 0xbeef);
	/* a later fragment needs no L4 header at all */
	be16(b + 2, 24);
	h = parse_ok(b, 24, 0);
	ck_assert_uint_eq(h.l4_len, 4);
	/* DF alone is no fragment */
	be16(b + 2, (uint16_t)len);
	be16(b + 6, 0x4000);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, 0);
}
END_TEST

START_TEST(test_parse_bad)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_TCP, 10);

	b[0] = 0x44;			/* IHL 4 */
	parse_fails(b, len, 0, EBADMSG);
	b[0] = 0x4f;			/* IHL 15: past the packet */
	parse_fails(b, len, 0, EBADMSG);
	b[0] = 0x45;
	be16(b + 2, 19);		/* total length under the header */
	parse_fails(b, len, 0, EBADMSG);
	be16(b + 2, 39);		/* TCP header past the total length */
	parse_fails(b, len, 0, EBADMSG);
	be16(b + 2, (uint16_t)len);
	b[32] = 0x40;			/* data offset 4 */
	parse_fails(b, len, 0, EBADMSG);
	b[32] = 0xf0;			/* data offset 15: past the packet */
	parse_fails(b, len, 0, EBADMSG);
	b[0] = 0x55;			/* version 5 */
	parse_fails(b, len, 0, EPROTONOSUPPORT);
	b[0] = 0x05;
	parse_fails(b, len, 0, EPROTONOSUPPORT);
	parse_fails(b, 0, 0, EBADMSG);
	/* UDP cut inside its header by the IP length */
	len = pkt4(b, 0, IPPROTO_UDP, 10);
	be16(b + 2, 27);
	parse_fails(b, len, 0, EBADMSG);
	/* IPv6 payload length too short for the TCP header */
	len = pkt6(b, 0, NULL, 0, IPPROTO_TCP, 0);
	be16(b + 4, 19);
	parse_fails(b, len, 0, EBADMSG);
	b[0] = 0x40;			/* version 4 with an IPv6 body */
	b[4] = 0;
	parse_fails(b, len, 0, EBADMSG);
}
END_TEST

START_TEST(test_parse_args)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_UDP, 10);
	struct {
		struct nfqb_hdrs h;
		uint8_t more[12];
	} big;

	errno = 0;
	ck_assert_int_eq(nfqb_hdrs_parse(NULL, len, 0, &big.h, sizeof(big.h)),
			 -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_hdrs_parse(b, len, 0, NULL, sizeof(big.h)), -1);
	ck_assert_int_eq(nfqb_hdrs_parse(b, len, 2, &big.h, sizeof(big.h)), -1);
	ck_assert_int_eq(nfqb_hdrs_parse(b, len, 0, &big.h,
					 sizeof(big.h) - 4), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* a larger struct: zeroed past ours */
	memset(&big, 0xee, sizeof(big));
	ck_assert_int_eq(nfqb_hdrs_parse(b, len, 0, &big.h, sizeof(big)), 0);
	ck_assert_uint_eq(big.h.l4_hdr_len, 8);
	for (size_t i = 0; i < sizeof(big.more); i++)
		ck_assert_uint_eq(big.more[i], 0);
	/* the checksum helpers refuse a struct that does not fit */
	big.h.l4_off = 1000;
	ck_assert_int_eq(nfqb_csum_fix(b, len, &big.h), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &big.h, 1000), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_csum_fix(NULL, len, &big.h), -1);
	ck_assert_int_eq(nfqb_csum_fix(b, len, NULL), -1);
	ck_assert_int_eq(nfqb_tcp_mss_clamp(NULL, len, &big.h, 1), -1);
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, NULL, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(nfqb_csum_ipv4_hdr(NULL, 20), 0xffff);
}
END_TEST

/* Random structs given back to the fix and the clamp: never outside the
 * buffer (ASan), refused or done. */
START_TEST(test_random_hdrs)
{
	uint8_t b[MAXPKT];
	size_t len = pkt6(b, 0, NULL, 0, IPPROTO_TCP, 60);
	unsigned int i;

	for (i = 0; i < 100000; i++) {
		struct nfqb_hdrs h = parse_ok(b, len, 0);
		uint32_t *fields[] = {
			&h.l3_off, &h.l3_len, &h.ip_len, &h.l4_off,
			&h.l4_hdr_len, &h.l4_len, &h.payload_off,
			&h.payload_len, &h.dst_off, &h.flags,
		};
		uint8_t *m = malloc(len);

		ck_assert_ptr_nonnull(m);
		memcpy(m, b, len);
		*fields[rng() % 10] = rng() % 128;
		if (i & 1)
			*fields[rng() % 10] = rng() % 128;
		if (i & 2)
			h.l4_proto = (uint8_t[]){ 1, 6, 17, 58 }[rng() % 4];
		if (i % 7 == 0)
			h.l3_proto = 0x0800;
		nfqb_csum_fix(m, len, &h);
		nfqb_tcp_mss_clamp(m, len, &h, 100);
		free(m);
	}
}
END_TEST

/* --- IPv6 extension headers ------------------------------------------------ */

/* An extension header of @len bytes (a multiple of 8) naming @nh next:
 * options (PadN) or, for a fragment header, its 8 bytes. */
static size_t ext_opts(uint8_t *x, uint8_t nh, size_t len)
{
	memset(x, 0, len);
	x[0] = nh;
	x[1] = (uint8_t)(len / 8 - 1);
	x[2] = 1;			/* PadN */
	x[3] = (uint8_t)(len - 4);
	return len;
}

static size_t ext_frag(uint8_t *x, uint8_t nh, uint16_t off8, bool more)
{
	memset(x, 0, 8);
	x[0] = nh;
	be16(x + 2, (uint16_t)(off8 << 3 | more));
	be32(x + 4, 0xabcdef01);
	return 8;
}

static size_t ext_ah(uint8_t *x, uint8_t nh, size_t len)
{
	memset(x, 0x5a, len);
	x[0] = nh;
	x[1] = (uint8_t)(len / 4 - 2);
	x[2] = x[3] = 0;
	return len;
}

/* A routing header of @type with @n addresses (the last @last), @left
 * segments left. */
static size_t ext_route(uint8_t *x, uint8_t nh, uint8_t type, unsigned int n,
			uint8_t left, const uint8_t *last)
{
	unsigned int i;

	memset(x, 0, 8);
	x[0] = nh;
	x[1] = (uint8_t)(2 * n);
	x[2] = type;
	x[3] = left;
	for (i = 0; i < n; i++)
		memcpy(x + 8 + 16 * i, i + 1 == n ? last : via6, 16);
	return 8 + 16 * n;
}

START_TEST(test_ipv6_chain)
{
	uint8_t b[MAXPKT], ext[512];
	size_t n = 0, len, hbh, dst, rt, fr, ah, dst2;
	struct nfqb_hdrs h;

	hbh = n;
	n += ext_opts(ext + n, IPPROTO_DSTOPTS, 8);
	dst = n;
	n += ext_opts(ext + n, IPPROTO_ROUTING, 16);
	rt = n;
	n += ext_route(ext + n, IPPROTO_FRAGMENT, 0, 2, 1, fin6);
	fr = n;
	n += ext_frag(ext + n, IPPROTO_AH, 0, true);
	ah = n;
	n += ext_ah(ext + n, IPPROTO_DSTOPTS, 24);
	dst2 = n;
	n += ext_opts(ext + n, IPPROTO_UDP, 24);
	(void)hbh;
	(void)dst;
	(void)fr;
	(void)ah;
	(void)dst2;
	len = pkt6(b, IPPROTO_HOPOPTS, ext, n, IPPROTO_UDP, 99);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l3_proto, 0x86dd);
	ck_assert_uint_eq(h.l3_len, 40 + n);
	ck_assert_uint_eq(h.l4_off, 40 + n);
	ck_assert_uint_eq(h.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(h.l4_hdr_len, 8);
	ck_assert_uint_eq(h.payload_len, 99);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_FRAG);
	/* the routing header's last address */
	ck_assert_uint_eq(h.dst_off, 40 + rt + 8 + 16);
	ck_assert_mem_eq(b + h.dst_off, fin6, 16);

	/* hop-by-hop anywhere but first is refused */
	b[6] = IPPROTO_DSTOPTS;
	ext_opts(b + 40, IPPROTO_HOPOPTS, 8);
	parse_fails(b, len, 0, EBADMSG);
}
END_TEST

/* The pseudo-header's destination is the final one. */
static const struct {
	uint8_t type;
	unsigned int n;
	uint8_t left;
	bool known;	/* the library finds it (else dst_off 0) */
	bool last;	/* it is the header's last address, else dst6 */
} routes[] = {
	{ 0, 2, 1, true, true },	/* type 0: the last address */
	{ 0, 3, 3, true, true },
	{ 2, 1, 1, true, true },	/* Mobile IPv6: the home address */
	{ 0, 2, 0, true, false },	/* no segment left: the header's */
	{ 3, 2, 0, true, false },
	{ 3, 2, 1, false, false },	/* RPL: not readable here */
	{ 9, 1, 1, false, false },
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

START_TEST(test_ipv6_routing)
{
	uint8_t b[MAXPKT], ext[128], was[MAXPKT];
	size_t n = ext_route(ext, IPPROTO_TCP, routes[_i].type, routes[_i].n,
			     routes[_i].left, fin6);
	size_t len = pkt6(b, IPPROTO_ROUTING, ext, n, IPPROTO_TCP, 31);
	struct nfqb_hdrs h = parse_ok(b, len, 0);

	if (!routes[_i].known) {
		ck_assert_uint_eq(h.dst_off, 0);
		memcpy(was, b, len);
		errno = 0;
		ck_assert_int_eq(nfqb_csum_fix(b, len, &h), -1);
		ck_assert_int_eq(errno, EPROTONOSUPPORT);
		ck_assert_mem_eq(b, was, len);
		return;
	}
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src6, routes[_i].last ? fin6 : dst6, 16,
			      IPPROTO_TCP, b + h.l4_off, len - h.l4_off));
}
END_TEST

/* Segment routing: segment list[0] is the final destination. */
START_TEST(test_ipv6_srh)
{
	uint8_t b[MAXPKT], ext[128];
	size_t len, n = 8 + 32;
	struct nfqb_hdrs h;

	memset(ext, 0, n);
	ext[0] = IPPROTO_UDP;
	ext[1] = 4;
	ext[2] = 4;
	ext[3] = 1;			/* segments left */
	ext[4] = 1;			/* last entry */
	memcpy(ext + 8, fin6, 16);	/* list[0]: the final one */
	memcpy(ext + 24, via6, 16);
	len = pkt6(b, IPPROTO_ROUTING, ext, n, IPPROTO_UDP, 50);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.dst_off, 48);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src6, fin6, 16, IPPROTO_UDP, b + h.l4_off,
			      len - h.l4_off));
}
END_TEST

START_TEST(test_ipv6_frag)
{
	uint8_t b[MAXPKT], ext[16];
	size_t len;
	struct nfqb_hdrs h;

	/* a later fragment: its next header is the L4 protocol */
	ext_frag(ext, IPPROTO_TCP, 100, true);
	len = pkt6(b, IPPROTO_FRAGMENT, ext, 8, 200, 64);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_FRAG | NFQB_HDRS_F_LATER);
	ck_assert_uint_eq(h.l4_proto, IPPROTO_TCP);
	ck_assert_uint_eq(h.l3_len, 48);
	ck_assert_uint_eq(h.l4_hdr_len, 0);
	ck_assert_uint_eq(h.payload_len, 64);
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &h, 100), 0);
	/* the last one (no more fragments) is a later one too */
	ext_frag(ext, IPPROTO_TCP, 100, false);
	len = pkt6(b, IPPROTO_FRAGMENT, ext, 8, 200, 64);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, NFQB_HDRS_F_FRAG | NFQB_HDRS_F_LATER);
	/* an atomic fragment (offset 0, no more) is the whole datagram */
	ext_frag(ext, IPPROTO_UDP, 0, false);
	len = pkt6(b, IPPROTO_FRAGMENT, ext, 8, IPPROTO_UDP, 64);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.flags, 0);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src6, dst6, 16, IPPROTO_UDP, b + 48, len - 48));
}
END_TEST

START_TEST(test_ipv6_ah_icmp)
{
	uint8_t b[MAXPKT], ext[64];
	size_t len;
	struct nfqb_hdrs h;

	ext_ah(ext, IPPROTO_ICMPV6, 16);
	len = pkt6(b, IPPROTO_AH, ext, 16, IPPROTO_ICMPV6, 40);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l3_len, 56);
	ck_assert_uint_eq(h.l4_proto, IPPROTO_ICMPV6);
	ck_assert_uint_eq(h.l4_hdr_len, 8);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src6, dst6, 16, IPPROTO_ICMPV6, b + 56,
			      len - 56));
	/* ICMP (v4) over IPv6 is unknown: left alone */
	len = pkt6(b, 0, NULL, 0, IPPROTO_ICMP, 40);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l4_hdr_len, 0);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert_uint_eq(rd16(b + 42), 0xface);
	/* no next header */
	len = pkt6(b, 0, NULL, 0, 59, 0);
	h = parse_ok(b, len, 0);
	ck_assert_uint_eq(h.l4_proto, 59);
	ck_assert_uint_eq(h.l4_len, 0);
}
END_TEST

/* --- cut at every length -------------------------------------------------- */

/* Every packet the tests build, to be cut. */
static size_t cut_pkt(unsigned int i, uint8_t *b, unsigned int *flags)
{
	uint8_t ext[256];
	size_t n = 0;

	*flags = 0;
	switch (i) {
	case 0: return pkt4(b, 0, IPPROTO_TCP, 20);
	case 1: return pkt4(b, 12, IPPROTO_UDP, 9);
	case 2: return pkt4(b, 4, IPPROTO_ICMP, 3);
	case 3: return pkt6(b, 0, NULL, 0, IPPROTO_TCP, 5);
	case 4: return pkt6(b, 0, NULL, 0, IPPROTO_ICMPV6, 0);
	case 5:
		n += ext_opts(ext + n, IPPROTO_ROUTING, 16);
		n += ext_route(ext + n, IPPROTO_FRAGMENT, 0, 2, 1, fin6);
		n += ext_frag(ext + n, IPPROTO_AH, 0, true);
		n += ext_ah(ext + n, IPPROTO_DSTOPTS, 12);
		n += ext_opts(ext + n, IPPROTO_TCP, 8);
		return pkt6(b, IPPROTO_HOPOPTS, ext, n, IPPROTO_TCP, 7);
	case 6:
		ext_frag(ext, IPPROTO_UDP, 3, false);
		return pkt6(b, IPPROTO_FRAGMENT, ext, 8, 200, 11);
	}
	/* Ethernet, 802.1ad and 802.1Q tags, IPv4/TCP */
	*flags = NFQB_HDRS_L2;
	memset(b, 0x11, 12);
	be16(b + 12, 0x88a8);
	be16(b + 14, 0x0064);
	be16(b + 16, 0x8100);
	be16(b + 18, 0x00c8);
	be16(b + 20, 0x0800);
	return 22 + pkt4(b + 22, 0, IPPROTO_TCP, 10);
}
#define N_CUT 8

START_TEST(test_cut_everywhere)
{
	uint8_t b[MAXPKT];
	unsigned int flags;
	size_t full = cut_pkt((unsigned int)_i, b, &flags), len;
	struct nfqb_hdrs whole = parse_ok(b, full, flags), h;

	for (len = 0; len < full; len++) {
		uint8_t *m = malloc(len ? len : 1);
		int r;

		ck_assert_ptr_nonnull(m);
		memcpy(m, b, len);
		errno = 0;
		r = nfqb_hdrs_parse(m, len, flags, &h, sizeof(h));
		if (len < whole.payload_off) {
			ck_assert_msg(r == -1 && errno == EBADMSG,
				      "packet %d cut at %zu of %zu: %d, %s",
				      _i, len, full, r, strerror(errno));
		} else {
			ck_assert_msg(r == 0, "packet %d cut at %zu: %s", _i,
				      len, strerror(errno));
			ck_assert(h.flags & NFQB_HDRS_F_CUT);
			ck_assert_uint_eq(h.payload_off, whole.payload_off);
			ck_assert_uint_le(h.payload_off + h.payload_len, len);
			ck_assert_uint_eq(h.l4_off + h.l4_len, len);
			/* the fix refuses (or, a fragment, leaves L4) */
			nfqb_csum_fix(m, len, &h);
			nfqb_tcp_mss_clamp(m, len, &h, 1000);
		}
		free(m);
	}
}
END_TEST

/* --- Ethernet ---------------------------------------------------------- */

START_TEST(test_l2)
{
	uint8_t b[MAXPKT];
	size_t len, n;
	struct nfqb_hdrs h;

	memset(b, 0x22, 12);
	be16(b + 12, 0x86dd);
	len = 14 + pkt6(b + 14, 0, NULL, 0, IPPROTO_UDP, 30);
	h = parse_ok(b, len, NFQB_HDRS_L2);
	ck_assert_uint_eq(h.l3_off, 14);
	ck_assert_uint_eq(h.l3_proto, 0x86dd);
	ck_assert_uint_eq(h.l4_off, 54);
	ck_assert_uint_eq(h.dst_off, 14 + 24);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(l4_verifies(src6, dst6, 16, IPPROTO_UDP, b + 54, len - 54));

	/* one 802.1Q tag, IPv4, and padding after the IP packet */
	be16(b + 12, 0x8100);
	be16(b + 14, 0x2005);
	be16(b + 16, 0x0800);
	n = pkt4(b + 18, 0, IPPROTO_UDP, 2);
	memset(b + 18 + n, 0, 20);
	len = 18 + n + 20;
	h = parse_ok(b, len, NFQB_HDRS_L2);
	ck_assert_uint_eq(h.l3_off, 18);
	ck_assert_uint_eq(h.ip_len, n);
	ck_assert_uint_eq(h.l4_len, n - 20);
	ck_assert_uint_eq(h.flags, 0);
	ck_assert_int_eq(nfqb_csum_fix(b, len, &h), 0);
	ck_assert(ipv4_hdr_verifies(b + 18));
	ck_assert(l4_verifies(src4, dst4, 4, IPPROTO_UDP, b + 38, n - 20));

	/* not IP after the tags: ARP; an EtherType that lies */
	be16(b + 16, 0x0806);
	parse_fails(b, len, NFQB_HDRS_L2, EPROTONOSUPPORT);
	be16(b + 16, 0x86dd);
	parse_fails(b, len, NFQB_HDRS_L2, EBADMSG);
	/* tags up to the end */
	for (n = 12; n < 40; n += 4) {
		be16(b + n, 0x8100);
		be16(b + n + 2, 1);
	}
	parse_fails(b, 40, NFQB_HDRS_L2, EBADMSG);
	parse_fails(b, 13, NFQB_HDRS_L2, EBADMSG);
}
END_TEST

/* --- MSS clamping ---------------------------------------------------------- */

/* A SYN (flags @fl) over IPv4 or IPv6 with the options @opt, its
 * checksum right; returns the length, the headers in *@h. */
static size_t syn(uint8_t *b, bool v6, uint8_t fl, const uint8_t *opt,
		  size_t optlen, struct nfqb_hdrs *h)
{
	size_t l3 = v6 ? 40 : 20;
	size_t n = tcp_seg(b + l3, fl, opt, optlen, 0);

	if (v6)
		ipv6_hdr(b, IPPROTO_TCP, n);
	else
		ipv4_hdr(b, 0, IPPROTO_TCP, 0, n);
	*h = parse_ok(b, l3 + n, 0);
	ck_assert_int_eq(nfqb_csum_fix(b, l3 + n, h), 0);
	return l3 + n;
}

static const struct {
	const char *name;
	uint8_t fl;
	uint8_t opt[40];
	size_t optlen;
	int ret;		/* of nfqb_tcp_mss_clamp(..., 1000) */
	size_t mss_at;		/* where the (first) value is, from opt */
} clamps[] = {
	{ "syn", 0x02, { 2, 4, 0x05, 0xb4 }, 4, 1, 2 },
	{ "syn-ack", 0x12, { 2, 4, 0x05, 0xb4 }, 4, 1, 2 },
	{ "syn-ecn", 0xc2, { 2, 4, 0xff, 0xff }, 4, 1, 2 },
	{ "lower", 0x02, { 2, 4, 0x02, 0x18 }, 4, 0, 0 },
	{ "equal", 0x02, { 2, 4, 0x03, 0xe8 }, 4, 0, 0 },
	{ "no-option", 0x02, { 0 }, 0, 0, 0 },
	{ "other-options", 0x02, { 1, 3, 3, 7, 4, 2, 1, 1 }, 8, 0, 0 },
	{ "ack", 0x10, { 2, 4, 0x05, 0xb4 }, 4, 0, 0 },
	{ "rst", 0x04, { 2, 4, 0x05, 0xb4 }, 4, 0, 0 },
	{ "fin-ack", 0x11, { 2, 4, 0x05, 0xb4 }, 4, 0, 0 },
	/* MSS after NOPs and others, at odd offsets too */
	{ "nop-mss", 0x02, { 1, 2, 4, 0x21, 0x00, 1, 1, 1 }, 8, 1, 3 },
	{ "linux-syn", 0x02, { 2, 4, 0xff, 0xd7, 4, 2, 8, 10, 0, 0, 0, 1, 0,
			       0, 0, 0, 1, 3, 3, 7 }, 20, 1, 2 },
	{ "wscale-mss", 0x12, { 3, 3, 7, 2, 4, 0x40, 0x00, 0 }, 8, 1, 5 },
	{ "sack-ts-mss", 0x02, { 4, 2, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 2, 4,
				 0x23, 0x28 }, 16, 1, 14 },
	{ "two-mss", 0x02, { 2, 4, 0x05, 0xb4, 2, 4, 0x23, 0x28 }, 8, 1, 2 },
	/* after EOL nothing counts, not even bad lengths */
	{ "eol", 0x02, { 2, 4, 0x05, 0xb4, 0, 9, 9, 9 }, 8, 1, 2 },
	{ "after-eol", 0x02, { 0, 2, 4, 0x05, 0xb4, 0, 0, 0 }, 8, 0, 0 },
	/* malformed: refused, nothing written */
	{ "len-0", 0x02, { 8, 0, 2, 4, 0x05, 0xb4, 0, 0 }, 8, -1, 0 },
	{ "len-1", 0x02, { 8, 1, 2, 4, 0x05, 0xb4, 0, 0 }, 8, -1, 0 },
	{ "len-past", 0x02, { 2, 4, 0x05, 0xb4, 8, 9, 0, 0 }, 8, -1, 0 },
	{ "mss-len-3", 0x02, { 2, 3, 0x05, 0xb4 }, 4, -1, 0 },
	{ "mss-len-6", 0x02, { 2, 6, 0x05, 0xb4, 0, 0, 0, 0 }, 8, -1, 0 },
	{ "kind-last", 0x02, { 1, 1, 1, 8 }, 4, -1, 0 },
	{ "mss-cut", 0x02, { 1, 1, 2, 4 }, 4, -1, 0 },
};
#define N_CLAMPS (sizeof(clamps) / sizeof(clamps[0]))

static void clamp_case(unsigned int i, bool v6)
{
	uint8_t b[MAXPKT], was[MAXPKT], ref[MAXPKT];
	struct nfqb_hdrs h;
	size_t len = syn(b, v6, clamps[i].fl, clamps[i].opt, clamps[i].optlen,
			 &h);
	size_t l4 = h.l4_off;
	int r;

	memcpy(was, b, len);
	errno = 0;
	r = nfqb_tcp_mss_clamp(b, len, &h, 1000);
	ck_assert_msg(r == clamps[i].ret, "%s (%s): %d, expected %d (%s)",
		      clamps[i].name, v6 ? "IPv6" : "IPv4", r, clamps[i].ret,
		      strerror(errno));
	if (r <= 0) {
		if (r < 0)
			ck_assert_int_eq(errno, EBADMSG);
		ck_assert_mem_eq(b, was, len);
		return;
	}
	ck_assert_uint_eq(rd16(b + l4 + 20 + clamps[i].mss_at), 1000);
	/* the update equals the full computation, and verifies */
	memcpy(ref, b, len);
	ck_assert_int_eq(nfqb_csum_fix(ref, len, &h), 0);
	ck_assert_mem_eq(b, ref, len);
	ck_assert(l4_verifies(v6 ? src6 : src4, v6 ? dst6 : dst4,
			      v6 ? 16 : 4, IPPROTO_TCP, b + l4, len - l4));
	/* again: nothing to do */
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &h, 1000), 0);
}

START_TEST(test_mss_clamp)
{
	clamp_case((unsigned int)_i, false);
	clamp_case((unsigned int)_i, true);
}
END_TEST

START_TEST(test_mss_not_tcp)
{
	uint8_t b[MAXPKT];
	size_t len = pkt4(b, 0, IPPROTO_UDP, 10);
	struct nfqb_hdrs h = parse_ok(b, len, 0);

	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &h, 1), 0);
	/* a TCP later fragment: no header to clamp */
	len = pkt4(b, 0, IPPROTO_TCP, 10);
	be16(b + 6, 0x0004);
	h = parse_ok(b, len, 0);
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &h, 1), 0);
	/* a TCP header claimed shorter than 20 */
	be16(b + 6, 0);
	h = parse_ok(b, len, 0);
	h.l4_hdr_len = 8;
	errno = 0;
	ck_assert_int_eq(nfqb_tcp_mss_clamp(b, len, &h, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* --- a queue's packets ------------------------------------------------------ */

/* A packet descriptor parsed from a crafted message (no queue). */
struct parsed {
	void *mem;
	struct nfqb_packet p;
};

static void parse_msg(struct parsed *ps, uint8_t family, uint8_t hook,
		      uint16_t hw, const void *l2, size_t l2len,
		      const void *payload, size_t plen)
{
	struct nlb b;

	nlb_init_packet(&b, family, QN);
	nlb_pkt_hdr(&b, 1, hw, hook);
	if (l2)
		nlb_attr(&b, A_L2HDR, l2, l2len);
	if (payload)
		nlb_attr(&b, A_PAYLOAD, payload, plen);
	nlb_finish(&b);
	ps->mem = nlb_dup(&b, b.len);
	memset(&ps->p, 0, sizeof(ps->p));
	atomic_store(&ps->p.sg, NFQB_SG(0, NFQB_PS_PENDING));
	ck_assert_int_eq(nfqb_parse_packet(&ps->p, ps->mem), NFQB_PARSE_OK);
}

static int pkt_hdrs_err(const struct nfqb_packet *p, struct nfqb_hdrs *h)
{
	errno = 0;
	if (nfqb_pkt_hdrs(p, h, sizeof(*h)) == 0)
		return 0;
	return errno;
}

START_TEST(test_pkt_hdrs)
{
	uint8_t ip[MAXPKT], eth[MAXPKT];
	size_t n = pkt4(ip, 0, IPPROTO_TCP, 12);
	struct nfqb_hdrs h;
	struct parsed ps;

	/* an inet hook: the payload is the IP packet */
	parse_msg(&ps, NFQB_FAMILY_IPV4, 3, 0x0800, NULL, 0, ip, n);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), 0);
	ck_assert_uint_eq(h.l3_off, 0);
	ck_assert_uint_eq(h.payload_off, 44);
	free(ps.mem);

	/* netdev egress: Ethernet first, its length in NFQA_L2HDR */
	memset(eth, 0x33, 12);
	be16(eth + 12, 0x8100);
	be16(eth + 14, 7);
	be16(eth + 16, 0x0800);
	memcpy(eth + 18, ip, n);
	parse_msg(&ps, NFQB_FAMILY_NETDEV, 1, 0x0800, eth, 18, eth, n + 18);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), 0);
	ck_assert_uint_eq(h.l3_off, 18);
	ck_assert_uint_eq(h.payload_off, 62);
	free(ps.mem);
	/* ... and without it: the Ethernet header and its tags skipped */
	parse_msg(&ps, NFQB_FAMILY_NETDEV, 1, 0x0800, NULL, 0, eth, n + 18);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), 0);
	ck_assert_uint_eq(h.l3_off, 18);
	free(ps.mem);
	/* netdev ingress: the network header first */
	parse_msg(&ps, NFQB_FAMILY_NETDEV, 0, 0x0800, eth, 18, ip, n);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), 0);
	ck_assert_uint_eq(h.l3_off, 0);
	free(ps.mem);

	/* ARP at a bridge hook, IPv6 said and IPv4 sent, no payload */
	parse_msg(&ps, NFQB_FAMILY_BRIDGE, 0, 0x0806, NULL, 0, ip, n);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), EPROTONOSUPPORT);
	free(ps.mem);
	parse_msg(&ps, NFQB_FAMILY_IPV6, 0, 0x86dd, NULL, 0, ip, n);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), EBADMSG);
	free(ps.mem);
	parse_msg(&ps, NFQB_FAMILY_IPV4, 0, 0x0800, NULL, 0, NULL, 0);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, &h), ENODATA);
	ck_assert_int_eq(pkt_hdrs_err(NULL, &h), EINVAL);
	ck_assert_int_eq(pkt_hdrs_err(&ps.p, NULL), EINVAL);
	ck_assert_int_eq(nfqb_pkt_hdrs(&ps.p, &h, 8), -1);
	ck_assert_int_eq(errno, EINVAL);
	free(ps.mem);
}
END_TEST

/* nfqb_verdict_payload()'s refusals leave the packet undecided. */
START_TEST(test_verdict_payload_refused)
{
	uint8_t ip[MAXPKT], bad[64] = { 0 };
	size_t n = pkt4(ip, 0, IPPROTO_UDP, 12);
	struct parsed ps;
	static uint8_t huge[NFQB_MAX_PAYLOAD + 1];

	parse_msg(&ps, NFQB_FAMILY_IPV4, 3, 0x0800, NULL, 0, ip, n);
	errno = 0;
	ck_assert_int_eq(nfqb_verdict_payload(NULL, NFQB_ACCEPT, ip, n), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_verdict_payload(&ps.p, NFQB_ACCEPT, NULL, n), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_verdict_payload(&ps.p, NFQB_QUEUE, ip, n), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_verdict_payload(&ps.p, NFQB_ACCEPT, huge,
					      sizeof(huge)), -1);
	ck_assert_int_eq(errno, EMSGSIZE);
	/* IPv4 said (hw_protocol), something else sent */
	ck_assert_int_eq(nfqb_verdict_payload(&ps.p, NFQB_ACCEPT, bad,
					      sizeof(bad)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	be16(ip + 24, 200);		/* UDP length past the packet */
	ck_assert_int_eq(nfqb_verdict_payload(&ps.p, NFQB_ACCEPT, ip, n), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_uint_eq(NFQB_SG_STATE(atomic_load(&ps.p.sg)),
			  NFQB_PS_PENDING);
	free(ps.mem);
}
END_TEST

/* The verdicts a socketless queue sends, kept. */
struct sent {
	unsigned int n;
	size_t len;
	uint8_t data[MAXPKT + 256];
};

static int keep_sent(struct nfqb_queue *q, const void *buf, size_t len,
		     void *data)
{
	struct sent *s = data;

	(void)q;
	ck_assert_uint_le(len, sizeof(s->data));
	memcpy(s->data, buf, len);
	s->len = len;
	s->n++;
	return (int)len;
}

/* The NFQA_PAYLOAD attribute of the verdict message in @s. */
static const uint8_t *sent_payload(const struct sent *s, size_t *len)
{
	size_t off = 20;	/* nlmsghdr + nfgenmsg */

	while (off + 4 <= s->len) {
		uint16_t alen, type;

		memcpy(&alen, s->data + off, 2);
		memcpy(&type, s->data + off + 2, 2);
		ck_assert_uint_ge(alen, 4);
		if ((type & 0x3fff) == A_PAYLOAD) {
			*len = alen - 4u;
			return s->data + off + 4;
		}
		off += (alen + 3u) & ~3u;
	}
	return NULL;
}

START_TEST(test_verdict_payload)
{
	uint8_t pkt[MAXPKT], mine[MAXPKT];
	size_t n = pkt6(pkt, 0, NULL, 0, IPPROTO_UDP, 100), plen = 0;
	struct nfqb_packet *vec[2];
	struct sent *s = calloc(1, sizeof(*s));
	struct nfqb_queue *q;
	const uint8_t *got;
	struct nlb b;
	void *m;

	ck_assert_ptr_nonnull(s);
	q = nfqbt_queue_detached(QN, 4);
	ck_assert_ptr_nonnull(q);
	nfqbt_set_tx_hook(q, keep_sent, s);
	nlb_init_packet(&b, NFQB_FAMILY_IPV6, QN);
	nlb_pkt_hdr(&b, 5, 0x86dd, 3);
	nlb_attr(&b, A_PAYLOAD, pkt, n);
	nlb_finish(&b);
	m = nlb_dup(&b, b.len);
	ck_assert_int_eq(nfqbt_rx_inject(q, m, b.len, 0, 0), 0);
	free(m);
	ck_assert_uint_eq(nfqbt_serve(q, vec, 2), 1);

	/* a changed payload, its checksum stale */
	memcpy(mine, pkt, n);
	memcpy(mine + 48, "changed!", 8);
	ck_assert_int_eq(nfqb_verdict_payload(vec[0], NFQB_ACCEPT, mine, n),
			 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	ck_assert_uint_eq(s->n, 1);
	got = sent_payload(s, &plen);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(plen, n);
	ck_assert_mem_eq(got + 48, "changed!", 8);
	ck_assert(l4_verifies(src6, dst6, 16, IPPROTO_UDP, got + 40, n - 40));
	ck_assert_mem_eq(got, mine, n);
	/* the handle is dead now */
	ck_assert_int_eq(nfqb_verdict_payload(vec[0], NFQB_ACCEPT, mine, n),
			 -1);
	ck_assert_int_eq(errno, EALREADY);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_set_tx_hook(q, NULL, NULL);
	free(s);
}
END_TEST

static Suite *hdrs_suite(void)
{
	Suite *s = suite_create("hdrs");
	TCase *tc;

	tc = nfqbt_tcase(s, "checksums", 60);
	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_update_ttl);
	tcase_add_loop_test(tc, test_fix_ipv4, 0, (int)N_FULL4);
	tcase_add_loop_test(tc, test_fix_ipv6, 0, (int)N_FULL6);
	tcase_add_test(tc, test_udp_zero);
	tcase_add_test(tc, test_fix_lengths);
	tcase_add_test(tc, test_update_random);
	tcase_add_test(tc, test_update_ipv4_random);

	tc = nfqbt_tcase(s, "parse", 60);
	tcase_add_test(tc, test_parse_ipv4);
	tcase_add_test(tc, test_parse_ipv4_frag);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_parse_args);
	tcase_add_test(tc, test_random_hdrs);
	tcase_add_test(tc, test_ipv6_chain);
	tcase_add_loop_test(tc, test_ipv6_routing, 0, (int)N_ROUTES);
	tcase_add_test(tc, test_ipv6_srh);
	tcase_add_test(tc, test_ipv6_frag);
	tcase_add_test(tc, test_ipv6_ah_icmp);
	tcase_add_loop_test(tc, test_cut_everywhere, 0, N_CUT);
	tcase_add_test(tc, test_l2);

	tc = nfqbt_tcase(s, "mss", 30);
	tcase_add_loop_test(tc, test_mss_clamp, 0, (int)N_CLAMPS);
	tcase_add_test(tc, test_mss_not_tcp);

	tc = nfqbt_tcase(s, "packets", 30);
	tcase_add_test(tc, test_pkt_hdrs);
	tcase_add_test(tc, test_verdict_payload_refused);
	tcase_add_test(tc, test_verdict_payload);
	return s;
}

int main(void)
{
	return nfqbt_run(hdrs_suite());
}
