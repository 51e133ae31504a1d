// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The packet helpers on a packet of a queue: its headers where the kernel
 * put them at its hook, and a verdict with a changed payload whose
 * checksums are computed first. Over the public API only (the payload,
 * its layout, nfqb_verdict_ex()).
 */
#include <libnfq-batch/packet.h>

#include "csum.h"
#include "hdrs.h"

/* Parse @b (@len bytes) laid out as @p's payload: the network header
 * first, but at netdev egress, where the link-layer header comes first
 * (NFQA_L2HDR has its length; without it, Ethernet). 0 or an errno. */
static int parse_as(const struct nfqb_packet *p, const uint8_t *b,
		    size_t len, struct nfqb_hdrs *h)
{
	uint32_t off = nfqb_pkt_network_offset(p);
	uint16_t proto = nfqb_pkt_hw_protocol(p);

	if (off) {
		if (!nfqb_pkt_l2hdr(p, NULL))
			return nfqb_hdrs_at(b, len, 0, true, 0, h);
		return nfqb_hdrs_at(b, len, off, false, 0, h);
	}
	/* the packet's protocol, when the kernel gave one: ARP or a VLAN
	 * tag at the start of a bridge's payload is not IP */
	if (proto && proto != NFQB_ETH_P_IP && proto != NFQB_ETH_P_IPV6)
		return EPROTONOSUPPORT;
	return nfqb_hdrs_at(b, len, 0, false, proto, h);
}

NFQB_EXPORT int nfqb_pkt_hdrs(const struct nfqb_packet *p,
			      struct nfqb_hdrs *uh, size_t size)
{
	struct nfqb_hdrs h;
	const uint8_t *b;
	uint32_t len = 0;
	int err;

	if (!p || !uh || size < NFQB_HDRS_SIZE_MIN)
		return nfqb_fail(EINVAL);
	b = nfqb_pkt_payload(p, &len);
	if (!b)
		return nfqb_fail(ENODATA);
	err = parse_as(p, b, len, &h);
	if (err)
		return nfqb_fail(err);
	nfqb_struct_out(uh, size, &h, sizeof(h));
	return 0;
}

NFQB_EXPORT int nfqb_verdict_payload(struct nfqb_packet *p, uint32_t verdict,
				     void *buf, size_t len)
{
	struct nfqb_verdict v = {
		.verdict = verdict,
		.flags = NFQB_V_PAYLOAD,
		.payload = buf,
	};
	struct nfqb_hdrs h;
	int err;

	if (!p || !buf || (verdict != NFQB_ACCEPT && verdict != NFQB_DROP &&
			   verdict != NFQB_REPEAT))
		return nfqb_fail(EINVAL);
	if (len > NFQB_MAX_PAYLOAD)
		return nfqb_fail(EMSGSIZE);
	err = parse_as(p, buf, len, &h);
	if (!err)
		err = nfqb_csum_fix_at(buf, len, &h);
	if (err)
		return nfqb_fail(err);
	v.payload_len = (uint32_t)len;
	return nfqb_verdict_ex(p, &v, sizeof(v));
}
