// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tests: the model of the kernel's nfnetlink_queue (see kmodel.h). Written
 * from the uapi headers and the kernel's behaviour, byte by byte: no
 * libmnl, none of the library's code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "kmodel.h"

#define NFGEN_LEN	4	/* struct nfgenmsg */
#define VHDR_LEN	8	/* struct nfqnl_msg_verdict_hdr */
#define V_DROP		0u
#define V_ACCEPT	1u
#define V_QUEUE		3u
#define V_REPEAT	4u

/* One message of a datagram, read. */
struct km_sent {
	const struct nlmsghdr *nlh;
	uint8_t type;
	uint32_t id;
	struct km_dec d;
};

void km_init(struct kmodel *m, uint16_t qnum, const struct km_ops *ops,
	     void *data)
{
	memset(m, 0, sizeof(*m));
	m->qnum = qnum;
	m->ops = ops;
	m->data = data;
}

void km_free(struct kmodel *m)
{
	free(m->p);
	m->p = NULL;
	m->n = m->cap = 0;
}

unsigned int km_add(struct kmodel *m, uint32_t id, bool queued)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->p = realloc(m->p, m->cap * sizeof(*m->p));
		if (!m->p)
			abort();
	}
	m->p[m->n] = (struct km_pkt){ .id = id, .queued = queued };
	return m->n++;
}

long km_find(const struct kmodel *m, uint32_t id)
{
	unsigned int i;

	for (i = m->head; i < m->n; i++)
		if (m->p[i].queued && m->p[i].id == id)
			return (long)i;
	return -1;
}

uint32_t km_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

bool km_dec_eq(const struct km_dec *a, const struct km_dec *b)
{
	if (a->verdict != b->verdict || a->has_mark != b->has_mark ||
	    a->has_prio != b->has_prio || a->has_payload != b->has_payload)
		return false;
	if (a->has_mark && a->mark != b->mark)
		return false;
	if (a->has_prio && a->prio != b->prio)
		return false;
	if (a->has_ct_mark != b->has_ct_mark ||
	    a->has_ct_labels != b->has_ct_labels ||
	    (a->has_ct_mark && (a->ct_mark != b->ct_mark ||
				a->ct_mark_mask != b->ct_mark_mask)) ||
	    (a->has_ct_labels && a->ct_lhash != b->ct_lhash))
		return false;
	return !a->has_payload ||
	       (a->plen == b->plen && a->phash == b->phash);
}

bool km_is_default(const struct km_dec *d, uint32_t dflt)
{
	return d->verdict == dflt && !d->has_mark && !d->has_prio &&
	       !d->has_payload && !d->has_ct_mark && !d->has_ct_labels;
}

const char *km_dec_str(const struct km_dec *d, char *b, size_t n)
{
	static const char *const names[] = {
		"DROP", "ACCEPT", "STOLEN", "QUEUE", "REPEAT", "STOP",
	};
	unsigned int code = d->verdict & 0xff;
	size_t o;

	o = (size_t)snprintf(b, n, "%s", code <= 5 ? names[code] : "?");
	if (code == V_QUEUE && o < n)
		o += (size_t)snprintf(b + o, n - o, ":%u%s", d->verdict >> 16,
				      (d->verdict & 0x8000) ? "+bypass" : "");
	if (d->has_mark && o < n)
		o += (size_t)snprintf(b + o, n - o, " mark %#x", d->mark);
	if (d->has_prio && o < n)
		o += (size_t)snprintf(b + o, n - o, " prio %u", d->prio);
	if (d->has_ct_mark && o < n)
		o += (size_t)snprintf(b + o, n - o, " ct mark %#x/%#x",
				      d->ct_mark, d->ct_mark_mask);
	if (d->has_ct_labels && o < n)
		o += (size_t)snprintf(b + o, n - o, " ct labels");
	if (d->has_payload && o < n)
		snprintf(b + o, n - o, " payload[%u]", d->plen);
	return b;
}

static bool km_fail(struct kmodel *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool km_fail(struct kmodel *m, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m->ops && m->ops->fail)
		m->ops->fail(m, msg);
	else if (!m->err[0])
		snprintf(m->err, sizeof(m->err), "%s", msg);
	return false;
}

static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

static bool zeroed(struct kmodel *m, const uint8_t *p, size_t n,
		   const char *what, size_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return km_fail(m, "sent: a stale padding byte after the "
				       "%s at offset %zu", what, off + i);
	return true;
}

/* A verdict the kernel takes (nfqnl_recv_verdict(): no NF_STOLEN, only a
 * queue number and the bypass flag above the code of NF_QUEUE). */
static bool verdict_ok(struct kmodel *m, uint32_t v)
{
	switch (v & 0xff) {
	case V_DROP:
	case V_ACCEPT:
	case V_REPEAT:
		if (!(v >> 8))
			return true;
		break;
	case V_QUEUE:
		if (!(v & 0x7f00))
			return true;
		break;
	}
	return km_fail(m, "sent verdict %#x: the kernel says EINVAL", v);
}

/* The NFQA_CT nest of a single verdict (@pl, @plen bytes): CTA_MARK with
 * CTA_MARK_MASK, CTA_LABELS with CTA_LABELS_MASK (16 bytes each), each
 * pair whole or not at all, nothing else. */
static bool ct_nest(struct kmodel *m, struct km_sent *s, const uint8_t *pl,
		    size_t plen)
{
	const uint8_t *lab = NULL, *lmask = NULL;
	bool mark = false, mmask = false;
	size_t off = 0;

	while (off < plen) {
		struct nlattr a;
		size_t n;

		if (plen - off < NLA_HDRLEN)
			return km_fail(m, "sent: NFQA_CT: stray bytes");
		memcpy(&a, pl + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > plen - off)
			return km_fail(m, "sent: NFQA_CT: attribute length %u",
				       a.nla_len);
		n = a.nla_len - NLA_HDRLEN;
		switch (a.nla_type & NLA_TYPE_MASK) {
		case CTA_MARK:
			if (n != 4 || mark)
				return km_fail(m, "sent: CTA_MARK of %zu", n);
			mark = true;
			s->d.ct_mark = be32(pl + off + NLA_HDRLEN);
			break;
		case CTA_MARK_MASK:
			if (n != 4 || mmask)
				return km_fail(m, "sent: CTA_MARK_MASK of %zu",
					       n);
			mmask = true;
			s->d.ct_mark_mask = be32(pl + off + NLA_HDRLEN);
			break;
		case CTA_LABELS:
			if (n != 16 || lab)
				return km_fail(m, "sent: CTA_LABELS of %zu", n);
			lab = pl + off + NLA_HDRLEN;
			break;
		case CTA_LABELS_MASK:
			if (n != 16 || lmask)
				return km_fail(m, "sent: CTA_LABELS_MASK of %zu",
					       n);
			lmask = pl + off + NLA_HDRLEN;
			break;
		default:
			return km_fail(m, "sent: NFQA_CT: attribute %u",
				       a.nla_type);
		}
		off += NLA_ALIGN(a.nla_len);
	}
	if (mark != mmask || !lab != !lmask || (!mark && !lab))
		return km_fail(m, "sent: NFQA_CT: a value without its mask, "
			       "or empty");
	s->d.has_ct_mark = mark;
	s->d.has_ct_labels = lab;
	if (lab) {
		uint8_t both[32];

		memcpy(both, lab, 16);
		memcpy(both + 16, lmask, 16);
		s->d.ct_lhash = km_hash(both, sizeof(both));
	}
	return true;
}

/* One attribute of a verdict message into @s. */
static bool verdict_attr(struct kmodel *m, struct km_sent *s, uint16_t t,
			 const uint8_t *pl, size_t plen, bool *have_vh)
{
	bool single = s->type == NFQNL_MSG_VERDICT;

	if (t == NFQA_VERDICT_HDR && plen == VHDR_LEN && !*have_vh) {
		*have_vh = true;
		s->d.verdict = be32(pl);
		s->id = be32(pl + 4);
		return verdict_ok(m, s->d.verdict);
	}
	if (t == NFQA_MARK && plen == 4 && !s->d.has_mark) {
		s->d.has_mark = true;
		s->d.mark = be32(pl);
		return true;
	}
	if (single && t == NFQA_PRIORITY && plen == 4 && !s->d.has_prio) {
		s->d.has_prio = true;
		s->d.prio = be32(pl);
		return true;
	}
	if (single && t == NFQA_CT && !s->d.has_ct_mark &&
	    !s->d.has_ct_labels)
		return ct_nest(m, s, pl, plen);
	if (single && t == NFQA_PAYLOAD && !s->d.has_payload) {
		s->d.has_payload = true;
		s->d.plen = (uint32_t)plen;
		s->d.phash = km_hash(pl, plen);
		return true;
	}
	return km_fail(m, "sent: attribute %u (%zu bytes, or twice) in a "
		       "message of type %u", t, plen, s->type);
}

static bool config_attr(struct kmodel *m, uint16_t t, size_t plen)
{
	static const uint8_t sizes[] = {
		[NFQA_CFG_CMD] = 4,
		[NFQA_CFG_PARAMS] = 5,
		[NFQA_CFG_QUEUE_MAXLEN] = 4,
		[NFQA_CFG_MASK] = 4,
		[NFQA_CFG_FLAGS] = 4,
	};

	if (t && t < sizeof(sizes) && sizes[t] && plen == sizes[t])
		return true;
	return km_fail(m, "sent: configuration attribute %u of %zu bytes", t,
		       plen);
}

/* The attributes of the message at @b of @mlen bytes. */
static bool read_attrs(struct kmodel *m, const uint8_t *b, size_t mlen,
		       struct km_sent *s)
{
	size_t off = NLMSG_HDRLEN + NFGEN_LEN;
	bool have_vh = false;

	while (off < mlen) {
		struct nlattr a;
		size_t step, plen;
		uint16_t t;
		bool ok;

		if (mlen - off < NLA_HDRLEN)
			return km_fail(m, "sent: %zu stray bytes at the end of "
				       "a message", mlen - off);
		memcpy(&a, b + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > mlen - off)
			return km_fail(m, "sent: attribute length %u with %zu "
				       "bytes left in the message", a.nla_len,
				       mlen - off);
		t = a.nla_type & NLA_TYPE_MASK;
		plen = a.nla_len - NLA_HDRLEN;
		ok = s->type == NFQNL_MSG_CONFIG ? config_attr(m, t, plen) :
		     verdict_attr(m, s, t, b + off + NLA_HDRLEN, plen,
				  &have_vh);
		if (!ok)
			return false;
		step = NLA_ALIGN(a.nla_len);
		if (step > mlen - off)
			step = mlen - off;	/* the last one, unpadded */
		if (!zeroed(m, b + off + a.nla_len, step - a.nla_len,
			    "attribute", off + a.nla_len))
			return false;
		off += step;
	}
	if (s->type != NFQNL_MSG_CONFIG && !have_vh)
		return km_fail(m, "sent: a verdict message without "
			       "NFQA_VERDICT_HDR");
	return true;
}

/* The message at @off of @len bytes: its header, then its attributes. */
static bool read_msg(struct kmodel *m, const uint8_t *buf, size_t off,
		     size_t len, struct km_sent *s, size_t *next)
{
	const uint8_t *b = buf + off;
	size_t rem = len - off, mlen, step;
	struct nlmsghdr h;
	uint16_t res;

	if (rem < NLMSG_HDRLEN)
		return km_fail(m, "sent: %zu stray bytes at offset %zu", rem,
			       off);
	memcpy(&h, b, sizeof(h));
	mlen = h.nlmsg_len;
	if (mlen < NLMSG_HDRLEN + NFGEN_LEN || mlen > rem)
		return km_fail(m, "sent: nlmsg_len %zu at offset %zu, %zu "
			       "bytes left", mlen, off, rem);
	memset(s, 0, sizeof(*s));
	s->nlh = (const struct nlmsghdr *)b;
	s->type = h.nlmsg_type & 0xff;
	if ((h.nlmsg_type >> 8) != NFNL_SUBSYS_QUEUE ||
	    (s->type != NFQNL_MSG_VERDICT && s->type != NFQNL_MSG_VERDICT_BATCH &&
	     !(s->type == NFQNL_MSG_CONFIG && m->config_ok)))
		return km_fail(m, "sent: message type %#x", h.nlmsg_type);
	if (!(h.nlmsg_flags & NLM_F_REQUEST))
		return km_fail(m, "sent: no NLM_F_REQUEST");
	memcpy(&res, b + NLMSG_HDRLEN + 2, sizeof(res));
	if (b[NLMSG_HDRLEN + 1] != NFNETLINK_V0 || ntohs(res) != m->qnum)
		return km_fail(m, "sent: for queue %u (version %u), we are %u",
			       ntohs(res), b[NLMSG_HDRLEN + 1], m->qnum);
	if (!read_attrs(m, b, mlen, s))
		return false;
	step = NLMSG_ALIGN(mlen);
	if (step > rem)
		step = rem;
	*next = off + step;
	return zeroed(m, b + mlen, step - mlen, "message", off + mlen);
}

/* The kernel applies @s: 0, or -ENOENT. */
static int apply(struct kmodel *m, const struct km_sent *s, enum km_mode mode)
{
	bool batch = s->type == NFQNL_MSG_VERDICT_BATCH;
	unsigned int i, hits = 0;

	for (i = m->head; i < m->n; i++) {
		struct km_pkt *k = &m->p[i];

		if (!k->queued)
			continue;
		if (batch ? km_after(k->id, s->id) : k->id != s->id) {
			if (batch)
				break;
			continue;
		}
		hits++;
		if (mode == KM_FAILED) {
			k->failed_sends++;
		} else {
			k->queued = false;
			k->applied = true;
			k->by_batch = batch;
			k->got = s->d;
			if (m->ops && m->ops->apply)
				m->ops->apply(m, k, &s->d, batch, s->id);
		}
		if (!batch)
			break;
	}
	while (m->head < m->n && !m->p[m->head].queued)
		m->head++;
	if (hits || mode == KM_FAILED)
		return 0;
	if (m->ops && m->ops->enoent)
		m->ops->enoent(m, s->id, &s->d, batch);
	return -ENOENT;
}

bool km_take(struct kmodel *m, const void *buf, size_t len, enum km_mode mode)
{
	struct km_sent *s = NULL;
	unsigned int n = 0, cap = 0, i;
	size_t off = 0;
	bool ok = true;

	if (!len)
		return km_fail(m, "sent an empty datagram");
	while (ok && off < len) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			s = realloc(s, cap * sizeof(*s));
			if (!s)
				abort();
		}
		ok = read_msg(m, buf, off, len, &s[n++], &off);
	}
	for (i = 0; ok && mode != KM_CHECK && i < n; i++) {
		int err;

		if (s[i].type == NFQNL_MSG_CONFIG)
			continue;
		err = apply(m, &s[i], mode);
		if (mode == KM_FAILED)
			continue;
		if (s[i].type == NFQNL_MSG_VERDICT)
			m->singles++;
		else
			m->batches++;
		if (m->nlog < KM_LOG)
			m->log[m->nlog] = (struct km_msg){ .type = s[i].type,
							   .id = s[i].id,
							   .d = s[i].d,
							   .err = err };
		m->nlog++;
		if (m->ops && m->ops->answer)
			m->ops->answer(m, s[i].nlh, err);
	}
	free(s);
	return ok;
}

ssize_t km_sendmsg(struct kmodel *m, const struct msghdr *msg,
		   enum km_mode mode)
{
	const struct sockaddr_nl *to = msg->msg_name;
	size_t len = 0, off = 0, i;
	uint8_t *buf;
	bool ok;

	if (to && (msg->msg_namelen < sizeof(*to) ||
		   to->nl_family != AF_NETLINK || to->nl_pid != 0))
		km_fail(m, "sendmsg: to someone else than the kernel");
	for (i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	for (i = 0; i < msg->msg_iovlen; i++) {
		if (msg->msg_iov[i].iov_len)
			memcpy(buf + off, msg->msg_iov[i].iov_base,
			       msg->msg_iov[i].iov_len);
		off += msg->msg_iov[i].iov_len;
	}
	ok = km_take(m, buf, len, mode);
	free(buf);
	if (mode == KM_FAILED)
		m->sends_failed++;
	else
		m->sends++;
	if (!ok) {
		errno = EINVAL;
		return -1;
	}
	return (ssize_t)len;
}
