/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: one run. A child process gets its own network namespace (all
 * rules and sockets die with it, also on Ctrl-C), installs the NFQUEUE
 * rule(s), forks the consumer, pins itself and the consumer to different
 * CPUs, runs the traffic (UDP stream, iperf3, or a ping-pong; see
 * nfqb-bench-types.h) and measures.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "nfqb-bench-cons.h"
#include "nfqb-bench-consumers.h"
#include "nfqb-bench-ping.h"
#include "nfqb-bench-proc.h"
#include "nfqb-bench-run.h"
#include "nfqb-bench-tcp.h"
#include "nfqb-bench-traffic.h"

static volatile int run_abort;
static volatile pid_t run_consumer;	/* > 0 while a consumer runs */

static void on_stop(int sig)
{
	(void)sig;
	bench_stop = 1;
}

static void on_abort(int sig)
{
	(void)sig;
	run_abort = 1;
}

/* SIGCHLD: abort the run when the consumer died, not when one of the
 * traffic's helpers (iperf3, echo server) ended */
static void on_chld(int sig)
{
	int saved = errno;
	siginfo_t si;
	pid_t c = run_consumer;

	(void)sig;
	memset(&si, 0, sizeof(si));
	if (c > 0 && waitid(P_PID, (id_t)c, &si,
			    WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == c)
		run_abort = 1;
	errno = saved;
}

static void set_handler(int sig, void (*fn)(int))
{
	/* SA_NOCLDSTOP: drain mode stops the consumer, that is no abort */
	struct sigaction sa = { .sa_handler = fn, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);	/* no SA_RESTART: blocking calls end */
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000;
}

/* --- raw_syscalls:sys_enter, to count a consumer's syscalls ------------- */

static int read_id(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

#define SYS_ENTER_ID "events/raw_syscalls/sys_enter/id"

/*
 * The tracepoint's id is in tracefs. If tracefs is not mounted, mount it in
 * a private mount namespace of a short-lived child: the host is unchanged.
 */
int bench_find_sys_enter_id(void)
{
	int id, pfd[2], st;
	pid_t pid;

	id = read_id("/sys/kernel/tracing/" SYS_ENTER_ID);
	if (id < 0)
		id = read_id("/sys/kernel/debug/tracing/" SYS_ENTER_ID);
	if (id >= 0)
		return id;
	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		id = -1;
		if (unshare(CLONE_NEWNS) == 0 &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		    mount("nodev", "/sys/kernel/tracing", "tracefs", 0,
			  NULL) == 0)
			id = read_id("/sys/kernel/tracing/" SYS_ENTER_ID);
		if (write(pfd[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &id, sizeof(id)) != sizeof(id))
		id = -1;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	return id;
}

static int perf_open_syscalls(int id, pid_t pid)
{
	struct perf_event_attr attr;

	if (id < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = (uint64_t)id;
	attr.disabled = 1;
	attr.inherit = 1;	/* the consumer's threads too */
	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* --- CPU busy time from /proc/stat ---------------------------------------- */

struct cpu_times {
	uint64_t busy, total;
};

static void read_cpu(int cpu, struct cpu_times *ct)
{
	char line[256], name[16];
	FILE *f;

	ct->busy = ct->total = 0;
	if (cpu < 0)
		return;
	f = fopen("/proc/stat", "re");
	if (!f)
		return;
	snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };

		if (strncmp(line, name, strlen(name)))
			continue;
		sscanf(line + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu",
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
		ct->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		ct->busy = ct->total - v[3] - v[4];
		break;
	}
	fclose(f);
}

static double busy_pct(const struct cpu_times *a, const struct cpu_times *b)
{
	if (b->total <= a->total)
		return 0;
	return 100.0 * (double)(b->busy - a->busy) / (double)(b->total - a->total);
}

/* --- network namespace and rules ---------------------------------------- */

static int lo_up(unsigned int mtu)
{
	struct ifreq ifr;
	int fd, ret = -1;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (mtu) {
		ifr.ifr_mtu = (int)mtu;
		if (ioctl(fd, SIOCSIFMTU, &ifr) < 0) {
			close(fd);
			return -1;
		}
	}
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

static int run_iptables(char *const argv[])
{
	const char *env = getenv("NFQB_BENCH_IPTABLES");
	int st, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		if (env)
			execv(env, argv);
		execvp("iptables", argv);
		execv("/usr/sbin/iptables", argv);
		execv("/sbin/iptables", argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/*
 * One NFQUEUE rule in the configured chain:
 *   -p @proto @portopt @port [@addropt @addr] [-m u32 --u32 @u32]
 *   -j NFQUEUE --queue-num @queue
 */
static int add_rule(const struct bench_cfg *cfg, const char *proto,
		    const char *portopt, const char *port, const char *addropt,
		    const char *addr, const char *u32, unsigned int queue)
{
	char qnum[8];
	char *argv[24];
	int n = 0;

	snprintf(qnum, sizeof(qnum), "%u", queue);
	argv[n++] = "iptables";
	argv[n++] = "-A";
	argv[n++] = cfg->hook == BENCH_HOOK_OUTPUT ? "OUTPUT" : "INPUT";
	argv[n++] = "-p";
	argv[n++] = (char *)proto;
	argv[n++] = (char *)portopt;
	argv[n++] = (char *)port;
	if (addropt) {
		argv[n++] = (char *)addropt;
		argv[n++] = (char *)addr;
	}
	if (u32) {
		argv[n++] = "-m";
		argv[n++] = "u32";
		argv[n++] = "--u32";
		argv[n++] = (char *)u32;
	}
	argv[n++] = "-j";
	argv[n++] = "NFQUEUE";
	argv[n++] = "--queue-num";
	argv[n++] = qnum;
	argv[n] = NULL;
	return run_iptables(argv);
}

/*
 * UDP (stream and ping-pong): one queue takes every datagram to the port(s)
 * from 127/8; two queues split the flows by source address, 127.0.1.x to
 * queue 0 and 127.0.2.x to queue 1. With both_ways, the replies (from the
 * port) are queued too, split by their destination address.
 */
static int add_udp_rules(const struct bench_cfg *cfg, unsigned int queues,
			 const char *dports, const char *sport)
{
	static const char *const split[2] = { "127.0.1.0/24", "127.0.2.0/24" };
	unsigned int i;

	if (queues == 1) {
		if (add_rule(cfg, "udp", "--dport", dports, "-s",
			     "127.0.0.0/8", NULL, 0) < 0)
			return -1;
		return sport ? add_rule(cfg, "udp", "--sport", sport, "-d",
					"127.0.0.0/8", NULL, 0) : 0;
	}
	for (i = 0; i < 2; i++) {
		if (add_rule(cfg, "udp", "--dport", dports, "-s", split[i],
			     NULL, i) < 0)
			return -1;
		if (sport && add_rule(cfg, "udp", "--sport", sport, "-d",
				      split[i], NULL, i) < 0)
			return -1;
	}
	return 0;
}

/*
 * TCP (iperf3, ping-pong): every segment to the server port; with
 * both_ways also those from it. All connections share the addresses, so
 * two queues split them by the client port's lowest bit (u32 match: even
 * ports to queue 0, odd to queue 1); iperf3 --cport numbers the streams
 * from an even port up, so they alternate.
 */
#define U32_SPORT_EVEN	"0>>22&0x3C@0>>16&0x1=0"
#define U32_DPORT_EVEN	"0>>22&0x3C@0&0x1=0"

static int add_tcp_rules(const struct bench_cfg *cfg, unsigned int queues,
			 unsigned int port)
{
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	if (queues == 1) {
		if (add_rule(cfg, "tcp", "--dport", p, NULL, NULL, NULL, 0) < 0)
			return -1;
		return cfg->both_ways ? add_rule(cfg, "tcp", "--sport", p,
						 NULL, NULL, NULL, 0) : 0;
	}
	if (add_rule(cfg, "tcp", "--dport", p, NULL, NULL, U32_SPORT_EVEN,
		     0) < 0 ||
	    add_rule(cfg, "tcp", "--dport", p, NULL, NULL, NULL, 1) < 0)
		return -1;
	if (!cfg->both_ways)
		return 0;
	if (add_rule(cfg, "tcp", "--sport", p, NULL, NULL, U32_DPORT_EVEN,
		     0) < 0 ||
	    add_rule(cfg, "tcp", "--sport", p, NULL, NULL, NULL, 1) < 0)
		return -1;
	return 0;
}

static int add_rules(const struct bench_cfg *cfg, unsigned int queues)
{
	char dports[16], sport[8];

	if (queues == 0)
		return 0;
	switch (cfg->work) {
	case BENCH_WORK_TCP:
		return add_tcp_rules(cfg, queues, BENCH_TCP_PORT);
	case BENCH_WORK_PING_TCP:
		return add_tcp_rules(cfg, queues, BENCH_PING_PORT);
	case BENCH_WORK_PING_UDP:
		snprintf(dports, sizeof(dports), "%u:%u", BENCH_LOAD_PORT,
			 BENCH_PORT);
		snprintf(sport, sizeof(sport), "%u", BENCH_PORT);
		return add_udp_rules(cfg, queues, dports,
				     cfg->both_ways ? sport : NULL);
	case BENCH_WORK_UDP:
	default:
		snprintf(dports, sizeof(dports), "%u", BENCH_PORT);
		return add_udp_rules(cfg, queues, dports, NULL);
	}
}

/* the kernel's drop counters of every bound queue of this namespace */
static void read_kq(uint64_t *dropped, uint64_t *user_dropped)
{
	char line[256];
	FILE *f;

	*dropped = *user_dropped = 0;
	f = fopen("/proc/net/netfilter/nfnetlink_queue", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int v[8];

		if (sscanf(line, "%u %u %u %u %u %u %u %u", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			*dropped += v[5];
			*user_dropped += v[6];
		}
	}
	fclose(f);
}

/* --- the consumer process ------------------------------------------------ */

static void consumer_main(const struct bench_cfg *cfg, enum bench_kind kind,
			  struct bench_cons *c)
{
	int rc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	set_handler(SIGTERM, on_stop);
	set_handler(SIGINT, on_stop);
	signal(SIGCHLD, SIG_DFL);
	if (pin_cpu(cfg->cpu_consumer) < 0) {
		bench_cons_fail(c, "sched_setaffinity", errno);
		_exit(1);
	}
	while (!__atomic_load_n(&c->start, __ATOMIC_ACQUIRE) && !bench_stop)
		usleep(1000);
	rc = bench_consumers[kind].run(cfg, c);
	_exit(rc < 0 ? 1 : 0);
}

static int wait_ready(struct bench_cons *c, pid_t pid)
{
	double t0 = bench_now();
	int st;

	while (!__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE)) {
		if (c->failed || waitpid(pid, &st, WNOHANG) == pid ||
		    bench_now() - t0 > 10 || run_abort)
			return -1;
		usleep(1000);
	}
	return 0;
}

/* Ask the consumer to stop (again and again: a signal may land just
 * before a blocking call), then reap it. */
static int stop_consumer(pid_t pid, struct rusage *ru, int *status)
{
	double t0 = bench_now();
	pid_t r;

	for (;;) {
		kill(pid, SIGTERM);
		usleep(2000);
		r = wait4(pid, status, WNOHANG, ru);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (bench_now() - t0 > 5) {
			kill(pid, SIGKILL);
			wait4(pid, status, 0, ru);
			return -1;
		}
	}
}

/* --- one run ------------------------------------------------------------ */

#define RUN_ERR(res, ...)	snprintf((res)->err, sizeof((res)->err), \
					 __VA_ARGS__)

/* The run failed: stop the consumer, if any (its error added to the
 * run's), and end the run process. */
static void __attribute__((noreturn)) run_failed(struct bench_result *res,
						 pid_t cpid)
{
	struct bench_cons *c = &res->cons;
	struct rusage ru;
	int st;

	if (cpid > 0) {
		signal(SIGCHLD, SIG_DFL);
		stop_consumer(cpid, &ru, &st);
		if (c->failed && !strstr(res->err, c->err)) {
			size_t l = strlen(res->err);

			snprintf(res->err + l, sizeof(res->err) - l,
				 " (consumer: %s)", c->err);
		}
	}
	res->failed = 1;
	res->done = 1;
	_exit(1);
}

/* the namespace, its loopback and rules, the priorities: 0 or -1 */
static int run_setup(const struct bench_cfg *cfg,
		     const struct bench_consumer *bc, struct bench_result *res)
{
	bool tcp = cfg->work == BENCH_WORK_TCP ||
		   cfg->work == BENCH_WORK_PING_TCP;

	/* inherited by the consumer */
	if (cfg->nice && setpriority(PRIO_PROCESS, 0, cfg->nice) < 0) {
		RUN_ERR(res, "setpriority: %s", strerror(errno));
		return -1;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		RUN_ERR(res, "unshare(CLONE_NEWNET): %s", strerror(errno));
		return -1;
	}
	/* the MTU only shapes the TCP runs (segment size, GSO) */
	if (lo_up(cfg->work == BENCH_WORK_TCP ? cfg->mtu : 0) < 0) {
		RUN_ERR(res, "lo up (mtu %u): %s", cfg->mtu, strerror(errno));
		return -1;
	}
	if (add_rules(cfg, bc->queues) < 0) {
		RUN_ERR(res, "iptables failed%s", bc->queues > 1 && tcp ?
			" (the 2-queue TCP split needs the u32 match)" : "");
		return -1;
	}
	/* after iptables: inherited by the consumer only */
	if (cfg->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = cfg->rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			RUN_ERR(res, "sched_setscheduler: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Fork the consumer (*cpid; none without a queue) and wait until it is
 * ready: 0, or -1 (*cpid > 0: it runs and must be stopped). */
static int start_consumer(const struct bench_cfg *cfg, enum bench_kind kind,
			  struct bench_result *res, pid_t *cpid, int *perf_fd)
{
	struct bench_cons *c = &res->cons;

	*cpid = -1;
	if (!bench_consumers[kind].queues)
		return 0;
	set_handler(SIGCHLD, on_chld);	/* consumer died: abort */
	*cpid = fork();
	if (*cpid < 0) {
		RUN_ERR(res, "fork: %s", strerror(errno));
		return -1;
	}
	if (*cpid == 0)
		consumer_main(cfg, kind, c);
	run_consumer = *cpid;
	*perf_fd = perf_open_syscalls(cfg->sys_enter_id, *cpid);
	__atomic_store_n(&c->start, 1, __ATOMIC_RELEASE);
	if (wait_ready(c, *cpid) < 0) {
		RUN_ERR(res, "consumer did not start: %s",
			c->failed ? c->err : "no reason given");
		return -1;
	}
	return 0;
}

/* CPU use of the traffic process (and its helpers) and of both CPUs */
struct usage {
	struct cpu_times traffic, consumer;
	struct rusage self, children;
};

static void usage_now(const struct bench_cfg *cfg, struct usage *u)
{
	getrusage(RUSAGE_SELF, &u->self);
	getrusage(RUSAGE_CHILDREN, &u->children);	/* reaped helpers */
	read_cpu(cfg->cpu_traffic, &u->traffic);
	read_cpu(cfg->cpu_consumer, &u->consumer);
}

static void usage_since(const struct usage *a, const struct usage *b,
			struct bench_result *res)
{
	res->traffic_user_ns = tv_ns(&b->self.ru_utime) -
			       tv_ns(&a->self.ru_utime) +
			       tv_ns(&b->children.ru_utime) -
			       tv_ns(&a->children.ru_utime);
	res->traffic_sys_ns = tv_ns(&b->self.ru_stime) -
			      tv_ns(&a->self.ru_stime) +
			      tv_ns(&b->children.ru_stime) -
			      tv_ns(&a->children.ru_stime);
	res->busy_traffic = busy_pct(&a->traffic, &b->traffic);
	res->busy_consumer = busy_pct(&a->consumer, &b->consumer);
}

/* the run's work, its syscalls counted on @perf_fd: 0 or -1 */
static int run_work(const struct bench_cfg *cfg, enum bench_kind kind,
		    pid_t cpid, int perf_fd, struct bench_traffic *t,
		    struct bench_result *res)
{
	const struct bench_consumer *bc = &bench_consumers[kind];
	struct usage u0, u1;
	uint64_t v;
	int ret;

	usage_now(cfg, &u0);
	if (perf_fd >= 0)
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	memset(t, 0, sizeof(*t));
	if (cfg->work == BENCH_WORK_UDP)
		ret = bench_traffic(cfg, bc->drops, bc->marks, cpid, &run_abort,
				    t, res->err, sizeof(res->err));
	else if (cfg->work == BENCH_WORK_TCP)
		ret = bench_tcp(cfg, &run_abort, res);
	else
		ret = bench_ping(cfg, &run_abort, res);
	if (ret < 0)
		return -1;
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &v, sizeof(v)) == sizeof(v))
			res->syscalls = (int64_t)v;
	}
	usage_now(cfg, &u1);
	read_kq(&res->kq_dropped, &res->kq_user_dropped);
	usage_since(&u0, &u1, res);
	return 0;
}

/* what the traffic process counted, and what went wrong */
static void traffic_result(const struct bench_cfg *cfg,
			   const struct bench_traffic *t,
			   struct bench_result *res)
{
	if (cfg->work == BENCH_WORK_UDP) {
		res->sent = t->sent;
		res->expected = t->expected;
		res->delivered = t->delivered;
		res->lost = t->expected - t->delivered;
		res->dups = t->dups;
		res->wrong_verdict = t->wrong_verdict;
		res->bad_mark = t->bad_mark;
		res->elapsed = t->elapsed;
		res->pps = t->elapsed > 0 ? t->sent / t->elapsed : 0;
	}
	if (t->bad_mark)
		RUN_ERR(res, "%llu wrong marks, first: datagram %llu mark 0x%x, "
			"expected 0x%x", (unsigned long long)t->bad_mark,
			(unsigned long long)t->first_bad_seq,
			t->first_bad_mark, t->first_bad_expected);
	if (t->wrong_verdict)
		RUN_ERR(res, "%llu datagrams delivered that had to be dropped",
			(unsigned long long)t->wrong_verdict);
	if (t->stalled)
		RUN_ERR(res, "stalled: %llu datagrams missing",
			(unsigned long long)res->lost);
	else if (t->timed_out)
		RUN_ERR(res, "timed out after %.0f s", cfg->timeout);
	/* TCP takes a queue drop as congestion and sends again: reported
	 * (and counted against the no-loss target), not a failed run */
	if ((res->kq_dropped || res->kq_user_dropped) && !res->err[0] &&
	    cfg->work != BENCH_WORK_TCP)
		RUN_ERR(res, "kernel queue dropped %llu (queue full) + %llu "
			"(socket full)", (unsigned long long)res->kq_dropped,
			(unsigned long long)res->kq_user_dropped);
}

/* stop the consumer and take its CPU time and memory: 0 or -1 */
static int end_consumer(pid_t cpid, struct bench_result *res)
{
	struct bench_cons *c = &res->cons;
	struct rusage ru;
	int st = 0;

	signal(SIGCHLD, SIG_DFL);
	if (stop_consumer(cpid, &ru, &st) < 0) {
		RUN_ERR(res, "consumer did not stop");
		return -1;
	}
	res->cons_user_ns = tv_ns(&ru.ru_utime);
	res->cons_sys_ns = tv_ns(&ru.ru_stime);
	/* a Python consumer's start and exit are not per packet */
	res->cons_user_ns -= c->outside_user_ns < res->cons_user_ns ?
			     c->outside_user_ns : res->cons_user_ns;
	res->cons_sys_ns -= c->outside_sys_ns < res->cons_sys_ns ?
			    c->outside_sys_ns : res->cons_sys_ns;
	res->cons_maxrss_kb = ru.ru_maxrss;
	run_consumer = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || c->failed) {
		RUN_ERR(res, "consumer failed: %s",
			c->failed ? c->err : "abnormal exit");
		return -1;
	}
	return 0;
}

static bool run_lost(const struct bench_cfg *cfg,
		     const struct bench_traffic *t,
		     const struct bench_result *res)
{
	return t->stalled || t->timed_out || res->lost || res->dups ||
	       res->wrong_verdict || res->bad_mark ||
	       ((res->kq_dropped || res->kq_user_dropped) &&
		cfg->work != BENCH_WORK_TCP) || res->ping_lost ||
	       res->load_sent != res->load_delivered;
}

static void run_child(const struct bench_cfg *cfg, enum bench_kind kind,
		      struct bench_result *res)
{
	struct bench_traffic t;
	int perf_fd = -1;
	pid_t cpid;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	set_handler(SIGINT, on_abort);
	set_handler(SIGTERM, on_abort);
	res->syscalls = -1;
	if (run_setup(cfg, &bench_consumers[kind], res) < 0)
		run_failed(res, -1);
	if (start_consumer(cfg, kind, res, &cpid, &perf_fd) < 0)
		run_failed(res, cpid);
	if (pin_cpu(cfg->cpu_traffic) < 0) {
		RUN_ERR(res, "sched_setaffinity: %s", strerror(errno));
		run_failed(res, cpid);
	}
	if (run_work(cfg, kind, cpid, perf_fd, &t, res) < 0)
		run_failed(res, cpid);
	traffic_result(cfg, &t, res);
	if (cpid > 0 && end_consumer(cpid, res) < 0)
		run_failed(res, -1);
	if (run_lost(cfg, &t, res))
		res->failed = 1;
	res->done = 1;
	_exit(0);
}

int bench_run(const struct bench_cfg *cfg, enum bench_kind kind,
	      struct bench_result *res)
{
	int st;
	pid_t pid, r;

	memset(res, 0, sizeof(*res));
	res->kind = kind;
	res->payload = cfg->payload;
	res->drain = cfg->drain;
	res->work = cfg->work;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		run_child(cfg, kind, res);
	for (;;) {
		r = waitpid(pid, &st, 0);
		if (r >= 0 || errno != EINTR)
			break;
		/* interrupted (SIGINT/SIGTERM to us only): end the run too */
		kill(pid, SIGTERM);
	}
	if (!res->done) {
		res->failed = 1;
		if (!res->err[0])
			snprintf(res->err, sizeof(res->err),
				 "run process died");
	}
	return res->failed ? -1 : 0;
}
