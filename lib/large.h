/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The large-packet policy (large.c, nfqb_queue_set_large()): what a queue
 * does at hand-out with packets longer than its copy range, and with the
 * SYNs that would let later ones be.
 *
 * Its state, struct nfqb_large_state, is in the queue's struct
 * (queue-int.h).
 */
#ifndef NFQB_LARGE_H
#define NFQB_LARGE_H

#include "internal.h"

struct nfqb_queue;
/* The policy on the @n packets nfqb_recv() is handing out (@vec, their
 * handles): each cut one counted, and with NFQB_LARGE_WHOLE dropped and
 * taken out of @vec, each SYN clamped. *@flags_off: the queue flags to
 * turn off (NFQB_F_GSO, the first time a cut packet was a GSO packet),
 * for the transport to send, else 0. Returns how many are left in @vec,
 * in their order. */
unsigned int nfqb_large_sift(struct nfqb_queue *q, struct nfqb_packet **vec,
			     unsigned int n, uint32_t *flags_off);

#endif /* NFQB_LARGE_H */
