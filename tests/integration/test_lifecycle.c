// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lifecycle without loss (issue 12), against the real kernel, each test in
 * its own network namespace:
 *
 * - stop under load, with and without --queue-bypass, through the pool and
 *   through nfqb_queue_close(): every packet queued to us before the stop
 *   gets a verdict (the receiver's per-sequence record has no hole, the
 *   kernel's queue_dropped and queue_user_dropped stay 0);
 * - handover under load, ten times in a row: this program re-executes
 *   itself as a consumer (--upgrade-helper), which adopts the queue's
 *   socket, decides with its own mark, and on SIGUSR2 detaches and
 *   exec()s itself again with the next mark; the receiver checks with
 *   SO_RCVMARK that every packet arrived exactly once, marked by exactly
 *   one process, and the kernel's counters that none was dropped;
 * - the same with ips/nfqb-ips (SIGUSR2, --user nobody), with the pool in
 *   a process (both modes), after a consumer was killed holding packets
 *   (its successor defaults exactly those), and with this test as the
 *   service manager of nfqb-ips (fd store, SIGKILL, restart);
 * - overload: every datagram accounted for, with and without fail-open,
 *   both ENOBUFS policies, recovery time reported;
 * - privilege drop: nobody with CAP_NET_ADMIN alone goes on; without it,
 *   EPERM; nfqb-verdict --user.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <sys/socket.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libnfq-batch/pool.h>

#include "harness.h"
#include "../../utils/nfqb-privdrop.h"

#define PORT		5401
#define QNUM		7
#define WINDOW		256
#define MAX_SEQ		60000u
#define APP_MARK	0x11

/* --- traffic with a window the test can open ----------------------------- */

/* Numbered datagrams to PORT from @src (host order; 0: 127.0.0.1), at
 * most WINDOW ahead of @rx (nfqbt_tx_unwindow() lifts that), until
 * stopped, MAX_SEQ or 25 s. */
static struct nfqbt_tx *sender_from(struct nfqbt_rx *rx, uint32_t src)
{
	struct nfqbt_tx_opts o = {
		.port = PORT,
		.src = src,
		.count = MAX_SEQ,
		.window = WINDOW,
		.progress = nfqbt_rx_total_ptr(rx),
		.timeout_ms = 25000,
	};

	return nfqbt_tx_start(&o);
}

static struct nfqbt_tx *sender_start(struct nfqbt_rx *rx)
{
	return sender_from(rx, 0);
}

/* --- the kernel's counters while the queue is bound ----------------------- */

struct kmon {
	pthread_t thread;
	atomic_bool stop;
	atomic_bool seen;	/* the queue was listed at least once */
	atomic_uint queue_dropped, user_dropped, id_sequence;
};

/* Polls /proc until told to stop; keeps the last values seen while the
 * queue was bound (it disappears at the unbind). */
static void *kmon_main(void *arg)
{
	struct kmon *m = arg;
	uint64_t start = nfqbt_now_ms();

	while (!atomic_load(&m->stop) && nfqbt_now_ms() - start < 30000) {
		struct nfqb_kstats ks;

		if (nfqb_kstats_get(QNUM, &ks, sizeof(ks)) == 0) {
			atomic_store(&m->queue_dropped, ks.queue_dropped);
			atomic_store(&m->user_dropped, ks.queue_user_dropped);
			atomic_store(&m->id_sequence, ks.id_sequence);
			atomic_store(&m->seen, true);
		}
		usleep(200);
	}
	return NULL;
}

/* --- stop under load ------------------------------------------------------- */

static atomic_uchar app_seen[MAX_SEQ];
static atomic_uint app_count;

static int pool_cb(struct nfqb_packet *p, void *policy, void *data,
		   struct nfqb_verdict *v)
{
	uint32_t seq;

	(void)policy;
	(void)data;
	/* slower than the sender: its window (256) waits in the socket and
	 * in the kernel queue when the stop comes */
	usleep(20);
	if (nfqbt_pkt_seq(p, &seq) && seq < MAX_SEQ)
		atomic_fetch_add(&app_seen[seq], 1);
	atomic_fetch_add(&app_count, 1);
	v->verdict = NFQB_ACCEPT;
	v->flags = NFQB_V_MARK;
	v->mark = APP_MARK;
	return NFQB_POOL_VERDICT;
}

static int cons_decide(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)data;
	if (seq < MAX_SEQ)
		atomic_fetch_add(&app_seen[seq], 1);
	atomic_fetch_add(&app_count, 1);
	return nfqb_verdict_mark(p, NFQB_ACCEPT, APP_MARK);
}

/*
 * Traffic (window 256 ahead of the receiver) to a queue whose consumer
 * accepts with APP_MARK, default verdict accept; once 5000 arrived, the
 * consumer stops while the sender keeps going. Then, per sequence number:
 * - a packet the application decided arrived once, with its mark;
 * - no hole: the arrivals are seqs 0..K-1, each exactly once; without
 *   bypass, nothing after K (dropped after the unbind: the rule's
 *   choice), and K < sent (the unbind happened under load); with bypass,
 *   K == sent;
 * - the kernel dropped nothing while we were bound.
 */
static void stop_under_load(bool bypass, bool pool_api)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 500, .max_seq = MAX_SEQ };
	struct nfqbt_tx *tx;
	struct kmon m = { 0 };
	struct nfqb_pool *pool = NULL;
	struct nfqb_queue *q = NULL;
	struct nfqb_stats st = { 0 };
	struct nfqbt_rx *rx;
	unsigned int sent, k, i, marked = 0, unmarked = 0, kq;
	uint64_t t0;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, bypass);
	rx = nfqbt_rx_start(PORT, &ro);
	if (pool_api) {
		struct nfqb_pool_config cfg = {
			.queue_first = QNUM,
			.queue_count = 1,
			.rcvbuf = 4 << 20,
			.cb = pool_cb,
		};

		pool = nfqb_pool_create(&cfg, sizeof(cfg));
		ck_assert_msg(pool, "pool: %s", strerror(errno));
		ck_assert(nfqb_pool_start(pool) == 0);
	} else {
		q = nfqbt_queue_open(QNUM);
		ck_assert(nfqb_queue_set_rcvbuf(q, 4 << 20) == 0);
	}
	ck_assert(pthread_create(&m.thread, NULL, kmon_main, &m) == 0);
	tx = sender_start(rx);

	if (pool_api) {
		ck_assert(nfqbt_rx_wait_total(rx, 5000, 15000));
		kq = nfqbt_kstats(QNUM).queue_total;
		nfqb_pool_stop(pool);
		t0 = nfqbt_now_ms();
		ck_assert_msg(nfqb_pool_wait(pool) == 0, "wait: %s",
			      strerror(errno));
		nfqb_pool_queue_stats(pool, 0, &st, sizeof(st));
	} else {
		struct nfqbt_cons c;

		nfqbt_cons_init(&c, q, cons_decide, NULL);
		t0 = nfqbt_now_ms();
		while (nfqbt_rx_total(rx) < 5000 && nfqbt_now_ms() - t0 < 15000)
			nfqbt_cons_run(&c, 64, 100);
		ck_assert(nfqbt_rx_total(rx) >= 5000);
		/* not reading: the sender's window fills the socket */
		ck_assert(nfqbt_wait_kqueue_total(QNUM, WINDOW / 2, 10000));
		st = nfqbt_queue_stats(q);
		kq = nfqbt_kstats(QNUM).queue_total;
		t0 = nfqbt_now_ms();
		ck_assert_msg(nfqb_queue_close(q) == 0, "close: %s",
			      strerror(errno));
		/* close counts its defaults in the queue it frees: what
		 * it defaulted is what arrived unmarked before K (below) */
		st.defaults = 0;
	}
	printf("stop (%s, %s): stop took %llu ms, %u sent so far, %u in "
	       "the kernel queue just before\n",
	       pool_api ? "pool" : "queue", bypass ? "bypass" : "no bypass",
	       (unsigned long long)(nfqbt_now_ms() - t0),
	       nfqbt_tx_sent(tx), kq);
	atomic_store(&m.stop, true);
	pthread_join(m.thread, NULL);
	if (!bypass) {
		/* the rest is dropped (the window would wait for ever):
		 * send on a little without it */
		unsigned int now = nfqbt_tx_sent(tx);

		nfqbt_tx_unwindow(tx);
		t0 = nfqbt_now_ms();
		while (nfqbt_tx_sent(tx) < now + 1000 &&
		       nfqbt_now_ms() - t0 < 10000)
			usleep(1000);
	} else {
		ck_assert(nfqbt_rx_wait_total(rx, 20000, 15000));
	}
	/* with bypass, what is in flight arrives */
	sent = bypass ? nfqbt_tx_finish(tx, rx) : nfqbt_tx_stop(tx);
	nfqbt_rx_stop(rx);

	ck_assert(atomic_load(&m.seen));
	ck_assert_msg(atomic_load(&m.queue_dropped) == 0 &&
		      atomic_load(&m.user_dropped) == 0,
		      "kernel dropped %u (queue full) + %u (socket full)",
		      atomic_load(&m.queue_dropped),
		      atomic_load(&m.user_dropped));
	/* K: one past the last seq that arrived */
	for (k = sent; k > 0 && !nfqbt_rx_count(rx, k - 1); k--)
		;
	/* The packets queued to us before the stop: those the kernel gave
	 * an id, seqs 0 .. id_sequence - 1 (one sender, the hook runs in
	 * its sendto(), no drop before: checked above; the ids stop at the
	 * queue length 0 of the stop, and the last value seen is at most
	 * the final one). Every one of them arrived (below: exactly once). */
	ck_assert_msg(k >= atomic_load(&m.id_sequence), "queued before the "
		      "stop: %u, arrived: seqs below %u only",
		      atomic_load(&m.id_sequence), k);
	for (i = 0; i < sent; i++) {
		unsigned int n = nfqbt_rx_count(rx, i);
		uint32_t mark = 0;

		if (i >= k) {
			ck_assert(n == 0);
			continue;
		}
		ck_assert_msg(n == 1, "seq %u of %u (K %u) arrived %u times",
			      i, sent, k, n);
		nfqbt_rx_mark(rx, i, &mark);
		if (atomic_load(&app_seen[i])) {
			ck_assert_msg(atomic_load(&app_seen[i]) == 1 &&
				      mark == APP_MARK,
				      "seq %u: decided %u times, mark %#x", i,
				      atomic_load(&app_seen[i]), mark);
			marked++;
		} else {
			ck_assert_msg(mark == 0, "seq %u: mark %#x, not decided",
				      i, mark);
			unmarked++;
		}
	}
	ck_assert_uint_eq(marked, atomic_load(&app_count));
	ck_assert_uint_eq(nfqbt_rx_bad(rx), 0);
	if (bypass)
		ck_assert_uint_eq(k, sent);
	else
		ck_assert_msg(k < sent, "the unbind was not under load");
	/* the library's defaults are among the unmarked arrivals (the rest
	 * passed by fail-open after queue length 0, or by bypass) */
	ck_assert_uint_ge(unmarked, (unsigned int)st.defaults);
	printf("  sent %u, arrived %u: decided by the application %u, "
	       "unmarked %u (library defaults %llu), dropped after the "
	       "unbind %u; kernel: queue_dropped %u, user_dropped %u, last id "
	       "%u\n", sent, k, marked, unmarked,
	       (unsigned long long)st.defaults, sent - k,
	       atomic_load(&m.queue_dropped), atomic_load(&m.user_dropped),
	       atomic_load(&m.id_sequence));
	nfqbt_rx_free(rx);
	nfqb_pool_destroy(pool);
}

START_TEST(test_stop_pool_bypass)
{
	stop_under_load(true, true);
}
END_TEST

START_TEST(test_stop_pool_no_bypass)
{
	stop_under_load(false, true);
}
END_TEST

START_TEST(test_stop_queue_no_bypass)
{
	stop_under_load(false, false);
}
END_TEST

/* --- handover across exec(), ten times under load -------------------------- */

#define UPGRADES	10
/* The handover test case's timeout (ten exec()s, ten upgrades) */
#define HANDOVER_TIMEOUT	90

static struct nfqb_queue *helper_q;
static volatile sig_atomic_t helper_upgrade, helper_quit;

static void helper_signal(int sig)
{
	if (sig == SIGUSR2)
		helper_upgrade = 1;
	else
		helper_quit = 1;
	if (helper_q)
		nfqb_queue_interrupt(helper_q);
}

static void say(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(fd, line, (size_t)n) != n)
		_exit(3);
}

/*
 * The consumer process: adopt queue @num on socket @fd, accept every packet
 * with mark @gen; on SIGUSR2 hand the queue on to a new image of itself
 * (mark @gen + 1), on SIGTERM close it. Reports on @status: "ready G",
 * "done G COUNT", or "fail G ERRNO".
 */
static int helper_main(int fd, uint16_t num, uint32_t gen, int status)
{
	struct sigaction sa = { .sa_handler = helper_signal };
	struct nfqb_packet *vec[64];
	unsigned long long count = 0;
	sigset_t set;
	char a[4][16], *args[7];

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	helper_q = nfqb_queue_adopt(fd, num);
	if (!helper_q) {
		say(status, "fail %u %d\n", gen, errno);
		return 1;
	}
	/* blocked by the test before the first exec, and across each
	 * exec: none is lost before the handler is there */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	say(status, "ready %u\n", gen);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!helper_upgrade && !helper_quit) {
		int i, n = nfqb_recv(helper_q, vec, 64);

		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			say(status, "fail %u %d\n", gen, errno);
			return 1;
		}
		for (i = 0; i < n; i++)
			if (nfqb_verdict_mark(vec[i], NFQB_ACCEPT, gen) == 0)
				count++;
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (helper_quit) {
		say(status, "done %u %llu\n", gen, count);
		return nfqb_queue_close(helper_q) == 0 ? 0 : 2;
	}
	for (;;) {
		int i, n;

		fd = nfqb_queue_detach(helper_q);
		if (fd >= 0)
			break;
		if (errno != EBUSY) {
			say(status, "fail %u %d\n", gen, errno);
			return 1;
		}
		/* packets read and not handed out yet: ours to decide */
		n = nfqb_recv(helper_q, vec, 64);
		for (i = 0; i < n; i++)
			if (nfqb_verdict_mark(vec[i], NFQB_ACCEPT, gen) == 0)
				count++;
	}
	say(status, "done %u %llu\n", gen, count);
	fcntl(fd, F_SETFD, 0);
	snprintf(a[0], sizeof(a[0]), "%d", fd);
	snprintf(a[1], sizeof(a[1]), "%u", num);
	snprintf(a[2], sizeof(a[2]), "%u", gen + 1);
	snprintf(a[3], sizeof(a[3]), "%d", status);
	args[0] = "test_lifecycle";
	args[1] = "--upgrade-helper";
	args[2] = a[0];
	args[3] = a[1];
	args[4] = a[2];
	args[5] = a[3];
	args[6] = NULL;
	execv("/proc/self/exe", args);
	say(status, "fail %u %d\n", gen, errno);
	return 1;
}

/* Queue QNUM bound with a 4 MiB socket buffer, given up at once: the
 * socket, for a process to adopt. */
static int bound_socket(void)
{
	struct nfqb_queue *q = nfqbt_queue_open(QNUM);
	int fd;

	ck_assert(nfqb_queue_set_rcvbuf(q, 4 << 20) == 0);
	fd = nfqb_queue_detach(q);
	ck_assert_msg(fd >= 0, "detach: %s", strerror(errno));
	return fd;
}

/* A handover test's start: the namespace, the rule (no bypass), the
 * receiver, queue QNUM bound on a socket given up at once (*@fd, for the
 * next process) and a pipe (@pfd) to hear from that process. */
static struct nfqbt_rx *handover_start(const struct nfqbt_rx_opts *ro,
				       int *fd, int pfd[2])
{
	struct nfqbt_rx *rx;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	rx = nfqbt_rx_start(PORT, ro);
	*fd = bound_socket();
	ck_assert(pipe(pfd) == 0);
	return rx;
}

/* The end of a handover test: the kernel dropped nothing and gave out
 * @sent ids (one queue throughout), and each of the @sent datagrams
 * arrived exactly once, nothing else. */
static void assert_all_once(const struct nfqbt_rx *rx,
			    const struct nfqb_kstats *ks, unsigned int sent)
{
	ck_assert_uint_eq(ks->queue_dropped, 0);
	ck_assert_uint_eq(ks->queue_user_dropped, 0);
	ck_assert_uint_eq(ks->id_sequence, sent);
	nfqbt_rx_assert_exact(rx, 0, sent, NULL, NULL);
}

/* Wait for child @pid (@what), which must have exited with status 0. */
static void assert_exited_0(pid_t pid, const char *what)
{
	int status;

	ck_assert(waitpid(pid, &status, 0) == pid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status),
		      "%s status %#x", what, status);
}

/* Read one line from the helper (bounded wait). */
static void read_line(FILE *f, char *buf, size_t size)
{
	struct pollfd pfd = { .fd = fileno(f), .events = POLLIN };

	ck_assert_msg(poll(&pfd, 1, 10000) == 1, "helper silent");
	ck_assert_msg(fgets(buf, (int)size, f), "helper gone");
}

START_TEST(test_handover_exec_x10)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 2000, .max_seq = MAX_SEQ };
	unsigned long long per_gen[UPGRADES + 2] = { 0 };
	unsigned int got[UPGRADES + 2] = { 0 };
	struct nfqbt_tx *tx;
	struct nfqb_kstats ks;
	struct nfqbt_rx *rx;
	char line[128];
	unsigned int g, i, sent;
	int fd, pfd[2];
	sigset_t set;
	pid_t pid;
	FILE *f;

	/* generation 0: this process binds the queue and hands it on */
	rx = handover_start(&ro, &fd, pfd);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		char a[4][16];

		pthread_sigmask(SIG_BLOCK, &set, NULL);
		close(pfd[0]);
		fcntl(fd, F_SETFD, 0);
		snprintf(a[0], sizeof(a[0]), "%d", fd);
		snprintf(a[1], sizeof(a[1]), "%u", QNUM);
		snprintf(a[2], sizeof(a[2]), "%u", 1u);
		snprintf(a[3], sizeof(a[3]), "%d", pfd[1]);
		execl("/proc/self/exe", "test_lifecycle", "--upgrade-helper",
		      a[0], a[1], a[2], a[3], (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	close(fd);	/* the helper's now: the binding lives on with it */
	f = fdopen(pfd[0], "r");
	ck_assert(f);
	setvbuf(f, NULL, _IONBF, 0);	/* poll() sees what fgets() has not */
	read_line(f, line, sizeof(line));
	ck_assert_msg(!strcmp(line, "ready 1\n"), "helper: %s", line);

	tx = sender_start(rx);
	for (g = 1; g <= UPGRADES; g++) {
		unsigned int gg;
		unsigned long long c;

		nfqbt_rx_assert_more(rx, 1000, "traffic");
		ck_assert(kill(pid, SIGUSR2) == 0);
		read_line(f, line, sizeof(line));
		ck_assert_msg(sscanf(line, "done %u %llu", &gg, &c) == 2 &&
			      gg == g, "helper: %s", line);
		per_gen[g] = c;
		read_line(f, line, sizeof(line));
		ck_assert_msg(sscanf(line, "ready %u", &gg) == 1 &&
			      gg == g + 1, "helper: %s", line);
		/* the sender was still going: this was under load */
		ck_assert(nfqbt_tx_sent(tx) < MAX_SEQ);
	}
	nfqbt_rx_assert_more(rx, 1000, "traffic");
	sent = nfqbt_tx_finish(tx, rx);
	/* still bound, by the last helper: the kernel's account */
	ks = nfqbt_kstats(QNUM);
	ck_assert(kill(pid, SIGTERM) == 0);
	read_line(f, line, sizeof(line));
	ck_assert_msg(sscanf(line, "done %u %llu", &g, &per_gen[UPGRADES + 1])
		      == 2 && g == UPGRADES + 1, "helper: %s", line);
	assert_exited_0(pid, "helper");
	fclose(f);
	nfqbt_rx_stop(rx);

	ck_assert_uint_eq(ks.queue_total, 0);
	assert_all_once(rx, &ks, sent);
	for (i = 0; i < sent; i++) {
		uint32_t mark = 0;

		ck_assert_msg(nfqbt_rx_mark(rx, i, &mark) && mark >= 1 &&
			      mark <= UPGRADES + 1, "seq %u: mark %u", i,
			      mark);
		got[mark]++;
	}
	for (g = 1; g <= UPGRADES + 1; g++) {
		ck_assert_msg(got[g] == per_gen[g], "process %u decided %llu, "
			      "%u arrived with its mark", g, per_gen[g],
			      got[g]);
		printf("%s%u", g == 1 ? "handover x10: per process: " : " ",
		       got[g]);
	}
	printf("; sent %u, arrived %u once each, kernel dropped 0, last id "
	       "%u\n", sent, sent, ks.id_sequence);
	nfqbt_rx_free(rx);
}
END_TEST

/* --- pool handover within a process, both modes ------------------------------ */

static int gen_cb(struct nfqb_packet *p, void *policy, void *data,
		  struct nfqb_verdict *v)
{
	(void)p;
	(void)policy;
	v->verdict = NFQB_ACCEPT;
	v->flags = NFQB_V_MARK;
	v->mark = (uint32_t)(uintptr_t)data;
	return NFQB_POOL_VERDICT;
}

/* Five handovers under load from one pool to the next (each pool marks
 * with its generation): every packet once, marked by exactly one pool,
 * none defaulted, none dropped by the kernel, counts per pool agree.
 * Two queues behind --queue-balance, one flow (from the flow set's first
 * address, nfqbt_flow_addr()): which queue carries it depends on the boot
 * and the set, and nothing here depends on which (the other queue is
 * handed over idle). */
static void pool_handover(enum nfqb_pool_mode mode)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 2000, .max_seq = MAX_SEQ };
	struct nfqb_pool_config cfg = {
		.queue_first = QNUM,
		.queue_count = 2,
		.mode = mode,
		.workers = 3,
		.rcvbuf = 4 << 20,
		.cb = gen_cb,
	};
	unsigned long long decided[8] = { 0 };
	unsigned int got[8] = { 0 };
	struct nfqbt_tx *tx;
	struct nfqb_pool *pool;
	struct nfqb_pool_stats ps;
	struct nfqbt_rx *rx;
	struct nfqb_kstats ks[2];
	unsigned int g, i, sent;
	int fds[2];

	nfqbt_netns_enter();
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE "
		       "--queue-balance %u:%u", PORT, QNUM, QNUM + 1);
	rx = nfqbt_rx_start(PORT, &ro);
	cfg.cb_data = (void *)(uintptr_t)1;
	pool = nfqb_pool_create(&cfg, sizeof(cfg));
	ck_assert_msg(pool, "create: %s", strerror(errno));
	ck_assert(nfqb_pool_start(pool) == 0);
	tx = sender_from(rx, nfqbt_flow_addr(10));
	for (g = 1; g <= 5; g++) {
		nfqbt_rx_assert_more(rx, 1000, "traffic");
		ck_assert_msg(nfqb_pool_handover(pool, fds, 2) == 0,
			      "handover: %s", strerror(errno));
		ck_assert(fds[0] >= 0 && fds[1] >= 0);
		nfqb_pool_stats(pool, -1, &ps, sizeof(ps));
		ck_assert_uint_eq(ps.defaults, 0);
		decided[g] = ps.packets;
		nfqb_pool_destroy(pool);	/* the sockets stay open */
		cfg.cb_data = (void *)(uintptr_t)(g + 1);
		pool = nfqb_pool_adopt(&cfg, sizeof(cfg), fds);
		ck_assert_msg(pool, "adopt: %s", strerror(errno));
		ck_assert(nfqb_pool_start(pool) == 0);
		ck_assert(nfqbt_tx_sent(tx) < MAX_SEQ);
	}
	nfqbt_rx_assert_more(rx, 1000, "the last adopt");
	sent = nfqbt_tx_finish(tx, rx);
	ck_assert(nfqb_kstats_read(ks, 2, sizeof(ks[0])) == 2);
	nfqb_pool_stop(pool);
	ck_assert(nfqb_pool_wait(pool) == 0);
	nfqb_pool_stats(pool, -1, &ps, sizeof(ps));
	decided[6] = ps.packets;
	nfqb_pool_destroy(pool);
	nfqbt_rx_stop(rx);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(ks[i].queue_dropped, 0);
		ck_assert_uint_eq(ks[i].queue_user_dropped, 0);
	}
	ck_assert_uint_eq(ks[0].id_sequence + ks[1].id_sequence, sent);
	for (i = 0; i < sent; i++) {
		uint32_t mark = 0;

		ck_assert_msg(nfqbt_rx_count(rx, i) == 1, "seq %u arrived %u "
			      "times", i, nfqbt_rx_count(rx, i));
		ck_assert_msg(nfqbt_rx_mark(rx, i, &mark) && mark >= 1 &&
			      mark <= 6, "seq %u mark %u", i, mark);
		got[mark]++;
	}
	for (g = 1; g <= 6; g++)
		ck_assert_msg(got[g] == decided[g], "pool %u decided %llu, "
			      "%u arrived with its mark", g, decided[g], got[g]);
	printf("pool handover x5 (%s): sent %u, arrived once each, per pool "
	       "%u %u %u %u %u %u; flow set %d: queue %u %u ids, queue %u %u "
	       "ids\n", mode == NFQB_POOL_DISPATCH ? "dispatch" :
	       "queue per worker", sent, got[1], got[2], got[3], got[4],
	       got[5], got[6], nfqbt_flow_set(), ks[0].queue_num,
	       ks[0].id_sequence, ks[1].queue_num, ks[1].id_sequence);
	nfqbt_rx_free(rx);
}

START_TEST(test_pool_handover_qpw)
{
	pool_handover(NFQB_POOL_QUEUE_PER_WORKER);
}
END_TEST

START_TEST(test_pool_handover_dispatch)
{
	pool_handover(NFQB_POOL_DISPATCH);
}
END_TEST

/* --- a consumer dies holding packets: its successor defaults them --------- */

#define HELD_FROM	200	/* the dying consumer decides seqs below */
#define FIRST_BATCH	300

/* Child: adopt @fd, take FIRST_BATCH packets, decide those below HELD_FROM
 * with mark 1, keep the rest, say "ok", wait to be killed. */
static int dying_consumer(int fd, int status)
{
	struct nfqb_packet *vec[64];
	struct nfqb_queue *q = nfqb_queue_adopt(fd, QNUM);
	unsigned int got = 0;
	uint64_t t0 = nfqbt_now_ms();

	if (!q)
		return 10;
	while (got < FIRST_BATCH && nfqbt_now_ms() - t0 < 10000) {
		int i, n = nfqb_recv(q, vec, 64);

		if (n < 0) {
			if (errno != EINTR && errno != ENOBUFS)
				return 11;
			continue;
		}
		for (i = 0; i < n; i++) {
			uint32_t seq;

			if (!nfqbt_pkt_seq(vec[i], &seq))
				return 12;
			if (seq < HELD_FROM &&
			    nfqb_verdict_mark(vec[i], NFQB_ACCEPT, 1) < 0)
				return 13;
		}
		got += (unsigned int)n;
	}
	if (got != FIRST_BATCH || nfqb_flush(q) < 0)
		return 14;
	if (write(status, "ok\n", 3) != 3)
		return 15;
	for (;;)
		pause();
}

/*
 * A consumer that adopted the queue dies (SIGKILL) with 100 packets
 * received and undecided; the socket lives on (this process holds it), so
 * the queue stays bound and those packets stay queued. The next owner
 * adopts it: those 100 get the default verdict (accept, no mark) by the
 * orphan batch, not the new owner's mark; its own packets get its mark;
 * every packet arrives exactly once.
 */
START_TEST(test_adopt_after_crash)
{
	static uint32_t mark2 = 2;
	struct nfqbt_rx_opts ro = { .quiet_ms = 2000, .max_seq = MAX_SEQ };
	struct nfqbt_tx_opts to = { .port = PORT, .count = FIRST_BATCH };
	struct nfqb_queue *q;
	struct nfqb_stats st;
	struct nfqbt_cons c;
	struct nfqbt_rx *rx;
	char line[16];
	unsigned int i;
	int fd, pfd[2], status;
	pid_t pid;
	FILE *f;

	rx = handover_start(&ro, &fd, pfd);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		_exit(dying_consumer(fd, pfd[1]));
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ck_assert(f);
	setvbuf(f, NULL, _IONBF, 0);
	ck_assert_uint_eq(nfqbt_send(&to), FIRST_BATCH);
	read_line(f, line, sizeof(line));
	ck_assert_msg(!strcmp(line, "ok\n"), "consumer: %s", line);
	ck_assert(nfqbt_rx_wait_total(rx, HELD_FROM, 10000));
	ck_assert(kill(pid, SIGKILL) == 0);
	ck_assert(waitpid(pid, &status, 0) == pid);
	fclose(f);
	/* still bound (this process holds the socket), the held ones
	 * still queued */
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total,
			  FIRST_BATCH - HELD_FROM);
	ck_assert_uint_eq(nfqbt_rx_total(rx), HELD_FROM);

	q = nfqb_queue_adopt(fd, QNUM);
	ck_assert_msg(q, "adopt: %s", strerror(errno));
	nfqbt_cons_init(&c, q, nfqbt_decide_mark, &mark2);
	to.first_seq = FIRST_BATCH;
	to.count = 300;
	to.window = 64;
	to.progress = nfqbt_rx_total_ptr(rx);
	{
		struct nfqbt_tx *tx = nfqbt_tx_start(&to);

		ck_assert_uint_eq(nfqbt_cons_run(&c, 300, 10000), 300);
		ck_assert_uint_eq(nfqbt_tx_join(tx), 300);
	}
	ck_assert(nfqbt_rx_wait_total(rx, FIRST_BATCH + 300, 10000));
	st = nfqbt_queue_stats(q);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);
	ck_assert(nfqb_queue_close(q) == 0);
	nfqbt_rx_stop(rx);
	for (i = 0; i < FIRST_BATCH + 300; i++) {
		uint32_t mark = 0;
		bool has = nfqbt_rx_mark(rx, i, &mark);

		ck_assert_msg(nfqbt_rx_count(rx, i) == 1, "seq %u arrived %u "
			      "times", i, nfqbt_rx_count(rx, i));
		if (i < HELD_FROM)
			ck_assert_msg(has && mark == 1, "seq %u mark %u", i,
				      mark);
		else if (i < FIRST_BATCH)
			ck_assert_msg(!has || mark == 0, "orphan seq %u got "
				      "mark %u", i, mark);
		else
			ck_assert_msg(has && mark == 2, "seq %u mark %u", i,
				      mark);
	}
	ck_assert_uint_eq(nfqbt_rx_total(rx), FIRST_BATCH + 300);
	printf("adopt after a crash: %u orphans defaulted by the successor, "
	       "its own %u marked by it (batch messages %llu, ENOENT %llu)\n",
	       FIRST_BATCH - HELD_FROM, 300,
	       (unsigned long long)st.batch_msgs,
	       (unsigned long long)st.enoent_errors);
	nfqbt_rx_free(rx);
}
END_TEST

/* --- the IPS example: upgrade in place ten times, as nobody --------------- */

/* Read lines of the IPS until one starts with @prefix (bounded). */
static void ips_wait_line(FILE *f, const char *prefix, char *line,
			  size_t size)
{
	uint64_t t0 = nfqbt_now_ms();

	while (nfqbt_now_ms() - t0 < 15000) {
		read_line(f, line, size);
		if (!strncmp(line, prefix, strlen(prefix)))
			return;
	}
	ck_abort_msg("nfqb-ips: no line \"%s\"", prefix);
}

/* nfqb-ips (@ips) on queue QNUM with the rules file @rules and the
 * options @extra (NULL-terminated, up to 4), its stdout on @pfd[1]: its
 * pid. */
static pid_t ips_spawn(const char *ips, const char *rules, int pfd[2],
		       const char *const *extra)
{
	const char *argv[10] = { "nfqb-ips", "-q", NULL, "-r", rules };
	char q[16];
	unsigned int i;
	pid_t pid;

	snprintf(q, sizeof(q), "%u", QNUM);
	argv[2] = q;
	for (i = 0; extra && extra[i] && i < 4; i++)
		argv[5 + i] = extra[i];
	ck_assert(pipe(pfd) == 0);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(ips, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return pid;
}

/* The output of an nfqb-ips just forked with its stdout on @pfd[1]
 * (closed here), read unbuffered, once it said it runs: that line in
 * @line. */
static FILE *ips_output(int pfd[2], char *line, size_t size)
{
	FILE *f;

	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ck_assert(f);
	setvbuf(f, NULL, _IONBF, 0);
	ips_wait_line(f, "nfqb-ips: pid", line, size);
	return f;
}

START_TEST(test_ips_upgrade_x10_as_nobody)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 2000, .max_seq = MAX_SEQ };
	char ips[PATH_MAX], rules[] = "/tmp/nfqb-life-rules-XXXXXX";
	char line[256];
	struct nfqbt_tx *tx;
	struct nfqb_kstats ks;
	struct nfqbt_rx *rx;
	unsigned int g, i, sent;
	int pfd[2];
	pid_t pid;
	FILE *f;

	/* a copy nobody can run again on an upgrade, wherever the build
	 * tree is (under /root, nobody may not load its library) */
	nfqbt_ips_staged(ips, sizeof(ips));
	ck_assert_msg(getpwnam("nobody"), "no user nobody");
	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	nfqbt_ips_rules(rules, "mark %u 9\n", PORT);
	rx = nfqbt_rx_start(PORT, &ro);
	pid = ips_spawn(ips, rules, pfd,
			(const char *const[]){ "--user", "nobody", NULL });
	f = ips_output(pfd, line, sizeof(line));
	tx = sender_start(rx);
	for (g = 1; g <= UPGRADES; g++) {
		nfqbt_rx_assert_more(rx, 1000, "traffic");
		ck_assert(kill(pid, SIGUSR2) == 0);
		ips_wait_line(f, "nfqb-ips: pid", line, sizeof(line));
		ck_assert_msg(strstr(line, "(taken over)"), "%s", line);
		ck_assert(nfqbt_tx_sent(tx) < MAX_SEQ);
	}
	nfqbt_rx_assert_more(rx, 1000, "traffic");
	sent = nfqbt_tx_finish(tx, rx);
	ks = nfqbt_kstats(QNUM);
	ck_assert(kill(pid, SIGTERM) == 0);
	assert_exited_0(pid, "nfqb-ips");
	fclose(f);
	unlink(rules);
	nfqbt_rx_stop(rx);
	assert_all_once(rx, &ks, sent);
	for (i = 0; i < sent; i++)
		ck_assert_uint_eq(nfqbt_rx_mark_of(rx, i), 9);
	printf("nfqb-ips --user nobody, 10 upgrades under load: sent %u, "
	       "arrived %u once each with the IPS's mark, kernel dropped 0\n",
	       sent, sent);
	nfqbt_rx_free(rx);
}
END_TEST

/* --- nfqb-ips and packets longer than its copy range (--large) ------------ */

/*
 * nfqb-ips copies 1500 bytes of a packet: a UDP datagram of 3000 bytes is
 * cut, and must not pass uninspected under either policy. _i 0: the
 * default (--large whole): the library drops it before the rules see it
 * (large_dropped 1); _i 1: --large pass: the rules see it cut and drop it
 * (large_dropped 0). Either way the short datagram after it arrives, and
 * the exit statistics count one cut packet.
 */
START_TEST(test_ips_large)
{
	char ips[PATH_MAX], rules[] = "/tmp/nfqb-life-rules-XXXXXX";
	static char big[3000];
	struct sockaddr_in to = {
		.sin_family = AF_INET, .sin_port = htons(PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 2 };
	bool pass = _i == 1;
	char line[256], want[160], rbuf[4096];
	int pfd[2], rx, tx;
	unsigned int got = 0;
	ssize_t r;
	pid_t pid;
	FILE *f;

	ck_assert_msg(nfqbt_find_ips(ips, sizeof(ips)), "ips/nfqb-ips not "
		      "built");
	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	nfqbt_ips_rules(rules, "drop EVIL\n");
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert(rx >= 0 && tx >= 0);
	ck_assert(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv,
			     sizeof(tv)) == 0);
	ck_assert(bind(rx, (struct sockaddr *)&to, sizeof(to)) == 0);
	pid = ips_spawn(ips, rules, pfd, (const char *const[]){
		pass ? "--large" : NULL, "pass", NULL });
	f = ips_output(pfd, line, sizeof(line));
	ck_assert_msg(strstr(line, pass ? "large packets: pass" :
				   "large packets: whole"), "%s", line);
	memset(big, 'x', sizeof(big));
	ck_assert(sendto(tx, big, sizeof(big), 0, (struct sockaddr *)&to,
			 sizeof(to)) == (ssize_t)sizeof(big));
	ck_assert(sendto(tx, "hello", 5, 0, (struct sockaddr *)&to,
			 sizeof(to)) == 5);
	/* only the short one: the long one was dropped */
	while ((r = recv(rx, rbuf, sizeof(rbuf), 0)) >= 0) {
		ck_assert_int_eq(r, 5);
		got++;
		tv.tv_sec = 0;
		tv.tv_usec = 300000;	/* anything after it */
		setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	ck_assert_uint_eq(got, 1);
	/* the exit statistics, final */
	ck_assert(kill(pid, SIGTERM) == 0);
	ips_wait_line(f, "  large packets:", line, sizeof(line));
	snprintf(want, sizeof(want), "  large packets: truncated 1, dropped "
		 "for TCP to resend 0, dropped %u | MSS clamped 0 |", !pass);
	ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
	assert_exited_0(pid, "nfqb-ips");
	fclose(f);
	close(rx);
	close(tx);
	unlink(rules);
	printf("nfqb-ips --large %s: a cut datagram dropped, the next one "
	       "through: %s", pass ? "pass" : "whole", line);
}
END_TEST

/* --- nfqb-ips under a stand-in for systemd: fd store, crash, restart ------ */

/* Receive one notification datagram on @fd (bounded wait); its fds, if
 * any, in @fds (up to 4), their number in *nfds. */
static void notify_recv(int fd, char *msg, size_t size, int *fds,
			unsigned int *nfds)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { msg, size - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cb.b,
			     .msg_controllen = sizeof(cb.b) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct cmsghdr *cm;
	ssize_t n;

	*nfds = 0;
	ck_assert_msg(poll(&pfd, 1, 15000) == 1, "no notification");
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	ck_assert(n >= 0);
	msg[n] = 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			*nfds = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) /
					       sizeof(int));
			memcpy(fds, CMSG_DATA(cm), *nfds * sizeof(int));
		}
}

/*
 * The fd store path of nfqb-ips.service, with this test as the service
 * manager: nfqb-ips (queue 7) sends READY=1 and its queue socket with
 * FDSTORE=1 to $NOTIFY_SOCKET; it is killed (SIGKILL) under load; the
 * socket kept here keeps the queue bound; a new nfqb-ips gets it as
 * systemd passes it (fd 3, LISTEN_FDS=1, LISTEN_PID, LISTEN_FDNAMES) and
 * takes it over. Every packet arrives exactly once: marked by an IPS, or
 * (held by the dead one) accepted by the successor's default verdict;
 * the kernel dropped none.
 */
START_TEST(test_ips_fdstore_crash_restart)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 3000, .max_seq = MAX_SEQ };
	char ips[PATH_MAX], rules[] = "/tmp/nfqb-life-rules-XXXXXX";
	char sock[64], msg[256], line[256], q[16];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct nfqbt_tx *tx = NULL;
	struct nfqb_kstats ks;
	struct nfqbt_rx *rx;
	unsigned int i, nfds, sent, marked = 0, unmarked = 0;
	int nfd, stored = -1, fds[4], pfd[2], status, k;
	pid_t pid;
	FILE *f;

	ck_assert(nfqbt_find_ips(ips, sizeof(ips)));
	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	nfqbt_ips_rules(rules, "mark %u 9\n", PORT);
	/* the notification socket, in the abstract namespace */
	snprintf(sock, sizeof(sock), "@nfqb-life-notify-%d", (int)getpid());
	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert(nfd >= 0);
	memcpy(sun.sun_path + 1, sock + 1, strlen(sock) - 1);
	ck_assert(bind(nfd, (struct sockaddr *)&sun,
		       (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   strlen(sock))) == 0);
	rx = nfqbt_rx_start(PORT, &ro);
	snprintf(q, sizeof(q), "%u", QNUM);
	for (k = 0; k < 2; k++) {
		ck_assert(pipe(pfd) == 0);
		pid = fork();
		ck_assert(pid >= 0);
		if (pid == 0) {
			char lp[16];

			setenv("NOTIFY_SOCKET", sock, 1);
			if (k == 1) {	/* as systemd passes the store */
				dup2(stored, 3);
				snprintf(lp, sizeof(lp), "%d", (int)getpid());
				setenv("LISTEN_PID", lp, 1);
				setenv("LISTEN_FDS", "1", 1);
				setenv("LISTEN_FDNAMES", "nfqueue-7", 1);
			}
			dup2(pfd[1], 1);
			execl(ips, "nfqb-ips", "-q", q, "-r", rules,
			      (char *)NULL);
			_exit(127);
		}
		f = ips_output(pfd, line, sizeof(line));
		ck_assert_msg(!k || strstr(line, "(taken over)"), "%s", line);
		/* FDSTORE=1 with the queue's socket, then READY=1 */
		notify_recv(nfd, msg, sizeof(msg), fds, &nfds);
		ck_assert_msg(strstr(msg, "FDSTORE=1") &&
			      strstr(msg, "FDNAME=nfqueue-7") && nfds == 1,
			      "%s (%u fds)", msg, nfds);
		if (stored < 0)
			stored = fds[0];
		else
			close(fds[0]);	/* the same socket again */
		notify_recv(nfd, msg, sizeof(msg), fds, &nfds);
		ck_assert_msg(!strcmp(msg, "READY=1"), "%s", msg);
		if (k == 0) {
			tx = sender_start(rx);
			nfqbt_rx_assert_more(rx, 2000, "traffic");
			/* the crash: its socket lives on in the store */
			ck_assert(kill(pid, SIGKILL) == 0);
			ck_assert(waitpid(pid, &status, 0) == pid);
			fclose(f);
			ks = nfqbt_kstats(QNUM);	/* still bound */
		}
	}
	nfqbt_rx_assert_more(rx, 2000, "traffic");
	sent = nfqbt_tx_finish(tx, rx);
	ks = nfqbt_kstats(QNUM);
	ck_assert(kill(pid, SIGTERM) == 0);
	/* a clean stop takes the socket out of the store */
	for (;;) {
		notify_recv(nfd, msg, sizeof(msg), fds, &nfds);
		if (strstr(msg, "FDSTOREREMOVE=1"))
			break;
	}
	assert_exited_0(pid, "nfqb-ips");
	fclose(f);
	close(stored);
	close(nfd);
	unlink(rules);
	nfqbt_rx_stop(rx);
	assert_all_once(rx, &ks, sent);
	for (i = 0; i < sent; i++) {
		uint32_t mark = 0;

		if (nfqbt_rx_mark(rx, i, &mark) && mark == 9)
			marked++;
		else
			unmarked++;
	}
	printf("nfqb-ips killed, restarted from the fd store under load: sent "
	       "%u, arrived once each (%u inspected, %u held by the dead one "
	       "and accepted by its successor), kernel dropped 0\n", sent,
	       marked, unmarked);
	nfqbt_rx_free(rx);
}
END_TEST

/* --- privilege drop --------------------------------------------------------- */

/*
 * Bound as root, then nobody with CAP_NET_ADMIN alone: receiving, verdicts
 * with marks, configuration and binding another queue go on. Then without
 * CAP_NET_ADMIN too: the kernel refuses every message with EPERM:
 * configuration calls and nfqb_queue_open() fail with it, nfqb_recv()
 * reports the refused verdicts with it (counted in verdict_errors; the
 * packets stay queued in the kernel, undecided), nfqb_queue_close() too;
 * receiving still works.
 */
START_TEST(test_privdrop)
{
	static uint32_t mark5 = 5;
	struct nfqbt_rx_opts ro = { .quiet_ms = 1000, .max_seq = MAX_SEQ };
	struct nfqbt_tx_opts to = { .port = PORT, .count = 500 };
	struct nfqb_packet *vec[64];
	struct nfqb_queue *q, *q2;
	struct nfqb_stats st;
	struct nfqbt_cons c;
	struct nfqbt_rx *rx;
	char why[256];
	unsigned int i, got, eperm = 0;
	uint64_t t0;
	int n;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	rx = nfqbt_rx_start(PORT, &ro);
	q = nfqbt_queue_open(QNUM);
	ck_assert_msg(nfqb_privdrop("nobody", why, sizeof(why)) == 0, "%s",
		      why);
	ck_assert(getuid() != 0 && geteuid() != 0);
	ck_assert(nfqb_privdrop_has_net_admin());
	/* what needs CAP_NET_ADMIN works: configuration, verdicts, marks */
	ck_assert_msg(nfqb_queue_set_maxlen(q, 2048) == 0, "maxlen: %s",
		      strerror(errno));
	nfqbt_cons_init(&c, q, nfqbt_decide_mark, &mark5);
	to.window = 64;
	to.progress = nfqbt_rx_total_ptr(rx);
	{
		struct nfqbt_tx *tx = nfqbt_tx_start(&to);

		got = nfqbt_cons_run(&c, 500, 10000);
		ck_assert_uint_eq(nfqbt_tx_join(tx), 500);
	}
	ck_assert_uint_eq(got, 500);
	ck_assert(nfqbt_rx_wait_total(rx, 500, 10000));
	for (i = 0; i < 500; i++) {
		uint32_t mark = 0;

		ck_assert(nfqbt_rx_count(rx, i) == 1);
		ck_assert(nfqbt_rx_mark(rx, i, &mark) && mark == 5);
	}
	/* the kernel's statistics are root's only (0440) */
	{
		struct nfqb_kstats ks;

		errno = 0;
		ck_assert(nfqb_kstats_get(QNUM, &ks, sizeof(ks)) < 0 && errno == EACCES);
	}
	/* another queue can still be bound: the socket's opener and the
	 * sender both have CAP_NET_ADMIN */
	q2 = nfqb_queue_open(QNUM + 1);
	ck_assert_msg(q2, "open as nobody + CAP_NET_ADMIN: %s",
		      strerror(errno));
	ck_assert(nfqb_queue_close(q2) == 0);

	/* now without it: the kernel refuses every message */
	ck_assert(nfqb_privdrop_all_caps() == 0);
	ck_assert(!nfqb_privdrop_has_net_admin());
	errno = 0;
	ck_assert(nfqb_queue_set_maxlen(q, 1024) < 0 && errno == EPERM);
	errno = 0;
	q2 = nfqb_queue_open(QNUM + 1);
	ck_assert_msg(!q2 && errno == EPERM, "open without CAP_NET_ADMIN: "
		      "%p %s", (void *)q2, strerror(errno));
	to.first_seq = 500;
	to.count = 10;
	to.window = 0;
	ck_assert_uint_eq(nfqbt_send(&to), 10);
	/* receiving works; the verdicts cannot leave */
	t0 = nfqbt_now_ms();
	for (got = 0; got < 10 && nfqbt_now_ms() - t0 < 10000;) {
		n = nfqb_recv(q, vec, 64);
		if (n < 0) {
			ck_assert_msg(errno == EAGAIN || errno == EPERM,
				      "recv: %s", strerror(errno));
			eperm += errno == EPERM;
			usleep(1000);
			continue;
		}
		for (i = 0; i < (unsigned int)n; i++)
			ck_assert(nfqb_verdict(vec[i], NFQB_ACCEPT) == 0);
		got += (unsigned int)n;
	}
	ck_assert_uint_eq(got, 10);
	/* sendmsg() succeeds; the kernel answers EPERM on the socket, and
	 * the next nfqb_recv() (or nfqb_flush() after it read it) says so */
	t0 = nfqbt_now_ms();
	while (!eperm && nfqbt_now_ms() - t0 < 5000) {
		if (nfqb_flush(q) < 0 || nfqb_recv(q, vec, 64) < 0) {
			ck_assert_msg(errno == EPERM || errno == EAGAIN,
				      "flush/recv: %s", strerror(errno));
			eperm += errno == EPERM;
		}
		usleep(1000);
	}
	st = nfqbt_queue_stats(q);
	ck_assert_msg(eperm, "no EPERM reported (send calls %llu, kernel "
		      "errors %llu, verdict errors %llu, outstanding %llu)",
		      (unsigned long long)st.send_calls,
		      (unsigned long long)st.kernel_errors,
		      (unsigned long long)st.verdict_errors,
		      (unsigned long long)st.outstanding);
	st = nfqbt_queue_stats(q);
	ck_assert(st.verdict_errors > 0);
	ck_assert(nfqb_queue_fallback(q));
	/* the kernel still holds them, undecided (its /proc file is root's:
	 * the receiver tells, below) */
	for (i = 500; i < 510; i++)
		ck_assert(nfqbt_rx_count(rx, i) == 0);
	/* close cannot send them either, nor unbind: it says so (the
	 * socket's close unbinds; the kernel drops those 10) */
	errno = 0;
	ck_assert(nfqb_queue_close(q) < 0);
	ck_assert_msg(errno == EPERM, "close: %s", strerror(errno));
	nfqbt_rx_free(rx);
}
END_TEST

/* --- overload, accounted exactly -------------------------------------------- */

#define OV_BURST	20000	/* sent at full speed to a slow consumer */
#define OV_NORMAL	3000	/* then at a pace it keeps up with */

struct ocons {
	struct nfqb_queue *q;
	pthread_t thread;
	atomic_bool slow, stop;
	atomic_uint handled, accepted, dropped;
	unsigned int enobufs;	/* ENOBUFS returns of nfqb_recv() */
	int err;
};

static atomic_uchar ov_dropped[MAX_SEQ];

/* Accept with mark 1, drop one in five (the policy); while slow, 2 ms
 * per batch. */
static void *ocons_main(void *arg)
{
	struct ocons *c = arg;
	struct nfqb_packet *vec[64];

	while (!atomic_load(&c->stop)) {
		int i, n = nfqb_recv(c->q, vec, 64);

		if (n < 0) {
			if (errno == ENOBUFS)
				c->enobufs++;
			else if (errno != EINTR) {
				c->err = errno;
				break;
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			uint32_t seq = UINT32_MAX;

			nfqbt_pkt_seq(vec[i], &seq);
			if (seq % 5 == 0) {
				if (seq < MAX_SEQ)
					atomic_store(&ov_dropped[seq], 1);
				nfqb_verdict(vec[i], NFQB_DROP);
				atomic_fetch_add(&c->dropped, 1);
			} else {
				nfqb_verdict_mark(vec[i], NFQB_ACCEPT, 1);
				atomic_fetch_add(&c->accepted, 1);
			}
		}
		atomic_fetch_add(&c->handled, (unsigned int)n);
		if (atomic_load(&c->slow))
			usleep(2000);
	}
	return NULL;
}

/*
 * A burst of 20000 datagrams at full speed to a consumer that takes 64 per
 * 2 ms, into a queue of length 128 and a 32 KiB socket; then 3000 at a
 * pace it keeps up with. Every datagram sent is accounted for, from the
 * receiver's record, the library's counters and the kernel's:
 *   sent = arrived + dropped by the policy + dropped by the kernel
 *   arrived = accepted by the consumer (its mark) + accepted by fail-open
 *   consumer's decisions = packets the library received (no defaults)
 *   without fail-open: sent = received + queue_dropped + user_dropped,
 *     and the kernel's last id = received + user_dropped;
 *   with it: the kernel drops nothing, fail-open = sent - received.
 * After the burst the queue drains in bounded time (reported) and the
 * normal load goes through without a drop.
 */
static void overload(bool failopen, enum nfqb_enobufs_policy pol)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 3000, .max_seq = MAX_SEQ,
				    .timeout_ms = 40000 };
	struct nfqbt_tx_opts to = { .port = PORT, .count = OV_BURST };
	struct ocons c = { 0 };
	struct nfqb_kstats k1, k2;
	struct nfqb_stats st;
	struct nfqbt_rx *rx;
	unsigned int i, marked = 0, unmarked = 0, sent, arrived, fo;
	uint64_t t0, recovery;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	rx = nfqbt_rx_start(PORT, &ro);
	c.q = nfqbt_queue_open(QNUM);
	ck_assert(nfqb_queue_set_maxlen(c.q, 128) == 0);
	ck_assert(nfqb_queue_set_rcvbuf(c.q, 32 << 10) == 0);
	ck_assert(nfqb_queue_set_enobufs(c.q, pol) == 0);
	if (failopen)
		ck_assert(nfqb_queue_set_flags(c.q, NFQB_F_FAIL_OPEN,
					       NFQB_F_FAIL_OPEN) == 0);
	atomic_store(&c.slow, true);
	ck_assert(pthread_create(&c.thread, NULL, ocons_main, &c) == 0);

	sent = nfqbt_send(&to);
	ck_assert_uint_eq(sent, OV_BURST);
	/* the load drops: how long until nothing waits any more */
	atomic_store(&c.slow, false);
	t0 = nfqbt_now_ms();
	for (;;) {
		st = nfqbt_queue_stats(c.q);
		k1 = nfqbt_kstats(QNUM);
		if (!k1.queue_total && !st.outstanding)
			break;
		ck_assert_msg(nfqbt_now_ms() - t0 < 10000, "no recovery: %u "
			      "queued, %llu outstanding", k1.queue_total,
			      (unsigned long long)st.outstanding);
		usleep(1000);
	}
	recovery = nfqbt_now_ms() - t0;
	/* the consumer counts a batch after its verdicts: wait until its
	 * count has every packet of the burst, or the window below, counted
	 * from it, would let up to a batch more into the 32 KiB socket */
	ck_assert(nfqbt_wait_count(&c.handled,
				   (unsigned int)nfqbt_queue_stats(c.q).packets,
				   2000));

	/* normal load: a window of 32 ahead of the consumer (its count
	 * includes decisions the library holds, up to a quarter of the
	 * queue of 128 plus the consumer's batch of 64: 32 more is what
	 * fits) */
	to.first_seq = OV_BURST;
	to.count = OV_NORMAL;
	to.window = 32;
	to.progress = &c.handled;
	i = atomic_load(&c.handled);
	ck_assert_uint_eq(nfqbt_send(&to), OV_NORMAL);
	sent += OV_NORMAL;
	ck_assert(nfqbt_wait_count(&c.handled, i + OV_NORMAL, 10000));
	atomic_store(&c.stop, true);
	nfqb_queue_interrupt(c.q);
	pthread_join(c.thread, NULL);
	ck_assert_msg(c.err == 0, "consumer: %s", strerror(c.err));
	ck_assert(nfqb_flush(c.q) >= 0);
	st = nfqbt_queue_stats(c.q);
	k2 = nfqbt_kstats(QNUM);

	/* the kernel's and the library's account */
	fo = sent - (unsigned int)st.packets;
	ck_assert_uint_eq(st.rejected_malformed + st.rejected_truncated +
			  st.rejected_defaults + st.gap_ids, 0);
	ck_assert_uint_eq(st.packets, atomic_load(&c.accepted) +
			  atomic_load(&c.dropped));
	ck_assert_uint_eq(st.defaults + st.timeouts, 0);
	ck_assert_uint_eq(st.dropped, atomic_load(&c.dropped));
	ck_assert_uint_eq(st.outstanding, 0);
	if (failopen) {
		ck_assert_uint_eq(k2.queue_dropped, 0);
		ck_assert_uint_eq(k2.queue_user_dropped, 0);
		ck_assert_msg(fo > 0, "no overload: nothing failed open");
	} else {
		ck_assert_uint_eq(sent, st.packets + k2.queue_dropped +
				  k2.queue_user_dropped);
		ck_assert_uint_eq(k2.id_sequence, st.packets +
				  k2.queue_user_dropped);
		ck_assert_msg(k2.queue_dropped + k2.queue_user_dropped > 0,
			      "no overload: the kernel dropped nothing");
		fo = 0;
	}
	if (pol == NFQB_ENOBUFS_IGNORE)
		ck_assert(st.enobufs == 0 && c.enobufs == 0);
	else if (k2.queue_user_dropped)
		ck_assert(st.enobufs > 0 && c.enobufs > 0);
	/* recovered: the normal load lost nothing */
	ck_assert_uint_eq(k2.queue_dropped, k1.queue_dropped);
	ck_assert_uint_eq(k2.queue_user_dropped, k1.queue_user_dropped);

	/* the receiver's account, per sequence number */
	arrived = atomic_load(&c.accepted) + fo;
	ck_assert_msg(nfqbt_rx_wait_total(rx, arrived, 15000), "expected %u, "
		      "arrived %u", arrived, nfqbt_rx_total(rx));
	nfqb_queue_close(c.q);
	nfqbt_rx_stop(rx);
	for (i = 0; i < sent; i++) {
		unsigned int n = nfqbt_rx_count(rx, i);
		uint32_t mark = 0;

		ck_assert_msg(n <= 1, "seq %u arrived %u times", i, n);
		if (!n)
			continue;
		ck_assert_msg(!atomic_load(&ov_dropped[i]), "seq %u dropped "
			      "by the policy arrived", i);
		if (nfqbt_rx_mark(rx, i, &mark) && mark == 1)
			marked++;
		else
			unmarked++;
	}
	ck_assert_uint_eq(nfqbt_rx_total(rx), arrived);
	ck_assert_uint_eq(marked, atomic_load(&c.accepted));
	ck_assert_uint_eq(unmarked, fo);
	for (i = OV_BURST; i < sent; i++)
		ck_assert(nfqbt_rx_count(rx, i) == !atomic_load(&ov_dropped[i]));
	ck_assert_uint_eq(sent, marked + unmarked + atomic_load(&c.dropped) +
			  k2.queue_dropped + k2.queue_user_dropped);
	printf("overload (%s, ENOBUFS %s): sent %u = delivered %u (consumer "
	       "%u + fail-open %u) + dropped by the policy %u + by the kernel "
	       "%u (queue full) + %u (socket full); ENOBUFS reports %llu; "
	       "recovery %llu ms\n", failopen ? "fail-open" : "no fail-open",
	       pol == NFQB_ENOBUFS_IGNORE ? "ignored" : "reported", sent,
	       marked + unmarked, marked, unmarked, atomic_load(&c.dropped),
	       k2.queue_dropped, k2.queue_user_dropped,
	       (unsigned long long)st.enobufs, (unsigned long long)recovery);
	nfqbt_rx_free(rx);
}

START_TEST(test_overload_drop_report)
{
	overload(false, NFQB_ENOBUFS_REPORT);
}
END_TEST

START_TEST(test_overload_drop_ignore)
{
	overload(false, NFQB_ENOBUFS_IGNORE);
}
END_TEST

START_TEST(test_overload_failopen_report)
{
	overload(true, NFQB_ENOBUFS_REPORT);
}
END_TEST

START_TEST(test_overload_failopen_ignore)
{
	overload(true, NFQB_ENOBUFS_IGNORE);
}
END_TEST

/* nfqb-verdict --user nobody: once bound, it runs as nobody and its
 * verdicts with marks go on. */
START_TEST(test_verdict_tool_user)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 1000, .max_seq = MAX_SEQ };
	struct nfqbt_tx_opts to = { .port = PORT, .count = 300, .window = 64 };
	char ips[PATH_MAX], tool[PATH_MAX + 32], q[16], *slash;
	struct nfqbt_rx *rx;
	unsigned int i;
	pid_t pid;

	ck_assert(nfqbt_find_ips(ips, sizeof(ips)));
	/* utils/nfqb-verdict of the tree of ips/nfqb-ips */
	slash = strrchr(ips, '/');
	ck_assert(slash);
	*slash = 0;
	snprintf(tool, sizeof(tool), "%s/../utils/nfqb-verdict", ips);
	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	rx = nfqbt_rx_start(PORT, &ro);
	snprintf(q, sizeof(q), "%u", QNUM);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		execl(tool, "nfqb-verdict", "-q", q, "--accept", "--mark", "3",
		      "--count", "300", "--user", "nobody", (char *)NULL);
		_exit(127);
	}
	/* the queue is bound once /proc lists it */
	for (i = 0; i < 5000; i++) {
		struct nfqb_kstats ks;

		if (nfqb_kstats_get(QNUM, &ks, sizeof(ks)) == 0)
			break;
		usleep(1000);
	}
	/* it switches to nobody with CAP_NET_ADMIN alone */
	for (i = 0; i < 5000; i++) {
		char path[64], l[256];
		unsigned int uid = 0;
		unsigned long long eff = ~0ull;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "re");
		ck_assert(f);
		while (fgets(l, sizeof(l), f)) {
			sscanf(l, "Uid: %u", &uid);
			sscanf(l, "CapEff: %llx", &eff);
		}
		fclose(f);
		if (uid == getpwnam("nobody")->pw_uid) {
			ck_assert_msg(eff == 1ull << 12, "CapEff %#llx", eff);
			break;
		}
		usleep(1000);
	}
	ck_assert(i < 5000);
	to.progress = nfqbt_rx_total_ptr(rx);
	ck_assert_uint_eq(nfqbt_send(&to), 300);
	ck_assert(nfqbt_rx_wait_total(rx, 300, 10000));
	assert_exited_0(pid, "nfqb-verdict");
	nfqbt_rx_stop(rx);
	for (i = 0; i < 300; i++) {
		uint32_t mark = 0;

		ck_assert(nfqbt_rx_count(rx, i) == 1);
		ck_assert(nfqbt_rx_mark(rx, i, &mark) && mark == 3);
	}
	nfqbt_rx_free(rx);
}
END_TEST

static Suite *lifecycle_suite(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc;

	nfqbt_tcase_tests(s, "stop", NFQBT_TCASE_TIMEOUT_LONG, (const TTest *[]){
		test_stop_pool_bypass, test_stop_pool_no_bypass,
		test_stop_queue_no_bypass, NULL });
	nfqbt_tcase_tests(s, "handover", HANDOVER_TIMEOUT, (const TTest *[]){
		test_handover_exec_x10, test_ips_upgrade_x10_as_nobody,
		test_adopt_after_crash, test_pool_handover_qpw,
		test_pool_handover_dispatch, test_ips_fdstore_crash_restart,
		NULL });
	nfqbt_tcase_tests(s, "overload", NFQBT_TCASE_TIMEOUT_LONG, (const TTest *[]){
		test_overload_drop_report, test_overload_drop_ignore,
		test_overload_failopen_report, test_overload_failopen_ignore,
		NULL });
	nfqbt_tcase_tests(s, "privileges", NFQBT_TCASE_TIMEOUT_LONG, (const TTest *[]){
		test_privdrop, test_verdict_tool_user, NULL });
	tc = nfqbt_tcase(s, "ips-large", NFQBT_TCASE_TIMEOUT_LONG);
	tcase_add_loop_test(tc, test_ips_large, 0, 2);
	return s;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "--upgrade-helper"))
		return helper_main(atoi(argv[2]), (uint16_t)atoi(argv[3]),
				   (uint32_t)strtoul(argv[4], NULL, 0),
				   atoi(argv[5]));
	return nfqbt_run_suite("test_lifecycle", lifecycle_suite());
}
