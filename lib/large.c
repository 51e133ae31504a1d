// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The large-packet policy (nfqb_queue_set_large()), at hand-out, before
 * the application sees a packet. The kernel copies at most the copy range
 * of a packet and says how long it was (NFQA_CAP_LEN). With
 * NFQB_LARGE_WHOLE nothing cut is handed out:
 *
 *   a cut GSO packet     GSO is turned off on the queue, once (the kernel
 *                        segments them before queueing from then on: a
 *                        configuration message the transport sends with
 *                        the verdicts, nothing waits for it); if it is
 *                        TCP it is dropped: TCP sends it again, in
 *                        segments, and the stream has no gap
 *   any other cut one    dropped: nothing sends it again smaller, and
 *                        passing it would pass it uninspected
 *   a SYN (or SYN/ACK)   its MSS option is lowered to what fits the copy
 *                        range, so that no segment of the connection is
 *                        cut; the descriptor is marked changed (pkt.c):
 *                        its verdict carries the new bytes
 *
 * Over the public packet API and the queue's own state (owner thread).
 */
#include <string.h>
#include <netinet/in.h>
#include <libnfq-batch/packet.h>

#include "csum.h"
#include "hdrs.h"
#include "large.h"
#include "queue-int.h"

/* The minimum segment size every IPv4 host takes (RFC 9293): a copy
 * range too short for it is not clamped to. */
#define LARGE_MSS_MIN	536

/* The most bytes of a packet the kernel copies to this queue. */
static uint32_t copy_limit(const struct nfqb_settings *set)
{
	uint32_t r = set->copy_range;

	return r && r < NFQB_MAX_PAYLOAD ? r : NFQB_MAX_PAYLOAD;
}

/* Whether a cut packet is TCP. Its IP length may say nothing (a GSO
 * packet past 65535 bytes has an IPv4 total length of 0, BIG TCP): only
 * the protocol field is read (IPv6: after a hop-by-hop header). */
static bool is_tcp(const struct nfqb_packet *h)
{
	uint32_t len, off = nfqb_pkt_network_offset(h);
	const uint8_t *b = nfqb_pkt_payload(h, &len);

	if (!b || off >= len)
		return false;
	b += off;
	len -= off;
	if (len >= 20 && b[0] >> 4 == 4)
		return b[9] == IPPROTO_TCP &&
		       !(nfqb_get16(b + 6) & 0x1fff);	/* not a later fragment */
	if (len < 48 || b[0] >> 4 != 6)
		return false;
	if (b[6] == IPPROTO_HOPOPTS) {
		uint32_t hbh = 40 + (b[41] + 1u) * 8;

		return len > hbh && b[40] == IPPROTO_TCP;
	}
	return b[6] == IPPROTO_TCP;
}

/* A cut packet: dropped, counted; GSO off (in *@flags_off) the first
 * time it is a GSO packet. */
static void cut(struct nfqb_queue *q, struct nfqb_packet *h,
		uint32_t *flags_off)
{
	bool gso = nfqb_pkt_is_gso(h);

	if (gso && !q->large.gso_asked) {
		q->large.gso_asked = true;
		*flags_off = NFQB_F_GSO;
	}
	if (gso && is_tcp(h))
		nfqb_stat_inc(&q->ctr, large_resent);
	else
		nfqb_stat_inc(&q->ctr, large_dropped);
	/* the owner's decision on a packet it just handed out: only a
	 * queue shut down meanwhile refuses it, and then close decides */
	(void)nfqb_verdict(h, NFQB_DROP);
}

/*
 * Lower the MSS option of a SYN so that its connection's segments fit
 * the copy range (with the headers as this packet has them: a segment's
 * TCP options come out of its MSS). The checksums are computed in full
 * when the kernel had not (a SYN of this host), else updated; if that
 * cannot be done the packet is left as it was.
 */
static void clamp(struct nfqb_queue *q, struct nfqb_packet *h)
{
	uint32_t len, limit = copy_limit(&q->set);
	uint8_t save[60];
	struct nfqb_hdrs hd;
	uint8_t *b;

	b = (uint8_t *)(uintptr_t)nfqb_pkt_payload(h, &len);
	if (!b || nfqb_pkt_hdrs(h, &hd, sizeof(hd)) ||
	    hd.l4_proto != IPPROTO_TCP || hd.l4_hdr_len < 20 ||
	    hd.l4_hdr_len > sizeof(save) ||
	    (hd.flags & (NFQB_HDRS_F_FRAG | NFQB_HDRS_F_CUT)) ||
	    !(b[hd.l4_off + 13] & 0x02) ||
	    limit < hd.l4_off + 20 + LARGE_MSS_MIN)
		return;
	memcpy(save, b + hd.l4_off, hd.l4_hdr_len);
	if (nfqb_tcp_mss_clamp(b, len, &hd,
			       (uint16_t)(limit - hd.l4_off - 20)) != 1)
		return;
	if (nfqb_pkt_csum_not_ready(h) && nfqb_csum_fix_at(b, len, &hd)) {
		memcpy(b + hd.l4_off, save, hd.l4_hdr_len);
		return;
	}
	nfqb_pkt_changed(nfqb_handle_ptr(h));
	nfqb_stat_inc(&q->ctr, mss_clamped);
}

unsigned int nfqb_large_sift(struct nfqb_queue *q, struct nfqb_packet **vec,
			     unsigned int n, uint32_t *flags_off)
{
	bool whole = q->set.large == NFQB_LARGE_WHOLE;
	unsigned int i, k = 0;

	*flags_off = 0;
	for (i = 0; i < n; i++) {
		struct nfqb_packet *h = vec[i];

		if (nfqb_pkt_truncated(h)) {
			nfqb_stat_inc(&q->ctr, truncated);
			if (whole) {
				cut(q, h, flags_off);
				continue;
			}
		} else if (whole) {
			clamp(q, h);
		}
		vec[k++] = h;
	}
	return k;
}
