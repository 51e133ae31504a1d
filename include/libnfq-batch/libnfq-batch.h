/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnfq-batch: receive packets from nfnetlink_queue many per syscall and
 * give verdicts back as few messages as possible.
 *
 * Error convention, everywhere in this API: a function that can fail returns
 * -1 (or NULL) and sets errno. Nothing is ever printed by the library.
 */
#ifndef LIBNFQ_BATCH_H
#define LIBNFQ_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nfqb_queue;
struct nfqb_packet;

/* Copy modes (the kernel's NFQNL_COPY_*). */
enum nfqb_copy_mode {
	NFQB_COPY_NONE = 0,
	NFQB_COPY_META = 1,
	NFQB_COPY_PACKET = 2,
};

/* Queue flags (the kernel's NFQA_CFG_F_*), for nfqb_queue_set_flags(). */
#define NFQB_F_FAIL_OPEN	(1u << 0)
#define NFQB_F_CONNTRACK	(1u << 1)
#define NFQB_F_GSO		(1u << 2)
#define NFQB_F_UID_GID		(1u << 3)
#define NFQB_F_SECCTX		(1u << 4)

/* What to do when the socket overflows (ENOBUFS). */
enum nfqb_enobufs_policy {
	/* nfqb_recv() fails once with ENOBUFS, counted; the next call goes on */
	NFQB_ENOBUFS_REPORT = 0,
	/* NETLINK_NO_ENOBUFS: the kernel never reports it; still counted
	 * by the kernel as queue_user_dropped */
	NFQB_ENOBUFS_IGNORE = 1,
};

/* Verdicts (the kernel's NF_* values). */
enum nfqb_verdict_code {
	NFQB_DROP = 0,
	NFQB_ACCEPT = 1,
	NFQB_QUEUE = 3,		/* to another queue: set queue_num */
	NFQB_REPEAT = 4,
};

/* Families a packet can come from (nfgen_family). */
enum nfqb_family {
	NFQB_FAMILY_UNSPEC = 0,
	NFQB_FAMILY_INET = 1,
	NFQB_FAMILY_IPV4 = 2,
	NFQB_FAMILY_ARP = 3,
	NFQB_FAMILY_NETDEV = 5,
	NFQB_FAMILY_BRIDGE = 7,
	NFQB_FAMILY_IPV6 = 10,
};

/* Hook points, named with their family: hook numbers collide across
 * families, see nfqb_pkt_hook_point(). */
enum nfqb_hook_point {
	NFQB_HOOK_UNKNOWN = 0,
	NFQB_HOOK_PREROUTING,
	NFQB_HOOK_INPUT,
	NFQB_HOOK_FORWARD,
	NFQB_HOOK_OUTPUT,
	NFQB_HOOK_POSTROUTING,
	NFQB_HOOK_INGRESS,	/* netdev family */
	NFQB_HOOK_EGRESS,	/* netdev family */
	NFQB_HOOK_ARP_IN,
	NFQB_HOOK_ARP_OUT,
	NFQB_HOOK_ARP_FORWARD,
};

/* Optional parts of a verdict, for struct nfqb_verdict.flags. */
#define NFQB_V_MARK		(1u << 0)	/* set skb->mark to .mark */
#define NFQB_V_PAYLOAD		(1u << 1)	/* replace the packet by .payload */
#define NFQB_V_PRIORITY		(1u << 2)	/* set skb->priority */
#define NFQB_V_BYPASS		(1u << 3)	/* NFQB_QUEUE: accept if no listener */

/* A verdict with options. Fields not named in flags are ignored. */
struct nfqb_verdict {
	uint32_t verdict;	/* enum nfqb_verdict_code */
	uint32_t flags;		/* NFQB_V_* */
	uint32_t mark;
	uint32_t priority;
	uint16_t queue_num;	/* target queue of NFQB_QUEUE */
	const void *payload;	/* copied by the library before return */
	uint32_t payload_len;
};

/*
 * Library counters of one queue. Read them with nfqb_queue_stats(); new
 * fields are only ever added at the end.
 */
struct nfqb_stats {
	uint64_t packets;		/* packet messages accepted */
	uint64_t bytes;			/* payload bytes of those */
	uint64_t recv_calls;		/* recvmmsg/recvmsg syscalls */
	uint64_t send_calls;		/* sendmsg syscalls */
	uint64_t verdict_msgs;		/* NFQNL_MSG_VERDICT sent */
	uint64_t batch_msgs;		/* NFQNL_MSG_VERDICT_BATCH sent */
	uint64_t batch_packets;		/* packets covered by batch messages */
	uint64_t accepted;		/* packets verdicted accept */
	uint64_t dropped;		/* packets verdicted drop */
	uint64_t requeued;		/* packets verdicted queue-to-N */
	uint64_t repeated;		/* packets verdicted repeat */
	uint64_t marked;		/* verdicts carrying a mark */
	uint64_t mangled;		/* verdicts carrying a payload */
	uint64_t enobufs;		/* socket overflow reports */
	uint64_t rejected_foreign;	/* messages not from the kernel */
	uint64_t rejected_malformed;	/* bad lengths or attributes */
	uint64_t rejected_truncated;	/* datagrams cut by MSG_TRUNC */
	uint64_t kernel_errors;		/* NLMSG_ERROR replies to our messages */
	uint64_t enoent_errors;		/* of those, ENOENT (no such packet) */
	uint64_t flushes;		/* coalescer flushes that sent something */
	uint64_t flush_limit;		/* ... because the batch limit was hit */
	uint64_t flush_idle;		/* ... because the socket was empty */
	uint64_t flush_latency;		/* ... because the latency bound expired */
	uint64_t flush_explicit;	/* ... because the application asked */
	uint64_t fallbacks;		/* monotonic-id violations seen */
	uint64_t timeouts;		/* packets given the default verdict
					 * because the application was late */
	uint64_t defaults;		/* packets given the default verdict
					 * at close or when truncated */
	uint64_t outstanding;		/* packets received, not yet sent */
	/* since 0.2 */
	uint64_t send_failures;		/* verdict sendmsg calls that failed:
					 * their decisions are kept, retried */
	uint64_t rejected_defaults;	/* packets we could not parse or track,
					 * given the default verdict by id */
	uint64_t gap_ids;		/* ids around unreadable messages given
					 * the default verdict one by one */
	uint64_t verdict_errors;	/* kernel errors other than ENOENT on
					 * verdict messages (then per-packet) */
	uint64_t interrupts;		/* nfqb_recv() ended by
					 * nfqb_queue_interrupt() */
	uint64_t buffers_exhausted;	/* nfqb_recv() found every buffer held
					 * by the application (ENOSPC) */
	uint64_t config_resends;	/* configuration requests sent again
					 * (acknowledgement lost or late) */
	uint64_t late_verdicts;		/* verdicts refused on dead handles
					 * (EALREADY, ETIMEDOUT, ESHUTDOWN) */
};

/* The kernel's view of one queue (/proc/net/netfilter/nfnetlink_queue). */
struct nfqb_kstats {
	uint32_t queue_num;
	uint32_t portid;		/* peer port id of the bound socket */
	uint32_t queue_total;		/* packets waiting for a verdict */
	uint32_t copy_mode;
	uint32_t copy_range;
	uint32_t queue_dropped;		/* dropped: queue full */
	uint32_t queue_user_dropped;	/* dropped: socket full (ENOBUFS) */
	uint32_t id_sequence;		/* last packet id given */
};

/* --- Queues ------------------------------------------------------------ */

/**
 * nfqb_queue_open - bind queue @num in the current network namespace
 * @num: queue number, 0..65535
 *
 * Opens a netlink socket, binds the queue and selects copy mode
 * NFQB_COPY_PACKET with range 65535. Returns the queue, or NULL with errno:
 * EBUSY if another socket holds the queue, EPERM without CAP_NET_ADMIN,
 * ENOMEM, or the socket's error.
 */
struct nfqb_queue *nfqb_queue_open(uint16_t num);

/**
 * nfqb_queue_close - give every outstanding packet a verdict, unbind, free
 * @q: queue (may be NULL)
 *
 * Decided packets get their decision, undecided ones the default verdict
 * (see nfqb_queue_set_default_verdict()); packets still in the socket are
 * read and given the default verdict as well. Returns 0, or -1 with errno if
 * the unbind failed (the queue is freed anyway).
 */
int nfqb_queue_close(struct nfqb_queue *q);

/**
 * nfqb_queue_interrupt - make the owner's nfqb_recv() return
 *
 * Async-signal-safe, callable from any thread or a signal handler: a
 * nfqb_recv() blocked in the owner thread returns -1 with errno EINTR at
 * once; if none is running, the next call does (once). Returns 0.
 */
int nfqb_queue_interrupt(struct nfqb_queue *q);

/** nfqb_queue_num - the queue's number. */
uint16_t nfqb_queue_num(const struct nfqb_queue *q);

/**
 * nfqb_queue_fd - a file descriptor to poll/epoll for readability
 *
 * It becomes readable when packets arrive or when another thread posts a
 * decision; then call nfqb_recv() (or nfqb_dispatch()). Never close it.
 */
int nfqb_queue_fd(const struct nfqb_queue *q);

/** nfqb_queue_socket_fd - the underlying netlink socket (for sockopts). */
int nfqb_queue_socket_fd(const struct nfqb_queue *q);

/**
 * nfqb_queue_set_nonblock - make nfqb_recv() return EAGAIN instead of
 * waiting. Returns 0.
 */
int nfqb_queue_set_nonblock(struct nfqb_queue *q, bool on);

/**
 * nfqb_queue_set_copy_mode - how much of each packet the kernel copies
 * @mode: NFQB_COPY_NONE, NFQB_COPY_META or NFQB_COPY_PACKET
 * @range: bytes of payload to copy with NFQB_COPY_PACKET (kernel caps it)
 *
 * Returns 0, or -1 with errno from the kernel (EINVAL for a bad mode).
 */
int nfqb_queue_set_copy_mode(struct nfqb_queue *q, enum nfqb_copy_mode mode,
			     uint32_t range);

/**
 * nfqb_queue_set_maxlen - how many packets the kernel may hold for us
 *
 * Past it the kernel drops (or, with NFQB_F_FAIL_OPEN, accepts) new packets.
 * Returns 0 or -1 with the kernel's errno.
 */
int nfqb_queue_set_maxlen(struct nfqb_queue *q, uint32_t maxlen);

/**
 * nfqb_queue_set_flags - set the queue flags in @mask to their value in
 * @flags (NFQB_F_*)
 *
 * Returns 0, or -1 with errno: EOPNOTSUPP for a flag this kernel does not
 * know (or cannot support, as NFQB_F_SECCTX without secmark).
 */
int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags, uint32_t mask);

/**
 * nfqb_queue_set_rcvbuf - socket receive buffer size in bytes
 *
 * Uses SO_RCVBUFFORCE, falling back to SO_RCVBUF (capped by rmem_max) when
 * the caller lacks CAP_NET_ADMIN. Returns 0 or -1 with errno.
 */
int nfqb_queue_set_rcvbuf(struct nfqb_queue *q, size_t bytes);

/** nfqb_queue_set_enobufs - choose the ENOBUFS policy. Returns 0 or -1. */
int nfqb_queue_set_enobufs(struct nfqb_queue *q,
			   enum nfqb_enobufs_policy policy);

/**
 * nfqb_queue_set_buffers - receive buffers of the queue
 * @count: how many packets may be outstanding (received, not yet verdicted)
 *
 * Each buffer holds one message of the current copy range. Only allowed
 * while no packet is outstanding (EBUSY otherwise); EINVAL if @count is 0
 * or above 65536. Default 1024.
 */
int nfqb_queue_set_buffers(struct nfqb_queue *q, unsigned int count);

/**
 * nfqb_queue_set_default_verdict - verdict given to packets nobody decides
 * (at close, on timeout, on a truncated message). NFQB_ACCEPT or NFQB_DROP;
 * default NFQB_ACCEPT. Returns 0 or -1 with EINVAL.
 */
int nfqb_queue_set_default_verdict(struct nfqb_queue *q, uint32_t verdict);

/**
 * nfqb_queue_set_coalesce - turn the coalescer on (default) or off
 *
 * On: decisions are turned into as few batch verdicts as is safe. Off: each
 * decision becomes one NFQNL_MSG_VERDICT; they still leave together, one
 * sendmsg per flush. Returns 0.
 */
int nfqb_queue_set_coalesce(struct nfqb_queue *q, bool on);

/**
 * nfqb_queue_set_batch_limit - flush when this many decided packets wait
 * (1..65536, default 64). Returns 0 or -1 with EINVAL.
 */
int nfqb_queue_set_batch_limit(struct nfqb_queue *q, unsigned int limit);

/**
 * nfqb_queue_set_latency - the longest a decided packet may wait for its
 * verdict to be sent, in microseconds (default 1000; 0 sends at once).
 * Returns 0.
 */
int nfqb_queue_set_latency(struct nfqb_queue *q, uint32_t usec);

/**
 * nfqb_queue_set_linger - pause, in microseconds, before going back to the
 * socket while packets stream in
 *
 * When the socket runs dry in the middle of a stream, a blocking
 * nfqb_recv() sleeps this long and takes what arrived meanwhile, holding
 * decisions (never past the latency bound) for bigger batches: one wake-up
 * and one verdict message for many packets, at the cost of up to this much
 * added delay. A pause that brings nothing ends the stream: the next
 * packet is handled at once. Default 200; 0 turns it off. Returns 0, or -1
 * with EINVAL for a second or more.
 */
int nfqb_queue_set_linger(struct nfqb_queue *q, uint32_t usec);

/**
 * nfqb_queue_set_verdict_timeout - after @msec milliseconds undecided, a
 * packet gets the default verdict (0, the default, never). Returns 0.
 */
int nfqb_queue_set_verdict_timeout(struct nfqb_queue *q, uint32_t msec);

/**
 * nfqb_queue_stats - copy the queue's counters into @st
 * @size: sizeof(*st) as the caller knows it
 *
 * Safe from any thread (values are read without locks and may be a few
 * packets apart). Returns 0 or -1 with EINVAL.
 */
int nfqb_queue_stats(const struct nfqb_queue *q, struct nfqb_stats *st,
		     size_t size);

/**
 * nfqb_queue_fallback - true if the queue has switched to per-packet
 * verdicts after the kernel broke the monotonic-id contract.
 */
bool nfqb_queue_fallback(const struct nfqb_queue *q);

/**
 * nfqb_queue_next_timeout - milliseconds until the library needs to run
 * (latency bound or verdict timeout) for a caller with its own poll loop;
 * -1 when nothing is due.
 */
int nfqb_queue_next_timeout(const struct nfqb_queue *q);

/* --- Receiving ---------------------------------------------------------- */

/**
 * nfqb_recv - receive up to @max packets
 * @vec: filled with packet views, valid until each gets its verdict
 *
 * First sends what the coalescer may send, then receives many packets in one
 * syscall. Each returned packet must be finalized exactly once with
 * nfqb_verdict*() (from any thread, in any order). Returns the number of
 * packets (> 0), or -1 with errno: EAGAIN (non-blocking and nothing there,
 * or every buffer outstanding), ENOBUFS (socket overflowed; counted; call
 * again), EINTR, or the socket's error.
 */
int nfqb_recv(struct nfqb_queue *q, struct nfqb_packet **vec,
	      unsigned int max);

/** A callback for nfqb_dispatch(): decide @p (now, or later) and return 0;
 * a negative return stops the dispatch after this packet. */
typedef int (*nfqb_packet_cb)(struct nfqb_packet *p, void *data);

/**
 * nfqb_dispatch - nfqb_recv() and call @cb for every packet received
 *
 * Returns the number of packets handled, or -1 with errno as nfqb_recv(), or
 * ECANCELED if a callback returned a negative value.
 */
int nfqb_dispatch(struct nfqb_queue *q, nfqb_packet_cb cb, void *data);

/**
 * nfqb_flush - send every decision that can be sent now
 *
 * Owner thread only. Returns the number of verdict messages sent, or -1
 * with errno from sendmsg.
 */
int nfqb_flush(struct nfqb_queue *q);

/* --- Packet views ------------------------------------------------------- */

/* Each getter of an optional attribute returns false (and leaves *out
 * untouched) when the kernel did not send it. */

uint32_t nfqb_pkt_id(const struct nfqb_packet *p);
uint16_t nfqb_pkt_queue_num(const struct nfqb_packet *p);
uint8_t nfqb_pkt_family(const struct nfqb_packet *p);
uint8_t nfqb_pkt_hook(const struct nfqb_packet *p);
enum nfqb_hook_point nfqb_pkt_hook_point(const struct nfqb_packet *p);
/* hw_protocol, host byte order (e.g. 0x0800 for IPv4) */
uint16_t nfqb_pkt_hw_protocol(const struct nfqb_packet *p);
bool nfqb_pkt_mark(const struct nfqb_packet *p, uint32_t *mark);
bool nfqb_pkt_timestamp(const struct nfqb_packet *p, struct timeval *tv);
bool nfqb_pkt_indev(const struct nfqb_packet *p, uint32_t *ifindex);
bool nfqb_pkt_outdev(const struct nfqb_packet *p, uint32_t *ifindex);
bool nfqb_pkt_physindev(const struct nfqb_packet *p, uint32_t *ifindex);
bool nfqb_pkt_physoutdev(const struct nfqb_packet *p, uint32_t *ifindex);
bool nfqb_pkt_hwaddr(const struct nfqb_packet *p, const uint8_t **addr,
		     uint16_t *len);
/* The payload copied to us (NULL if none), and its length in *len. */
const uint8_t *nfqb_pkt_payload(const struct nfqb_packet *p, uint32_t *len);
/* The packet's length before the copy range cut it (NFQA_CAP_LEN), or the
 * payload length when it was not cut. */
uint32_t nfqb_pkt_orig_len(const struct nfqb_packet *p);
/* true if the payload is shorter than the packet */
bool nfqb_pkt_truncated(const struct nfqb_packet *p);
bool nfqb_pkt_skbinfo(const struct nfqb_packet *p, uint32_t *info);
bool nfqb_pkt_is_gso(const struct nfqb_packet *p);
bool nfqb_pkt_csum_not_ready(const struct nfqb_packet *p);
bool nfqb_pkt_csum_not_verified(const struct nfqb_packet *p);
bool nfqb_pkt_uid(const struct nfqb_packet *p, uint32_t *uid);
bool nfqb_pkt_gid(const struct nfqb_packet *p, uint32_t *gid);
/* The security context, not NUL terminated: *len bytes. */
bool nfqb_pkt_secctx(const struct nfqb_packet *p, const char **ctx,
		     uint32_t *len);
bool nfqb_pkt_ct_info(const struct nfqb_packet *p, uint32_t *ctinfo);
/* The raw NFQA_CT attribute payload (nested CTA_* attributes). */
const void *nfqb_pkt_ct(const struct nfqb_packet *p, uint32_t *len);
/* CTA_ID from NFQA_CT (needs NFQB_F_CONNTRACK). */
bool nfqb_pkt_ct_id(const struct nfqb_packet *p, uint32_t *id);
bool nfqb_pkt_vlan(const struct nfqb_packet *p, uint16_t *proto,
		   uint16_t *tci);
const void *nfqb_pkt_l2hdr(const struct nfqb_packet *p, uint32_t *len);
bool nfqb_pkt_priority(const struct nfqb_packet *p, uint32_t *prio);
bool nfqb_pkt_cgroup_classid(const struct nfqb_packet *p, uint32_t *classid);
/* Any attribute by NFQA_* type: its payload and length, NULL if absent. */
const void *nfqb_pkt_attr(const struct nfqb_packet *p, uint16_t type,
			  uint16_t *len);
/* Offset of the network header in the payload: 0, except at netdev egress
 * where the payload starts at the link-layer header. */
uint32_t nfqb_pkt_network_offset(const struct nfqb_packet *p);

/** nfqb_pkt_set_user - attach an application pointer to a packet. */
void nfqb_pkt_set_user(struct nfqb_packet *p, void *user);
/** nfqb_pkt_user - the pointer attached with nfqb_pkt_set_user(). */
void *nfqb_pkt_user(const struct nfqb_packet *p);

/* --- Verdicts ----------------------------------------------------------- */

/**
 * nfqb_verdict - decide @p: NFQB_ACCEPT, NFQB_DROP or NFQB_REPEAT
 *
 * Records the decision; the coalescer sends it. Callable from any thread;
 * @p must not be used afterwards. Returns 0, or -1 with errno: EINVAL for a
 * bad verdict, EALREADY if @p was decided before, ETIMEDOUT if the verdict
 * timeout already gave it the default verdict (@p is released all the same).
 */
int nfqb_verdict(struct nfqb_packet *p, uint32_t verdict);

/** nfqb_verdict_mark - nfqb_verdict() that also sets skb->mark. */
int nfqb_verdict_mark(struct nfqb_packet *p, uint32_t verdict, uint32_t mark);

/**
 * nfqb_verdict_ex - decide @p with the options in @v (mark, payload,
 * priority, queue-to-N with bypass). The payload is copied before return.
 * Errors as nfqb_verdict(), plus ENOMEM.
 */
int nfqb_verdict_ex(struct nfqb_packet *p, const struct nfqb_verdict *v);

/**
 * nfqb_verdict_batch - verdict every outstanding packet up to @max_id
 * @mark: NULL, or the mark to set on all of them
 *
 * Packets already decided keep their decision (they are sent first); every
 * other outstanding packet with an id not after @max_id is finalized by this
 * call and must not be used again. Owner thread only. Sent at the next flush
 * (nfqb_flush() or nfqb_recv()). Returns the number of packets it finalized,
 * or -1 with errno EINVAL (bad verdict) or ENOENT (no such packet).
 */
int nfqb_verdict_batch(struct nfqb_queue *q, uint32_t max_id, uint32_t verdict,
		       const uint32_t *mark);

/* --- The kernel's statistics -------------------------------------------- */

/**
 * nfqb_kstats_read - parse /proc/net/netfilter/nfnetlink_queue of the
 * current network namespace into @out (up to @max entries)
 *
 * Returns the number of queues listed (which may exceed @max), or -1 with
 * errno (ENOENT if nfnetlink_queue is not loaded).
 */
int nfqb_kstats_read(struct nfqb_kstats *out, size_t max);

/**
 * nfqb_kstats_get - the kernel's view of queue @num
 *
 * Returns 0, or -1 with ENOENT if the queue is not bound.
 */
int nfqb_kstats_get(uint16_t num, struct nfqb_kstats *out);

/* --- Misc ---------------------------------------------------------------- */

/** nfqb_version - the library's version string, e.g. "0.1.0". */
const char *nfqb_version(void);

/** nfqb_verdict_name - "accept", "drop", ... for a verdict code. */
const char *nfqb_verdict_name(uint32_t verdict);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFQ_BATCH_H */
