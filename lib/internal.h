/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal definitions of libnfq-batch. Nothing here is part of the ABI.
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
#define NFQB_DEFAULT_BUFFERS		1024
#define NFQB_DEFAULT_BATCH_LIMIT	64
#define NFQB_DEFAULT_LATENCY_US		1000
#define NFQB_DEFAULT_LINGER_US		200
#define NFQB_RECV_VLEN			64
#define NFQB_TX_CHUNK			(64 * 1024)
#define NFQB_CONFIG_TIMEOUT_MS		5000

/* Serial number arithmetic on 32-bit packet ids (RFC 1982 style). */
static inline bool nfqb_id_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* Packet life: FREE -> PENDING (given to the application) -> DECIDED (a
 * decision is recorded) -> FREE once its verdict is sent. A pending packet
 * the timeout (or close) gave the default verdict becomes EXPIRED and is
 * freed when the application finally decides it. */
enum nfqb_pkt_state {
	NFQB_PS_FREE = 0,
	NFQB_PS_PENDING,
	NFQB_PS_DECIDED,
	NFQB_PS_CLAIMED,	/* someone is writing the decision */
	NFQB_PS_SENT,		/* expired: default verdict out, app not done */
	NFQB_PS_RELEASED,	/* expired and then decided by the app */
};

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

/* One receive buffer: holds one datagram from the kernel. */
struct nfqb_slot {
	struct nfqb_slot *next_free;
	uint32_t refs;		/* packets pointing into it */
	uint32_t len;
	unsigned char *data;
};

struct nfqb_packet {
	struct nfqb_queue *q;
	struct nfqb_slot *slot;
	const struct nlattr *tb[NFQB_NFQA_MAX + 1];
	const struct nlattr *vlan_proto, *vlan_tci;
	uint32_t id;
	uint16_t hw_protocol;	/* host order */
	uint16_t res_id;	/* queue number from the message */
	uint8_t hook;
	uint8_t family;
	_Atomic uint32_t state;
	bool expired;		/* the timeout gave it the default verdict */
	uint64_t arrival_ns;
	uint64_t decided_ns;
	void *user;
	struct nfqb_decision d;
	struct nfqb_packet *next_free;
};

/* The outstanding packets of a queue, in arrival (= id) order. */
struct nfqb_ring {
	struct nfqb_packet **v;
	uint32_t cap;		/* power of two */
	uint32_t head;		/* oldest */
	uint32_t tail;		/* one past newest */
};

/* A growable buffer of netlink messages waiting for one sendmsg. */
struct nfqb_txbuf {
	unsigned char *buf;
	size_t len;
	size_t cap;
	unsigned int nmsgs;
};

struct nfqb_counters {
	_Atomic uint64_t v[sizeof(struct nfqb_stats) / sizeof(uint64_t)];
};

#define NFQB_STAT_IDX(field) (offsetof(struct nfqb_stats, field) / sizeof(uint64_t))
#define nfqb_stat_add(q, field, n) \
	atomic_fetch_add_explicit(&(q)->ctr.v[NFQB_STAT_IDX(field)], (n), \
				  memory_order_relaxed)
#define nfqb_stat_inc(q, field) nfqb_stat_add(q, field, 1)

struct nfqb_queue {
	int fd;			/* netlink socket */
	int epfd;		/* epoll: fd + evfd, what nfqb_queue_fd() gives */
	int evfd;		/* eventfd: deferred decisions were posted */
	uint32_t portid;
	uint16_t num;
	bool nonblock;
	bool detached;		/* tests: no socket */
	bool coalesce;
	bool fallback;		/* monotonic-id contract broken: singles only */
	bool have_last_id;
	bool last_recv_full;	/* last recvmmsg filled its whole vector */
	bool streaming;		/* packets keep coming: linger, batch */
	uint32_t linger_us;
	uint32_t last_id;
	uint32_t seq;
	uint32_t default_verdict;
	uint32_t batch_limit;
	uint32_t latency_us;
	uint32_t timeout_ms;
	uint32_t copy_range;
	uint8_t copy_mode;
	_Atomic unsigned long owner;	/* pthread_self() of the last nfqb_recv */

	/* receive buffers */
	struct nfqb_slot *slots;
	unsigned char *slot_mem;
	size_t slot_size;
	unsigned int nslots;
	unsigned int nfree_slots;
	struct nfqb_slot *free_slots;

	/* packet descriptors */
	struct nfqb_packet *free_pkts;
	struct nfqb_pktchunk *chunks;

	/* packets parsed but not yet handed to the application */
	struct nfqb_packet **ready;
	unsigned int nready, ready_head, ready_cap;

	struct nfqb_ring ring;

	/* deferred decisions from other threads */
	_Atomic uint32_t posted;	/* decisions posted by any thread */
	_Atomic uint32_t posted_seen;	/* written by the owner only */
	_Atomic bool sleeping;		/* owner waits in nfqb_recv */
	_Atomic bool wake_pending;	/* eventfd written, not yet read */
	_Atomic uint32_t inflight;	/* other threads inside decide() */
	uint64_t unsent_since;		/* first seen unsent decisions */
	unsigned int held;		/* decided, behind an undecided one */
	uint64_t next_timer_ns;		/* when nfqb_coalesce_timers has work */
	struct nfqb_packet *zombies;	/* expired, app has not decided yet */

	/* config acknowledgement we wait for */
	uint32_t wait_seq;
	int wait_err;
	bool wait_done;

	struct nfqb_txbuf tx;
	struct nfqb_counters ctr;

	/* tests: called instead of sendto() with each datagram we send */
	int (*tx_hook)(struct nfqb_queue *q, const void *buf, size_t len,
		       void *data);
	void *tx_hook_data;

	/* scratch for recvmmsg */
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs;
	struct nfqb_slot **rx_slots;
	unsigned int vlen;
};

struct nfqb_pktchunk {
	struct nfqb_pktchunk *next;
	struct nfqb_packet pkts[];
};

/* time */
uint64_t nfqb_now_ns(void);

/* msg.c: message builders, all write into @buf and return the length. */
size_t nfqb_msg_config_cmd(void *buf, uint32_t seq, uint16_t num, uint8_t cmd,
			   uint16_t pf);
size_t nfqb_msg_config_params(void *buf, uint32_t seq, uint16_t num,
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

/* parse.c */
enum nfqb_parse_result {
	NFQB_PARSE_OK = 0,
	NFQB_PARSE_MALFORMED = -1,
	NFQB_PARSE_NOT_PACKET = -2,
};
/* Parse one NFQNL_MSG_PACKET message of exactly nlh->nlmsg_len bytes that
 * the caller checked fits its buffer. Fills @p's attribute table. */
int nfqb_parse_packet(struct nfqb_packet *p, const struct nlmsghdr *nlh);

/* queue.c */
int nfqb_config_send(struct nfqb_queue *q, void *msg, size_t len);

/* Tests: a queue without a socket (fd -1), everything else as
 * nfqb_queue_open() makes it, not bound; set tx_hook to see what it sends.
 * Free it with nfqb_queue_close(). */
struct nfqb_queue *nfqb_queue_alloc_detached(uint16_t num,
					     unsigned int nbuffers);
/* Tests: handle @len bytes as one datagram received from port @from_pid
 * with recvmsg flags @flags. Returns 0, or -1 with EAGAIN if no buffer. */
int nfqb_rx_inject(struct nfqb_queue *q, const void *buf, size_t len,
		   uint32_t from_pid, int flags);
/* Tests: move up to @max parsed packets to @vec, as nfqb_recv() would. */
unsigned int nfqb_ready_pop(struct nfqb_queue *q, struct nfqb_packet **vec,
			    unsigned int max);

/* recv.c */
/* Receive and process up to @want datagrams. Without @block, never waits.
 * With @block, waits up to @timeout_ms (-1: forever) for the socket or the
 * eventfd, or with NFQB_BLOCK_SOCKET blocks in recvmmsg itself. Returns the
 * number of datagrams processed or -1 with errno (EAGAIN: none). */
#define NFQB_BLOCK_SOCKET	(-2)
int nfqb_rx(struct nfqb_queue *q, unsigned int want, bool block,
	    int timeout_ms);
void nfqb_pkt_release(struct nfqb_queue *q, struct nfqb_packet *p);
struct nfqb_packet *nfqb_pkt_alloc(struct nfqb_queue *q);

/* coalesce.c */
enum nfqb_flush_reason {
	NFQB_FLUSH_LIMIT,
	NFQB_FLUSH_IDLE,
	NFQB_FLUSH_LATENCY,
	NFQB_FLUSH_EXPLICIT,
	NFQB_FLUSH_CLOSE,
};
int nfqb_ring_push(struct nfqb_queue *q, struct nfqb_packet *p);
int nfqb_coalesce_flush(struct nfqb_queue *q, enum nfqb_flush_reason why);
/* Expire undecided packets past the verdict timeout; give decided packets
 * stuck behind an undecided one their verdicts once the latency bound
 * passes. Returns 0 or -1. */
int nfqb_coalesce_timers(struct nfqb_queue *q, uint64_t now);
/* ms until nfqb_coalesce_timers() has work, -1 if never */
int nfqb_coalesce_next_timeout(const struct nfqb_queue *q, uint64_t now);
/* Give every outstanding packet its decision or the default verdict. */
int nfqb_coalesce_finish(struct nfqb_queue *q);
int nfqb_tx_reserve(struct nfqb_queue *q, size_t len, void **out);
int nfqb_tx_send(struct nfqb_queue *q);
void nfqb_count_verdict(struct nfqb_queue *q, const struct nfqb_decision *d,
			uint64_t npkts);

#endif /* NFQB_INTERNAL_H */
