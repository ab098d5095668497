/* SPDX-License-Identifier: MIT */
/*
 * bench_select.c - cost of a selection on a built catalog, and of a whole
 * `iosig explain` process.  Prints JSON.
 *
 * Targets (issue 2): selection <= 2 us per signature; `iosig explain` < 50 ms.
 * Figures are medians of repeated batches, measured side by side in one run.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"
#include "iosig.h"
#include "json.h"

extern char **environ;

#define BATCHES 31

/* What select_once() selects with. */
static struct {
	const struct iosig_catalog *cat;
	const struct iosig_sig *sig;
	const char *path;
} sel;

static double select_once(unsigned i)
{
	struct iosig_choice ch;

	if (iosig_select(sel.cat, sel.sig, sel.path, NULL, &ch) < 0)
		abort();
	return ch.throughput;
}

/* Median ns per iosig_select over BATCHES batches of `iters` calls. */
static double time_select(const struct iosig_catalog *cat, const struct iosig_sig *sig,
			  const char *path, unsigned iters)
{
	sel.cat = cat;
	sel.sig = sig;
	sel.path = path;
	return bench_ns_per_call(select_once, BATCHES, iters);
}

/* Median wall time in ms of running `iosig explain ...` to /dev/null. */
static double time_explain(char *const argv[], unsigned runs)
{
	double samples[64];
	posix_spawn_file_actions_t fa;

	if (runs > 64)
		runs = 64;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (unsigned r = 0; r < runs; r++) {
		double t0 = bench_now();
		pid_t pid;
		int status;

		if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
			return -1;
		waitpid(pid, &status, 0);
		samples[r] = (bench_now() - t0) * 1e3;
	}
	posix_spawn_file_actions_destroy(&fa);
	return bench_median(samples, runs);
}

static const char *const sigs[] = {
	"persist sequential_access size_per_io(16*MiB) totalsize(6*GiB)",
	"random size_per_io(512*KiB) totalsize(1*GiB) min_mttdl(20*y)",
	"global persist sequential size_per_io(1*MiB) availability(1*ppm)",
	"tmp random size_per_io(4*KiB)",
};

int main(void)
{
	struct iosig_catalog_opts t2 = { .config = IOSIG_TEST_DATA "/table2.yaml",
					 .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct iosig_catalog_opts real = { .config = "" };
	struct iosig_catalog *cats[2] = { NULL, NULL };
	const char *names[2] = { "table2", "this-machine" };
	struct iosig_error err;
	struct json_writer w;

	if (iosig_catalog_new(&t2, &cats[0], &err) < 0 || iosig_catalog_new(&real, &cats[1], &err) < 0) {
		fprintf(stderr, "bench_select: catalog: %s:%d: %s\n", err.file, err.line, err.msg);
		return 1;
	}
	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "select");
	json_arr_begin(&w, "select");
	for (unsigned c = 0; c < 2; c++) {
		for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++) {
			struct iosig_sig sig;

			if (iosig_sig_parse(sigs[s], NULL, NULL, 0, &sig, &err) < 0) {
				fprintf(stderr, "bench_select: %s: %s\n", sigs[s], err.msg);
				return 1;
			}
			json_obj_begin(&w, NULL);
			json_str(&w, "catalog", names[c]);
			json_uint(&w, "mounts", iosig_catalog_size(cats[c]));
			json_str(&w, "signature", sigs[s]);
			json_num(&w, "ns_per_select", time_select(cats[c], &sig, NULL, 2000));
			json_num(&w, "ns_per_select_with_path",
				 time_select(cats[c], &sig, "/tmp/iosig-bench.out", 2000));
			json_obj_end(&w);
		}
	}
	json_arr_end(&w);
	{
		char *argv_t2[] = { (char *)IOSIG_TOOL, "explain", "--no-discovery", "--config",
				    (char *)IOSIG_TEST_DATA "/table2.yaml", (char *)sigs[0], NULL };
		char *argv_real[] = { (char *)IOSIG_TOOL, "explain", "--config", "",
				      (char *)sigs[1], NULL };

		json_num(&w, "explain_ms_table2", time_explain(argv_t2, 21));
		json_num(&w, "explain_ms_this_machine", time_explain(argv_real, 21));
	}
	json_num(&w, "target_ns_per_select", 2000);
	json_num(&w, "target_explain_ms", 50);
	json_obj_end(&w);
	iosig_catalog_free(cats[0]);
	iosig_catalog_free(cats[1]);
	return json_finish(&w) ? 1 : 0;
}
