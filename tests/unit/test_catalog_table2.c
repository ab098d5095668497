/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_table2.c - tests/data/table2.yaml, the IOSIG paper's test
 * machine (Table 1, Table 2, Sect. 7.4), loads as a synthetic catalog of
 * exactly its five devices with the paper's values, and the reliability
 * facts the paper states about them hold under the models.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog_internal.h"

#define MB (1024.0 * 1024.0)
#define GB (1024.0 * MB)
#define TB (1024.0 * GB)
#define YEAR (365 * 86400.0)

static struct iosig_catalog *cat;

static int setup(void **state)
{
	struct iosig_catalog_opts opts = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	const char *dir = getenv("IOSIG_TEST_DATA");
	struct iosig_error err = { 0 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/table2.yaml", dir ? dir : "tests/data");
	opts.config = path;
	if (iosig_catalog_new(&opts, &cat, &err) < 0) {
		fprintf(stderr, "%s:%d:%d: %s\n", err.file, err.line, err.column, err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	iosig_catalog_free(cat);
	return 0;
}

struct expect {
	const char *path, *fstype;
	int cls;
	double rbw, wbw, lat, seek, iops;
	double capacity, free;
	bool global, volatile_;
	int layout, disks, tolerated;
	uint64_t block_size;
};

/* Table 2, row by row (r/w bandwidth, op. latency, seek, IOPS, free space,
 * visibility, persistence); capacities and layouts from Table 1. */
static const struct expect rows[] = {
	{ "/mnt/ramdisk", "tmpfs", IOSIG_CLASS_RAM, 2.3 * GB, 2.4 * GB, 0.001e-3, 0, 800000, 1 * GB,
	  1 * GB, false, true, IOSIG_LAYOUT_SINGLE, 1, 0, 4096 },
	{ "/mnt/nvram", "ext4", IOSIG_CLASS_NVM, 1.7 * GB, 1.7 * GB, 0.1e-3, 0, 9000, 32 * GB, 2 * GB,
	  false, false, IOSIG_LAYOUT_SINGLE, 1, 0, 4096 },
	{ "/mnt/raid1", "xfs", IOSIG_CLASS_RAID, 430 * MB, 415 * MB, 0.11e-3, 0, 6000, 240 * GB,
	  4 * GB, false, false, IOSIG_LAYOUT_RAID1, 2, 1, 4096 },
	{ "/mnt/hdd", "xfs", IOSIG_CLASS_HDD, 130 * MB, 125 * MB, 150e-3, 0.02, 10, 2 * TB, 1.5 * TB,
	  false, false, IOSIG_LAYOUT_SINGLE, 1, 0, 4096 },
	{ "/home", "nfs4", IOSIG_CLASS_NETWORK, 105 * MB, 103 * MB, 0.4e-3, 0, 1000, 3.7 * TB, 1 * TB,
	  true, false, IOSIG_LAYOUT_RAID1, 2, 1, 22 * 1024 },
};

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b) + 1e-15;
}

static void test_five_devices(void **state)
{
	assert_int_equal(iosig_catalog_size(cat), 5);
	for (size_t i = 0; i < 5; i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);
		const struct expect *e = &rows[i];

		assert_string_equal(m->path, e->path);
		assert_string_equal(m->fstype, e->fstype);
		assert_null(m->ineligible);
		assert_int_equal(m->cls, e->cls);
		assert_true(close_to(m->seq_read_bw, e->rbw));
		assert_true(close_to(m->seq_write_bw, e->wbw));
		assert_true(close_to(m->latency, e->lat));
		assert_true(close_to(m->seek, e->seek));
		assert_true(close_to(m->iops, e->iops));
		assert_true(m->capacity == (uint64_t)e->capacity);
		assert_true(m->free == (uint64_t)e->free);
		assert_int_equal(m->global, e->global);
		assert_int_equal(m->volatile_, e->volatile_);
		assert_int_equal(m->layout.kind, e->layout);
		assert_int_equal(m->layout.disks, e->disks);
		assert_int_equal(m->layout.tolerated, e->tolerated);
		assert_int_equal(m->block_size, e->block_size);
		/* Sect. 7.4 for every device. */
		assert_true(close_to(m->mttf, 10 * YEAR));
		assert_true(close_to(m->mttr, 86400));
		assert_true(close_to(m->ber, 1e-6));
		assert_int_equal(m->ecc, 2);
		assert_int_equal(m->sector_bits, 512);
		/* The paper has no reserve. */
		assert_int_equal(m->reserve, 0);
		assert_non_null(m->data_dir);
		/* Random bandwidths are not in Table 2: Eq. 3 uses one. */
		assert_true(m->rand_read_bw == 0 && m->rand_write_bw == 0);
		for (unsigned f = 0; f < IOSIG_F_COUNT; f++) {
			if (f == IOSIG_F_RAND_READ_BW || f == IOSIG_F_RAND_WRITE_BW ||
			    f == IOSIG_F_LABELS || f == IOSIG_F_MAX_FILESIZE || f == IOSIG_F_BCW ||
			    f == IOSIG_F_ROTATIONAL)
				continue;
			if (m->src[f] != IOSIG_SRC_CONFIG)
				fail_msg("%s %s: source %s", m->path,
					 iosig_field_name((enum iosig_field)f),
					 iosig_source_name((enum iosig_source)m->src[f]));
		}
	}
	assert_true(iosig_catalog_mount(cat, 3)->rotational);
}

/* What the paper says about these devices follows from the values. */
static void test_paper_facts(void **state)
{
	const struct iosig_mount *ram = iosig_catalog_mount(cat, 0);
	const struct iosig_mount *nvram = iosig_catalog_mount(cat, 1);
	const struct iosig_mount *raid = iosig_catalog_mount(cat, 2);
	const struct iosig_mount *hdd = iosig_catalog_mount(cat, 3);
	const struct iosig_mount *nfs = iosig_catalog_mount(cat, 4);

	/* ps4: the 1 GB file fits the 1 GB ramdisk. */
	assert_true(ram->free >= (uint64_t)GB + ram->reserve);
	/* Posterization: the 6 GB output fits only the HDD and the NFS. */
	assert_true(nvram->free < 6 * GB && raid->free < 6 * GB && ram->free < 6 * GB);
	assert_true(hdd->free >= 6 * GB && nfs->free >= 6 * GB);
	/* ps1: the shared NFS is the only global device. */
	for (size_t i = 0; i < 4; i++)
		assert_false(iosig_catalog_mount(cat, i)->global);
	/* ps2 (min_mttdl 20 y for 1 GB): RAID1 "achieves more than 100 years",
	 * the single NVRAM does not reach 20. */
	assert_true(iosig_mount_mttdl(raid, GB) > 100 * YEAR);
	assert_true(iosig_mount_mttdl(nvram, GB) < 20 * YEAR);
	/* ps3 (persist): the ramdisk is volatile. */
	assert_true(iosig_mount_mttdl(ram, GB) == 0);
	/* Sect. 7.4: 1 TB on RAID1 has an MTTDL of about 12 years. */
	{
		double y = iosig_mount_mttdl(raid, 1e12) / YEAR;

		assert_true(y > 10 && y < 15);
	}
}

/* A synthetic catalog resolves paths lexically: they need not exist here. */
static void test_find(void **state)
{
	assert_ptr_equal(iosig_catalog_find(cat, "/mnt/hdd/out.pgm"), iosig_catalog_mount(cat, 3));
	assert_ptr_equal(iosig_catalog_find(cat, "/mnt/hdd"), iosig_catalog_mount(cat, 3));
	assert_ptr_equal(iosig_catalog_find(cat, "/home/alice/img/out.pgm"),
			 iosig_catalog_mount(cat, 4));
	assert_ptr_equal(iosig_catalog_find(cat, "/mnt/ramdisk/../raid1/x"),
			 iosig_catalog_mount(cat, 2));
	assert_ptr_equal(iosig_catalog_find(cat, "//mnt//nvram/./a"), iosig_catalog_mount(cat, 1));
	assert_null(iosig_catalog_find(cat, "/mnt/hddx/file"));
	assert_null(iosig_catalog_find(cat, "/srv/file"));
	assert_null(iosig_catalog_find(cat, ""));
	assert_null(iosig_catalog_find(NULL, "/home"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_five_devices),
		cmocka_unit_test(test_paper_facts),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
