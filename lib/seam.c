// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The test seam (seam.h): system calls and allocation, overridable by
 * tests, the real ones otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

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

uint64_t nfqb_now_ns(void)
{
	struct timespec ts;

	if (seam.now_ns)
		return seam.now_ns(seam.data);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nfqb_sys_sleep(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	if (seam.sleep_ns)
		return seam.sleep_ns(seam.data, ns);
	return nanosleep(&ts, NULL);
}

void *nfqb_malloc(size_t size)
{
	if (seam.fail_alloc && seam.fail_alloc(seam.data, size)) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(size);
}
