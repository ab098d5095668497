/* SPDX-License-Identifier: MIT */
/* Device models other than the HDD core (SSD, NVM, RAM) against hand-
 * computed service times, SSD garbage collection, and device specs. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dev.h"
#include "hdd.h"
#include "source.h"

static struct sim_dev *mk(const char *spec)
{
	struct sim_dev *d;
	char err[512];

	if (sim_dev_create(spec, 0, &d, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return d;
}

static void expect_spec_error(const char *spec, int code, const char *msg)
{
	struct sim_dev *d = NULL;
	char err[512];

	assert_int_equal(sim_dev_create(spec, 0, &d, err, sizeof(err)), code);
	assert_null(d);
	assert_string_equal(err, msg);
}

static char *report(struct sim_dev *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct json_writer w;

	json_init(&w, fp, false);
	json_obj_begin(&w, NULL);
	d->ops->report(d, &w);
	json_obj_end(&w);
	assert_int_equal(json_finish(&w), 0);
	fclose(fp);
	return buf;
}

static void test_ssd_times(void **state)
{
	/* 1 channel, 2 dies, 4 KiB pages crossing the channel in 10 us. */
	struct sim_dev *d = mk("ssd:generic,channels=1,dies=2,read=50us,program=200us,"
			       "overhead=0ns,channel_rate=409600000");

	assert_int_equal(d->info.cls, IOSIG_CLASS_SSD);
	assert_int_equal(d->info.capacity, 64ull << 30);
	/* One page: channel 0-10 us, program 10-210 us. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_WRITE, 0, 4096, 0), 210000);
	/* Two pages at 1 ms: die 1 then die 0 (round robin); the second page
	 * waits for the channel: 1000-1010, 1010-1020, programs end 1210, 1220. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_WRITE, 8192, 8192, 1000000), 1220000);
	/* Reading page 0 (on die 0) at 2 ms: sense 50 us, channel 10 us. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_READ, 0, 4096, 2000000), 2060000);
	/* Two reads to the same die queue behind each other. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_READ, 0, 4096, 3000000), 3060000);
	assert_int_equal(d->ops->serve(d, POLICY_OP_READ, 0, 4096, 3000000), 3120000);
	/* Flush: nothing volatile. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_FLUSH, 0, 0, 4000000), 4000000);
	sim_dev_destroy(d);
}

static void test_ssd_gc(void **state)
{
	/* 1 MiB, 4-page blocks, 25 % spare, one die: overwriting the whole
	 * space again forces garbage collection, which stalls later writes. */
	struct sim_dev *d = mk("ssd:generic,capacity=1MiB,channels=1,dies=1,pages_per_block=4,"
			       "op=0.25,gc_threshold=0.1,overhead=0ns,program=100us,read=10us,"
			       "erase=1ms,channel_rate=409600000");
	uint64_t t = 0, worst = 0, x = 1;
	char *rep;

	/* Fill every page once, then overwrite pages in a pseudo-random order
	 * so that victims still hold valid pages to move. */
	for (uint64_t page = 0; page < 256; page++)
		t = d->ops->serve(d, POLICY_OP_WRITE, page * 4096, 4096, t);
	for (int i = 0; i < 1024; i++) {
		uint64_t done;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		done = d->ops->serve(d, POLICY_OP_WRITE, (x >> 33) % 256 * 4096, 4096, t);
		if (done - t > worst)
			worst = done - t;
		t = done;
	}
	rep = report(d);
	assert_null(strstr(rep, "\"gc_runs\":0,"));
	assert_null(strstr(rep, "\"write_amplification\":1,"));
	/* A write behind a collection waits for the erase (1 ms) at least. */
	assert_true(worst > 1000000);
	free(rep);
	sim_dev_destroy(d);
}

static void test_mem_times(void **state)
{
	struct sim_dev *d = mk("nvm:generic,read_latency=300ns,read_bw=4000000000,"
			       "write_latency=100ns,write_bw=2000000000");

	assert_int_equal(d->info.cls, IOSIG_CLASS_NVM);
	/* 4096 B at 4 GB/s = 1024 ns on the channel, then 300 ns. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_READ, 0, 4096, 0), 1324);
	/* A second read issued at 0 waits for the channel. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_READ, 4096, 4096, 0), 2348);
	/* Writes: 4096 B at 2 GB/s = 2048 ns, + 100 ns, after the channel frees. */
	assert_int_equal(d->ops->serve(d, POLICY_OP_WRITE, 0, 4096, 10000), 12148);
	sim_dev_destroy(d);

	d = mk("ram");
	assert_int_equal(d->info.cls, IOSIG_CLASS_RAM);
	assert_int_equal(d->info.capacity, 16ull << 30);
	assert_int_equal(d->info.queue_depth, 64);
	sim_dev_destroy(d);
}

static void test_hdd_device(void **state)
{
	struct sim_dev *d = mk("hdd");

	assert_int_equal(d->info.cls, IOSIG_CLASS_HDD);
	assert_int_equal(d->info.capacity, 1ull << 40);
	assert_int_equal(d->info.queue_depth, 1);
	assert_true(d->info.bcw.wf == 0 && d->info.bcw.ls == 0);
	assert_string_equal(d->name, "hdd0");
	assert_non_null(d->hdd);
	sim_dev_destroy(d);

	d = mk("hdd:generic,capacity=2TiB,bcw=on,wf=32MiB,ls=10ms,queue_depth=4");
	assert_int_equal(d->info.capacity, 2ull << 40);
	assert_true(d->info.bcw.wf == 32 << 20);
	assert_true(d->info.bcw.wm == 8 << 20);
	assert_int_equal(policy_s_to_ns(d->info.bcw.ls), 10000000);
	assert_int_equal(policy_s_to_ns(d->info.bcw.lf), 180000);
	assert_int_equal(d->info.queue_depth, 4);
	{
		char *rep;

		d->ops->serve(d, POLICY_OP_WRITE, 0, 65536, 0);
		rep = report(d);
		assert_non_null(strstr(rep, "\"bcw\":{\"fast\":1,\"mid\":0,\"slow\":0}"));
		free(rep);
	}
	sim_dev_destroy(d);

	if (getenv("IOSIG_SIM_TRACES") && *getenv("IOSIG_SIM_TRACES")) {
		d = mk("hdd:barracuda");
		assert_int_equal(d->info.capacity, 4217670ull * 512);   /* what the zones hold */
		assert_string_equal(d->model, "barracuda");
		sim_dev_destroy(d);
		d = mk("hdd:cheetah9LP,write_cache=through,cache=off");
		assert_int_equal(sim_hdd_params(d->hdd)->fast_write, 0);
		assert_int_equal(sim_hdd_params(d->hdd)->nsegs, 0);
		sim_dev_destroy(d);
	}
}

static void test_spec_errors(void **state)
{
	expect_spec_error("floppy", -ENOENT, "device 'floppy': unknown class 'floppy' (known: hdd, "
					     "ssd, nvm, ram)");
	expect_spec_error("", -EINVAL, "device '': expected CLASS[:MODEL][,opt=val...] with CLASS "
				       "hdd, ssd, nvm or ram");
	expect_spec_error("ssd:fancy", -ENOENT, "device 'ssd:fancy': unknown SSD model 'fancy' "
						"(known: generic)");
	expect_spec_error("ssd,channels=0", -EINVAL,
			  "device 'ssd,channels=0': option 'channels': 0 is out of range [1, 64]");
	expect_spec_error("ram,size=1G", -EINVAL,
			  "device 'ram,size=1G': unknown option 'size' (valid: capacity, "
			  "read_latency, write_latency, read_bw, write_bw, queue_depth)");
	expect_spec_error("hdd:generic,bcw=maybe", -EINVAL,
			  "device 'hdd:generic,bcw=maybe': option 'bcw': 'maybe' is not a "
			  "valid bool (expected 0/1, true/false, yes/no or on/off)");
	setenv("IOSIG_DISKSIM_DIR", "/nonexistent", 1);
	{
		struct sim_dev *d = NULL;
		char err[1024];

		assert_int_equal(sim_dev_create("hdd:nosuch", 0, &d, err, sizeof(err)), -ENOENT);
		assert_non_null(strstr(err, "device 'hdd:nosuch': no DiskSim drive 'nosuch' (looked "
					    "for nosuch.parv or nosuch.diskspecs in '/nonexistent:"));
		assert_non_null(strstr(err, "set IOSIG_DISKSIM_DIR or give hdd:/dir/nosuch)"));
	}
	unsetenv("IOSIG_DISKSIM_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ssd_times),
		cmocka_unit_test(test_ssd_gc),
		cmocka_unit_test(test_mem_times),
		cmocka_unit_test(test_hdd_device),
		cmocka_unit_test(test_spec_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
