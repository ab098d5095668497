/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_config.c - the configuration file of the catalog: every key,
 * units, the precedence of defaults / classes / patterns / exact mounts, the
 * sources recorded per value, where the file is looked for, and every kind
 * of error with its exact file:line:column message.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog_internal.h"
#include "catalog_yaml.h"
#include "files.h"

#define KiB 1024.0
#define MiB (1024.0 * KiB)
#define GiB (1024.0 * MiB)
#define TiB (1024.0 * GiB)
#define DAY 86400.0
#define YEAR (365 * DAY)

/* Builds a NO_DISCOVERY catalog from YAML text; asserts success. */
static struct iosig_catalog *synth(const char *yaml)
{
	struct iosig_catalog_opts opts = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct cat_config *cfg = NULL;
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };
	int r;

	r = cat_config_load_buffer("config.yaml", yaml, strlen(yaml), &cfg, &err);
	if (r < 0)
		fail_msg("config error: %s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	r = cat_catalog_build(&opts, cfg, &cat, &err);
	if (r < 0)
		fail_msg("build error: %s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	cat_config_free(cfg);
	return cat;
}

static const struct iosig_mount *mount_at(const struct iosig_catalog *cat, const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return iosig_catalog_mount(cat, i);
	fail_msg("no mount %s", path);
	return NULL;
}

static const char every_key[] =
	"version: 1\n"
	"mounts:\n"
	"  /data:\n"
	"    class: ssd\n"
	"    global: true\n"
	"    volatile: false\n"
	"    rotational: yes\n"
	"    label: [archive, tamperproof]\n"
	"    capacity: 2TiB\n"
	"    free: 1.5*TiB\n"
	"    reserve: 2%\n"
	"    block_size: 8KiB\n"
	"    max_filesize: 4GiB\n"
	"    seq_read_bw: 430MiB/s\n"
	"    seq_write_bw: 415 MiB/s\n"
	"    rand_read_bw: 200MB/s\n"
	"    rand_write_bw: 1048576\n"
	"    latency: 0.11ms\n"
	"    seek: 0\n"
	"    iops: 6000\n"
	"    mttf: 87600*h\n"
	"    mttr: 2*d\n"
	"    ber: 1e-7\n"
	"    ecc: 4\n"
	"    sector_bits: 4096\n"
	"    layout: {kind: raid6, disks: 8}\n"
	"    data_dir: ${MOUNT}/iosig/${UID}\n"
	"    bcw: {wf: 64MiB, wm: 1GiB, lf: 0.05ms, lm: 2ms, ls: 10ms}\n"
	"    fstype: xfs\n"
	"    source: /dev/md0\n"
	"  /ignored:\n"
	"    ignore: true\n";

static void test_every_key(void **state)
{
	struct iosig_catalog *cat = synth(every_key);
	const struct iosig_mount *m, *ig;
	char dd[64];

	assert_int_equal(iosig_catalog_size(cat), 2);
	m = mount_at(cat, "/data");
	assert_null(m->ineligible);
	assert_int_equal(m->cls, IOSIG_CLASS_SSD);
	assert_true(m->global);
	assert_false(m->volatile_);
	assert_true(m->rotational);
	assert_int_equal(m->labels, IOSIG_LABEL_ARCHIVE | IOSIG_LABEL_TAMPERPROOF);
	assert_true(m->capacity == (uint64_t)(2 * TiB));
	assert_true(m->free == (uint64_t)(1.5 * TiB));
	assert_true(m->reserve == (uint64_t)(2 * TiB * 0.02));
	assert_int_equal(m->block_size, 8192);
	assert_true(m->max_filesize == (uint64_t)(4 * GiB));
	assert_true(m->seq_read_bw == 430 * MiB);
	assert_true(m->seq_write_bw == 415 * MiB);
	assert_true(m->rand_read_bw == 200 * MiB);
	assert_true(m->rand_write_bw == MiB);
	assert_true(fabs(m->latency - 0.11e-3) < 1e-15);
	assert_true(m->seek == 0);
	assert_true(m->iops == 6000);
	assert_true(m->mttf == 87600 * 3600.0);
	assert_true(m->mttr == 2 * DAY);
	assert_true(fabs(m->ber - 1e-7) < 1e-20);
	assert_int_equal(m->ecc, 4);
	assert_int_equal(m->sector_bits, 4096);
	assert_int_equal(m->layout.kind, IOSIG_LAYOUT_RAID6);
	assert_int_equal(m->layout.disks, 8);
	assert_int_equal(m->layout.tolerated, 2);
	snprintf(dd, sizeof(dd), "/data/iosig/%u", (unsigned)geteuid());
	assert_string_equal(m->data_dir, dd);
	assert_true(m->bcw.wf == 64 * MiB);
	assert_true(m->bcw.wm == GiB);
	assert_true(fabs(m->bcw.lf - 0.05e-3) < 1e-15);
	assert_true(fabs(m->bcw.lm - 2e-3) < 1e-15);
	assert_true(fabs(m->bcw.ls - 10e-3) < 1e-15);
	assert_string_equal(m->fstype, "xfs");
	assert_string_equal(m->source, "/dev/md0");
	/* Every field was configured. */
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++)
		if (m->src[f] != IOSIG_SRC_CONFIG)
			fail_msg("%s has source %s", iosig_field_name((enum iosig_field)f),
				 iosig_source_name((enum iosig_source)m->src[f]));
	ig = mount_at(cat, "/ignored");
	assert_non_null(ig->ineligible);
	assert_string_equal(ig->ineligible, "ignored by the configuration (config.yaml:32)");
	iosig_catalog_free(cat);
}

/* Embedded defaults < `defaults:` < `classes:` < patterns < exact mount;
 * each value remembers which layer set it. */
static void test_precedence(void **state)
{
	struct iosig_catalog *cat = synth("defaults:\n"
					  "  mttf: 5*y\n"
					  "  iops: 111\n"
					  "classes:\n"
					  "  hdd:\n"
					  "    mttf: 6*y\n"
					  "mounts:\n"
					  "  \"/m*\":\n"
					  "    mttr: 3*d\n"
					  "    iops: 222\n"
					  "  /m1:\n"
					  "    class: hdd\n"
					  "    capacity: 1GiB\n"
					  "    iops: 333\n"
					  "  /m2:\n"
					  "    class: ssd\n"
					  "    free: 1GiB\n"
					  "  /x:\n"
					  "    class: ssd\n"
					  "    capacity: 1GiB\n");
	const struct iosig_mount *m1 = mount_at(cat, "/m1");
	const struct iosig_mount *m2 = mount_at(cat, "/m2");
	const struct iosig_mount *x = mount_at(cat, "/x");

	/* The glob "/m*" is not a mount of its own. */
	assert_int_equal(iosig_catalog_size(cat), 3);
	assert_true(m1->mttf == 6 * YEAR);
	assert_true(m1->iops == 333);
	assert_true(m1->mttr == 3 * DAY);
	assert_true(m2->mttf == 5 * YEAR);
	assert_true(m2->iops == 222);
	assert_true(m2->mttr == 3 * DAY);
	assert_true(x->mttf == 5 * YEAR);
	assert_true(x->iops == 111);
	assert_int_equal(x->src[IOSIG_F_MTTF], IOSIG_SRC_CONFIG);
	/* Not configured: the embedded class default and its source. */
	assert_true(x->mttr == 1 * DAY);
	assert_int_equal(x->src[IOSIG_F_MTTR], IOSIG_SRC_DEFAULT);
	assert_true(x->seq_read_bw == 430 * MiB);
	assert_int_equal(x->src[IOSIG_F_SEQ_READ_BW], IOSIG_SRC_DEFAULT);
	assert_string_equal(cat_catalog_origin(cat, 2, IOSIG_F_SEQ_READ_BW),
			    "IOSIG Table 2 (Raid1 2xSSD)");
	assert_true(m1->seq_read_bw == 130 * MiB);
	assert_true(m1->rotational);
	assert_true(m1->latency == 0.150);
	/* free defaults to capacity and the other way round. */
	assert_true(m1->free == (uint64_t)GiB);
	assert_true(m2->capacity == (uint64_t)GiB);
	/* Default reserve: 1% of capacity. */
	assert_true(m1->reserve == (uint64_t)(GiB / 100));
	assert_int_equal(m1->src[IOSIG_F_RESERVE], IOSIG_SRC_DEFAULT);
	iosig_catalog_free(cat);
}

static void test_reserve(void **state)
{
	struct iosig_catalog *cat = synth("mounts:\n"
					  "  /a: {class: ram, capacity: 1GiB, reserve: 0}\n"
					  "  /b: {class: ram, capacity: 1GiB, reserve: 50%}\n"
					  "  /c: {class: ram, capacity: 1GiB, reserve: 100MiB}\n"
					  "  /d: {class: hdd, capacity: 1000TiB}\n"
					  "  /e: {class: hdd, capacity: 1000TiB, reserve: 1%}\n");

	assert_int_equal(mount_at(cat, "/a")->reserve, 0);
	assert_true(mount_at(cat, "/b")->reserve == (uint64_t)(GiB / 2));
	assert_true(mount_at(cat, "/c")->reserve == (uint64_t)(100 * MiB));
	/* The default is capped at 1 GiB; a configured percentage is not. */
	assert_true(mount_at(cat, "/d")->reserve == (uint64_t)GiB);
	assert_true(mount_at(cat, "/e")->reserve == (uint64_t)(10 * TiB));
	iosig_catalog_free(cat);
}

static void test_layouts(void **state)
{
	static const struct {
		const char *yaml;
		int kind, disks, tolerated;
	} cases[] = {
		{ "single", IOSIG_LAYOUT_SINGLE, 1, 0 },
		{ "raid0", IOSIG_LAYOUT_RAID0, 2, 0 },
		{ "raid1", IOSIG_LAYOUT_RAID1, 2, 1 },
		{ "{kind: raid1, disks: 3}", IOSIG_LAYOUT_RAID1, 3, 2 },
		{ "raid10", IOSIG_LAYOUT_RAID10, 4, 1 },
		{ "{kind: raid10, disks: 6}", IOSIG_LAYOUT_RAID10, 6, 1 },
		{ "raid5", IOSIG_LAYOUT_RAID5, 3, 1 },
		{ "{kind: raid5, disks: 6}", IOSIG_LAYOUT_RAID5, 6, 1 },
		{ "raid6", IOSIG_LAYOUT_RAID6, 4, 2 },
		{ "replication", IOSIG_LAYOUT_REPLICATION, 3, 2 },
		{ "{kind: replication, copies: 2}", IOSIG_LAYOUT_REPLICATION, 2, 1 },
		{ "{kind: erasure, data: 8, parity: 3}", IOSIG_LAYOUT_ERASURE, 11, 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[256];
		struct iosig_catalog *cat;
		const struct iosig_mount *m;

		snprintf(yaml, sizeof(yaml), "mounts:\n  /x:\n    class: network\n    free: 1TiB\n    layout: %s\n",
			 cases[i].yaml);
		cat = synth(yaml);
		m = iosig_catalog_mount(cat, 0);
		assert_int_equal(m->layout.kind, cases[i].kind);
		assert_int_equal(m->layout.disks, cases[i].disks);
		assert_int_equal(m->layout.tolerated, cases[i].tolerated);
		iosig_catalog_free(cat);
	}
}

static void test_labels(void **state)
{
	struct iosig_catalog *cat = synth("mounts:\n"
					  "  /a: {class: hdd, free: 1GiB, label: archive}\n"
					  "  /b: {class: hdd, free: 1GiB, label: [tamper]}\n"
					  "  /c: {class: hdd, free: 1GiB, label: []}\n");

	assert_int_equal(mount_at(cat, "/a")->labels, IOSIG_LABEL_ARCHIVE);
	assert_int_equal(mount_at(cat, "/b")->labels, IOSIG_LABEL_TAMPERPROOF);
	assert_int_equal(mount_at(cat, "/c")->labels, 0);
	assert_int_equal(mount_at(cat, "/c")->src[IOSIG_F_LABELS], IOSIG_SRC_CONFIG);
	iosig_catalog_free(cat);
}

/* An empty file, or one with only comments, is a valid empty config. */
static void test_empty(void **state)
{
	struct cat_config *cfg = NULL;
	struct iosig_error err;

	assert_int_equal(cat_config_load_buffer("c.yaml", "", 0, &cfg, &err), 0);
	assert_int_equal(cfg->nmounts, 0);
	cat_config_free(cfg);
	assert_int_equal(cat_config_load_buffer("c.yaml", "# nothing\n", 10, &cfg, &err), 0);
	cat_config_free(cfg);
}

/* Each bad configuration and the exact error it must produce. */
static const struct {
	const char *yaml;
	int line, col;
	const char *msg;
} bad[] = {
	{ "mounts:\n  /data:\n    class: ssd\n    mtff: 10*y\n", 4, 5,
	  "mtff: unknown key in mount '/data'; did you mean 'mttf'?" },
	{ "mounts:\n  /data:\n    class: ssd\n    mttf: 10 years\n", 4, 11,
	  "mttf: bad value '10 years': expected a time such as 10*y or 87600*h" },
	{ "mounts:\n  /data:\n    seq_read_bw: 430 furlongs\n", 3, 18,
	  "seq_read_bw: bad value '430 furlongs': expected a bandwidth such as 430MiB/s" },
	{ "mounts:\n  /data:\n    capacity: 10*h\n", 3, 15,
	  "capacity: bad value '10*h': expected a size such as 64MiB or 1.5*GiB" },
	{ "mounts:\n  /data:\n    label: {a: 1}\n", 3, 12,
	  "label: expected archive or tamperproof, or a list of them, got a mapping" },
	{ "mounts:\n  /data:\n    iops: [1, 2]\n", 3, 11,
	  "iops: expected a number such as 6000, got a list" },
	{ "mounts:\n  /data:\n    global: maybe\n", 3, 13,
	  "global: bad value 'maybe': expected true or false" },
	{ "mounts:\n  /data:\n    class: sdd\n", 3, 12,
	  "class: bad value 'sdd': expected one of ram, nvm, ssd, hdd, raid, network; did you mean 'ssd'?" },
	{ "mount:\n  /x: {}\n", 1, 1, "mount: unknown top-level key; did you mean 'mounts'?" },
	{ "defaults:\n  class: ssd\n", 2, 3, "class: not allowed in defaults; set it per mount" },
	{ "classes:\n  hdd:\n    capacity: 1GiB\n", 3, 5,
	  "capacity: not allowed in class 'hdd'; set it per mount" },
	{ "classes:\n  hd:\n    mttf: 1*y\n", 2, 3,
	  "classes: bad value 'hd': expected one of ram, nvm, ssd, hdd, raid, network; did you mean 'hdd'?" },
	{ "mounts:\n  /data:\n    mttf: 1*y\n    mttf: 2*y\n", 4, 5,
	  "mttf: given twice in mount '/data' (first at line 3)" },
	{ "mounts:\n  /data: {}\n  /data/: {}\n", 3, 3, "mounts: '/data' given twice (first at line 2)" },
	{ "mounts:\n  data:\n    class: ssd\n", 2, 3,
	  "mounts: 'data' is not a mount point: expected an absolute path such as /scratch or a pattern such as /mnt/*, without . or .. components" },
	{ "mounts:\n  /data:\n    data_dir: /data/${USR}\n", 3, 15,
	  "data_dir: unknown variable ${USR}: expected ${USER}, ${UID}, ${HOME} or ${MOUNT}" },
	{ "mounts:\n  /data:\n    data_dir: iosig\n", 3, 15,
	  "data_dir: 'iosig' is not an absolute path: expected a directory such as /scratch/iosig/${USER}" },
	{ "version: 2\n", 1, 10, "version: this libiosig reads configuration version 1, the file has version 2" },
	{ "mounts:\n  /data:\n    mttf:\n", 3, 10,
	  "mttf: missing value: expected a time such as 10*y or 87600*h" },
	{ "mounts:\n  /data:\n    iops: -5\n", 3, 11,
	  "iops: bad value '-5': expected a number such as 6000" },
	{ "mounts:\n  /data:\n    mttf: 0\n", 3, 11, "mttf: bad value '0': must be greater than 0" },
	{ "mounts:\n  /data:\n    reserve: 150%\n", 3, 14,
	  "reserve: bad value '150%': expected a percentage between 0% and 100%" },
	{ "mounts:\n  /data:\n    ber: 2\n", 3, 10,
	  "ber: bad value '2': expected a probability such as 1e-6 or 1ppm" },
	{ "mounts:\n  /data:\n    ecc: 1.5\n", 3, 10, "ecc: bad value '1.5': expected a whole number such as 2" },
	{ "mounts:\n  /data:\n    layout: mirror\n", 3, 13,
	  "layout: bad value 'mirror': expected single, raid0, raid1, raid10, raid5, raid6 or replication, or a mapping such as {kind: erasure, data: 8, parity: 3}" },
	{ "mounts:\n  /data:\n    layout: erasure\n", 3, 13,
	  "layout: erasure needs data and parity, e.g. {kind: erasure, data: 8, parity: 3}" },
	{ "mounts:\n  /data:\n    layout: {kind: raid10, disks: 5}\n", 3, 35,
	  "layout.disks: raid10 mirrors pairs: an even number of disks" },
	{ "mounts:\n  /data:\n    layout: {kind: raid5, disks: 2}\n", 3, 34,
	  "layout.disks: raid5 needs at least 3 disks" },
	{ "mounts:\n  /data:\n    layout: {kind: raid1, dsks: 2}\n", 3, 27,
	  "layout: unknown key 'dsks'; did you mean 'disks'?" },
	{ "mounts:\n  /data:\n    layout: {kind: replication, disks: 3}\n", 3, 40,
	  "layout.disks: replication counts copies: use copies: N" },
	/* A rate is a size per time: the unit parser's dimension, no "/s" trick. */
	{ "mounts:\n  /data:\n    seq_read_bw: 430MiB\n", 3, 18,
	  "seq_read_bw: bad value '430MiB': expected a bandwidth such as 430MiB/s" },
	{ "mounts:\n  /data:\n    latency: 5 sec\n", 3, 14,
	  "latency: bad value '5 sec': expected a time such as 10*y or 87600*h" },
	{ "mounts:\n  /data:\n    bcw: {wf: 1MiB}\n", 3, 10,
	  "bcw: missing 'wm': expected a mapping with wf, wm (sizes) and lf, lm, ls (times)" },
	{ "mounts: [/a, /b]\n", 1, 9,
	  "mounts: expected a mapping of mount points to settings, got a list" },
	{ "mounts:\n  /data: 5\n", 2, 10, "mount '/data': expected a mapping of settings, got a scalar" },
	{ "- a\n- b\n", 1, 1,
	  "expected a mapping with version, defaults, classes and mounts at the top, got a list" },
	{ "mounts:\n  /data:\n    foo: 1\n", 3, 5,
	  "foo: unknown key in mount '/data' (the keys are listed in iosig-config(5))" },
	/* libyaml's own diagnostics, with its position. */
	{ "mounts:\n  /data:\n    class: ssd\n   mttf: 1*y\n", 4, 4,
	  "invalid YAML: did not find expected key while parsing a block mapping" },
	{ "mounts:\n  /data: a: b\n", 2, 11,
	  "invalid YAML: mapping values are not allowed in this context" },
	{ "mounts:\n  /data: \"unterminated\n", 3, 1,
	  "invalid YAML: found unexpected end of stream while scanning a quoted scalar" },
	{ "mounts: [\n", 2, 1,
	  "invalid YAML: did not find expected node content while parsing a flow node" },
	{ "a: 1\n---\nb: 2\n", 3, 1, "a second YAML document: the file must hold one" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cat_config *cfg = NULL;
		struct iosig_error err;
		int r;

		memset(&err, 0, sizeof(err));
		r = cat_config_load_buffer("config.yaml", bad[i].yaml, strlen(bad[i].yaml), &cfg,
					   &err);
		if (r != -EINVAL) {
			cat_config_free(cfg);
			fail_msg("case %zu: accepted:\n%s", i, bad[i].yaml);
		}
		assert_null(cfg);
		if (strcmp(err.msg, bad[i].msg) || err.line != bad[i].line ||
		    err.column != bad[i].col || strcmp(err.file, "config.yaml"))
			fail_msg("case %zu:\n want %d:%d: %s\n got  %s:%d:%d: %s", i, bad[i].line,
				 bad[i].col, bad[i].msg, err.file, err.line, err.column, err.msg);
	}
}

/* Deep nesting is refused at the first level too many, quickly: libyaml alone
 * takes time quadratic in the depth (minutes for this input). */
static void test_deep_nesting(void **state)
{
	size_t n = 100000;
	char *yaml = malloc(n + 8);
	struct cat_config *cfg = NULL;
	struct cat_probe_cache *pc = NULL;
	struct iosig_error err;

	assert_non_null(yaml);
	memcpy(yaml, "a: ", 3);
	memset(yaml + 3, '[', n);
	strcpy(yaml + 3 + n, "\n");
	memset(&err, 0, sizeof(err));
	assert_int_equal(cat_config_load_buffer("config.yaml", yaml, strlen(yaml), &cfg, &err),
			 -EINVAL);
	assert_null(cfg);
	/* The root mapping is level 1, so the 32nd '[' (column 35) is level 33. */
	assert_int_equal(err.line, 1);
	assert_int_equal(err.column, 35);
	assert_string_equal(err.msg, "lists and mappings nested more than 32 deep: a "
				     "configuration needs 4 levels; check the brackets");
	memset(&err, 0, sizeof(err));
	assert_int_equal(cat_probe_cache_load_buffer("probe.yaml", yaml, strlen(yaml), &pc, &err),
			 -EINVAL);
	assert_null(pc);
	assert_int_equal(err.column, 35);
	free(yaml);
}

/* "version: 1\nmounts:\n" and n entries (probe cache entries when `probe`),
 * the last one repeating the first when `repeat`. */
static char *many_mounts(size_t n, bool probe, bool repeat)
{
	size_t cap = 64 + (n + 1) * 80, len;
	char *yaml = malloc(cap);

	assert_non_null(yaml);
	len = (size_t)snprintf(yaml, cap, "version: 1\nmounts:\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(yaml + len, cap - len,
					probe ? "  /m%zu: {fstype: ext4, source: /dev/x}\n" :
						"  /m%zu: {ignore: true}\n",
					repeat && i == n - 1 ? (size_t)0 : i);
	return yaml;
}

/* A long mounts: list is read in linear time and bounded: the limit loads, one
 * more entry is an error naming the limit, and a repeated entry at the end of
 * the longest list is still found, with the line of the first one. */
static void test_many_mounts(void **state)
{
	static const char *const kinds[] = { "configuration", "probe cache" };
	char want[200];

	for (int probe = 0; probe < 2; probe++) {
		for (int k = 0; k < 3; k++) {
			size_t n = k == 1 ? CAT_YAML_MOUNTS_MAX + 1 : CAT_YAML_MOUNTS_MAX;
			char *yaml = many_mounts(n, probe, k == 2);
			struct cat_probe_cache *pc = NULL;
			struct cat_config *cfg = NULL;
			struct iosig_error err;
			int r;

			memset(&err, 0, sizeof(err));
			if (probe)
				r = cat_probe_cache_load_buffer("c.yaml", yaml, strlen(yaml), &pc, &err);
			else
				r = cat_config_load_buffer("c.yaml", yaml, strlen(yaml), &cfg, &err);
			if (k == 0) {
				assert_int_equal(r, 0);
			} else if (k == 1) {
				assert_int_equal(r, -EINVAL);
				snprintf(want, sizeof(want), "mounts: %d entries, more than the %d a %s may have",
					 CAT_YAML_MOUNTS_MAX + 1, CAT_YAML_MOUNTS_MAX, kinds[probe]);
				assert_true(!strncmp(err.msg, want, strlen(want)));
			} else {
				assert_int_equal(r, -EINVAL);
				assert_int_equal(err.line, CAT_YAML_MOUNTS_MAX + 2);
				assert_string_equal(err.msg, probe ? "mounts: '/m0' given twice" :
						    "mounts: '/m0' given twice (first at line 3)");
			}
			cat_config_free(cfg);
			cat_probe_cache_free(pc);
			free(yaml);
		}
	}
	(void)state;
}

/* Errors only visible once the catalog is built from a loaded config. */
static void test_build_errors(void **state)
{
	static const struct {
		const char *yaml;
		int line, col;
		const char *msg;
	} cases[] = {
		{ "mounts:\n  /data:\n    free: 1GiB\n", 2, 3,
		  "mount '/data': class is required when discovery is off: one of ram, nvm, ssd, hdd, raid, network" },
		{ "mounts:\n  /data:\n    class: hdd\n", 2, 3,
		  "mount '/data': capacity or free is required when discovery is off" },
		{ "mounts:\n  /data:\n    class: hdd\n    capacity: 1GiB\n    free: 2GiB\n", 5, 5,
		  "free: larger than the capacity of mount '/data'" },
		{ "mounts:\n  /data:\n    class: hdd\n    free: 1GiB\n    ecc: 600\n", 5, 5,
		  "ecc: 600 correctable bits per sector need sectors larger than 512 bits (sector_bits) for /data" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_catalog_opts opts = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
		struct iosig_catalog *cat = NULL;
		struct cat_config *cfg = NULL;
		struct iosig_error err;

		assert_int_equal(cat_config_load_buffer("config.yaml", cases[i].yaml,
							strlen(cases[i].yaml), &cfg, &err),
				 0);
		memset(&err, 0, sizeof(err));
		assert_int_equal(cat_catalog_build(&opts, cfg, &cat, &err), -EINVAL);
		assert_null(cat);
		if (strcmp(err.msg, cases[i].msg) || err.line != cases[i].line ||
		    err.column != cases[i].col)
			fail_msg("case %zu:\n want %d:%d: %s\n got  %d:%d: %s", i, cases[i].line,
				 cases[i].col, cases[i].msg, err.line, err.column, err.msg);
		cat_config_free(cfg);
	}
}

static char tmpdir[] = "/tmp/iosig-cfg-XXXXXX";

/* An explicitly given file that does not exist is an error; the error names
 * the file. */
static void test_missing_file(void **state)
{
	struct iosig_catalog_opts opts = { .config = "/nonexistent/iosig.yaml" };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };

	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), -ENOENT);
	assert_null(cat);
	assert_string_equal(err.file, "/nonexistent/iosig.yaml");
	assert_int_equal(err.line, 0);
	assert_string_equal(err.msg, "cannot read configuration file: No such file or directory");
	setenv("IOSIG_CONFIG", "/nonexistent/env.yaml", 1);
	opts.config = NULL;
	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), -ENOENT);
	assert_string_equal(err.file, "/nonexistent/env.yaml");
	unsetenv("IOSIG_CONFIG");
}

/* Files that are not regular files, or do not say their size, are read
 * (or refused) without blocking: a FIFO would otherwise wait for a writer
 * forever inside every annotated program. */
static void test_special_files(void **state)
{
	char fifo[4096];
	struct cat_config *cfg = NULL;
	struct cat_probe_cache *pc = NULL;
	struct iosig_error err;

	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10); /* a hang fails the test instead of stalling it */
	memset(&err, 0, sizeof(err));
	assert_int_equal(cat_config_load_file(fifo, &cfg, &err), -EINVAL);
	assert_null(cfg);
	assert_string_equal(err.msg, "cannot read configuration file: not a regular file");
	memset(&err, 0, sizeof(err));
	assert_int_equal(cat_probe_cache_load(fifo, &pc, &err), -EINVAL);
	assert_null(pc);
	assert_string_equal(err.msg, "cannot read probe cache: not a regular file");
	alarm(0);
	unlink(fifo);
	/* /proc files report size 0 but have content: read, not taken as an
	 * empty configuration. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(cat_config_load_file("/proc/self/mountinfo", &cfg, &err), -EINVAL);
	assert_null(cfg);
	assert_int_equal(err.line, 1);
	assert_string_equal(err.msg, "expected a mapping with version, defaults, classes and "
				     "mounts at the top, got a scalar");
}

/* Where the configuration is looked for, in order. */
static void test_locate(void **state)
{
	char home[300], xdg[300], f[400], got[4096];
	bool explicit_;

	snprintf(home, sizeof(home), "%s/home", tmpdir);
	snprintf(xdg, sizeof(xdg), "%s/xdg", tmpdir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("IOSIG_CONFIG");

	cat_config_locate("/given.yaml", got, sizeof(got), &explicit_);
	assert_string_equal(got, "/given.yaml");
	assert_true(explicit_);

	setenv("IOSIG_CONFIG", "/env.yaml", 1);
	cat_config_locate(NULL, got, sizeof(got), &explicit_);
	assert_string_equal(got, "/env.yaml");
	assert_true(explicit_);
	setenv("IOSIG_CONFIG", "", 1);
	cat_config_locate(NULL, got, sizeof(got), &explicit_);
	assert_string_equal(got, "");
	unsetenv("IOSIG_CONFIG");

	/* ~/.config/iosig/config.yaml when it exists. */
	snprintf(f, sizeof(f), "%s/.config", home);
	mkdir(f, 0700);
	snprintf(f, sizeof(f), "%s/.config/iosig", home);
	mkdir(f, 0700);
	snprintf(f, sizeof(f), "%s/.config/iosig/config.yaml", home);
	assert_int_equal(tfile_write(f, "mounts:\n  /x: {class: ssd, free: 1GiB}\n"), 0);
	cat_config_locate(NULL, got, sizeof(got), &explicit_);
	assert_string_equal(got, f);
	assert_false(explicit_);

	/* $XDG_CONFIG_HOME replaces ~/.config. */
	setenv("XDG_CONFIG_HOME", xdg, 1);
	cat_config_locate(NULL, got, sizeof(got), &explicit_);
	if (access(CAT_SYSTEM_CONFIG, F_OK) == 0)
		assert_string_equal(got, CAT_SYSTEM_CONFIG);
	else
		assert_string_equal(got, "");
	unsetenv("XDG_CONFIG_HOME");
	unlink(f);
}

/* IOSIG_CONFIG is honoured by iosig_catalog_new(); "" means no file. */
static void test_env(void **state)
{
	struct iosig_catalog_opts opts = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;
	char f[300];

	snprintf(f, sizeof(f), "%s/env.yaml", tmpdir);
	assert_int_equal(tfile_write(f, "mounts:\n  /scratch: {class: ssd, free: 1GiB}\n"), 0);
	setenv("IOSIG_CONFIG", f, 1);
	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), 0);
	assert_int_equal(iosig_catalog_size(cat), 1);
	assert_string_equal(iosig_catalog_mount(cat, 0)->path, "/scratch");
	assert_string_equal(cat_catalog_config_file(cat), f);
	iosig_catalog_free(cat);
	setenv("IOSIG_CONFIG", "", 1);
	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), 0);
	assert_int_equal(iosig_catalog_size(cat), 0);
	iosig_catalog_free(cat);
	unsetenv("IOSIG_CONFIG");
	unlink(f);
}

/* With discovery on, keys that describe a synthetic mount are refused. */
static void test_discovery_refuses_synthetic_keys(void **state)
{
	struct iosig_catalog_opts opts = { 0 };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;
	char cfgf[300], mi[300], line[600];

	snprintf(cfgf, sizeof(cfgf), "%s/d.yaml", tmpdir);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	snprintf(line, sizeof(line), "1 0 254:0 / %s rw - ext4 /dev/vdz rw\n", tmpdir);
	assert_int_equal(tfile_write(mi, line), 0);
	assert_int_equal(tfile_write(cfgf, "mounts:\n  /x:\n    class: ssd\n    capacity: 1GiB\n"), 0);
	opts.config = cfgf;
	opts.mountinfo = mi;
	opts.probe_cache = "";
	assert_int_equal(iosig_catalog_new(&opts, &cat, &err), -EINVAL);
	assert_string_equal(err.file, cfgf);
	assert_int_equal(err.line, 4);
	assert_int_equal(err.column, 5);
	assert_string_equal(err.msg,
			    "capacity: only for catalogs without discovery (--no-discovery); the capacity of a mounted filesystem is discovered");
	unlink(cfgf);
	unlink(mi);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Values go through the project's one unit parser: the units of values
 * (us, ns) and rates as a size per time, spaces allowed. */
static void test_value_units(void **state)
{
	struct iosig_catalog *cat = synth("mounts:\n"
					  "  /data:\n"
					  "    class: ssd\n"
					  "    capacity: 1TiB\n"
					  "    latency: 250us\n"
					  "    seek: 300 ns\n"
					  "    seq_write_bw: 2 MB / s\n"
					  "    rand_read_bw: 1*GiB/ms\n");
	const struct iosig_mount *m = mount_at(cat, "/data");

	assert_true(fabs(m->latency - 250e-6) < 1e-18);
	assert_true(fabs(m->seek - 300e-9) < 1e-21);
	assert_true(m->seq_write_bw == 2 * MiB);
	assert_true(m->rand_read_bw == 1000 * GiB);
	iosig_catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_units),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_many_mounts),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_special_files),
		cmocka_unit_test(test_locate),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_discovery_refuses_synthetic_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
