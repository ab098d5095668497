/* SPDX-License-Identifier: MIT */
/*
 * daemon_io.c - the I/O loops bench_daemon.c measures, in a program linked
 * with libiosig.so (its interposers) - or, for the untagged baseline,
 * without it (built twice: daemon_io and daemon_io_plain).
 *
 *   daemon_io write DIR SIZE TOTAL   writes TOTAL bytes in SIZE calls to a
 *                                    plain and to a tagged file of DIR, in
 *                                    alternating rounds; prints seconds to
 *                                    return and to durable (+ fsync)
 *   daemon_io latency DIR N          N 4 KiB write() calls each: plain and
 *                                    tagged per-call latencies (p50, p99)
 *   daemon_io fsync DIR N            64 KiB write + fsync, N times each
 *   daemon_io untagged N             what an interposer adds to a call on an
 *                                    untagged descriptor: lseek(SEEK_CUR)
 *                                    as the program calls it (through any
 *                                    interposer) against libc's own lseek,
 *                                    in alternating batches of N calls
 *   daemon_io mapreduce bulk FILE BYTES IO
 *                                    a bulky MapReduce writer (bench_hdd):
 *                                    BYTES to FILE in IO-byte write() calls,
 *                                    sequentially, then fsync and close
 *   daemon_io mapreduce small FILE BYTES IO THINK_US SEED
 *                                    a small interrupting writer: IO-byte
 *                                    records at random aligned offsets of a
 *                                    64 MiB range, each write() + fdatasync,
 *                                    THINK_US apart
 *   daemon_io mapreduce burst FILE BYTES IO THINK_US SEED
 *                                    bursty small writes (bench_tiers):
 *                                    as small, in bursts of 8 records
 *                                    back to back, THINK_US between bursts
 *   daemon_io mapreduce rand FILE BYTES IO THINK_US SEED
 *                                    a closed-loop writer: as small without
 *                                    the fdatasync (one fsync at the end)
 *   daemon_io mapreduce read FILE BYTES IO THINK_US SEED
 *                                    a closed-loop reader: IO-byte pread()
 *                                    calls at random aligned offsets of the
 *                                    first 64 MiB of the existing FILE
 *   daemon_io mapreduce seqread FILE BYTES IO THINK_US SEED
 *                                    a closed-loop sequential reader: as
 *                                    read, the pread() calls one after the
 *                                    other from an IO-aligned offset of
 *                                    FILE that SEED picks, wrapping at
 *                                    FILE's end (its size rounded down to
 *                                    a multiple of IO)
 *                                    All open FILE (plainly: run them under
 *                                    iosig-redirect to tag it), write one
 *                                    byte to descriptor 4 (ready), wait for
 *                                    EOF on descriptor 3 (go), and print the
 *                                    CLOCK_MONOTONIC time they finished (the
 *                                    data durable) and each call's latency:
 *                                    write(), write() + fdatasync, pread().
 * Output: one JSON object.  A tagged file is opened through iosig_open()
 * with a site as the compiler plugin would make it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#ifdef DAEMON_IO_TAGGED
#include "iosig.h"

static const struct iosig_site site = {
	.abi = IOSIG_SITE_ABI, .nvalues = 0, .sig = "sequential size_per_io(65536)",
	.file = "daemon_io.c", .line = 1, .column = 1, .call = "open",
};
#endif

static int open_file(const char *dir, const char *name, bool tagged)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
#ifdef DAEMON_IO_TAGGED
	if (tagged)
		return iosig_open(&site, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
#endif
	return open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
}

static void die(const char *what)
{
	fprintf(stderr, "daemon_io: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Writes total bytes in size calls; seconds to return and to durable. */
static void write_run(const char *dir, bool tagged, size_t size, size_t total, const char *buf,
		      double *ret_return, double *ret_durable)
{
	int fd = open_file(dir, tagged ? "tagged" : "plain", tagged);
	double t0;

	if (fd < 0)
		die("open");
	t0 = bench_now();
	for (size_t done = 0; done < total; done += size)
		if (write(fd, buf, size) != (ssize_t)size)
			die("write");
	*ret_return = bench_now() - t0;
	if (fsync(fd) < 0)
		die("fsync");
	*ret_durable = bench_now() - t0;
	if (close(fd) < 0)
		die("close");
}

static int cmd_write(const char *dir, size_t size, size_t total, unsigned rounds)
{
	char *buf = malloc(size);
	double *r[2], *d[2];

	r[0] = calloc(4 * (size_t)rounds, sizeof(double));
	if (!buf || !r[0] || !rounds) {
		free(buf);
		free(r[0]);
		return 1;
	}
	r[1] = r[0] + rounds;
	d[0] = r[1] + rounds;
	d[1] = d[0] + rounds;
	memset(buf, 'x', size);
	/* rounds rounds, the order alternating; the median of each. */
	for (unsigned round = 0; round < rounds; round++) {
		bool first = round % 2;

		write_run(dir, first, size, total, buf, &r[first][round], &d[first][round]);
		write_run(dir, !first, size, total, buf, &r[!first][round], &d[!first][round]);
	}
	printf("{\"size\": %zu, \"bytes\": %zu, \"rounds\": %u, \"plain_return_s\": %.6f, \"tagged_return_s\": %.6f, "
	       "\"plain_durable_s\": %.6f, \"tagged_durable_s\": %.6f}\n",
	       size, total, rounds, bench_median(r[0], rounds), bench_median(r[1], rounds),
	       bench_median(d[0], rounds), bench_median(d[1], rounds));
	free(r[0]);
	free(buf);
	return 0;
}

static void latencies(const char *dir, bool tagged, unsigned n, const char *buf, double *ret_p50,
		      double *ret_p99)
{
	double *t = malloc(n * sizeof(*t));
	int fd = open_file(dir, tagged ? "lat-tagged" : "lat-plain", tagged);

	if (fd < 0 || !t)
		die("open");
	for (unsigned i = 0; i < n; i++) {
		double t0 = bench_now();

		if (write(fd, buf, 4096) != 4096)
			die("write");
		t[i] = (bench_now() - t0) * 1e6;
	}
	close(fd);
	qsort(t, n, sizeof(*t), bench_cmp_double);
	*ret_p50 = t[n / 2];
	*ret_p99 = t[n * 99 / 100];
	free(t);
}

static int cmd_latency(const char *dir, unsigned n)
{
	static char buf[4096];
	double p50[2], p99[2];

	memset(buf, 'y', sizeof(buf));
	latencies(dir, false, n, buf, &p50[0], &p99[0]);
	latencies(dir, true, n, buf, &p50[1], &p99[1]);
	printf("{\"calls\": %u, \"plain_p50_us\": %.3f, \"tagged_p50_us\": %.3f, "
	       "\"plain_p99_us\": %.3f, \"tagged_p99_us\": %.3f}\n", n, p50[0], p50[1], p99[0], p99[1]);
	return 0;
}

static double fsyncs(const char *dir, bool tagged, unsigned n, const char *buf)
{
	double *t = malloc(n * sizeof(*t)), m;
	int fd = open_file(dir, tagged ? "fs-tagged" : "fs-plain", tagged);

	if (fd < 0 || !t)
		die("open");
	for (unsigned i = 0; i < n; i++) {
		double t0;

		if (write(fd, buf, 65536) != 65536)
			die("write");
		t0 = bench_now();
		if (fsync(fd) < 0)
			die("fsync");
		t[i] = (bench_now() - t0) * 1e6;
	}
	close(fd);
	m = bench_median(t, n);
	free(t);
	return m;
}

static int cmd_fsync(const char *dir, unsigned n)
{
	static char buf[65536];
	double p, t;

	memset(buf, 'z', sizeof(buf));
	p = fsyncs(dir, false, n, buf);
	t = fsyncs(dir, true, n, buf);
	printf("{\"fsyncs\": %u, \"plain_fsync_p50_us\": %.1f, \"tagged_fsync_p50_us\": %.1f}\n", n, p, t);
	return 0;
}

static int cmd_untagged(unsigned n)
{
	off_t (*direct)(int, off_t, int);
	double diff[BENCH_MAX_BATCHES], base[BENCH_MAX_BATCHES];
	volatile off_t sink = 0;
	void *libc;
	int fd = open("/dev/null", O_RDONLY);

	/* libc's lseek itself, beneath every interposer. */
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	direct = libc ? (off_t (*)(int, off_t, int))dlsym(libc, "lseek") : NULL;
	if (fd < 0 || !direct)
		die("set-up");
	for (unsigned b = 0; b < BENCH_MAX_BATCHES; b++) {
		double t0 = bench_now(), t1, t2;

		for (unsigned i = 0; i < n; i++)
			sink += direct(fd, 0, SEEK_CUR);
		t1 = bench_now();
		for (unsigned i = 0; i < n; i++)
			sink += lseek(fd, 0, SEEK_CUR);
		t2 = bench_now();
		base[b] = (t1 - t0) / n * 1e9;
		diff[b] = ((t2 - t1) - (t1 - t0)) / n * 1e9;
	}
	printf("{\"direct_ns\": %.2f, \"overhead_ns\": %.2f}\n", bench_median(base, BENCH_MAX_BATCHES),
	       bench_median(diff, BENCH_MAX_BATCHES));
	(void)sink;
	return 0;
}

/* Range of the small writer's records. */
#define SMALL_SPAN (64ull << 20)

/* The next pseudo-random IO-aligned offset below span (seed advances). */
static off_t random_at(uint64_t *seed, uint64_t span, size_t io)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (off_t)((*seed >> 33) % (span / io) * io);
}

static int cmd_mapreduce(int argc, char **argv)
{
	const char *role = argv[2], *path = argv[3];
	bool bulk = !strcmp(role, "bulk"), seq = !strcmp(role, "seqread");
	bool reader = seq || !strcmp(role, "read");
	bool sync = !strcmp(role, "small") || !strcmp(role, "burst");
	unsigned burst = !strcmp(role, "burst") ? 8 : 1;
	size_t bytes = strtoull(argv[4], NULL, 0), io = strtoull(argv[5], NULL, 0);
	unsigned long think_us = argc > 6 ? strtoul(argv[6], NULL, 0) : 0;
	uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 0) : 1;
	size_t n = io ? bytes / io : 0;
	double *lat = calloc(n ? n : 1, sizeof(*lat)), end;
	char *buf = malloc(io ? io : 1), go;
	uint64_t span = SMALL_SPAN; /* seqread: wraps at the file's end */
	off_t next = 0;             /* seqread: its next offset */
	int fd;

	if (!lat || !buf || !n || (!bulk && (io > SMALL_SPAN || SMALL_SPAN % io)))
		die("arguments");
	memset(buf, bulk ? 'B' : 'S', io);
	fd = reader ? open(path, O_RDONLY) : open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		die("open");
	if (seq) {
		struct stat st;

		if (fstat(fd, &st) < 0)
			die("fstat");
		span = (uint64_t)st.st_size / io * io;
		errno = EINVAL;
		if (!span)
			die("a file shorter than one call");
		next = random_at(&seed, span, io);
	}
	/* Ready; then wait for the start. */
	if (write(4, "r", 1) != 1 || read(3, &go, 1) != 0)
		die("start");
	for (size_t i = 0; i < n; i++) {
		double t0 = bench_now();
		off_t at = 0;

		if (seq) {
			at = next;
			next = (off_t)(((uint64_t)next + io) % span);
		} else if (!bulk) {
			at = random_at(&seed, SMALL_SPAN, io);
		}
		if (bulk) {
			if (write(fd, buf, io) != (ssize_t)io)
				die("write");
		} else if (reader) {
			if (pread(fd, buf, io, at) != (ssize_t)io)
				die("pread");
		} else {
			if (pwrite(fd, buf, io, at) != (ssize_t)io)
				die("pwrite");
			if (sync && fdatasync(fd) < 0)
				die("fdatasync");
		}
		lat[i] = (bench_now() - t0) * 1e6;
		if (!bulk && think_us && i + 1 < n && (i + 1) % burst == 0)
			usleep((useconds_t)think_us);
	}
	if (!reader && fsync(fd) < 0)
		die("fsync");
	if (close(fd) < 0)
		die("close");
	end = bench_now();
	printf("{\"role\": \"%s\", \"end\": %.6f, \"calls\": %zu, \"lat_us\": [", role, end, n);
	for (size_t i = 0; i < n; i++)
		printf("%s%.1f", i ? ", " : "", lat[i]);
	printf("]}\n");
	free(lat);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], strtoul(argv[3], NULL, 0), strtoul(argv[4], NULL, 0),
				 argc == 6 ? (unsigned)strtoul(argv[5], NULL, 0) : 3);
	if (argc == 4 && !strcmp(argv[1], "latency"))
		return cmd_latency(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "fsync"))
		return cmd_fsync(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "untagged"))
		return cmd_untagged((unsigned)atoi(argv[2]));
	if ((argc == 6 && !strcmp(argv[1], "mapreduce") && !strcmp(argv[2], "bulk")) ||
	    (argc == 8 && !strcmp(argv[1], "mapreduce") &&
	     (!strcmp(argv[2], "small") || !strcmp(argv[2], "burst") || !strcmp(argv[2], "rand") ||
	      !strcmp(argv[2], "read") || !strcmp(argv[2], "seqread"))))
		return cmd_mapreduce(argc, argv);
	fprintf(stderr, "usage: daemon_io write DIR SIZE TOTAL [ROUNDS] | latency DIR N | fsync DIR N | untagged N |\n"
		"       mapreduce bulk FILE BYTES IO |\n"
		"       mapreduce small|burst|rand|read|seqread FILE BYTES IO THINK_US SEED\n");
	return 2;
}
