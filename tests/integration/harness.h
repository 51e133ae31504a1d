/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test harness, in libnfqbt-harness.la: the helpers of every Check
 * program, unit and integration (tests/integration/local.mk). With it in
 * that library: tests/unit/nlbuild.h (netlink messages by hand) and
 * tests/unit/kmodel.h (a model of the kernel's queue); the header-only
 * tests/unit/testq.h and txhook.h drive a queue through the library's
 * test seam. A test that needs something twice puts it here.
 *
 * Integration tests: real kernel, private network namespace, loopback
 * UDP traffic whose payload carries a sequence number.
 *
 * How cleanup is guaranteed, also when a test fails:
 *
 * - Every Check test runs in its own forked process (CK_FORK; the suites
 *   force it with srunner_set_fork_status()).
 * - At its start the test calls nfqbt_netns_enter(): unshare(CLONE_NEWNET)
 *   puts the test process into a fresh network namespace, and `lo` is
 *   brought up in it. Nothing the test does touches the host's namespace.
 * - iptables rules are installed with nfqbt_iptables(), which runs iptables
 *   through system(); the child inherits the namespace, so the rules live in
 *   the test's namespace only.
 * - Sender, receiver and consumer are threads of the test process; queues
 *   are bound by sockets of that process.
 * - When the test process exits, however it exits (pass, ck_assert failure,
 *   crash, or Check's timeout SIGKILL), its sockets close, which unbinds its
 *   queues, and the last reference to the namespace goes away, which
 *   destroys the namespace together with its rules. Nothing outlives it.
 *
 * Therefore nfqbt_netns_enter() must be called before any thread is
 * created (unshare() only moves the calling thread; threads created later
 * inherit its namespace).
 *
 * Every loop here is bounded in count and in time.
 */
#ifndef NFQBT_HARNESS_H
#define NFQBT_HARNESS_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include <libnfq-batch/libnfq-batch.h>
#include <libnfq-batch/pool.h>

#ifndef SO_RCVMARK
#define SO_RCVMARK 75
#endif

/* Timeout of one Check test case, in seconds; of one that moves much
 * traffic or many processes. */
#define NFQBT_TCASE_TIMEOUT		30
#define NFQBT_TCASE_TIMEOUT_LONG	60

/* Highest sequence number (exclusive) the receiver keeps track of. */
#define NFQBT_RX_MAX_SEQ	65536u
/* The receiver keeps the payload of the datagrams with seq below this. */
#define NFQBT_RX_STORE		64u
#define NFQBT_RX_STORE_BYTES	2048u

/* --- Namespace and rules ----------------------------------------------- */

/* Enter a fresh network namespace and bring `lo` up; ck_assert on failure.
 * Call first in every test, before creating any thread. */
void nfqbt_netns_enter(void);

/* The main() of an integration test: run @s (each test in its own
 * process, see above) as root; without root, skipped (77) locally and a
 * failure (1) in CI (CI set). A flow set other than 0 (nfqbt_flow_set())
 * is named on stdout first; a bad NFQBT_FLOW_SET is a hard error (99).
 * Returns the exit status. */
int nfqbt_run_suite(const char *name, Suite *s);

/* The main() of a test that needs no kernel nor root: run @s (each test
 * in its own process unless CK_FORK=no). Returns the exit status. */
int nfqbt_run(Suite *s);

/* A test case @name of @s, each test bounded by @timeout seconds. */
TCase *nfqbt_tcase(Suite *s, const char *name, double timeout);
/* A test case @name of @s with the tests of @tests (a list that NULL
 * ends), each bounded by @timeout seconds (0: Check's default,
 * CK_DEFAULT_TIMEOUT): a suite as a table of its tests. */
TCase *nfqbt_tcase_tests(Suite *s, const char *name, double timeout,
			 const TTest *const *tests);
/* The same, each test in a fresh namespace: nfqbt_netns_enter() as a
 * checked fixture (in the test's process, before the test body). */
TCase *nfqbt_tcase_netns(Suite *s, const char *name, double timeout);

/* Run `iptables <formatted args>` (in the test's namespace); ck_assert that
 * it succeeded. */
void nfqbt_iptables(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same with ip6tables. */
void nfqbt_ip6tables(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make ::1 usable on lo in the test's namespace (IPv6 on for lo there,
 * whatever the host's default); ck_assert that it is. After
 * nfqbt_netns_enter(). */
void nfqbt_lo6_up(void);

/* Queue UDP to 127.0.0.1:@dport leaving through lo to queue @qnum. */
void nfqbt_rule_queue(uint16_t dport, uint16_t qnum, bool bypass);

/* Monotonic clock in milliseconds. */
uint64_t nfqbt_now_ms(void);
/* CPU time (user + system) of the calling thread, in milliseconds. */
uint64_t nfqbt_thread_cpu_ms(void);
void nfqbt_sleep_ms(unsigned int ms);

/* --- UDP receiver (a thread) ------------------------------------------- */

/* Whether seq @seq should arrive. */
typedef bool (*nfqbt_expect_fn)(uint32_t seq, void *data);

struct nfqbt_rx_opts {
	/* stop once this many different seqs arrived (of those @expect
	 * accepts, when set), plus linger_ms (0: never): duplicates and
	 * datagrams that should not have come never end it early */
	unsigned int expected;
	nfqbt_expect_fn expect;
	void *expect_data;
	/* after `expected` is reached keep reading this long, to catch
	 * duplicates and extras (default 100) */
	unsigned int linger_ms;
	/* stop after this long without a datagram (default 1000) */
	unsigned int quiet_ms;
	/* hard bound on the receiver's life (default 15000) */
	unsigned int timeout_ms;
	/* track seqs below this (default NFQBT_RX_MAX_SEQ) */
	unsigned int max_seq;
};

struct nfqbt_rx;

/* Bind 127.0.0.1:@port (SO_RCVMARK on, big receive buffer) and start the
 * receiver thread. @o may be NULL for the defaults. ck_assert on failure. */
struct nfqbt_rx *nfqbt_rx_start(uint16_t port, const struct nfqbt_rx_opts *o);
/* Wait for the receiver to stop by itself (expected/quiet/timeout). */
void nfqbt_rx_wait(struct nfqbt_rx *rx);
/* Ask the receiver to stop now and wait for it. */
void nfqbt_rx_stop(struct nfqbt_rx *rx);
/* Stop (if needed), close the socket, free. ck_assert the thread saw no
 * socket error. */
void nfqbt_rx_free(struct nfqbt_rx *rx);

/* Datagrams received so far (all of them, also malformed ones); safe while
 * the receiver runs. The other getters are for after it stopped. */
unsigned int nfqbt_rx_total(const struct nfqbt_rx *rx);
/* The receiver's datagram counter itself, for a sender's window. */
const atomic_uint *nfqbt_rx_total_ptr(const struct nfqbt_rx *rx);
/* Wait until at least @n datagrams arrived; false on timeout. */
bool nfqbt_rx_wait_total(const struct nfqbt_rx *rx, unsigned int n,
			 unsigned int timeout_ms);
/* ck_assert that @n more datagrams arrive within 15 s (traffic moves on
 * after @what). */
void nfqbt_rx_assert_more(const struct nfqbt_rx *rx, unsigned int n,
			  const char *what);
/* Datagrams shorter than 4 bytes or with seq >= max_seq. */
unsigned int nfqbt_rx_bad(const struct nfqbt_rx *rx);
/* How many times @seq arrived. */
unsigned int nfqbt_rx_count(const struct nfqbt_rx *rx, uint32_t seq);
/* The mark of the last datagram with @seq; false if none came with an
 * SO_MARK control message (or @seq never arrived). */
bool nfqbt_rx_mark(const struct nfqbt_rx *rx, uint32_t seq, uint32_t *mark);
/* The same mark; ck_assert that there is one. */
uint32_t nfqbt_rx_mark_of(const struct nfqbt_rx *rx, uint32_t seq);
/* The payload of the last datagram with @seq (< NFQBT_RX_STORE), NULL if
 * none; *len gets its full length (possibly more than what is stored). */
const uint8_t *nfqbt_rx_payload(const struct nfqbt_rx *rx, uint32_t seq,
				size_t *len);

/* ck_assert that of the seqs [@first, @first + @n) exactly those for which
 * @expect returns true (all of them if @expect is NULL) arrived, each
 * exactly once, and that nothing else arrived at all. */
void nfqbt_rx_assert_exact(const struct nfqbt_rx *rx, uint32_t first,
			   unsigned int n, nfqbt_expect_fn expect, void *data);
/* nfqbt_rx_wait(), then nfqbt_rx_assert_exact(). */
void nfqbt_rx_wait_exact(struct nfqbt_rx *rx, uint32_t first, unsigned int n,
			 nfqbt_expect_fn expect, void *data);

/* --- UDP sender -------------------------------------------------------- */

/* 127.0.0.1:@port. */
struct sockaddr_in nfqbt_lo_addr(uint16_t port);

/*
 * Flow sets. The kernel spreads flows over queues (--queue-balance, nft
 * "queue num A-B" fanout) by a hash of their addresses with a seed drawn
 * once per boot, so which flow lands on which queue changes from boot to
 * boot. A test that sends flows through such a spread takes its source
 * addresses from nfqbt_flow_addr(), and holds for any mapping (or probes
 * it): NFQBT_FLOW_SET=K in the environment (0 .. 255, default 0) moves
 * every flow to other addresses, another mapping on the same boot, with no
 * rebuild (tests/flow-sets.sh runs programs over many sets).
 */
#define NFQBT_FLOW_SET_MAX	255

/* The flow set NFQBT_FLOW_SET selects (0 if unset); -1 if it is not a
 * number from 0 to NFQBT_FLOW_SET_MAX. */
int nfqbt_flow_set(void);
/* The source address (host order) of the flow whose last byte is @host
 * (1 .. 254) in the flow set in use: 127.0.K.@host, K the set (set 0:
 * 127.0.0.@host). Loopback only. ck_assert on a bad set or @host. */
uint32_t nfqbt_flow_addr(unsigned int host);

/* [::1]:@port. */
struct sockaddr_in6 nfqbt_lo6_addr(uint16_t port);
/* A UDP socket for sending (close-on-exec, 100 ms send timeout), bound to
 * the source address @src (host order; 0: any), so that each such socket
 * is a flow of its own. Returns the fd, or -1 with errno. */
int nfqbt_udp_socket(uint32_t src);

struct nfqbt_tx_opts {
	uint16_t port;			/* destination 127.0.0.1:port */
	uint32_t src;			/* source address, host order (0:
					 * 127.0.0.1, the kernel's choice) */
	uint32_t first_seq;		/* seqs first_seq .. first_seq+count-1 */
	unsigned int count;
	unsigned int size;		/* UDP payload bytes, >= 4 (default 64) */
	/* if above size: each datagram's size varies in [size, size_max],
	 * a fixed function of its seq */
	unsigned int size_max;
	/* windowed: keep at most `window` datagrams ahead of *progress
	 * (counted from its value when sending starts); 0: no window */
	unsigned int window;
	const atomic_uint *progress;
	unsigned int pace_us;		/* pause between datagrams */
	int priority;			/* SO_PRIORITY of the socket (0: none) */
	unsigned int timeout_ms;	/* hard bound (default 10000) */
};

/* Send synchronously; returns how many datagrams left (sendto succeeded or
 * the packet was dropped by netfilter on the spot with EPERM). ck_assert on
 * any other socket error. */
unsigned int nfqbt_send(const struct nfqbt_tx_opts *o);
/* nfqbt_send() of the seqs [@first, @first + @n) to @port (64 bytes
 * each); ck_assert that all of them left. */
void nfqbt_send_seqs(uint16_t port, uint32_t first, unsigned int n);

struct nfqbt_tx;

/* Send from a thread. */
struct nfqbt_tx *nfqbt_tx_start(const struct nfqbt_tx_opts *o);
/* Datagrams sent so far by a running sender. */
unsigned int nfqbt_tx_sent(const struct nfqbt_tx *tx);
/* From now on, send without the window. */
void nfqbt_tx_unwindow(struct nfqbt_tx *tx);
/* Stop the sender now; returns what nfqbt_tx_join() would; frees. */
unsigned int nfqbt_tx_stop(struct nfqbt_tx *tx);
/* Stop the sender and ck_assert that everything it sent arrives at @rx
 * within 15 s; returns how many it sent; frees. */
unsigned int nfqbt_tx_finish(struct nfqbt_tx *tx, const struct nfqbt_rx *rx);
/* Wait for the sender thread; returns what nfqbt_send() would; frees. */
unsigned int nfqbt_tx_join(struct nfqbt_tx *tx);

/* The payload size the sender uses for @seq. */
unsigned int nfqbt_tx_size(const struct nfqbt_tx_opts *o, uint32_t seq);

/* Fill @buf (@size bytes, >= 4) as the sender does for @seq. */
void nfqbt_fill_payload(uint8_t *buf, size_t size, uint32_t seq);

/* --- TCP transfer ------------------------------------------------------- */

/* One TCP connection on 127.0.0.1:port: a source thread writes @bytes and
 * closes, a sink thread reads to the end. */
struct nfqbt_tcp {
	int lfd;
	struct nfqb_queue *q;	/* interrupted when the sink is done (or NULL) */
	uint16_t port;
	size_t bytes;
	_Atomic size_t got;	/* read by the sink */
	atomic_bool done;	/* the sink read everything, FIN included */
	pthread_t src, dst;
};

/* Listen, then start the sink and the source; ck_assert on failure.
 * @q, if not NULL, gets nfqb_queue_interrupt() when the sink is done (a
 * consumer may sleep in nfqb_recv()). */
void nfqbt_tcp_start(struct nfqbt_tcp *k, uint16_t port, size_t bytes,
		     struct nfqb_queue *q);
/* Wait for both threads and close the listener. */
void nfqbt_tcp_join(struct nfqbt_tcp *k);

/* --- Queues ----------------------------------------------------------- */

/* nfqb_queue_open(@num); ck_assert that it succeeded. */
struct nfqb_queue *nfqbt_queue_open(uint16_t num);
/* The same, then switched to non-blocking. */
struct nfqb_queue *nfqbt_queue_open_nb(uint16_t num);
/* The library's counters of @q; ck_assert that nfqb_queue_stats()
 * succeeded (0xee bytes before the call, so that a field it left
 * alone would show). */
struct nfqb_stats nfqbt_queue_stats(const struct nfqb_queue *q);

/* --- Consumer helpers -------------------------------------------------- */

/* The seq of a queued IPv4/UDP packet (the first 4 payload bytes); false if
 * the packet is not IPv4/UDP with at least 4 bytes of payload. */
bool nfqbt_pkt_seq(const struct nfqb_packet *p, uint32_t *seq);

/* Decide @p (must finalize it, now or later). Return < 0 to stop. */
typedef int (*nfqbt_decide_fn)(struct nfqb_packet *p, uint32_t seq,
			       void *data);

struct nfqbt_cons {
	struct nfqb_queue *q;
	nfqbt_decide_fn decide;
	void *data;
	unsigned int max_vec;	/* packets per nfqb_recv() (default 64) */
	/* results */
	atomic_uint handled;	/* packets handed to decide() */
	unsigned int enobufs;	/* nfqb_recv() ENOBUFS returns */
	unsigned int not_udp;	/* packets without a seq (given to decide()
				 * with seq UINT32_MAX) */
};

/* Set @c up for queue @q; the queue is switched to non-blocking. */
void nfqbt_cons_init(struct nfqbt_cons *c, struct nfqb_queue *q,
		     nfqbt_decide_fn decide, void *data);

/* Receive and decide until @n more packets were handled or @timeout_ms
 * passed; then nfqb_flush(). Returns packets handled by this call.
 * ck_assert on nfqb_recv() errors other than EAGAIN, EINTR, ENOBUFS. */
unsigned int nfqbt_cons_run(struct nfqbt_cons *c, unsigned int n,
			    unsigned int timeout_ms);

/* Send @o from a thread (with a window: kept at most o->window ahead of
 * what @c handled, unless o->progress says otherwise) while @c handles
 * the packets; ck_assert that @c handled o->count within @timeout_ms and
 * that all of them left the sender. */
void nfqbt_cons_pump(struct nfqbt_cons *c, const struct nfqbt_tx_opts *o,
		     unsigned int timeout_ms);

/* Receive exactly @n packets of @q into @vec (blocking queue; up to 1000
 * nfqb_recv() calls); ck_assert on errors other than EINTR. */
void nfqbt_recv_n(struct nfqb_queue *q, struct nfqb_packet **vec,
		  unsigned int n);

/* Ready-made deciders: accept everything; drop everything. */
int nfqbt_decide_accept(struct nfqb_packet *p, uint32_t seq, void *data);
int nfqbt_decide_drop(struct nfqb_packet *p, uint32_t seq, void *data);
/* A pool callback that accepts everything. */
int nfqbt_pool_accept(struct nfqb_packet *p, void *policy, void *cb_data,
		      struct nfqb_verdict *v);
/* Accept with the mark *(const uint32_t *)@data. */
int nfqbt_decide_mark(struct nfqb_packet *p, uint32_t seq, void *data);

/* A rules file for nfqb-ips: mkstemp(@tmpl) with the printf-style text,
 * readable by all (the IPS may run as nobody). ck_assert on failure. */
void nfqbt_ips_rules(char *tmpl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ips/nfqb-ips of this build tree, looked for up from this
 * program: its path in @path, false if not found. */
bool nfqbt_find_ips(char *path, size_t size);

/* Make a program of the build tree runnable where a sandboxed service or
 * another mount namespace can see it, whatever the path of the build tree
 * (systemd's PrivateTmp= hides /tmp and /var/tmp, ProtectHome= /home,
 * /root and /run/user): copy @prog (an executable, or the libtool wrapper
 * script of one) to @dir/bin/, and the shared libraries it loads from the
 * build tree @builddir (found as its wrapper finds them, in
 * @builddir/lib/.libs) to @dir/lib/. Run the copy, whose path is put in
 * @exe, with LD_LIBRARY_PATH=@dir/lib. ck_assert on failure. */
void nfqbt_stage_program(const char *prog, const char *builddir,
			 const char *dir, char *exe, size_t size);

/* nfqbt_stage_program() of this build tree's ips/nfqb-ips
 * (nfqbt_find_ips()). */
void nfqbt_stage_ips(const char *dir, char *exe, size_t size);

/* This build's nfqb-ips staged (nfqbt_stage_ips()) once per test program
 * in /run/nfqbt-stage.PID (PID: the process running the suite, which
 * removes it after the suite), readable by every user: for a test that
 * runs it as another user (--user nobody: its upgrade re-executes it and
 * loads the library again, which a build tree under /root, mode 0700,
 * hides from nobody) or in another mount namespace. Its path in @exe;
 * puts /run/nfqbt-stage.PID/lib first in LD_LIBRARY_PATH, for the
 * programs the calling test starts. Call it before creating threads. */
void nfqbt_ips_staged(char *exe, size_t size);

/* rm -rf @dir (bounded by the tree's depth; no symbolic link followed). */
void nfqbt_rm_rf(const char *dir);

/* Wait until *@counter >= @n; false on timeout. */
bool nfqbt_wait_count(const atomic_uint *counter, unsigned int n,
		      unsigned int timeout_ms);

/* --- A flow: traffic through one queue --------------------------------- */

/*
 * What most tests set up: UDP to 127.0.0.1:@port queued to @qnum
 * (nfqbt_rule_queue()), the queue open (nfqbt_queue_open()), a receiver
 * on the port (nfqbt_rx_start() with @ro, NULL for the defaults) and a
 * consumer of the queue deciding with @decide (nfqbt_cons_init(): the
 * queue is non-blocking; @decide NULL: no consumer, the queue stays
 * blocking). Configure the queue before sending.
 */
struct nfqbt_flow {
	uint16_t port;
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	struct nfqbt_cons c;
};

void nfqbt_flow_start(struct nfqbt_flow *f, uint16_t port, uint16_t qnum,
		      const struct nfqbt_rx_opts *ro, nfqbt_decide_fn decide,
		      void *data);
/* Close the queue (ck_assert that it closed) and free the receiver. */
void nfqbt_flow_end(struct nfqbt_flow *f);

/* --- The worker pool ---------------------------------------------------- */

/* nfqb_pool_create() and nfqb_pool_start(); ck_assert both. */
struct nfqb_pool *nfqbt_pool_start(const struct nfqb_pool_config *cfg);
/* nfqb_pool_stop() and nfqb_pool_wait(); ck_assert that it stopped
 * cleanly (0). The pool is still to be destroyed. */
void nfqbt_pool_stop(struct nfqb_pool *pool);

/* --- The library's test seam ------------------------------------------- */

/*
 * For tests that link the internal library (lib/seam.h): from now on one
 * in @every (0 or 1: each) of the library's verdict sends, every datagram
 * but the configuration requests, fails with @err; the others go out.
 * Installs the seam (a sendmsg only); @err 0: nothing fails any more
 * (the seam stays). nfqbt_seam_off() goes back to the system.
 */
void nfqbt_fail_verdicts(int err, unsigned int every);
void nfqbt_seam_off(void);
/* The same seam: every wake-up send (a datagram to the socket's own port,
 * the read sleep's) fails with @err from now on (0: none does). */
void nfqbt_fail_pokes(int err);
/* The same seam: the library's system calls counted from now on (zeroed
 * here; read the counters any time). */
struct nfqbt_calls {
	atomic_uint sends;	/* datagrams to the kernel */
	atomic_uint pokes;	/* ... to the socket's own port (wake-ups) */
	atomic_uint reads;	/* recvmmsg(MSG_DONTWAIT) */
	atomic_uint reads_asleep;	/* recvmmsg(MSG_WAITFORONE) */
	atomic_uint rcvtimeos;	/* SO_RCVTIMEO set */
	atomic_uint waits;	/* epoll_wait(), poll() */
};
const struct nfqbt_calls *nfqbt_count_calls(void);

/* --- Expected counters ------------------------------------------------- */

/*
 * Counters checked against @want: checks separated by spaces, each
 * "NAME OP VALUE" without spaces, NAME a field of struct nfqb_stats (of
 * struct nfqb_kstats for the kernel's view) or fields joined by '+' (their
 * sum), OP one of = != < <= > >=, VALUE a number (strtoull(), base 0):
 *   "packets=64 accepted=32 dropped=32 defaults+timeouts=0"
 * nfqbt_stats_match() and nfqbt_kstats_match() return whether every check
 * holds; if not, or if @want cannot be read (an unknown counter, no check
 * at all), false and the reason in @why. tests/unit/test_harness.c tests
 * them.
 */
bool nfqbt_stats_match(const struct nfqb_stats *st, const char *want,
		       char *why, size_t size);
bool nfqbt_kstats_match(const struct nfqb_kstats *ks, const char *want,
			char *why, size_t size);

/* ck_assert that the counters @st match @... (a printf format and its
 * arguments); the failure names the caller's file and line. */
#define nfqbt_assert_counters(st, ...)					\
	nfqbt_assert_match_at(__FILE__, __LINE__,			\
			      (const struct nfqb_stats *){ (st) }, false,	\
			      __VA_ARGS__)
/* The same with the counters of queue @q (nfqbt_queue_stats()); its
 * value is the counters, for checks of the test's own. */
#define nfqbt_assert_stats(q, ...) ({					\
	struct nfqb_stats st_ = nfqbt_queue_stats(q);			\
									\
	nfqbt_assert_counters(&st_, __VA_ARGS__);			\
	st_; })
/* The same with the kernel's view of queue @num (nfqbt_kstats()). */
#define nfqbt_assert_kstats(num, ...) ({					\
	struct nfqb_kstats ks_ = nfqbt_kstats(num);			\
									\
	nfqbt_assert_match_at(__FILE__, __LINE__,			\
			      (const struct nfqb_kstats *){ &ks_ }, true,	\
			      __VA_ARGS__);				\
	ks_; })

/* @s is a struct nfqb_kstats if @kernel, else a struct nfqb_stats. */
void nfqbt_assert_match_at(const char *file, int line, const void *s,
			   bool kernel, const char *want, ...)
	__attribute__((format(printf, 5, 6)));

/* --- Kernel statistics ------------------------------------------------- */

/* The kernel's view of queue @num; ck_assert that it is bound. */
struct nfqb_kstats nfqbt_kstats(uint16_t num);

/* Wait until queue @num holds at least @n packets (queue_total); false on
 * timeout. */
bool nfqbt_wait_kqueue_total(uint16_t num, unsigned int n,
			     unsigned int timeout_ms);

/* The netlink port id of a socket (getsockname). */
uint32_t nfqbt_portid(int fd);

/* --- Packets ----------------------------------------------------------- */

/*
 * Build into @out (room @out_size) a copy of the IPv4/UDP packet @orig
 * (@orig_len bytes, IP options kept) whose UDP payload is @payload
 * (@payload_len bytes): IP total length and header checksum recomputed,
 * UDP length set, UDP checksum 0 (none). Returns the new length, or 0 if
 * @orig is not IPv4/UDP or @out is too small.
 */
size_t nfqbt_build_udp4(uint8_t *out, size_t out_size, const uint8_t *orig,
			size_t orig_len, const uint8_t *payload,
			size_t payload_len);

/* Standard Internet checksum of @len bytes. */
uint16_t nfqbt_inet_csum(const void *data, size_t len);

#endif /* NFQBT_HARNESS_H */
