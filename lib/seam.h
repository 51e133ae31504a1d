/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test seam: what the library asks of the system (send and receive
 * datagrams, read the clock, allocate memory, sleep, wait), replaceable by
 * tests to inject failures. Process-wide, not part of any queue and not
 * exported from the shared library: tests that use it link the internal
 * convenience library (lib/libnfqb-internal.la). Nothing here is ABI.
 */
#ifndef NFQB_SEAM_H
#define NFQB_SEAM_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

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

/* What the library calls (seam.c). */
ssize_t nfqb_sys_sendmsg(int fd, const struct msghdr *msg, int flags);
/* One netlink datagram of @len bytes to the kernel: 0, or -1 with errno
 * (EAGAIN: it took part of it, which it never does). */
int nfqb_sys_send_kernel(int fd, const void *buf, size_t len);
int nfqb_sys_recvmmsg(int fd, struct mmsghdr *v, unsigned int n);
uint64_t nfqb_now_ns(void);
void *nfqb_malloc(size_t size);
void *nfqb_calloc(size_t n, size_t size);
void *nfqb_aligned_alloc(size_t align, size_t size);
/* Reserve @size bytes of address space, committed as they are written. */
void *nfqb_reserve(size_t size);
void nfqb_unreserve(void *p, size_t size);
/* Pause @ns on the timerfd @tfd, ended early by the eventfd @evfd. */
int nfqb_sys_pause(int tfd, int evfd, uint64_t ns);
int nfqb_sys_poll(struct pollfd *fds, nfds_t n, int ms);
int nfqb_sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int ms);
/* Sleep @ms (a retry's pause). */
void nfqb_sys_nap(int ms);

#endif /* NFQB_SEAM_H */
