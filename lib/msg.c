// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Builders of the messages we send to nfnetlink_queue. Pure functions: they
 * write into a caller's buffer large enough for the message and return its
 * length, so tests can check every byte.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "msg.h"
#include "pkt.h"

/* mnl_attr_put() leaves the padding as it was: zero it, so what we send
 * never carries stale bytes. */
static void put_attr(struct nlmsghdr *nlh, uint16_t type, size_t len,
		     const void *data)
{
	memset(mnl_nlmsg_get_payload_tail(nlh), 0,
	       MNL_ALIGN(MNL_ATTR_HDRLEN + len));
	mnl_attr_put(nlh, type, len, data);
}

static void put_u32(struct nlmsghdr *nlh, uint16_t type, uint32_t v)
{
	put_attr(nlh, type, sizeof(v), &v);
}

static struct nlmsghdr *put_header(void *buf, uint8_t type, uint16_t flags,
				   uint32_t seq, uint16_t num)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	memset(buf, 0, MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(num);
	return nlh;
}

size_t nfqb_msg_config_cmd(void *buf, uint32_t seq, uint16_t num, uint8_t cmd,
			   uint16_t pf)
{
	struct nlmsghdr *nlh;
	struct nfqnl_msg_config_cmd c = {
		.command = cmd,
		.pf = htons(pf),
	};

	nlh = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, seq, num);
	put_attr(nlh, NFQA_CFG_CMD, sizeof(c), &c);
	return nlh->nlmsg_len;
}

static void put_params(struct nlmsghdr *nlh, uint8_t mode, uint32_t range)
{
	struct nfqnl_msg_config_params p;

	memset(&p, 0, sizeof(p));
	p.copy_range = htonl(range);
	p.copy_mode = mode;
	put_attr(nlh, NFQA_CFG_PARAMS, sizeof(p), &p);
}

size_t nfqb_msg_config_params(void *buf, uint32_t seq, uint16_t num,
			      uint8_t mode, uint32_t range)
{
	struct nlmsghdr *nlh;

	nlh = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, seq, num);
	put_params(nlh, mode, range);
	return nlh->nlmsg_len;
}

/*
 * BIND with the copy mode in the same message: the kernel creates a queue
 * in copy mode NONE, and refuses to queue a packet to it (the packet is
 * dropped, and no counter of the queue counts it) until the mode is set.
 * One message leaves no round trip between the two.
 */
size_t nfqb_msg_config_bind(void *buf, uint32_t seq, uint16_t num,
			    uint8_t mode, uint32_t range)
{
	struct nlmsghdr *nlh;
	struct nfqnl_msg_config_cmd c = { .command = NFQNL_CFG_CMD_BIND };

	nlh = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, seq, num);
	put_attr(nlh, NFQA_CFG_CMD, sizeof(c), &c);
	put_params(nlh, mode, range);
	return nlh->nlmsg_len;
}

size_t nfqb_msg_config_maxlen(void *buf, uint32_t seq, uint16_t num,
			      uint32_t maxlen)
{
	struct nlmsghdr *nlh;

	nlh = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, seq, num);
	put_u32(nlh, NFQA_CFG_QUEUE_MAXLEN, htonl(maxlen));
	return nlh->nlmsg_len;
}

static size_t config_flags(void *buf, uint16_t nlflags, uint32_t seq,
			   uint16_t num, uint32_t flags, uint32_t mask)
{
	struct nlmsghdr *nlh;

	nlh = put_header(buf, NFQNL_MSG_CONFIG, nlflags, seq, num);
	put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
	return nlh->nlmsg_len;
}

size_t nfqb_msg_config_flags(void *buf, uint32_t seq, uint16_t num,
			     uint32_t flags, uint32_t mask)
{
	return config_flags(buf, NLM_F_ACK, seq, num, flags, mask);
}

size_t nfqb_msg_config_flags_quiet(void *buf, uint32_t seq, uint16_t num,
				   uint32_t flags, uint32_t mask)
{
	_Static_assert(NFQB_MSG_CONFIG_FLAGS_SIZE ==
		       MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)) +
		       2 * (MNL_ATTR_HDRLEN + sizeof(uint32_t)),
		       "NFQB_MSG_CONFIG_FLAGS_SIZE");
	return config_flags(buf, 0, seq, num, flags, mask);
}

/* The NFQA_CT nest of a verdict: the conntrack entry's mark and labels,
 * each with its mask. */
#define CT_NEST_SIZE	(MNL_ATTR_HDRLEN + \
			 2 * (MNL_ATTR_HDRLEN + sizeof(uint32_t)) + \
			 2 * (MNL_ATTR_HDRLEN + 16))

size_t nfqb_msg_verdict_size(uint32_t payload_len)
{
	/* header, verdict hdr, mark, priority, payload, conntrack: each
	 * attribute at most 4 bytes of header and 3 of padding */
	return MNL_ALIGN(sizeof(struct nlmsghdr)) +
	       MNL_ALIGN(sizeof(struct nfgenmsg)) +
	       MNL_ATTR_HDRLEN + sizeof(struct nfqnl_msg_verdict_hdr) +
	       2 * (MNL_ATTR_HDRLEN + sizeof(uint32_t)) +
	       MNL_ATTR_HDRLEN + MNL_ALIGN(payload_len) + CT_NEST_SIZE;
}

static void put_ct(struct nlmsghdr *nlh, const struct nfqb_decision *d)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, NFQA_CT);

	if (d->flags & NFQB_V_CT_MARK) {
		put_u32(nlh, CTA_MARK, htonl(d->ct_mark));
		put_u32(nlh, CTA_MARK_MASK, htonl(d->ct_mark_mask));
	}
	if (d->flags & NFQB_V_CT_LABELS) {
		put_attr(nlh, CTA_LABELS, sizeof(d->ct_labels), d->ct_labels);
		put_attr(nlh, CTA_LABELS_MASK, sizeof(d->ct_labels_mask),
			 d->ct_labels_mask);
	}
	mnl_attr_nest_end(nlh, nest);
}

size_t nfqb_msg_verdict(void *buf, uint32_t seq, uint16_t num, uint32_t id,
			const struct nfqb_decision *d)
{
	struct nlmsghdr *nlh;
	struct nfqnl_msg_verdict_hdr vh = {
		.verdict = htonl(d->verdict),
		.id = htonl(id),
	};

	nlh = put_header(buf, NFQNL_MSG_VERDICT, 0, seq, num);
	put_attr(nlh, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (d->flags & NFQB_V_MARK)
		put_u32(nlh, NFQA_MARK, htonl(d->mark));
	if (d->flags & NFQB_V_PRIORITY)
		put_u32(nlh, NFQA_PRIORITY, htonl(d->priority));
	if (d->flags & NFQB_V_PAYLOAD)
		put_attr(nlh, NFQA_PAYLOAD, d->payload_len, d->payload);
	if (d->flags & (NFQB_V_CT_MARK | NFQB_V_CT_LABELS))
		put_ct(nlh, d);
	return nlh->nlmsg_len;
}

size_t nfqb_msg_verdict_batch(void *buf, uint32_t seq, uint16_t num,
			      uint32_t max_id, uint32_t verdict,
			      const uint32_t *mark)
{
	struct nlmsghdr *nlh;
	struct nfqnl_msg_verdict_hdr vh = {
		.verdict = htonl(verdict),
		.id = htonl(max_id),
	};

	nlh = put_header(buf, NFQNL_MSG_VERDICT_BATCH, 0, seq, num);
	put_attr(nlh, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (mark)
		put_u32(nlh, NFQA_MARK, htonl(*mark));
	return nlh->nlmsg_len;
}
