/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnfq-batch packet helpers: the IP and transport headers of a packet.
 *
 * Include it explicitly (libnfq-batch.h does not): #include
 * <libnfq-batch/packet.h>.
 *
 * nfqb_hdrs_parse() works on any memory: the payload of a packet, a
 * copy of it, a packet the application builds. It never reads outside
 * [buf, buf + len), allocates nothing, keeps no state and may be called
 * from any thread. Offsets and lengths are byte counts from the
 * start of the buffer; header fields are read in network byte order.
 *
 * Errors as everywhere in libnfq-batch: -1 and errno, nothing printed.
 */
#ifndef LIBNFQ_BATCH_PACKET_H
#define LIBNFQ_BATCH_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include <libnfq-batch/libnfq-batch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of nfqb_hdrs_parse(). */
#define NFQB_HDRS_L2		(1u << 0)	/* the buffer starts at an
						 * Ethernet header */

/* struct nfqb_hdrs.flags */
#define NFQB_HDRS_F_FRAG	(1u << 0)	/* a fragment (first or not) */
#define NFQB_HDRS_F_LATER	(1u << 1)	/* a fragment other than the
						 * first: no L4 header */
#define NFQB_HDRS_F_CUT		(1u << 2)	/* the buffer ends before the
						 * length the IP header says */

/*
 * Where the headers of a packet are in a buffer, as nfqb_hdrs_parse()
 * finds them. Filled in by the library, passed with its
 * size (see "Structs that can grow" in libnfq-batch.h); fields added
 * later come at the end.
 *
 *   buf: [L2][IP header + extension headers][L4 header][payload]
 *         l3_off ------> l4_off ---------> payload_off
 *         <---------- ip_len from l3_off ----------------->
 */
struct nfqb_hdrs {
	uint32_t flags;		/* NFQB_HDRS_F_* */
	uint16_t l3_proto;	/* EtherType, host order: 0x0800 (IPv4) or
				 * 0x86dd (IPv6) */
	uint8_t l4_proto;	/* the protocol after the IP header and its
				 * extension headers (IPPROTO_TCP, ...) */
	uint8_t reserved;	/* 0 */
	uint32_t l3_off;	/* the IP header */
	uint32_t l3_len;	/* IPv4: the header with its options (IHL);
				 * IPv6: 40 + the extension headers (hop-by-
				 * hop, routing, destination options,
				 * fragment, AH) before the L4 header */
	uint32_t ip_len;	/* the packet's length from l3_off as its IP
				 * header says (IPv4 total length, IPv6 40 +
				 * payload length); may exceed the buffer
				 * (NFQB_HDRS_F_CUT) */
	uint32_t l4_off;	/* l3_off + l3_len */
	uint32_t l4_hdr_len;	/* TCP: its data offset * 4; UDP, ICMP
				 * (IPv4), ICMPv6 (IPv6): 8; 0 for a later
				 * fragment or another protocol */
	uint32_t l4_len;	/* from l4_off to the end of the packet as
				 * ip_len says, or of the buffer if sooner */
	uint32_t payload_off;	/* l4_off + l4_hdr_len */
	uint32_t payload_len;	/* l4_len - l4_hdr_len */
	uint32_t dst_off;	/* the final destination address of the
				 * checksums' pseudo-header (IPv6 with a
				 * routing header: its last address while
				 * segments are left); 0: a routing header
				 * this library cannot read */
};

/**
 * nfqb_hdrs_parse - find the IP and L4 headers of the packet in @buf
 * @buf: @len bytes, starting at an IPv4 or IPv6 header (the version
 *	says which), or with NFQB_HDRS_L2 at an Ethernet header, whose
 *	802.1Q and 802.1ad tags are skipped (the EtherType says which)
 * @flags: 0 or NFQB_HDRS_L2
 * @h: filled in
 * @size: sizeof(*h) as the caller knows it
 *
 * Every byte read is within @len. The headers must be whole in @buf and
 * agree with each other; the payload may be cut (NFQB_HDRS_F_CUT: a copy
 * range shorter than the packet). Past the IP length a buffer may go on
 * (Ethernet padding); it is not the packet's. IPv4 options are skipped,
 * not read (a source route does not change dst_off).
 * Returns 0, or -1 with errno: EINVAL (NULL @buf or @h, unknown @flags,
 * @size below the struct's first version), EPROTONOSUPPORT (neither IPv4
 * nor IPv6: the version, or the EtherType after the tags), EBADMSG (the
 * headers are cut or inconsistent: an IPv4 header length under 20 or
 * over the total length, an IPv6 extension header past the packet or a
 * hop-by-hop header not first, a TCP data offset under 5 or past the
 * packet, a UDP, ICMP or ICMPv6 header cut).
 */
int nfqb_hdrs_parse(const void *buf, size_t len, unsigned int flags,
		    struct nfqb_hdrs *h, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFQ_BATCH_PACKET_H */
