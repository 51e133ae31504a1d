/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: what every part shares: the consumers and kinds of work, what
 * one run is given (struct bench_cfg) and what it gives back (struct
 * bench_result, with the consumer's struct bench_cons).
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
 *
 * Each part of nfqb-bench has a header of its own with what it exports;
 * this one includes none of them.
 */
#ifndef NFQB_BENCH_TYPES_H
#define NFQB_BENCH_TYPES_H

#include <stdbool.h>
#include <stdint.h>

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
	/* asked for by name (-c app-old,app): one application binary,
	 * nfqb-bench-app, on two libraries (nfqb-bench-ext.c) */
	BENCH_APP,		/* on this library */
	BENCH_APP_OLD,		/* on NFQB_BENCH_OLD_LIB's */
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
	/* Python consumers and nfqb-bench-app: CPU time before binding and
	 * after the stop (exec, the interpreter's start, imports, exit),
	 * taken off the consumer's */
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

#endif /* NFQB_BENCH_TYPES_H */
