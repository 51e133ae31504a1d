// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The stream's pace and the linger: while packets stream in, nfqb_recv()
 * pauses briefly before reading again and takes what came meanwhile (one
 * wake-up and one batch for many). A fixed pause is the application's
 * (nfqb_queue_set_linger()); the adaptive one aims at NFQB_LINGER_TARGET
 * packets at the stream's rate, within a cap, and keeps off while a flow
 * waits on us or after a pause showed that the stream slowed down for it.
 *
 * Which flows wait on us. The adaptive linger pauses, and decisions are
 * held for a batch, only while no flow in the traffic waits for our
 * verdicts before it sends again: a TCP (SCTP, DCCP) connection, clocked
 * by its acknowledgements, always does; so does a request/response
 * exchange over UDP. Such a flow shows up alone: one packet in a read,
 * then nothing until we answered. A bulk stream shows up in runs:
 * several packets of the same flow in one read.
 *
 * A small table (direct mapped by a hash of the addresses, the protocol
 * and the ports) remembers, per flow, the read it was last seen in, how
 * many of its packets that read brought, and for how many of its
 * appearances in a row it came alone in a read of NFQB_PACE_MANY packets
 * or more (a small read says nothing: a bulk flow comes alone too when we
 * keep up with it). After NFQB_PACE_LONE such appearances (within
 * NFQB_PACE_MEMORY_NS of each other) the flow waits on us, and each of
 * its appearances keeps the linger off until the next read and for
 * NFQB_PACE_QUIET_NS. A collision in
 * the table only resets an entry: at worst a waiting flow is seen late.
 * Only the owner thread of the queue touches any of it.
 */
#include <string.h>
#include <libmnl/libmnl.h>

#include "queue.h"

/* FNV-1a over 32-bit words: @n bytes, a multiple of 4. */
static uint32_t mix(uint32_t h, const uint8_t *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i += 4) {
		uint32_t w;

		memcpy(&w, b + i, sizeof(w));
		h = (h ^ w) * 16777619u;
	}
	return h;
}

static bool has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 136;
}

/* Transports clocked by acknowledgements: their sender always waits on
 * us (TCP, DCCP, SCTP). */
static bool acked(uint8_t proto)
{
	return proto == 6 || proto == 33 || proto == 132;
}

/* A tag of the packet's flow (never 0), 0 if the payload does not start
 * with an IP header we can read (copy range too short, another family).
 * *@clocked: its transport is clocked by acknowledgements. */
uint32_t nfqb_pace_flow_tag(const uint8_t *b, uint32_t len, bool *clocked)
{
	uint32_t h = 2166136261u;
	unsigned int hl;

	*clocked = false;
	if (len < 20)
		return 0;
	if (b[0] >> 4 == 4) {
		*clocked = acked(b[9]);
		hl = (b[0] & 15) * 4u;
		h = (h ^ b[9]) * 16777619u;	/* protocol */
		h = mix(h, b + 12, 8);		/* addresses */
		/* first fragment only: later ones have no ports */
		if (has_ports(b[9]) && hl >= 20 && len >= hl + 4 &&
		    !(((b[6] & 0x1f) << 8) | b[7]))
			h = mix(h, b + hl, 4);
	} else if (b[0] >> 4 == 6 && len >= 40) {
		*clocked = acked(b[6]);	/* without extension headers */
		h = (h ^ b[6]) * 16777619u;	/* next header */
		h = mix(h, b + 8, 32);
		if (has_ports(b[6]) && len >= 44)
			h = mix(h, b + 40, 4);
	} else {
		return 0;
	}
	return h | 1;
}

/* One packet of the read numbered @round, which brought @many packets or
 * more if @many (only such a read tells a lone flow from a small read).
 * True if its flow shows that it waits on us. */
static bool note_flow(struct nfqb_pace *pc, uint32_t tag, uint32_t round,
		      bool many, uint64_t now)
{
	struct nfqb_pace_flow *f = &pc->flows[tag % NFQB_PACE_FLOWS];

	if (f->tag != tag || now - f->seen_ns > NFQB_PACE_MEMORY_NS) {
		*f = (struct nfqb_pace_flow){ .tag = tag, .round = round,
					      .count = 1, .many = many,
					      .seen_ns = now };
		return false;
	}
	f->seen_ns = now;
	if (f->round == round) {
		if (f->count < UINT16_MAX)
			f->count++;
		f->lone = 0;	/* a run: it does not wait on us */
		return false;
	}
	/* its first packet in this read: how did the last one bring it? */
	if (f->count > 1)
		f->lone = 0;
	else if (f->many && f->lone < UINT8_MAX)
		f->lone++;
	f->round = round;
	f->count = 1;
	f->many = many;
	return f->lone >= NFQB_PACE_LONE;
}

/* The flows of the packets a read made (the ready list's entries from
 * @first on): does one wait on us? */
static void note_flows(struct nfqb_queue *q, unsigned int first,
		       uint64_t now)
{
	const struct nfqb_rx *rx = &q->rx;
	struct nfqb_pace *pc = &q->pace;
	bool waiting = false, many;
	unsigned int i;

	if (first >= rx->nready)
		return;
	many = rx->nready - first >= NFQB_PACE_MANY;
	pc->round++;
	for (i = first; i < rx->nready; i++) {
		const struct nfqb_packet *p = nfqb_ready_at(rx, i);
		const struct nlattr *a = p ? p->tb[NFQA_PAYLOAD] : NULL;
		uint32_t tag;
		bool clocked;

		if (!a)
			continue;
		tag = nfqb_pace_flow_tag(mnl_attr_get_payload(a),
					 mnl_attr_get_payload_len(a), &clocked);
		if (clocked ||
		    (tag && note_flow(pc, tag, pc->round, many, now)))
			waiting = true;
	}
	pc->last_waiting = waiting;
	if (waiting) {
		pc->waiting_until = now + NFQB_PACE_QUIET_NS;
		nfqb_stat_inc(q, linger_waiting);
	}
}

/* The stream's pace: time per packet, as the ratio of two decaying sums
 * (time between reads, packets per read; 1/8 weight to the new read), so
 * that many small reads and a few big ones weigh by their packets. */
static void note_rate(struct nfqb_pace *pc, unsigned int n, uint64_t now)
{
	if (pc->last_read_ns && now > pc->last_read_ns) {
		uint64_t dt = now - pc->last_read_ns;

		if (dt > NFQB_LINGER_QUIET_MAX_NS)
			dt = NFQB_LINGER_QUIET_MAX_NS;
		pc->sum_ns = pc->sum_ns - pc->sum_ns / 8 + dt;
		pc->sum_pkts = pc->sum_pkts - pc->sum_pkts / 8 + n * 256ull;
		pc->gap_ns = pc->sum_ns * 256 / pc->sum_pkts;
	}
	pc->last_read_ns = now;
}

void nfqb_pace_note_read(struct nfqb_queue *q, unsigned int n,
			 unsigned int first, uint64_t now)
{
	if (n >= 2)
		q->pace.streaming = true;
	note_rate(&q->pace, n, now);
	if (!q->conf.linger_fixed && q->conf.linger_us)
		note_flows(q, first, now);
}

/* A flow waits on us: the last read showed one (however long ago: the
 * packets it brought may still be with the application), or one did in
 * the quiet time. */
bool nfqb_pace_waiting(const struct nfqb_pace *pc, uint64_t now)
{
	return pc->last_waiting || now < pc->waiting_until;
}

uint64_t nfqb_pace_linger_ns(const struct nfqb_queue *q, uint64_t now)
{
	const struct nfqb_pace *pc = &q->pace;
	uint64_t cap = q->conf.linger_us * 1000ull, ns;

	if (!cap)
		return 0;
	if (q->conf.linger_fixed)
		return cap;
	if (now < pc->quiet_until || !pc->gap_ns || nfqb_pace_waiting(pc, now))
		return 0;
	ns = pc->gap_ns * NFQB_LINGER_TARGET;
	if (ns > cap)
		ns = cap;
	return ns < NFQB_LINGER_MIN_NS ? 0 : ns;
}

/* After a pause of @ns that brought @got packets: nothing ends the
 * stream. If the stream brought under a quarter of what its pace before
 * promised, it slowed down because we paused (its sender waits on us:
 * request/response, TCP's acknowledgements), and pausing again would only
 * stretch its round trips: no pause for a while, longer each time it
 * shows again. */
void nfqb_pace_linger_done(struct nfqb_queue *q, uint64_t ns, int got,
			   uint64_t now)
{
	struct nfqb_pace *pc = &q->pace;
	uint64_t promised;

	if (got <= 0)
		pc->streaming = false;
	if (q->conf.linger_fixed || !pc->gap_ns)
		return;
	promised = ns / pc->gap_ns;
	if (got > 0 && (uint64_t)got * 4 >= promised) {
		pc->backoff_ns = 0;
		return;
	}
	pc->backoff_ns = pc->backoff_ns ? pc->backoff_ns * 2 :
			 NFQB_LINGER_QUIET_MIN_NS;
	if (pc->backoff_ns > NFQB_LINGER_QUIET_MAX_NS)
		pc->backoff_ns = NFQB_LINGER_QUIET_MAX_NS;
	pc->quiet_until = now + pc->backoff_ns;
}
