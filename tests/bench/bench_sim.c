/* SPDX-License-Identifier: MIT */
/*
 * bench_sim.c - iosig-sim's speed: simulated requests per second of wall
 * time for a policy, a device model and a generated workload (median of 3
 * runs, one core), and the raw HDD model on the DiskSim validation replay.
 * Prints JSON.  Targets: >= 1 M requests/s with noop, >= 300 k/s with
 * bid-hdd on an HDD.  "Per core" figures divide by the thread's CPU time
 * (the build machine is shared, so wall time also counts waiting for a
 * CPU); wall-clock figures are printed next to them.
 *
 * Usage: bench_sim [requests]   (default 1000000 per run)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "dev.h"
#include "engine.h"
#include "gen.h"
#include "hdd.h"
#include "json.h"

#define REPEAT 3

/* CPU time of this thread in seconds. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one configuration REPEAT times; returns the median CPU seconds (and
 * the median wall seconds in *ret_wall), or a negative value if the policy
 * or device is unavailable. */
static double run(const char *policy, const char *devspec, const char *workload, uint64_t *ret_n,
		  double *ret_wall, char *err, size_t errlen)
{
	double t[REPEAT], wall[REPEAT];

	for (int i = 0; i < REPEAT; i++) {
		struct sim_dev *devs[4] = { 0 };
		struct sim_source *src = NULL;
		struct sim_engine *e = NULL;
		char specs[256], *save = NULL;
		unsigned ndev = 0;
		double t0, w0;
		int r = 0;

		/* "hdd:generic+ssd": several devices, the first is the home. */
		snprintf(specs, sizeof(specs), "%s", devspec);
		for (char *sp = strtok_r(specs, "+", &save); sp && ndev < 4 && r == 0;
		     sp = strtok_r(NULL, "+", &save))
			r = sim_dev_create(sp, ndev, &devs[ndev], err, errlen), ndev += r == 0;
		if (r == 0)
			r = sim_gen_create(workload, 1, devs[0]->info.capacity, &src, err, errlen);
		if (r == 0) {
			struct sim_config cfg = { .policy = policy, .devs = devs, .ndev = ndev,
						  .src = src, .trace_dev = -1 };

			r = sim_engine_create(&cfg, &e, err, errlen);
		}
		if (r == 0) {
			w0 = bench_now();
			t0 = cpu_now();
			r = sim_engine_run(e, err, errlen);
			t[i] = cpu_now() - t0;
			wall[i] = bench_now() - w0;
			*ret_n = sim_engine_metrics(e)->completed;
		}
		sim_engine_destroy(e);
		sim_source_destroy(src);
		for (unsigned d = 0; d < ndev; d++)
			sim_dev_destroy(devs[d]);
		if (r < 0)
			return -1;
	}
	*ret_wall = bench_median(wall, REPEAT);
	return bench_median(t, REPEAT);
}

/* run() in a child process, so that a policy that crashes is reported as
 * such instead of ending the benchmark. */
static double run_isolated(const char *policy, const char *devspec, const char *workload,
			   uint64_t *ret_n, double *ret_wall, char *err, size_t errlen)
{
	struct { double s, wall; uint64_t n; char err[256]; } res = { .s = -1 };
	int fd[2], status;
	pid_t pid;

	fflush(stdout);
	if (pipe(fd) < 0 || (pid = fork()) < 0) {
		snprintf(err, errlen, "cannot fork");
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		res.s = run(policy, devspec, workload, &res.n, &res.wall, res.err, sizeof(res.err));
		if (write(fd[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		res.s = -1;
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "crashed with signal %d", WTERMSIG(status));
		return -1;
	}
	if (res.s < 0) {
		snprintf(err, errlen, "%s", res.err);
		return -1;
	}
	*ret_n = res.n;
	*ret_wall = res.wall;
	return res.s;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *policy, *device, *workload;
	} cases[] = {
		{ "noop", "ram", "mapreduce" },
		{ "noop", "hdd:generic", "mapreduce" },
		{ "noop", "ssd", "pangu" },
		{ "deadline", "hdd:generic", "mapreduce" },
		{ "cfq", "hdd:generic", "mapreduce" },
		{ "bfq", "hdd:generic", "mapreduce" },
		{ "bid-hdd", "hdd:generic", "mapreduce" },
		{ "bid-hybrid", "hdd:generic+ssd", "mapreduce" },
		{ "burst", "hdd:generic", "vms" },
		{ "mios-d", "ssd+hdd:generic,bcw=on", "pangu" },
		{ "mios-e", "ssd+hdd:generic,bcw=on", "pangu" },
		{ "nvcache", "hdd:generic+ram", "mapreduce" },
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
		double s, wall = 0;

		snprintf(workload, sizeof(workload), "%s:requests=%llu", cases[i].workload, n);
		s = run_isolated(cases[i].policy, cases[i].device, workload, &done, &wall, err,
				 sizeof(err));
		json_obj_begin(&w, NULL);
		json_str(&w, "policy", cases[i].policy);
		json_str(&w, "device", cases[i].device);
		json_str(&w, "workload", workload);
		if (s < 0) {
			json_str(&w, "unavailable", err);
		} else {
			json_uint(&w, "requests", done);
			json_num(&w, "cpu_seconds_median", s);
			json_num(&w, "requests_per_cpu_s", (double)done / s);
			json_num(&w, "wall_seconds_median", wall);
			json_num(&w, "requests_per_wall_s", (double)done / wall);
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
