/* SPDX-License-Identifier: MIT */
/*
 * test_gc.c - freeing orphaned data files (gc.h): a data file whose link
 * was removed by a program without libiosig is freed, with its anchor, and
 * only then; a link renamed anywhere on its filesystem or with a second
 * name keeps its data; data without an anchor is kept; an anchor whose data
 * is gone is dropped; MOUNTs restrict what is freed; a dry run changes
 * nothing; files and anchors of another user are never touched, nor is
 * anything of root's by another user's gc.
 *
 * Real files on three tmpfs mounts in a private mount namespace: "links"
 * (where programs put their files; it has a data directory, for the
 * anchors), "data" (chosen for `persist`: the configuration says it is not
 * volatile) and "archive" (chosen for `archive`: labelled so).  Needs root;
 * exits 77 otherwise.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog_internal.h"
#include "dirs.h"
#include "gc.h"
#include "mounts.h"
#include "onlyconf.h"
#include "rd_link.h"
#include "redirected.h"
#include "runtime.h"

#define NOBODY 65534

static char base[] = "/tmp/iosig-gc-XXXXXX";

static const char *at(const char *rel)
{
	return tdir_path(base, rel);
}

static int setup(void **state)
{
	const char *why = tmnt_unavailable(false);
	char links[600], data[600], archive[600];
	const char *entries[] = { links, data, archive, NULL };

	if (why)
		tskip(why);
	if (tmnt_private() < 0)
		tskip("cannot create a private mount namespace");
	if (!mkdtemp(base) || chmod(base, 0755))
		return -1;
	snprintf(links, sizeof(links), "\"%s\": { ignore: false, data_dir: \"%s\" }", at("links"),
		 at("links/dd"));
	snprintf(data, sizeof(data), "\"%s\": { ignore: false, data_dir: \"%s\", volatile: false }",
		 at("data"), at("data/dd"));
	snprintf(archive, sizeof(archive),
		 "\"%s\": { ignore: false, data_dir: \"%s\", label: archive }", at("archive"),
		 at("archive/dd"));
	if (tmnt_mount("iosig-gc", at("links"), "tmpfs", 0, "size=16m,mode=755") < 0 ||
	    tmnt_mount("iosig-gc", at("data"), "tmpfs", 0, "size=16m,mode=755") < 0 ||
	    tmnt_mount("iosig-gc", at("archive"), "tmpfs", 0, "size=16m,mode=755") < 0 ||
	    mkdir(at("links/sub"), 0755) < 0 || tconf_only(at("iosig.yaml"), entries) < 0)
		return -1;
	setenv("IOSIG_CONFIG", at("iosig.yaml"), 1);
	setenv("IOSIG_PROBE_CACHE", "", 1);
	unsetenv("IOSIG_DISABLE");
	unsetenv("IOSIG_DRYRUN");
	rt_env_reload();
	return cat_default(NULL) ? 0 : -1;
}

static int teardown(void **state)
{
	tmnt_umount_all();
	rmdir(at("links"));
	rmdir(at("data"));
	rmdir(at("archive"));
	unlink(at("iosig.yaml"));
	rmdir(base);
	return 0;
}

/* Creates links/<rel> through the runtime with signature `sig`; returns the
 * data file's path (malloc'ed).  The file is small and so are the mounts:
 * the signature says how small (without totalsize a mount needs room for
 * 1 GiB, docs/selection.md). */
static char *create(const char *rel, const char *sig)
{
	char target[PATH_MAX], path[PATH_MAX], sigtext[200];

	snprintf(path, sizeof(path), "%s/links/%s", base, rel);
	snprintf(sigtext, sizeof(sigtext), "%s totalsize(1*MiB)", sig);
	assert_int_equal(tredir_create(path, sigtext, "some data", target, sizeof(target)), 0);
	assert_true(target[0] == '/');
	return strdup(target);
}

static const char *anchor_of(const char *data)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", at("links/dd/" RD_ANCHOR_DIR), strrchr(data, '/') + 1);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* What the report callback saw of one data file. */
struct seen {
	const char *path;     /* the file asked about */
	int action;           /* its action, -1 if not reported */
	unsigned count;       /* how often it was reported */
};

static void record(const struct gc_entry *e, void *arg)
{
	struct seen *s = arg;

	if (!strcmp(e->data_path, s->path)) {
		s->action = e->action;
		s->count++;
		if (e->action == GC_FREED)
			assert_true(e->size == 9 && e->bytes > 0);
	}
}

/* gc_run() on every mount (or on `only`), for the action on `path`. */
static int gc_for(const char *path, unsigned flags, const struct iosig_mount *only,
		  struct gc_stats *ret_stats)
{
	struct seen s = { path, -1, 0 };
	const struct iosig_mount *mounts[1] = { only };

	assert_int_equal(gc_run(cat_default(NULL), mounts, only ? 1 : 0, flags, record, &s,
				ret_stats), 0);
	assert_true(s.count <= 1);
	return s.action;
}

static void test_orphan_freed(void **state)
{
	char *data = create("f1", "persist");
	struct gc_stats st;

	assert_true(exists(anchor_of(data)));
	/* rm without libiosig: the data stays. */
	assert_int_equal(unlink(at("links/f1")), 0);
	assert_true(exists(data));
	assert_int_equal(gc_for(data, GC_DRY_RUN, NULL, &st), GC_FREED);
	assert_true(st.freed >= 1);
	assert_true(exists(data) && exists(anchor_of(data)));
	assert_int_equal(gc_for(data, 0, NULL, &st), GC_FREED);
	assert_true(st.freed_bytes > 0);
	assert_false(exists(data) || exists(anchor_of(data)));
	/* Nothing left to do. */
	assert_int_equal(gc_for(data, 0, NULL, NULL), -1);
	free(data);
}

static void test_moved_link_is_live(void **state)
{
	char *data = create("f2", "persist");

	/* mv without libiosig, to another directory and name. */
	assert_int_equal(rename(at("links/f2"), at("links/sub/moved")), 0);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_LIVE);
	assert_true(exists(data));
	/* A second name keeps it alive when the first goes. */
	assert_int_equal(link(at("links/sub/moved"), at("links/second")), 0);
	assert_int_equal(unlink(at("links/sub/moved")), 0);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_LIVE);
	assert_true(exists(data));
	assert_int_equal(unlink(at("links/second")), 0);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_FREED);
	assert_false(exists(data));
	free(data);
}

static void test_unanchored_kept(void **state)
{
	const char *data = at("data/dd/L-00112233445566ff-old");
	int fd;

	/* A data file from before anchors, whose link is gone. */
	fd = open(data, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_UNANCHORED);
	assert_true(exists(data));
	unlink(data);
}

static void test_anchor_of_gone_data_dropped(void **state)
{
	char *data = create("f3", "persist");
	struct gc_stats st;

	/* Link and data removed without libiosig: the anchor is all that is
	 * left. */
	assert_int_equal(unlink(at("links/f3")), 0);
	assert_int_equal(unlink(data), 0);
	assert_int_equal(gc_for(data, GC_DRY_RUN, NULL, &st), GC_DROPPED);
	assert_true(exists(anchor_of(data)));
	assert_int_equal(gc_for(data, 0, NULL, &st), GC_DROPPED);
	assert_true(st.dropped >= 1);
	assert_false(exists(anchor_of(data)));
	free(data);
}

static void test_mounts_restrict(void **state)
{
	char *a = create("fa", "persist"), *b = create("fb", "archive");
	const struct iosig_mount *archive = iosig_catalog_find(cat_default(NULL), at("archive"));

	assert_non_null(archive);
	assert_memory_equal(b, at("archive/dd/"), strlen(at("archive/dd/")));
	assert_int_equal(unlink(at("links/fa")), 0);
	assert_int_equal(unlink(at("links/fb")), 0);
	assert_int_equal(gc_for(a, 0, archive, NULL), -1);
	assert_true(exists(a));
	assert_false(exists(b));
	assert_int_equal(gc_for(a, 0, NULL, NULL), GC_FREED);
	assert_false(exists(a));
	free(a);
	free(b);
}

static void test_data_with_hard_links_kept(void **state)
{
	char *data = create("f4", "persist");

	assert_int_equal(link(data, at("data/dd/second-name")), 0);
	assert_int_equal(unlink(at("links/f4")), 0);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_KEPT);
	assert_true(exists(data));
	unlink(at("data/dd/second-name"));
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_FREED);
	free(data);
}

/* Another user's anchor among root's, and root's data under an anchor whose
 * data file another user owns: neither is touched. */
static void test_other_users_untouched(void **state)
{
	char *data = create("f5", "persist");
	const char *foreign = at("links/dd/" RD_ANCHOR_DIR "/L-aaaaaaaaaaaaaaaa-planted");

	assert_int_equal(symlink(data, foreign), 0);
	assert_int_equal(lchown(foreign, NOBODY, NOBODY), 0);
	assert_int_equal(unlink(at("links/f5")), 0);
	/* The data file is given to another user: not root's to free. */
	assert_int_equal(chown(data, NOBODY, NOBODY), 0);
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_KEPT);
	assert_true(exists(data) && exists(foreign) && exists(anchor_of(data)));
	unlink(foreign);
	unlink(anchor_of(data));
	unlink(data);
	free(data);
}

/* gc run by nobody finds nothing of root's to free. */
static void test_other_user_gc(void **state)
{
	char *data = create("f6", "persist");
	pid_t pid;
	int status;

	assert_int_equal(unlink(at("links/f6")), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct iosig_catalog_opts opts = { .config = at("iosig.yaml"), .probe_cache = "" };
		struct iosig_catalog *cat = NULL;
		struct iosig_error err = { 0 };
		struct gc_stats st;

		if (setgid(NOBODY) || setuid(NOBODY) || iosig_catalog_new(&opts, &cat, &err) < 0 ||
		    gc_run(cat, NULL, 0, 0, NULL, NULL, &st) < 0)
			_exit(2);
		_exit(st.freed || st.dropped ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(exists(data) && exists(anchor_of(data)));
	assert_int_equal(gc_for(data, 0, NULL, NULL), GC_FREED);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orphan_freed),
		cmocka_unit_test(test_moved_link_is_live),
		cmocka_unit_test(test_unanchored_kept),
		cmocka_unit_test(test_anchor_of_gone_data_dropped),
		cmocka_unit_test(test_mounts_restrict),
		cmocka_unit_test(test_data_with_hard_links_kept),
		cmocka_unit_test(test_other_users_untouched),
		cmocka_unit_test(test_other_user_gc),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
