/* SPDX-License-Identifier: MIT */
/*
 * dwork.c - workloads for the iosigd tests (daemon_test.py), built twice:
 * plainly (its pragmas ignored; run under iosig-redirect, whose rules tag
 * its files) and by the test with the gcc plugin (its pragmas tag them).
 *
 *   dwork records DIR SECONDS SEED [MiB]
 *                                    checksummed writes, overwrites, fsyncs
 *                                    and reads of records in files DIR/wN for
 *                                    SECONDS (or until MiB are written,
 *                                    default 64); every read is checked (stale:
 *                                    an older version or nothing; torn: the
 *                                    checksum fails), and at the end every
 *                                    record of every file, through the ring
 *                                    and again through a plain open.
 *   dwork xproc FILE ROUNDS          read-after-write across two processes
 *                                    that both tagged FILE
 *   dwork fsync FILE DEVICE BLOCKS   after each fsync every block written
 *                                    before it is on DEVICE (read with
 *                                    O_DIRECT at the FIEMAP address)
 *   dwork calls FILE                 one of every covered call; prints what
 *                                    each returned, to compare with a plain run
 *   dwork errors FILE MiB fsync|close [KiB]
 *                                    MiB in write()s of KiB (default 1024),
 *                                    then fsync (twice) and close, or close
 *                                    alone; prints the
 *                                    errno each step first saw (0: none), to
 *                                    compare with a plain run on a device that
 *                                    fails (eio_test.py)
 * Prints one JSON line of counters (records, xproc, fsync, errors) and exits 0 when
 * nothing was lost, stale or torn, 1 otherwise, 2 for bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* built by the test too, without the project's flags */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- data that says what it is ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Fills buf with the content of (a, b, c): any two differ everywhere. */
static void pattern(void *buf, size_t len, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = mix(a * 0x9e3779b97f4a7c15ull ^ mix(b + 1) ^ mix(c + 7));
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7))
			s = mix(s + i);
		p[i] = (unsigned char)(s >> ((i & 7) * 8));
	}
}

static uint64_t fnv(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The annotated opens: the plugin replaces them by calls into libiosig;
 * in the plain build the pragmas are ignored and iosig-redirect's rules
 * match the paths instead. */
static int open_tagged(const char *path, int flags)
{
#pragma io sig random size_per_io(4*KiB)
	int fd = open(path, flags, 0644);

	return fd;
}

static int open_tagged_seq(const char *path, int flags)
{
#pragma io sig sequential size_per_io(64*KiB)
	int fd = open(path, flags, 0644);

	return fd;
}

/* ---- records ---- */

#define REC_MAGIC 0x5245434f52444b57ull
#define REC_MAX 65536
#define FILES_OPEN 4
#define RECS_PER_FILE 300

struct rec_hdr {
	uint64_t magic;
	uint32_t file, rec;
	uint32_t version, len;
	uint64_t seed;
	uint64_t sum;        /* of the payload */
};

struct rec {
	uint64_t off;
	uint32_t len, version;
};

struct rfile {
	int fd;              /* -1 when closed */
	uint32_t no;
	uint64_t end;
	struct rec *recs;
	uint32_t n, cap;
	char path[4096];
};

struct counters {
	uint64_t records, overwrites, fsyncs, reads, bytes, files, checked;
	uint64_t stale, torn, lost, errors;
};

static void make_rec(unsigned char *buf, uint32_t file, uint32_t rec, uint32_t version,
		     uint32_t len, uint64_t seed)
{
	struct rec_hdr h = { .magic = REC_MAGIC, .file = file, .rec = rec, .version = version,
			     .len = len, .seed = seed };

	pattern(buf + sizeof(h), len - sizeof(h), seed ^ file, rec, version);
	h.sum = fnv(buf + sizeof(h), len - sizeof(h));
	memcpy(buf, &h, sizeof(h));
}

/* Checks what was read back for record r of f; counts stale or torn. */
static bool check_rec(struct counters *c, const struct rfile *f, uint32_t i,
		      const unsigned char *buf, ssize_t got, uint64_t seed, const char *how)
{
	const struct rec *r = &f->recs[i];
	struct rec_hdr h;

	c->checked++;
	if (got != (ssize_t)r->len) {
		fprintf(stderr, "dwork: %s: file %u record %u: read %zd of %u bytes\n", how, f->no, i,
			got, r->len);
		c->lost++;
		return false;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != REC_MAGIC || h.file != f->no || h.rec != i || h.version != r->version ||
	    h.len != r->len || h.seed != seed) {
		fprintf(stderr, "dwork: %s: file %u record %u: stale (version %u, expected %u, magic %s)\n",
			how, f->no, i, h.version, r->version, h.magic == REC_MAGIC ? "ok" : "bad");
		c->stale++;
		return false;
	}
	if (h.sum != fnv(buf + sizeof(h), r->len - sizeof(h))) {
		fprintf(stderr, "dwork: %s: file %u record %u: torn\n", how, f->no, i);
		c->torn++;
		return false;
	}
	return true;
}

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	*s = mix(*s + 0x9e3779b97f4a7c15ull);
	return (uint32_t)(*s % n);
}

static int verify_file(struct counters *c, struct rfile *f, int fd, uint64_t seed, const char *how,
		       unsigned char *buf)
{
	for (uint32_t i = 0; i < f->n; i++)
		check_rec(c, f, i, buf, pread(fd, buf, f->recs[i].len, (off_t)f->recs[i].off), seed, how);
	return 0;
}

static int cmd_records(const char *dir, double seconds, uint64_t seed, uint64_t max_bytes)
{
	struct rfile files[64];
	struct counters c = { 0 };
	unsigned nfiles = 0, first_open = 0;
	unsigned char *buf = malloc(REC_MAX), *back = malloc(REC_MAX);
	double t0 = now_s();
	uint64_t rs = seed;

	if (!buf || !back)
		return 2;
	memset(files, 0, sizeof(files));
	while (now_s() - t0 < seconds && c.bytes < max_bytes) {
		struct rfile *f;
		uint32_t op = rnd(&rs, 100);

		/* A new file every RECS_PER_FILE records; the oldest open one
		 * closes when more than FILES_OPEN are. */
		if (!nfiles || files[nfiles - 1].n >= RECS_PER_FILE) {
			if (nfiles == 64)
				break;
			f = &files[nfiles];
			f->no = nfiles;
			snprintf(f->path, sizeof(f->path), "%s/w%u", dir, nfiles);
			f->fd = open_tagged(f->path, O_CREAT | O_RDWR | O_TRUNC);
			if (f->fd < 0) {
				perror("dwork: open");
				c.errors++;
				break;
			}
			nfiles++;
			c.files++;
			if (nfiles - first_open > FILES_OPEN) {
				struct rfile *o = &files[first_open++];

				if (close(o->fd) < 0) {
					perror("dwork: close");
					c.errors++;
				}
				o->fd = -1;
			}
		}
		f = &files[first_open + rnd(&rs, nfiles - first_open)];
		if (op < 60 || !f->n) {
			/* Append a record, with write() or pwrite(). */
			struct rfile *w = &files[nfiles - 1];
			uint32_t len = (uint32_t)(sizeof(struct rec_hdr) + 8 * (1 + rnd(&rs, (REC_MAX - 64) / 8)));
			ssize_t n;

			if (w->n == w->cap) {
				w->cap = w->cap ? 2 * w->cap : 64;
				w->recs = realloc(w->recs, w->cap * sizeof(*w->recs));
			}
			make_rec(buf, w->no, w->n, 0, len, seed);
			/* write() at the position (set: pwrite does not move it),
			 * or pwrite(). */
			if (op & 1)
				n = lseek(w->fd, (off_t)w->end, SEEK_SET) == (off_t)w->end ?
					    write(w->fd, buf, len) : -1;
			else
				n = pwrite(w->fd, buf, len, (off_t)w->end);
			if (n != (ssize_t)len) {
				fprintf(stderr, "dwork: write: %zd: %s\n", n, strerror(errno));
				c.errors++;
				continue;
			}
			w->recs[w->n++] = (struct rec){ .off = w->end, .len = len, .version = 0 };
			w->end += len;
			c.records++;
			c.bytes += len;
		} else if (op < 75) {
			/* Overwrite a record with its next version. */
			uint32_t i = rnd(&rs, f->n);
			struct rec *r = &f->recs[i];

			make_rec(buf, f->no, i, r->version + 1, r->len, seed);
			if (pwrite(f->fd, buf, r->len, (off_t)r->off) != (ssize_t)r->len) {
				perror("dwork: pwrite");
				c.errors++;
				continue;
			}
			r->version++;
			c.overwrites++;
			c.bytes += r->len;
		} else if (op < 80) {
			if ((op & 1 ? fsync(f->fd) : fdatasync(f->fd)) < 0) {
				perror("dwork: fsync");
				c.errors++;
			}
			c.fsyncs++;
		} else {
			uint32_t i = rnd(&rs, f->n);

			check_rec(&c, f, i, back, pread(f->fd, back, f->recs[i].len, (off_t)f->recs[i].off),
				  seed, "read");
			c.reads++;
		}
	}
	/* Everything, through the descriptors still open, then from the disk
	 * through plain descriptors after the last close. */
	for (unsigned i = first_open; i < nfiles; i++)
		verify_file(&c, &files[i], files[i].fd, seed, "final read", back);
	for (unsigned i = first_open; i < nfiles; i++) {
		if (close(files[i].fd) < 0) {
			perror("dwork: close");
			c.errors++;
		}
		files[i].fd = -1;
	}
	for (unsigned i = 0; i < nfiles; i++) {
		int fd = open(files[i].path, O_RDONLY);

		if (fd < 0) {
			c.errors++;
			continue;
		}
		verify_file(&c, &files[i], fd, seed, "after close", back);
		close(fd);
		free(files[i].recs);
	}
	printf("{\"records\": %" PRIu64 ", \"overwrites\": %" PRIu64 ", \"fsyncs\": %" PRIu64
	       ", \"reads\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"files\": %" PRIu64
	       ", \"checked\": %" PRIu64 ", \"stale\": %" PRIu64 ", \"torn\": %" PRIu64
	       ", \"lost\": %" PRIu64 ", \"errors\": %" PRIu64 "}\n",
	       c.records, c.overwrites, c.fsyncs, c.reads, c.bytes, c.files, c.checked, c.stale, c.torn,
	       c.lost, c.errors);
	free(buf);
	free(back);
	return c.stale || c.torn || c.lost || c.errors ? 1 : 0;
}

/* ---- two processes, one file ---- */

#define XBLOCK 4096

static int xcheck(int fd, uint32_t block, uint64_t who, unsigned char *buf, unsigned char *want)
{
	pattern(want, XBLOCK, who, block, 0);
	if (pread(fd, buf, XBLOCK, (off_t)block * XBLOCK) != XBLOCK || memcmp(buf, want, XBLOCK)) {
		fprintf(stderr, "dwork: xproc: block %u as %s wrote it is not there\n", block,
			who == 'P' ? "the parent" : "the child");
		return 1;
	}
	return 0;
}

static int cmd_xproc(const char *path, uint32_t rounds)
{
	unsigned char buf[XBLOCK], want[XBLOCK];
	int p2c[2], c2p[2], fd, bad = 0, st;
	pid_t pid;

	fd = open_tagged(path, O_CREAT | O_RDWR | O_TRUNC);
	if (fd < 0 || pipe(p2c) < 0 || pipe(c2p) < 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		/* The child tags the file itself: its own session. */
		int cfd = open_tagged(path, O_RDWR);
		uint32_t i;

		close(p2c[1]);
		close(c2p[0]);
		if (cfd < 0)
			_exit(2);
		while (read(p2c[0], &i, sizeof(i)) == sizeof(i)) {
			bad += xcheck(cfd, i, 'P', buf, want);
			pattern(buf, XBLOCK, 'C', i + rounds, 0);
			if (pwrite(cfd, buf, XBLOCK, (off_t)(i + rounds) * XBLOCK) != XBLOCK)
				bad++;
			if (write(c2p[1], &i, sizeof(i)) != sizeof(i))
				break;
		}
		close(cfd);
		_exit(bad ? 1 : 0);
	}
	close(p2c[0]);
	close(c2p[1]);
	for (uint32_t i = 0; i < rounds; i++) {
		uint32_t j;

		pattern(buf, XBLOCK, 'P', i, 0);
		if (pwrite(fd, buf, XBLOCK, (off_t)i * XBLOCK) != XBLOCK)
			bad++;
		if (write(p2c[1], &i, sizeof(i)) != sizeof(i) || read(c2p[0], &j, sizeof(j)) != sizeof(j))
			return 2;
		bad += xcheck(fd, i + rounds, 'C', buf, want);
	}
	close(p2c[1]);
	waitpid(pid, &st, 0);
	close(fd);
	printf("{\"rounds\": %u, \"mismatches\": %d, \"child\": %d}\n", rounds, bad,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return bad || !WIFEXITED(st) || WEXITSTATUS(st) ? 1 : 0;
}

/* ---- fsync: on the device when it returns ---- */

#define FBLOCK 65536

/* Device address of file offset off (FIEMAP, no sync), or -1 when the
 * range is not allocated on the device yet (delayed allocation). */
static int64_t phys(int fd, uint64_t off)
{
	union {
		struct fiemap fm;
		char space[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} u;
	struct fiemap *fm = &u.fm;
	const struct fiemap_extent *e = &fm->fm_extents[0];

	memset(&u, 0, sizeof(u));
	fm->fm_start = off;
	fm->fm_length = 1;
	fm->fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0 || fm->fm_mapped_extents != 1 ||
	    (e->fe_flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN)) ||
	    e->fe_logical > off || off >= e->fe_logical + e->fe_length)
		return -1;
	return (int64_t)(e->fe_physical + (off - e->fe_logical));
}

static int cmd_fsync(const char *path, const char *dev, uint32_t blocks)
{
	unsigned char *buf, *disk;
	int fd, dfd, bad = 0, checks = 0;

	fd = open_tagged_seq(path, O_CREAT | O_RDWR | O_TRUNC);
	dfd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0 || dfd < 0 || posix_memalign((void **)&buf, 4096, FBLOCK) ||
	    posix_memalign((void **)&disk, 4096, FBLOCK))
		return 2;
	for (uint32_t b = 0; b < blocks; b++) {
		pattern(buf, FBLOCK, 'F', b, 1);
		if (write(fd, buf, FBLOCK) != FBLOCK)
			bad++;
		if ((b & 7) != 7)
			continue;
		if (fsync(fd) < 0)
			bad++;
		/* Every block so far, read from the device below the
		 * filesystem (O_DIRECT: not from any cache). */
		for (uint32_t k = 0; k <= b; k++) {
			int ok = 1;

			pattern(buf, FBLOCK, 'F', k, 1);
			for (uint64_t o = 0; o < FBLOCK && ok; o += 4096) {
				int64_t p = phys(fd, (uint64_t)k * FBLOCK + o);

				ok = p >= 0 && pread(dfd, disk, 4096, p) == 4096 &&
				     !memcmp(disk, buf + o, 4096);
			}
			checks++;
			if (!ok) {
				fprintf(stderr, "dwork: fsync returned but block %u is not on %s\n", k, dev);
				bad++;
			}
		}
	}
	close(fd);
	close(dfd);
	printf("{\"blocks\": %u, \"checks\": %d, \"missing\": %d}\n", blocks, checks, bad);
	return bad ? 1 : 0;
}

/* ---- every call, for a comparison with a plain run ---- */

static void say(const char *what, long long r)
{
	printf("%s = %lld%s%s\n", what, r, r < 0 ? " " : "", r < 0 ? strerror(errno) : "");
}

static off_t size_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) < 0 ? -1 : st.st_size;
}

static int cmd_calls(const char *path)
{
	char buf[8192], back[8192], path2[4200];
	struct iovec iov[2];
	struct stat st;
	struct statx stx;
	int fd, fd2, fd3, afd;
	pid_t pid;
	int status;
	void *m;

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	fd = open_tagged(path, O_CREAT | O_RDWR | O_TRUNC);
	say("open", fd >= 0);
	say("write", write(fd, buf, 1000));
	say("lseek cur", lseek(fd, 0, SEEK_CUR));
	say("pwrite", pwrite(fd, buf + 5, 300, 2000));
	say("lseek cur after pwrite", lseek(fd, 0, SEEK_CUR));
	iov[0] = (struct iovec){ buf, 100 };
	iov[1] = (struct iovec){ buf + 200, 50 };
	say("writev", writev(fd, iov, 2));
	say("pwritev", pwritev(fd, iov, 2, 5000));
	say("pwritev2", pwritev2(fd, iov, 2, 6000, 0));
	say("pwritev2 at position", pwritev2(fd, iov, 2, -1, 0));
	say("pwritev2 RWF_DSYNC", pwritev2(fd, iov, 2, 7000, RWF_DSYNC));
	say("lseek end", lseek(fd, 0, SEEK_END));
	say("fstat size", size_of(fd));
	say("fstatat size", fstatat(fd, "", &st, AT_EMPTY_PATH) < 0 ? -1 : st.st_size);
	say("statx size", statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &stx) < 0 ? -1 : (long long)stx.stx_size);
	say("lseek set", lseek(fd, 10, SEEK_SET));
	memset(back, 0, sizeof(back));
	say("read", read(fd, back, 100));
	say("read data", !memcmp(back, buf + 10, 100));
	say("lseek cur after read", lseek(fd, 0, SEEK_CUR));
	say("pread", pread(fd, back, 300, 2000));
	say("pread data", !memcmp(back, buf + 5, 300));
	say("pread past end", pread(fd, back, 100, 1 << 20));
	say("pread straddling end", pread(fd, back, 8192, 7000));
	iov[0] = (struct iovec){ back, 10 };
	iov[1] = (struct iovec){ back + 100, 10 };
	say("readv", readv(fd, iov, 2));
	say("preadv", preadv(fd, iov, 2, 0));
	say("preadv data", !memcmp(back, buf, 10) && !memcmp(back + 100, buf + 10, 10));
	say("preadv2", preadv2(fd, iov, 2, 2000, 0));
	say("fsync", fsync(fd));
	say("fdatasync", fdatasync(fd));
	say("sync_file_range", sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER));
	say("ftruncate shrink", ftruncate(fd, 3000));
	say("size after shrink", size_of(fd));
	say("pread after shrink", pread(fd, back, 4096, 2000));
	say("ftruncate grow", ftruncate(fd, 20000));
	say("size after grow", size_of(fd));
	say("pread zeros", pread(fd, back, 100, 15000) == 100 && !memcmp(back, (char[100]){ 0 }, 100));
	say("fallocate keep size", fallocate(fd, FALLOC_FL_KEEP_SIZE, 20000, 8192));
	say("size after fallocate keep", size_of(fd));
	say("fallocate", fallocate(fd, 0, 20000, 8192));
	say("size after fallocate", size_of(fd));
	say("posix_fallocate", posix_fallocate(fd, 0, 40000));
	say("size after posix_fallocate", size_of(fd));
	say("fallocate bad mode", fallocate(fd, 0x4000, 0, 10));
	/* Ranges that change without a write: a hole, zeros, a range cut
	 * out (the end moves back) and one put in (it moves on). */
	for (unsigned i = 0; i < 4; i++)
		memset(back + i * 1024, 'A' + i, 1024);
	for (off_t at = 0; at < 40960; at += 4096)
		pwrite(fd, back, 4096, at);
	say("fallocate punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096));
	say("pread punched", pread(fd, back, 100, 4096) == 100 && !memcmp(back, (char[100]){ 0 }, 100));
	say("fallocate zero range", fallocate(fd, FALLOC_FL_ZERO_RANGE, 9000, 3000));
	say("pread zeroed", pread(fd, back, 200, 8900) == 200 && back[99] == 'A' && back[100] == 0 &&
			    back[199] == 0);
	say("fallocate collapse", fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 8192, 8192));
	say("size after collapse", size_of(fd));
	say("pread past the end after collapse", pread(fd, back, 8192, 32768 - 100));
	say("pread collapsed", pread(fd, back, 4096, 8192) == 4096 && back[0] == 'A' && back[3072] == 'D');
	afd = open_tagged(path, O_WRONLY | O_APPEND);
	say("append after collapse", write(afd, buf, 4096));
	say("position after append after collapse", lseek(afd, 0, SEEK_CUR));
	say("close append after collapse", close(afd));
	say("size after append after collapse", size_of(fd));
	say("fallocate insert", fallocate(fd, FALLOC_FL_INSERT_RANGE, 4096, 8192));
	say("size after insert", size_of(fd));
	say("pread inserted", pread(fd, back, 100, 8192) == 100 && !memcmp(back, (char[100]){ 0 }, 100));
	say("pread after the insert", pread(fd, back, 8192, 40960 - 4096));
	say("lseek end after insert", lseek(fd, 0, SEEK_END));
	say("fallocate collapse unaligned", fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 100, 100));
	say("fallocate insert past the end", fallocate(fd, FALLOC_FL_INSERT_RANGE, 1 << 20, 4096));
	say("fallocate of a petabyte", fallocate(fd, 0, 0, 1LL << 50));
	afd = open_tagged(path, O_WRONLY | O_APPEND);
	say("append after failed ones", write(afd, buf, 100));
	say("close append after failed ones", close(afd));
	say("size after failed ones", size_of(fd));
	say("write read-only", write(open_tagged(path, O_RDONLY), buf, 10));
	/* Duplicates share the position. */
	fd2 = dup(fd);
	say("dup", fd2 >= 0);
	say("lseek dup", lseek(fd2, 100, SEEK_SET));
	say("write dup", write(fd2, buf, 50));
	say("position seen by the original", lseek(fd, 0, SEEK_CUR));
	fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	say("F_DUPFD_CLOEXEC above 100", fd3 >= 100);
	say("dup2", dup2(fd, fd3));
	say("write dup2", write(fd3, buf, 25));
	say("dup3", dup3(fd, fd3, O_CLOEXEC));
	say("close dup", close(fd2));
	say("close dup3", close(fd3));
	say("write after closing the duplicates", write(fd, buf, 10));
	say("lseek after", lseek(fd, 0, SEEK_CUR));
	/* O_APPEND: the end, whatever the position. */
	afd = open_tagged(path, O_WRONLY | O_APPEND);
	say("open append", afd >= 0);
	say("lseek append", lseek(afd, 0, SEEK_SET));
	say("write append", write(afd, buf, 123));
	say("position after append", lseek(afd, 0, SEEK_CUR));
	say("pwrite append", pwrite(afd, buf, 7, 0));
	say("size after appends", size_of(fd));
	say("close append", close(afd));
	/* fork: the child's plain I/O sees what the parent wrote. */
	say("write before fork", pwrite(fd, "forked!", 7, 30000));
	pid = fork();
	if (pid == 0) {
		char b[8] = { 0 };

		_exit(pread(fd, b, 7, 30000) == 7 && !memcmp(b, "forked!", 7) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	say("child read what the parent wrote", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* exec: the new program reads the file. */
	say("write before exec", pwrite(fd, "exec!", 5, 30010));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char off[32], in[4200];

		snprintf(off, sizeof(off), "skip=30010");
		snprintf(in, sizeof(in), "if=%s", path);
		execlp("dd", "dd", "status=none", "bs=1", "count=5", off, in, NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	printf("\n");
	say("exec'd program", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	/* Locks: what was written under the lock is in the file after it. */
	say("flock", flock(fd, LOCK_EX));
	say("write under lock", pwrite(fd, "locked", 6, 30020));
	say("unlock", flock(fd, LOCK_UN));
	/* mmap takes the file out of the daemon's hands; the data is there. */
	say("write before mmap", pwrite(fd, "mapped", 6, 30030));
	m = mmap(NULL, 40960, PROT_READ, MAP_SHARED, fd, 0);
	say("mmap", m != MAP_FAILED);
	say("mmap data", m != MAP_FAILED && !memcmp((char *)m + 30030, "mapped", 6));
	if (m != MAP_FAILED)
		munmap(m, 40960);
	say("write after mmap", pwrite(fd, "plain!", 6, 30040));
	say("pread after mmap", pread(fd, back, 6, 30040) == 6 && !memcmp(back, "plain!", 6));
	say("close", close(fd));
	say("close again", close(fd));
	/* sendfile and copy_file_range from a tagged descriptor. */
	fd = open_tagged(path, O_RDWR);
	say("pwrite for sendfile", pwrite(fd, "sent", 4, 0));
	snprintf(path2, sizeof(path2), "%s.copy", path);
	fd2 = open(path2, O_CREAT | O_RDWR | O_TRUNC, 0644);
	say("sendfile", sendfile(fd2, fd, &(off_t){ 0 }, 4));
	say("copy_file_range", copy_file_range(fd, &(off64_t){ 0 }, fd2, &(off64_t){ 4 }, 4, 0));
	say("sent data", pread(fd2, back, 8, 0) == 8 && !memcmp(back, "sentsent", 8));
	close(fd2);
	unlink(path2);
	say("final size", size_of(fd));
	say("close", close(fd));
	return 0;
}

/* ---- where an error shows ---- */

static int cmd_errors(const char *path, uint32_t mib, const char *mode, uint32_t kib)
{
	static char buf[1 << 20];
	size_t len = (size_t)kib << 10;
	uint64_t acked = 0;
	int fd, write_err = 0, fsync_err = 0, fsync2_err = 0, close_err;
	bool sync = !strcmp(mode, "fsync");

	if ((!sync && strcmp(mode, "close")) || !kib || len > sizeof(buf))
		return 2;
	fd = open_tagged_seq(path, O_CREAT | O_WRONLY | O_TRUNC);
	if (fd < 0) {
		perror("dwork: open");
		return 2;
	}
	for (uint64_t i = 0; i < ((uint64_t)mib << 20) / len; i++) {
		ssize_t n;

		pattern(buf, len, 'E', i, 0);
		n = write(fd, buf, len);
		if (n < 0 && !write_err)
			write_err = errno;
		if (n > 0)
			acked += (uint64_t)n;   /* (short: the next write says why) */
	}
	if (sync) {
		fsync_err = fsync(fd) < 0 ? errno : 0;
		fsync2_err = fsync(fd) < 0 ? errno : 0;
	}
	close_err = close(fd) < 0 ? errno : 0;
	printf("{\"acked\": %" PRIu64 ", \"write\": %d, \"fsync\": %d, \"fsync2\": %d, \"close\": %d}\n", acked,
	       write_err, fsync_err, fsync2_err, close_err);
	return 0;
}

int main(int argc, char **argv)
{
	/* The parent of a test may leave SIGPIPE ignored; this one wants it. */
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "records"))
		return cmd_records(argv[2], atof(argv[3]), strtoull(argv[4], NULL, 0),
				   (argc == 6 ? strtoull(argv[5], NULL, 0) : 64) << 20);
	if (argc == 4 && !strcmp(argv[1], "xproc"))
		return cmd_xproc(argv[2], (uint32_t)atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "fsync"))
		return cmd_fsync(argv[2], argv[3], (uint32_t)atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "calls"))
		return cmd_calls(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "errors"))
		return cmd_errors(argv[2], (uint32_t)atoi(argv[3]), argv[4],
				  argc == 6 ? (uint32_t)atoi(argv[5]) : 1024);
	fprintf(stderr, "usage: dwork records DIR SECONDS SEED [MiB] | xproc FILE ROUNDS | "
		"fsync FILE DEVICE BLOCKS | calls FILE | errors FILE MiB fsync|close [KiB]\n");
	return 2;
}
