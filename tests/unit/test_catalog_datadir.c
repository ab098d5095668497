/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_datadir.c - data directories: the choice rule for a mount
 * (configured, <mnt>/iosig/<user>, ~/.cache, /var/tmp, a writable mount
 * root), and the secure create-or-validate: created 0700 and owned by the
 * user, planted symbolic links and foreign or shared directories refused,
 * concurrent creators both succeed on the same directory.  The parts that
 * need another uid run in a child that drops to nobody; they are skipped
 * when not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
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

#define NOBODY 65534

static char base[] = "/tmp/iosig-dd-XXXXXX";
static struct stat base_st;

static const char *at(const char *rel)
{
	static char bufs[8][400];
	static unsigned next;
	char *b = bufs[next++ % 8];

	snprintf(b, 400, "%s/%s", base, rel);
	return b;
}

/* A catalog mount for `base` whose data directory is base/rel. */
static struct iosig_mount mount_for(const char *rel)
{
	struct iosig_mount m = { .path = base, .dev = base_st.st_dev, .fstype = "test" };

	m.data_dir = rel ? at(rel) : NULL;
	return m;
}

static int open_dd(const char *rel, struct iosig_error *err)
{
	struct iosig_mount m = mount_for(rel);
	int fd = -1, r;

	memset(err, 0, sizeof(*err));
	r = cat_datadir_open(&m, &fd, err);
	if (r == 0) {
		assert_true(fd >= 0);
		close(fd);
	} else {
		assert_int_equal(fd, -1);
	}
	return r;
}

static int setup(void **state)
{
	if (!mkdtemp(base) || stat(base, &base_st) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_create_0700(void **state)
{
	struct iosig_mount m = mount_for("a/b/data");
	struct iosig_error err;
	struct stat st;
	int fd = -1;

	assert_int_equal(cat_datadir_open(&m, &fd, &err), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, geteuid());
	/* The fd is a real directory fd: files can be created in it. */
	{
		int f = openat(fd, "probe", O_CREAT | O_EXCL | O_WRONLY, 0600);

		assert_true(f >= 0);
		close(f);
	}
	close(fd);
	assert_int_equal(stat(at("a"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(at("a/b"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* Existing and valid: opened again. */
	assert_int_equal(open_dd("a/b/data", &err), 0);
}

static void test_symlink_refused(void **state)
{
	struct iosig_error err;
	char want[600];
	struct stat st;

	assert_int_equal(mkdir(at("target"), 0700), 0);
	assert_int_equal(symlink(at("target"), at("planted")), 0);
	assert_int_equal(open_dd("planted", &err), -ELOOP);
	snprintf(want, sizeof(want), "data directory %s: %s is a symbolic link", at("planted"),
		 at("planted"));
	assert_string_equal(err.msg, want);
	/* A link in the middle of the path is refused as well, and nothing is
	 * created where it points. */
	assert_int_equal(open_dd("planted/data", &err), -ELOOP);
	assert_int_equal(stat(at("target/data"), &st), -1);
	/* A dangling link where the directory should be created. */
	assert_int_equal(symlink(at("nowhere"), at("dangling")), 0);
	assert_int_equal(open_dd("dangling", &err), -ELOOP);
	assert_int_equal(stat(at("nowhere"), &st), -1);
}

static void test_not_a_directory(void **state)
{
	struct iosig_error err;
	char want[600];
	int fd = open(at("plain"), O_CREAT | O_WRONLY, 0600);

	close(fd);
	assert_int_equal(open_dd("plain", &err), -ENOTDIR);
	snprintf(want, sizeof(want), "data directory %s: %s is not a directory", at("plain"),
		 at("plain"));
	assert_string_equal(err.msg, want);
}

static void test_shared_refused(void **state)
{
	struct iosig_error err;
	char want[600];

	/* The data directory itself writable by others. */
	assert_int_equal(mkdir(at("open"), 0700), 0);
	assert_int_equal(chmod(at("open"), 0777), 0);
	assert_int_equal(open_dd("open", &err), -EPERM);
	snprintf(want, sizeof(want),
		 "data directory %s: %s is writable by group or others (mode 0777)", at("open"),
		 at("open"));
	assert_string_equal(err.msg, want);
	/* A shared directory on the way that is not sticky: someone could
	 * rename our directory away. */
	assert_int_equal(mkdir(at("shared"), 0700), 0);
	assert_int_equal(chmod(at("shared"), 0777), 0);
	assert_int_equal(open_dd("shared/mine", &err), -EPERM);
	snprintf(want, sizeof(want),
		 "data directory %s: %s is writable by others and not sticky", at("shared/mine"),
		 at("shared"));
	assert_string_equal(err.msg, want);
	/* Sticky (like /tmp): fine. */
	assert_int_equal(chmod(at("shared"), 01777), 0);
	assert_int_equal(open_dd("shared/mine", &err), 0);
}

static void test_wrong_owner(void **state)
{
	struct iosig_error err;
	char want[600];

	if (geteuid() != 0) {
		printf("skipped: giving a directory to another uid needs root\n");
		skip();
	}
	assert_int_equal(mkdir(at("foreign"), 0700), 0);
	assert_int_equal(chown(at("foreign"), 12345, 12345), 0);
	assert_int_equal(open_dd("foreign", &err), -EPERM);
	snprintf(want, sizeof(want), "data directory %s: %s belongs to uid 12345, not to uid 0",
		 at("foreign"), at("foreign"));
	assert_string_equal(err.msg, want);
	/* A directory of another user on the way. */
	assert_int_equal(open_dd("foreign/sub", &err), -EPERM);
	snprintf(want, sizeof(want),
		 "data directory %s: %s belongs to uid 12345: it could replace what lies below",
		 at("foreign/sub"), at("foreign"));
	assert_string_equal(err.msg, want);
}

static void test_no_data_dir(void **state)
{
	struct iosig_mount m = mount_for(NULL);
	struct iosig_error err;
	char want[600];
	int fd = -1;

	m.ineligible = "mounted read-only";
	assert_int_equal(cat_datadir_open(&m, &fd, &err), -ENOENT);
	snprintf(want, sizeof(want), "%s has no data directory: mounted read-only", base);
	assert_string_equal(err.msg, want);
	/* The mount is not what the catalog saw any more. */
	m = mount_for("x");
	m.dev = base_st.st_dev + 1;
	assert_int_equal(cat_datadir_open(&m, &fd, &err), -EXDEV);
	snprintf(want, sizeof(want),
		 "data directory %s: %s is no longer the filesystem of the catalog", at("x"), base);
	assert_string_equal(err.msg, want);
	/* A data directory outside the mount. */
	m = mount_for("x");
	m.data_dir = "/elsewhere/x";
	assert_int_equal(cat_datadir_open(&m, &fd, &err), -EXDEV);
}

/* Several processes creating the same directory at once all succeed and all
 * get the same directory. */
static void test_race(void **state)
{
	enum { N = 8 };
	int go[2], res[2];
	pid_t pids[N];
	struct stat st;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(res), 0);
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct iosig_mount m = mount_for("race/deep/data");
			struct iosig_error err;
			struct stat cst;
			char c;
			int fd = -1;
			unsigned long long ino;

			close(go[1]);
			if (read(go[0], &c, 1) < 0)
				_exit(2);
			if (cat_datadir_open(&m, &fd, &err) < 0 || fstat(fd, &cst) < 0) {
				fprintf(stderr, "child: %s\n", err.msg);
				_exit(1);
			}
			ino = (unsigned long long)cst.st_ino;
			if (write(res[1], &ino, sizeof(ino)) != sizeof(ino))
				_exit(3);
			_exit(0);
		}
	}
	close(go[0]);
	close(res[1]);
	close(go[1]); /* all children start at once */
	for (int i = 0; i < N; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(stat(at("race/deep/data"), &st), 0);
	for (int i = 0; i < N; i++) {
		unsigned long long ino;

		assert_int_equal(read(res[0], &ino, sizeof(ino)), sizeof(ino));
		assert_true(ino == (unsigned long long)st.st_ino);
	}
	close(res[0]);
}

/* ---- the choice rule -------------------------------------------------- */

static int choose(const char *mnt, const char *configured, char **dir, char **why)
{
	const char *paths[] = { "/", base };
	struct cat_datadir_ctx ctx;
	struct stat st;

	if (stat(mnt, &st) < 0)
		return -errno;
	cat_datadir_ctx_init(&ctx, paths, 2);
	*dir = *why = NULL;
	return cat_datadir_choose(&ctx, mnt, st.st_dev, configured, dir, why);
}

static void test_choose_root(void **state)
{
	char *dir, *why, want[600];
	struct passwd *pw = getpwuid(geteuid());

	/* Our own directory as mount root: <mnt>/iosig-<uid>. */
	assert_int_equal(choose(base, NULL, &dir, &why), 0);
	snprintf(want, sizeof(want), "%s/iosig-%u", base, (unsigned)geteuid());
	assert_string_equal(dir, want);
	free(dir);
	/* Nothing was created. */
	assert_int_equal(access(want, F_OK), -1);
	/* An admin-provisioned <mnt>/iosig wins. */
	assert_int_equal(mkdir(at("iosig"), 0755), 0);
	assert_int_equal(choose(base, NULL, &dir, &why), 0);
	if (pw)
		snprintf(want, sizeof(want), "%s/iosig/%s", base, pw->pw_name);
	else
		snprintf(want, sizeof(want), "%s/iosig/%u", base, (unsigned)geteuid());
	assert_string_equal(dir, want);
	free(dir);
	/* A configured one, if it is on the mount. */
	snprintf(want, sizeof(want), "%s/conf/d", base);
	assert_int_equal(choose(base, want, &dir, &why), 0);
	assert_string_equal(dir, want);
	free(dir);
	assert_int_equal(choose(base, "/elsewhere", &dir, &why), -ENOENT);
	assert_string_equal(why, "configured data_dir /elsewhere is not on this mount");
	free(why);
	assert_int_equal(rmdir(at("iosig")), 0);
}

/* Expansion of ${USER}, ${UID}, ${HOME}, ${MOUNT} and ~. */
static void test_expand(void **state)
{
	struct cat_datadir_ctx ctx;
	char *s, *why, want[600], bad[64];

	setenv("HOME", base, 1);
	cat_datadir_ctx_init(&ctx, NULL, 0);
	s = cat_datadir_expand(&ctx, "${MOUNT}/x/${UID}", "/scratch", &why);
	snprintf(want, sizeof(want), "/scratch/x/%u", (unsigned)geteuid());
	assert_string_equal(s, want);
	free(s);
	s = cat_datadir_expand(&ctx, "~/d", "/scratch", &why);
	snprintf(want, sizeof(want), "%s/d", base);
	assert_string_equal(s, want);
	free(s);
	s = cat_datadir_expand(&ctx, "${HOME}//d/", "/scratch", &why);
	assert_string_equal(s, want);
	free(s);
	s = cat_datadir_expand(&ctx, "${MOUNT}/../x", "/scratch", &why);
	assert_null(s);
	assert_string_equal(why, "data_dir ${MOUNT}/../x: expands to '/scratch/../x', not an absolute path without . or ..");
	free(why);
	assert_true(cat_datadir_template_ok("/a/${USER}/${UID}", bad, sizeof(bad)));
	assert_false(cat_datadir_template_ok("/a/$USER", bad, sizeof(bad)));
	assert_string_equal(bad, "$USER");
	assert_false(cat_datadir_template_ok("/a/${NOPE}/b", bad, sizeof(bad)));
	assert_string_equal(bad, "${NOPE}");
	unsetenv("HOME");
}

/* Runs fn as nobody in a child; fn returns 0 or prints what failed. */
static void as_nobody(int (*fn)(void))
{
	pid_t pid;
	int status;

	if (geteuid() != 0) {
		printf("skipped: running as another uid needs root\n");
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(10);
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("child check failed (status %d)", WEXITSTATUS(status));
}

/* Runs choose(mnt) and checks that it picked `want`. */
static int expect_dir(const char *mnt, const char *want)
{
	char *dir = NULL, *why = NULL;
	int r = choose(mnt, NULL, &dir, &why);

	if (r != 0 || !dir || strcmp(dir, want)) {
		fprintf(stderr, "want %s, got r=%d %s\n", want, r, dir ? dir : "(null)");
		return 1;
	}
	return 0;
}

/* A root-owned 0755 mount root: nothing a user may create. */
static int nobody_closed(void)
{
	char *dir, *why, want[700];
	int r;

	unsetenv("HOME");
	unsetenv("XDG_CACHE_HOME");
	r = choose(base, NULL, &dir, &why);
	snprintf(want, sizeof(want),
		 "no data directory the user may create (tried %s/iosig-%u); set data_dir for %s in the config",
		 base, NOBODY, base);
	if (r != -ENOENT || !why || strcmp(why, want)) {
		fprintf(stderr, "want: %s\ngot:  %d %s\n", want, r, why ? why : "(null)");
		return 1;
	}
	return 0;
}

/* A sticky world-writable root (like /dev/shm): <mnt>/iosig-<uid>. */
static int nobody_sticky(void)
{
	char want[600];

	unsetenv("HOME");
	snprintf(want, sizeof(want), "%s/iosig-%u", base, NOBODY);
	return expect_dir(base, want);
}

/* Someone planted <mnt>/iosig-<uid> for us: the mount stays usable, through
 * an unpredictable <mnt>/iosig-<uid>-<16 hex>; once one of ours exists, every
 * later choice is that one, and look-alikes of others are passed over. */
static int nobody_planted(void)
{
	char *dir = NULL, *why = NULL, prefix[700], mine[800];
	int r;

	unsetenv("HOME");
	r = choose(base, NULL, &dir, &why);
	snprintf(prefix, sizeof(prefix), "%s/iosig-%u-", base, NOBODY);
	if (r != 0 || strncmp(dir, prefix, strlen(prefix)) ||
	    strspn(dir + strlen(prefix), "0123456789abcdef") != 16 || dir[strlen(prefix) + 16]) {
		fprintf(stderr, "want: %s<16 hex>\ngot:  %d %s\n", prefix, r, r ? why : dir);
		return 1;
	}
	free(dir);
	snprintf(mine, sizeof(mine), "%s%s", prefix, "7777777777777777");
	if (mkdir(mine, 0700))
		return 1;
	return expect_dir(base, mine);
}

/* $HOME on the mount: ~/.cache/iosig/data first. */
static int nobody_home(void)
{
	char want[600];

	setenv("HOME", at("home"), 1);
	unsetenv("XDG_CACHE_HOME");
	snprintf(want, sizeof(want), "%s/home/.cache/iosig/data", base);
	return expect_dir(base, want);
}

/* The root filesystem of this machine: /var/tmp/iosig-<uid> for a user
 * without a home there. */
static int nobody_var_tmp(void)
{
	char want[600];
	struct stat st;

	unsetenv("HOME");
	if (stat("/var/tmp", &st) < 0 || !(st.st_mode & S_ISVTX))
		return 0; /* not the usual layout: nothing to check */
	snprintf(want, sizeof(want), "/var/tmp/iosig-%u", NOBODY);
	return expect_dir("/", want);
}

static void test_choose_user(void **state)
{
	as_nobody(nobody_closed);
	assert_int_equal(chmod(base, 01777), 0);
	as_nobody(nobody_sticky);
	assert_int_equal(mkdir(at("home"), 0755), 0);
	assert_int_equal(chown(at("home"), NOBODY, NOBODY), 0);
	as_nobody(nobody_home);
	assert_int_equal(mkdir(at("iosig-65534"), 0700), 0);
	/* A look-alike of root's sorts first and is not taken. */
	assert_int_equal(mkdir(at("iosig-65534-0000000000000000"), 0700), 0);
	as_nobody(nobody_planted);
	as_nobody(nobody_var_tmp);
	assert_int_equal(chmod(base, 0700), 0);
}

/* cat_path_under(), the containment test of data directories, mount
 * lookups and discovery: whole components only, "/" holds everything. */
static void test_path_under(void **state)
{
	static const struct {
		const char *path, *dir;
		bool under;
	} cases[] = {
		{ "/a/b", "/a/b", true },     { "/a/b/c", "/a/b", true },
		{ "/a/b/", "/a/b", true },    { "/a/bc", "/a/b", false },
		{ "/a", "/a/b", false },      { "/x/b", "/a/b", false },
		{ "/", "/", true },           { "/anything/at/all", "/", true },
		{ "relative", "/", false },   { "/proc/self", "/proc", true },
		{ "/procfs", "/proc", false }, { "/sys", "/sys", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (cat_path_under(cases[i].path, cases[i].dir) != cases[i].under)
			fail_msg("cat_path_under(\"%s\", \"%s\") is not %s", cases[i].path,
				 cases[i].dir, cases[i].under ? "true" : "false");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_0700),
		cmocka_unit_test(test_symlink_refused),
		cmocka_unit_test(test_not_a_directory),
		cmocka_unit_test(test_shared_refused),
		cmocka_unit_test(test_wrong_owner),
		cmocka_unit_test(test_no_data_dir),
		cmocka_unit_test(test_race),
		cmocka_unit_test(test_choose_root),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_choose_user),
		cmocka_unit_test(test_path_under),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
