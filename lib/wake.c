// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Waking a queue's owner, the side of the threads that wake it: the
 * eventfd and the flag that says it was written and not read yet, so that
 * every writer writes at most once per wake-up. The owner's side (who it
 * is, reading the eventfd) is the receive loop's (loop.c).
 */
#include <pthread.h>
#include <unistd.h>

#include "wake.h"

/* Async-signal-safe (nfqb_queue_interrupt()): an atomic and write(). */
void nfqb_wake_ring(struct nfqb_wake *w, int evfd)
{
	uint64_t one = 1;

	if (!atomic_exchange(&w->pending, true) &&
	    write(evfd, &one, sizeof(one)) < 0)
		return;		/* full: it is readable anyway */
}

bool nfqb_wake_is_owner(const struct nfqb_wake *w)
{
	return atomic_load_explicit(&w->owner, memory_order_relaxed) ==
	       (unsigned long)pthread_self();
}
