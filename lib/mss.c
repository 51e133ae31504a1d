// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TCP MSS clamping: the MSS option of a SYN or SYN/ACK lowered to a
 * limit, the checksum updated for the change (RFC 1624). Pure: the
 * buffer in, the same buffer out.
 */
#include <netinet/in.h>

#include "hdrs.h"

#define TCPOPT_EOL_	0
#define TCPOPT_NOP_	1
#define TCPOPT_MSS_	2
#define TCPOLEN_MSS_	4
#define TCP_FLAG_SYN_	0x02

static uint16_t swab16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/* Lower the MSS option at @i of the TCP header @th to @mss if it is
 * above; the checksum follows. Whether it changed. */
static bool mss_lower(uint8_t *th, size_t i, uint16_t mss)
{
	uint16_t old = nfqb_get16(th + i + 2);
	uint16_t csum = nfqb_get16(th + 16);

	if (old <= mss)
		return false;
	nfqb_put16(th + i + 2, mss);
	/* a word at an odd offset adds to the sum byte-swapped */
	if (i & 1)
		csum = nfqb_csum_update16(csum, swab16(old), swab16(mss));
	else
		csum = nfqb_csum_update16(csum, old, mss);
	nfqb_put16(th + 16, csum);
	return true;
}

/*
 * Walk the options of the TCP header @th (@hlen bytes, 20 or more): with
 * @apply false only check that they are well formed, else lower each MSS
 * option above @mss. Returns 1 if one changed, 0 if none, -1 for options
 * that are malformed.
 */
static int tcp_opts(uint8_t *th, size_t hlen, bool apply, uint16_t mss)
{
	size_t i = 20, olen;
	int changed = 0;

	while (i < hlen) {
		if (th[i] == TCPOPT_EOL_)
			break;
		if (th[i] == TCPOPT_NOP_) {
			i++;
			continue;
		}
		if (hlen - i < 2)
			return -1;
		olen = th[i + 1];
		if (olen < 2 || olen > hlen - i)
			return -1;
		if (th[i] == TCPOPT_MSS_) {
			if (olen != TCPOLEN_MSS_)
				return -1;
			if (apply && mss_lower(th, i, mss))
				changed = 1;
		}
		i += olen;
	}
	return changed;
}

NFQB_EXPORT int nfqb_tcp_mss_clamp(void *buf, size_t len,
				   const struct nfqb_hdrs *h, uint16_t mss)
{
	uint8_t *th;

	if (!buf || !h || !nfqb_hdrs_sane(h, len))
		return nfqb_fail(EINVAL);
	if (h->l4_proto != IPPROTO_TCP || (h->flags & NFQB_HDRS_F_LATER))
		return 0;
	if (h->l4_hdr_len < 20)
		return nfqb_fail(EINVAL);
	th = (uint8_t *)buf + h->l4_off;
	if (!(th[13] & TCP_FLAG_SYN_))
		return 0;
	/* all or nothing: check every option before changing one */
	if (tcp_opts(th, h->l4_hdr_len, false, mss) < 0)
		return nfqb_fail(EBADMSG);
	return tcp_opts(th, h->l4_hdr_len, true, mss);
}
