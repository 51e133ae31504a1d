/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Builders of the messages we send (msg.c): pure, each writes into @buf
 * and returns the length. No state.
 */
#ifndef NFQB_MSG_H
#define NFQB_MSG_H

#include "internal.h"

struct nfqb_decision;

size_t nfqb_msg_config_cmd(void *buf, uint32_t seq, uint16_t num, uint8_t cmd,
			   uint16_t pf);
size_t nfqb_msg_config_params(void *buf, uint32_t seq, uint16_t num,
			      uint8_t mode, uint32_t range);
/* BIND and the copy mode in one message (see msg.c). */
size_t nfqb_msg_config_bind(void *buf, uint32_t seq, uint16_t num,
			    uint8_t mode, uint32_t range);
size_t nfqb_msg_config_maxlen(void *buf, uint32_t seq, uint16_t num,
			      uint32_t maxlen);
size_t nfqb_msg_config_flags(void *buf, uint32_t seq, uint16_t num,
			     uint32_t flags, uint32_t mask);
/* The same without NLM_F_ACK: sent from the data path (tx.c), nothing
 * waits for an answer; the kernel answers only an error. */
size_t nfqb_msg_config_flags_quiet(void *buf, uint32_t seq, uint16_t num,
				   uint32_t flags, uint32_t mask);
/* Its size. */
#define NFQB_MSG_CONFIG_FLAGS_SIZE	(16 + 4 + 2 * 8)
/* Upper bound of the size of a verdict message with @payload_len bytes. */
size_t nfqb_msg_verdict_size(uint32_t payload_len);
size_t nfqb_msg_verdict(void *buf, uint32_t seq, uint16_t num, uint32_t id,
			const struct nfqb_decision *d);
size_t nfqb_msg_verdict_batch(void *buf, uint32_t seq, uint16_t num,
			      uint32_t max_id, uint32_t verdict,
			      const uint32_t *mark);

#endif /* NFQB_MSG_H */
