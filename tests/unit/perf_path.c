// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A fixed workload of the data path, for counting instructions per packet
 * (not for timing): N packets, one packet message per datagram as the
 * kernel sends them, read with nfqb_recv() a vector at a time, each
 * accepted with nfqb_verdict() in order, the verdicts sent as nfqb_recv()
 * decides, then nfqb_flush(). Everything through the test seam: a kernel
 * that has BURST datagrams ready at every read (IPv4 UDP, 64 bytes of
 * data, 8 flows) and takes every send, a clock that moves 1 us a read; the
 * queue is non-blocking, so nothing waits. The same run every time:
 *
 *   valgrind --tool=callgrind tests/unit/perf_path [N [BURST]]
 *
 * and the library's instructions divided by N (callgrind_annotate: the
 * functions of the files in lib/, and libmnl) are its cost per packet.
 * As a test (no arguments: 20000 packets, bursts of 64) it checks that
 * every packet was accepted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "testq.h"

#define DATA_LEN	64
#define FLOWS		8

static struct {
	unsigned char msg[256];
	size_t len;
	size_t id_at, src_at;	/* offsets of the packet id, the source */
	uint32_t next_id;
	unsigned long left;	/* packets the kernel still has */
	unsigned int burst;
	uint64_t now;
	uint64_t sent;		/* bytes the library sent */
} k;

static void put_attr(uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len),
			    .nla_type = type };

	memcpy(k.msg + k.len, &a, sizeof(a));
	memcpy(k.msg + k.len + NLA_HDRLEN, data, len);
	k.len += NLA_ALIGN(NLA_HDRLEN + len);
}

/* The message every packet gets, its id and source address patched. */
static void build_template(void)
{
	struct nlmsghdr nlh = {
		.nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET,
	};
	struct nfgenmsg g = { .nfgen_family = AF_INET,
			      .version = NFNETLINK_V0 };
	struct nfqnl_msg_packet_hdr ph = { .hw_protocol = htons(0x0800),
					   .hook = 1 };
	unsigned char ip[20 + 8 + DATA_LEN] = { 0 };
	uint32_t ifindex = htonl(1);

	k.len = NLMSG_HDRLEN;
	memcpy(k.msg + k.len, &g, sizeof(g));
	k.len += NLMSG_ALIGN(sizeof(g));
	k.id_at = k.len + NLA_HDRLEN;
	put_attr(NFQA_PACKET_HDR, &ph, sizeof(ph));
	put_attr(NFQA_IFINDEX_INDEV, &ifindex, sizeof(ifindex));
	ip[0] = 0x45;
	ip[3] = sizeof(ip);
	ip[8] = 64;
	ip[9] = 17;		/* UDP */
	ip[12] = 10;
	ip[16] = 10;
	ip[19] = 1;
	ip[20] = 0x30;		/* ports 12345 -> 9 */
	ip[21] = 0x39;
	ip[23] = 9;
	ip[25] = 8 + DATA_LEN;
	k.src_at = k.len + NLA_HDRLEN + 15;
	put_attr(NFQA_PAYLOAD, ip, sizeof(ip));
	nlh.nlmsg_len = (uint32_t)k.len;
	memcpy(k.msg, &nlh, sizeof(nlh));
}

static int kernel_recvmmsg(void *data, int fd, struct mmsghdr *v,
			   unsigned int n)
{
	unsigned int i;

	(void)data;
	(void)fd;
	if (n > k.burst)
		n = k.burst;
	if (n > k.left)
		n = (unsigned int)k.left;
	if (!n) {
		errno = EAGAIN;
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct msghdr *m = &v[i].msg_hdr;
		unsigned char *buf = m->msg_iov[0].iov_base;
		uint32_t id = htonl(k.next_id);

		memcpy(buf, k.msg, k.len);
		memcpy(buf + k.id_at, &id, sizeof(id));
		buf[k.src_at] = (unsigned char)(1 + k.next_id % FLOWS);
		k.next_id++;
		*(struct sockaddr_nl *)m->msg_name =
			(struct sockaddr_nl){ .nl_family = AF_NETLINK };
		m->msg_flags = 0;
		v[i].msg_len = (unsigned int)k.len;
	}
	k.left -= n;
	return (int)n;
}

static ssize_t kernel_sendmsg(void *data, int fd, const struct msghdr *m,
			      int flags)
{
	size_t i, len = 0;

	(void)data;
	(void)fd;
	(void)flags;
	for (i = 0; i < m->msg_iovlen; i++)
		len += m->msg_iov[i].iov_len;
	k.sent += len;
	return (ssize_t)len;
}

static uint64_t clock_ns(void *data)
{
	(void)data;
	return k.now += 1000;
}

int main(int argc, char **argv)
{
	struct nfqb_seam s = {
		.recvmmsg = kernel_recvmmsg,
		.sendmsg = kernel_sendmsg,
		.now_ns = clock_ns,
	};
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	struct nfqb_packet *vec[64];
	struct nfqb_stats st;
	unsigned long got = 0;
	struct nfqb_queue *q;

	k.burst = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 64;
	if (!n || !k.burst || k.burst > 64) {
		fprintf(stderr, "usage: perf_path [N [BURST (1-64)]]\n");
		return 2;
	}
	k.left = n;
	k.next_id = 1;
	build_template();
	nfqb_seam_install(&s);
	q = nfqbt_queue_detached(0, NFQB_DEFAULT_BUFFERS);
	if (!q || nfqb_queue_set_nonblock(q, true) < 0)
		return 1;
	while (got < n) {
		int i, r = nfqb_recv(q, vec, 64);

		if (r < 0 && errno == EAGAIN)
			continue;
		if (r < 0) {
			perror("nfqb_recv");
			return 1;
		}
		for (i = 0; i < r; i++)
			if (nfqb_verdict(vec[i], NFQB_ACCEPT) < 0)
				return 1;
		got += (unsigned long)r;
	}
	if (nfqb_flush(q) < 0 || nfqb_queue_stats(q, &st, sizeof(st)) < 0)
		return 1;
	nfqb_queue_close(q);
	nfqb_seam_install(NULL);
	printf("perf_path: %lu packets, bursts of %u: %llu accepted, %llu "
	       "verdict messages, %llu batches, %llu bytes sent\n", n, k.burst,
	       (unsigned long long)st.accepted,
	       (unsigned long long)(st.verdict_msgs + st.batch_msgs),
	       (unsigned long long)st.batch_msgs, (unsigned long long)k.sent);
	return st.accepted == n ? 0 : 1;
}
