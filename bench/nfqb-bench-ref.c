/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the reference consumers, written the way applications do
 * today, without libnfq-batch.
 *
 * A: libnetfilter_queue's classic API: recv, nfq_handle_packet, and one
 *    nfq_set_verdict (one sendmsg) per packet.
 * B: libmnl plus libnetfilter_queue's nlmsg helpers, hand-written batching:
 *    one NFQNL_MSG_VERDICT_BATCH (accept up to the last id) every cfg->batch
 *    packets, and when the socket is empty (MSG_DONTWAIT gives EAGAIN).
 *
 * Both count their own syscalls and verdict messages. Both set the queue's
 * NFQA_CFG_F_GSO as asked (cfg->gso: on, off, or left as the kernel has
 * it) through their own configuration path, and in TCP mode count the
 * packets the kernel marks GSO (NFQA_SKB_INFO) and the bytes queued.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netfilter.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "nfqb-bench-cons.h"
#include "nfqb-bench-ref.h"

#define REF_BUF		(65536 + 4096)

static int set_rcvbuf(int fd, unsigned int bytes)
{
	int sz = (int)bytes;

	return setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
}

/* --- reference A ------------------------------------------------------- */

struct ref_a {
	struct bench_cons *c;
	bool count;			/* TCP mode: GSO packets and bytes */
};

static int ref_a_cb(struct nfq_q_handle *qh, struct nfgenmsg *nfmsg,
		    struct nfq_data *nfa, void *data)
{
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	struct ref_a *ra = data;
	struct bench_cons *c = ra->c;

	(void)nfmsg;
	if (!ph)
		return 0;
	if (ra->count) {
		unsigned char *pl;
		int len = nfq_get_payload(nfa, &pl);

		if (nfq_get_skbinfo(nfa) & NFQA_SKB_GSO)
			c->gso_packets++;
		if (len > 0)
			c->bytes += (uint64_t)len;
	}
	c->packets++;
	c->send_calls++;
	c->verdict_msgs++;
	return nfq_set_verdict(qh, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL);
}

/* the queue's settings, as asked: 0 or -1 (errno) */
static int ref_a_setup(const struct bench_cfg *cfg, struct nfq_q_handle *qh,
		       int fd, struct bench_cons *c)
{
	if (nfq_set_mode(qh, NFQNL_COPY_PACKET, 0xffff) < 0 ||
	    nfq_set_queue_maxlen(qh, cfg->maxlen) < 0 ||
	    set_rcvbuf(fd, cfg->rcvbuf) < 0) {
		bench_cons_fail(c, "queue setup", errno);
		return -1;
	}
	if (cfg->gso >= 0 &&
	    nfq_set_queue_flags(qh, NFQA_CFG_F_GSO,
				cfg->gso ? NFQA_CFG_F_GSO : 0) < 0) {
		bench_cons_fail(c, "nfq_set_queue_flags(GSO)", errno);
		return -1;
	}
	return 0;
}

/* receive and handle until the stop: 0 or -1 */
static int ref_a_loop(struct nfq_handle *h, int fd, char *buf,
		      struct bench_cons *c)
{
	while (!bench_stop) {
		ssize_t n = recv(fd, buf, REF_BUF, 0);

		c->recv_calls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				c->enobufs++;
				continue;
			}
			bench_cons_fail(c, "recv", errno);
			return -1;
		}
		if (nfq_handle_packet(h, buf, (int)n) < 0)
			c->kernel_errors++;
	}
	bench_cons_quiet();
	return 0;
}

int bench_ref_a(const struct bench_cfg *cfg, struct bench_cons *c)
{
	struct ref_a ra = { .c = c, .count = cfg->work == BENCH_WORK_TCP };
	struct nfq_q_handle *qh;
	struct nfq_handle *h;
	int fd, ret = -1;
	char *buf;

	buf = malloc(REF_BUF);
	if (!buf) {
		bench_cons_fail(c, "malloc", errno);
		return -1;
	}
	h = nfq_open();
	if (!h) {
		bench_cons_fail(c, "nfq_open", errno);
		goto out_free;
	}
	qh = nfq_create_queue(h, 0, ref_a_cb, &ra);
	if (!qh) {
		bench_cons_fail(c, "nfq_create_queue", errno);
		goto out_close;
	}
	fd = nfq_fd(h);
	if (ref_a_setup(cfg, qh, fd, c) == 0) {
		bench_cons_ready(c);
		ret = ref_a_loop(h, fd, buf, c);
	}
	nfq_destroy_queue(qh);
out_close:
	nfq_close(h);
out_free:
	free(buf);
	return ret;
}

/* --- reference B ------------------------------------------------------- */

struct ref_b {
	struct mnl_socket *nl;
	struct bench_cons *c;
	bool count;			/* TCP mode: GSO packets and bytes */
	char sbuf[8192];
	uint32_t last_id;
	unsigned int pending;
};

static int ref_b_config(struct ref_b *rb, struct nlmsghdr *nlh, char *rbuf)
{
	unsigned int portid = mnl_socket_get_portid(rb->nl);
	ssize_t n;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = 1;
	if (mnl_socket_sendto(rb->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	n = mnl_socket_recvfrom(rb->nl, rbuf, REF_BUF);
	if (n < 0)
		return -1;
	return mnl_cb_run(rbuf, (size_t)n, 1, portid, NULL, NULL);
}

static int ref_b_flush(struct ref_b *rb)
{
	struct nlmsghdr *nlh;

	if (!rb->pending)
		return 0;
	nlh = nfq_nlmsg_put(rb->sbuf, NFQNL_MSG_VERDICT_BATCH, 0);
	nfq_nlmsg_verdict_put(nlh, (int)rb->last_id, NF_ACCEPT);
	rb->c->send_calls++;
	rb->c->batch_msgs++;
	rb->pending = 0;
	return mnl_socket_sendto(rb->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

static int ref_b_parse(struct ref_b *rb, const char *buf, size_t len,
		       unsigned int batch)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	struct nlattr *attr[NFQA_MAX + 1];
	int left = (int)len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		struct nfqnl_msg_packet_hdr *ph;

		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (e->error)
				rb->c->kernel_errors++;
			continue;
		}
		if (nlh->nlmsg_type !=
		    ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
			continue;
		memset(attr, 0, sizeof(attr));
		if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR])
			continue;
		ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
		rb->last_id = ntohl(ph->packet_id);
		if (rb->count) {
			if (attr[NFQA_SKB_INFO] &&
			    ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO])) &
			    NFQA_SKB_GSO)
				rb->c->gso_packets++;
			if (attr[NFQA_PAYLOAD])
				rb->c->bytes +=
					mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
		}
		rb->pending++;
		rb->c->packets++;
		if (rb->pending >= batch && ref_b_flush(rb) < 0)
			return -1;
	}
	return 0;
}

/* bind queue 0 and configure it as asked: 0 or -1 (errno) */
static int ref_b_setup(const struct bench_cfg *cfg, struct ref_b *rb,
		       char *buf)
{
	struct nlmsghdr *nlh;

	if (mnl_socket_bind(rb->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		bench_cons_fail(rb->c, "mnl_socket_bind", errno);
		return -1;
	}
	nlh = nfq_nlmsg_put(rb->sbuf, NFQNL_MSG_CONFIG, 0);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (ref_b_config(rb, nlh, buf) < 0) {
		bench_cons_fail(rb->c, "bind queue", errno);
		return -1;
	}
	nlh = nfq_nlmsg_put(rb->sbuf, NFQNL_MSG_CONFIG, 0);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 0xffff);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, cfg->maxlen);
	if (cfg->gso >= 0) {
		mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS,
				 htonl(cfg->gso ? NFQA_CFG_F_GSO : 0));
		mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	}
	if (ref_b_config(rb, nlh, buf) < 0 ||
	    set_rcvbuf(mnl_socket_get_fd(rb->nl), cfg->rcvbuf) < 0) {
		bench_cons_fail(rb->c, "queue setup", errno);
		return -1;
	}
	return 0;
}

/* receive, batching the verdicts, until the stop: 0, or -1 (@c failed) */
static int ref_b_loop(const struct bench_cfg *cfg, struct ref_b *rb,
		      char *buf)
{
	int fd = mnl_socket_get_fd(rb->nl);
	struct bench_cons *c = rb->c;

	while (!bench_stop) {
		ssize_t n = recv(fd, buf, REF_BUF,
				 rb->pending ? MSG_DONTWAIT : 0);

		c->recv_calls++;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (ref_b_flush(rb) < 0)
					goto fail_send;
				continue;
			}
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				c->enobufs++;
				continue;
			}
			bench_cons_fail(c, "recv", errno);
			return -1;
		}
		if (ref_b_parse(rb, buf, (size_t)n, cfg->batch) < 0)
			goto fail_send;
	}
	bench_cons_quiet();
	if (ref_b_flush(rb) < 0)
		goto fail_send;
	return 0;
fail_send:
	bench_cons_fail(c, "sendto", errno);
	return -1;
}

int bench_ref_b(const struct bench_cfg *cfg, struct bench_cons *c)
{
	struct ref_b *rb;
	int ret = -1;
	char *buf;

	rb = calloc(1, sizeof(*rb));
	buf = malloc(REF_BUF);
	if (!rb || !buf) {
		bench_cons_fail(c, "malloc", errno);
		goto out_free;
	}
	rb->c = c;
	rb->count = cfg->work == BENCH_WORK_TCP;
	rb->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!rb->nl) {
		bench_cons_fail(c, "mnl_socket_open", errno);
		goto out_free;
	}
	if (ref_b_setup(cfg, rb, buf) == 0) {
		bench_cons_ready(c);
		ret = ref_b_loop(cfg, rb, buf);
	}
	mnl_socket_close(rb->nl);
out_free:
	free(buf);
	free(rb);
	return ret;
}
