/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internet checksums (csum.c): pure arithmetic on buffers, and the
 * checksums of a packet whose headers hdrs.c found. No state.
 */
#ifndef NFQB_CSUM_H
#define NFQB_CSUM_H

#include <libnfq-batch/packet.h>

#include "internal.h"

/* @sum plus the 16-bit big-endian words of @len bytes at @d (an odd last
 * byte padded with a zero), not folded: add more, then fold. */
uint64_t nfqb_csum_add(uint64_t sum, const uint8_t *d, size_t len);

/* @sum folded to 16 bits with its carries (one's complement addition). */
uint16_t nfqb_csum_fold(uint64_t sum);

/* nfqb_csum_fix() for the library's own callers: 0 or an errno value
 * (EINVAL, EBADMSG, EPROTONOSUPPORT), errno untouched. */
int nfqb_csum_fix_at(uint8_t *b, size_t len, const struct nfqb_hdrs *h);

#endif /* NFQB_CSUM_H */
