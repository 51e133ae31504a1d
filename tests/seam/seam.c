// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The test seam (seam.h): lib/sys.h's functions, each calling the hook a
 * test installed, else the real call (lib/sys-real.h, as lib/sys.c).
 */
#include <stdbool.h>

#include "seam.h"
#include "sys-real.h"

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
	return nfqb_real_sendmsg(fd, msg, flags);
}

int nfqb_sys_recvmmsg(int fd, struct mmsghdr *v, unsigned int n)
{
	if (seam.recvmmsg)
		return seam.recvmmsg(seam.data, fd, v, n);
	return nfqb_real_recvmmsg(fd, v, n);
}

int nfqb_sys_recvmmsg_wait(int fd, struct mmsghdr *v, unsigned int n)
{
	if (seam.recvmmsg_wait)
		return seam.recvmmsg_wait(seam.data, fd, v, n);
	return nfqb_real_recvmmsg_wait(fd, v, n);
}

int nfqb_sys_rcvtimeo(int fd, int ms)
{
	if (seam.rcvtimeo)
		return seam.rcvtimeo(seam.data, fd, ms);
	return nfqb_real_rcvtimeo(fd, ms);
}

uint64_t nfqb_now_ns(void)
{
	if (seam.now_ns)
		return seam.now_ns(seam.data);
	return nfqb_real_now_ns();
}

int nfqb_sys_pause(int tfd, int evfd, uint64_t ns)
{
	if (seam.sleep_ns)
		return seam.sleep_ns(seam.data, ns);
	return nfqb_real_pause(tfd, evfd, ns);
}

int nfqb_sys_poll(struct pollfd *fds, nfds_t n, int ms)
{
	if (seam.poll)
		return seam.poll(seam.data, fds, n, ms);
	return poll(fds, n, ms);
}

/* With a poll hook: the hook waits on the epoll fd, then epoll_wait()
 * takes what is ready without waiting. */
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
	if (seam.poll)
		seam.poll(seam.data, NULL, 0, ms);
	else
		nfqb_real_nap(ms);
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
	/* the size the library asks for, as the real one rounds it */
	size = (size + align - 1) / align * align;
	return alloc_fails(size) ? NULL : nfqb_real_aligned_alloc(align, size);
}

void *nfqb_reserve(size_t size)
{
	return alloc_fails(size) ? NULL : nfqb_real_reserve(size);
}

void nfqb_unreserve(void *p, size_t size)
{
	munmap(p, size);
}
