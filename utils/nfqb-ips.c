// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-ips: a small IPS on the libnfq-batch worker pool.
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
 *   nfqb-ips --demo     the same in a private network namespace, with its
 *                       own rule (--queue-balance 0:3), rules file and
 *                       traffic; prints live figures, reloads midway,
 *                       stops the traffic, lets the queues drain, stops,
 *                       and checks that every datagram was dropped by the
 *                       rules or delivered with its mark (exit status 1
 *                       if not, with what happened instead)
 *   nfqb-ips --bench    packets per second with 1, 2 and 4 queues
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
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

#include "nfqb-privdrop.h"

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

static void install_signals(void)
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct opts {
	uint16_t first, count;
	enum nfqb_pool_mode mode;
	unsigned int workers;
	const char *rules;
	const char *user;
	enum nfqb_large large;	/* --large (default: whole) */
	char **argv;		/* to exec() again on SIGUSR2 */
	bool demo, bench;	/* --demo, --bench (--bench first) */
};

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
static bool inherited_fds(const struct opts *o, int *fds)
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
static int bind_fds(const struct opts *o, int *fds, struct rules *r)
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
static void fdstore_add(const struct opts *o, const int *fds)
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
static void fdstore_remove(const struct opts *o, const int *fds)
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

static struct nfqb_pool *pool_open(const struct opts *o, struct rules *r,
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

/* SIGUSR2: hand the queues over to a new image of this program. Returns
 * only if that failed; the queues are then in @fds, still bound (-1 for
 * one that could not be handed over: unbound, bound again next). */
static void upgrade(const struct opts *o, int *fds)
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
static int leave_for_restart(const struct opts *o, int *fds)
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

/* What --demo adds to serve() (the daemon has none): @up is called once
 * the pool runs (again after an upgrade whose exec() failed), @tick every
 * second (true: stop now), @down once the pool has stopped, before it is
 * destroyed (its counters final); each may be NULL. */
struct hooks {
	void (*up)(void *data);
	bool (*tick)(struct nfqb_pool *pool, void *data);
	void (*down)(struct nfqb_pool *pool, void *data);
	void *data;
};

/* What serve() keeps from one start of the pool to the next (after an
 * upgrade whose exec() failed): the queue sockets, the rules' generation,
 * whether the sockets were inherited, whether privileges were dropped,
 * the hooks and the time of the last tick. */
struct server {
	const struct opts *o;
	int fds[MAX_QUEUES];
	unsigned int generation;
	bool inherited, dropped;
	const struct hooks *h;
	uint64_t last_tick;
};

/* Load the rules, bind the queues (or take the inherited sockets over)
 * and make the pool in the_pool. Returns the rules it runs with, or NULL
 * on failure. */
static struct rules *serve_open(struct server *s)
{
	const struct opts *o = s->o;
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
	const struct opts *o = s->o;
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
		if (s->h && s->h->tick && now_ms() - s->last_tick >= 1000) {
			s->last_tick = now_ms();
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
static int serve(const struct opts *o, const struct hooks *h)
{
	struct server s = { .o = o, .generation = 1, .h = h };

	s.last_tick = now_ms();
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

/* --- demo and bench: a private namespace with traffic ------------------- */

#define DEMO_PORT	5555

static int netns_setup(const char *rule)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "nfqb-ips: unshare(CLONE_NEWNET): %s (run as "
			"root)\n", strerror(errno));
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (ret == 0) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	if (ret < 0 || system(rule) != 0) {
		fprintf(stderr, "nfqb-ips: namespace set-up failed\n");
		return -1;
	}
	printf("nfqb-ips: private network namespace; %s\n", rule);
	return 0;
}

struct traffic {
	unsigned int count;	/* 0: until stopped */
	unsigned int pace_every;	/* pause 1 ms every this many */
	atomic_bool stop, tx_stop;	/* all of it; the sender only */
	atomic_ullong sent, received, marked;
	/* datagrams with "ATTACK" and "EXPLOIT": sent, delivered */
	atomic_ullong sent_attack, sent_exploit, got_attack, got_exploit;
	int rx_fd;
	pthread_t tx, rx;
	bool sending;		/* tx runs (not joined yet) */
};

static void *traffic_rx(void *arg)
{
	struct traffic *t = arg;
	char buf[2048];
	int one = 1;

	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVMARK, &one, sizeof(one));
	while (!atomic_load(&t->stop)) {
		union {
			char b[CMSG_SPACE(sizeof(uint32_t)) * 2];
			struct cmsghdr align;
		} cb;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cb.b,
				     .msg_controllen = sizeof(cb.b) };
		struct cmsghdr *cm;
		ssize_t n = recvmsg(t->rx_fd, &mh, 0);

		if (n < 0)
			continue;	/* timeout: look at stop */
		atomic_fetch_add(&t->received, 1);
		if (memmem(buf, (size_t)n, "ATTACK", 6))
			atomic_fetch_add(&t->got_attack, 1);
		else if (memmem(buf, (size_t)n, "EXPLOIT", 7))
			atomic_fetch_add(&t->got_exploit, 1);
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			uint32_t mark;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SO_MARK)
				continue;
			memcpy(&mark, CMSG_DATA(cm), sizeof(mark));
			if (mark)
				atomic_fetch_add(&t->marked, 1);
		}
	}
	return NULL;
}

/* Datagrams from 16 source addresses (the kernel spreads flows over the
 * queues by address); every 10th carries "ATTACK", every 25th "EXPLOIT"
 * (unless it is a 10th). */
static void *traffic_tx(void *arg)
{
	struct traffic *t = arg;
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd[16];
	unsigned int i;
	char buf[128];

	for (i = 0; i < 16; i++) {
		struct sockaddr_in from = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = htonl(0x7f000010 + i),
		};

		fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		bind(fd[i], (struct sockaddr *)&from, sizeof(from));
	}
	for (i = 0; (!t->count || i < t->count) && !atomic_load(&t->stop) &&
	     !atomic_load(&t->tx_stop);) {
		const char *what = i % 10 == 9 ? "ATTACK" :
				   i % 25 == 24 ? "EXPLOIT" : "hello";

		memset(buf, '.', sizeof(buf));
		snprintf(buf, sizeof(buf), "seq %u %s", i, what);
		if (sendto(fd[i % 16], buf, sizeof(buf), MSG_DONTWAIT,
			   (struct sockaddr *)&to, sizeof(to)) < 0 &&
		    errno != EPERM) {
			sched_yield();
			continue;
		}
		if (what[0] != 'h')
			atomic_fetch_add(what[0] == 'A' ? &t->sent_attack :
					 &t->sent_exploit, 1);
		i++;
		atomic_store(&t->sent, i);
		if (t->pace_every && i % t->pace_every == 0)
			usleep(1000);
	}
	for (i = 0; i < 16; i++)
		close(fd[i]);
	return NULL;
}

/* The receiver: a socket on DEMO_PORT and its thread. */
static int traffic_start(struct traffic *t)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(DEMO_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_usec = 100000 };
	int rcvbuf = 32 << 20;

	t->rx_fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(t->rx_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	if (bind(t->rx_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -1;
	pthread_create(&t->rx, NULL, traffic_rx, t);
	return 0;
}

/* The sender's thread (once the queues are bound: what is sent before
 * that is dropped by the kernel, the rule has no --queue-bypass). */
static void traffic_send(struct traffic *t)
{
	if (!t->sending && pthread_create(&t->tx, NULL, traffic_tx, t) == 0)
		t->sending = true;
}

static void traffic_stop_tx(struct traffic *t)
{
	atomic_store(&t->tx_stop, true);
	if (t->sending)
		pthread_join(t->tx, NULL);
	t->sending = false;
}

static void traffic_stop(struct traffic *t)
{
	traffic_stop_tx(t);
	atomic_store(&t->stop, true);
	pthread_join(t->rx, NULL);
	close(t->rx_fd);
}

/* --demo: the rules file (appended to at t=3 s), the traffic, the per
 * second figures, and the pool's totals once it stopped. */
struct demo {
	struct traffic t;
	const char *rules;
	bool started, drained, ended;
	unsigned int secs;
	uint64_t last_packets;
	struct nfqb_pool_stats end;
};

#define DEMO_SECONDS	6

/* Every queue of the demo (0..3) bound and holding no packet: every
 * datagram queued has had its verdict. */
static bool demo_queues_empty(void)
{
	struct nfqb_kstats ks;
	uint16_t q;

	for (q = 0; q < 4; q++)
		if (nfqb_kstats_get(q, &ks, sizeof(ks)) < 0 || ks.queue_total)
			return false;
	return true;
}

/* The end of the demo, before the IPS stops: the sender stops, then the
 * kernel's queues drain and the receiver goes idle (200 ms without a
 * datagram), so that the stop finds no packet left to give the default
 * verdict (accept, uninspected) to. At most 5 s; a signal ends it. */
static void demo_drain(struct demo *d)
{
	uint64_t t0 = now_ms(), last = t0;
	unsigned long long seen = atomic_load(&d->t.received), now;

	traffic_stop_tx(&d->t);
	printf("demo: traffic stopped after %llu datagrams; draining the "
	       "queues\n", (unsigned long long)atomic_load(&d->t.sent));
	fflush(stdout);
	while (!stopping && now_ms() - t0 < 5000) {
		now = atomic_load(&d->t.received);
		if (now != seen || !demo_queues_empty()) {
			seen = now;
			last = now_ms();
		} else if (now_ms() - last >= 200) {
			printf("demo: drained: queues empty, the last datagram "
			       "delivered %llu ms after the traffic stopped\n",
			       (unsigned long long)(last - t0));
			d->drained = true;
			return;
		}
		usleep(10000);
	}
	printf("demo: %s before the queues drained\n",
	       stopping ? "interrupted" : "gave up waiting 5 s");
}

static void demo_up(void *arg)
{
	struct demo *d = arg;

	if (!d->started)
		traffic_send(&d->t);
	d->started = true;
}

static bool demo_tick(struct nfqb_pool *pool, void *arg)
{
	struct demo *d = arg;
	struct traffic *t = &d->t;
	struct nfqb_pool_stats st;

	nfqb_pool_stats(pool, -1, &st, sizeof(st));
	printf("t=%2us  %7llu pkt/s | decided %llu: dropped %llu, marked %llu "
	       "| sent %llu, delivered %llu (marked %llu)\n", ++d->secs,
	       (unsigned long long)(st.packets - d->last_packets),
	       (unsigned long long)st.packets, (unsigned long long)st.dropped,
	       (unsigned long long)st.marked,
	       (unsigned long long)atomic_load(&t->sent),
	       (unsigned long long)atomic_load(&t->received),
	       (unsigned long long)atomic_load(&t->marked));
	fflush(stdout);
	d->last_packets = st.packets;
	if (d->secs == 3) {
		FILE *f = fopen(d->rules, "a");

		if (f) {
			fputs("drop EXPLOIT\n", f);
			fclose(f);
		}
		printf("demo: added \"drop EXPLOIT\" to the rules, sending "
		       "SIGHUP to myself\n");
		raise(SIGHUP);
	}
	if (d->secs < DEMO_SECONDS)
		return false;
	demo_drain(d);
	return true;
}

static void demo_down(struct nfqb_pool *pool, void *arg)
{
	struct demo *d = arg;

	nfqb_pool_stats(pool, -1, &d->end, sizeof(d->end));
	d->ended = true;
}

/* The demo's check: every datagram sent was inspected, so either dropped
 * by the IPS or delivered with its mark, and none was lost. Whatever else
 * happened is named. Returns true if it holds. */
static bool demo_check(const struct demo *d)
{
	unsigned long long sent = atomic_load(&d->t.sent);
	unsigned long long got = atomic_load(&d->t.received);
	unsigned long long marked = atomic_load(&d->t.marked);
	unsigned long long attack = atomic_load(&d->t.got_attack);
	unsigned long long dropped = d->end.dropped;
	unsigned long long defaults = d->end.defaults;
	long long lost = (long long)sent - (long long)dropped - (long long)got;
	bool ok = d->ended && marked == got && !attack && !lost;

	printf("demo: sent %llu (%llu with ATTACK, %llu with EXPLOIT): the IPS "
	       "dropped %llu; delivered %llu (with ATTACK %llu, with EXPLOIT "
	       "%llu: sent before the reload)\n", sent,
	       (unsigned long long)atomic_load(&d->t.sent_attack),
	       (unsigned long long)atomic_load(&d->t.sent_exploit), dropped,
	       got, attack, (unsigned long long)atomic_load(&d->t.got_exploit));
	printf("demo: delivered %llu, marked %llu (all marked: %s); default "
	       "verdicts at the stop: %llu; sent - dropped - delivered = %lld\n",
	       got, marked, marked == got ? "yes" : "no", defaults, lost);
	if (!d->drained)
		printf("demo: the IPS stopped before the traffic did and the "
		       "queues drained\n");
	if (defaults)
		printf("demo: %llu still queued when the IPS stopped got the "
		       "default verdict: accepted uninspected, without the "
		       "mark\n", defaults);
	if (got - marked > defaults)
		printf("demo: %llu more passed without the mark: accepted "
		       "uninspected by the kernel (fail-open: a queue was full, "
		       "or at length 0 while the IPS stopped)\n",
		       got - marked - defaults);
	if (lost > 0)
		printf("demo: %lld never arrived: sent after the IPS unbound "
		       "the queues (the rule has no --queue-bypass), or a "
		       "socket overflowed\n", lost);
	printf("demo: %s\n", ok ? "PASS: every datagram was inspected: ATTACK "
	       "dropped throughout, EXPLOIT from the reload on, every other "
	       "one delivered with its mark" : "FAIL: see above");
	return ok;
}

static int demo(struct opts *o)
{
	static char path[] = "/tmp/nfqb-ips-demo-XXXXXX";
	struct demo d = { .t.pace_every = 64, .rules = path };
	const struct hooks h = { demo_up, demo_tick, demo_down, &d };
	FILE *f;
	int fd, ret;

	if (netns_setup("iptables -w -A OUTPUT -o lo -p udp --dport 5555 "
			"-j NFQUEUE --queue-balance 0:3") < 0)
		return 1;
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return 1;
	fprintf(f, "# nfqb-ips demo rules\ndrop ATTACK\nmark %d 7\n",
		DEMO_PORT);
	fclose(f);
	printf("demo: rules file %s: drop ATTACK, mark port %d with 7\n",
	       path, DEMO_PORT);
	o->first = 0;
	o->count = 4;
	o->rules = path;
	if (traffic_start(&d.t) < 0)
		return 1;
	ret = serve(o, &h);
	traffic_stop(&d.t);
	if (!demo_check(&d) && !ret)
		ret = 1;
	unlink(path);
	return ret;
}

/* Packets per second with 1, 2, 4 queues, each run in a fresh namespace
 * (a child process each: a namespace per run, nothing left behind). */
static int bench_one(enum nfqb_pool_mode mode, unsigned int nq,
		     unsigned int ms)
{
	static char path[] = "/tmp/nfqb-ips-bench-XXXXXX";
	char rule[256];
	struct traffic t = { 0 };
	struct opts o = { .first = 0, .count = (uint16_t)nq, .mode = mode,
			  .large = NFQB_LARGE_WHOLE };
	struct nfqb_pool_stats st;
	uint64_t t0, t1, p0;
	FILE *f;
	int fd;

	if (nq == 1)
		snprintf(rule, sizeof(rule), "iptables -w -A OUTPUT -o lo -p "
			 "udp --dport %d -j NFQUEUE --queue-num 0", DEMO_PORT);
	else
		snprintf(rule, sizeof(rule), "iptables -w -A OUTPUT -o lo -p "
			 "udp --dport %d -j NFQUEUE --queue-balance 0:%u",
			 DEMO_PORT, nq - 1);
	if (netns_setup(rule) < 0)
		return 1;
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return 1;
	fprintf(f, "drop ATTACK\nmark %d 7\n", DEMO_PORT);
	fclose(f);
	o.rules = path;
	the_pool = pool_open(&o, rules_load(path, 1), NULL);
	unlink(path);
	if (!the_pool || nfqb_pool_start(the_pool) < 0)
		return 1;
	if (traffic_start(&t) < 0)
		return 1;
	traffic_send(&t);
	usleep(300 * 1000);	/* warm up */
	nfqb_pool_stats(the_pool, -1, &st, sizeof(st));
	p0 = st.packets;
	t0 = now_ms();
	usleep(ms * 1000);
	nfqb_pool_stats(the_pool, -1, &st, sizeof(st));
	t1 = now_ms();
	printf("bench: %s, %u queue%s: %.0f packets/s (%llu in %llu ms)\n",
	       mode == NFQB_POOL_DISPATCH ? "dispatch" : "queue-per-worker",
	       nq, nq > 1 ? "s" : "",
	       (double)(st.packets - p0) * 1000.0 / (double)(t1 - t0),
	       (unsigned long long)(st.packets - p0),
	       (unsigned long long)(t1 - t0));
	fflush(stdout);
	traffic_stop(&t);
	nfqb_pool_stop(the_pool);
	nfqb_pool_wait(the_pool);
	nfqb_pool_destroy(the_pool);
	return 0;
}

static int bench(enum nfqb_pool_mode mode)
{
	static const unsigned int nqs[] = { 1, 2, 4 };
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 3; i++) {
		pid_t pid;
		int status;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(bench_one(mode, nqs[i], 3000));
		if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			ret = 1;
	}
	return ret;
}

static void usage(const char *argv0)
{
	printf("usage: %s [-q FIRST[:LAST]] [-m qpw|dispatch] [-w WORKERS] "
	       "[-u USER] [-l whole|pass] -r RULES\n       %s --demo [-m MODE] "
	       "[-l whole|pass]\n       %s --bench [-m MODE]\n", argv0, argv0,
	       argv0);
}

/* -q FIRST[:LAST] into @o; false if it is not a range of queues. */
static bool parse_queues(const char *arg, struct opts *o)
{
	unsigned int first, last;
	int c = sscanf(arg, "%u:%u", &first, &last);

	if (c < 1 || first > 65535 || (c == 2 &&
	    (last < first || last > 65535)))
		return false;
	o->first = (uint16_t)first;
	o->count = (uint16_t)(c == 2 ? last - first + 1 : 1);
	return true;
}

/* The options into @o. Returns -1 to go on, or the exit status: 0 after
 * --help, 2 on a bad option. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "demo", no_argument, NULL, 'd' },
		{ "bench", no_argument, NULL, 'b' },
		{ "queues", required_argument, NULL, 'q' },
		{ "mode", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "rules", required_argument, NULL, 'r' },
		{ "user", required_argument, NULL, 'u' },
		{ "large", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "dbq:m:w:r:u:l:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->demo = true;
			break;
		case 'b':
			o->bench = true;
			break;
		case 'q':
			if (!parse_queues(optarg, o)) {
				fprintf(stderr, "nfqb-ips: bad queue range\n");
				return 2;
			}
			break;
		case 'm':
			o->mode = strcmp(optarg, "dispatch") ?
				  NFQB_POOL_QUEUE_PER_WORKER : NFQB_POOL_DISPATCH;
			break;
		case 'w':
			o->workers = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o->rules = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'l':
			if (!strcmp(optarg, "whole")) {
				o->large = NFQB_LARGE_WHOLE;
			} else if (!strcmp(optarg, "pass")) {
				o->large = NFQB_LARGE_PASS;
			} else {
				fprintf(stderr, "nfqb-ips: --large: whole or "
					"pass, not %s\n", optarg);
				return 2;
			}
			break;
		default:
			usage(argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { .first = 0, .count = 1, .argv = argv,
			  .large = NFQB_LARGE_WHOLE };
	int ret = parse_args(argc, argv, &o);

	if (ret >= 0)
		return ret;
	install_signals();
	if (o.bench)
		return bench(o.mode);
	if (o.demo)
		return demo(&o);
	if (!o.rules) {
		usage(argv[0]);
		return 2;
	}
	return serve(&o, NULL);
}
