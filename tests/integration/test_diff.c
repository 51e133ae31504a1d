// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Differential test: the same real kernel NFQNL_MSG_PACKET messages parsed
 * by libnetfilter_queue and by our parser must agree on every field both
 * know.
 *
 * The queue is bound with libnetfilter_queue. Each datagram read from its
 * socket goes to nfq_handle_packet() (old API: the callback reads every
 * field through nfq_get_*() and gives the verdict), to nfq_nlmsg_parse()
 * (its libmnl-based parser: the raw attribute table), and to our internal
 * parser nfqb_parse_packet(), whose result is read through the public
 * nfqb_pkt_*() getters. Traffic: loopback UDP queued at OUTPUT (mark,
 * conntrack, uid/gid, checksum info) and at INPUT (indev, hardware address,
 * timestamps), of sizes around a small copy range (captured length).
 *
 * libnetfilter_queue 1.0.5 was built with a header that ends at
 * NFQA_SECCTX: it knows nothing of NFQA_VLAN, NFQA_L2HDR, NFQA_PRIORITY and
 * later; those are checked against what the test itself set up instead.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* The kernel's uapi nfnetlink_queue.h (through internal.h) before
 * libnetfilter_queue's older copy of it, which shares its include guard. */
#include "lib/parse.h"

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "harness.h"

#define PORT_OUT	5101	/* queued at OUTPUT */
#define PORT_IN		5102	/* queued at INPUT */
#define QNUM		11
#define COPY_RANGE	200
#define MARK		0x2a2a
#define PRIO		5
#define N_PER_PORT	300

/* The highest attribute type this libnetfilter_queue parses. */
#define NFQ_KNOWN_MAX	NFQA_SECCTX

/* What libnetfilter_queue's old API says about one packet. */
struct theirs {
	bool seen;
	uint32_t id;
	uint16_t hw_protocol;
	uint8_t hook;
	uint8_t family;
	uint16_t res_id;
	uint32_t mark;
	int ts_ret;
	struct timeval ts;
	uint32_t indev, outdev, physindev, physoutdev;
	bool has_hw;
	struct nfqnl_msg_packet_hw hw;
	int payload_len;
	const unsigned char *payload;
	int has_uid, has_gid;
	uint32_t uid, gid;
	uint32_t skbinfo;
};

struct diff_ctx {
	struct nfq_q_handle *qh;
	struct theirs t;		/* of the message being handled */
	unsigned int callbacks;
	int verdict_err;
	atomic_uint handled;
	/* attribute coverage over the whole run */
	unsigned int attr_seen[NFQB_NFQA_MAX + 1];
	unsigned int hooks_out, hooks_in, truncated;
};

static int nfq_cb(struct nfq_q_handle *qh, struct nfgenmsg *nfmsg,
		  struct nfq_data *nfa, void *data)
{
	struct diff_ctx *ctx = data;
	struct theirs *t = &ctx->t;
	struct nfqnl_msg_packet_hdr *ph;
	struct nfqnl_msg_packet_hw *hw;
	unsigned char *pl = NULL;

	memset(t, 0, sizeof(*t));
	t->seen = true;
	ctx->callbacks++;
	t->family = nfmsg->nfgen_family;
	t->res_id = ntohs(nfmsg->res_id);
	ph = nfq_get_msg_packet_hdr(nfa);
	if (ph) {
		t->id = ntohl(ph->packet_id);
		t->hw_protocol = ntohs(ph->hw_protocol);
		t->hook = ph->hook;
	}
	t->mark = nfq_get_nfmark(nfa);
	t->ts_ret = nfq_get_timestamp(nfa, &t->ts);
	t->indev = nfq_get_indev(nfa);
	t->outdev = nfq_get_outdev(nfa);
	t->physindev = nfq_get_physindev(nfa);
	t->physoutdev = nfq_get_physoutdev(nfa);
	hw = nfq_get_packet_hw(nfa);
	if (hw) {
		t->has_hw = true;
		t->hw = *hw;
	}
	t->payload_len = nfq_get_payload(nfa, &pl);
	t->payload = pl;
	t->has_uid = nfq_get_uid(nfa, &t->uid);
	t->has_gid = nfq_get_gid(nfa, &t->gid);
	t->skbinfo = nfq_get_skbinfo(nfa);

	if (ph && nfq_set_verdict(qh, t->id, NF_ACCEPT, 0, NULL) < 0)
		ctx->verdict_err = errno ? errno : EIO;
	return 0;
}

/* Compare one packet message both ways. */
static void compare(struct diff_ctx *ctx, const struct nlmsghdr *nlh)
{
	const struct theirs *t = &ctx->t;
	struct nlattr *raw[NFQB_NFQA_MAX + 1];
	struct nfqb_packet *p;
	const uint8_t *pl, *addr;
	uint32_t v, plen, caplen;
	uint16_t alen, type;
	uint64_t ns;

	/* aligned as the library's descriptors (32-bit handles) */
	p = aligned_alloc(_Alignof(struct nfqb_packet), sizeof(*p));
	ck_assert_ptr_nonnull(p);
	memset(p, 0, sizeof(*p));
	/* a live descriptor of generation 0: its handle is its address */
	atomic_store(&p->sg, NFQB_SG(0, NFQB_PS_PENDING));
	ck_assert_int_eq(nfqb_parse_packet(p, nlh), NFQB_PARSE_OK);
	memset(raw, 0, sizeof(raw));
	ck_assert_int_eq(nfq_nlmsg_parse(nlh, raw), MNL_CB_OK);

	ck_assert(t->seen);
	ck_assert_uint_eq(nfqb_pkt_id(p), t->id);
	ck_assert_uint_eq(nfqb_pkt_hw_protocol(p), t->hw_protocol);
	ck_assert_uint_eq(nfqb_pkt_hook(p), t->hook);
	ck_assert_uint_eq(nfqb_pkt_family(p), t->family);
	ck_assert_uint_eq(nfqb_pkt_queue_num(p), t->res_id);
	ck_assert_uint_eq(t->res_id, QNUM);

	/* every attribute libnetfilter_queue knows: same presence, same
	 * bytes */
	for (type = 1; type <= NFQ_KNOWN_MAX; type++) {
		const void *ours = nfqb_pkt_attr(p, type, &alen);

		if (!raw[type]) {
			ck_assert_msg(ours == NULL, "attr %u: only we have it",
				      type);
			continue;
		}
		ck_assert_msg(ours != NULL, "attr %u: only nfq has it", type);
		ck_assert_uint_eq(alen, mnl_attr_get_payload_len(raw[type]));
		ck_assert_msg(memcmp(ours, mnl_attr_get_payload(raw[type]),
				     alen) == 0, "attr %u: bytes differ", type);
	}
	for (type = 1; type <= NFQB_NFQA_MAX; type++)
		ctx->attr_seen[type] += nfqb_pkt_attr(p, type, &alen) != NULL;

	/* typed getters against nfq_get_*() */
	if (nfqb_pkt_mark(p, &v))
		ck_assert_uint_eq(v, t->mark);
	else
		ck_assert_uint_eq(t->mark, 0);
	if (nfqb_pkt_timestamp(p, &ns)) {
		ck_assert_int_eq(t->ts_ret, 0);
		ck_assert_uint_eq(ns, (uint64_t)t->ts.tv_sec * 1000000000ull +
				      (uint64_t)t->ts.tv_usec * 1000ull);
	} else {
		ck_assert_int_ne(t->ts_ret, 0);
	}
	v = 0;
	ck_assert_uint_eq(nfqb_pkt_indev(p, &v) ? v : 0, t->indev);
	v = 0;
	ck_assert_uint_eq(nfqb_pkt_outdev(p, &v) ? v : 0, t->outdev);
	v = 0;
	ck_assert_uint_eq(nfqb_pkt_physindev(p, &v) ? v : 0, t->physindev);
	v = 0;
	ck_assert_uint_eq(nfqb_pkt_physoutdev(p, &v) ? v : 0, t->physoutdev);
	if (nfqb_pkt_hwaddr(p, &addr, &alen)) {
		ck_assert(t->has_hw);
		ck_assert_uint_eq(alen, ntohs(t->hw.hw_addrlen));
		ck_assert_int_eq(memcmp(addr, t->hw.hw_addr, alen), 0);
	} else {
		ck_assert(!t->has_hw);
	}
	pl = nfqb_pkt_payload(p, &plen);
	if (pl) {
		ck_assert_int_eq((int)plen, t->payload_len);
		ck_assert_int_eq(memcmp(pl, t->payload, plen), 0);
	} else {
		ck_assert_int_lt(t->payload_len, 0);
	}
	if (nfqb_pkt_uid(p, &v)) {
		ck_assert_int_ne(t->has_uid, 0);
		ck_assert_uint_eq(v, t->uid);
	} else {
		ck_assert_int_eq(t->has_uid, 0);
	}
	if (nfqb_pkt_gid(p, &v)) {
		ck_assert_int_ne(t->has_gid, 0);
		ck_assert_uint_eq(v, t->gid);
	} else {
		ck_assert_int_eq(t->has_gid, 0);
	}
	if (nfqb_pkt_skbinfo(p, &v)) {
		ck_assert_uint_eq(v, t->skbinfo);
		ck_assert_int_eq(nfqb_pkt_is_gso(p), !!(v & NFQA_SKB_GSO));
		ck_assert_int_eq(nfqb_pkt_csum_not_ready(p),
				 !!(v & NFQA_SKB_CSUMNOTREADY));
		ck_assert_int_eq(nfqb_pkt_csum_not_verified(p),
				 !!(v & NFQA_SKB_CSUM_NOTVERIFIED));
	} else {
		ck_assert_uint_eq(t->skbinfo, 0);
		ck_assert(!nfqb_pkt_is_gso(p));
		ck_assert(!nfqb_pkt_csum_not_ready(p));
		ck_assert(!nfqb_pkt_csum_not_verified(p));
	}
	if (nfqb_pkt_ct_info(p, &v))
		ck_assert_uint_eq(v,
				  ntohl(mnl_attr_get_u32(raw[NFQA_CT_INFO])));
	if (nfqb_pkt_ct(p, &v)) {
		ck_assert_ptr_nonnull(raw[NFQA_CT]);
		ck_assert_uint_eq(v, mnl_attr_get_payload_len(raw[NFQA_CT]));
	}
	/* captured vs original length */
	if (raw[NFQA_CAP_LEN]) {
		caplen = ntohl(mnl_attr_get_u32(raw[NFQA_CAP_LEN]));
		ck_assert_uint_eq(nfqb_pkt_orig_len(p), caplen);
		ck_assert_int_eq(nfqb_pkt_truncated(p), caplen > plen);
		ctx->truncated += caplen > plen;
	} else {
		ck_assert_uint_eq(nfqb_pkt_orig_len(p), plen);
		ck_assert(!nfqb_pkt_truncated(p));
	}

	/* what nfq cannot tell: check against the set-up (the sender's
	 * SO_PRIORITY stays with the packet through loopback) */
	ck_assert(nfqb_pkt_priority(p, &v));
	ck_assert_uint_eq(v, PRIO);
	if (t->hook == NF_INET_LOCAL_OUT) {
		ctx->hooks_out++;
		ck_assert_int_eq(nfqb_pkt_hook_point(p), NFQB_HOOK_OUTPUT);
	} else {
		ck_assert_uint_eq(t->hook, NF_INET_LOCAL_IN);
		ctx->hooks_in++;
		ck_assert_int_eq(nfqb_pkt_hook_point(p), NFQB_HOOK_INPUT);
	}
	ck_assert_uint_eq(nfqb_pkt_family(p), NFPROTO_IPV4);
	ck_assert_uint_eq(nfqb_pkt_network_offset(p), 0);
	ck_assert(!nfqb_pkt_vlan(p, &alen, &alen));
	ck_assert_ptr_null(nfqb_pkt_l2hdr(p, &v));
	free(p);
}

/* Read datagrams from the libnetfilter_queue socket until @n packets were
 * handled or @timeout_ms passed. */
static void consume(struct nfq_handle *h, struct diff_ctx *ctx,
		    unsigned int n, unsigned int timeout_ms)
{
	static char buf[65536 + 4096] __attribute__((aligned(8)));
	/* each message alone, so the callback's view is of that message */
	static char one[65536 + 4096] __attribute__((aligned(8)));
	uint64_t start = nfqbt_now_ms();
	int fd = nfq_fd(h);

	while (atomic_load(&ctx->handled) < n &&
	       nfqbt_now_ms() - start < timeout_ms) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		const struct nlmsghdr *nlh;
		ssize_t len;
		int rem;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0) {
			ck_assert_msg(errno == EAGAIN || errno == EINTR,
				      "recv: %s", strerror(errno));
			continue;
		}
		rem = (int)len;
		for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, rem);
		     nlh = mnl_nlmsg_next(nlh, &rem)) {
			if (nlh->nlmsg_type !=
			    ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
				continue;
			memcpy(one, nlh, nlh->nlmsg_len);
			memset(&ctx->t, 0, sizeof(ctx->t));
			ck_assert_int_eq(nfq_handle_packet(h, one,
							   (int)nlh->nlmsg_len), 0);
			ck_assert_int_eq(ctx->verdict_err, 0);
			compare(ctx, (const struct nlmsghdr *)one);
			atomic_fetch_add(&ctx->handled, 1);
		}
	}
}

START_TEST(test_diff_libnetfilter_queue)
{
	struct diff_ctx *ctx = calloc(1, sizeof(*ctx));
	const int ports[2] = { PORT_OUT, PORT_IN };
	struct nfq_handle *h;
	bool with_ct = false;
	int tsfd, one = 1, i;

	ck_assert_ptr_nonnull(ctx);
	/* OUTPUT: a mark; conntrack (for NFQA_CT) forced by the match */
	nfqbt_iptables("-t mangle -A OUTPUT -p udp --dport %u -j MARK --set-mark %u",
		       PORT_OUT, MARK);
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -m conntrack --ctstate NEW,ESTABLISHED -j NFQUEUE --queue-num %u",
		       PORT_OUT, QNUM);
	/* INPUT: indev, hardware address, timestamps */
	nfqbt_iptables("-A INPUT -i lo -p udp --dport %u -j NFQUEUE --queue-num %u",
		       PORT_IN, QNUM);
	/* any socket asking for timestamps turns them on for every packet */
	tsfd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(tsfd, 0);
	ck_assert_int_eq(setsockopt(tsfd, SOL_SOCKET, SO_TIMESTAMP, &one,
				    sizeof(one)), 0);

	h = nfq_open();
	ck_assert_ptr_nonnull(h);
	ctx->qh = nfq_create_queue(h, QNUM, nfq_cb, ctx);
	ck_assert_msg(ctx->qh != NULL, "nfq_create_queue: %s",
		      strerror(errno));
	ck_assert_int_eq(nfq_set_mode(ctx->qh, NFQNL_COPY_PACKET, COPY_RANGE),
			 0);
	ck_assert_int_eq(nfq_set_queue_flags(ctx->qh,
		NFQA_CFG_F_UID_GID | NFQA_CFG_F_GSO,
		NFQA_CFG_F_UID_GID | NFQA_CFG_F_GSO), 0);
	/* conntrack info needs CONFIG_NETFILTER_NETLINK_GLUE_CT */
	errno = 0;
	if (nfq_set_queue_flags(ctx->qh, NFQA_CFG_F_CONNTRACK,
				NFQA_CFG_F_CONNTRACK) == 0)
		with_ct = true;
	else
		ck_assert_int_eq(errno, EOPNOTSUPP);
	nfnl_rcvbufsiz(nfq_nfnlh(h), 4 << 20);

	for (i = 0; i < 2; i++) {
		struct nfqbt_rx *rx;
		struct nfqbt_tx *tx;
		unsigned int before = atomic_load(&ctx->handled);

		rx = nfqbt_rx_start(ports[i], &(struct nfqbt_rx_opts){
			.expected = N_PER_PORT });
		tx = nfqbt_tx_start(&(struct nfqbt_tx_opts){
			.port = ports[i], .count = N_PER_PORT, .size = 4,
			.size_max = 3 * COPY_RANGE, .window = 32,
			.progress = &ctx->handled, .priority = PRIO });
		consume(h, ctx, before + N_PER_PORT, 10000);
		ck_assert_uint_eq(nfqbt_tx_join(tx), N_PER_PORT);
		ck_assert_uint_eq(atomic_load(&ctx->handled),
				  before + N_PER_PORT);
		/* libnetfilter_queue gave every verdict: all arrived */
		nfqbt_rx_wait_exact(rx, 0, N_PER_PORT, NULL, NULL);
		nfqbt_rx_free(rx);
	}
	if (getenv("NFQBT_VERBOSE"))
		for (i = 1; i <= NFQB_NFQA_MAX; i++)
			fprintf(stderr, "attr %d: %u\n", i, ctx->attr_seen[i]);
	ck_assert_uint_eq(ctx->callbacks, 2 * N_PER_PORT);
	ck_assert_uint_eq(ctx->hooks_out, N_PER_PORT);
	ck_assert_uint_eq(ctx->hooks_in, N_PER_PORT);

	/* the traffic exercised what it was meant to */
	ck_assert_uint_eq(ctx->attr_seen[NFQA_PACKET_HDR], 2 * N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_PAYLOAD], 2 * N_PER_PORT);
	ck_assert_uint_ge(ctx->attr_seen[NFQA_MARK], N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_IFINDEX_OUTDEV], N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_IFINDEX_INDEV], N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_HWADDR], N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_UID], N_PER_PORT);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_GID], N_PER_PORT);
	if (with_ct) {
		ck_assert_uint_eq(ctx->attr_seen[NFQA_CT], 2 * N_PER_PORT);
		ck_assert_uint_eq(ctx->attr_seen[NFQA_CT_INFO], 2 * N_PER_PORT);
	}
	ck_assert_uint_gt(ctx->attr_seen[NFQA_CAP_LEN], 0);
	ck_assert_uint_gt(ctx->truncated, 0);
	ck_assert_uint_gt(ctx->attr_seen[NFQA_SKB_INFO], 0);
	ck_assert_uint_gt(ctx->attr_seen[NFQA_TIMESTAMP], 0);
	ck_assert_uint_eq(ctx->attr_seen[NFQA_PRIORITY], 2 * N_PER_PORT);

	ck_assert_int_eq(nfq_destroy_queue(ctx->qh), 0);
	nfq_close(h);
	close(tsfd);
	free(ctx);
}
END_TEST

static Suite *diff_suite(void)
{
	Suite *s = suite_create("integration-diff");
	TCase *tc = nfqbt_tcase_netns(s, "kernel", NFQBT_TCASE_TIMEOUT);

	tcase_add_test(tc, test_diff_libnetfilter_queue);
	return s;
}

int main(void)
{
	return nfqbt_run_suite("test_diff", diff_suite());
}
