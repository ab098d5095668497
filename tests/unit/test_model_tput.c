/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the throughput model (model_tput.c, IOSIG Eq. 3) on the
 * devices of the paper's Table 2.  Expected values are computed by hand in
 * the comments (and checked with python3); bandwidths are decimal MB/s as
 * the table gives them; block size 4096 on a 4096-byte-page machine, so
 * cs = 4096 (tests that depend on it skip on other page sizes).
 *
 * Eq. 3 (writes): t = min(1/(l + ceil(ds/cs) cs/wbw + d cs/rbw), iops/(d+1)) ds
 * reads:          t = min(1/(l + ceil(ds/cs) cs/rbw), iops) ds
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "iosig.h"

#define MIB 1048576u

/* The model is a handful of IEEE operations: 1e-12 is generous and still
 * catches any wrong term (each term shifts the result by > 1e-6). */
#define TPUT_REL 1e-12

static void assert_rel(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("got %.17g, want %.17g (relative tolerance %g)", got, want, rel);
}

/* Table 2 of the paper (read bw / write bw, operation latency, seek latency,
 * max IOPS); "<10" IOPS for the HDD is taken as 10. */
static struct iosig_mount dev(double rbw, double wbw, double lat, double seek, double iops,
			      bool rotational)
{
	return (struct iosig_mount){ .seq_read_bw = rbw, .seq_write_bw = wbw, .latency = lat,
				     .seek = seek, .iops = iops, .rotational = rotational,
				     .block_size = 4096 };
}

#define RAMDISK dev(2.3e9, 2.4e9, 1e-6, 0, 800000, false)
#define NVRAM dev(1.7e9, 1.7e9, 1e-4, 0, 9000, false)
#define RAID1SSD dev(430e6, 415e6, 0.11e-3, 0, 6000, false)
#define HDD dev(130e6, 125e6, 0.150, 0.02, 10, true)
#define NFS dev(105e6, 103e6, 0.4e-3, 0, 1000, false)

/* Skips the calling test on machines whose page size is not 4096. */
static void need_4k_pages(void **state)
{
	if (sysconf(_SC_PAGESIZE) != 4096) {
		print_message("page size %ld: the hand-computed values assume 4096\n",
			      sysconf(_SC_PAGESIZE));
		skip();
	}
}

static void test_table2_writes(void **state)
{
	struct iosig_mount m;

	need_4k_pages(state);
	/* HDD, sequential 1 MiB: l = 0.15, 1048576/125e6 = 0.008388608:
	 * 1/0.158388608 = 6.3136 IO/s < 10: t = 1048576/0.158388608
	 * = 6620274.1 B/s. */
	m = HDD;
	assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE), 1048576 / 0.158388608,
		   TPUT_REL);
	/* NFS, sequential 1 MiB: 0.0004 + 1048576/103e6 = 0.010580349 s:
	 * 94.5 IO/s < 1000: t = 99105988.75 B/s. */
	m = NFS;
	assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE),
		   1048576 / (0.0004 + 1048576 / 103e6), TPUT_REL);
	/* Ramdisk, 4 KiB: 1e-6 + 4096/2.4e9 = 2.70667e-6 s: 369458 IO/s
	 * < 800000: t = 1513300492.6 B/s. */
	m = RAMDISK;
	assert_rel(iosig_throughput(&m, 4096, false, IOSIG_OP_WRITE), 1513300492.6108375,
		   TPUT_REL);
	/* RAID1 of SSDs, random 64 KiB (no seek: not rotational):
	 * 0.11e-3 + 65536/415e6 = 2.6791807e-4 s: 3732.5 IO/s < 6000:
	 * t = 244612091.45 B/s. */
	m = RAID1SSD;
	assert_rel(iosig_throughput(&m, 65536, true, IOSIG_OP_WRITE), 244612091.45036247,
		   TPUT_REL);
}

static void test_iops_limit_and_rmw(void **state)
{
	struct iosig_mount m;

	need_4k_pages(state);
	/* NVRAM, 4096 B (aligned, d = 0): 1e-4 + 4096/1.7e9 = 1.02409e-4 s
	 * would allow 9764.7 IO/s; the device's 9000 IOPS bind:
	 * t = 9000 x 4096 = 36864000 B/s exactly. */
	m = NVRAM;
	assert_rel(iosig_throughput(&m, 4096, false, IOSIG_OP_WRITE), 36864000, TPUT_REL);
	/* 4095 B (d = 1): one extra 4096-byte read per write:
	 * 1e-4 + 2 x 4096/1.7e9 = 1.04819e-4 s (9540 IO/s), but at most
	 * 9000/2 = 4500 writes/s: t = 4500 x 4095 = 18427500 B/s. */
	assert_rel(iosig_throughput(&m, 4095, false, IOSIG_OP_WRITE), 18427500, TPUT_REL);
	/* Reads have no read-modify-write: 4095 B reads one chunk in
	 * 1e-4 + 4096/1.7e9 s (9764.7/s), capped at the full 9000 IOPS. */
	assert_rel(iosig_throughput(&m, 4095, false, IOSIG_OP_READ), 9000.0 * 4095, TPUT_REL);

	/* HDD, 512 B: 0.15 + 4096/125e6 + 4096/130e6 = 0.1500643 s (6.66/s),
	 * but 10/2 = 5 writes/s: t = 5 x 512 = 2560 B/s.  Aligned 4096 B:
	 * 0.15 + 4096/125e6 = 0.15003277 s: 6.665 IO/s < 10: 27300.70 B/s. */
	m = HDD;
	assert_rel(iosig_throughput(&m, 512, false, IOSIG_OP_WRITE), 2560, TPUT_REL);
	assert_rel(iosig_throughput(&m, 4096, false, IOSIG_OP_WRITE), 4096 / (0.15 + 4096 / 125e6),
		   TPUT_REL);

	/* NFS, 6000 B: two chunks (8192 B).  Read: 0.0004 + 8192/105e6 s
	 * (2094/s) capped at 1000 IOPS: 6e6 B/s.  Write: d = 1, capped at
	 * 1000/2: 3e6 B/s. */
	m = NFS;
	assert_rel(iosig_throughput(&m, 6000, false, IOSIG_OP_READ), 6e6, TPUT_REL);
	assert_rel(iosig_throughput(&m, 6000, false, IOSIG_OP_WRITE), 3e6, TPUT_REL);
	/* Without the IOPS limit (iops = 0 means unlimited) the write is
	 * bandwidth and latency bound: 0.0004 + 8192/103e6 + 4096/105e6 s. */
	m.iops = 0;
	assert_rel(iosig_throughput(&m, 6000, false, IOSIG_OP_WRITE),
		   6000 / (0.0004 + 8192 / 103e6 + 4096 / 105e6), TPUT_REL);
}

static void test_reads(void **state)
{
	struct iosig_mount m = HDD;

	need_4k_pages(state);
	/* HDD, sequential read of 1 MiB: 0.15 + 1048576/130e6 s:
	 * t = 6633787.18 B/s (reads use rbw). */
	assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_READ), 6633787.178245344, TPUT_REL);
	/* Random read adds the seek: 0.17 + 1048576/130e6. */
	assert_rel(iosig_throughput(&m, MIB, true, IOSIG_OP_READ),
		   1048576 / (0.17 + 1048576 / 130e6), TPUT_REL);
}

static void test_random_and_seek(void **state)
{
	struct iosig_mount m = HDD;

	need_4k_pages(state);
	/* Random 1 MiB on the rotational HDD: l = 0.15 + 0.02 = 0.17:
	 * 1048576 / (0.17 + 0.008388608) = 5878043.51 B/s. */
	assert_rel(iosig_throughput(&m, MIB, true, IOSIG_OP_WRITE), 5878043.512733728, TPUT_REL);
	assert_true(iosig_throughput(&m, MIB, true, IOSIG_OP_WRITE) <
		    iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE));
	/* Measured random bandwidths replace the sequential ones when set:
	 * 50 MB/s write, 60 MB/s read: 1048576 / (0.17 + 1048576/50e6). */
	m.rand_write_bw = 50e6;
	m.rand_read_bw = 60e6;
	assert_rel(iosig_throughput(&m, MIB, true, IOSIG_OP_WRITE), 5490745.426333727, TPUT_REL);
	/* ... and only for random access, for reads and for the read of a
	 * partial chunk's read-modify-write as well. */
	assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE), 1048576 / 0.158388608,
		   TPUT_REL);
	{
		struct iosig_mount seq = HDD;

		assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_READ),
			   iosig_throughput(&seq, MIB, false, IOSIG_OP_READ), TPUT_REL);
		assert_rel(iosig_throughput(&m, MIB + 1, false, IOSIG_OP_WRITE),
			   iosig_throughput(&seq, MIB + 1, false, IOSIG_OP_WRITE), TPUT_REL);
		assert_true(iosig_throughput(&m, MIB, true, IOSIG_OP_READ) !=
			    iosig_throughput(&seq, MIB, true, IOSIG_OP_READ));
	}
	/* Seek only on rotational devices: the same numbers on an SSD-like
	 * device with a (meaningless) seek value give no penalty. */
	m = RAID1SSD;
	m.seek = 0.02;
	assert_rel(iosig_throughput(&m, 65536, true, IOSIG_OP_WRITE), 244612091.45036247,
		   TPUT_REL);
}

/* Write throughput of the HDD minus that of the NFS at ds bytes. */
static double hdd_minus_nfs(uint64_t ds)
{
	struct iosig_mount hdd = HDD, nfs = NFS;

	return iosig_throughput(&hdd, ds, false, IOSIG_OP_WRITE) -
	       iosig_throughput(&nfs, ds, false, IOSIG_OP_WRITE);
}

static void test_hdd_nfs_crossover(void **state)
{
	uint64_t lo = 4096, hi = 1024ull * MIB;

	need_4k_pages(state);
	/* Sect. 7.1 / Fig. 6a: the NFS is faster below ~100 MB per I/O, the
	 * HDD above.  Both are latency+bandwidth bound there (below their IOPS
	 * limits), so they cross where 0.15 + ds/125e6 = 0.0004 + ds/103e6:
	 * ds = 0.1496 / (1/103e6 - 1/125e6) = 87550000 B (83.5 MiB). */
	assert_true(hdd_minus_nfs(MIB) < 0);
	assert_true(hdd_minus_nfs(64 * MIB) < 0);
	assert_true(hdd_minus_nfs(128 * MIB) > 0);
	assert_true(hdd_minus_nfs(1024ull * MIB) > 0);
	/* Bisection over 4 KiB multiples finds the crossover within a block. */
	while (hi - lo > 4096) {
		uint64_t mid = (lo + hi) / 2 / 4096 * 4096;

		if (hdd_minus_nfs(mid) < 0)
			lo = mid;
		else
			hi = mid;
	}
	assert_true(lo <= 87550000 && 87550000 <= hi);
}

static void test_block_size(void **state)
{
	struct iosig_mount m = NFS;

	need_4k_pages(state);
	/* Fig. 6c: the NFS's internal 22 KiB block.  cs = max(4096, 22528):
	 * 22528 B is one chunk, 0.0004 + 22528/103e6 = 6.187e-4 s: 1616/s,
	 * capped at 1000: 22528000 B/s.  One byte more: 2 chunks + RMW,
	 * capped at 1000/2: 500 x 22529 = 11264500 B/s. */
	m.block_size = 22528;
	assert_rel(iosig_throughput(&m, 22528, false, IOSIG_OP_WRITE), 22528000, TPUT_REL);
	assert_rel(iosig_throughput(&m, 22529, false, IOSIG_OP_WRITE), 11264500, TPUT_REL);
	/* Block sizes below the page size do not shrink cs: a 512-byte block
	 * device still moves pages. */
	m = NVRAM;
	m.block_size = 512;
	assert_rel(iosig_throughput(&m, 4095, false, IOSIG_OP_WRITE), 18427500, TPUT_REL);
	m.block_size = 0; /* unknown: the page size */
	assert_rel(iosig_throughput(&m, 4096, false, IOSIG_OP_WRITE), 36864000, TPUT_REL);
}

static void test_degenerate(void **state)
{
	struct iosig_mount m = HDD;

	assert_true(iosig_throughput(NULL, MIB, false, IOSIG_OP_WRITE) == 0);
	assert_true(iosig_throughput(&m, 0, false, IOSIG_OP_WRITE) == 0);
	assert_true(iosig_throughput(&m, 0, true, IOSIG_OP_READ) == 0);
	/* No write bandwidth: cannot write. */
	m.seq_write_bw = 0;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	/* Negative, NaN bandwidths: 0, never NaN. */
	m.seq_write_bw = -5;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	m.seq_write_bw = NAN;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	/* No read bandwidth: aligned writes need none, partial ones do (RMW),
	 * reads do. */
	m = HDD;
	m.seq_read_bw = 0;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) > 0);
	assert_true(iosig_throughput(&m, MIB + 1, false, IOSIG_OP_WRITE) == 0);
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_READ) == 0);
	/* Nonsense latency, seek or IOPS: 0. */
	m = HDD;
	m.latency = -1;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	m.latency = NAN;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_READ) == 0);
	m = HDD;
	m.seek = NAN;
	assert_true(iosig_throughput(&m, MIB, true, IOSIG_OP_WRITE) == 0);
	m = HDD;
	m.iops = -3;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	m.iops = NAN;
	assert_true(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE) == 0);
	/* An ideal device (no latency, infinite bandwidth, no IOPS limit):
	 * +inf, not NaN; with an IOPS limit, iops x ds. */
	m = (struct iosig_mount){ .seq_read_bw = INFINITY, .seq_write_bw = INFINITY };
	assert_true(isinf(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE)));
	assert_true(isinf(iosig_throughput(&m, MIB + 1, true, IOSIG_OP_READ)));
	m.iops = 1000;
	assert_rel(iosig_throughput(&m, MIB, false, IOSIG_OP_WRITE), 1000.0 * MIB, TPUT_REL);
	assert_rel(iosig_throughput(&m, MIB + 1, false, IOSIG_OP_WRITE), 500.0 * (MIB + 1),
		   TPUT_REL);
	/* The largest ds: finite and positive. */
	m = HDD;
	assert_true(iosig_throughput(&m, UINT64_MAX, false, IOSIG_OP_WRITE) > 0);
	assert_true(isfinite(iosig_throughput(&m, UINT64_MAX, false, IOSIG_OP_WRITE)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table2_writes),
		cmocka_unit_test(test_iops_limit_and_rmw),
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_random_and_seek),
		cmocka_unit_test(test_hdd_nfs_crossover),
		cmocka_unit_test(test_block_size),
		cmocka_unit_test(test_degenerate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
