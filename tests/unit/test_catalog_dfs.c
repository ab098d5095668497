/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_dfs.c - layouts of distributed filesystems read from the
 * filesystem (discover_dfs.c): the GlusterFS client graph of every volume
 * type the gluster CLI makes, malformed graphs refused with the line, and
 * discovery on a generated mount table whose fuse.glusterfs mount points
 * are directories holding a .meta/graphs/active/volfile: the layout is
 * taken, with where it came from; a FUSE mount of another user, a graph
 * that cannot be read or parsed, leave the class default with a note; the
 * configuration still overrides.  Real GlusterFS volumes: tests/dfs.
 */
#include <errno.h>
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
#include "files.h"

/* One client volume of a graph: "volume NAME / type TYPE / options /
 * subvolumes / end-volume". */
#define CLIENT(n) "volume v-client-" #n "\n    type protocol/client\n" \
	"    option remote-host h\n    option password secret\nend-volume\n\n"

static const char volfile_rep2[] =
	"# a replica 2 volume as glusterd writes it for a FUSE client\n"
	CLIENT(0) CLIENT(1)
	"volume v-replicate-0\n    type cluster/replicate\n    option afr-pending-xattr v-client-0,v-client-1\n"
	"    subvolumes v-client-0 v-client-1\nend-volume\n\n"
	"volume v-dht\n    type cluster/distribute\n    subvolumes v-replicate-0\nend-volume\n\n"
	"volume v\n    type debug/io-stats\n    subvolumes v-dht\nend-volume\n\n"
	"volume meta-autoload\n    type meta\n    subvolumes v\nend-volume\n";

static const char volfile_arbiter[] =
	CLIENT(0) CLIENT(1) CLIENT(2)
	"volume v-replicate-0\n    type cluster/replicate\n    option arbiter-count 1\n"
	"    subvolumes v-client-0 v-client-1 v-client-2\nend-volume\n";

static const char volfile_ec[] =
	CLIENT(0) CLIENT(1) CLIENT(2) CLIENT(3) CLIENT(4) CLIENT(5)
	"volume v-disperse-0\n\ttype cluster/disperse\n\toption redundancy 2\n"
	"\tsubvolumes v-client-0 v-client-1 v-client-2 v-client-3 v-client-4 v-client-5\nend-volume\n";

/* 2 x 3: two sets; a file lives in one. */
static const char volfile_dist_rep[] =
	CLIENT(0) CLIENT(1) CLIENT(2) CLIENT(3) CLIENT(4) CLIENT(5)
	"volume v-replicate-0\n type cluster/replicate\n subvolumes v-client-0 v-client-1 v-client-2\nend-volume\n"
	"volume v-replicate-1\n type cluster/replicate\n subvolumes v-client-3 v-client-4 v-client-5\nend-volume\n"
	"volume v-dht\n type cluster/distribute\n subvolumes v-replicate-0 v-replicate-1\nend-volume\n";

static const char volfile_dist[] =
	CLIENT(0) CLIENT(1)
	"volume v-dht\n    type cluster/distribute\n    subvolumes v-client-0 v-client-1\nend-volume\n";

static void expect_layout(const char *text, enum iosig_layout_kind kind, unsigned disks,
			  unsigned tolerated, unsigned sets, const char *desc)
{
	struct cat_dfs_layout l;
	char why[200] = "";

	if (cat_gluster_volfile_layout(text, strlen(text), &l, why, sizeof(why)) != 0)
		fail_msg("refused: %s", why);
	assert_int_equal(l.layout.kind, kind);
	assert_int_equal(l.layout.disks, disks);
	assert_int_equal(l.layout.tolerated, tolerated);
	assert_int_equal(l.sets, sets);
	assert_string_equal(l.desc, desc);
}

static void test_volfile_layouts(void **state)
{
	expect_layout(volfile_rep2, IOSIG_LAYOUT_REPLICATION, 2, 1, 1, "replica 2");
	/* The arbiter brick holds no data: two copies. */
	expect_layout(volfile_arbiter, IOSIG_LAYOUT_REPLICATION, 2, 1, 1, "replica 2");
	expect_layout(volfile_ec, IOSIG_LAYOUT_ERASURE, 6, 2, 1, "disperse 6 = 4 + 2");
	expect_layout(volfile_dist_rep, IOSIG_LAYOUT_REPLICATION, 3, 2, 2, "replica 3");
	expect_layout(volfile_dist, IOSIG_LAYOUT_SINGLE, 1, 0, 0, "no replica or disperse set");
	/* Sets of different shapes: the weakest. */
	expect_layout(CLIENT(0) CLIENT(1) CLIENT(2) CLIENT(3) CLIENT(4)
		      "volume a\n type cluster/replicate\n subvolumes v-client-0 v-client-1 v-client-2\nend-volume\n"
		      "volume b\n type cluster/replicate\n subvolumes v-client-3 v-client-4\nend-volume\n",
		      IOSIG_LAYOUT_REPLICATION, 2, 1, 2, "replica 2");
	/* The translators' own names; CRLF line ends. */
	expect_layout("volume a\r\n type cluster/afr\r\n subvolumes x y z\r\nend-volume\r\n",
		      IOSIG_LAYOUT_REPLICATION, 3, 2, 1, "replica 3");
	expect_layout("volume a\n type cluster/ec\n option redundancy 1\n subvolumes x y z\nend-volume\n",
		      IOSIG_LAYOUT_ERASURE, 3, 1, 1, "disperse 3 = 2 + 1");
	/* A replica of one is no redundancy. */
	expect_layout("volume a\n type cluster/replicate\n subvolumes x\nend-volume\n",
		      IOSIG_LAYOUT_SINGLE, 1, 0, 1, "no replica or disperse set");
}

static void expect_refused(const char *text, size_t len, const char *msg)
{
	struct cat_dfs_layout l;
	char why[200] = "";

	assert_int_equal(cat_gluster_volfile_layout(text, len, &l, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, msg);
}

static void test_volfile_errors(void **state)
{
	static const char nul[] = "volume a\n type cluster/replicate\0 x\nend-volume\n";

	expect_refused("", 0, "no volume in the graph");
	expect_refused("# only a comment\n", 17, "no volume in the graph");
	expect_refused("type cluster/replicate\n", 23, "line 1: 'type' outside a volume");
	expect_refused("volume a\nvolume b\n", 18, "line 2: 'volume' inside volume of line 1");
	expect_refused("volume\n", 7, "line 1: a volume without a name");
	expect_refused("volume a\n type\n", 15, "line 2: 'type' without a translator");
	expect_refused("volume a\n type cluster/replicate\n subvolumes x y\n", 48,
		       "volume of line 1 has no end-volume");
	expect_refused("volume a\n type cluster/disperse\n subvolumes x y z\nend-volume\n", 61,
		       "line 1: a disperse volume with 3 subvolumes and no redundancy");
	expect_refused("volume a\n type cluster/disperse\n option redundancy 3\n subvolumes x y z\nend-volume\n",
		       83, "line 1: a disperse volume with 3 subvolumes and too much redundancy");
	expect_refused("volume a\n type cluster/disperse\n option redundancy -1\nend-volume\n", 64,
		       "line 3: redundancy is not a count");
	expect_refused("volume a\n type cluster/replicate\n option arbiter-count 9999999\nend-volume\n",
		       73, "line 3: arbiter-count is not a count");
	expect_refused("volume a\n type cluster/replicate\n option arbiter-count 2\n subvolumes x y\nend-volume\n",
		       84, "line 1: a replicate volume with 2 subvolumes and 2 arbiters");
	expect_refused("volume a\n type cluster/replicate\nend-volume\n", 43,
		       "line 1: a replicate volume with 0 subvolumes and 0 arbiters");
	expect_refused(nul, sizeof(nul) - 1, "line 2: a NUL byte");
}

/* ---- discovery -------------------------------------------------------- */

static char base[] = "/tmp/iosig-dfs-XXXXXX";
static char mountinfo[300], cfgfile[300];

static const char *dir(const char *name)
{
	static char bufs[16][300];
	static unsigned next;
	char *b = bufs[next++ % 16];

	snprintf(b, 300, "%s/%s", base, name);
	return b;
}

/* A directory `name` that looks like a GlusterFS FUSE mount serving
 * `volfile` (NULL: no graph at all). */
static void fake_mount(const char *name, const char *volfile)
{
	char p[400];

	assert_int_equal(mkdir(dir(name), 0755), 0);
	if (!volfile)
		return;
	snprintf(p, sizeof(p), "%s/.meta", dir(name));
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.meta/graphs", dir(name));
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.meta/graphs/active", dir(name));
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.meta/graphs/active/volfile", dir(name));
	assert_int_equal(tfile_write(p, volfile), 0);
}

static int setup(void **state)
{
	char t[4096];

	/* mkdtemp() replaced the X's of the previous test's setup. */
	memcpy(base + sizeof(base) - 7, "XXXXXX", 6);
	if (!mkdtemp(base))
		return -1;
	fake_mount("rep2", volfile_rep2);
	fake_mount("ec", volfile_ec);
	fake_mount("other", volfile_ec);
	fake_mount("nograph", NULL);
	fake_mount("bad", "volume a\n type cluster/disperse\n subvolumes x y\nend-volume\n");
	fake_mount("nfs", NULL);
	/* uid 4242 mounted "other": not this test's user (nor root). */
	snprintf(t, sizeof(t),
		 "40 1 0:40 / %s rw - fuse.glusterfs srv:/rep2 rw,user_id=0,group_id=0,allow_other\n"
		 "41 1 0:41 / %s rw - fuse.glusterfs srv:/ec rw,user_id=%u,group_id=0\n"
		 "42 1 0:42 / %s rw - fuse.glusterfs srv:/other rw,user_id=4242,group_id=4242\n"
		 "43 1 0:43 / %s rw - fuse.glusterfs srv:/nograph rw,user_id=0\n"
		 "44 1 0:44 / %s rw - fuse.glusterfs srv:/bad rw,user_id=0\n"
		 "45 1 0:45 / %s rw - nfs4 srv:/export rw\n",
		 dir("rep2"), dir("ec"), (unsigned)geteuid(), dir("other"), dir("nograph"),
		 dir("bad"), dir("nfs"));
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", base);
	snprintf(cfgfile, sizeof(cfgfile), "%s/config.yaml", base);
	assert_int_equal(tfile_write(mountinfo, t), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static struct iosig_catalog *build(const char *config)
{
	struct iosig_catalog_opts opts = { .mountinfo = mountinfo, .probe_cache = "", .config = "" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };

	if (config) {
		assert_int_equal(tfile_write(cfgfile, config), 0);
		opts.config = cfgfile;
	}
	if (iosig_catalog_new(&opts, &cat, &err) < 0)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	return cat;
}

static size_t index_of(const struct iosig_catalog *cat, const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return i;
	fail_msg("%s is not in the catalog", path);
	return 0;
}

/* True if some note of the catalog contains `text`. */
static bool has_note(const struct iosig_catalog *cat, const char *text)
{
	for (size_t i = 0; i < cat_catalog_notes(cat); i++)
		if (strstr(cat_catalog_note(cat, i), text))
			return true;
	return false;
}

static void test_discovered(void **state)
{
	static const struct iosig_layout rep2 = { .kind = IOSIG_LAYOUT_REPLICATION, .disks = 2 };
	struct iosig_catalog *cat = build(NULL);
	const struct iosig_mount *m;
	size_t i;
	char want[400];

	i = index_of(cat, dir("rep2"));
	m = iosig_catalog_mount(cat, i);
	assert_int_equal(m->cls, IOSIG_CLASS_NETWORK);
	assert_true(m->global);
	assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_DISCOVERED);
	assert_int_equal(m->layout.kind, IOSIG_LAYOUT_REPLICATION);
	assert_int_equal(m->layout.disks, 2);
	assert_int_equal(m->layout.tolerated, 1);
	assert_string_equal(cat_catalog_origin(cat, i, IOSIG_F_LAYOUT),
			    "GlusterFS client graph (.meta/graphs/active/volfile): replica 2");
	/* The Eq. 2 MTTDL of two copies. */
	assert_true(iosig_mount_mttdl(m, 1 << 30) ==
		    iosig_mttdl(&rep2, m->mttf, m->mttr, iosig_uber(m->ber, m->sector_bits, m->ecc),
				1 << 30));
	assert_true(iosig_mount_mttdl(m, 1 << 30) > 100 * m->mttf);
	/* A citation is only for a default: global was discovered. */
	assert_int_equal(m->src[IOSIG_F_GLOBAL], IOSIG_SRC_DISCOVERED);
	assert_null(cat_catalog_origin(cat, i, IOSIG_F_GLOBAL));

	/* Mounted by this very user: taken. */
	i = index_of(cat, dir("ec"));
	m = iosig_catalog_mount(cat, i);
	assert_int_equal(m->layout.kind, IOSIG_LAYOUT_ERASURE);
	assert_int_equal(m->layout.disks, 6);
	assert_int_equal(m->layout.tolerated, 2);
	assert_string_equal(cat_catalog_origin(cat, i, IOSIG_F_LAYOUT),
			    "GlusterFS client graph (.meta/graphs/active/volfile): disperse 6 = 4 + 2");

	/* Another user's FUSE mount, no graph, a bad graph: the class
	 * default (no redundancy), and a note that says why. */
	if (geteuid() != 4242) {
		m = iosig_catalog_mount(cat, index_of(cat, dir("other")));
		assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_DEFAULT);
		snprintf(want, sizeof(want),
			 "%s: layout unknown, mounted through FUSE by another user: its layout is not taken; set layout for %s in the config",
			 dir("other"), dir("other"));
		assert_true(has_note(cat, want));
	}
	m = iosig_catalog_mount(cat, index_of(cat, dir("nograph")));
	assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_DEFAULT);
	assert_int_equal(m->layout.kind, IOSIG_LAYOUT_SINGLE);
	snprintf(want, sizeof(want),
		 "%s: layout unknown, cannot read the GlusterFS client graph %s/.meta/graphs/active/volfile: No such file or directory",
		 dir("nograph"), dir("nograph"));
	assert_true(has_note(cat, want));
	m = iosig_catalog_mount(cat, index_of(cat, dir("bad")));
	assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_DEFAULT);
	snprintf(want, sizeof(want),
		 "/.meta/graphs/active/volfile: line 1: a disperse volume with 2 subvolumes and no redundancy; set layout for %s",
		 dir("bad"));
	assert_true(has_note(cat, want));
	/* NFS tells nothing, and that is no news. */
	m = iosig_catalog_mount(cat, index_of(cat, dir("nfs")));
	assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_DEFAULT);
	assert_false(has_note(cat, dir("nfs")));
	iosig_catalog_free(cat);
}

static void test_config_overrides(void **state)
{
	char cfg[1200];
	struct iosig_catalog *cat;
	const struct iosig_mount *m;
	size_t i;

	snprintf(cfg, sizeof(cfg),
		 "mounts:\n  %s:\n    layout: {kind: replication, copies: 3}\n  %s:\n    layout: raid1\n",
		 dir("rep2"), dir("bad"));
	cat = build(cfg);
	i = index_of(cat, dir("rep2"));
	m = iosig_catalog_mount(cat, i);
	assert_int_equal(m->src[IOSIG_F_LAYOUT], IOSIG_SRC_CONFIG);
	assert_int_equal(m->layout.disks, 3);
	assert_null(cat_catalog_origin(cat, i, IOSIG_F_LAYOUT));
	/* Configured: the graph that could not be read is no news either. */
	assert_false(has_note(cat, "a disperse volume with 2 subvolumes"));
	iosig_catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_volfile_layouts),
		cmocka_unit_test(test_volfile_errors),
		cmocka_unit_test_setup_teardown(test_discovered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_overrides, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
