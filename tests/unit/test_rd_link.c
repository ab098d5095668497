/* SPDX-License-Identifier: MIT */
/*
 * test_rd_link.c - the links the runtime makes and their anchors
 * (rd_link.h): a redirected file's link gets an anchor in the data
 * directory of its own filesystem; removing the link takes the data with
 * it exactly when the link has no other name (renamed anywhere on its
 * filesystem: still the only one; a copy, a second hard link: not);
 * links without an anchor follow the old name rule; an anchor whose link
 * is gone is replaced; a data file that changed meanwhile is kept;
 * finalize drops the anchor.
 *
 * Real files on two tmpfs mounts in a private mount namespace: "links"
 * (where programs put their files) and "data" (the only mount that
 * satisfies `persist`: the configuration says it is not volatile), both
 * with a data directory.  Needs root (mounts); exits 77 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog_internal.h"
#include "dirs.h"
#include "finalize.h"
#include "mounts.h"
#include "onlyconf.h"
#include "rd_link.h"
#include "redirect.h"
#include "redirected.h"
#include "runtime.h"

static char base[] = "/tmp/iosig-rdl-XXXXXX";

static const char *at(const char *rel)
{
	return tdir_path(base, rel);
}

static int write_config(void)
{
	char links[600], data[600];
	const char *entries[] = { links, data, NULL };

	snprintf(links, sizeof(links), "\"%s\": { ignore: false, data_dir: \"%s\" }", at("links"),
		 at("links/dd"));
	snprintf(data, sizeof(data), "\"%s\": { ignore: false, data_dir: \"%s\", volatile: false }",
		 at("data"), at("data/dd"));
	return tconf_only(at("iosig.yaml"), entries);
}

static int setup(void **state)
{
	const char *why = tmnt_unavailable(false);

	if (why)
		tskip(why);
	if (tmnt_private() < 0)
		tskip("cannot create a private mount namespace");
	if (!mkdtemp(base))
		return -1;
	if (tmnt_mount("iosig-rdl-links", at("links"), "tmpfs", 0, "size=16m,mode=755") < 0 ||
	    tmnt_mount("iosig-rdl-data", at("data"), "tmpfs", 0, "size=16m,mode=755") < 0 ||
	    mkdir(at("links/sub"), 0755) < 0 || write_config() < 0)
		return -1;
	setenv("IOSIG_CONFIG", at("iosig.yaml"), 1);
	setenv("IOSIG_PROBE_CACHE", "", 1);
	unsetenv("IOSIG_DISABLE");
	unsetenv("IOSIG_DRYRUN");
	rt_env_reload();
	if (!cat_default(NULL))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	tmnt_umount_all();
	rmdir(at("links"));
	rmdir(at("data"));
	unlink(at("iosig.yaml"));
	rmdir(base);
	return 0;
}

/* links/<rel>. */
static const char *in_links(const char *rel)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/links/%s", base, rel);
	return buf;
}

/* Creates links/<rel> through the runtime, as an iosig-redirect rule with
 * signature `persist` would; returns the data file's path (static).  The
 * file is small and so are the mounts: the signature says how small
 * (without totalsize a mount needs room for 1 GiB, docs/selection.md). */
static const char *create(const char *rel)
{
	static char target[PATH_MAX];

	assert_int_equal(tredir_create(in_links(rel), "persist totalsize(1*MiB)", "data", target, sizeof(target)), 0);
	assert_memory_equal(target, at("data/dd/L-"), strlen(at("data/dd/L-")));
	return target;
}

static const char *base_name(const char *path)
{
	return strrchr(path, '/') + 1;
}

/* The anchor of a data file: links/dd/anchors/<its name>. */
static const char *anchor_of(const char *data)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", at("links/dd/" RD_ANCHOR_DIR), base_name(data));
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_create_makes_anchor(void **state)
{
	const char *data = create("f1");
	struct stat l, a, ad;

	assert_int_equal(lstat(at("links/f1"), &l), 0);
	assert_int_equal(lstat(anchor_of(data), &a), 0);
	assert_true(S_ISLNK(a.st_mode));
	assert_true(a.st_ino == l.st_ino && a.st_dev == l.st_dev);
	assert_int_equal(l.st_nlink, 2);
	/* The anchors directory: the user's, nobody else may write it. */
	assert_int_equal(lstat(at("links/dd/" RD_ANCHOR_DIR), &ad), 0);
	assert_true(S_ISDIR(ad.st_mode));
	assert_int_equal(ad.st_mode & 0777, 0700);
}

/* rd_link_removal_begin + unlink + rd_link_removal_end of links/<rel>. */
static int remove_link(const char *rel, bool *ret_sole, int *ret_anchor)
{
	struct rd_link_removal rm;
	const char *why = NULL;
	int r;

	assert_true(rd_link_removal_begin(cat_default(NULL), AT_FDCWD, in_links(rel), &rm));
	assert_int_equal(rm.link.kind, RD_LINK_OWN);
	*ret_sole = rm.sole;
	*ret_anchor = rm.anchor;
	assert_int_equal(unlink(in_links(rel)), 0);
	r = rd_link_removal_end(&rm, true, &why);
	if (r)
		assert_non_null(why);
	return r;
}

static void test_renamed_link_frees_data(void **state)
{
	const char *data = strdup(create("f2"));
	int anchor;
	bool sole;

	/* A program without libiosig moves the link to another directory
	 * and name: the same inode, so still the anchored link. */
	assert_int_equal(rename(at("links/f2"), at("links/sub/renamed")), 0);
	assert_int_equal(remove_link("sub/renamed", &sole, &anchor), 0);
	assert_true(sole);
	assert_int_equal(anchor, RD_ANCHOR_THIS);
	assert_false(exists(data));
	assert_false(exists(anchor_of(data)));
	free((void *)data);
}

static void test_copy_keeps_data(void **state)
{
	const char *data = strdup(create("f3"));
	int anchor;
	bool sole;

	/* A copy of the link (cp -P): another inode, same target. */
	assert_int_equal(symlink(data, at("links/copy3")), 0);
	assert_int_equal(remove_link("copy3", &sole, &anchor), -EMLINK);
	assert_false(sole);
	assert_int_equal(anchor, RD_ANCHOR_OTHER);
	assert_true(exists(data));
	/* The runtime's own link still takes it. */
	assert_int_equal(remove_link("f3", &sole, &anchor), 0);
	assert_true(sole);
	assert_false(exists(data));
	free((void *)data);
}

static void test_hard_link_keeps_data(void **state)
{
	const char *data = strdup(create("f4"));
	int anchor;
	bool sole;

	/* A second name of the same link (link(2) does not follow it). */
	assert_int_equal(linkat(AT_FDCWD, at("links/f4"), AT_FDCWD, at("links/sub/h4"), 0), 0);
	assert_int_equal(remove_link("f4", &sole, &anchor), -EMLINK);
	assert_false(sole);
	assert_int_equal(anchor, RD_ANCHOR_THIS);
	assert_true(exists(data) && exists(anchor_of(data)));
	assert_int_equal(remove_link("sub/h4", &sole, &anchor), 0);
	assert_true(sole);
	assert_false(exists(data) || exists(anchor_of(data)));
	free((void *)data);
}

/* A link made without an anchor (before anchors, or on a filesystem
 * without a data directory): the data file's name must record the link's. */
static void test_unanchored_name_rule(void **state)
{
	const char *data = at("data/dd/L-0123456789abcdef-n5");
	int fd, anchor;
	bool sole;

	fd = open(data, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(data, at("links/n5")), 0);
	assert_int_equal(symlink(data, at("links/other5")), 0);
	assert_int_equal(remove_link("other5", &sole, &anchor), -EMLINK);
	assert_int_equal(anchor, RD_ANCHOR_NONE);
	assert_true(exists(data));
	assert_int_equal(remove_link("n5", &sole, &anchor), 0);
	assert_true(sole);
	assert_false(exists(data));
}

static void test_data_changed_is_kept(void **state)
{
	const char *data = strdup(create("f6"));
	struct rd_link_removal rm;
	const char *why = NULL;
	int fd;

	assert_true(rd_link_removal_begin(cat_default(NULL), AT_FDCWD, at("links/f6"), &rm));
	assert_true(rm.sole);
	/* The user replaces the data file before the link goes. */
	fd = open(at("data/dd/new"), O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rename(at("data/dd/new"), data), 0);
	assert_int_equal(unlink(at("links/f6")), 0);
	assert_int_equal(rd_link_removal_end(&rm, true, &why), -EAGAIN);
	assert_non_null(strstr(why, "changed"));
	assert_true(exists(data));
	unlink(data);
	unlink(anchor_of(data));
	free((void *)data);
}

static void test_not_removed_keeps_data(void **state)
{
	const char *data = strdup(create("f7"));
	struct rd_link_removal rm;

	assert_true(rd_link_removal_begin(cat_default(NULL), AT_FDCWD, at("links/f7"), &rm));
	assert_int_equal(rd_link_removal_end(&rm, false, NULL), -ENOENT);
	assert_true(exists(data) && exists(anchor_of(data)));
	assert_int_equal(unlink(at("links/f7")), 0);
	unlink(data);
	unlink(anchor_of(data));
	free((void *)data);
}

/* An anchor whose link is gone everywhere (link count 1) gives way to the
 * new link of the same data file's name; one still linked does not. */
static void test_anchor_make_replaces_dead(void **state)
{
	int pfd = open(at("links"), O_PATH | O_DIRECTORY);
	int ddfd = open(at("links/dd"), O_RDONLY | O_DIRECTORY);
	const char *name = "G-0123456789abcdef0123456789abcdef-g8";
	struct stat a, l;
	int afd;

	assert_true(pfd >= 0 && ddfd >= 0);
	assert_int_equal(rd_anchor_dir_at(ddfd, true, &afd), 0);
	assert_int_equal(symlink(at("data/dd/G-0123456789abcdef0123456789abcdef-g8"), at("links/g8")),
			 0);
	assert_int_equal(rd_anchor_make(pfd, "g8", afd, name), 0);
	/* The program removes the link without libiosig, then it comes
	 * back (a global file created again). */
	assert_int_equal(unlink(at("links/g8")), 0);
	assert_int_equal(symlink(at("data/dd/G-0123456789abcdef0123456789abcdef-g8"), at("links/g8")),
			 0);
	assert_int_equal(rd_anchor_make(pfd, "g8", afd, name), 0);
	assert_int_equal(fstatat(afd, name, &a, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(lstat(at("links/g8"), &l), 0);
	assert_true(a.st_ino == l.st_ino);
	/* A live anchor of another link stays. */
	assert_int_equal(symlink(at("data/dd/G-0123456789abcdef0123456789abcdef-g8"), at("links/h8")),
			 0);
	assert_int_equal(rd_anchor_make(pfd, "h8", afd, name), -EEXIST);
	assert_int_equal(fstatat(afd, name, &a, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(a.st_ino == l.st_ino);
	unlink(at("links/g8"));
	unlink(at("links/h8"));
	unlinkat(afd, name, 0);
	close(afd);
	close(ddfd);
	close(pfd);
}

static void test_finalize_drops_anchor(void **state)
{
	const char *data = strdup(create("f9"));
	struct fin_report rep;

	assert_true(exists(anchor_of(data)));
	assert_int_equal(fin_path(cat_default(NULL), AT_FDCWD, at("links/f9"), 0, &rep), 0);
	assert_int_equal(rep.action, FIN_COPIED);
	assert_false(exists(anchor_of(data)));
	assert_false(exists(data));
	unlink(at("links/f9"));
	free((void *)data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_makes_anchor),
		cmocka_unit_test(test_renamed_link_frees_data),
		cmocka_unit_test(test_copy_keeps_data),
		cmocka_unit_test(test_hard_link_keeps_data),
		cmocka_unit_test(test_unanchored_name_rule),
		cmocka_unit_test(test_data_changed_is_kept),
		cmocka_unit_test(test_not_removed_keeps_data),
		cmocka_unit_test(test_anchor_make_replaces_dead),
		cmocka_unit_test(test_finalize_drops_anchor),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
