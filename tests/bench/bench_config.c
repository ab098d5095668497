/* SPDX-License-Identifier: MIT */
/*
 * bench_config.c - how the time to load a configuration grows with its
 * number of `mounts:` entries (issue 10, item 6: a repeated-entry check that
 * compared every entry with every earlier one made 430 000 entries take
 * 380 s).  Prints one JSON object: the median load time of configurations
 * of N, 2N, 4N, 8N entries (8N = the limit, CAT_YAML_MOUNTS_MAX) and the
 * ratio of each to the one before: 2 for linear work, 4 for quadratic.
 *
 * Usage: bench_config [ROUNDS]   (default 15)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "catalog_internal.h"
#include "catalog_yaml.h"

/* A configuration of n distinct entries, as a generated site file would be. */
static char *make_config(size_t n, size_t *ret_len)
{
	size_t cap = 64 + n * 64, len;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	len = (size_t)snprintf(buf, cap, "version: 1\nmounts:\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len,
					"  /scratch/node%06zu: { class: ssd, mttf: 10y }\n", i);
	*ret_len = len;
	return buf;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 15;
	size_t n0 = CAT_YAML_MOUNTS_MAX / 8;
	double prev = 0;

	if (rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: bench_config [ROUNDS 1..1000]\n");
		return 2;
	}
	printf("{\"bench\":\"config\",\"rounds\":%u,\"loads\":[", rounds);
	for (unsigned k = 0; k < 4; k++) {
		size_t n = n0 << k, len;
		char *text = make_config(n, &len);
		double *t = calloc(rounds, sizeof(*t)), med;

		if (!text || !t) {
			fprintf(stderr, "bench_config: out of memory\n");
			return 1;
		}
		for (unsigned r = 0; r < rounds; r++) {
			struct iosig_error err = { 0 };
			struct cat_config *cfg = NULL;
			double t0 = bench_now();

			if (cat_config_load_buffer("bench.yaml", text, len, &cfg, &err) < 0) {
				fprintf(stderr, "bench_config: %s\n", err.msg);
				return 1;
			}
			t[r] = bench_now() - t0;
			cat_config_free(cfg);
		}
		med = bench_median(t, rounds);
		printf("%s{\"entries\":%zu,\"bytes\":%zu,\"ms\":%.3f,\"ratio_to_half\":",
		       k ? "," : "", n, len, med * 1e3);
		if (k)
			printf("%.2f}", med / prev);
		else
			printf("null}");
		prev = med;
		free(t);
		free(text);
	}
	printf("]}\n");
	return 0;
}
