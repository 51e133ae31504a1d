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

#endif /* NFQB_PARSE_H */
