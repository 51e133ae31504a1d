/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the library asks of the system: send and receive datagrams, read
 * the clock, allocate memory, sleep, wait. Every file of the library calls
 * these, never the system itself, for what a test must be able to make
 * fail or run ahead.
 *
 * A seam tests link in, at no cost to the library: lib/sys.c makes the
 * real calls, nothing else (it is in the shared library, and in
 * lib/libnfqb-sys.la for programs that link the internal library as it
 * is); the tests that inject failures link tests/seam/ instead
 * (tests/seam/libnfqbt-seam.la: the same functions, each calling the hook
 * a test installed, else the same real call, from lib/sys-real.h).
 * Process-wide, part of no queue, not exported: nothing here is ABI.
 */
#ifndef NFQB_SYS_H
#define NFQB_SYS_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/netlink.h>

/* sendmsg(): every datagram a queue sends (verdicts and configuration).
 * A queue without a socket (fd -1) fails with ENOTCONN. */
ssize_t nfqb_sys_sendmsg(int fd, const struct msghdr *msg, int flags);
/* recvmmsg(fd, v, n, MSG_DONTWAIT, NULL) on a queue's socket. */
int nfqb_sys_recvmmsg(int fd, struct mmsghdr *v, unsigned int n);
/* recvmmsg(fd, v, n, MSG_WAITFORONE, NULL): sleeps until one datagram
 * comes (then takes what else is there), a signal, or the socket's
 * receive timeout (EAGAIN), set by nfqb_sys_rcvtimeo(). */
int nfqb_sys_recvmmsg_wait(int fd, struct mmsghdr *v, unsigned int n);
/* SO_RCVTIMEO of @fd: @ms milliseconds (0: none). 0, or -1 with errno. */
int nfqb_sys_rcvtimeo(int fd, int ms);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t nfqb_now_ns(void);
/* malloc(), calloc(), aligned_alloc() (any @size: rounded up to a
 * multiple of @align): NULL with ENOMEM. */
void *nfqb_malloc(size_t size);
void *nfqb_calloc(size_t n, size_t size);
void *nfqb_aligned_alloc(size_t align, size_t size);
/* Reserve @size bytes of address space, committed as they are written. */
void *nfqb_reserve(size_t size);
void nfqb_unreserve(void *p, size_t size);
/* Pause @ns on the timerfd @tfd, ended early by the eventfd @evfd (the
 * linger pause). 0, or -1 with errno. */
int nfqb_sys_pause(int tfd, int evfd, uint64_t ns);
/* poll(); epoll_wait(). */
int nfqb_sys_poll(struct pollfd *fds, nfds_t n, int ms);
int nfqb_sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int ms);
/* Sleep @ms (a retry's pause). */
void nfqb_sys_nap(int ms);

/* One netlink datagram of @len bytes to the kernel: 0, or -1 with errno
 * (EAGAIN: it took part of it, which it never does). */
static inline int nfqb_sys_send_kernel(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = {
		.msg_name = &sa,
		.msg_namelen = sizeof(sa),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	ssize_t r = nfqb_sys_sendmsg(fd, &m, 0);

	if (r >= 0 && (size_t)r != len) {
		errno = EAGAIN;	/* taken whole or not at all */
		r = -1;
	}
	return r < 0 ? -1 : 0;
}

#endif /* NFQB_SYS_H */
