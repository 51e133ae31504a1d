// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-ips: a small IPS on the libnfq-batch worker pool. This file is
 * the daemon; main.c reads the command line and demo.c is the driver of
 * --demo and --bench (nfqb-ips.h says which calls which).
 *
 *   nfqb-ips [-q FIRST[:LAST]] [-m qpw|dispatch] [-w WORKERS]
 *            [-l whole|pass] -r RULES
 *       verdict the packets of queues FIRST..LAST by the rules file:
 *         drop <bytes>        drop packets whose payload contains <bytes>
 *                             (the rest of the line; \xNN escapes)
 *         mark <port> <mark>  mark TCP/UDP packets to or from <port>
 *       everything else is accepted. SIGHUP reloads the rules (the pool
 *       swaps the policy; in-flight packets finish with the old one),
 *       SIGUSR1 prints statistics, SIGINT/SIGTERM stop cleanly (every
 *       packet gets a verdict, queues are unbound), SIGQUIT under systemd
 *       stops for a restart (every verdict sent, the queues stay bound in
 *       the fd store for the next process), SIGUSR2 upgrades in
 *       place: every verdict sent, the queues stay bound, the program
 *       exec()s its binary again (a new version, if it was replaced),
 *       which takes the queues over (NFQB_IPS_FDS in its environment).
 *       --user USER: once bound, go on as USER with CAP_NET_ADMIN alone.
 *       Under systemd (Type=notify, FileDescriptorStoreMax=) the queue
 *       sockets go to the fd store, so that a restart after a crash finds
 *       the queues still bound (see nfqb-ips.service and nfqb-ips(8)).
 *
 * Matching works on the IPv4/IPv6 packet as the kernel queued it. The
 * library queues GSO packets whole (NFQB_F_GSO, its default): a TCP
 * super-packet of up to 64 KiB, bigger than the MTU, is matched as one
 * (a pattern across the segments it will be cut into is found too), and
 * its checksum, maybe not filled in yet (nfqb_pkt_csum_not_ready()), is
 * never looked at. A packet the kernel cut to the copy range (1500 bytes;
 * nfqb_pkt_truncated()) cannot be inspected whole, and an IPS must not
 * pass what it did not inspect. --large whole (the default) leaves that
 * to the library (nfqb_queue_set_large(NFQB_LARGE_WHOLE)): a cut GSO
 * packet turns GSO off on its queue and, if TCP, is dropped for TCP to
 * send again in segments; any other cut packet is dropped before the
 * rules see it; SYNs get an MSS that fits the copy range, so that TCP
 * flows through whole. --large pass is the behaviour before it: the
 * library hands cut packets out and inspect() drops them (GSO stays on,
 * no MSS clamping: a TCP stream whose GSO packets are longer than 1500
 * bytes, on lo say, can stall, its packets sent again as they were).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <time.h>
#include <unistd.h>

#include "nfqb-ips.h"
#include "../utils/nfqb-privdrop.h"

#define MAX_RULES	256
#define MAX_PATTERN	256

/* --- rules: the policy object ------------------------------------------- */

struct pattern {
	size_t len;
	uint8_t bytes[MAX_PATTERN];
};

struct port_mark {
	uint16_t port;
	uint32_t mark;
};

struct rules {
	unsigned int generation;
	unsigned int npat, nmark;
	struct pattern pat[MAX_RULES];
	struct port_mark mark[MAX_RULES];
	_Atomic uint64_t hits[MAX_RULES];	/* per drop pattern */
};

static void rules_free(void *arg)
{
	free(arg);
}

static size_t unescape(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		unsigned int v;

		if (s[0] == '\\' && s[1] == 'x' && sscanf(s + 2, "%2x", &v) == 1) {
			out[n++] = (uint8_t)v;
			s += 4;
		} else {
			out[n++] = (uint8_t)*s++;
		}
	}
	return n;
}

static struct rules *rules_load(const char *path, unsigned int generation)
{
	struct rules *r = calloc(1, sizeof(*r));
	char line[512];
	unsigned int lineno = 0;
	FILE *f;

	if (!r)
		return NULL;
	r->generation = generation;
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "nfqb-ips: %s: %s\n", path, strerror(errno));
		free(r);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *nl = strchr(line, '\n');
		unsigned int port, mark;

		lineno++;
		if (nl)
			*nl = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "drop ", 5) && r->npat < MAX_RULES) {
			struct pattern *p = &r->pat[r->npat];

			p->len = unescape(s + 5, p->bytes, MAX_PATTERN);
			if (p->len)
				r->npat++;
		} else if (sscanf(s, "mark %u %u", &port, &mark) == 2 &&
			   port < 65536 && r->nmark < MAX_RULES) {
			r->mark[r->nmark].port = (uint16_t)port;
			r->mark[r->nmark++].mark = mark;
		} else {
			fprintf(stderr, "nfqb-ips: %s:%u: bad rule: %s\n",
				path, lineno, s);
			fclose(f);
			free(r);
			return NULL;
		}
	}
	fclose(f);
	return r;
}

/* The pool callback: the whole IPS. */
static int inspect(struct nfqb_packet *p, void *policy, void *data,
		   struct nfqb_verdict *v)
{
	struct rules *r = policy;
	const uint8_t *d;
	uint32_t len, l4 = 0;
	uint8_t proto = 0;
	unsigned int i;

	(void)data;
	d = nfqb_pkt_payload(p, &len);
	if (!r || !d)
		return NFQB_POOL_VERDICT;	/* default: accept */
	if (nfqb_pkt_truncated(p)) {
		/* not all of it to inspect (--large pass; with whole the
		 * library hands out no cut packet) */
		v->verdict = NFQB_DROP;
		return NFQB_POOL_VERDICT;
	}
	for (i = 0; i < r->npat; i++) {
		if (memmem(d, len, r->pat[i].bytes, r->pat[i].len)) {
			atomic_fetch_add_explicit(&r->hits[i], 1,
						  memory_order_relaxed);
			v->verdict = NFQB_DROP;
			return NFQB_POOL_VERDICT;
		}
	}
	if (len >= 20 && (d[0] >> 4) == 4) {
		proto = d[9];
		l4 = (d[0] & 0x0fu) * 4;
	} else if (len >= 40 && (d[0] >> 4) == 6) {
		proto = d[6];
		l4 = 40;
	}
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && len >= l4 + 4) {
		uint16_t sport = (uint16_t)(d[l4] << 8 | d[l4 + 1]);
		uint16_t dport = (uint16_t)(d[l4 + 2] << 8 | d[l4 + 3]);

		for (i = 0; i < r->nmark; i++) {
			if (r->mark[i].port == dport ||
			    r->mark[i].port == sport) {
				v->flags = NFQB_V_MARK;
				v->mark = r->mark[i].mark;
				break;
			}
		}
	}
	v->verdict = NFQB_ACCEPT;
	return NFQB_POOL_VERDICT;
}

/* --- signals and statistics -------------------------------------------- */

static struct nfqb_pool *the_pool;
static volatile sig_atomic_t want_reload, want_stats, want_upgrade, stopping;
/* SIGQUIT: stop for a restart (see leave_for_restart()) */
static volatile sig_atomic_t leaving;

static void on_signal(int sig)
{
	switch (sig) {
	case SIGHUP:
		want_reload = 1;
		break;
	case SIGUSR1:
		want_stats = 1;
		break;
	case SIGUSR2:
		want_upgrade = 1;
		break;
	case SIGQUIT:
		/* the pool is stopped by the main loop (a handover, or a stop
		 * without the fd store) */
		leaving = 1;
		stopping = 1;
		break;
	default:
		stopping = 1;
		nfqb_pool_stop(the_pool);	/* async-signal-safe */
		break;
	}
}

bool ips_stopping(void)
{
	return stopping;
}

/* The large-packet counters of every queue (nfqb_queue_set_large()),
 * summed: one line. */
static void print_large_stats(struct nfqb_pool *pool)
{
	unsigned long long cut = 0, resent = 0, dropped = 0, clamped = 0;
	unsigned long long gso = 0;
	struct nfqb_stats qs;
	unsigned int i;

	for (i = 0; nfqb_pool_queue_stats(pool, i, &qs, sizeof(qs)) == 0;
	     i++) {
		cut += qs.truncated;
		resent += qs.large_resent;
		dropped += qs.large_dropped;
		clamped += qs.mss_clamped;
		gso += qs.gso_off;
	}
	printf("  large packets: truncated %llu, dropped for TCP to resend "
	       "%llu, dropped %llu | MSS clamped %llu | GSO turned off %llu\n",
	       cut, resent, dropped, clamped, gso);
}

static void print_stats(struct nfqb_pool *pool, const char *when)
{
	struct nfqb_pool_stats st;
	unsigned int i, n = nfqb_pool_threads(pool);

	nfqb_pool_stats(pool, -1, &st, sizeof(st));
	printf("[%s] packets %llu: accepted %llu (marked %llu), dropped %llu, "
	       "errors %llu | batches %llu | library holds %llu, rings %llu, "
	       "ring-full waits %llu | policy swaps %llu\n", when,
	       (unsigned long long)st.packets, (unsigned long long)st.accepted,
	       (unsigned long long)st.marked, (unsigned long long)st.dropped,
	       (unsigned long long)st.errors, (unsigned long long)st.batches,
	       (unsigned long long)st.queue_depth,
	       (unsigned long long)st.ring_depth,
	       (unsigned long long)st.dispatch_full,
	       (unsigned long long)st.policy_swaps);
	for (i = 0; i < n; i++) {
		nfqb_pool_stats(pool, (int)i, &st, sizeof(st));
		printf("  thread %u: received %llu, decided %llu, dropped %llu\n",
		       i, (unsigned long long)st.received,
		       (unsigned long long)st.packets,
		       (unsigned long long)st.dropped);
	}
	print_large_stats(pool);
	fflush(stdout);
}

void ips_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

uint64_t ips_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- handover: upgrade in place, systemd's fd store ---------------------- */

#define FDS_ENV		"NFQB_IPS_FDS"
#define MAX_QUEUES	256

/* A message to systemd over $NOTIFY_SOCKET (sd_notify(3) by hand), with
 * @nfds file descriptors attached. Nothing happens without systemd. */
static void notify(const char *msg, const int *fds, unsigned int nfds)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	union {
		char b[CMSG_SPACE(sizeof(int) * MAX_QUEUES)];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh = { .msg_name = &sun, .msg_iov = &iov,
			     .msg_iovlen = 1 };
	socklen_t len;
	size_t plen;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	plen = strlen(path);
	if (plen >= sizeof(sun.sun_path))
		return;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = 0;	/* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	mh.msg_namelen = len;
	if (nfds && nfds <= MAX_QUEUES) {
		struct cmsghdr *cm;

		mh.msg_control = cb.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		fprintf(stderr, "nfqb-ips: notify: %s\n", strerror(errno));
	close(fd);
}

/* The queue sockets this process was given: by the image before it
 * (NFQB_IPS_FDS=fd,fd,...) or by systemd (LISTEN_FDS, names
 * nfqueue-<num>). Returns true if @fds[0..count) are all there. */
static bool inherited_fds(const struct ips_opts *o, int *fds)
{
	const char *s = getenv(FDS_ENV), *pid = getenv("LISTEN_PID");
	const char *n = getenv("LISTEN_FDS"), *names = getenv("LISTEN_FDNAMES");
	unsigned int i;

	for (i = 0; i < o->count; i++)
		fds[i] = -1;
	if (s) {
		for (i = 0; i < o->count && *s; i++) {
			char *end;

			fds[i] = (int)strtol(s, &end, 10);
			s = *end == ',' ? end + 1 : end;
		}
		unsetenv(FDS_ENV);
		return i == o->count;
	}
	if (n && pid && strtol(pid, NULL, 10) == getpid() && names) {
		int k, nfd = (int)strtol(n, NULL, 10);
		const char *p = names;

		for (k = 0; k < nfd; k++) {
			unsigned int num;
			const char *colon = strchr(p, ':');

			if (sscanf(p, "nfqueue-%u", &num) == 1 &&
			    num >= o->first && num < (unsigned int)o->first +
			    o->count)
				fds[num - o->first] = 3 + k;
			else
				close(3 + k);	/* not ours (any more) */
			if (!colon)
				break;
			p = colon + 1;
		}
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		for (i = 0; i < o->count; i++)
			if (fds[i] < 0)
				return false;
		return true;
	}
	return false;
}

/* Bind queue first+i and hand its socket over to ourselves: the pool is
 * always made by nfqb_pool_adopt(), so that we know its sockets (for the
 * fd store). Packets that arrive while a queue is being configured are
 * read with the configuration's answers: they are inspected here, by the
 * rules @r, before the socket can be given up. */
static int bind_fds(const struct ips_opts *o, int *fds, struct rules *r)
{
	unsigned int i, tries;

	for (i = 0; i < o->count; i++) {
		struct nfqb_queue *q;

		if (fds[i] >= 0)
			continue;
		q = nfqb_queue_open((uint16_t)(o->first + i));
		if (!q) {
			fprintf(stderr, "nfqb-ips: queue %u: %s\n",
				o->first + i, strerror(errno));
			return -1;
		}
		/* as the pool sets them (pool_open()), already now: until the
		 * pool runs, the packets wait in the socket and the queue */
		nfqb_queue_set_rcvbuf(q, 8 << 20);
		nfqb_queue_set_maxlen(q, 8192);
		nfqb_queue_set_flags(q, NFQB_F_FAIL_OPEN, NFQB_F_FAIL_OPEN);
		nfqb_queue_set_large(q, o->large);
		nfqb_queue_set_nonblock(q, true);
		for (tries = 0; tries < 1000; tries++) {
			struct nfqb_packet *vec[64];
			int k, n;

			fds[i] = nfqb_queue_detach(q);
			if (fds[i] >= 0 || errno != EBUSY)
				break;
			n = nfqb_recv(q, vec, 64);
			for (k = 0; k < n; k++) {
				struct nfqb_verdict v = {
					.verdict = NFQB_ACCEPT,
				};

				inspect(vec[k], r, NULL, &v);
				if (nfqb_verdict_ex(vec[k], &v, sizeof(v)) < 0)
					nfqb_verdict(vec[k], NFQB_ACCEPT);
			}
		}
		if (fds[i] < 0) {
			fprintf(stderr, "nfqb-ips: queue %u: giving up its "
				"socket: %s\n", o->first + i, strerror(errno));
			nfqb_queue_close(q);
			return -1;
		}
	}
	return 0;
}

/* Give every socket to systemd's fd store, named by queue. A socket there
 * that overflows would show an error to systemd, which then drops it: the
 * overflow is counted by the kernel, not reported on the socket. */
static void fdstore_add(const struct ips_opts *o, const int *fds)
{
	unsigned int i;
	int on = 1;

	if (!getenv("NOTIFY_SOCKET"))
		return;
	for (i = 0; i < o->count; i++) {
		char msg[64];

		setsockopt(fds[i], SOL_NETLINK, NETLINK_NO_ENOBUFS, &on,
			   sizeof(on));
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=nfqueue-%u",
			 o->first + i);
		notify(msg, &fds[i], 1);
	}
}

/* A clean stop unbinds the queues: their sockets leave the store (those
 * with fds[i] < 0 only, if @fds is not NULL). */
static void fdstore_remove(const struct ips_opts *o, const int *fds)
{
	unsigned int i;

	for (i = 0; i < o->count; i++) {
		char msg[64];

		if (fds && fds[i] >= 0)
			continue;
		snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=nfqueue-%u",
			 o->first + i);
		notify(msg, NULL, 0);
	}
}

static struct nfqb_pool *pool_open(const struct ips_opts *o, struct rules *r,
				   const int *fds)
{
	struct nfqb_pool_config cfg = {
		.queue_first = o->first,
		.queue_count = o->count,
		.mode = o->mode,
		.workers = o->workers,
		.queue_flags = NFQB_F_FAIL_OPEN,
		.maxlen = 8192,
		.rcvbuf = 8 << 20,
		.copy_range = 1500,
		.large = o->large,
		.cb = inspect,
		.policy = r,
		.policy_free = rules_free,
	};
	struct nfqb_pool *pool = fds ? nfqb_pool_adopt(&cfg, sizeof(cfg), fds) :
				      nfqb_pool_create(&cfg, sizeof(cfg));

	if (!pool) {
		fprintf(stderr, "nfqb-ips: queues %u..%u: %s\n", o->first,
			o->first + o->count - 1, strerror(errno));
		return NULL;
	}
	return pool;
}

struct nfqb_pool *ips_pool_open(const struct ips_opts *o)
{
	the_pool = pool_open(o, rules_load(o->rules, 1), NULL);
	return the_pool;
}

void ips_pool_close(struct nfqb_pool *pool)
{
	nfqb_pool_stop(pool);
	nfqb_pool_wait(pool);
	if (the_pool == pool)
		the_pool = NULL;	/* no signal handler may use it now */
	nfqb_pool_destroy(pool);
}

/* SIGUSR2: hand the queues over to a new image of this program. Returns
 * only if that failed; the queues are then in @fds, still bound (-1 for
 * one that could not be handed over: unbound, bound again next). */
static void upgrade(const struct ips_opts *o, int *fds)
{
	char env[MAX_QUEUES * 12 + 1] = "";
	struct nfqb_pool *p = the_pool;
	size_t off = 0;
	unsigned int i;

	printf("nfqb-ips: upgrade: handing the queues over\n");
	notify("RELOADING=1", NULL, 0);
	if (nfqb_pool_handover(p, fds, o->count) < 0)
		fprintf(stderr, "nfqb-ips: handover: %s (queues not handed "
			"over are bound again)\n", strerror(errno));
	print_stats(p, "upgrade");
	the_pool = NULL;	/* no signal handler may use it now */
	nfqb_pool_destroy(p);	/* the sockets stay open, bound */
	for (i = 0; i < o->count; i++) {
		if (fds[i] >= 0)
			fcntl(fds[i], F_SETFD, 0);
		off += (size_t)snprintf(env + off, sizeof(env) - off, "%s%d",
					i ? "," : "", fds[i]);
	}
	setenv(FDS_ENV, env, 1);
	fflush(stdout);
	fflush(stderr);
	execv("/proc/self/exe", o->argv);
	fprintf(stderr, "nfqb-ips: upgrade: exec: %s; carrying on\n",
		strerror(errno));
	unsetenv(FDS_ENV);
	for (i = 0; i < o->count; i++)
		if (fds[i] >= 0)
			fcntl(fds[i], F_SETFD, FD_CLOEXEC);
}

/* SIGQUIT under systemd (RestartKillSignal=SIGQUIT in nfqb-ips.service:
 * what `systemctl restart` sends): every verdict sent, the queues stay
 * bound, their sockets stay in the fd store, and the next process (started
 * by the same restart job) gets them back, so that the kernel neither
 * drops nor bypasses a packet in between. A queue that could not be
 * handed over was unbound: its socket leaves the store. Without
 * $NOTIFY_SOCKET (no store) this is a stop; with one, if systemd then
 * does not start us again (no restart job), it closes the sockets, which
 * unbinds the queues: the packets queued since the handover are dropped
 * then, whatever the rule. Returns the exit status. */
static int leave_for_restart(const struct ips_opts *o, int *fds)
{
	struct nfqb_pool *p = the_pool;
	int ret = 0;

	printf("nfqb-ips: restart: handing the queues over to the fd store\n");
	notify("STOPPING=1", NULL, 0);
	if (nfqb_pool_handover(p, fds, o->count) < 0) {
		fprintf(stderr, "nfqb-ips: handover: %s (queues not handed "
			"over are unbound)\n", strerror(errno));
		ret = 1;
	}
	fdstore_remove(o, fds);
	print_stats(p, "restart");
	the_pool = NULL;	/* no signal handler may use it now */
	nfqb_pool_destroy(p);	/* the sockets stay open, bound, stored */
	return ret;
}

/* What serve() keeps from one start of the pool to the next (after an
 * upgrade whose exec() failed): the queue sockets, the rules' generation,
 * whether the sockets were inherited, whether privileges were dropped,
 * the hooks and the time of the last tick. */
struct server {
	const struct ips_opts *o;
	int fds[MAX_QUEUES];
	unsigned int generation;
	bool inherited, dropped;
	const struct ips_hooks *h;
	uint64_t last_tick;
};

/* Load the rules, bind the queues (or take the inherited sockets over)
 * and make the pool in the_pool. Returns the rules it runs with, or NULL
 * on failure. */
static struct rules *serve_open(struct server *s)
{
	const struct ips_opts *o = s->o;
	struct rules *r;
	unsigned int i;
	bool stale;

	for (;;) {
		r = rules_load(o->rules, s->generation);
		if (!r || bind_fds(o, s->fds, r) < 0) {
			free(r);
			return NULL;
		}
		the_pool = pool_open(o, r, s->fds);
		if (the_pool)
			return r;
		stale = s->inherited && errno == ENODEV;
		free(r);
		if (!stale)
			return NULL;
		/* stale sockets (their queues were unbound): bind anew */
		for (i = 0; i < o->count; i++) {
			close(s->fds[i]);
			s->fds[i] = -1;
		}
		s->inherited = false;
	}
}

/* Bound: the rest needs CAP_NET_ADMIN alone (on every verdict); the
 * pool's threads, started next, inherit it. Privileges are dropped once:
 * after an upgrade whose exec() failed, they already are. Starts the_pool.
 * Returns 0, or 1 (the exit status) after destroying it. */
static int serve_start(struct server *s)
{
	if (s->o->user && !s->dropped) {
		char why[256];

		if (nfqb_privdrop(s->o->user, why, sizeof(why)) < 0) {
			fprintf(stderr, "nfqb-ips: --user %s: %s\n", s->o->user,
				why);
			nfqb_pool_destroy(the_pool);
			return 1;
		}
		s->dropped = true;
	}
	if (nfqb_pool_start(the_pool) < 0) {
		fprintf(stderr, "nfqb-ips: start: %s\n", strerror(errno));
		nfqb_pool_destroy(the_pool);
		return 1;
	}
	return 0;
}

/* serve_open(), serve_start(), then tell systemd and the log. Returns 0,
 * or 1 (the exit status). */
static int serve_up(struct server *s)
{
	const struct ips_opts *o = s->o;
	struct rules *r = serve_open(s);

	if (!r || serve_start(s))
		return 1;
	fdstore_add(o, s->fds);
	notify("READY=1", NULL, 0);
	printf("nfqb-ips: pid %d, queues %u..%u%s, %s mode, %u threads; %u "
	       "drop patterns, %u mark rules; large packets: %s\n",
	       (int)getpid(), o->first,
	       o->first + o->count - 1, s->inherited ? " (taken over)" : "",
	       o->mode == NFQB_POOL_DISPATCH ? "dispatch" : "queue-per-worker",
	       nfqb_pool_threads(the_pool), r->npat, r->nmark,
	       o->large == NFQB_LARGE_WHOLE ? "whole" : "pass");
	fflush(stdout);
	if (s->h && s->h->up)
		s->h->up(s->h->data);
	return 0;
}

/* SIGHUP: the rules file again, swapped in as the pool's policy; on any
 * error the old rules stay. */
static void serve_reload(struct server *s)
{
	struct rules *nr = rules_load(s->o->rules, ++s->generation);

	if (nr && nfqb_pool_set_policy(the_pool, nr) == 0)
		printf("nfqb-ips: rules reloaded (generation %u: %u drop "
		       "patterns, %u mark rules)\n", s->generation, nr->npat,
		       nr->nmark);
	else if (nr)
		free(nr);
	else
		printf("nfqb-ips: reload failed, old rules stay\n");
}

/* Until stopped (a signal, the pool stopping by itself, the tick hook),
 * acting on the signals. Returns true after an upgrade whose exec()
 * failed: the queues are back in s->fds, to be taken over again. */
static bool serve_loop(struct server *s)
{
	while (!stopping && !nfqb_pool_stopping(the_pool)) {
		/* readable at once if the pool stops by itself (a fatal
		 * error: nfqb_pool_error()); signals end the wait early */
		struct pollfd pfd = { .fd = nfqb_pool_fd(the_pool),
				      .events = POLLIN };

		poll(&pfd, 1, 50);
		if (want_upgrade) {
			want_upgrade = 0;
			upgrade(s->o, s->fds);
			/* exec failed: take the queues back */
			s->inherited = true;
			return true;
		}
		if (want_reload) {
			want_reload = 0;
			serve_reload(s);
		}
		if (want_stats) {
			want_stats = 0;
			print_stats(the_pool, "SIGUSR1");
		}
		if (s->h && s->h->tick && ips_now_ms() - s->last_tick >= 1000) {
			s->last_tick = ips_now_ms();
			if (s->h->tick(the_pool, s->h->data))
				break;
		}
	}
	return false;
}

/* Stopped: SIGQUIT under systemd leaves the queues bound for the next
 * process (leave_for_restart()); anything else stops the pool, which
 * unbinds them. Returns the exit status. */
static int serve_end(struct server *s)
{
	struct nfqb_pool *p;
	int ret = 0;

	if (leaving && getenv("NOTIFY_SOCKET") &&
	    !nfqb_pool_stopping(the_pool))
		return leave_for_restart(s->o, s->fds);
	notify("STOPPING=1", NULL, 0);
	fdstore_remove(s->o, NULL);
	nfqb_pool_stop(the_pool);
	if (nfqb_pool_wait(the_pool) < 0) {
		fprintf(stderr, "nfqb-ips: a pool thread failed: %s\n",
			strerror(errno));
		ret = 1;
	}
	if (s->h && s->h->down)
		s->h->down(the_pool, s->h->data);
	print_stats(the_pool, "exit");
	p = the_pool;
	the_pool = NULL;	/* no signal handler may use it now */
	nfqb_pool_destroy(p);
	return ret;
}

/* Run until stopped, with the hooks @h (NULL: none). */
int ips_serve(const struct ips_opts *o, const struct ips_hooks *h)
{
	struct server s = { .o = o, .generation = 1, .h = h };

	s.last_tick = ips_now_ms();
	if (o->count > MAX_QUEUES) {
		fprintf(stderr, "nfqb-ips: at most %u queues\n", MAX_QUEUES);
		return 1;
	}
	s.inherited = inherited_fds(o, s.fds);
	do {
		if (serve_up(&s))
			return 1;
	} while (serve_loop(&s));
	return serve_end(&s);
}
