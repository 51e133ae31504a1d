// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The test seam (seam.h): system calls and allocation, overridable by
 * tests, the real ones otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <linux/netlink.h>

#include "seam.h"

static struct nfqb_seam seam;

void nfqb_seam_install(const struct nfqb_seam *s)
{
	if (s)
		seam = *s;
	else
		seam = (struct nfqb_seam){ 0 };
}

ssize_t nfqb_sys_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (seam.sendmsg)
		return seam.sendmsg(seam.data, fd, msg, flags);
	if (fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	return sendmsg(fd, msg, flags);
}

int nfqb_sys_send_kernel(int fd, const void *buf, size_t len)
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

int nfqb_sys_recvmmsg(int fd, struct mmsghdr *v, unsigned int n)
{
	if (seam.recvmmsg)
		return seam.recvmmsg(seam.data, fd, v, n);
	return recvmmsg(fd, v, n, MSG_DONTWAIT, NULL);
}

uint64_t nfqb_now_ns(void)
{
	struct timespec ts;

	if (seam.now_ns)
		return seam.now_ns(seam.data);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pause @ns: on the timerfd @tfd (exact: a nanosleep() of a normal
 * thread may run up to its timer slack, 50 us by default, longer), ended
 * early by the eventfd @evfd (an interrupt, a decision from another
 * thread). Without a timerfd, nanosleep(). 0, or -1 with errno. */
int nfqb_sys_pause(int tfd, int evfd, uint64_t ns)
{
	struct itimerspec its = {
		.it_value.tv_sec = (time_t)(ns / 1000000000ull),
		.it_value.tv_nsec = (long)(ns % 1000000000ull),
	};
	struct pollfd pfd[2] = {
		{ .fd = tfd, .events = POLLIN },
		{ .fd = evfd, .events = POLLIN },
	};

	if (seam.sleep_ns)
		return seam.sleep_ns(seam.data, ns);
	if (tfd < 0)
		return nanosleep(&its.it_value, NULL);
	if (timerfd_settime(tfd, 0, &its, NULL) < 0)
		return -1;
	/* the expiry count needs no read: the next settime resets it */
	return poll(pfd, evfd < 0 ? 1 : 2, -1) < 0 ? -1 : 0;
}

int nfqb_sys_poll(struct pollfd *fds, nfds_t n, int ms)
{
	if (seam.poll)
		return seam.poll(seam.data, fds, n, ms);
	return poll(fds, n, ms);
}

int nfqb_sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int ms)
{
	struct pollfd pfd = { .fd = epfd, .events = POLLIN };
	int r;

	if (!seam.poll)
		return epoll_wait(epfd, ev, n, ms);
	r = seam.poll(seam.data, &pfd, 1, ms);
	if (r <= 0)
		return r;
	return epoll_wait(epfd, ev, n, 0);
}

void nfqb_sys_nap(int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	if (seam.poll)
		seam.poll(seam.data, NULL, 0, ms);
	else
		nanosleep(&ts, NULL);
}

static bool alloc_fails(size_t size)
{
	if (seam.fail_alloc && seam.fail_alloc(seam.data, size)) {
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *nfqb_malloc(size_t size)
{
	return alloc_fails(size) ? NULL : malloc(size);
}

void *nfqb_calloc(size_t n, size_t size)
{
	return alloc_fails(n * size) ? NULL : calloc(n, size);
}

void *nfqb_aligned_alloc(size_t align, size_t size)
{
	/* aligned_alloc() wants a multiple of the alignment */
	size = (size + align - 1) / align * align;
	return alloc_fails(size) ? NULL : aligned_alloc(align, size);
}

void *nfqb_reserve(size_t size)
{
	void *p;

	if (alloc_fails(size))
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void nfqb_unreserve(void *p, size_t size)
{
	munmap(p, size);
}
