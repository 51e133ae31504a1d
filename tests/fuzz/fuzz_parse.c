// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: nfqb_parse_packet() (lib/parse.c) on one message.
 *
 * The input is one netlink message. As the receive path does, only a
 * message whose nlmsg_len fits the input (and covers a netlink header) is
 * parsed; it is copied into a malloc'ed buffer of exactly nlmsg_len bytes,
 * so AddressSanitizer sees any read past the message. On success every
 * public getter is called on the packet (tests/fuzz/getters.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "parse.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Make a zeroed packet descriptor, parse @nlh (@len bytes) into it, and on
 * success call the getters. The one place that knows how a descriptor is
 * made: adapt it when the descriptor or handle scheme changes.
 */
static void parse_and_get(const struct nlmsghdr *nlh, size_t len)
{
	struct nfqb_packet *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	/* a live descriptor of generation 0: its handle is its address */
	atomic_store(&p->sg, NFQB_SG(0, NFQB_PS_PENDING));
	if (nfqb_parse_packet(p, nlh) == NFQB_PARSE_OK)
		fz_call_getters(p, len);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nlmsghdr hdr;
	void *msg;

	if (size < sizeof(hdr))
		return 0;
	memcpy(&hdr, data, sizeof(hdr));
	/* the caller's contract: a whole header, and the message fits */
	if (hdr.nlmsg_len < sizeof(hdr) || hdr.nlmsg_len > size)
		return 0;
	msg = malloc(hdr.nlmsg_len);
	if (!msg)
		return 0;
	memcpy(msg, data, hdr.nlmsg_len);
	parse_and_get(msg, hdr.nlmsg_len);
	free(msg);
	return 0;
}
