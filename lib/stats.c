// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Statistics: the library's counters of a queue (read for
 * nfqb_queue_stats()), and the kernel's own view from
 * /proc/net/netfilter/nfnetlink_queue.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define KSTATS_PATH "/proc/net/netfilter/nfnetlink_queue"

void nfqb_counters_read(const struct nfqb_counters *c, struct nfqb_stats *st,
			size_t size)
{
	struct nfqb_stats s;
	size_t i, n = sizeof(s) / sizeof(uint64_t);
	uint64_t *v = (uint64_t *)&s;

	for (i = 0; i < n; i++)
		v[i] = atomic_load_explicit(&c->v[i], memory_order_relaxed);
	nfqb_struct_out(st, size, &s, sizeof(s));
}

/* One line: "queue portid total mode range dropped user_dropped idseq 1" */
static int parse_line(const char *line, struct nfqb_kstats *k)
{
	unsigned int v[8];
	int n;

	n = sscanf(line, "%u %u %u %u %u %u %u %u", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n != 8)
		return -1;
	k->queue_num = v[0];
	k->portid = v[1];
	k->queue_total = v[2];
	k->copy_mode = v[3];
	k->copy_range = v[4];
	k->queue_dropped = v[5];
	k->queue_user_dropped = v[6];
	k->id_sequence = v[7];
	return 0;
}

/*
 * Walk the kernel's table: each queue's line, parsed, to @fn (with @arg)
 * until it returns true. The number of lines walked, or -1 with errno
 * (EINVAL: @size not a multiple of 4; fopen()'s).
 */
static int kstats_walk(size_t size,
		       bool (*fn)(const struct nfqb_kstats *k, int i, void *arg),
		       void *arg)
{
	char line[256];
	FILE *f;
	int n = 0;

	if (!size || size % sizeof(uint32_t)) {
		errno = EINVAL;
		return -1;
	}
	f = fopen(KSTATS_PATH, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct nfqb_kstats k;

		if (parse_line(line, &k) < 0)
			continue;
		if (fn(&k, n++, arg))
			break;
	}
	fclose(f);
	return n;
}

struct kstats_out {
	void *out;		/* the caller's array or struct */
	size_t max, size;
	uint16_t num;		/* nfqb_kstats_get(): the queue */
	bool found;
};

static bool kstats_put(const struct nfqb_kstats *k, int i, void *arg)
{
	struct kstats_out *o = arg;

	if (o->out && (size_t)i < o->max)
		nfqb_struct_out((char *)o->out + (size_t)i * o->size, o->size,
				k, sizeof(*k));
	return false;
}

static bool kstats_find(const struct nfqb_kstats *k, int i, void *arg)
{
	struct kstats_out *o = arg;

	(void)i;
	if (k->queue_num != o->num)
		return false;
	if (o->out)
		nfqb_struct_out(o->out, o->size, k, sizeof(*k));
	o->found = true;
	return true;
}

NFQB_EXPORT int nfqb_kstats_read(struct nfqb_kstats *out, size_t max,
				 size_t size)
{
	struct kstats_out o = { .out = out, .max = max, .size = size };

	return kstats_walk(size, kstats_put, &o);
}

NFQB_EXPORT int nfqb_kstats_get(uint16_t num, struct nfqb_kstats *out,
				size_t size)
{
	struct kstats_out o = { .out = out, .size = size, .num = num };

	if (kstats_walk(size, kstats_find, &o) < 0)
		return -1;
	if (!o.found) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

NFQB_EXPORT const char *nfqb_version(void)
{
	return PACKAGE_VERSION;
}

NFQB_EXPORT const char *nfqb_verdict_name(uint32_t verdict)
{
	switch (verdict & 0xff) {
	case NFQB_DROP:
		return "drop";
	case NFQB_ACCEPT:
		return "accept";
	case 2:
		return "stolen";
	case NFQB_QUEUE:
		return "queue";
	case NFQB_REPEAT:
		return "repeat";
	case 5:
		return "stop";
	}
	return "unknown";
}
