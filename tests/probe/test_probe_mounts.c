/* SPDX-License-Identifier: MIT */
/*
 * `iosig probe` on real filesystems created by the test: a tmpfs, an ext4
 * on a loop device, the same throttled by the cgroup v1 blkio controller,
 * a read-only ext4, a full ext4 and a tmpfs unmounted during the run.  Runs
 * the real tool and checks what it stored through a rebuilt catalog, its
 * time and space budgets, the cleanup after SIGINT and its messages.
 * Needs root and loop devices; skips with the reason otherwise.  The mounts
 * live in a private mount namespace (tests/common/mounts.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dirs.h"
#include "files.h"
#include "iosig.h"
#include "mounts.h"
#include "probe.h"

#define MiB (1024ull * 1024)

extern char **environ;

/* Throttle of the slow mount: 8 MiB/s, 200 IOPS each way. */
#define SLOW_BPS (8ull * MiB)
#define SLOW_IOPS 200

static char base[256];          /* everything lives under here */
static char tool[4096];         /* the iosig binary */
static char cache[512], config[512];
static char m_tmpfs[300], m_ext4[300], m_slow[300], m_ro[300], m_full[300], m_gone[300];
static char slow_dev[64];       /* the loop device of m_slow */
static char slow_majmin[32];
static bool throttled;
static char *last_out;          /* standard output of the last run_probe() */

/* ext4 image number `slot` of `mib` MiB on a loop device doing direct I/O
 * (the probe measures the device, not the page cache of the image), mounted
 * at dir with mount(2) flags; the device's name goes to dev[size]. */
static int loop_ext4(int slot, const char *dir, unsigned mib, unsigned long flags, char *dev,
		     size_t size)
{
	char img[400];

	snprintf(img, sizeof(img), "%s/img%d", base, slot);
	if (tmnt_mkfs(img, (unsigned long long)mib * MiB, "ext4", "-q -F") < 0)
		return -1;
	return tmnt_loop_mount(img, LO_FLAGS_DIRECT_IO, dir, "ext4", flags, NULL, dev, size);
}

static void throttle(const char *majmin, unsigned long long bps, unsigned iops)
{
	static const char *const files[] = { "write_bps_device", "read_bps_device",
					     "write_iops_device", "read_iops_device" };

	for (int i = 0; i < 4; i++) {
		char path[128];
		FILE *fp;

		snprintf(path, sizeof(path), "/sys/fs/cgroup/blkio/blkio.throttle.%s", files[i]);
		fp = fopen(path, "we");
		if (!fp)
			continue;
		fprintf(fp, "%s %llu\n", majmin, i < 2 ? bps : (unsigned long long)iops);
		fclose(fp);
	}
}

static int group_setup(void **state)
{
	const char *t = getenv("IOSIG_TOOL");
	const char *why = tmnt_unavailable(true);
	struct stat st;
	FILE *fp;

	(void)state;
	if (why) {
		fprintf(stderr, "skipped: %s\n", why);
		exit(77);
	}
	if (!t || access(t, X_OK) != 0) {
		fprintf(stderr, "skipped: IOSIG_TOOL does not name the iosig binary\n");
		exit(77);
	}
	if (tmnt_private() < 0) {
		fprintf(stderr, "skipped: cannot create a private mount namespace\n");
		exit(77);
	}
	snprintf(tool, sizeof(tool), "%s", t);
	/* On the root disk, not in a tmpfs $TMPDIR: the images must be real. */
	snprintf(base, sizeof(base), "/var/tmp/iosig-probe-mounts-XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(cache, sizeof(cache), "%s/probe.yaml", base);
	snprintf(config, sizeof(config), "%s/config.yaml", base);
	fp = fopen(config, "we");
	if (!fp)
		return -1;
	fputs("version: 1\n", fp);
	fclose(fp);
	snprintf(m_tmpfs, sizeof(m_tmpfs), "%s/tmpfs", base);
	snprintf(m_ext4, sizeof(m_ext4), "%s/ext4", base);
	snprintf(m_slow, sizeof(m_slow), "%s/slow", base);
	snprintf(m_ro, sizeof(m_ro), "%s/ro", base);
	snprintf(m_full, sizeof(m_full), "%s/full", base);
	snprintf(m_gone, sizeof(m_gone), "%s/gone", base);
	if (tmnt_mount("iosig-test", m_tmpfs, "tmpfs", 0, "size=512m")) {
		fprintf(stderr, "skipped: cannot mount a tmpfs\n");
		exit(77);
	}
	if (loop_ext4(0, m_ext4, 512, 0, NULL, 0) ||
	    loop_ext4(1, m_slow, 512, 0, slow_dev, sizeof(slow_dev)) ||
	    loop_ext4(2, m_ro, 64, MS_RDONLY, NULL, 0) || loop_ext4(3, m_full, 40, 0, NULL, 0)) {
		fprintf(stderr, "skipped: cannot attach and mount loop devices\n");
		return -1;
	}
	/* Fill the full one: a file of everything there is. */
	tmnt_sh("dd if=/dev/zero of=%s/fill bs=1M status=none 2>/dev/null; sync", m_full);
	if (stat(slow_dev, &st) == 0 &&
	    access("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device", W_OK) == 0) {
		snprintf(slow_majmin, sizeof(slow_majmin), "%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
		throttle(slow_majmin, SLOW_BPS, SLOW_IOPS);
		throttled = true;
	}
	setenv("IOSIG_CONFIG", config, 1);
	setenv("IOSIG_PROBE_CACHE", cache, 1);
	return 0;
}

static int group_teardown(void **state)
{
	const char *dirs[] = { m_tmpfs, m_ext4, m_slow, m_ro, m_full, m_gone };

	(void)state;
	if (throttled)
		throttle(slow_majmin, 0, 0);
	tmnt_umount_all(); /* and the loop devices detach */
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (dirs[i][0])
			rmdir(dirs[i]);
	free(last_out);
	tmnt_sh("rm -f %s/img? %s %s %s.lock", base, cache, config, cache);
	rmdir(base);
	return 0;
}

/* Contents of a file (malloc'ed), which is then removed. */
static char *slurp(const char *path)
{
	char *buf = tfile_read(path);

	assert_non_null(buf);
	unlink(path);
	return buf;
}

static long leftovers(const char *dir);

/*
 * Runs `iosig CMD ARGS...`; stderr goes to *ret_err (malloc'ed), stdout to
 * last_out.  Returns the exit status.  When busy_dir is not NULL, sends
 * SIGINT once the tool is at work there (its private files exist on that
 * mount) and `delay` seconds more have passed: a fixed delay from the spawn
 * would race with the tool's start-up on a loaded machine or under ASan.
 */
static int run_tool_int(const char *cmd, char **ret_err, const char *busy_dir, double delay,
			const char *const *args)
{
	char errfile[400], outfile[400];
	char *argv[32];
	int n = 0, st;
	posix_spawn_file_actions_t fa;
	pid_t pid;

	snprintf(errfile, sizeof(errfile), "%s/stderr", base);
	snprintf(outfile, sizeof(outfile), "%s/stdout", base);
	argv[n++] = tool;
	argv[n++] = (char *)cmd;
	while (*args && n < 31)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 1, outfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(posix_spawn(&pid, tool, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	if (busy_dir) {
		struct timespec poll = { 0, 5 * 1000 * 1000 };
		struct timespec ts = { (time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9) };
		pid_t done = 0;

		/* Up to 120 s for the tool to start working on the mount. */
		for (int i = 0; i < 24000 && leftovers(busy_dir) <= 0; i++) {
			done = waitpid(pid, &st, WNOHANG);
			if (done == pid)
				break;
			nanosleep(&poll, NULL);
		}
		if (done == pid)
			fail_msg("iosig %s finished before it could be interrupted", cmd);
		nanosleep(&ts, NULL);
		kill(pid, SIGINT);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*ret_err = slurp(errfile);
	free(last_out);
	last_out = slurp(outfile);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run_tool(const char *cmd, char **ret_err, const char *const *args)
{
	return run_tool_int(cmd, ret_err, NULL, 0, args);
}

static int run_probe(char **ret_err, const char *const *args)
{
	return run_tool("probe", ret_err, args);
}

/* What the probe left in dir: entries besides the filesystem's own and
 * the file that fills the full one. */
static long leftovers(const char *dir)
{
	static const char *const own[] = { "lost+found", "fill", NULL };

	return tdir_entries(dir, own);
}

static const struct iosig_mount *find(const struct iosig_catalog *cat, const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return iosig_catalog_mount(cat, i);
	return NULL;
}

static struct iosig_catalog *catalog(void)
{
	struct iosig_catalog_opts o = { .config = config, .probe_cache = cache };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;

	assert_int_equal(iosig_catalog_new(&o, &cat, &err), 0);
	return cat;
}

/* tmpfs, ext4 and the throttled ext4: plausible values, in the cache and in
 * a rebuilt catalog with source "probed"; nothing left on the mounts. */
static void test_probe_plausible(void **state)
{
	const char *args[] = { "-t", "5", "-s", "64MiB", m_tmpfs, m_ext4, m_slow, NULL };
	const struct iosig_mount *t, *e, *s;
	struct iosig_catalog *cat;
	char *err;
	int rc;

	(void)state;
	rc = run_probe(&err, args);
	if (rc)
		fprintf(stderr, "%s", err);
	assert_int_equal(rc, 0);
	free(err);
	cat = catalog();
	t = find(cat, m_tmpfs);
	e = find(cat, m_ext4);
	s = find(cat, m_slow);
	assert_non_null(t);
	assert_non_null(e);
	assert_non_null(s);
	/* What the tool printed, for the failure messages below. */
	fprintf(stderr, "%s", last_out);
	for (enum iosig_field f = IOSIG_F_SEQ_READ_BW; f <= IOSIG_F_RAND_WRITE_BW; f++) {
		assert_int_equal(t->src[f], IOSIG_SRC_PROBED);
		assert_int_equal(e->src[f], IOSIG_SRC_PROBED);
	}
	assert_int_equal(t->src[IOSIG_F_LATENCY], IOSIG_SRC_PROBED);
	assert_int_equal(e->src[IOSIG_F_LATENCY], IOSIG_SRC_PROBED);
	assert_int_equal(e->src[IOSIG_F_IOPS], IOSIG_SRC_PROBED);
	/* The read-modify-write sweep finds the 4 KiB page on ext4. */
	assert_int_equal(e->src[IOSIG_F_BLOCK_SIZE], IOSIG_SRC_PROBED);
	assert_int_equal(e->block_size, 4096);
	assert_true(t->latency > 0 && t->latency < e->latency);
	assert_true(t->seq_write_bw > 1e8);
	if (throttled) {
		assert_int_equal(s->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_PROBED);
		/* The throttle holds the device to 8 MiB/s. */
		assert_true(s->seq_write_bw < 2.0 * SLOW_BPS);
		assert_true(s->seq_write_bw > 0.3 * SLOW_BPS);
		assert_true(t->seq_write_bw > 10 * s->seq_write_bw);
		assert_true(iosig_throughput(t, 65536, false, IOSIG_OP_WRITE) >
			    iosig_throughput(s, 65536, false, IOSIG_OP_WRITE));
	} else {
		fprintf(stderr, "note: no blkio throttle here; the slow mount is not slow\n");
	}
	assert_int_equal(leftovers(m_tmpfs), 0);
	assert_int_equal(leftovers(m_ext4), 0);
	assert_int_equal(leftovers(m_slow), 0);
	iosig_catalog_free(cat);
}

struct watch {
	const char *path;
	uint64_t base_used;
	uint64_t max_used;
	volatile bool stop;
};

static uint64_t used(const char *path)
{
	struct statvfs v;

	if (statvfs(path, &v) < 0)
		return 0;
	return (uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize;
}

static void *watcher(void *arg)
{
	struct watch *w = arg;
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	while (!w->stop) {
		uint64_t u = used(w->path);

		if (u > w->max_used)
			w->max_used = u;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Space never above --max-space (watched every 2 ms), time bounded. */
static void test_probe_budgets(void **state)
{
	const char *args[] = { "--json", "--no-store", "-t", "2", "-s", "16MiB", m_ext4, NULL };
	struct watch w = { .path = m_ext4 };
	const char *el;
	double elapsed;
	struct timespec t0, t1;
	pthread_t th;
	char *err;
	double dt;
	int rc;

	(void)state;
	tmnt_sh("sync");
	w.base_used = w.max_used = used(m_ext4);
	assert_int_equal(pthread_create(&th, NULL, watcher, &w), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = run_probe(&err, args);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w.stop = true;
	pthread_join(th, NULL);
	assert_int_equal(rc, 0);
	free(err);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	/* The probe's own clock: the budget plus one queue of I/O.  The wall time
	 * around the process also holds process start-up and the catalog build,
	 * which a loaded machine or ASan stretch arbitrarily: it only has to show
	 * that nothing hung. */
	el = strstr(last_out, "\"elapsed\": ");
	assert_non_null(el);
	elapsed = strtod(el + strlen("\"elapsed\": "), NULL);
	assert_true(elapsed > 0.5 && elapsed < 2 * 1.5);
	assert_true(dt < 120);
	/* 16 MiB for the probe's files; 1 MiB of slack for the journal and
	 * directory blocks the filesystem itself allocates. */
	assert_true(w.max_used - w.base_used <= 17 * MiB);
	assert_true(w.max_used - w.base_used > 4 * MiB); /* it did write */
	assert_int_equal(leftovers(m_ext4), 0);
}

/* SIGINT in the middle: exit 130, no files, the space is free again. */
static void test_probe_sigint(void **state)
{
	const char *args[] = { "-q", "--no-store", "-t", "30", "-s", "64MiB", m_ext4, NULL };
	uint64_t before;
	char *err;
	int rc;

	(void)state;
	tmnt_sh("sync");
	before = used(m_ext4);
	rc = run_tool_int("probe", &err, m_ext4, 0.3, args);
	assert_int_equal(rc, 130);
	assert_non_null(strstr(err, "interrupted"));
	free(err);
	assert_int_equal(leftovers(m_ext4), 0);
	tmnt_sh("sync");
	assert_true(used(m_ext4) <= before + 1 * MiB);
}

/* A read-only and a full mount get a message each, the others are probed,
 * exit status 1, nothing left behind. */
static void test_probe_bad_mounts(void **state)
{
	const char *args[] = { "-q", "-t", "1", "-s", "16MiB", m_ro, m_full, m_tmpfs, NULL };
	struct iosig_catalog *cat;
	char *err;
	int rc;

	(void)state;
	unlink(cache);
	rc = run_probe(&err, args);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, m_ro));
	assert_non_null(strstr(err, "read-only"));
	assert_non_null(strstr(err, m_full));
	assert_non_null(strstr(err, "free"));
	free(err);
	cat = catalog();
	assert_int_equal(find(cat, m_tmpfs)->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_PROBED);
	assert_int_not_equal(find(cat, m_full)->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_PROBED);
	iosig_catalog_free(cat);
	assert_int_equal(leftovers(m_ro), 0);
	assert_int_equal(leftovers(m_full), 0);
	assert_int_equal(leftovers(m_tmpfs), 0);
}

static void *unmount_later(void *arg)
{
	struct timespec ts = { 1, 0 };

	nanosleep(&ts, NULL);
	tmnt_umount(arg);
	return NULL;
}

/* A mount that disappears before its turn: a message, the others go on. */
static void test_probe_vanished(void **state)
{
	const char *args[] = { "-q", "--no-store", "-t", "2.5", "-s", "16MiB", m_ext4, m_gone,
			       NULL };
	pthread_t th;
	char *err;
	int rc;

	(void)state;
	assert_int_equal(mkdir(m_gone, 0755), 0);
	assert_int_equal(tmnt_mount("iosig-gone", m_gone, "tmpfs", 0, "size=256m"), 0);
	assert_int_equal(pthread_create(&th, NULL, unmount_later, m_gone), 0);
	rc = run_probe(&err, args);
	pthread_join(th, NULL);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, m_gone));
	if (!strstr(err, "no longer mounted"))
		fprintf(stderr, "%s", err);
	assert_non_null(strstr(err, "no longer mounted"));
	free(err);
	assert_int_equal(leftovers(m_gone), 0);
	assert_int_equal(leftovers(m_ext4), 0);
}

/* Unknown mounts: precise message, exit 2, nothing probed. */
static void test_probe_unknown(void **state)
{
	char sub[400], missing[400];
	const char *a1[] = { "-q", missing, NULL };
	const char *a2[] = { "-q", sub, NULL };
	const char *a3[] = { "-q", "--time", "fast", m_tmpfs, NULL };
	char *err;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/nonexistent", base);
	snprintf(sub, sizeof(sub), "%s/lost+found", m_ext4);
	assert_int_equal(run_probe(&err, a1), 2);
	assert_non_null(strstr(err, missing));
	assert_non_null(strstr(err, "No such file"));
	free(err);
	assert_int_equal(run_probe(&err, a2), 2);
	assert_non_null(strstr(err, "is not a mount point"));
	assert_non_null(strstr(err, m_ext4)); /* says which mount it is on */
	free(err);
	assert_int_equal(run_probe(&err, a3), 2);
	assert_non_null(strstr(err, "--time"));
	free(err);
}

/* No O_DIRECT: ramfs refuses it (a memory filesystem, measured buffered),
 * and --buffered makes ext4 take the fallback of filesystems that refuse
 * it; both are measured and say how. */
static void test_probe_no_direct(void **state)
{
	char ramfs[400];
	const char *a1[] = { "--json", "-n", "-t", "2", "-s", "16MiB", ramfs, m_ext4, NULL };
	const char *a2[] = { "--json", "-n", "-b", "-t", "2", "-s", "16MiB", m_ext4, NULL };
	char *err;
	int rc;

	(void)state;
	snprintf(ramfs, sizeof(ramfs), "%s/ramfs", base);
	assert_int_equal(mkdir(ramfs, 0755), 0);
	if (tmnt_mount("iosig-ramfs", ramfs, "ramfs", 0, NULL)) {
		rmdir(ramfs);
		skip();
	}
	rc = run_probe(&err, a1);
	if (rc)
		fprintf(stderr, "%s", err);
	free(err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(last_out, "\"method\": \"buffered (memory filesystem)\""));
	assert_non_null(strstr(last_out, "\"method\": \"O_DIRECT\""));
	assert_int_equal(leftovers(ramfs), 0);
	tmnt_umount(ramfs);
	rmdir(ramfs);

	rc = run_probe(&err, a2);
	free(err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(last_out, "\"method\": \"buffered + fdatasync\""));
	assert_non_null(strstr(last_out, "no O_DIRECT"));
	assert_null(strstr(last_out, "\"seq_write_bw\": null"));
	assert_int_equal(leftovers(m_ext4), 0);
}

/* `iosig validate` on tmpfs and ext4 (probed by test_probe_plausible): the
 * model ranks tmpfs first everywhere, as measured; JSON and plot written;
 * nothing left behind; SIGINT cleans up; bad arguments exit 2. */
static void test_validate(void **state)
{
	char json[400], png[400], missing[400];
	const char *args[] = { "-q", "-r", "1", "-t", "0.05", "--max-size", "1MiB", "--sweep", "4",
			       "-s", "32MiB", "-j", json, "-p", png, m_tmpfs, m_ext4, NULL };
	const char *slow[] = { "-q", "-r", "50", "-t", "1", "-s", "32MiB", m_tmpfs, m_ext4, NULL };
	const char *bad1[] = { "--pattern", "diagonal", m_tmpfs, NULL };
	const char *bad2[] = { missing, NULL };
	char *err, *doc;
	int rc;

	(void)state;
	snprintf(json, sizeof(json), "%s/validate.json", base);
	snprintf(png, sizeof(png), "%s/validate.png", base);
	snprintf(missing, sizeof(missing), "%s/nonexistent", base);
	rc = run_tool("validate", &err, args);
	if (rc)
		fprintf(stderr, "%s", err);
	free(err);
	if (rc == 1 && access("/usr/bin/gnuplot", X_OK) != 0)
		fprintf(stderr, "note: gnuplot is missing, the plot failed\n");
	else
		assert_int_equal(rc, 0);
	doc = slurp(json);
	/* 512 B .. 1 MiB: 12 powers of two, plus 3 KiB from the sweep; two
	 * patterns; the model picks tmpfs each time, as measured. */
	assert_non_null(strstr(doc, "\"cases\": 26,"));
	assert_non_null(strstr(doc, "\"hits\": 26,"));
	assert_non_null(strstr(doc, "\"target_met\": true"));
	assert_non_null(strstr(doc, "\"latency_source\": \"probed\""));
	assert_null(strstr(doc, "\"model_pick\": \"ext4\""));
	free(doc);
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		FILE *fp = fopen(png, "re");
		unsigned char sig[8] = { 0 };

		assert_non_null(fp);
		assert_int_equal(fread(sig, 1, 8, fp), 8);
		fclose(fp);
		assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
		unlink(png);
	}
	assert_int_equal(leftovers(m_tmpfs), 0);
	assert_int_equal(leftovers(m_ext4), 0);

	/* Interrupted in the middle of its rounds. */
	assert_int_equal(run_tool_int("validate", &err, m_ext4, 0.3, slow), 130);
	assert_non_null(strstr(err, "interrupted"));
	free(err);
	assert_int_equal(leftovers(m_tmpfs), 0);
	assert_int_equal(leftovers(m_ext4), 0);

	assert_int_equal(run_tool("validate", &err, bad1), 2);
	assert_non_null(strstr(err, "--pattern 'diagonal'"));
	free(err);
	assert_int_equal(run_tool("validate", &err, bad2), 2);
	assert_non_null(strstr(err, missing));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_unknown),
		cmocka_unit_test(test_probe_plausible),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_probe_budgets),
		cmocka_unit_test(test_probe_sigint),
		cmocka_unit_test(test_probe_bad_mounts),
		cmocka_unit_test(test_probe_vanished),
		cmocka_unit_test(test_probe_no_direct),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
