/* SPDX-License-Identifier: MIT */
/*
 * The HDD layout against hand-worked DiskSim parameter files: every
 * LBN-to-PBN mapping scheme (0, 1, 2) and every sparing scheme (0 to 10)
 * of DiskSim 4's layout_g1, slips and defects, and the zone-table forms
 * DiskSim reads (zones past the cylinder count, gaps, any order, skew
 * units), each on a tiny drive whose mapping is worked out below.
 *
 * The drive: 2 surfaces; zone 0 = cylinders 0-3 with 10 sectors per track,
 * zone 1 = cylinders 5-6 with 8 (cylinder 4 is in no zone).  A zone's
 * physical sector number P counts its sectors cylinder by cylinder, each
 * cylinder's tracks in mapping order: P = (cyl - first_cyl) * 20 + t * 10 +
 * sector in zone 0, where t is the track's place in its cylinder (the
 * surface, unless the mapping is serpentine).  Slips and defects are P
 * values (track numbers for track sparing), zone relative, as DiskSim's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "disk_text.h"
#include "hdd.h"
#include "source.h"

/* Everything of a drive but its layout. */
static const char drive_text[] =
	"disksim_disk D {\n"
	"   Model = dm_disk M {\n"
	"      Number of data surfaces = 2,\n"
	"      Number of cylinders = %u,\n"
	"      Block count = 1,\n"
	"      Layout Model = dm_layout_g1 {\n"
	"         LBN-to-PBN mapping scheme = %u,\n"
	"         Sparing scheme used = %u,\n"
	"         Rangesize for sparing = %u,\n"
	"%s"
	"         Zones = [ %s ]\n"
	"      },\n"
	TEST_DISK_MECHANICS
	"}\n";

/* A zone block. */
#define ZONE(first, last, bpt, extra)                                                    \
	"dm_layout_g1_zone { First cylinder number = " #first ", Last cylinder number = "  \
	#last ", Blocks per track = " #bpt ", Skew for track switch = 0, "                  \
	"Skew for cylinder switch = 0, " extra " }"

/* The two zones of the drive described at the top; extra0 holds zone 0's
 * spares, slips and defects. */
#define ZONES(extra0) ZONE(0, 3, 10, extra0) ", " ZONE(5, 6, 8, "Number of spares = 0")

static char text[8192];

/* Parses the drive with the given layout; 0 or -errno with err set. */
static int load(struct sim_hdd_params *p, unsigned cylinders, unsigned mapping, unsigned sparing,
		unsigned range, const char *layout_extra, const char *zones, char *err, size_t errlen)
{
	int n = snprintf(text, sizeof(text), drive_text, cylinders, mapping, sparing, range, layout_extra,
			 zones);

	assert_true(n > 0 && (size_t)n < sizeof(text));
	return sim_disksim_parse_text(text, (size_t)n, p, err, errlen);
}

static struct sim_hdd_params *drive(unsigned mapping, unsigned sparing, unsigned range,
				    const char *zones)
{
	struct sim_hdd_params *p = calloc(1, sizeof(*p));
	char err[512];

	assert_non_null(p);
	if (load(p, 7, mapping, sparing, range, "", zones, err, sizeof(err)) != 0)
		fail_msg("%s\n%s", err, text);
	return p;
}

/* lbn maps to (cyl, head, sector). */
static void at(const struct sim_hdd_params *p, uint64_t lbn, uint32_t cyl, uint32_t head,
	       uint32_t sector)
{
	struct sim_hdd_pbn b;

	if (!sim_hdd_map(p, lbn, &b))
		fail_msg("lbn %llu does not map", (unsigned long long)lbn);
	if (b.cyl != cyl || b.head != head || b.sector != sector)
		fail_msg("lbn %llu maps to cylinder %u, head %u, sector %u; want %u, %u, %u",
			 (unsigned long long)lbn, b.cyl, b.head, b.sector, cyl, head, sector);
}

/* Zone 1 holds 2 cylinders x 2 tracks x 8 = 32 blocks in every scheme
 * (no spares): the drive has zone 0's count + 32. */
static void count(const struct sim_hdd_params *p, uint64_t zone0)
{
	assert_int_equal(p->zone[0].nlbn, zone0);
	assert_int_equal(p->blocks, zone0 + 32);
	assert_false(sim_hdd_map(p, zone0 + 32, &(struct sim_hdd_pbn){ 0 }));
}

/* Scheme 0, mapping 0: blocks in physical order after 3 empty sectors;
 * slips and defects are ignored (DiskSim's no-sparing mapping does). */
static void test_sparing_0_none(void **state)
{
	struct sim_hdd_params *p = drive(0, 0, 1, ZONES("Empty space at zone front = 3, "
		"Number of spares = 0, slips = [ 5 ], defects = [ 6, 7 ]"));

	count(p, 80 - 3);
	at(p, 0, 0, 0, 3);      /* x = 3 */
	at(p, 2, 0, 0, 5);      /* P 5 is listed as a slip: not skipped */
	at(p, 3, 0, 0, 6);      /* P 6 is listed as a defect: not remapped */
	at(p, 7, 0, 1, 0);      /* x = 10: the second track */
	at(p, 76, 3, 1, 9);     /* x = 79: the zone's last sector */
	at(p, 77, 5, 0, 0);     /* zone 1 starts at cylinder 5 (4 is in no zone) */
	at(p, 77 + 31, 6, 1, 7);
	free(p);
}

/* Mapping 1: every other cylinder of a zone, from its first, runs its
 * tracks backwards (track t on surface 1 - t).  Zone 0: cylinders 1 and 3
 * reversed; zone 1 (first cylinder 5): cylinder 6 reversed. */
static void test_mapping_1_serpentine_zone(void **state)
{
	struct sim_hdd_params *p = drive(1, 0, 1, ZONES("Number of spares = 0"));

	count(p, 80);
	at(p, 0, 0, 0, 0);
	at(p, 10, 0, 1, 0);
	at(p, 20, 1, 1, 0);     /* cylinder 1, track 0 = surface 1: no head switch */
	at(p, 35, 1, 0, 5);     /* track 1 = surface 0 */
	at(p, 40, 2, 0, 0);
	at(p, 60, 3, 1, 0);
	at(p, 80, 5, 0, 0);     /* cylinder 5 is the zone's first: in order */
	at(p, 96, 6, 1, 0);     /* cylinder 6: reversed */
	at(p, 104, 6, 0, 0);
	free(p);
}

/* Mapping 2: odd cylinders reversed whatever the zone: 1, 3 and 5. */
static void test_mapping_2_serpentine(void **state)
{
	struct sim_hdd_params *p = drive(2, 0, 1, ZONES("Number of spares = 0"));

	count(p, 80);
	at(p, 20, 1, 1, 0);
	at(p, 60, 3, 1, 0);
	at(p, 80, 5, 1, 0);     /* zone 1's first cylinder is odd: reversed */
	at(p, 88, 5, 0, 0);
	at(p, 96, 6, 0, 0);     /* cylinder 6: in order */
	free(p);
}

/* Scheme 1: 2 spare tracks at the end of zone 0 (8 tracks): 60 blocks on
 * tracks 0-5.  Track 1 is slipped (blocks move to the next track), track 3
 * is remapped to spare track 7.  Logical track k -> tracks 0, 2, 3->7, 4,
 * 5, 6. */
static void test_sparing_1_track(void **state)
{
	struct sim_hdd_params *p = drive(0, 1, 1, ZONES("Number of spares = 2, slips = [ 1 ], "
		"defects = [ 3, 7 ]"));

	count(p, 80 - 2 * 10);
	at(p, 0, 0, 0, 0);
	at(p, 9, 0, 0, 9);
	at(p, 10, 1, 0, 0);     /* k 1 -> track 2 = cylinder 1, surface 0 */
	at(p, 25, 3, 1, 5);     /* k 2 -> track 3, remapped to track 7 */
	at(p, 30, 2, 0, 0);     /* k 3 -> track 4 */
	at(p, 59, 3, 0, 9);     /* k 5 -> track 6 */
	free(p);
}

/* Scheme 2: 2 spare sectors at the end of each 20-sector cylinder, 18
 * blocks per cylinder, 3 empty sectors at the front (x = lbn + 3).  Slip
 * P 5 uses cylinder 0's first spare; defect P 22 is served from cylinder
 * 1's spare P 39. */
static void test_sparing_2_per_cylinder(void **state)
{
	struct sim_hdd_params *p = drive(0, 2, 1, ZONES("Empty space at zone front = 3, "
		"Number of spares = 2, slips = [ 5 ], defects = [ 22, 39 ]"));

	count(p, 80 - 3 - 2 * 4);
	at(p, 1, 0, 0, 4);      /* x 4 */
	at(p, 2, 0, 0, 6);      /* x 5: after the slip */
	at(p, 14, 0, 1, 8);     /* x 17: P 18, the first spare */
	at(p, 15, 1, 0, 0);     /* x 18: cylinder 1 */
	at(p, 16, 1, 0, 1);
	at(p, 17, 1, 1, 9);     /* x 20: P 22, remapped to P 39 */
	at(p, 18, 1, 0, 3);     /* x 21: P 23 */
	free(p);
}

/* Scheme 3: 1 spare sector at the end of each 10-sector track, 9 blocks
 * per track.  Slip P 12 (track 1, sector 2) uses track 1's spare. */
static void test_sparing_3_per_track(void **state)
{
	struct sim_hdd_params *p = drive(0, 3, 1, ZONES("Number of spares = 1, slips = [ 12 ], "
		"defects = []"));

	count(p, 80 - 8);
	at(p, 8, 0, 0, 8);
	at(p, 9, 0, 1, 0);      /* track 1 */
	at(p, 11, 0, 1, 3);     /* k 2 -> after the slip */
	at(p, 17, 0, 1, 9);     /* k 8 -> the spare */
	at(p, 18, 1, 0, 0);     /* track 2 */
	free(p);
}

/* A read across a slip skips the slipped sector: 6000 rpm = 1 ms per
 * sector, no cache, no skews.  Blocks 9-17 are track 1 (surface 1),
 * sectors 0-1 and 3-9.  t = 0: command 0.5 ms, head switch 0.5 ms (t 1.0,
 * the disk at 0.1 turn), wait 9 ms for sector 0 (t 10), sectors 0-1 until
 * 12, the slipped sector 2 passes until 13, sectors 3-9 until 20 ms. */
static void test_slip_timing(void **state)
{
	struct sim_hdd_params *p = drive(0, 3, 1, ZONES("Number of spares = 1, slips = [ 12 ], "
		"defects = []"));
	struct sim_hdd *h = sim_hdd_create(p);

	assert_non_null(h);
	assert_int_equal(sim_hdd_serve(h, POLICY_OP_READ, 9, 9, 0), 20000000);
	sim_hdd_destroy(h);
	free(p);
}

/* Scheme 4: as scheme 2 (2 spares per cylinder) but slip P 5 moves every
 * later block by one data sector, across cylinders; the spares stay free
 * (71 blocks: the slip costs one). */
static void test_sparing_4_per_cylinder_slip_to_end(void **state)
{
	struct sim_hdd_params *p = drive(0, 4, 1, ZONES("Number of spares = 2, slips = [ 5 ], "
		"defects = []"));

	count(p, 80 - 2 * 4 - 1);
	at(p, 4, 0, 0, 4);
	at(p, 5, 0, 0, 6);
	at(p, 16, 0, 1, 7);     /* data position 17, cylinder 0's last data sector */
	at(p, 17, 1, 0, 0);     /* position 18: cylinder 1 (P 18, 19 stay spare) */
	at(p, 70, 3, 1, 7);     /* position 71 = cylinder 3's last data sector, P 77 */
	free(p);
}

/* Scheme 5: 2 spare sectors at the front of each cylinder.  Cylinder 0 has
 * one slip (P 5): it gives up one front spare, its blocks start at P 1;
 * cylinder 1 starts at P 22. */
static void test_sparing_5_per_cylinder_front(void **state)
{
	struct sim_hdd_params *p = drive(0, 5, 1, ZONES("Number of spares = 2, slips = [ 5 ], "
		"defects = []"));

	count(p, 80 - 2 * 4);
	at(p, 0, 0, 0, 1);
	at(p, 3, 0, 0, 4);
	at(p, 4, 0, 0, 6);      /* after the slip */
	at(p, 17, 0, 1, 9);
	at(p, 18, 1, 0, 2);     /* after cylinder 1's front spares */
	free(p);
}

/* Scheme 6: front spares as 5, the slip moves every later block (data
 * positions are P 2-19 of each cylinder; P 5 is position 3). */
static void test_sparing_6_per_cylinder_front_slip_to_end(void **state)
{
	struct sim_hdd_params *p = drive(0, 6, 1, ZONES("Number of spares = 2, slips = [ 5 ], "
		"defects = []"));

	count(p, 80 - 2 * 4 - 1);
	at(p, 0, 0, 0, 2);
	at(p, 2, 0, 0, 4);
	at(p, 3, 0, 0, 6);      /* position 4 */
	at(p, 17, 1, 0, 2);     /* position 18: cylinder 1's first data sector */
	free(p);
}

/* Scheme 7: no spares in the zone (DiskSim's count ignores its "Number of
 * spares"); slips P 5 and 30 move every later block: 78 blocks. */
static void test_sparing_7_at_end(void **state)
{
	/* (The slips are listed out of order: they are sorted on reading.) */
	struct sim_hdd_params *p = drive(0, 7, 1, ZONES("Number of spares = 5, slips = [ 30, 5 ], "
		"defects = []"));

	count(p, 80 - 2);
	at(p, 4, 0, 0, 4);
	at(p, 5, 0, 0, 6);
	at(p, 28, 1, 0, 9);     /* P 29 */
	at(p, 29, 1, 1, 1);     /* P 31: after the second slip */
	at(p, 77, 3, 1, 9);     /* P 79: the zone's last sector */
	free(p);
}

/* Scheme 8: 4 spares at the end of each range of 3 cylinders (60 sectors,
 * 56 blocks).  Zone 0's fourth cylinder is a partial range: no spares
 * (DiskSim counts 4 * (4 / 3) spares).  Slip P 10 uses range 0's spares. */
static void test_sparing_8_per_range(void **state)
{
	struct sim_hdd_params *p = drive(0, 8, 3, ZONES("Number of spares = 4, slips = [ 10 ], "
		"defects = []"));

	count(p, 80 - 4);
	at(p, 9, 0, 0, 9);
	at(p, 10, 0, 1, 1);     /* after the slip */
	at(p, 55, 2, 1, 6);     /* position 56 */
	at(p, 56, 3, 0, 0);     /* the partial range */
	at(p, 75, 3, 1, 9);
	free(p);
}

/* Scheme 9: 5 spares at the end of the zone; slip P 0 uses one of them. */
static void test_sparing_9_per_zone(void **state)
{
	struct sim_hdd_params *p = drive(0, 9, 1, ZONES("Number of spares = 5, slips = [ 0 ], "
		"defects = []"));

	count(p, 80 - 5);
	at(p, 0, 0, 0, 1);
	at(p, 74, 3, 1, 5);     /* P 75: the first spare, used by the slip */
	free(p);
}

/* Scheme 10: as 9, but the slip moves the blocks without using a spare:
 * 74 blocks, the last at P 74. */
static void test_sparing_10_per_zone_slip_to_end(void **state)
{
	struct sim_hdd_params *p = drive(0, 10, 1, ZONES("Number of spares = 5, slips = [ 0 ], "
		"defects = []"));

	count(p, 80 - 5 - 1);
	at(p, 0, 0, 0, 1);
	at(p, 73, 3, 1, 4);
	free(p);
}

/* Zone tables DiskSim reads: a zone past the cylinder count (the drive
 * grows), zones in any cylinder order (blocks follow the list), the
 * declared Block count ignored, skews in revolutions, sector skews cut to
 * whole sectors. */
static void test_zone_table_forms(void **state)
{
	struct sim_hdd_params *p = calloc(1, sizeof(*p));
	char err[512];

	assert_non_null(p);
	/* 6 cylinders declared, zone 1 ends on cylinder 6. */
	assert_int_equal(load(p, 6, 0, 0, 1, "", ZONES("Number of spares = 0"), err, sizeof(err)), 0);
	assert_int_equal(p->cylinders, 7);
	assert_int_equal(p->blocks, 80 + 32);   /* not the declared 1 */
	at(p, 80 + 31, 6, 1, 7);

	/* Zone 1 listed first: its blocks come first. */
	assert_int_equal(load(p, 7, 0, 0, 1, "", ZONE(5, 6, 8, "Number of spares = 0") ", "
			      ZONE(0, 3, 10, "Number of spares = 0"), err, sizeof(err)), 0);
	at(p, 0, 5, 0, 0);
	at(p, 32, 0, 0, 0);

	/* Skew units: revolutions for the layout, sectors for zone 1. */
	assert_int_equal(load(p, 7, 0, 0, 1, "         Skew units = revolutions,\n",
			      "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 3,"
			      " Blocks per track = 10, Offset of first block = 0.25, Skew for track "
			      "switch = 0.5, Skew for cylinder switch = 0.1, Number of spares = 0 }, "
			      "dm_layout_g1_zone { First cylinder number = 5, Last cylinder number = 6,"
			      " Blocks per track = 8, Skew units = sectors, Offset of first block = 2.7,"
			      " Skew for track switch = 3.9, Skew for cylinder switch = 1, Number of "
			      "spares = 0 }", err, sizeof(err)), 0);
	assert_true(p->zone[0].first_offset == 2.5);   /* 0.25 turn of 10 sectors */
	assert_true(p->zone[0].track_skew == 5);
	assert_true(p->zone[0].cyl_skew == 1);
	assert_true(p->zone[1].first_offset == 2);     /* (int) 2.7, as DiskSim */
	assert_true(p->zone[1].track_skew == 3);
	free(p);
}

static void expect_error(unsigned mapping, unsigned sparing, unsigned range, const char *zones,
			 const char *want)
{
	struct sim_hdd_params *p = calloc(1, sizeof(*p));
	char err[512];

	assert_non_null(p);
	if (load(p, 7, mapping, sparing, range, "", zones, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted, want an error with '%s'", want);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	free(p);
}

/* What DiskSim refuses, or would map onto the same sector twice. */
static void test_layout_errors(void **state)
{
	expect_error(3, 0, 1, ZONES("Number of spares = 0"),
		     "'LBN-to-PBN mapping scheme' = 3 is outside [0, 2]");
	expect_error(0, 11, 1, ZONES("Number of spares = 0"),
		     "'Sparing scheme used' = 11 is outside [0, 10]");
	expect_error(0, 0, 1, ZONE(0, 3, 10, "Number of spares = 0") ", "
		     ZONE(3, 4, 8, "Number of spares = 0"),
		     "zones 0 (cylinders 0-3) and 1 (cylinders 3-4) overlap");
	expect_error(0, 2, 1, ZONES("Number of spares = 1, slips = [ 1, 2 ]"),
		     "zone 0: 2 slips in cylinder 0 but fewer spares");
	expect_error(0, 8, 3, ZONES("Number of spares = 4, slips = [ 70 ]"),
		     "zone 0: 1 slips in range of cylinders 1 but it has no spares");
	expect_error(0, 5, 1, ZONES("Number of spares = 2, slips = [ 21 ]"),
		     "zone 0: slip 21 lies in a spare sector");
	expect_error(0, 1, 1, ZONES("Number of spares = 1, slips = [ 1 ], defects = [ 2, 7 ]"),
		     "zone 0: 1 slipped and 1 remapped tracks but only 1 spare tracks");
	expect_error(0, 9, 1, ZONES("Number of spares = 1, slips = [ 80 ]"),
		     "zone 0: slip 80 is beyond the zone (the zone has sectors 0 to 79)");
	expect_error(0, 9, 1, ZONES("Number of spares = 1, slips = [ 4, 4 ]"),
		     "zone 0: slip 4 is listed twice");
	expect_error(0, 9, 1, ZONES("Number of spares = 1, defects = [ 4 ]"),
		     "'defects' holds 1 numbers: it lists (defective, replacement) pairs");
	expect_error(0, 9, 1, ZONES("Number of spares = 1, defects = [ 4, 99 ]"),
		     "zone 0: defect 4 -> 99: a sector beyond the zone (0 to 79)");
	expect_error(0, 3, 1, ZONES("Number of spares = 10"),
		     "zone 0: 10 spares fill every sparing unit of 10 sectors");
	expect_error(0, 0, 1, ZONES("Number of spares = 0, slips = [ -1 ]"),
		     "slips entry -1 is not a non-negative integer");
	expect_error(0, 9, 1, ZONES("Number of spares = 0, Empty space at zone front = 80"),
		     "zone 0 has no usable sector (80 sectors, 80 empty at the front, 0 spares, 0 slips)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparing_0_none),
		cmocka_unit_test(test_mapping_1_serpentine_zone),
		cmocka_unit_test(test_mapping_2_serpentine),
		cmocka_unit_test(test_sparing_1_track),
		cmocka_unit_test(test_sparing_2_per_cylinder),
		cmocka_unit_test(test_sparing_3_per_track),
		cmocka_unit_test(test_slip_timing),
		cmocka_unit_test(test_sparing_4_per_cylinder_slip_to_end),
		cmocka_unit_test(test_sparing_5_per_cylinder_front),
		cmocka_unit_test(test_sparing_6_per_cylinder_front_slip_to_end),
		cmocka_unit_test(test_sparing_7_at_end),
		cmocka_unit_test(test_sparing_8_per_range),
		cmocka_unit_test(test_sparing_9_per_zone),
		cmocka_unit_test(test_sparing_10_per_zone_slip_to_end),
		cmocka_unit_test(test_zone_table_forms),
		cmocka_unit_test(test_layout_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
