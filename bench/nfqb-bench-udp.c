/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the UDP modes' result: per consumer and payload size, the
 * medians over the repetitions (a summary), the streaming and drain
 * tables, and the targets of the 64-byte runs.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-report.h"
#include "nfqb-bench-udp.h"

/* a timed run's figures, per datagram or in %, whose medians a summary
 * holds (at the member of sum_field[]) */
enum {
	V_PPS, V_CPU, V_USR, V_SYS, V_TRAFFIC, V_SC_SELF, V_VMSG,
	V_UTIL_T, V_UTIL_C, V_BUSY_T, V_BUSY_C, NV
};

static const size_t sum_field[NV] = {
	[V_PPS] = offsetof(struct bench_summary, pps),
	[V_CPU] = offsetof(struct bench_summary, cpu_ns),
	[V_USR] = offsetof(struct bench_summary, user_ns),
	[V_SYS] = offsetof(struct bench_summary, sys_ns),
	[V_TRAFFIC] = offsetof(struct bench_summary, traffic_ns),
	[V_SC_SELF] = offsetof(struct bench_summary, sc_self_pkt),
	[V_VMSG] = offsetof(struct bench_summary, vmsg_pkt),
	[V_UTIL_T] = offsetof(struct bench_summary, util_t),
	[V_UTIL_C] = offsetof(struct bench_summary, util_c),
	[V_BUSY_T] = offsetof(struct bench_summary, busy_t),
	[V_BUSY_C] = offsetof(struct bench_summary, busy_c),
};

static void run_figures(const struct bench_result *r, double *v)
{
	double pk = (double)r->sent;

	v[V_PPS] = r->pps;
	v[V_USR] = r->cons_user_ns / pk;
	v[V_SYS] = r->cons_sys_ns / pk;
	v[V_CPU] = v[V_USR] + v[V_SYS];
	v[V_TRAFFIC] = (r->traffic_user_ns + r->traffic_sys_ns) / pk;
	v[V_SC_SELF] = (r->cons.recv_calls + r->cons.send_calls +
			r->cons.other_calls) / pk;
	v[V_VMSG] = (r->cons.verdict_msgs + r->cons.batch_msgs) / pk;
	v[V_UTIL_T] = (r->traffic_user_ns + r->traffic_sys_ns) /
		      (r->elapsed * 1e7);
	v[V_UTIL_C] = (r->cons_user_ns + r->cons_sys_ns) / (r->elapsed * 1e7);
	v[V_BUSY_T] = r->busy_traffic;
	v[V_BUSY_C] = r->busy_consumer;
}

static void summarize(const struct bench_result *res, unsigned int nres,
		      enum bench_kind kind, unsigned int payload, bool drain,
		      struct bench_summary *s)
{
	double v[NV][nres + 1], sc[nres + 1], one[NV];
	unsigned int i, j, n = 0, nsc = 0;

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->payload = payload;
	s->drain = drain;
	s->sc_pkt = -1;
	for (i = 0; i < nres; i++) {
		const struct bench_result *r = &res[i];

		if (r->work != BENCH_WORK_UDP || r->calibration ||
		    r->kind != kind || r->payload != payload || !r->done ||
		    r->drain != drain)
			continue;
		s->lost += r->lost;
		if (r->failed)
			s->failed++;
		if (!r->sent || r->elapsed <= 0)
			continue;
		if (!r->timed) {
			if (r->syscalls >= 0)
				sc[nsc++] = r->syscalls / (double)r->sent;
			continue;
		}
		run_figures(r, one);
		for (j = 0; j < NV; j++)
			v[j][n] = one[j];
		n++;
	}
	s->runs = n;
	if (nsc)
		s->sc_pkt = bench_median(sc, nsc);
	if (!n)
		return;
	for (j = 0; j < NV; j++)	/* sorts each: min first, max last */
		*(double *)((char *)s + sum_field[j]) = bench_median(v[j], n);
	s->pps_min = v[V_PPS][0];
	s->pps_max = v[V_PPS][n - 1];
	s->cpu_min = v[V_CPU][0];
	s->cpu_max = v[V_CPU][n - 1];
}

unsigned int bench_summarize(const struct bench_opts *o,
			     const struct bench_set *set,
			     struct bench_summary *sum)
{
	const struct bench_plan *p = &o->plan;
	unsigned int si, j, m, n = 0;

	for (si = 0; si < p->nsizes; si++) {
		for (m = BENCH_MODE_STREAM; m <= BENCH_MODE_DRAIN; m++) {
			bool drain = m == BENCH_MODE_DRAIN;

			if (!bench_plan_has(p, m))
				continue;
			for (j = 0; j < p->nkinds; j++) {
				enum bench_kind k = p->kinds[j];

				if (drain && !bench_consumers[k].queues)
					continue;
				summarize(set->res, set->nres, k, p->sizes[si],
					  drain, &sum[n++]);
			}
		}
	}
	return n;
}

const struct bench_summary *bench_find_sum(const struct bench_summary *s,
					   unsigned int n,
					   enum bench_kind kind,
					   unsigned int payload, bool drain)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (s[i].kind == kind && s[i].payload == payload &&
		    s[i].drain == drain && s[i].runs)
			return &s[i];
	return NULL;
}

static void fmt_pps(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else
		snprintf(buf, len, "%.0fk", v / 1e3);
}

static void fmt_ratio(char *buf, size_t len, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(buf, len, "%.2f", a / b);
	else
		snprintf(buf, len, "-");
}

/* the references of a table: ref A, ref B, the kernel alone */
struct udp_refs {
	const struct bench_summary *a, *b, *k;
};

/* @v against the reference's CPU per datagram (@cpu) or rate */
static void ref_ratio(char *buf, size_t len, double v,
		      const struct bench_summary *ref, bool cpu)
{
	fmt_ratio(buf, len, v, !ref ? 0 : cpu ? ref->cpu_ns : ref->pps);
}

/* the streaming table's columns that only a consumer has ("-" else) */
struct stream_cols {
	char ns[16], us[16], sy[16], ca[8], cb[8], sc[16], sck[16], vm[16];
};

static void stream_cols(const struct bench_summary *s,
			const struct udp_refs *r, struct stream_cols *c)
{
	strcpy(c->ns, "-");
	strcpy(c->us, "-");
	strcpy(c->sy, "-");
	strcpy(c->ca, "-");
	strcpy(c->cb, "-");
	strcpy(c->sc, "-");
	strcpy(c->sck, "-");
	strcpy(c->vm, "-");
	if (!bench_consumers[s->kind].queues)
		return;
	snprintf(c->ns, sizeof(c->ns), "%.0f", s->cpu_ns);
	snprintf(c->us, sizeof(c->us), "%.0f", s->user_ns);
	snprintf(c->sy, sizeof(c->sy), "%.0f", s->sys_ns);
	ref_ratio(c->ca, sizeof(c->ca), s->cpu_ns, r->a, true);
	ref_ratio(c->cb, sizeof(c->cb), s->cpu_ns, r->b, true);
	snprintf(c->sc, sizeof(c->sc), "%.3f", s->sc_self_pkt);
	if (s->sc_pkt >= 0)
		snprintf(c->sck, sizeof(c->sck), "%.3f", s->sc_pkt);
	snprintf(c->vm, sizeof(c->vm), "%.3f", s->vmsg_pkt);
}

static void stream_row(FILE *f, const struct bench_summary *s,
		       const struct udp_refs *r)
{
	char p[16], pmin[16], pmax[16], range[64], ra[8], rb[8], rk[8];
	struct stream_cols c;

	fmt_pps(p, sizeof(p), s->pps);
	fmt_pps(pmin, sizeof(pmin), s->pps_min);
	fmt_pps(pmax, sizeof(pmax), s->pps_max);
	snprintf(range, sizeof(range), "%s (%s..%s)", p, pmin, pmax);
	ref_ratio(ra, sizeof(ra), s->pps, r->a, false);
	ref_ratio(rb, sizeof(rb), s->pps, r->b, false);
	ref_ratio(rk, sizeof(rk), s->pps, r->k, false);
	stream_cols(s, r, &c);
	fprintf(f, "%-22s %22s %5s %5s %5s | %6s %6s %6s %5s %5s | %6s %6s %6s | %3.0f%% %3.0f%% | %llu%s\n",
		bench_consumers[s->kind].label, range, ra, rb, rk, c.ns, c.us,
		c.sy, c.ca, c.cb, c.sc, c.sck, c.vm, s->util_t, s->util_c,
		(unsigned long long)s->lost, s->failed ? " FAILED" : "");
}

static void drain_row(FILE *f, const struct bench_summary *s,
		      const struct udp_refs *r)
{
	char range[64], ra[8], rb[8], cap[16];

	snprintf(range, sizeof(range), "%.0f (%.0f..%.0f)", s->cpu_ns,
		 s->cpu_min, s->cpu_max);
	ref_ratio(ra, sizeof(ra), s->cpu_ns, r->a, true);
	ref_ratio(rb, sizeof(rb), s->cpu_ns, r->b, true);
	fmt_pps(cap, sizeof(cap), s->cpu_ns > 0 ? 1e9 / s->cpu_ns : 0);
	fprintf(f, "%-22s %22s %6.0f %6.0f %5s %5s | %7s/s | %6.3f %6.3f | %llu%s\n",
		bench_consumers[s->kind].label, range, s->user_ns, s->sys_ns,
		ra, rb, cap, s->sc_self_pkt, s->vmsg_pkt,
		(unsigned long long)s->lost, s->failed ? " FAILED" : "");
}

static void udp_head(FILE *f, const struct bench_opts *o, unsigned int pl,
		     bool drain)
{
	const struct bench_cfg *cfg = &o->cfg;

	if (drain) {
		fprintf(f, "\npayload %u B, consumer saturated (drain mode, %u "
			"queued at a time): %llu datagrams x %u reps\n", pl,
			cfg->window, (unsigned long long)cfg->packets,
			o->plan.reps);
		fprintf(f, "%-22s %22s %6s %6s %5s %5s | %9s | %6s %6s | %s\n",
			"consumer", "ns/pkt median (min..max)", "user", "sys",
			"xA", "xB", "capacity", "sc/pkt", "vm/pkt", "lost");
		return;
	}
	fprintf(f, "\npayload %u B, streaming: %llu datagrams x %u reps, "
		"window %u, CPU %d traffic / %d consumer\n", pl,
		(unsigned long long)cfg->packets, o->plan.reps, cfg->window,
		cfg->cpu_traffic, cfg->cpu_consumer);
	fprintf(f, "%-22s %22s %5s %5s %5s | %6s %6s %6s %5s %5s | %6s %6s %6s | %4s %4s | %s\n",
		"consumer", "pkt/s median (min..max)", "xA", "xB", "xkern",
		"ns/pkt", "user", "sys", "xA", "xB", "sc/pkt", "sc(k)",
		"vm/pkt", "utlT", "utlC", "lost");
}

/* the streaming or drain table of payload @pl */
static void udp_table(FILE *f, const struct bench_opts *o, unsigned int pl,
		      bool drain, const struct bench_summary *sum,
		      unsigned int nsum)
{
	struct udp_refs r = {
		.a = bench_find_sum(sum, nsum, BENCH_REF_A, pl, drain),
		.b = bench_find_sum(sum, nsum, BENCH_REF_B, pl, drain),
		.k = bench_find_sum(sum, nsum, BENCH_KERNEL, pl, drain),
	};
	unsigned int i;

	udp_head(f, o, pl, drain);
	for (i = 0; i < nsum; i++) {
		const struct bench_summary *s = &sum[i];

		if (s->payload != pl || s->drain != drain)
			continue;
		if (!s->runs)
			fprintf(f, "%-22s failed (%u runs)\n",
				bench_consumers[s->kind].label, s->failed);
		else if (drain)
			drain_row(f, s, &r);
		else
			stream_row(f, s, &r);
	}
}

static int find_scen_udp(const struct bench_set *set, unsigned int pl,
			 bool drain)
{
	unsigned int i;

	for (i = 0; i < set->nscen; i++)
		if (set->scen[i].work == BENCH_WORK_UDP &&
		    set->scen[i].payload == pl && set->scen[i].drain == drain)
			return (int)i;
	return -1;
}

void bench_print_udp(FILE *f, const struct bench_opts *o,
		     const struct bench_summary *sum, unsigned int nsum,
		     const struct bench_set *set)
{
	bool stream = bench_plan_has(&o->plan, BENCH_MODE_STREAM);
	bool drain = bench_plan_has(&o->plan, BENCH_MODE_DRAIN);
	unsigned int si;
	int sc;

	for (si = 0; si < o->plan.nsizes && (stream || drain); si++) {
		if (stream) {
			udp_table(f, o, o->plan.sizes[si], false, sum, nsum);
			sc = find_scen_udp(set, o->plan.sizes[si], false);
			if (sc >= 0)
				bench_print_ratios(f, set, sc);
		}
		if (drain) {
			udp_table(f, o, o->plan.sizes[si], true, sum, nsum);
			sc = find_scen_udp(set, o->plan.sizes[si], true);
			if (sc >= 0)
				bench_print_ratios(f, set, sc);
		}
	}
	if (!stream && !drain)
		return;
	fprintf(f, "\nStreaming: the traffic process keeps up to the window in "
		"flight. pkt/s: datagrams through the queue per second, first "
		"send to last delivery. ns/pkt: CPU time (user+sys) of the "
		"consumer process per datagram, user and sys separately. "
		"sc/pkt: the consumer's syscalls per datagram as it counts them "
		"(the library: its recv_calls+send_calls, without the pool's "
		"poll and eventfd calls); sc(k): counted by the kernel "
		"(raw_syscalls:sys_enter, all threads) in one extra untimed "
		"run. "
		"vm/pkt: verdict messages per datagram. utlT/utlC: CPU time of "
		"the traffic / consumer process over the elapsed time. x: ratio "
		"of the medians.\n");
	if (drain)
		fprintf(f, "Drain: the consumer is stopped while a window of "
			"datagrams is queued, then drains it; it always finds "
			"work, as under overload. capacity = 1e9 / ns/pkt.\n");
}

/* the targets of the 64-byte runs: @k against @ref, CPU per datagram
 * (at most @limit times the reference's) or datagrams/s (at least) */
static const struct {
	const char *name;
	enum bench_kind k, ref;
	bool drain, cpu;
	double limit;
} udp_targets[] = {
	{ "all-accept CPU/pkt vs ref A, saturated", BENCH_LIB, BENCH_REF_A,
	  true, true, 0.40 },
	{ "all-accept CPU/pkt vs ref B, saturated", BENCH_LIB, BENCH_REF_B,
	  true, true, 0.90 },
	{ "mixed CPU/pkt vs ref A, saturated", BENCH_LIB_MIXED, BENCH_REF_A,
	  true, true, 0.50 },
	{ "all-accept CPU/pkt vs ref A, streaming", BENCH_LIB, BENCH_REF_A,
	  false, true, 0.40 },
	{ "all-accept CPU/pkt vs ref B, streaming", BENCH_LIB, BENCH_REF_B,
	  false, true, 0.90 },
	{ "mixed CPU/pkt vs ref A, streaming", BENCH_LIB_MIXED, BENCH_REF_A,
	  false, true, 0.50 },
	{ "all-accept pkt/s vs ref A", BENCH_LIB, BENCH_REF_A, false, false,
	  1.8 },
	{ "all-accept pkt/s vs ref B", BENCH_LIB, BENCH_REF_B, false, false,
	  1.0 },
	{ "mixed pkt/s vs ref A", BENCH_LIB_MIXED, BENCH_REF_A, false, false,
	  1.5 },
};

unsigned int bench_udp_targets(const struct bench_summary *sum,
			       unsigned int nsum, struct bench_target *t)
{
	unsigned int i, n = sizeof(udp_targets) / sizeof(udp_targets[0]);

	for (i = 0; i < n; i++) {
		const struct bench_summary *x, *ref;
		bool cpu = udp_targets[i].cpu;

		x = bench_find_sum(sum, nsum, udp_targets[i].k, 64,
				   udp_targets[i].drain);
		ref = bench_find_sum(sum, nsum, udp_targets[i].ref, 64,
				     udp_targets[i].drain);
		memset(&t[i], 0, sizeof(t[i]));
		snprintf(t[i].name, sizeof(t[i].name), "%s",
			 udp_targets[i].name);
		t[i].limit = udp_targets[i].limit;
		t[i].le = cpu;	/* CPU: at most; packets/s: at least */
		t[i].known = x && ref && (cpu ? ref->cpu_ns > 0 : ref->pps > 0);
		t[i].value = !t[i].known ? 0 : cpu ? x->cpu_ns / ref->cpu_ns :
			     x->pps / ref->pps;
	}
	return n;
}

void bench_print_udp_targets(FILE *f, const struct bench_summary *sum,
			     unsigned int nsum, unsigned int bad_runs,
			     bool udp)
{
	struct bench_target t[16];
	unsigned int i, n = udp ? bench_udp_targets(sum, nsum, t) : 0;

	fprintf(f, "\ntargets%s:\n", udp ? " (64-byte payload, medians)" : "");
	for (i = 0; i < n; i++) {
		if (!t[i].known) {
			fprintf(f, "  %-40s    -   (%s %.2f)  not measured\n",
				t[i].name, t[i].le ? "<=" : ">=", t[i].limit);
			continue;
		}
		fprintf(f, "  %-40s %5.2f (%s %.2f)  %s\n", t[i].name,
			t[i].value, t[i].le ? "<=" : ">=", t[i].limit,
			bench_target_met(&t[i]) ? "met" : "NOT met");
	}
	fprintf(f, "  %-40s %s\n", "zero lost packets, every run",
		bad_runs ? "NOT met" : "met");
	for (i = 0; i < nsum; i++) {
		const struct bench_summary *s = &sum[i];

		if (s->payload != 64 || !s->runs || s->drain ||
		    !bench_consumers[s->kind].queues)
			continue;
		fprintf(f, "  saturated core, %-22s %s (traffic %.0f%%, consumer %.0f%%)\n",
			bench_consumers[s->kind].label,
			s->util_t >= 90 && s->util_t >= s->util_c ? "traffic" :
			s->util_c >= 90 ? "consumer" : "neither",
			s->util_t, s->util_c);
	}
}
