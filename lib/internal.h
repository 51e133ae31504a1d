/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal definitions every file of libnfq-batch needs. Nothing here is
 * part of the ABI.
 *
 * The data path runs one way, one file per step, each with its own header
 * that says what state it owns. A step's functions take its own state and
 * its view of the rest of the queue (a struct nfqb_*_in: const pointers to
 * what it reads, the counters, and the other owners it hands on to, which
 * it writes only through their functions), never the queue:
 *
 *   rx.c      socket -> datagrams (recvmmsg) into the free receive
 *             buffers, lengths and sender checked, each message parsed
 *             (parse.c) into the next free descriptor (pkt.c) and told to
 *             the book
 *   book.c    every message of the queue until the kernel took its
 *             verdict: a packet (handed out from here, oldest first), a
 *             default-verdict stub for a message we could read the id of
 *             but not use, or a gap for messages we could not read at all
 *   verdict.c the application decides (any thread): a descriptor goes
 *             PENDING -> DECIDED, counted as posted (post.h), nothing is
 *             sent
 *   plan.c    pure: the book's entries in, the verdict messages out
 *             (msg.c writes them; no syscalls, no clock, no globals)
 *   tx.c      the transport: sends the planned messages in one sendmsg,
 *             and only when the kernel took them does the book drop
 *             what they covered; a failed send keeps every decision and is
 *             retried. Every datagram a queue sends goes through it.
 *   pace.c    the stream's pace: how long to linger, which flows wait on
 *             us; the wait for the next read
 *   req.c     the configuration round trips (a request, its answer)
 *
 * The layers, each including only headers of its own layer or below:
 *
 *   1  internal.h, sys.h (sys-real.h), settings.h (the socket and the
 *      settings: queue.c writes them, the steps read them), post.h
 *   2  pkt.h, msg.h, parse.h: descriptors and buffers, messages, parsing
 *   3  book.h, plan.h; then the steps rx.h, tx.h, pace.h, req.h; wake.h
 *      (waking the owner: other threads ring, the loop clears)
 *   4  the queue: queue-int.h (struct nfqb_queue, who writes each part),
 *      included only by the queue's own files: queue.c (open, configure,
 *      shut down, hand over; links the steps' views), loop.c (nfqb_recv():
 *      one pass after another, each step once), verdict.c (the
 *      decisions) and large.c (the large-packet policy at hand-out);
 *      queue.h and loop.h, the functions of queue.c and loop.c with the
 *      struct opaque
 *   5  the worker pool, pool.c and pool-*.c (pool-int.h), over queue.h,
 *      loop.h and the public API
 *
 * stats.c reads counters and the kernel's table; abi.c reads and writes
 * the structs that can grow; compat.c (shared library only) keeps the
 * 0.1.0 interfaces under their old symbol versions; sys.c is what the
 * library asks of the system, the real calls only (sys.h: tests that
 * inject failures link their own seam in its place).
 *
 * The packet helpers (<libnfq-batch/packet.h>) stand apart from the data
 * path: hdrs.c (the header parser), csum.c (checksums) and mss.c (MSS
 * clamping) are pure buffer code of layer 1; mangle.c (a queue's packet:
 * its headers, a verdict with a changed payload) is of layer 4 and uses
 * the public API only.
 *
 * How a function says it failed, one convention per layer:
 *
 * - Public functions (NFQB_EXPORT): -1 (or NULL) and errno, as
 *   <libnfq-batch/libnfq-batch.h> says; a NULL handle is EINVAL.
 * - Everything the owner thread runs (rx, book, tx, req, pace, loop, the
 *   queue's life in queue.c, the buffers of pkt.c, the pool's life in
 *   pool*.c, the system calls of sys.c): the same, -1 (or NULL) and
 *   errno, a result >= 0 carrying data; so a public function returns what
 *   its helpers said as it is. nfqb_fail(err) sets errno and returns -1.
 *   A helper that fails without setting errno says so (the allocations of
 *   book.c and pkt.c: errno is the allocator's).
 * - The decision path, which any thread runs once per packet (pkt.c's
 *   nfqb_pkt_claim(), verdict.c's claim(), decide() and decision_of()),
 *   and nfqb_struct_in() (abi.c), which reads the application's structs
 *   for it and for the pool: 0 or an errno value, errno untouched; the
 *   public function turns it into -1 and errno once (verdict.c's
 *   decided(), pool.c's pool_config()).
 * - The parsers (parse.c's attribute walks, stats.c's parse_line()):
 *   -1 for a malformed input, no errno; nfqb_parse_packet() returns
 *   its enum. The packet helpers' nfqb_hdrs_at() and nfqb_csum_fix_at()
 *   return 0 or an errno value (their public callers tell EBADMSG from
 *   EPROTONOSUPPORT), errno untouched.
 * - An error kept for later is an errno value, 0 for none: q->loop.error,
 *   q->req.answer, the acks rx.c read, pool->fatal and pool->err (which
 *   nfqb_pool_error() returns as it is).
 */
#ifndef NFQB_INTERNAL_H
#define NFQB_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

struct nfqb_queue;

/* Fail as a public function does: errno @err, -1 returned. */
static inline int nfqb_fail(int err)
{
	errno = err;
	return -1;
}

/* Serial number arithmetic on 32-bit packet ids (RFC 1982 style): is @a
 * after @b? (A macro, like the kernel's time_after().) */
#define nfqb_id_after(a, b)	((int32_t)((uint32_t)(a) - (uint32_t)(b)) > 0)

/*
 * Counters: struct nfqb_stats as atomics, read by any thread, each written
 * by the file that counts it (an atomic add: late_verdicts is counted by
 * any deciding thread); a step gets the queue's counters in its view. The
 * data path counts per read, per flush, per batch where it can, not per
 * packet.
 */
struct nfqb_counters {
	_Atomic uint64_t v[sizeof(struct nfqb_stats) / sizeof(uint64_t)];
};

#define NFQB_STAT_IDX(field) (offsetof(struct nfqb_stats, field) / sizeof(uint64_t))
#define nfqb_stat_add(ctr, field, n) ((ctr)->v[NFQB_STAT_IDX(field)] += (n))
#define nfqb_stat_inc(ctr, field) ((ctr)->v[NFQB_STAT_IDX(field)] += 1)
#define nfqb_stat_sub(ctr, field, n) ((ctr)->v[NFQB_STAT_IDX(field)] -= (n))

/* Copy @c into the caller's struct of @size bytes (stats.c). */
void nfqb_counters_read(const struct nfqb_counters *c, struct nfqb_stats *st,
			size_t size);

/*
 * Structs that can grow (abi.c). Read the caller's struct of @size bytes
 * at @src into @dst (@ours bytes, the library's sizeof): fields it lacks
 * are zero. Returns 0, EINVAL (NULL @src, @size below @min, the 1.0 size)
 * or E2BIG (a byte past @ours not zero).
 */
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

#endif /* NFQB_INTERNAL_H */
