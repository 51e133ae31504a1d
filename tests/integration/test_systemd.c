// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfqb-ips under a real systemd (issue 12): ips/nfqb-ips.service
 * run by a systemd user manager (/lib/systemd/systemd --user, as root: its
 * services may bind queues) that this test starts, in the test's network
 * namespace, with a rule WITHOUT --queue-bypass: a moment with the queue
 * unbound would drop packets, which the receiver would count as lost.
 *
 * The unit is the shipped one, sandbox included (PrivateTmp=yes hides
 * /tmp and /var/tmp, ProtectHome=yes /home, /root and /run/user), with
 * its ExecStart= naming the test's queue and rules, its output in a file
 * (the user manager has no journal here) and nothing else changed but
 * what it runs: not the build tree's nfqb-ips, which is wherever the tree
 * was cloned (under /tmp or /root the sandbox hides it, issue 21), but a
 * copy of it and of the build's libnfq-batch.so.0 in the test's directory
 * under /run (nfqbt_stage_ips()), which the unit finds through
 * Environment=LD_LIBRARY_PATH=.
 *
 * test_ips_systemd_restart_crash: under load (numbered UDP datagrams at
 * a bounded rate, with a window), the service is restarted (`systemctl
 * restart`: RestartKillSignal=SIGQUIT hands the queue over to the fd
 * store), killed with SIGKILL once (Restart=on-failure: the new process
 * gets the socket back from the store) and reloaded (an upgrade in
 * place). Checked: every datagram arrived exactly once; the kernel's
 * queue kept the same socket (portid) and the same instance all along
 * (id_sequence counts every packet sent, queue_dropped and
 * queue_user_dropped stay 0); every new process logged that it took the
 * queue over; systemd counted one automatic restart; a stop at the end
 * empties the fd store and unbinds the queue.
 *
 * test_unit_start_failure_reported: the same unit, its program staged
 * where the sandbox hides it (under /tmp, then under /root), must fail to
 * start, and what the test prints must say why, as for any systemctl
 * that fails here (unit_report()): the unit's status with systemd's exit
 * code and its text (203/EXEC), its Result=, and the manager's log, where
 * the executor says which executable it could not run. A drop-in of this
 * test alone (RestartSec=1h) holds the failed state for the report: the
 * unit's automatic restart 100 ms later would reset Result= and start
 * the next attempt while the test reads them.
 *
 * The manager needs a few things a machine without systemd as PID 1 does
 * not have; they are made in a private mount namespace, nothing on the
 * host changes but the test's own cgroup (see manager_main()):
 *  - /run/systemd/system (systemd --user refuses to run without it), and
 *    /run/systemd/inaccessible/ (the service's ProtectHome= needs it);
 *  - a cgroup of its own: a new one (nfqbt-sd-PID-N) in the name=systemd
 *    and the unified hierarchies (or in the cgroup2 root on a unified
 *    machine), entered, then a cgroup namespace, and only those two
 *    hierarchies mounted: a manager that saw the host's root cgroup would
 *    move every process of the machine into its init.scope;
 *  - umask 0, as PID 1 has: the notification socket must be writable by
 *    nobody (nfqb-ips --user nobody);
 *  - its log (--log-target=kmsg) through a FIFO bound over /dev/kmsg,
 *    not in the machine's kernel log, copied by a process of the test to
 *    manager.log: a plain file would not do (each process that logs opens
 *    /dev/kmsg anew, without O_APPEND, and would write over the others),
 *    nor would the console (systemd logs there only if it is a
 *    terminal).
 * Every process of each test's cgroup is killed, the cgroups removed and
 * the directories deleted by main() after the suite, whatever happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <sched.h>
#include <unistd.h>

#include "harness.h"

#ifndef NFQB_TOP_SRCDIR
#error "NFQB_TOP_SRCDIR must name the source tree"
#endif

#define PORT		5407
#define QNUM		7
#define MARK		9
#define WINDOW		512
#define MAX_SEQ		60000u
#define SYSTEMD		"/lib/systemd/systemd"
#define UNIT		"nfqbt-ips.service"
#define RESTARTS	4
#define OP_SPACING_MS	2500

/* --- files, cgroups -------------------------------------------------------- */

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

/* How many lines of @path contain @needle. */
static unsigned int count_lines(const char *path, const char *needle)
{
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Kill every process in @dir and its children cgroups; true if there was
 * none left. */
static bool cg_kill_all(const char *dir)
{
	char path[PATH_MAX + 32];
	struct dirent *de;
	bool empty = true;
	DIR *d;
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	if (f) {
		while (fscanf(f, "%d", &pid) == 1)
			if (pid > 1) {
				kill(pid, SIGKILL);
				empty = false;
			}
		fclose(f);
	}
	d = opendir(dir);
	if (!d)
		return empty;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (!cg_kill_all(path))
				empty = false;
		}
	closedir(d);
	return empty;
}

/* rmdir @dir after its children (cgroup directories hold no files one
 * can remove). */
static void cg_rmdir_all(const char *dir)
{
	char path[PATH_MAX + 32];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			cg_rmdir_all(path);
		}
	closedir(d);
	rmdir(dir);
}

/* The test's names, set by use_instance() (in main() and in each test):
 * each test has its own directory, cgroups and manager. */
#define N_INSTANCES	2
static int g_pid;			/* main()'s */
static char g_dir[128];			/* /run/nfqbt-sd.PID.N */
static char g_cg[64];			/* nfqbt-sd-PID-N */
static char g_cgpath[2][128];		/* the test's cgroups ("" if none) */
static bool g_unified_only;		/* cgroup2 at /sys/fs/cgroup */
static pid_t g_copier;			/* log_copier(), in a test */
/* where test_unit_start_failure_reported stages nfqb-ips, hidden from
 * the unit by its sandbox */
static const char *const g_hidden_fmt[] = {
	"/tmp/nfqbt-sd-hidden.%d",	/* PrivateTmp=yes */
	"/root/nfqbt-sd-hidden.%d",	/* ProtectHome=yes */
};
#define N_HIDDEN	2

static void use_instance(unsigned int n)
{
	snprintf(g_dir, sizeof(g_dir), "/run/nfqbt-sd.%d.%u", g_pid, n);
	snprintf(g_cg, sizeof(g_cg), "nfqbt-sd-%d-%u", g_pid, n);
	g_unified_only = is_cgroup2("/sys/fs/cgroup");
	memset(g_cgpath, 0, sizeof(g_cgpath));
	if (g_unified_only) {
		snprintf(g_cgpath[0], sizeof(g_cgpath[0]), "/sys/fs/cgroup/%s",
			 g_cg);
	} else {
		snprintf(g_cgpath[0], sizeof(g_cgpath[0]),
			 "/sys/fs/cgroup/systemd/%s", g_cg);
		if (is_cgroup2("/sys/fs/cgroup/unified"))
			snprintf(g_cgpath[1], sizeof(g_cgpath[1]),
				 "/sys/fs/cgroup/unified/%s", g_cg);
	}
}

/* Everything a test made, whatever state it was left in: the manager,
 * nfqb-ips and whatever else runs in the test's cgroups is killed (which
 * also ends the network namespace), the cgroups and the directory go. */
static void cleanup(void)
{
	unsigned int i, round;

	for (round = 0; round < 100; round++) {
		bool empty = true;

		for (i = 0; i < 2; i++)
			if (g_cgpath[i][0] && !cg_kill_all(g_cgpath[i]))
				empty = false;
		if (empty)
			break;
		nfqbt_sleep_ms(50);
	}
	for (i = 0; i < 2; i++)
		if (g_cgpath[i][0])
			cg_rmdir_all(g_cgpath[i]);
	if (g_dir[0])
		nfqbt_rm_rf(g_dir);
}

/* --- the manager --------------------------------------------------------- */

static void die(const char *what)
{
	fprintf(stderr, "manager set-up: %s: %s\n", what, strerror(errno));
	_exit(127);
}

/* The child that becomes the systemd user manager (see the top). */
static void manager_main(void)
{
	static const char *const inacc[] = { "reg", "fifo", "chr", "blk" };
	char path[PATH_MAX + 64], pid[16];
	unsigned int i;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);	/* if the test dies first */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (i = 0; i < 2; i++) {
		if (!g_cgpath[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", g_cgpath[i]);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			die(path);
		close(fd);
	}
	if (unshare(CLONE_NEWNS | CLONE_NEWCGROUP) < 0)
		die("unshare");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("mount --make-rprivate /");
	if (mount("tmpfs", "/run/systemd", "tmpfs", 0, "mode=0755") < 0)
		die("mount /run/systemd");
	if (mkdir("/run/systemd/system", 0755) < 0 ||
	    mkdir("/run/systemd/inaccessible", 0755) < 0 ||
	    mkdir("/run/systemd/inaccessible/dir", 0) < 0)
		die("mkdir /run/systemd/...");
	for (i = 0; i < 4; i++) {
		mode_t m = i == 0 ? S_IFREG : i == 1 ? S_IFIFO :
			   i == 2 ? S_IFCHR : S_IFBLK;

		snprintf(path, sizeof(path), "/run/systemd/inaccessible/%s",
			 inacc[i]);
		if (mknod(path, m, makedev(0, 0)) < 0 || chmod(path, 0) < 0)
			die(path);
	}
	if (g_unified_only) {
		if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0)
			die("mount cgroup2");
	} else {
		if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", 0, "mode=0755") < 0 ||
		    mkdir("/sys/fs/cgroup/systemd", 0755) < 0 ||
		    mount("cgroup", "/sys/fs/cgroup/systemd", "cgroup", 0,
			  "none,name=systemd") < 0)
			die("mount name=systemd");
		if (g_cgpath[1][0] &&
		    (mkdir("/sys/fs/cgroup/unified", 0755) < 0 ||
		     mount("cgroup2", "/sys/fs/cgroup/unified", "cgroup2", 0,
			   NULL) < 0))
			die("mount cgroup2");
	}
	umask(0);
	/* the manager and the processes it forks (the executor's "Failed
	 * at step EXEC" is logged by the child) log to /dev/kmsg: to the
	 * FIFO that log_copier() reads instead */
	snprintf(path, sizeof(path), "%s/kmsg", g_dir);
	if (mount(path, "/dev/kmsg", NULL, MS_BIND, NULL) < 0)
		die("mount --bind kmsg /dev/kmsg");
	snprintf(path, sizeof(path), "%s/manager.log", g_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		die(path);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	execl(SYSTEMD, "systemd", "--user", "--log-target=kmsg",
	      (char *)NULL);
	die("exec " SYSTEMD);
}

/* The child that copies what the manager's processes write to the FIFO
 * @g_dir/kmsg (their /dev/kmsg) to @g_dir/manager.log, until the test
 * ends. Each write to a FIFO, up to PIPE_BUF bytes, is one piece. */
static void log_copier(void)
{
	char path[PATH_MAX], buf[4096];
	ssize_t n;
	int in, out;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "%s/kmsg", g_dir);
	/* read and write: never an end of file, writers never wait */
	in = open(path, O_RDWR);
	if (in < 0)
		die(path);
	snprintf(path, sizeof(path), "%s/manager.log", g_dir);
	out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		die(path);
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (write(out, buf, n) != n)
			die(path);
	}
	_exit(0);
}

/* `systemctl --user ARGS` (bounded); its exit status, its output in @out
 * (if not NULL): the first line, or all of it if @whole. */
static int systemctl(char *out, size_t size, bool whole, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));
static int systemctl(char *out, size_t size, bool whole, const char *fmt,
		     ...)
{
	char args[256], cmd[512], line[1024];
	size_t len = 0;
	bool first = true;
	va_list ap;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "timeout 30 systemctl --user --no-pager "
		 "--full %s 2>&1", args);
	if (out && size)
		out[0] = 0;
	p = popen(cmd, "r");
	ck_assert(p);
	while (fgets(line, sizeof(line), p)) {
		if (!out || (!whole && !first))
			continue;
		if (!whole)
			line[strcspn(line, "\n")] = 0;
		if (len < size)
			len += snprintf(out + len, size - len, "%s", line);
		first = false;
	}
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Append the last @max lines of @path to @buf (of @size, @len used). */
static size_t append_tail(char *buf, size_t size, size_t len,
			  const char *path, unsigned int max)
{
	char line[1024];
	unsigned int n = 0, skip;
	FILE *f = fopen(path, "r");

	if (!f) {
		if (len < size)
			len += snprintf(buf + len, size - len, "(%s: %s)\n",
					path, strerror(errno));
		return len;
	}
	while (fgets(line, sizeof(line), f))
		n++;
	skip = n > max ? n - max : 0;
	rewind(f);
	for (n = 0; fgets(line, sizeof(line), f); n++)
		if (n >= skip && len < size)
			len += snprintf(buf + len, size - len, "%s", line);
	fclose(f);
	return len;
}

/* Why the unit is not running, as systemd says it: its status (with the
 * exit code and its text, e.g. "status=203/EXEC"), the properties that
 * say how it ended, the manager's log and the program's output. Printed
 * (into the test's log) and put in @buf. */
static void unit_report(char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t len;

	len = snprintf(buf, size, "--- systemctl --user status " UNIT "\n");
	if (len < size)
		systemctl(buf + len, size - len, true, "status " UNIT);
	len = strlen(buf);
	if (len < size)
		len += snprintf(buf + len, size - len, "--- systemctl --user "
				"show " UNIT "\n");
	if (len < size)
		systemctl(buf + len, size - len, true, "show -p ActiveState "
			  "-p SubState -p Result -p ExecMainCode -p "
			  "ExecMainStatus -p StatusText -p StatusErrno "
			  "-p NRestarts " UNIT);
	len = strlen(buf);
	nfqbt_sleep_ms(300);	/* for log_copier() to catch up */
	snprintf(path, sizeof(path), "%s/manager.log", g_dir);
	if (len < size)
		len += snprintf(buf + len, size - len, "--- the manager's log "
				"(%s, last 40 lines)\n", path);
	len = append_tail(buf, size, len, path, 40);
	snprintf(path, sizeof(path), "%s/ips.log", g_dir);
	if (len < size)
		len += snprintf(buf + len, size - len, "--- nfqb-ips's output "
				"(%s, last 20 lines)\n", path);
	append_tail(buf, size, len, path, 20);
	printf("%s--- end of the report on " UNIT "\n", buf);
	fflush(stdout);
}

/* The lines of @report that say how the unit ended, on one line, for an
 * assertion's message. */
static const char *report_summary(const char *report)
{
	static char sum[1024];
	char line[1024];
	const char *l, *e;
	size_t len = 0;

	sum[0] = 0;
	for (l = report; *l && len < sizeof(sum); l = *e ? e + 1 : e) {
		e = l + strcspn(l, "\n");
		l += strspn(l, " ");
		snprintf(line, sizeof(line), "%.*s", (int)(e - l), l);
		if (!strncmp(line, "Result=", 7) ||
		    !strncmp(line, "Active:", 7) ||
		    (!strncmp(line, "Process:", 8) && strstr(line, "status=")))
			len += snprintf(sum + len, sizeof(sum) - len, "%s%s",
					len ? "; " : "", line);
	}
	return sum;
}

/* `systemctl --user VERB UNIT`; true if it succeeded, else the report
 * (unit_report()) in @report. */
static bool unit_ctl_try(const char *verb, char *report, size_t size)
{
	char out[256];

	if (systemctl(out, sizeof(out), false, "%s " UNIT, verb) == 0)
		return true;
	printf("systemctl --user %s " UNIT ": %s\n", verb, out);
	unit_report(report, size);
	return false;
}

/* `systemctl --user VERB UNIT`, which must succeed; if it does not, the
 * report is printed and the assertion says how the unit ended. */
static void unit_ctl(const char *verb)
{
	static char report[16384];

	ck_assert_msg(unit_ctl_try(verb, report, sizeof(report)),
		      "systemctl %s " UNIT " failed: %s (the report on the "
		      "unit above)", verb, report_summary(report));
}

static unsigned long show(const char *prop)
{
	char out[128];

	ck_assert_msg(systemctl(out, sizeof(out), false, "show -p %s --value "
				UNIT, prop) == 0, "show %s: %s", prop, out);
	return strtoul(out, NULL, 10);
}

/* Wait (up to 10 s) for the unit's ActiveState to be @want. */
static void wait_state(const char *want)
{
	static char report[16384];
	char out[128] = "";
	unsigned int i;

	for (i = 0; i < 100; i++) {
		systemctl(out, sizeof(out), false, "show -p ActiveState "
			  "--value " UNIT);
		if (!strcmp(out, want))
			return;
		nfqbt_sleep_ms(100);
	}
	unit_report(report, sizeof(report));
	ck_assert_msg(0, "ActiveState %s, not %s: %s (the report on the unit "
		      "above)", out, want, report_summary(report));
}

/* Wait (up to 10 s) for @n lines with @needle in @path; returns how many
 * there are. */
static unsigned int wait_lines(const char *path, const char *needle,
			       unsigned int n)
{
	unsigned int i, got = 0;

	for (i = 0; i < 100; i++) {
		got = count_lines(path, needle);
		if (got >= n)
			break;
		nfqbt_sleep_ms(100);
	}
	return got;
}

/* --- set-up -------------------------------------------------------------- */

/* Instance @n's network namespace, directory, cgroups and manager (see
 * the top); the manager's pid. */
static pid_t manager_start(unsigned int n)
{
	char path[PATH_MAX + 64];
	unsigned int i;
	pid_t mgr;

	use_instance(n);
	ck_assert_msg(access(SYSTEMD, X_OK) == 0, SYSTEMD ": %s (install "
		      "systemd: tests/deps.sh)", strerror(errno));
	nfqbt_netns_enter();

	/* the directory: runtime dir, units, logs */
	ck_assert_msg(mkdir(g_dir, 0755) == 0, "%s: %s", g_dir,
		      strerror(errno));
	chmod(g_dir, 0755);
	snprintf(path, sizeof(path), "%s/run", g_dir);
	ck_assert(mkdir(path, 0755) == 0);
	setenv("XDG_RUNTIME_DIR", path, 1);
	snprintf(path, sizeof(path), "%s/config", g_dir);
	ck_assert(mkdir(path, 0755) == 0);
	setenv("XDG_CONFIG_HOME", path, 1);
	snprintf(path, sizeof(path), "%s/config/systemd", g_dir);
	ck_assert(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/config/systemd/user", g_dir);
	ck_assert(mkdir(path, 0755) == 0);
	setenv("HOME", g_dir, 1);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("DBUS_SESSION_BUS_ADDRESS");

	/* the cgroups, then the manager */
	if (!g_unified_only)
		ck_assert_msg(access("/sys/fs/cgroup/systemd", F_OK) == 0,
			      "no name=systemd hierarchy at "
			      "/sys/fs/cgroup/systemd");
	for (i = 0; i < 2; i++)
		if (g_cgpath[i][0])
			ck_assert_msg(mkdir(g_cgpath[i], 0755) == 0, "%s: %s",
				      g_cgpath[i], strerror(errno));
	if (access("/run/systemd", F_OK) != 0)
		ck_assert(mkdir("/run/systemd", 0755) == 0);
	snprintf(path, sizeof(path), "%s/kmsg", g_dir);
	ck_assert_msg(mkfifo(path, 0600) == 0, "%s: %s", path,
		      strerror(errno));
	fflush(NULL);
	g_copier = fork();
	ck_assert(g_copier >= 0);
	if (g_copier == 0)
		log_copier();
	mgr = fork();
	ck_assert(mgr >= 0);
	if (mgr == 0)
		manager_main();
	snprintf(path, sizeof(path), "%s/run/systemd/private", g_dir);
	for (i = 0; i < 150 && access(path, F_OK) != 0; i++)
		nfqbt_sleep_ms(100);
	ck_assert_msg(i < 150, "the manager did not start (%s/manager.log)",
		      g_dir);
	for (i = 0; i < 50 &&
		    systemctl(NULL, 0, false, "show -p Version") != 0; i++)
		nfqbt_sleep_ms(100);
	ck_assert_msg(i < 50, "systemctl --user does not answer");
	return mgr;
}

static void manager_stop(pid_t mgr)
{
	unsigned int i;
	int status;

	systemctl(NULL, 0, false, "exit");
	for (i = 0; i < 100 && waitpid(mgr, &status, WNOHANG) == 0; i++)
		nfqbt_sleep_ms(100);
	if (i == 100) {
		kill(mgr, SIGKILL);
		waitpid(mgr, &status, 0);
	}
	kill(g_copier, SIGKILL);
	waitpid(g_copier, &status, 0);
}

/* The unit: ips/nfqb-ips.service with ExecStart= naming @ips
 * (a copy by nfqbt_stage_ips(): its libraries in ../lib), the test's
 * rules and queue, and its output in a file. Everything else as shipped,
 * sandbox included. Loaded (daemon-reload). */
static void write_unit(const char *ips, const char *rules, const char *log)
{
	char src[PATH_MAX], dst[256], line[512], libdir[PATH_MAX];
	FILE *in, *out;
	bool service = false, execstart = false;

	snprintf(src, sizeof(src), "%s/ips/nfqb-ips.service",
		 NFQB_TOP_SRCDIR);
	snprintf(dst, sizeof(dst), "%s/config/systemd/user/" UNIT, g_dir);
	snprintf(libdir, sizeof(libdir), "%s", ips);
	ck_assert(strrchr(libdir, '/'));
	*strrchr(libdir, '/') = 0;	/* DIR/bin */
	ck_assert(strrchr(libdir, '/'));
	strcpy(strrchr(libdir, '/'), "/lib");
	in = fopen(src, "r");
	ck_assert_msg(in, "%s: %s", src, strerror(errno));
	out = fopen(dst, "w");
	ck_assert_msg(out, "%s: %s", dst, strerror(errno));
	while (fgets(line, sizeof(line), in)) {
		if (!strncmp(line, "ExecStart=", 10)) {
			fprintf(out, "ExecStart=%s -q %u -r %s --user nobody\n",
				ips, QNUM, rules);
			execstart = true;
			continue;
		}
		fputs(line, out);
		if (!strncmp(line, "[Service]", 9)) {
			fprintf(out, "StandardOutput=append:%s\n"
				"StandardError=append:%s\n"
				"Environment=LD_LIBRARY_PATH=%s\n", log, log,
				libdir);
			service = true;
		}
	}
	fclose(in);
	ck_assert(fclose(out) == 0);
	ck_assert_msg(service && execstart, "%s: no [Service] or ExecStart=",
		      src);
	ck_assert_int_eq(systemctl(NULL, 0, false, "daemon-reload"), 0);
}

/* --- the tests ----------------------------------------------------------- */

START_TEST(test_ips_systemd_restart_crash)
{
	struct nfqbt_rx_opts ro = { .quiet_ms = 10000, .timeout_ms = 100000,
				    .max_seq = MAX_SEQ };
	char ips[PATH_MAX], rules[PATH_MAX + 16], log[PATH_MAX + 16];
	char out[256];
	/* at most WINDOW in flight (the queue holds 8192), at most about
	 * 2,000 a second */
	struct nfqbt_tx_opts to = { .port = PORT, .count = MAX_SEQ,
				    .window = WINDOW, .pace_us = 500,
				    .timeout_ms = 90000 };
	struct nfqbt_tx *tx;
	struct nfqb_kstats ks;
	struct nfqbt_rx *rx;
	unsigned long pid, npid;
	unsigned int i, op, sent, marked = 0, unmarked = 0, taken;
	uint64_t last;
	uint32_t portid;
	pid_t mgr;

	mgr = manager_start(0);
	nfqbt_rule_queue(PORT, QNUM, false);	/* no bypass: a gap drops */
	snprintf(rules, sizeof(rules), "%s/rules", g_dir);
	snprintf(out, sizeof(out), "mark %u %u\n", PORT, MARK);
	write_file(rules, out, 0644);
	snprintf(log, sizeof(log), "%s/ips.log", g_dir);
	/* what the unit runs, where its sandbox lets it see it */
	nfqbt_stage_ips(g_dir, ips, sizeof(ips));
	write_unit(ips, rules, log);

	/* start: bound, READY=1, the socket in the store */
	unit_ctl("start");
	wait_state("active");
	ck_assert_uint_eq(show("NFileDescriptorStore"), 1);
	ks = nfqbt_kstats(QNUM);
	portid = ks.portid;
	pid = show("MainPID");
	ck_assert_uint_eq(count_lines(log, "(taken over)"), 0);

	rx = nfqbt_rx_start(PORT, &ro);
	to.progress = nfqbt_rx_total_ptr(rx);
	tx = nfqbt_tx_start(&to);
	nfqbt_rx_assert_more(rx, 2000, "start");

	/* RESTARTS restarts, a crash after the second, an upgrade in place
	 * after the third; each under load */
	last = nfqbt_now_ms();
	for (op = 0; op < RESTARTS + 2; op++) {
		const char *what;

		/* systemd allows 5 starts in 10 s (StartLimitBurst=,
		 * StartLimitIntervalSec=): one every 2.5 s stays below */
		while (nfqbt_now_ms() - last < OP_SPACING_MS)
			nfqbt_sleep_ms(50);
		last = nfqbt_now_ms();

		if (op == 2) {
			what = "kill -9";
			ck_assert(kill((pid_t)pid, SIGKILL) == 0);
			for (i = 0; i < 100; i++) {
				nfqbt_sleep_ms(100);
				npid = show("MainPID");
				if (npid && npid != pid &&
				    show("NRestarts") == 1)
					break;
			}
			/* restarted by systemd (a manual restart later
			 * resets the count) */
			ck_assert_uint_eq(show("NRestarts"), 1);
		} else if (op == 4) {
			what = "reload";
			unit_ctl("reload");
		} else {
			what = "restart";
			unit_ctl("restart");
		}
		/* active again once the new process sent READY=1 */
		taken = wait_lines(log, "(taken over)", op + 1);
		wait_state("active");
		npid = show("MainPID");
		ck_assert_msg(op == 4 ? npid == pid : npid != pid,
			      "%s: MainPID %lu, before %lu", what, npid, pid);
		pid = npid;
		ck_assert_msg(taken == op + 1, "%s: %u processes took the queue "
			      "over, not %u (%s)", what, taken, op + 1, log);
		ks = nfqbt_kstats(QNUM);
		ck_assert_msg(ks.portid == portid, "%s: queue %u bound to "
			      "portid %u, not %u", what, QNUM, ks.portid,
			      portid);
		ck_assert_uint_eq(show("NFileDescriptorStore"), 1);
		nfqbt_rx_assert_more(rx, 1000, what);
		printf("%s: pid %lu took queue %u over (portid %u); %u "
		       "datagrams arrived so far\n", what, pid, QNUM, portid,
		       nfqbt_rx_total(rx));
	}

	sent = nfqbt_tx_finish(tx, rx);
	nfqbt_sleep_ms(200);	/* duplicates would come now */
	ks = nfqbt_kstats(QNUM);
	ck_assert_uint_eq(ks.portid, portid);

	/* a stop unbinds and empties the store */
	unit_ctl("stop");
	ck_assert_uint_eq(show("NFileDescriptorStore"), 0);
	{
		char l[256];
		bool bound = false;
		FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");

		ck_assert(f);
		while (fgets(l, sizeof(l), f))
			if (strtoul(l, NULL, 10) == QNUM)
				bound = true;
		fclose(f);
		ck_assert_msg(!bound, "queue %u still bound after the stop",
			      QNUM);
	}
	nfqbt_rx_stop(rx);

	/* every datagram once; none dropped by the kernel, one instance */
	for (i = 0; i < sent; i++) {
		uint32_t mark = 0;

		ck_assert_msg(nfqbt_rx_count(rx, i) == 1, "seq %u arrived %u "
			      "times", i, nfqbt_rx_count(rx, i));
		if (nfqbt_rx_mark(rx, i, &mark) && mark == MARK)
			marked++;
		else
			unmarked++;
	}
	ck_assert_uint_eq(nfqbt_rx_total(rx), sent);
	ck_assert_uint_eq(nfqbt_rx_bad(rx), 0);
	ck_assert_uint_eq(ks.queue_dropped, 0);
	ck_assert_uint_eq(ks.queue_user_dropped, 0);
	ck_assert_uint_eq(ks.id_sequence, sent);
	printf("nfqb-ips under systemd %s --user: %u restarts, 1 kill -9 "
	       "(1 automatic restart), 1 reload; sent %u, arrived %u (each "
	       "once: lost 0, duplicated 0; %u with the IPS's mark, %u "
	       "accepted unmarked: held by the killed process), kernel "
	       "dropped 0, queue %u on portid %u throughout\n", SYSTEMD,
	       RESTARTS, sent, sent, marked, unmarked, QNUM, portid);

	/* what the processes said (sanitizer reports would be there) */
	ck_assert_msg(count_lines(log, "Sanitizer") == 0 &&
		      count_lines(log, "runtime error") == 0,
		      "nfqb-ips reported errors: %s", log);

	manager_stop(mgr);
	nfqbt_rx_free(rx);
}
END_TEST

/* The unit made to fail: nfqb-ips staged where the unit's sandbox hides
 * it (as the build tree was when the tree was cloned under /tmp or /root,
 * issue 21). Its start must fail, and the report must say why: systemd's
 * exit code and its text (203/EXEC) in the unit's status, and in the
 * manager's log the executor's message naming the program. */
START_TEST(test_unit_start_failure_reported)
{
	static char report[16384];
	char hidden[64], ips[PATH_MAX], rules[PATH_MAX + 16];
	char log[PATH_MAX + 16], mlog[PATH_MAX + 16], line[1024];
	char out[256], path[PATH_MAX + 64], *status_end;
	unsigned int h, tried = 0;
	bool named;
	pid_t mgr;
	FILE *f;

	mgr = manager_start(1);
	snprintf(rules, sizeof(rules), "%s/rules", g_dir);
	snprintf(out, sizeof(out), "mark %u %u\n", PORT, MARK);
	write_file(rules, out, 0644);
	snprintf(log, sizeof(log), "%s/ips.log", g_dir);
	snprintf(mlog, sizeof(mlog), "%s/manager.log", g_dir);
	/* the failed state held for the report (see the top) */
	snprintf(path, sizeof(path), "%s/config/systemd/user/" UNIT ".d",
		 g_dir);
	ck_assert(mkdir(path, 0755) == 0);
	strcat(path, "/hold-failure.conf");
	write_file(path, "[Service]\nRestartSec=1h\n", 0644);

	for (h = 0; h < N_HIDDEN; h++) {
		snprintf(hidden, sizeof(hidden), g_hidden_fmt[h], g_pid);
		snprintf(out, sizeof(out), "%s", hidden);
		if (access(dirname(out), F_OK) != 0) {
			printf("%s: %s absent, not tried\n", hidden, out);
			continue;
		}
		tried++;
		ck_assert_msg(mkdir(hidden, 0755) == 0, "%s: %s", hidden,
			      strerror(errno));
		nfqbt_stage_ips(hidden, ips, sizeof(ips));
		write_unit(ips, rules, log);

		printf("--- %s: starting " UNIT " with ExecStart=%s, which "
		       "the unit's sandbox hides (it must fail)\n", hidden,
		       ips);
		ck_assert_msg(!unit_ctl_try("start", report, sizeof(report)),
			      "%s: the unit started although its program is "
			      "hidden from it", ips);
		/* the unit's status: the exit code with its text */
		status_end = strstr(report, "--- systemctl --user show");
		ck_assert(status_end);
		*status_end = 0;
		ck_assert_msg(strstr(report, "status=203/EXEC"), "%s: no "
			      "\"status=203/EXEC\" in the unit's status above",
			      ips);
		*status_end = '-';
		ck_assert_msg(strstr(report, "\nResult=exit-code\n"), "%s: no "
			      "\"Result=exit-code\" in the report above", ips);
		ck_assert_msg(strstr(report, "\nExecMainStatus=203\n"), "%s: "
			      "no \"ExecMainStatus=203\" in the report above",
			      ips);
		/* the manager's log: the executor names the program and
		 * says what went wrong */
		named = false;
		f = fopen(mlog, "r");
		ck_assert_msg(f, "%s: %s", mlog, strerror(errno));
		while (fgets(line, sizeof(line), f))
			if (strstr(line, ips) &&
			    strstr(line, "No such file or directory") &&
			    strstr(report, line))
				named = true;
		fclose(f);
		ck_assert_msg(named, "%s: the manager's log (in the report "
			      "above) does not say that %s was not found",
			      mlog, ips);
		printf("%s: the unit failed as it must; the report says why: "
		       "%s\n", hidden, report_summary(report));

		/* no more automatic restarts, for the next one */
		unit_ctl("stop");
		systemctl(NULL, 0, false, "reset-failed " UNIT);
		nfqbt_rm_rf(hidden);
	}
	ck_assert_uint_ge(tried, 1);
	manager_stop(mgr);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("systemd");
	char hidden[64], cmd[512];
	unsigned int n, h;
	int ret;

	g_pid = (int)getpid();
	tcase_add_test(nfqbt_tcase(s, "fdstore", 150),
		       test_ips_systemd_restart_crash);
	tcase_add_test(nfqbt_tcase(s, "failure", 60),
		       test_unit_start_failure_reported);
	ret = nfqbt_run_suite("test_systemd", s);
	/* the tests ran in children: find their cgroups and directories
	 * again */
	for (n = 0; n < N_INSTANCES; n++) {
		use_instance(n);
		if (ret && access(g_dir, F_OK) == 0) {	/* for the log */
			snprintf(cmd, sizeof(cmd), "for f in %s/ips.log "
				 "%s/manager.log; do [ -f $f ] && { echo "
				 "\"--- $f\"; tail -n 60 $f; }; done", g_dir,
				 g_dir);
			if (system(cmd) != 0)
				fprintf(stderr, "test_systemd: no logs\n");
		}
		if (geteuid() == 0)
			cleanup();
	}
	for (h = 0; h < N_HIDDEN && geteuid() == 0; h++) {
		snprintf(hidden, sizeof(hidden), g_hidden_fmt[h], g_pid);
		nfqbt_rm_rf(hidden);
	}
	return ret;
}
