// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every public packet getter, called on a parsed packet, for the fuzz
 * targets. Only the public API is used here: it survives changes of the
 * descriptor's internals.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

/* the largest attribute type asked for with nfqb_pkt_attr() (past the
 * known ones, to check the bound) */
#define FZ_ATTR_PROBE_MAX	40

static volatile uint8_t sink;

void fz_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* Read @len bytes at @ptr (ASan checks them), after checking the length. */
static void touch(const char *what, const void *ptr, size_t len, size_t bound)
{
	const uint8_t *b = ptr;
	uint8_t acc = 0;
	size_t i;

	if (!ptr && len)
		fz_fail("%s: NULL with length %zu", what, len);
	if (len > bound)
		fz_fail("%s: length %zu past the %zu bytes parsed", what, len,
			bound);
	for (i = 0; i < len; i++)
		acc ^= b[i];
	sink ^= acc;
}

#define SENTINEL32	0xdeadbeefu

/* A bool getter with one uint32_t output: untouched when absent. */
static void check_u32(const char *what, struct nfqb_packet *p,
		      bool (*get)(const struct nfqb_packet *, uint32_t *))
{
	uint32_t v = SENTINEL32;
	bool has = get(p, &v);

	if (!has && v != SENTINEL32)
		fz_fail("%s: absent but wrote its output", what);
	if (get(p, NULL) != has)
		fz_fail("%s: answers differently without an output", what);
	sink ^= (uint8_t)v;
}

#define U32_GETTER(f)	{ #f, f }

/* The bool getters with one uint32_t output. */
static const struct {
	const char *name;
	bool (*get)(const struct nfqb_packet *, uint32_t *);
} u32_getters[] = {
	U32_GETTER(nfqb_pkt_mark), U32_GETTER(nfqb_pkt_indev),
	U32_GETTER(nfqb_pkt_outdev), U32_GETTER(nfqb_pkt_physindev),
	U32_GETTER(nfqb_pkt_physoutdev), U32_GETTER(nfqb_pkt_skbinfo),
	U32_GETTER(nfqb_pkt_uid), U32_GETTER(nfqb_pkt_gid),
	U32_GETTER(nfqb_pkt_ct_info), U32_GETTER(nfqb_pkt_ct_id),
	U32_GETTER(nfqb_pkt_priority), U32_GETTER(nfqb_pkt_cgroup_classid),
};

static void call_attr_getters(struct nfqb_packet *p, size_t bound)
{
	unsigned int t;

	for (t = 0; t <= FZ_ATTR_PROBE_MAX; t++) {
		uint16_t len = 0xffff;
		const void *a = nfqb_pkt_attr(p, (uint16_t)t, &len);

		if (!a)
			continue;
		touch("nfqb_pkt_attr", a, len, bound);
		if (nfqb_pkt_attr(p, (uint16_t)t, NULL) != a)
			fz_fail("nfqb_pkt_attr(%u): differs without len", t);
	}
	if (nfqb_pkt_attr(p, 0xffff, NULL))
		fz_fail("nfqb_pkt_attr(0xffff) found something");
}

static void call_buffer_getters(struct nfqb_packet *p, size_t bound)
{
	const uint8_t *addr = NULL;
	const uint8_t *pl;
	const char *ctx = NULL;
	const void *ptr;
	uint16_t alen = 0;
	uint32_t len = 0;

	if (nfqb_pkt_hwaddr(p, &addr, &alen)) {
		if (alen > 8)
			fz_fail("nfqb_pkt_hwaddr: %u bytes of address", alen);
		touch("nfqb_pkt_hwaddr", addr, alen, bound);
	}
	(void)nfqb_pkt_hwaddr(p, NULL, NULL);

	pl = nfqb_pkt_payload(p, &len);
	if (!pl && len)
		fz_fail("nfqb_pkt_payload: NULL with length %u", len);
	touch("nfqb_pkt_payload", pl, len, bound);
	if (nfqb_pkt_payload(p, NULL) != pl)
		fz_fail("nfqb_pkt_payload: differs without len");
	sink ^= (uint8_t)nfqb_pkt_orig_len(p);
	sink ^= nfqb_pkt_truncated(p);

	len = 0;
	if (nfqb_pkt_secctx(p, &ctx, &len))
		touch("nfqb_pkt_secctx", ctx, len, bound);
	(void)nfqb_pkt_secctx(p, NULL, NULL);

	len = 0;
	ptr = nfqb_pkt_ct(p, &len);
	if (ptr)
		touch("nfqb_pkt_ct", ptr, len, bound);
	(void)nfqb_pkt_ct(p, NULL);

	len = 0;
	ptr = nfqb_pkt_l2hdr(p, &len);
	if (ptr)
		touch("nfqb_pkt_l2hdr", ptr, len, bound);
	(void)nfqb_pkt_l2hdr(p, NULL);

	len = nfqb_pkt_network_offset(p);
	sink ^= (uint8_t)len;
}

void fz_call_getters(struct nfqb_packet *p, size_t bound)
{
	uint64_t ns = 7;
	uint16_t proto = 0x1111, tci = 0x1111;
	unsigned int i;
	int cookie;

	sink ^= (uint8_t)nfqb_pkt_id(p);
	sink ^= (uint8_t)nfqb_pkt_queue_num(p);
	sink ^= nfqb_pkt_family(p);
	sink ^= nfqb_pkt_hook(p);
	sink ^= (uint8_t)nfqb_pkt_hook_point(p);
	sink ^= (uint8_t)nfqb_pkt_hw_protocol(p);

	for (i = 0; i < sizeof(u32_getters) / sizeof(u32_getters[0]); i++)
		check_u32(u32_getters[i].name, p, u32_getters[i].get);
	sink ^= nfqb_pkt_is_gso(p);
	sink ^= nfqb_pkt_csum_not_ready(p);
	sink ^= nfqb_pkt_csum_not_verified(p);

	if (!nfqb_pkt_timestamp(p, &ns) && ns != 7)
		fz_fail("nfqb_pkt_timestamp: absent but wrote its output");
	(void)nfqb_pkt_timestamp(p, NULL);
	if (!nfqb_pkt_vlan(p, &proto, &tci) &&
	    (proto != 0x1111 || tci != 0x1111))
		fz_fail("nfqb_pkt_vlan: absent but wrote its output");
	(void)nfqb_pkt_vlan(p, NULL, NULL);

	call_buffer_getters(p, bound);
	call_attr_getters(p, bound);

	nfqb_pkt_set_user(p, &cookie);
	if (nfqb_pkt_user(p) != &cookie)
		fz_fail("nfqb_pkt_user: lost the pointer");
	nfqb_pkt_set_user(p, NULL);
}
