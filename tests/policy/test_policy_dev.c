/* SPDX-License-Identifier: MIT */
/*
 * test_policy_dev.c - libiosig's catalog and the policy contract in one
 * translation unit: iosig.h and policy.h together (their request
 * vocabularies no longer collide), catalog mounts described by a
 * configuration file turned into policy devices by policy_dev_from_mount(),
 * and a policy (MIOS) that takes the HDD's buffered-write profile from the
 * catalog exactly as it would from its own options.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "files.h"
#include "harness.h"
#include "iosig.h"
#include "policy.h"

/* Two devices of MIOS's paper: an SSD and an HDD whose buffered-write
 * profile (W_f 64 KiB, W_m 32 KiB, L_m 1 ms, L_s 9 ms) comes from the
 * configuration, as `iosig probe` would record it. */
static const char config[] =
	"version: 1\n"
	"mounts:\n"
	"  /mnt/ssd:\n"
	"    class: ssd\n"
	"    capacity: 16GiB\n"
	"    free: 8GiB\n"
	"    block_size: 4KiB\n"
	"  /mnt/hdd:\n"
	"    class: hdd\n"
	"    capacity: 1TiB\n"
	"    free: 512GiB\n"
	"    block_size: 512\n"
	"    bcw: {wf: 64KiB, wm: 32KiB, lf: 0.04ms, lm: 1ms, ls: 9ms}\n"
	"  /mnt/md0:\n"
	"    class: raid\n"
	"    capacity: 4TiB\n"
	"    free: 4TiB\n";

struct fixture {
	char dir[64];
	char path[96];
	struct iosig_catalog *cat;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct iosig_catalog_opts opts = { .probe_cache = "", .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct iosig_error err = { 0 };

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/iosig-policy-dev.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/iosig.yaml", f->dir);
	if (tfile_write(f->path, config) < 0)
		return -1;
	opts.config = f->path;
	if (iosig_catalog_new(&opts, &f->cat, &err) < 0) {
		fprintf(stderr, "%s:%d: %s\n", err.file, err.line, err.msg);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	iosig_catalog_free(f->cat);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const struct iosig_mount *mount_at(const struct iosig_catalog *cat, const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return iosig_catalog_mount(cat, i);
	fail_msg("no mount %s in the catalog", path);
	return NULL;
}

/* Both vocabularies side by side: libiosig's operation (selection's
 * throughput model) and the policies' (requests). */
static void test_both_vocabularies(void **state)
{
	struct fixture *f = *state;
	const struct iosig_mount *hdd = mount_at(f->cat, "/mnt/hdd");
	struct policy_req req = { .op = POLICY_OP_WRITE, .len = 4096 };

	assert_true(iosig_throughput(hdd, req.len, false, IOSIG_OP_WRITE) > 0);
	assert_int_not_equal(POLICY_OP_READ, POLICY_OP_WRITE);
	assert_int_equal(POLICY_OP_FLUSH, 2);
	assert_string_equal(iosig_class_name(IOSIG_CLASS_HDD), "hdd");
}

static void test_from_mount(void **state)
{
	struct fixture *f = *state;
	const struct iosig_mount *hdd = mount_at(f->cat, "/mnt/hdd");
	const struct iosig_mount *ssd = mount_at(f->cat, "/mnt/ssd");
	const struct iosig_mount *md = mount_at(f->cat, "/mnt/md0");
	struct policy_dev_info d;

	assert_int_equal(policy_dev_from_mount(hdd, "hdd0", 1, &d), 0);
	assert_string_equal(d.name, "hdd0");
	assert_int_equal(d.cls, IOSIG_CLASS_HDD);
	assert_int_equal(d.capacity, 1ull << 40);
	assert_int_equal(d.queue_depth, 1);
	assert_int_equal(d.block_size, 512);
	assert_true(d.bcw.wf == 64 * KiB && d.bcw.wm == 32 * KiB);
	assert_int_equal(policy_s_to_ns(d.bcw.lf), 40 * US);
	assert_int_equal(policy_s_to_ns(d.bcw.lm), 1 * MS);
	assert_int_equal(policy_s_to_ns(d.bcw.ls), 9 * MS);

	/* No name: the mount point; no profile: all zero. */
	assert_int_equal(policy_dev_from_mount(ssd, NULL, 8, &d), 0);
	assert_string_equal(d.name, "/mnt/ssd");
	assert_int_equal(d.cls, IOSIG_CLASS_SSD);
	assert_int_equal(d.block_size, 4096);
	assert_int_equal(d.queue_depth, 8);
	assert_true(d.bcw.wf == 0 && d.bcw.wm == 0 && d.bcw.ls == 0);

	/* A class the policies have no special case for is kept as it is. */
	assert_int_equal(policy_dev_from_mount(md, "md0", 4, &d), 0);
	assert_int_equal(d.cls, IOSIG_CLASS_RAID);
}

static void test_from_mount_errors(void **state)
{
	struct fixture *f = *state;
	struct iosig_mount bad = *mount_at(f->cat, "/mnt/hdd");
	struct policy_dev_info d = { .name = "untouched" };

	assert_int_equal(policy_dev_from_mount(&bad, "x", 0, &d), -EINVAL);
	bad.cls = IOSIG_CLASS_COUNT;
	assert_int_equal(policy_dev_from_mount(&bad, "x", 1, &d), -EINVAL);
	bad = *mount_at(f->cat, "/mnt/hdd");
	bad.block_size = 1ull << 33;
	assert_int_equal(policy_dev_from_mount(&bad, "x", 1, &d), -EINVAL);
	assert_string_equal(d.name, "untouched");
}

/* 40 writes of 4 KiB under mios-e, run for 400 ms (the HDD of the harness
 * never shows a Slow write, so MIOS would pad on without end); returns the
 * harness. */
static struct hx *run_mios(const struct policy_dev_info *devs, const char *spec)
{
	static const struct hx_model models[2] = {
		{ .overhead_ns = 200 * US },
		{ .overhead_ns = 50 * US },
	};
	struct hx *h = hx_new(2, devs, models);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	for (unsigned i = 0; i < 40; i++)
		hx_add(h, 300 * MS + i * MS, 1, 0, POLICY_OP_WRITE, i * 64 * KiB, 4 * KiB, 0);
	hx_run(h, 400 * MS);
	assert_int_equal(hx_outstanding(h), 0);
	return h;
}

static bool same_commands(struct hx *a, struct hx *b)
{
	if (hx_ncmd(a) != hx_ncmd(b))
		return false;
	for (unsigned i = 0; i < hx_ncmd(a); i++) {
		const struct hx_cmd *x = hx_cmd(a, i), *y = hx_cmd(b, i);

		if (x->t != y->t || x->dev != y->dev || x->op != y->op || x->off != y->off ||
		    x->len != y->len || x->flags != y->flags)
			return false;
	}
	return true;
}

/* MIOS with the catalog's profile schedules exactly as with the same
 * profile given as options (slow_lat = (L_m + L_s) / 2 = 5 ms), and not as
 * without any profile. */
static void test_mios_profile_from_catalog(void **state)
{
	struct fixture *f = *state;
	struct policy_dev_info cat[2], plain[2];
	struct hx *from_catalog, *from_options, *without;

	assert_int_equal(policy_dev_from_mount(mount_at(f->cat, "/mnt/ssd"), "ssd0", 4, &cat[0]), 0);
	assert_int_equal(policy_dev_from_mount(mount_at(f->cat, "/mnt/hdd"), "hdd0", 1, &cat[1]), 0);
	plain[0] = cat[0];
	plain[1] = cat[1];
	plain[1].bcw = (struct iosig_bcw){ 0 };

	from_catalog = run_mios(cat, "mios-e:pad_slow=16KiB,seq_pairs=3,L=100");
	from_options = run_mios(plain, "mios-e:w_fast=64KiB,w_mid=32KiB,slow_lat=5ms,"
				       "pad_slow=16KiB,seq_pairs=3,L=100");
	without = run_mios(plain, "mios-e:pad_slow=16KiB,seq_pairs=3,L=100");

	/* W_f = 64 KiB: the Fast state holds 15 writes of 4 KiB. */
	assert_int_equal(hx_report(from_catalog, "redirected_writes"), 15);
	assert_true(same_commands(from_catalog, from_options));
	assert_false(same_commands(from_catalog, without));
	hx_free(from_catalog);
	hx_free(from_options);
	hx_free(without);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_vocabularies),
		cmocka_unit_test(test_from_mount),
		cmocka_unit_test(test_from_mount_errors),
		cmocka_unit_test(test_mios_profile_from_catalog),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
