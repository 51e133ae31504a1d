/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real system calls behind lib/sys.h, once: lib/sys.c makes them, and
 * so does the tests' seam (tests/seam/seam.c) when no hook is installed.
 */
#ifndef NFQB_SYS_REAL_H
#define NFQB_SYS_REAL_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>

static inline ssize_t nfqb_real_sendmsg(int fd, const struct msghdr *msg,
					int flags)
{
	if (fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	return sendmsg(fd, msg, flags);
}

static inline int nfqb_real_recvmmsg(int fd, struct mmsghdr *v,
				     unsigned int n)
{
	return recvmmsg(fd, v, n, MSG_DONTWAIT, NULL);
}

static inline int nfqb_real_recvmmsg_wait(int fd, struct mmsghdr *v,
					  unsigned int n)
{
	return recvmmsg(fd, v, n, MSG_WAITFORONE, NULL);
}

static inline int nfqb_real_rcvtimeo(int fd, int ms)
{
	struct timeval tv = {
		.tv_sec = ms / 1000,
		.tv_usec = (ms % 1000) * 1000,
	};

	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static inline uint64_t nfqb_real_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pause @ns: on the timerfd @tfd (exact: a nanosleep() of a normal
 * thread may run up to its timer slack, 50 us by default, longer), ended
 * early by the eventfd @evfd (an interrupt, a decision from another
 * thread). Without a timerfd, nanosleep(). 0, or -1 with errno. */
static inline int nfqb_real_pause(int tfd, int evfd, uint64_t ns)
{
	struct itimerspec its = {
		.it_value.tv_sec = (time_t)(ns / 1000000000ull),
		.it_value.tv_nsec = (long)(ns % 1000000000ull),
	};
	struct pollfd pfd[2] = {
		{ .fd = tfd, .events = POLLIN },
		{ .fd = evfd, .events = POLLIN },
	};

	if (tfd < 0)
		return nanosleep(&its.it_value, NULL);
	if (timerfd_settime(tfd, 0, &its, NULL) < 0)
		return -1;
	/* the expiry count needs no read: the next settime resets it */
	return poll(pfd, evfd < 0 ? 1 : 2, -1) < 0 ? -1 : 0;
}

static inline void nfqb_real_nap(int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	nanosleep(&ts, NULL);
}

/* aligned_alloc() wants a multiple of the alignment */
static inline void *nfqb_real_aligned_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, (size + align - 1) / align * align);
}

static inline void *nfqb_real_reserve(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#endif /* NFQB_SYS_REAL_H */
