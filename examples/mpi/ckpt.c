/* SPDX-License-Identifier: MIT */
/*
 * ckpt.c - an MPI checkpoint/restart program annotated with IOSIG pragmas.
 *
 * Every rank holds BYTES of state.  A checkpoint of step k writes, in DIR:
 *   ckpt-<k>.<rank>     each rank's state (POSIX: open/write/fsync), and
 *   ckpt-<k>.manifest   one file shared by all ranks: a header and one
 *                       record per rank (size and checksum of its state),
 *                       each rank writing its own record with pwrite;
 * with --mpiio the states go instead into one shared file ckpt-<k>.data,
 * opened collectively with MPI_File_open and written with
 * MPI_File_write_at_all (rank r at offset r * BYTES).  When every rank has
 * synced, rank 0 commits the checkpoint by renaming a new `latest` file
 * (naming k) into place: a checkpoint that was not committed - a rank
 * killed in the middle - is never read.
 *
 * --restart reads `latest`, checks the manifest and every rank's state
 * (checksums, byte for byte against the state the program regenerates)
 * through the same signatures, and continues from there.
 *
 * The pragmas say what a checkpoint is: written once, sequentially, in
 * large pieces, read back by a job that may run on other nodes (`global`),
 * and it must outlive the job and a disk failure (`persist`, a minimum
 * MTTDL).  Built with the IOSIG GCC plugin
 *     mpicc -fplugin=iosig.so ckpt.c -liosig-mpi -liosig
 * the files go where the machine's storage satisfies that (a GlusterFS or
 * other shared volume), linked at the paths the program names; built
 * without it the pragmas are ignored and the program is the same.  Every
 * rank of a job computes the same destination for the shared files (job
 * identity + path, docs/design.md §9) without talking.
 *
 * Usage: mpirun -np N ckpt [--dir DIR] [--bytes B] [--chunk C] [--steps S]
 *            [--restart] [--mpiio] [--die-rank R --die-after B] [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAGIC 0x54504b4349534f49ull /* "IOSICKPT" */
#define HEADER_SIZE 64
#define RECORD_SIZE 64

/* Command line. */
struct opts {
	const char *dir;
	long long bytes;      /* state per rank */
	long long chunk;      /* bytes per write */
	int steps;            /* checkpoints to write */
	bool restart;
	bool mpiio;
	int die_rank;         /* -1: nobody dies */
	long long die_after;  /* bytes the dying rank writes of its last checkpoint */
	bool json;
};

/* One rank's record in the manifest. */
struct record {
	uint64_t rank;
	uint64_t step;
	uint64_t bytes;
	uint64_t sum;
	uint64_t pad[4];
};

static int rank, nranks;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ckpt: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* ---- the state: a function of (rank, step) ------------------------------ */

static uint64_t seed_of(int r, int step)
{
	return ((uint64_t)r << 32 ^ (uint64_t)step * 0x9e3779b97f4a7c15ull) | 1;
}

/* xorshift64* into buf[n]; continues from *state. */
static void fill(unsigned char *buf, size_t n, uint64_t *state)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x = *state;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		*state = x;
		x *= 0x2545f4914f6cdd1dull;
		memcpy(buf + i, &x, n - i < 8 ? n - i : 8);
	}
}

/* Running checksum of a byte stream. */
static uint64_t sum_update(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the annotated opens ------------------------------------------------- */

/*
 * A rank's own checkpoint file.  Values are run-time expressions: the
 * state's size and the size of one write.
 */
static int open_rank_file(const char *path, int flags, long long bytes, long long chunk)
{
	(void)bytes;
	(void)chunk;
#pragma io sig global persist min_mttdl(1000 * y) sequential_access size_per_io(chunk) totalsize(bytes)
	return open(path, flags, 0644);
}

/* The manifest every rank writes a record of: small, shared. */
static int open_manifest(const char *path, int flags, long long bytes)
{
	(void)bytes;
#pragma io sig global persist min_mttdl(1000 * y) random_access size_per_io(64) totalsize(bytes)
	return open(path, flags, 0644);
}

/*
 * The MPI-IO checkpoint: one file, all ranks, collectively.  The pragma
 * binds to MPI_File_open like to open(): rank 0 decides for all (once),
 * every rank opens the same file.
 */
static int open_shared_data(const char *path, int amode, long long bytes, long long chunk,
			    MPI_File *fh)
{
	(void)bytes;
	(void)chunk;
#pragma io sig global persist min_mttdl(1000 * y) sequential_access size_per_io(chunk) totalsize(bytes)
	return MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, fh);
}

/* ---- writing ------------------------------------------------------------- */

static void path_of(char *buf, size_t size, const struct opts *o, int step, const char *what)
{
	if ((size_t)snprintf(buf, size, "%s/ckpt-%d.%s", o->dir, step, what) >= size)
		die("path too long under %s", o->dir);
}

static void write_full(int fd, const unsigned char *buf, size_t n, off_t off, const char *path)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, buf, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("write %s: %s", path, strerror(errno));
		buf += w;
		n -= (size_t)w;
		off += w;
	}
}

/* Writes this rank's state of `step`; returns its checksum.  The dying
 * rank of the last step is killed after o->die_after bytes. */
static uint64_t write_state(const struct opts *o, int step, bool last, unsigned char *buf,
			    int fd, MPI_File fh, const char *path)
{
	uint64_t st = seed_of(rank, step), sum = 0xcbf29ce484222325ull;
	bool dies = last && rank == o->die_rank;

	for (long long off = 0; off < o->bytes; off += o->chunk) {
		size_t n = (size_t)(o->bytes - off < o->chunk ? o->bytes - off : o->chunk);

		if (dies && off >= o->die_after) {
			fprintf(stderr, "ckpt: rank %d: killed after %lld bytes of checkpoint %d\n",
				rank, off, step);
			raise(SIGKILL);
		}
		fill(buf, n, &st);
		sum = sum_update(sum, buf, n);
		if (o->mpiio) {
			MPI_Status status;
			int r = MPI_File_write_at(fh, (MPI_Offset)rank * o->bytes + off, buf, (int)n,
						  MPI_BYTE, &status);

			if (r != MPI_SUCCESS)
				die("MPI_File_write_at %s failed", path);
		} else {
			write_full(fd, buf, n, off, path);
		}
	}
	return sum;
}

/* The manifest: header (rank 0) and this rank's record. */
static void write_manifest(const struct opts *o, int step, uint64_t sum)
{
	long long bytes = HEADER_SIZE + (long long)nranks * RECORD_SIZE;
	unsigned char head[HEADER_SIZE] = { 0 };
	struct record rec = { .rank = (uint64_t)rank, .step = (uint64_t)step,
			      .bytes = (uint64_t)o->bytes, .sum = sum };
	char path[4096];
	uint64_t v[4] = { MANIFEST_MAGIC, (uint64_t)nranks, (uint64_t)step, o->mpiio };
	int fd;

	path_of(path, sizeof(path), o, step, "manifest");
	/* No O_TRUNC: every rank opens it, and a truncating open of a late
	 * rank would remove an early rank's record. */
	fd = open_manifest(path, O_WRONLY | O_CREAT, bytes);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	if (rank == 0) {
		memcpy(head, v, sizeof(v));
		write_full(fd, head, sizeof(head), 0, path);
	}
	write_full(fd, (const unsigned char *)&rec, sizeof(rec),
		   HEADER_SIZE + (off_t)rank * RECORD_SIZE, path);
	if (fsync(fd) < 0 || close(fd) < 0)
		die("sync %s: %s", path, strerror(errno));
}

/* Commits `step`: `latest` names it, replaced atomically. */
static void commit(const struct opts *o, int step)
{
	char tmp[4096], latest[4096];
	FILE *fp;

	if ((size_t)snprintf(latest, sizeof(latest), "%s/latest", o->dir) >= sizeof(latest) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.latest.tmp", o->dir) >= sizeof(tmp))
		die("path too long under %s", o->dir);
	fp = fopen(tmp, "w");
	if (!fp || fprintf(fp, "%d\n", step) < 0 || fflush(fp) || fsync(fileno(fp)) || fclose(fp))
		die("cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, latest) < 0)
		die("cannot rename %s to %s: %s", tmp, latest, strerror(errno));
}

/* Writes checkpoint `step`; returns the seconds from the first open to the
 * last rank's sync (the checkpoint's write time). */
static double checkpoint(const struct opts *o, int step, bool last, unsigned char *buf)
{
	char path[4096];
	MPI_File fh = MPI_FILE_NULL;
	uint64_t sum;
	double t0, t1;
	int fd = -1;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (o->mpiio) {
		path_of(path, sizeof(path), o, step, "data");
		if (open_shared_data(path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
				     o->bytes * nranks, o->chunk, &fh) != MPI_SUCCESS)
			die("MPI_File_open %s failed", path);
	} else {
		char what[32];

		snprintf(what, sizeof(what), "%d", rank);
		path_of(path, sizeof(path), o, step, what);
		fd = open_rank_file(path, O_WRONLY | O_CREAT | O_TRUNC, o->bytes, o->chunk);
		if (fd < 0)
			die("cannot create %s: %s", path, strerror(errno));
	}
	sum = write_state(o, step, last, buf, fd, fh, path);
	if (o->mpiio) {
		if (MPI_File_sync(fh) != MPI_SUCCESS || MPI_File_close(&fh) != MPI_SUCCESS)
			die("MPI_File_sync/close %s failed", path);
	} else if (fsync(fd) < 0 || close(fd) < 0) {
		die("sync %s: %s", path, strerror(errno));
	}
	write_manifest(o, step, sum);
	MPI_Barrier(MPI_COMM_WORLD);
	t1 = MPI_Wtime();
	if (rank == 0)
		commit(o, step);
	MPI_Barrier(MPI_COMM_WORLD);
	return t1 - t0;
}

/* ---- restart ------------------------------------------------------------- */

static void read_full(int fd, unsigned char *buf, size_t n, off_t off, const char *path)
{
	while (n > 0) {
		ssize_t r = pread(fd, buf, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("%s: %s", path, r < 0 ? strerror(errno) : "shorter than the checkpoint");
		buf += r;
		n -= (size_t)r;
		off += r;
	}
}

/* Reads `latest`, checks the manifest and this rank's state byte for
 * byte; returns the step.  Opens through the same signatures (existing
 * files: the annotated opens find them where they are). */
static int restart(const struct opts *o, unsigned char *buf, unsigned char *want)
{
	char path[4096];
	struct record rec;
	uint64_t head[4], st, sum = 0xcbf29ce484222325ull;
	MPI_File fh = MPI_FILE_NULL;
	int step, fd = -1, ok;
	FILE *fp;

	if ((size_t)snprintf(path, sizeof(path), "%s/latest", o->dir) >= sizeof(path))
		die("path too long under %s", o->dir);
	fp = fopen(path, "r");
	if (!fp || fscanf(fp, "%d", &step) != 1)
		die("no committed checkpoint in %s (%s)", o->dir, fp ? "bad latest" : strerror(errno));
	fclose(fp);

	path_of(path, sizeof(path), o, step, "manifest");
	fd = open_manifest(path, O_RDONLY, HEADER_SIZE + (long long)nranks * RECORD_SIZE);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	read_full(fd, (unsigned char *)head, sizeof(head), 0, path);
	read_full(fd, (unsigned char *)&rec, sizeof(rec), HEADER_SIZE + (off_t)rank * RECORD_SIZE,
		  path);
	close(fd);
	if (head[0] != MANIFEST_MAGIC || head[1] != (uint64_t)nranks || head[2] != (uint64_t)step ||
	    head[3] != (uint64_t)o->mpiio)
		die("%s: not checkpoint %d of %d ranks written %s", path, step, nranks,
		    o->mpiio ? "with MPI-IO" : "with POSIX");
	if (rec.rank != (uint64_t)rank || rec.step != (uint64_t)step ||
	    rec.bytes != (uint64_t)o->bytes)
		die("%s: the record of rank %d is wrong", path, rank);

	if (o->mpiio) {
		path_of(path, sizeof(path), o, step, "data");
		if (open_shared_data(path, MPI_MODE_RDONLY, o->bytes * nranks, o->chunk, &fh) !=
		    MPI_SUCCESS)
			die("MPI_File_open %s failed", path);
	} else {
		char what[32];

		snprintf(what, sizeof(what), "%d", rank);
		path_of(path, sizeof(path), o, step, what);
		fd = open_rank_file(path, O_RDONLY, o->bytes, o->chunk);
		if (fd < 0)
			die("cannot open %s: %s", path, strerror(errno));
	}
	st = seed_of(rank, step);
	for (long long off = 0; off < o->bytes; off += o->chunk) {
		size_t n = (size_t)(o->bytes - off < o->chunk ? o->bytes - off : o->chunk);

		if (o->mpiio) {
			MPI_Status status;
			int got = 0;

			if (MPI_File_read_at(fh, (MPI_Offset)rank * o->bytes + off, buf, (int)n,
					     MPI_BYTE, &status) != MPI_SUCCESS ||
			    MPI_Get_count(&status, MPI_BYTE, &got) != MPI_SUCCESS || got != (int)n)
				die("%s: short read at %lld", path, (long long)rank * o->bytes + off);
		} else {
			read_full(fd, buf, n, off, path);
		}
		fill(want, n, &st);
		if (memcmp(buf, want, n))
			die("%s: rank %d's state differs from the checkpoint at byte %lld", path, rank,
			    off);
		sum = sum_update(sum, buf, n);
	}
	if (o->mpiio)
		MPI_File_close(&fh);
	else
		close(fd);
	ok = sum == rec.sum;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok)
		die("checkpoint %d: a checksum does not match its manifest record", step);
	return step;
}

/* ---- main ---------------------------------------------------------------- */

static long long size_arg(const char *s, const char *opt)
{
	char *end;
	double v = strtod(s, &end);
	long long mult = 1;

	if (end == s || v < 0)
		die("%s: not a size: '%s'", opt, s);
	if (!strcmp(end, "KiB") || !strcmp(end, "K"))
		mult = 1ll << 10;
	else if (!strcmp(end, "MiB") || !strcmp(end, "M"))
		mult = 1ll << 20;
	else if (!strcmp(end, "GiB") || !strcmp(end, "G"))
		mult = 1ll << 30;
	else if (*end)
		die("%s: not a size: '%s' (B, KiB, MiB, GiB)", opt, s);
	return (long long)(v * (double)mult);
}

static void usage(void)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: mpirun -np N ckpt [--dir DIR] [--bytes B] [--chunk C] [--steps S]\n"
			"                         [--restart] [--mpiio] [--die-rank R --die-after B] [--json]\n");
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .dir = ".", .bytes = 16ll << 20, .chunk = 4ll << 20, .steps = 2,
			  .die_rank = -1 };
	unsigned char *buf, *want;
	double t, total = 0, worst = 0;
	int first = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--restart")) {
			o.restart = true;
		} else if (!strcmp(a, "--mpiio")) {
			o.mpiio = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!v) {
			usage();
		} else if (!strcmp(a, "--dir")) {
			o.dir = v, i++;
		} else if (!strcmp(a, "--bytes")) {
			o.bytes = size_arg(v, a), i++;
		} else if (!strcmp(a, "--chunk")) {
			o.chunk = size_arg(v, a), i++;
		} else if (!strcmp(a, "--steps")) {
			o.steps = atoi(v), i++;
		} else if (!strcmp(a, "--die-rank")) {
			o.die_rank = atoi(v), i++;
		} else if (!strcmp(a, "--die-after")) {
			o.die_after = size_arg(v, a), i++;
		} else {
			usage();
		}
	}
	if (o.bytes < 1 || o.chunk < 1 || o.chunk > (1ll << 30) || o.steps < 0)
		die("--bytes and --chunk must be positive (chunk at most 1 GiB), --steps not negative");
	buf = malloc((size_t)o.chunk);
	want = malloc((size_t)o.chunk);
	if (!buf || !want)
		die("out of memory for %lld-byte chunks", o.chunk);
	if (o.restart)
		first = restart(&o, buf, want) + 1;
	for (int s = 0; s < o.steps; s++) {
		t = checkpoint(&o, first + s, s == o.steps - 1, buf);
		total += t;
		if (t > worst)
			worst = t;
	}
	if (rank == 0) {
		if (o.json)
			printf("{\"ranks\": %d, \"bytes_per_rank\": %lld, \"chunk\": %lld, \"mpiio\": %s, "
			       "\"restarted_from\": %d, \"steps\": %d, \"last_step\": %d, "
			       "\"write_seconds\": %.6f, \"worst_write_seconds\": %.6f}\n",
			       nranks, o.bytes, o.chunk, o.mpiio ? "true" : "false",
			       o.restart ? first - 1 : -1, o.steps, first + o.steps - 1,
			       o.steps ? total / o.steps : 0.0, worst);
		else
			printf("ckpt: %d ranks x %lld bytes: %s%d checkpoint(s), last %d, %.3f s each\n",
			       nranks, o.bytes, o.restart ? "restarted, " : "", o.steps,
			       first + o.steps - 1, o.steps ? total / o.steps : 0.0);
	}
	free(buf);
	free(want);
	MPI_Finalize();
	return 0;
}
