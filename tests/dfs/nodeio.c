/* SPDX-License-Identifier: MIT */
/*
 * nodeio.c - one process of a job on one "node" of tests/dfs: writes a
 * file through an annotated open, or opens it again and checks it byte for
 * byte.  Built with the IOSIG GCC plugin.
 *
 *   nodeio write global|local PATH SIZE SEED   create PATH (O_TRUNC), SIZE bytes
 *   nodeio join  global|local PATH SIZE SEED   open PATH with O_RDWR|O_CREAT (the
 *                                              annotated open a restarting rank
 *                                              does) and check its SIZE bytes
 *   nodeio check PATH SIZE SEED                plain open, check its SIZE bytes
 *   nodeio write-pause global|local PATH PATH2 SIZE SEED
 *                                              write PATH, print "paused", wait for a
 *                                              line on stdin, write PATH2: the storage
 *                                              may change between two annotated opens
 *                                              of one process (one catalog)
 *
 * The content is a function of SEED (xorshift64*), so a reader on another
 * node knows every byte without seeing the writer's.  Exit 0 when the file
 * is what it should be, 1 otherwise (with the first differing offset).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (1 << 20)

/* The job writes its checkpoint where every node sees it, reliably. */
static int open_global(const char *path, int flags, long long size)
{
	(void)size;
#pragma io sig global persist sequential_access size_per_io(1 * MiB) totalsize(size) min_mttdl(10000 * y)
	return open(path, flags, 0644);
}

/* Scratch data: this node's own, fast storage is fine. */
static int open_local(const char *path, int flags, long long size)
{
	(void)size;
#pragma io sig local tmp sequential_access size_per_io(1 * MiB) totalsize(size)
	return open(path, flags, 0644);
}

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

static int write_all(int fd, long long size, uint64_t seed)
{
	static unsigned char buf[CHUNK];
	uint64_t st = seed | 1;

	for (long long off = 0; off < size;) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		fill(buf, n, &st);
		for (size_t done = 0; done < n;) {
			ssize_t w = write(fd, buf + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				fprintf(stderr, "nodeio: write: %s\n", strerror(errno));
				return 1;
			}
			done += (size_t)w;
		}
		off += (long long)n;
	}
	if (fsync(fd) < 0) {
		fprintf(stderr, "nodeio: fsync: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static int check_all(int fd, const char *path, long long size, uint64_t seed)
{
	static unsigned char want[CHUNK], got[CHUNK];
	uint64_t st = seed | 1;
	struct stat sb;

	if (fstat(fd, &sb) < 0 || sb.st_size != size) {
		fprintf(stderr, "nodeio: %s: %lld bytes, expected %lld\n", path,
			(long long)sb.st_size, size);
		return 1;
	}
	for (long long off = 0; off < size;) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t r = pread(fd, got, n, off);

		fill(want, n, &st);
		if (r != (ssize_t)n) {
			fprintf(stderr, "nodeio: %s: short read at %lld\n", path, off);
			return 1;
		}
		if (memcmp(want, got, n)) {
			size_t i = 0;

			while (want[i] == got[i])
				i++;
			fprintf(stderr, "nodeio: %s: differs at byte %lld\n", path, off + (long long)i);
			return 1;
		}
		off += (long long)n;
	}
	return 0;
}

static long long number(const char *s, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "nodeio: %s: not a non-negative number: '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	bool global;
	long long size;
	uint64_t seed;
	int fd, r;

	if (!strcmp(cmd, "check") && argc == 5) {
		size = number(argv[3], "SIZE");
		seed = (uint64_t)number(argv[4], "SEED");
		fd = open(argv[2], O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "nodeio: %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		r = check_all(fd, argv[2], size, seed);
		close(fd);
		return r;
	}
	if (!strcmp(cmd, "write-pause") && argc == 7 &&
	    (!strcmp(argv[2], "global") || !strcmp(argv[2], "local"))) {
		char line[64];

		global = !strcmp(argv[2], "global");
		size = number(argv[5], "SIZE");
		seed = (uint64_t)number(argv[6], "SEED");
		for (int i = 3; i <= 4; i++) {
			int flags = O_WRONLY | O_CREAT | O_TRUNC;

			if (i == 4) {
				printf("paused\n");
				fflush(stdout);
				if (!fgets(line, sizeof(line), stdin))
					return 1;
			}
			fd = global ? open_global(argv[i], flags, size) : open_local(argv[i], flags, size);
			if (fd < 0) {
				fprintf(stderr, "nodeio: %s: %s\n", argv[i], strerror(errno));
				return 1;
			}
			r = write_all(fd, size, seed);
			if (close(fd) < 0 || r)
				return 1;
		}
		return 0;
	}
	if ((strcmp(cmd, "write") && strcmp(cmd, "join")) || argc != 6 ||
	    (strcmp(argv[2], "global") && strcmp(argv[2], "local"))) {
		fprintf(stderr, "usage: nodeio write|join global|local PATH SIZE SEED\n"
				"       nodeio check PATH SIZE SEED\n"
				"       nodeio write-pause global|local PATH PATH2 SIZE SEED\n");
		return 2;
	}
	global = !strcmp(argv[2], "global");
	size = number(argv[4], "SIZE");
	seed = (uint64_t)number(argv[5], "SEED");
	if (!strcmp(cmd, "write")) {
		int flags = O_WRONLY | O_CREAT | O_TRUNC;

		fd = global ? open_global(argv[3], flags, size) : open_local(argv[3], flags, size);
	} else {
		fd = global ? open_global(argv[3], O_RDWR | O_CREAT, size)
			    : open_local(argv[3], O_RDWR | O_CREAT, size);
	}
	if (fd < 0) {
		fprintf(stderr, "nodeio: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	r = !strcmp(cmd, "write") ? write_all(fd, size, seed) : check_all(fd, argv[3], size, seed);
	if (close(fd) < 0 && !r) {
		fprintf(stderr, "nodeio: close %s: %s\n", argv[3], strerror(errno));
		r = 1;
	}
	return r;
}
