/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test seam: the few things the library asks of the system (send a
 * datagram, read the clock, allocate memory), replaceable by tests to
 * inject failures. Process-wide, not part of any queue and not exported
 * from the shared library: tests that use it link the internal
 * convenience library (lib/libnfqb-internal.la). Nothing here is ABI.
 */
#ifndef NFQB_SEAM_H
#define NFQB_SEAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct nfqb_seam {
	/* Called instead of sendmsg(fd, msg, flags) for every datagram the
	 * library sends on a queue's socket (verdicts and configuration).
	 * A queue made by nfqb_queue_alloc_detached() has fd -1 and sends
	 * only through this. Return as sendmsg(): bytes sent, or -1 with
	 * errno. NULL: the real sendmsg(). */
	ssize_t (*sendmsg)(void *data, int fd, const struct msghdr *msg,
			   int flags);
	/* CLOCK_MONOTONIC in nanoseconds. NULL: the real clock. */
	uint64_t (*now_ns)(void *data);
	/* Return true to make this allocation fail (ENOMEM). NULL: never. */
	int (*fail_alloc)(void *data, size_t size);
	/* Called instead of the linger pause (nfqb_sys_pause()); returns 0,
	 * or -1 with errno. NULL: the real timer. */
	int (*sleep_ns)(void *data, uint64_t ns);
	void *data;
};

/* Install @s (copied), or with NULL go back to the system. Call it while
 * no queue is in use by another thread. */
void nfqb_seam_install(const struct nfqb_seam *s);

/* What the library calls (seam.c). */
ssize_t nfqb_sys_sendmsg(int fd, const struct msghdr *msg, int flags);
uint64_t nfqb_now_ns(void);
void *nfqb_malloc(size_t size);
void *nfqb_calloc(size_t n, size_t size);
int nfqb_sys_pause(int tfd, int evfd, uint64_t ns);

#endif /* NFQB_SEAM_H */
