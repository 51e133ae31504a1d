// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the packet helpers' header parser (lib/hdrs.c), and
 * on what it finds the checksum fix (lib/csum.c) and the MSS clamp
 * (lib/mss.c).
 *
 * The input: one byte of flags (bit 0: the packet starts at an Ethernet
 * header, NFQB_HDRS_L2), two bytes of MSS (big-endian), then the packet,
 * copied into a malloc'ed buffer of exactly its length so that
 * AddressSanitizer sees any access past it. Besides the sanitizers it
 * checks (fz_fail()):
 * - what the parser says lies within the buffer, its parts in order;
 * - the fix leaves the headers as they were (the same parse again) and
 *   makes the checksums verify, by a sum of this file's own: the IPv4
 *   header, and TCP, UDP, ICMP, ICMPv6 with their pseudo-header;
 * - a clamp that says it changed nothing (0, or -1) changed no byte, and
 *   one that changed an option keeps a right TCP checksum right (the
 *   RFC 1624 update);
 * - an RFC 1624 update of one word equals the fix's full computation.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <libnfq-batch/packet.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t rd16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* One's complement sum of 16-bit words, folded as it goes. */
static uint32_t sum16(uint32_t s, const uint8_t *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		s += i & 1 ? d[i] : (uint32_t)d[i] << 8;
		s = (s & 0xffff) + (s >> 16);
	}
	return s;
}

static void check_layout(const struct nfqb_hdrs *h, size_t len)
{
	uint64_t end = (uint64_t)h->l3_off + h->ip_len;

	if (h->l3_proto != 0x0800 && h->l3_proto != 0x86dd)
		fz_fail("l3_proto %04x", h->l3_proto);
	if (h->l4_off != h->l3_off + h->l3_len || h->l4_off > len ||
	    h->l4_off > end)
		fz_fail("l4_off %u", h->l4_off);
	if ((uint64_t)h->l4_off + h->l4_len > len ||
	    (uint64_t)h->l4_off + h->l4_len > end)
		fz_fail("l4_len %u past the packet", h->l4_len);
	if (h->l4_hdr_len > h->l4_len ||
	    h->payload_off != h->l4_off + h->l4_hdr_len ||
	    h->payload_len != h->l4_len - h->l4_hdr_len)
		fz_fail("payload %u+%u", h->payload_off, h->payload_len);
	if (!!(h->flags & NFQB_HDRS_F_CUT) != (end > len))
		fz_fail("cut flag %x, end %llu, len %zu", h->flags,
			(unsigned long long)end, len);
	if ((h->flags & NFQB_HDRS_F_LATER) && !(h->flags & NFQB_HDRS_F_FRAG))
		fz_fail("a later fragment that is no fragment");
	if (h->reserved)
		fz_fail("reserved %u", h->reserved);
}

/* Whether @h's L4 checksum verifies in @b; true where the fix writes
 * none. */
static bool l4_verifies(const uint8_t *b, const struct nfqb_hdrs *h)
{
	bool v4 = h->l3_proto == 0x0800;
	size_t alen = v4 ? 4 : 16, n = h->l4_len;
	uint8_t p = h->l4_proto;
	uint32_t s = 0;

	if ((h->flags & NFQB_HDRS_F_FRAG) || !h->l4_hdr_len ||
	    (p != IPPROTO_TCP && p != IPPROTO_UDP && p != IPPROTO_ICMP &&
	     p != IPPROTO_ICMPV6))
		return true;
	if (p == IPPROTO_UDP) {
		if (v4 && !rd16(b + h->l4_off + 6))
			return true;	/* none */
		n = rd16(b + h->l4_off + 4);
		if (n < 8 || n > h->l4_len)
			return false;
	}
	if (p != IPPROTO_ICMP) {
		s = sum16(s, b + h->l3_off + (v4 ? 12 : 8), alen);
		s = sum16(s, b + h->dst_off, alen);
		s = sum16(s, (const uint8_t[]){ 0, p }, 2);
		s = sum16(s, (const uint8_t[]){ (uint8_t)(n >> 24),
			  (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n },
			  4);
	}
	return sum16(s, b + h->l4_off, n) == 0xffff;
}

static void fix_and_check(uint8_t *b, size_t len, unsigned int flags,
			  const struct nfqb_hdrs *h)
{
	struct nfqb_hdrs again;

	if (nfqb_csum_fix(b, len, h) < 0) {
		if (errno != EBADMSG && errno != EPROTONOSUPPORT)
			fz_fail("nfqb_csum_fix: errno %d", errno);
		return;
	}
	if (nfqb_hdrs_parse(b, len, flags, &again, sizeof(again)) < 0 ||
	    memcmp(&again, h, sizeof(again)))
		fz_fail("the fix moved the headers");
	if (h->l3_proto == 0x0800 &&
	    sum16(0, b + h->l3_off, h->l3_len) != 0xffff)
		fz_fail("IPv4 header checksum wrong after the fix");
	if (!l4_verifies(b, h))
		fz_fail("L4 checksum wrong after the fix");
}

/* The clamp: nothing written unless it says so, a right checksum kept
 * right. */
static void clamp_and_check(uint8_t *b, size_t len, const struct nfqb_hdrs *h,
			    uint16_t mss)
{
	uint8_t *was = malloc(len ? len : 1);
	bool right = l4_verifies(b, h);
	size_t i, changed = 0;
	int r;

	if (!was)
		return;
	memcpy(was, b, len);
	r = nfqb_tcp_mss_clamp(b, len, h, mss);
	if (r < 0 && errno != EBADMSG)
		fz_fail("nfqb_tcp_mss_clamp: errno %d", errno);
	for (i = 0; i < len; i++)
		changed += b[i] != was[i];
	if (r <= 0 && changed)
		fz_fail("the clamp returned %d and changed %zu bytes", r,
			changed);
	if (r > 0 && right && !l4_verifies(b, h))
		fz_fail("TCP checksum wrong after the clamp");
	free(was);
}

/* RFC 1624 on the word at @at of the L4 part against the fix. */
static void update_and_check(uint8_t *b, size_t len,
			     const struct nfqb_hdrs *h, uint8_t at)
{
	size_t off = h->payload_off + (size_t)at * 2;
	uint16_t c, old;

	if (h->l4_proto != IPPROTO_TCP || !h->l4_hdr_len ||
	    (h->flags & NFQB_HDRS_F_FRAG) || off + 2 > h->l4_off + h->l4_len ||
	    ((off - h->l4_off) & 1) || nfqb_csum_fix(b, len, h) < 0)
		return;
	c = rd16(b + h->l4_off + 16);
	old = rd16(b + off);
	b[off] ^= 0xa5;
	c = nfqb_csum_update16(c, old, rd16(b + off));
	if (nfqb_csum_fix(b, len, h) < 0 || c != rd16(b + h->l4_off + 16))
		fz_fail("update %04x, computed %04x", c,
			rd16(b + h->l4_off + 16));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;
	struct nfqb_hdrs h;
	uint16_t mss;
	uint8_t *b;
	size_t len;

	if (size < 3)
		return 0;
	flags = data[0] & NFQB_HDRS_L2;
	mss = rd16(data + 1);
	len = size - 3;
	b = malloc(len ? len : 1);
	if (!b)
		return 0;
	memcpy(b, data + 3, len);
	if (nfqb_hdrs_parse(b, len, flags, &h, sizeof(h)) == 0) {
		check_layout(&h, len);
		fix_and_check(b, len, flags, &h);
		clamp_and_check(b, len, &h, mss);
		update_and_check(b, len, &h, data[0] >> 1);
	} else if (errno != EBADMSG && errno != EPROTONOSUPPORT) {
		fz_fail("nfqb_hdrs_parse: errno %d", errno);
	}
	free(b);
	return 0;
}
