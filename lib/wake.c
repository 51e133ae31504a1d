// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Waking a queue's owner, the side of the threads that wake it: the
 * eventfd and the flag that says it was written and not read yet, so that
 * every writer writes at most once per wake-up. The owner's side (who it
 * is, reading the eventfd) is the receive loop's (loop.c).
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "sys.h"
#include "wake.h"

int nfqb_wake_poke(struct nfqb_wake *w)
{
	struct nlmsghdr nlh = {
		.nlmsg_len = sizeof(nlh),
		.nlmsg_type = NLMSG_NOOP,
	};
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_pid = w->portid,
	};
	struct iovec iov = { .iov_base = &nlh, .iov_len = sizeof(nlh) };
	struct msghdr m = {
		.msg_name = &sa,
		.msg_namelen = sizeof(sa),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	if (nfqb_sys_sendmsg(w->poke_fd, &m, MSG_DONTWAIT) >= 0)
		return 0;
	if (errno != EAGAIN && errno != ENOBUFS)
		atomic_store(&w->poke_failed, true);
	return -1;
}

/*
 * Async-signal-safe (nfqb_queue_interrupt()): atomics, write(),
 * sendmsg(). The owner sets in_read, then looks at pending, before it
 * sleeps in the read; this sets pending, then looks at in_read: one of
 * the two sees the other (sequentially consistent), so either the owner
 * does not sleep, or this pokes it. A ring that finds pending set needs
 * no poke: the one that set it poked, or the owner will see it.
 */
void nfqb_wake_ring(struct nfqb_wake *w, int evfd)
{
	uint64_t one = 1;
	int err = errno;
	ssize_t r;

	if (atomic_exchange(&w->pending, true))
		return;
	r = write(evfd, &one, sizeof(one));	/* -1, full: readable anyway */
	(void)r;
	if (atomic_load(&w->in_read))
		nfqb_wake_poke(w);
	errno = err;
}

bool nfqb_wake_is_owner(const struct nfqb_wake *w)
{
	return atomic_load_explicit(&w->owner, memory_order_relaxed) ==
	       (unsigned long)pthread_self();
}
