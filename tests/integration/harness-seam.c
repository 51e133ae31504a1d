// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration test harness: the library's test seam (lib/seam.h; see
 * harness.h): verdict sends and wake-up sends made to fail, and the
 * library's system calls counted. A file of its own: only tests that link
 * the internal library, which has the seam, use it. One seam does both:
 * each hook counts, then fails or makes the real call.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "harness.h"
#include "seam.h"
#include "sys-real.h"

static struct {
	atomic_int err;		/* 0: none fails */
	atomic_uint every;
	atomic_uint sends;	/* verdict sends since it was armed */
	atomic_int poke_err;	/* 0: wake-up sends go out */
} vfail;

static struct nfqbt_calls calls;

/* A datagram to a port of user space (not the kernel's, 0): a wake-up. */
static bool is_poke(const struct msghdr *msg)
{
	const struct sockaddr_nl *sa = msg->msg_name;

	return sa && msg->msg_namelen >= sizeof(*sa) && sa->nl_pid != 0;
}

static ssize_t seam_sendmsg(void *data, int fd, const struct msghdr *msg,
			    int flags)
{
	const struct nlmsghdr *nlh = msg->msg_iov[0].iov_base;
	unsigned int every = atomic_load(&vfail.every);
	int err = atomic_load(&vfail.err);

	(void)data;
	if (is_poke(msg)) {
		atomic_fetch_add(&calls.pokes, 1);
		err = atomic_load(&vfail.poke_err);
		if (err) {
			errno = err;
			return -1;
		}
		return nfqb_real_sendmsg(fd, msg, flags);
	}
	atomic_fetch_add(&calls.sends, 1);
	if (err && NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_CONFIG &&
	    atomic_fetch_add(&vfail.sends, 1) % every == every - 1) {
		errno = err;
		return -1;
	}
	return nfqb_real_sendmsg(fd, msg, flags);
}

static int seam_recvmmsg(void *data, int fd, struct mmsghdr *v,
			 unsigned int n)
{
	(void)data;
	atomic_fetch_add(&calls.reads, 1);
	return nfqb_real_recvmmsg(fd, v, n);
}

static int seam_recvmmsg_wait(void *data, int fd, struct mmsghdr *v,
			      unsigned int n)
{
	(void)data;
	atomic_fetch_add(&calls.reads_asleep, 1);
	return nfqb_real_recvmmsg_wait(fd, v, n);
}

static int seam_rcvtimeo(void *data, int fd, int ms)
{
	(void)data;
	atomic_fetch_add(&calls.rcvtimeos, 1);
	return nfqb_real_rcvtimeo(fd, ms);
}

static int seam_poll(void *data, struct pollfd *fds, nfds_t n, int ms)
{
	(void)data;
	if (n)
		atomic_fetch_add(&calls.waits, 1);
	return poll(fds, n, ms);
}

static void seam_on(void)
{
	static const struct nfqb_seam seam = {
		.sendmsg = seam_sendmsg,
		.recvmmsg = seam_recvmmsg,
		.recvmmsg_wait = seam_recvmmsg_wait,
		.rcvtimeo = seam_rcvtimeo,
		.poll = seam_poll,
	};

	nfqb_seam_install(&seam);
}

void nfqbt_fail_verdicts(int err, unsigned int every)
{
	if (!err) {
		atomic_store(&vfail.err, 0);
		return;
	}
	atomic_store(&vfail.every, every ? every : 1);
	atomic_store(&vfail.sends, 0);
	seam_on();
	atomic_store(&vfail.err, err);
}

void nfqbt_fail_pokes(int err)
{
	seam_on();
	atomic_store(&vfail.poke_err, err);
}

const struct nfqbt_calls *nfqbt_count_calls(void)
{
	atomic_store(&calls.sends, 0);
	atomic_store(&calls.pokes, 0);
	atomic_store(&calls.reads, 0);
	atomic_store(&calls.reads_asleep, 0);
	atomic_store(&calls.rcvtimeos, 0);
	atomic_store(&calls.waits, 0);
	seam_on();
	return &calls;
}

void nfqbt_seam_off(void)
{
	atomic_store(&vfail.err, 0);
	atomic_store(&vfail.poke_err, 0);
	nfqb_seam_install(NULL);
}
