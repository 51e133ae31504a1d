// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqt - guest-side test tool for the netdev NFQUEUE kernel patches.
 *
 * Standalone (raw netlink, no library) so it can be linked statically and
 * dropped into the test initramfs before the library itself is ready.
 *
 *   nfqt listen [options]       bind an nfnetlink queue and verdict packets
 *   nfqt send ADDR PORT N CPU [SRC]  (ADDR, SRC: IPv4 or IPv6; recv and
 *                               trecv take both families)
 *                               send N UDP datagrams, pinned to CPU (from
 *                               source address SRC; A.B.C.X-Y: N from each
 *                               of A.B.C.X to A.B.C.Y in turn, one socket
 *                               each, as that many senders would)
 *   nfqt recv PORT IDLE_MS [N]  count UDP datagrams until idle (or until N
 *                               arrived, or SIGTERM), print the count
 *   nfqt tsend ADDR PORT BYTES  TCP: connect, write BYTES in 64 KiB writes
 *                               (so that the stack builds GSO packets),
 *                               close; exit 0 once the peer has them all
 *   nfqt trecv PORT IDLE_MS     TCP: accept one connection, count the
 *                               bytes until EOF or idle, print the count
 *   nfqt uecho PORT IDLE_MS     UDP: send every datagram back to its
 *                               sender until idle (or SIGTERM), print the
 *                               count
 *   nfqt uping ADDR PORT ROUNDS SRC|A.B.C.X-Y
 *                               UDP, one socket (one flow) per source: in
 *                               each round one datagram from every socket,
 *                               then wait for all their echoes (uecho)
 *                               before the next round, so that a flow's
 *                               next datagram leaves only once the last
 *                               one was delivered; print "uping sent=N
 *                               echoed=N", exit 0 if every datagram came
 *                               back (within 60 s a round)
 *   nfqt bindloop QUEUE CYCLE_MS
 *                               bind QUEUE (one request: bind, copy mode,
 *                               fail-open), read for CYCLE_MS without
 *                               verdicts, unbind, again, on one socket,
 *                               until SIGTERM; then read until 1 s of
 *                               silence and print the binds and the packet
 *                               messages received (the packets unbinding
 *                               dropped)
 *   nfqt rebind QUEUE ADDR PORT MARK
 *                               bind QUEUE (copy packet), print "bound";
 *                               on SIGUSR1 unbind and bind again, print
 *                               "bound again" and send one UDP datagram to
 *                               ADDR:PORT (the new binding's packet);
 *                               until SIGTERM, hold every packet for PORT
 *                               and accept every other one (a packet of
 *                               the first binding) with MARK, each verdict
 *                               acknowledged; print one line per message
 *                               and verdict, then a summary
 *   nfqt psend DEV DSTMAC SRC DST PORT N
 *                               send N UDP datagrams SRC -> DST:PORT as
 *                               Ethernet frames to DSTMAC from a packet
 *                               socket on DEV with PACKET_QDISC_BYPASS;
 *                               print "psend ok=N err=N" (a send that
 *                               fails counts in err, with its errno)
 *   nfqt tap DEV [SRCMAC]       open a packet socket on DEV (all protocols)
 *                               and read nothing until SIGTERM: each frame
 *                               DEV receives stays queued there as a clone
 *                               (its head shared with the packet going on);
 *                               then print the frames it held (and how
 *                               many show source address SRCMAC)
 *
 * listen options:
 *   -q NUM        queue number (0)
 *   -n COUNT      stop after COUNT packets (0 = until -t expires)
 *   -t MS         give up after MS milliseconds of silence (5000)
 *   -v VERDICT    accept | drop (accept)
 *   -m MARK       set this mark with the verdict
 *   -b N          batch: one NFQNL_MSG_VERDICT_BATCH per N packets (max id)
 *   -H            hold: verdict nothing, after COUNT packets print "held"
 *                 and sleep until killed
 *   -F FAMILY     every packet must carry this nfgen_family (5 = netdev)
 *   -k HOOK       every packet must carry this hook number
 *   -L            every packet must carry NFQA_L2HDR (14 bytes, Ethernet)
 *   -P PROTO      every packet must carry this hw_protocol (hex, e.g. 0806)
 *   -E            payload must start with the Ethernet header (egress):
 *                 its first 14 bytes equal NFQA_L2HDR
 *   -I            payload must start with the network header (ingress):
 *                 for IPv4 the first nibble is 4, for IPv6 6
 *   -V VID        every packet must carry NFQA_VLAN with this VLAN id
 *   -G            set NFQA_CFG_F_GSO: take GSO packets unsegmented
 *   -T LEN        verdict with NFQA_PAYLOAD: the packet's own payload cut
 *                 to LEN bytes (unchanged if it is not longer)
 *   -D MAC        verdict with NFQA_L2HDR: the packet's L2 header with
 *                 this destination address
 *   -S MAC        verdict with NFQA_L2HDR: the packet's L2 header with
 *                 this source address
 *   -Y ETHERTYPE  verdict with NFQA_L2HDR: the packet's L2 header with
 *                 this EtherType (hex) at offset 12
 *   -Z ETHERTYPE  verdict with NFQA_PAYLOAD: the packet's own payload with
 *                 this EtherType (hex) at offset 12 (egress: the payload
 *                 starts with the Ethernet header)
 *   -W PROTO:TCI  verdict with NFQA_VLAN: this protocol (hex) and TCI
 *   -R            every verdict must be refused: count the kernel's
 *                 errors instead of failing on them; exit 0 only if each
 *                 packet's verdict got one
 *   -N            a verdict may be refused with ENOMEM (injected
 *                 allocation failures): count those, print "nomem=N"
 *                 after the summary line; any other error still fails
 *   -d MS         hold the first packet until SIGUSR1, at most MS
 *                 milliseconds, before its verdict (print "holding id N"
 *                 first); not with -b
 *   -s            print one line per packet
 *
 * SIGTERM (without -H) stops listening as the -t timeout does.
 *
 * Packet ids must be strictly increasing (serial arithmetic) on the queue.
 * Exit status: 0 when COUNT packets were seen (or COUNT is 0) and every
 * check passed, 1 otherwise, 2 on usage or setup errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef NFQNL_MSG_VERDICT_BATCH
#define NFQNL_MSG_VERDICT_BATCH 3
#endif

static int nl_fd;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}
static uint32_t seq;

struct req {
	struct nlmsghdr nlh;
	struct nfgenmsg nfg;
	char buf[66000];	/* room for a rewritten payload */
};

static void req_init(struct req *r, uint16_t type, uint16_t flags,
		     uint8_t family, uint16_t queue)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
	r->nlh.nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	r->nlh.nlmsg_flags = NLM_F_REQUEST | flags;
	r->nlh.nlmsg_seq = ++seq;
	r->nfg.nfgen_family = family;
	r->nfg.version = NFNETLINK_V0;
	r->nfg.res_id = htons(queue);
}

static void req_put(struct req *r, uint16_t type, const void *data,
		    uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r +
					     NLMSG_ALIGN(r->nlh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nlh.nlmsg_len = NLMSG_ALIGN(r->nlh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static int req_send(struct req *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl_fd, &r->nlh, r->nlh.nlmsg_len, 0,
		   (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nfqt: sendto");
		return -1;
	}
	return 0;
}

/* Send a request with NLM_F_ACK and wait for its ack (packets are skipped:
 * none can arrive before the queue is bound and configured).
 */
static int req_call(struct req *r)
{
	char buf[8192];
	uint32_t want = r->nlh.nlmsg_seq;

	if (req_send(r) < 0)
		return -1;
	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			perror("nfqt: recv ack");
			return -1;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct nlmsgerr *e;

			if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq != want)
				continue;
			e = NLMSG_DATA(h);
			if (e->error) {
				errno = -e->error;
				return -1;
			}
			return 0;
		}
	}
}

/* rewrites sent with a per-packet verdict (-T, -D, -Y, -Z, -W) */
static const uint8_t *v_payload, *v_l2;
static int v_plen, v_l2len;
static int v_vlan;
static uint16_t v_vlan_proto, v_vlan_tci;

static int verdict_send(uint16_t queue, uint8_t family, int batch,
			uint32_t id, uint32_t verdict, int have_mark,
			uint32_t mark)
{
	struct nfqnl_msg_verdict_hdr vh = {
		.verdict = htonl(verdict), .id = htonl(id),
	};
	static struct req r;

	req_init(&r, batch ? NFQNL_MSG_VERDICT_BATCH : NFQNL_MSG_VERDICT, 0,
		 family, queue);
	req_put(&r, NFQA_VERDICT_HDR, &vh, sizeof(vh));
	if (have_mark) {
		uint32_t m = htonl(mark);

		req_put(&r, NFQA_MARK, &m, sizeof(m));
	}
	if (!batch && v_l2)
		req_put(&r, NFQA_L2HDR, v_l2, v_l2len);
	if (!batch && v_payload)
		req_put(&r, NFQA_PAYLOAD, v_payload, v_plen);
	if (!batch && v_vlan) {
		struct __attribute__((packed)) {
			struct nlattr proto_hdr;
			uint16_t proto;
			uint16_t pad1;
			struct nlattr tci_hdr;
			uint16_t tci;
			uint16_t pad2;
		} vlan = {
			.proto_hdr = { NLA_HDRLEN + 2, NFQA_VLAN_PROTO },
			.proto = htons(v_vlan_proto),
			.tci_hdr = { NLA_HDRLEN + 2, NFQA_VLAN_TCI },
			.tci = htons(v_vlan_tci),
		};

		req_put(&r, NFQA_VLAN | NLA_F_NESTED, &vlan, sizeof(vlan));
	}
	return req_send(&r);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct pkt {
	uint8_t family;
	uint32_t id;
	uint16_t hw_protocol;
	uint8_t hook;
	const uint8_t *l2;
	int l2len;
	const uint8_t *payload;
	int plen;
	int have_vlan;
	uint16_t vlan_tci, vlan_proto;
	uint32_t mark;
	uint32_t indev, outdev;
};

static int parse_packet(struct nlmsghdr *h, struct pkt *p)
{
	struct nfgenmsg *g = NLMSG_DATA(h);
	struct nlattr *a;
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*g));
	int have_hdr = 0;

	memset(p, 0, sizeof(*p));
	p->family = g->nfgen_family;
	a = (struct nlattr *)((char *)g + NLMSG_ALIGN(sizeof(*g)));
	while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		void *d = (char *)a + NLA_HDRLEN;
		int dl = a->nla_len - NLA_HDRLEN;

		switch (a->nla_type & NLA_TYPE_MASK) {
		case NFQA_PACKET_HDR: {
			struct nfqnl_msg_packet_hdr *ph = d;

			if (dl < (int)sizeof(*ph))
				return -1;
			p->id = ntohl(ph->packet_id);
			p->hw_protocol = ntohs(ph->hw_protocol);
			p->hook = ph->hook;
			have_hdr = 1;
			break;
		}
		case NFQA_L2HDR:
			p->l2 = d;
			p->l2len = dl;
			break;
		case NFQA_PAYLOAD:
			p->payload = d;
			p->plen = dl;
			break;
		case NFQA_VLAN: {
			struct nlattr *v = d;
			int vl = dl;

			p->have_vlan = 1;
			while (vl >= (int)NLA_HDRLEN && v->nla_len >= NLA_HDRLEN &&
			       v->nla_len <= vl) {
				uint16_t val = 0;

				if (v->nla_len >= NLA_HDRLEN + 2)
					memcpy(&val, (char *)v + NLA_HDRLEN, 2);
				if ((v->nla_type & NLA_TYPE_MASK) == NFQA_VLAN_TCI)
					p->vlan_tci = ntohs(val);
				else if ((v->nla_type & NLA_TYPE_MASK) == NFQA_VLAN_PROTO)
					p->vlan_proto = ntohs(val);
				vl -= NLA_ALIGN(v->nla_len);
				v = (struct nlattr *)((char *)v + NLA_ALIGN(v->nla_len));
			}
			break;
		}
		case NFQA_MARK:
			if (dl == 4)
				p->mark = ntohl(*(uint32_t *)d);
			break;
		case NFQA_IFINDEX_INDEV:
			if (dl == 4)
				p->indev = ntohl(*(uint32_t *)d);
			break;
		case NFQA_IFINDEX_OUTDEV:
			if (dl == 4)
				p->outdev = ntohl(*(uint32_t *)d);
			break;
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return have_hdr ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nfqt listen [-q N] [-n COUNT] [-t MS] [-v accept|drop] [-m MARK]\n"
		"                   [-b N] [-H] [-F FAMILY] [-k HOOK] [-L] [-P PROTO] [-E] [-I]\n"
		"                   [-V VID] [-G] [-T LEN] [-D MAC] [-S MAC] [-Y TYPE]\n"
		"                   [-Z TYPE] [-W PROTO:TCI] [-R] [-N] [-d MS] [-s]\n"
		"       nfqt send ADDR PORT COUNT CPU [SRC | A.B.C.X-Y]\n"
		"       nfqt recv PORT IDLE_MS [EXPECT]\n"
		"       nfqt tsend ADDR PORT BYTES\n"
		"       nfqt trecv PORT IDLE_MS\n"
		"       nfqt uecho PORT IDLE_MS\n"
		"       nfqt uping ADDR PORT ROUNDS SRC|A.B.C.X-Y\n"
		"       nfqt bindloop QUEUE CYCLE_MS\n"
		"       nfqt rebind QUEUE ADDR PORT MARK\n"
		"       nfqt psend DEV DSTMAC SRC DST PORT COUNT\n"
		"       nfqt tap DEV [SRCMAC]\n");
	exit(2);
}

static volatile sig_atomic_t released;

static void on_usr1(int sig)
{
	(void)sig;
	released = 1;
}

/* -d: the first packet waits for SIGUSR1 (the test has changed the
 * ruleset), at most MS milliseconds
 */
static void hold_first(uint32_t id, unsigned int ms)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	long end = now_ms() + ms;

	sigaction(SIGUSR1, &sa, NULL);
	printf("nfqt: holding id %u\n", id);
	fflush(stdout);
	while (!released && now_ms() < end)
		usleep(10000);
	if (!released)
		printf("nfqt: no SIGUSR1 in %u ms\n", ms);
}

static int do_listen(int argc, char **argv)
{
	unsigned int queue = 0, count = 0, timeout = 5000, batch = 0;
	int have_mark = 0, hold = 0, want_l2 = 0, show = 0;
	int want_family = -1, want_hook = -1, want_proto = -1, want_vid = -1;
	int want_eth_payload = 0, want_net_payload = 0;
	uint32_t verdict = NF_ACCEPT, mark = 0;
	unsigned int seen = 0, bad = 0, nonmono = 0, pending = 0;
	unsigned int l2seen = 0, vlanseen = 0, big = 0;
	int gso = 0, refused = 0, trim = -1, new_type = -1, new_ptype = -1;
	static uint8_t pbuf[65536];
	unsigned int errs = 0, nomem = 0;
	int nomem_ok = 0;
	uint8_t new_dst[6], new_src[6], l2buf[64];
	int have_dst = 0, have_src = 0;
	unsigned int delay_ms = 0;
	uint32_t last_id = 0, max_id = 0;
	int have_last = 0;
	static char buf[1 << 17];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND };
	struct __attribute__((packed)) {
		uint32_t range;
		uint8_t mode;
	} params = { htonl(0xffff), NFQNL_COPY_PACKET };
	uint32_t qmax = htonl(4096);
	struct req r;
	int rcvbuf = 4 << 20;
	int opt;
	long deadline;
	sigset_t waitmask;

	while ((opt = getopt(argc, argv, "q:n:t:v:m:b:HF:k:LP:EIV:GT:D:S:Y:Z:W:RNd:s")) != -1) {
		switch (opt) {
		case 'q':
			queue = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 't':
			timeout = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			if (!strcmp(optarg, "accept"))
				verdict = NF_ACCEPT;
			else if (!strcmp(optarg, "drop"))
				verdict = NF_DROP;
			else
				usage();
			break;
		case 'm':
			mark = strtoul(optarg, NULL, 0);
			have_mark = 1;
			break;
		case 'b':
			batch = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			hold = 1;
			break;
		case 'F':
			want_family = strtol(optarg, NULL, 0);
			break;
		case 'k':
			want_hook = strtol(optarg, NULL, 0);
			break;
		case 'L':
			want_l2 = 1;
			break;
		case 'P':
			want_proto = strtol(optarg, NULL, 16);
			break;
		case 'E':
			want_eth_payload = 1;
			break;
		case 'I':
			want_net_payload = 1;
			break;
		case 'V':
			want_vid = strtol(optarg, NULL, 0);
			break;
		case 'G':
			gso = 1;
			break;
		case 'T':
			trim = atoi(optarg);
			break;
		case 'D':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx",
				   &new_dst[0], &new_dst[1], &new_dst[2],
				   &new_dst[3], &new_dst[4], &new_dst[5]) != 6)
				usage();
			have_dst = 1;
			break;
		case 'S':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx",
				   &new_src[0], &new_src[1], &new_src[2],
				   &new_src[3], &new_src[4], &new_src[5]) != 6)
				usage();
			have_src = 1;
			break;
		case 'Y':
			new_type = strtol(optarg, NULL, 16);
			break;
		case 'Z':
			new_ptype = strtol(optarg, NULL, 16);
			break;
		case 'W': {
			unsigned int pr, tci;

			if (sscanf(optarg, "%x:%u", &pr, &tci) != 2)
				usage();
			v_vlan = 1;
			v_vlan_proto = pr;
			v_vlan_tci = tci;
			break;
		}
		case 'R':
			refused = 1;
			break;
		case 'N':
			nomem_ok = 1;
			break;
		case 'd':
			delay_ms = strtoul(optarg, NULL, 0);
			break;
		case 's':
			show = 1;
			break;
		default:
			usage();
		}
	}

	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nfqt: netlink socket");
		return 2;
	}
	setsockopt(nl_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));

	req_init(&r, NFQNL_MSG_CONFIG, NLM_F_ACK, AF_UNSPEC, queue);
	req_put(&r, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	if (req_call(&r) < 0) {
		perror("nfqt: bind queue");
		return 2;
	}
	req_init(&r, NFQNL_MSG_CONFIG, NLM_F_ACK, AF_UNSPEC, queue);
	req_put(&r, NFQA_CFG_PARAMS, &params, 5);
	req_put(&r, NFQA_CFG_QUEUE_MAXLEN, &qmax, sizeof(qmax));
	if (gso) {
		uint32_t f = htonl(NFQA_CFG_F_GSO);

		req_put(&r, NFQA_CFG_FLAGS, &f, sizeof(f));
		req_put(&r, NFQA_CFG_MASK, &f, sizeof(f));
	}
	if (req_call(&r) < 0) {
		perror("nfqt: configure queue");
		return 2;
	}
	/* SIGTERM ends listening like the idle timeout (summary, exit
	 * status), so that a test need not wait for -t once it has what it
	 * waited for; not with -H, whose listener is killed with SIGKILL */
	sigprocmask(SIG_SETMASK, NULL, &waitmask);
	if (!hold) {
		struct sigaction sact = { .sa_handler = on_term };
		sigset_t term;

		/* blocked but while waiting in ppoll(): no lost wakeup */
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_BLOCK, &term, NULL);
		sigaction(SIGTERM, &sact, NULL);
	}
	printf("nfqt: listening on queue %u\n", queue);
	fflush(stdout);

	deadline = now_ms() + timeout;
	while ((!count || seen < count) && !stop) {
		struct pollfd pfd = { .fd = nl_fd, .events = POLLIN };
		long left = deadline - now_ms();
		struct nlmsghdr *h;
		ssize_t n;

		struct timespec ts;

		if (left <= 0)
			break;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000L;
		if (ppoll(&pfd, 1, &ts, &waitmask) <= 0)
			continue;
		n = recv(nl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS) {
				fprintf(stderr, "nfqt: ENOBUFS (messages lost)\n");
				continue;
			}
			if (errno == EAGAIN || errno == EINTR)
				continue;
			perror("nfqt: recv");
			return 2;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct pkt p;

			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error == -ENOMEM && nomem_ok) {
					nomem++;
				} else if (e->error && refused) {
					errs++;
				} else if (e->error) {
					fprintf(stderr, "nfqt: netlink error %d (%s)\n",
						e->error, strerror(-e->error));
					bad++;
				}
				continue;
			}
			if (h->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) |
					      NFQNL_MSG_PACKET))
				continue;
			if (parse_packet(h, &p) < 0) {
				fprintf(stderr, "nfqt: malformed packet message\n");
				bad++;
				continue;
			}
			seen++;
			deadline = now_ms() + timeout;
			if (have_last && (int32_t)(p.id - last_id) <= 0) {
				fprintf(stderr, "nfqt: id %u after %u: not monotonic\n",
					p.id, last_id);
				nonmono++;
			}
			last_id = p.id;
			have_last = 1;
			if (p.l2)
				l2seen++;
			if (p.have_vlan)
				vlanseen++;
			/* larger than the MTU of 1500 plus an L2 header: GSO */
			if (p.plen > 1518)
				big++;
			if (show)
				printf("nfqt: id=%u family=%u hook=%u proto=0x%04x "
				       "l2=%d vlan=%d/0x%04x/0x%04x len=%d in=%u out=%u "
				       "mark=0x%x\n",
				       p.id, p.family, p.hook, p.hw_protocol,
				       p.l2len, p.have_vlan, p.vlan_proto, p.vlan_tci,
				       p.plen, p.indev, p.outdev, p.mark);
			if (want_family >= 0 && p.family != want_family) {
				fprintf(stderr, "nfqt: id %u family %u, want %d\n",
					p.id, p.family, want_family);
				bad++;
			}
			if (want_hook >= 0 && p.hook != want_hook) {
				fprintf(stderr, "nfqt: id %u hook %u, want %d\n",
					p.id, p.hook, want_hook);
				bad++;
			}
			if (want_proto >= 0 && p.hw_protocol != want_proto) {
				fprintf(stderr, "nfqt: id %u proto 0x%04x, want 0x%04x\n",
					p.id, p.hw_protocol, want_proto);
				bad++;
			}
			if (want_vid >= 0 &&
			    (!p.have_vlan || (p.vlan_tci & 0xfff) != want_vid ||
			     p.vlan_proto != 0x8100)) {
				fprintf(stderr, "nfqt: id %u VLAN %d proto 0x%04x tci 0x%04x, "
					"want VLAN id %d\n", p.id, p.have_vlan,
					p.vlan_proto, p.vlan_tci, want_vid);
				bad++;
			}
			if (want_l2 && p.l2len != 14) {
				fprintf(stderr, "nfqt: id %u L2 header length %d\n",
					p.id, p.l2len);
				bad++;
			}
			if (want_eth_payload &&
			    (!p.l2 || p.l2len != 14 || p.plen < 14 ||
			     memcmp(p.payload, p.l2, 14))) {
				fprintf(stderr, "nfqt: id %u payload does not start "
					"with the Ethernet header\n", p.id);
				bad++;
			}
			if (want_net_payload && p.hw_protocol == 0x0800 &&
			    (p.plen < 20 || (p.payload[0] >> 4) != 4)) {
				fprintf(stderr, "nfqt: id %u payload does not start "
					"with the IPv4 header\n", p.id);
				bad++;
			}
			if (want_net_payload && p.hw_protocol == 0x86dd &&
			    (p.plen < 40 || (p.payload[0] >> 4) != 6)) {
				fprintf(stderr, "nfqt: id %u payload does not start "
					"with the IPv6 header\n", p.id);
				bad++;
			}
			if (hold)
				continue;
			v_payload = NULL;
			v_l2 = NULL;
			if (trim >= 0 && p.payload) {
				v_payload = p.payload;
				v_plen = trim < p.plen ? trim : p.plen;
			}
			if (new_ptype >= 0 && p.payload && p.plen >= 14) {
				memcpy(pbuf, p.payload, p.plen);
				pbuf[12] = new_ptype >> 8;
				pbuf[13] = new_ptype & 0xff;
				v_payload = pbuf;
				v_plen = p.plen;
			}
			if ((have_dst || have_src || new_type >= 0) && p.l2 &&
			    p.l2len >= 14 && p.l2len <= (int)sizeof(l2buf)) {
				memcpy(l2buf, p.l2, p.l2len);
				if (have_dst)
					memcpy(l2buf, new_dst, 6);
				if (have_src)
					memcpy(l2buf + 6, new_src, 6);
				if (new_type >= 0) {
					l2buf[12] = new_type >> 8;
					l2buf[13] = new_type & 0xff;
				}
				v_l2 = l2buf;
				v_l2len = p.l2len;
			}
			if (batch) {
				max_id = p.id;
				if (++pending >= batch) {
					if (verdict_send(queue, AF_UNSPEC, 1, max_id,
							 verdict, have_mark, mark) < 0)
						return 2;
					pending = 0;
				}
			} else {
				if (delay_ms && seen == 1)
					hold_first(p.id, delay_ms);
				if (verdict_send(queue, AF_UNSPEC, 0, p.id,
						 verdict, have_mark, mark) < 0)
					return 2;
			}
		}
	}
	if (pending &&
	    verdict_send(queue, AF_UNSPEC, 1, max_id, verdict, have_mark, mark) < 0)
		return 2;

	printf("nfqt: queue=%u seen=%u l2=%u vlan=%u big=%u nonmonotonic=%u bad=%u last_id=%u\n",
	       queue, seen, l2seen, vlanseen, big, nonmono, bad, last_id);
	fflush(stdout);
	if (hold) {
		printf("nfqt: held\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	/* let the kernel report errors for the last verdicts */
	usleep(100000);
	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *h;

		if (n <= 0)
			break;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_ERROR &&
			    e->error == -ENOMEM && nomem_ok) {
				nomem++;
			} else if (h->nlmsg_type == NLMSG_ERROR && e->error && refused) {
				errs++;
			} else if (h->nlmsg_type == NLMSG_ERROR && e->error) {
				fprintf(stderr, "nfqt: late netlink error %d\n",
					e->error);
				bad++;
			}
		}
	}
	if (nomem_ok)
		printf("nfqt: nomem=%u\n", nomem);
	if (refused) {
		printf("nfqt: refused=%u of %u\n", errs, seen);
		if (errs != seen)
			return 1;
	}
	if (bad || nonmono || (count && seen < count))
		return 1;
	return 0;
}

/* ADDR PORT as a socket address: IPv6 if ADDR has a colon */
static socklen_t sockaddr_of(const char *addr, int port,
			     struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
			usage();
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		usage();
	return sizeof(*sin);
}

/* a receiving socket for IPv4 and IPv6 (v4-mapped) on PORT */
static int dual_socket(int type, int port)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6, .sin6_port = htons(port),
	};
	int fd = socket(AF_INET6, type, 0), zero = 0, one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* N datagrams to @dst from a new socket, bound to @src if not NULL: 0, or
 * 2 after a message */
static int send_from(const struct sockaddr_storage *dst, socklen_t dlen,
		     const char *src, unsigned long n, const char *cpu)
{
	char payload[64];
	unsigned long i;
	int fd, ret = 0;

	fd = socket(dst->ss_family, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("nfqt: socket");
		return 2;
	}
	if (src) {
		struct sockaddr_storage sa;
		socklen_t slen = sockaddr_of(src, 0, &sa);

		if (sa.ss_family != dst->ss_family)
			usage();
		if (bind(fd, (struct sockaddr *)&sa, slen) < 0) {
			perror("nfqt: bind source");
			close(fd);
			return 2;
		}
	}
	memset(payload, 'x', sizeof(payload));
	for (i = 0; i < n && !ret; i++) {
		snprintf(payload, sizeof(payload), "cpu%s-%lu", cpu, i);
		if (sendto(fd, payload, sizeof(payload), 0,
			   (const struct sockaddr *)dst, dlen) < 0 &&
		    errno != ENOBUFS && errno != ECONNREFUSED) {
			perror("nfqt: sendto");
			ret = 2;
		}
	}
	close(fd);
	return ret;
}

static int do_send(int argc, char **argv)
{
	struct sockaddr_storage dst;
	unsigned long n, x, y;
	char src[64], *dash, *dot;
	socklen_t dlen;
	cpu_set_t set;
	int ret = 0;

	if (argc != 5 && argc != 6)
		usage();
	dlen = sockaddr_of(argv[1], atoi(argv[2]), &dst);
	n = strtoul(argv[3], NULL, 0);
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[4]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		perror("nfqt: sched_setaffinity");
	if (argc == 5)
		return send_from(&dst, dlen, NULL, n, argv[4]);
	/* A.B.C.X-Y: a range of IPv4 sources */
	dash = strchr(argv[5], '-');
	dot = strrchr(argv[5], '.');
	if (!dash || !dot || dash < dot || strlen(argv[5]) >= sizeof(src))
		return send_from(&dst, dlen, argv[5], n, argv[4]);
	x = strtoul(dot + 1, NULL, 10);
	y = strtoul(dash + 1, NULL, 10);
	if (x > y || y > 255)
		usage();
	for (; x <= y && !ret; x++) {
		snprintf(src, sizeof(src), "%.*s%lu", (int)(dot + 1 - argv[5]),
			 argv[5], x);
		ret = send_from(&dst, dlen, src, n, argv[4]);
	}
	return ret;
}

static int do_recv(int argc, char **argv)
{
	unsigned long got = 0;
	int fd, idle, rcvbuf = 4 << 20;
	long expect = -1;
	char buf[2048];
	struct sigaction sact = { .sa_handler = on_term };
	sigset_t term, waitmask;

	if (argc != 3 && argc != 4)
		usage();
	if (argc == 4)
		expect = strtol(argv[3], NULL, 0);
	idle = atoi(argv[2]);
	fd = dual_socket(SOCK_DGRAM, atoi(argv[1]));
	if (fd < 0) {
		perror("nfqt: recv socket");
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	/* SIGTERM: count what is queued on the socket and stop (a test
	 * that knows every verdict was given need not wait for IDLE_MS) */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &waitmask);
	sigaction(SIGTERM, &sact, NULL);
	printf("nfqt: receiving on %d\n", atoi(argv[1]));
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec ts = { idle / 1000, (idle % 1000) * 1000000L };

		if (expect > 0 && got >= (unsigned long)expect)
			break;
		if (ppoll(&pfd, 1, &ts, &waitmask) <= 0 && !stop)
			break;
		if (stop) {
			while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				got++;
			break;
		}
		if (recv(fd, buf, sizeof(buf), 0) > 0)
			got++;
	}
	printf("received %lu\n", got);
	return 0;
}

static int do_uecho(int argc, char **argv)
{
	struct sigaction sact = { .sa_handler = on_term };
	unsigned long got = 0;
	sigset_t term, waitmask;
	char buf[2048];
	int fd, idle;

	if (argc != 3)
		usage();
	idle = atoi(argv[2]);
	fd = dual_socket(SOCK_DGRAM, atoi(argv[1]));
	if (fd < 0) {
		perror("nfqt: uecho socket");
		return 2;
	}
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &waitmask);
	sigaction(SIGTERM, &sact, NULL);
	printf("nfqt: receiving on %d (echo)\n", atoi(argv[1]));
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec ts = { idle / 1000, (idle % 1000) * 1000000L };
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (ppoll(&pfd, 1, &ts, &waitmask) <= 0)
			break;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &flen);
		if (n < 0)
			continue;
		got++;
		if (sendto(fd, buf, n, 0, (struct sockaddr *)&from, flen) < 0)
			perror("nfqt: uecho sendto");
	}
	printf("echoed %lu\n", got);
	return 0;
}

#define UPING_MAX 64

static int do_uping(int argc, char **argv)
{
	unsigned long rounds, r, sent = 0, echoed = 0;
	unsigned long x, y, i, nsrc = 0;
	struct sockaddr_storage dst;
	int fds[UPING_MAX];
	char src[64], *dash, *dot;
	socklen_t dlen;

	if (argc != 5)
		usage();
	dlen = sockaddr_of(argv[1], atoi(argv[2]), &dst);
	rounds = strtoul(argv[3], NULL, 0);
	dash = strchr(argv[4], '-');
	dot = strrchr(argv[4], '.');
	if (dash && dot && dash > dot && strlen(argv[4]) < sizeof(src)) {
		x = strtoul(dot + 1, NULL, 10);
		y = strtoul(dash + 1, NULL, 10);
		if (x > y || y > 255 || y - x >= UPING_MAX)
			usage();
	} else {
		x = y = 0;
		dash = NULL;
	}
	for (; x <= y; x++) {
		struct sockaddr_storage sa;
		socklen_t slen;
		int fd;

		if (dash)
			snprintf(src, sizeof(src), "%.*s%lu",
				 (int)(dot + 1 - argv[4]), argv[4], x);
		else
			snprintf(src, sizeof(src), "%s", argv[4]);
		slen = sockaddr_of(src, 0, &sa);
		if (sa.ss_family != dst.ss_family)
			usage();
		fd = socket(dst.ss_family, SOCK_DGRAM, 0);
		/* connected: the socket takes its peer's datagrams only */
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, slen) < 0 ||
		    connect(fd, (struct sockaddr *)&dst, dlen) < 0) {
			perror("nfqt: uping socket");
			return 2;
		}
		fds[nsrc++] = fd;
	}
	for (r = 0; r < rounds; r++) {
		char payload[64], buf[2048];
		int done[UPING_MAX] = { 0 };
		unsigned long left = nsrc;
		time_t end = time(NULL) + 60;

		for (i = 0; i < nsrc; i++) {
			memset(payload, 'u', sizeof(payload));
			snprintf(payload, sizeof(payload), "src%lu-round%lu", i, r);
			if (send(fds[i], payload, sizeof(payload), 0) < 0)
				perror("nfqt: uping send");
			else
				sent++;
		}
		while (left && time(NULL) < end) {
			struct pollfd pfd[UPING_MAX];

			for (i = 0; i < nsrc; i++) {
				pfd[i].fd = done[i] ? -1 : fds[i];
				pfd[i].events = POLLIN;
				pfd[i].revents = 0;
			}
			if (poll(pfd, nsrc, 1000) < 0 && errno != EINTR)
				break;
			for (i = 0; i < nsrc; i++) {
				if (!(pfd[i].revents & POLLIN))
					continue;
				if (recv(fds[i], buf, sizeof(buf),
					 MSG_DONTWAIT) > 0) {
					done[i] = 1;
					left--;
					echoed++;
				}
			}
		}
		if (left) {
			fprintf(stderr, "nfqt: uping: round %lu: %lu echo(es) "
				"missing\n", r, left);
			break;
		}
	}
	printf("uping sent=%lu echoed=%lu\n", sent, echoed);
	return echoed == rounds * nsrc ? 0 : 1;
}

static int do_tsend(int argc, char **argv)
{
	struct sockaddr_storage dst;
	static char chunk[65536];
	unsigned long left;
	socklen_t dlen;
	int fd;

	if (argc != 4)
		usage();
	dlen = sockaddr_of(argv[1], atoi(argv[2]), &dst);
	left = strtoul(argv[3], NULL, 0);
	memset(chunk, 'g', sizeof(chunk));
	fd = socket(dst.ss_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&dst, dlen) < 0) {
		perror("nfqt: tcp connect");
		return 2;
	}
	while (left) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
		ssize_t w = write(fd, chunk, n);

		if (w < 0) {
			perror("nfqt: tcp write");
			return 1;
		}
		left -= w;
	}
	shutdown(fd, SHUT_WR);
	/* the peer closes once it has read everything */
	while (read(fd, chunk, sizeof(chunk)) > 0)
		;
	close(fd);
	return 0;
}

static int do_trecv(int argc, char **argv)
{
	static char buf[65536];
	unsigned long got = 0;
	int lfd, fd, idle;

	if (argc != 3)
		usage();
	idle = atoi(argv[2]);
	lfd = dual_socket(SOCK_STREAM, atoi(argv[1]));
	if (lfd < 0 || listen(lfd, 1) < 0) {
		perror("nfqt: tcp listen");
		return 2;
	}
	printf("nfqt: receiving on %d\n", atoi(argv[1]));
	fflush(stdout);
	{
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };

		if (poll(&pfd, 1, idle) <= 0) {
			printf("received 0\n");
			return 0;
		}
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("nfqt: accept");
		return 2;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, idle) <= 0)
			break;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	printf("received %lu\n", got);
	return 0;
}

/* bindloop: the packets a queue drops between its creation and the
 * configuration the same request carries.  One socket throughout: the
 * messages of every incarnation of the queue are counted, even those the
 * kernel sends while or after it unbinds.  With fail-open and a bypass
 * rule every packet the hook sees is accepted (bypass, fail-open: the
 * nft counter after the queue chain) or is a message here (queued, then
 * dropped by the unbind): the test compares the sums.
 */
static unsigned int bl_msgs, bl_errs, bl_enobufs;

static void bl_read(long until_ms, int quiet_ms, const sigset_t *waitmask)
{
	static char buf[1 << 17];
	long deadline = quiet_ms ? now_ms() + quiet_ms : until_ms;

	for (;;) {
		struct pollfd pfd = { .fd = nl_fd, .events = POLLIN };
		long left = deadline - now_ms();
		struct timespec ts;
		struct nlmsghdr *h;
		ssize_t n;

		if (left <= 0 || (!quiet_ms && stop))
			return;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000L;
		if (ppoll(&pfd, 1, &ts, waitmask) <= 0)
			continue;
		n = recv(nl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS)
				bl_enobufs++;
			continue;
		}
		if (quiet_ms)
			deadline = now_ms() + quiet_ms;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error) {
					fprintf(stderr, "nfqt: bindloop: error %d (%s)\n",
						e->error, strerror(-e->error));
					bl_errs++;
				}
			} else if (h->nlmsg_type == ((NFNL_SUBSYS_QUEUE << 8) |
						      NFQNL_MSG_PACKET)) {
				bl_msgs++;
			}
		}
	}
}

static int do_bindloop(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfqnl_msg_config_cmd bind_cmd = { .command = NFQNL_CFG_CMD_BIND };
	struct nfqnl_msg_config_cmd unbind_cmd = { .command = NFQNL_CFG_CMD_UNBIND };
	struct __attribute__((packed)) {
		uint32_t range;
		uint8_t mode;
	} params = { htonl(128), NFQNL_COPY_PACKET };
	uint32_t qmax = htonl(4096), flags = htonl(NFQA_CFG_F_FAIL_OPEN);
	struct sigaction sact = { .sa_handler = on_term };
	unsigned int queue, cycle, binds = 0;
	int rcvbuf = 4 << 20;
	sigset_t term, waitmask;
	static struct req r;

	if (argc != 3)
		usage();
	queue = strtoul(argv[1], NULL, 0);
	cycle = strtoul(argv[2], NULL, 0);
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nfqt: netlink socket");
		return 2;
	}
	setsockopt(nl_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	sigprocmask(SIG_SETMASK, NULL, &waitmask);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	sigaction(SIGTERM, &sact, NULL);
	printf("nfqt: bindloop on queue %u\n", queue);
	while (!stop) {
		/* one request: the queue must never be seen unconfigured */
		req_init(&r, NFQNL_MSG_CONFIG, NLM_F_ACK, AF_UNSPEC, queue);
		req_put(&r, NFQA_CFG_CMD, &bind_cmd, sizeof(bind_cmd));
		req_put(&r, NFQA_CFG_PARAMS, &params, 5);
		req_put(&r, NFQA_CFG_QUEUE_MAXLEN, &qmax, sizeof(qmax));
		req_put(&r, NFQA_CFG_FLAGS, &flags, sizeof(flags));
		req_put(&r, NFQA_CFG_MASK, &flags, sizeof(flags));
		if (req_send(&r) < 0)
			return 2;
		binds++;
		bl_read(now_ms() + cycle, 0, &waitmask);
		req_init(&r, NFQNL_MSG_CONFIG, NLM_F_ACK, AF_UNSPEC, queue);
		req_put(&r, NFQA_CFG_CMD, &unbind_cmd, sizeof(unbind_cmd));
		if (req_send(&r) < 0)
			return 2;
	}
	/* the last messages: sent before the last unbind, or by a CPU that
	 * looked the queue up just before it went */
	bl_read(0, 1000, &waitmask);
	printf("nfqt: bindloop binds=%u msgs=%u errors=%u enobufs=%u\n",
	       binds, bl_msgs, bl_errs, bl_enobufs);
	return bl_errs ? 1 : 0;
}

/* rebind: packet ids across an unbind and a new bind on one socket.  The
 * ids of a binding start at 1, so the first packet of the new binding has
 * the id a late packet of the first one may carry: a message for the
 * first binding that reaches the socket after the new bind, and the
 * verdict given for its id, must not be taken for the new binding's
 * packet.  The program accepts (with MARK) every packet that is not the
 * one it sent after the rebind, and holds that one: the test looks where
 * MARK went.
 */
static volatile sig_atomic_t rb_usr1;

static void rb_on_usr1(int sig)
{
	(void)sig;
	rb_usr1 = 1;
}

static unsigned int rb_old, rb_new, rb_verdicts, rb_refused, rb_phase;
static uint32_t rb_verdict_seq[64];
static unsigned int rb_nverdict_seq;
static uint16_t rb_queue;
static unsigned int rb_port;
static uint32_t rb_mark;

static unsigned int rb_dport(const struct pkt *p)
{
	unsigned int ihl;

	if (p->plen < 20 || (p->payload[0] >> 4) != 4 || p->payload[9] != 17)
		return 0;
	ihl = (p->payload[0] & 15) * 4;
	if (p->plen < (int)ihl + 4)
		return 0;
	return p->payload[ihl + 2] << 8 | p->payload[ihl + 3];
}

static void rb_packet(struct nlmsghdr *h)
{
	struct nfqnl_msg_verdict_hdr vh;
	static struct req r;
	struct pkt p;
	unsigned int dport;
	uint32_t m;

	if (parse_packet(h, &p) < 0) {
		printf("rebind: bad packet message\n");
		return;
	}
	dport = rb_dport(&p);
	if (dport == rb_port) {
		rb_new++;
		printf("rebind: message id %u dport %u (the new binding's packet): held\n",
		       p.id, dport);
		return;
	}
	rb_old++;
	printf("rebind: message id %u dport %u (%s): accept, mark %#x\n",
	       p.id, dport, rb_phase ? "a packet of the first binding, after the new bind"
				     : "first binding", rb_mark);
	vh.verdict = htonl(NF_ACCEPT);
	vh.id = htonl(p.id);
	m = htonl(rb_mark);
	req_init(&r, NFQNL_MSG_VERDICT, NLM_F_ACK, AF_UNSPEC, rb_queue);
	req_put(&r, NFQA_VERDICT_HDR, &vh, sizeof(vh));
	req_put(&r, NFQA_MARK, &m, sizeof(m));
	if (req_send(&r) == 0) {
		rb_verdicts++;
		if (rb_nverdict_seq < 64)
			rb_verdict_seq[rb_nverdict_seq++] = r.nlh.nlmsg_seq;
	}
}

/* read and handle messages until the ack of request WANT (0: none) arrives,
 * SIGUSR1 or SIGTERM, or MS milliseconds pass; returns the ack's error, 1
 * when it returned without it
 */
static int rb_read(uint32_t want, int ms, const sigset_t *waitmask)
{
	static char buf[1 << 17];
	long deadline = now_ms() + ms;

	for (;;) {
		struct pollfd pfd = { .fd = nl_fd, .events = POLLIN };
		long left = deadline - now_ms();
		struct timespec ts;
		struct nlmsghdr *h;
		ssize_t n;

		if (left <= 0 || (!want && (stop || rb_usr1)))
			return 1;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000L;
		if (ppoll(&pfd, 1, &ts, waitmask) <= 0)
			continue;
		n = recv(nl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN)
				perror("nfqt: rebind: recv");
			continue;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				unsigned int i;

				if (want && h->nlmsg_seq == want)
					return -e->error;
				for (i = 0; i < rb_nverdict_seq; i++)
					if (rb_verdict_seq[i] == h->nlmsg_seq)
						break;
				if (i == rb_nverdict_seq) {
					printf("rebind: unexpected ack seq %u: %d\n",
					       h->nlmsg_seq, e->error);
					continue;
				}
				if (e->error)
					rb_refused++;
				printf("rebind: verdict (request %u): %s\n", h->nlmsg_seq,
				       e->error ? strerror(-e->error) : "taken");
			} else if (h->nlmsg_type == ((NFNL_SUBSYS_QUEUE << 8) |
						      NFQNL_MSG_PACKET)) {
				rb_packet(h);
			}
		}
	}
}

static int rb_config(uint8_t command, const sigset_t *waitmask)
{
	struct nfqnl_msg_config_cmd cmd = { .command = command };
	struct __attribute__((packed)) {
		uint32_t range;
		uint8_t mode;
	} params = { htonl(128), NFQNL_COPY_PACKET };
	static struct req r;
	int err;

	req_init(&r, NFQNL_MSG_CONFIG, NLM_F_ACK, AF_UNSPEC, rb_queue);
	req_put(&r, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	if (command == NFQNL_CFG_CMD_BIND)
		req_put(&r, NFQA_CFG_PARAMS, &params, 5);
	if (req_send(&r) < 0)
		return -1;
	err = rb_read(r.nlh.nlmsg_seq, 10000, waitmask);
	if (err) {
		fprintf(stderr, "nfqt: rebind: %s: %s\n",
			command == NFQNL_CFG_CMD_BIND ? "bind" : "unbind",
			err == 1 ? "no ack" : strerror(err));
		return -1;
	}
	return 0;
}

static int do_rebind(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sigaction sact = { .sa_handler = on_term };
	struct sigaction susr = { .sa_handler = rb_on_usr1 };
	struct sockaddr_storage dst;
	sigset_t block, waitmask;
	socklen_t dlen, salen = sizeof(sa);
	int ufd;

	if (argc != 5)
		usage();
	rb_queue = strtoul(argv[1], NULL, 0);
	rb_port = strtoul(argv[3], NULL, 0);
	rb_mark = strtoul(argv[4], NULL, 0);
	dlen = sockaddr_of(argv[2], rb_port, &dst);
	ufd = socket(dst.ss_family, SOCK_DGRAM, 0);
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (ufd < 0 || nl_fd < 0 ||
	    bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(nl_fd, (struct sockaddr *)&sa, &salen) < 0) {
		perror("nfqt: rebind: socket");
		return 2;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigaction(SIGTERM, &sact, NULL);
	sigaction(SIGUSR1, &susr, NULL);
	if (rb_config(NFQNL_CFG_CMD_BIND, &waitmask) < 0)
		return 2;
	printf("rebind: bound queue %u, portid %u\n", rb_queue, sa.nl_pid);
	while (!rb_usr1 && !stop)
		rb_read(0, 60000, &waitmask);
	if (stop)
		return 2;
	if (rb_config(NFQNL_CFG_CMD_UNBIND, &waitmask) < 0 ||
	    rb_config(NFQNL_CFG_CMD_BIND, &waitmask) < 0)
		return 2;
	rb_phase = 1;
	rb_usr1 = 0;
	printf("rebind: bound again\n");
	if (sendto(ufd, "new", 3, 0, (struct sockaddr *)&dst, dlen) < 0) {
		perror("nfqt: rebind: sendto");
		return 2;
	}
	printf("rebind: sent the new binding's packet to port %u\n", rb_port);
	while (!stop)
		rb_read(0, 60000, &waitmask);
	/* the acks of verdicts given just before SIGTERM */
	stop = 0;
	rb_usr1 = 0;
	rb_read(0, 200, &waitmask);
	printf("rebind: summary old=%u new=%u verdicts=%u refused=%u\n",
	       rb_old, rb_new, rb_verdicts, rb_refused);
	return 0;
}

static int do_tap(int argc, char **argv)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	struct sigaction sact = { .sa_handler = on_term };
	int rcvbuf = 32 << 20;
	unsigned int frames = 0, withsrc = 0;
	static unsigned char frame[65536];
	unsigned char src[6];
	int have_src = 0;
	ssize_t n;
	sigset_t term, waitmask;
	int fd;

	if (argc != 2 && argc != 3)
		usage();
	if (argc == 3) {
		if (sscanf(argv[2], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &src[0],
			   &src[1], &src[2], &src[3], &src[4], &src[5]) != 6)
			usage();
		have_src = 1;
	}
	sll.sll_ifindex = if_nametoindex(argv[1]);
	if (!sll.sll_ifindex) {
		perror("nfqt: tap device");
		return 2;
	}
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &waitmask);
	sigaction(SIGTERM, &sact, NULL);
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				 sizeof(rcvbuf)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		perror("nfqt: packet socket");
		return 2;
	}
	printf("nfqt: tapping %s\n", argv[1]);
	while (!stop)
		sigsuspend(&waitmask);
	while ((n = recv(fd, frame, sizeof(frame), MSG_DONTWAIT)) >= 0) {
		frames++;
		/* the tap's copy of a frame: does it show SRCMAC? */
		if (have_src && n >= 14 && !memcmp(frame + 6, src, 6))
			withsrc++;
	}
	if (have_src)
		printf("nfqt: tap frames=%u with_src=%u\n", frames, withsrc);
	else
		printf("nfqt: tap frames=%u\n", frames);
	return 0;
}

static uint16_t ip_csum(const void *p, int len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;
	int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

/* IPv4 + UDP datagrams (UDP checksum 0: none, 64 bytes of payload) sent
 * from a SOCK_DGRAM packet socket (the kernel adds the Ethernet header)
 * that bypasses the qdisc.
 */
static int do_psend(int argc, char **argv)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_halen = ETH_ALEN,
	};
	uint8_t ip[20 + 8 + 64];
	uint8_t *udp = ip + 20;
	struct in_addr src, dst;
	unsigned long i, n, ok = 0, err = 0;
	int fd, one = 1, last = 0;

	if (argc != 7)
		usage();
	sll.sll_ifindex = if_nametoindex(argv[1]);
	if (!sll.sll_ifindex ||
	    sscanf(argv[2], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &sll.sll_addr[0],
		   &sll.sll_addr[1], &sll.sll_addr[2], &sll.sll_addr[3],
		   &sll.sll_addr[4], &sll.sll_addr[5]) != 6 ||
	    inet_pton(AF_INET, argv[3], &src) != 1 ||
	    inet_pton(AF_INET, argv[4], &dst) != 1)
		usage();
	n = strtoul(argv[6], NULL, 0);
	fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
				 sizeof(one)) < 0) {
		perror("nfqt: psend socket");
		return 2;
	}
	memset(ip, 'x', sizeof(ip));
	ip[0] = 0x45;
	ip[1] = 0;
	ip[2] = 0;
	ip[3] = 20 + 8 + 64;
	memset(ip + 4, 0, 4);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	udp[0] = 0x9c;
	udp[1] = 0x40;		/* source port 40000 */
	udp[2] = atoi(argv[5]) >> 8;
	udp[3] = atoi(argv[5]) & 0xff;
	udp[4] = 0;
	udp[5] = 8 + 64;
	udp[6] = udp[7] = 0;
	for (i = 0; i < n; i++) {
		ip[4] = i >> 8;
		ip[5] = i & 0xff;
		ip[10] = ip[11] = 0;
		memcpy(ip + 10, (uint16_t[]){ ip_csum(ip, 20) }, 2);
		/* SOCK_DGRAM: the kernel builds the Ethernet header */
		if (sendto(fd, ip, sizeof(ip), 0,
			   (struct sockaddr *)&sll, sizeof(sll)) < 0) {
			err++;
			last = errno;
		} else {
			ok++;
		}
	}
	printf("psend ok=%lu err=%lu%s%s\n", ok, err, err ? " " : "",
	       err ? strerror(last) : "");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "listen"))
		return do_listen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tsend"))
		return do_tsend(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trecv"))
		return do_trecv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "uecho"))
		return do_uecho(argc - 1, argv + 1);
	if (!strcmp(argv[1], "uping"))
		return do_uping(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bindloop"))
		return do_bindloop(argc - 1, argv + 1);
	if (!strcmp(argv[1], "rebind"))
		return do_rebind(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tap"))
		return do_tap(argc - 1, argv + 1);
	if (!strcmp(argv[1], "psend"))
		return do_psend(argc - 1, argv + 1);
	usage();
	return 2;
}
