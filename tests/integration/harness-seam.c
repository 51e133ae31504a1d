// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Integration test harness: failing verdict sends through the library's
 * test seam (lib/seam.h; see harness.h). A file of its own: only tests
 * that link the internal library, which has the seam, use it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "harness.h"
#include "seam.h"

static struct {
	atomic_int err;		/* 0: none fails */
	atomic_uint every;
	atomic_uint sends;	/* verdict sends since it was armed */
} vfail;

static ssize_t vfail_sendmsg(void *data, int fd, const struct msghdr *msg,
			     int flags)
{
	const struct nlmsghdr *nlh = msg->msg_iov[0].iov_base;
	unsigned int every = atomic_load(&vfail.every);
	int err = atomic_load(&vfail.err);

	(void)data;
	if (err && NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_CONFIG &&
	    atomic_fetch_add(&vfail.sends, 1) % every == every - 1) {
		errno = err;
		return -1;
	}
	return sendmsg(fd, msg, flags);
}

void nfqbt_fail_verdicts(int err, unsigned int every)
{
	static const struct nfqb_seam seam = { .sendmsg = vfail_sendmsg };

	if (!err) {
		atomic_store(&vfail.err, 0);
		return;
	}
	atomic_store(&vfail.every, every ? every : 1);
	atomic_store(&vfail.sends, 0);
	nfqb_seam_install(&seam);
	atomic_store(&vfail.err, err);
}

void nfqbt_seam_off(void)
{
	atomic_store(&vfail.err, 0);
	nfqb_seam_install(NULL);
}
