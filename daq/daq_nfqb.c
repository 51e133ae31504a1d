// SPDX-License-Identifier: GPL-2.0-only
/*
 * daq_nfqb: a libdaq 3 module that receives packets from nfnetlink_queue
 * through libnfq-batch (many packets per syscall, verdicts coalesced into
 * batch messages).
 *
 * Copyright (C) 2026 The libnfq-batch authors.
 *
 * This program is free software; you can redistribute it and/or modify it
 * under the terms of the GNU General Public License version 2 as published
 * by the Free Software Foundation.
 *
 * This program is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU General
 * Public License for more details.
 *
 * This file (and this directory) is GPL-2.0, the licence libdaq modules
 * are distributed under; it links libnfq-batch, which stays
 * LGPL-2.1-or-later.  No libdaq code is copied here: the module is written
 * against libdaq's public module API (daq_module_api.h) only.
 *
 * Behaviour follows libdaq's stock nfq module where it makes sense: the
 * input is a queue number (or a range "first-last", one queue per
 * instance), messages are DAQ_MSG_TYPE_PACKET with DLT_RAW, and verdicts
 * map PASS, WHITELIST and IGNORE to accept, BLOCK and BLACKLIST to drop,
 * REPLACE to accept with the (in place modified) payload. WHITELIST and
 * BLACKLIST also set the conntrack mark when whitelist_mark or
 * blacklist_mark is given, so that the ruleset decides the rest of the
 * flow without queueing it (what the stock module cannot do).
 *
 * The contract with the application (Snort's SFDAQInstance):
 * - Every packet gets exactly one verdict: the application's through
 *   msg_finalize(), or the default verdict (nfqb_queue_close() at stop,
 *   the verdict timeout), or, for what the application never sees (a
 *   packet the kernel could not copy whole), the library's
 *   (NFQB_LARGE_WHOLE: dropped), counted as filtered.
 * - msg_finalize() always gives the message back (DAQ_SUCCESS): Snort
 *   counts a message as returned only then.
 * - A decision leaves the module without waiting for the next receive:
 *   when the application has given back the last message of a receive, or
 *   every message, or the latency bound is due.
 * - The data of a message stays valid until its finalize, also past the
 *   verdict timeout (a message held across the module's next library
 *   call gets a copy first, protect_held()) and past stop (the
 *   messages still held are copied before the queue is closed; their
 *   finalize then does nothing but give the message back).
 * - interrupt() may run in another thread while stop() closes the queue.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include <daq_dlt.h>
#include <daq_module_api.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/packet.h>

#define DAQ_NFQB_VERSION	2

#define NFQB_DAQ_DEFAULT_POOL	256
#define NFQB_DAQ_MAX_POOL	65536
#define NFQB_DAQ_DEFAULT_MAXLEN	1024
#define NFQB_HELD_WAIT_MS	100	/* pool empty, no receive timeout */

#define SET_ERROR(ctx, ...) base_api.set_errbuf((ctx)->modinst, __VA_ARGS__)

struct nfqb_daq_desc {
	DAQ_Msg_t msg;
	DAQ_PktHdr_t pkthdr;
	DAQ_PktDecodeData_t decode;
	struct nfqb_packet *pkt;
	uint8_t *base;			/* the packet from its first byte */
	uint32_t off;			/* network header offset in base */
	uint8_t *copy;			/* own copy (verdict timeout: made
					 * before a library call while held) */
	struct nfqb_daq_desc *hprev, *hnext;	/* on the held list */
	bool on_held;
	uint8_t *kept;			/* copy made at stop, for a message
					 * the application still holds */
	bool held_past_stop;		/* given out, not finalized at stop:
					 * off the free list until finalize */
	struct nfqb_daq_desc *next;
};

struct nfqb_daq_ctx {
	/* configuration */
	DAQ_ModuleInstance_h modinst;
	unsigned int queue_num;
	bool queue_claimed;
	bool input_range;		/* the input was FIRST-LAST */
	uint16_t range_first, range_last;
	int snaplen;
	unsigned int timeout;		/* ms, 0: block until packets */
	unsigned int queue_maxlen;
	bool fail_open;
	bool debug;
	bool conntrack;
	bool coalesce;
	bool set_batch_limit;
	unsigned int batch_limit;
	bool set_latency;
	uint32_t latency;
	bool set_linger;
	uint32_t linger;
	uint32_t default_verdict;	/* NFQB_ACCEPT or NFQB_DROP */
	uint32_t verdict_timeout;	/* ms, 0: never */
	/* WHITELIST, BLACKLIST: set the conntrack entry's mark too, so that
	 * a rule on it decides the rest of the flow in the kernel (0: no) */
	uint32_t whitelist_mark, blacklist_mark;
	unsigned int rcvbuf;
	enum { GSO_AUTO, GSO_ON, GSO_OFF } gso;
	unsigned int legacy;		/* LEGACY_*: values said at instantiate */
	const char *bad_why;		/* why a variable's value is refused */

	/* state (packet thread) */
	struct nfqb_queue *q;
	struct nfqb_daq_desc *descs;
	struct nfqb_daq_desc *freelist;
	/* verdict timeout: messages handed out that point into the
	 * library's buffers (no copy yet), oldest first */
	struct nfqb_daq_desc *held_head, *held_tail;
	struct nfqb_daq_desc *batch_last;	/* last message of a receive */
	uint64_t unflushed_since;	/* ns: oldest decision not flushed */
	uint64_t latency_ns;		/* the latency bound */
	struct nfqb_packet **vec;
	DAQ_MsgPoolInfo_t pool;

	/* what interrupt() may touch from another thread */
	_Atomic(struct nfqb_queue *) irq_q;
	atomic_uint irq_users;
	atomic_bool interrupted;

	/* counters */
	DAQ_Stats_t stats;
	struct nfqb_stats base;		/* library counters at the last reset */
	struct nfqb_stats final;	/* library counters after the close */
	struct nfqb_kstats kbase;	/* the kernel's at start or reset */
	struct nfqb_kstats kfinal;	/* the kernel's just before the close */
	bool have_kstats;
	uint64_t replace_unchanged;	/* REPLACE sent as plain accept */
	uint64_t verdict_failures;	/* nfqb_verdict*() refused */
	uint64_t late_finalize;		/* finalize after stop */
	uint64_t timed_out;		/* finalize after the verdict timeout */
	uint64_t csum_trusted;		/* checksums vouched for by the kernel */
};

static DAQ_BaseAPI_t base_api;

/* Queues bound by the instances of this process: two instances (Snort's
 * packet threads) given the same queue are told at instantiate. */
static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t claims[65536 / 8];
/* The inputs of those instances: a range is one input for all of them
 * (each takes its own queue of it); beside another range, or beside
 * single queues, queues of it would be left unbound. */
static unsigned int range_users, single_users;
static uint16_t range_first, range_last;

static DAQ_VariableDesc_t nfqb_daq_vars[] = {
	{ "debug", "Print the configuration at start and the library's counters at stop",
	  0 },
	{ "fail_open", "Let the kernel accept packets when the queue is full (fail_open or fail_open=1; 0 turns it off)",
	  0 },
	{ "queue_maxlen", "Maximum queue length in the kernel (default: 1024)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "batch_limit", "Flush verdicts when this many decided packets wait (1..65536, default: 64)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "latency", "Longest a decided packet waits for its verdict, in microseconds (default: 1000)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "linger", "Pause before reading again mid-stream, microseconds or 'auto' (default: auto)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "default_verdict", "Verdict for packets nobody decided at stop: accept (default) or drop",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "verdict_timeout", "Give the default verdict to packets undecided this many ms (default: 0, never)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "conntrack", "Ask for conntrack data: the conntrack id becomes the packet's flow id",
	  0 },
	{ "no_coalesce", "Send one verdict message per packet (no batch verdicts)",
	  0 },
	{ "rcvbuf", "Socket receive buffer in bytes (default: queue_maxlen * 65535)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "mss_clamp", "Deprecated, auto only: the library lowers the TCP MSS option of SYNs so that segments fit what the kernel copies; off is ignored (said at start), a fixed ceiling N is no longer supported (refused: use nftables 'tcp option maxseg size set N')",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "truncated", "Deprecated, block only: packets longer than the kernel copies (65531 bytes) are dropped, never passed uninspected, counted as filtered; pass is ignored (said at start)",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "whitelist_mark", "WHITELIST verdicts also set this conntrack mark (nonzero), for a ruleset that accepts marked connections ahead of the queue rule: the rest of the flow bypasses Snort in the kernel",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "blacklist_mark", "BLACKLIST verdicts also set this conntrack mark (nonzero), for a ruleset that drops marked connections ahead of the queue rule",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
	{ "gso", "Take GSO packets whole: auto (default: until one is longer than the kernel copies, then have the kernel segment them), on (now the same as auto), off",
	  DAQ_VAR_DESC_REQUIRES_ARGUMENT },
};

/*
 * The library's API through small helpers, so that a change of its public
 * structures (timestamp type, struct nfqb_verdict) is adapted here only.
 */
static int qb_accept(struct nfqb_packet *p)
{
	return nfqb_verdict(p, NFQB_ACCEPT);
}

static int qb_drop(struct nfqb_packet *p)
{
	return nfqb_verdict(p, NFQB_DROP);
}

/* @verdict, and the conntrack entry's mark set to @ct_mark (0: not). */
static int qb_flow(struct nfqb_packet *p, uint32_t verdict, uint32_t ct_mark)
{
	if (!ct_mark)
		return nfqb_verdict(p, verdict);
	return nfqb_verdict_ct_mark(p, verdict, ct_mark);
}

static int qb_replace(struct nfqb_packet *p, const void *data, uint32_t len)
{
	struct nfqb_verdict v;

	memset(&v, 0, sizeof(v));
	v.verdict = NFQB_ACCEPT;
	v.flags = NFQB_V_PAYLOAD;
	v.payload = data;
	v.payload_len = len;
	return nfqb_verdict_ex(p, &v, sizeof(v));
}

static void qb_timestamp(const struct nfqb_packet *p, struct timeval *tv)
{
	uint64_t ns;

	if (!nfqb_pkt_timestamp(p, &ns)) {
		gettimeofday(tv, NULL);
		return;
	}
	tv->tv_sec = (time_t)(ns / 1000000000u);
	tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
}

static int32_t qb_ifindex(bool (*get)(const struct nfqb_packet *, uint32_t *),
			  const struct nfqb_packet *p)
{
	uint32_t idx;

	if (!get(p, &idx) || idx > INT32_MAX)
		return DAQ_PKTHDR_UNKNOWN;
	return (int32_t)idx;
}

static int qb_stats(const struct nfqb_queue *q, struct nfqb_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!q)
		return 0;
	return nfqb_queue_stats(q, st, sizeof(*st));
}

/* --- Configuration --------------------------------------------------------- */

/* @s in @base (0: decimal, or hex with 0x) into *@out, within [min, max]. */
static int parse_ulong(const char *s, int base, unsigned long min,
		       unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	return parse_ulong(s, 10, min, max, out);
}

/* A flag variable: no value (on), or 1/0, yes/no, true/false, on/off. */
static int parse_flag(const char *s, bool *out)
{
	static const char *const on[] = { "1", "yes", "true", "on" };
	static const char *const off[] = { "0", "no", "false", "off" };
	size_t i;

	if (!s || !*s) {
		*out = true;
		return 0;
	}
	for (i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (!strcasecmp(s, on[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, off[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/*
 * "N" or "FIRST-LAST". A range gives instance i (1-based; 0 means
 * unspecified, the first) queue FIRST + i - 1, and must have as many
 * queues as there are instances: a wider one would leave queues unbound
 * (their packets dropped, or passed by --queue-bypass, uninspected). It
 * must also be every instance's input (claim_queue()): Snort's -z 2
 * -i 0-1 -i 2-3 would bind 0 and 3 only.
 */
static int parse_input(struct nfqb_daq_ctx *c, const char *input,
		       unsigned int instance_id, unsigned int total)
{
	unsigned long first, last;
	const char *dash;
	char buf[16];

	if (!input)
		return -1;
	if (instance_id == 0)
		instance_id = 1;
	if (total == 0)
		total = 1;
	dash = strchr(input, '-');
	if (!dash)
		return parse_uint(input, 0, 65535, &first) ? -1 :
			(c->queue_num = first, 0);
	if ((size_t)(dash - input) >= sizeof(buf))
		return -1;
	memcpy(buf, input, dash - input);
	buf[dash - input] = '\0';
	if (parse_uint(buf, 0, 65535, &first) ||
	    parse_uint(dash + 1, 0, 65535, &last) || last < first)
		return -1;
	c->input_range = true;
	c->range_first = (uint16_t)first;
	c->range_last = (uint16_t)last;
	if (last - first + 1 != total) {
		SET_ERROR(c, "%s: the range '%s' has %lu queues for %u instances (packet threads): each instance binds one queue, give as many (Snort: -z %lu)",
			  __func__, input, last - first + 1, total,
			  last - first + 1);
		return -2;
	}
	if (first + instance_id - 1 > last) {
		SET_ERROR(c, "%s: instance %u has no queue in the range '%s'",
			  __func__, instance_id, input);
		return -2;
	}
	c->queue_num = first + instance_id - 1;
	return 0;
}

/* Claim the queue for this instance within the process. */
static int claim_queue(struct nfqb_daq_ctx *c, unsigned int instance_id,
		       unsigned int total)
{
	unsigned int q = c->queue_num;
	int rc = 0;

	pthread_mutex_lock(&claims_lock);
	if (c->input_range ?
	    single_users || (range_users && (range_first != c->range_first ||
					     range_last != c->range_last)) :
	    range_users > 0) {
		rc = -2;
	} else if (claims[q / 8] & (1u << (q % 8))) {
		rc = -1;
	} else {
		claims[q / 8] |= (uint8_t)(1u << (q % 8));
		if (c->input_range) {
			range_first = c->range_first;
			range_last = c->range_last;
			range_users++;
		} else {
			single_users++;
		}
	}
	pthread_mutex_unlock(&claims_lock);
	if (rc == -2) {
		char in[16];

		if (c->input_range)
			snprintf(in, sizeof(in), "%u-%u", c->range_first,
				 c->range_last);
		else
			snprintf(in, sizeof(in), "%u", q);
		SET_ERROR(c, "%s: instance %u of %u: its input '%s' beside another instance's %s would leave queues unbound: a range FIRST-LAST is the one input of all instances (-i FIRST-LAST, as many queues as instances: Snort -z), or give each instance one queue (-i N -i M ...)",
			  __func__, instance_id ? instance_id : 1,
			  total ? total : 1, in,
			  c->input_range && !single_users ? "other range" :
			  c->input_range ? "single queue" : "range");
		return -1;
	}
	if (rc) {
		SET_ERROR(c, "%s: queue %u is taken by another instance of this process (instance %u of %u): a queue has one reader; give each packet thread its own queue (-i N -i M ...) or one range for all (-i FIRST-LAST with iptables --queue-balance FIRST:LAST)",
			  __func__, q, instance_id ? instance_id : 1,
			  total ? total : 1);
		return -1;
	}
	c->queue_claimed = true;
	return 0;
}

static void release_queue(struct nfqb_daq_ctx *c)
{
	unsigned int q = c->queue_num;

	if (!c->queue_claimed)
		return;
	pthread_mutex_lock(&claims_lock);
	claims[q / 8] &= (uint8_t)~(1u << (q % 8));
	if (c->input_range)
		range_users--;
	else
		single_users--;
	pthread_mutex_unlock(&claims_lock);
	c->queue_claimed = false;
}

/* A value a variable takes by name. */
struct var_word {
	const char *word;
	unsigned int value;
};

/* @s, one of the @n words of @w (as written): its value in *out; 0, or
 * -1 for none. */
static int parse_word(const char *s, const struct var_word *w, size_t n,
		      unsigned int *out)
{
	size_t i;

	for (i = 0; s && i < n; i++) {
		if (!strcmp(s, w[i].word)) {
			*out = w[i].value;
			return 0;
		}
	}
	return -1;
}

/*
 * The variables, one parser each: the value @val (NULL when none was
 * given) into the context; 0, or -1 for a bad value (then nothing is
 * changed).
 */
static int var_debug(struct nfqb_daq_ctx *c, const char *val)
{
	return parse_flag(val, &c->debug);
}

static int var_fail_open(struct nfqb_daq_ctx *c, const char *val)
{
	return parse_flag(val, &c->fail_open);
}

static int var_conntrack(struct nfqb_daq_ctx *c, const char *val)
{
	return parse_flag(val, &c->conntrack);
}

/* A conntrack mark: decimal, or hex with 0x as marks are usually
 * written; not 0 (no mark). */
static int var_mark(const char *val, uint32_t *out)
{
	unsigned long v;

	if (parse_ulong(val, 0, 1, UINT32_MAX, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int var_whitelist_mark(struct nfqb_daq_ctx *c, const char *val)
{
	return var_mark(val, &c->whitelist_mark);
}

static int var_blacklist_mark(struct nfqb_daq_ctx *c, const char *val)
{
	return var_mark(val, &c->blacklist_mark);
}

static int var_no_coalesce(struct nfqb_daq_ctx *c, const char *val)
{
	bool on;

	if (parse_flag(val, &on))
		return -1;
	c->coalesce = !on;
	return 0;
}

static int var_queue_maxlen(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (parse_uint(val, 1, UINT32_MAX, &v))
		return -1;
	c->queue_maxlen = v;
	return 0;
}

static int var_batch_limit(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (parse_uint(val, 1, 65536, &v))
		return -1;
	c->batch_limit = v;
	c->set_batch_limit = true;
	return 0;
}

static int var_latency(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (parse_uint(val, 0, UINT32_MAX, &v))
		return -1;
	c->latency = v;
	c->set_latency = true;
	return 0;
}

static int var_linger(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (val && !strcmp(val, "auto"))
		v = NFQB_LINGER_AUTO;
	else if (parse_uint(val, 0, 999999, &v))
		return -1;
	c->linger = v;
	c->set_linger = true;
	return 0;
}

static int var_default_verdict(struct nfqb_daq_ctx *c, const char *val)
{
	static const struct var_word words[] = {
		{ "accept", NFQB_ACCEPT }, { "pass", NFQB_ACCEPT },
		{ "drop", NFQB_DROP }, { "block", NFQB_DROP },
	};
	unsigned int v;

	if (parse_word(val, words, sizeof(words) / sizeof(words[0]), &v))
		return -1;
	c->default_verdict = v;
	return 0;
}

static int var_verdict_timeout(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (parse_uint(val, 0, UINT32_MAX, &v))
		return -1;
	c->verdict_timeout = v;
	return 0;
}

static int var_rcvbuf(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (parse_uint(val, 4096, INT_MAX / 2, &v))
		return -1;
	c->rcvbuf = v;
	return 0;
}

/*
 * mss_clamp, gso and truncated: from before the library's large-packet
 * policy, which the module always asks for (NFQB_LARGE_WHOLE: whole
 * packets only, SYNs clamped to the copy range). Their values still
 * parse; what the policy does not do any more is said at instantiate
 * (LEGACY_*), and a fixed MSS ceiling is refused.
 */
#define LEGACY_MSS_OFF		(1u << 0)	/* mss_clamp=off */
#define LEGACY_GSO_ON		(1u << 1)	/* gso=on */
#define LEGACY_PASS		(1u << 2)	/* truncated=pass */

static int var_mss_clamp(struct nfqb_daq_ctx *c, const char *val)
{
	unsigned long v;

	if (val && !strcmp(val, "auto")) {
		c->legacy &= ~LEGACY_MSS_OFF;
	} else if (val && !strcmp(val, "off")) {
		c->legacy |= LEGACY_MSS_OFF;
	} else {
		if (!parse_uint(val, 88, 65535, &v))
			c->bad_why = "a fixed MSS ceiling is no longer supported (the library lowers the MSS to what the kernel copies: auto); for a lower one use nftables: tcp flags syn tcp option maxseg size set N";
		return -1;
	}
	return 0;
}

static int var_gso(struct nfqb_daq_ctx *c, const char *val)
{
	static const struct var_word words[] = {
		{ "auto", GSO_AUTO }, { "on", GSO_ON }, { "off", GSO_OFF },
	};
	unsigned int v;

	if (parse_word(val, words, sizeof(words) / sizeof(words[0]), &v))
		return -1;
	c->gso = v;
	if (v == GSO_ON)
		c->legacy |= LEGACY_GSO_ON;
	else
		c->legacy &= ~LEGACY_GSO_ON;
	return 0;
}

static int var_truncated(struct nfqb_daq_ctx *c, const char *val)
{
	static const struct var_word words[] = {
		{ "pass", LEGACY_PASS }, { "block", 0 },
	};
	unsigned int v;

	if (parse_word(val, words, sizeof(words) / sizeof(words[0]), &v))
		return -1;
	c->legacy = (c->legacy & ~LEGACY_PASS) | v;
	return 0;
}

/* What the deprecated variables' values (LEGACY_*) no longer do. */
static void legacy_notes(const struct nfqb_daq_ctx *c)
{
	if (c->legacy & LEGACY_MSS_OFF)
		printf("daq_nfqb: mss_clamp=off ignored: a SYN whose MSS would let segments be longer than the kernel copies gets a lower one (else they would be dropped)\n");
	if (c->legacy & LEGACY_GSO_ON)
		printf("daq_nfqb: gso=on is gso=auto now: the first GSO packet longer than the kernel copies turns GSO off (it cannot be inspected)\n");
	if (c->legacy & LEGACY_PASS)
		printf("daq_nfqb: truncated=pass ignored: packets longer than the kernel copies are dropped, never passed uninspected (counted as filtered)\n");
}

/* The variables' keys (nfqb_daq_vars) and their parsers. */
static const struct var_parser {
	const char *key;
	int (*parse)(struct nfqb_daq_ctx *c, const char *val);
} var_parsers[] = {
	{ "debug", var_debug },
	{ "fail_open", var_fail_open },
	{ "conntrack", var_conntrack },
	{ "no_coalesce", var_no_coalesce },
	{ "queue_maxlen", var_queue_maxlen },
	{ "batch_limit", var_batch_limit },
	{ "latency", var_latency },
	{ "linger", var_linger },
	{ "default_verdict", var_default_verdict },
	{ "verdict_timeout", var_verdict_timeout },
	{ "rcvbuf", var_rcvbuf },
	{ "mss_clamp", var_mss_clamp },
	{ "gso", var_gso },
	{ "whitelist_mark", var_whitelist_mark },
	{ "blacklist_mark", var_blacklist_mark },
	{ "truncated", var_truncated },
};

/* One variable: 0, -1 for a bad value, -2 for an unknown key. */
static int parse_variable(struct nfqb_daq_ctx *c, const char *key,
			  const char *val)
{
	size_t i;

	for (i = 0; i < sizeof(var_parsers) / sizeof(var_parsers[0]); i++) {
		if (!strcmp(key, var_parsers[i].key))
			return var_parsers[i].parse(c, val) ? -1 : 0;
	}
	return -2;
}

/* --- Message pool ------------------------------------------------------------ */

static void pool_destroy(struct nfqb_daq_ctx *c)
{
	unsigned int i;

	if (c->descs)
		for (i = 0; i < c->pool.size; i++) {
			free(c->descs[i].copy);
			free(c->descs[i].kept);
		}
	free(c->descs);
	free(c->vec);
	c->descs = NULL;
	c->vec = NULL;
	c->freelist = NULL;
	memset(&c->pool, 0, sizeof(c->pool));
}

static int pool_create(struct nfqb_daq_ctx *c, unsigned int size)
{
	unsigned int i;

	c->descs = calloc(size, sizeof(*c->descs));
	c->vec = calloc(size, sizeof(*c->vec));
	if (!c->descs || !c->vec)
		goto nomem;
	for (i = size; i-- > 0;) {
		struct nfqb_daq_desc *d = &c->descs[i];

		d->msg.type = DAQ_MSG_TYPE_PACKET;
		d->msg.hdr_len = sizeof(d->pkthdr);
		d->msg.hdr = &d->pkthdr;
		d->msg.owner = c->modinst;
		d->msg.priv = d;
		d->next = c->freelist;
		c->freelist = d;
	}
	c->pool.size = size;
	c->pool.available = size;
	c->pool.mem_size = size * (sizeof(*c->descs) + sizeof(*c->vec));
	return DAQ_SUCCESS;
nomem:
	c->pool.size = size;
	pool_destroy(c);
	SET_ERROR(c, "%s: no memory for %u message descriptors", __func__,
		  size);
	return DAQ_ERROR_NOMEM;
}

/* Shrink the pool to @size descriptors (at start, nothing handed out). */
static void pool_shrink(struct nfqb_daq_ctx *c, unsigned int size)
{
	unsigned int i;

	c->freelist = NULL;
	for (i = size; i-- > 0;) {
		c->descs[i].next = c->freelist;
		c->freelist = &c->descs[i];
	}
	for (i = size; i < c->pool.size; i++) {
		free(c->descs[i].copy);
		c->descs[i].copy = NULL;
	}
	c->pool.size = size;
	c->pool.available = size;
	c->pool.mem_size = size * (sizeof(*c->descs) + sizeof(*c->vec));
}

static void held_del(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d)
{
	if (!d->on_held)
		return;
	if (d->hprev)
		d->hprev->hnext = d->hnext;
	else
		c->held_head = d->hnext;
	if (d->hnext)
		d->hnext->hprev = d->hprev;
	else
		c->held_tail = d->hprev;
	d->hprev = d->hnext = NULL;
	d->on_held = false;
}

static void held_add(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d)
{
	d->hnext = NULL;
	d->hprev = c->held_tail;
	if (c->held_tail)
		c->held_tail->hnext = d;
	else
		c->held_head = d;
	c->held_tail = d;
	d->on_held = true;
}

/*
 * Verdict timeout: before every library call that may run it (receive,
 * flush), the messages the application still holds get a copy of their
 * data (the library reuses a timed-out packet's buffer once its default
 * verdict is sent). Only what is held across such a call is copied, into
 * memory of its size, freed at its finalize. A copy that cannot be made
 * leaves the message without data rather than pointing at a buffer that
 * may be reused.
 */
static void protect_held(struct nfqb_daq_ctx *c)
{
	while (c->held_head) {
		struct nfqb_daq_desc *d = c->held_head;
		uint32_t len = d->off + d->msg.data_len;

		held_del(c, d);
		d->copy = malloc(len ? len : 1);
		if (!d->copy) {
			d->base = NULL;
			d->msg.data = NULL;
			d->msg.data_len = 0;
			continue;
		}
		memcpy(d->copy, d->base, len);
		d->base = d->copy;
		d->msg.data = d->copy + d->off;
	}
}

static void desc_put(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d)
{
	held_del(c, d);
	free(d->copy);
	d->copy = NULL;
	free(d->kept);
	d->kept = NULL;
	d->held_past_stop = false;
	d->pkt = NULL;
	d->msg.data = NULL;
	d->msg.data_len = 0;
	d->msg.meta[DAQ_PKT_META_DECODE_DATA] = NULL;
	d->next = c->freelist;
	c->freelist = d;
	c->pool.available++;
}

/* --- Packets ------------------------------------------------------------- */

/* The headers of the IP packet at @ip (@len bytes, the library's
 * nfqb_hdrs_parse()): a TCP or UDP packet, whole, not a fragment. */
static bool l4_find(const uint8_t *ip, uint32_t len, struct nfqb_hdrs *h)
{
	if (nfqb_hdrs_parse(ip, len, 0, h, sizeof(*h)) < 0)
		return false;
	return !(h->flags & (NFQB_HDRS_F_FRAG | NFQB_HDRS_F_CUT)) &&
	       (h->l4_proto == IPPROTO_TCP || h->l4_proto == IPPROTO_UDP);
}

/*
 * Tell Snort that the transport checksum needs no check when the kernel
 * vouches for it: not computed yet (CHECKSUM_PARTIAL: a packet of this
 * host, or forwarded from a local peer, its checksum filled in on the way
 * out; Snort would see the placeholder as a bad checksum and inspect
 * nothing), or verified already on input (the kernel then does not set
 * NFQA_SKB_CSUM_NOTVERIFIED).
 */
static void desc_decode(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d,
			struct nfqb_packet *p, const uint8_t *ip, uint32_t len)
{
	DAQ_PktDecodeData_t *dd = &d->decode;
	enum nfqb_hook_point hook;
	struct nfqb_hdrs h;
	bool ipv6;
	bool good;

	d->msg.meta[DAQ_PKT_META_DECODE_DATA] = NULL;
	if (nfqb_pkt_csum_not_ready(p)) {
		good = true;
	} else {
		hook = nfqb_pkt_hook_point(p);
		good = (hook == NFQB_HOOK_PREROUTING ||
			hook == NFQB_HOOK_INPUT ||
			hook == NFQB_HOOK_FORWARD ||
			hook == NFQB_HOOK_INGRESS) &&
		       !nfqb_pkt_csum_not_verified(p);
	}
	if (!good || !l4_find(ip, len, &h))
		return;
	ipv6 = h.l3_proto == 0x86dd;
	memset(dd, 0, sizeof(*dd));
	dd->flags.bits.l3 = 1;
	dd->flags.bits.ipv4 = !ipv6;
	dd->flags.bits.ipv6 = ipv6;
	dd->flags.bits.l4 = 1;
	dd->flags.bits.l4_checksum = 1;
	dd->flags.bits.tcp = h.l4_proto == IPPROTO_TCP;
	dd->flags.bits.udp = h.l4_proto == IPPROTO_UDP;
	dd->l2_offset = DAQ_PKT_DECODE_OFFSET_INVALID;
	dd->l3_offset = 0;
	dd->l4_offset = (uint16_t)h.l4_off;
	dd->payload_offset = DAQ_PKT_DECODE_OFFSET_INVALID;
	dd->checksum_offset = DAQ_PKT_DECODE_OFFSET_INVALID;
	d->msg.meta[DAQ_PKT_META_DECODE_DATA] = dd;
	c->csum_trusted++;
}

/* Fill a descriptor from what the kernel gave with the packet. */
static void desc_fill(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d,
		      struct nfqb_packet *p)
{
	DAQ_PktHdr_t *h = &d->pkthdr;
	const uint8_t *data;
	uint32_t len, off, mark, ctid;

	memset(h, 0, sizeof(*h));
	h->ingress_group = DAQ_PKTHDR_UNKNOWN;
	h->egress_group = DAQ_PKTHDR_UNKNOWN;
	qb_timestamp(p, &h->ts);
	h->ingress_index = qb_ifindex(nfqb_pkt_indev, p);
	h->egress_index = qb_ifindex(nfqb_pkt_outdev, p);
	if (nfqb_pkt_mark(p, &mark)) {
		h->opaque = mark;
		h->flags |= DAQ_PKT_FLAG_OPAQUE_IS_VALID;
	}
	if (c->conntrack && nfqb_pkt_ct_id(p, &ctid)) {
		h->flow_id = ctid;
		h->flags |= DAQ_PKT_FLAG_FLOWID_IS_VALID;
	}
	switch (nfqb_pkt_hook_point(p)) {
	case NFQB_HOOK_INPUT:
		h->flags |= DAQ_PKT_FLAG_LOCALLY_DESTINED;
		break;
	case NFQB_HOOK_OUTPUT:
		h->flags |= DAQ_PKT_FLAG_LOCALLY_ORIGINATED;
		break;
	default:
		break;
	}

	/* The payload lives in the library's receive buffer (writable,
	 * valid until the verdict): an application modifies it in place
	 * before DAQ_VERDICT_REPLACE, as libdaq's API intends. */
	data = nfqb_pkt_payload(p, &len);
	if (!data)
		len = 0;
	d->base = (uint8_t *)(uintptr_t)data;
	/* at netdev egress the packet starts at its link-layer header:
	 * the message starts at the network header (DLT_RAW) */
	off = nfqb_pkt_network_offset(p);
	if (off > len)
		off = len;
	d->off = off;
	d->msg.data = d->base ? d->base + off : NULL;
	d->msg.data_len = len - off;
	h->pktlen = nfqb_pkt_orig_len(p);
	h->pktlen = h->pktlen > off ? h->pktlen - off : 0;
	if (h->pktlen < d->msg.data_len)
		h->pktlen = d->msg.data_len;
	d->pkt = p;
	if (c->verdict_timeout && d->base)
		held_add(c, d);
	if (d->msg.data)
		desc_decode(c, d, p, d->msg.data, d->msg.data_len);
}

/* --- Module API ------------------------------------------------------------- */

static int nfqb_daq_load(const DAQ_BaseAPI_t *api)
{
	if (api->api_version != DAQ_BASE_API_VERSION ||
	    api->api_size != sizeof(DAQ_BaseAPI_t))
		return DAQ_ERROR;
	base_api = *api;
	return DAQ_SUCCESS;
}

static int nfqb_daq_unload(void)
{
	memset(&base_api, 0, sizeof(base_api));
	return DAQ_SUCCESS;
}

static int nfqb_daq_get_variable_descs(const DAQ_VariableDesc_t **table)
{
	*table = nfqb_daq_vars;
	return sizeof(nfqb_daq_vars) / sizeof(nfqb_daq_vars[0]);
}

/* The context's defaults, before the configuration is read. */
static void ctx_init(struct nfqb_daq_ctx *c, DAQ_ModuleInstance_h modinst)
{
	c->modinst = modinst;
	c->queue_maxlen = NFQB_DAQ_DEFAULT_MAXLEN;
	c->default_verdict = NFQB_ACCEPT;
	c->coalesce = true;
	atomic_init(&c->irq_q, NULL);
	atomic_init(&c->irq_users, 0);
	atomic_init(&c->interrupted, false);
}

/* The configuration's variables, in order: 0, or parse_variable()'s
 * error for the variable left in *keyp, *valp. */
static int parse_variables(struct nfqb_daq_ctx *c,
			   const DAQ_ModuleConfig_h cfg, const char **keyp,
			   const char **valp)
{
	int rc;

	base_api.config_first_variable(cfg, keyp, valp);
	while (*keyp) {
		rc = parse_variable(c, *keyp, *valp);
		if (rc)
			return rc;
		base_api.config_next_variable(cfg, keyp, valp);
	}
	return 0;
}

/* The rest of the configuration: snap length, receive timeout, and the
 * socket buffer if no variable gave it. */
static void config_rest(struct nfqb_daq_ctx *c, const DAQ_ModuleConfig_h cfg)
{
	/* The kernel copies whole packets (up to its limit) whatever snap
	 * length the application asks for: an inline IPS cannot inspect a
	 * cut packet, and Snort's default (1518) would cut every larger one
	 * (lo, GRO). get_snaplen() says what is delivered (the application
	 * sizes its buffers by it), and a smaller snap length is said to be
	 * overridden. */
	c->snaplen = NFQB_MAX_PAYLOAD;
	if (base_api.config_get_snaplen(cfg) > 0 &&
	    base_api.config_get_snaplen(cfg) < NFQB_MAX_PAYLOAD)
		printf("daq_nfqb: snaplen %d overridden: packets are delivered whole, up to %d bytes (the snap length reported)\n",
		       base_api.config_get_snaplen(cfg), NFQB_MAX_PAYLOAD);
	c->timeout = base_api.config_get_timeout(cfg);
	if (!c->rcvbuf) {
		uint64_t b = (uint64_t)c->queue_maxlen * 65535u;

		c->rcvbuf = b > INT_MAX / 2 ? INT_MAX / 2 : (unsigned int)b;
	}
}

/* The message pool's size: the configuration's, or the default; capped. */
static unsigned int config_pool_size(const DAQ_ModuleConfig_h cfg)
{
	unsigned int pool_size = base_api.config_get_msg_pool_size(cfg);

	if (!pool_size)
		pool_size = NFQB_DAQ_DEFAULT_POOL;
	if (pool_size > NFQB_DAQ_MAX_POOL)
		pool_size = NFQB_DAQ_MAX_POOL;
	return pool_size;
}

static int nfqb_daq_instantiate(const DAQ_ModuleConfig_h cfg,
				DAQ_ModuleInstance_h modinst, void **ctxp)
{
	unsigned int id, total;
	struct nfqb_daq_ctx *c;
	const char *key, *val;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c) {
		base_api.set_errbuf(modinst, "%s: no memory for the context",
				    __func__);
		return DAQ_ERROR_NOMEM;
	}
	ctx_init(c, modinst);

	id = base_api.config_get_instance_id(cfg);
	total = base_api.config_get_total_instances(cfg);
	rc = parse_input(c, base_api.config_get_input(cfg), id, total);
	if (rc) {
		if (rc == -1)
			SET_ERROR(c, "%s: invalid queue number '%s' (N or FIRST-LAST, 0..65535)",
				  __func__, base_api.config_get_input(cfg));
		free(c);
		return DAQ_ERROR_INVAL;
	}

	rc = parse_variables(c, cfg, &key, &val);
	if (rc) {
		if (rc == -2)
			SET_ERROR(c, "%s: unknown variable '%s'", __func__, key);
		else
			SET_ERROR(c, "%s: invalid value for '%s': '%s'%s%s",
				  __func__, key, val ? val : "",
				  c->bad_why ? ": " : "",
				  c->bad_why ? c->bad_why : "");
		free(c);
		return DAQ_ERROR_INVAL;
	}
	legacy_notes(c);
	config_rest(c, cfg);

	rc = pool_create(c, config_pool_size(cfg));
	if (rc != DAQ_SUCCESS) {
		free(c);
		return rc;
	}
	if (claim_queue(c, id, total)) {
		pool_destroy(c);
		free(c);
		return DAQ_ERROR_EXISTS;
	}
	*ctxp = c;
	return DAQ_SUCCESS;
}

static void print_counters(struct nfqb_daq_ctx *c, const struct nfqb_stats *st)
{
	printf("daq_nfqb: queue %u: packets %" PRIu64 " recv_calls %" PRIu64
	       " send_calls %" PRIu64 " verdict_msgs %" PRIu64
	       " batch_msgs %" PRIu64 " batch_packets %" PRIu64
	       " accepted %" PRIu64 " dropped %" PRIu64 " mangled %" PRIu64
	       " defaults %" PRIu64 " timeouts %" PRIu64 " enobufs %" PRIu64
	       " replace_unchanged %" PRIu64 " verdict_failures %" PRIu64
	       " late_finalize %" PRIu64 " linger_pauses %" PRIu64
	       " buffers_exhausted %" PRIu64 " truncated %" PRIu64
	       " large_resent %" PRIu64 " large_dropped %" PRIu64
	       " mss_clamped %" PRIu64 " gso_off %" PRIu64
	       " csum_trusted %" PRIu64 " timed_out_finalize %" PRIu64 "\n",
	       c->queue_num, st->packets, st->recv_calls, st->send_calls,
	       st->verdict_msgs, st->batch_msgs, st->batch_packets,
	       st->accepted, st->dropped, st->mangled, st->defaults,
	       st->timeouts, st->enobufs, c->replace_unchanged,
	       c->verdict_failures, c->late_finalize, st->linger_pauses,
	       st->buffers_exhausted, st->truncated, st->large_resent,
	       st->large_dropped, st->mss_clamped, st->gso_off,
	       c->csum_trusted, c->timed_out);
}

/* What went by the application, always said at stop (Snort shows the
 * module's output with its own statistics); the library's counters since
 * the start. */
static void print_uninspected(struct nfqb_daq_ctx *c,
			      const struct nfqb_stats *st)
{
	uint64_t unseen = st->defaults + st->rejected_defaults + st->gap_ids;
	uint64_t cut = st->large_dropped + st->large_resent;

	if (!cut && !unseen && !st->timeouts && !c->verdict_failures)
		return;
	printf("daq_nfqb: queue %u: not inspected: %" PRIu64
	       " longer than the kernel copies (blocked; and %" PRIu64
	       " TCP GSO packets dropped to be sent again in segments, GSO %s), %"
	       PRIu64 " given the default verdict (%s) unseen at stop or"
	       " unreadable, %" PRIu64 " by the verdict timeout; %" PRIu64
	       " verdicts refused\n",
	       c->queue_num, st->large_dropped, st->large_resent,
	       c->gso == GSO_OFF ? "off" : st->gso_off ? "turned off" : "on",
	       unseen, nfqb_verdict_name(c->default_verdict), st->timeouts,
	       c->verdict_failures);
}

static bool read_kstats(const struct nfqb_daq_ctx *c, struct nfqb_kstats *k)
{
	memset(k, 0, sizeof(*k));
	return nfqb_kstats_get((uint16_t)c->queue_num, k, sizeof(*k)) == 0;
}

/*
 * Messages the application holds at stop: their data lives in the
 * library's buffers, which the close frees; the promise is data valid
 * until finalize: a copy of each (unless it is one already) stays theirs
 * until then (or destroy). A copy that cannot be made leaves the message
 * without data (NULL, length 0) rather than dangling.
 */
static void keep_held(struct nfqb_daq_ctx *c)
{
	unsigned int i;

	for (i = 0; i < c->pool.size; i++) {
		struct nfqb_daq_desc *d = &c->descs[i];
		uint32_t len = d->msg.data_len;

		if (!d->pkt)
			continue;
		d->held_past_stop = true;
		held_del(c, d);
		if (!d->msg.data || d->copy)
			continue;
		d->kept = malloc(len ? len : 1);
		if (d->kept)
			memcpy(d->kept, d->msg.data, len);
		else
			d->msg.data_len = 0;
		d->msg.data = d->kept;
	}
}

/* Close the queue: every message not finalized gets the default verdict
 * (nfqb_queue_close()); their descriptors go back to the pool, and a late
 * finalize on them does nothing. interrupt() no longer reaches the queue
 * once this starts. */
static int queue_close(struct nfqb_daq_ctx *c)
{
	struct nfqb_queue *q = c->q;
	unsigned int i;
	int rc;

	if (!q)
		return 0;
	atomic_store(&c->irq_q, NULL);
	while (atomic_load(&c->irq_users))
		sched_yield();
	c->have_kstats = read_kstats(c, &c->kfinal) && c->have_kstats;
	keep_held(c);
	rc = nfqb_queue_close_stats(q, &c->final, sizeof(c->final));
	c->q = NULL;
	if (c->debug)
		print_counters(c, &c->final);
	print_uninspected(c, &c->final);
	for (i = 0; i < c->pool.size; i++) {
		struct nfqb_daq_desc *d = &c->descs[i];

		if (!d->pkt)
			continue;
		if (d->held_past_stop)
			d->pkt = NULL;	/* back at its (late) finalize */
		else
			desc_put(c, d);
	}
	c->batch_last = NULL;
	return rc;
}

static void nfqb_daq_destroy(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	queue_close(c);
	release_queue(c);
	pool_destroy(c);
	free(c);
}

/* The kernel's side of the queue and the buffers: NULL, or what could
 * not be set (errno tells why). */
static const char *configure_kernel(struct nfqb_daq_ctx *c)
{
	struct nfqb_queue *q = c->q;
	uint32_t flags = 0;

	/* The library has NFQB_DEFAULT_BUFFERS receive buffers: more than the
	 * pool needs is fine (packets read ahead wait there). Replacing
	 * them needs nothing outstanding, which traffic arriving since the
	 * bind may already be: then the pool takes what there is. */
	if (c->pool.size > NFQB_DEFAULT_BUFFERS &&
	    nfqb_queue_set_buffers(q, c->pool.size)) {
		if (errno != EBUSY)
			return "buffers";
		pool_shrink(c, NFQB_DEFAULT_BUFFERS);
	}
	if (nfqb_queue_set_copy_mode(q, NFQB_COPY_PACKET, 0))
		return "copy mode";
	if (nfqb_queue_set_maxlen(q, c->queue_maxlen))
		return "queue_maxlen";
	if (c->fail_open)
		flags |= NFQB_F_FAIL_OPEN;
	/* gso=auto (on): the library turns it off when a GSO packet does
	 * not fit (NFQB_LARGE_WHOLE, configure_library()) */
	if (c->gso != GSO_OFF)
		flags |= NFQB_F_GSO;
	if (nfqb_queue_set_flags(q, flags, NFQB_F_FAIL_OPEN | NFQB_F_GSO))
		return "flags (fail_open, gso)";
	/* apart: a kernel without the conntrack glue refuses it alone */
	if (nfqb_queue_set_flags(q, c->conntrack ? NFQB_F_CONNTRACK : 0,
				 NFQB_F_CONNTRACK))
		return "flags (conntrack)";
	if (nfqb_queue_set_rcvbuf(q, c->rcvbuf))
		return "rcvbuf";
	return NULL;
}

/* The library's side: verdicts, their coalescing, the receive; NULL, or
 * what could not be set (errno tells why). */
static const char *configure_library(struct nfqb_daq_ctx *c)
{
	struct nfqb_queue *q = c->q;

	/* Snort sees whole packets only: a cut one is dropped (a TCP GSO
	 * one for TCP to send again in segments, GSO then turned off), and
	 * SYNs get an MSS whose segments fit; counted in nfqb_stats */
	if (nfqb_queue_set_large(q, NFQB_LARGE_WHOLE))
		return "large-packet policy";
	if (nfqb_queue_set_default_verdict(q, c->default_verdict))
		return "default_verdict";
	nfqb_queue_set_coalesce(q, c->coalesce);
	if (c->set_batch_limit && nfqb_queue_set_batch_limit(q, c->batch_limit))
		return "batch_limit";
	if (c->set_latency)
		nfqb_queue_set_latency(q, c->latency);
	c->latency_ns = (c->set_latency ? c->latency : 1000u) * 1000ull;
	c->unflushed_since = 0;
	if (c->set_linger && nfqb_queue_set_linger(q, c->linger))
		return "linger";
	nfqb_queue_set_verdict_timeout(q, c->verdict_timeout);
	/* blocking, so that the library sleeps, lingers and runs its
	 * timers; the receive timeout ends a quiet wait */
	nfqb_queue_set_nonblock(q, false);
	nfqb_queue_set_recv_timeout(q, c->timeout);
	/* every verdict is given on this thread (msg_finalize): sleep in
	 * the socket's read, a system call less per lone packet (refused
	 * without CAP_NET_ADMIN for its wake-ups: then in epoll, as
	 * before) */
	nfqb_queue_set_read_sleep(q, true);
	return NULL;
}

static int configure_queue(struct nfqb_daq_ctx *c)
{
	const char *what;

	what = configure_kernel(c);
	if (!what)
		what = configure_library(c);
	if (!what)
		return 0;
	SET_ERROR(c, "%s: queue %u: setting %s failed: %s (%d)", __func__,
		  c->queue_num, what, strerror(errno), errno);
	return -1;
}

static int nfqb_daq_start(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	if (c->q)
		return DAQ_SUCCESS;
	c->q = nfqb_queue_open((uint16_t)c->queue_num);
	if (!c->q) {
		SET_ERROR(c, "%s: cannot bind queue %u: %s (%d)%s", __func__,
			  c->queue_num, strerror(errno), errno,
			  errno == EBUSY ? ": another process holds it" : "");
		return DAQ_ERROR;
	}
	if (configure_queue(c)) {
		nfqb_queue_close(c->q);
		c->q = NULL;
		return DAQ_ERROR;
	}
	memset(&c->base, 0, sizeof(c->base));
	memset(&c->final, 0, sizeof(c->final));
	c->have_kstats = read_kstats(c, &c->kbase);
	atomic_store(&c->interrupted, false);
	atomic_store(&c->irq_q, c->q);
	if (c->debug)
		printf("daq_nfqb: queue %u bound (libnfq-batch %s): snaplen %d, "
		       "pool %u, timeout %u ms, queue_maxlen %u, fail_open %d, "
		       "conntrack %d, coalesce %d, default verdict %s\n",
		       c->queue_num, nfqb_version(), c->snaplen, c->pool.size,
		       c->timeout, c->queue_maxlen, c->fail_open, c->conntrack,
		       c->coalesce, nfqb_verdict_name(c->default_verdict));
	return DAQ_SUCCESS;
}

/* Any thread (Snort's main thread calls it until the packet thread has
 * stopped): it never reaches a queue that stop() is closing. */
static int nfqb_daq_interrupt(void *handle)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_queue *q;

	atomic_store(&c->interrupted, true);
	atomic_fetch_add(&c->irq_users, 1);
	q = atomic_load(&c->irq_q);
	if (q)
		nfqb_queue_interrupt(q);
	atomic_fetch_sub(&c->irq_users, 1);
	return DAQ_SUCCESS;
}

static int nfqb_daq_stop(void *handle)
{
	struct nfqb_daq_ctx *c = handle;
	unsigned int num = c->queue_num;

	if (queue_close(c)) {
		SET_ERROR(c, "%s: closing queue %u: %s (%d)", __func__, num,
			  strerror(errno), errno);
		return DAQ_ERROR;
	}
	return DAQ_SUCCESS;
}

static int nfqb_daq_ioctl(void *handle, DAQ_IoctlCmd cmd, void *arg,
			  size_t arglen)
{
	struct nfqb_daq_ctx *c = handle;
	DIOCTL_QueryDeviceIndex *qdi = arg;
	unsigned int idx;

	if (cmd != DIOCTL_GET_DEVICE_INDEX)
		return DAQ_ERROR_NOTSUP;
	if (!qdi || arglen != sizeof(*qdi) || !qdi->device)
		return DAQ_ERROR_INVAL;
	/* the packet header's indexes are the kernel's ifindexes (of this
	 * network namespace, the queue's) */
	idx = if_nametoindex(qdi->device);
	if (!idx || idx > INT_MAX) {
		SET_ERROR(c, "%s: no device '%s'", __func__, qdi->device);
		return DAQ_ERROR_NODEV;
	}
	qdi->index = (int)idx;
	return DAQ_SUCCESS;
}

/* Kernel counter @now since @then (32 bits, wrapping). */
static uint64_t kdelta(uint32_t now, uint32_t then)
{
	return (uint32_t)(now - then);
}

static int nfqb_daq_get_stats(void *handle, DAQ_Stats_t *stats)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_kstats k;
	struct nfqb_stats st;
	bool kok = c->have_kstats;

	/* the library's counters (live, or as the close left them) since
	 * the last reset */
	if (c->q) {
		qb_stats(c->q, &st);
		kok = kok && read_kstats(c, &k);
	} else {
		st = c->final;
		k = c->kfinal;
	}
	if (st.packets >= c->base.packets)
		c->stats.hw_packets_received = st.packets - c->base.packets;
	/* what the kernel dropped: queue full, socket full */
	if (kok)
		c->stats.hw_packets_dropped =
			kdelta(k.queue_dropped, c->kbase.queue_dropped) +
			kdelta(k.queue_user_dropped,
			       c->kbase.queue_user_dropped);
	else if (st.enobufs >= c->base.enobufs)
		c->stats.hw_packets_dropped = st.enobufs - c->base.enobufs;
	/* what got a verdict without the application seeing it */
	c->stats.packets_filtered = st.large_dropped + st.large_resent +
				    st.defaults + st.rejected_defaults +
				    st.gap_ids -
				    (c->base.large_dropped +
				     c->base.large_resent + c->base.defaults +
				     c->base.rejected_defaults +
				     c->base.gap_ids);
	c->stats.packets_outstanding = c->pool.size - c->pool.available;
	memcpy(stats, &c->stats, sizeof(*stats));
	return DAQ_SUCCESS;
}

static void nfqb_daq_reset_stats(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	memset(&c->stats, 0, sizeof(c->stats));
	if (c->q) {
		qb_stats(c->q, &c->base);
		c->have_kstats = read_kstats(c, &c->kbase);
	} else {
		c->base = c->final;
		c->kbase = c->kfinal;
	}
}

static int nfqb_daq_get_snaplen(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	return c->snaplen;
}

static uint32_t nfqb_daq_get_capabilities(void *handle)
{
	(void)handle;
	return DAQ_CAPA_BLOCK | DAQ_CAPA_REPLACE | DAQ_CAPA_INTERRUPT |
	       DAQ_CAPA_DEVICE_INDEX;
}

static int nfqb_daq_get_datalink_type(void *handle)
{
	(void)handle;
	return DLT_RAW;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Flush what the application decided: nothing waits for the next
 * receive. Errors are the library's to retry. */
static void flush(struct nfqb_daq_ctx *c)
{
	c->unflushed_since = 0;
	protect_held(c);
	if (nfqb_flush(c->q) < 0 && errno != EAGAIN)
		c->verdict_failures++;
}

/*
 * Every message is held by the application (Snort's retry queue, held
 * packets): none can be handed out until it gives one back, which only it
 * can do. Send what it decided, wait as a quiet receive would (Snort then
 * runs its idle work, which releases held packets), never spin.
 */
static void wait_held(struct nfqb_daq_ctx *c)
{
	unsigned int ms = c->timeout ? c->timeout : NFQB_HELD_WAIT_MS, t;

	flush(c);
	for (t = 0; t < ms && !atomic_load(&c->interrupted); t += 10) {
		struct timespec d = { 0, 10000000 };

		nanosleep(&d, NULL);
	}
}

/* The packets of a receive, whole (NFQB_LARGE_WHOLE): a message each
 * for the application; the last in *lastp. */
static void take_packets(struct nfqb_daq_ctx *c, unsigned int n,
			 const DAQ_Msg_t *msgs[], struct nfqb_daq_desc **lastp)
{
	struct nfqb_daq_desc *d;
	unsigned int i;

	for (i = 0; i < n; i++) {
		/* n <= max <= available: there is one */
		d = c->freelist;
		c->freelist = d->next;
		d->next = NULL;
		c->pool.available--;
		desc_fill(c, d, c->vec[i]);
		msgs[i] = &d->msg;
		*lastp = d;
	}
}

/* What a failed nfqb_recv() (errno) means: DAQ_RSTAT_OK to receive
 * again, else the status to return (DAQ_RSTAT_ERROR: the caller says
 * why). */
static DAQ_RecvStatus recv_failed(void)
{
	switch (errno) {
	case EINTR:
		/* nfqb_queue_interrupt(), or a signal: the flag
		 * tells, at the top of the loop */
		return DAQ_RSTAT_OK;
	case ENOBUFS:
		/* the socket overflowed; the library counted it */
		return DAQ_RSTAT_OK;
	case EAGAIN:
		/* the receive timeout passed */
		return DAQ_RSTAT_TIMEOUT;
	case ENOSPC:
		/* every receive buffer held, the library waited for
		 * one: transient (sends being retried) */
		return DAQ_RSTAT_TIMEOUT;
	default:
		return DAQ_RSTAT_ERROR;
	}
}

static unsigned nfqb_daq_msg_receive(void *handle, const unsigned max_recv,
				     const DAQ_Msg_t *msgs[],
				     DAQ_RecvStatus *rstat)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_daq_desc *d = NULL;
	unsigned int max, k = 0;
	int n;

	*rstat = DAQ_RSTAT_OK;
	if (!c->q) {
		SET_ERROR(c, "%s: the module is not started", __func__);
		*rstat = DAQ_RSTAT_ERROR;
		return 0;
	}
	for (;;) {
		if (atomic_load(&c->interrupted)) {
			atomic_store(&c->interrupted, false);
			*rstat = DAQ_RSTAT_INTERRUPTED;
			return 0;
		}
		max = max_recv < c->pool.available ? max_recv :
			c->pool.available;
		if (!max) {
			wait_held(c);
			*rstat = DAQ_RSTAT_TIMEOUT;
			return 0;
		}
		protect_held(c);
		n = nfqb_recv(c->q, c->vec, max);
		if (n == 0)
			continue;	/* (never, by its contract) */
		if (n > 0) {
			k = (unsigned int)n;
			take_packets(c, k, msgs, &d);
			break;
		}
		*rstat = recv_failed();
		if (*rstat == DAQ_RSTAT_OK)
			continue;
		if (*rstat == DAQ_RSTAT_ERROR)
			SET_ERROR(c, "%s: receive on queue %u failed: %s (%d)",
				  __func__, c->queue_num, strerror(errno),
				  errno);
		return 0;
	}
	c->batch_last = d;
	c->stats.packets_received += k;
	return k;
}

/* The application's verdict on the packet of @d (@msg): 0, or -1 with
 * errno; *verdict becomes PASS when a REPLACE went as it came. */
static int send_verdict(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d,
			const DAQ_Msg_t *msg, DAQ_Verdict *verdict)
{
	struct nfqb_packet *p = d->pkt;
	int rc;

	switch (*verdict) {
	case DAQ_VERDICT_BLACKLIST:
		return qb_flow(p, NFQB_DROP, c->blacklist_mark);
	case DAQ_VERDICT_WHITELIST:
		return qb_flow(p, NFQB_ACCEPT, c->whitelist_mark);
	case DAQ_VERDICT_BLOCK:
		return qb_drop(p);
	case DAQ_VERDICT_REPLACE:
	case DAQ_VERDICT_PASS:
	case DAQ_VERDICT_IGNORE:
	default:
		/* a SYN the library clamped: the accept carries it */
		if (*verdict != DAQ_VERDICT_REPLACE)
			return qb_accept(p);
		/* the whole packet, its link-layer header included */
		rc = qb_replace(p, d->base, d->off + msg->data_len);
		if (rc && (errno == ENOMEM || errno == EMSGSIZE ||
			   errno == E2BIG)) {
			/* still ours to decide: accepted as it came */
			c->replace_unchanged++;
			*verdict = DAQ_VERDICT_PASS;
			rc = qb_accept(p);
		}
		return rc;
	}
}

/* A message is back: send what is decided if the last message of a
 * receive or every message is back, or if the oldest decision not sent
 * is as old as the latency bound. */
static void flush_if_due(struct nfqb_daq_ctx *c, bool last)
{
	uint64_t now;

	if (last || c->pool.available == c->pool.size) {
		flush(c);
		return;
	}
	now = now_ns();
	if (!c->unflushed_since)
		c->unflushed_since = now;
	else if (now - c->unflushed_since >= c->latency_ns)
		flush(c);
}

static int nfqb_daq_msg_finalize(void *handle, const DAQ_Msg_t *msg,
				 DAQ_Verdict verdict)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_daq_desc *d = msg->priv;
	bool last;
	int rc;

	if (!d->pkt) {
		/* given the default verdict at stop already; its data (a
		 * copy) was valid until now */
		c->late_finalize++;
		if (d->held_past_stop)
			desc_put(c, d);
		return DAQ_SUCCESS;
	}
	if (verdict >= MAX_DAQ_VERDICT)
		verdict = DAQ_VERDICT_PASS;

	/* counted below as applied: Snort's verdict counts are what the
	 * kernel did with the packets */
	rc = send_verdict(c, d, msg, &verdict);
	if (!rc)
		c->stats.verdicts[verdict]++;
	else if (errno == ETIMEDOUT)
		/* the verdict timeout gave it the default verdict */
		c->stats.verdicts[c->default_verdict == NFQB_DROP ?
				  DAQ_VERDICT_BLOCK : DAQ_VERDICT_PASS]++;
	last = d == c->batch_last;
	if (last)
		c->batch_last = NULL;
	if (rc) {
		/* The message goes back all the same: Snort counts it as
		 * returned only on DAQ_SUCCESS. */
		if (errno == ETIMEDOUT)
			c->timed_out++;	/* the default verdict, in time */
		else
			c->verdict_failures++;
	}
	desc_put(c, d);
	/* nothing decided waits for a receive that may not come soon
	 * (Snort paused, busy with a command, or slow) */
	flush_if_due(c, last);
	return DAQ_SUCCESS;
}

static int nfqb_daq_get_msg_pool_info(void *handle, DAQ_MsgPoolInfo_t *info)
{
	struct nfqb_daq_ctx *c = handle;

	*info = c->pool;
	return DAQ_SUCCESS;
}

/* the symbol libdaq looks up with dlsym() */
__attribute__((visibility("default")))
const DAQ_ModuleAPI_t DAQ_MODULE_DATA = {
	.api_version = DAQ_MODULE_API_VERSION,
	.api_size = sizeof(DAQ_ModuleAPI_t),
	.module_version = DAQ_NFQB_VERSION,
	.name = "nfqb",
	.type = DAQ_TYPE_INTF_CAPABLE | DAQ_TYPE_INLINE_CAPABLE |
		DAQ_TYPE_MULTI_INSTANCE | DAQ_TYPE_NO_UNPRIV,
	.load = nfqb_daq_load,
	.unload = nfqb_daq_unload,
	.get_variable_descs = nfqb_daq_get_variable_descs,
	.instantiate = nfqb_daq_instantiate,
	.destroy = nfqb_daq_destroy,
	.set_filter = NULL,
	.start = nfqb_daq_start,
	.inject = NULL,
	.inject_relative = NULL,
	.interrupt = nfqb_daq_interrupt,
	.stop = nfqb_daq_stop,
	.ioctl = nfqb_daq_ioctl,
	.get_stats = nfqb_daq_get_stats,
	.reset_stats = nfqb_daq_reset_stats,
	.get_snaplen = nfqb_daq_get_snaplen,
	.get_capabilities = nfqb_daq_get_capabilities,
	.get_datalink_type = nfqb_daq_get_datalink_type,
	.config_load = NULL,
	.config_swap = NULL,
	.config_free = NULL,
	.msg_receive = nfqb_daq_msg_receive,
	.msg_finalize = nfqb_daq_msg_finalize,
	.get_msg_pool_info = nfqb_daq_get_msg_pool_info,
};
