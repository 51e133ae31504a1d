// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration test harness: the counters a test expects, as a list of
 * checks ("accepted=32 dropped=32 outstanding=0"); see harness.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct field {
	const char *name;
	size_t off, size;
};

#define STAT(f) { #f, offsetof(struct nfqb_stats, f), \
		  sizeof(((struct nfqb_stats *)0)->f) }
#define KSTAT(f) { #f, offsetof(struct nfqb_kstats, f), \
		   sizeof(((struct nfqb_kstats *)0)->f) }

static const struct field stats_fields[] = {
	STAT(packets), STAT(bytes), STAT(recv_calls), STAT(send_calls),
	STAT(verdict_msgs), STAT(batch_msgs), STAT(batch_packets),
	STAT(accepted), STAT(dropped), STAT(requeued), STAT(repeated),
	STAT(marked), STAT(mangled), STAT(enobufs), STAT(rejected_foreign),
	STAT(rejected_malformed), STAT(rejected_truncated),
	STAT(kernel_errors), STAT(enoent_errors), STAT(flushes),
	STAT(flush_limit), STAT(flush_idle), STAT(flush_latency),
	STAT(flush_explicit), STAT(fallbacks), STAT(timeouts),
	STAT(defaults), STAT(outstanding), STAT(send_failures),
	STAT(rejected_defaults), STAT(gap_ids), STAT(verdict_errors),
	STAT(interrupts), STAT(buffers_exhausted), STAT(config_resends),
	STAT(late_verdicts), STAT(linger_pauses), STAT(linger_waiting),
	STAT(book_full), STAT(truncated), STAT(large_resent),
	STAT(large_dropped), STAT(mss_clamped), STAT(gso_off),
	{ NULL, 0, 0 },
};

static const struct field kstats_fields[] = {
	KSTAT(queue_num), KSTAT(portid), KSTAT(queue_total),
	KSTAT(copy_mode), KSTAT(copy_range), KSTAT(queue_dropped),
	KSTAT(queue_user_dropped), KSTAT(id_sequence),
	{ NULL, 0, 0 },
};

static const struct field *field_named(const struct field *t,
				       const char *name, size_t len)
{
	for (; t->name; t++)
		if (strlen(t->name) == len && !strncmp(t->name, name, len))
			return t;
	return NULL;
}

static unsigned long long field_value(const void *s, const struct field *f)
{
	const unsigned char *p = (const unsigned char *)s + f->off;
	uint64_t v64;
	uint32_t v32;

	if (f->size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

static const char *const op_names[] = { "=", "!=", "<", "<=", ">", ">=" };

/* The operator at @s (its length in *len), -1 if none. */
static int op_at(const char *s, size_t *len)
{
	static const struct { const char *s; enum op op; } ops[] = {
		{ "!=", OP_NE }, { "<=", OP_LE }, { ">=", OP_GE },
		{ "=", OP_EQ }, { "<", OP_LT }, { ">", OP_GT },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		*len = strlen(ops[i].s);
		if (!strncmp(s, ops[i].s, *len))
			return (int)ops[i].op;
	}
	return -1;
}

static bool holds(unsigned long long got, enum op op, unsigned long long v)
{
	switch (op) {
	case OP_EQ:
		return got == v;
	case OP_NE:
		return got != v;
	case OP_LT:
		return got < v;
	case OP_LE:
		return got <= v;
	case OP_GT:
		return got > v;
	case OP_GE:
		return got >= v;
	}
	return false;
}

/* One check, @len bytes at @c: "name[+name...]OPvalue". */
static bool check_one(const void *s, const struct field *table,
		      const char *c, size_t len, char *why, size_t size)
{
	unsigned long long sum = 0, v;
	const char *p = c, *end = c + len;
	size_t oplen = 0;
	char num[32], *e;
	int op = -1;

	while (p < end) {
		const char *n = p;
		const struct field *f;

		while (p < end && (*p == '_' || (*p >= 'a' && *p <= 'z')))
			p++;
		f = field_named(table, n, (size_t)(p - n));
		if (!f) {
			snprintf(why, size, "no counter \"%.*s\" in \"%.*s\"",
				 (int)(p - n), n, (int)len, c);
			return false;
		}
		sum += field_value(s, f);
		if (p < end && *p == '+') {
			p++;
			continue;
		}
		op = p < end ? op_at(p, &oplen) : -1;
		break;
	}
	if (op < 0 || (size_t)(end - p) <= oplen ||
	    (size_t)(end - p) - oplen >= sizeof(num)) {
		snprintf(why, size, "cannot read \"%.*s\"", (int)len, c);
		return false;
	}
	memcpy(num, p + oplen, (size_t)(end - p) - oplen);
	num[(size_t)(end - p) - oplen] = '\0';
	errno = 0;
	v = strtoull(num, &e, 0);
	if (errno || *e || num[0] == '-') {
		snprintf(why, size, "cannot read the value of \"%.*s\"",
			 (int)len, c);
		return false;
	}
	if (holds(sum, (enum op)op, v))
		return true;
	snprintf(why, size, "%.*s is %llu, want %s%llu", (int)(p - c), c, sum,
		 op_names[op], v);
	return false;
}

static bool match(const void *s, const struct field *table, const char *want,
		  char *why, size_t size)
{
	const char *p = want;
	unsigned int checks = 0;

	for (;;) {
		size_t len;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		len = strcspn(p, " ");
		if (!check_one(s, table, p, len, why, size))
			return false;
		checks++;
		p += len;
	}
	if (!checks) {
		snprintf(why, size, "no check in \"%s\"", want);
		return false;
	}
	return true;
}

bool nfqbt_stats_match(const struct nfqb_stats *st, const char *want,
		       char *why, size_t size)
{
	return match(st, stats_fields, want, why, size);
}

bool nfqbt_kstats_match(const struct nfqb_kstats *ks, const char *want,
			char *why, size_t size)
{
	return match(ks, kstats_fields, want, why, size);
}

void nfqbt_assert_match_at(const char *file, int line, const void *s,
			   bool kernel, const char *want, ...)
{
	char buf[512], why[256];
	va_list ap;
	int n;

	va_start(ap, want);
	n = vsnprintf(buf, sizeof(buf), want, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < sizeof(buf),
		      "%s:%d: expected counters too long", file, line);
	ck_assert_msg(match(s, kernel ? kstats_fields : stats_fields, buf, why,
			    sizeof(why)),
		      "%s:%d: %s (expected: %s)", file, line, why, buf);
}
