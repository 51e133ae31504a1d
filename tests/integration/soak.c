// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The soak (issue 12): the IPS (ips/nfqb-ips, two queues,
 * --user nobody) under mixed load for NFQB_SOAK_SECONDS (default 60;
 * `make soak` runs 600), with a rules reload every 2 s, an upgrade in
 * place every 5 s and a stop and fresh start every 30 s
 * (NFQB_SOAK_RESTART_S; 0: none), in a private
 * network namespace (rule with --queue-bypass, so that the stop gaps are
 * accounted, not lost). At the end:
 *   - zero packets unaccounted: every datagram without "ATTACK" arrived
 *     exactly once; every one with it was dropped by the IPS, or arrived
 *     unmarked at most once (passed without the IPS during a stop, by
 *     bypass or fail-open): reported;
 *   - the kernel dropped none while the IPS had the queues (queue_dropped,
 *     user_dropped), and both queues are empty at the end;
 *   - the IPS process's resident size and open fds are flat: sampled
 *     before each upgrade, the last samples of a run within 4 MiB and
 *     equal in fds to the first after its warm-up.
 * Not part of `make check` (time): `make soak`, or run-all.sh's 60 s stage.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define PORT		5501
#define MAX_SEQ		(8u * 1000 * 1000)
#define RATE		10000	/* datagrams per second */

/* --- traffic: paced, sizes 64..1200, every 10th carries ATTACK ----------- */

struct sender {
	pthread_t thread;
	atomic_bool stop;
	atomic_uint sent;
	int err;
};

static bool is_attack(uint32_t seq)
{
	return seq % 10 == 7;
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_in dst = nfqbt_lo_addr(PORT);
	uint64_t start = nfqbt_now_ms();
	uint8_t buf[1200];
	uint32_t i = 0;
	int fd[8], k;

	/* 8 flows over the two queues, from 127.0.K.32 + k (the flow set:
	 * the kernel's hash puts them anywhere, 8 on one queue too; nothing
	 * checked depends on where) */
	for (k = 0; k < 8; k++) {
		fd[k] = nfqbt_udp_socket(nfqbt_flow_addr(32 + k));
		if (fd[k] < 0) {
			s->err = errno;
			return NULL;
		}
	}
	while (!atomic_load(&s->stop) && i < MAX_SEQ) {
		size_t size = 64 + (i * 2654435761u) % (sizeof(buf) - 64);

		/* pace: no more than RATE per second on average */
		if ((uint64_t)i * 1000 / RATE > nfqbt_now_ms() - start) {
			usleep(500);
			continue;
		}
		nfqbt_fill_payload(buf, size, i);
		if (is_attack(i) && size >= 16)
			memcpy(buf + 8, "ATTACK", 6);
		if (sendto(fd[i % 8], buf, size, 0, (struct sockaddr *)&dst,
			   sizeof(dst)) < 0 && errno != EPERM) {
			if (errno == EAGAIN || errno == ENOBUFS ||
			    errno == EINTR) {
				usleep(100);
				continue;
			}
			s->err = errno;
			break;
		}
		atomic_store(&s->sent, ++i);
	}
	for (k = 0; k < 8; k++)
		close(fd[k]);
	return NULL;
}

/* --- the IPS process ------------------------------------------------------- */

struct ips {
	pid_t pid;
	FILE *out;
};

static void read_line(FILE *f, char *buf, size_t size)
{
	struct pollfd pfd = { .fd = fileno(f), .events = POLLIN };

	ck_assert_msg(poll(&pfd, 1, 15000) == 1, "nfqb-ips silent");
	ck_assert_msg(fgets(buf, (int)size, f), "nfqb-ips gone");
}

static void wait_line(FILE *f, const char *prefix)
{
	uint64_t t0 = nfqbt_now_ms();
	char line[512];

	while (nfqbt_now_ms() - t0 < 20000) {
		read_line(f, line, sizeof(line));
		if (!strncmp(line, prefix, strlen(prefix)))
			return;
	}
	ck_abort_msg("nfqb-ips: no line \"%s\"", prefix);
}

static struct ips ips_start(const char *path, const char *rules)
{
	struct ips p;
	int pfd[2];

	ck_assert(pipe(pfd) == 0);
	p.pid = fork();
	ck_assert(p.pid >= 0);
	if (p.pid == 0) {
		dup2(pfd[1], 1);
		/* nothing of ours (the sender's socket, the receiver's): a
		 * fresh start has the fds of the first one */
		close_range(3, ~0u, 0);
		execl(path, "nfqb-ips", "-q", "0:1", "-r", rules, "--user",
		      "nobody", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	p.out = fdopen(pfd[0], "r");
	ck_assert(p.out);
	setvbuf(p.out, NULL, _IONBF, 0);
	wait_line(p.out, "nfqb-ips: pid");
	return p;
}

static void ips_stop(struct ips *p)
{
	int status;

	ck_assert(kill(p->pid, SIGTERM) == 0);
	ck_assert(waitpid(p->pid, &status, 0) == p->pid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status),
		      "nfqb-ips status %#x", status);
	fclose(p->out);
}

/* Resident KiB and open fds of @pid. */
static void sample(pid_t pid, unsigned long *rss_kb, unsigned int *fds)
{
	char path[64], line[256];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	*rss_kb = 0;
	*fds = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	ck_assert(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "VmRSS: %lu", rss_kb);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	ck_assert(dir);
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			(*fds)++;
	closedir(dir);
}

/*
 * The descriptors nfqb-ips holds for good: the fewest of a few samples over
 * 200 ms. A reload (SIGHUP, sent every 2 s and so sometimes just before a
 * sample) holds the rules file open for a moment; a leak stays.
 */
static unsigned int settled_fds(pid_t pid)
{
	unsigned int fds, least = UINT_MAX, i;
	unsigned long rss;

	for (i = 0; i < 10; i++) {
		if (i)
			usleep(20 * 1000);
		sample(pid, &rss, &fds);
		if (fds < least)
			least = fds;
	}
	return least;
}

/* Where the flows went: the ids each queue handed out, from the samples
 * of the kernel's counters; a fresh start binds anew and counts from 0,
 * so each bind's last sample is added up (what came after it, less than
 * 100 ms of traffic, is missed: about). */
struct spread {
	unsigned long long ids[2];
	unsigned int last[2];
};

/* The kernel's drops while bound (both queues), kept across binds; the
 * ids in @sp. */
static void kernel_drops(unsigned int *dropped, unsigned int *total,
			 struct spread *sp)
{
	struct nfqb_kstats ks[4];
	int i, n = nfqb_kstats_read(ks, 4, sizeof(ks[0]));

	*dropped = 0;
	*total = 0;
	for (i = 0; i < n && i < 4; i++) {
		unsigned int q = ks[i].queue_num;

		*dropped += ks[i].queue_dropped + ks[i].queue_user_dropped;
		*total += ks[i].queue_total;
		if (q >= 2)
			continue;
		if (ks[i].id_sequence < sp->last[q])
			sp->ids[q] += sp->last[q];
		sp->last[q] = ks[i].id_sequence;
	}
}

static void print_spread(const struct spread *sp)
{
	printf("soak: flow set %d, ids per queue (about): 0 %llu, 1 %llu\n",
	       nfqbt_flow_set(), sp->ids[0] + sp->last[0],
	       sp->ids[1] + sp->last[1]);
	fflush(stdout);
}

/* Diagnostics: who holds a queue after the IPS exited (the netlink
 * socket's inode from /proc/net/netlink, then /proc/ * /fd). */
static void print_holders(void)
{
	struct nfqb_kstats ks[4];
	int i, n = nfqb_kstats_read(ks, 4, sizeof(ks[0]));

	for (i = 0; i < n && i < 4; i++) {
		char line[512], want[64];
		unsigned long inode = 0;
		FILE *f = fopen("/proc/net/netlink", "re");
		DIR *proc;
		struct dirent *d;

		printf("soak: queue %u still bound to port id %u (%u queued)\n",
		       ks[i].queue_num, ks[i].portid, ks[i].queue_total);
		while (f && fgets(line, sizeof(line), f)) {
			unsigned int proto, pid;
			unsigned long ino;

			if (sscanf(line, "%*s %u %u %*s %*s %*s %*s %*s %*s %*s "
				   "%lu", &proto, &pid, &ino) == 3 &&
			    proto == 12 && pid == ks[i].portid)
				inode = ino;
		}
		if (f)
			fclose(f);
		snprintf(want, sizeof(want), "socket:[%lu]", inode);
		proc = opendir("/proc");
		while (proc && (d = readdir(proc))) {
			char dir[300], link[600], target[128];
			struct dirent *e;
			DIR *fds;

			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			snprintf(dir, sizeof(dir), "/proc/%s/fd", d->d_name);
			fds = opendir(dir);
			while (fds && (e = readdir(fds))) {
				ssize_t k;

				snprintf(link, sizeof(link), "%s/%s", dir,
					 e->d_name);
				k = readlink(link, target, sizeof(target) - 1);
				if (k > 0) {
					target[k] = 0;
					if (!strcmp(target, want))
						printf("soak: held by pid %s "
						       "fd %s\n", d->d_name,
						       e->d_name);
				}
			}
			if (fds)
				closedir(fds);
		}
		if (proc)
			closedir(proc);
	}
	fflush(stdout);
}

START_TEST(test_soak)
{
	const char *env = getenv("NFQB_SOAK_SECONDS");
	unsigned int seconds = env ? (unsigned int)atoi(env) : 60;
	const char *renv = getenv("NFQB_SOAK_RESTART_S");
	/* seconds between stops and fresh starts, 0: none */
	uint64_t restart_ms = (renv ? (uint64_t)atoi(renv) : 30) * 1000;
	struct nfqbt_rx_opts ro = { .quiet_ms = 5000, .max_seq = MAX_SEQ,
				    .timeout_ms = (seconds + 60) * 1000 };
	char ips_path[PATH_MAX], rules[] = "/tmp/nfqb-soak-rules-XXXXXX";
	unsigned long rss0 = 0, rss = 0, rss_max_growth = 0;
	unsigned int fds0 = 0, fds = 0, kdrop, ktotal, drops = 0;
	unsigned int reloads = 0, upgrades = 0, restarts = 0;
	unsigned int sent, i, lost = 0, attack_passed = 0, dup = 0;
	uint64_t t0, last_reload, last_upgrade, last_restart;
	struct sender s = { 0 };
	struct spread sp = { .ids = { 0, 0 } };
	struct nfqbt_rx *rx;
	struct ips p;

	/* a copy nobody can run again on an upgrade, wherever the build
	 * tree is (under /root, nobody may not load its library) */
	nfqbt_ips_staged(ips_path, sizeof(ips_path));
	ck_assert_msg(getpwnam("nobody"), "no user nobody");
	nfqbt_netns_enter();
	nfqbt_iptables("-A OUTPUT -o lo -p udp --dport %u -j NFQUEUE "
		       "--queue-balance 0:1 --queue-bypass", PORT);
	nfqbt_ips_rules(rules, "drop ATTACK\nmark %u 9\n", PORT);
	rx = nfqbt_rx_start(PORT, &ro);
	p = ips_start(ips_path, rules);
	ck_assert(pthread_create(&s.thread, NULL, sender_main, &s) == 0);
	t0 = last_reload = last_upgrade = last_restart = nfqbt_now_ms();
	while (nfqbt_now_ms() - t0 < seconds * 1000ull) {
		uint64_t now;

		usleep(100 * 1000);
		now = nfqbt_now_ms();
		kernel_drops(&kdrop, &ktotal, &sp);
		if (kdrop > drops)
			drops = kdrop;	/* a queue's counters die with it */
		if (now - last_reload >= 2000) {
			ck_assert(kill(p.pid, SIGHUP) == 0);
			reloads++;
			last_reload = now;
		}
		if (now - last_upgrade >= 5000) {
			sample(p.pid, &rss, &fds);
			fds = settled_fds(p.pid);
			if (!rss0) {		/* after the warm-up */
				rss0 = rss;
				fds0 = fds;
			}
			if (rss > rss0 && rss - rss0 > rss_max_growth)
				rss_max_growth = rss - rss0;
			ck_assert_msg(fds == fds0, "nfqb-ips fds %u, first %u",
				      fds, fds0);
			ck_assert(kill(p.pid, SIGUSR2) == 0);
			wait_line(p.out, "nfqb-ips: pid");
			if (getenv("NFQB_SOAK_TRACE"))
				printf("soak: upgrade at %llu ms\n",
				       (unsigned long long)(now - t0));
			upgrades++;
			last_upgrade = nfqbt_now_ms();
		}
		if (restart_ms && now - last_restart >= restart_ms) {
			ips_stop(&p);
			print_holders();	/* nothing, normally */
			p = ips_start(ips_path, rules);
			printf("soak: restart at %llu ms .. %llu ms\n",
			       (unsigned long long)(now - t0),
			       (unsigned long long)(nfqbt_now_ms() - t0));
			fflush(stdout);
			restarts++;
			last_restart = nfqbt_now_ms();
		}
	}
	atomic_store(&s.stop, true);
	pthread_join(s.thread, NULL);
	ck_assert_msg(s.err == 0, "sender: %s", strerror(s.err));
	sent = atomic_load(&s.sent);
	/* everything decided: both kernel queues empty */
	t0 = nfqbt_now_ms();
	do {
		kernel_drops(&kdrop, &ktotal, &sp);
		if (!ktotal)
			break;
		usleep(1000);
	} while (nfqbt_now_ms() - t0 < 10000);
	print_spread(&sp);
	ck_assert_msg(!ktotal, "%u packets still queued at the end", ktotal);
	if (kdrop > drops)
		drops = kdrop;
	sample(p.pid, &rss, &fds);
	if (rss > rss0 && rss - rss0 > rss_max_growth)
		rss_max_growth = rss - rss0;
	ips_stop(&p);
	/* the receiver has what was accepted (bounded wait for the tail) */
	t0 = nfqbt_now_ms();
	while (nfqbt_now_ms() - t0 < 10000) {
		unsigned int a = nfqbt_rx_total(rx);

		usleep(200 * 1000);
		if (nfqbt_rx_total(rx) == a)
			break;
	}
	nfqbt_rx_stop(rx);
	unlink(rules);
	for (i = 0; i < sent; i++) {
		unsigned int n = nfqbt_rx_count(rx, i);
		uint32_t mark = 0;
		bool marked = nfqbt_rx_mark(rx, i, &mark) && mark == 9;

		if (n > 1)
			dup++;
		if (!is_attack(i)) {
			if (n != 1 && lost++ < 10)
				printf("soak: seq %u (sent at about %u ms) arrived "
				       "%u times\n", i, i / (RATE / 1000), n);
		} else if (n) {
			ck_assert_msg(!marked, "seq %u with ATTACK accepted by "
				      "the IPS", i);
			attack_passed++;
		}
	}
	printf("soak %u s: sent %u, lost %u, duplicated %u, ATTACK passed "
	       "during stops %u of %u; %u reloads, %u upgrades, %u restarts; "
	       "kernel drops %u; nfqb-ips RSS %lu KiB after warm-up, at most "
	       "+%lu KiB, now %lu KiB; fds %u -> %u\n", seconds, sent, lost,
	       dup, attack_passed, sent / 10, reloads, upgrades, restarts,
	       drops, rss0, rss_max_growth, rss, fds0, fds);
	{
		/* the receiver's own drops, if any, are not the IPS's */
		char l1[1024], l2[1024];
		FILE *f = fopen("/proc/net/snmp", "re");

		while (f && fgets(l1, sizeof(l1), f))
			if (!strncmp(l1, "Udp:", 4) && fgets(l2, sizeof(l2), f)) {
				printf("soak: %s      %s", l1, l2);
				break;
			}
		if (f)
			fclose(f);
	}
	fflush(stdout);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(dup, 0);
	ck_assert_uint_eq(drops, 0);
	ck_assert_msg(rss_max_growth < 4096, "RSS grew by %lu KiB",
		      rss_max_growth);
	ck_assert_uint_eq(fds, fds0);
	ck_assert(upgrades >= 1 && sent > 0);
	nfqbt_rx_free(rx);
}
END_TEST

int main(void)
{
	const char *env = getenv("NFQB_SOAK_SECONDS");
	unsigned int seconds = env ? (unsigned int)atoi(env) : 60;
	Suite *su = suite_create("soak");

	tcase_add_test(nfqbt_tcase(su, "soak", (double)seconds + 120),
		       test_soak);
	return nfqbt_run_suite("soak", su);
}
