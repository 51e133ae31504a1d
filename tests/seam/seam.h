/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test seam: the library's calls to the system (lib/sys.h), each
 * replaceable by a hook to inject failures, a clock that runs ahead, a
 * model of the kernel. A test links tests/seam/libnfqbt-seam.la with the
 * internal library (lib/libnfqb-internal.la) in place of the library's
 * own lib/sys.c: the library is the same, only the system differs.
 * Process-wide.
 */
#ifndef NFQBT_SEAM_H
#define NFQBT_SEAM_H

#include "sys.h"

struct nfqb_seam {
	/* Called instead of sendmsg(fd, msg, flags) for every datagram the
	 * library sends on a queue's socket (verdicts and configuration).
	 * A queue without a socket (fd -1) sends only through this. Return
	 * as sendmsg(): bytes sent, or -1 with errno. NULL: the real
	 * sendmsg(). */
	ssize_t (*sendmsg)(void *data, int fd, const struct msghdr *msg,
			   int flags);
	/* Called instead of recvmmsg(fd, v, n, MSG_DONTWAIT, NULL) on a
	 * queue's socket. Return as recvmmsg(). NULL: the real one. */
	int (*recvmmsg)(void *data, int fd, struct mmsghdr *v, unsigned int n);
	/* Called instead of the read that sleeps (the read sleep of
	 * nfqb_queue_set_read_sleep()): recvmmsg(fd, v, n, MSG_WAITFORONE,
	 * NULL). NULL: the real one. */
	int (*recvmmsg_wait)(void *data, int fd, struct mmsghdr *v,
			     unsigned int n);
	/* Called instead of setting the socket's SO_RCVTIMEO to @ms (0:
	 * none). Return 0, or -1 with errno. NULL: the real setsockopt(). */
	int (*rcvtimeo)(void *data, int fd, int ms);
	/* CLOCK_MONOTONIC in nanoseconds. NULL: the real clock. */
	uint64_t (*now_ns)(void *data);
	/* Return true to make this allocation fail (ENOMEM). NULL: never. */
	int (*fail_alloc)(void *data, size_t size);
	/* Called instead of the linger pause (nfqb_sys_pause()); returns 0,
	 * or -1 with errno. NULL: the real timer. */
	int (*sleep_ns)(void *data, uint64_t ns);
	/* Called instead of every other wait: poll(), epoll_wait() (as
	 * poll() on its fd), the short naps of a retry (no fds, @ms the
	 * nap). Return as poll(). NULL: the real call. */
	int (*poll)(void *data, struct pollfd *fds, nfds_t n, int ms);
	void *data;
};

/* Install @s (copied), or with NULL go back to the system. Call it while
 * no queue is in use by another thread. */
void nfqb_seam_install(const struct nfqb_seam *s);

#endif /* NFQBT_SEAM_H */
