/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_discover.c - discovery rules on a generated mount table whose
 * mount points are real directories (no privileges needed): pseudo
 * filesystems and /proc, /sys are not candidates, covered mounts are hidden,
 * bind mounts of one filesystem are listed once as eligible, non-directories,
 * read-only and unreachable mounts are ineligible with the reason, network
 * types are classified, an ignored mount is never touched, configuration
 * applies by exact path and pattern, and iosig_catalog_find() picks the
 * deepest mount.  Real mounts are in test_catalog_mounts.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog_internal.h"
#include "files.h"

static char base[] = "/tmp/iosig-disc-XXXXXX";
static char mountinfo[300], cfgfile[300];

/* base/<name>, created as a directory unless it is "file" or "missing". */
static const char *dir(const char *name)
{
	static char bufs[32][300];
	static unsigned next;
	char *b = bufs[next++ % 32];

	snprintf(b, 300, "%s/%s", base, name);
	return b;
}

static const struct iosig_mount *find_path(const struct iosig_catalog *cat, const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return iosig_catalog_mount(cat, i);
	return NULL;
}

static struct iosig_catalog *build(const char *config)
{
	struct iosig_catalog_opts opts = { .mountinfo = mountinfo, .probe_cache = "" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };

	if (config) {
		assert_int_equal(tfile_write(cfgfile, config), 0);
		opts.config = cfgfile;
	} else {
		opts.config = "";
	}
	if (iosig_catalog_new(&opts, &cat, &err) < 0)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	return cat;
}

/*
 * The generated table: IDs and parents as the kernel writes them.  The
 * directories live on the filesystem of /tmp, so every entry that is
 * reached has the same st_dev - which also makes them bind mounts of one
 * filesystem, the case the duplicate rule handles.
 */
static void write_table(void)
{
	char t[8192];

	snprintf(t, sizeof(t),
		 "20 1 254:0 / %s rw,relatime - ext4 /dev/vdz rw\n"
		 "21 20 0:21 / %s rw - proc proc rw\n"
		 "22 20 0:22 / %s rw - sysfs sysfs rw\n"
		 "23 20 0:23 / %s rw - cgroup2 cgroup2 rw\n"
		 "24 20 0:24 / %s rw - devpts devpts rw\n"
		 "25 20 0:25 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
		 "26 20 0:26 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n"
		 /* covered: 27 by 28 on the same path; 29 lies inside 27 */
		 "27 20 0:27 / %s rw - tmpfs first rw\n"
		 "29 27 0:29 / %s rw - tmpfs inner rw\n"
		 "28 27 0:28 / %s rw - tmpfs second rw\n"
		 "30 20 0:30 / %s ro,relatime - tmpfs ro rw\n"
		 "31 20 254:0 /sub %s rw - ext4 /dev/vdz rw\n"
		 "32 20 0:32 / %s rw - nfs4 server:/export rw\n"
		 "33 20 0:33 / %s rw - 9p hostshare rw\n"
		 "34 20 0:34 / %s rw - fuse.foo foo rw\n"
		 "35 20 0:35 / %s rw - tmpfs gone rw\n"
		 "36 20 0:36 / %s rw - tmpfs file rw\n"
		 "37 20 0:37 / %s rw - nfs4 hung:/x rw\n"
		 "38 20 0:38 / %s rw - tmpfs deep rw\n"
		 "39 20 0:39 / %s\\040space rw - tmpfs sp rw\n",
		 base, dir("proc"), dir("sys"), dir("cgroup"), dir("pts"), dir("cover"),
		 dir("cover/inner"), dir("cover"), dir("ro"), dir("bind"), dir("nfs"), dir("9p"),
		 dir("fuse"), dir("missing"), dir("file"), dir("hung"), dir("nfs/deep"), dir("with"));
	assert_int_equal(tfile_write(mountinfo, t), 0);
}

static int setup(void **state)
{
	static const char *const dirs[] = { "proc", "sys", "cgroup", "pts", "cover", "cover/inner",
					    "ro", "bind", "nfs", "nfs/deep", "9p", "fuse",
					    "with space" };

	if (!mkdtemp(base))
		return -1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dir(dirs[i]), 0755) < 0)
			return -1;
	assert_int_equal(tfile_write(dir("file"), "not a directory\n"), 0);
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", base);
	snprintf(cfgfile, sizeof(cfgfile), "%s/config.yaml", base);
	write_table();
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_candidates(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	static const char *const absent[] = { "proc", "sys", "cgroup", "pts" };
	const struct iosig_mount *m;

	/* Pseudo filesystems and whatever lies under /proc and /sys. */
	for (size_t i = 0; i < 4; i++)
		assert_null(find_path(cat, dir(absent[i])));
	assert_null(find_path(cat, "/sys/fs/cgroup"));
	assert_null(find_path(cat, "/proc/sys/fs/binfmt_misc"));
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		assert_false(cat_fstype_is_pseudo(iosig_catalog_mount(cat, i)->fstype));
	/* The covered mount and the one inside it are unreachable. */
	m = find_path(cat, dir("cover"));
	assert_non_null(m);
	assert_string_equal(m->source, "second");
	for (size_t i = 0; i < iosig_catalog_size(cat); i++) {
		assert_string_not_equal(iosig_catalog_mount(cat, i)->source, "first");
		assert_string_not_equal(iosig_catalog_mount(cat, i)->source, "inner");
	}
	/* Escaped mount points are unescaped. */
	assert_non_null(find_path(cat, dir("with space")));
	iosig_catalog_free(cat);
}

static void test_ineligible(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	const struct iosig_mount *m;
	char want[600];

	m = find_path(cat, dir("ro"));
	assert_non_null(m);
	assert_string_equal(m->ineligible, "mounted read-only");
	assert_null(m->data_dir);

	m = find_path(cat, dir("file"));
	assert_string_equal(m->ineligible, "the mount point is not a directory (a bind-mounted file)");

	m = find_path(cat, dir("missing"));
	assert_string_equal(m->ineligible, "cannot access the mount point: No such file or directory");

	m = find_path(cat, dir("fuse"));
	snprintf(want, sizeof(want),
		 "cannot tell the storage class of fuse.foo on foo; set class for %s in the config",
		 dir("fuse"));
	assert_string_equal(m->ineligible, want);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_NONE);

	/* The same filesystem twice: the whole filesystem (root "/") takes
	 * the files, the subtree mount is a duplicate. */
	m = find_path(cat, base);
	assert_null(m->ineligible);
	m = find_path(cat, dir("bind"));
	snprintf(want, sizeof(want), "same filesystem as %s (a bind mount): files go there", base);
	assert_string_equal(m->ineligible, want);
	iosig_catalog_free(cat);
}

static void test_classes(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	const struct iosig_mount *m;

	m = find_path(cat, dir("nfs"));
	assert_int_equal(m->cls, IOSIG_CLASS_NETWORK);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_DISCOVERED);
	assert_true(m->global);
	assert_int_equal(m->src[IOSIG_F_GLOBAL], IOSIG_SRC_DISCOVERED);
	/* A network filesystem's block size is its transfer size: not used. */
	assert_int_equal(m->src[IOSIG_F_BLOCK_SIZE], IOSIG_SRC_DEFAULT);
	m = find_path(cat, dir("9p"));
	assert_int_equal(m->cls, IOSIG_CLASS_NETWORK);
	assert_false(m->global);
	m = find_path(cat, dir("cover"));
	assert_int_equal(m->cls, IOSIG_CLASS_RAM);
	assert_true(m->volatile_);
	assert_int_equal(m->src[IOSIG_F_VOLATILE], IOSIG_SRC_DEFAULT);
	assert_int_equal(m->src[IOSIG_F_CAPACITY], IOSIG_SRC_DISCOVERED);
	assert_int_equal(m->src[IOSIG_F_FREE], IOSIG_SRC_DISCOVERED);
	assert_int_equal(m->src[IOSIG_F_BLOCK_SIZE], IOSIG_SRC_DISCOVERED);
	assert_true(m->block_size >= 512);
	iosig_catalog_free(cat);
}

/* Configuration on discovered mounts: class for an unknown type, patterns,
 * ignore (never stat'ed), data_dir, and a note for unused entries. */
static void test_config(void **state)
{
	char yaml[2000], want[600];
	struct iosig_catalog *cat;
	const struct iosig_mount *m;

	snprintf(yaml, sizeof(yaml),
		 "mounts:\n"
		 "  %s:\n"
		 "    class: ssd\n"
		 "    data_dir: ${MOUNT}/data\n"
		 "  \"%s/n*\":\n"
		 "    mttf: 7*y\n"
		 "    label: archive\n"
		 "  %s:\n"
		 "    ignore: true\n"
		 "  %s:\n"
		 "    mttf: 8*y\n"
		 "  /not/mounted/here:\n"
		 "    class: hdd\n",
		 dir("fuse"), base, dir("hung"), dir("nfs"));
	cat = build(yaml);
	m = find_path(cat, dir("fuse"));
	assert_null(m->ineligible);
	assert_int_equal(m->cls, IOSIG_CLASS_SSD);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_CONFIG);
	snprintf(want, sizeof(want), "%s/data", dir("fuse"));
	assert_string_equal(m->data_dir, want);
	assert_int_equal(m->src[IOSIG_F_DATA_DIR], IOSIG_SRC_CONFIG);
	/* The data directory is not created by building the catalog. */
	assert_int_equal(access(want, F_OK), -1);

	/* Exact entry after the pattern: 8 y; the pattern's label stays. */
	m = find_path(cat, dir("nfs"));
	assert_true(m->mttf == 8 * 365 * 86400.0);
	assert_int_equal(m->labels, IOSIG_LABEL_ARCHIVE);
	m = find_path(cat, dir("nfs/deep"));
	assert_true(m->mttf == 10 * 365 * 86400.0); /* FNM_PATHNAME: n* is one level */

	m = find_path(cat, dir("hung"));
	snprintf(want, sizeof(want), "ignored by the configuration (%s:9)", cfgfile);
	assert_string_equal(m->ineligible, want);
	assert_int_equal(m->dev, 0); /* never stat'ed */

	assert_int_equal(cat_catalog_notes(cat), 1);
	snprintf(want, sizeof(want), "%s:12: /not/mounted/here is not a mount point here: its settings are unused",
		 cfgfile);
	assert_string_equal(cat_catalog_note(cat, 0), want);
	iosig_catalog_free(cat);
}

/* A configured data_dir that is not on the mount, or a symlink: ineligible
 * with the reason and the config line. */
static void test_bad_data_dir(void **state)
{
	char yaml[1000], want[900];
	struct iosig_catalog *cat;
	const struct iosig_mount *m;

	symlink("/tmp", dir("9p/link"));
	snprintf(yaml, sizeof(yaml),
		 "mounts:\n"
		 "  %s:\n"
		 "    data_dir: /elsewhere\n"
		 "  %s:\n"
		 "    data_dir: ${MOUNT}/link/x\n",
		 dir("nfs"), dir("9p"));
	cat = build(yaml);
	m = find_path(cat, dir("nfs"));
	snprintf(want, sizeof(want), "configured data_dir /elsewhere is not on this mount (%s:3)",
		 cfgfile);
	assert_string_equal(m->ineligible, want);
	assert_null(m->data_dir);
	m = find_path(cat, dir("9p"));
	snprintf(want, sizeof(want), "configured data_dir: %s is a symbolic link (%s:5)",
		 dir("9p/link"), cfgfile);
	assert_string_equal(m->ineligible, want);
	iosig_catalog_free(cat);
	unlink(dir("9p/link"));
}

static void test_find(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	char p[400];

	/* Deepest mount point wins, for existing and not yet existing paths. */
	assert_ptr_equal(iosig_catalog_find(cat, dir("nfs/deep/file")),
			 find_path(cat, dir("nfs/deep")));
	assert_ptr_equal(iosig_catalog_find(cat, dir("nfs/a/b/c")), find_path(cat, dir("nfs")));
	assert_ptr_equal(iosig_catalog_find(cat, dir("nfs")), find_path(cat, dir("nfs")));
	assert_ptr_equal(iosig_catalog_find(cat, dir("nfsx/file")), find_path(cat, base));
	/* .. and symbolic links are resolved for what exists. */
	snprintf(p, sizeof(p), "%s/../nfs/x", dir("9p"));
	assert_ptr_equal(iosig_catalog_find(cat, p), find_path(cat, dir("nfs")));
	symlink(dir("nfs/deep"), dir("9p/tolink"));
	assert_ptr_equal(iosig_catalog_find(cat, dir("9p/tolink/file")),
			 find_path(cat, dir("nfs/deep")));
	unlink(dir("9p/tolink"));
	/* Relative to the working directory. */
	assert_int_equal(chdir(dir("nfs")), 0);
	assert_ptr_equal(iosig_catalog_find(cat, "new-file"), find_path(cat, dir("nfs")));
	assert_int_equal(chdir("/"), 0);
	/* On a pseudo filesystem: no catalog mount. */
	assert_null(iosig_catalog_find(cat, dir("proc/self")));
	/* Outside every mount of this table. */
	assert_null(iosig_catalog_find(cat, "/definitely/not/here"));
	iosig_catalog_free(cat);
}

/* A zram device (when the machine has one) is RAM, whatever filesystem is
 * on it; sysfs is what tells. */
static void test_zram(void **state)
{
	char devno[32] = "", line[600], table[300], name[64];
	struct iosig_catalog_opts opts = { .config = "", .probe_cache = "" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;
	const struct iosig_mount *m;
	FILE *fp;

	for (int i = 0; i < 16 && !devno[0]; i++) {
		snprintf(name, sizeof(name), "/sys/block/zram%d/dev", i);
		fp = fopen(name, "r");
		if (!fp)
			continue;
		if (!fgets(devno, sizeof(devno), fp))
			devno[0] = '\0';
		fclose(fp);
		devno[strcspn(devno, "\n")] = '\0';
	}
	if (!devno[0]) {
		printf("skipped: no zram device on this machine\n");
		skip();
	}
	snprintf(table, sizeof(table), "%s/zram-mountinfo", base);
	snprintf(line, sizeof(line), "90 1 %s / %s rw - ext4 /dev/zram rw\n", devno, dir("9p"));
	assert_int_equal(tfile_write(table, line), 0);
	opts.mountinfo = table;
	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), 0);
	m = iosig_catalog_mount(cat, 0);
	assert_int_equal(m->cls, IOSIG_CLASS_RAM);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_DISCOVERED);
	assert_true(m->volatile_);
	iosig_catalog_free(cat);
}

/* A mount table that cannot be read is an error naming it. */
static void test_bad_table(void **state)
{
	struct iosig_catalog_opts opts = { .mountinfo = "/nonexistent/mountinfo", .config = "",
					   .probe_cache = "" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;

	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), -ENOENT);
	assert_string_equal(err.file, "/nonexistent/mountinfo");
	assert_string_equal(err.msg, "cannot read the mount table: No such file or directory");
}

/* The real table of this machine builds, and never lists a pseudo fs. */
static void test_this_machine(void **state)
{
	struct iosig_catalog_opts opts = { .config = "", .probe_cache = "" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;

	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), 0);
	for (size_t i = 0; i < iosig_catalog_size(cat); i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);

		assert_false(cat_fstype_is_pseudo(m->fstype));
		assert_false(!strncmp(m->path, "/proc/", 6) || !strcmp(m->path, "/proc"));
		assert_true(m->ineligible || m->data_dir);
	}
	assert_non_null(iosig_catalog_find(cat, "/"));
	iosig_catalog_free(cat);
}

/* The process-wide catalog: built once from IOSIG_CONFIG, the same for
 * every thread; a bad configuration gives NULL and the same error every
 * time.  Each case runs in a child: the catalog lives as long as the
 * process. */
struct default_run {
	const struct iosig_catalog *cat;
};

static void *get_default(void *arg)
{
	struct default_run *run = arg;
	struct iosig_error err;

	run->cat = cat_default(&err);
	return NULL;
}

static int default_good(const char *cfg)
{
	struct default_run runs[4];
	pthread_t th[4];
	const struct iosig_mount *root;

	setenv("IOSIG_CONFIG", cfg, 1);
	setenv("IOSIG_PROBE_CACHE", "", 1);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, get_default, &runs[i]))
			return 10;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		if (!runs[i].cat || runs[i].cat != runs[0].cat)
			return 11;
	root = iosig_catalog_find(runs[0].cat, "/");
	if (!root || root->mttf != 3 * 365 * 86400.0 || root->src[IOSIG_F_MTTF] != IOSIG_SRC_CONFIG)
		return 12;
	if (strcmp(cat_catalog_config_file(runs[0].cat), cfg))
		return 13;
	return 0;
}

static int default_bad(const char *cfg)
{
	struct iosig_error e1, e2;

	setenv("IOSIG_CONFIG", cfg, 1);
	if (cat_default(&e1) || cat_default(&e2))
		return 20;
	if (strcmp(e1.msg, "mtff: unknown key in mount '/'; did you mean 'mttf'?") ||
	    strcmp(e1.msg, e2.msg) || e1.line != 3 || strcmp(e1.file, cfg))
		return 21;
	return 0;
}

static void test_default(void **state)
{
	static const char *const good = "mounts:\n  /:\n    class: ssd\n    mttf: 3*y\n";
	static const char *const bad = "mounts:\n  /:\n    mtff: 3*y\n";
	int (*fns[2])(const char *) = { default_good, default_bad };
	const char *texts[2] = { good, bad };

	for (int i = 0; i < 2; i++) {
		pid_t pid;
		int status;

		assert_int_equal(tfile_write(cfgfile, texts[i]), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(fns[i](cfgfile));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status))
			fail_msg("case %d: check %d failed", i, WEXITSTATUS(status));
	}
}

/* An md array's layout from its sysfs attributes (a fake sysfs directory:
 * creating arrays needs mdadm, root and spare devices). */
static void test_md_layout(void **state)
{
	static const struct {
		const char *level, *disks;
		bool ok;
		int kind;
		unsigned n, tolerated;
	} cases[] = {
		{ "raid1\n", "2\n", true, IOSIG_LAYOUT_RAID1, 2, 1 },
		{ "raid1\n", "3\n", true, IOSIG_LAYOUT_RAID1, 3, 2 },
		{ "raid10\n", "4\n", true, IOSIG_LAYOUT_RAID10, 4, 1 },
		/* no pairs: one failure of three survives */
		{ "raid10\n", "3\n", true, IOSIG_LAYOUT_ERASURE, 3, 1 },
		{ "raid4\n", "4\n", true, IOSIG_LAYOUT_RAID5, 4, 1 },
		{ "raid5\n", "5\n", true, IOSIG_LAYOUT_RAID5, 5, 1 },
		{ "raid6\n", "6\n", true, IOSIG_LAYOUT_RAID6, 6, 2 },
		{ "raid0\n", "3\n", true, IOSIG_LAYOUT_RAID0, 3, 0 },
		{ "linear\n", "1\n", true, IOSIG_LAYOUT_SINGLE, 1, 0 },
		{ "container\n", "2\n", false, 0, 0, 0 },
		{ "raid1\n", "0\n", false, 0, 0, 0 },
		{ "raid1\n", "70000\n", false, 0, 0, 0 },
		{ "raid1\n", NULL, false, 0, 0, 0 },
	};
	char md[600], f[700];

	snprintf(md, sizeof(md), "%s/md0", base);
	assert_int_equal(mkdir(md, 0755), 0);
	snprintf(f, sizeof(f), "%s/md", md);
	assert_int_equal(mkdir(f, 0755), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_layout l = { .kind = 99, .disks = 99, .tolerated = 99 };
		int fd;

		snprintf(f, sizeof(f), "%s/md/level", md);
		assert_int_equal(tfile_write(f, cases[i].level), 0);
		snprintf(f, sizeof(f), "%s/md/raid_disks", md);
		if (cases[i].disks)
			assert_int_equal(tfile_write(f, cases[i].disks), 0);
		else
			unlink(f);
		fd = open(md, O_RDONLY | O_DIRECTORY);
		assert_true(fd >= 0);
		if (cat_md_layout(fd, &l) != cases[i].ok)
			fail_msg("case %zu (%s): expected %s", i, cases[i].level,
				 cases[i].ok ? "a layout" : "none");
		close(fd);
		if (!cases[i].ok) {
			assert_int_equal(l.kind, 99); /* untouched */
			continue;
		}
		assert_int_equal(l.kind, cases[i].kind);
		assert_int_equal(l.disks, cases[i].n);
		assert_int_equal(l.tolerated, cases[i].tolerated);
		/* every layout discovery reports has an MTTDL */
		assert_false(isnan(iosig_mttdl(&l, 3e8, 86400, 1e-14, 1e9)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_ineligible),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_bad_data_dir),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_zram),
		cmocka_unit_test(test_bad_table),
		cmocka_unit_test(test_this_machine),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_md_layout),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
