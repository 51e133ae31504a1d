// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Privilege drop keeping CAP_NET_ADMIN (see nfqb-privdrop.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "nfqb-privdrop.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT		47
#define PR_CAP_AMBIENT_RAISE	2
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static int caps_set(uint32_t mask, bool inheritable)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };

	d[0].effective = mask;
	d[0].permitted = mask;
	d[0].inheritable = inheritable ? mask : 0;
	return (int)syscall(SYS_capset, &hdr, d);
}

bool nfqb_privdrop_has_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, d) < 0)
		return false;
	return d[0].effective & (1u << CAP_NET_ADMIN);
}

int nfqb_privdrop_all_caps(void)
{
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return caps_set(0, false);
}

static int fail(char *err, size_t errlen, const char *what)
{
	int e = errno;

	snprintf(err, errlen, "%s: %s", what, strerror(e));
	errno = e;
	return -1;
}

int nfqb_privdrop(const char *user, char *err, size_t errlen)
{
	const uint32_t keep = 1u << CAP_NET_ADMIN;
	struct passwd *pw;
	uid_t uid;
	gid_t gid;
	char *end;

	errno = 0;
	pw = getpwnam(user);
	if (pw) {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	} else {
		unsigned long v = strtoul(user, &end, 10);

		if (!*user || *end) {
			errno = errno ? errno : ENOENT;
			return fail(err, errlen, user);
		}
		uid = (uid_t)v;
		pw = getpwuid(uid);
		gid = pw ? pw->pw_gid : (gid_t)v;
	}
	if (getuid() != uid || geteuid() != uid) {
		/* keep the permitted set across setuid() */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			return fail(err, errlen, "PR_SET_KEEPCAPS");
		if (setgroups(0, NULL) < 0)
			return fail(err, errlen, "setgroups");
		if (setresgid(gid, gid, gid) < 0)
			return fail(err, errlen, "setresgid");
		if (setresuid(uid, uid, uid) < 0)
			return fail(err, errlen, "setresuid");
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
#if defined(__SANITIZE_ADDRESS__)
		/* the credential change made us undumpable, and the leak
		 * checker at exit must ptrace its own threads */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
	}
	/* CAP_NET_ADMIN alone; inheritable and ambient too, so an exec()
	 * (upgrade in place) keeps it as this user */
	if (caps_set(keep, true) < 0)
		return fail(err, errlen, "capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0,
		  0) < 0)
		return fail(err, errlen, "ambient CAP_NET_ADMIN");
	if (!nfqb_privdrop_has_net_admin()) {
		errno = EPERM;
		return fail(err, errlen, "CAP_NET_ADMIN lost");
	}
	return 0;
}
