/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the libFuzzer targets: calling every public packet getter on a
 * parsed packet, and failing loudly.
 */
#ifndef NFQB_FUZZ_H
#define NFQB_FUZZ_H

#include <stddef.h>

#include <libnfq-batch/libnfq-batch.h>

/* Print "fuzz: <msg>" to stderr and abort(): libFuzzer saves the input. */
__attribute__((noreturn, format(printf, 1, 2)))
void fz_fail(const char *fmt, ...);

/*
 * Call every public nfqb_pkt_* getter on @p, read every byte of every
 * buffer they return, and check what the header promises: an absent
 * attribute leaves the output untouched, no length exceeds @bound (the
 * bytes the packet was parsed from), an address is at most 8 bytes.
 */
void fz_call_getters(struct nfqb_packet *p, size_t bound);

#endif
