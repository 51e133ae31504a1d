/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the scenarios and their running.
 *
 * Each mode is a row of the table below: the consumers it runs, its
 * scenarios (one for each value of the list it varies over: UDP payload
 * sizes, TCP flows and GSO settings, latency loads), how many runs it
 * plans and what it runs besides (the untimed syscall-counting runs of
 * the stream mode). The modes run in the table's order; the UDP modes
 * size by size, both together, the others each in one round. A round
 * runs its scenarios in turn in every repetition, every consumer once
 * per scenario, the order of the consumers rotating from repetition to
 * repetition so that no consumer always runs first.
 */
#include <stdio.h>
#include <unistd.h>

#include "nfqb-bench-consumers.h"
#include "nfqb-bench-run.h"
#include "nfqb-bench-scen.h"

volatile sig_atomic_t bench_interrupted;

/* Which consumers run a scenario, and their order in repetition rep. */
enum scen_who {
	WHO_ASKED,	/* every one asked for, starting at the rep'th */
	WHO_QUEUED,	/* the same, less those without a queue */
	WHO_TRAFFIC,	/* those that take part in TCP and latency runs
			 * (BENCH_KIND_ANY_TRAFFIC), starting at their rep'th */
};

struct runner;

struct mode {
	const char *name;		/* --mode, JSON "modes" */
	bool drain;			/* UDP: drain mode */
	enum scen_who who;
	/* a round per UDP payload size, with the other modes that say so */
	bool per_size;
	/* its scenarios into the set (for @size if per_size): how many,
	 * their indices into @scen */
	unsigned int (*add)(struct runner *rn, const struct mode *m,
			    unsigned int size, int *scen);
	/* after the round of @scen[0] (NULL: nothing) */
	void (*after)(struct runner *rn, int scen);
	/* runs planned at most */
	unsigned int (*plan)(const struct bench_plan *p, int sys_enter_id);
};

struct runner {
	const struct bench_plan *p;
	struct bench_cfg cfg;		/* of the next run */
	int sys_id;			/* raw_syscalls:sys_enter, -1: none */
	struct bench_set *set;
	unsigned int cap;		/* runs planned */
	unsigned int bad;		/* runs failed */
	const struct mode *mode[BENCH_MAX_SCEN];	/* of each scenario */
};

/* --- the consumers of a scenario ---------------------------------------- */

static bool takes(enum scen_who who, enum bench_kind k)
{
	switch (who) {
	case WHO_QUEUED:
		return bench_consumers[k].queues > 0;
	case WHO_TRAFFIC:
		return BENCH_KIND_ANY_TRAFFIC(k);
	case WHO_ASKED:
	default:
		return true;
	}
}

/* the consumers @who takes of those asked for, in the order asked */
static unsigned int taken(const struct bench_plan *p, enum scen_who who,
			  enum bench_kind *k)
{
	unsigned int i, n = 0;

	for (i = 0; i < p->nkinds; i++)
		if (takes(who, p->kinds[i]))
			k[n++] = p->kinds[i];
	return n;
}

/* the consumers of a scenario of @who in repetition @rep, in order */
static unsigned int consumers(const struct bench_plan *p, enum scen_who who,
			      unsigned int rep, enum bench_kind *k)
{
	enum bench_kind all[BENCH_NKINDS];
	unsigned int j, n = 0, na;

	if (who == WHO_TRAFFIC) {
		na = taken(p, who, all);
	} else {
		for (na = 0; na < p->nkinds; na++)
			all[na] = p->kinds[na];
	}
	for (j = 0; j < na; j++) {
		enum bench_kind kind = all[(j + rep) % na];

		if (takes(who, kind))
			k[n++] = kind;
	}
	return n;
}

/* --- runs ----------------------------------------------------------------- */

/* one run of @k with @cfg in scenario @scen; NULL when the plan is
 * exhausted */
static struct bench_result *one_run(struct runner *rn,
				    const struct bench_cfg *cfg,
				    enum bench_kind k, int scen,
				    unsigned int rep, bool timed)
{
	struct bench_set *set = rn->set;
	struct bench_result *r;

	if (set->nres == rn->cap || bench_interrupted)
		return NULL;
	r = &set->res[set->nres++];
	bench_run(cfg, k, r);
	r->rep = rep;
	r->timed = timed;
	r->scen = scen;
	if (r->failed)
		rn->bad++;
	bench_progress(set->nres, rn->cap, r, set);
	return r;
}

/* what a scenario sets in the configuration of its runs */
static void scen_cfg(struct bench_cfg *cfg, const struct bench_scen *sc)
{
	cfg->work = sc->work;
	cfg->drain = sc->drain;
	cfg->gso = sc->gso;
	if (sc->work == BENCH_WORK_UDP)
		cfg->payload = sc->payload;
	else if (sc->work == BENCH_WORK_TCP)
		cfg->tcp_streams = sc->streams;
	else
		cfg->load_pps = sc->load_pps;
}

/* every repetition: each scenario of @scen in turn, all its consumers */
static void run_round(struct runner *rn, const int *scen, unsigned int n)
{
	enum bench_kind k[BENCH_NKINDS];
	unsigned int rep, i, j, nk;

	for (rep = 0; rep < rn->p->reps && !bench_interrupted; rep++) {
		for (i = 0; i < n && !bench_interrupted; i++) {
			scen_cfg(&rn->cfg, &rn->set->scen[scen[i]]);
			nk = consumers(rn->p, rn->mode[scen[i]]->who, rep, k);
			for (j = 0; j < nk && !bench_interrupted; j++)
				one_run(rn, &rn->cfg, k[j], scen[i], rep, true);
		}
	}
}

static int add_scen(struct runner *rn, const struct mode *m,
		    const struct bench_scen *sc)
{
	int i = bench_scen_add(rn->set, sc);

	rn->mode[i] = m;
	return i;
}

/* --- the modes ------------------------------------------------------------ */

static unsigned int add_udp(struct runner *rn, const struct mode *m,
			    unsigned int size, int *scen)
{
	struct bench_scen sc = { .work = BENCH_WORK_UDP, .gso = -1,
				 .payload = size, .drain = m->drain };

	snprintf(sc.name, sizeof(sc.name), "%s %u B", m->name, size);
	scen[0] = add_scen(rn, m, &sc);
	return 1;
}

/* one untimed streaming run per consumer to count syscalls */
static void count_syscalls(struct runner *rn, int scen)
{
	const struct bench_plan *p = rn->p;
	unsigned int j;

	if (rn->sys_id < 0)
		return;
	scen_cfg(&rn->cfg, &rn->set->scen[scen]);
	rn->cfg.sys_enter_id = rn->sys_id;
	for (j = 0; j < p->nkinds && !bench_interrupted; j++) {
		if (!bench_consumers[p->kinds[j]].queues)
			continue;
		one_run(rn, &rn->cfg, p->kinds[j], scen, 0, false);
	}
	rn->cfg.sys_enter_id = -1;
}

static unsigned int plan_stream(const struct bench_plan *p, int sys_id)
{
	enum bench_kind k[BENCH_NKINDS];
	unsigned int nq = taken(p, WHO_QUEUED, k);

	return p->nsizes * (p->reps * p->nkinds + (sys_id >= 0 ? nq : 0));
}

static unsigned int plan_drain(const struct bench_plan *p, int sys_id)
{
	enum bench_kind k[BENCH_NKINDS];

	(void)sys_id;
	return p->nsizes * p->reps * taken(p, WHO_QUEUED, k);
}

/* TCP: every (flows, GSO) pair */
static unsigned int add_tcp(struct runner *rn, const struct mode *m,
			    unsigned int size, int *scen)
{
	const struct bench_plan *p = rn->p;
	enum bench_kind k[BENCH_NKINDS];
	unsigned int f, g, n = 0;

	(void)size;
	if (!taken(p, m->who, k))
		return 0;
	for (f = 0; f < p->ntcp_flows; f++) {
		for (g = 0; g < p->ngso; g++) {
			struct bench_scen sc = {
				.work = BENCH_WORK_TCP,
				.streams = p->tcp_flows[f], .gso = p->gso[g],
			};

			snprintf(sc.name, sizeof(sc.name), "%u flow%s, GSO %s",
				 sc.streams, sc.streams == 1 ? "" : "s",
				 sc.gso < 0 ? "default" : sc.gso ? "on" : "off");
			scen[n++] = add_scen(rn, m, &sc);
		}
	}
	return n;
}

static unsigned int plan_tcp(const struct bench_plan *p, int sys_id)
{
	enum bench_kind k[BENCH_NKINDS];

	(void)sys_id;
	return p->reps * p->ntcp_flows * p->ngso * taken(p, WHO_TRAFFIC, k);
}

/* ref A's streaming rate (one short run), which the loads are % of */
static void calibrate(struct runner *rn)
{
	struct bench_set *set = rn->set;
	struct bench_cfg cfg = rn->cfg;
	struct bench_result *r;

	cfg.work = BENCH_WORK_UDP;
	cfg.drain = false;
	cfg.gso = -1;
	cfg.packets = rn->p->calib_packets;
	cfg.payload = 64;
	r = one_run(rn, &cfg, BENCH_REF_A, -1, 0, false);
	if (!r)
		return;
	r->calibration = true;
	set->calib_run = (int)(r - set->res);
	if (!r->failed && r->pps > 0)
		set->calib_pps = r->pps;
	else
		fprintf(stderr, "nfqb-bench: the load calibration (ref A) "
			"failed: no runs under load\n");
}

/*
 * Latency: UDP and TCP ping-pong when idle, then UDP ping-pong under each
 * background load; rates in % of ref A's streaming rate, measured first,
 * unless fixed rates were given.
 */
static unsigned int add_latency(struct runner *rn, const struct mode *m,
				unsigned int size, int *scen)
{
	const struct bench_plan *p = rn->p;
	struct bench_scen sc = { .work = BENCH_WORK_PING_UDP, .gso = -1 };
	enum bench_kind k[BENCH_NKINDS];
	unsigned int i, n = 0;

	(void)size;
	if (!taken(p, m->who, k))
		return 0;
	if (p->nload_pct && !p->nload_pps)
		calibrate(rn);
	snprintf(sc.name, sizeof(sc.name), "UDP, idle");
	scen[n++] = add_scen(rn, m, &sc);
	sc.work = BENCH_WORK_PING_TCP;
	snprintf(sc.name, sizeof(sc.name), "TCP, idle");
	scen[n++] = add_scen(rn, m, &sc);
	sc.work = BENCH_WORK_PING_UDP;
	for (i = 0; i < p->nload_pps; i++) {
		sc.load_pps = p->load_pps[i];
		snprintf(sc.name, sizeof(sc.name), "UDP, load %.0fk pkt/s",
			 sc.load_pps / 1e3);
		scen[n++] = add_scen(rn, m, &sc);
	}
	for (i = 0; !p->nload_pps && rn->set->calib_pps > 0 &&
	     i < p->nload_pct; i++) {
		sc.load_pct = p->load_pct[i];
		sc.load_pps = rn->set->calib_pps * p->load_pct[i] / 100.0;
		snprintf(sc.name, sizeof(sc.name), "UDP, load %u%%",
			 p->load_pct[i]);
		scen[n++] = add_scen(rn, m, &sc);
	}
	return n;
}

static unsigned int plan_latency(const struct bench_plan *p, int sys_id)
{
	enum bench_kind k[BENCH_NKINDS];
	unsigned int loads = p->nload_pps ? p->nload_pps : p->nload_pct;

	(void)sys_id;
	return 1 + p->reps * (2 + loads) * taken(p, WHO_TRAFFIC, k);
}

static const struct mode modes[BENCH_NMODES] = {
	[BENCH_MODE_STREAM] = {
		.name = "stream", .who = WHO_ASKED, .per_size = true,
		.add = add_udp, .after = count_syscalls, .plan = plan_stream,
	},
	[BENCH_MODE_DRAIN] = {
		.name = "drain", .drain = true, .who = WHO_QUEUED,
		.per_size = true, .add = add_udp, .plan = plan_drain,
	},
	[BENCH_MODE_TCP] = {
		.name = "tcp", .who = WHO_TRAFFIC, .add = add_tcp,
		.plan = plan_tcp,
	},
	[BENCH_MODE_LATENCY] = {
		.name = "latency", .who = WHO_TRAFFIC, .add = add_latency,
		.plan = plan_latency,
	},
};

/* every scenario fits: a size's two, the TCP pairs, latency's */
_Static_assert(2 * BENCH_MAX_SIZES + 3 * BENCH_MAX_LIST + 2 +
	       BENCH_MAX_LIST <= BENCH_MAX_SCEN, "scenarios");

const char *bench_mode_name(enum bench_mode m)
{
	return modes[m].name;
}

bool bench_plan_has(const struct bench_plan *p, enum bench_mode m)
{
	return p->modes & BENCH_MODE(m);
}

unsigned int bench_plan_runs(const struct bench_plan *p, int sys_enter_id)
{
	unsigned int m, n = 0;

	for (m = 0; m < BENCH_NMODES; m++)
		if (bench_plan_has(p, m))
			n += modes[m].plan(p, sys_enter_id);
	return n;
}

/* the modes of one payload size, together */
static void run_size(struct runner *rn, unsigned int size)
{
	int scen[BENCH_NMODES];
	unsigned int m, n = 0;

	for (m = 0; m < BENCH_NMODES; m++)
		if (modes[m].per_size && bench_plan_has(rn->p, m))
			n += modes[m].add(rn, &modes[m], size, &scen[n]);
	run_round(rn, scen, n);
	for (m = 0; m < n && !bench_interrupted; m++)
		if (rn->mode[scen[m]]->after)
			rn->mode[scen[m]]->after(rn, scen[m]);
}

unsigned int bench_run_plan(const struct bench_plan *p,
			    const struct bench_cfg *cfg, struct bench_set *set,
			    unsigned int cap)
{
	struct runner rn = { .p = p, .cfg = *cfg, .set = set, .cap = cap,
			     .sys_id = cfg->sys_enter_id };
	int scen[BENCH_MAX_SCEN];
	unsigned int m, i, n;

	rn.cfg.sys_enter_id = -1;	/* counting syscalls slows a run */
	for (i = 0; i < p->nsizes && (p->modes & BENCH_MODES_UDP) &&
	     !bench_interrupted; i++)
		run_size(&rn, p->sizes[i]);
	for (m = 0; m < BENCH_NMODES && !bench_interrupted; m++) {
		if (modes[m].per_size || !bench_plan_has(p, m))
			continue;
		n = modes[m].add(&rn, &modes[m], 0, scen);
		run_round(&rn, scen, n);
	}
	return rn.bad;
}

void bench_progress(unsigned int i, unsigned int n,
		    const struct bench_result *r, const struct bench_set *set)
{
	bool tty = isatty(STDERR_FILENO);
	double pk = r->sent ? (double)r->sent : 1;
	const char *scen = set && r->scen >= 0 && (unsigned int)r->scen <
			   set->nscen ? set->scen[r->scen].name : "";
	char rep[16], what[128];

	if (r->calibration)
		snprintf(rep, sizeof(rep), "calib");
	else if (r->timed)
		snprintf(rep, sizeof(rep), "%s %u", r->drain ? "drain" : "rep",
			 r->rep + 1);
	else
		snprintf(rep, sizeof(rep), "syscalls");
	switch (r->work) {
	case BENCH_WORK_TCP:
		if (r->tcp_bytes && bench_consumers[r->kind].queues)
			snprintf(what, sizeof(what),
				 "%-18s %6.2f Gbit/s %6.0f ms/Gbit", scen,
				 r->gbps, (r->cons_user_ns + r->cons_sys_ns) /
				 1e6 / (r->tcp_bytes * 8 / 1e9));
		else
			snprintf(what, sizeof(what), "%-18s %6.2f Gbit/s",
				 scen, r->gbps);
		break;
	case BENCH_WORK_PING_UDP:
	case BENCH_WORK_PING_TCP:
		snprintf(what, sizeof(what),
			 "%-18s p50 %6.1f p99 %7.1f us %6llu rtts lost %llu",
			 scen, r->lat_p50, r->lat_p99,
			 (unsigned long long)r->pings,
			 (unsigned long long)r->lost);
		break;
	case BENCH_WORK_UDP:
	default:
		snprintf(what, sizeof(what),
			 "%5u B %8.0f pkt/s %6.0f ns/pkt lost %llu",
			 r->payload, r->pps,
			 (r->cons_user_ns + r->cons_sys_ns) / pk,
			 (unsigned long long)r->lost);
		break;
	}
	fprintf(stderr, "%s[%3u/%3u] %-22s %-8s %s%s%s%s",
		tty ? "\r\033[K" : "", i, n, bench_consumers[r->kind].label,
		rep, what, r->failed ? " FAILED: " : "",
		r->failed ? r->err : "", tty && !r->failed ? "" : "\n");
	fflush(stderr);
}
