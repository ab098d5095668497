/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_probe.c - the probe cache: what `iosig probe` stores is read
 * back as PROBED values, later measurements merge, configuration still wins,
 * an entry for another device at the same path is ignored with a note, a
 * corrupt cache is ignored with a precise note (the catalog still builds)
 * and replaced by the next store, concurrent writers lose nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

static char base[] = "/tmp/iosig-probe-XXXXXX";
static char mnt[300], mountinfo[300], cache[300], cfgfile[300];

static struct iosig_catalog *build(const char *config)
{
	struct iosig_catalog_opts opts = { .mountinfo = mountinfo, .probe_cache = cache };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };

	if (config)
		assert_int_equal(tfile_write(cfgfile, config), 0);
	opts.config = config ? cfgfile : "";
	if (iosig_catalog_new(&opts, &cat, &err) < 0)
		fail_msg("%s:%d: %s", err.file, err.line, err.msg);
	assert_int_equal(iosig_catalog_size(cat), 1);
	return cat;
}

static int setup(void **state)
{
	char line[600];

	if (!mkdtemp(base))
		return -1;
	snprintf(mnt, sizeof(mnt), "%s/m", base);
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", base);
	snprintf(cache, sizeof(cache), "%s/cache/probe.yaml", base);
	snprintf(cfgfile, sizeof(cfgfile), "%s/config.yaml", base);
	if (mkdir(mnt, 0755) < 0)
		return -1;
	snprintf(line, sizeof(line), "40 1 0:99 / %s rw - tmpfs testsrc rw\n", mnt);
	assert_int_equal(tfile_write(mountinfo, line), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void store(const struct cat_probe_record *rec)
{
	struct iosig_error err = { 0 };

	if (cat_probe_store(cache, rec, &err) < 0)
		fail_msg("store: %s: %s", err.file, err.msg);
}

static void test_write_reload(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	const struct iosig_mount *m = iosig_catalog_mount(cat, 0);
	struct cat_probe_record rec;
	struct stat st;

	assert_int_equal(m->src[IOSIG_F_SEQ_READ_BW], IOSIG_SRC_DEFAULT);
	assert_int_equal(cat_catalog_notes(cat), 0); /* no cache yet: nothing to say */
	cat_probe_record_init(&rec, m);
	assert_string_equal(rec.path, mnt);
	assert_string_equal(rec.fstype, "tmpfs");
	assert_string_equal(rec.source, "testsrc");
	rec.set = CAT_BIT(IOSIG_F_SEQ_READ_BW) | CAT_BIT(IOSIG_F_LATENCY) | CAT_BIT(IOSIG_F_IOPS) |
		  CAT_BIT(IOSIG_F_BLOCK_SIZE) | CAT_BIT(IOSIG_F_BCW) | CAT_BIT(IOSIG_F_SEEK);
	rec.seq_read_bw = 1234567890.5;
	rec.latency = 8.5e-5;
	rec.seek = 0.0042;
	rec.iops = 54321;
	rec.block_size = 8192;
	rec.bcw = (struct iosig_bcw){ .wf = 64e6, .wm = 1.5e9, .lf = 5e-5, .lm = 2e-3, .ls = 1.1e-2 };
	rec.probed_at = 1714560000;
	store(&rec);
	iosig_catalog_free(cat);
	assert_int_equal(stat(cache, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	cat = build(NULL);
	m = iosig_catalog_mount(cat, 0);
	assert_true(m->seq_read_bw == 1234567890.5);
	assert_true(m->latency == 8.5e-5);
	assert_true(m->seek == 0.0042);
	assert_true(m->iops == 54321);
	assert_int_equal(m->block_size, 8192);
	assert_true(m->bcw.wf == 64e6 && m->bcw.wm == 1.5e9 && m->bcw.lf == 5e-5 &&
		    m->bcw.lm == 2e-3 && m->bcw.ls == 1.1e-2);
	assert_int_equal(m->src[IOSIG_F_SEQ_READ_BW], IOSIG_SRC_PROBED);
	assert_int_equal(m->src[IOSIG_F_LATENCY], IOSIG_SRC_PROBED);
	assert_int_equal(m->src[IOSIG_F_BLOCK_SIZE], IOSIG_SRC_PROBED);
	assert_int_equal(m->src[IOSIG_F_BCW], IOSIG_SRC_PROBED);
	/* Not measured: still the class default. */
	assert_int_equal(m->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_DEFAULT);
	assert_int_equal(cat_catalog_notes(cat), 0);

	/* A later probe of one more value merges with the earlier ones. */
	cat_probe_record_init(&rec, m);
	rec.set = CAT_BIT(IOSIG_F_SEQ_WRITE_BW);
	rec.seq_write_bw = 7e8;
	store(&rec);
	iosig_catalog_free(cat);
	cat = build(NULL);
	m = iosig_catalog_mount(cat, 0);
	assert_true(m->seq_write_bw == 7e8);
	assert_true(m->seq_read_bw == 1234567890.5);
	assert_int_equal(m->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_PROBED);
	iosig_catalog_free(cat);

	/* The configuration overrides a measurement. */
	{
		char yaml[600];

		snprintf(yaml, sizeof(yaml), "mounts:\n  %s:\n    latency: 1ms\n", mnt);
		cat = build(yaml);
		m = iosig_catalog_mount(cat, 0);
		assert_true(fabs(m->latency - 1e-3) < 1e-15);
		assert_int_equal(m->src[IOSIG_F_LATENCY], IOSIG_SRC_CONFIG);
		assert_int_equal(m->src[IOSIG_F_IOPS], IOSIG_SRC_PROBED);
		iosig_catalog_free(cat);
	}
}

/* A measurement of another device at the same path is ignored. */
static void test_stale(void **state)
{
	struct iosig_catalog *cat = build(NULL);
	const struct iosig_mount *m = iosig_catalog_mount(cat, 0);
	struct cat_probe_record rec;
	unsigned long long fsid;
	char want[2000];

	unlink(cache);
	cat_probe_record_init(&rec, m);
	fsid = (unsigned long long)rec.fsid;
	rec.source = "/dev/other";
	rec.set = CAT_BIT(IOSIG_F_SEQ_READ_BW);
	rec.seq_read_bw = 1e9;
	store(&rec);
	iosig_catalog_free(cat);
	cat = build(NULL);
	m = iosig_catalog_mount(cat, 0);
	assert_int_equal(m->src[IOSIG_F_SEQ_READ_BW], IOSIG_SRC_DEFAULT);
	assert_int_equal(cat_catalog_notes(cat), 1);
	snprintf(want, sizeof(want),
		 "%s:5: the probe of %s was measured on tmpfs /dev/other (fsid %016llx), now tmpfs testsrc (fsid %016llx) is mounted there: ignored; run iosig probe %s",
		 cache, mnt, fsid, fsid, mnt);
	assert_string_equal(cat_catalog_note(cat, 0), want);

	/* Same source, another filesystem id (reformatted): ignored too. */
	cat_probe_record_init(&rec, m);
	rec.fsid ^= 0x1234;
	rec.set = CAT_BIT(IOSIG_F_SEQ_READ_BW);
	rec.seq_read_bw = 1e9;
	store(&rec);
	iosig_catalog_free(cat);
	cat = build(NULL);
	assert_int_equal(iosig_catalog_mount(cat, 0)->src[IOSIG_F_SEQ_READ_BW], IOSIG_SRC_DEFAULT);
	assert_int_equal(cat_catalog_notes(cat), 1);
	iosig_catalog_free(cat);
}

/* A corrupt cache does not stop the catalog; the note says where and why;
 * the next store replaces it. */
static void test_corrupt(void **state)
{
	static const struct {
		const char *text, *note;
	} cases[] = {
		{ "version: 1\nmounts: [\n",
		  "3:1: invalid YAML: did not find expected node content while parsing a flow node" },
		{ "version: 2\nmounts: {}\n",
		  "1:10: version: this libiosig reads probe cache version 1, the file has '2'" },
		{ "mounts: {}\n", "1:1: missing version: not an iosig probe cache" },
		{ "version: 1\nmounts:\n  /x:\n    fstype: ext4\n    source: /dev/a\n    mttf: 1*y\n",
		  "6:5: mttf: not a measured value (not allowed in probe entry '/x')" },
		{ "version: 1\nmounts:\n  /x:\n    fstype: ext4\n    seq_read_bw: fast\n",
		  "5:18: seq_read_bw: bad value 'fast': expected a bandwidth such as 430MiB/s" },
		{ "version: 1\nmounts:\n  /x:\n    seq_read_bw: 1e9\n",
		  "4:5: probe entry '/x': missing fstype or source (the key of the entry)" },
		{ "version: 1\nmounts:\n  /x:\n    fstype: e\n    source: s\n    fsid: xyz\n",
		  "6:11: fsid: bad value 'xyz': expected a hexadecimal filesystem id" },
	};
	struct cat_probe_record rec;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_catalog *cat;
		char want[2000];

		assert_int_equal(tfile_write(cache, cases[i].text), 0);
		cat = build(NULL);
		assert_int_equal(iosig_catalog_mount(cat, 0)->src[IOSIG_F_SEQ_READ_BW],
				 IOSIG_SRC_DEFAULT);
		assert_int_equal(cat_catalog_notes(cat), 1);
		snprintf(want, sizeof(want), "%s:%s; probe cache ignored (iosig probe rewrites it)",
			 cache, cases[i].note);
		if (strcmp(cat_catalog_note(cat, 0), want))
			fail_msg("case %zu:\n want %s\n got  %s", i, want, cat_catalog_note(cat, 0));
		if (i == 0) {
			/* Replaced by the next store. */
			cat_probe_record_init(&rec, iosig_catalog_mount(cat, 0));
			rec.set = CAT_BIT(IOSIG_F_IOPS);
			rec.iops = 99;
			store(&rec);
			iosig_catalog_free(cat);
			cat = build(NULL);
			assert_int_equal(cat_catalog_notes(cat), 0);
			assert_true(iosig_catalog_mount(cat, 0)->iops == 99);
		}
		iosig_catalog_free(cat);
	}
	unlink(cache);
}

/* Paths with YAML-special characters survive a round trip. */
static void test_quoting(void **state)
{
	static const char *const paths[] = { "/a: b", "/#x", "/q\"uote", "/back\\slash", "/t\tab" };
	struct cat_probe_cache *pc = NULL;
	struct cat_probe_record rec;
	struct iosig_error err;

	unlink(cache);
	for (size_t i = 0; i < 5; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.path = paths[i];
		rec.fstype = "x: y";
		rec.source = "'src'";
		rec.set = CAT_BIT(IOSIG_F_IOPS);
		rec.iops = (double)i + 1;
		store(&rec);
	}
	assert_int_equal(cat_probe_cache_load(cache, &pc, &err), 0);
	assert_int_equal(pc->n, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct cat_probe_entry *e = cat_probe_cache_find(pc, paths[i]);

		assert_non_null(e);
		assert_string_equal(e->v.fstype, "x: y");
		assert_string_equal(e->v.source, "'src'");
		assert_true(e->v.iops == (double)i + 1);
	}
	cat_probe_cache_free(pc);
	unlink(cache);
}

static void test_bad_record(void **state)
{
	struct cat_probe_record rec = { .path = "/x", .fstype = "ext4", .source = "/dev/a" };
	struct iosig_error err;

	rec.set = CAT_BIT(IOSIG_F_SEQ_READ_BW);
	rec.seq_read_bw = -1;
	assert_int_equal(cat_probe_store(cache, &rec, &err), -EINVAL);
	assert_string_equal(err.msg, "probe record for /x: seq_read_bw must be positive");
	rec.seq_read_bw = 1;
	rec.set |= CAT_BIT(IOSIG_F_MTTF);
	assert_int_equal(cat_probe_store(cache, &rec, &err), -EINVAL);
	assert_string_equal(err.msg, "probe record for /x sets fields a probe cannot measure");
	rec.set = CAT_BIT(IOSIG_F_LATENCY);
	rec.latency = NAN;
	assert_int_equal(cat_probe_store(cache, &rec, &err), -EINVAL);
	assert_int_equal(access(cache, F_OK), -1);
}

/* Concurrent writers: the lock keeps every entry. */
static void test_concurrent(void **state)
{
	enum { N = 6 };
	struct cat_probe_cache *pc = NULL;
	struct iosig_error err;
	pid_t pids[N];

	unlink(cache);
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			char path[32];
			struct cat_probe_record rec = { .fstype = "ext4", .source = "/dev/a" };

			snprintf(path, sizeof(path), "/m%d", i);
			rec.path = path;
			rec.set = CAT_BIT(IOSIG_F_IOPS);
			for (int k = 0; k < 20; k++) {
				rec.iops = 1000 * i + k + 1;
				if (cat_probe_store(cache, &rec, &err) < 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	for (int i = 0; i < N; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(cat_probe_cache_load(cache, &pc, &err), 0);
	assert_int_equal(pc->n, N);
	for (int i = 0; i < N; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/m%d", i);
		assert_non_null(cat_probe_cache_find(pc, path));
		assert_true(cat_probe_cache_find(pc, path)->v.iops == 1000 * i + 20);
	}
	cat_probe_cache_free(pc);
	unlink(cache);
}

static void test_locate(void **state)
{
	char bufs[2][4096], w[4096];

	unsetenv("IOSIG_PROBE_CACHE");
	assert_int_equal(cat_probe_cache_locate("", bufs), 0);
	assert_int_equal(cat_probe_cache_locate("/x.yaml", bufs), 1);
	assert_string_equal(bufs[0], "/x.yaml");
	setenv("IOSIG_PROBE_CACHE", "/env.yaml", 1);
	assert_int_equal(cat_probe_cache_locate(NULL, bufs), 1);
	assert_string_equal(bufs[0], "/env.yaml");
	cat_probe_cache_write_path(w, sizeof(w));
	assert_string_equal(w, "/env.yaml");
	setenv("IOSIG_PROBE_CACHE", "", 1);
	assert_int_equal(cat_probe_cache_locate(NULL, bufs), 0);
	unsetenv("IOSIG_PROBE_CACHE");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	if (geteuid() == 0) {
		assert_int_equal(cat_probe_cache_locate(NULL, bufs), 1);
		assert_string_equal(bufs[0], CAT_SYSTEM_PROBE_CACHE);
		cat_probe_cache_write_path(w, sizeof(w));
		assert_string_equal(w, CAT_SYSTEM_PROBE_CACHE);
	} else {
		assert_int_equal(cat_probe_cache_locate(NULL, bufs), 2);
		assert_string_equal(bufs[0], CAT_SYSTEM_PROBE_CACHE);
		assert_string_equal(bufs[1], "/xdg/iosig/probe.yaml");
		cat_probe_cache_write_path(w, sizeof(w));
		assert_string_equal(w, "/xdg/iosig/probe.yaml");
	}
	unsetenv("XDG_CACHE_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_reload),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_locate),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
