/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: shared declarations of the benchmark's parts.
 *
 * One run: a child process makes its own network namespace, installs the
 * NFQUEUE rule(s), forks the consumer (pinned to one CPU) and then acts as
 * the traffic process (pinned to the other CPU). Its work is one of:
 * - UDP streaming or drain: it sends UDP datagrams with sendmmsg, never
 *   more than a window in flight, and receives the delivered ones itself,
 *   so a correct run is lossless (nfqb-bench-traffic.c);
 * - TCP bulk: an iperf3 server and client, both children of it, in its
 *   namespace and on its CPU (nfqb-bench-tcp.c);
 * - request/response: a UDP or TCP ping-pong against an echo server child,
 *   optionally with a paced background UDP load (nfqb-bench-ping.c).
 */
#ifndef NFQB_BENCH_H
#define NFQB_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_PORT		9999
#define BENCH_LOAD_PORT		9998		/* latency under load: the load */
#define BENCH_TCP_PORT		5201		/* iperf3 */
#define BENCH_TCP_CPORT		40000		/* iperf3 --cport: streams' ports */
#define BENCH_PING_PORT		9999		/* TCP ping-pong */
#define BENCH_MAX_TCP_STREAMS	128
#define BENCH_MARK_BASE		0x4e000100u	/* mark = base + flow */
#define BENCH_DROP_EVERY	13		/* mixed: seq % 13 == 0 dropped */
#define BENCH_MAX_FLOWS		64
#define BENCH_VEC		64		/* packets per receive vector */

enum bench_kind {
	BENCH_KERNEL,		/* no NFQUEUE rule: the limit */
	BENCH_REF_A,		/* libnetfilter_queue, verdict per packet */
	BENCH_REF_B,		/* libmnl, hand-written batch of 64 */
	BENCH_LIB,		/* libnfq-batch, all accept */
	BENCH_LIB_MIXED,	/* libnfq-batch, drops + marks, out of order */
	BENCH_LIB_POOL2,	/* libnfq-batch, 2 queues, a thread each */
	/* not in the default set: only built with the DAQ module, asked
	 * for by name (--consumers daq-nfq,daq-nfqb) */
	BENCH_DAQ_NFQ,		/* daqtest -p, libdaq's stock nfq module */
	BENCH_DAQ_NFQB,		/* daqtest -p, our daq_nfqb module */
	/* asked for by name (-c py-nfq,py-compat,py-batch): Python
	 * consumers (nfqb-bench-py.c) */
	BENCH_PY_NFQ,		/* python-netfilterqueue 1.1.0 */
	BENCH_PY_COMPAT,	/* nfqb.netfilterqueue, the same callback */
	BENCH_PY_BATCH,		/* nfqb.Queue.recv() */
	BENCH_NKINDS,
};

/* The consumers run when none is asked for by name. */
#define BENCH_NKINDS_DEFAULT	BENCH_DAQ_NFQ

/* Consumers that take part in the TCP and latency modes (lib-mixed drops
 * by datagram number, which means nothing there). */
#define BENCH_KIND_ANY_TRAFFIC(k)	((k) != BENCH_LIB_MIXED)

enum bench_work {
	BENCH_WORK_UDP,		/* closed-loop UDP stream (stream, drain) */
	BENCH_WORK_TCP,		/* iperf3 bulk */
	BENCH_WORK_PING_UDP,	/* UDP request/response, optional load */
	BENCH_WORK_PING_TCP,	/* TCP request/response */
};

enum bench_hook {
	BENCH_HOOK_INPUT,
	BENCH_HOOK_OUTPUT,
};

struct bench_cfg {
	uint64_t packets;		/* datagrams per run */
	unsigned int payload;		/* UDP payload bytes (>= 8) */
	unsigned int window;		/* max datagrams in flight */
	unsigned int burst;		/* datagrams per sendmmsg */
	unsigned int flows;		/* sending sockets (source addresses) */
	unsigned int batch;		/* reference B / library batch limit */
	unsigned int maxlen;		/* kernel queue length */
	unsigned int rcvbuf;		/* socket receive buffers, bytes */
	int cpu_traffic;
	int cpu_consumer;
	int nice;			/* of the traffic and consumer processes */
	int rt_prio;			/* > 0: SCHED_FIFO with this priority */
	enum bench_hook hook;
	bool drain;			/* saturate the consumer, see traffic */
	double timeout;			/* seconds a run may take at most */
	double stall;			/* seconds without progress = failure */
	int sys_enter_id;		/* raw_syscalls:sys_enter, -1 if none */
	enum bench_work work;
	int gso;			/* NFQA_CFG_F_GSO: -1 leave, 0 off, 1 on */
	unsigned int mtu;		/* loopback MTU, 0: leave it */
	bool both_ways;			/* tcp/ping: queue the replies too */
	/* TCP bulk */
	unsigned int tcp_time;		/* iperf3 -t, seconds */
	unsigned int tcp_streams;	/* iperf3 -P */
	/* request/response */
	unsigned int ping_count;	/* round trips at most (after warm-up) */
	unsigned int ping_size;		/* bytes per request and response */
	double ping_time;		/* seconds the round trips may take */
	double load_pps;		/* background UDP datagrams/s, 0: none */
};

/* What a consumer writes back (shared memory between run and consumer). */
struct bench_cons {
	int start;			/* set by the run: go ahead and bind */
	int ready;			/* set by the consumer: queues bound */
	int failed;
	char err[160];
	uint64_t packets;		/* packet messages handled */
	uint64_t recv_calls;		/* syscalls, counted by the consumer */
	uint64_t send_calls;
	uint64_t other_calls;
	uint64_t verdict_msgs;		/* NFQNL_MSG_VERDICT */
	uint64_t batch_msgs;		/* NFQNL_MSG_VERDICT_BATCH */
	uint64_t enobufs;
	uint64_t kernel_errors;
	/* library only: a few of its counters, summed over its queues */
	uint64_t lib_flushes;
	uint64_t lib_flush_limit;
	uint64_t lib_flush_idle;
	uint64_t lib_flush_latency;
	uint64_t lib_fallbacks;
	uint64_t lib_timeouts;
	uint64_t lib_rejected;
	/* TCP mode only (counting costs a little) */
	uint64_t gso_packets;		/* packets marked GSO by the kernel */
	uint64_t bytes;			/* packet bytes as queued */
	/* Python consumers: CPU time before binding and after the stop (the
	 * interpreter's start, imports, exit), taken off the consumer's */
	uint64_t outside_user_ns;
	uint64_t outside_sys_ns;
};

/* The result of one run, written by the run process. */
struct bench_result {
	int done;
	int failed;
	char err[200];
	enum bench_kind kind;
	unsigned int payload;
	unsigned int rep;
	bool timed;			/* false: the syscall-counting run */
	bool drain;			/* run in drain mode */
	uint64_t sent;
	uint64_t expected;		/* datagrams that should arrive */
	uint64_t delivered;		/* distinct datagrams that did */
	uint64_t lost;
	uint64_t dups;
	uint64_t wrong_verdict;		/* arrived though it had to be dropped */
	uint64_t bad_mark;
	uint64_t kq_dropped;		/* kernel: queue full */
	uint64_t kq_user_dropped;	/* kernel: socket full */
	double elapsed;			/* s, first send to last delivery */
	double pps;			/* sent / elapsed */
	uint64_t cons_user_ns;		/* consumer process, whole life (a Python
				 * one: less its start and exit) */
	uint64_t cons_sys_ns;
	long cons_maxrss_kb;
	uint64_t traffic_user_ns;	/* traffic process, traffic window */
	uint64_t traffic_sys_ns;
	double busy_traffic;		/* % busy of the CPUs, traffic window */
	double busy_consumer;
	int64_t syscalls;		/* kernel-counted, -1 if unavailable */
	enum bench_work work;
	int scen;			/* index into the invocation's scenarios */
	/* TCP bulk (from iperf3 -J) */
	double gbps;			/* end.sum_received.bits_per_second / 1e9 */
	uint64_t tcp_bytes;		/* end.sum_received.bytes */
	double tcp_seconds;		/* end.sum_received.seconds */
	uint64_t retransmits;		/* end.sum_sent.retransmits */
	double iperf_cpu_host;		/* cpu_utilization_percent.host_total */
	double iperf_cpu_remote;	/* ... remote_total */
	/* request/response, microseconds */
	uint64_t pings;			/* round trips measured */
	uint64_t ping_lost;		/* requests without a response */
	double lat_min, lat_mean, lat_p50, lat_p99, lat_p999, lat_max;
	/* background load of a request/response run */
	double load_target_pps;
	double load_pps;		/* achieved: sent / sending time */
	uint64_t load_sent, load_delivered;
	bool calibration;		/* the load's calibration run */
	struct bench_cons cons;
};

/* Consumer table */
struct bench_consumer {
	const char *name;		/* for --consumers and JSON */
	const char *label;		/* for the table */
	unsigned int queues;		/* 0: no rule */
	bool drops;			/* mixed decisions */
	bool marks;
	int (*run)(const struct bench_cfg *cfg, struct bench_cons *c);
};

extern const struct bench_consumer bench_consumers[BENCH_NKINDS];
extern volatile sig_atomic_t bench_stop;

/* nfqb-bench-run.c */
int bench_spawn(char *const argv[], const char *env_override, int out_fd);
int bench_wait_deadline(int pid, double seconds, int *status);
double bench_now(void);
int bench_run(const struct bench_cfg *cfg, enum bench_kind kind,
	      struct bench_result *res);
int bench_find_sys_enter_id(void);

/* nfqb-bench-traffic.c */
struct bench_traffic {
	uint64_t sent, expected, delivered, dups, wrong_verdict, bad_mark;
	uint64_t first_bad_seq;		/* first datagram with a wrong mark */
	uint32_t first_bad_mark, first_bad_expected;
	double elapsed;
	bool timed_out, stalled;
};
bool bench_seq_dropped(uint64_t seq, bool drops);
unsigned int bench_seq_flow(const struct bench_cfg *cfg, uint64_t seq);
uint32_t bench_flow_addr(unsigned int flow);
int bench_flow_of_addr(uint32_t addr);
int bench_traffic(const struct bench_cfg *cfg, bool drops, bool marks,
		  int consumer_pid, const volatile int *abort_flag,
		  struct bench_traffic *t, char *err, size_t errlen);

/* --- what one invocation measured (nfqb-bench-report.c) --------------- */

/* A scenario: what was run, apart from the consumer and the repetition. */
struct bench_scen {
	enum bench_work work;
	bool drain;			/* UDP: drain mode */
	unsigned int payload;		/* UDP stream/drain */
	unsigned int streams;		/* TCP: iperf3 -P */
	int gso;			/* TCP: -1 default, 0 off, 1 on */
	double load_pct;		/* ping: % of ref A's rate, 0: idle */
	double load_pps;		/* ping: load, 0: idle */
	char name[48];
};

#define BENCH_MAX_SCEN		64

struct bench_set {
	struct bench_result *res;
	unsigned int nres;
	struct bench_scen scen[BENCH_MAX_SCEN];
	unsigned int nscen;
	enum bench_kind kinds[BENCH_NKINDS];	/* as asked, in order */
	unsigned int nkinds;
	unsigned int reps;
	double noise_pct;		/* spread of a reference that is noisy */
	const struct bench_cfg *cfg;	/* as for the last run */
	unsigned int ping_warmup;
	/* latency under load */
	double calib_pps;		/* ref A's streaming rate, 0: none */
	int calib_run;			/* its index in res, -1: none */
	bool load_fixed;		/* rates given with --load-pps */
};

enum bench_metric {
	BM_PPS,			/* UDP: datagrams/s */
	BM_CPU_NS,		/* UDP: consumer CPU ns per datagram */
	BM_GBPS,		/* TCP: Gbit/s received */
	BM_CPU_GBIT,		/* TCP: consumer CPU ms per Gbit */
	BM_P50, BM_P99, BM_P999, BM_MAX,	/* ping: us */
	BM_LOAD_PPS,		/* ping: achieved load */
	BM_GSO_PCT,		/* TCP: % of queued packets marked GSO */
	BM_PKT_BYTES,		/* TCP: bytes per queued packet */
	BM_RETRANS,		/* TCP: sender's retransmits */
	BM_TRAFFIC_CPU,		/* TCP: iperf3 processes' CPU ms per Gbit */
	BM_QDROP,		/* TCP: packets the kernel queue dropped */
};

struct bench_stat {
	unsigned int n;
	double med, min, max;
};

struct bench_target {
	char name[64];
	double value, vmin, vmax;	/* median and spread of paired values */
	double limit;
	bool le;			/* value <= limit is met; else >= */
	bool known;
};

int bench_scen_add(struct bench_set *s, const struct bench_scen *sc);
bool bench_metric(const struct bench_result *r, enum bench_metric m,
		  double *v);
struct bench_stat bench_stat_of(const struct bench_set *s, int scen,
				enum bench_kind k, enum bench_metric m);
struct bench_stat bench_paired(const struct bench_set *s, int scen,
			       enum bench_kind k, enum bench_kind ref,
			       enum bench_metric m, bool diff);
double bench_median(double *v, unsigned int n);
bool bench_has_kind(const struct bench_set *s, enum bench_kind k);
/* "median (min..max)", "-" without runs; @prec digits (-1: automatic) */
void bench_fmt_stat(char *buf, size_t len, const struct bench_stat *st,
		    int prec);
void bench_json_str(FILE *f, const char *str);
void bench_print_ratios(FILE *f, const struct bench_set *s, int scen);
void bench_print_tcp(FILE *f, const struct bench_set *s);
void bench_print_latency(FILE *f, const struct bench_set *s);
unsigned int bench_targets_new(const struct bench_set *s,
			       struct bench_target *t, unsigned int max);
void bench_print_targets_new(FILE *f, const struct bench_set *s);
void bench_json_extra(FILE *f, const struct bench_set *s);

/* nfqb-bench-plot.c: gnuplot (NFQB_BENCH_GNUPLOT names another binary) */
struct bench_plot_row {
	char panel[8];			/* tcp, udp, p50, p99 */
	char series[48];
	char consumer[16];
	double value, min, max;
};
unsigned int bench_plot_rows(const struct bench_set *s,
			     struct bench_plot_row *rows, unsigned int max);
int bench_plot(const char *png, const char *title,
	       const struct bench_plot_row *rows, unsigned int n);
int bench_replot(const char *json_path, const char *png);

/* nfqb-bench-tcp.c: iperf3 in the run's namespace, results into @res */
int bench_wait_listen(unsigned int port, int pid, double seconds);
int bench_tcp(const struct bench_cfg *cfg, const volatile int *abort_flag,
	      struct bench_result *res);

/* nfqb-bench-ping.c: request/response (and load), results into @res */
int bench_ping(const struct bench_cfg *cfg, const volatile int *abort_flag,
	       struct bench_result *res);

/* consumers: nfqb-bench-ref.c, nfqb-bench-lib.c */
int bench_ref_a(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_ref_b(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_mixed(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_pool2(const struct bench_cfg *cfg, struct bench_cons *c);
/* nfqb-bench-daq.c (built with the DAQ module only) */
int bench_daq_nfq(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_daq_nfqb(const struct bench_cfg *cfg, struct bench_cons *c);

/* nfqb-bench-child.c: consumers that are another program */
const char *bench_env_or(const char *name, const char *def);
uint64_t bench_num_after(const char *text, const char *key);
bool bench_queue_bound(unsigned int num);
/* in the forked child: signals as by default, output into @out_fd */
void bench_child_setup(int out_fd);
/* Wait until child @pid has bound queue @num: 0; 1 if it exited first
 * (*status set); -1 if not within @max_s seconds or the run was stopped
 * (the child is killed and reaped). */
int bench_child_bound(pid_t pid, unsigned int num, double max_s,
		      int *status);
/* Wait for child @pid to end, passing the run's stop on as SIGTERM: 0
 * (*status set), or -1 with errno. */
int bench_child_wait(pid_t pid, int *status);
/* The run of a bound child @pid: tell the run the consumer is ready, wait
 * for the child to end (bench_child_wait()), then quiet down. 0 (*status
 * set), or -1 with @c failed ("waitpid(@what)"). */
int bench_child_run(pid_t pid, struct bench_cons *c, const char *what,
		    int *status);

/* nfqb-bench-py.c: the Python consumers, and their report */
int bench_py_nfq(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_py_compat(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_py_batch(const struct bench_cfg *cfg, struct bench_cons *c);
void bench_print_py(FILE *f, const struct bench_set *s);

/* helpers shared by consumers */
void bench_cons_fail(struct bench_cons *c, const char *what, int err);
void bench_cons_ready(struct bench_cons *c);
void bench_cons_quiet(void);
/* seq number and flow of a queued IPv4/UDP packet; false if not ours */
bool bench_parse_pkt(const uint8_t *pl, uint32_t len, uint64_t *seq,
		     int *flow);

#endif /* NFQB_BENCH_H */
