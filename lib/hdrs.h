/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The packet helpers' header parser (hdrs.c): pure, a buffer in, struct
 * nfqb_hdrs out; it reads nothing but the buffer and writes nothing but
 * the struct it is given. Its functions return 0 or an errno value and
 * leave errno alone; the public ones set errno once.
 */
#ifndef NFQB_HDRS_H
#define NFQB_HDRS_H

#include <libnfq-batch/packet.h>

#include "internal.h"

#define NFQB_ETH_P_IP		0x0800
#define NFQB_ETH_P_IPV6		0x86dd

/* The smallest size of struct nfqb_hdrs a caller may pass: its first
 * version (1.1.0), whole. Never change it. */
#define NFQB_HDRS_SIZE_MIN	NFQB_OFFSETOF_END(struct nfqb_hdrs, dst_off)

/*
 * Parse the packet in @b (@len bytes) from @off: an IP header there, or
 * with @l2 an Ethernet header and its tags. @proto: the EtherType the
 * caller knows (NFQB_ETH_P_IP or _IPV6), 0 to go by the IP version; not
 * used with @l2. Fills *@h, offsets from @b. Returns 0, EPROTONOSUPPORT
 * or EBADMSG.
 */
int nfqb_hdrs_at(const uint8_t *b, size_t len, size_t off, bool l2,
		 uint16_t proto, struct nfqb_hdrs *h);

/* Whether @h, which the caller gives back, describes an IP packet
 * within @len bytes whose parts follow each other as the parser sets
 * them: every offset the helpers use is inside the buffer. */
bool nfqb_hdrs_sane(const struct nfqb_hdrs *h, size_t len);

/* Big-endian 16-bit reads and writes at any alignment. */
static inline uint16_t nfqb_get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline void nfqb_put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

#endif /* NFQB_HDRS_H */
