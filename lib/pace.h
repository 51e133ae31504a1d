/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stream's pace and the linger (pace.c): whether packets stream in,
 * how fast, which flows wait on us, and so how long to pause before
 * reading again.
 *
 * Owner: pace.c alone writes struct nfqb_pace (owner thread).
 */
#ifndef NFQB_PACE_H
#define NFQB_PACE_H

#include "internal.h"

/* The longest pause of the adaptive linger (taken only while no flow
 * waits on us), and the shortest worth a syscall; the pause aims at
 * gathering this many packets. */
#define NFQB_DEFAULT_LINGER_US		200
#define NFQB_LINGER_MIN_NS		(5 * 1000ull)
#define NFQB_LINGER_TARGET		32
/* After a pause showed the stream waits on us: no pause for this long,
 * doubling up to the max while it keeps showing. */
#define NFQB_LINGER_QUIET_MIN_NS	(10 * 1000 * 1000ull)
#define NFQB_LINGER_QUIET_MAX_NS	(1000 * 1000 * 1000ull)
/* A flow that came alone in this many of its reads in a row (reads of
 * NFQB_PACE_MANY packets or more) waits on us; no adaptive pause for the
 * quiet time after it shows; a flow not seen for the memory time is
 * forgotten. */
#define NFQB_PACE_FLOWS			256
#define NFQB_PACE_LONE			4
#define NFQB_PACE_MANY			4
#define NFQB_PACE_QUIET_NS		(20 * 1000 * 1000ull)
#define NFQB_PACE_MEMORY_NS		(100 * 1000 * 1000ull)

struct nfqb_pace_flow {
	uint32_t tag;
	uint32_t round;		/* the read it was last seen in */
	uint16_t count;		/* its packets in that read */
	uint8_t lone;		/* appearances alone in a row */
	bool many;		/* that read was a big one */
	uint64_t seen_ns;
};

struct nfqb_pace {
	bool streaming;		/* packets keep coming: linger, batch */
	/* the rate: time per packet, from decaying sums */
	uint64_t last_read_ns;	/* the last read that brought packets */
	uint64_t gap_ns;	/* average time per packet between reads */
	uint64_t sum_ns;
	uint64_t sum_pkts;	/* (packets x 256) */
	/* the adaptive linger's quiet time after it stretched a flow */
	uint64_t quiet_until;
	uint64_t backoff_ns;
	/* flows that wait on us */
	uint32_t round;		/* reads so far */
	uint64_t waiting_until;	/* no adaptive pause before this */
	bool last_waiting;	/* the last read showed a waiting flow */
	struct nfqb_pace_flow flows[NFQB_PACE_FLOWS];
};

struct nfqb_rx;

/* A read brought @n datagrams, which made the ready list's entries from
 * @first on. */
void nfqb_pace_note_read(struct nfqb_queue *q, unsigned int n,
			 unsigned int first, uint64_t now);
/* How long to pause before reading again (0: do not). */
uint64_t nfqb_pace_linger_ns(const struct nfqb_queue *q, uint64_t now);
/* A pause of @ns brought @got datagrams (0: the stream ended, -1: failed). */
void nfqb_pace_linger_done(struct nfqb_queue *q, uint64_t ns, int got,
			   uint64_t now);
/* A flow waits on us: no holding decisions for a batch, no pause. */
bool nfqb_pace_waiting(const struct nfqb_pace *pc, uint64_t now);
static inline bool nfqb_pace_streaming(const struct nfqb_pace *pc)
{
	return pc->streaming;
}
/* A tag of the packet's flow (never 0), 0 if the payload does not start
 * with an IP header we can read. *@clocked: its transport is clocked by
 * acknowledgements. */
uint32_t nfqb_pace_flow_tag(const uint8_t *b, uint32_t len, bool *clocked);

#endif /* NFQB_PACE_H */
