// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Internet checksums (RFC 1071): the one's complement of the one's
 * complement sum of 16-bit words. Computed in full, for the IPv4 header
 * and for TCP, UDP, ICMP and ICMPv6 with their pseudo-headers, and
 * updated for a changed field (RFC 1624).
 */
#include <netinet/in.h>

#include "csum.h"
#include "hdrs.h"

uint64_t nfqb_csum_add(uint64_t sum, const uint8_t *d, size_t len)
{
	/* a 32-bit word is two 16-bit ones: 2^16 is 1 once folded */
	for (; len >= 4; d += 4, len -= 4)
		sum += (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 |
		       (uint32_t)d[2] << 8 | d[3];
	if (len >= 2) {
		sum += (uint32_t)d[0] << 8 | d[1];
		d += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)d[0] << 8;
	return sum;
}

uint16_t nfqb_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

NFQB_EXPORT uint16_t nfqb_csum_ipv4_hdr(const void *iph, size_t len)
{
	const uint8_t *b = iph;
	uint64_t sum;

	if (!b)
		len = 0;
	if (len <= 10)
		return (uint16_t)~nfqb_csum_fold(nfqb_csum_add(0, b, len));
	sum = nfqb_csum_add(0, b, 10);
	if (len > 12)
		sum = nfqb_csum_add(sum, b + 12, len - 12);
	return (uint16_t)~nfqb_csum_fold(sum);
}

/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'), the one's complement sums
 * folded; ~m + m' per 16-bit half of the field. */
NFQB_EXPORT uint16_t nfqb_csum_update16(uint16_t csum, uint16_t from,
					uint16_t to)
{
	uint64_t sum = (uint64_t)(uint16_t)~csum + (uint16_t)~from + to;

	return (uint16_t)~nfqb_csum_fold(sum);
}

NFQB_EXPORT uint16_t nfqb_csum_update32(uint16_t csum, uint32_t from,
					uint32_t to)
{
	uint64_t sum = (uint64_t)(uint16_t)~csum;

	sum += (uint16_t)~(from >> 16) + (uint64_t)(uint16_t)~from;
	sum += (to >> 16) + (uint64_t)(to & 0xffff);
	return (uint16_t)~nfqb_csum_fold(sum);
}

/* Where @h's L4 checksum is, from the L4 header, and whether the
 * pseudo-header counts; -1: none this library computes. */
static int l4_field(const struct nfqb_hdrs *h, bool *pseudo)
{
	bool v4 = h->l3_proto == NFQB_ETH_P_IP;

	*pseudo = true;
	if (h->flags & NFQB_HDRS_F_FRAG)
		return -1;	/* it covers the whole datagram */
	switch (h->l4_proto) {
	case IPPROTO_TCP:
		return h->l4_hdr_len >= 20 ? 16 : -1;
	case IPPROTO_UDP:
		return h->l4_hdr_len >= 8 ? 6 : -1;
	case IPPROTO_ICMP:
		*pseudo = false;
		return v4 && h->l4_hdr_len >= 8 ? 2 : -1;
	case IPPROTO_ICMPV6:
		return !v4 && h->l4_hdr_len >= 8 ? 2 : -1;
	}
	return -1;
}

/* The bytes the L4 checksum covers, from l4_off, in *@l4len: what the IP
 * length says, for UDP its own length. 0 or an errno. */
static int l4_extent(const uint8_t *b, size_t len, const struct nfqb_hdrs *h,
		     bool pseudo, uint32_t *l4len)
{
	uint64_t end = (uint64_t)h->l3_off + h->ip_len;
	uint16_t ulen;

	if (end > len)
		return EBADMSG;
	*l4len = (uint32_t)(end - h->l4_off);
	if (h->l4_proto == IPPROTO_UDP) {
		ulen = nfqb_get16(b + h->l4_off + 4);
		if (ulen < 8 || ulen > *l4len)
			return EBADMSG;
		*l4len = ulen;
	}
	if (pseudo && !h->dst_off)
		return EPROTONOSUPPORT;
	return 0;
}

/* The pseudo-header's sum: source, final destination, protocol and the
 * L4 length (IPv4: 16 bits, IPv6: 32; either adds up the same). */
static uint64_t pseudo_sum(const uint8_t *b, const struct nfqb_hdrs *h,
			   uint32_t l4len)
{
	size_t alen = h->l3_proto == NFQB_ETH_P_IP ? 4 : 16;
	size_t src = h->l3_off + (alen == 4 ? 12 : 8);
	uint64_t sum;

	sum = nfqb_csum_add(0, b + src, alen);
	sum = nfqb_csum_add(sum, b + h->dst_off, alen);
	return sum + h->l4_proto + l4len;
}

static void l4_write(uint8_t *b, const struct nfqb_hdrs *h, int at,
		     bool pseudo, uint32_t l4len)
{
	uint8_t *f = b + h->l4_off + at;
	bool udp = h->l4_proto == IPPROTO_UDP;
	uint64_t sum = 0;
	uint16_t c;

	/* UDP over IPv4 with 0: the sender sent no checksum */
	if (udp && h->l3_proto == NFQB_ETH_P_IP && !nfqb_get16(f))
		return;
	nfqb_put16(f, 0);
	if (pseudo)
		sum = pseudo_sum(b, h, l4len);
	c = (uint16_t)~nfqb_csum_fold(nfqb_csum_add(sum, b + h->l4_off,
						    l4len));
	if (udp && !c)
		c = 0xffff;	/* 0 would mean none */
	nfqb_put16(f, c);
}

int nfqb_csum_fix_at(uint8_t *b, size_t len, const struct nfqb_hdrs *h)
{
	uint32_t l4len = 0;
	bool pseudo;
	int at, err;

	if (!nfqb_hdrs_sane(h, len))
		return EINVAL;
	at = l4_field(h, &pseudo);
	if (at >= 0) {
		err = l4_extent(b, len, h, pseudo, &l4len);
		if (err)
			return err;
	}
	if (h->l3_proto == NFQB_ETH_P_IP)
		nfqb_put16(b + h->l3_off + 10,
			   nfqb_csum_ipv4_hdr(b + h->l3_off, h->l3_len));
	if (at >= 0)
		l4_write(b, h, at, pseudo, l4len);
	return 0;
}

NFQB_EXPORT int nfqb_csum_fix(void *buf, size_t len,
			      const struct nfqb_hdrs *h)
{
	int err;

	if (!buf || !h)
		return nfqb_fail(EINVAL);
	err = nfqb_csum_fix_at(buf, len, h);
	if (err)
		return nfqb_fail(err);
	return 0;
}
