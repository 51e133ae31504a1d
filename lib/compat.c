// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interfaces of libnfq-batch 0.1.0 that changed since, kept under
 * their old symbol versions: a program linked against 0.1.0 goes on
 * working with this library (same soname), and a program built now gets
 * the new ones. Each takes the 0.1.0 struct as it was and calls the
 * current entry point with the size of that struct's fields (not its tail
 * padding, which a later field may use).
 *
 * Only the shared library has these (lib/local.mk): the internal library
 * that tests link statically has no symbol versions.
 */
#include <stddef.h>
#include <sys/time.h>

#include <libnfq-batch/pool.h>

#include "internal.h"

#define NFQB_COMPAT(fn, name, node) \
	__asm__(".symver " #fn "," #name "@" #node)

/* The 0.1.0 structs: the current ones begin with exactly these fields. */
struct nfqb_verdict_0_1 {
	uint32_t verdict;
	uint32_t flags;
	uint32_t mark;
	uint32_t priority;
	uint16_t queue_num;
	const void *payload;
	uint32_t payload_len;
};

struct nfqb_kstats_0_1 {
	uint32_t queue_num;
	uint32_t portid;
	uint32_t queue_total;
	uint32_t copy_mode;
	uint32_t copy_range;
	uint32_t queue_dropped;
	uint32_t queue_user_dropped;
	uint32_t id_sequence;
};

struct nfqb_pool_config_0_1 {
	uint16_t queue_first;
	uint16_t queue_count;
	enum nfqb_pool_mode mode;
	unsigned int workers;
	const int *cpus;
	unsigned int ncpus;
	uint32_t queue_flags;
	uint32_t copy_range;
	uint32_t maxlen;
	unsigned int buffers;
	size_t rcvbuf;
	bool default_drop;
	unsigned int ring_size;
	unsigned int drain_ms;
	nfqb_pool_cb cb;
	void *cb_data;
	void *policy;
	void (*policy_free)(void *policy);
	uint32_t latency_us;
	unsigned int batch_limit;
	uint32_t verdict_timeout_ms;
};

#define SAME_FIELD(old, cur, f) \
	_Static_assert(offsetof(struct old, f) == offsetof(struct cur, f) && \
		       sizeof(((struct old *)0)->f) == \
		       sizeof(((struct cur *)0)->f), \
		       #cur "." #f " moved: the 0.1.0 prefix must stay")

SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, verdict);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, flags);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, mark);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, priority);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, queue_num);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, payload);
SAME_FIELD(nfqb_verdict_0_1, nfqb_verdict, payload_len);
_Static_assert(NFQB_OFFSETOF_END(struct nfqb_verdict_0_1, payload_len) ==
	       NFQB_VERDICT_SIZE_MIN, "struct nfqb_verdict: its first version");

SAME_FIELD(nfqb_kstats_0_1, nfqb_kstats, queue_num);
SAME_FIELD(nfqb_kstats_0_1, nfqb_kstats, id_sequence);

SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, queue_first);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, queue_count);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, mode);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, workers);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, cpus);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, ncpus);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, queue_flags);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, copy_range);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, maxlen);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, buffers);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, rcvbuf);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, default_drop);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, ring_size);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, drain_ms);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, cb);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, cb_data);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, policy);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, policy_free);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, latency_us);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, batch_limit);
SAME_FIELD(nfqb_pool_config_0_1, nfqb_pool_config, verdict_timeout_ms);

/* Declared here only: no header has them. */
NFQB_EXPORT bool nfqb_pkt_timestamp_0_1(const struct nfqb_packet *p,
					struct timeval *tv);
NFQB_EXPORT int nfqb_verdict_ex_0_1(struct nfqb_packet *p,
				    const struct nfqb_verdict_0_1 *v);
NFQB_EXPORT int nfqb_kstats_read_0_1(struct nfqb_kstats_0_1 *out,
				     size_t max);
NFQB_EXPORT int nfqb_kstats_get_0_1(uint16_t num,
				    struct nfqb_kstats_0_1 *out);
NFQB_EXPORT struct nfqb_pool *
nfqb_pool_create_0_1(const struct nfqb_pool_config_0_1 *cfg);

NFQB_COMPAT(nfqb_pkt_timestamp_0_1, nfqb_pkt_timestamp, LIBNFQB_0.1);
bool nfqb_pkt_timestamp_0_1(const struct nfqb_packet *p, struct timeval *tv)
{
	uint64_t ns;

	if (!nfqb_pkt_timestamp(p, &ns))
		return false;
	if (tv) {
		tv->tv_sec = (time_t)(ns / 1000000000u);
		tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
	}
	return true;
}

NFQB_COMPAT(nfqb_verdict_ex_0_1, nfqb_verdict_ex, LIBNFQB_0.1);
int nfqb_verdict_ex_0_1(struct nfqb_packet *p,
			const struct nfqb_verdict_0_1 *v)
{
	/* its fields only: its tail padding is no field of ours */
	return nfqb_verdict_ex(p, (const struct nfqb_verdict *)v,
			       NFQB_OFFSETOF_END(struct nfqb_verdict_0_1,
						 payload_len));
}

NFQB_COMPAT(nfqb_kstats_read_0_1, nfqb_kstats_read, LIBNFQB_0.1);
int nfqb_kstats_read_0_1(struct nfqb_kstats_0_1 *out, size_t max)
{
	return nfqb_kstats_read((struct nfqb_kstats *)out, max, sizeof(*out));
}

NFQB_COMPAT(nfqb_kstats_get_0_1, nfqb_kstats_get, LIBNFQB_0.1);
int nfqb_kstats_get_0_1(uint16_t num, struct nfqb_kstats_0_1 *out)
{
	return nfqb_kstats_get(num, (struct nfqb_kstats *)out, sizeof(*out));
}

NFQB_COMPAT(nfqb_pool_create_0_1, nfqb_pool_create, LIBNFQB_0.2);
struct nfqb_pool *nfqb_pool_create_0_1(const struct nfqb_pool_config_0_1 *cfg)
{
	/* its fields only: queue_flags_off came in its tail padding, which
	 * a 0.1.0 program did not have to zero */
	return nfqb_pool_create((const struct nfqb_pool_config *)cfg,
				NFQB_OFFSETOF_END(struct nfqb_pool_config_0_1,
						  verdict_timeout_ms));
}
