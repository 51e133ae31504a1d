/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnfq-batch: receive packets from nfnetlink_queue many per syscall and
 * give verdicts back as few messages as possible.
 *
 * Error convention, everywhere in this API: a function that can fail returns
 * -1 (or NULL) and sets errno to one of the values its comment (and its man
 * page) lists; a function that returns 0 or -1 returns nothing else.
 * Nothing is ever printed by the library.
 *
 * A NULL queue or pool handle fails with EINVAL, in every function that
 * takes one: -1 (or NULL) with errno EINVAL; where the return type cannot
 * carry -1 (nfqb_queue_num(), nfqb_queue_fallback(), nfqb_pool_stopping(),
 * nfqb_pool_threads()), its zero value (0, false) with errno EINVAL;
 * nfqb_pool_error() returns EINVAL itself, and nfqb_pool_stop() does
 * nothing but set errno to EINVAL. The exceptions are the destructors,
 * nfqb_queue_close() (returns 0) and nfqb_pool_destroy(): for them NULL is
 * nothing to do, as for free(). A NULL packet handle fails with EINVAL in
 * the nfqb_verdict*() functions; the nfqb_pkt_*() getters, which never
 * fail nor set errno, take it as a dead handle ("absent").
 *
 * Verdicts are a uint32_t holding one of the NFQB_* values of enum
 * nfqb_verdict_code, in every call, struct and callback.
 *
 * Structs that can grow: every struct the application fills in or sizes is
 * passed together with its size, sizeof() as the application was compiled
 * (struct nfqb_verdict, struct nfqb_pool_config, struct nfqb_kstats, struct
 * nfqb_stats, struct nfqb_pool_stats, and struct nfqb_hdrs of
 * <libnfq-batch/packet.h>). New fields are only ever added at
 * the end, past the end of the struct as it was (never in its tail
 * padding), and a new field's zero is the behaviour from before it. A
 * struct the application fills in: a size below the end of its first
 * version's fields fails with EINVAL; a smaller size than the library's
 * own gets the fields it lacks as zero; a larger one is accepted when
 * every byte the library does not know is zero, else the call fails with
 * E2BIG. A struct
 * the library fills in: a shorter size gets the first fields (whole fields
 * only: EINVAL otherwise), a longer one is zeroed past the library's.
 */

/*
 * Threads, lifetimes and guarantees
 *
 * Each queue has one owner thread, the one that calls nfqb_recv(),
 * nfqb_dispatch(), nfqb_flush(), nfqb_verdict_batch(),
 * nfqb_queue_next_timeout(), the nfqb_queue_set_*() functions and
 * nfqb_queue_close(), never two of them at once. nfqb_verdict(),
 * nfqb_verdict_mark(), nfqb_verdict_ex(), nfqb_queue_interrupt(),
 * nfqb_queue_stats() and nfqb_queue_fallback() may be called from any
 * thread. The counters named below are those of struct nfqb_stats.
 *
 * 1. Every packet the kernel queues to us gets exactly one verdict from
 *    us: the application's decision, or the default verdict
 *    (nfqb_queue_set_default_verdict()), counted with its reason:
 *    timeouts (the verdict timeout), defaults (close, pool shutdown),
 *    rejected_defaults (a message we could not hand out - malformed,
 *    truncated, no free descriptor - but could read the id of: the default
 *    verdict by id), gap_ids (messages we could not read at all: each id
 *    between the last readable id before them and the next readable id
 *    after them gets the default verdict by itself; the kernel answers
 *    ENOENT for the ids it never queued, which is expected and counted in
 *    enoent_errors). A gap still open at close (no readable id came after
 *    it) is left to the unbind, where the kernel drops those packets.
 * 2. No verdict message reaches a packet with another decision: a batch
 *    never spans an undecided packet, a packet decided differently, a
 *    packet whose own verdict message the kernel has not taken, or a gap.
 *    If the kernel ever refuses a verdict message with an error other than
 *    ENOENT (counted in verdict_errors), the queue stops batching: one
 *    verdict message per packet from then on, nfqb_queue_fallback() true.
 * 3. A decision is released only after the kernel took the message that
 *    carries it (sendmsg succeeded). A failed send keeps every decision
 *    pending, sends nothing that would cover them, counts send_failures,
 *    and is retried by nfqb_recv() (backoff from 0.5 ms, doubling up to
 *    64 ms) or by nfqb_flush(), which then fails with EAGAIN. ENOBUFS from
 *    nfqb_recv() always means the socket overflowed on receive, never a
 *    failed send. Other send errors are returned by nfqb_recv() and
 *    nfqb_flush() as they are; the decisions are kept all the same.
 *    A process without CAP_NET_ADMIN (or whose socket's opener had none)
 *    can still send, but the kernel refuses every message with an EPERM
 *    reply on the socket: the next nfqb_recv() (or nfqb_flush() after
 *    it) fails with EPERM, counted in verdict_errors; those packets stay
 *    queued in the kernel, undecided, until the unbind drops them.
 * 4. A handle is dead after its verdict. A later nfqb_verdict*() on it
 *    fails with EALREADY (ETIMEDOUT if the verdict timeout decided it,
 *    ESHUTDOWN once the pool shut the queue down), is counted in
 *    late_verdicts, and never touches another packet. The nfqb_pkt_*()
 *    getters on a dead handle return "absent" (false, 0 or NULL) once its
 *    verdict was sent, never another packet's data. What a getter points
 *    to (the payload, the L2 header) stays put until then: a thread that
 *    reads it while the owner may decide the packet (the verdict timeout)
 *    calls the getter again after reading, behind an acquire fence; the
 *    same pointer means it read this packet's bytes. The limit: a handle
 *    carries 16 bits (on 32-bit builds 8 bits) of its descriptor's
 *    generation, and descriptors (twice the buffer count) are reused
 *    oldest first, so a dead handle can be mistaken for a live packet only
 *    after its descriptor was reused a multiple of 65536 (256) times. Handles,
 *    and the data they point to, die with nfqb_queue_close().
 * 5. A decision from any thread wakes an owner blocked in nfqb_recv(), and
 *    makes nfqb_queue_fd() readable for an owner that polls it (blocking
 *    or non-blocking mode). nfqb_queue_interrupt(), from any thread or a
 *    signal handler, ends a blocked nfqb_recv() with EINTR. A signal caught
 *    while nfqb_recv() sleeps ends it with EINTR too, with or without
 *    SA_RESTART (epoll_wait() is never restarted); a handler that must not
 *    miss the owner calls nfqb_queue_interrupt().
 * 6. No decided packet waits longer than the latency bound
 *    (nfqb_queue_set_latency()) for its verdict to be sent, with or without
 *    new traffic, as long as the owner runs the library when
 *    nfqb_queue_next_timeout() says (a blocking nfqb_recv() does so by
 *    itself) and the socket takes verdicts. nfqb_queue_next_timeout() is
 *    the time until the library must run, -1 when nothing is due; an idle
 *    owner sleeps and uses no CPU. A packet given the default verdict by
 *    the verdict timeout gives its buffer back once that verdict is sent,
 *    without the application: its data may then be overwritten, so the
 *    application must not read a packet after its verdict timeout.
 * 7. Configuration calls (owner thread only) never spin and need neither a
 *    free receive buffer nor room in the socket: packets that arrive while
 *    one waits for its acknowledgement are kept (in extra buffers if the
 *    application holds every buffer) and handed out by the next
 *    nfqb_recv(); a request whose acknowledgement may have been lost
 *    (socket overflow, or 100 ms of quiet) is sent again (config_resends);
 *    the call fails with ETIMEDOUT after 5 s.
 * 8. nfqb_queue_close() (and the pool's stop) waits for threads still
 *    inside a verdict call, gives every outstanding packet its decision or
 *    the default verdict, sets the queue length to 0 so that the kernel
 *    queues nothing new (new packets are dropped, or accepted when the
 *    default verdict is accept, as with fail-open), reads what the socket
 *    still holds and gives it the default verdict, sends everything
 *    (retrying a failing socket for up to about 1 s), then unbinds. It
 *    returns -1 with errno if a verdict could not be sent or the unbind
 *    failed (the queue is freed anyway). A pool's packets and queues stay
 *    valid until nfqb_pool_destroy().
 * 9. Every verdict kind works through the pool callback: accept, drop,
 *    repeat, queue-to-N with or without bypass, mark, priority, payload.
 * 10. At a stop (nfqb_queue_close(), nfqb_pool_stop() and
 *    nfqb_pool_wait()), which packet gets which verdict:
 *    - decided by the application before the stop: its decision;
 *    - handed out, undecided: the pool waits drain_ms for deferred ones;
 *      then, as for nfqb_queue_close(), the default verdict (defaults);
 *    - in the socket, or queued by the kernel while the library drains
 *      it (before the queue length 0 took effect): the default verdict,
 *      unseen by the application (defaults);
 *    - arriving after the queue length 0 and before the unbind: not
 *      queued; the kernel accepts them when the default verdict is
 *      accept (fail-open is set for that), else drops them (counted by
 *      the kernel in queue_dropped);
 *    - arriving after the unbind: the rule's choice, not ours: accepted
 *      with --queue-bypass (nft: queue bypass), else dropped;
 *    - a gap of unreadable messages still open (no readable id after
 *      it): dropped by the kernel at the unbind (see 1).
 *    No packet the kernel queued to us before the stop is dropped by the
 *    unbind, whatever the rule, as long as the verdicts can be sent.
 * 11. Handover (nfqb_queue_detach(), nfqb_queue_adopt(),
 *    nfqb_pool_handover(), nfqb_pool_adopt()): the queue stays bound to
 *    the same socket from one owner to the next, across exec() or in
 *    systemd's file descriptor store, so the kernel neither drops nor
 *    bypasses a packet in between (it queues them, up to the queue
 *    length). The old owner decides or defaults every packet it read and
 *    sends every verdict; what it did not read stays in the socket for the
 *    new owner. If the old owner died instead, the packets it held are
 *    still queued: the new owner gives them the default verdict with one
 *    batch before its first packet, so none of its own verdicts reaches
 *    them.
 * 12. Start: nfqb_queue_open() (and the pool) binds the queue and sets its
 *    copy mode in one request. The kernel drops, uncounted and even on a
 *    rule with bypass, what reaches a queue before its copy mode is set,
 *    so a bind and a mode sent apart would lose the packets of the round
 *    trip in between. Before the bind, packets follow the rule; from the
 *    request on, they are queued to us, but for the instant inside the
 *    kernel between the creation of the queue and the mode set by the same
 *    request. NFQB_COPY_NONE is refused for the same reason.
 */
#ifndef LIBNFQ_BATCH_H
#define LIBNFQ_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nfqb_queue;
struct nfqb_packet;

/*
 * NFQB_MAX_PAYLOAD - the longest payload the kernel copies to us
 * (NFQNL_MAX_COPY_RANGE: a netlink attribute's 16-bit length less its
 * 4-byte header), and so the longest a verdict may carry (NFQB_V_PAYLOAD;
 * longer: EMSGSIZE). A packet longer than this comes cut to it (its
 * original length in nfqb_pkt_orig_len()).
 */
#define NFQB_MAX_PAYLOAD	65531

/*
 * NFQB_DEFAULT_BUFFERS - receive buffers of a queue (and of each queue of
 * a pool) unless nfqb_queue_set_buffers() says otherwise: how many
 * packets may be outstanding at once.
 */
#define NFQB_DEFAULT_BUFFERS	1024

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

/* Verdicts (the kernel's NF_* values). Passed as uint32_t everywhere. */
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
/* since 1.1.0: the packet's conntrack entry (each a single verdict) */
#define NFQB_V_CT_MARK		(1u << 4)	/* set its mark (.ct_mark) */
#define NFQB_V_CT_LABELS	(1u << 5)	/* set its labels (.ct_labels) */

/*
 * A verdict with options, for nfqb_verdict_ex() (with its size) and the
 * pool's callback. Fields not named in flags are ignored; fields added
 * later come at the end, each with a flag of its own.
 */
struct nfqb_verdict {
	uint32_t verdict;	/* NFQB_ACCEPT, ... (enum nfqb_verdict_code) */
	uint32_t flags;		/* NFQB_V_* */
	uint32_t mark;
	uint32_t priority;
	uint16_t queue_num;	/* target queue of NFQB_QUEUE */
	const void *payload;	/* copied by the library before return */
	uint32_t payload_len;
	/* since 1.1.0, NFQB_V_CT_MARK: the conntrack entry's mark becomes
	 * (mark & ~ct_mark_mask) | (ct_mark & ct_mark_mask); a mask of 0
	 * means every bit */
	uint32_t ct_mark;
	uint32_t ct_mark_mask;
	/* since 1.1.0, NFQB_V_CT_LABELS: its 128 label bits, the same way
	 * (a mask of all zeros means every bit) */
	uint8_t ct_labels[16];
	uint8_t ct_labels_mask[16];
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
	uint64_t fallbacks;		/* reasons seen to stop batching:
					 * an id not after the previous one,
					 * an unexplained gap, a verdict
					 * refused (nfqb_queue_fallback()) */
	uint64_t timeouts;		/* packets given the default verdict
					 * because the application was late */
	uint64_t defaults;		/* packets given the default verdict
					 * at close or pool shutdown */
	uint64_t outstanding;		/* packets received (or known by id),
					 * verdict not yet taken by the kernel */
	/* since 1.0.0 (the LIBNFQB_0.3 interface) */
	uint64_t send_failures;		/* verdict sendmsg calls that failed:
					 * their decisions are kept, retried */
	uint64_t rejected_defaults;	/* packets we could not parse or track,
					 * given the default verdict by id */
	uint64_t gap_ids;		/* ids of messages that could not be
					 * read at all (no id: a gap), given
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
	uint64_t linger_pauses;		/* linger pauses taken */
	uint64_t linger_waiting;	/* reads that showed a flow waiting on
					 * our verdicts (no adaptive pause
					 * for a while) */
	/* since 1.1.0 */
	uint64_t book_full;		/* times reading stopped because the
					 * book of packets read and not yet
					 * settled was full: the packets wait
					 * in the kernel's queue (ENOSPC) */
	uint64_t truncated;		/* packets the kernel copied cut: longer
					 * than the copy range (NFQA_CAP_LEN) */
	uint64_t large_resent;		/* NFQB_LARGE_WHOLE: cut TCP GSO
					 * packets dropped, for TCP to send
					 * them again in segments that fit */
	uint64_t large_dropped;		/* NFQB_LARGE_WHOLE: cut packets that
					 * cannot come again smaller: dropped,
					 * never passed uninspected */
	uint64_t mss_clamped;		/* NFQB_LARGE_WHOLE: SYNs whose MSS
					 * option was lowered (their verdict
					 * carries the changed packet) */
	uint64_t gso_off;		/* NFQB_LARGE_WHOLE: messages sent to
					 * turn GSO off on the queue */
};

/*
 * The kernel's view of one queue (/proc/net/netfilter/nfnetlink_queue), for
 * nfqb_kstats_read() and nfqb_kstats_get() (with its size, the stride of
 * an array). New fields are only ever added at the end.
 */
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
 * Opens a netlink socket, binds the queue, selects copy mode
 * NFQB_COPY_PACKET with range 65535 and sets NFQB_F_GSO: GSO packets come
 * whole, larger than the MTU, their checksums possibly not filled in yet
 * (nfqb_pkt_is_gso(), nfqb_pkt_csum_not_ready()); turn it off with
 * nfqb_queue_set_flags(q, 0, NFQB_F_GSO) to have the kernel segment them
 * first. Returns the queue, or NULL with errno:
 * EBUSY if another socket holds the queue, EPERM without CAP_NET_ADMIN,
 * ENOMEM, ETIMEDOUT (a configuration message never acknowledged), or the
 * error of the socket calls or of the kernel's answer.
 */
struct nfqb_queue *nfqb_queue_open(uint16_t num);

/**
 * nfqb_queue_open_fd - bind queue @num on the caller's netlink socket
 * @fd: a NETLINK_NETFILTER socket, bound to a port id or not
 * @num: queue number, 0..65535
 *
 * As nfqb_queue_open(), on @fd instead of a socket of its own: the queue
 * is bound in the network namespace @fd was made in, whatever this
 * thread's. For a socket made in a container's namespace and passed to a
 * process outside it (SCM_RIGHTS, or inherited), without setns() (which
 * needs CAP_SYS_ADMIN and is refused under the usual container seccomp
 * profiles). @fd gets a port id if it had none. On success @fd belongs to
 * the queue (close-on-exec set; nfqb_queue_close() unbinds and closes
 * it): pass a dup() to keep one. On failure it is left open (bound to a
 * port id). Returns the queue, or NULL with errno: EBADF, ENOTSOCK (@fd is
 * not an open socket), EPROTOTYPE (not NETLINK_NETFILTER), and those of
 * nfqb_queue_open() (EBUSY, EPERM, ETIMEDOUT, ENOMEM...).
 */
struct nfqb_queue *nfqb_queue_open_fd(int fd, uint16_t num);

/**
 * nfqb_queue_close - give every outstanding packet a verdict, unbind, free
 * @q: queue (may be NULL: nothing is done, 0 returned)
 *
 * Owner thread. Waits for threads still inside a verdict call on @q, gives
 * decided packets their decision and undecided ones the default verdict
 * (see nfqb_queue_set_default_verdict()), sets the queue length to 0 so
 * that the kernel queues nothing new (it drops new packets, or accepts them
 * when the default verdict is accept), reads what the socket still holds
 * and gives it the default verdict, sends everything (retrying a failing
 * socket for up to about 1 s), unbinds, and frees @q: every handle of @q
 * dies with it. Returns 0, or -1 with errno (the queue is freed anyway):
 * EAGAIN if verdicts could not be sent in time (the kernel drops those
 * packets at the unbind), the error of a send (EPERM, ...), or that of the
 * unbind (ETIMEDOUT, ...).
 */
int nfqb_queue_close(struct nfqb_queue *q);

/**
 * nfqb_queue_close_stats - nfqb_queue_close(), and the queue's last counters
 * @st: filled with the counters as the close left them (the packets it
 *	read from the socket and the defaults it gave included)
 * @size: sizeof(*st) as the caller knows it
 *
 * Owner thread. Returns as nfqb_queue_close(), or -1 with errno EINVAL
 * (NULL @q or @st, @size 0 or not a multiple of 8), and then @q is still
 * open.
 */
int nfqb_queue_close_stats(struct nfqb_queue *q, struct nfqb_stats *st,
			   size_t size);

/**
 * nfqb_queue_detach - give up @q without unbinding it; return its socket
 * @q: an open queue
 *
 * Owner thread; for handing the queue to another process (or another
 * nfqb_queue_adopt() in this one), e.g. across exec(). Waits for threads
 * still inside a verdict call on @q, gives packets handed out and still
 * undecided the default verdict (counted in defaults: decide them first
 * for none to be), sends every verdict (retrying a failing socket for up
 * to about 1 s), reads nothing more (what the socket holds stays for the
 * next owner) and changes nothing in the kernel (queue length, flags and
 * copy mode stay). Then frees @q, like nfqb_queue_close(): every handle of
 * @q dies. The returned socket is bound to the queue and still has
 * close-on-exec set: clear it (fcntl(F_SETFD)) before exec(), or pass the
 * fd on over a unix socket (SCM_RIGHTS) or to systemd's fd store.
 *
 * Returns the netlink socket's fd, now the caller's, or -1 with errno,
 * and then @q is still open and usable: EINVAL (NULL @q); EBUSY (packets
 * the library read are not handed out yet: take and decide them with
 * nfqb_recv(), which hands them out without reading the socket, and call
 * again; or a gap of unreadable messages is still open: nfqb_recv() on
 * until a packet closes it); EAGAIN or a send's error (EPERM, ...): the
 * verdicts could not be sent, they are kept; ESHUTDOWN (a pool's queue,
 * shut down); ENOTSOCK (a queue without socket). A decision made by
 * another thread while the call runs is refused with ESHUTDOWN or sent.
 */
int nfqb_queue_detach(struct nfqb_queue *q);

/**
 * nfqb_queue_adopt - take over queue @num bound by netlink socket @fd
 * @fd: a NETLINK_NETFILTER socket that bound queue @num (in this network
 *	namespace), typically from nfqb_queue_detach() in the process that
 *	exec()ed this one, or from systemd's fd store
 * @num: the queue number
 *
 * Checks, without reading from @fd, that it is a bound NETLINK_NETFILTER
 * socket and that the kernel lists queue @num as bound to its port id
 * (/proc/net/netfilter/nfnetlink_queue). That file is root's: a process
 * that cannot read it (a user keeping only CAP_NET_ADMIN) asks the kernel
 * instead with a configuration request that changes nothing, which reads
 * the socket: if @fd bound another queue, packets of that queue read
 * meanwhile stay undecided until @fd is closed. Then the queue is used as one
 * from nfqb_queue_open(): the library's default settings (buffers,
 * batching, default verdict...), the kernel's as the previous owner left
 * them (copy mode and range are read back, the queue length and flags are
 * the kernel's); nfqb_recv() reads on where the previous owner stopped.
 * Packets the previous owner read and never decided (it died) get the
 * default verdict by one batch before the first packet (the kernel answers
 * ENOENT, counted in enoent_errors, when there were none). On success @fd
 * belongs to the queue (close-on-exec set; nfqb_queue_close() unbinds and
 * closes it); on failure it is left open and untouched.
 *
 * Returns the queue, or NULL with errno: EBADF, ENOTSOCK (@fd is not an
 * open socket), EPROTOTYPE (not NETLINK_NETFILTER), ENOTCONN (not bound to
 * a port id), ENODEV (queue @num is not bound; also when nfnetlink_queue
 * is not loaded), EBUSY (another socket holds queue @num), EPERM (only
 * when the kernel was asked: another socket holds queue @num, or no
 * CAP_NET_ADMIN), ETIMEDOUT (the kernel did not answer), ENOMEM.
 */
struct nfqb_queue *nfqb_queue_adopt(int fd, uint16_t num);

/**
 * nfqb_queue_interrupt - make the owner's nfqb_recv() return
 * @q: an open queue
 *
 * Async-signal-safe, callable from any thread or a signal handler: a
 * nfqb_recv() (or nfqb_dispatch()) sleeping in the owner thread returns -1
 * with errno EINTR at once (one in a linger pause, at its end); if none is
 * running, the next call does. Interrupts not yet reported count as one;
 * each reported one is counted in interrupts. nfqb_queue_fd() becomes
 * readable. Packets already received stay for the next call. Returns 0,
 * or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_interrupt(struct nfqb_queue *q);

/**
 * nfqb_queue_num - the queue's number
 *
 * Returns it, or 0 with errno EINVAL for a NULL @q (0 is a queue number
 * too: clear errno before the call to tell them apart).
 */
uint16_t nfqb_queue_num(const struct nfqb_queue *q);

/**
 * nfqb_queue_fd - a file descriptor to poll/epoll for readability
 *
 * It becomes readable when packets arrive, when another thread posts a
 * decision, or on nfqb_queue_interrupt(), in blocking and non-blocking
 * mode; then call nfqb_recv() (or nfqb_dispatch()), which clears it
 * (nfqb_flush() does not). Never read from it or close it. Returns it, or
 * -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_fd(const struct nfqb_queue *q);

/**
 * nfqb_queue_socket_fd - the underlying netlink socket (for sockopts)
 *
 * Returns it, or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_socket_fd(const struct nfqb_queue *q);

/**
 * nfqb_queue_set_nonblock - make nfqb_recv() return EAGAIN instead of
 * waiting. Returns 0, or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_set_nonblock(struct nfqb_queue *q, bool on);

/**
 * nfqb_queue_set_recv_timeout - the longest a blocking nfqb_recv() waits
 * @msec: milliseconds; 0 (the default): no limit
 *
 * When @msec pass in one nfqb_recv() (or nfqb_dispatch()) call without a
 * packet to hand out, it fails with EAGAIN, as a socket with SO_RCVTIMEO
 * does. Meanwhile the library works as in any blocking call: it sleeps,
 * runs its timers, lingers (never past the timeout). No effect in
 * non-blocking mode. Owner thread. Returns 0, or -1 with errno EINVAL for a
 * NULL @q.
 */
int nfqb_queue_set_recv_timeout(struct nfqb_queue *q, uint32_t msec);

/**
 * nfqb_queue_set_wake_fd - end nfqb_recv()'s sleep when a file descriptor
 * of the application's becomes readable
 * @fd: a descriptor epoll can watch (a pipe's read end, say), or -1: none
 *
 * Made for a signal's self-pipe: a signal handler that only sets a flag
 * and writes a byte to a pipe (Python's interpreter, with the write end
 * given to signal.set_wakeup_fd(), libuv, glib) cannot interrupt a sleep
 * that begins just after the signal; with the read end set here, a sleep
 * of nfqb_recv() ends at once while @fd is readable: nfqb_recv() fails
 * with EINTR (packets come first: those in the socket too), as when a signal
 * interrupts it, and nfqb_queue_fd() is readable. The library never reads
 * or closes @fd: drain it before calling nfqb_recv() again (else it fails
 * with EINTR again at once), and close it only after setting another or
 * -1. A linger pause (at most the linger cap) is not cut short. Owner
 * thread. Returns 0, or -1 with errno: EINVAL (@q NULL, @fd below -1 or
 * one of the queue's own), or what epoll_ctl(2) says of @fd (EBADF: not
 * open, EPERM: not pollable, a regular file).
 */
int nfqb_queue_set_wake_fd(struct nfqb_queue *q, int fd);

/**
 * nfqb_queue_set_read_sleep - sleep in the socket's read, one system call
 * less per lone packet
 * @on: true to sleep in the read, false (the default) to sleep in epoll
 *
 * A blocking nfqb_recv() with nothing to hand out sleeps until the socket
 * is readable, a decision comes from another thread, an interrupt, a
 * signal or a timer, and then reads: two system calls (epoll_wait(2),
 * recvmmsg(2)) before a lone packet is handed out, three per round trip
 * with its verdict. With @on it sleeps in the read itself (recvmmsg(2)
 * with MSG_WAITFORONE and the socket's SO_RCVTIMEO as the bound): one
 * call, two per round trip, as a program that blocks in recv(2) makes.
 * Made for a receive loop that decides on its own thread (Suricata's
 * workers runmode, a DAQ): every wake-up still ends the sleep at once.
 * nfqb_queue_interrupt() and a decision from another thread then also
 * send a datagram from the queue's socket to its own port (its
 * reads drop it, uncounted): that send needs the calling thread's
 * CAP_NET_ADMIN, as sending verdicts does. A sleep is never longer than
 * a second (the read returns, and the library sleeps again): a signal
 * handler installed with SA_RESTART still interrupts it (EINTR), as it
 * does epoll_wait(2). Not used while a wake fd is set
 * (nfqb_queue_set_wake_fd()), in non-blocking mode, or in a linger
 * pause; if a wake-up's send is ever refused, the queue sleeps in epoll
 * again from then on (that one wake-up may come up to a second late).
 * Owner thread, before other threads use the queue. Returns 0, or -1
 * with errno: EINVAL (@q NULL, or a queue without a socket), EPERM (the
 * test send was refused: no CAP_NET_ADMIN).
 */
int nfqb_queue_set_read_sleep(struct nfqb_queue *q, bool on);

/**
 * nfqb_queue_set_copy_mode - how much of each packet the kernel copies
 * @mode: NFQB_COPY_META or NFQB_COPY_PACKET (NFQB_COPY_NONE is refused: in
 *	that mode the kernel queues nothing, it drops every packet sent to the
 *	queue, uncounted, even on a rule with bypass)
 * @range: bytes of payload to copy with NFQB_COPY_PACKET (kernel caps it at
 *	NFQB_MAX_PAYLOAD; 0 means as much as it can)
 *
 * Owner thread; any time, packets may be outstanding: every receive buffer
 * holds the largest message, so nothing is resized. Returns 0, or -1 with
 * errno: EINVAL for a NULL @q, NFQB_COPY_NONE or a mode not listed above
 * (the kernel would take it),
 * the kernel's errno, or ETIMEDOUT (see the guarantees above for
 * configuration calls).
 */
int nfqb_queue_set_copy_mode(struct nfqb_queue *q, enum nfqb_copy_mode mode,
			     uint32_t range);

/**
 * nfqb_queue_set_maxlen - how many packets the kernel may hold for us
 *
 * Past it the kernel drops (or, with NFQB_F_FAIL_OPEN, accepts) new packets.
 * Decisions held for a batch count against it: the library holds no more
 * than a quarter of it (nor the batch limit), and the adaptive linger's
 * pause gathers no more than a quarter of it. The library tracks up to
 * twice as many packets from the oldest one without a verdict (it grows
 * its book here, never shrinks it): reads stop past that (ENOSPC from
 * nfqb_recv(), book_full). Returns 0, or -1 with errno: EINVAL (NULL @q),
 * ENOMEM, ETIMEDOUT (see the guarantees above for configuration calls),
 * or the kernel's errno.
 */
int nfqb_queue_set_maxlen(struct nfqb_queue *q, uint32_t maxlen);

/**
 * nfqb_queue_set_flags - set the queue flags in @mask to their value in
 * @flags (NFQB_F_*)
 *
 * nfqb_queue_open() sets NFQB_F_GSO; the others are off by default.
 *
 * Returns 0, or -1 with errno: EINVAL (NULL @q), EOPNOTSUPP for a flag this
 * kernel does not know (or cannot support, as NFQB_F_SECCTX without secmark), ETIMEDOUT
 * (see the guarantees above for configuration calls), or the kernel's
 * errno.
 */
int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags, uint32_t mask);

/* What a queue does with packets longer than the copy range
 * (nfqb_queue_set_large()). */
enum nfqb_large {
	NFQB_LARGE_PASS = 0,	/* hand them out cut (nfqb_pkt_truncated()) */
	NFQB_LARGE_WHOLE,	/* hand out whole packets only */
};

/**
 * nfqb_queue_set_large - what the queue does with packets longer than the
 * copy range
 * @policy: NFQB_LARGE_PASS (the default) or NFQB_LARGE_WHOLE
 *
 * The kernel copies at most the copy range of a packet
 * (nfqb_queue_set_copy_mode(); NFQB_MAX_PAYLOAD at most), and GSO packets
 * (NFQB_F_GSO, on by default) can be longer than that: over lo a TCP
 * segment can be too. With NFQB_LARGE_PASS such a packet is handed out cut,
 * as the kernel sent it (nfqb_pkt_truncated() says so). With
 * NFQB_LARGE_WHOLE the application sees whole packets only:
 *
 * - GSO packets come whole while they fit; the first that does not turns
 *   NFQB_F_GSO off on the queue (once: a configuration message sent with
 *   the verdicts, nothing waits for it; the kernel segments them from
 *   then on; gso_off);
 * - a cut TCP GSO packet is dropped, so that TCP sends it again, in
 *   segments (large_resent); any other cut packet cannot come again smaller
 *   and is dropped, never passed uninspected (large_dropped);
 * - a TCP SYN or SYN/ACK whose MSS option allows segments longer than the
 *   copy range gets a lower one before it is handed out (mss_clamped): the
 *   application sees the changed packet, and its verdict (any but drop,
 *   the default one too) carries it to the kernel with its checksums
 *   computed, as nfqb_verdict_payload() would.
 *
 * All of it is counted in struct nfqb_stats (truncated, the cut packets
 * under either policy). Owner thread; takes effect from the next hand-out.
 * Returns 0, or -1 with errno: EINVAL (NULL @q, an unknown @policy).
 */
int nfqb_queue_set_large(struct nfqb_queue *q, enum nfqb_large policy);

/**
 * nfqb_queue_set_rcvbuf - socket receive buffer size in bytes
 *
 * Uses SO_RCVBUFFORCE, falling back to SO_RCVBUF (capped by rmem_max) when
 * the caller lacks CAP_NET_ADMIN. The adaptive linger's pause gathers no
 * more packets than fit in half of it (nfqb_queue_set_linger()). Returns
 * 0, or -1 with errno: EINVAL (NULL @q), or the errno of setsockopt().
 */
int nfqb_queue_set_rcvbuf(struct nfqb_queue *q, size_t bytes);

/**
 * nfqb_queue_set_enobufs - choose the ENOBUFS policy. Returns 0, or -1 with
 * errno: EINVAL for a NULL @q or an unknown @policy, or the error of
 * setsockopt().
 */
int nfqb_queue_set_enobufs(struct nfqb_queue *q,
			   enum nfqb_enobufs_policy policy);

/**
 * nfqb_queue_set_buffers - receive buffers of the queue
 * @count: how many packets may be outstanding (received, not yet verdicted)
 *
 * Each buffer holds the largest message (about 68 KiB of address space,
 * reserved, committed only where the kernel writes); the packet
 * descriptors are twice as many. Default NFQB_DEFAULT_BUFFERS (1024).
 * Returns 0, or -1 with
 * errno: EINVAL if @q is NULL or @count is 0 or above 65536; EBUSY while anything is
 * outstanding (a packet received and not yet verdicted, a verdict not yet
 * sent), or after the buffers were replaced 8 times (old descriptors are
 * kept until close); ENOMEM.
 */
int nfqb_queue_set_buffers(struct nfqb_queue *q, unsigned int count);

/**
 * nfqb_queue_set_default_verdict - verdict given to packets nobody decides
 * (at close, on timeout, a message that cannot be handed out, the ids of a
 * gap). NFQB_ACCEPT or NFQB_DROP; default NFQB_ACCEPT. Returns 0 or -1 with
 * EINVAL (NULL @q, another verdict).
 */
int nfqb_queue_set_default_verdict(struct nfqb_queue *q, uint32_t verdict);

/**
 * nfqb_queue_set_coalesce - turn the coalescer on (default) or off
 *
 * On: decisions are turned into as few batch verdicts as is safe. Off: each
 * decision becomes one NFQNL_MSG_VERDICT; they still leave together, one
 * sendmsg per flush. Returns 0, or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_set_coalesce(struct nfqb_queue *q, bool on);

/**
 * nfqb_queue_set_batch_limit - flush when this many decided packets wait
 * (1..65536, default 64), or a quarter of the queue's length if that is
 * fewer (nfqb_queue_set_maxlen()). Returns 0 or -1 with EINVAL (NULL @q, @limit out
 * of range).
 */
int nfqb_queue_set_batch_limit(struct nfqb_queue *q, unsigned int limit);

/**
 * nfqb_queue_set_latency - the longest a decided packet may wait for its
 * verdict to be sent, in microseconds (default 1000; 0 sends at once).
 * Returns 0, or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_set_latency(struct nfqb_queue *q, uint32_t usec);

/* nfqb_queue_set_linger(): adapt the pause to the traffic (the default). */
#define NFQB_LINGER_AUTO	0xffffffffu

/**
 * nfqb_queue_set_linger - pause, in microseconds, before going back to the
 * socket while packets stream in
 *
 * When the socket runs dry in the middle of a stream, a blocking
 * nfqb_recv() may pause and take what arrived meanwhile: one wake-up and
 * one verdict message for many packets, at the cost of the pause's delay.
 *
 * NFQB_LINGER_AUTO (the default) adapts, and pauses only while no flow
 * waits on us: a TCP, SCTP or DCCP packet, or a UDP flow that came alone
 * in 4 big reads in a row (request/response), turns pausing and holding
 * decisions for a batch off for 20 ms after each of its packets.
 * Otherwise decisions are held across the pause for a bigger batch (never
 * past the latency bound), as with a fixed pause; the pause lasts as long
 * as the recent pace of the stream needs to gather a full read (64
 * packets, or what fits in half the socket's receive buffer or a quarter
 * of the queue if that is fewer: see nfqb_queue_set_rcvbuf() and
 * nfqb_queue_set_maxlen()), at most 200 us, and none when
 * that is under 5 us; a pause that brings some packets, but less than a
 * quarter of what the pace promised for it, shows a stream that waits on
 * us: no pause for 10 ms, doubling up to 1 s while it keeps showing. A
 * pause that brings nothing ends the stream (no pause until a read brings
 * two packets or more).
 * The pause is exact (a timerfd, no timer slack) and ends early when
 * another thread posts a decision or interrupts.
 *
 * A number of microseconds fixes the pause: every time the socket runs dry
 * mid-stream, decisions held (never past the latency bound) for bigger
 * batches. 0 turns pausing off. Returns 0, or -1 with EINVAL for a NULL @q
 * or a second or more (other than NFQB_LINGER_AUTO).
 */
int nfqb_queue_set_linger(struct nfqb_queue *q, uint32_t usec);

/**
 * nfqb_queue_set_verdict_timeout - after @msec milliseconds undecided, a
 * packet gets the default verdict (0, the default, never), counted in
 * timeouts. Its buffer is given back once that verdict is sent, without
 * the application: do not read the packet afterwards; a late verdict on it
 * fails with ETIMEDOUT (EALREADY once its descriptor was reused). Returns 0,
 * or -1 with errno EINVAL for a NULL @q.
 */
int nfqb_queue_set_verdict_timeout(struct nfqb_queue *q, uint32_t msec);

/**
 * nfqb_queue_stats - copy the queue's counters into @st
 * @size: sizeof(*st) as the caller knows it
 *
 * Every field is safe to read from any thread (each counter is atomic;
 * fields read while packets flow may be a few packets apart). A shorter
 * @size gets the first fields, a longer one zeros past ours. Returns 0 or
 * -1 with EINVAL (NULL @q or @st, @size not a multiple of 8).
 */
int nfqb_queue_stats(const struct nfqb_queue *q, struct nfqb_stats *st,
		     size_t size);

/**
 * nfqb_queue_fallback - true if the queue has switched to per-packet
 * verdicts for good: the kernel broke the monotonic-id contract, a gap of
 * unreadable messages could not be explained, or the kernel refused a
 * verdict with an error other than ENOENT. Any thread. Returns false with
 * errno EINVAL for a NULL @q.
 */
bool nfqb_queue_fallback(const struct nfqb_queue *q);

/**
 * nfqb_queue_next_timeout - milliseconds until the library needs to run
 * (latency bound, verdict timeout, retry of a failed send) for a caller
 * with its own poll loop; 0 when it is due (then nfqb_recv() or
 * nfqb_flush() called now does it), -1 when nothing is (errno untouched).
 * Owner thread only.
 *
 * The loop: a non-blocking queue; nfqb_recv() until it fails with EAGAIN;
 * then poll() on nfqb_queue_fd() for this long. It does not spin: after
 * EAGAIN the fd is readable only when something new came (packets, a
 * decision from another thread, an interrupt), and this is never 0 for a
 * timer already served.
 *
 * Returns -1 with errno EINVAL for a NULL @q too.
 */
int nfqb_queue_next_timeout(const struct nfqb_queue *q);

/* --- Receiving ---------------------------------------------------------- */

/**
 * nfqb_recv - receive up to @max packets
 * @vec: filled with packet views, valid until each gets its verdict
 *
 * Owner thread. First does what is due (verdict timeout, sending decisions,
 * retrying a failed send), then receives many packets in one syscall, or
 * sleeps until packets, decisions or timers come. Each returned packet must
 * be finalized exactly once with nfqb_verdict*() (from any thread, in any
 * order). Returns the number of packets (> 0), or -1 with errno: EINVAL
 * (@max 0, NULL @q or @vec), EAGAIN (non-blocking, nothing to read; or
 * the receive timeout passed, see nfqb_queue_set_recv_timeout()), ENOSPC
 * (every receive buffer is held by the application, or the book of
 * packets read and not settled is full because an older packet is still
 * undecided: the packets wait in the kernel's queue; at once in
 * non-blocking mode, after waiting up to 1 s for a decision in blocking
 * mode; counted in buffers_exhausted or book_full), ENOBUFS (the socket overflowed on
 * receive; counted in enobufs; call again), EINTR (a signal, or
 * nfqb_queue_interrupt()), ESHUTDOWN (the queue was shut down), EPERM
 * (the kernel refused verdicts: no CAP_NET_ADMIN; reported once per
 * refusal read, see the guarantees), or the error of the socket or of a
 * send (a failed send is kept and retried; a transient one is not
 * reported; one seen by a call that returns packets, by the next call). EINTR, ENOBUFS, ENOSPC and EAGAIN pass:
 * call again (after ENOSPC, once decisions free buffers or the oldest
 * packet); the others
 * mean the queue cannot go on.
 */
int nfqb_recv(struct nfqb_queue *q, struct nfqb_packet **vec,
	      unsigned int max);

/** A callback for nfqb_dispatch(): decide @p (now, or later) and return 0;
 * a negative return stops the dispatch after this packet (which is the
 * callback's to decide). */
typedef int (*nfqb_packet_cb)(struct nfqb_packet *p, void *data);

/**
 * nfqb_dispatch - nfqb_recv() and call @cb for every packet received
 *
 * Owner thread. Returns the number of packets handled, or -1 with errno:
 * EINVAL for a NULL @q or @cb, those of nfqb_recv(), or ECANCELED if a callback
 * returned a negative value; the packets not yet passed to the callback
 * then stay with the library and are handed out by the next nfqb_recv().
 */
int nfqb_dispatch(struct nfqb_queue *q, nfqb_packet_cb cb, void *data);

/**
 * nfqb_flush - send every decision that can be sent now
 *
 * Owner thread only. Also runs the verdict timeout and retries a failed
 * send. Returns the number of verdict messages the kernel took (0 if
 * nothing could be sent), or -1 with errno: EINVAL (NULL @q), EAGAIN (a
 * send failed for now: the decisions are kept and retried), ESHUTDOWN, or
 * the send's error.
 */
int nfqb_flush(struct nfqb_queue *q);

/* --- Packet views ------------------------------------------------------- */

/* Each getter of an optional attribute returns false (and leaves *out
 * untouched) when the kernel did not send it. On a dead handle (its
 * verdict sent, or its queue closed by a pool), and on a NULL one, every
 * getter returns "absent": false, 0 or NULL. The getters never fail and
 * never set errno. */

uint32_t nfqb_pkt_id(const struct nfqb_packet *p);
uint16_t nfqb_pkt_queue_num(const struct nfqb_packet *p);
uint8_t nfqb_pkt_family(const struct nfqb_packet *p);
uint8_t nfqb_pkt_hook(const struct nfqb_packet *p);
enum nfqb_hook_point nfqb_pkt_hook_point(const struct nfqb_packet *p);
/* hw_protocol, host byte order (e.g. 0x0800 for IPv4) */
uint16_t nfqb_pkt_hw_protocol(const struct nfqb_packet *p);
bool nfqb_pkt_mark(const struct nfqb_packet *p, uint32_t *mark);
/* The time the packet was received, in nanoseconds since the epoch
 * (the kernel's seconds and microseconds), when the kernel sent one. */
bool nfqb_pkt_timestamp(const struct nfqb_packet *p, uint64_t *ns);
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
 * Records the decision; the owner sends it. Callable from any thread; @p
 * is dead afterwards (see the guarantees above). Returns 0, or -1 with
 * errno, counted in late_verdicts except EINVAL: EINVAL for a bad verdict
 * or a NULL @p; EALREADY if @p was decided before (its handle is dead);
 * ETIMEDOUT if the verdict timeout gave it the default verdict; ESHUTDOWN
 * if its queue was shut down by the pool. On error no packet is touched.
 */
int nfqb_verdict(struct nfqb_packet *p, uint32_t verdict);

/** nfqb_verdict_mark - nfqb_verdict() that also sets skb->mark; errors as
 * nfqb_verdict(). */
int nfqb_verdict_mark(struct nfqb_packet *p, uint32_t verdict, uint32_t mark);

/**
 * nfqb_verdict_ex - decide @p with the options in @v (mark, payload,
 * priority, queue-to-N with bypass, the conntrack mark and labels)
 * @size: sizeof(*v) as the caller knows it
 *
 * The payload is copied before return. NFQB_V_CT_MARK and
 * NFQB_V_CT_LABELS change the packet's conntrack entry with the verdict
 * (the kernel's NFQA_CT): a rule on `ct mark` can then decide the flow's
 * later packets without queueing them. The kernel applies them only if
 * the packet has a conntrack entry and the kernel has
 * CONFIG_NETFILTER_NETLINK_GLUE_CT with nf_conntrack_netlink (built in
 * or loaded), and labels only on an entry that has them (a ruleset that uses labels);
 * otherwise it takes the verdict and leaves the entry as it was, without
 * an error (labels that fail leave the mark too). Errors as nfqb_verdict(), and
 * EINVAL also for a NULL @v, unknown flags, NFQB_V_BYPASS without
 * NFQB_QUEUE, a NULL payload with a length, or a @size below the end of
 * the struct's first version; E2BIG (@size larger than the library's struct and a byte
 * past it not zero), EMSGSIZE (payload longer than NFQB_MAX_PAYLOAD) and ENOMEM
 * (no memory for the payload copy). After EINVAL for the verdict itself,
 * E2BIG, EMSGSIZE or ENOMEM, @p is still the caller's to decide.
 */
int nfqb_verdict_ex(struct nfqb_packet *p, const struct nfqb_verdict *v,
		    size_t size);

/**
 * nfqb_verdict_ct_mark - nfqb_verdict() that also sets the mark of the
 * packet's conntrack entry to @ct_mark (NFQB_V_CT_MARK, every bit; see
 * nfqb_verdict_ex()); errors as nfqb_verdict(). Since 1.1.0.
 */
int nfqb_verdict_ct_mark(struct nfqb_packet *p, uint32_t verdict,
			 uint32_t ct_mark);

/**
 * nfqb_verdict_batch - verdict every outstanding packet up to @max_id
 * @mark: NULL, or the mark to set on all of them
 *
 * Packets already decided keep their decision; every other packet handed
 * out by nfqb_recv() or nfqb_dispatch() (not those the library still holds)
 * with an id not after @max_id, undecided and not timed out, is finalized by
 * this call and its handle is dead. Owner thread only. Sent at the next
 * flush (nfqb_flush() or nfqb_recv()). Returns the number of packets it
 * finalized, or -1 with errno EINVAL (NULL @q, bad verdict), ENOENT (no
 * such packet) or ESHUTDOWN (queue shut down by the pool).
 */
int nfqb_verdict_batch(struct nfqb_queue *q, uint32_t max_id, uint32_t verdict,
		       const uint32_t *mark);

/* --- The kernel's statistics -------------------------------------------- */

/**
 * nfqb_kstats_read - parse /proc/net/netfilter/nfnetlink_queue of the
 * current network namespace into @out (up to @max entries)
 * @out: an array of @max entries of @size bytes each (may be NULL to count)
 * @size: sizeof(*out) as the caller knows it: the array's stride
 *
 * Returns the number of queues listed (which may exceed @max), or -1 with
 * errno: EINVAL (@size 0 or not a multiple of 4), ENOENT if
 * nfnetlink_queue is not loaded, EACCES for a caller that may not read it
 * (the file is root's, mode 0440: also after switching to another user
 * keeping CAP_NET_ADMIN), or another error of reading the file.
 */
int nfqb_kstats_read(struct nfqb_kstats *out, size_t max, size_t size);

/**
 * nfqb_kstats_get - the kernel's view of queue @num
 * @out: filled in, may be NULL (then only tells if the queue is bound)
 * @size: sizeof(*out) as the caller knows it
 *
 * Returns 0, or -1 with errno: EINVAL (@size 0 or not a multiple of 4),
 * ENOENT if the queue is not bound (or nfnetlink_queue is not loaded), or
 * the error of reading the file.
 */
int nfqb_kstats_get(uint16_t num, struct nfqb_kstats *out, size_t size);

/* --- Misc ---------------------------------------------------------------- */

/** nfqb_version - the library's version string, e.g. "1.0.0". */
const char *nfqb_version(void);

/** nfqb_verdict_name - "accept", "drop", ... for a verdict code. */
const char *nfqb_verdict_name(uint32_t verdict);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFQ_BATCH_H */
