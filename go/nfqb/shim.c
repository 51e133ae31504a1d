// SPDX-License-Identifier: LGPL-2.1-or-later
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "shim.h"

/*
 * The id table (for the go-nfqueue API, which decides by packet id): slot
 * (id + k) & mask, k < NFQBGO_PROBE, holds the handle of packet id. A slot
 * whose handle is dead (nfqb_pkt_id() gives 0 once its verdict is sent)
 * is free. Only the owner writes; any thread reads, and checks the id of
 * the handle it found: a handle carries its descriptor's generation, so a
 * stale slot never reaches another packet.
 */
#define NFQBGO_PROBE	32

static void tab_put(struct nfqbgo *g, struct nfqb_packet *p, uint32_t id)
{
	unsigned int k;

	for (k = 0; k < NFQBGO_PROBE; k++) {
		uintptr_t *s = &g->tab[(id + k) & g->tab_mask];
		uintptr_t old = __atomic_load_n(s, __ATOMIC_ACQUIRE);

		if (!old || !nfqb_pkt_id((struct nfqb_packet *)old)) {
			__atomic_store_n(s, (uintptr_t)p, __ATOMIC_RELEASE);
			return;
		}
	}
	g->tab_full++;
}

static struct nfqb_packet *tab_get(struct nfqbgo *g, uint32_t id)
{
	unsigned int k;

	if (!g->tab)
		return NULL;
	for (k = 0; k < NFQBGO_PROBE; k++) {
		uintptr_t h = __atomic_load_n(&g->tab[(id + k) & g->tab_mask],
					      __ATOMIC_ACQUIRE);

		if (h && nfqb_pkt_id((struct nfqb_packet *)h) == id)
			return (struct nfqb_packet *)h;
	}
	return NULL;
}

struct nfqbgo *nfqbgo_open(int fd, uint16_t num, unsigned int max,
			   int idtab, unsigned int buffers, int *err)
{
	struct nfqbgo *g = calloc(1, sizeof(*g));
	uint32_t n = 4096;

	if (!g) {
		*err = ENOMEM;
		return NULL;
	}
	g->max = max;
	g->vec = calloc(max, sizeof(*g->vec));
	g->pkts = calloc(max, sizeof(*g->pkts));
	if (idtab) {
		/* eight times the packets that can be outstanding */
		while (n < 8u * buffers && n < (1u << 22))
			n <<= 1;
		g->tab = calloc(n, sizeof(*g->tab));
		g->tab_mask = n - 1;
	}
	if (!g->vec || !g->pkts || (idtab && !g->tab)) {
		*err = ENOMEM;
		goto fail;
	}
	g->q = fd >= 0 ? nfqb_queue_open_fd(fd, num) : nfqb_queue_open(num);
	if (!g->q) {
		*err = errno;
		goto fail;
	}
	return g;
fail:
	free(g->tab);
	free(g->pkts);
	free(g->vec);
	free(g);
	return NULL;
}

int nfqbgo_close(struct nfqbgo *g, struct nfqb_stats *st)
{
	int rc;

	rc = st ? nfqb_queue_close_stats(g->q, st, sizeof(*st)) :
		  nfqb_queue_close(g->q);
	rc = rc ? errno : 0;
	free(g->tab);
	free(g->pkts);
	free(g->vec);
	free(g);
	return rc;
}

/* The packet's numbers (and its payload) into @o: which it has. */
static uint32_t fill_meta(struct nfqbgo_pkt *o, struct nfqb_packet *p)
{
	uint32_t has = 0;

	o->h = (uintptr_t)p;
	o->id = nfqb_pkt_id(p);
	o->hook = nfqb_pkt_hook(p);
	o->family = nfqb_pkt_family(p);
	o->hw_protocol = nfqb_pkt_hw_protocol(p);
	o->payload = nfqb_pkt_payload(p, &o->payload_len);
	if (o->payload)
		has |= NFQBGO_HAS_PAYLOAD;
	if (nfqb_pkt_mark(p, &o->mark))
		has |= NFQBGO_HAS_MARK;
	if (nfqb_pkt_timestamp(p, &o->ts_ns))
		has |= NFQBGO_HAS_TIMESTAMP;
	if (nfqb_pkt_indev(p, &o->indev))
		has |= NFQBGO_HAS_INDEV;
	if (nfqb_pkt_outdev(p, &o->outdev))
		has |= NFQBGO_HAS_OUTDEV;
	if (nfqb_pkt_physindev(p, &o->physindev))
		has |= NFQBGO_HAS_PHYSINDEV;
	if (nfqb_pkt_physoutdev(p, &o->physoutdev))
		has |= NFQBGO_HAS_PHYSOUTDEV;
	if (nfqb_pkt_hwaddr(p, &o->hwaddr, &o->hwaddr_len))
		has |= NFQBGO_HAS_HWADDR;
	if (nfqb_pkt_uid(p, &o->uid))
		has |= NFQBGO_HAS_UID;
	if (nfqb_pkt_gid(p, &o->gid))
		has |= NFQBGO_HAS_GID;
	if (nfqb_pkt_ct_info(p, &o->ctinfo))
		has |= NFQBGO_HAS_CTINFO;
	if (nfqb_pkt_skbinfo(p, &o->skbinfo))
		has |= NFQBGO_HAS_SKBINFO;
	if (nfqb_pkt_priority(p, &o->priority))
		has |= NFQBGO_HAS_PRIORITY;
	return has;
}

/* The packet's attributes of variable length into @o: which it has. */
static uint32_t fill_blobs(struct nfqbgo_pkt *o, struct nfqb_packet *p)
{
	uint32_t has = 0, be, len;
	const char *s;
	uint16_t len16;
	const void *a;

	a = nfqb_pkt_attr(p, NFQA_CAP_LEN, &len16);
	o->cap_len = 0;
	if (a && len16 >= 4) {
		memcpy(&be, a, 4);
		o->cap_len = ntohl(be);
		has |= NFQBGO_HAS_CAPLEN;
	}
	o->ct = nfqb_pkt_ct(p, &o->ct_len);
	if (o->ct)
		has |= NFQBGO_HAS_CT;
	o->secctx = NULL;
	o->secctx_len = 0;
	if (nfqb_pkt_secctx(p, &s, &len)) {
		o->secctx = (const uint8_t *)s;
		o->secctx_len = len;
		has |= NFQBGO_HAS_SECCTX;
	}
	o->l2hdr = nfqb_pkt_l2hdr(p, &o->l2hdr_len);
	if (o->l2hdr)
		has |= NFQBGO_HAS_L2HDR;
	o->exp = nfqb_pkt_attr(p, NFQA_EXP, &o->exp_len);
	if (o->exp)
		has |= NFQBGO_HAS_EXP;
	return has;
}

static void fill(struct nfqbgo *g, struct nfqbgo_pkt *o, struct nfqb_packet *p)
{
	o->has = fill_meta(o, p) | fill_blobs(o, p);
	if (g->tab)
		tab_put(g, p, o->id);
}

static int decide(struct nfqbgo *g, struct nfqbgo_v *d, const void *payload,
		  uint32_t len, int with_payload, const uint8_t *labels)
{
	struct nfqb_packet *p = (struct nfqb_packet *)d->h;
	struct nfqb_verdict v;
	int rc;

	if (!p) {
		p = tab_get(g, d->id);
		if (!p)
			return ENOENT;
	}
	if (!with_payload && !labels && d->verdict != NFQB_QUEUE) {
		if (!d->flags)
			rc = nfqb_verdict(p, d->verdict);
		else if (d->flags == NFQB_V_MARK)
			rc = nfqb_verdict_mark(p, d->verdict, d->mark);
		else if (d->flags == NFQB_V_CT_MARK)
			rc = nfqb_verdict_ct_mark(p, d->verdict, d->ct_mark);
		else
			goto ex;
		return rc ? errno : 0;
	}
ex:
	memset(&v, 0, sizeof(v));
	v.verdict = d->verdict;
	v.flags = d->flags;
	v.mark = d->mark;
	v.priority = d->priority;
	v.queue_num = d->queue_num;
	v.ct_mark = d->ct_mark;
	if (with_payload) {
		v.flags |= NFQB_V_PAYLOAD;
		v.payload = payload;
		v.payload_len = len;
	}
	if (labels) {
		v.flags |= NFQB_V_CT_LABELS;
		memcpy(v.ct_labels, labels, sizeof(v.ct_labels));
	}
	rc = nfqb_verdict_ex(p, &v, sizeof(v));
	return rc ? errno : 0;
}

int nfqbgo_decide(struct nfqbgo *g, uintptr_t h, uint32_t id,
		  uint32_t verdict, uint32_t flags, uint32_t mark,
		  uint32_t ct_mark, uint32_t priority, uint16_t queue_num,
		  const void *payload, uint32_t len, int with_payload,
		  const uint8_t *ct_labels)
{
	struct nfqbgo_v v = {
		.h = h, .id = id, .verdict = verdict, .flags = flags,
		.mark = mark, .ct_mark = ct_mark, .priority = priority,
		.queue_num = queue_num,
	};

	return decide(g, &v, payload, len, with_payload, ct_labels);
}

unsigned int nfqbgo_apply(struct nfqbgo *g, struct nfqbgo_v *v,
			  unsigned int nv)
{
	unsigned int i, bad = 0;

	for (i = 0; i < nv; i++) {
		v[i].err = decide(g, &v[i], NULL, 0, 0, NULL);
		bad += v[i].err != 0;
	}
	return bad;
}

int nfqbgo_step(struct nfqbgo *g, struct nfqbgo_v *v, unsigned int nv)
{
	int n, i;

	if (nv)
		nfqbgo_apply(g, v, nv);
	n = nfqb_recv(g->q, g->vec, g->max);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++)
		fill(g, &g->pkts[i], g->vec[i]);
	return n;
}

int nfqbgo_stats(struct nfqbgo *g, struct nfqb_stats *st)
{
	return nfqb_queue_stats(g->q, st, sizeof(*st)) ? errno : 0;
}

int nfqbgo_socket_in(int nsfd, int *restored)
{
	int self, fd, err;

	*restored = 0;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(nsfd, CLONE_NEWNET)) {
		err = errno;
		close(self);
		*restored = 1;
		return -err;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	err = errno;
	*restored = setns(self, CLONE_NEWNET) == 0;
	close(self);
	return fd < 0 ? -err : fd;
}
