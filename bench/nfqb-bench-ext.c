/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the same application binary on two libraries (asked for by
 * name: -c app-old,app). Both run nfqb-bench-app (bench/nfqb-bench-app.c:
 * the 0.1.0 API only, nfqb_recv() 64, accept each), forked by the
 * consumer process as the Python consumers are (so it runs on the
 * consumer's CPU, in the run's namespace, and its CPU time is the
 * consumer's: wait4, children included):
 *
 * - app: on the library found the normal way, with the environment
 *   nfqb-bench runs with (from the build tree: its run path to
 *   lib/.libs);
 * - app-old: with LD_LIBRARY_PATH set to NFQB_BENCH_OLD_LIB, a directory
 *   holding another build's libnfq-batch.so.0 (bench/bench-old-lib.sh
 *   builds release 0.1.0's).
 *
 * One harness, two libraries: two nfqb-bench builds would compare their
 * harnesses too. The binary says which library it loaded ("library
 * PATH"); app-old fails if that is not in NFQB_BENCH_OLD_LIB, app if it
 * is. Readiness is queue 0 showing up bound; at the stop signal the
 * consumer passes SIGTERM on and reads "packets N enobufs N
 * outside_user_ns N outside_sys_ns N": the CPU time the binary spent
 * before its queue was set up (exec, the dynamic loader) and after the
 * stop, which the run takes off the consumer's.
 *
 * Where the binary is: NFQB_BENCH_APP (make bench-abi sets it; no build
 * path is compiled in). Drain mode is refused: its SIGSTOP reaches the
 * consumer process, not the binary it forked.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nfqb-bench-child.h"
#include "nfqb-bench-cons.h"
#include "nfqb-bench-ext.h"

/* what runs: the binary, and the library directory of app-old */
struct ext_where {
	const char *name;		/* "app" or "app-old" */
	bool old;			/* app-old */
	const char *bin;
	const char *libdir;		/* app-old: NFQB_BENCH_OLD_LIB */
};

/* what bench_child_consume() starts */
struct ext_run {
	const struct bench_cfg *cfg;
	struct ext_where w;
};

/* it can run: 0, or -1 with @c failed */
static int ext_check(const struct bench_cfg *cfg, struct bench_cons *c,
		     struct ext_where *w)
{
	char msg[256], so[PATH_MAX];

	if (cfg->drain)
		return bench_child_fail(c, "app and app-old cannot run in drain mode (SIGSTOP does not reach nfqb-bench-app): use --mode stream");
	w->bin = bench_env_or("NFQB_BENCH_APP", "");
	if (!*w->bin || access(w->bin, X_OK)) {
		snprintf(msg, sizeof(msg),
			 "no nfqb-bench-app '%.100s': set NFQB_BENCH_APP to the build tree's bench/nfqb-bench-app (make bench-abi does)",
			 w->bin);
		return bench_child_fail(c, msg);
	}
	if (!w->old)
		return 0;
	w->libdir = bench_env_or("NFQB_BENCH_OLD_LIB", "");
	if (!*w->libdir)
		return bench_child_fail(c, "NFQB_BENCH_OLD_LIB is not set: build release 0.1.0's library with bench/bench-old-lib.sh, which prints the directory (make bench-abi does both)");
	snprintf(so, sizeof(so), "%s/libnfq-batch.so.0", w->libdir);
	if (access(so, R_OK)) {
		snprintf(msg, sizeof(msg),
			 "NFQB_BENCH_OLD_LIB: no %.100s: build it with bench/bench-old-lib.sh (make bench-abi does)",
			 so);
		return bench_child_fail(c, msg);
	}
	return 0;
}

/* in the forked child: app-old's library first on the search path */
static void ext_env(const struct ext_where *w)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char path[2 * PATH_MAX];

	if (!w->old)
		return;
	if (old && *old)
		snprintf(path, sizeof(path), "%s:%s", w->libdir, old);
	else
		snprintf(path, sizeof(path), "%s", w->libdir);
	setenv("LD_LIBRARY_PATH", path, 1);
}

/* the binary, forked, its output into @fd: its pid, or -1 */
static pid_t ext_spawn(const void *ctx, int fd)
{
	const struct ext_run *r = ctx;
	const struct bench_cfg *cfg = r->cfg;
	const struct ext_where *w = &r->w;
	char maxlen[16], rcvbuf[16], batch[16], window[16];
	pid_t pid;

	snprintf(maxlen, sizeof(maxlen), "%u", cfg->maxlen);
	snprintf(rcvbuf, sizeof(rcvbuf), "%u", cfg->rcvbuf);
	snprintf(batch, sizeof(batch), "%u", cfg->batch);
	snprintf(window, sizeof(window), "%u", cfg->window);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)w->bin, "--maxlen", maxlen,
				 "--rcvbuf", rcvbuf, "--batch", batch,
				 "--window", window, NULL, NULL, NULL };

		if (cfg->gso >= 0) {
			argv[9] = "--gso";
			argv[10] = cfg->gso ? "on" : "off";
		}
		bench_child_setup(fd);
		ext_env(w);
		execv(w->bin, argv);
		fprintf(stderr, "exec %s: %s\n", w->bin, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* the library the binary says it loaded is the one asked for: 0, or -1
 * with @c failed */
static int ext_check_lib(const char *out, const struct ext_where *w,
			 struct bench_cons *c)
{
	char lib[PATH_MAX], dir[PATH_MAX], want[PATH_MAX], msg[256];
	const char *p = strstr(out, "library "), *old;
	char *slash;
	bool in_old;

	if (!p || sscanf(p + 8, "%4095s", lib) != 1)
		return bench_child_fail(c, "nfqb-bench-app did not say which library it loaded");
	if (!realpath(lib, dir))
		snprintf(dir, sizeof(dir), "%s", lib);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	/* app: against NFQB_BENCH_OLD_LIB if set, to tell the two apart */
	old = w->old ? w->libdir : getenv("NFQB_BENCH_OLD_LIB");
	in_old = old && *old && realpath(old, want) && !strcmp(dir, want);
	if (in_old == w->old)
		return 0;
	snprintf(msg, sizeof(msg), "%s ran on %.120s, %s NFQB_BENCH_OLD_LIB",
		 w->name, lib, w->old ? "not on" : "which is");
	return bench_child_fail(c, msg);
}

static int bench_ext(const struct bench_cfg *cfg, struct bench_cons *c,
		     bool old)
{
	struct ext_run r = {
		.cfg = cfg,
		.w = { .name = old ? "app-old" : "app", .old = old,
		       .libdir = "" },
	};
	const char *out;

	if (ext_check(cfg, c, &r.w) < 0 ||
	    bench_child_consume(c, r.w.name, ext_spawn, &r, &out) < 0)
		return -1;
	return ext_check_lib(out, &r.w, c);
}

int bench_app(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_ext(cfg, c, false);
}

int bench_app_old(const struct bench_cfg *cfg, struct bench_cons *c)
{
	return bench_ext(cfg, c, true);
}
