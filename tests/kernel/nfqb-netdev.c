// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-netdev - guest-side test of libnfq-batch on the netdev NFQUEUE path.
 *
 * The counterpart of nfqt's "listen" built on the library's public API
 * only: bind a queue with nfqb_queue_open(), take packets with nfqb_recv(),
 * check what the packet view says about each of them and give verdicts
 * with nfqb_verdict(), nfqb_verdict_mark(), nfqb_verdict_ex() or
 * nfqb_verdict_batch().
 *
 *   nfqb-netdev -k ingress|egress [options]
 *   nfqb-netdev -k prerouting|input|forward|output|postrouting [options]
 *
 * The second form takes IPv4 packets of the inet (ip) family at that hook
 * instead, for the conntrack verdicts, which need a packet that has been
 * through conntrack.
 *
 * Options (the verdict ones are nfqt's):
 *   -q NUM        queue number (0)
 *   -n COUNT      stop after COUNT packets (0 = until -t expires)
 *   -t MS         give up after MS milliseconds of silence (5000)
 *   -v VERDICT    accept | drop (accept)
 *   -m MARK       set this mark with the verdict (nfqb_verdict_mark, or
 *                 the batch's mark with -b)
 *   -e            give verdicts with nfqb_verdict_ex() (mark with -m)
 *   -b N          nfqb_verdict_batch() up to the last id every N packets
 *   -k HOOK       ingress | egress: nfqb_pkt_hook_point() of every packet
 *   -P PROTO      nfqb_pkt_hw_protocol() of every packet (hex, 0800)
 *   -N PROTO      the network protocol: the innermost EtherType of the L2
 *                 header (hex; default: as -P)
 *   -l LEN        length of nfqb_pkt_l2hdr() (14; 18 for an 802.1Q tag in
 *                 the payload at egress)
 *   -V VID        nfqb_pkt_vlan() present with proto 0x8100 and this id
 *                 (without -V it must be absent)
 *   -T VID        the L2 header holds an 802.1Q tag with this id (18 bytes)
 *   -d DEV        the in (ingress) or out (egress) device must be DEV
 *   -s            print one line per packet
 *   -c            NFQB_F_CONNTRACK: every packet must carry its conntrack
 *                 state (nfqb_pkt_ct_info()) and id; count the new ones
 *   -C CTMARK     set the conntrack mark with every verdict:
 *                 nfqb_verdict_ct_mark(), or with -e nfqb_verdict_ex()
 *                 with NFQB_V_CT_MARK (and -m's NFQB_V_MARK)
 *   -L BIT        set conntrack label BIT (0-127) with every verdict:
 *                 nfqb_verdict_ex() with NFQB_V_CT_LABELS, mask that bit
 *   -X            mixed: a packet whose IPv4 source address ends in an odd
 *                 byte gets nfqb_verdict_ct_mark() with that byte as the
 *                 conntrack mark, any other the plain verdict
 *   -W MS         once the socket is readable, wait MS milliseconds before
 *                 taking the packets (so that several wait at once)
 *
 * Checked for every packet: nfqb_pkt_family() is NFQB_FAMILY_NETDEV; the
 * hook point, hw_protocol, L2 header length and VLAN as above; the L2
 * header's EtherType is hw_protocol and its innermost EtherType (after an
 * 802.1Q tag in an 18-byte header) the network protocol (-N);
 * nfqb_pkt_network_offset() is 0 at ingress and the L2 header length at
 * egress, where the payload starts with the L2 header itself; the
 * network header at that offset is IPv4 (hw_protocol 0x0800: version 4,
 * IHL >= 5) or ARP (0x0806: htype 1, ptype 0x0800); packet ids strictly
 * increasing (serial arithmetic). At the inet hooks: the family is IPv4,
 * the hook point as asked, the payload an IPv4 header (network offset 0)
 * and the device present. At the end: the library saw no id going
 * backwards (no fallback) and the kernel rejected no verdict.
 *
 * SIGTERM stops listening as the -t timeout does.
 *
 * Prints "nfqb-netdev: listening on queue N" once bound and a summary
 * line "nfqb-netdev: queue=N seen=... bad=..." at the end (ct_verdicts:
 * the verdicts that set the conntrack mark or labels; ct_new: packets in
 * conntrack state new, with -c). Exit status: 0
 * when COUNT packets were seen (or COUNT is 0) and every check passed, 1
 * otherwise (each mismatch is reported on stderr), 2 on usage or setup
 * errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* ppoll() */
#endif
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/netfilter/nfnetlink_queue.h>

#include <libnfq-batch/libnfq-batch.h>

#define VEC_MAX 64

static const char *prog = "nfqb-netdev";
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s -k ingress|egress [-q N] [-n COUNT] [-t MS]\n"
		"       [-v accept|drop] [-m MARK] [-e] [-b N] [-P PROTO] [-N PROTO]\n"
		"       [-l LEN] [-V VID] [-T VID] [-d DEV] [-s]\n"
		"       [-c] [-C CTMARK | -L BIT | -X] [-W MS]\n", prog);
	exit(2);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct want {
	enum nfqb_hook_point hook;
	int proto;
	int net_proto;		/* -1: as proto */
	uint32_t l2len;
	int vid;		/* -1: no VLAN */
	int inband_vid;		/* -1: not checked */
	uint32_t ifindex;	/* 0: not checked */
	int show;
};

static const char *hook_name(enum nfqb_hook_point h)
{
	switch (h) {
	case NFQB_HOOK_INGRESS:
		return "ingress";
	case NFQB_HOOK_EGRESS:
		return "egress";
	case NFQB_HOOK_PREROUTING:
		return "prerouting";
	case NFQB_HOOK_INPUT:
		return "input";
	case NFQB_HOOK_FORWARD:
		return "forward";
	case NFQB_HOOK_OUTPUT:
		return "output";
	case NFQB_HOOK_POSTROUTING:
		return "postrouting";
	default:
		return "other";
	}
}

static bool netdev_hook(enum nfqb_hook_point h)
{
	return h == NFQB_HOOK_INGRESS || h == NFQB_HOOK_EGRESS;
}

/* The checks of check_packet() for an IPv4 packet at an inet hook. */
static unsigned int check_inet(const struct nfqb_packet *p,
			       const struct want *w)
{
	uint32_t id = nfqb_pkt_id(p), plen = 0, ifindex = 0;
	const uint8_t *pl = nfqb_pkt_payload(p, &plen);
	enum nfqb_hook_point hook = nfqb_pkt_hook_point(p);
	bool in = hook == NFQB_HOOK_PREROUTING || hook == NFQB_HOOK_INPUT;
	bool have_dev = in ? nfqb_pkt_indev(p, &ifindex) :
			     nfqb_pkt_outdev(p, &ifindex);
	unsigned int bad = 0;

	if (w->show)
		printf("%s: id=%u family=%u hook=%u(%s) len=%u dev=%u "
		       "src=%u.%u.%u.%u\n", prog, id, nfqb_pkt_family(p),
		       nfqb_pkt_hook(p), hook_name(hook), plen, ifindex,
		       plen >= 20 ? pl[12] : 0, plen >= 20 ? pl[13] : 0,
		       plen >= 20 ? pl[14] : 0, plen >= 20 ? pl[15] : 0);
	if (nfqb_pkt_family(p) != NFQB_FAMILY_IPV4) {
		fprintf(stderr, "%s: id %u: family %u, want %u (IPv4)\n", prog,
			id, nfqb_pkt_family(p), NFQB_FAMILY_IPV4);
		bad++;
	}
	if (hook != w->hook) {
		fprintf(stderr, "%s: id %u: hook point %s (hook %u), want %s\n",
			prog, id, hook_name(hook), nfqb_pkt_hook(p),
			hook_name(w->hook));
		bad++;
	}
	if (nfqb_pkt_network_offset(p) != 0) {
		fprintf(stderr, "%s: id %u: network offset %u, want 0\n", prog,
			id, nfqb_pkt_network_offset(p));
		bad++;
	}
	if (!pl || plen < 20 || pl[0] >> 4 != 4 || (pl[0] & 0xf) < 5) {
		fprintf(stderr, "%s: id %u: no IPv4 header (%u bytes)\n", prog,
			id, plen);
		bad++;
	}
	if (!have_dev || (w->ifindex && ifindex != w->ifindex)) {
		fprintf(stderr, "%s: id %u: %s device %u, want %u\n", prog, id,
			in ? "in" : "out", ifindex, w->ifindex);
		bad++;
	}
	return bad;
}

/* Check one packet against @w; returns the number of mismatches, each
 * reported on stderr. */
static unsigned int check_packet(const struct nfqb_packet *p,
				 const struct want *w)
{
	uint32_t id = nfqb_pkt_id(p), plen = 0, l2len = 0, off, ifindex = 0;
	const uint8_t *pl = nfqb_pkt_payload(p, &plen);
	const uint8_t *l2 = nfqb_pkt_l2hdr(p, &l2len);
	enum nfqb_hook_point hook = nfqb_pkt_hook_point(p);
	uint16_t proto = nfqb_pkt_hw_protocol(p), vproto = 0, vtci = 0;
	uint16_t net_proto = proto;	/* the L2 header tells better */
	bool have_vlan = nfqb_pkt_vlan(p, &vproto, &vtci);
	bool have_dev;
	unsigned int bad = 0;

	if (!netdev_hook(w->hook))
		return check_inet(p, w);
#define BAD(...) do { \
		fprintf(stderr, "%s: id %u: ", prog, id); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		bad++; \
	} while (0)

	off = nfqb_pkt_network_offset(p);
	if (w->hook == NFQB_HOOK_INGRESS)
		have_dev = nfqb_pkt_indev(p, &ifindex);
	else
		have_dev = nfqb_pkt_outdev(p, &ifindex);
	if (w->show)
		printf("%s: id=%u family=%u hook=%u(%s) proto=0x%04x l2=%d/%u "
		       "vlan=%d/0x%04x/0x%04x len=%u off=%u dev=%u\n",
		       prog, id, nfqb_pkt_family(p), nfqb_pkt_hook(p),
		       hook_name(hook), proto, l2 != NULL, l2len, have_vlan,
		       vproto, vtci, plen, off, ifindex);

	if (nfqb_pkt_family(p) != NFQB_FAMILY_NETDEV)
		BAD("family %u, want %u (netdev)", nfqb_pkt_family(p),
		    NFQB_FAMILY_NETDEV);
	if (hook != w->hook)
		BAD("hook point %s (hook %u), want %s", hook_name(hook),
		    nfqb_pkt_hook(p), hook_name(w->hook));
	if (proto != w->proto)
		BAD("hw_protocol 0x%04x, want 0x%04x", proto, w->proto);
	if (!l2)
		BAD("no L2 header (NFQA_L2HDR)");
	else if (l2len != w->l2len)
		BAD("L2 header of %u bytes, want %u", l2len, w->l2len);
	else if (l2len >= 14) {
		/* Ethernet: the outer EtherType is hw_protocol, the innermost
		 * (after 802.1Q tags in the payload) the network protocol */
		uint16_t outer = (l2[12] << 8) | l2[13];
		uint16_t inner = (l2[l2len - 2] << 8) | l2[l2len - 1];

		if (outer != proto)
			BAD("L2 header EtherType 0x%04x, hw_protocol 0x%04x",
			    outer, proto);
		if (l2len == 18 && outer != 0x8100 && outer != 0x88a8)
			BAD("18-byte L2 header without an 802.1Q/802.1ad tag "
			    "(EtherType 0x%04x)", outer);
		net_proto = inner;
		if (w->inband_vid >= 0 &&
		    (l2len != 18 || (((l2[14] << 8) | l2[15]) & 0xfff) != w->inband_vid))
			BAD("no 802.1Q tag with VLAN id %d in the L2 header",
			    w->inband_vid);
	}
	if (net_proto != w->net_proto)
		BAD("network protocol 0x%04x, want 0x%04x", net_proto,
		    w->net_proto);
	if (w->vid >= 0) {
		if (!have_vlan)
			BAD("no VLAN (NFQA_VLAN), want VLAN id %d", w->vid);
		else if (vproto != 0x8100 || (vtci & 0xfff) != w->vid)
			BAD("VLAN proto 0x%04x tci 0x%04x, want 0x8100 id %d",
			    vproto, vtci, w->vid);
	} else if (have_vlan) {
		BAD("unexpected VLAN proto 0x%04x tci 0x%04x", vproto, vtci);
	}
	if (!have_dev)
		BAD("no %s device", w->hook == NFQB_HOOK_INGRESS ? "in" : "out");
	else if (w->ifindex && ifindex != w->ifindex)
		BAD("%s device %u, want %u",
		    w->hook == NFQB_HOOK_INGRESS ? "in" : "out", ifindex,
		    w->ifindex);

	/* where the network header is */
	if (!pl) {
		BAD("no payload");
		return bad;
	}
	if (w->hook == NFQB_HOOK_INGRESS && off != 0)
		BAD("network offset %u at ingress, want 0", off);
	if (w->hook == NFQB_HOOK_EGRESS) {
		if (off != w->l2len)
			BAD("network offset %u at egress, want %u (the L2 header)",
			    off, w->l2len);
		/* the payload starts with the link layer header */
		if (l2 && (plen < l2len || memcmp(pl, l2, l2len)))
			BAD("payload does not start with the L2 header");
	}
	if (off >= plen) {
		BAD("network offset %u beyond the payload (%u bytes)", off, plen);
		return bad;
	}
	if (net_proto == 0x0800) {
		if (plen - off < 20 || pl[off] >> 4 != 4 || (pl[off] & 0xf) < 5)
			BAD("no IPv4 header at offset %u (byte 0x%02x, %u bytes)",
			    off, pl[off], plen - off);
	} else if (net_proto == 0x0806) {
		if (plen - off < 8 || pl[off] != 0 || pl[off + 1] != 1 ||
		    pl[off + 2] != 0x08 || pl[off + 3] != 0)
			BAD("no ARP (Ethernet/IPv4) header at offset %u", off);
	}
#undef BAD
	return bad;
}

int main(int argc, char **argv)
{
	unsigned int queue = 0, count = 0, timeout = 5000, batch = 0;
	unsigned int seen = 0, bad = 0, nonmono = 0, pending = 0;
	unsigned int l2seen = 0, vlanseen = 0;
	unsigned int ct_verdicts = 0, ct_new = 0, wait_ms = 0;
	uint32_t verdict = NFQB_ACCEPT, mark = 0, last_id = 0, ct_mark = 0;
	int have_mark = 0, use_ex = 0, have_last = 0, opt;
	int want_ct = 0, have_ct_mark = 0, ct_label = -1, mixed = 0;
	struct want w = {
		.hook = NFQB_HOOK_UNKNOWN, .proto = 0x0800, .net_proto = -1,
		.l2len = 14,
		.vid = -1, .inband_vid = -1,
	};
	struct nfqb_packet *vec[VEC_MAX];
	struct nfqb_stats st;
	struct nfqb_queue *q;
	struct sigaction sact = { .sa_handler = on_term };
	sigset_t term, waitmask;
	long deadline;

	while ((opt = getopt(argc, argv,
			     "q:n:t:v:m:eb:k:P:N:l:V:T:d:scC:L:XW:")) != -1) {
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
				verdict = NFQB_ACCEPT;
			else if (!strcmp(optarg, "drop"))
				verdict = NFQB_DROP;
			else
				usage();
			break;
		case 'm':
			mark = strtoul(optarg, NULL, 0);
			have_mark = 1;
			break;
		case 'e':
			use_ex = 1;
			break;
		case 'b':
			batch = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			if (!strcmp(optarg, "ingress"))
				w.hook = NFQB_HOOK_INGRESS;
			else if (!strcmp(optarg, "egress"))
				w.hook = NFQB_HOOK_EGRESS;
			else if (!strcmp(optarg, "prerouting"))
				w.hook = NFQB_HOOK_PREROUTING;
			else if (!strcmp(optarg, "input"))
				w.hook = NFQB_HOOK_INPUT;
			else if (!strcmp(optarg, "forward"))
				w.hook = NFQB_HOOK_FORWARD;
			else if (!strcmp(optarg, "output"))
				w.hook = NFQB_HOOK_OUTPUT;
			else if (!strcmp(optarg, "postrouting"))
				w.hook = NFQB_HOOK_POSTROUTING;
			else
				usage();
			break;
		case 'P':
			w.proto = strtol(optarg, NULL, 16);
			break;
		case 'N':
			w.net_proto = strtol(optarg, NULL, 16);
			break;
		case 'l':
			w.l2len = strtoul(optarg, NULL, 0);
			break;
		case 'V':
			w.vid = strtol(optarg, NULL, 0);
			break;
		case 'T':
			w.inband_vid = strtol(optarg, NULL, 0);
			break;
		case 'd':
			w.ifindex = if_nametoindex(optarg);
			if (!w.ifindex) {
				fprintf(stderr, "%s: no device %s\n", prog, optarg);
				return 2;
			}
			break;
		case 's':
			w.show = 1;
			break;
		case 'c':
			want_ct = 1;
			break;
		case 'C':
			ct_mark = strtoul(optarg, NULL, 0);
			have_ct_mark = 1;
			break;
		case 'L':
			ct_label = atoi(optarg);
			if (ct_label < 0 || ct_label > 127)
				usage();
			break;
		case 'X':
			mixed = 1;
			break;
		case 'W':
			wait_ms = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (w.net_proto < 0)
		w.net_proto = w.proto;
	if (optind != argc || w.hook == NFQB_HOOK_UNKNOWN || queue > 65535 ||
	    (batch && use_ex) ||
	    (batch && (have_ct_mark || ct_label >= 0 || mixed)) ||
	    have_ct_mark + (ct_label >= 0) + mixed > 1 ||
	    ((ct_label >= 0 || mixed) && use_ex + have_mark) ||
	    (have_ct_mark && have_mark && !use_ex))
		usage();

	q = nfqb_queue_open((uint16_t)queue);
	if (!q) {
		fprintf(stderr, "%s: nfqb_queue_open(%u): %s\n", prog, queue,
			strerror(errno));
		return 2;
	}
	if (nfqb_queue_set_maxlen(q, 4096) < 0 ||
	    nfqb_queue_set_rcvbuf(q, 4 << 20) < 0 ||
	    nfqb_queue_set_nonblock(q, true) < 0) {
		fprintf(stderr, "%s: configuring queue %u: %s\n", prog, queue,
			strerror(errno));
		return 2;
	}
	if (want_ct && nfqb_queue_set_flags(q, NFQB_F_CONNTRACK,
					    NFQB_F_CONNTRACK) < 0) {
		fprintf(stderr, "%s: NFQB_F_CONNTRACK on queue %u: %s\n", prog,
			queue, strerror(errno));
		return 2;
	}
	printf("%s: listening on queue %u (libnfq-batch %s)\n", prog, queue,
	       nfqb_version());
	fflush(stdout);

	/* SIGTERM: blocked but while waiting in ppoll() */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &waitmask);
	sigaction(SIGTERM, &sact, NULL);
	deadline = now_ms() + timeout;
	while (!stop && (!count || seen < count)) {
		struct pollfd pfd = { .fd = nfqb_queue_fd(q), .events = POLLIN };
		long left = deadline - now_ms();
		int due = nfqb_queue_next_timeout(q), n, i;
		struct timespec ts;

		if (left <= 0)
			break;
		if (due >= 0 && due < left)
			left = due;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000L;
		if (ppoll(&pfd, 1, &ts, &waitmask) < 0 && errno != EINTR) {
			perror("nfqb-netdev: poll");
			return 2;
		}
		if (wait_ms && (pfd.revents & POLLIN))
			usleep(wait_ms * 1000);
		n = nfqb_recv(q, vec, VEC_MAX);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				fprintf(stderr, "%s: ENOBUFS (packets lost)\n", prog);
				bad++;
				continue;
			}
			fprintf(stderr, "%s: nfqb_recv: %s\n", prog, strerror(errno));
			return 2;
		}
		deadline = now_ms() + timeout;
		for (i = 0; i < n; i++) {
			struct nfqb_packet *p = vec[i];
			uint32_t id = nfqb_pkt_id(p), len;
			int r;

			seen++;
			if (nfqb_pkt_queue_num(p) != queue) {
				fprintf(stderr, "%s: id %u: queue %u, want %u\n",
					prog, id, nfqb_pkt_queue_num(p), queue);
				bad++;
			}
			if (have_last && (int32_t)(id - last_id) <= 0) {
				fprintf(stderr, "%s: id %u after %u: not strictly "
					"increasing\n", prog, id, last_id);
				nonmono++;
			}
			last_id = id;
			have_last = 1;
			if (nfqb_pkt_l2hdr(p, &len))
				l2seen++;
			if (nfqb_pkt_attr(p, NFQA_VLAN, NULL)) {
				vlanseen++;
				if (!nfqb_pkt_vlan(p, NULL, NULL)) {
					fprintf(stderr, "%s: id %u: NFQA_VLAN "
						"present, nfqb_pkt_vlan() false\n",
						prog, id);
					bad++;
				}
			}
			bad += check_packet(p, &w);
			if (want_ct) {
				uint32_t info, ctid;

				if (!nfqb_pkt_ct_info(p, &info) ||
				    !nfqb_pkt_ct_id(p, &ctid)) {
					fprintf(stderr, "%s: id %u: no conntrack "
						"state or id\n", prog, id);
					bad++;
				} else if (info == 2) {	/* IP_CT_NEW */
					ct_new++;
				}
			}

			if (batch) {
				if (++pending < batch)
					continue;
				r = nfqb_verdict_batch(q, id, verdict,
						       have_mark ? &mark : NULL);
				if (r != (int)pending) {
					fprintf(stderr, "%s: nfqb_verdict_batch(%u) "
						"finalized %d, want %u: %s\n", prog,
						id, r, pending,
						r < 0 ? strerror(errno) : "");
					bad++;
				}
				pending = 0;
				continue;
			}
			if (mixed) {
				const uint8_t *ip = nfqb_pkt_payload(p, &len);
				uint8_t src = ip && len >= 20 ? ip[15] : 0;

				if (src & 1) {
					r = nfqb_verdict_ct_mark(p, verdict, src);
					ct_verdicts++;
				} else {
					r = nfqb_verdict(p, verdict);
				}
			} else if (ct_label >= 0) {
				struct nfqb_verdict v = {
					.verdict = verdict,
					.flags = NFQB_V_CT_LABELS,
				};
				/* the kernel's label bitmap: 32-bit words in
				 * host order, bit BIT of word BIT / 32 */
				uint32_t word = 1u << (ct_label % 32);

				memcpy(v.ct_labels + ct_label / 32 * 4, &word, 4);
				memcpy(v.ct_labels_mask, v.ct_labels, 16);
				r = nfqb_verdict_ex(p, &v, sizeof(v));
				ct_verdicts++;
			} else if (use_ex) {
				struct nfqb_verdict v = {
					.verdict = verdict,
					.flags = (have_mark ? NFQB_V_MARK : 0) |
						 (have_ct_mark ? NFQB_V_CT_MARK : 0),
					.mark = mark,
					.ct_mark = ct_mark,
				};

				r = nfqb_verdict_ex(p, &v, sizeof(v));
				ct_verdicts += have_ct_mark;
			} else if (have_ct_mark) {
				r = nfqb_verdict_ct_mark(p, verdict, ct_mark);
				ct_verdicts++;
			} else if (have_mark) {
				r = nfqb_verdict_mark(p, verdict, mark);
			} else {
				r = nfqb_verdict(p, verdict);
			}
			if (r < 0) {
				fprintf(stderr, "%s: verdict for id %u: %s\n", prog,
					id, strerror(errno));
				bad++;
			}
		}
		if (nfqb_flush(q) < 0) {
			fprintf(stderr, "%s: nfqb_flush: %s\n", prog,
				strerror(errno));
			bad++;
		}
	}
	if (pending) {
		int r = nfqb_verdict_batch(q, last_id, verdict,
					   have_mark ? &mark : NULL);

		if (r != (int)pending) {
			fprintf(stderr, "%s: last nfqb_verdict_batch(%u) finalized "
				"%d, want %u\n", prog, last_id, r, pending);
			bad++;
		}
	}
	if (nfqb_flush(q) < 0) {
		fprintf(stderr, "%s: nfqb_flush: %s\n", prog, strerror(errno));
		bad++;
	}
	/* let the kernel report errors for the last verdicts: the library
	 * counts them when it reads the socket */
	usleep(200000);
	{
		struct nfqb_packet *late[VEC_MAX];
		int n;

		while ((n = nfqb_recv(q, late, VEC_MAX)) > 0) {
			int i;

			/* only with -n, when more packets than wanted came */
			for (i = 0; i < n; i++)
				nfqb_verdict(late[i], verdict);
			fprintf(stderr, "%s: %d packet(s) after the last one\n",
				prog, n);
		}
	}
	nfqb_queue_stats(q, &st, sizeof(st));
	printf("%s: queue=%u seen=%u l2=%u vlan=%u nonmonotonic=%u bad=%u "
	       "last_id=%u verdict_msgs=%llu batch_msgs=%llu marked=%llu "
	       "kernel_errors=%llu fallbacks=%llu ct_verdicts=%u ct_new=%u\n",
	       prog, queue, seen, l2seen, vlanseen, nonmono, bad, last_id,
	       (unsigned long long)st.verdict_msgs,
	       (unsigned long long)st.batch_msgs,
	       (unsigned long long)st.marked,
	       (unsigned long long)st.kernel_errors,
	       (unsigned long long)st.fallbacks, ct_verdicts, ct_new);
	fflush(stdout);
	if (st.kernel_errors) {
		fprintf(stderr, "%s: the kernel rejected %llu verdict message(s)\n",
			prog, (unsigned long long)st.kernel_errors);
		bad++;
	}
	if (st.fallbacks) {
		fprintf(stderr, "%s: the library saw packet ids go backwards\n",
			prog);
		bad++;
	}
	if (st.rejected_malformed || st.rejected_truncated ||
	    st.rejected_foreign) {
		fprintf(stderr, "%s: messages rejected by the library: malformed "
			"%llu truncated %llu foreign %llu\n", prog,
			(unsigned long long)st.rejected_malformed,
			(unsigned long long)st.rejected_truncated,
			(unsigned long long)st.rejected_foreign);
		bad++;
	}
	if (nfqb_queue_close(q) < 0) {
		fprintf(stderr, "%s: nfqb_queue_close: %s\n", prog,
			strerror(errno));
		bad++;
	}
	if (count && seen < count)
		fprintf(stderr, "%s: saw %u packet(s), want %u\n", prog, seen,
			count);
	if (bad || nonmono || (count && seen < count))
		return 1;
	return 0;
}
