/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal definitions of libnfq-batch. Nothing here is part of the ABI.
 *
 * The data path runs one way, one file per step:
 *
 *   rx.c      socket -> datagrams (recvmmsg), lengths and sender checked,
 *             parsed (parse.c) into packet descriptors (pkt.c), each
 *             tracked in the book (book.c): a packet, a default-verdict
 *             stub for a message we could read the id of but not use, or
 *             a gap for messages we could not read at all
 *   verdict.c the application decides (any thread): a descriptor goes
 *             PENDING -> DECIDED, nothing is sent
 *   plan.c    pure: the book's entries in, the list of verdict messages
 *             out (no syscalls, no clock, no globals)
 *   tx.c      the transport: builds the planned messages into its one
 *             send buffer, sends them in one sendmsg, and only when the
 *             kernel took them releases what they covered; a failed send
 *             keeps every decision and is retried. It also does the
 *             configuration round trips.
 *   loop.c    nfqb_recv(): when to flush, linger, sleep, wake up
 *   pace.c    which flows wait on us (the adaptive linger keeps off)
 *
 * queue.c opens, configures and closes; stats.c reads counters; abi.c
 * reads and writes the structs that can grow; compat.c (shared library
 * only) keeps the 0.1.0 interfaces under their old symbol versions; the
 * worker pool is pool.c and pool-*.c (its own header: pool-int.h).
 */
#ifndef NFQB_INTERNAL_H
#define NFQB_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/uio.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include <libnfq-batch/libnfq-batch.h>

#include "seam.h"

#define NFQB_EXPORT __attribute__((visibility("default")))

/* Attributes newer than the uapi headers of some build hosts. */
#define NFQB_NFQA_CGROUP_CLASSID	22
#define NFQB_NFQA_MAX			22
/* CTA_ID inside NFQA_CT (linux/netfilter/nfnetlink_conntrack.h) */
#define NFQB_CTA_ID			12

#ifndef NETLINK_NO_ENOBUFS
#define NETLINK_NO_ENOBUFS		5
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK			10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK			11
#endif

/* Room for the netlink, nfgenmsg and attribute headers around a payload. */
#define NFQB_MSG_OVERHEAD		4096
/* Every receive buffer holds the largest message (a 64 KiB payload): the
 * memory is reserved, not committed, so a copy range change never needs
 * new buffers. */
#define NFQB_SLOT_SIZE			(0x10000 + NFQB_MSG_OVERHEAD)
#define NFQB_DEFAULT_BUFFERS		1024
#define NFQB_DEFAULT_BATCH_LIMIT	64
#define NFQB_DEFAULT_LATENCY_US		1000
/* The longest pause of the adaptive linger (taken only while no flow
 * waits on us, pace.c), and the shortest worth a syscall; the pause aims
 * at gathering this many packets. */
#define NFQB_DEFAULT_LINGER_US		200
#define NFQB_LINGER_MIN_NS		(5 * 1000ull)
#define NFQB_LINGER_TARGET		32
/* After a pause showed the stream waits on us: no pause for this long,
 * doubling up to the max while it keeps showing. */
#define NFQB_LINGER_QUIET_MIN_NS	(10 * 1000 * 1000ull)
#define NFQB_LINGER_QUIET_MAX_NS	(1000 * 1000 * 1000ull)
/* pace.c: a flow that came alone in this many of its reads in a row
 * (reads of NFQB_PACE_MANY packets or more) waits on us; no adaptive
 * pause for the quiet time after it shows; a flow not seen for the
 * memory time is forgotten. */
#define NFQB_PACE_FLOWS			256
#define NFQB_PACE_LONE			4
#define NFQB_PACE_MANY			4
#define NFQB_PACE_QUIET_NS		(20 * 1000 * 1000ull)
#define NFQB_PACE_MEMORY_NS		(100 * 1000 * 1000ull)
#define NFQB_RECV_VLEN			64
/* The send buffer: one sendmsg carries at most this much. */
#define NFQB_TX_SIZE			(128 * 1024)
#define NFQB_CONFIG_TIMEOUT_MS		5000
/* Without an acknowledgement this long after the socket went quiet, a
 * configuration request is sent again (its ack may have been lost to a
 * full socket). */
#define NFQB_CONFIG_RESEND_MS		100
/* Retry of a failed verdict send: first after this, doubling to the max. */
#define NFQB_RETRY_MIN_NS		(500 * 1000ull)
#define NFQB_RETRY_MAX_NS		(64 * 1000 * 1000ull)
/* Ids of a gap given the default verdict one by one, at most. */
#define NFQB_GAP_MAX			65536u
/* A blocked nfqb_recv() holding no free buffer waits this long for a
 * decision before failing with ENOSPC. */
#define NFQB_EXHAUSTED_WAIT_MS		1000

/* Serial number arithmetic on 32-bit packet ids (RFC 1982 style). */
static inline bool nfqb_id_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* --- Packet descriptors (pkt.c) ------------------------------------------
 *
 * A descriptor's life, in the low byte of its state word (the rest is its
 * generation, bumped at every reuse), so that every change, and why, is
 * one atomic step:
 *
 *   FREE -> NEW (parsed, not handed out) -> PENDING (the application has
 *   it) -> CLAIMED (a thread writes the decision) -> DECIDED -> FREE once
 *   the kernel took the message that carries the decision.
 *   NEW/PENDING -> EXPIRED when the verdict timeout gives it the default
 *   verdict; -> FREE_EXPIRED once that is sent.
 *   NEW/PENDING -> DEFAULTED when close gives it the default; -> FREE.
 *
 * A handle given to the application carries the generation (on 64-bit
 * builds, in the top 16 bits of the pointer), so a handle used after its
 * verdict is told apart from the packet now in the same descriptor.
 */
enum nfqb_pkt_state {
	NFQB_PS_FREE = 0,
	NFQB_PS_NEW,
	NFQB_PS_PENDING,
	NFQB_PS_CLAIMED,
	NFQB_PS_DECIDED,
	NFQB_PS_DEFAULTED,
	NFQB_PS_EXPIRED,
	NFQB_PS_FREE_EXPIRED,
};

static inline bool nfqb_ps_free(uint32_t st)
{
	return st == NFQB_PS_FREE || st == NFQB_PS_FREE_EXPIRED;
}

/* A decision is there to send. */
static inline bool nfqb_ps_decided(uint32_t st)
{
	return st == NFQB_PS_DECIDED || st == NFQB_PS_DEFAULTED ||
	       st == NFQB_PS_EXPIRED;
}

#define NFQB_SG(gen, st)	(((uint64_t)(gen) << 8) | (st))
#define NFQB_SG_STATE(sg)	((uint32_t)((sg) & 0xff))
#define NFQB_SG_GEN(sg)		((uint32_t)((sg) >> 8))

/* Decision flags beyond the public NFQB_V_* ones. */
#define NFQB_D_SINGLE		(1u << 16)	/* must go as a single verdict */

struct nfqb_decision {
	uint32_t verdict;	/* full kernel verdict (incl. queue number) */
	uint32_t flags;		/* NFQB_V_* | NFQB_D_* */
	uint32_t mark;
	uint32_t priority;
	void *payload;		/* owned copy */
	uint32_t payload_len;
};

/*
 * Handles. On 64-bit builds user-space addresses fit in 48 bits: the top
 * 16 bits of a handle carry the low 16 bits of the descriptor's generation.
 * On 32-bit builds descriptors are aligned to 256 bytes: the low 8 bits of
 * a handle carry the low 8 bits of the generation. A dead handle is
 * mistaken for a live one only if its descriptor was reused a multiple of
 * 65536 (32-bit: 256) times in between (descriptors are reused oldest
 * first: at least that many times the number of descriptors packets
 * later).
 */
#if UINTPTR_MAX > 0xffffffffu
#define NFQB_TAG_SHIFT		48
#define NFQB_TAG_MASK		0xffffu
#define NFQB_ADDR_MASK		(((uintptr_t)1 << 48) - 1)
#define NFQB_PKT_ALIGN		8
#else
#define NFQB_TAG_SHIFT		0
#define NFQB_TAG_MASK		0xffu
#define NFQB_ADDR_MASK		(~(uintptr_t)0xff)
#define NFQB_PKT_ALIGN		256
#endif

/* One receive buffer: holds one datagram from the kernel. */
struct nfqb_slot {
	struct nfqb_slot *next_free;
	uint32_t refs;		/* packets pointing into it */
	uint32_t len;
	bool heap;		/* an overflow buffer (config wait), freed */
	unsigned char *data;
};

struct nfqb_packet {
	/* (32-bit builds: the low 8 bits of a handle are its tag) */
	_Alignas(NFQB_PKT_ALIGN) struct nfqb_queue *q;
	struct nfqb_slot *slot;
	const struct nlattr *tb[NFQB_NFQA_MAX + 1];
	const struct nlattr *vlan_proto, *vlan_tci;
	uint32_t id;
	uint16_t hw_protocol;	/* host order */
	uint16_t res_id;	/* queue number from the message */
	uint8_t hook;
	uint8_t family;
	_Atomic uint64_t sg;	/* generation << 8 | enum nfqb_pkt_state */
	/* bit i: the packet of generation (current - i) was decided by the
	 * verdict timeout (a late verdict on its handle reports ETIMEDOUT
	 * after the descriptor was reused, for the last 64 reuses) */
	_Atomic uint64_t expired_bits;
	uint64_t arrival_ns;
	uint64_t decided_ns;
	void *user;
	struct nfqb_decision d;
	struct nfqb_packet *next_free;
};

static inline uint32_t nfqb_handle_tag(const struct nfqb_packet *h)
{
	return (uint32_t)((uint64_t)(uintptr_t)h >> NFQB_TAG_SHIFT) &
	       NFQB_TAG_MASK;
}

static inline struct nfqb_packet *nfqb_handle_ptr(const struct nfqb_packet *h)
{
	return (struct nfqb_packet *)((uintptr_t)h & NFQB_ADDR_MASK);
}

static inline uint32_t nfqb_sg_tag(uint64_t sg)
{
	return NFQB_SG_GEN(sg) & NFQB_TAG_MASK;
}

/* The descriptor behind a handle, or NULL if the handle is dead (its
 * descriptor was reused since, or is free). */
struct nfqb_packet *nfqb_pkt_from_handle(const struct nfqb_packet *h);
/* The handle of a live descriptor. */
struct nfqb_packet *nfqb_pkt_handle(struct nfqb_packet *p);
/* A free descriptor (state NEW, generation bumped), or NULL. */
struct nfqb_packet *nfqb_pkt_get(struct nfqb_queue *q);
/* Return a descriptor: payload copy and buffer reference dropped. */
void nfqb_pkt_put(struct nfqb_queue *q, struct nfqb_packet *p);
/* Slots */
struct nfqb_slot *nfqb_slot_get(struct nfqb_queue *q);
struct nfqb_slot *nfqb_slot_get_heap(struct nfqb_queue *q);
void nfqb_slot_put(struct nfqb_queue *q, struct nfqb_slot *s);
int nfqb_pkt_alloc_all(struct nfqb_queue *q, unsigned int nslots);
void nfqb_pkt_free_all(struct nfqb_queue *q);

/* --- The book (book.c): what we owe the kernel, in id order -------------
 *
 * Every message of the queue the kernel sent us leaves an entry here until
 * the kernel took the verdict message that decides it:
 *   PKT      a packet descriptor (NEW, PENDING, DECIDED or DEFAULTED)
 *   DEFAULT  a packet we could not hand out but know the id of: default
 *   GAP      messages we could not read: ids [id, id + n) each get the
 *            default verdict by itself (those never queued answer ENOENT)
 *   GAP_OPEN like GAP, its end not known yet: the next readable id ends it
 *   GAP_HEAD unreadable messages before any readable id: no lower bound,
 *            so one default batch up to .id (the id before the first
 *            readable one) decides them; .n counts the messages
 *   DONE     sent; skipped, trimmed from the head
 */
enum nfqb_entry_kind {
	NFQB_E_DONE = 0,
	NFQB_E_PKT,
	NFQB_E_DEFAULT,
	NFQB_E_GAP,
	NFQB_E_GAP_OPEN,
	NFQB_E_GAP_HEAD,
};

struct nfqb_entry {
	struct nfqb_packet *p;	/* NFQB_E_PKT */
	uint32_t id;		/* packet id, or the first id of a gap */
	uint32_t n;		/* ids of a gap */
	uint8_t kind;
};

struct nfqb_book {
	struct nfqb_entry *v;
	uint32_t cap;		/* power of two */
	uint32_t head;		/* oldest */
	uint32_t tail;		/* one past newest */
	bool have_last;
	uint32_t last_id;	/* last id tracked */
	uint32_t unreadable;	/* messages in the open gap */
};

static inline struct nfqb_entry *nfqb_book_at(const struct nfqb_book *b,
					      uint32_t i)
{
	return &b->v[i & (b->cap - 1)];
}

int nfqb_book_alloc(struct nfqb_book *b, uint32_t cap);
void nfqb_book_free(struct nfqb_book *b);
/* Track @p (NEW). Returns 0, or -1 if the book is full. */
int nfqb_book_add_packet(struct nfqb_queue *q, struct nfqb_packet *p);
/* A message of this queue with readable @id we cannot hand out. */
void nfqb_book_add_default(struct nfqb_queue *q, uint32_t id);
/* A message we could not read the id of. */
void nfqb_book_add_unreadable(struct nfqb_queue *q);
/* Drop DONE entries at the head. */
void nfqb_book_trim(struct nfqb_book *b);
/* Give PENDING packets past the verdict timeout the default verdict. */
void nfqb_book_expire(struct nfqb_queue *q, uint64_t now);
/* Give every NEW or PENDING packet the default verdict (close). */
unsigned int nfqb_book_default_all(struct nfqb_queue *q);
bool nfqb_book_empty(const struct nfqb_book *b);

/* --- The planner (plan.c): pure ----------------------------------------- */

enum nfqb_item_type {
	NFQB_I_SINGLE,		/* one NFQNL_MSG_VERDICT for entry .first */
	NFQB_I_BATCH,		/* one NFQNL_MSG_VERDICT_BATCH, entries
				 * [.first, .last] of one run */
	NFQB_I_GAP,		/* .count single default verdicts from .id */
};

struct nfqb_item {
	uint8_t type;
	uint32_t first, last;	/* book positions */
	uint32_t id;		/* SINGLE: id; BATCH: max id; GAP: first id */
	uint32_t count;		/* BATCH: packets; GAP: ids */
	const struct nfqb_decision *d;
	size_t size;		/* bytes of its message(s) */
};

struct nfqb_plan_in {
	const struct nfqb_book *book;
	const struct nfqb_decision *dflt;	/* the default verdict */
	bool singles;		/* no batches (fallback, coalescer off) */
	bool force;		/* decided packets behind an undecided one go
				 * out too (as singles) */
	uint64_t held_cutoff;	/* ... and so do those decided at or
				 * before this time (latency bound) */
	size_t budget;		/* bytes the messages may take */
};

struct nfqb_plan {
	struct nfqb_item *items;
	unsigned int nitems, cap;
	size_t bytes;
	bool more;		/* stopped at the budget, more to send */
	uint32_t held;		/* decided, waiting behind an undecided one */
	uint64_t oldest_held_ns;	/* decision time of the oldest held */
	uint64_t oldest_pending_ns;	/* arrival of the oldest undecided */
};

/* Plan the messages for what is decided. Fills @out (items up to its
 * cap). Returns the number of items. */
unsigned int nfqb_plan(const struct nfqb_plan_in *in, struct nfqb_plan *out);

/* --- Messages (msg.c): builders, all write into @buf and return the
 * length. */
size_t nfqb_msg_config_cmd(void *buf, uint32_t seq, uint16_t num, uint8_t cmd,
			   uint16_t pf);
size_t nfqb_msg_config_params(void *buf, uint32_t seq, uint16_t num,
			      uint8_t mode, uint32_t range);
/* BIND and the copy mode in one message (see msg.c). */
size_t nfqb_msg_config_bind(void *buf, uint32_t seq, uint16_t num,
			    uint8_t mode, uint32_t range);
size_t nfqb_msg_config_maxlen(void *buf, uint32_t seq, uint16_t num,
			      uint32_t maxlen);
size_t nfqb_msg_config_flags(void *buf, uint32_t seq, uint16_t num,
			     uint32_t flags, uint32_t mask);
/* Upper bound of the size of a verdict message with @payload_len bytes. */
size_t nfqb_msg_verdict_size(uint32_t payload_len);
size_t nfqb_msg_verdict(void *buf, uint32_t seq, uint16_t num, uint32_t id,
			const struct nfqb_decision *d);
size_t nfqb_msg_verdict_batch(void *buf, uint32_t seq, uint16_t num,
			      uint32_t max_id, uint32_t verdict,
			      const uint32_t *mark);

/* --- Parsing (parse.c) -------------------------------------------------- */
enum nfqb_parse_result {
	NFQB_PARSE_OK = 0,
	NFQB_PARSE_MALFORMED = -1,
	NFQB_PARSE_NOT_PACKET = -2,
};
/* Parse one NFQNL_MSG_PACKET message of exactly nlh->nlmsg_len bytes that
 * the caller checked fits its buffer. Fills @p's attribute table. */
int nfqb_parse_packet(struct nfqb_packet *p, const struct nlmsghdr *nlh);
/* The packet id of a message whose first attribute is an intact
 * NFQA_PACKET_HDR within @len bytes; false if it cannot be read. */
bool nfqb_parse_id(const void *msg, size_t len, uint32_t *id,
		   uint16_t *res_id);

/* --- Counters ------------------------------------------------------------ */
struct nfqb_counters {
	_Atomic uint64_t v[sizeof(struct nfqb_stats) / sizeof(uint64_t)];
};

#define NFQB_STAT_IDX(field) (offsetof(struct nfqb_stats, field) / sizeof(uint64_t))
#define nfqb_stat_add(q, field, n) \
	atomic_fetch_add_explicit(&(q)->ctr.v[NFQB_STAT_IDX(field)], (n), \
				  memory_order_relaxed)
#define nfqb_stat_inc(q, field) nfqb_stat_add(q, field, 1)
#define nfqb_stat_sub(q, field, n) \
	atomic_fetch_sub_explicit(&(q)->ctr.v[NFQB_STAT_IDX(field)], (n), \
				  memory_order_relaxed)

/* --- The transport's state ---------------------------------------------- */
struct nfqb_tx {
	unsigned char *buf;	/* NFQB_TX_SIZE bytes, allocated at open */
	struct nfqb_plan plan;
	uint64_t retry_at;	/* a failed send is retried from then on */
	uint64_t backoff_ns;
	bool failing;		/* the last send failed */
};

/* The configuration request waiting for its acknowledgement: the
 * transport sets the seqs, the receive side fills in the answer. */
struct nfqb_ack {
	uint32_t first_seq, last_seq;	/* of the request and its resends */
	int err;
	bool done;
	bool overflow;		/* the socket overflowed: the ack may be lost */
};

enum nfqb_flush_reason {
	NFQB_FLUSH_LIMIT,
	NFQB_FLUSH_IDLE,
	NFQB_FLUSH_LATENCY,
	NFQB_FLUSH_EXPLICIT,
	NFQB_FLUSH_CLOSE,
};

/* --- The queue ------------------------------------------------------------ */
struct nfqb_queue {
	int fd;			/* netlink socket */
	int epfd;		/* epoll: fd + evfd, what nfqb_queue_fd() gives */
	int evfd;		/* eventfd: decisions posted, interrupt */
	int tfd;		/* timerfd of the linger pause */
	uint32_t portid;
	uint16_t num;
	bool nonblock;
	bool detached;		/* tests: no socket */
	bool coalesce;
	bool fallback;		/* contract broken: singles only */
	bool last_recv_full;	/* last recvmmsg filled its whole vector */
	bool streaming;		/* packets keep coming: linger, batch */
	bool adopted;		/* nfqb_queue_adopt(): a previous owner */
	int refused;		/* errno of a verdict the kernel refused,
				 * not reported yet (EPERM: no
				 * CAP_NET_ADMIN) */
	_Atomic bool shut;	/* nfqb_queue_shutdown() done */
	struct nfqb_linger {
		bool fixed;		/* a duration set by the application */
		uint32_t us;		/* that duration, or the adaptive cap */
		uint64_t last_read_ns;	/* the last read that brought packets */
		uint64_t gap_ns;	/* average time per packet between reads */
		uint64_t sum_ns;	/* decaying sums it comes from */
		uint64_t sum_pkts;	/* (packets x 256) */
		uint64_t quiet_until;	/* adaptive: no pause before this */
		uint64_t backoff_ns;
	} linger;
	struct nfqb_pace {
		uint32_t round;		/* reads so far */
		uint64_t waiting_until;	/* no adaptive pause before this */
		bool last_waiting;	/* the last read showed a waiting flow */
		struct nfqb_pace_flow {
			uint32_t tag;
			uint32_t round;	/* the read it was last seen in */
			uint16_t count;	/* its packets in that read */
			uint8_t lone;	/* appearances alone in a row */
			bool many;	/* that read was a big one */
			uint64_t seen_ns;
		} flows[NFQB_PACE_FLOWS];
	} pace;
	uint32_t seq;
	uint32_t default_verdict;
	uint32_t batch_limit;
	uint32_t latency_us;
	uint32_t timeout_ms;
	uint32_t recv_timeout_ms;	/* nfqb_queue_set_recv_timeout() */
	uint64_t recv_deadline;		/* of the running nfqb_recv(), 0: none */
	uint32_t copy_range;
	uint8_t copy_mode;
	_Atomic unsigned long owner;	/* pthread_self() of the last nfqb_recv */

	/* receive buffers */
	struct nfqb_slot *slots;
	unsigned char *slot_mem;
	unsigned int nslots;
	unsigned int nfree_slots;
	struct nfqb_slot *free_slots;

	/* packet descriptors: a fixed table, reused oldest first */
	struct nfqb_packet *pkts;
	unsigned int npkts;
	struct nfqb_packet *free_head, *free_tail;
	/* tables replaced by nfqb_queue_set_buffers(), freed at close */
#define NFQB_MAX_RETIRED 8
	struct nfqb_packet *retired[NFQB_MAX_RETIRED];
	unsigned int retired_n;

	/* packets parsed but not yet handed to the application */
	struct nfqb_packet **ready;
	unsigned int nready, ready_head, ready_cap;

	struct nfqb_book book;

	/* decisions from any thread */
	_Atomic uint32_t posted;	/* decisions recorded by any thread */
	uint32_t posted_seen;		/* owner: value at the last flush */
	_Atomic bool wake_pending;	/* eventfd written, not yet read */
	_Atomic bool interrupt;		/* nfqb_queue_interrupt() */
	_Atomic uint32_t inflight;	/* other threads inside decide() */
	uint64_t unsent_since;		/* owner first saw unsent decisions */
	uint64_t held_due;		/* latency due of held decisions */
	uint64_t expire_due;		/* verdict timeout of the oldest */

	struct nfqb_tx tx;
	struct nfqb_ack ack;
	struct nfqb_counters ctr;

	/* scratch for recvmmsg */
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs;
	struct nfqb_slot **rx_slots;
	unsigned int vlen;
};

/* --- Receive (rx.c) --------------------------------------------------------
 * Read up to @want datagrams without waiting and track what they carry.
 * @heap: when no receive buffer is free, read into allocated ones (a
 * configuration round trip must read its ack whatever the application
 * holds). Returns the number of datagrams, or -1 with errno (EAGAIN:
 * nothing to read, ENOSPC: no buffer). */
int nfqb_rx_read(struct nfqb_queue *q, unsigned int want, bool heap);
/* Tests: handle @len bytes as one datagram received from port @from_pid
 * with recvmsg flags @flags. Returns 0, or -1 with EAGAIN if no buffer. */
int nfqb_rx_inject(struct nfqb_queue *q, const void *buf, size_t len,
		   uint32_t from_pid, int flags);
/* Hand out up to @max parsed packets (as handles) to @vec. */
unsigned int nfqb_ready_pop(struct nfqb_queue *q, struct nfqb_packet **vec,
			    unsigned int max);
/* Give back the last @n handed out by nfqb_ready_pop(), unused. */
void nfqb_ready_unpop(struct nfqb_queue *q, unsigned int n);

/* --- Transport (tx.c) ----------------------------------------------------- */
/* Plan and send what may be sent. Returns the number of verdict messages
 * the kernel took, or -1 with errno: EAGAIN when a send failed for now
 * (decisions kept, retried), else the send's error. */
int nfqb_tx_flush(struct nfqb_queue *q, enum nfqb_flush_reason why,
		  bool force, uint64_t now);
/* Send one configuration request (built by @build with the given seq into
 * a buffer) and wait for its acknowledgement, sending it again if it may
 * have been lost. Returns 0 or -1 with the kernel's errno (ETIMEDOUT). */
typedef size_t (*nfqb_cfg_build)(void *buf, uint32_t seq,
				 const struct nfqb_queue *q, const void *arg);
int nfqb_tx_config(struct nfqb_queue *q, nfqb_cfg_build build,
		   const void *arg);
void nfqb_count_verdict(struct nfqb_queue *q, const struct nfqb_decision *d,
			uint64_t npkts);

/* --- The loop (loop.c) ---------------------------------------------------- */
/* ms until the owner must run (latency bound, timeout, retry), -1 never */
int nfqb_loop_next_timeout(const struct nfqb_queue *q, uint64_t now);
/* Drain the wake-up eventfd. */
void nfqb_loop_clear_wakeup(struct nfqb_queue *q);
/* Run the timers as if it were @now: verdict timeout, latency bound of
 * held decisions (tests, and nfqb_flush()). Returns 0 or -1. */
int nfqb_loop_run_timers(struct nfqb_queue *q, uint64_t now);
/* Linger: how long to pause before reading again (0: do not), and what
 * the pause brought. Also used by the worker pool. */
uint64_t nfqb_loop_linger_ns(struct nfqb_queue *q, uint64_t now);
void nfqb_loop_linger_done(struct nfqb_queue *q, uint64_t ns, int got,
			   uint64_t now);
/* Note a read that brought @n datagrams (the stream's pace). */
void nfqb_loop_note_read(struct nfqb_queue *q, unsigned int n, uint64_t now);
int nfqb_loop_linger(struct nfqb_queue *q, unsigned int max);

/* pace.c */
uint32_t nfqb_pace_flow_tag(const uint8_t *b, uint32_t len, bool *clocked);
/* After a read that made ready-list entries @first.. */
void nfqb_pace_note_read(struct nfqb_queue *q, unsigned int first,
			 uint64_t now);
bool nfqb_pace_waiting(const struct nfqb_queue *q, uint64_t now);
/* Wake the owner (a decision was posted, or an interrupt). */
void nfqb_loop_wake(struct nfqb_queue *q);

/* --- Structs that can grow (abi.c) ---------------------------------------
 * Read the caller's struct of @size bytes at @src into @dst (@ours bytes,
 * the library's sizeof): fields it lacks are zero. Returns 0, EINVAL (NULL
 * @src, @size below @min, the 1.0 size) or E2BIG (a byte past @ours not
 * zero). */
int nfqb_struct_in(void *dst, size_t ours, size_t min, const void *src,
		   size_t size);
/* Write @ours bytes of @src to the caller's struct of @size bytes: the
 * first @size bytes, or all and zeros past them. */
void nfqb_struct_out(void *dst, size_t size, const void *src, size_t ours);

/* The smallest size a caller may pass: the end of the last field of the
 * struct's first version (0.1.0; its tail padding not included: a later
 * field may sit there). Never change these. */
#define NFQB_OFFSETOF_END(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))
#define NFQB_VERDICT_SIZE_MIN \
	NFQB_OFFSETOF_END(struct nfqb_verdict, payload_len)
/* (struct nfqb_pool_config is in <libnfq-batch/pool.h>) */
#define NFQB_POOL_CONFIG_SIZE_MIN \
	NFQB_OFFSETOF_END(struct nfqb_pool_config, verdict_timeout_ms)

/* --- Queue (queue.c) ------------------------------------------------------ */
/* Tests: a queue without a socket (fd -1), everything else as
 * nfqb_queue_open() makes it, not bound; its sends go to the seam. Free it
 * with nfqb_queue_close(). */
struct nfqb_queue *nfqb_queue_alloc_detached(uint16_t num,
					     unsigned int nbuffers);
/* Give every outstanding packet its verdict, drain the socket, unbind and
 * close the sockets, keep the memory: later verdicts fail with ESHUTDOWN.
 * nfqb_queue_close() frees it. Returns 0 or -1 with errno. */
int nfqb_queue_shutdown(struct nfqb_queue *q);
/* Hand the binding on (see queue.c): every verdict sent, nothing more
 * read, no unbind; returns the socket fd (no longer the queue's) or -1.
 * The memory stays until nfqb_queue_close(). */
int nfqb_queue_release(struct nfqb_queue *q);
/* nfqb_queue_adopt() with @nbuffers receive buffers. */
struct nfqb_queue *nfqb_queue_adopt_n(int fd, uint16_t num,
				      unsigned int nbuffers);

#endif /* NFQB_INTERNAL_H */
