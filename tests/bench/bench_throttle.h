/* SPDX-License-Identifier: MIT */
/*
 * bench_throttle.h - the rig of the benchmarks on this machine's real
 * devices (bench_hdd, bench_tiers): a private mount namespace and work
 * directory, ext4 loop devices made slow (or not) with the cgroup v1 blkio
 * throttle, writer processes in that cgroup started together, an iosigd of
 * the benchmark's own in it, and the figures (samples, quantiles).
 *
 * The throttle: blkio.throttle.{write,read}_{bps,iops}_device of a cgroup
 * of the benchmark's own, per device; the writers and the daemon run in
 * that cgroup, so every bio they submit (a plain writer's fsync, the
 * daemon's sync_file_range and fsync) waits for its share of the bandwidth
 * and of the I/O operations: a request costs at least 1/iops, whatever its
 * size, as a seek does on a disk, and a large one costs its bytes/bps.
 *
 * Everything the rig makes goes with it: the mounts (a private namespace),
 * the loop devices (auto-clear), the daemon and writers (they die with the
 * benchmark), the cgroup (removed at exit; one left by a killed run is
 * removed by the next).  Root only; rig_skip() exits 77 with the reason.
 *
 * One program includes it, after defining RIG_NAME ("bench_hdd") and
 * RIG_CG_PREFIX ("iosig-bench-hdd."): its state is the program's.
 */
#ifndef IOSIG_BENCH_THROTTLE_H
#define IOSIG_BENCH_THROTTLE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench_iosigd.h"
#include "mounts.h"
#include "proto.h"

#define RIG_PATH 4096
#define RIG_WRITERS_MAX 64

/* Samples of one figure. */
struct samples {
	double *v;
	size_t n, cap;
};

static char rig_work[RIG_PATH], rig_cgroup[RIG_PATH];
static pid_t rig_writers[RIG_WRITERS_MAX];
static unsigned rig_nwriters;
static struct bench_iosigd rig_iosigd = { .pid = -1 };
static bool rig_mounted;

static inline void rig_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void rig_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static inline void add(struct samples *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror(RIG_NAME);
			exit(1);
		}
	}
	s->v[s->n++] = v;
}

static inline double mean(const struct samples *s)
{
	double t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->v[i];
	return s->n ? t / (double)s->n : -1;
}

/* The q-quantile (sorts in place). */
static inline double quantile(struct samples *s, double q)
{
	size_t i;

	if (!s->n)
		return -1;
	qsort(s->v, s->n, sizeof(*s->v), bench_cmp_double);
	i = (size_t)(q * (double)(s->n - 1) + 0.5);
	return s->v[i < s->n ? i : s->n - 1];
}

static inline double median(struct samples *s)
{
	return s->n ? bench_median(s->v, (unsigned)s->n) : -1;
}

/* A command-line number from 1 to max; else exit 2 with what is wrong. */
static inline unsigned long long rig_number(const char *s, const char *what, unsigned long long max)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || e == s || *e || !v || v > max) {
		fprintf(stderr, RIG_NAME ": %s: '%s' is not a number from 1 to %llu\n", what, s, max);
		exit(2);
	}
	return v;
}

/* ---- set-up and teardown ---- */

static inline void rig_cleanup(void)
{
	for (unsigned i = 0; i < rig_nwriters; i++) {
		if (rig_writers[i] > 0) {
			kill(rig_writers[i], SIGKILL);
			waitpid(rig_writers[i], NULL, 0);
			rig_writers[i] = 0;
		}
	}
	rig_nwriters = 0;
	if (rig_iosigd.pid > 0) {
		kill(rig_iosigd.pid, SIGKILL);
		waitpid(rig_iosigd.pid, NULL, 0);
		rig_iosigd.pid = -1;
	}
	/* The cgroup goes once its last member is gone (they are). */
	for (int i = 0; rig_cgroup[0] && i < 100; i++) {
		if (rmdir(rig_cgroup) == 0 || errno == ENOENT)
			break;
		usleep(20000);
	}
	rig_cgroup[0] = '\0';
	if (rig_mounted)
		tmnt_umount_all();
	rig_mounted = false;
	/* IOSIG_BENCH_KEEP=1: the work directory stays (the daemons' logs,
	 * the writers' output) for a look after a failure. */
	if (rig_work[0] && !getenv("IOSIG_BENCH_KEEP"))
		tmnt_sh("rm -rf '%s'", rig_work);
	else if (rig_work[0])
		fprintf(stderr, RIG_NAME ": kept %s\n", rig_work);
	rig_work[0] = '\0';
}

static inline void rig_on_signal(int sig)
{
	rig_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Cannot run here: the reason, exit 77. */
static inline void rig_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf(RIG_NAME ": skipped: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	rig_cleanup();
	exit(77);
}

static inline void rig_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, RIG_NAME ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	rig_cleanup();
	exit(1);
}

/* printf into buf[RIG_PATH]; a path that does not fit is an error. */
static inline void pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, RIG_PATH, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= RIG_PATH)
		rig_fail("a path is too long (%.64s...): use a shorter --dir", buf);
}

static inline int rig_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
	size_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		r = -errno;
	close(fd);
	return r;
}

/* Mount point of a cgroup v1 hierarchy with the blkio controller, from
 * mountinfo; or one mounted at work/blkio (in our private namespace). */
static inline void rig_find_blkio(char *out)
{
	char line[8192];
	FILE *fp = fopen("/proc/self/mountinfo", "r");
	int r;

	while (fp && fgets(line, sizeof(line), fp)) {
		char *sep = strstr(line, " - "), mp[4096], fstype[64], src[4096], super[1024];
		char *f = line;

		if (!sep || sscanf(sep + 3, "%63s %4095s %1023s", fstype, src, super) != 3 ||
		    strcmp(fstype, "cgroup"))
			continue;
		/* mount point: the fifth field */
		for (int i = 0; i < 4 && f; i++)
			f = strchr(f + 1, ' ');
		if (!f || sscanf(f + 1, "%4095s", mp) != 1)
			continue;
		for (char *o = strtok(super, ","); o; o = strtok(NULL, ","))
			if (!strcmp(o, "blkio")) {
				pathf(out, "%s", mp);
				fclose(fp);
				return;
			}
	}
	if (fp)
		fclose(fp);
	pathf(out, "%s/blkio", rig_work);
	r = tmnt_mount("none", out, "cgroup", 0, "blkio");
	if (r < 0)
		rig_skip("no cgroup v1 blkio hierarchy (mount -t cgroup -o blkio: %s); the throttle needs one",
			 strerror(-r));
}

/* Removes the cgroups of earlier runs that were killed (their process is
 * gone, so are their members: rmdir succeeds only when empty). */
static inline void rig_remove_stale(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[RIG_PATH];
		long pid;

		if (strncmp(e->d_name, RIG_CG_PREFIX, strlen(RIG_CG_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(RIG_CG_PREFIX), NULL, 10);
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		pathf(path, "%s/%s", root, e->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

/*
 * The work directory (under dir), a private mount namespace and the
 * benchmark's blkio cgroup; skips (exit 77) where that cannot be.  Also
 * installs the signal handlers that clean up.
 */
static inline void rig_setup(const char *dir)
{
	const char *why = tmnt_unavailable(true);
	char root[RIG_PATH];
	int r;

	signal(SIGINT, rig_on_signal);
	signal(SIGTERM, rig_on_signal);
	signal(SIGHUP, rig_on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (why)
		rig_skip("%s", why);
	if (strlen(dir) > 200)
		rig_fail("--dir %.64s...: a path of at most 200 bytes, please", dir);
	pathf(rig_work, "%s/%sXXXXXX", dir, RIG_CG_PREFIX);
	if (!mkdtemp(rig_work)) {
		rig_work[0] = '\0';
		rig_fail("mkdtemp: %s", strerror(errno));
	}
	r = tmnt_private();
	if (r < 0)
		rig_skip("cannot make a private mount namespace: %s", strerror(-r));
	rig_find_blkio(root);
	rig_remove_stale(root);
	pathf(rig_cgroup, "%s/%s%d", root, RIG_CG_PREFIX, (int)getpid());
	if (mkdir(rig_cgroup, 0755) < 0) {
		int e = errno;

		rig_cgroup[0] = '\0';
		rig_skip("cannot make a blkio cgroup: %s", strerror(e));
	}
}

/* An ext4 of `bytes` on a loop device mounted at work/NAME (mnt); its
 * device number (dev: its /dev path). */
static inline dev_t rig_loop(const char *name, unsigned long long bytes, char *mnt, char *dev, size_t devsz)
{
	char img[RIG_PATH];
	struct stat st;

	pathf(img, "%s/%s.img", rig_work, name);
	pathf(mnt, "%s/%s", rig_work, name);
	if (tmnt_mkfs(img, bytes, "ext4", "-q -F") < 0)
		rig_fail("mkfs.ext4 %s failed", img);
	if (tmnt_loop_mount(img, 0, mnt, "ext4", 0, NULL, dev, devsz) < 0)
		rig_fail("cannot mount %s on a loop device", img);
	rig_mounted = true;
	if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
		rig_fail("%s: not a block device", dev);
	return st.st_rdev;
}

/* A tmpfs of `bytes` at work/NAME (mnt). */
static inline void rig_tmpfs(const char *name, unsigned long long bytes, char *mnt)
{
	char opts[64];

	pathf(mnt, "%s/%s", rig_work, name);
	snprintf(opts, sizeof(opts), "size=%llu", bytes);
	if (tmnt_mount("tmpfs", mnt, "tmpfs", 0, opts) < 0)
		rig_fail("cannot mount a tmpfs at %s", mnt);
	rig_mounted = true;
}

static inline void rig_set_limit(dev_t devno, const char *file, uint64_t value)
{
	char path[RIG_PATH], text[64];
	int r;

	pathf(path, "%s/%s", rig_cgroup, file);
	snprintf(text, sizeof(text), "%u:%u %" PRIu64 "\n", major(devno), minor(devno), value);
	r = rig_write_file(path, text);
	if (r == -ENOENT)
		rig_skip("%s: no such file: the kernel has no blkio throttling (CONFIG_BLK_DEV_THROTTLING)", path);
	if (r < 0)
		rig_fail("cannot set the throttle: %s", strerror(-r));
}

/* The device's throttle for the cgroup: bytes and operations per second,
 * writes and reads alike. */
static inline void rig_throttle(dev_t devno, uint64_t bps, uint64_t iops)
{
	rig_set_limit(devno, "blkio.throttle.write_bps_device", bps);
	rig_set_limit(devno, "blkio.throttle.write_iops_device", iops);
	rig_set_limit(devno, "blkio.throttle.read_bps_device", bps);
	rig_set_limit(devno, "blkio.throttle.read_iops_device", iops);
}

/* In a child: joins the throttled cgroup. */
static inline void rig_join_cgroup(void *arg)
{
	char path[RIG_PATH];

	(void)arg;
	pathf(path, "%s/cgroup.procs", rig_cgroup);
	if (rig_write_file(path, "0\n") < 0) {
		fprintf(stderr, RIG_NAME ": cannot join %s\n", rig_cgroup);
		_exit(126);
	}
}

/* The throttle's count of write operations and bytes the cgroup submitted
 * to the device. */
static inline void rig_throttled(dev_t devno, uint64_t *ios, uint64_t *bytes)
{
	static const char *const files[2] = { "blkio.throttle.io_serviced", "blkio.throttle.io_service_bytes" };
	uint64_t *out[2] = { ios, bytes };

	for (int k = 0; k < 2; k++) {
		char path[RIG_PATH], line[256], want[64];
		FILE *fp;

		*out[k] = 0;
		pathf(path, "%s/%s", rig_cgroup, files[k]);
		snprintf(want, sizeof(want), "%u:%u Write ", major(devno), minor(devno));
		fp = fopen(path, "r");
		while (fp && fgets(line, sizeof(line), fp))
			if (!strncmp(line, want, strlen(want)))
				*out[k] = strtoull(line + strlen(want), NULL, 10);
		if (fp)
			fclose(fp);
	}
}

/* Bytes written to the device by anyone (its /sys/dev/block stat: also
 * the kernel's own write-back, which the cgroup v1 throttle does not see). */
static inline uint64_t rig_dev_written(dev_t devno)
{
	char path[128];
	unsigned long long f[7] = { 0 };
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", major(devno), minor(devno));
	fp = fopen(path, "r");
	if (!fp || fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5],
			  &f[6]) != 7)
		rig_fail("%s: unreadable", path);
	fclose(fp);
	return (uint64_t)f[6] * 512;
}

/* syncfs of the filesystem at mnt (outside the cgroup: unthrottled). */
static inline void rig_syncfs(const char *mnt)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || syncfs(fd) < 0)
		rig_fail("syncfs %s: %s", mnt, strerror(errno));
	close(fd);
}

static inline int rig_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes the tree at dir (not through system(), which would ignore a
 * SIGINT meanwhile). */
static inline void rig_remove_tree(const char *dir)
{
	nftw(dir, rig_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the daemon ---- */

/* Starts rig_iosigd (its configuration written by the caller at
 * rig_iosigd.cfg, after rig_iosigd_init) in the cgroup, its log at
 * work/iosigd-NAME.log. */
static inline void rig_iosigd_init(const char *name)
{
	if (bench_iosigd_init(&rig_iosigd, rig_work, name) < 0)
		rig_fail("%s: a path is too long", rig_work);
}

static inline void rig_iosigd_start(const char *name)
{
	char log[RIG_PATH];

	pathf(log, "%s/iosigd-%s.log", rig_work, name);
	if (bench_iosigd_start(&rig_iosigd, IOSIGD, log, rig_join_cgroup, NULL) < 0) {
		/* Its log goes with the work directory: show it first. */
		char text[4096] = "";
		FILE *fp = fopen(log, "r");
		size_t n = fp ? fread(text, 1, sizeof(text) - 1, fp) : 0;

		if (fp)
			fclose(fp);
		text[n] = '\0';
		rig_fail("cannot start iosigd for %s:\n%s", name, text);
	}
}

static inline void rig_iosigd_stop(const char *name)
{
	int rc = bench_iosigd_stop(&rig_iosigd);

	if (rc < 0 || !WIFEXITED(rc) || WEXITSTATUS(rc))
		rig_fail("%s: iosigd did not exit 0 on SIGTERM", name);
}

/* The daemon's status JSON (malloc'd), or NULL. */
static inline char *rig_daemon_status(const char *sock)
{
	char buf[IOSD_MSG_MAX], *text = NULL;
	size_t len = 0;
	int fd = bench_iosigd_connect(sock), n;
	struct iosd_msg m;
	const char *why;

	n = iosd_encode(buf, sizeof(buf), IOSD_VERSION, IOSD_STATUS, 1, NULL, 0, NULL, 0);
	if (fd < 0 || n < 0 || send(fd, buf, (size_t)n, 0) != n)
		goto fail;
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		char *t;

		if (got <= 0 || iosd_decode(buf, (size_t)got, 0, &m, &why) < 0 ||
		    m.hdr.type != IOSD_STATUS_REPLY)
			goto fail;
		t = realloc(text, len + m.text_len + 1);
		if (!t)
			goto fail;
		text = t;
		memcpy(text + len, m.text, m.text_len);
		len += m.text_len;
		text[len] = '\0';
		if (!(m.u.status.flags & IOSD_STATUS_MORE))
			break;
	}
	close(fd);
	return text;
fail:
	if (fd >= 0)
		close(fd);
	free(text);
	return NULL;
}

/* The number after "key": at or after p, or -1. */
static inline double json_field(const char *p, const char *key)
{
	char k[128];

	snprintf(k, sizeof(k), "\"%s\"", key);
	p = p ? strstr(p, k) : NULL;
	if (!p)
		return -1;
	p += strlen(k);
	while (*p == ' ' || *p == ':')
		p++;
	return atof(p);
}

/* ---- the writers (daemon_io mapreduce) ---- */

/*
 * Starts argv (a daemon_io mapreduce role) in the cgroup, its stdout to
 * `out`, descriptor 3 the start pipe (go), 4 the ready pipe; through the
 * daemon (rig_iosigd) under iosig-redirect tagging argv's FILE (argv[3])
 * with `sig` when sig is not NULL.
 */
static inline void rig_spawn(char *const argv[], const char *sig, const char *out, int go, int ready)
{
	pid_t pid;

	if (rig_nwriters == RIG_WRITERS_MAX)
		rig_fail("too many writers");
	pid = fork();
	if (pid < 0)
		rig_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int a = fcntl(go, F_DUPFD, 10), b = fcntl(ready, F_DUPFD, 10);
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char *args[16];
		int n = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (a < 0 || b < 0 || fd < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0 || dup2(fd, 1) < 0)
			_exit(126);
		close(a);
		close(b);
		close(fd);
		rig_join_cgroup(NULL);
		if (sig) {
			setenv("IOSIG_DAEMON_SOCKET", rig_iosigd.sock, 1);
			setenv("IOSIG_CONFIG", rig_iosigd.cfg, 1);
			args[n++] = (char *)"iosig-redirect";
			args[n++] = (char *)"-q";
			args[n++] = (char *)"-s";
			args[n++] = (char *)sig;
			args[n++] = argv[3];
			args[n++] = (char *)"--";
		}
		args[n++] = (char *)DAEMON_IO_PLAIN;
		for (int i = 1; argv[i] && n < 15; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execv(sig ? IOSIG_REDIRECT : DAEMON_IO_PLAIN, args);
		_exit(127);
	}
	rig_writers[rig_nwriters++] = pid;
}

/* Waits for every writer; a failed one fails the benchmark. */
static inline void rig_wait_writers(const char *name)
{
	for (unsigned i = 0; i < rig_nwriters; i++) {
		int st;

		if (waitpid(rig_writers[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			rig_writers[i] = 0;
			rig_fail("%s: a writer failed", name);
		}
		rig_writers[i] = 0;
	}
	rig_nwriters = 0;
}

/* Reads a writer's output: its end time after t0 (returned) and its
 * calls' latencies (us) into lat. */
static inline double rig_collect(const char *out, double t0, struct samples *lat)
{
	char *text = NULL, *p;
	size_t cap = 0;
	FILE *fp = fopen(out, "r");
	ssize_t n = fp ? getdelim(&text, &cap, '\0', fp) : -1;
	double end;

	if (fp)
		fclose(fp);
	if (n <= 0 || (end = json_field(text, "end")) <= 0 || !(p = strstr(text, "\"lat_us\": [")))
		rig_fail("a writer printed nothing useful (%s)", out);
	p += strlen("\"lat_us\": [");
	while (*p && *p != ']') {
		char *e;
		double v = strtod(p, &e);

		if (e == p)
			break;
		add(lat, v);
		p = e;
		while (*p == ',' || *p == ' ')
			p++;
	}
	free(text);
	return end - t0;
}

#endif /* IOSIG_BENCH_THROTTLE_H */
