// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parsing NFQNL_MSG_PACKET messages into packet views, and the getters of
 * those views. Every attribute length is checked before it is read; an
 * attribute the kernel did not send reads as absent.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "parse.h"

/* Minimum payload length of each attribute; @exact: the kernel always sends
 * exactly that many bytes, anything else is malformed. */
struct attr_rule {
	int16_t min;
	bool exact;
};

static const struct attr_rule rules[NFQB_NFQA_MAX + 1] = {
	[NFQA_PACKET_HDR]	 = { sizeof(struct nfqnl_msg_packet_hdr), true },
	[NFQA_VERDICT_HDR]	 = { sizeof(struct nfqnl_msg_verdict_hdr), false },
	[NFQA_MARK]		 = { 4, true },
	[NFQA_TIMESTAMP]	 = { sizeof(struct nfqnl_msg_packet_timestamp), true },
	[NFQA_IFINDEX_INDEV]	 = { 4, true },
	[NFQA_IFINDEX_OUTDEV]	 = { 4, true },
	[NFQA_IFINDEX_PHYSINDEV] = { 4, true },
	[NFQA_IFINDEX_PHYSOUTDEV] = { 4, true },
	[NFQA_HWADDR]		 = { sizeof(struct nfqnl_msg_packet_hw), true },
	[NFQA_PAYLOAD]		 = { 0, false },
	[NFQA_CT]		 = { 0, false },
	[NFQA_CT_INFO]		 = { 4, true },
	[NFQA_CAP_LEN]		 = { 4, true },
	[NFQA_SKB_INFO]		 = { 4, true },
	[NFQA_EXP]		 = { 0, false },
	[NFQA_UID]		 = { 4, true },
	[NFQA_GID]		 = { 4, true },
	[NFQA_SECCTX]		 = { 0, false },
	[NFQA_VLAN]		 = { 0, false },
	[NFQA_L2HDR]		 = { 0, false },
	[NFQA_PRIORITY]		 = { 4, true },
	[NFQB_NFQA_CGROUP_CLASSID] = { 4, true },
};

/* An attribute's header, read in place (what libmnl's mnl_attr_ok(),
 * mnl_attr_get_type(), mnl_attr_get_payload_len() and
 * mnl_attr_get_payload() do, without a call through the PLT for each
 * attribute of each packet): well formed within @len bytes? Its type, its
 * payload's length, its payload. */
static bool attr_ok(const struct nlattr *a, int len)
{
	return len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       (int)a->nla_len <= len;
}

static uint16_t attr_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

static uint16_t attr_len(const struct nlattr *a)
{
	return (uint16_t)(a->nla_len - NLA_HDRLEN);
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

/*
 * Walk the attributes in [start, start + len): every one must be well formed
 * and they must use up the space exactly (the last one may lack its
 * padding). Calls @cb for each; a negative return stops with that value.
 */
static int walk_attrs(const void *start, size_t len,
		      int (*cb)(const struct nlattr *a, void *data), void *data)
{
	const struct nlattr *a = start;
	int rem = (int)len;

	while (rem > 0) {
		int ret;

		if (!attr_ok(a, rem))
			return -1;
		ret = cb(a, data);
		if (ret < 0)
			return ret;
		if (rem <= (int)MNL_ALIGN(a->nla_len))
			return 0;
		rem -= MNL_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a +
					    MNL_ALIGN(a->nla_len));
	}
	return rem == 0 ? 0 : -1;
}

static int vlan_cb(const struct nlattr *a, void *data)
{
	struct nfqb_packet *p = data;

	switch (attr_type(a)) {
	case NFQA_VLAN_PROTO:
		if (attr_len(a) != sizeof(uint16_t))
			return -1;
		p->vlan_proto = a;
		break;
	case NFQA_VLAN_TCI:
		if (attr_len(a) != sizeof(uint16_t))
			return -1;
		p->vlan_tci = a;
		break;
	}
	return 0;
}

static int nested_ok_cb(const struct nlattr *a, void *data)
{
	(void)a;
	(void)data;
	return 0;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	struct nfqb_packet *p = data;
	uint16_t type = attr_type(a);
	uint16_t plen = attr_len(a);
	const struct attr_rule *r;

	if (type > NFQB_NFQA_MAX || type == NFQA_UNSPEC)
		return 0;	/* newer kernel: ignore what we do not know */
	r = &rules[type];
	if (plen < r->min || (r->exact && plen != r->min))
		return -1;
	switch (type) {
	case NFQA_HWADDR: {
		const struct nfqnl_msg_packet_hw *hw = attr_data(a);

		if (ntohs(hw->hw_addrlen) > sizeof(hw->hw_addr))
			return -1;
		break;
	}
	case NFQA_VLAN:
		if (walk_attrs(attr_data(a), plen, vlan_cb, p) < 0)
			return -1;
		break;
	case NFQA_CT:
	case NFQA_EXP:
		if (walk_attrs(attr_data(a), plen, nested_ok_cb,
			       NULL) < 0)
			return -1;
		break;
	}
	p->tb[type] = a;
	return 0;
}

int nfqb_parse_packet(struct nfqb_packet *p, const struct nlmsghdr *nlh)
{
	const struct nfgenmsg *nfg;
	const struct nfqnl_msg_packet_hdr *ph;
	size_t hdr = MNL_ALIGN(sizeof(struct nfgenmsg));

	memset(p->tb, 0, sizeof(p->tb));
	p->vlan_proto = NULL;
	p->vlan_tci = NULL;
	if (nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
		return NFQB_PARSE_NOT_PACKET;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + hdr)
		return NFQB_PARSE_MALFORMED;
	nfg = (const struct nfgenmsg *)((const char *)nlh + MNL_NLMSG_HDRLEN);
	if (walk_attrs((const char *)nfg + hdr,
		       nlh->nlmsg_len - MNL_NLMSG_HDRLEN - hdr, attr_cb, p) < 0)
		return NFQB_PARSE_MALFORMED;
	if (!p->tb[NFQA_PACKET_HDR])
		return NFQB_PARSE_MALFORMED;
	ph = attr_data(p->tb[NFQA_PACKET_HDR]);
	p->id = ntohl(ph->packet_id);
	p->hw_protocol = ntohs(ph->hw_protocol);
	p->hook = ph->hook;
	p->family = nfg->nfgen_family;
	p->res_id = ntohs(nfg->res_id);
	return NFQB_PARSE_OK;
}

bool nfqb_parse_id(const void *msg, size_t len, uint32_t *id,
		   uint16_t *res_id)
{
	const struct nlmsghdr *nlh = msg;
	size_t off = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg));
	const struct nfqnl_msg_packet_hdr *ph;
	const struct nfgenmsg *nfg;
	size_t avail;

	if (len < sizeof(*nlh) ||
	    nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
		return false;
	avail = nlh->nlmsg_len < len ? nlh->nlmsg_len : len;
	/* the attributes as far as they are well formed: the kernel puts
	 * the packet header first, exactly its size; take the first such
	 * one wherever it is */
	while (off + MNL_ATTR_HDRLEN <= avail) {
		const struct nlattr *a = (const struct nlattr *)
					 ((const char *)msg + off);

		if (a->nla_len < MNL_ATTR_HDRLEN || a->nla_len > avail - off)
			return false;
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
		    a->nla_len == MNL_ATTR_HDRLEN + sizeof(*ph)) {
			nfg = (const struct nfgenmsg *)
			      ((const char *)msg + MNL_NLMSG_HDRLEN);
			ph = (const struct nfqnl_msg_packet_hdr *)
			     ((const char *)a + MNL_ATTR_HDRLEN);
			*id = ntohl(ph->packet_id);
			*res_id = ntohs(nfg->res_id);
			return true;
		}
		off += MNL_ALIGN(a->nla_len);
	}
	return false;
}

/* --- the flow of a packet (for the linger, pace.c) ---------------------- */

/* FNV-1a over 32-bit words: @n bytes, a multiple of 4. */
static uint32_t mix(uint32_t h, const uint8_t *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i += 4) {
		uint32_t w;

		memcpy(&w, b + i, sizeof(w));
		h = (h ^ w) * 16777619u;
	}
	return h;
}

static bool has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 136;
}

/* Transports clocked by acknowledgements: their sender always waits on
 * us (TCP, DCCP, SCTP). */
static bool acked(uint8_t proto)
{
	return proto == 6 || proto == 33 || proto == 132;
}

/* The flow of a payload that starts with an IP header. */
static uint32_t flow_of(const uint8_t *b, uint32_t len)
{
	uint32_t h = 2166136261u;
	unsigned int hl;

	if (len < 20)
		return 0;
	if (b[0] >> 4 == 4) {
		if (acked(b[9]))
			return NFQB_FLOW_ACKED;
		hl = (b[0] & 15) * 4u;
		h = (h ^ b[9]) * 16777619u;	/* protocol */
		h = mix(h, b + 12, 8);		/* addresses */
		/* first fragment only: later ones have no ports */
		if (has_ports(b[9]) && hl >= 20 && len >= hl + 4 &&
		    !(((b[6] & 0x1f) << 8) | b[7]))
			h = mix(h, b + hl, 4);
	} else if (b[0] >> 4 == 6 && len >= 40) {
		if (acked(b[6]))	/* without extension headers */
			return NFQB_FLOW_ACKED;
		h = (h ^ b[6]) * 16777619u;	/* next header */
		h = mix(h, b + 8, 32);
		if (has_ports(b[6]) && len >= 44)
			h = mix(h, b + 40, 4);
	} else {
		return 0;
	}
	return h | 2;	/* neither 0 nor NFQB_FLOW_ACKED */
}

uint32_t nfqb_parse_flow(const struct nfqb_packet *p)
{
	const struct nlattr *a = p->tb[NFQA_PAYLOAD];

	if (!a)
		return 0;
	return flow_of(attr_data(a), attr_len(a));
}

/* --- the getters ---------------------------------------------------------- */

static bool get_u32(const struct nfqb_packet *p, int type, uint32_t *out)
{
	uint32_t v;

	if (!p->tb[type])
		return false;
	memcpy(&v, attr_data(p->tb[type]), sizeof(v));
	if (out)
		*out = ntohl(v);
	return true;
}

NFQB_EXPORT uint32_t nfqb_pkt_id(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return 0;
	return p->id;
}

NFQB_EXPORT uint16_t nfqb_pkt_queue_num(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return 0;
	return p->res_id;
}

NFQB_EXPORT uint8_t nfqb_pkt_family(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return 0;
	return p->family;
}

NFQB_EXPORT uint8_t nfqb_pkt_hook(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return 0;
	return p->hook;
}

NFQB_EXPORT enum nfqb_hook_point nfqb_pkt_hook_point(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return NFQB_HOOK_UNKNOWN;
	static const enum nfqb_hook_point inet[] = {
		NFQB_HOOK_PREROUTING, NFQB_HOOK_INPUT, NFQB_HOOK_FORWARD,
		NFQB_HOOK_OUTPUT, NFQB_HOOK_POSTROUTING,
	};
	static const enum nfqb_hook_point arp[] = {
		NFQB_HOOK_ARP_IN, NFQB_HOOK_ARP_OUT, NFQB_HOOK_ARP_FORWARD,
	};

	switch (p->family) {
	case NFQB_FAMILY_INET:
	case NFQB_FAMILY_IPV4:
	case NFQB_FAMILY_IPV6:
	case NFQB_FAMILY_BRIDGE:
		if (p->hook < sizeof(inet) / sizeof(inet[0]))
			return inet[p->hook];
		if (p->family == NFQB_FAMILY_INET && p->hook == 5)
			return NFQB_HOOK_INGRESS;
		break;
	case NFQB_FAMILY_ARP:
		if (p->hook < sizeof(arp) / sizeof(arp[0]))
			return arp[p->hook];
		break;
	case NFQB_FAMILY_NETDEV:
		if (p->hook == 0)
			return NFQB_HOOK_INGRESS;
		if (p->hook == 1)
			return NFQB_HOOK_EGRESS;
		break;
	}
	return NFQB_HOOK_UNKNOWN;
}

NFQB_EXPORT uint16_t nfqb_pkt_hw_protocol(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return 0;
	return p->hw_protocol;
}

NFQB_EXPORT bool nfqb_pkt_mark(const struct nfqb_packet *h, uint32_t *mark)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_MARK, mark);
}

NFQB_EXPORT bool nfqb_pkt_timestamp(const struct nfqb_packet *h,
				    uint64_t *ns)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	struct nfqnl_msg_packet_timestamp ts;

	if (!p)
		return false;

	if (!p->tb[NFQA_TIMESTAMP])
		return false;
	memcpy(&ts, attr_data(p->tb[NFQA_TIMESTAMP]), sizeof(ts));
	/* unsigned: a value past 2554 wraps, it never overflows */
	if (ns)
		*ns = be64toh(ts.sec) * 1000000000ull +
		      be64toh(ts.usec) * 1000ull;
	return true;
}

NFQB_EXPORT bool nfqb_pkt_indev(const struct nfqb_packet *h, uint32_t *ifindex)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_IFINDEX_INDEV, ifindex);
}

NFQB_EXPORT bool nfqb_pkt_outdev(const struct nfqb_packet *h, uint32_t *ifindex)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_IFINDEX_OUTDEV, ifindex);
}

NFQB_EXPORT bool nfqb_pkt_physindev(const struct nfqb_packet *h,
				    uint32_t *ifindex)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_IFINDEX_PHYSINDEV, ifindex);
}

NFQB_EXPORT bool nfqb_pkt_physoutdev(const struct nfqb_packet *h,
				     uint32_t *ifindex)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_IFINDEX_PHYSOUTDEV, ifindex);
}

NFQB_EXPORT bool nfqb_pkt_hwaddr(const struct nfqb_packet *h,
				 const uint8_t **addr, uint16_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	const struct nfqnl_msg_packet_hw *hw;

	if (!p)
		return false;

	if (!p->tb[NFQA_HWADDR])
		return false;
	hw = attr_data(p->tb[NFQA_HWADDR]);
	if (addr)
		*addr = hw->hw_addr;
	if (len)
		*len = ntohs(hw->hw_addrlen);
	return true;
}

NFQB_EXPORT const uint8_t *nfqb_pkt_payload(const struct nfqb_packet *h,
					    uint32_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return NULL;
	if (!p->tb[NFQA_PAYLOAD]) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = attr_len(p->tb[NFQA_PAYLOAD]);
	return attr_data(p->tb[NFQA_PAYLOAD]);
}

NFQB_EXPORT uint32_t nfqb_pkt_orig_len(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	uint32_t len = 0;

	if (!p)
		return 0;

	if (get_u32(p, NFQA_CAP_LEN, &len))
		return len;
	nfqb_pkt_payload(h, &len);
	return len;
}

NFQB_EXPORT bool nfqb_pkt_truncated(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	uint32_t cap, have;

	if (!p)
		return false;

	if (!get_u32(p, NFQA_CAP_LEN, &cap))
		return false;
	nfqb_pkt_payload(h, &have);
	return have < cap;
}

NFQB_EXPORT bool nfqb_pkt_skbinfo(const struct nfqb_packet *h, uint32_t *info)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_SKB_INFO, info);
}

static bool skbinfo_has(const struct nfqb_packet *p, uint32_t bit)
{
	uint32_t info = 0;

	return get_u32(p, NFQA_SKB_INFO, &info) && (info & bit);
}

NFQB_EXPORT bool nfqb_pkt_is_gso(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return skbinfo_has(p, NFQA_SKB_GSO);
}

NFQB_EXPORT bool nfqb_pkt_csum_not_ready(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return skbinfo_has(p, NFQA_SKB_CSUMNOTREADY);
}

NFQB_EXPORT bool nfqb_pkt_csum_not_verified(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return skbinfo_has(p, NFQA_SKB_CSUM_NOTVERIFIED);
}

NFQB_EXPORT bool nfqb_pkt_uid(const struct nfqb_packet *h, uint32_t *uid)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_UID, uid);
}

NFQB_EXPORT bool nfqb_pkt_gid(const struct nfqb_packet *h, uint32_t *gid)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_GID, gid);
}

NFQB_EXPORT bool nfqb_pkt_secctx(const struct nfqb_packet *h, const char **ctx,
				 uint32_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	if (!p->tb[NFQA_SECCTX])
		return false;
	if (ctx)
		*ctx = attr_data(p->tb[NFQA_SECCTX]);
	if (len)
		*len = attr_len(p->tb[NFQA_SECCTX]);
	return true;
}

NFQB_EXPORT bool nfqb_pkt_ct_info(const struct nfqb_packet *h, uint32_t *ctinfo)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_CT_INFO, ctinfo);
}

NFQB_EXPORT const void *nfqb_pkt_ct(const struct nfqb_packet *h, uint32_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return NULL;
	if (!p->tb[NFQA_CT])
		return NULL;
	if (len)
		*len = attr_len(p->tb[NFQA_CT]);
	return attr_data(p->tb[NFQA_CT]);
}

struct ct_id_ctx {
	bool found;
	uint32_t id;
};

static int ct_id_cb(const struct nlattr *a, void *data)
{
	struct ct_id_ctx *c = data;
	uint32_t v;

	if ((attr_type(a)) != NFQB_CTA_ID)
		return 0;
	if (attr_len(a) != sizeof(v))
		return -1;
	memcpy(&v, attr_data(a), sizeof(v));
	c->id = ntohl(v);
	c->found = true;
	return 0;
}

NFQB_EXPORT bool nfqb_pkt_ct_id(const struct nfqb_packet *h, uint32_t *id)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	struct ct_id_ctx c = { 0 };
	const struct nlattr *a;

	if (!p)
		return false;
	a = p->tb[NFQA_CT];
	if (!a)
		return false;
	if (walk_attrs(attr_data(a), attr_len(a),
		       ct_id_cb, &c) < 0 || !c.found)
		return false;
	if (id)
		*id = c.id;
	return true;
}

NFQB_EXPORT bool nfqb_pkt_vlan(const struct nfqb_packet *h, uint16_t *proto,
			       uint16_t *tci)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	uint16_t v;

	if (!p)
		return false;

	if (!p->vlan_proto || !p->vlan_tci)
		return false;
	if (proto) {
		memcpy(&v, attr_data(p->vlan_proto), sizeof(v));
		*proto = ntohs(v);
	}
	if (tci) {
		memcpy(&v, attr_data(p->vlan_tci), sizeof(v));
		*tci = ntohs(v);
	}
	return true;
}

NFQB_EXPORT const void *nfqb_pkt_l2hdr(const struct nfqb_packet *h,
				       uint32_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return NULL;
	if (!p->tb[NFQA_L2HDR])
		return NULL;
	if (len)
		*len = attr_len(p->tb[NFQA_L2HDR]);
	return attr_data(p->tb[NFQA_L2HDR]);
}

NFQB_EXPORT bool nfqb_pkt_priority(const struct nfqb_packet *h, uint32_t *prio)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQA_PRIORITY, prio);
}

NFQB_EXPORT bool nfqb_pkt_cgroup_classid(const struct nfqb_packet *h,
					 uint32_t *classid)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return false;
	return get_u32(p, NFQB_NFQA_CGROUP_CLASSID, classid);
}

NFQB_EXPORT const void *nfqb_pkt_attr(const struct nfqb_packet *h,
				      uint16_t type, uint16_t *len)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);

	if (!p)
		return NULL;
	if (type > NFQB_NFQA_MAX || !p->tb[type])
		return NULL;
	if (len)
		*len = attr_len(p->tb[type]);
	return attr_data(p->tb[type]);
}

NFQB_EXPORT uint32_t nfqb_pkt_network_offset(const struct nfqb_packet *h)
{
	const struct nfqb_packet *p = nfqb_pkt_from_handle(h);
	uint32_t len = 14;

	if (!p)
		return 0;

	if (nfqb_pkt_hook_point(h) != NFQB_HOOK_EGRESS)
		return 0;
	if (p->tb[NFQA_L2HDR])
		len = attr_len(p->tb[NFQA_L2HDR]);
	return len;
}
