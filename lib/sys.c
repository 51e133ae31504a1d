// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The system, as the library asks for it (sys.h): the real calls and
 * nothing else. Tests that inject failures link their own seam in place
 * of this file (tests/seam/seam.c).
 */
#include "sys.h"
#include "sys-real.h"

ssize_t nfqb_sys_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return nfqb_real_sendmsg(fd, msg, flags);
}

int nfqb_sys_recvmmsg(int fd, struct mmsghdr *v, unsigned int n)
{
	return nfqb_real_recvmmsg(fd, v, n);
}

int nfqb_sys_recvmmsg_wait(int fd, struct mmsghdr *v, unsigned int n)
{
	return nfqb_real_recvmmsg_wait(fd, v, n);
}

int nfqb_sys_rcvtimeo(int fd, int ms)
{
	return nfqb_real_rcvtimeo(fd, ms);
}

uint64_t nfqb_now_ns(void)
{
	return nfqb_real_now_ns();
}

int nfqb_sys_pause(int tfd, int evfd, uint64_t ns)
{
	return nfqb_real_pause(tfd, evfd, ns);
}

int nfqb_sys_poll(struct pollfd *fds, nfds_t n, int ms)
{
	return poll(fds, n, ms);
}

int nfqb_sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int ms)
{
	return epoll_wait(epfd, ev, n, ms);
}

void nfqb_sys_nap(int ms)
{
	nfqb_real_nap(ms);
}

void *nfqb_malloc(size_t size)
{
	return malloc(size);
}

void *nfqb_calloc(size_t n, size_t size)
{
	return calloc(n, size);
}

void *nfqb_aligned_alloc(size_t align, size_t size)
{
	return nfqb_real_aligned_alloc(align, size);
}

void *nfqb_reserve(size_t size)
{
	return nfqb_real_reserve(size);
}

void nfqb_unreserve(void *p, size_t size)
{
	munmap(p, size);
}
