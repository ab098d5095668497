/* SPDX-License-Identifier: MIT */
/*
 * Redirection on real mounts the harness creates (root only; exit 77 with
 * the reason otherwise):
 *   hdd     ext4 on a loop device, where the program writes (class hdd)
 *   ssd     xfs on a loop device (class ssd)
 *   ram     tmpfs (class ram, volatile)
 *   global  tmpfs marked `global` and persistent through the config file
 *   tiny    a 4 MiB ext4 (no reserved blocks, 64 inodes) labelled archive
 * Every other mount of the machine is left out by the configuration.
 *
 * Each signature must land on the expected mount, the link must work and
 * the content be right; finalize must restore the layout within and across
 * filesystems and be idempotent; the fallbacks (unwritable data directory,
 * full filesystem, nothing qualifies, existing path, a symbolic link planted
 * in the data directory) must never fail the open.  Global files: ranks
 * racing to create the same path agree on one data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog_internal.h"
#include "declog.h"
#include "finalize.h"
#include "iosig.h"
#include "files.h"
#include "jsonl.h"
#include "mounts.h"
#include "redirect.h"
#include "rtenv.h"
#include "runtime.h"
#include "tag.h"

enum { M_HDD, M_SSD, M_RAM, M_GLOBAL, M_TINY, M_COUNT };

static const char *const mnames[M_COUNT] = { "hdd", "ssd", "ram", "global", "tiny" };

static struct {
	char base[512];                 /* scratch root */
	char mnt[M_COUNT][600];         /* mount points */
	char dd[M_COUNT][700];          /* data directories */
	bool mounted[M_COUNT];
	char work[700];                 /* where the "program" writes (on hdd) */
	char log[700];
} T;

#define SITE(name, sigtext, n)                                                       \
	static const struct iosig_site name = { IOSIG_SITE_ABI, n, sigtext, __FILE__, \
						__LINE__, 1, "open" }

/* The files are small and the filesystems too: the signatures say how small
 * (without totalsize a mount needs room for 1 GiB, docs/selection.md). */
SITE(site_tmp, "tmp random_access size_per_io($0) totalsize(1*MiB)", 1);
SITE(site_persist, "persist sequential_access size_per_io($0) totalsize(1*MiB)", 1);
SITE(site_global, "global persist sequential_access size_per_io($0) totalsize(1*MiB)", 1);
SITE(site_archive, "archive totalsize(1*MiB)", 0);
SITE(site_tamper, "tamperproof totalsize(1*MiB)", 0);

static char *wpath(const char *name)
{
	static char buf[4][900];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", T.work, name);
	return p;
}

/* Opens path through the site, writes text, closes; returns the st_dev of
 * the file written (0 on failure). */
static dev_t create_with(const struct iosig_site *site, const char *path, const char *text,
			 double v)
{
	struct stat st;
	int fd = iosig_open(site, path, O_CREAT | O_WRONLY | O_TRUNC, 0644, v);

	if (fd < 0)
		return 0;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	close(fd);
	return st.st_dev;
}

static void expect_on(const char *path, int m, const char *text)
{
	char buf[256];

	assert_true(rt_is_link_into(path, T.dd[m]));
	assert_int_equal(rt_dev_of(path), rt_dev_of(T.mnt[m]));
	assert_true(rt_read_file(path, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, text);
}

/* The last decision record in the log. */
static struct jv *last_decision(void)
{
	char *text = tfile_read(T.log), *save = NULL, *last = NULL;
	struct jv *v = NULL;

	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (strstr(l, "\"event\":\"decision\""))
			last = l;
	if (last)
		v = jv_parse(last);
	free(text);
	assert_non_null(v);
	return v;
}

/* ---- placement ---------------------------------------------------------- */

static void test_lands_on_expected_mount(void **state)
{
	dev_t dev;

	(void)state;
	dev = create_with(&site_tmp, wpath("tmp.out"), "tmp", 4096.0);
	assert_int_equal(dev, rt_dev_of(T.mnt[M_RAM]));
	expect_on(wpath("tmp.out"), M_RAM, "tmp");

	dev = create_with(&site_persist, wpath("persist.out"), "persist", 1048576.0);
	assert_int_equal(dev, rt_dev_of(T.mnt[M_SSD]));
	expect_on(wpath("persist.out"), M_SSD, "persist");

	setenv("IOSIG_JOB_ID", "place-1", 1);
	dev = create_with(&site_global, wpath("global.out"), "global", 1048576.0);
	unsetenv("IOSIG_JOB_ID");
	assert_int_equal(dev, rt_dev_of(T.mnt[M_GLOBAL]));
	expect_on(wpath("global.out"), M_GLOBAL, "global");
	{
		char target[PATH_MAX];
		ssize_t n = readlink(wpath("global.out"), target, sizeof(target) - 1);

		assert_true(n > 0);
		target[n] = '\0';
		assert_non_null(strstr(target, "/G-"));
	}

	dev = create_with(&site_archive, wpath("archive.out"), "archive", 0);
	assert_int_equal(dev, rt_dev_of(T.mnt[M_TINY]));
	expect_on(wpath("archive.out"), M_TINY, "archive");

	/* The chosen mount is the path's own: no link. */
	{
		char p[900];

		snprintf(p, sizeof(p), "%s/direct.out", T.mnt[M_SSD]);
		dev = create_with(&site_persist, p, "direct", 1048576.0);
		assert_int_equal(dev, rt_dev_of(T.mnt[M_SSD]));
		assert_true(rt_is_regular(p));
	}
}

/* ---- finalize ----------------------------------------------------------- */

static void test_finalize_across_filesystems(void **state)
{
	const struct iosig_catalog *cat = cat_default(NULL);
	struct timespec times[2] = { { 1000000, 0 }, { 2000000, 500 } };
	char target[PATH_MAX], buf[64];
	struct fin_report rep;
	struct stat st;
	ssize_t n;

	(void)state;
	assert_non_null(cat);
	assert_true(create_with(&site_tmp, wpath("fin.out"), "finalize me", 4096.0) != 0);
	n = readlink(wpath("fin.out"), target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_int_equal(chmod(target, 0640), 0);
	/* Another group (another owner would need a data directory of that
	 * user's: security.root_finalize does that with real users). */
	assert_int_equal(chown(target, (uid_t)-1, 65534), 0);
	assert_int_equal(utimensat(AT_FDCWD, target, times, 0), 0);

	/* A dry run changes nothing. */
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("fin.out"), FIN_DRY_RUN, &rep), 0);
	assert_int_equal(rep.action, FIN_COPIED);
	assert_true(rep.dry_run);
	assert_true(rt_is_link_into(wpath("fin.out"), T.dd[M_RAM]));

	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("fin.out"), 0, &rep), 0);
	assert_int_equal(rep.action, FIN_COPIED);
	assert_string_equal(rep.target, target);
	assert_int_equal(rep.bytes, 11);
	assert_true(rt_is_regular(wpath("fin.out")));
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(stat(wpath("fin.out"), &st), 0);
	assert_int_equal(st.st_dev, rt_dev_of(T.mnt[M_HDD]));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 65534);
	assert_int_equal(st.st_mtim.tv_sec, 2000000);
	assert_int_equal(st.st_mtim.tv_nsec, 500);
	assert_int_equal(rt_read_file(wpath("fin.out"), buf, sizeof(buf)), 11);
	assert_string_equal(buf, "finalize me");
	/* No temporary file left next to it. */
	assert_int_equal(tmnt_sh("ls -a '%s' | grep -q iosig-fin", T.work), 1);

	/* Idempotent. */
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("fin.out"), 0, &rep), 0);
	assert_int_equal(rep.action, FIN_ALREADY);
	assert_int_equal(rt_read_file(wpath("fin.out"), buf, sizeof(buf)), 11);
}

/* A sparse file keeps its holes when copied back. */
static void test_finalize_sparse(void **state)
{
	const struct iosig_catalog *cat = cat_default(NULL);
	struct fin_report rep;
	struct stat st;
	int fd;

	(void)state;
	fd = iosig_open(&site_persist, wpath("sparse.out"), O_CREAT | O_WRONLY, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "tail", 4, 32 << 20), 4);
	close(fd);
	expect_on(wpath("sparse.out"), M_SSD, "head");
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("sparse.out"), 0, &rep), 0);
	assert_int_equal(rep.action, FIN_COPIED);
	assert_int_equal(stat(wpath("sparse.out"), &st), 0);
	assert_int_equal(st.st_size, (32 << 20) + 4);
	/* The hdd filesystem is 64 MiB: a dense copy would need 32 MiB. */
	assert_true(st.st_blocks * 512 < (1 << 20));
	{
		char buf[8] = { 0 };

		fd = open(wpath("sparse.out"), O_RDONLY);
		assert_int_equal(pread(fd, buf, 4, 32 << 20), 4);
		assert_string_equal(buf, "tail");
		assert_int_equal(pread(fd, buf, 4, 1 << 20), 4);
		assert_memory_equal(buf, "\0\0\0\0", 4);
		close(fd);
	}
}

static void test_finalize_same_filesystem(void **state)
{
	const struct iosig_catalog *cat = cat_default(NULL);
	char target[PATH_MAX], moved[900], buf[64];
	struct fin_report rep;
	struct stat before, after;
	ssize_t n;

	(void)state;
	assert_true(create_with(&site_persist, wpath("same.out"), "same fs", 65536.0) != 0);
	n = readlink(wpath("same.out"), target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_int_equal(stat(target, &before), 0);
	/* The program's directory moved to the data's filesystem. */
	snprintf(moved, sizeof(moved), "%s/moved.out", T.mnt[M_SSD]);
	assert_int_equal(symlink(target, moved), 0);
	assert_int_equal(unlink(wpath("same.out")), 0);
	assert_int_equal(fin_path(cat, AT_FDCWD, moved, 0, &rep), 0);
	assert_int_equal(rep.action, FIN_MOVED);
	assert_true(rt_is_regular(moved));
	assert_int_equal(stat(moved, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);   /* renamed, not copied */
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(rt_read_file(moved, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "same fs");
	/* Nothing left in the data directory under that name. */
	assert_int_equal(faccessat(AT_FDCWD, target, F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(fin_path(cat, AT_FDCWD, moved, 0, &rep), 0);
	assert_int_equal(rep.action, FIN_ALREADY);
}

static void test_finalize_refuses(void **state)
{
	const struct iosig_catalog *cat = cat_default(NULL);
	char p[900], target[PATH_MAX], victim[900];
	struct fin_report rep;
	ssize_t n;

	(void)state;
	/* A link that points outside every data directory. */
	snprintf(victim, sizeof(victim), "%s/victim", T.work);
	assert_int_equal(tfile_write(victim, "victim"), 0);
	assert_int_equal(symlink(victim, wpath("evil")), 0);
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("evil"), 0, &rep), -EPERM);
	assert_int_equal(rep.action, FIN_REFUSED);
	assert_true(rt_is_link_into(wpath("evil"), victim));
	/* Into a data directory, but not a name iosig gives. */
	snprintf(p, sizeof(p), "%s/notours", T.dd[M_RAM]);
	assert_int_equal(tfile_write(p, "x"), 0);
	assert_int_equal(symlink(p, wpath("evil2")), 0);
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("evil2"), 0, &rep), -EPERM);
	assert_true(rt_is_regular(p));
	/* "<data_dir>/../x" is not the data directory. */
	snprintf(p, sizeof(p), "%s/../L-1-x", T.dd[M_RAM]);
	assert_int_equal(symlink(p, wpath("evil3")), 0);
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("evil3"), 0, &rep), -EPERM);
	/* Our data file, but owned by another user. */
	assert_true(create_with(&site_tmp, wpath("other.out"), "other", 4096.0) != 0);
	n = readlink(wpath("other.out"), target, sizeof(target) - 1);
	target[n] = '\0';
	/* Another user may not take it: refused, the link stays. */
	{
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(2);
			_exit(fin_path(cat, AT_FDCWD, wpath("other.out"), 0, &rep) < 0 &&
			      rep.action == FIN_REFUSED ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_true(rt_is_link_into(wpath("other.out"), T.dd[M_RAM]));
	}
	/* A dangling link into a data directory: nothing to restore. */
	assert_int_equal(unlink(target), 0);
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("other.out"), 0, &rep), -ENOENT);
	assert_int_equal(rep.action, FIN_REFUSED);
	unlink(wpath("other.out"));
	/* A path that does not exist at all. */
	assert_int_equal(fin_path(cat, AT_FDCWD, wpath("nothing"), 0, &rep), -ENOENT);
	assert_int_equal(rep.action, FIN_FAILED);
}

/* The tool: --dry-run, --json, exit codes, idempotence. */
static void test_finalize_tool(void **state)
{
	const char *tool = getenv("IOSIG_TOOL");
	char cmd[2048], out[4096];
	struct jv *v;
	FILE *fp;
	size_t n;

	(void)state;
	if (!tool)
		skip();
	assert_true(create_with(&site_tmp, wpath("tool1.out"), "t1", 4096.0) != 0);
	assert_true(create_with(&site_persist, wpath("tool2.out"), "t2", 4096.0) != 0);
	assert_int_equal(tmnt_sh("'%s' finalize --dry-run '%s' >/dev/null", tool, wpath("tool1.out")), 0);
	assert_true(rt_is_link_into(wpath("tool1.out"), T.dd[M_RAM]));
	snprintf(cmd, sizeof(cmd), "'%s' finalize --json '%s' '%s'", tool, wpath("tool1.out"),
		 wpath("tool2.out"));
	fp = popen(cmd, "r");
	assert_non_null(fp);
	n = fread(out, 1, sizeof(out) - 1, fp);
	out[n] = '\0';
	assert_int_equal(pclose(fp), 0);
	v = jv_parse(out);
	assert_non_null(v);
	assert_int_equal(v->kind, JV_ARR);
	assert_int_equal(v->n, 2);
	assert_string_equal(jv_str(&v->items[0], "action"), "copied");
	assert_string_equal(jv_str(&v->items[1], "action"), "copied");
	assert_true(jv_get(&v->items[0], "ok")->b);
	jv_free(v);
	assert_true(rt_is_regular(wpath("tool1.out")));
	assert_true(rt_is_regular(wpath("tool2.out")));
	/* Again: already in place, still success. */
	assert_int_equal(tmnt_sh("'%s' finalize '%s' '%s' >/dev/null", tool, wpath("tool1.out"),
			     wpath("tool2.out")), 0);
	/* A refused link makes the exit status 1; a bad option 2. */
	symlink("/etc/hostname", wpath("tool-evil"));
	assert_int_equal(tmnt_sh("'%s' finalize '%s' 2>/dev/null", tool, wpath("tool-evil")), 1);
	assert_int_equal(tmnt_sh("'%s' finalize --frobnicate x 2>/dev/null", tool), 2);
	assert_int_equal(tmnt_sh("'%s' finalize 2>/dev/null", tool), 2);
	assert_int_equal(tmnt_sh("'%s' finalize --help >/dev/null", tool), 0);
}

/* ---- global files ------------------------------------------------------- */

#define RANKS 8
#define ROUNDS 12

/*
 * Ranks of one job create the same global path at the same moment (a
 * spinning start on shared memory), ROUNDS times: each time all ranks write
 * into one data file, linked once, and no rank falls back.
 */
static void test_global_race(void **state)
{
	volatile int *flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	char name[64], buf[RANKS * 8 + 1], target[PATH_MAX];
	pid_t pids[RANKS];
	int status;
	ssize_t n;

	(void)state;
	assert_true(flag != MAP_FAILED);
	assert_int_equal(truncate(T.log, 0), 0);
	for (int round = 0; round < ROUNDS; round++) {
		snprintf(name, sizeof(name), "shared-%d.out", round);
		*flag = 0;
		for (int r = 0; r < RANKS; r++) {
			pids[r] = fork();
			assert_true(pids[r] >= 0);
			if (pids[r] == 0) {
				char rec[9];
				int fd;

				setenv("IOSIG_JOB_ID", "race-job-77", 1);
				while (!*flag)
					;
				fd = iosig_open(&site_global, wpath(name), O_CREAT | O_WRONLY, 0644, 8.0);
				if (fd < 0)
					_exit(3);
				snprintf(rec, sizeof(rec), "rank%04d", r);
				if (pwrite(fd, rec, 8, r * 8) != 8)
					_exit(4);
				close(fd);
				_exit(0);
			}
		}
		*flag = 1;   /* everyone starts now */
		for (int r = 0; r < RANKS; r++) {
			assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
		}
		assert_true(rt_is_link_into(wpath(name), T.dd[M_GLOBAL]));
		n = readlink(wpath(name), target, sizeof(target) - 1);
		target[n] = '\0';
		assert_non_null(strstr(target, "/G-"));
		assert_int_equal(rt_read_file(wpath(name), buf, sizeof(buf)), RANKS * 8);
		for (int r = 0; r < RANKS; r++) {
			char rec[9];

			snprintf(rec, sizeof(rec), "rank%04d", r);
			assert_memory_equal(buf + r * 8, rec, 8);
		}
		/* Exactly one data file for that path. */
		assert_int_equal(tmnt_sh("test $(ls '%s' | grep -c -- '-%s$') -eq 1", T.dd[M_GLOBAL], name), 0);
	}
	munmap((void *)flag, 4096);
	/* Every rank either made or joined the redirect, or found the link:
	 * none had to fall back. */
	assert_int_equal(tmnt_sh("grep -q '\"action\":\"fallback\"' '%s'", T.log), 1);
	assert_int_equal(tmnt_sh("test $(grep -c '\"event\":\"decision\"' '%s') -eq %d", T.log,
			     RANKS * ROUNDS), 0);
}

/* What another process does in the window between data file and link. */
static char fault_target[PATH_MAX];

static void plant_link(int dirfd, const char *name, const char *target)
{
	symlinkat(fault_target[0] ? fault_target : target, dirfd, name);
}

/*
 * Another rank links the same global file first: this one finds a link to
 * the same data file and keeps its descriptor.  Something else at the name
 * instead: the data file is removed and the plain call opens what is there.
 */
static void test_link_race_injected(void **state)
{
	char victim[900], buf[32], target[PATH_MAX];
	struct jv *rec;
	ssize_t n;
	int fd;

	(void)state;
	setenv("IOSIG_JOB_ID", "inject-job", 1);
	fault_target[0] = '\0';
	rd_fault_before_link = plant_link;
	assert_int_equal(truncate(T.log, 0), 0);
	fd = iosig_open(&site_global, wpath("inj1.out"), O_CREAT | O_WRONLY, 0644, 8.0);
	rd_fault_before_link = NULL;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "joined", 6), 6);
	close(fd);
	assert_true(rt_is_link_into(wpath("inj1.out"), T.dd[M_GLOBAL]));
	assert_int_equal(rt_read_file(wpath("inj1.out"), buf, sizeof(buf)), 6);
	rec = last_decision();
	assert_string_equal(jv_str(rec, "action"), "redirected");
	jv_free(rec);

	/* A local file: the other link points elsewhere. */
	snprintf(victim, sizeof(victim), "%s/inj-victim", T.work);
	assert_int_equal(tfile_write(victim, "someone else's"), 0);
	snprintf(fault_target, sizeof(fault_target), "%s", victim);
	rd_fault_before_link = plant_link;
	fd = iosig_open(&site_tmp, wpath("inj2.out"), O_CREAT | O_WRONLY | O_APPEND, 0644, 4096.0);
	rd_fault_before_link = NULL;
	unsetenv("IOSIG_JOB_ID");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "+", 1), 1);
	close(fd);
	/* The plain call followed the other link; nothing of ours remains. */
	n = readlink(wpath("inj2.out"), target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, victim);
	assert_int_equal(rt_read_file(victim, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "someone else's+");
	assert_int_equal(tmnt_sh("ls '%s' | grep -q -- '-inj2.out$'", T.dd[M_RAM]), 1);
	rec = last_decision();
	assert_string_equal(jv_str(rec, "action"), "fallback");
	assert_non_null(strstr(jv_str(rec, "fallback"), "cannot create the link"));
	jv_free(rec);
}

/* The same job creates a global path whose data file exists without its
 * link (another rank is between the two steps, or the program removed the
 * link): it joins that file; O_TRUNC empties it as for concurrent plain
 * opens. */
static void test_global_join_existing_data(void **state)
{
	char target[PATH_MAX], buf[16];
	struct stat a, b;
	ssize_t n;
	int fd;

	(void)state;
	setenv("IOSIG_JOB_ID", "join-job", 1);
	assert_true(create_with(&site_global, wpath("join.out"), "old data", 8.0) != 0);
	n = readlink(wpath("join.out"), target, sizeof(target) - 1);
	target[n] = '\0';
	assert_int_equal(stat(target, &a), 0);
	assert_int_equal(unlink(wpath("join.out")), 0);
	fd = iosig_open(&site_global, wpath("join.out"), O_CREAT | O_WRONLY | O_TRUNC, 0644, 8.0);
	unsetenv("IOSIG_JOB_ID");
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(b.st_size, 0);
	assert_int_equal(write(fd, "new", 3), 3);
	close(fd);
	assert_true(rt_is_link_into(wpath("join.out"), target));
	assert_int_equal(rt_read_file(wpath("join.out"), buf, sizeof(buf)), 3);
	/* With O_EXCL the caller never joins: its plain call decides. */
	assert_int_equal(unlink(wpath("join.out")), 0);
	setenv("IOSIG_JOB_ID", "join-job", 1);
	fd = iosig_open(&site_global, wpath("join.out"), O_CREAT | O_WRONLY | O_EXCL, 0644, 8.0);
	unsetenv("IOSIG_JOB_ID");
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("join.out")));
}

/* A symbolic link planted at the deterministic name: the open falls back
 * and the link's target is untouched. */
static void test_global_planted_symlink(void **state)
{
	char target[PATH_MAX], victim[900], buf[64];
	struct jv *rec;
	ssize_t n;
	int fd;

	(void)state;
	setenv("IOSIG_JOB_ID", "plant-job", 1);
	assert_true(create_with(&site_global, wpath("planted.out"), "first", 8.0) != 0);
	n = readlink(wpath("planted.out"), target, sizeof(target) - 1);
	target[n] = '\0';
	/* The same job, the same path: the same name again.  Plant a link there. */
	assert_int_equal(unlink(wpath("planted.out")), 0);
	assert_int_equal(unlink(target), 0);
	snprintf(victim, sizeof(victim), "%s/victim-global", T.work);
	assert_int_equal(tfile_write(victim, "precious"), 0);
	assert_int_equal(symlink(victim, target), 0);
	assert_int_equal(truncate(T.log, 0), 0);
	fd = iosig_open(&site_global, wpath("planted.out"), O_CREAT | O_WRONLY | O_TRUNC, 0644, 8.0);
	unsetenv("IOSIG_JOB_ID");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "second", 6), 6);
	close(fd);
	assert_true(rt_is_regular(wpath("planted.out")));
	assert_int_equal(rt_read_file(victim, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "precious");
	rec = last_decision();
	assert_string_equal(jv_str(rec, "action"), "fallback");
	assert_non_null(jv_str(rec, "fallback"));
	jv_free(rec);
	unlink(target);
}

/* ---- fallbacks ---------------------------------------------------------- */

static int set_immutable(const char *dir, bool on)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	int flags, r;

	if (fd < 0)
		return -1;
	r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (!r) {
		flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
		r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	return r;
}

static void test_fallback_unwritable_data_dir(void **state)
{
	struct jv *rec;
	dev_t dev;

	(void)state;
	assert_int_equal(set_immutable(T.dd[M_SSD], true), 0);
	assert_int_equal(truncate(T.log, 0), 0);
	dev = create_with(&site_persist, wpath("immutable.out"), "stays", 65536.0);
	assert_int_equal(set_immutable(T.dd[M_SSD], false), 0);
	assert_int_equal(dev, rt_dev_of(T.mnt[M_HDD]));
	assert_true(rt_is_regular(wpath("immutable.out")));
	rec = last_decision();
	assert_string_equal(jv_str(rec, "action"), "fallback");
	assert_string_equal(jv_str(rec, "chosen"), T.mnt[M_SSD]);
	assert_non_null(strstr(jv_str(rec, "fallback"), "cannot create the data file"));
	jv_free(rec);
}

/* No inode left on the chosen filesystem: creating the data file fails
 * with ENOSPC and the file is created where the program asked. */
static void test_fallback_full_filesystem(void **state)
{
	char p[900], buf[16];
	struct jv *rec;
	long made = 0;
	dev_t dev;

	(void)state;
	for (;; made++) {
		int fd;

		snprintf(p, sizeof(p), "%s/fill-%ld", T.mnt[M_TINY], made);
		fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0600);
		if (fd < 0) {
			assert_int_equal(errno, ENOSPC);
			break;
		}
		close(fd);
	}
	assert_int_equal(truncate(T.log, 0), 0);
	dev = create_with(&site_archive, wpath("full.out"), "here", 0);
	assert_int_equal(dev, rt_dev_of(T.mnt[M_HDD]));
	assert_true(rt_is_regular(wpath("full.out")));
	assert_int_equal(rt_read_file(wpath("full.out"), buf, sizeof(buf)), 4);
	rec = last_decision();
	assert_string_equal(jv_str(rec, "action"), "fallback");
	assert_non_null(strstr(jv_str(rec, "fallback"), strerror(ENOSPC)));
	jv_free(rec);
	for (long i = 0; i < made; i++) {
		snprintf(p, sizeof(p), "%s/fill-%ld", T.mnt[M_TINY], i);
		unlink(p);
	}
}

/* A file that outgrows its declared totalsize on a mount that fills up:
 * writes fail with ENOSPC exactly as they would on a full disk where the
 * program asked (iosig does not intercept writes, and cannot move data
 * later). */
static void test_enospc_on_write_surfaces(void **state)
{
	char p[900], big[65536];
	struct statvfs sv;
	ssize_t n = 0;
	int fd, filler;

	(void)state;
	memset(big, 'z', sizeof(big));
	snprintf(p, sizeof(p), "%s/filler", T.mnt[M_TINY]);
	filler = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(filler >= 0);
	/* Leave 1.5 MiB: room for the declared 1 MiB and the reserve. */
	for (;;) {
		assert_int_equal(fstatvfs(filler, &sv), 0);
		if ((unsigned long long)sv.f_bavail * sv.f_frsize <= (3ull << 20) / 2 + sizeof(big))
			break;
		assert_int_equal(write(filler, big, sizeof(big)), (ssize_t)sizeof(big));
	}
	fsync(filler);
	close(filler);
	fd = iosig_open(&site_archive, wpath("late.out"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_true(rt_is_link_into(wpath("late.out"), T.dd[M_TINY]));
	for (int i = 0; i < 64 && n >= 0; i++)
		n = write(fd, big, sizeof(big));
	if (n >= 0)
		n = fsync(fd);
	assert_int_equal(n, -1);
	assert_int_equal(errno, ENOSPC);
	close(fd);
	unlink(p);
	unlink(wpath("late.out"));
}

static void test_nothing_qualifies(void **state)
{
	int fd;

	(void)state;
	fd = iosig_open(&site_tamper, wpath("tamper.out"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("tamper.out")));
	rt_setenv("IOSIG_STRICT", "1");
	errno = 0;
	fd = iosig_open(&site_tamper, wpath("tamper2.out"), O_CREAT | O_WRONLY, 0644);
	rt_setenv("IOSIG_STRICT", NULL);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, RD_STRICT_ERRNO);
	assert_int_equal(access(wpath("tamper2.out"), F_OK), -1);
}

static void test_existing_path(void **state)
{
	struct stat a, b;
	char buf[16];
	int fd;

	(void)state;
	assert_int_equal(tfile_write(wpath("exists.out"), "old"), 0);
	assert_int_equal(stat(wpath("exists.out"), &a), 0);
	fd = iosig_open(&site_tmp, wpath("exists.out"), O_CREAT | O_WRONLY | O_APPEND, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "+", 1), 1);
	close(fd);
	assert_int_equal(lstat(wpath("exists.out"), &b), 0);
	assert_true(S_ISREG(b.st_mode));
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(rt_read_file(wpath("exists.out"), buf, sizeof(buf)), 4);
	assert_string_equal(buf, "old+");
}

/* Processes appending to one log: every record whole. */
static void test_log_concurrent_processes(void **state)
{
	long lines;
	int status;
	pid_t pids[6];

	(void)state;
	assert_int_equal(truncate(T.log, 0), 0);
	for (int p = 0; p < 6; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			for (int i = 0; i < 25; i++) {
				char name[64];
				int fd;

				snprintf(name, sizeof(name), "logproc-%d-%d", p, i);
				fd = iosig_open(&site_tmp, wpath(name), O_CREAT | O_WRONLY, 0644,
						4096.0);
				if (fd < 0)
					_exit(1);
				close(fd);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < 6; p++) {
		assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	lines = jv_each_line(T.log, NULL, NULL);
	assert_int_equal(lines, 6 * 25);
}

/* ---- setup -------------------------------------------------------------- */

static void teardown_mounts(void)
{
	for (int m = 0; m < M_COUNT; m++)
		if (T.mounted[m])
			set_immutable(T.dd[m], false);
	tmnt_umount_all();
	if (T.base[0])
		rt_rmtree(T.base);
}

static const char *setup_mounts(void)
{
	static char why[512];
	static const char *const settings[M_COUNT][8] = {
		{ "class: hdd", "rotational: true", "seq_write_bw: 100MiB/s", "latency: 5ms",
		  "seek: 8ms", NULL },
		{ "class: ssd", "rotational: false", "seq_write_bw: 500MiB/s", "latency: 0.1ms",
		  "volatile: false", NULL },
		{ "class: ram", "volatile: true", "seq_write_bw: 5GiB/s", "latency: 0.001ms", NULL },
		{ "class: network", "global: true", "volatile: false", "seq_write_bw: 50MiB/s",
		  "latency: 1ms", NULL },
		{ "class: hdd", "label: archive", "seq_write_bw: 20MiB/s", "latency: 10ms",
		  "seek: 10ms", NULL },
	};
	/* The loop-backed filesystems: image size, type, mkfs arguments. */
	static const struct {
		unsigned long long size;
		const char *type, *args;
	} images[M_COUNT] = {
		[M_HDD] = { 64ull << 20, "ext4", "-q -F" },
		[M_SSD] = { 320ull << 20, "xfs", "-q -f" },
		[M_TINY] = { 4ull << 20, "ext4", "-q -F -m 0 -N 64" },
	};
	struct rt_mount_cfg cfg[M_COUNT];
	const char *unavailable = tmnt_unavailable(true);
	char file[700];

	if (unavailable)
		return unavailable;
	if (tmnt_private() < 0)
		return "cannot create a private mount namespace";
	rt_scratch("/tmp", "iosig-rtm", T.base, sizeof(T.base));
	chmod(T.base, 0755);   /* other users' processes in some tests */
	for (int m = 0; m < M_COUNT; m++) {
		char img[700], src[64];
		int r;

		snprintf(T.mnt[m], sizeof(T.mnt[m]), "%s/%s", T.base, mnames[m]);
		snprintf(T.dd[m], sizeof(T.dd[m]), "%s/iosig-data", T.mnt[m]);
		snprintf(img, sizeof(img), "%s/%s.img", T.base, mnames[m]);
		if (images[m].type) {
			r = tmnt_mkfs(img, images[m].size, images[m].type, images[m].args);
			if (r == 0)
				r = tmnt_loop_mount(img, 0, T.mnt[m], images[m].type, 0, NULL, NULL, 0);
		} else {
			snprintf(src, sizeof(src), "iosig-rtm-%s", mnames[m]);
			r = tmnt_mount(src, T.mnt[m], "tmpfs", 0, "size=64m");
		}
		if (r != 0) {
			snprintf(why, sizeof(why), "cannot make the %s filesystem (%s)", mnames[m],
				 strerror(-r));
			return why;
		}
		T.mounted[m] = true;
		cfg[m] = (struct rt_mount_cfg){ T.mnt[m], T.dd[m], settings[m] };
	}
	snprintf(T.work, sizeof(T.work), "%s/work", T.mnt[M_HDD]);
	mkdir(T.work, 0755);
	snprintf(file, sizeof(file), "%s/config.yaml", T.base);
	rt_write_config(file, cfg, M_COUNT);
	snprintf(T.log, sizeof(T.log), "%s/decisions.jsonl", T.base);
	if (tfile_write(T.log, ""))
		return "cannot write the decision log in the scratch directory";
	setenv("IOSIG_LOG", T.log, 1);
	unsetenv("IOSIG_DISABLE");
	unsetenv("IOSIG_DRYRUN");
	unsetenv("IOSIG_STRICT");
	unsetenv("IOSIG_JOB_ID");
	rt_env_reload();
	declog_reset();
	return NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lands_on_expected_mount),
		cmocka_unit_test(test_finalize_across_filesystems),
		cmocka_unit_test(test_finalize_sparse),
		cmocka_unit_test(test_finalize_same_filesystem),
		cmocka_unit_test(test_finalize_refuses),
		cmocka_unit_test(test_finalize_tool),
		cmocka_unit_test(test_global_race),
		cmocka_unit_test(test_global_join_existing_data),
		cmocka_unit_test(test_link_race_injected),
		cmocka_unit_test(test_global_planted_symlink),
		cmocka_unit_test(test_fallback_unwritable_data_dir),
		cmocka_unit_test(test_fallback_full_filesystem),
		cmocka_unit_test(test_enospc_on_write_surfaces),
		cmocka_unit_test(test_nothing_qualifies),
		cmocka_unit_test(test_existing_path),
		cmocka_unit_test(test_log_concurrent_processes),
	};
	const char *why = setup_mounts();
	int rc;

	if (why) {
		printf("SKIP: %s\n", why);
		teardown_mounts();
		return 77;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	teardown_mounts();
	return rc;
}
