/* SPDX-License-Identifier: MIT */
/*
 * bench_hdd.c - what the home-device policies do on this machine's real
 * devices (docs/daemon.md, "Measured"): concurrent MapReduce-like writer
 * processes, as in the BID paper's workloads - bulky sequential writers
 * and small interrupting ones - on an ext4 loop device made slow with the
 * cgroup v1 blkio throttle, plainly and through iosigd under each policy,
 * side by side in one run on the same mount.  JSON on stdout.
 *
 * The device: blkio.throttle.{write,read}_{bps,iops}_device of a cgroup
 * of its own for the loop device; the writers and the daemon run in that
 * cgroup, so every bio they submit (a plain writer's fsync, the daemon's
 * sync_file_range and fsync) waits for its share of the bandwidth and of
 * the I/O operations: a request costs at least 1/iops, whatever its size,
 * as a seek does on a disk, and a large one costs its bytes/bps.
 *
 * The workload (daemon_io mapreduce; tagged through iosig-redirect):
 *   bulk   writers: BULK_MiB each, sequential write() calls of 256 KiB,
 *          then fsync + close ('sequential size_per_io(256*KiB)');
 *   small  writers: 4 KiB records at random offsets, each write() +
 *          fdatasync, 10 ms apart ('random size_per_io(4*KiB)').
 * Per mode (plain, then one iosigd per policy): the makespan (start to the
 * last writer's data durable), each class's completion (mean, max), the
 * latency of each call (bulk: write(); small: write() + fdatasync) - mean
 * and p99 - and the device's operations and bytes (the throttle's own
 * counters: what the cgroup submitted); through the daemon its commands
 * and mean request latency.  Then each policy's ratios to noop.
 *
 * Root only, with a cgroup v1 blkio hierarchy (mounted, or mountable in a
 * private mount namespace); else exit 77 with the reason.  Everything it
 * makes goes with it: the mount (a private namespace), the loop device
 * (auto-clear), the daemon and writers (they die with it), the cgroup
 * (removed at exit; one left by a killed run is removed by the next).
 *
 *   bench_hdd [--size N | --quick] [--rounds N] [--bps BYTES] [--iops N] [--bulk N]
 *             [--small N] [--queue-depth N] [--policies LIST] [--dir DIR]
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
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
#include "json.h"
#include "mounts.h"
#include "policy.h"
#include "proto.h"

#define MiB (1024ull * 1024)
#define MODES_MAX 16
#define WRITERS_MAX 64
#define CG_PREFIX "iosig-bench-hdd."
#define PATH_LEN 4096

struct opts {
	unsigned size, rounds, bulk, small, queue_depth;
	uint64_t bulk_bytes, records;      /* per bulk writer; per small writer */
	uint64_t bps, iops;
	char policies[512];
	const char *dir;             /* work directory's parent */
};

/* Samples of one figure. */
struct samples {
	double *v;
	size_t n, cap;
};

struct mode {
	const char *name;            /* "plain" or a policy */
	bool daemon;
	struct samples makespan, bulk_done_mean, bulk_done_max, small_done_mean, small_done_max;
	struct samples bulk_lat, small_lat;  /* us */
	uint64_t ios, bytes, written;       /* summed over rounds */
	struct samples d_commands, d_requests, d_expedited, d_latency_ms;
};

static char work[PATH_LEN], mnt[PATH_LEN], cgroup[PATH_LEN], dev[64];
static dev_t devno;
static pid_t writers[WRITERS_MAX];
static unsigned nwriters;
static struct bench_iosigd iosigd = { .pid = -1 };
static bool mounted;

static void add(struct samples *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("bench_hdd");
			exit(1);
		}
	}
	s->v[s->n++] = v;
}

static double mean(const struct samples *s)
{
	double t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->v[i];
	return s->n ? t / (double)s->n : -1;
}

/* The q-quantile (sorts in place). */
static double quantile(struct samples *s, double q)
{
	size_t i;

	if (!s->n)
		return -1;
	qsort(s->v, s->n, sizeof(*s->v), bench_cmp_double);
	i = (size_t)(q * (double)(s->n - 1) + 0.5);
	return s->v[i < s->n ? i : s->n - 1];
}

static double median(struct samples *s)
{
	return s->n ? bench_median(s->v, (unsigned)s->n) : -1;
}

/* ---- set-up and teardown ---- */

static void cleanup(void)
{
	for (unsigned i = 0; i < nwriters; i++) {
		if (writers[i] > 0) {
			kill(writers[i], SIGKILL);
			waitpid(writers[i], NULL, 0);
			writers[i] = 0;
		}
	}
	nwriters = 0;
	if (iosigd.pid > 0) {
		kill(iosigd.pid, SIGKILL);
		waitpid(iosigd.pid, NULL, 0);
		iosigd.pid = -1;
	}
	/* The cgroup goes once its last member is gone (they are). */
	for (int i = 0; cgroup[0] && i < 100; i++) {
		if (rmdir(cgroup) == 0 || errno == ENOENT)
			break;
		usleep(20000);
	}
	cgroup[0] = '\0';
	if (mounted)
		tmnt_umount_all();
	mounted = false;
	if (work[0])
		tmnt_sh("rm -rf '%s'", work);
	work[0] = '\0';
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Cannot run here: the reason, exit 77. */
static void skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("bench_hdd: skipped: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	cleanup();
	exit(77);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_hdd: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	cleanup();
	exit(1);
}

/* printf into buf[PATH_LEN]; a path that does not fit is an error. */
static void pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_LEN, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_LEN)
		fail("a path is too long (%.64s...): use a shorter --dir", buf);
}

static int write_file(const char *path, const char *text)
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
static void find_blkio(char *out)
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
	pathf(out, "%s/blkio", work);
	r = tmnt_mount("none", out, "cgroup", 0, "blkio");
	if (r < 0)
		skip("no cgroup v1 blkio hierarchy (mount -t cgroup -o blkio: %s); the throttle needs one",
		     strerror(-r));
}

/* Removes the cgroups of earlier runs that were killed (their process is
 * gone, so are their members: rmdir succeeds only when empty). */
static void remove_stale(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_LEN];
		long pid;

		if (strncmp(e->d_name, CG_PREFIX, strlen(CG_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(CG_PREFIX), NULL, 10);
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		pathf(path, "%s/%s", root, e->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

static void set_limit(const char *file, uint64_t value)
{
	char path[PATH_LEN], text[64];
	int r;

	pathf(path, "%s/%s", cgroup, file);
	snprintf(text, sizeof(text), "%u:%u %" PRIu64 "\n", major(devno), minor(devno), value);
	r = write_file(path, text);
	if (r == -ENOENT)
		skip("%s: no such file: the kernel has no blkio throttling (CONFIG_BLK_DEV_THROTTLING)", path);
	if (r < 0)
		fail("cannot set the throttle: %s", strerror(-r));
}

static void setup(const struct opts *o)
{
	const char *why = tmnt_unavailable(true);
	char img[PATH_LEN], root[PATH_LEN];
	struct stat st;
	int r;

	if (why)
		skip("%s", why);
	if (strlen(o->dir) > 200)
		fail("--dir %.64s...: a path of at most 200 bytes, please", o->dir);
	pathf(work, "%s/iosig-bench-hdd.XXXXXX", o->dir);
	if (!mkdtemp(work)) {
		work[0] = '\0';
		fail("mkdtemp: %s", strerror(errno));
	}
	r = tmnt_private();
	if (r < 0)
		skip("cannot make a private mount namespace: %s", strerror(-r));
	find_blkio(root);
	pathf(img, "%s/ext4.img", work);
	pathf(mnt, "%s/mnt", work);
	if (tmnt_mkfs(img, (unsigned long long)(2 + o->size) << 30, "ext4", "-q -F") < 0)
		fail("mkfs.ext4 %s failed", img);
	if (tmnt_loop_mount(img, 0, mnt, "ext4", 0, NULL, dev, sizeof(dev)) < 0)
		fail("cannot mount %s on a loop device", img);
	mounted = true;
	if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
		fail("%s: not a block device", dev);
	devno = st.st_rdev;
	remove_stale(root);
	pathf(cgroup, "%s/%s%d", root, CG_PREFIX, (int)getpid());
	if (mkdir(cgroup, 0755) < 0) {
		int e = errno;

		cgroup[0] = '\0';
		skip("cannot make a blkio cgroup: %s", strerror(e));
	}
	set_limit("blkio.throttle.write_bps_device", o->bps);
	set_limit("blkio.throttle.write_iops_device", o->iops);
	set_limit("blkio.throttle.read_bps_device", o->bps);
	set_limit("blkio.throttle.read_iops_device", o->iops);
}

/* In a child: joins the throttled cgroup. */
static void join_cgroup(void *arg)
{
	char path[PATH_LEN];

	(void)arg;
	pathf(path, "%s/cgroup.procs", cgroup);
	if (write_file(path, "0\n") < 0) {
		fprintf(stderr, "bench_hdd: cannot join %s\n", cgroup);
		_exit(126);
	}
}

/* The throttle's count of write operations and bytes on the device. */
static void throttled(uint64_t *ios, uint64_t *bytes)
{
	static const char *const files[2] = { "blkio.throttle.io_serviced", "blkio.throttle.io_service_bytes" };
	uint64_t *out[2] = { ios, bytes };

	for (int k = 0; k < 2; k++) {
		char path[PATH_LEN], line[256], want[64];
		FILE *fp;

		*out[k] = 0;
		pathf(path, "%s/%s", cgroup, files[k]);
		snprintf(want, sizeof(want), "%u:%u Write ", major(devno), minor(devno));
		fp = fopen(path, "r");
		while (fp && fgets(line, sizeof(line), fp))
			if (!strncmp(line, want, strlen(want)))
				*out[k] = strtoull(line + strlen(want), NULL, 10);
		if (fp)
			fclose(fp);
	}
}

/* ---- the daemon's status ---- */

/* The daemon's status JSON (malloc'd), or NULL. */
static char *daemon_status(const char *sock)
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
static double json_field(const char *p, const char *key)
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

/* ---- one mode ---- */

static const char *signature(bool bulk)
{
	return bulk ? "sequential size_per_io(256*KiB)" : "random size_per_io(4*KiB)";
}

static void spawn(const struct opts *o, const struct mode *md, unsigned i, const char *dir,
		  const char *out, int go, int ready)
{
	bool bulk = i < o->bulk;
	char file[PATH_LEN], bytes[32], io[32], seed[32];
	pid_t pid;

	pathf(file, "%s/%s%u", dir, bulk ? "bulk" : "small", i);
	snprintf(bytes, sizeof(bytes), "%" PRIu64, bulk ? o->bulk_bytes : o->records * 4096);
	snprintf(io, sizeof(io), "%u", bulk ? 256u * 1024 : 4096u);
	snprintf(seed, sizeof(seed), "%u", 1000 + i);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int a = fcntl(go, F_DUPFD, 10), b = fcntl(ready, F_DUPFD, 10);
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (a < 0 || b < 0 || fd < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0 || dup2(fd, 1) < 0)
			_exit(126);
		close(a);
		close(b);
		close(fd);
		join_cgroup(NULL);
		if (md->daemon) {
			setenv("IOSIG_DAEMON_SOCKET", iosigd.sock, 1);
			setenv("IOSIG_CONFIG", iosigd.cfg, 1);
			execl(IOSIG_REDIRECT, "iosig-redirect", "-q", "-s", signature(bulk), file, "--",
			      DAEMON_IO_PLAIN, "mapreduce", bulk ? "bulk" : "small", file, bytes, io,
			      bulk ? (char *)NULL : "10000", seed, (char *)NULL);
		} else {
			execl(DAEMON_IO_PLAIN, "daemon_io", "mapreduce", bulk ? "bulk" : "small", file, bytes,
			      io, bulk ? (char *)NULL : "10000", seed, (char *)NULL);
		}
		_exit(127);
	}
	writers[nwriters++] = pid;
}

/* Reads a writer's output: its end time and latencies. */
static void collect(struct mode *md, bool bulk, const char *out, double t0, struct samples *done)
{
	char *text = NULL, *p;
	size_t cap = 0;
	FILE *fp = fopen(out, "r");
	ssize_t n = fp ? getdelim(&text, &cap, '\0', fp) : -1;
	double end;

	if (fp)
		fclose(fp);
	if (n <= 0 || (end = json_field(text, "end")) <= 0 || !(p = strstr(text, "\"lat_us\": [")))
		fail("a writer printed nothing useful (%s)", out);
	add(done, end - t0);
	p += strlen("\"lat_us\": [");
	while (*p && *p != ']') {
		char *e;
		double v = strtod(p, &e);

		if (e == p)
			break;
		add(bulk ? &md->bulk_lat : &md->small_lat, v);
		p = e;
		while (*p == ',' || *p == ' ')
			p++;
	}
	free(text);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void run_mode(const struct opts *o, struct mode *md, unsigned round)
{
	char dir[PATH_LEN], log[PATH_LEN], key[PATH_LEN];
	int go[2], ready[2];
	unsigned total = o->bulk + o->small, got = 0;
	uint64_t ios0, bytes0, ios1, bytes1;
	struct samples bulk_done = { 0 }, small_done = { 0 };
	double t0, last = 0;
	char c;
	int fd;

	pathf(dir, "%s/%s-%u", mnt, md->name, round);
	if (mkdir(dir, 0755) < 0)
		fail("mkdir: %s", strerror(errno));
	if (md->daemon) {
		if (bench_iosigd_init(&iosigd, work, md->name) < 0)
			fail("%s: a path is too long", work);
		if (bench_iosigd_config(iosigd.cfg, mnt, "hdd", md->name, o->queue_depth) < 0)
			fail("cannot write %s", iosigd.cfg);
		pathf(log, "%s/iosigd-%s.log", work, md->name);
		if (bench_iosigd_start(&iosigd, IOSIGD, log, join_cgroup, NULL) < 0)
			fail("cannot start iosigd (see %s)", log);
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		fail("pipe: %s", strerror(errno));
	for (unsigned i = 0; i < total; i++) {
		char out[PATH_LEN];

		pathf(out, "%s/out-%s-%u-%u", work, md->name, round, i);
		spawn(o, md, i, dir, out, go[0], ready[1]);
	}
	close(go[0]);
	close(ready[1]);
	/* Every writer has opened (and registered) its file. */
	while (got < total && read(ready[0], &c, 1) == 1)
		got++;
	close(ready[0]);
	if (got < total)
		fail("%s: a writer failed to start", md->name);
	throttled(&ios0, &bytes0);
	t0 = bench_now();
	close(go[1]);
	for (unsigned i = 0; i < nwriters; i++) {
		int st;

		if (waitpid(writers[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			writers[i] = 0;
			fail("%s: a writer failed", md->name);
		}
		writers[i] = 0;
	}
	nwriters = 0;
	throttled(&ios1, &bytes1);
	md->ios += ios1 - ios0;
	md->bytes += bytes1 - bytes0;
	md->written += o->bulk * o->bulk_bytes + o->small * o->records * 4096;
	for (unsigned i = 0; i < total; i++) {
		char out[PATH_LEN];

		pathf(out, "%s/out-%s-%u-%u", work, md->name, round, i);
		collect(md, i < o->bulk, out, t0, i < o->bulk ? &bulk_done : &small_done);
	}
	for (size_t i = 0; i < bulk_done.n; i++)
		last = bulk_done.v[i] > last ? bulk_done.v[i] : last;
	for (size_t i = 0; i < small_done.n; i++)
		last = small_done.v[i] > last ? small_done.v[i] : last;
	add(&md->makespan, last);
	add(&md->bulk_done_mean, mean(&bulk_done));
	add(&md->bulk_done_max, quantile(&bulk_done, 1));
	add(&md->small_done_mean, mean(&small_done));
	add(&md->small_done_max, quantile(&small_done, 1));
	free(bulk_done.v);
	free(small_done.v);
	if (md->daemon) {
		char *st = daemon_status(iosigd.sock), *p;
		int rc;

		pathf(key, "\"%s\"", mnt);
		p = st ? strstr(st, key) : NULL;
		if (!p)
			fail("%s: the daemon's status has no device for the mount", md->name);
		add(&md->d_requests, json_field(p, "requests"));
		add(&md->d_commands, json_field(p, "commands"));
		add(&md->d_expedited, json_field(p, "expedited"));
		add(&md->d_latency_ms, json_field(p, "mean_latency_ms"));
		free(st);
		rc = bench_iosigd_stop(&iosigd);
		if (rc < 0 || !WIFEXITED(rc) || WEXITSTATUS(rc))
			fail("%s: iosigd did not exit 0 on SIGTERM", md->name);
	}
	/* Free the space for the next mode (unthrottled: not in the cgroup;
	 * not through system(), which would ignore a SIGINT meanwhile). */
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd) < 0)
		fail("syncfs %s: %s", mnt, strerror(errno));
	close(fd);
}

/* ---- output ---- */

static void ratio(struct json_writer *w, const char *key, double a, double noop)
{
	json_num(w, key, a > 0 && noop > 0 ? a / noop : -1);
}

static void print_results(const struct opts *o, struct mode *modes, unsigned nmodes)
{
	struct json_writer w;
	struct mode *noop = NULL;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "bench", "hdd");
	json_obj_begin(&w, "device");
	json_str(&w, "fs", "ext4 on a loop device");
	json_str(&w, "throttle", "cgroup v1 blkio.throttle.{write,read}_{bps,iops}_device");
	json_uint(&w, "bps", o->bps);
	json_uint(&w, "iops", o->iops);
	json_str(&w, "class", "hdd");
	json_uint(&w, "queue_depth", o->queue_depth ? o->queue_depth : 4);
	json_obj_end(&w);
	json_obj_begin(&w, "workload");
	json_uint(&w, "bulk_writers", o->bulk);
	json_uint(&w, "bulk_MiB_each", o->bulk_bytes / MiB);
	json_uint(&w, "bulk_write_KiB", 256);
	json_uint(&w, "small_writers", o->small);
	json_uint(&w, "small_records_each", o->records);
	json_uint(&w, "small_record_KiB", 4);
	json_uint(&w, "small_think_ms", 10);
	json_uint(&w, "rounds", o->rounds);
	json_obj_end(&w);
	json_arr_begin(&w, "modes");
	for (unsigned i = 0; i < nmodes; i++) {
		struct mode *md = &modes[i];

		if (!strcmp(md->name, "noop"))
			noop = md;
		json_obj_begin(&w, NULL);
		json_str(&w, "mode", md->name);
		json_bool(&w, "through_daemon", md->daemon);
		json_num(&w, "makespan_s", median(&md->makespan));
		json_obj_begin(&w, "bulk");
		json_num(&w, "completion_mean_s", median(&md->bulk_done_mean));
		json_num(&w, "completion_max_s", median(&md->bulk_done_max));
		json_num(&w, "write_mean_ms", mean(&md->bulk_lat) / 1e3);
		json_num(&w, "write_p99_ms", quantile(&md->bulk_lat, 0.99) / 1e3);
		json_obj_end(&w);
		json_obj_begin(&w, "small");
		json_num(&w, "completion_mean_s", median(&md->small_done_mean));
		json_num(&w, "completion_max_s", median(&md->small_done_max));
		json_num(&w, "write_fdatasync_mean_ms", mean(&md->small_lat) / 1e3);
		json_num(&w, "write_fdatasync_p99_ms", quantile(&md->small_lat, 0.99) / 1e3);
		json_obj_end(&w);
		json_obj_begin(&w, "device_io");
		json_uint(&w, "writes", md->ios / o->rounds);
		json_num(&w, "write_MiB", (double)md->bytes / o->rounds / (double)MiB);
		json_num(&w, "written_MiB", (double)md->written / o->rounds / (double)MiB);
		json_num(&w, "mean_write_KiB", md->ios ? (double)md->bytes / (double)md->ios / 1024 : 0);
		json_obj_end(&w);
		if (md->daemon) {
			json_obj_begin(&w, "daemon");
			json_num(&w, "requests", median(&md->d_requests));
			json_num(&w, "commands", median(&md->d_commands));
			json_num(&w, "expedited", median(&md->d_expedited));
			json_num(&w, "mean_latency_ms", median(&md->d_latency_ms));
			json_obj_end(&w);
		}
		json_obj_end(&w);
	}
	json_arr_end(&w);
	/* Ratios to noop (below 1: better than noop). */
	json_obj_begin(&w, "vs_noop");
	for (unsigned i = 0; noop && i < nmodes; i++) {
		struct mode *md = &modes[i];

		json_obj_begin(&w, md->name);
		ratio(&w, "makespan", median(&md->makespan), median(&noop->makespan));
		ratio(&w, "bulk_completion_mean", median(&md->bulk_done_mean), median(&noop->bulk_done_mean));
		ratio(&w, "bulk_write_mean", mean(&md->bulk_lat), mean(&noop->bulk_lat));
		ratio(&w, "bulk_write_p99", quantile(&md->bulk_lat, 0.99), quantile(&noop->bulk_lat, 0.99));
		ratio(&w, "small_completion_mean", median(&md->small_done_mean), median(&noop->small_done_mean));
		ratio(&w, "small_write_mean", mean(&md->small_lat), mean(&noop->small_lat));
		ratio(&w, "small_write_p99", quantile(&md->small_lat, 0.99), quantile(&noop->small_lat, 0.99));
		ratio(&w, "device_writes", (double)md->ios, (double)noop->ios);
		json_obj_end(&w);
	}
	json_obj_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

/* ---- main ---- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: bench_hdd [--size N | --quick] [--rounds N] [--bps BYTES] [--iops N] [--bulk N] [--small N]\n"
		"                 [--queue-depth N] [--policies LIST] [--dir DIR]\n"
		"  --size N         work multiplier: N x 16 MiB per bulk writer, N x 40 records per\n"
		"                   small writer (default 1: about a minute in all)\n"
		"  --quick          a quarter of --size 1 (a smoke test)\n"
		"  --rounds N       repeat every mode N times, in rotated order (default 1)\n"
		"  --bps BYTES      throttle: bytes per second, writes and reads (default 41943040)\n"
		"  --iops N         throttle: operations per second (default 100)\n"
		"  --bulk N         bulky sequential writers (default 4)\n"
		"  --small N        small interrupting writers (default 4)\n"
		"  --queue-depth N  the daemon's commands in flight (default: its own for a disk, 4)\n"
		"  --policies LIST  comma-separated policies (default noop,deadline,cfq,bfq,bid-hdd)\n"
		"  --dir DIR        where the work directory goes (default /var/tmp)\n"
		"Root only; exit 77 when it cannot run here.\n");
}

static unsigned long long number(const char *s, const char *what, unsigned long long max)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || e == s || *e || !v || v > max) {
		fprintf(stderr, "bench_hdd: %s: '%s' is not a number from 1 to %llu\n", what, s, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = { .size = 1, .rounds = 1, .bulk = 4, .small = 4, .bps = 40 * MiB, .iops = 100,
			  .policies = "noop,deadline,cfq,bfq,bid-hdd", .dir = "/var/tmp" };
	struct mode modes[MODES_MAX] = { { .name = "plain" } };
	unsigned nmodes = 1;
	bool quick = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--quick")) {
			quick = true;
			continue;
		}
		if (!v || strncmp(a, "--", 2)) {
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--size"))
			o.size = (unsigned)number(v, a, 1000);
		else if (!strcmp(a, "--rounds"))
			o.rounds = (unsigned)number(v, a, 100);
		else if (!strcmp(a, "--bps"))
			o.bps = number(v, a, 1ull << 40);
		else if (!strcmp(a, "--iops"))
			o.iops = number(v, a, 1000000);
		else if (!strcmp(a, "--bulk"))
			o.bulk = (unsigned)number(v, a, WRITERS_MAX / 2);
		else if (!strcmp(a, "--small"))
			o.small = (unsigned)number(v, a, WRITERS_MAX / 2);
		else if (!strcmp(a, "--queue-depth"))
			o.queue_depth = (unsigned)number(v, a, 1024);
		else if (!strcmp(a, "--policies"))
			snprintf(o.policies, sizeof(o.policies), "%s", v);
		else if (!strcmp(a, "--dir"))
			o.dir = v;
		else {
			usage(stderr);
			return 2;
		}
	}
	o.bulk_bytes = quick ? 4 * MiB : 16 * MiB * o.size;
	o.records = quick ? 10 : 40ull * o.size;
	for (char *p = strtok(o.policies, ","); p; p = strtok(NULL, ",")) {
		if (nmodes == MODES_MAX) {
			fprintf(stderr, "bench_hdd: at most %d policies\n", MODES_MAX - 1);
			return 2;
		}
		if (!policy_find(p)) {
			fprintf(stderr, "bench_hdd: --policies: unknown policy '%s'\n", p);
			return 2;
		}
		modes[nmodes++] = (struct mode){ .name = p, .daemon = true };
	}
	if (geteuid() != 0) {
		printf("bench_hdd: skipped: needs root (loop devices, mounts, the blkio cgroup)\n");
		return 77;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	setup(&o);
	for (unsigned r = 0; r < o.rounds; r++)
		for (unsigned k = 0; k < nmodes; k++)
			run_mode(&o, &modes[(k + r) % nmodes], r);
	print_results(&o, modes, nmodes);
	cleanup();
	for (unsigned k = 0; k < nmodes; k++) {
		struct samples *all[] = { &modes[k].makespan, &modes[k].bulk_done_mean, &modes[k].bulk_done_max,
					  &modes[k].small_done_mean, &modes[k].small_done_max, &modes[k].bulk_lat,
					  &modes[k].small_lat, &modes[k].d_commands, &modes[k].d_requests,
					  &modes[k].d_expedited, &modes[k].d_latency_ms };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			free(all[i]->v);
	}
	return 0;
}
