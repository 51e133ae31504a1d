/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the steps of a queue read and none of them writes: its sockets and
 * the application's settings.
 *
 * Owner: queue.c alone writes struct nfqb_sock (open, adopt, hand over)
 * and struct nfqb_settings (the nfqb_queue_set_*() setters); the steps
 * read them through const pointers in their views.
 */
#ifndef NFQB_SETTINGS_H
#define NFQB_SETTINGS_H

#include "internal.h"

#define NFQB_DEFAULT_BATCH_LIMIT	64
#define NFQB_DEFAULT_LATENCY_US		1000
/* The kernel's queue length until nfqb_queue_set_maxlen() (its
 * NFQNL_QMAX_DEFAULT). */
#define NFQB_KERNEL_MAXLEN		1024

/* The sockets. */
struct nfqb_sock {
	int fd;			/* netlink socket, -1: none (tests) */
	int epfd;		/* epoll: fd + evfd, what nfqb_queue_fd() gives */
	int evfd;		/* eventfd: decisions posted, interrupt */
	int tfd;		/* timerfd of the linger pause */
	int wake_fd;		/* nfqb_queue_set_wake_fd(), -1: none (the
				 * application's: never read or closed) */
	uint32_t portid;
	uint16_t num;
	bool adopted;		/* nfqb_queue_adopt(): a previous owner */
};

/* The application's settings. */
struct nfqb_settings {
	bool nonblock;
	bool coalesce;
	bool linger_fixed;	/* a duration set by the application */
	uint32_t linger_us;	/* that duration, or the adaptive cap */
	uint32_t default_verdict;
	uint32_t batch_limit;
	uint32_t latency_us;
	uint32_t timeout_ms;
	uint32_t recv_timeout_ms;	/* nfqb_queue_set_recv_timeout() */
	bool read_sleep;	/* nfqb_queue_set_read_sleep() */
	uint32_t copy_range;
	uint8_t copy_mode;
	uint8_t large;		/* enum nfqb_large */
	uint32_t rcvbuf;	/* the socket's receive buffer, as the kernel
				 * reports it (SO_RCVBUF), 0: unknown */
	uint32_t maxlen;	/* the kernel queue's length (decisions held
				 * and a pause's packets count against it);
				 * an adopted queue's is not known: the
				 * default until set again */
};

/* Decisions held unsent at most: the application's batch limit, or a
 * quarter of the queue's length if that is less (the kernel drops, or
 * lets through with fail-open, what comes while the queue is full; held
 * decisions and the packets of a pause count against it). */
static inline uint32_t nfqb_hold_limit(const struct nfqb_settings *set)
{
	uint32_t quarter = set->maxlen / 4;

	if (!quarter)
		quarter = 1;
	return set->batch_limit < quarter ? set->batch_limit : quarter;
}

#endif /* NFQB_SETTINGS_H */
