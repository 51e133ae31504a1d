/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnfq-batch packet helpers: the IP and transport headers of a packet,
 * its checksums (computed in full, or updated for a changed field), the
 * TCP MSS option lowered, and a verdict with a changed payload whose
 * checksums are right.
 *
 * Include it explicitly (libnfq-batch.h does not): #include
 * <libnfq-batch/packet.h>.
 *
 * The buffer functions (nfqb_hdrs_parse(), nfqb_csum_*(),
 * nfqb_tcp_mss_clamp()) work on any memory: the payload of a packet, a
 * copy of it, a packet the application builds. They never read or write
 * outside [buf, buf + len), allocate nothing, keep no state and may be
 * called from any thread. Offsets and lengths are byte counts from the
 * start of the buffer; header fields are read in network byte order.
 *
 * Checksums are passed and returned as the value of the 16-bit field in
 * host byte order (as ntohs() reads it; store one with htons()). The
 * checksums are those of RFC 1071: the one's complement of the one's
 * complement sum of the 16-bit words.
 *
 * A packet whose checksum the kernel has not filled in yet (sent by this
 * host through a device that computes checksums, on lo too: see
 * nfqb_pkt_csum_not_ready()) carries a partial sum in its TCP or UDP
 * checksum field. The kernel takes a changed payload (NFQB_V_PAYLOAD) as
 * it is, complete: such a packet needs its checksum computed in full
 * (nfqb_csum_fix(), nfqb_verdict_payload()), never updated.
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
 * Where the headers of a packet are in a buffer, as nfqb_hdrs_parse() and
 * nfqb_pkt_hdrs() find them. Filled in by the library, passed with its
 * size (see "Structs that can grow" in libnfq-batch.h); fields added
 * later come at the end. nfqb_csum_fix() and nfqb_tcp_mss_clamp() read
 * only the fields below, which every caller's struct has.
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

/**
 * nfqb_pkt_hdrs - nfqb_hdrs_parse() on the payload of @p
 * @size: sizeof(*h) as the caller knows it
 *
 * At every hook: the payload starts at the network header, except at
 * netdev egress where it starts at the link-layer header
 * (nfqb_pkt_network_offset(); without NFQA_L2HDR an Ethernet header and
 * its tags are skipped). Offsets are from the start of the payload
 * (nfqb_pkt_payload()). Returns 0, or -1 with errno: EINVAL (NULL @p or
 * @h, a @size below the first version), ENODATA (no payload: copy mode
 * NFQB_COPY_META, or a dead handle), or an error of nfqb_hdrs_parse()
 * (EPROTONOSUPPORT also when the packet's hw_protocol is known and is
 * neither IPv4 nor IPv6: ARP, a VLAN tag in a bridge's payload).
 */
int nfqb_pkt_hdrs(const struct nfqb_packet *p, struct nfqb_hdrs *h,
		  size_t size);

/**
 * nfqb_csum_ipv4_hdr - the checksum of the IPv4 header at @iph
 * @len: the header's length with its options (IHL * 4)
 *
 * Computed over @len bytes as if the checksum field (bytes 10 and 11)
 * were zero: store it there with htons(). Never fails.
 */
uint16_t nfqb_csum_ipv4_hdr(const void *iph, size_t len);

/**
 * nfqb_csum_update16 - the checksum @csum after a 16-bit field of the
 * data it covers changed from @from to @to (RFC 1624, eqn. 3:
 * HC' = ~(~HC + ~m + m'))
 *
 * All three in host byte order. The field must sit at an even offset from
 * the start of the checksummed data (the IP header, the L4 header); for
 * one at an odd offset pass both values byte-swapped. The result equals
 * the checksum computed in full whenever @csum was right (a UDP checksum
 * of 0, "none", stays 0; a result of 0 for UDP is sent as 0xffff). Never
 * fails.
 */
uint16_t nfqb_csum_update16(uint16_t csum, uint16_t from, uint16_t to);

/**
 * nfqb_csum_update32 - as nfqb_csum_update16() for a 32-bit field at an
 * even offset (an IPv4 address, a sequence number), host byte order
 */
uint16_t nfqb_csum_update32(uint16_t csum, uint32_t from, uint32_t to);

/**
 * nfqb_csum_fix - compute the checksums of the packet in @buf in full
 * @h: its headers (nfqb_hdrs_parse() or nfqb_pkt_hdrs() of @buf, or of
 *	the packet @buf was copied from if the headers did not move)
 *
 * Writes the IPv4 header checksum, then the L4 checksum over the L4
 * header and data as the IP length says: TCP and UDP with the
 * pseudo-header (IPv4 or IPv6; the final destination, dst_off), ICMP
 * (IPv4) without, ICMPv6 with. A UDP checksum of 0 over IPv4 (the sender
 * sent none) stays 0; a UDP checksum that computes to 0 is written as
 * 0xffff. A fragment gets only its IPv4 header checksum (the L4 checksum
 * covers the whole datagram), and so does another L4 protocol. Lengths
 * are not changed: a payload that grew or shrank needs its IP (and UDP)
 * length fields set first, then nfqb_hdrs_parse() again.
 * Returns 0, or -1 with errno: EINVAL (NULL @buf or @h, @h outside @len
 * or inconsistent), EBADMSG (the buffer ends before the IP length says,
 * or a UDP length under 8 or past the packet; nothing written),
 * EPROTONOSUPPORT (dst_off 0: a routing header this library cannot
 * read; nothing written).
 */
int nfqb_csum_fix(void *buf, size_t len, const struct nfqb_hdrs *h);

/**
 * nfqb_tcp_mss_clamp - lower the MSS option of a SYN or SYN/ACK in @buf
 * to @mss
 * @h: its headers, as for nfqb_csum_fix()
 *
 * On a TCP packet with SYN set (with or without ACK), each MSS option
 * above @mss is set to @mss, and the TCP checksum is updated for the
 * change (nfqb_csum_update16(); right when it was complete before: see
 * the top of this header). Returns 1 if an option was changed, 0 if
 * there was nothing to do (not TCP, a later fragment, no SYN, no MSS
 * option, one at or below @mss), or -1 with errno: EINVAL (NULL @buf or
 * @h, @h outside @len or inconsistent), EBADMSG (the options are
 * malformed: an option length under 2 or past the header, an MSS
 * option not 4 bytes long; nothing written).
 */
int nfqb_tcp_mss_clamp(void *buf, size_t len, const struct nfqb_hdrs *h,
		       uint16_t mss);

/**
 * nfqb_verdict_payload - decide @p with @buf as its new payload, its
 * checksums computed first
 * @verdict: NFQB_ACCEPT, NFQB_DROP or NFQB_REPEAT
 * @buf: @len bytes laid out as @p's payload (nfqb_pkt_hdrs()); written:
 *	its checksums
 *
 * nfqb_pkt_hdrs()'s parse and nfqb_csum_fix() on @buf, then
 * nfqb_verdict_ex() with NFQB_V_PAYLOAD (@buf is copied before return).
 * Whatever the packet's checksums were before (complete or not ready),
 * they are right after. Returns 0, or -1 with errno: EINVAL (NULL @p or
 * @buf, another @verdict), EMSGSIZE (@len over NFQB_MAX_PAYLOAD), the
 * errors of nfqb_hdrs_parse() and nfqb_csum_fix() on @buf (then @p is
 * still the caller's to decide, e.g. with nfqb_verdict_ex()), or those of
 * nfqb_verdict_ex().
 */
int nfqb_verdict_payload(struct nfqb_packet *p, uint32_t verdict, void *buf,
			 size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFQ_BATCH_PACKET_H */
