// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daq-contract: daq_nfqb against libdaq's module contract, as Snort 3 uses
 * it, through libdaq's public API (what Snort's SFDAQInstance calls), on a
 * real NFQUEUE in a private network namespace (unshare, lo, iptables).
 * Every check is made at a UDP receiver in this process or on what libdaq
 * returns, never on the module's word alone.
 *
 *   daq-contract MODULE_DIR [CASE...]
 *
 * The cases (all by default), each reported "PASS name" or "FAIL name:
 * why", then a Check-style summary line for tests/run-all.sh:
 *
 *   finalize_timeout  verdict_timeout expires while the application holds
 *                     the message: finalize returns DAQ_SUCCESS (Snort
 *                     counts a message back only then), the pool is whole
 *                     again, the data the application holds is not
 *                     overwritten by later packets, the packet arrives once
 *   verdict_idle      a verdict reaches the kernel without another receive
 *                     call (Snort paused or busy after its last finalize,
 *                     or slow inside a batch)
 *   interrupt_race    interrupt() from another thread while the instance
 *                     stops, 300 times (Snort's main thread does that until
 *                     the packet thread is stopped; ASan catches a use of
 *                     the freed queue)
 *   ioctl_index       DAQ_CAPA_DEVICE_INDEX claimed: DIOCTL_GET_DEVICE_INDEX
 *                     answers lo's ifindex, and the packet header says so
 *   stop_counters     after stop, the statistics count what the close
 *                     decided (hw_packets_received), and the kernel's drops
 *                     (hw_packets_dropped)
 *   fail_open         fail_open=0 leaves fail-open off: with the kernel queue
 *                     full, datagrams are dropped, not passed uninspected;
 *                     fail_open (no value) turns it on
 *   instance_inputs   -z 2 -i A-B -i C-D, or a range beside a single
 *                     queue (each width right, queues left unbound):
 *                     refused; -i N -i M binds both
 *   instances         one queue for two instances, or a range wider or
 *                     narrower than the instances: refused at instantiate
 *                     with a message; a range of 4 for 4 instances binds
 *                     each queue once
 *   linger_timeout    with a receive timeout (Snort's default 1000 ms) a
 *                     fixed linger still pauses (linger_pauses in the
 *                     debug counters)
 *   pool_held         the application holds every message and asks again:
 *                     not DAQ_RSTAT_NOBUF (fatal to Snort) but a timeout
 *   start_traffic     30 instances started while 20k datagrams/s arrive on a
 *                     rule with --queue-bypass: every start succeeds
 *   netdev_egress     packets as the kernel series delivers them at netdev
 *                     egress (the payload starts at the Ethernet header,
 *                     network offset 14), emulated: the program interposes
 *                     nfqb_pkt_payload(), nfqb_pkt_network_offset() and
 *                     nfqb_verdict_ex() (exported from the executable, they
 *                     come before libnfq-batch's for the module) to put a
 *                     14-byte header before a real packet and take it off a
 *                     replacement; the message must start at the IPv4
 *                     header (DLT_RAW), and a REPLACE must give the whole
 *                     frame back
 *
 *   vtimeout_memory   verdict_timeout with a pool of 4096: no 64 KiB copy
 *                     buffer per descriptor up front (mem_size under 1 KiB
 *                     per message; copies are made for messages held
 *                     across a library call, freed at their finalize)
 *   snaplen           with Snort's snap length 1518, a 3000-byte datagram
 *                     is delivered whole, and get_snaplen() is not below
 *                     the length of what is delivered
 *   data_after_stop   a message held across stop keeps its data (the
 *                     datagram's bytes) until its finalize, which
 *                     succeeds (ASan: no read of freed buffers)
 *   gso_flags_once    with gso=auto, GSO packets longer than the kernel
 *                     copies (emulated: nfqb_pkt_truncated() and
 *                     nfqb_pkt_is_gso() interposed, for the library's
 *                     large-packet policy too): the library asks the
 *                     kernel to segment them once (its gso_off counter,
 *                     read through the module's get_stats), not for every
 *                     such packet, and never by a configuration round
 *                     trip in the packet path (nfqb_queue_set_flags()
 *                     interposed: not called); none reaches the
 *                     application, none is passed uninspected (UDP:
 *                     dropped), all are counted as filtered
 *   legacy_vars       the variables from before the library's policy:
 *                     mss_clamp=off, gso=on, truncated=pass and
 *                     mss_clamp=auto, truncated=block instantiate; a fixed
 *                     ceiling (mss_clamp=1400) is refused, saying why
 *
 * Needs root.  Every wait is bounded; the namespace dies with the process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>

#include <daq.h>
#include <daq_dlt.h>
#include <daq_module_api.h>
#include <libnfq-batch/libnfq-batch.h>

#define PORT		9999
#define QUEUE		7
#define BYPASS_PORT	9998
#define BYPASS_QUEUE	8

static DAQ_Module_h module;
static int rx_fd = -1, tx_fd = -1;
static int failures, checks;
static const char *case_name;

/* --- Helpers -------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec d = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

static bool fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return false;
}

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int udp_socket(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (port) {
		int big = 8 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		a.sin_port = htons((uint16_t)port);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Send datagram @seq (4 bytes, then @fill) to @port. */
static void send_one(unsigned int port, uint32_t seq, char fill)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint8_t buf[64];

	memset(buf, fill, sizeof(buf));
	seq = htonl(seq);
	memcpy(buf, &seq, 4);
	while (sendto(tx_fd, buf, sizeof(buf), 0, (struct sockaddr *)&a,
		      sizeof(a)) < 0 && (errno == ENOBUFS || errno == EAGAIN))
		sleep_ms(1);
}

/* Count the datagrams that arrive within @ms (until @want, if nonzero). */
static unsigned int rx_count(unsigned int ms, unsigned int want)
{
	uint64_t end = now_ms() + ms;
	unsigned int n = 0;
	uint8_t buf[2048];

	for (;;) {
		struct pollfd p = { .fd = rx_fd, .events = POLLIN };
		int64_t left = (int64_t)end - (int64_t)now_ms();

		while (recv(rx_fd, buf, sizeof(buf), 0) >= 0)
			n++;
		if ((want && n >= want) || left <= 0)
			return n;
		poll(&p, 1, (int)left);
	}
}

static void rx_flush(void)
{
	uint8_t buf[2048];

	while (recv(rx_fd, buf, sizeof(buf), 0) >= 0)
		;
}

struct inst_opts {
	const char *input;
	unsigned int timeout;
	unsigned int pool;
	unsigned int total, id;
	const char *vars[8];	/* "key" or "key=value" */
	int snaplen;		/* 0: 65535 */
};

/* libdaq keeps using an instance's configuration: all freed at exit */
static DAQ_Config_h cfgs[512];
static unsigned int ncfgs;

/* Instantiate (not start) an instance; NULL and @err filled on failure. */
static DAQ_Instance_h instantiate(const struct inst_opts *o, char *err,
				  size_t errlen)
{
	DAQ_ModuleConfig_h mc;
	DAQ_Instance_h inst = NULL;
	DAQ_Config_h inst_cfg;
	char in[32];
	int i;

	err[0] = '\0';
	if (ncfgs == sizeof(cfgs) / sizeof(cfgs[0])) {
		snprintf(err, errlen, "too many configurations");
		return NULL;
	}
	if (daq_config_new(&inst_cfg) != DAQ_SUCCESS) {
		snprintf(err, errlen, "config_new failed");
		return NULL;
	}
	cfgs[ncfgs++] = inst_cfg;
	if (daq_module_config_new(&mc, module) != DAQ_SUCCESS) {
		snprintf(err, errlen, "config_new failed");
		return NULL;
	}
	snprintf(in, sizeof(in), "%u", QUEUE);
	daq_config_set_input(inst_cfg, o->input ? o->input : in);
	daq_config_set_snaplen(inst_cfg, o->snaplen ? o->snaplen : 65535);
	daq_config_set_timeout(inst_cfg, o->timeout);
	daq_config_set_msg_pool_size(inst_cfg, o->pool ? o->pool : 256);
	daq_config_set_total_instances(inst_cfg, o->total ? o->total : 1);
	daq_config_set_instance_id(inst_cfg, o->id ? o->id : 1);
	daq_module_config_set_mode(mc, DAQ_MODE_INLINE);
	for (i = 0; i < 8 && o->vars[i]; i++) {
		char key[64];
		const char *eq = strchr(o->vars[i], '=');

		snprintf(key, sizeof(key), "%.*s",
			 eq ? (int)(eq - o->vars[i]) : (int)strlen(o->vars[i]),
			 o->vars[i]);
		daq_module_config_set_variable(mc, key, eq ? eq + 1 : NULL);
	}
	daq_config_push_module_config(inst_cfg, mc);
	if (daq_instance_instantiate(inst_cfg, &inst, err, errlen) !=
	    DAQ_SUCCESS)
		return NULL;
	return inst;
}

static DAQ_Instance_h start(const struct inst_opts *o)
{
	char err[256];
	DAQ_Instance_h inst = instantiate(o, err, sizeof(err));

	if (!inst) {
		fail("instantiate: %s", err);
		return NULL;
	}
	if (daq_instance_start(inst) != DAQ_SUCCESS) {
		fail("start: %s", daq_instance_get_error(inst));
		daq_instance_destroy(inst);
		return NULL;
	}
	return inst;
}

static void finish(DAQ_Instance_h inst)
{
	if (!inst)
		return;
	if (daq_instance_check_status(inst) == DAQ_STATE_STARTED)
		daq_instance_stop(inst);
	daq_instance_destroy(inst);
}

/* Receive until @want messages are held in @msgs (or @ms pass). */
static unsigned int recv_n(DAQ_Instance_h inst, DAQ_Msg_h *msgs,
			   unsigned int want, unsigned int ms,
			   DAQ_RecvStatus *last)
{
	uint64_t end = now_ms() + ms;
	unsigned int n = 0;

	*last = DAQ_RSTAT_OK;
	while (n < want && now_ms() < end) {
		unsigned int got = daq_instance_msg_receive(inst, want - n,
							    msgs + n, last);

		n += got;
		if (*last != DAQ_RSTAT_OK && *last != DAQ_RSTAT_WOULD_BLOCK &&
		    *last != DAQ_RSTAT_TIMEOUT)
			break;
	}
	return n;
}

/* recv_n() of @want messages within 2 s; with fewer, the ones received are
 * passed, the instance finished, and false (said). */
static bool recv_all(DAQ_Instance_h inst, DAQ_Msg_h *msgs, unsigned int want,
		     DAQ_RecvStatus *last)
{
	unsigned int i, n = recv_n(inst, msgs, want, 2000, last);

	if (n == want)
		return true;
	for (i = 0; i < n; i++)
		daq_instance_msg_finalize(inst, msgs[i], DAQ_VERDICT_PASS);
	finish(inst);
	return fail("%u of %u messages (status %d)", n, want, *last);
}

static bool pool_whole(DAQ_Instance_h inst)
{
	DAQ_MsgPoolInfo_t info;

	if (daq_instance_get_msg_pool_info(inst, &info) != DAQ_SUCCESS)
		return fail("get_msg_pool_info failed");
	if (info.available != info.size)
		return fail("pool: %u of %u available", info.available,
			    info.size);
	return true;
}

/* --- Cases ---------------------------------------------------------------- */

static bool case_finalize_timeout(void)
{
	struct inst_opts o = { .timeout = 20, .pool = 4,
			       .vars = { "verdict_timeout=50" } };
	DAQ_Instance_h inst = start(&o);
	DAQ_Msg_h held, msgs[4];
	DAQ_RecvStatus rs;
	DAQ_Stats_t st;
	uint8_t copy[64];
	uint32_t len;
	unsigned int n, i, got;
	bool ok = true;
	int rc;

	if (!inst)
		return false;
	send_one(PORT, 1, 'A');
	if (!recv_all(inst, &held, 1, &rs))
		return false;
	len = daq_msg_get_data_len(held);
	memcpy(copy, daq_msg_get_data(held), len < 64 ? len : 64);
	/* the library runs its timers inside receive: 200 ms of them */
	for (uint64_t end = now_ms() + 200; now_ms() < end;) {
		DAQ_Msg_h m;

		if (daq_instance_msg_receive(inst, 1, &m, &rs)) {
			daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
			ok = fail("a message nobody sent");
		}
	}
	got = rx_count(500, 1);
	if (got != 1)
		ok = fail("%u datagrams arrived after the timeout, not 1", got);
	/* more packets: they must not land in the held message's buffer */
	for (i = 0; i < 3; i++)
		send_one(PORT, 10 + i, 'B');
	n = recv_n(inst, msgs, 3, 2000, &rs);
	if (n != 3)
		ok = fail("%u of 3 later messages received", n);
	if (memcmp(copy, daq_msg_get_data(held), len < 64 ? len : 64))
		ok = fail("the held message's data changed under the application");
	/* a block too late: the kernel accepted it (the default verdict)
	 * at the timeout, and the counters say so */
	rc = daq_instance_msg_finalize(inst, held, DAQ_VERDICT_BLOCK);
	if (rc != DAQ_SUCCESS)
		ok = fail("finalize after the verdict timeout returned %d", rc);
	for (i = 0; i < n; i++)
		daq_instance_msg_finalize(inst, msgs[i], DAQ_VERDICT_PASS);
	ok = pool_whole(inst) && ok;
	got = rx_count(500, 4);
	if (got != 3)
		ok = fail("%u of the 3 later datagrams arrived", got);
	if (daq_instance_get_stats(inst, &st) != DAQ_SUCCESS) {
		ok = fail("get_stats: %s", daq_instance_get_error(inst));
	} else if (st.verdicts[DAQ_VERDICT_BLOCK] != 0 ||
		   st.verdicts[DAQ_VERDICT_PASS] != n + 1) {
		ok = fail("verdict counters: block %llu, pass %llu; the kernel applied block 0, pass %u (the timed-out block was accepted)",
			  (unsigned long long)st.verdicts[DAQ_VERDICT_BLOCK],
			  (unsigned long long)st.verdicts[DAQ_VERDICT_PASS],
			  n + 1);
	}
	finish(inst);
	return ok;
}

static bool case_verdict_idle(void)
{
	struct inst_opts o = { .timeout = 100 };
	DAQ_Instance_h inst = start(&o);
	DAQ_Msg_h msgs[4];
	DAQ_RecvStatus rs;
	unsigned int got, i;
	bool ok = true;

	if (!inst)
		return false;
	/* one message: decided, then no more receive calls */
	send_one(PORT, 1, 'A');
	if (!recv_all(inst, msgs, 1, &rs))
		return false;
	daq_instance_msg_finalize(inst, msgs[0], DAQ_VERDICT_PASS);
	got = rx_count(200, 1);
	if (got != 1)
		ok = fail("the decided datagram did not arrive within 200 ms without a receive call");
	/* a slow application: three messages, the first decided, the
	 * second decided 50 ms later (the third still being worked on):
	 * the first must not wait for the end of the batch */
	for (i = 0; i < 3; i++)
		send_one(PORT, 10 + i, 'A');
	if (!recv_all(inst, msgs, 3, &rs))
		return false;
	daq_instance_msg_finalize(inst, msgs[0], DAQ_VERDICT_PASS);
	sleep_ms(50);
	daq_instance_msg_finalize(inst, msgs[1], DAQ_VERDICT_PASS);
	got = rx_count(100, 2);
	if (got != 2)
		ok = fail("%u of 2 datagrams decided 50 ms apart arrived while the application works on the third",
			  got);
	daq_instance_msg_finalize(inst, msgs[2], DAQ_VERDICT_PASS);
	rx_count(200, 1);
	/* two messages, the first held (Snort's retry queue), the second
	 * decided: the library sends it (alone) once it is older than the
	 * latency bound, when it runs: in a quiet receive */
	send_one(PORT, 2, 'A');
	send_one(PORT, 3, 'A');
	if (!recv_all(inst, msgs, 2, &rs))
		return false;
	daq_instance_msg_finalize(inst, msgs[1], DAQ_VERDICT_PASS);
	if (daq_instance_msg_receive(inst, 1, &msgs[1], &rs)) {
		daq_instance_msg_finalize(inst, msgs[1], DAQ_VERDICT_PASS);
		ok = fail("a message nobody sent");
	}
	got = rx_count(100, 1);
	if (got != 1)
		ok = fail("the decided datagram (an earlier one held) did not arrive during a quiet receive");
	/* the held one decided last: out without a receive */
	daq_instance_msg_finalize(inst, msgs[0], DAQ_VERDICT_PASS);
	got = rx_count(200, 1);
	if (got != 1)
		ok = fail("the last decided datagram did not arrive within 200 ms without a receive call");
	finish(inst);
	return ok;
}

struct race {
	DAQ_Instance_h _Atomic inst;
	atomic_uint busy;	/* inside a call with the instance */
	atomic_bool stop;
	atomic_ulong calls;
};

static void *interrupter(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		DAQ_Instance_h inst;

		atomic_fetch_add(&r->busy, 1);
		inst = atomic_load(&r->inst);
		if (inst) {
			daq_instance_interrupt(inst);
			atomic_fetch_add(&r->calls, 1);
		}
		atomic_fetch_sub(&r->busy, 1);
		if (!inst)
			sched_yield();
	}
	return NULL;
}

static bool case_interrupt_race(void)
{
	struct inst_opts o = { .timeout = 0 };
	struct race r = { .inst = NULL };
	pthread_t t;
	bool ok = true;
	int i;

	if (pthread_create(&t, NULL, interrupter, &r))
		return fail("pthread_create");
	for (i = 0; i < 300 && ok; i++) {
		DAQ_Instance_h inst = start(&o);
		DAQ_RecvStatus rs;
		DAQ_Msg_h m;

		if (!inst) {
			ok = false;
			break;
		}
		atomic_store(&r.inst, inst);
		/* a blocking receive the other thread interrupts */
		if (daq_instance_msg_receive(inst, 1, &m, &rs))
			daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
		if (rs != DAQ_RSTAT_INTERRUPTED && rs != DAQ_RSTAT_OK)
			ok = fail("receive status %d, not interrupted", rs);
		/* stop while interrupts keep coming (Snort's exit) */
		if (daq_instance_stop(inst) != DAQ_SUCCESS)
			ok = fail("stop: %s", daq_instance_get_error(inst));
		/* the instance outlives every interrupt call (as Snort's
		 * does): only the queue inside it goes at stop */
		atomic_store(&r.inst, NULL);
		while (atomic_load(&r.busy))
			sched_yield();
		daq_instance_destroy(inst);
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	if (ok && atomic_load(&r.calls) < 300)
		ok = fail("only %lu interrupt calls", atomic_load(&r.calls));
	return ok;
}

static bool case_ioctl_index(void)
{
	struct inst_opts o = { .timeout = 100 };
	DAQ_Instance_h inst = start(&o);
	DIOCTL_QueryDeviceIndex q = { .device = "lo", .index = -1 };
	DAQ_RecvStatus rs;
	DAQ_Msg_h m;
	bool ok = true;
	int rc;

	if (!inst)
		return false;
	if (!(daq_instance_get_capabilities(inst) & DAQ_CAPA_DEVICE_INDEX)) {
		finish(inst);
		return fail("DAQ_CAPA_DEVICE_INDEX not claimed");
	}
	rc = daq_instance_ioctl(inst, DIOCTL_GET_DEVICE_INDEX, &q, sizeof(q));
	if (rc != DAQ_SUCCESS)
		ok = fail("DIOCTL_GET_DEVICE_INDEX(lo) returned %d", rc);
	else if (q.index != (int)if_nametoindex("lo"))
		ok = fail("DIOCTL_GET_DEVICE_INDEX(lo) = %d, not %u", q.index,
			  if_nametoindex("lo"));
	q.device = "nfqb-none0";
	rc = daq_instance_ioctl(inst, DIOCTL_GET_DEVICE_INDEX, &q, sizeof(q));
	if (rc == DAQ_SUCCESS)
		ok = fail("DIOCTL_GET_DEVICE_INDEX of a missing device succeeded");
	send_one(PORT, 1, 'A');
	if (recv_n(inst, &m, 1, 2000, &rs) == 1) {
		int32_t eg = daq_msg_get_pkthdr(m)->egress_index;

		if (eg != (int32_t)if_nametoindex("lo"))
			ok = fail("egress_index %d, not lo's", eg);
		daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
	} else {
		ok = fail("no message");
	}
	rx_count(300, 1);
	finish(inst);
	return ok;
}

static bool case_stop_counters(void)
{
	struct inst_opts o = { .timeout = 100, .pool = 2,
			       .vars = { "queue_maxlen=16" } };
	DAQ_Instance_h inst = start(&o);
	DAQ_Msg_h msgs[2];
	DAQ_Stats_t st;
	DAQ_RecvStatus rs;
	unsigned int i, n;
	bool ok = true;

	if (!inst)
		return false;
	for (i = 0; i < 2; i++)
		send_one(PORT, i, 'A');
	n = recv_n(inst, msgs, 2, 2000, &rs);
	for (i = 0; i < n; i++)
		daq_instance_msg_finalize(inst, msgs[i], DAQ_VERDICT_PASS);
	if (n != 2)
		ok = fail("%u of 2 messages", n);
	/* 5 more reach the socket, never read by the application: the
	 * close gives them the default verdict (accept) */
	for (i = 0; i < 5; i++)
		send_one(PORT, 10 + i, 'A');
	/* 40 more than the kernel queue holds: dropped by the kernel */
	for (i = 0; i < 40; i++)
		send_one(PORT, 100 + i, 'A');
	sleep_ms(100);
	if (daq_instance_stop(inst) != DAQ_SUCCESS)
		ok = fail("stop: %s", daq_instance_get_error(inst));
	n = rx_count(500, 47);
	memset(&st, 0, sizeof(st));
	daq_instance_get_stats(inst, &st);
	/* what arrived got a verdict from us (none is lost: accept) */
	if (st.hw_packets_received != n)
		ok = fail("hw_packets_received %llu after stop, %u arrived",
			  (unsigned long long)st.hw_packets_received, n);
	if (st.hw_packets_received + st.hw_packets_dropped != 47)
		ok = fail("received %llu + dropped %llu != 47 sent",
			  (unsigned long long)st.hw_packets_received,
			  (unsigned long long)st.hw_packets_dropped);
	if (st.packets_received != 2)
		ok = fail("packets_received %llu, not 2",
			  (unsigned long long)st.packets_received);
	daq_instance_destroy(inst);
	return ok;
}

/* With the kernel queue full (queue_maxlen 1, one message held), do
 * datagrams pass (fail-open) or are they dropped? */
static int overflow_passes(const char *var)
{
	struct inst_opts o = { .timeout = 100, .pool = 4,
			       .vars = { "queue_maxlen=1", var } };
	DAQ_Instance_h inst = start(&o);
	DAQ_RecvStatus rs;
	DAQ_Msg_h m;
	unsigned int i, got;

	if (!inst)
		return -1;
	send_one(PORT, 1, 'A');
	if (!recv_all(inst, &m, 1, &rs))
		return -1;
	for (i = 0; i < 5; i++)
		send_one(PORT, 10 + i, 'B');
	got = rx_count(300, 5);
	daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
	finish(inst);
	rx_count(300, 0);
	return (int)got;
}

static bool case_fail_open(void)
{
	int off = overflow_passes("fail_open=0");
	int on = overflow_passes("fail_open");
	int no = overflow_passes("fail_open=no");
	int yes = overflow_passes("fail_open=yes");
	char err[256];
	struct inst_opts bad = { .vars = { "fail_open=maybe" } };
	DAQ_Instance_h inst;
	bool ok = true;

	if (off != 0)
		ok = fail("fail_open=0: %d datagrams passed the full queue", off);
	if (no != 0)
		ok = fail("fail_open=no: %d datagrams passed the full queue", no);
	if (on != 5)
		ok = fail("fail_open: %d of 5 datagrams passed the full queue", on);
	if (yes != 5)
		ok = fail("fail_open=yes: %d of 5 datagrams passed", yes);
	inst = instantiate(&bad, err, sizeof(err));
	if (inst) {
		daq_instance_destroy(inst);
		ok = fail("fail_open=maybe accepted");
	}
	return ok;
}

static bool case_instances(void)
{
	char err[256], in[32], range[32];
	DAQ_Instance_h inst[4] = { NULL };
	bool ok = true;
	int i;

	snprintf(in, sizeof(in), "%u", QUEUE);
	snprintf(range, sizeof(range), "%u-%u", QUEUE, QUEUE + 3);
	/* one queue given to two instances (snort -i N -z 2): the second
	 * cannot have it, and is told at instantiate */
	{
		struct inst_opts o1 = { .input = in, .total = 2, .id = 1 };
		struct inst_opts o2 = { .input = in, .total = 2, .id = 2 };

		inst[1] = instantiate(&o1, err, sizeof(err));
		if (!inst[1])
			ok = fail("queue %s for instance 1 of 2: %s", in, err);
		inst[0] = instantiate(&o2, err, sizeof(err));
		if (inst[0]) {
			daq_instance_destroy(inst[0]);
			ok = fail("queue %s for instances 1 and 2 of 2 accepted", in);
		} else if (!strstr(err, "another instance")) {
			ok = fail("refused without saying why: '%s'", err);
		}
		if (inst[1])
			daq_instance_destroy(inst[1]);
		inst[0] = inst[1] = NULL;
	}
	/* a range of 4 for 2 instances: 2 queues would be left unbound */
	{
		struct inst_opts o = { .input = range, .total = 2, .id = 1 };

		inst[0] = instantiate(&o, err, sizeof(err));
		if (inst[0]) {
			daq_instance_destroy(inst[0]);
			ok = fail("range %s for 2 instances accepted", range);
		}
	}
	/* 4 for 4: each binds its own */
	for (i = 0; i < 4; i++) {
		struct inst_opts o = { .input = range, .total = 4,
				       .id = (unsigned int)i + 1,
				       .timeout = 100 };

		inst[i] = start(&o);
		if (!inst[i])
			ok = false;
	}
	if (ok) {
		for (i = 0; i < 4; i++) {
			char cmd[128];

			snprintf(cmd, sizeof(cmd),
				 "awk '$1 == %u { f = 1 } END { exit !f }' /proc/net/netfilter/nfnetlink_queue",
				 QUEUE + i);
			if (system(cmd))
				ok = fail("queue %u not bound", QUEUE + i);
		}
	}
	for (i = 0; i < 4; i++)
		finish(inst[i]);
	return ok;
}

/* Instantiate two instances (of two) with inputs @in1, @in2; true if the
 * second is refused, saying so (and neither is left). */
static bool second_refused(const char *in1, const char *in2)
{
	struct inst_opts o1 = { .input = in1, .total = 2, .id = 1 };
	struct inst_opts o2 = { .input = in2, .total = 2, .id = 2 };
	DAQ_Instance_h a, b;
	char err[256] = "";
	bool ok = true;

	a = instantiate(&o1, err, sizeof(err));
	if (!a)
		return fail("-i %s -i %s: the first refused: %s", in1, in2, err);
	b = instantiate(&o2, err, sizeof(err));
	if (b) {
		daq_instance_destroy(b);
		ok = fail("-z 2 -i %s -i %s accepted: a queue left unbound",
			  in1, in2);
	} else if (!strstr(err, "range")) {
		ok = fail("-i %s -i %s refused without saying why: '%s'",
			  in1, in2, err);
	}
	daq_instance_destroy(a);
	return ok;
}

/*
 * Inputs that leave a queue unbound though each range's width matches the
 * instance count: -z 2 -i A-B -i C-D (instance 1 takes A, instance 2
 * takes D: B and C unbound), and a range beside a single queue. All
 * refused; -i N -i M (one queue each) binds both.
 */
static bool case_instance_inputs(void)
{
	char r1[32], r2[32], one[16], two[16];
	struct inst_opts o1 = { .input = one, .total = 2, .id = 1,
				.timeout = 100 };
	struct inst_opts o2 = { .input = two, .total = 2, .id = 2,
				.timeout = 100 };
	DAQ_Instance_h a, b;
	bool ok = true;
	unsigned int q;

	snprintf(r1, sizeof(r1), "%u-%u", QUEUE, QUEUE + 1);
	snprintf(r2, sizeof(r2), "%u-%u", QUEUE + 2, QUEUE + 3);
	snprintf(one, sizeof(one), "%u", QUEUE);
	snprintf(two, sizeof(two), "%u", QUEUE + 1);
	ok &= second_refused(r1, r2);
	ok &= second_refused(one, r2);
	ok &= second_refused(r1, two);
	/* the same range for both: fine (next case), and -i N -i M */
	a = start(&o1);
	b = start(&o2);
	if (!a || !b)
		ok = false;
	for (q = QUEUE; a && b && q <= QUEUE + 1; q++) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd),
			 "awk '$1 == %u { f = 1 } END { exit !f }' /proc/net/netfilter/nfnetlink_queue",
			 q);
		if (system(cmd))
			ok = fail("-i %s -i %s: queue %u not bound", one, two, q);
	}
	finish(a);
	finish(b);
	return ok;
}

/* The debug line's counter @key from the output captured in @path. */
static long long debug_counter(const char *path, const char *key)
{
	char line[2048], k[64];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(k, sizeof(k), " %s ", key);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, k);

		if (strstr(line, "daq_nfqb: queue") && p)
			v = atoll(p + strlen(k));
	}
	fclose(f);
	return v;
}

static bool case_linger_timeout(void)
{
	struct inst_opts o = { .timeout = 1000,
			       .vars = { "linger=300", "debug" } };
	char path[] = "/tmp/daq-contract.XXXXXX";
	DAQ_Instance_h inst;
	DAQ_Msg_h msgs[64];
	DAQ_RecvStatus rs;
	int fd, saved;
	unsigned int i, total = 0;
	long long pauses;
	bool ok = true;

	fd = mkstemp(path);
	if (fd < 0)
		return fail("mkstemp");
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	inst = start(&o);
	if (inst) {
		/* 2000 datagrams, 10 every 0.5 ms */
		for (i = 0; i < 2000; i++) {
			send_one(PORT, i, 'A');
			if (i % 10 == 9) {
				unsigned int n = daq_instance_msg_receive(
					inst, 64, msgs, &rs);

				for (unsigned int k = 0; k < n; k++)
					daq_instance_msg_finalize(inst, msgs[k],
							DAQ_VERDICT_PASS);
				total += n;
				usleep(500);
			}
		}
		while (total < 2000) {
			unsigned int n = recv_n(inst, msgs, 64, 300, &rs);

			if (!n)
				break;
			for (unsigned int k = 0; k < n; k++)
				daq_instance_msg_finalize(inst, msgs[k],
							  DAQ_VERDICT_PASS);
			total += n;
		}
		daq_instance_stop(inst);
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	if (!inst) {
		unlink(path);
		return false;
	}
	daq_instance_destroy(inst);
	rx_count(500, 2000);
	pauses = debug_counter(path, "linger_pauses");
	unlink(path);
	if (total != 2000)
		ok = fail("%u of 2000 messages", total);
	if (pauses <= 0)
		ok = fail("linger_pauses %lld with a receive timeout and linger=300",
			  pauses);
	return ok;
}

static bool case_pool_held(void)
{
	struct inst_opts o = { .timeout = 100, .pool = 4 };
	DAQ_Instance_h inst = start(&o);
	DAQ_Msg_h msgs[4], m;
	DAQ_RecvStatus rs;
	unsigned int i, n;
	uint64_t t0;
	bool ok = true;

	if (!inst)
		return false;
	for (i = 0; i < 5; i++)
		send_one(PORT, i, 'A');
	n = recv_n(inst, msgs, 4, 2000, &rs);
	if (n != 4)
		ok = fail("%u of 4 messages", n);
	/* Snort asks for at most its own count of free messages (libdaq
	 * answers a request for 0 itself); one that asks for more while it
	 * holds every message must not be told NOBUF */
	t0 = now_ms();
	if (daq_instance_msg_receive(inst, 4, &m, &rs))
		ok = fail("a message beyond the pool");
	if (rs == DAQ_RSTAT_NOBUF || rs == DAQ_RSTAT_ERROR)
		ok = fail("status %d (NOBUF/ERROR: Snort's thread ends) with every message held",
			  rs);
	else if (rs == DAQ_RSTAT_WOULD_BLOCK || now_ms() - t0 < 50)
		ok = fail("status %d after %llu ms with every message held: the caller would spin",
			  rs, (unsigned long long)(now_ms() - t0));
	for (i = 0; i < n; i++)
		daq_instance_msg_finalize(inst, msgs[i], DAQ_VERDICT_PASS);
	n = recv_n(inst, msgs, 1, 2000, &rs);
	if (n != 1)
		ok = fail("the fifth message did not come after the pool freed");
	for (i = 0; i < n; i++)
		daq_instance_msg_finalize(inst, msgs[i], DAQ_VERDICT_PASS);
	ok = pool_whole(inst) && ok;
	finish(inst);
	rx_count(300, 5);
	return ok;
}

struct flood {
	atomic_bool stop;
	atomic_ulong sent;
};

static void *flooder(void *arg)
{
	struct flood *f = arg;
	uint32_t seq = 0;

	while (!atomic_load(&f->stop)) {
		int k;

		/* 20 every ms: 20k/s */
		for (k = 0; k < 20; k++)
			send_one(BYPASS_PORT, seq++, 'F');
		atomic_fetch_add(&f->sent, 20);
		sleep_ms(1);
	}
	return NULL;
}

static bool case_start_traffic(void)
{
	char in[16];
	struct inst_opts o = { .input = in, .timeout = 50 };
	struct flood f = { .stop = false };
	unsigned int started = 0, failed = 0, msgs_total = 0;
	int sink = udp_socket(BYPASS_PORT);
	pthread_t t;
	bool ok = true;
	int i;

	snprintf(in, sizeof(in), "%u", BYPASS_QUEUE);
	if (sink < 0)
		return fail("sink socket");
	if (pthread_create(&t, NULL, flooder, &f)) {
		close(sink);
		return fail("pthread_create");
	}
	sleep_ms(50);
	for (i = 0; i < 30; i++) {
		char err[256];
		DAQ_Instance_h inst = instantiate(&o, err, sizeof(err));
		DAQ_Msg_h msgs[64];
		DAQ_RecvStatus rs;
		unsigned int n, k;

		if (!inst) {
			ok = fail("start %d: instantiate: %s", i, err);
			failed++;
			continue;
		}
		if (daq_instance_start(inst) != DAQ_SUCCESS) {
			printf("    start %d failed: %s\n", i,
			       daq_instance_get_error(inst));
			failed++;
			daq_instance_destroy(inst);
			continue;
		}
		started++;
		n = recv_n(inst, msgs, 64, 500, &rs);
		for (k = 0; k < n; k++)
			daq_instance_msg_finalize(inst, msgs[k],
						  DAQ_VERDICT_PASS);
		msgs_total += n;
		if (!n)
			ok = fail("start %d: no message under traffic", i);
		daq_instance_stop(inst);
		daq_instance_destroy(inst);
		{
			uint8_t buf[128];

			while (recv(sink, buf, sizeof(buf), 0) >= 0)
				;
		}
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	close(sink);
	if (failed)
		ok = fail("%u of 30 starts under traffic failed", failed);
	printf("    %u starts, %u messages\n", started, msgs_total);
	return ok;
}

/* --- netdev egress, emulated --------------------------------------------- */

static bool egress_on;
static const uint8_t egress_l2[14] = {
	0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00
};
static uint8_t egress_buf[65536 + 14];
static const struct nfqb_packet *egress_pkt;
static unsigned int egress_replaced, egress_replace_bad;

/* libnfq-batch's own function (the module loaded it; libdaq keeps it
 * out of the global scope, so not RTLD_NEXT but the library's handle) */
static void *real_fn(const char *name)
{
	void *h = dlopen("libnfq-batch.so.0", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, name) : NULL;

	if (!f) {
		fprintf(stderr, "daq-contract: no %s in libnfq-batch: %s\n",
			name, dlerror());
		abort();
	}
	dlclose(h);
	return f;
}

#define REAL(name) \
	static __typeof__(name) *real; \
	if (!real) \
		real = (__typeof__(name) *)real_fn(#name)

const uint8_t *nfqb_pkt_payload(const struct nfqb_packet *p, uint32_t *len)
{
	const uint8_t *d;
	uint32_t n;

	REAL(nfqb_pkt_payload);
	d = real(p, &n);
	if (!egress_on || !d || n > sizeof(egress_buf) - 14) {
		*len = n;
		return d;
	}
	/* one packet at a time in this case */
	memcpy(egress_buf, egress_l2, 14);
	memcpy(egress_buf + 14, d, n);
	egress_pkt = p;
	*len = n + 14;
	return egress_buf;
}

uint32_t nfqb_pkt_network_offset(const struct nfqb_packet *p)
{
	REAL(nfqb_pkt_network_offset);
	return egress_on ? 14 : real(p);
}

int nfqb_verdict_ex(struct nfqb_packet *p, const struct nfqb_verdict *v,
		    size_t size)
{
	struct nfqb_verdict w;

	REAL(nfqb_verdict_ex);
	if (!egress_on || !v || !(v->flags & NFQB_V_PAYLOAD))
		return real(p, v, size);
	/* a replacement at netdev egress is the whole frame */
	if (v->payload_len < 14 || memcmp(v->payload, egress_l2, 14)) {
		egress_replace_bad++;
		return real(p, v, size);
	}
	egress_replaced++;
	w = *v;
	w.payload = (const uint8_t *)v->payload + 14;
	w.payload_len = v->payload_len - 14;
	return real(p, &w, sizeof(w));
}

static bool case_netdev_egress(void)
{
	struct inst_opts o = { .timeout = 100 };
	DAQ_Instance_h inst;
	DAQ_RecvStatus rs;
	DAQ_Msg_h m;
	uint8_t buf[128];
	uint8_t *d;
	uint32_t len;
	bool ok = true;
	ssize_t n;

	egress_on = true;
	egress_replaced = egress_replace_bad = 0;
	inst = start(&o);
	if (!inst) {
		egress_on = false;
		return false;
	}
	if (daq_instance_get_datalink_type(inst) != DLT_RAW)
		ok = fail("link type %d, not DLT_RAW",
			  daq_instance_get_datalink_type(inst));
	send_one(PORT, 1, 'A');
	if (!recv_all(inst, &m, 1, &rs)) {
		egress_on = false;
		return false;
	}
	d = daq_msg_get_data(m);
	len = daq_msg_get_data_len(m);
	if (!d || len < 28 || d[0] != 0x45)
		ok = fail("the message starts with %02x %02x, not an IPv4 header (DLT_RAW)",
			  d ? d[0] : 0, d && len > 1 ? d[1] : 0);
	else if (len != ((uint32_t)d[2] << 8 | d[3]))
		ok = fail("data_len %u, the IPv4 header says %u", len,
			  (uint32_t)d[2] << 8 | d[3]);
	if (daq_msg_get_pkthdr(m)->pktlen != len)
		ok = fail("pktlen %u, data_len %u",
			  daq_msg_get_pkthdr(m)->pktlen, len);
	/* change the last payload byte in place, then REPLACE (the UDP
	 * checksum, not recomputed here, is not checked on lo) */
	if (ok) {
		d[len - 1] = 'Z';
		d[26] = d[27] = 0;	/* no UDP checksum */
	}
	daq_instance_msg_finalize(inst, m, DAQ_VERDICT_REPLACE);
	finish(inst);
	egress_on = false;
	n = 0;
	for (uint64_t end = now_ms() + 1000; now_ms() < end;) {
		struct pollfd p = { .fd = rx_fd, .events = POLLIN };

		n = recv(rx_fd, buf, sizeof(buf), 0);
		if (n > 0)
			break;
		poll(&p, 1, 100);
	}
	if (egress_replaced != 1 || egress_replace_bad)
		ok = fail("%u replacements with the link-layer header, %u without",
			  egress_replaced, egress_replace_bad);
	if (n != 64)
		ok = fail("the replaced datagram did not arrive (%zd)", n);
	else if (buf[63] != 'Z')
		ok = fail("the datagram arrived unchanged");
	(void)egress_pkt;
	return ok;
}

/* --- verdict_timeout: memory for what is held, not per descriptor --------- */

static bool case_vtimeout_memory(void)
{
	struct inst_opts o = { .timeout = 100, .pool = 4096,
			       .vars = { "verdict_timeout=50" } };
	char err[256];
	DAQ_Instance_h inst = instantiate(&o, err, sizeof(err));
	DAQ_MsgPoolInfo_t info = { 0 };
	bool ok = true;

	if (!inst)
		return fail("instantiate: %s", err);
	if (daq_instance_get_msg_pool_info(inst, &info) != DAQ_SUCCESS)
		ok = fail("get_msg_pool_info failed");
	/* 64 KiB up front per descriptor: 256 MiB for this pool */
	else if (info.mem_size > (size_t)o.pool * 1024)
		ok = fail("pool of %u with verdict_timeout: %zu bytes (%zu per message) before any packet",
			  info.size, info.mem_size,
			  info.size ? info.mem_size / info.size : 0);
	daq_instance_destroy(inst);
	return ok;
}

/* --- snaplen: what get_snaplen() says is what is delivered ----------------- */

static bool case_snaplen(void)
{
	struct inst_opts o = { .timeout = 100, .snaplen = 1518 };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(PORT),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static uint8_t big[3000];
	DAQ_Instance_h inst;
	DAQ_RecvStatus rs;
	DAQ_Msg_h m;
	uint32_t len;
	int snap;
	bool ok = true;

	inst = start(&o);
	if (!inst)
		return false;
	memset(big, 'L', sizeof(big));
	if (sendto(tx_fd, big, sizeof(big), 0, (struct sockaddr *)&a,
		   sizeof(a)) < 0)
		ok = fail("sendto: %s", strerror(errno));
	if (!recv_all(inst, &m, 1, &rs))
		return false;
	len = daq_msg_get_data_len(m);
	snap = daq_instance_get_snaplen(inst);
	/* Snort sizes its buffers by the snap length: a message longer
	 * than it says overflows them */
	if (snap <= 0 || len > (uint32_t)snap)
		ok = fail("a %u-byte message, but get_snaplen() says %d", len,
			  snap);
	if (len != 28 + sizeof(big))
		ok = fail("a %u-byte message for a %zu-byte datagram (whole: %zu)",
			  len, sizeof(big), 28 + sizeof(big));
	daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
	finish(inst);
	return ok;
}

/* --- data after stop --------------------------------------------------------- */

static bool case_data_after_stop(void)
{
	struct inst_opts o = { .timeout = 100 };
	DAQ_Instance_h inst;
	DAQ_RecvStatus rs;
	DAQ_Msg_h m;
	const uint8_t *d;
	uint32_t len, i;
	bool ok = true;

	inst = start(&o);
	if (!inst)
		return false;
	send_one(PORT, 7, 'S');
	if (!recv_all(inst, &m, 1, &rs))
		return false;
	if (daq_instance_stop(inst) != DAQ_SUCCESS)
		ok = fail("stop: %s", daq_instance_get_error(inst));
	/* the file header: data valid until finalize */
	d = daq_msg_get_data(m);
	len = daq_msg_get_data_len(m);
	if (!d || len != 28 + 64)
		ok = fail("after stop: data %p, %u bytes (not the 92 of the datagram)",
			  (const void *)d, len);
	else
		for (i = 28 + 4; i < len && ok; i++)
			if (d[i] != 'S')
				ok = fail("after stop: byte %u is %#x, not 'S'",
					  i, d[i]);
	if (daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS) != DAQ_SUCCESS)
		ok = fail("finalize after stop failed");
	daq_instance_destroy(inst);
	return ok;
}

/* --- gso=auto: GSO turned off once, without a round trip ----------------- */

static bool gso_fake_on;
static unsigned int gso_off_asked;	/* round trips in the packet path */
static uint64_t gso_off_sent;		/* the library's gso_off, last read */

/* every packet of the case is a GSO packet longer than the kernel copies */
bool nfqb_pkt_truncated(const struct nfqb_packet *p)
{
	REAL(nfqb_pkt_truncated);
	return gso_fake_on ? true : real(p);
}

bool nfqb_pkt_is_gso(const struct nfqb_packet *p)
{
	REAL(nfqb_pkt_is_gso);
	return gso_fake_on ? true : real(p);
}

/* a configuration round trip turning GSO off while the case runs: none
 * may come (the library sends that request with its verdicts) */
int nfqb_queue_set_flags(struct nfqb_queue *q, uint32_t flags, uint32_t mask)
{
	REAL(nfqb_queue_set_flags);
	if (gso_fake_on && !flags && mask == NFQB_F_GSO)
		gso_off_asked++;
	return real(q, flags, mask);
}

/* the module reads the library's counters in get_stats */
int nfqb_queue_stats(const struct nfqb_queue *q, struct nfqb_stats *st,
		     size_t size)
{
	int r;

	REAL(nfqb_queue_stats);
	r = real(q, st, size);
	if (!r && gso_fake_on && st &&
	    size >= offsetof(struct nfqb_stats, gso_off) + sizeof(st->gso_off))
		gso_off_sent = st->gso_off;
	return r;
}

static bool case_gso_flags_once(void)
{
	struct inst_opts o = { .timeout = 20 };
	DAQ_Instance_h inst;
	DAQ_RecvStatus rs;
	DAQ_Stats_t st;
	DAQ_Msg_h m;
	unsigned int i, got = 0;
	bool ok = true;

	inst = start(&o);
	if (!inst)
		return false;
	rx_flush();
	gso_off_asked = 0;
	gso_off_sent = 0;
	gso_fake_on = true;
	for (i = 0; i < 20; i++)
		send_one(PORT, i, 'G');
	/* dropped (UDP: nothing sends them again smaller), never passed
	 * uninspected: the application and the receiver get none, and
	 * all 20 are counted as filtered */
	memset(&st, 0, sizeof(st));
	for (uint64_t end = now_ms() + 3000;
	     st.packets_filtered < 20 && now_ms() < end;) {
		if (daq_instance_msg_receive(inst, 1, &m, &rs)) {
			ok = fail("a truncated packet reached the application");
			daq_instance_msg_finalize(inst, m, DAQ_VERDICT_PASS);
		}
		got += rx_count(1, 0);
		daq_instance_get_stats(inst, &st);
	}
	got += rx_count(200, 0);
	gso_fake_on = false;
	finish(inst);
	if (got)
		ok = fail("%u of 20 datagrams passed uninspected", got);
	if (st.packets_filtered != 20)
		ok = fail("%" PRIu64 " of 20 counted as filtered",
			  (uint64_t)st.packets_filtered);
	if (gso_off_sent != 1)
		ok = fail("the library asked the kernel %" PRIu64 " times to segment GSO packets, not once",
			  gso_off_sent);
	if (gso_off_asked)
		ok = fail("%u configuration round trips in the packet path",
			  gso_off_asked);
	return ok;
}

/* --- The variables from before the library's large-packet policy -------- */

static bool case_legacy_vars(void)
{
	static const char *const kept[][2] = {
		{ "mss_clamp=off", "truncated=pass" },
		{ "gso=on", "mss_clamp=auto" },
		{ "gso=off", "truncated=block" },
	};
	struct inst_opts o = { .timeout = 20 };
	DAQ_Instance_h inst;
	char err[512];
	bool ok = true;
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		o.vars[0] = kept[i][0];
		o.vars[1] = kept[i][1];
		inst = start(&o);
		if (!inst) {
			ok = fail("%s %s refused", kept[i][0], kept[i][1]);
			continue;
		}
		finish(inst);
	}
	o.vars[0] = "mss_clamp=1400";
	o.vars[1] = NULL;
	inst = instantiate(&o, err, sizeof(err));
	if (inst) {
		ok = fail("mss_clamp=1400 instantiated");
		daq_instance_destroy(inst);
	} else if (!strstr(err, "no longer supported") ||
		   !strstr(err, "nftables")) {
		ok = fail("mss_clamp=1400 refused without saying why: %s", err);
	} else {
		printf("    mss_clamp=1400: %s\n", err);
	}
	return ok;
}

/* --- Main ----------------------------------------------------------------- */

static const struct {
	const char *name;
	bool (*fn)(void);
} cases[] = {
	{ "finalize_timeout", case_finalize_timeout },
	{ "verdict_idle", case_verdict_idle },
	{ "interrupt_race", case_interrupt_race },
	{ "ioctl_index", case_ioctl_index },
	{ "stop_counters", case_stop_counters },
	{ "fail_open", case_fail_open },
	{ "instances", case_instances },
	{ "linger_timeout", case_linger_timeout },
	{ "pool_held", case_pool_held },
	{ "instance_inputs", case_instance_inputs },
	{ "start_traffic", case_start_traffic },
	{ "netdev_egress", case_netdev_egress },
	{ "gso_flags_once", case_gso_flags_once },
	{ "legacy_vars", case_legacy_vars },
	{ "data_after_stop", case_data_after_stop },
	{ "snaplen", case_snaplen },
	{ "vtimeout_memory", case_vtimeout_memory },
};

static int setup_netns(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) < 0) {
		perror("daq-contract: unshare(CLONE_NEWNET)");
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -1;
	close(fd);
	if (sh("iptables -A OUTPUT -p udp --dport %d -j NFQUEUE --queue-num %d",
	       PORT, QUEUE) ||
	    sh("iptables -A OUTPUT -p udp --dport %d -j NFQUEUE --queue-num %d --queue-bypass",
	       BYPASS_PORT, BYPASS_QUEUE)) {
		fprintf(stderr, "daq-contract: iptables failed\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dirs[2] = { NULL, NULL };
	size_t i;
	int a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: daq-contract MODULE_DIR [CASE...]\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("daq-contract: SKIP: needs root\n");
		return 77;
	}
	if (setup_netns() < 0)
		return 1;
	dirs[0] = argv[1];
	if (daq_load_dynamic_modules(dirs) != DAQ_SUCCESS ||
	    !(module = daq_find_module("nfqb"))) {
		fprintf(stderr, "daq-contract: no nfqb module in %s\n", argv[1]);
		return 1;
	}
	rx_fd = udp_socket(PORT);
	tx_fd = udp_socket(0);
	if (rx_fd < 0 || tx_fd < 0) {
		perror("daq-contract: sockets");
		return 1;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool want = argc == 2;

		for (a = 2; a < argc; a++)
			if (!strcmp(argv[a], cases[i].name))
				want = true;
		if (!want)
			continue;
		case_name = cases[i].name;
		checks++;
		rx_flush();
		if (cases[i].fn()) {
			printf("PASS %s\n", case_name);
		} else {
			failures++;
			printf("FAILED %s\n", case_name);
		}
	}
	while (ncfgs)
		daq_config_destroy(cfgs[--ncfgs]);
	daq_unload_modules();
	printf("%d%%: Checks: %d, Failures: %d, Errors: 0\n",
	       checks ? (checks - failures) * 100 / checks : 100, checks,
	       failures);
	return failures ? 1 : 0;
}
