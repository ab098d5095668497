/* SPDX-License-Identifier: MIT */
/*
 * bench_catalog.c - how long building the catalog and finding a path's
 * mount take.  Prints one JSON object.
 *
 * The mount table is generated: 50 candidate mounts whose mount points are
 * real directories (so stat, statfs, sysfs and the data-directory checks
 * all run for real) - 24 on the block device of / (one device: sysfs is read
 * once), 16 tmpfs, 10 nfs4 - plus 6 pseudo filesystems that must cost
 * nothing.  No configuration, no probe cache: discovery alone.
 *
 * Usage: bench_catalog [ROUNDS]   (default 200)
 * Budget (brief): build <= 5 ms for 50 mounts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bench.h"
#include "catalog_internal.h"

#define NMOUNTS 50

static char base[] = "/tmp/iosig-bench-cat-XXXXXX";

/* CPU time of this process (user + system): on a shared machine the wall
 * clock's tail is other processes' time slices. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_table(const char *file)
{
	static const char *const pseudo[] = { "proc", "sysfs", "cgroup2", "devpts", "mqueue",
					      "debugfs" };
	struct stat root;
	FILE *fp;
	int id = 100;

	if (stat("/", &root) < 0)
		return -errno;
	fp = fopen(file, "w");
	if (!fp)
		return -errno;
	fprintf(fp, "%d 1 %u:%u / / rw,relatime - ext4 /dev/root rw\n", id++, major(root.st_dev),
		minor(root.st_dev));
	for (int i = 0; i < NMOUNTS; i++) {
		char dir[300];

		snprintf(dir, sizeof(dir), "%s/m%02d", base, i);
		if (mkdir(dir, 0755) < 0) {
			fclose(fp);
			return -errno;
		}
		if (i < 24)
			fprintf(fp, "%d 100 %u:%u /sub%d %s rw,relatime - ext4 /dev/root rw\n", id++,
				major(root.st_dev), minor(root.st_dev), i, dir);
		else if (i < 40)
			fprintf(fp, "%d 100 0:%d / %s rw,relatime - tmpfs tmpfs%d rw,size=1g\n", id++,
				200 + i, dir, i);
		else
			fprintf(fp, "%d 100 0:%d / %s rw,relatime - nfs4 server:/export%d rw\n", id++,
				200 + i, dir, i);
	}
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		fprintf(fp, "%d 100 0:%zu / %s/p%zu rw - %s %s rw\n", id++, 300 + i, base, i,
			pseudo[i], pseudo[i]);
	return fclose(fp) == 0 ? 0 : -errno;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 200;
	struct iosig_catalog_opts opts = { .config = "", .probe_cache = "" };
	double *t_build, *t_cpu, *t_find, *t_find_new;
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;
	char table[300], cmd[400];
	size_t n = 0, eligible = 0;
	int r;

	if (rounds < 1)
		rounds = 1;
	if (!mkdtemp(base)) {
		fprintf(stderr, "bench_catalog: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(table, sizeof(table), "%s/mountinfo", base);
	r = write_table(table);
	if (r < 0) {
		fprintf(stderr, "bench_catalog: %s\n", strerror(-r));
		return 1;
	}
	opts.mountinfo = table;
	t_build = calloc(rounds, sizeof(double));
	t_cpu = calloc(rounds, sizeof(double));
	t_find = calloc(rounds, sizeof(double));
	t_find_new = calloc(rounds, sizeof(double));
	if (!t_build || !t_cpu || !t_find || !t_find_new)
		return 1;
	for (unsigned k = 0; k < rounds; k++) {
		double t0 = bench_now(), c0 = cpu_now();

		if (iosig_catalog_new(&opts, &cat, &err) < 0) {
			fprintf(stderr, "bench_catalog: %s: %s\n", err.file, err.msg);
			return 1;
		}
		t_build[k] = (bench_now() - t0) * 1e3;
		t_cpu[k] = (cpu_now() - c0) * 1e3;
		n = iosig_catalog_size(cat);
		/* iosig_catalog_find() of an existing directory and of a file
		 * that does not exist yet (what an open(O_CREAT) asks). */
		{
			enum { REPS = 200 };
			char p1[300], p2[300];
			const struct iosig_mount *m1 = NULL, *m2 = NULL;

			snprintf(p1, sizeof(p1), "%s/m%02u", base, k % NMOUNTS);
			snprintf(p2, sizeof(p2), "%s/m%02u/out/new-file.dat", base, k % NMOUNTS);
			t0 = bench_now();
			for (int i = 0; i < REPS; i++)
				m1 = iosig_catalog_find(cat, p1);
			t_find[k] = (bench_now() - t0) * 1e9 / REPS;
			t0 = bench_now();
			for (int i = 0; i < REPS; i++)
				m2 = iosig_catalog_find(cat, p2);
			t_find_new[k] = (bench_now() - t0) * 1e9 / REPS;
			if (!m1 || m1 != m2 || strcmp(m1->path, p1)) {
				fprintf(stderr, "bench_catalog: find(%s) gave %s\n", p2,
					m2 ? m2->path : "nothing");
				return 1;
			}
		}
		if (k + 1 < rounds)
			iosig_catalog_free(cat);
	}
	for (size_t i = 0; i < n; i++)
		eligible += !iosig_catalog_mount(cat, i)->ineligible;
	iosig_catalog_free(cat);
	{
		/* bench_median() sorts: percentiles are read after it. */
		double build_med = bench_median(t_build, rounds);
		double build_p90 = t_build[(rounds * 9) / 10];
		double cpu_med = bench_median(t_cpu, rounds);
		double cpu_p90 = t_cpu[(rounds * 9) / 10];

		printf("{\"bench\": \"catalog\", \"rounds\": %u, \"mounts_in_table\": %d, "
		       "\"catalog_mounts\": %zu, \"eligible\": %zu, "
		       "\"build_ms_median\": %.3f, \"build_ms_p90\": %.3f, \"build_ms_min\": %.3f, "
		       "\"build_cpu_ms_median\": %.3f, \"build_cpu_ms_p90\": %.3f, "
		       "\"build_budget_ms\": 5, \"within_budget\": %s, "
		       "\"find_existing_ns_median\": %.0f, \"find_new_file_ns_median\": %.0f}\n",
		       rounds, NMOUNTS + 7, n, eligible, build_med, build_p90, t_build[0], cpu_med,
		       cpu_p90, build_med <= 5 ? "true" : "false", bench_median(t_find, rounds),
		       bench_median(t_find_new, rounds));
	}
	free(t_build);
	free(t_cpu);
	free(t_find);
	free(t_find_new);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : 1;
}
