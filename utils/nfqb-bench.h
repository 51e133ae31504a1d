/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: shared declarations of the benchmark's parts.
 *
 * One run: a child process makes its own network namespace, installs the
 * NFQUEUE rule(s), forks the consumer (pinned to one CPU) and then acts as
 * the traffic process (pinned to the other CPU): it sends UDP datagrams
 * with sendmmsg, never more than a window in flight, and receives the
 * delivered ones itself, so a correct run is lossless.
 */
#ifndef NFQB_BENCH_H
#define NFQB_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define BENCH_PORT		9999
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
	BENCH_NKINDS,
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
	uint64_t cons_user_ns;		/* consumer process, whole life */
	uint64_t cons_sys_ns;
	long cons_maxrss_kb;
	uint64_t traffic_user_ns;	/* traffic process, traffic window */
	uint64_t traffic_sys_ns;
	double busy_traffic;		/* % busy of the CPUs, traffic window */
	double busy_consumer;
	int64_t syscalls;		/* kernel-counted, -1 if unavailable */
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

/* consumers: nfqb-bench-ref.c, nfqb-bench-lib.c */
int bench_ref_a(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_ref_b(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_mixed(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_lib_pool2(const struct bench_cfg *cfg, struct bench_cons *c);

/* helpers shared by consumers */
void bench_cons_fail(struct bench_cons *c, const char *what, int err);
void bench_cons_ready(struct bench_cons *c);
void bench_cons_quiet(void);
/* seq number and flow of a queued IPv4/UDP packet; false if not ours */
bool bench_parse_pkt(const uint8_t *pl, uint32_t len, uint64_t *seq,
		     int *flow);

#endif /* NFQB_BENCH_H */
