/* SPDX-License-Identifier: MIT */
/* The HDD model against hand-computed service times, the BID paper's arm
 * movement example, the BCW state machine, and the DiskSim file reader. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "disk_text.h"
#include "hdd.h"
#include "source.h"

#define MS 1000000ull

/* sim_hdd_params_finish() accepts p (its message if not). */
static void params_finish(struct sim_hdd_params *p)
{
	char err[256];

	if (sim_hdd_params_finish(p, err, sizeof(err)) != 0)
		fail_msg("sim_hdd_params_finish: %s", err);
}

/*
 * A drive that is easy to compute by hand: 1 surface, 100 cylinders of 100
 * sectors, 6000 rpm (10 ms per turn, 0.1 ms per sector), seek table
 * 1 -> 1 ms, 10 -> 2 ms, 100 -> 5 ms, read-miss overhead 0.5 ms, 0.01 ms
 * per sector on the bus, no cache.
 */
static void simple(struct sim_hdd_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "simple");
	p->surfaces = 1;
	p->cylinders = 100;
	p->nzones = 1;
	p->zone[0] = (struct sim_hdd_zone){ .first_cyl = 0, .last_cyl = 99, .bpt = 100 };
	p->rpm = 6000;
	p->seek_kind = SIM_SEEK_TABLE;
	p->nseek = 3;
	p->seek_dist[0] = 1;
	p->seek_ms[0] = 1;
	p->seek_dist[1] = 10;
	p->seek_ms[1] = 2;
	p->seek_dist[2] = 100;
	p->seek_ms[2] = 5;
	p->head_switch_ms = 0.5;
	p->ovh_ms[SIM_OVH_READ_MISS_AFTER_READ] = 0.5;
	p->ovh_ms[SIM_OVH_READ_MISS_AFTER_WRITE] = 0.5;
	p->xfer_ms = 0.01;
	p->queue_depth = 1;
	p->contread = SIM_RA_SEGMENT;
	params_finish(p);
	assert_int_equal(p->blocks, 10000);
}

static void assert_ns(uint64_t got, double want_ms)
{
	if (fabs((double)got - want_ms * 1e6) > 2)
		fail_msg("got %.6f ms, want %.6f ms", got / 1e6, want_ms);
}

static void test_seek_table(void **state)
{
	struct sim_hdd_params p;

	simple(&p);
	assert_true(sim_hdd_seek_ms(&p, 0) == 0);
	assert_true(fabs(sim_hdd_seek_ms(&p, 1) - 1) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 5) - (1 + 4.0 / 9)) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 55) - 3.5) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 100) - 5) < 1e-12);
	/* Beyond the table: the last segment extrapolated. */
	assert_true(fabs(sim_hdd_seek_ms(&p, 190) - 8) < 1e-12);

	/* Ruemmler-Wilkes curve with a measured single-cylinder seek. */
	p.seek_kind = SIM_SEEK_CURVE;
	p.rw_boundary = 300;
	p.rw_a = 3.81;
	p.rw_b = 0.33;
	p.rw_c = 7.75;
	p.rw_e = 0.0059;
	p.rw_single = true;
	p.seek_one_ms = 0.2;
	assert_true(fabs(sim_hdd_seek_ms(&p, 1) - 0.2) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 100) - 7.11) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 1000) - 13.65) < 1e-12);
	p.have_first10 = true;
	p.first10_ms[2] = 3.81;
	assert_true(fabs(sim_hdd_seek_ms(&p, 3) - 3.81) < 1e-12);
}

static void test_read_miss_times(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd *h;

	simple(&p);
	h = sim_hdd_create(&p);
	/* t=0, lbn 0 (cyl 0, sector 0), 10 sectors: overhead 0.5; no seek;
	 * head at 0.05 turn, sector at 0 -> wait 9.5; media 1.0 -> 11.0 ms. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 0, 10, 0), 11.0);
	/* t=11, lbn 5500 (cyl 55): 0.5 + seek 3.5 -> 15.0; head at 0.5 turn,
	 * wait 5.0 -> 20.0; one sector -> 20.1, on the bus -> 20.11 ms.  (The
	 * first request's bus transfer ended within its media transfer.) */
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 5500, 1, 11 * MS), 20.11);
	assert_int_equal(sim_hdd_stats(h)->arm_moves, 1);
	assert_int_equal(sim_hdd_stats(h)->tmd, 55);
	/* Issued while busy: starts when the previous one completes (20.11):
	 * 0.5 -> 20.61 (0.061 turn), sector 1 at 0.01 turn -> 30.1, +0.1 media,
	 * +0.01 bus. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 5501, 1, 15 * MS), 30.21);
	sim_hdd_destroy(h);
}

static void test_track_switch_and_skew(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd *h;

	simple(&p);
	h = sim_hdd_create(&p);
	/* lbn 95..104: sectors 95-99 of cyl 0 then 0-4 of cyl 1.  0.5 ms
	 * overhead, wait 0.9 turn -> 9.5; 5 sectors -> 10.0; one-cylinder seek
	 * 1 ms -> 11.0; the head is at 0.1 turn, sector 0 at 0 -> 9.0 wait ->
	 * 20.0; 5 sectors -> 20.5 ms. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 95, 10, 0), 20.5);
	assert_int_equal(sim_hdd_stats(h)->arm_moves, 1);
	sim_hdd_destroy(h);

	/* A cylinder skew of 15 sectors puts cyl 1's first sector at 0.15 turn:
	 * after the switch at 11.0 ms (0.1 turn) only 0.5 ms of wait. */
	p.zone[0].cyl_skew = 15;
	params_finish(&p);
	h = sim_hdd_create(&p);
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 95, 10, 0), 12.0);
	sim_hdd_destroy(h);
}

static void test_write_through_settle(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd *h;

	simple(&p);
	p.ovh_ms[SIM_OVH_WRITE_MISS_AFTER_READ] = 0.3;
	p.write_settle_ms = 0.2;
	p.write_complete_ms = 0.05;
	params_finish(&p);
	h = sim_hdd_create(&p);
	/* lbn 1020 = cyl 10 sector 20: 0.3 + seek 2.0 + settle 0.2 -> 2.5 ms
	 * (0.25 turn), sector at 0.2 turn -> wait 0.95 turn = 9.5 -> 12.0;
	 * 2 sectors -> 12.2; completion overhead -> 12.25 ms. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_WRITE, 1020, 2, 0), 12.25);
	assert_int_equal(sim_hdd_stats(h)->writes_through, 1);
	sim_hdd_destroy(h);
}

static void test_cache(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd *h;

	simple(&p);
	p.nsegs = 2;
	p.seg_blocks = 200;
	p.max_readahead = 100;
	p.ovh_ms[SIM_OVH_READ_HIT_AFTER_READ] = 0.1;
	params_finish(&p);

	/* Read-ahead continues after the miss: 100 ms later lbn 10..19 are in
	 * the segment: 0.1 ms overhead + 10 sectors on the bus = 0.2 ms. */
	h = sim_hdd_create(&p);
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 0, 10, 0), 11.0);
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 10, 10, 100 * MS), 100.2);
	assert_int_equal(sim_hdd_stats(h)->read_hits, 1);
	sim_hdd_destroy(h);

	/* Right after the miss, lbn 50..59 are not read yet: the read waits for
	 * the read-ahead, which is at lbn 10 at 11.0 ms and reaches lbn 60 at
	 * 16.0 ms, plus one sector on the bus. */
	h = sim_hdd_create(&p);
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 0, 10, 0), 11.0);
	assert_ns(sim_hdd_serve(h, POLICY_OP_READ, 50, 10, 11 * MS), 16.01);
	assert_int_equal(sim_hdd_stats(h)->read_partial_hits, 1);
	/* Beyond the read-ahead window (lbn 0 + 200): a miss. */
	sim_hdd_serve(h, POLICY_OP_READ, 300, 1, 20 * MS);
	assert_int_equal(sim_hdd_stats(h)->read_misses, 2);
	sim_hdd_destroy(h);
}

static void test_write_back(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd *h;

	simple(&p);
	p.nsegs = 2;
	p.seg_blocks = 200;
	p.max_write_segs = 1;
	p.fast_write = 1;
	p.ovh_ms[SIM_OVH_WRITE_HIT_AFTER_READ] = 0.2;
	p.ovh_ms[SIM_OVH_WRITE_HIT_AFTER_WRITE] = 0.2;
	params_finish(&p);
	h = sim_hdd_create(&p);
	/* Acknowledged from the buffer: 0.2 + 4 x 0.01 ms. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_WRITE, 5000, 4, 0), 0.24);
	/* The destage (from 0.2 ms: seek 50 cyl = 3.333 ms, then rotation to
	 * sector 0 at 10.0 ms, 4 sectors -> 10.4 ms) holds the mechanism: a
	 * second write must wait for the only write segment, until 10.4 ms. */
	assert_ns(sim_hdd_serve(h, POLICY_OP_WRITE, 7000, 4, 1 * MS), 10.64);
	assert_int_equal(sim_hdd_stats(h)->destages, 2);
	/* A flush waits for every destage. */
	assert_true(sim_hdd_serve(h, POLICY_OP_FLUSH, 0, 0, 11 * MS) > 11 * MS);
	sim_hdd_destroy(h);
}

/* BID paper, "Cumulative disk head movement distance": CFQ's output order
 * {3, 3, 16, 71, (71, 72), 3, 4, 16, 72, 72, 4, 4} gives 8 head movements
 * |16-3| + |71-16| + |72-71| + |3-72| + |4-3| + |16-4| + |72-16| + |4-72|.
 * The paper prints the sum as 203; the terms add up to 275 (AD_seek
 * 34.375, TD_sweep 2.75 on 100 tracks), which is what we count. */
static void test_bid_tmd_example(void **state)
{
	static const struct { uint32_t cyl, sector, n; } seq[] = {
		{ 3, 0, 1 }, { 3, 10, 1 }, { 16, 0, 1 }, { 71, 0, 1 }, { 71, 99, 2 }, { 3, 0, 1 },
		{ 4, 0, 1 }, { 16, 0, 1 }, { 72, 0, 1 }, { 72, 50, 1 }, { 4, 0, 1 }, { 4, 50, 1 },
	};
	struct sim_hdd_params p;
	const struct sim_hdd_stats *s;
	struct sim_hdd *h;
	uint64_t t = 0;

	simple(&p);
	h = sim_hdd_create(&p);
	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		t = sim_hdd_serve(h, POLICY_OP_READ, seq[i].cyl * 100ull + seq[i].sector, seq[i].n, t);
	s = sim_hdd_stats(h);
	/* The arm starts at cylinder 0: one extra movement of 3 cylinders. */
	assert_int_equal(s->arm_moves - 1, 8);
	assert_int_equal(s->tmd - 3, 275);
	sim_hdd_destroy(h);
}

static void test_bcw_states(void **state)
{
	struct sim_hdd_params p;
	const struct sim_hdd_stats *s;
	struct sim_hdd *h;
	uint64_t t = 0, done;
	static const double want[] = { 0.1, 0.1, 5.0, 0.2, 5.0, 0.2, 5.0 };

	simple(&p);
	p.bcw = true;
	p.bcw_wf = 8192;
	p.bcw_wm = 4096;
	p.bcw_lf_ms = 0.1;
	p.bcw_lm_ms = 0.2;
	p.bcw_ls_ms = 5;
	params_finish(&p);
	h = sim_hdd_create(&p);
	/* Back-to-back 4 KiB writes: F F (W_f full) S M S M S. */
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		done = sim_hdd_serve(h, POLICY_OP_WRITE, 1000 + 8 * i, 8, t);
		assert_ns(done - t, want[i]);
		t = done;
	}
	s = sim_hdd_stats(h);
	assert_int_equal(s->bcw_fast, 2);
	assert_int_equal(s->bcw_mid, 2);
	assert_int_equal(s->bcw_slow, 3);
	/* After a second of idleness the buffer has drained: Fast again. */
	t += 1000 * MS;
	assert_ns(sim_hdd_serve(h, POLICY_OP_WRITE, 2000, 8, t) - t, 0.1);
	sim_hdd_destroy(h);
}

static void test_generic(void **state)
{
	struct sim_hdd_params p;
	struct sim_hdd_pbn b;

	sim_hdd_params_generic(&p, 1ull << 40);
	params_finish(&p);
	assert_true(p.blocks == (1ull << 40) / 512);
	assert_true(sim_hdd_map(&p, 0, &b));
	assert_int_equal(b.cyl, 0);
	assert_true(sim_hdd_map(&p, p.blocks - 1, &b));
	assert_true(b.cyl < p.cylinders);
	assert_false(sim_hdd_map(&p, p.blocks, &b));
	/* The curve passes through its three defining points. */
	assert_true(fabs(sim_hdd_seek_ms(&p, p.rw_boundary) - 8.5) < 1e-9);
	assert_true(fabs(sim_hdd_seek_ms(&p, p.cylinders) - 16.0) < 1e-9);
}

static const char *disksim_dir(void)
{
	const char *d = getenv("IOSIG_SIM_TRACES");
	static char buf[1024];

	if (!d || !*d)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/disksim", d);
	return buf;
}

static void test_disksim_drives(void **state)
{
	const char *dir = disksim_dir();
	struct sim_hdd_params p;
	struct sim_hdd_pbn b;
	char err[512];

	if (!dir) {
		skip();
		return;
	}
	assert_int_equal(sim_disksim_load(dir, "barracuda", &p, err, sizeof(err)), 0);
	assert_int_equal(p.surfaces, 5);
	assert_int_equal(p.cylinders, 5172);
	/* DiskSim serves what the zones hold, not the declared Block count
	 * (4110000): the sum of the eleven zones' counts. */
	assert_int_equal(p.blocks, 4217670);
	assert_int_equal(p.nzones, 11);
	assert_int_equal(p.sparing, SIM_SPARE_PER_RANGE);
	assert_int_equal(p.range_size, 6);
	assert_int_equal(p.zone[0].bpt, 186);
	assert_true(p.rpm == 7200);
	assert_int_equal(p.seek_kind, SIM_SEEK_TABLE);
	assert_int_equal(p.nseek, 87);
	assert_true(fabs(sim_hdd_seek_ms(&p, 1) - 1.943) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 11) - 2.3545) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 4986) - 16.679) < 1e-12);
	assert_true(fabs(p.xfer_ms - 0.134) < 1e-12);
	assert_int_equal(p.nsegs, 3);
	assert_int_equal(p.max_readahead, 281);
	assert_int_equal(p.fast_write, 1);
	/* Range sparing: 6 cylinders x 5 surfaces x 186 - 88 spares = 5492
	 * blocks per range; block 5492 starts cylinder 6. */
	assert_true(sim_hdd_map(&p, 5491, &b));
	assert_int_equal(b.cyl, 5);
	assert_true(sim_hdd_map(&p, 5492, &b));
	assert_int_equal(b.cyl, 6);
	assert_int_equal(b.head, 0);
	assert_int_equal(b.sector, 0);

	assert_int_equal(sim_disksim_load(dir, "hp_c2247a", &p, err, sizeof(err)), 0);
	assert_int_equal(p.seek_kind, SIM_SEEK_CURVE);
	assert_true(p.have_first10);
	assert_true(fabs(sim_hdd_seek_ms(&p, 1) - 2.89) < 1e-12);
	assert_true(fabs(sim_hdd_seek_ms(&p, 100) - 7.11) < 1e-12);
	assert_true(fabs(p.xfer_ms - 0.18686) < 1e-12);   /* the bus, slower than the drive */
	assert_int_equal(p.fast_write, 0);
	/* Track sparing and 1632 empty sectors at the front of zone 0:
	 * block 0 is track 17 = cylinder 1, head 4. */
	assert_true(sim_hdd_map(&p, 0, &b));
	assert_int_equal(b.cyl, 1);
	assert_int_equal(b.head, 4);
	assert_int_equal(b.sector, 0);

	assert_int_equal(sim_disksim_load(dir, "cheetah9LP", &p, err, sizeof(err)), 0);
	assert_int_equal(p.surfaces, 12);
	assert_true(fabs(p.rpm - 10045) < 1e-9);
	assert_int_equal(p.fast_write, 2);

	assert_int_equal(sim_disksim_load(dir, "nosuchdrive", &p, err, sizeof(err)), -ENOENT);
}

/* Writes name in dir with text. */
static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_disksim_errors(void **state)
{
	char dir[] = "/tmp/iosig-sim-XXXXXX", err[512], want[700];
	struct sim_hdd_params p;

	assert_non_null(mkdtemp(dir));
	put(dir, "d1.diskspecs", "disksim_disk X {\n   Model = source d1.model,\n}\n");
	put(dir, "d1.model", "dm_disk M {\n   Number of data surfaces = two,\n}\n");
	assert_int_equal(sim_disksim_load(dir, "d1", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/d1.model:2: 'Number of data surfaces' = 'two' is not a number",
		 dir);
	assert_string_equal(err, want);

	put(dir, "d2.diskspecs", "disksim_disk X {\n   Model = dm_disk {\n"
				 "      Number of data surfaces = 2\n      Number of cylinders = 3,\n"
				 "   },\n}\n");
	assert_int_equal(sim_disksim_load(dir, "d2", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/d2.diskspecs:4: expected ',' or '}' after the value of "
		 "'Number of data surfaces'", dir);
	assert_string_equal(err, want);

	put(dir, "d3.diskspecs", "disksim_disk X {\n   Model = dm_disk {\n"
				 "      Number of data surfaces = 2,\n   },\n}\n");
	assert_int_equal(sim_disksim_load(dir, "d3", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/d3.diskspecs:2: 'Number of cylinders' is missing in this "
		 "'dm_disk' block", dir);
	assert_string_equal(err, want);

	put(dir, "d4.diskspecs", "disksim_disk X {\n   Model = source nothere.model,\n}\n");
	assert_int_equal(sim_disksim_load(dir, "d4", &p, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s/nothere.model: cannot open: No such file or directory", dir);
	assert_string_equal(err, want);

	put(dir, "d5.diskspecs", "disksim_disk X {\n   Model = dm_disk {\n");
	assert_int_equal(sim_disksim_load(dir, "d5", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/d5.diskspecs:3: end of file inside the 'dm_disk' block that "
		 "starts at line 2", dir);
	assert_string_equal(err, want);

	put(dir, "d6.seek", "Seek distances measured: 3\n1, 1.0\n5, 2.0\n");
	put(dir, "d6.diskspecs", "disksim_disk X { Model = dm_disk { Mechanical Model = dm_mech_g1 {\n"
				 "Access time type = trackSwitchPlusRotation,\n"
				 "Rotation speed (in rpms) = 7200, Head switch time = 0.1,\n"
				 "Single cylinder seek time = 1, Seek type = extracted,\n"
				 "Full seek curve = d6.seek } } }\n");
	assert_int_equal(sim_disksim_load(dir, "d6", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/d6.diskspecs:1: 'Number of data surfaces' is missing in this "
		 "'dm_disk' block", dir);
	assert_string_equal(err, want);

	assert_int_equal(sim_disksim_load(dir, "../x", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'../x' is not a drive name (expected e.g. barracuda)");

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_disksim_text(void **state)
{
	static const char text[] =
		"# a whole drive in one text\n"
		"disksim_disk D {\n"
		"   Model = dm_disk M {\n"
		"      Number of data surfaces = 1,\n"
		"      Number of cylinders = 100,\n"
		"      Block count = 10000,\n"
		"      Layout Model = dm_layout_g1 {\n"
		"         LBN-to-PBN mapping scheme = 0,\n"
		"         Sparing scheme used = 0,\n"
		"         Zones = [ dm_layout_g1_zone { First cylinder number = 0,\n"
		"            Last cylinder number = 99, Blocks per track = 100,\n"
		"            Skew for track switch = 0, Skew for cylinder switch = 5,\n"
		"            Number of spares = 0, slips = [], defects = [] } ]\n"
		"      },\n"
		TEST_DISK_MECHANICS
		"} # end\n"
		"disksim_bus B { Read block transfer time = 0.02, Write block transfer time = 0.0 }\n"
		"instantiate [ disk0 ] as D\n"
		"topology disksim_iodriver driver0 [ disksim_bus bus0 [ disksim_disk disk0 [] ] ]\n";
	static const char with_source[] = "disksim_disk D {\n   Model = source x.model,\n}\n";
	struct sim_hdd_params p;
	char err[512];

	assert_int_equal(sim_disksim_parse_text(text, sizeof(text) - 1, &p, err, sizeof(err)), 0);
	assert_int_equal(p.surfaces, 1);
	assert_int_equal(p.blocks, 10000);
	assert_true(p.rpm == 6000);
	assert_true(p.zone[0].cyl_skew == 5);
	assert_true(fabs(sim_hdd_seek_ms(&p, 1) - 1.0) < 1e-12);     /* single-cylinder time */
	assert_true(fabs(sim_hdd_seek_ms(&p, 4) - 1.2) < 1e-12);     /* 1 + 0.1 sqrt(4) */
	assert_true(fabs(sim_hdd_seek_ms(&p, 100) - 3.0) < 1e-12);   /* 2 + 0.01 x 100 */
	assert_true(fabs(p.xfer_ms - 0.02) < 1e-12);                 /* the bus is slower */
	assert_true(fabs(p.ovh_ms[SIM_OVH_READ_MISS_AFTER_WRITE] - 0.5) < 1e-12);

	assert_int_equal(sim_disksim_parse_text(with_source, sizeof(with_source) - 1, &p, err,
						sizeof(err)), -EINVAL);
	assert_string_equal(err, "x.model: 'source' is not allowed in parameters given as text");
	assert_int_equal(sim_disksim_parse_text("disksim_bus B { }", 17, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "<text>: no 'disksim_disk' block");
	assert_int_equal(sim_disksim_parse_text("x = 1", 5, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "<text>:1: 'x = 1' is neither a parameter block 'TYPE NAME { ... }' "
				 "nor source/instantiate/topology");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_table),
		cmocka_unit_test(test_read_miss_times),
		cmocka_unit_test(test_track_switch_and_skew),
		cmocka_unit_test(test_write_through_settle),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_write_back),
		cmocka_unit_test(test_bid_tmd_example),
		cmocka_unit_test(test_bcw_states),
		cmocka_unit_test(test_generic),
		cmocka_unit_test(test_disksim_drives),
		cmocka_unit_test(test_disksim_errors),
		cmocka_unit_test(test_disksim_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
