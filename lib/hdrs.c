// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The packet helpers' header parser: where the IP header, its extension
 * headers, the L4 header and the payload of a packet are in a buffer.
 * Pure: every byte is read only after the buffer's length was checked
 * for it, and nothing but the result is written.
 */
#include <string.h>
#include <netinet/in.h>

#include "hdrs.h"

#define ETH_ADDRS_LEN	12	/* destination and source */
#define ETH_P_8021Q_	0x8100
#define ETH_P_8021AD_	0x88a8

/* The Ethernet header at *@off and its VLAN tags: *@off moves past
 * them, *@proto gets the EtherType that follows. */
static int skip_l2(const uint8_t *b, size_t len, size_t *off,
		   uint16_t *proto)
{
	size_t pos = *off + ETH_ADDRS_LEN;
	uint16_t type;

	for (;;) {
		if (len < 2 || pos > len - 2)
			return EBADMSG;
		type = nfqb_get16(b + pos);
		pos += 2;
		if (type != ETH_P_8021Q_ && type != ETH_P_8021AD_)
			break;
		pos += 2;	/* the tag's TCI; an EtherType follows */
	}
	*off = pos;
	*proto = type;
	return 0;
}

static int parse_ipv4(const uint8_t *b, size_t len, size_t off,
		      struct nfqb_hdrs *h)
{
	const uint8_t *ip = b + off;
	size_t ihl, tot;
	uint16_t frag;

	if (len - off < 20)
		return EBADMSG;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	tot = nfqb_get16(ip + 2);
	if (ihl < 20 || tot < ihl || len - off < ihl)
		return EBADMSG;
	frag = nfqb_get16(ip + 6);
	if (frag & 0x3fff)		/* more fragments, or an offset */
		h->flags |= NFQB_HDRS_F_FRAG;
	if (frag & 0x1fff)
		h->flags |= NFQB_HDRS_F_LATER;
	h->l3_proto = NFQB_ETH_P_IP;
	h->l4_proto = ip[9];
	h->l3_len = (uint32_t)ihl;
	h->ip_len = (uint32_t)tot;
	h->dst_off = (uint32_t)(off + 16);
	return 0;
}

/* The final destination in the routing header @rh (@hlen bytes) of a
 * packet with segments left: its offset in @rh; 0 for a type whose
 * addresses this parser does not know (RPL's compressed ones). */
static size_t route_dst(const uint8_t *rh, size_t hlen)
{
	switch (rh[2]) {
	case 0:		/* the addresses still to visit: the last one */
	case 2:		/* Mobile IPv6: one, the home address */
		if (hlen < 24)
			return 0;
		return 8 + ((hlen - 8) / 16 - 1) * 16;
	case 4:		/* segment routing: segment list[0] is the last */
		return hlen >= 24 ? 8 : 0;
	}
	return 0;
}

static bool ipv6_ext(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_FRAGMENT || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_AH;
}

/* The length of the extension header @x of type @nh. */
static size_t ipv6_ext_len(uint8_t nh, const uint8_t *x)
{
	if (nh == IPPROTO_FRAGMENT)
		return 8;
	if (nh == IPPROTO_AH)
		return ((size_t)x[1] + 2) * 4;
	return ((size_t)x[1] + 1) * 8;
}

/* Walk the extension headers from @pos (after the fixed header, next
 * header @nh) within @end: l3_len, l4_proto, the fragment flags and, for
 * a routing header, dst_off. */
static int ipv6_walk(const uint8_t *b, size_t end, size_t pos, uint8_t nh,
		     struct nfqb_hdrs *h)
{
	size_t start = pos - 40, hlen = 0, at;
	uint16_t fo;

	for (; ipv6_ext(nh); nh = b[pos - hlen]) {
		if (end - pos < 8)
			return EBADMSG;
		/* hop-by-hop options come first or not at all */
		if (nh == IPPROTO_HOPOPTS && pos != start + 40)
			return EBADMSG;
		hlen = ipv6_ext_len(nh, b + pos);
		if (end - pos < hlen)
			return EBADMSG;
		if (nh == IPPROTO_ROUTING && b[pos + 3]) {
			at = route_dst(b + pos, hlen);
			h->dst_off = at ? (uint32_t)(pos + at) : 0;
		}
		pos += hlen;
		if (nh != IPPROTO_FRAGMENT)
			continue;
		fo = nfqb_get16(b + pos - hlen + 2);
		if (fo & 0xfff9)	/* an offset, or more fragments */
			h->flags |= NFQB_HDRS_F_FRAG;
		if (fo & 0xfff8) {
			h->flags |= NFQB_HDRS_F_LATER;
			nh = b[pos - hlen];
			break;
		}
	}
	h->l3_len = (uint32_t)(pos - start);
	h->l4_proto = nh;
	return 0;
}

static int parse_ipv6(const uint8_t *b, size_t len, size_t off,
		      struct nfqb_hdrs *h)
{
	const uint8_t *ip = b + off;
	size_t end;

	if (len - off < 40)
		return EBADMSG;
	h->l3_proto = NFQB_ETH_P_IPV6;
	h->ip_len = 40 + (uint32_t)nfqb_get16(ip + 4);
	h->dst_off = (uint32_t)(off + 24);
	end = off + h->ip_len;
	if (end > len)
		end = len;
	return ipv6_walk(b, end, off + 40, ip[6], h);
}

static int parse_l3(const uint8_t *b, size_t len, size_t off,
		    uint16_t proto, struct nfqb_hdrs *h)
{
	unsigned int version;

	if (proto && proto != NFQB_ETH_P_IP && proto != NFQB_ETH_P_IPV6)
		return EPROTONOSUPPORT;
	if (off >= len)
		return EBADMSG;
	version = b[off] >> 4;
	if (!proto && version != 4 && version != 6)
		return EPROTONOSUPPORT;
	if (proto == NFQB_ETH_P_IP || (!proto && version == 4))
		return version == 4 ? parse_ipv4(b, len, off, h) : EBADMSG;
	return version == 6 ? parse_ipv6(b, len, off, h) : EBADMSG;
}

/* The L4 header's length, if its protocol is one the helpers know. */
static int parse_l4(const uint8_t *b, struct nfqb_hdrs *h)
{
	const uint8_t *l4 = b + h->l4_off;
	uint32_t need = 0;

	if (h->flags & NFQB_HDRS_F_LATER)
		return 0;
	switch (h->l4_proto) {
	case IPPROTO_TCP:
		if (h->l4_len < 20)
			return EBADMSG;
		need = (uint32_t)(l4[12] >> 4) * 4;
		if (need < 20)
			return EBADMSG;
		break;
	case IPPROTO_UDP:
		need = 8;
		break;
	case IPPROTO_ICMP:
		if (h->l3_proto == NFQB_ETH_P_IP)
			need = 8;
		break;
	case IPPROTO_ICMPV6:
		if (h->l3_proto == NFQB_ETH_P_IPV6)
			need = 8;
		break;
	}
	if (need > h->l4_len)
		return EBADMSG;
	h->l4_hdr_len = need;
	return 0;
}

int nfqb_hdrs_at(const uint8_t *b, size_t len, size_t off, bool l2,
		 uint16_t proto, struct nfqb_hdrs *h)
{
	size_t end;
	int err;

	memset(h, 0, sizeof(*h));
	/* no IP packet is that long: every offset fits in 32 bits */
#if SIZE_MAX > UINT32_MAX
	if (len > UINT32_MAX)
		len = UINT32_MAX;
#endif
	if (off > len)
		return EBADMSG;
	if (l2) {
		err = skip_l2(b, len, &off, &proto);
		if (err)
			return err;
	}
	err = parse_l3(b, len, off, proto, h);
	if (err)
		return err;
	h->l3_off = (uint32_t)off;
	h->l4_off = h->l3_off + h->l3_len;
	end = off + h->ip_len;
	if (end > len) {
		end = len;
		h->flags |= NFQB_HDRS_F_CUT;
	}
	h->l4_len = (uint32_t)(end - h->l4_off);
	err = parse_l4(b, h);
	if (err)
		return err;
	h->payload_off = h->l4_off + h->l4_hdr_len;
	h->payload_len = h->l4_len - h->l4_hdr_len;
	return 0;
}

bool nfqb_hdrs_sane(const struct nfqb_hdrs *h, size_t len)
{
	uint64_t l3 = h->l3_off, l4 = h->l4_off, end = l3 + h->ip_len;
	uint32_t fixed = 40, alen = 16;

	if (h->l3_proto == NFQB_ETH_P_IP) {
		fixed = 20;
		alen = 4;
	} else if (h->l3_proto != NFQB_ETH_P_IPV6) {
		return false;
	}
	if (h->l3_len < fixed || l3 + h->l3_len != l4 || l4 > end)
		return false;
	if (l4 + h->l4_len > len || l4 + h->l4_len > end ||
	    h->l4_hdr_len > h->l4_len)
		return false;
	/* the final destination lies in the IP header or its extensions */
	return !h->dst_off ||
	       (h->dst_off >= l3 + 12 && (uint64_t)h->dst_off + alen <= l4);
}

NFQB_EXPORT int nfqb_hdrs_parse(const void *buf, size_t len,
				unsigned int flags, struct nfqb_hdrs *uh,
				size_t size)
{
	struct nfqb_hdrs h;
	int err;

	if (!buf || !uh || (flags & ~NFQB_HDRS_L2) ||
	    size < NFQB_HDRS_SIZE_MIN)
		return nfqb_fail(EINVAL);
	err = nfqb_hdrs_at(buf, len, 0, flags & NFQB_HDRS_L2, 0, &h);
	if (err)
		return nfqb_fail(err);
	nfqb_struct_out(uh, size, &h, sizeof(h));
	return 0;
}
