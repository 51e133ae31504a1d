/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing (parse.c): NFQNL_MSG_PACKET messages into the parsed view of a
 * packet descriptor (the fields pkt.h names as parse.c's), and the public
 * getters of that view.
 */
#ifndef NFQB_PARSE_H
#define NFQB_PARSE_H

#include "pkt.h"

enum nfqb_parse_result {
	NFQB_PARSE_OK = 0,
	NFQB_PARSE_MALFORMED = -1,
	NFQB_PARSE_NOT_PACKET = -2,
};

/* Parse one NFQNL_MSG_PACKET message of exactly nlh->nlmsg_len bytes that
 * the caller checked fits its buffer. Fills @p's attribute table. */
int nfqb_parse_packet(struct nfqb_packet *p, const struct nlmsghdr *nlh);
/* The packet id of a message whose first attribute is an intact
 * NFQA_PACKET_HDR within @len bytes; false if it cannot be read. */
bool nfqb_parse_id(const void *msg, size_t len, uint32_t *id,
		   uint16_t *res_id);

/* The flow of a packet, for the adaptive linger (pace.c): NFQB_FLOW_ACKED
 * if its transport is clocked by acknowledgements (TCP, SCTP, DCCP: its
 * sender always waits on us), else a tag of its protocol, addresses and
 * ports (never 0 or NFQB_FLOW_ACKED); 0 if its payload does not start with
 * an IP header we can read (copy range too short, another family). */
#define NFQB_FLOW_ACKED		1u
uint32_t nfqb_parse_flow(const struct nfqb_packet *p);

#endif /* NFQB_PARSE_H */
