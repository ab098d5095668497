/* SPDX-License-Identifier: MIT */
/*
 * bench_iosigd.h - an iosigd of a benchmark's own: started in the
 * foreground with a private socket and configuration, dying with the
 * benchmark (PR_SET_PDEATHSIG), stopped with SIGTERM; its CPU time and its
 * status (the STATUS message of docs/daemon.md).  Used by bench_daemon,
 * bench_hdd and bench_tiers.
 */
#ifndef IOSIG_BENCH_IOSIGD_H
#define IOSIG_BENCH_IOSIGD_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onlyconf.h"

struct bench_iosigd {
	pid_t pid;                 /* -1 when not running */
	char sock[108];            /* sun_path */
	char cfg[4096];
};

/* d's socket DIR/NAME.sock and configuration DIR/NAME.yaml; -1 when a
 * path does not fit. */
static inline int bench_iosigd_init(struct bench_iosigd *d, const char *dir, const char *name)
{
	int a = snprintf(d->sock, sizeof(d->sock), "%s/%.32s.sock", dir, name);
	int b = snprintf(d->cfg, sizeof(d->cfg), "%s/%.32s.yaml", dir, name);

	d->pid = -1;
	return a < 0 || (size_t)a >= sizeof(d->sock) || b < 0 || (size_t)b >= sizeof(d->cfg) ? -1 : 0;
}

static inline int bench_iosigd_connect(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Starts `iosigd` (a path) for d->sock and d->cfg, its stderr to `log`
 * (NULL: /dev/null); in_child(arg), when given, runs in the child before
 * the exec (e.g. to join a cgroup).  Waits until the socket answers.
 * 0, or -1 (d->pid is then -1).
 */
static inline int bench_iosigd_start(struct bench_iosigd *d, const char *iosigd, const char *log,
				     void (*in_child)(void *), void *arg)
{
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int out = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (out >= 0)
			dup2(out, 2);
		if (in_child)
			in_child(arg);
		execl(iosigd, "iosigd", "--foreground", "--socket", d->sock, "--config", d->cfg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int fd = bench_iosigd_connect(d->sock);

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid)
			break;
		usleep(10000);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	d->pid = -1;
	return -1;
}

/*
 * Writes a configuration to `path` in which the catalog knows only the
 * mount `mnt` (of `cls`, its data directory inside it, so a tagged file
 * stays where it is opened) and the daemon runs `policy` (a spec) there,
 * with queue_depth commands in flight (0: the daemon's default) and, when
 * `tier` is not NULL, a tier "t" of that description (a YAML flow map:
 * "{ mount: /mnt/ssd, size: 1GiB, class: ssd }") and the device's
 * settings `dev_extra` (NULL, or e.g. "defer_close: yes").  0 or -1.
 */
static inline int bench_iosigd_config(const char *path, const char *mnt, const char *cls,
				      const char *policy, unsigned queue_depth, const char *tier,
				      const char *dev_extra)
{
	char entry[8500];
	const char *entries[2] = { entry, NULL };
	FILE *fp;
	int r;

	snprintf(entry, sizeof(entry), "\"%s\": { ignore: false, class: %s, data_dir: \"%s/d\" }", mnt,
		 cls, mnt);
	if (tconf_only(path, entries) < 0 || !(fp = fopen(path, "a")))
		return -1;
	/* A tier-using policy is a device's, never the default. */
	fprintf(fp, "daemon:\n  policy: \"%s\"\n", tier ? "noop" : policy);
	if (queue_depth || tier) {
		fprintf(fp, "  devices:\n    \"%s\": { policy: \"%s\"", mnt, policy);
		if (queue_depth)
			fprintf(fp, ", queue_depth: %u", queue_depth);
		if (tier)
			fprintf(fp, ", tiers: [t]");
		if (tier && dev_extra)
			fprintf(fp, ", %s", dev_extra);
		fprintf(fp, " }\n");
	}
	if (tier)
		fprintf(fp, "  tiers:\n    t: %s\n", tier);
	r = ferror(fp);
	return fclose(fp) == 0 && !r ? 0 : -1;
}

/* SIGTERM (the daemon drains) and waits; its wait status, or -1 when it
 * was not running. */
static inline int bench_iosigd_stop(struct bench_iosigd *d)
{
	int st = -1;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		if (waitpid(d->pid, &st, 0) < 0)
			st = -1;
		d->pid = -1;
	}
	return st;
}

/* CPU seconds the daemon used so far. */
static inline double bench_iosigd_cpu(const struct bench_iosigd *d)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	if (fgets(buf, sizeof(buf), fp) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	fclose(fp);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

#endif /* IOSIG_BENCH_IOSIGD_H */
