/* SPDX-License-Identifier: MIT */
/*
 * bench_sim.c - iosig-sim's speed: simulated requests per second of wall
 * time for a policy, a device model and a generated workload (median of 3
 * runs, one core), and the raw HDD model on the DiskSim validation replay.
 * Prints JSON.  Targets: >= 1 M requests/s with noop, >= 300 k/s with
 * bid-hdd on an HDD.
 *
 * Usage: bench_sim [requests]   (default 1000000 per run)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dev.h"
#include "engine.h"
#include "gen.h"
#include "hdd.h"
#include "json.h"

#define REPEAT 3

/* Runs one configuration REPEAT times; returns the median seconds, or a
 * negative value if the policy or device is unavailable. */
static double run(const char *policy, const char *devspec, const char *workload, uint64_t *ret_n,
		  char *err, size_t errlen)
{
	double t[REPEAT];

	for (int i = 0; i < REPEAT; i++) {
		struct sim_dev *dev = NULL;
		struct sim_source *src = NULL;
		struct sim_engine *e = NULL;
		double t0;
		int r;

		if ((r = sim_dev_create(devspec, 0, &dev, err, errlen)) < 0)
			return -1;
		if ((r = sim_gen_create(workload, 1, dev->info.capacity, &src, err, errlen)) < 0) {
			sim_dev_destroy(dev);
			return -1;
		}
		{
			struct sim_config cfg = { .policy = policy, .devs = &dev, .ndev = 1, .src = src,
						  .trace_dev = -1 };

			r = sim_engine_create(&cfg, &e, err, errlen);
		}
		if (r == 0) {
			t0 = bench_now();
			r = sim_engine_run(e, err, errlen);
			t[i] = bench_now() - t0;
			*ret_n = sim_engine_metrics(e)->completed;
		}
		sim_engine_destroy(e);
		sim_source_destroy(src);
		sim_dev_destroy(dev);
		if (r < 0)
			return -1;
	}
	return bench_median(t, REPEAT);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *policy, *device, *workload;
	} cases[] = {
		{ "noop", "ram", "mapreduce" },
		{ "noop", "hdd:generic", "mapreduce" },
		{ "noop", "ssd", "pangu" },
		{ "bid-hdd", "hdd:generic", "mapreduce" },
		{ "bid-hybrid", "hdd:generic", "mapreduce" },
	};
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct json_writer w;

	if (!n)
		n = 1000000;
	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "sim");
	json_uint(&w, "requests_per_run", n);
	json_uint(&w, "repeats", REPEAT);
	json_arr_begin(&w, "runs");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char workload[128], err[512];
		uint64_t done = 0;
		double s;

		snprintf(workload, sizeof(workload), "%s:requests=%llu", cases[i].workload, n);
		s = run(cases[i].policy, cases[i].device, workload, &done, err, sizeof(err));
		json_obj_begin(&w, NULL);
		json_str(&w, "policy", cases[i].policy);
		json_str(&w, "device", cases[i].device);
		json_str(&w, "workload", workload);
		if (s < 0) {
			json_str(&w, "unavailable", err);
		} else {
			json_uint(&w, "requests", done);
			json_num(&w, "seconds_median", s);
			json_num(&w, "requests_per_s", (double)done / s);
		}
		json_obj_end(&w);
	}
	json_arr_end(&w);

	/* The HDD model alone: random 4 KiB reads and writes on the generic drive. */
	{
		struct sim_hdd_params p;
		struct sim_hdd *h;
		char err[256];
		double t0, s[REPEAT];
		uint64_t x = 1;

		sim_hdd_params_generic(&p, 0);
		sim_hdd_params_finish(&p, err, sizeof(err));
		for (int r = 0; r < REPEAT; r++) {
			uint64_t t = 0;

			h = sim_hdd_create(&p);
			t0 = bench_now();
			for (unsigned long long i = 0; i < n; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				t = sim_hdd_serve(h, (x >> 63) ? 1 : 0, (x >> 20) % (p.blocks - 8), 8, t);
			}
			s[r] = bench_now() - t0;
			sim_hdd_destroy(h);
		}
		json_obj_begin(&w, "hdd_model");
		json_str(&w, "what", "sim_hdd_serve, random 4 KiB reads/writes, hdd:generic");
		json_num(&w, "calls_per_s", (double)n / bench_median(s, REPEAT));
		json_obj_end(&w);
	}
	json_obj_end(&w);
	return json_finish(&w) < 0 ? 1 : 0;
}
