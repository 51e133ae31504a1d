/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Switch a daemon that bound its queues to an unprivileged user, keeping
 * CAP_NET_ADMIN alone: the kernel checks it on every verdict, for the
 * task that sends it (and for the socket's opener, which stays root).
 * No libcap: prctl() and the raw capset system call. Shared by
 * nfqb-verdict, nfqb-ips and the tests; not part of the library.
 */
#ifndef NFQB_PRIVDROP_H
#define NFQB_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Become @user (name or number): supplementary groups cleared, its primary
 * group, its uid (real, effective, saved), with CAP_NET_ADMIN as the only
 * capability (permitted, effective, inheritable and ambient, so that it
 * survives exec(), e.g. an upgrade in place). A process already running as
 * @user only checks that it still has CAP_NET_ADMIN.
 *
 * Capabilities belong to threads: call it before starting any thread that
 * must keep working (the others keep root's set, and setuid() changes
 * every thread). Returns 0, or -1 with errno and a message in @err (ENOENT:
 * no such user; EPERM: not allowed, e.g. without CAP_SETUID).
 */
int nfqb_privdrop(const char *user, char *err, size_t errlen);

/* Keep no capability at all (tests: show what fails without it). Calling
 * thread only. Returns 0 or -1 with errno. */
int nfqb_privdrop_all_caps(void);

/* true if the calling thread has CAP_NET_ADMIN in its effective set. */
bool nfqb_privdrop_has_net_admin(void);

#endif /* NFQB_PRIVDROP_H */
