// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration tests of the library core against the real kernel: each test
 * in its own network namespace (see harness.h), with its own iptables
 * NFQUEUE rule and loopback UDP traffic carrying sequence numbers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define PORT	5001
#define PORT2	5002
#define QNUM	7

/* A decider that must see traffic of ours only. */
static void assert_seq(uint32_t seq)
{
	ck_assert_msg(seq != UINT32_MAX, "a queued packet without a seq");
}

/* --- 1. accept all ----------------------------------------------------- */

START_TEST(test_accept_all)
{
	const unsigned int n = 2000;
	struct nfqbt_flow f;
	struct nfqb_kstats ks;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n }, nfqbt_decide_accept, NULL);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(f.q, 4 << 20), 0);
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .window = 256 }, 15000);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);
	ck_assert_uint_eq(f.c.not_udp, 0);
	ck_assert_uint_eq(f.c.enobufs, 0);

	nfqbt_assert_stats(f.q, "packets=%u accepted=%u dropped=0 "
			   "outstanding=0 rejected_foreign+rejected_malformed+"
			   "rejected_truncated+kernel_errors=0", n, n);

	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.id_sequence, n);
	ck_assert_uint_eq(ks.queue_total, 0);
	ck_assert_uint_eq(ks.queue_dropped, 0);
	ck_assert_uint_eq(ks.queue_user_dropped, 0);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 2. drop an exact set ---------------------------------------------- */

static bool not_seven_three(uint32_t seq, void *data)
{
	(void)data;
	return seq % 7 != 3;
}

static int decide_drop_73(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)data;
	assert_seq(seq);
	ck_assert_int_eq(nfqb_verdict(p, not_seven_three(seq, NULL) ?
				      NFQB_ACCEPT : NFQB_DROP), 0);
	return 0;
}

START_TEST(test_drop_set)
{
	const unsigned int n = 1000;
	unsigned int ndrop = 0, i;
	struct nfqbt_flow f;

	for (i = 0; i < n; i++)
		ndrop += !not_seven_three(i, NULL);

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n - ndrop, .linger_ms = 200 }, decide_drop_73,
		NULL);
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .size = 200, .window = 128 },
		15000);
	nfqbt_rx_wait_exact(f.rx, 0, n, not_seven_three, NULL);

	nfqbt_assert_stats(f.q, "packets=%u dropped=%u accepted=%u",
				n, ndrop, n - ndrop);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 3. mark by sequence number ---------------------------------------- */

static uint32_t seq_mark(uint32_t seq)
{
	return seq * 3 + 1;
}

static int decide_mark(struct nfqb_packet *p, uint32_t seq, void *data)
{
	(void)data;
	assert_seq(seq);
	ck_assert_int_eq(nfqb_verdict_mark(p, NFQB_ACCEPT, seq_mark(seq)), 0);
	return 0;
}

START_TEST(test_mark_by_seq)
{
	const unsigned int n = 1000;
	struct nfqbt_flow f;
	uint32_t seq;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n }, decide_mark, NULL);
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .window = 128 }, 15000);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);
	for (seq = 0; seq < n; seq++) {
		uint32_t mark = 0;

		ck_assert_msg(nfqbt_rx_mark(f.rx, seq, &mark),
			      "seq %u arrived without SO_MARK", seq);
		ck_assert_msg(mark == seq_mark(seq),
			      "seq %u: mark %u, want %u", seq, mark,
			      seq_mark(seq));
	}

	nfqbt_assert_stats(f.q, "accepted=%u marked=%u", n, n);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 4. payload replacement -------------------------------------------- */

/* Even seqs grow to 300 payload bytes, odd ones shrink to 12. */
static size_t new_payload(uint32_t seq, uint8_t *buf)
{
	size_t len = seq % 2 ? 12 : 300, i;
	uint32_t nseq = htonl(seq);

	memcpy(buf, &nseq, 4);
	for (i = 4; i < len; i++)
		buf[i] = (uint8_t)(0xa5 ^ (seq + i * 13));
	return len;
}

static int decide_mangle(struct nfqb_packet *p, uint32_t seq, void *data)
{
	uint8_t pl[512], pkt[1024];
	const uint8_t *orig;
	uint32_t orig_len;
	size_t len, plen;

	(void)data;
	assert_seq(seq);
	orig = nfqb_pkt_payload(p, &orig_len);
	plen = new_payload(seq, pl);
	len = nfqbt_build_udp4(pkt, sizeof(pkt), orig, orig_len, pl, plen);
	ck_assert_uint_ne(len, 0);
	ck_assert_int_eq(nfqb_verdict_ex(p, &(struct nfqb_verdict){
		.verdict = NFQB_ACCEPT, .flags = NFQB_V_PAYLOAD,
		.payload = pkt, .payload_len = (uint32_t)len },
		sizeof(struct nfqb_verdict)), 0);
	/* the library copied it: scribbling over ours must not matter */
	memset(pkt, 0xee, sizeof(pkt));
	return 0;
}

START_TEST(test_payload_replace)
{
	const unsigned int n = 40, size = 32;
	struct nfqbt_flow f;
	uint32_t seq;

	ck_assert_uint_le(n, NFQBT_RX_STORE);
	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n }, decide_mangle, NULL);
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT, .count = n, .size = size }, 10000);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);
	for (seq = 0; seq < n; seq++) {
		uint8_t want[512];
		size_t wlen = new_payload(seq, want), glen = 0;
		const uint8_t *got = nfqbt_rx_payload(f.rx, seq, &glen);

		ck_assert_ptr_nonnull(got);
		ck_assert_msg(glen == wlen, "seq %u: %zu bytes, want %zu",
			      seq, glen, wlen);
		ck_assert_msg(memcmp(got, want, wlen) == 0,
			      "seq %u: payload differs", seq);
	}
	ck_assert_uint_eq(nfqbt_queue_stats(f.q).mangled, n);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 5. batch verdict by max id, with mark ------------------------------ */

#define BATCH_K 50

struct held {
	struct nfqb_packet *p[2 * BATCH_K];
	uint32_t seq[2 * BATCH_K];
	unsigned int n;
};

static int decide_hold(struct nfqb_packet *p, uint32_t seq, void *data)
{
	struct held *h = data;

	assert_seq(seq);
	ck_assert_uint_lt(h->n, 2 * BATCH_K);
	h->seq[h->n] = seq;
	h->p[h->n++] = p;
	return 0;
}

static bool below_k(uint32_t seq, void *data)
{
	(void)data;
	return seq < BATCH_K;
}

START_TEST(test_batch_verdict)
{
	const uint32_t mark = 0xbeef;
	struct held h = { .n = 0 };
	uint32_t ids[2 * BATCH_K];
	struct nfqbt_flow f;
	unsigned int i;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.quiet_ms = 5000, .timeout_ms = 10000 }, decide_hold, &h);
	nfqbt_send_seqs(PORT, 0, 2 * BATCH_K);

	/* hold all 2K undecided; nothing more may come */
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, 2 * BATCH_K, 5000),
			  2 * BATCH_K);
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, 1, 200), 0);
	for (i = 0; i < 2 * BATCH_K; i++) {
		ck_assert_uint_eq(h.seq[i], i);
		ids[i] = nfqb_pkt_id(h.p[i]);
		if (i)
			ck_assert_uint_eq(ids[i], ids[i - 1] + 1);
	}
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 2 * BATCH_K);
	ck_assert_uint_eq(nfqbt_rx_total(f.rx), 0);

	/* accept the first K with a mark, by the id of the K-th */
	ck_assert_int_eq(nfqb_verdict_batch(f.q, ids[BATCH_K - 1],
					    NFQB_ACCEPT, &mark), BATCH_K);
	ck_assert_int_ge(nfqb_flush(f.q), 1);
	ck_assert(nfqbt_rx_wait_total(f.rx, BATCH_K, 3000));
	nfqbt_sleep_ms(100);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, BATCH_K);

	/* drop the other K the same way: none may arrive */
	ck_assert_int_eq(nfqb_verdict_batch(f.q, ids[2 * BATCH_K - 1],
					    NFQB_DROP, NULL), BATCH_K);
	ck_assert_int_ge(nfqb_flush(f.q), 1);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);
	nfqbt_sleep_ms(200);
	nfqbt_rx_stop(f.rx);

	nfqbt_rx_assert_exact(f.rx, 0, 2 * BATCH_K, below_k, NULL);
	for (i = 0; i < BATCH_K; i++) {
		uint32_t got = 0;

		ck_assert_msg(nfqbt_rx_mark(f.rx, i, &got),
			      "seq %u arrived without SO_MARK", i);
		ck_assert_uint_eq(got, mark);
	}

	nfqbt_assert_stats(f.q, "batch_msgs>=2 accepted=%u dropped=%u "
				"outstanding=0", BATCH_K, BATCH_K);
	/* nothing left to finalize: the batch reached none of them twice */
	ck_assert_int_eq(nfqb_verdict_batch(f.q, ids[2 * BATCH_K - 1],
					    NFQB_ACCEPT, NULL), -1);
	ck_assert_int_eq(errno, ENOENT);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 6. fail-open ------------------------------------------------------ */

struct rec {
	uint32_t seq[4096];
	unsigned int n;
	uint8_t seen[NFQBT_RX_MAX_SEQ / 8];
};

static int decide_record_accept(struct nfqb_packet *p, uint32_t seq,
				void *data)
{
	struct rec *r = data;

	assert_seq(seq);
	ck_assert_uint_lt(r->n, 4096);
	ck_assert_uint_lt(seq, NFQBT_RX_MAX_SEQ);
	r->seq[r->n++] = seq;
	r->seen[seq / 8] |= 1u << (seq % 8);
	ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
	return 0;
}

static bool rec_has(uint32_t seq, void *data)
{
	const struct rec *r = data;

	return r->seen[seq / 8] & (1u << (seq % 8));
}

START_TEST(test_fail_open)
{
	const unsigned int n = 200, maxlen = 8;
	struct rec *rec = calloc(1, sizeof(*rec));
	struct nfqbt_flow f;
	struct nfqb_kstats ks;
	unsigned int i;

	ck_assert_ptr_nonnull(rec);
	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n, .linger_ms = 200 }, decide_record_accept, rec);
	ck_assert_int_eq(nfqb_queue_set_maxlen(f.q, maxlen), 0);
	ck_assert_int_eq(nfqb_queue_set_flags(f.q, NFQB_F_FAIL_OPEN,
					      NFQB_F_FAIL_OPEN), 0);

	/* nobody reads: the first maxlen wait in the queue, the rest pass */
	nfqbt_send_seqs(PORT, 0, n);
	ck_assert(nfqbt_rx_wait_total(f.rx, n - maxlen, 3000));
	nfqbt_sleep_ms(100);
	ck_assert_uint_eq(nfqbt_rx_total(f.rx), n - maxlen);
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.queue_total, maxlen);
	/* fail-open packets get no id and are not counted as dropped */
	ck_assert_uint_eq(ks.id_sequence, maxlen);
	ck_assert_uint_eq(ks.queue_dropped, 0);
	ck_assert_uint_eq(ks.queue_user_dropped, 0);

	/* now read: exactly the first maxlen were queued */
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, maxlen, 3000), maxlen);
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, 1, 200), 0);
	for (i = 0; i < maxlen; i++)
		ck_assert_uint_eq(rec->seq[i], i);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);

	ck_assert_uint_eq(nfqbt_queue_stats(f.q).packets, maxlen);
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.queue_total, 0);
	ck_assert_uint_eq(ks.id_sequence, maxlen);
	nfqbt_flow_end(&f);
	free(rec);
}
END_TEST

/* --- 7. --queue-bypass with no listener -------------------------------- */

START_TEST(test_bypass_no_listener)
{
	const unsigned int n = 100;
	struct nfqbt_rx *rx_bypass, *rx_plain;
	struct nfqb_kstats ks;

	nfqbt_rule_queue(PORT, QNUM, true);
	nfqbt_rule_queue(PORT2, QNUM + 1, false);
	rx_bypass = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){
		.expected = n, .linger_ms = 200 });
	rx_plain = nfqbt_rx_start(PORT2, &(struct nfqbt_rx_opts){
		.quiet_ms = 1000 });

	nfqbt_send_seqs(PORT, 0, n);
	nfqbt_send_seqs(PORT2, 0, n);

	nfqbt_rx_wait_exact(rx_bypass, 0, n, NULL, NULL);
	nfqbt_rx_wait(rx_plain);
	ck_assert_uint_eq(nfqbt_rx_total(rx_plain), 0);

	errno = 0;
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), -1);
	ck_assert_int_eq(errno, ENOENT);
	nfqbt_rx_free(rx_bypass);
	nfqbt_rx_free(rx_plain);
}
END_TEST

/* --- 8. ENOBUFS survived ----------------------------------------------- */

START_TEST(test_enobufs_survived)
{
	const unsigned int burst = 400, n2 = 2000;
	struct rec *rec = calloc(1, sizeof(*rec));
	struct nfqbt_flow f;
	struct nfqb_kstats ks;
	unsigned int got, enobufs;

	ck_assert_ptr_nonnull(rec);
	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.quiet_ms = 5000, .timeout_ms = 15000 }, decide_record_accept,
		rec);
	nfqbt_rule_queue(PORT2, QNUM, false);
	ck_assert_int_eq(nfqb_queue_set_enobufs(f.q, NFQB_ENOBUFS_REPORT), 0);
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(f.q, 4096), 0);

	/* a burst nobody reads overflows the tiny socket buffer */
	ck_assert_uint_eq(nfqbt_send(&(struct nfqbt_tx_opts){
		.port = PORT, .count = burst, .size = 1000 }), burst);
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.id_sequence, burst);
	ck_assert_uint_eq(ks.queue_dropped, 0);
	ck_assert_uint_gt(ks.queue_user_dropped, 0);
	ck_assert_uint_lt(ks.queue_user_dropped, burst);

	/* the library reports it, goes on, and gets every packet that made
	 * it into the socket */
	got = nfqbt_cons_run(&f.c, burst, 1000);
	ck_assert_uint_gt(f.c.enobufs, 0);
	ck_assert_uint_eq(got + ks.queue_user_dropped, burst);
	nfqbt_assert_stats(f.q, "enobufs>=1 packets=%u accepted=%u", got, got);
	/* and every one of them got its verdict */
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_total, 0);
	ck_assert(nfqbt_rx_wait_total(f.rx, got, 3000));
	nfqbt_sleep_ms(200);
	nfqbt_rx_stop(f.rx);
	nfqbt_rx_assert_exact(f.rx, 0, burst, rec_has, rec);
	nfqbt_rx_free(f.rx);

	/* a clean run afterwards is lossless */
	ck_assert_int_eq(nfqb_queue_set_rcvbuf(f.q, 4 << 20), 0);
	enobufs = f.c.enobufs;
	f.c.decide = nfqbt_decide_accept;
	f.rx = nfqbt_rx_start(PORT2, &(struct nfqbt_rx_opts){ .expected = n2 });
	nfqbt_cons_pump(&f.c, &(struct nfqbt_tx_opts){
		.port = PORT2, .count = n2, .window = 64 }, 15000);
	nfqbt_rx_wait_exact(f.rx, 0, n2, NULL, NULL);
	ck_assert_uint_eq(f.c.enobufs, enobufs);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).queue_user_dropped,
			  ks.queue_user_dropped);
	ck_assert_uint_eq(nfqbt_queue_stats(f.q).packets, got + n2);
	nfqbt_flow_end(&f);
	free(rec);
}
END_TEST

/* --- 9. a spoofed packet message --------------------------------------- */

/* Send, from a socket of our own, a well-formed NFQNL_MSG_PACKET to
 * @portid, as if it came from the kernel. */
static void send_spoof(uint32_t portid, uint32_t id, uint32_t seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = portid };
	struct nfqnl_msg_packet_hdr ph = {
		.packet_id = htonl(id),
		.hw_protocol = htons(0x0800),
		.hook = NF_INET_LOCAL_OUT,
	};
	uint8_t ip[20 + 8 + 4];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;
	uint16_t v;
	uint32_t a, nseq = htonl(seq);
	ssize_t ret;

	memset(ip, 0, sizeof(ip));
	ip[0] = 0x45;
	v = htons(sizeof(ip));
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	a = htonl(INADDR_LOOPBACK);
	memcpy(ip + 12, &a, 4);
	memcpy(ip + 16, &a, 4);
	v = nfqbt_inet_csum(ip, 20);
	memcpy(ip + 10, &v, 2);
	v = htons(PORT);
	memcpy(ip + 20, &v, 2);
	memcpy(ip + 22, &v, 2);
	v = htons(8 + 4);
	memcpy(ip + 24, &v, 2);
	memcpy(ip + 28, &nseq, 4);

	nl = mnl_socket_open(NETLINK_NETFILTER);
	ck_assert_ptr_nonnull(nl);
	ck_assert_int_eq(mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID), 0);
	ck_assert_uint_ne(mnl_socket_get_portid(nl), portid);

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	nlh->nlmsg_flags = 0;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(QNUM);
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(ip), ip);

	ret = sendto(mnl_socket_get_fd(nl), buf, nlh->nlmsg_len, 0,
		     (struct sockaddr *)&to, sizeof(to));
	ck_assert_msg(ret == (ssize_t)nlh->nlmsg_len, "spoof sendto: %s",
		      strerror(errno));
	mnl_socket_close(nl);
}

START_TEST(test_spoofed_packet)
{
	const unsigned int n = 50;
	struct nfqb_packet *vec[16];
	struct nfqb_stats before;
	struct nfqbt_flow f;
	uint32_t portid;
	int ret;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n }, nfqbt_decide_accept, NULL);
	portid = nfqbt_portid(nfqb_queue_socket_fd(f.q));
	ck_assert_uint_ne(portid, 0);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).portid, portid);

	before = nfqbt_queue_stats(f.q);
	/* netlink unicast is synchronous: it is in our socket on return */
	send_spoof(portid, 1, 4242);
	errno = 0;
	ret = nfqb_recv(f.q, vec, 16);
	ck_assert_msg(ret == -1 && errno == EAGAIN,
		      "nfqb_recv returned %d (%s) for a spoofed message", ret,
		      strerror(errno));
	nfqbt_assert_stats(f.q, "rejected_foreign=%llu packets=%llu",
			   (unsigned long long)before.rejected_foreign + 1,
			   (unsigned long long)before.packets);

	/* real traffic still works */
	nfqbt_send_seqs(PORT, 0, n);
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, n, 5000), n);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);
	ck_assert_uint_eq(nfqbt_queue_stats(f.q).rejected_foreign,
			  before.rejected_foreign + 1);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 10. a second open of a bound queue -------------------------------- */

START_TEST(test_second_open_busy)
{
	const unsigned int n = 20;
	struct nfqbt_flow f;
	struct nfqb_queue *q2;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n }, nfqbt_decide_accept, NULL);
	errno = 0;
	q2 = nfqb_queue_open(QNUM);
	ck_assert_msg(q2 == NULL, "a second open of a bound queue succeeded");
	ck_assert_msg(errno == EBUSY, "second open: errno %d (%s), want EBUSY",
		      errno, strerror(errno));

	/* the first binding is untouched */
	ck_assert_uint_eq(nfqbt_kstats(QNUM).portid,
			  nfqbt_portid(nfqb_queue_socket_fd(f.q)));
	nfqbt_send_seqs(PORT, 0, n);
	ck_assert_uint_eq(nfqbt_cons_run(&f.c, n, 5000), n);
	nfqbt_rx_wait_exact(f.rx, 0, n, NULL, NULL);
	nfqbt_flow_end(&f);
}
END_TEST

/* --- 11. the kernel's statistics ---------------------------------------- */

START_TEST(test_kstats_bound_and_gone)
{
	struct nfqb_kstats ks, all[4];
	struct nfqb_queue *q;

	q = nfqbt_queue_open(QNUM);
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.portid, nfqbt_portid(nfqb_queue_socket_fd(q)));
	ck_assert_uint_eq(ks.copy_mode, NFQB_COPY_PACKET);
	ck_assert_uint_eq(ks.queue_total, 0);
	ck_assert_uint_eq(ks.id_sequence, 0);
	/* the namespace is ours: only our queue is listed */
	ck_assert_int_eq(nfqb_kstats_read(all, 4, sizeof(all[0])), 1);
	ck_assert_uint_eq(all[0].queue_num, QNUM);

	ck_assert_int_eq(nfqb_queue_set_copy_mode(q, NFQB_COPY_PACKET, 1500),
			 0);
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.copy_mode, NFQB_COPY_PACKET);
	ck_assert_uint_eq(ks.copy_range, 1500);
	ck_assert_int_eq(nfqb_queue_set_copy_mode(q, NFQB_COPY_META, 0), 0);
	ck_assert_uint_eq(nfqbt_kstats(QNUM).copy_mode, NFQB_COPY_META);

	errno = 0;
	ck_assert_int_eq(nfqb_kstats_get(QNUM + 1, &ks, sizeof(ks)), -1);
	ck_assert_int_eq(errno, ENOENT);

	ck_assert_int_eq(nfqb_queue_close(q), 0);
	errno = 0;
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(nfqb_kstats_read(all, 4, sizeof(all[0])), 0);
}
END_TEST

/* --- 12. close with outstanding packets -------------------------------- */

/* seq 0..2 dropped at once (sent by the flush), seq 7 dropped but stuck
 * behind undecided ones (sent only at close), the rest held undecided. */
static int decide_close_mix(struct nfqb_packet *p, uint32_t seq, void *data)
{
	struct held *h = data;

	assert_seq(seq);
	if (seq < 3 || seq == 7) {
		ck_assert_int_eq(nfqb_verdict(p, NFQB_DROP), 0);
		return 0;
	}
	return decide_hold(p, seq, h);
}

static bool close_mix_expect(uint32_t seq, void *data)
{
	(void)data;
	return seq >= 3 && seq != 7;
}

/* @f with @n datagrams sent to the queue; @first (or more) of them taken
 * (the rest stays in the socket), handed to the flow's decider. */
static void take_first(struct nfqbt_flow *f, unsigned int n,
		       unsigned int first)
{
	f->c.max_vec = first;
	nfqbt_send_seqs(PORT, 0, n);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, n, 3000));
	ck_assert_uint_ge(nfqbt_cons_run(&f->c, first, 3000), first);
}

/* Close @f's queue: of the @n sent exactly those @expect says arrive, and
 * the queue is unbound. */
static void close_check(struct nfqbt_flow *f, unsigned int n,
			nfqbt_expect_fn expect)
{
	struct nfqb_kstats ks;

	ck_assert_int_eq(nfqb_queue_close(f->q), 0);
	nfqbt_rx_wait_exact(f->rx, 0, n, expect, NULL);
	errno = 0;
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &ks, sizeof(ks)), -1);
	ck_assert_int_eq(errno, ENOENT);
	nfqbt_rx_free(f->rx);
}

START_TEST(test_close_outstanding)
{
	const unsigned int n = 30, first = 10;
	struct held h = { .n = 0 };
	struct nfqbt_flow f;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = n - 4, .linger_ms = 300 }, decide_close_mix, &h);
	/* keep decisions behind undecided packets unsent until close */
	ck_assert_int_eq(nfqb_queue_set_latency(f.q, 10u * 1000 * 1000), 0);

	/* take some, decide a few */
	take_first(&f, n, first);
	ck_assert_uint_ge(nfqbt_queue_stats(f.q).outstanding, first - 3);
	ck_assert_uint_eq(nfqbt_rx_total(f.rx), 0);
	close_check(&f, n, close_mix_expect);
}
END_TEST

/* seq 0..2 accepted, everything else left to the default verdict DROP */
static int decide_accept_first3(struct nfqb_packet *p, uint32_t seq,
				void *data)
{
	assert_seq(seq);
	if (seq < 3) {
		ck_assert_int_eq(nfqb_verdict(p, NFQB_ACCEPT), 0);
		return 0;
	}
	return decide_hold(p, seq, data);
}

static bool below_3(uint32_t seq, void *data)
{
	(void)data;
	return seq < 3;
}

START_TEST(test_close_default_drop)
{
	const unsigned int n = 30, first = 10;
	struct held h = { .n = 0 };
	struct nfqbt_flow f;

	nfqbt_flow_start(&f, PORT, QNUM, &(struct nfqbt_rx_opts){
		.expected = 3, .linger_ms = 500 }, decide_accept_first3, &h);
	ck_assert_int_eq(nfqb_queue_set_default_verdict(f.q, NFQB_DROP), 0);
	take_first(&f, n, first);
	close_check(&f, n, below_3);
}
END_TEST

/* --- the receive timeout --------------------------------------------- */

/* A blocking nfqb_recv() of @max on @q fails with EAGAIN once its receive
 * timeout of 150 ms passed. */
static void assert_recv_times_out(struct nfqb_queue *q,
				  struct nfqb_packet **vec, unsigned int max)
{
	uint64_t t0 = nfqbt_now_ms(), dt;

	errno = 0;
	ck_assert_int_eq(nfqb_recv(q, vec, max), -1);
	ck_assert_int_eq(errno, EAGAIN);
	dt = nfqbt_now_ms() - t0;
	ck_assert_msg(dt >= 140 && dt < 1000,
		      "timed out after %llu ms, not 150",
		      (unsigned long long)dt);
}

/* A blocking nfqb_recv() with a receive timeout: EAGAIN when it passes
 * without a packet, the packet when one comes before; a fixed linger
 * still pauses (it is the blocking mode's). */
START_TEST(test_recv_timeout)
{
	struct nfqb_packet *vec[64];
	struct nfqbt_rx *rx;
	struct nfqb_queue *q;
	unsigned int got = 0;
	uint64_t t0;
	int i, n;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 150), 0);
	ck_assert_int_eq(nfqb_queue_set_linger(q, 300), 0);
	assert_recv_times_out(q, vec, 64);

	/* a stream: the 200 are queued before the first read, so every read
	 * brings several (8, a full vector); the receive after the last one
	 * finds the socket dry, lingers, and times out all the same */
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 200 });
	nfqbt_send_seqs(PORT, 0, 200);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 200, 3000));
	t0 = nfqbt_now_ms();
	while (got < 200 && nfqbt_now_ms() - t0 < 5000) {
		n = nfqb_recv(q, vec, 8);
		if (n < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			continue;
		}
		for (i = 0; i < n; i++)
			ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
		got += (unsigned int)n;
	}
	ck_assert_uint_eq(got, 200);
	assert_recv_times_out(q, vec, 8);	/* after a linger */
	ck_assert_uint_gt(nfqbt_queue_stats(q).linger_pauses, 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	nfqbt_rx_wait_exact(rx, 0, 200, NULL, NULL);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

/* nfqb_queue_set_wake_fd(): a byte in the pipe ends a blocking
 * nfqb_recv() at once with EINTR (a signal's self-pipe written just before
 * the sleep); packets ready come first; drained, the call sleeps again
 * (the receive timeout ends it); after -1 the pipe wakes nothing. */
START_TEST(test_wake_fd)
{
	struct nfqb_packet *vec[64];
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	uint64_t t0;
	char c;
	int p[2], n;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_eq(nfqb_queue_set_wake_fd(q, p[0]), 0);
	ck_assert_int_eq(nfqb_queue_set_recv_timeout(q, 150), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	t0 = nfqbt_now_ms();
	errno = 0;
	ck_assert_int_eq(nfqb_recv(q, vec, 64), -1);
	ck_assert_int_eq(errno, EINTR);
	ck_assert_uint_lt(nfqbt_now_ms() - t0, 100);
	/* packets come first, the pipe still readable */
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 3 });
	nfqbt_send_seqs(PORT, 0, 3);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 3, 3000));
	n = 0;
	while (n < 3) {
		int r = nfqb_recv(q, vec + n, 64 - (unsigned int)n);

		ck_assert_msg(r > 0, "recv: %d (%s) with packets queued", r,
			      strerror(errno));
		n += r;
	}
	while (n-- > 0)
		ck_assert_int_eq(nfqb_verdict(vec[n], NFQB_ACCEPT), 0);
	ck_assert_int_eq(nfqb_recv(q, vec, 64), -1);
	ck_assert_int_eq(errno, EINTR);
	/* drained: it sleeps until the receive timeout */
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	assert_recv_times_out(q, vec, 64);
	/* none: a byte wakes nothing */
	ck_assert_int_eq(nfqb_queue_set_wake_fd(q, -1), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	assert_recv_times_out(q, vec, 64);
	close(p[0]);
	close(p[1]);
	nfqbt_rx_wait_exact(rx, 0, 3, NULL, NULL);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

/* nfqb_queue_open_fd(): the other side, a thread in a network namespace
 * of its own (the test's thread stays in its own): the rule, the socket
 * (made there), then the traffic once the queue is bound */
struct other_ns {
	pthread_barrier_t made, bound, decided;
	int fd;
	struct nfqbt_rx *rx;
};

static void *other_ns_side(void *arg)
{
	struct other_ns *o = arg;

	nfqbt_netns_enter();
	nfqbt_rule_queue(PORT, QNUM, false);
	o->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	pthread_barrier_wait(&o->made);
	pthread_barrier_wait(&o->bound);
	o->rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 10 });
	nfqbt_send_seqs(PORT, 0, 10);
	pthread_barrier_wait(&o->decided);
	nfqbt_rx_wait(o->rx);
	return NULL;
}

/* A queue bound in another network namespace through a socket made there
 * (no setns() here): its packets come to us, our verdicts reach them; the
 * socket is the queue's (closed by nfqb_queue_close()); wrong sockets are
 * refused and left open. */
START_TEST(test_open_fd_other_netns)
{
	struct nfqb_packet *vec[10];
	struct other_ns o = { .fd = -1 };
	struct nfqb_queue *q;
	pthread_t t;
	int i, udp, mine;

	udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	errno = 0;
	ck_assert_ptr_null(nfqb_queue_open_fd(udp, QNUM));
	ck_assert_int_eq(errno, EPROTOTYPE);
	ck_assert_int_eq(fcntl(udp, F_GETFD) >= 0, 1);	/* left open */
	close(udp);

	pthread_barrier_init(&o.made, NULL, 2);
	pthread_barrier_init(&o.bound, NULL, 2);
	pthread_barrier_init(&o.decided, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, other_ns_side, &o), 0);
	pthread_barrier_wait(&o.made);
	ck_assert_int_ge(o.fd, 0);
	mine = fcntl(o.fd, F_DUPFD_CLOEXEC, 0);
	ck_assert_int_ge(mine, 0);
	q = nfqb_queue_open_fd(mine, QNUM);
	ck_assert_msg(q != NULL, "nfqb_queue_open_fd: %s", strerror(errno));
	ck_assert_int_eq(nfqb_queue_socket_fd(q), mine);
	/* not bound in this thread's namespace */
	ck_assert_int_eq(nfqb_kstats_get(QNUM, &(struct nfqb_kstats){ 0 },
					 sizeof(struct nfqb_kstats)), -1);
	pthread_barrier_wait(&o.bound);
	nfqbt_recv_n(q, vec, 10);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
	ck_assert_int_ge(nfqb_flush(q), 0);
	pthread_barrier_wait(&o.decided);
	pthread_join(t, NULL);
	nfqbt_rx_assert_exact(o.rx, 0, 10, NULL, NULL);
	nfqbt_rx_free(o.rx);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	ck_assert_int_eq(fcntl(mine, F_GETFD), -1);	/* the queue's: closed */
	ck_assert_int_ge(fcntl(o.fd, F_GETFD), 0);	/* the caller's: open */
	close(o.fd);
	pthread_barrier_destroy(&o.made);
	pthread_barrier_destroy(&o.bound);
	pthread_barrier_destroy(&o.decided);
}
END_TEST

/* nfqb_queue_close_stats(): the counters as the close left them, what it
 * read from the socket and defaulted included. */
START_TEST(test_close_stats)
{
	struct nfqb_packet *vec[4];
	struct nfqb_queue *q;
	struct nfqbt_rx *rx;
	struct nfqb_stats st;
	int i, n;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	errno = 0;
	ck_assert_int_eq(nfqb_queue_close_stats(q, NULL, sizeof(st)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_queue_close_stats(q, &st, 12), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfqb_queue_close_stats(NULL, &st, sizeof(st)), -1);
	ck_assert_int_eq(errno, EINVAL);
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 7 });
	nfqbt_send_seqs(PORT, 0, 2);
	nfqbt_recv_n(q, vec, 2);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(nfqb_verdict(vec[i], NFQB_ACCEPT), 0);
	/* five more that stay in the socket, unread */
	nfqbt_send_seqs(PORT, 2, 5);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 7, 3000));
	n = (int)nfqbt_queue_stats(q).packets;
	ck_assert_int_le(n, 2);
	memset(&st, 0xff, sizeof(st));
	ck_assert_int_eq(nfqb_queue_close_stats(q, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.packets, 7);
	ck_assert_uint_eq(st.accepted, 7);
	ck_assert_uint_eq(st.defaults, 5);
	ck_assert_uint_eq(st.outstanding, 0);
	nfqbt_rx_wait_exact(rx, 0, 7, NULL, NULL);
	nfqbt_rx_free(rx);
}
END_TEST

/* Packets the library read ahead (ready, not handed out) and the verdict
 * timeout decided meanwhile are skipped: nfqb_recv() never returns 0 for
 * them, it goes on (here: non-blocking, nothing else to read: EAGAIN). */
START_TEST(test_recv_expired_ready)
{
	struct nfqb_packet *vec[1];
	struct nfqbt_rx *rx;
	struct nfqb_queue *q;
	int ret;

	nfqbt_rule_queue(PORT, QNUM, false);
	q = nfqbt_queue_open(QNUM);
	ck_assert_int_eq(nfqb_queue_set_verdict_timeout(q, 5), 0);
	rx = nfqbt_rx_start(PORT, &(struct nfqbt_rx_opts){ .expected = 5 });
	nfqbt_send_seqs(PORT, 0, 5);
	ck_assert(nfqbt_wait_kqueue_total(QNUM, 5, 3000));
	/* a configuration call reads them while it waits for its answer,
	 * and keeps them (ready, not handed out) */
	ck_assert_int_eq(nfqb_queue_set_maxlen(q, 1000), 0);
	nfqbt_sleep_ms(30);
	ck_assert_int_eq(nfqb_queue_set_nonblock(q, true), 0);
	errno = 0;
	ret = nfqb_recv(q, vec, 1);
	ck_assert_msg(ret == -1 && errno == EAGAIN,
		      "nfqb_recv() = %d (errno %d) with only timed-out packets ready",
		      ret, errno);
	ck_assert_uint_eq(nfqbt_queue_stats(q).timeouts, 5);
	nfqbt_rx_wait_exact(rx, 0, 5, NULL, NULL);
	ck_assert_int_eq(nfqb_queue_close(q), 0);
	nfqbt_rx_free(rx);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("integration-core");
	TCase *tc = nfqbt_tcase_netns(s, "kernel", NFQBT_TCASE_TIMEOUT);

	tcase_add_test(tc, test_accept_all);
	tcase_add_test(tc, test_drop_set);
	tcase_add_test(tc, test_mark_by_seq);
	tcase_add_test(tc, test_payload_replace);
	tcase_add_test(tc, test_batch_verdict);
	tcase_add_test(tc, test_fail_open);
	tcase_add_test(tc, test_bypass_no_listener);
	tcase_add_test(tc, test_enobufs_survived);
	tcase_add_test(tc, test_spoofed_packet);
	tcase_add_test(tc, test_second_open_busy);
	tcase_add_test(tc, test_kstats_bound_and_gone);
	tcase_add_test(tc, test_close_outstanding);
	tcase_add_test(tc, test_close_default_drop);
	tcase_add_test(tc, test_recv_timeout);
	tcase_add_test(tc, test_wake_fd);
	tcase_add_test(tc, test_open_fd_other_netns);
	tcase_add_test(tc, test_close_stats);
	tcase_add_test(tc, test_recv_expired_ready);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_core", core_suite());
}
