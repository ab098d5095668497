/* SPDX-License-Identifier: MIT */
/*
 * bench_models.c - cost of the model functions that selection evaluates per
 * mount (iosig_uber, iosig_mttdl, iosig_mount_mttdl, iosig_p_loss,
 * iosig_throughput) in ns per call, and of the Monte Carlo estimator in ms
 * per 100k lifetimes.  Prints one JSON object.
 *
 * Each figure is the median over BATCHES batches of the per-call time of a
 * batch, so a noisy shared machine inflates few of them.  Inputs rotate
 * through a small table so the compiler cannot hoist the call out of the
 * loop; results are summed into a volatile sink.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "iosig.h"
#include "json.h"

#define BATCHES 31
#define CALLS 20000
#define MC_TRIALS 100000
#define MC_RUNS 5

#define YEAR (365.0 * 86400)
#define DAY 86400.0

static volatile double sink;

struct bench_case {
	const char *name;                   /* JSON key */
	double (*call)(unsigned i);         /* one call, on input i */
};

static const struct iosig_layout layouts[] = {
	{ .kind = IOSIG_LAYOUT_RAID1, .disks = 2 },
	{ .kind = IOSIG_LAYOUT_RAID5, .disks = 5 },
	{ .kind = IOSIG_LAYOUT_RAID6, .disks = 8 },
	{ .kind = IOSIG_LAYOUT_RAID10, .disks = 8 },
};

static const double sizes[] = { 1e6, 1073741824.0, 1099511627776.0, 5e9 };

static double call_uber_paper(unsigned i)
{
	return iosig_uber(1e-6 * (1 + (i & 3) * 1e-9), 512, 2);
}

static double call_uber_4096(unsigned i)
{
	return iosig_uber(1e-6 * (1 + (i & 3) * 1e-9), 4096, 8);
}

static double call_mttdl(unsigned i)
{
	return iosig_mttdl(&layouts[i & 3], 10 * YEAR, DAY, 4.36e-14, sizes[(i >> 2) & 3]);
}

static double call_mttdl_erasure_large(unsigned i)
{
	static const struct iosig_layout ec = { .kind = IOSIG_LAYOUT_ERASURE, .disks = 200,
						.tolerated = 40 };

	return iosig_mttdl(&ec, 10 * YEAR, DAY, 4.36e-14, sizes[i & 3]);
}

static struct iosig_mount mounts[4];

static void mounts_init(void)
{
	/* The paper's Table 2: HDD, NFS, RAID1 of SSDs, NVRAM. */
	static const double rbw[] = { 130e6, 105e6, 430e6, 1.7e9 };
	static const double wbw[] = { 125e6, 103e6, 415e6, 1.7e9 };
	static const double lat[] = { 0.15, 0.4e-3, 0.11e-3, 0.1e-3 };
	static const double iops[] = { 10, 1000, 6000, 9000 };

	for (unsigned i = 0; i < 4; i++) {
		mounts[i] = (struct iosig_mount){
			.seq_read_bw = rbw[i], .seq_write_bw = wbw[i], .latency = lat[i],
			.seek = i == 0 ? 0.02 : 0, .rotational = i == 0, .iops = iops[i],
			.block_size = 4096, .mttf = 10 * YEAR, .mttr = DAY, .ber = 1e-6,
			.ecc = 2, .sector_bits = 512, .layout = layouts[i],
		};
	}
}

static double call_mount_mttdl(unsigned i)
{
	return iosig_mount_mttdl(&mounts[i & 3], sizes[(i >> 2) & 3]);
}

static double call_p_loss(unsigned i)
{
	return iosig_p_loss(1e9 * (1 + (i & 7)), DAY);
}

static double call_tput_write(unsigned i)
{
	static const uint64_t ds[] = { 4096, 4095, 1048576, 67108864 };

	return iosig_throughput(&mounts[i & 3], ds[(i >> 2) & 3], i & 16, IOSIG_OP_WRITE);
}

static double call_tput_read(unsigned i)
{
	static const uint64_t ds[] = { 4096, 4095, 1048576, 67108864 };

	return iosig_throughput(&mounts[i & 3], ds[(i >> 2) & 3], i & 16, IOSIG_OP_READ);
}

/* Milliseconds for MC_TRIALS lifetimes (median of MC_RUNS runs). */
static double mc_ms(const struct iosig_layout *l, double size)
{
	double samples[MC_RUNS];

	for (unsigned r = 0; r < MC_RUNS; r++) {
		struct iosig_mc_result res;
		double t0 = bench_now();

		if (iosig_mttdl_simulate(l, 10 * YEAR, DAY, 4.36e-14, size, MC_TRIALS, r + 1, &res))
			return NAN;
		samples[r] = (bench_now() - t0) * 1e3;
		sink += res.mean;
	}
	return bench_median(samples, MC_RUNS);
}

int main(void)
{
	static const struct bench_case cases[] = {
		{ "uber_ber1e-6_n512_e2", call_uber_paper },
		{ "uber_ber1e-6_n4096_e8", call_uber_4096 },
		{ "mttdl_raid1_5_6_10", call_mttdl },
		{ "mttdl_erasure_160+40", call_mttdl_erasure_large },
		{ "mount_mttdl_with_uber", call_mount_mttdl },
		{ "p_loss", call_p_loss },
		{ "throughput_write", call_tput_write },
		{ "throughput_read", call_tput_read },
	};
	static const struct {
		const char *name;
		struct iosig_layout layout;
		double size;
	} mc[] = {
		{ "raid1_2disks_1GiB", { .kind = IOSIG_LAYOUT_RAID1, .disks = 2 }, 1073741824.0 },
		{ "raid5_5disks_1GiB", { .kind = IOSIG_LAYOUT_RAID5, .disks = 5 }, 1073741824.0 },
		{ "raid5_5disks_1TiB", { .kind = IOSIG_LAYOUT_RAID5, .disks = 5 }, 1099511627776.0 },
		{ "raid6_8disks_1GiB", { .kind = IOSIG_LAYOUT_RAID6, .disks = 8 }, 1073741824.0 },
		{ "raid10_8disks_1GiB", { .kind = IOSIG_LAYOUT_RAID10, .disks = 8 }, 1073741824.0 },
		{ "erasure_6+3_1GiB", { .kind = IOSIG_LAYOUT_ERASURE, .disks = 9, .tolerated = 3 },
		  1073741824.0 },
	};
	struct json_writer w;

	mounts_init();
	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "models");
	json_obj_begin(&w, "ns_per_call");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		json_num(&w, cases[i].name,
			 round(bench_ns_per_call(cases[i].call, BATCHES, CALLS) * 10) / 10);
	json_obj_end(&w);
	json_int(&w, "mc_trials", MC_TRIALS);
	json_obj_begin(&w, "mc_ms_per_run");
	for (size_t i = 0; i < sizeof(mc) / sizeof(mc[0]); i++)
		json_num(&w, mc[i].name, round(mc_ms(&mc[i].layout, mc[i].size) * 100) / 100);
	json_obj_end(&w);
	json_obj_end(&w);
	return json_finish(&w) ? 1 : 0;
}
