/* SPDX-License-Identifier: MIT */
/*
 * Selection (docs/design.md §5.3) on the IOSIG paper's Table 2 machine
 * (tests/data/table2.yaml, loaded without discovery):
 *  - posterization (Sect. 7.3): totalsize 6 GB, persist, sequential picks the
 *    shared NFS below about 100 MB per I/O and the local HDD above;
 *  - the parameter sets ps1..ps4 of Fig. 10 (random, totalsize 1 GB) pick
 *    NFS, RAID1, NVRAM and the ramdisk, for every chunk size the paper used
 *    (32 KiB .. 32 MiB);
 *  - verdicts name the constraint that removed each mount.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog_internal.h"

static struct iosig_catalog *table2;

static int setup(void **state)
{
	struct iosig_catalog_opts o = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	char path[4096];
	struct iosig_error err = { 0 };
	const char *data = getenv("IOSIG_TEST_DATA");

	snprintf(path, sizeof(path), "%s/table2.yaml", data ? data : "tests/data");
	o.config = path;
	if (iosig_catalog_new(&o, &table2, &err) < 0) {
		fprintf(stderr, "table2.yaml: %s:%d: %s\n", err.file, err.line, err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	iosig_catalog_free(table2);
	return 0;
}

/* Class of the mount chosen for `text`; -1 when nothing qualifies. */
static int choose(const char *text, struct iosig_choice *ret)
{
	struct iosig_sig sig;
	struct iosig_choice ch;
	struct iosig_error err = { 0 };

	if (iosig_sig_parse(text, NULL, NULL, 0, &sig, &err) < 0)
		fail_msg("%s: %s", text, err.msg);
	assert_int_equal(iosig_select(table2, &sig, NULL, NULL, &ch), 0);
	if (ret)
		*ret = ch;
	return ch.mount ? ch.mount->cls : -1;
}

static void test_table2_shape(void **state)
{
	unsigned seen[IOSIG_CLASS_COUNT] = { 0 };

	assert_int_equal(iosig_catalog_size(table2), 5);
	for (size_t i = 0; i < 5; i++)
		seen[iosig_catalog_mount(table2, i)->cls]++;
	assert_int_equal(seen[IOSIG_CLASS_RAM], 1);
	assert_int_equal(seen[IOSIG_CLASS_NVM], 1);
	assert_int_equal(seen[IOSIG_CLASS_RAID], 1);
	assert_int_equal(seen[IOSIG_CLASS_HDD], 1);
	assert_int_equal(seen[IOSIG_CLASS_NETWORK], 1);
}

static void test_posterization(void **state)
{
	static const unsigned nfs_mib[] = { 1, 4, 16, 32, 64 };
	static const unsigned hdd_mib[] = { 128, 256, 512, 1024, 2048 };
	char sig[160];
	double lo = 16, hi = 1024;

	for (size_t i = 0; i < sizeof(nfs_mib) / sizeof(nfs_mib[0]); i++) {
		snprintf(sig, sizeof(sig), "persist sequential totalsize(6*GiB) size_per_io(%u*MiB)",
			 nfs_mib[i]);
		assert_int_equal(choose(sig, NULL), IOSIG_CLASS_NETWORK);
	}
	for (size_t i = 0; i < sizeof(hdd_mib) / sizeof(hdd_mib[0]); i++) {
		snprintf(sig, sizeof(sig), "persist sequential totalsize(6*GiB) size_per_io(%u*MiB)",
			 hdd_mib[i]);
		assert_int_equal(choose(sig, NULL), IOSIG_CLASS_HDD);
	}
	/* The crossover, found by bisection, is "about 100 MB" (Fig. 6a). */
	while (hi - lo > 0.5) {
		double mid = (lo + hi) / 2;

		snprintf(sig, sizeof(sig), "persist sequential totalsize(6*GiB) size_per_io(%.0f)",
			 mid * 1048576);
		if (choose(sig, NULL) == IOSIG_CLASS_NETWORK)
			lo = mid;
		else
			hi = mid;
	}
	assert_true(lo > 60 && lo < 140);
}

static void test_ps1_to_ps4(void **state)
{
	static const struct {
		const char *params;
		int cls;
	} ps[] = {
		{ "global", IOSIG_CLASS_NETWORK },         /* ps1 */
		{ "min_mttdl(20*y)", IOSIG_CLASS_RAID },   /* ps2 */
		{ "persist", IOSIG_CLASS_NVM },            /* ps3 */
		{ "", IOSIG_CLASS_RAM },                   /* ps4 */
	};
	char sig[200];

	for (size_t p = 0; p < 4; p++) {
		for (unsigned kib = 32; kib <= 32 * 1024; kib *= 2) {
			snprintf(sig, sizeof(sig), "random totalsize(1*GiB) size_per_io(%u*KiB) %s",
				 kib, ps[p].params);
			if (choose(sig, NULL) != ps[p].cls)
				fail_msg("ps%zu at %u KiB: chose class %d, expected %d", p + 1, kib,
					 choose(sig, NULL), ps[p].cls);
		}
	}
}

static void test_verdicts_explained(void **state)
{
	struct iosig_candidate c[5];
	struct iosig_choice ch;
	struct iosig_sig sig;
	struct iosig_error err = { 0 };

	assert_int_equal(iosig_sig_parse("random totalsize(1*GiB) size_per_io(512*KiB) "
					 "min_mttdl(20*y)", NULL, NULL, 0, &sig, &err), 0);
	assert_int_equal(iosig_select(table2, &sig, NULL, c, &ch), 0);
	assert_int_equal(ch.eligible, 2); /* RAID1 and the NFS (itself a RAID1) */
	for (size_t i = 0; i < 5; i++) {
		switch (c[i].mount->cls) {
		case IOSIG_CLASS_RAM:
			/* volatile: MTTDL 0 */
			assert_int_equal(c[i].verdict, IOSIG_V_MTTDL);
			break;
		case IOSIG_CLASS_NVM:
		case IOSIG_CLASS_HDD:
			/* one device: MTTDL = MTTF = 10 y < 20 y */
			assert_int_equal(c[i].verdict, IOSIG_V_MTTDL);
			assert_true(c[i].mttdl > 9 * 365 * 86400.0 && c[i].mttdl < 11 * 365 * 86400.0);
			assert_non_null(strstr(c[i].why, "below the required"));
			break;
		case IOSIG_CLASS_RAID:
			assert_int_equal(c[i].verdict, IOSIG_V_OK);
			/* Sect. 7.3: "more than 100 years" for 1 GB */
			assert_true(c[i].mttdl > 100 * 365 * 86400.0);
			assert_int_equal((int)i, ch.index);
			break;
		case IOSIG_CLASS_NETWORK:
			assert_int_equal(c[i].verdict, IOSIG_V_OK);
			assert_true(c[i].throughput < ch.throughput);
			break;
		}
		assert_true(c[i].throughput > 0);
	}

	/* space: 6 GB fits only the HDD and the NFS */
	assert_int_equal(iosig_sig_parse("totalsize(6*GiB)", NULL, NULL, 0, &sig, &err), 0);
	assert_int_equal(iosig_select(table2, &sig, NULL, c, &ch), 0);
	assert_int_equal(ch.eligible, 2);
	for (size_t i = 0; i < 5; i++) {
		int cls = c[i].mount->cls;

		if (cls == IOSIG_CLASS_HDD || cls == IOSIG_CLASS_NETWORK)
			assert_int_equal(c[i].verdict, IOSIG_V_OK);
		else {
			assert_int_equal(c[i].verdict, IOSIG_V_SPACE);
			assert_non_null(strstr(c[i].why, "free"));
		}
	}

	/* nothing is labelled archive on that machine */
	assert_int_equal(iosig_sig_parse("archive", NULL, NULL, 0, &sig, &err), 0);
	assert_int_equal(iosig_select(table2, &sig, NULL, c, &ch), 0);
	assert_int_equal(ch.index, -1);
	assert_null(ch.mount);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(c[i].verdict, IOSIG_V_ARCHIVE);
}

static void test_availability(void **state)
{
	/* 1 GiB for a 30-day job.  Single devices (MTTF 10 y): P(loss) =
	 * 1 - exp(-30 d / 10 y) = 0.82 %.  RAID1 pairs (the SSD RAID1 and the NFS
	 * server's HDD RAID1, same MTTF/MTTR/UBER): MTTDL ~ 7.7e3 y, P(loss) ~
	 * 11 ppm.  So 100 ppm admits exactly the two RAID1s (the SSD one is
	 * faster); 1 ppm admits nothing. */
	struct iosig_candidate c[5];
	struct iosig_choice ch;
	struct iosig_sig sig;
	struct iosig_error err = { 0 };

	assert_int_equal(iosig_sig_parse("random size_per_io(512*KiB) totalsize(1*GiB) "
					 "availability(100*ppm)", NULL, NULL, 0, &sig, &err), 0);
	sig.lifetime = 30 * 86400.0;
	sig.set |= IOSIG_HAS(IOSIG_P_LIFETIME);
	assert_int_equal(iosig_select(table2, &sig, NULL, c, &ch), 0);
	assert_non_null(ch.mount);
	assert_int_equal(ch.mount->cls, IOSIG_CLASS_RAID);
	assert_int_equal(ch.eligible, 2);
	for (size_t i = 0; i < 5; i++) {
		if (c[i].mount->cls == IOSIG_CLASS_NVM || c[i].mount->cls == IOSIG_CLASS_HDD) {
			assert_int_equal(c[i].verdict, IOSIG_V_AVAILABILITY);
			assert_true(fabs(c[i].p_loss - 0.0081857) < 2e-4);
		}
	}

	sig.availability = 1e-6;
	assert_int_equal(iosig_select(table2, &sig, NULL, c, &ch), 0);
	assert_int_equal(ch.index, -1);
	assert_int_equal(ch.eligible, 0);
}

static void test_defaults_filled(void **state)
{
	struct iosig_choice ch;

	choose("persist", &ch);
	assert_int_equal(ch.effective.size_per_io, 1024 * 1024);
	assert_true(ch.effective.lifetime == 86400.0);
}

/* A catalog from YAML text (no discovery). */
static struct iosig_catalog *synth(const char *yaml)
{
	struct iosig_catalog_opts o = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct iosig_catalog *cat = NULL;
	struct cat_config *cfg = NULL;
	struct iosig_error err = { 0 };

	if (cat_config_load_buffer("ties.yaml", yaml, strlen(yaml), &cfg, &err) < 0 ||
	    cat_catalog_build(&o, cfg, &cat, &err) < 0)
		fail_msg("ties.yaml:%d:%d: %s", err.line, err.column, err.msg);
	cat_config_free(cfg);
	return cat;
}

static const char *chosen_path(const struct iosig_catalog *cat, const char *orig_path)
{
	struct iosig_choice ch;
	struct iosig_sig sig;
	struct iosig_error err = { 0 };

	assert_int_equal(iosig_sig_parse("persist size_per_io(1*MiB) totalsize(1*GiB)", NULL,
					 NULL, 0, &sig, &err), 0);
	assert_int_equal(iosig_select(cat, &sig, orig_path, NULL, &ch), 0);
	assert_non_null(ch.mount);
	assert_int_equal(ch.eligible, iosig_catalog_size(cat));
	return ch.mount->path;
}

/*
 * Equal predicted throughput is a tie, broken (docs/design.md §5.3) by: the original
 * path's own mount, then more free space, then the mount point's name - the
 * same whatever order the catalog lists the mounts in.
 */
static void test_ties(void **state)
{
	/* Three identical SSDs; /b and /c have more free space than /a. */
	static const char mounts[][96] = {
		"  /a: {class: ssd, free: 100GiB}\n",
		"  /c: {class: ssd, free: 200GiB}\n",
		"  /b: {class: ssd, free: 200GiB}\n",
	};
	static const char head[] = "defaults: {seq_read_bw: 500MiB/s, seq_write_bw: 400MiB/s, "
				   "latency: 0.1ms, iops: 10000}\n"
				   "mounts:\n";
	static const unsigned orders[][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 0, 2 } };
	char yaml[1024];

	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		struct iosig_catalog *cat;
		size_t len = 0;

		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "%s", head);
		for (unsigned i = 0; i < 3; i++)
			len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "%s",
						mounts[orders[o][i]]);
		cat = synth(yaml);
		/* more free space wins; /b before /c by name */
		assert_string_equal(chosen_path(cat, NULL), "/b");
		assert_string_equal(chosen_path(cat, "/nowhere/out.dat"), "/b");
		/* the original path's mount wins a tie, even with less space */
		assert_string_equal(chosen_path(cat, "/a/out.dat"), "/a");
		assert_string_equal(chosen_path(cat, "/c/out.dat"), "/c");
		iosig_catalog_free(cat);
	}
}

/* Verdict and reason of the mount at `path` for signature `text`; the MTTDL
 * selection computed for it in *ret_mttdl when not NULL. */
static int verdict_of(const struct iosig_catalog *cat, const char *text, const char *path,
		      char *why, size_t size, double *ret_mttdl)
{
	struct iosig_candidate c[8];
	struct iosig_choice ch;
	struct iosig_sig sig;
	struct iosig_error err = { 0 };

	assert_true(iosig_catalog_size(cat) <= 8);
	if (iosig_sig_parse(text, NULL, NULL, 0, &sig, &err) < 0)
		fail_msg("%s: %s", text, err.msg);
	assert_int_equal(iosig_select(cat, &sig, NULL, c, &ch), 0);
	for (size_t i = 0; i < iosig_catalog_size(cat); i++) {
		if (strcmp(c[i].mount->path, path))
			continue;
		snprintf(why, size, "%s", c[i].why);
		if (ret_mttdl)
			*ret_mttdl = c[i].mttdl;
		return c[i].verdict;
	}
	fail_msg("no mount %s", path);
	return -1;
}

/* The constraints Table 2 cannot show: labels, the free-space reserve, the
 * maximum file size, and the file size reliability is judged for when the
 * signature declares none. */
static void test_constraints(void **state)
{
	struct iosig_catalog *cat = synth(
		"defaults: {seq_read_bw: 500MiB/s, seq_write_bw: 400MiB/s, latency: 0.1ms, "
		"iops: 10000}\n"
		"mounts:\n"
		"  /arch: {class: hdd, free: 100GiB, label: archive}\n"
		"  /tp: {class: hdd, free: 100GiB, label: tamperproof}\n"
		"  /res: {class: ssd, free: 10GiB, reserve: 5GiB}\n"
		"  /fat: {class: ssd, free: 100GiB, reserve: 0, max_filesize: 2GiB}\n"
		"  /r1: {class: raid, free: 2TiB, layout: raid1}\n"
		"  /small: {class: ram, free: 16MiB, reserve: 0}\n");
	char why[192];
	double m1g, m1t, judged;

	assert_int_equal(verdict_of(cat, "archive", "/arch", why, sizeof(why), NULL), IOSIG_V_OK);
	assert_int_equal(verdict_of(cat, "archive", "/tp", why, sizeof(why), NULL), IOSIG_V_ARCHIVE);
	assert_non_null(strstr(why, "not labelled archive"));
	assert_int_equal(verdict_of(cat, "tamper", "/tp", why, sizeof(why), NULL), IOSIG_V_OK);
	assert_int_equal(verdict_of(cat, "tamperproof", "/arch", why, sizeof(why), NULL),
			 IOSIG_V_TAMPER);
	assert_non_null(strstr(why, "not labelled tamperproof"));

	/* 10 GiB free but 5 GiB must stay free: 5 GiB fits, 6 GiB does not. */
	assert_int_equal(verdict_of(cat, "totalsize(5*GiB)", "/res", why, sizeof(why), NULL),
			 IOSIG_V_OK);
	assert_int_equal(verdict_of(cat, "totalsize(6*GiB)", "/res", why, sizeof(why), NULL),
			 IOSIG_V_SPACE);
	assert_string_equal(why, "needs 6 GiB plus a reserve of 5 GiB, 10 GiB free");
	/* Without totalsize the file is taken to be 1 GiB: a 16 MiB mount
	 * could fail a write the original path would take. */
	assert_int_equal(verdict_of(cat, "tmp", "/small", why, sizeof(why), NULL), IOSIG_V_SPACE);
	assert_string_equal(why, "needs 1 GiB (the default size: declare totalsize) plus a reserve "
				 "of 0 B, 16 MiB free");
	assert_int_equal(verdict_of(cat, "tmp totalsize(16*MiB)", "/small", why, sizeof(why), NULL),
			 IOSIG_V_OK);
	assert_int_equal(verdict_of(cat, "tmp", "/res", why, sizeof(why), NULL), IOSIG_V_OK);

	assert_int_equal(verdict_of(cat, "totalsize(2*GiB)", "/fat", why, sizeof(why), NULL),
			 IOSIG_V_OK);
	assert_int_equal(verdict_of(cat, "totalsize(3*GiB)", "/fat", why, sizeof(why), NULL),
			 IOSIG_V_FILESIZE);
	assert_string_equal(why, "totalsize 3 GiB exceeds the maximum file size 2 GiB");

	/* Without totalsize, min_mttdl is judged for a 1 GiB file: a RAID1's
	 * MTTDL for 1 GiB and for 1 TiB (h grows with the size) bracket the
	 * threshold that tells them apart. */
	m1g = iosig_mount_mttdl(iosig_catalog_find(cat, "/r1"), 1024.0 * 1024 * 1024);
	m1t = iosig_mount_mttdl(iosig_catalog_find(cat, "/r1"), 1024.0 * 1024 * 1024 * 1024);
	assert_true(m1t < m1g / 2);
	{
		char sig[96];

		snprintf(sig, sizeof(sig), "min_mttdl(%.0f)", (m1g + m1t) / 2);
		assert_int_equal(verdict_of(cat, sig, "/r1", why, sizeof(why), &judged), IOSIG_V_OK);
		assert_true(judged == m1g);
		snprintf(sig, sizeof(sig), "min_mttdl(%.0f) totalsize(1*TiB)", (m1g + m1t) / 2);
		assert_int_equal(verdict_of(cat, sig, "/r1", why, sizeof(why), NULL), IOSIG_V_MTTDL);
	}
	iosig_catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table2_shape),
		cmocka_unit_test(test_posterization),
		cmocka_unit_test(test_ps1_to_ps4),
		cmocka_unit_test(test_verdicts_explained),
		cmocka_unit_test(test_availability),
		cmocka_unit_test(test_defaults_filled),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_constraints),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
