// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Seed corpus of the fuzz targets, made with tests/unit/nlbuild.c:
 *   gen-corpus DIR  writes DIR/parse/ (one netlink message per file, for
 *   fuzz_parse), DIR/datagram/ (the input format of fuzz_datagram.c:
 *   5 header bytes, then [ctl][len lo][len hi][datagram] records) and
 *   DIR/hdrs/ (fuzz_hdrs.c: flags, MSS, an IP or Ethernet packet).
 * Packet messages with every attribute kind, each attribute alone,
 * malformed ones, NLMSG_ERROR messages, multi-message datagrams, truncated
 * ones, foreign senders, and messages whose nlmsg_len is 2^31 or more.
 * nlbuild's checks report through Check: the work runs as one Check test
 * (no fork).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "nlbuild.h"

#define QNUM		7	/* the queue fuzz_datagram.c uses */
#define CGROUP_CLASSID	22	/* NFQA_CGROUP_CLASSID, newer than uapi */
#define MAX_SEED	65536

/* fuzz_datagram.c header and record control bits */
#define H0_DEFAULT	0x07	/* 8 buffers, coalescer, accept, limit 64 */
#define H0_DROP		0x10
#define H0_NOCOALESCE	0x08
#define H0_TIMEOUT	0x20
#define RUN4		(3 << 3)	/* h2: decision kinds in runs of 4 */
#define RUN16		(15 << 3)
#define C_FOREIGN	0x01
#define C_TRUNC		0x02
#define C_ONE		0x04
#define C_KEEP		(1 << 3)
#define C_ODD		(2 << 3)
#define C_REVERSE	(3 << 3)
#define C_FLUSH		0x20
#define C_BATCH		0x40
#define C_TICK		0x80

static const char *outdir;
static unsigned int nfiles;

static void write_file(const char *sub, const char *name, const void *buf,
		       size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	nfiles++;
}

/* --- messages ----------------------------------------------------------- */

static void eth_hdr(uint8_t *h)
{
	static const uint8_t e[14] = {
		0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00,
	};

	memcpy(h, e, sizeof(e));
}

/* 20 bytes of IPv4 header and 8 of UDP */
static size_t ip_udp(uint8_t *p)
{
	static const uint8_t pkt[28] = {
		0x45, 0, 0, 28, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0,
	};

	memcpy(p, pkt, sizeof(pkt));
	return sizeof(pkt);
}

static void attr_timestamp(struct nlb *b)
{
	uint8_t ts[16] = { 0 };

	ts[7] = 0x60;		/* be64 sec */
	ts[15] = 0x2a;		/* be64 usec */
	nlb_attr(b, NFQA_TIMESTAMP, ts, sizeof(ts));
}

static void attr_hwaddr(struct nlb *b, uint16_t addrlen)
{
	uint8_t hw[12] = { 0 };	/* be16 len, pad, addr[8] */

	hw[0] = addrlen >> 8;
	hw[1] = addrlen & 0xff;
	memcpy(hw + 4, "\x02\x00\x00\x00\x00\x01", 6);
	nlb_attr(b, NFQA_HWADDR, hw, sizeof(hw));
}

static void attr_payload(struct nlb *b)
{
	uint8_t p[64];

	nlb_attr(b, NFQA_PAYLOAD, p, ip_udp(p));
}

static void attr_ct(struct nlb *b, uint32_t ctid)
{
	nlb_nest_begin(b, NFQA_CT | NLA_F_NESTED);
	nlb_nest_begin(b, CTA_TUPLE_ORIG | NLA_F_NESTED);
	nlb_nest_begin(b, CTA_TUPLE_IP | NLA_F_NESTED);
	nlb_attr_be32(b, CTA_IP_V4_SRC, 0x0a000001);
	nlb_attr_be32(b, CTA_IP_V4_DST, 0x0a000002);
	nlb_nest_end(b);
	nlb_nest_end(b);
	nlb_attr_be32(b, CTA_STATUS, 0x8);
	nlb_attr_be32(b, CTA_MARK, 0);
	nlb_attr_be32(b, CTA_ID, ctid);
	nlb_nest_end(b);
}

static void attr_vlan(struct nlb *b)
{
	nlb_nest_begin(b, NFQA_VLAN | NLA_F_NESTED);
	nlb_attr_be16(b, NFQA_VLAN_PROTO, 0x8100);
	nlb_attr_be16(b, NFQA_VLAN_TCI, 42);
	nlb_nest_end(b);
}

static void attr_l2hdr(struct nlb *b)
{
	uint8_t h[14];

	eth_hdr(h);
	nlb_attr(b, NFQA_L2HDR, h, sizeof(h));
}

static void attr_secctx(struct nlb *b)
{
	static const char ctx[] = "system_u:object_r:unlabeled_t:s0";

	nlb_attr(b, NFQA_SECCTX, ctx, sizeof(ctx) - 1);
}

static void attr_exp(struct nlb *b)
{
	nlb_nest_begin(b, NFQA_EXP | NLA_F_NESTED);
	nlb_attr_be32(b, 1, 5);
	nlb_nest_end(b);
}

/* Attribute kinds, one builder each. */
enum kind {
	K_MARK, K_TIMESTAMP, K_INDEV, K_OUTDEV, K_PHYSINDEV, K_PHYSOUTDEV,
	K_HWADDR, K_PAYLOAD, K_CT, K_CT_INFO, K_CAP_LEN, K_SKB_INFO, K_EXP,
	K_UID, K_GID, K_SECCTX, K_VLAN, K_L2HDR, K_PRIORITY, K_CGROUP,
	K_MAX,
};

static const char *const kind_names[K_MAX] = {
	"mark", "timestamp", "indev", "outdev", "physindev", "physoutdev",
	"hwaddr", "payload", "ct", "ct-info", "cap-len", "skb-info", "exp",
	"uid", "gid", "secctx", "vlan", "l2hdr", "priority", "cgroup-classid",
};

static void add_kind(struct nlb *b, enum kind k, uint32_t id)
{
	switch (k) {
	case K_MARK:
		nlb_attr_be32(b, NFQA_MARK, 0x1234);
		break;
	case K_TIMESTAMP:
		attr_timestamp(b);
		break;
	case K_INDEV:
		nlb_attr_be32(b, NFQA_IFINDEX_INDEV, 2);
		break;
	case K_OUTDEV:
		nlb_attr_be32(b, NFQA_IFINDEX_OUTDEV, 3);
		break;
	case K_PHYSINDEV:
		nlb_attr_be32(b, NFQA_IFINDEX_PHYSINDEV, 4);
		break;
	case K_PHYSOUTDEV:
		nlb_attr_be32(b, NFQA_IFINDEX_PHYSOUTDEV, 5);
		break;
	case K_HWADDR:
		attr_hwaddr(b, 6);
		break;
	case K_PAYLOAD:
		attr_payload(b);
		break;
	case K_CT:
		attr_ct(b, 0xc0ffee00 + id);
		break;
	case K_CT_INFO:
		nlb_attr_be32(b, NFQA_CT_INFO, 2);
		break;
	case K_CAP_LEN:
		nlb_attr_be32(b, NFQA_CAP_LEN, 1500);
		break;
	case K_SKB_INFO:
		nlb_attr_be32(b, NFQA_SKB_INFO, NFQA_SKB_CSUMNOTREADY |
			      NFQA_SKB_GSO | NFQA_SKB_CSUM_NOTVERIFIED);
		break;
	case K_EXP:
		attr_exp(b);
		break;
	case K_UID:
		nlb_attr_be32(b, NFQA_UID, 1000);
		break;
	case K_GID:
		nlb_attr_be32(b, NFQA_GID, 100);
		break;
	case K_SECCTX:
		attr_secctx(b);
		break;
	case K_VLAN:
		attr_vlan(b);
		break;
	case K_L2HDR:
		attr_l2hdr(b);
		break;
	case K_PRIORITY:
		nlb_attr_be32(b, NFQA_PRIORITY, 6);
		break;
	case K_CGROUP:
		nlb_attr_be32(b, CGROUP_CLASSID, 0x100001);
		break;
	case K_MAX:
		break;
	}
}

/* A packet message with every attribute kind. */
static size_t full_packet(struct nlb *b, uint32_t id, uint8_t family,
			  uint8_t hook)
{
	int k;

	nlb_init_packet(b, family, QNUM);
	nlb_pkt_hdr(b, id, 0x0800, hook);
	for (k = 0; k < K_MAX; k++)
		add_kind(b, (enum kind)k, id);
	return nlb_finish(b);
}

/* A packet message with the header and one attribute kind. */
static size_t one_attr_packet(struct nlb *b, uint32_t id, enum kind k)
{
	nlb_init_ipv4(b, QNUM, id);
	add_kind(b, k, id);
	return nlb_finish(b);
}

static size_t simple_packet(struct nlb *b, uint32_t id)
{
	nlb_simple_packet(b, QNUM, id, 28);
	return b->len;
}

/* NLMSG_ERROR about one of our messages (a verdict with @seq). */
static size_t error_msg(uint8_t *out, int error, uint32_t seq, bool whole)
{
	struct nlmsghdr h = {
		.nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr),
		.nlmsg_type = NLMSG_ERROR,
		.nlmsg_flags = NLM_F_CAPPED,
	};
	struct nlmsgerr e = {
		.error = error,
		.msg = {
			.nlmsg_len = 48,
			.nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) |
				      NFQNL_MSG_VERDICT,
			.nlmsg_seq = seq,
		},
	};

	if (!whole)
		h.nlmsg_len = NLMSG_HDRLEN + sizeof(int);
	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), &e, sizeof(e));
	return h.nlmsg_len;
}

/* Overwrite the nlmsg_len of the message at @msg. */
static void set_len(uint8_t *msg, uint32_t len)
{
	memcpy(msg, &len, sizeof(len));
}

/* --- fuzz_datagram inputs ------------------------------------------------ */

struct seed {
	uint8_t buf[MAX_SEED];
	size_t len;
};

static void seed_init(struct seed *s, uint8_t h0, uint8_t h1, uint8_t h2,
		      uint8_t h3, uint8_t h4)
{
	s->buf[0] = h0;
	s->buf[1] = h1;
	s->buf[2] = h2;
	s->buf[3] = h3;
	s->buf[4] = h4;
	s->len = 5;
}

static void seed_rec(struct seed *s, uint8_t ctl, const void *d, size_t len)
{
	if (s->len + 3 + len > sizeof(s->buf) || len > 0xffff) {
		fprintf(stderr, "gen-corpus: seed too large\n");
		exit(1);
	}
	s->buf[s->len++] = ctl;
	s->buf[s->len++] = len & 0xff;
	s->buf[s->len++] = len >> 8;
	if (len)
		memcpy(s->buf + s->len, d, len);
	s->len += len;
}

static void seed_write(const struct seed *s, const char *name)
{
	write_file("datagram", name, s->buf, s->len);
}

/* Both targets: the message alone, and as a one-datagram input. */
static void both(const char *name, const void *msg, size_t len)
{
	struct seed s;

	write_file("parse", name, msg, len);
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	seed_rec(&s, C_FLUSH, msg, len);
	seed_write(&s, name);
}

/* --- the seeds ----------------------------------------------------------- */

static void valid_messages(void)
{
	static const struct {
		const char *name;
		uint8_t family, hook;
	} where[] = {
		{ "full-ipv4-input", 2, 1 },
		{ "full-ipv4-forward", 2, 2 },
		{ "full-ipv6-prerouting", 10, 0 },
		{ "full-inet-ingress", 1, 5 },
		{ "full-bridge-postrouting", 7, 4 },
		{ "full-arp-out", 3, 1 },
		{ "full-netdev-ingress", 5, 0 },
		{ "full-netdev-egress", 5, 1 },
		{ "full-unknown-family", 99, 9 },
	};
	struct nlb b;
	char name[64];
	size_t i;
	int k;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		full_packet(&b, 100 + (uint32_t)i, where[i].family,
			    where[i].hook);
		both(where[i].name, b.buf, b.len);
	}
	for (k = 0; k < K_MAX; k++) {
		one_attr_packet(&b, 1, (enum kind)k);
		snprintf(name, sizeof(name), "only-%s", kind_names[k]);
		both(name, b.buf, b.len);
	}
	nlb_init_ipv4(&b, QNUM, 1);
	both("header-only", b.buf, nlb_finish(&b));

	nlb_simple_packet(&b, QNUM, 1, 256);
	both("payload-256", b.buf, b.len);

	/* the last attribute without its padding: allowed */
	nlb_init_ipv4(&b, QNUM, 1);
	nlb_attr(&b, NFQA_PAYLOAD, "abcde", 5);
	b.len -= 3;
	both("last-attr-unpadded", b.buf, nlb_finish(&b));

	/* attributes a newer kernel may send */
	nlb_init_ipv4(&b, QNUM, 1);
	nlb_attr_be32(&b, 40, 1);
	nlb_attr_be32(&b, 0, 1);
	both("unknown-attrs", b.buf, nlb_finish(&b));

	/* a CT without CTA_ID, and one with a CTA_ID of the wrong size */
	nlb_init_ipv4(&b, QNUM, 1);
	nlb_nest_begin(&b, NFQA_CT | NLA_F_NESTED);
	nlb_attr_be32(&b, CTA_STATUS, 0x8);
	nlb_nest_end(&b);
	both("ct-without-id", b.buf, nlb_finish(&b));
	nlb_init_ipv4(&b, QNUM, 1);
	nlb_nest_begin(&b, NFQA_CT | NLA_F_NESTED);
	nlb_attr_be16(&b, CTA_ID, 5);
	nlb_nest_end(&b);
	both("ct-id-short", b.buf, nlb_finish(&b));
}

static void malformed_messages(void)
{
	struct nlb b;
	uint8_t e[64];

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_attr(&b, NFQA_MARK, "\1\2\3", 3);
	both("bad-mark-3-bytes", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	attr_hwaddr(&b, 9);
	both("bad-hwaddr-len-9", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_nest_begin(&b, NFQA_VLAN | NLA_F_NESTED);
	nlb_attr_be32(&b, NFQA_VLAN_TCI, 42);
	nlb_nest_end(&b);
	both("bad-vlan-tci-4-bytes", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_nest_begin(&b, NFQA_CT | NLA_F_NESTED);
	nlb_raw(&b, "\x40\x00\x0c\x00", 4);	/* nla_len 64 in 4 bytes */
	nlb_nest_end(&b);
	both("bad-ct-nest", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_raw(&b, "\xff\x00\x0a\x00", 4);	/* payload of 251 bytes */
	both("bad-attr-overrun", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_raw(&b, "\x02\x00\x03\x00", 4);	/* nla_len 2 */
	both("bad-attr-len-2", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM, 1);
	nlb_raw(&b, "xyz", 3);
	both("bad-trailing-3-bytes", b.buf, nlb_finish(&b));

	nlb_init_packet(&b, 2, QNUM);
	nlb_attr_be32(&b, NFQA_MARK, 1);
	both("bad-no-packet-header", b.buf, nlb_finish(&b));

	nlb_init_packet(&b, 2, QNUM);
	nlb_attr(&b, NFQA_PACKET_HDR, "\0\0\0\1\x08", 5);
	both("bad-short-packet-header", b.buf, nlb_finish(&b));

	nlb_init_packet(&b, 2, QNUM);
	b.len = 18;	/* no room for the nfgenmsg */
	both("bad-no-nfgenmsg", b.buf, nlb_finish(&b));

	nlb_init_ipv4(&b, QNUM + 1, 1);
	both("other-queue", b.buf, nlb_finish(&b));

	nlb_init(&b, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_VERDICT, 0, QNUM);
	nlb_attr(&b, NFQA_VERDICT_HDR, "\0\0\0\1\0\0\0\1", 8);
	both("not-a-packet", b.buf, nlb_finish(&b));

	both("error-enoent", e, error_msg(e, -ENOENT, 1, true));
	both("error-ack", e, error_msg(e, 0, 1, true));
	both("error-short", e, error_msg(e, -EPERM, 1, false));

	/* nlmsg_len of 2^31 and more: libmnl's mnl_nlmsg_ok() compares it
	 * as a signed int and lets it through */
	simple_packet(&b, 1);
	set_len(b.buf, 0x80000000u);
	both("len-2g", b.buf, b.len);
	set_len(b.buf, 0x80000014u);
	both("len-2g-plus-20", b.buf, b.len);
	set_len(b.buf, 0xfffffff0u);
	both("len-4g-minus-16", b.buf, b.len);
	set_len(b.buf, 0xffffffffu);
	both("len-4g-minus-1", b.buf, b.len);
}

/* A datagram of several packet messages, ids @first.., and what else. */
static size_t multi(uint8_t *out, uint32_t first, unsigned int n)
{
	struct nlb b;
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		simple_packet(&b, first + i);
		memcpy(out + len, b.buf, b.len);
		len += b.len;
	}
	return len;
}

static void datagram_seeds(void)
{
	static const uint8_t ctls[] = {
		C_FLUSH, C_KEEP, C_ODD | C_FLUSH, C_REVERSE, C_BATCH | C_FLUSH,
		C_ONE, C_TICK | C_FLUSH, C_KEEP | C_TICK, C_FLUSH,
		C_BATCH, C_REVERSE | C_FLUSH, C_FLUSH | C_TICK,
	};
	static uint8_t d[MAX_SEED];
	struct seed s;
	struct nlb b;
	char name[64];
	size_t len, n;
	uint32_t id;
	unsigned int h2;

	/* a stream, one packet per datagram, every way of deciding; each
	 * decision kind (h2) in turn */
	for (h2 = 0; h2 < 8; h2++) {
		seed_init(&s, H0_DEFAULT, 0, (uint8_t)(h2 | RUN4 | 0x80),
			  0x11, 0);
		for (id = 1; id <= sizeof(ctls); id++) {
			full_packet(&b, id, 2, 1);
			seed_rec(&s, ctls[id - 1], b.buf, b.len);
		}
		snprintf(name, sizeof(name), "stream-kind-%u", h2);
		seed_write(&s, name);
	}

	/* the same, coalescer off / default drop / few buffers / timeouts /
	 * a failing sendmsg */
	{
		static const struct {
			const char *name;
			uint8_t h0, h1, h3, h4;
		} v[] = {
			{ "stream-nocoalesce", H0_DEFAULT | H0_NOCOALESCE, 0,
			  0x11, 0 },
			{ "stream-default-drop", H0_DEFAULT | H0_DROP, 0,
			  0x11, 0 },
			{ "stream-1-buffer", 0x00, 0, 0x11, 0 },
			{ "stream-limit-1", H0_DEFAULT | 0x40, 0, 0x11, 0 },
			{ "stream-timeouts", H0_DEFAULT | H0_TIMEOUT, 0,
			  0x31, 0 },
			{ "stream-send-fails", H0_DEFAULT, 0x05, 0x11, 0 },
			{ "stream-alloc-fails", H0_DEFAULT, 0, 0x11, 3 },
		};
		size_t i;

		for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			seed_init(&s, v[i].h0, v[i].h1, 0x83 | RUN4, v[i].h3,
				  v[i].h4);
			for (id = 1; id <= sizeof(ctls); id++) {
				simple_packet(&b, id);
				seed_rec(&s, ctls[id - 1], b.buf, b.len);
			}
			seed_write(&s, v[i].name);
		}
	}

	/* several messages per datagram, with an error, NOOP and DONE */
	len = multi(d, 1, 3);
	len += error_msg(d + len, -ENOENT, 1, true);
	{
		struct nlmsghdr h = { .nlmsg_len = NLMSG_HDRLEN,
				      .nlmsg_type = NLMSG_NOOP };

		memcpy(d + len, &h, sizeof(h));
		len += sizeof(h);
		h.nlmsg_type = NLMSG_DONE;
		memcpy(d + len, &h, sizeof(h));
		len += sizeof(h);
	}
	n = multi(d + len, 4, 2);
	len += n;
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	seed_rec(&s, C_FLUSH, d, len);
	seed_write(&s, "multi-with-error-noop-done");

	/* many packets in one datagram: more than the ring holds */
	len = multi(d, 1, 40);
	seed_init(&s, 0x00, 0, 0x80, 0x11, 0);
	seed_rec(&s, C_FLUSH, d, len);
	seed_rec(&s, C_FLUSH, d, len);
	seed_write(&s, "ring-overflow");

	/* every buffer held by the application: the next inject fails */
	seed_init(&s, 0x00, 0, 0x00, 0x11, 0);
	simple_packet(&b, 1);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 2);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 3);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_write(&s, "buffers-exhausted");

	/* a stranger's datagram between the kernel's */
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	simple_packet(&b, 1);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 2);
	seed_rec(&s, C_FOREIGN | C_FLUSH, b.buf, b.len);
	simple_packet(&b, 3);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_write(&s, "foreign-sender");

	/* truncated: with MSG_TRUNC (the header survived, and not), and cut
	 * without the flag (nlmsg_len past the datagram) */
	full_packet(&b, 5, 2, 1);
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	simple_packet(&b, 4);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	full_packet(&b, 5, 2, 1);
	seed_rec(&s, C_TRUNC | C_FLUSH, b.buf, 60);
	seed_rec(&s, C_TRUNC | C_FLUSH, b.buf, 24);
	seed_rec(&s, C_FLUSH, b.buf, 60);
	simple_packet(&b, 6);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_write(&s, "truncated");

	/* a message we reject between two good ones, in one datagram and
	 * in three: deciding the good ones must not decide it */
	{
		uint8_t bad[128];
		size_t blen;

		nlb_init_ipv4(&b, QNUM, 2);
		nlb_attr(&b, NFQA_MARK, "\1\2\3", 3);
		blen = nlb_finish(&b);
		memcpy(bad, b.buf, blen);

		simple_packet(&b, 1);
		memcpy(d, b.buf, b.len);
		len = b.len;
		memcpy(d + len, bad, blen);
		len += blen;
		simple_packet(&b, 3);
		memcpy(d + len, b.buf, b.len);
		len += b.len;
		seed_init(&s, H0_DEFAULT | H0_DROP, 0, 0x80 | RUN16, 0x11, 0);
		seed_rec(&s, C_FLUSH, d, len);
		seed_write(&s, "rejected-between-one-datagram");

		seed_init(&s, H0_DEFAULT, 0, 0x81 | RUN16, 0x11, 0);
		simple_packet(&b, 1);
		seed_rec(&s, C_KEEP, b.buf, b.len);
		seed_rec(&s, C_KEEP, bad, blen);
		simple_packet(&b, 3);
		seed_rec(&s, C_FLUSH, b.buf, b.len);
		seed_write(&s, "rejected-between-three-datagrams");
	}

	/* a failed sendmsg, then a batch reaching past the lost verdict:
	 * id 1 repeat (send #0 fails), ids 2-3 by nfqb_verdict_batch() */
	seed_init(&s, H0_DEFAULT, 0x01, 0x07, 0x11, 0);
	simple_packet(&b, 1);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	simple_packet(&b, 2);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 3);
	seed_rec(&s, C_BATCH | C_FLUSH, b.buf, b.len);
	seed_write(&s, "send-fail-then-batch");

	/* a payload verdict (kind 4) on a packet without payload */
	seed_init(&s, H0_DEFAULT, 0, 0x04, 0x11, 0);
	nlb_init_ipv4(&b, QNUM, 1);
	seed_rec(&s, C_FLUSH, b.buf, nlb_finish(&b));
	seed_write(&s, "mangle-without-payload");

	/* a truncated message of another queue carrying the id of one of
	 * ours, decided drop and not yet sent */
	seed_init(&s, H0_DEFAULT, 0, 0x01, 0x11, 0);
	simple_packet(&b, 2);
	seed_rec(&s, 0, b.buf, b.len);
	nlb_simple_packet(&b, QNUM + 1, 2, 28);
	seed_rec(&s, C_TRUNC | C_FLUSH, b.buf, 40);
	seed_write(&s, "truncated-other-queue");

	/* ids that go backwards: per-packet verdicts from then on */
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	simple_packet(&b, 5);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 3);
	seed_rec(&s, C_KEEP, b.buf, b.len);
	simple_packet(&b, 4);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_write(&s, "ids-backwards");

	/* ids across the 2^32 wrap */
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	len = multi(d, 0xfffffffeu, 4);
	seed_rec(&s, C_KEEP, d, len);
	seed_rec(&s, C_BATCH | C_FLUSH, NULL, 0);
	seed_write(&s, "ids-wrap");

	/* errors about our verdicts (sequence numbers 1, 2, ...) */
	seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
	simple_packet(&b, 1);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_rec(&s, C_FLUSH, d, error_msg(d, -ENOENT, 1, true));
	simple_packet(&b, 2);
	seed_rec(&s, C_FLUSH, b.buf, b.len);
	seed_rec(&s, C_FLUSH, d, error_msg(d, -EPERM, 2, true));
	seed_rec(&s, C_FLUSH, d, error_msg(d, -EINVAL, 3, false));
	seed_write(&s, "verdict-errors");

	/* nlmsg_len of 2^31 and more after a good message, alone, and as
	 * the datagram's only content */
	{
		static const uint32_t huge[] = {
			0x80000000u, 0x80000014u, 0xfffffff0u, 0xfffffffcu,
			0xffffffffu,
		};
		size_t i;

		for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
			simple_packet(&b, 1);
			memcpy(d, b.buf, b.len);
			len = b.len;
			simple_packet(&b, 2);
			set_len(b.buf, huge[i]);
			memcpy(d + len, b.buf, b.len);
			len += b.len;
			seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
			seed_rec(&s, C_FLUSH, d, len);
			snprintf(name, sizeof(name), "len-%08x-after-packet",
				 huge[i]);
			seed_write(&s, name);

			seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
			seed_rec(&s, C_FLUSH, b.buf, b.len);
			snprintf(name, sizeof(name), "len-%08x-alone", huge[i]);
			seed_write(&s, name);
		}
		/* an NLMSG_ERROR with a huge length */
		len = error_msg(d, -ENOENT, 1, true);
		set_len(d, 0x80000000u);
		seed_init(&s, H0_DEFAULT, 0, 0x80, 0x11, 0);
		seed_rec(&s, C_FLUSH, d, len);
		seed_write(&s, "len-80000000-error");
	}
}

/* --- fuzz_hdrs: packets ---------------------------------------------------- */

static void be16_at(uint8_t *b, unsigned int v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* fuzz_hdrs.c's input: flags, MSS (big-endian), the packet. */
static void hdrs_seed(const char *name, uint8_t flags, const uint8_t *pkt,
		      size_t len)
{
	uint8_t in[2048];

	ck_assert_uint_le(len + 3, sizeof(in));
	in[0] = flags;
	be16_at(in + 1, 1000);
	memcpy(in + 3, pkt, len);
	write_file("hdrs", name, in, len + 3);
}

/* IPv4 header (IHL 5 + @opt words) for @l4len bytes of @proto. */
static size_t seed_ipv4(uint8_t *b, unsigned int opt, uint8_t proto,
			size_t l4len)
{
	size_t ihl = 20 + 4 * opt;

	memset(b, 0, ihl);
	b[0] = (uint8_t)(0x40 | ihl / 4);
	be16_at(b + 2, (unsigned int)(ihl + l4len));
	b[8] = 64;
	b[9] = proto;
	memcpy(b + 12, "\xc0\x00\x02\x01\xc6\x33\x64\x02", 8);
	memset(b + 20, 1, 4 * opt);
	return ihl;
}

static size_t seed_ipv6(uint8_t *b, uint8_t nh, size_t plen)
{
	memset(b, 0, 40);
	b[0] = 0x60;
	be16_at(b + 4, (unsigned int)plen);
	b[6] = nh;
	b[7] = 64;
	b[8] = b[24] = 0x20;
	b[9] = b[25] = 0x01;
	b[23] = 1;
	b[39] = 2;
	return 40;
}

/* A SYN (@fl) with MSS 1460, SACK permitted, timestamps and window
 * scale, or with @data bytes and no options when @fl has no SYN. */
static size_t seed_tcp(uint8_t *b, uint8_t fl, size_t data)
{
	static const uint8_t opts[20] = {
		2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
		1, 3, 3, 7,
	};
	size_t olen = fl & 0x02 ? sizeof(opts) : 0;

	memset(b, 0, 20 + olen + data);
	be16_at(b, 40000);
	be16_at(b + 2, 80);
	b[12] = (uint8_t)((20 + olen) / 4 << 4);
	b[13] = fl;
	memcpy(b + 20, opts, olen);
	memset(b + 20 + olen, 'x', data);
	return 20 + olen + data;
}

static size_t seed_udp(uint8_t *b, size_t data)
{
	memset(b, 'u', 8 + data);
	be16_at(b + 4, (unsigned int)(8 + data));
	return 8 + data;
}

/* ICMP echo (@type 8) or ICMPv6 echo (128). */
static size_t seed_icmp(uint8_t *b, uint8_t type, size_t data)
{
	memset(b, 'i', 8 + data);
	b[0] = type;
	b[1] = 0;
	return 8 + data;
}

static void hdrs_ipv4_seeds(void)
{
	uint8_t b[1024];
	size_t n;

	n = seed_tcp(b + 20, 0x02, 0);
	hdrs_seed("ipv4-tcp-syn", 0, b, seed_ipv4(b, 0, 6, n) + n);
	n = seed_tcp(b + 24, 0x18, 40);
	hdrs_seed("ipv4-opts-tcp-data", 0, b, seed_ipv4(b, 1, 6, n) + n);
	n = seed_udp(b + 20, 32);
	hdrs_seed("ipv4-udp", 0, b, seed_ipv4(b, 0, 17, n) + n);
	n = seed_icmp(b + 28, 8, 16);
	hdrs_seed("ipv4-icmp", 0, b, seed_ipv4(b, 2, 1, n) + n);
	n = seed_udp(b + 20, 32);
	seed_ipv4(b, 0, 17, n);
	be16_at(b + 6, 0x0020);		/* a later fragment */
	hdrs_seed("ipv4-frag-later", 0, b, 20 + n);
	be16_at(b + 6, 0x2000);		/* the first one */
	hdrs_seed("ipv4-frag-first", 0, b, 20 + n);
	/* Ethernet, 802.1ad and 802.1Q tags */
	memset(b, 0x02, 12);
	be16_at(b + 12, 0x88a8);
	be16_at(b + 14, 100);
	be16_at(b + 16, 0x8100);
	be16_at(b + 18, 200);
	be16_at(b + 20, 0x0800);
	n = seed_tcp(b + 42, 0x12, 0);
	hdrs_seed("l2-qinq-ipv4-tcp-synack", 1, b,
		  22 + seed_ipv4(b + 22, 0, 6, n) + n);
}

/* IPv6: hop-by-hop, routing type 0, destination options, AH, UDP; a
 * segment routing header and a SYN/ACK; a fragment; ICMPv6 on Ethernet
 * with a tag. */
static void hdrs_ipv6_seeds(void)
{
	uint8_t b[1024], *x = b + 40;
	size_t n;

	memset(x, 0, 8 + 40 + 8 + 16);
	x[0] = 43;			/* hop-by-hop, next: routing */
	x[8] = 60;			/* routing type 0, 2 addresses */
	x[9] = 4;
	x[11] = 1;
	x[24] = x[40] = 0x20;
	x[48] = 51;			/* destination options, next: AH */
	x[56] = 17;			/* AH (16 bytes), next: UDP */
	x[57] = 2;
	n = seed_udp(x + 72, 20);
	hdrs_seed("ipv6-chain-udp", 0, b, seed_ipv6(b, 0, 72 + n) + 72 + n);

	memset(x, 0, 40);
	x[0] = 6;			/* segment routing, next: TCP */
	x[1] = 4;
	x[2] = 4;
	x[3] = 1;
	x[4] = 1;
	x[8] = 0x20;
	n = seed_tcp(x + 40, 0x12, 0);
	hdrs_seed("ipv6-srh-tcp-synack", 0, b,
		  seed_ipv6(b, 43, 40 + n) + 40 + n);

	memset(x, 0, 8);
	x[0] = 6;			/* a fragment, offset 8, more */
	be16_at(x + 2, 8 << 3 | 1);
	n = seed_tcp(x + 8, 0x10, 30);
	hdrs_seed("ipv6-frag-tcp", 0, b, seed_ipv6(b, 44, 8 + n) + 8 + n);

	memset(b, 0x02, 12);
	be16_at(b + 12, 0x8100);
	be16_at(b + 14, 0x2005);
	be16_at(b + 16, 0x86dd);
	n = seed_icmp(b + 58, 128, 24);
	hdrs_seed("l2-vlan-ipv6-icmpv6", 1, b,
		  18 + seed_ipv6(b + 18, 58, n) + n);
}

static void mkdirs(void)
{
	char path[4096];
	const char *subs[] = { "", "/parse", "/datagram", "/hdrs" };
	size_t i;

	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s%s", outdir, subs[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			perror(path);
			exit(1);
		}
	}
}

START_TEST(generate)
{
	mkdirs();
	valid_messages();
	malformed_messages();
	datagram_seeds();
	hdrs_ipv4_seeds();
	hdrs_ipv6_seeds();
}
END_TEST

int main(int argc, char **argv)
{
	Suite *suite;
	TCase *tc;
	SRunner *sr;
	int failed;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	suite = suite_create("gen-corpus");
	tc = tcase_create("seeds");
	tcase_add_test(tc, generate);
	suite_add_tcase(suite, tc);
	sr = srunner_create(suite);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return 1;
	printf("gen-corpus: %u seeds in %s\n", nfiles, outdir);
	return 0;
}
