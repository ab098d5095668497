/* SPDX-License-Identifier: MIT */
/*
 * bench_mpi_open.c - what IOSIG adds to a collective MPI_File_open, side by
 * side in one run: N rounds, each creating a new file in DIR with the plain
 * MPI_File_open and another with iosig_MPI_File_open (what the plugins put
 * in place of an annotated one; called here with a site built by hand, as
 * the generated code does), alternating so that both see the same machine.
 * The time of one open is the slowest rank's (the call is collective);
 * closes are not timed.  Prints one JSON object.
 *
 *   mpirun -np 4 bench_mpi_open [--dir DIR] [--plain-dir DIR2] [--rounds N] [--sig TEXT]
 *
 * The plain opens go to DIR2 (default DIR): to compare a redirected open
 * with a plain one on the mount it was redirected to, give that mount.
 *
 * TEXT (default "global persist sequential_access size_per_io($0)
 * totalsize($1)", values 4 MiB and 256 MiB) decides what the annotated open
 * does: on a machine with a global mount the file is redirected there (data
 * file + link), without one it falls back after the decision.  The JSON
 * says which from rank 0's first decision (IOSIG_LOG is not needed).
 */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench.h"
#include "iosig_mpi.h"

static int rank;

static double open_one(const char *path, const struct iosig_site *site, MPI_File *fh)
{
	double t0, dt, worst;
	int r;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (site)
		r = iosig_MPI_File_open(site, MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
					MPI_INFO_NULL, fh, 4194304.0, 268435456.0);
	else
		r = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
				  MPI_INFO_NULL, fh);
	dt = MPI_Wtime() - t0;
	if (r != MPI_SUCCESS) {
		fprintf(stderr, "bench_mpi_open: rank %d: cannot open %s\n", rank, path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

/* Removes path and, if it is a link, what it points to (rank 0). */
static void remove_file(const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n > 0) {
		target[n] = '\0';
		unlink(target);
	}
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *dir = ".", *plain_dir = NULL;
	const char *sig = "global persist sequential_access size_per_io($0) totalsize($1)";
	int rounds = 100, nranks, redirected = -1;
	double *plain, *annotated;
	char path[PATH_MAX];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--plain-dir"))
			plain_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--sig"))
			sig = argv[i + 1];
		else
			rounds = 0;
	}
	if (rounds < 1 || rounds > 100000 || (argc - 1) % 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np N bench_mpi_open [--dir DIR] [--plain-dir DIR2] [--rounds N] [--sig TEXT]\n");
		MPI_Finalize();
		return 2;
	}
	if (!plain_dir)
		plain_dir = dir;
	const struct iosig_site site = { .abi = IOSIG_SITE_ABI, .nvalues = 2, .sig = sig,
					  .file = __FILE__, .line = __LINE__, .column = 1,
					  .call = "MPI_File_open" };

	plain = calloc((size_t)rounds, sizeof(*plain));
	annotated = calloc((size_t)rounds, sizeof(*annotated));
	if (!plain || !annotated)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < rounds; i++) {
		MPI_File fh;

		/* Alternate which goes first: neither always gets the warm cache. */
		for (int k = 0; k < 2; k++) {
			bool iosig = (k + i) % 2;

			snprintf(path, sizeof(path), "%s/bench-%d-%s", iosig ? dir : plain_dir, i,
				 iosig ? "iosig" : "plain");
			(iosig ? annotated : plain)[i] = open_one(path, iosig ? &site : NULL, &fh);
			MPI_File_close(&fh);
			if (iosig && redirected < 0 && rank == 0) {
				struct stat st;

				redirected = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
			}
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		double p = bench_median(plain, (unsigned)rounds);
		double a = bench_median(annotated, (unsigned)rounds);

		for (int i = 0; i < rounds; i++) {
			snprintf(path, sizeof(path), "%s/bench-%d-plain", plain_dir, i);
			remove_file(path);
			snprintf(path, sizeof(path), "%s/bench-%d-iosig", dir, i);
			remove_file(path);
		}
		printf("{\"bench\": \"mpi_open\", \"ranks\": %d, \"rounds\": %d, \"dir\": \"%s\", "
		       "\"plain_dir\": \"%s\", "
		       "\"sig\": \"%s\", \"redirected\": %s, "
		       "\"plain_open_us\": %.1f, \"iosig_open_us\": %.1f, \"added_us\": %.1f, "
		       "\"ratio\": %.3f, \"note\": \"medians of the slowest rank per collective open; "
		       "added_us target <= 1000\"}\n",
		       nranks, rounds, dir, plain_dir, sig, redirected > 0 ? "true" : "false", p * 1e6, a * 1e6,
		       (a - p) * 1e6, a / p);
	}
	free(plain);
	free(annotated);
	MPI_Finalize();
	return 0;
}
