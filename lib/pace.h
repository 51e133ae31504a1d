/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stream's pace and the wait for the next read (pace.c): whether
 * packets stream in, how fast, which flows wait on us, and so how long to
 * pause before reading again, or to sleep.
 *
 * Owner: pace.c alone writes struct nfqb_pace (owner thread). Its functions
 * take it and their view of the rest (struct nfqb_pace_in, all of it
 * read only but the counters): the last read, the timers, the fds, the
 * settings.
 */
#ifndef NFQB_PACE_H
#define NFQB_PACE_H

#include "internal.h"

/* A blocked nfqb_recv() holding no free buffer waits this long for a
 * decision before failing with ENOSPC. */
#define NFQB_EXHAUSTED_WAIT_MS		1000
/* The longest pause of the adaptive linger (taken only while no flow
 * waits on us), and the shortest worth a syscall; the pause aims at
 * gathering this many packets: one full read (NFQB_RECV_VLEN), the batch
 * a wake-up can take (half of it cost a bulk UDP stream 1.05x-1.12x
 * the CPU per packet of 0.1.0's fixed pause: doc/benchmarks.md). */
#define NFQB_DEFAULT_LINGER_US		200
#define NFQB_LINGER_MIN_NS		(5 * 1000ull)
#define NFQB_LINGER_TARGET		64
/* ... but no more than fit in half the socket's receive buffer: a
 * message takes up to twice its length there (the kernel rounds its
 * allocation up to a power of two; its attributes, about
 * NFQB_PACE_MSG_HEAD bytes, with the packet), and NFQB_PACE_SKB_COST
 * more (832 bytes for a 92-byte packet, 2304 for 1500, measured on 6.12). */
#define NFQB_PACE_MSG_HEAD		200
#define NFQB_PACE_SKB_COST		256
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
	uint64_t sum_bytes;	/* payload per packet x 8, decaying */
	/* the adaptive linger's quiet time after it stretched a flow */
	uint64_t quiet_until;
	uint64_t backoff_ns;
	uint64_t paused_at;	/* a pause began then; the next read tells
				 * what it brought (0: none) */
	uint64_t pause_ns;	/* ... how long it was to be */
	uint64_t starved_at;	/* no room to read since then (0: there
				 * is) */
	bool book_stopped;	/* reading stopped: the book is full */
	/* flows that wait on us */
	uint32_t round;		/* reads so far */
	uint64_t waiting_until;	/* a flow waits on us before this: no
				 * holding decisions, no adaptive pause
				 * (UINT64_MAX: the last read showed one) */
	uint64_t shown_ns;	/* when one showed last */
	int sleep_ms;		/* the read sleep's bound (ms, -1: none), for
				 * NFQB_PACE_READ_SLEEP */
	struct nfqb_pace_flow flows[NFQB_PACE_FLOWS];
};

/* How nfqb_recv() gets more packets. */
enum nfqb_wait {
	NFQB_WAIT_NONE,		/* read at once */
	NFQB_WAIT_LINGER,	/* packets stream in: pause briefly first (if
				 * the linger says so, else sleep) */
	NFQB_WAIT_PAUSE,	/* the same, but no sleep: 0 at once */
	NFQB_WAIT_SLEEP,	/* until the socket is readable, a decision or
				 * an interrupt comes, or a timer is due */
	NFQB_WAIT_NOT,		/* nonblocking, nothing came: EAGAIN (ENOSPC
				 * when the application holds every buffer) */
};

/* What the pace reads of the queue: its caller's view (the queue builds
 * it once), each pointer to another owner's state. */
struct nfqb_sock;
struct nfqb_settings;
struct nfqb_rx;
struct nfqb_bufs;
struct nfqb_pace_in {
	const struct nfqb_sock *sk;	/* the fds a wait is on */
	const struct nfqb_settings *set;	/* the linger, the verdict
					 * timeout */
	const struct nfqb_rx *rx;	/* the last read */
	const struct nfqb_bufs *bufs;	/* a free receive buffer? */
	const struct nfqb_book *book;	/* ... and room in the book? */
	const uint64_t *expire_due;	/* book.c's: the verdict timeout of
					 * the oldest packet (0: none) */
	const uint64_t *tx_due;		/* tx.c's: the next flush (0: none) */
	const uint64_t *deadline;	/* loop.c's: the running nfqb_recv()'s
					 * receive timeout (0: none) */
	const _Atomic bool *woken;	/* loop.c's: a wake-up is pending (a
					 * decision was posted) */
	const _Atomic bool *poke_failed;	/* wake.c's: the read sleep
						 * cannot be woken */
	struct nfqb_counters *ctr;
};

/* nfqb_pace_wait(): sleep in the read itself (the read sleep of
 * nfqb_queue_set_read_sleep()), for at most pc->sleep_ms. */
#define NFQB_PACE_READ_SLEEP	2

/* Wait as @how says, never past a timer (the verdict timeout, the
 * transport's due); with no free buffer, only for a decision or a timer.
 * Returns 1 to read now, NFQB_PACE_READ_SLEEP to read sleeping (instead
 * of sleeping here: the read sleep is on and no wake fd is set), 0 to
 * look again (a decision, an interrupt, a timer), -1 with errno (EINTR:
 * a signal; EAGAIN, ENOSPC). */
int nfqb_pace_wait(struct nfqb_pace *pc, const struct nfqb_pace_in *in,
		   enum nfqb_wait how, uint64_t now);
/* Would a linger wait now pause (rather than sleep)? Decisions are held
 * for a batch only across a pause, never across a sleep. */
bool nfqb_pace_pauses(const struct nfqb_pace *pc,
		      const struct nfqb_pace_in *in, uint64_t now);
/* ms until the owner must run (the verdict timeout, the transport's next
 * flush due at @tx_due, a retry), -1 never: nfqb_queue_next_timeout(). */
int nfqb_pace_next_timeout(const struct nfqb_pace_in *in, uint64_t tx_due,
			   uint64_t now);
/* What the last read brought (in->rx: datagrams, packets, their flows)
 * says of the stream; after a pause, also of the pause. */
void nfqb_pace_note_read(struct nfqb_pace *pc, const struct nfqb_pace_in *in);

#endif /* NFQB_PACE_H */
