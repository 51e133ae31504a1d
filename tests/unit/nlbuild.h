/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: craft netlink messages by hand, byte by byte, independently of
 * libmnl and of the library's own builders.
 */
#ifndef NFQBT_NLBUILD_H
#define NFQBT_NLBUILD_H

#include <stddef.h>
#include <stdint.h>

#define NLB_MAX		8192
#define NLB_MAXNEST	4

struct nlb {
	uint8_t buf[NLB_MAX];
	size_t len;
	size_t nest[NLB_MAXNEST];	/* offsets of open nested attributes */
	unsigned int depth;
};

/* nlmsghdr (type, flags, seq 0, pid 0) + nfgenmsg(family, v0, res_id). */
void nlb_init(struct nlb *b, uint16_t type, uint8_t family, uint16_t res_id);
/* An NFQNL_MSG_PACKET message of queue @res_id. */
void nlb_init_packet(struct nlb *b, uint8_t family, uint16_t res_id);
/* Append raw bytes (no padding, no header). */
void nlb_raw(struct nlb *b, const void *data, size_t len);
/* Append one attribute: header with nla_len = 4 + @len, payload, zero pad. */
void nlb_attr(struct nlb *b, uint16_t type, const void *data, size_t len);
void nlb_attr_be32(struct nlb *b, uint16_t type, uint32_t v);
void nlb_attr_be16(struct nlb *b, uint16_t type, uint16_t v);
/* NFQA_PACKET_HDR: id, hw_protocol (host order in), hook. */
void nlb_pkt_hdr(struct nlb *b, uint32_t id, uint16_t hw_proto, uint8_t hook);
/* nlb_init_packet() of an IPv4 packet (family 2) of queue @res_id and its
 * NFQA_PACKET_HDR: @id, hw_protocol 0x0800, hook 1 (INPUT). */
void nlb_init_ipv4(struct nlb *b, uint16_t res_id, uint32_t id);
/* Nested attribute (the NLA_F_NESTED bit is or-ed into @type as given). */
void nlb_nest_begin(struct nlb *b, uint16_t type);
void nlb_nest_end(struct nlb *b);
/* Write the final length into nlmsg_len; returns it. */
size_t nlb_finish(struct nlb *b);
/* A malloc'ed copy of exactly @len bytes of the buffer (ASan catches
 * reads past it). */
void *nlb_dup(const struct nlb *b, size_t len);

/* A complete packet message: header of @id, for queue @res_id, family 2
 * hook 1 (IPv4 INPUT), with @plen payload bytes (0: no payload attribute). */
void nlb_simple_packet(struct nlb *b, uint16_t res_id, uint32_t id,
		       size_t plen);

#endif
