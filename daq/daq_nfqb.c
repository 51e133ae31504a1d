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
 * REPLACE to accept with the (in place modified) payload.
 *
 * Every message gets exactly one verdict: the application's through
 * msg_finalize(), or the default verdict given by nfqb_queue_close() at
 * stop to the ones still outstanding.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <daq_dlt.h>
#include <daq_module_api.h>

#include <libnfq-batch/libnfq-batch.h>

#define DAQ_NFQB_VERSION	1

#define NFQB_DAQ_DEFAULT_POOL	256
#define NFQB_DAQ_MAX_POOL	65536
#define NFQB_DAQ_DEFAULT_MAXLEN	1024

#define SET_ERROR(ctx, ...) base_api.set_errbuf((ctx)->modinst, __VA_ARGS__)

struct nfqb_daq_desc {
	DAQ_Msg_t msg;
	DAQ_PktHdr_t pkthdr;
	struct nfqb_packet *pkt;
	struct nfqb_daq_desc *next;
};

struct nfqb_daq_ctx {
	/* configuration */
	DAQ_ModuleInstance_h modinst;
	unsigned int queue_num;
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
	unsigned int rcvbuf;

	/* state */
	struct nfqb_queue *q;
	struct nfqb_daq_desc *descs;
	struct nfqb_daq_desc *freelist;
	struct nfqb_packet **vec;
	DAQ_MsgPoolInfo_t pool;
	volatile bool interrupted;

	/* counters */
	DAQ_Stats_t stats;
	struct nfqb_stats base;		/* library counters at the last reset */
	struct nfqb_stats final;	/* library counters at stop */
	uint64_t replace_unchanged;	/* REPLACE sent as plain accept */
	uint64_t verdict_failures;	/* nfqb_verdict*() refused */
	uint64_t late_finalize;		/* finalize after stop */
};

static DAQ_BaseAPI_t base_api;

static DAQ_VariableDesc_t nfqb_daq_vars[] = {
	{ "debug", "Print the configuration and the library's counters at stop",
	  DAQ_VAR_DESC_FORBIDS_ARGUMENT },
	{ "fail_open", "Let the kernel accept packets when the queue is full",
	  DAQ_VAR_DESC_FORBIDS_ARGUMENT },
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
	  DAQ_VAR_DESC_FORBIDS_ARGUMENT },
	{ "no_coalesce", "Send one verdict message per packet (no batch verdicts)",
	  DAQ_VAR_DESC_FORBIDS_ARGUMENT },
	{ "rcvbuf", "Socket receive buffer in bytes (default: queue_maxlen * snaplen)",
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

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "N" or "FIRST-LAST": instance i (1-based; 0 means unspecified, the
 * first) of a range takes queue FIRST + i - 1. */
static int parse_input(struct nfqb_daq_ctx *c, const char *input,
		       unsigned int instance_id)
{
	unsigned long first, last;
	const char *dash;
	char buf[16];

	if (!input)
		return -1;
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
	if (instance_id == 0)
		instance_id = 1;
	if (first + instance_id - 1 > last) {
		SET_ERROR(c, "%s: instance %u has no queue in the range '%s'",
			  __func__, instance_id, input);
		return -2;
	}
	c->queue_num = first + instance_id - 1;
	return 0;
}

static int parse_variable(struct nfqb_daq_ctx *c, const char *key,
			  const char *val)
{
	unsigned long v;

	if (!strcmp(key, "debug")) {
		c->debug = true;
	} else if (!strcmp(key, "fail_open")) {
		c->fail_open = true;
	} else if (!strcmp(key, "conntrack")) {
		c->conntrack = true;
	} else if (!strcmp(key, "no_coalesce")) {
		c->coalesce = false;
	} else if (!strcmp(key, "queue_maxlen")) {
		if (parse_uint(val, 1, UINT32_MAX, &v))
			return -1;
		c->queue_maxlen = v;
	} else if (!strcmp(key, "batch_limit")) {
		if (parse_uint(val, 1, 65536, &v))
			return -1;
		c->batch_limit = v;
		c->set_batch_limit = true;
	} else if (!strcmp(key, "latency")) {
		if (parse_uint(val, 0, UINT32_MAX, &v))
			return -1;
		c->latency = v;
		c->set_latency = true;
	} else if (!strcmp(key, "linger")) {
		if (val && !strcmp(val, "auto"))
			v = NFQB_LINGER_AUTO;
		else if (parse_uint(val, 0, 999999, &v))
			return -1;
		c->linger = v;
		c->set_linger = true;
	} else if (!strcmp(key, "default_verdict")) {
		if (val && (!strcmp(val, "accept") || !strcmp(val, "pass")))
			c->default_verdict = NFQB_ACCEPT;
		else if (val && (!strcmp(val, "drop") || !strcmp(val, "block")))
			c->default_verdict = NFQB_DROP;
		else
			return -1;
	} else if (!strcmp(key, "verdict_timeout")) {
		if (parse_uint(val, 0, UINT32_MAX, &v))
			return -1;
		c->verdict_timeout = v;
	} else if (!strcmp(key, "rcvbuf")) {
		if (parse_uint(val, 4096, INT_MAX / 2, &v))
			return -1;
		c->rcvbuf = v;
	} else {
		return -2;
	}
	return 0;
}

/* --- Message pool ------------------------------------------------------------ */

static void pool_destroy(struct nfqb_daq_ctx *c)
{
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
	if (!c->descs || !c->vec) {
		pool_destroy(c);
		SET_ERROR(c, "%s: no memory for %u message descriptors",
			  __func__, size);
		return DAQ_ERROR_NOMEM;
	}
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
}

static void desc_put(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d)
{
	d->pkt = NULL;
	d->msg.data = NULL;
	d->msg.data_len = 0;
	d->next = c->freelist;
	c->freelist = d;
	c->pool.available++;
}

/* Fill a descriptor from what the kernel gave with the packet. */
static void desc_fill(struct nfqb_daq_ctx *c, struct nfqb_daq_desc *d,
		      struct nfqb_packet *p)
{
	DAQ_PktHdr_t *h = &d->pkthdr;
	const uint8_t *data;
	uint32_t len, mark, ctid;

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

	data = nfqb_pkt_payload(p, &len);
	/* The payload lives in the library's receive buffer (writable,
	 * valid until the verdict): an application modifies it in place
	 * before DAQ_VERDICT_REPLACE, as libdaq's API intends. */
	d->msg.data = (uint8_t *)(uintptr_t)data;
	d->msg.data_len = data ? len : 0;
	h->pktlen = nfqb_pkt_orig_len(p);
	if (h->pktlen < d->msg.data_len)
		h->pktlen = d->msg.data_len;
	d->pkt = p;
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

static int nfqb_daq_instantiate(const DAQ_ModuleConfig_h cfg,
				DAQ_ModuleInstance_h modinst, void **ctxp)
{
	struct nfqb_daq_ctx *c;
	const char *key, *val;
	unsigned int pool_size;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c) {
		base_api.set_errbuf(modinst, "%s: no memory for the context",
				    __func__);
		return DAQ_ERROR_NOMEM;
	}
	c->modinst = modinst;
	c->queue_maxlen = NFQB_DAQ_DEFAULT_MAXLEN;
	c->default_verdict = NFQB_ACCEPT;
	c->coalesce = true;

	rc = parse_input(c, base_api.config_get_input(cfg),
			 base_api.config_get_instance_id(cfg));
	if (rc) {
		if (rc == -1)
			SET_ERROR(c, "%s: invalid queue number '%s' (N or FIRST-LAST, 0..65535)",
				  __func__, base_api.config_get_input(cfg));
		free(c);
		return DAQ_ERROR_INVAL;
	}

	base_api.config_first_variable(cfg, &key, &val);
	while (key) {
		rc = parse_variable(c, key, val);
		if (rc) {
			if (rc == -2)
				SET_ERROR(c, "%s: unknown variable '%s'",
					  __func__, key);
			else
				SET_ERROR(c, "%s: invalid value for '%s': '%s'",
					  __func__, key, val ? val : "");
			free(c);
			return DAQ_ERROR_INVAL;
		}
		base_api.config_next_variable(cfg, &key, &val);
	}

	c->snaplen = base_api.config_get_snaplen(cfg);
	if (c->snaplen <= 0 || c->snaplen > 65535)
		c->snaplen = 65535;
	c->timeout = base_api.config_get_timeout(cfg);
	if (!c->rcvbuf) {
		uint64_t b = (uint64_t)c->queue_maxlen * (uint64_t)c->snaplen;

		c->rcvbuf = b > INT_MAX / 2 ? INT_MAX / 2 : (unsigned int)b;
	}

	pool_size = base_api.config_get_msg_pool_size(cfg);
	if (!pool_size)
		pool_size = NFQB_DAQ_DEFAULT_POOL;
	if (pool_size > NFQB_DAQ_MAX_POOL)
		pool_size = NFQB_DAQ_MAX_POOL;
	rc = pool_create(c, pool_size);
	if (rc != DAQ_SUCCESS) {
		free(c);
		return rc;
	}
	*ctxp = c;
	return DAQ_SUCCESS;
}

static void print_counters(struct nfqb_daq_ctx *c)
{
	struct nfqb_stats st;

	if (qb_stats(c->q, &st))
		return;
	printf("daq_nfqb: queue %u: packets %" PRIu64 " recv_calls %" PRIu64
	       " send_calls %" PRIu64 " verdict_msgs %" PRIu64
	       " batch_msgs %" PRIu64 " batch_packets %" PRIu64
	       " accepted %" PRIu64 " dropped %" PRIu64 " mangled %" PRIu64
	       " defaults %" PRIu64 " timeouts %" PRIu64 " enobufs %" PRIu64
	       " replace_unchanged %" PRIu64 " verdict_failures %" PRIu64
	       " late_finalize %" PRIu64 " linger_pauses %" PRIu64
	       " buffers_exhausted %" PRIu64 "\n",
	       c->queue_num, st.packets, st.recv_calls, st.send_calls,
	       st.verdict_msgs, st.batch_msgs, st.batch_packets, st.accepted,
	       st.dropped, st.mangled, st.defaults, st.timeouts, st.enobufs,
	       c->replace_unchanged, c->verdict_failures, c->late_finalize,
	       st.linger_pauses, st.buffers_exhausted);
}

/* Close the queue: every message not finalized gets the default verdict
 * (nfqb_queue_close()); their descriptors go back to the pool, and a late
 * finalize on them does nothing. */
static int queue_close(struct nfqb_daq_ctx *c)
{
	unsigned int i;
	int rc;

	if (!c->q)
		return 0;
	if (c->debug)
		print_counters(c);
	/* keep the library's counters for get_stats() after stop */
	qb_stats(c->q, &c->final);
	rc = nfqb_queue_close(c->q);
	c->q = NULL;
	for (i = 0; i < c->pool.size; i++)
		if (c->descs[i].pkt)
			desc_put(c, &c->descs[i]);
	return rc;
}

static void nfqb_daq_destroy(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	queue_close(c);
	pool_destroy(c);
	free(c);
}

static int configure_queue(struct nfqb_daq_ctx *c)
{
	struct nfqb_queue *q = c->q;
	uint32_t flags = 0;
	const char *what;

	what = "buffers";
	if (nfqb_queue_set_buffers(q, c->pool.size))
		goto fail;
	what = "copy mode";
	if (nfqb_queue_set_copy_mode(q, NFQB_COPY_PACKET, c->snaplen))
		goto fail;
	what = "queue_maxlen";
	if (nfqb_queue_set_maxlen(q, c->queue_maxlen))
		goto fail;
	if (c->fail_open)
		flags |= NFQB_F_FAIL_OPEN;
	if (c->conntrack)
		flags |= NFQB_F_CONNTRACK;
	what = "flags (fail_open, conntrack)";
	if (nfqb_queue_set_flags(q, flags, NFQB_F_FAIL_OPEN | NFQB_F_CONNTRACK))
		goto fail;
	what = "rcvbuf";
	if (nfqb_queue_set_rcvbuf(q, c->rcvbuf))
		goto fail;
	what = "default_verdict";
	if (nfqb_queue_set_default_verdict(q, c->default_verdict))
		goto fail;
	nfqb_queue_set_coalesce(q, c->coalesce);
	what = "batch_limit";
	if (c->set_batch_limit && nfqb_queue_set_batch_limit(q, c->batch_limit))
		goto fail;
	if (c->set_latency)
		nfqb_queue_set_latency(q, c->latency);
	what = "linger";
	if (c->set_linger && nfqb_queue_set_linger(q, c->linger))
		goto fail;
	nfqb_queue_set_verdict_timeout(q, c->verdict_timeout);
	/* With a receive timeout, the module polls and calls the library
	 * without blocking; without one, nfqb_recv() sleeps (and lingers). */
	nfqb_queue_set_nonblock(q, c->timeout != 0);
	return 0;
fail:
	SET_ERROR(c, "%s: queue %u: setting %s failed: %s (%d)", __func__,
		  c->queue_num, what, strerror(errno), errno);
	return -1;
}

static int nfqb_daq_start(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	if (c->q)
		return DAQ_SUCCESS;
	c->q = nfqb_queue_open(c->queue_num);
	if (!c->q) {
		SET_ERROR(c, "%s: cannot bind queue %u: %s (%d)", __func__,
			  c->queue_num, strerror(errno), errno);
		return DAQ_ERROR;
	}
	if (configure_queue(c)) {
		nfqb_queue_close(c->q);
		c->q = NULL;
		return DAQ_ERROR;
	}
	memset(&c->base, 0, sizeof(c->base));
	memset(&c->final, 0, sizeof(c->final));
	if (c->debug)
		printf("daq_nfqb: queue %u bound (libnfq-batch %s): snaplen %d, "
		       "pool %u, timeout %u ms, queue_maxlen %u, fail_open %d, "
		       "conntrack %d, coalesce %d, default verdict %s\n",
		       c->queue_num, nfqb_version(), c->snaplen, c->pool.size,
		       c->timeout, c->queue_maxlen, c->fail_open, c->conntrack,
		       c->coalesce, nfqb_verdict_name(c->default_verdict));
	return DAQ_SUCCESS;
}

static int nfqb_daq_interrupt(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	c->interrupted = true;
	if (c->q)
		nfqb_queue_interrupt(c->q);
	return DAQ_SUCCESS;
}

static int nfqb_daq_stop(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	if (queue_close(c)) {
		SET_ERROR(c, "%s: closing queue %u: %s (%d)", __func__,
			  c->queue_num, strerror(errno), errno);
		return DAQ_ERROR;
	}
	return DAQ_SUCCESS;
}

static int nfqb_daq_get_stats(void *handle, DAQ_Stats_t *stats)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_stats st;

	/* the library's counters (live, or as they were at stop) since
	 * the last reset */
	if (c->q)
		qb_stats(c->q, &st);
	else
		st = c->final;
	if (st.packets >= c->base.packets && st.enobufs >= c->base.enobufs) {
		c->stats.hw_packets_received = st.packets - c->base.packets;
		c->stats.hw_packets_dropped = st.enobufs - c->base.enobufs;
	}
	c->stats.packets_outstanding = c->pool.size - c->pool.available;
	memcpy(stats, &c->stats, sizeof(*stats));
	return DAQ_SUCCESS;
}

static void nfqb_daq_reset_stats(void *handle)
{
	struct nfqb_daq_ctx *c = handle;

	memset(&c->stats, 0, sizeof(c->stats));
	if (c->q)
		qb_stats(c->q, &c->base);
	else
		c->base = c->final;
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

static int ms_since(const struct timespec *t0)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(now.tv_sec - t0->tv_sec) * 1000 +
	     (now.tv_nsec - t0->tv_nsec) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Receive with the DAQ timeout: the library is non-blocking then, and we
 * sleep in poll() on its fd, no longer than it needs to run again.
 * Returns what nfqb_recv() returned, errno ETIMEDOUT when the DAQ timeout
 * expired.
 */
static int recv_timed(struct nfqb_daq_ctx *c, unsigned int max,
		      const struct timespec *t0)
{
	struct pollfd pfd = { .fd = nfqb_queue_fd(c->q), .events = POLLIN };
	int n, wait, lib, left;

	for (;;) {
		n = nfqb_recv(c->q, c->vec, max);
		if (n > 0 || errno != EAGAIN)
			return n;
		if (c->interrupted) {
			errno = EINTR;
			return -1;
		}
		left = (int)c->timeout - ms_since(t0);
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		lib = nfqb_queue_next_timeout(c->q);
		wait = (lib >= 0 && lib < left) ? lib : left;
		if (poll(&pfd, 1, wait) < 0 && errno != EINTR)
			return -1;
	}
}

static unsigned nfqb_daq_msg_receive(void *handle, const unsigned max_recv,
				     const DAQ_Msg_t *msgs[],
				     DAQ_RecvStatus *rstat)
{
	struct nfqb_daq_ctx *c = handle;
	struct timespec t0;
	unsigned int max, i;
	int n;

	*rstat = DAQ_RSTAT_OK;
	if (!c->q) {
		SET_ERROR(c, "%s: the module is not started", __func__);
		*rstat = DAQ_RSTAT_ERROR;
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (c->interrupted) {
			c->interrupted = false;
			*rstat = DAQ_RSTAT_INTERRUPTED;
			return 0;
		}
		max = max_recv < c->pool.available ? max_recv :
			c->pool.available;
		if (!max) {
			*rstat = DAQ_RSTAT_NOBUF;
			return 0;
		}
		if (c->timeout)
			n = recv_timed(c, max, &t0);
		else
			n = nfqb_recv(c->q, c->vec, max);
		if (n > 0)
			break;
		switch (errno) {
		case EINTR:
			/* nfqb_queue_interrupt(), or a signal: the flag
			 * tells, at the top of the loop */
			continue;
		case ENOBUFS:
			/* the socket overflowed; the library counted it */
			continue;
		case ETIMEDOUT:
			*rstat = DAQ_RSTAT_TIMEOUT;
			return 0;
		case ENOSPC:
			*rstat = DAQ_RSTAT_NOBUF;
			return 0;
		default:
			SET_ERROR(c, "%s: receive on queue %u failed: %s (%d)",
				  __func__, c->queue_num, strerror(errno),
				  errno);
			*rstat = DAQ_RSTAT_ERROR;
			return 0;
		}
	}

	for (i = 0; i < (unsigned int)n; i++) {
		struct nfqb_daq_desc *d = c->freelist;

		/* n <= max <= available: a descriptor is always there */
		c->freelist = d->next;
		d->next = NULL;
		c->pool.available--;
		desc_fill(c, d, c->vec[i]);
		msgs[i] = &d->msg;
	}
	c->stats.packets_received += n;
	return n;
}

static int nfqb_daq_msg_finalize(void *handle, const DAQ_Msg_t *msg,
				 DAQ_Verdict verdict)
{
	struct nfqb_daq_ctx *c = handle;
	struct nfqb_daq_desc *d = msg->priv;
	struct nfqb_packet *p = d->pkt;
	int rc;

	if (!p) {
		/* given the default verdict at stop already */
		c->late_finalize++;
		return DAQ_SUCCESS;
	}
	if (verdict >= MAX_DAQ_VERDICT)
		verdict = DAQ_VERDICT_PASS;
	c->stats.verdicts[verdict]++;

	switch (verdict) {
	case DAQ_VERDICT_BLOCK:
	case DAQ_VERDICT_BLACKLIST:
		rc = qb_drop(p);
		break;
	case DAQ_VERDICT_REPLACE:
		/* A packet cut by the snaplen cannot be replaced whole:
		 * pass it unchanged rather than truncate it. */
		if (!msg->data || nfqb_pkt_truncated(p)) {
			c->replace_unchanged++;
			rc = qb_accept(p);
			break;
		}
		rc = qb_replace(p, msg->data, msg->data_len);
		if (rc && (errno == ENOMEM || errno == EMSGSIZE ||
			   errno == E2BIG)) {
			/* still ours to decide */
			c->replace_unchanged++;
			rc = qb_accept(p);
		}
		break;
	case DAQ_VERDICT_PASS:
	case DAQ_VERDICT_WHITELIST:
	case DAQ_VERDICT_IGNORE:
	default:
		rc = qb_accept(p);
		break;
	}
	desc_put(c, d);
	if (rc) {
		c->verdict_failures++;
		SET_ERROR(c, "%s: verdict on queue %u failed: %s (%d)",
			  __func__, c->queue_num, strerror(errno), errno);
		return DAQ_ERROR;
	}
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
	.ioctl = NULL,
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
