/* SPDX-License-Identifier: MIT */
/*
 * Tier stores on real files (iosigd/tier_store.c, tier_recover.c):
 *
 *  - bad store files - a newer format, a foreign file, garbage, a
 *    truncated store, a link, one another user could write - are refused
 *    with the path and what to do, and not changed by a byte;
 *  - a store survives its process: what was logged is applied to the home
 *    files found again by path or by handle, and a home file replaced
 *    meanwhile gets nothing;
 *  - simulated crashes, hundreds of them: writes to the store and the home
 *    files, with the engine's rules (a home write over tiered data is made
 *    durable, then a HOME record says so; places are reused only in place);
 *    a crash keeps what was
 *    durable at the last sync and any subset of the 512-byte sectors
 *    written after it, then tears or zeroes the journal's last record at a
 *    random byte.  After recovery every byte of every home file holds what
 *    the last sync acknowledged or something written after it - never
 *    anything older, never a byte of another range.  Without power loss (a
 *    killed process) every byte is exactly the newest.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "tier_format.h"
#include "tier_recover.h"
#include "tier_store.h"

static char dir[PATH_MAX];
static char spath[PATH_MAX + 32];

static void path_in(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/iosig-tier-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	path_in(spath, sizeof(spath), "store");
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct tstore *open_store(uint64_t size)
{
	struct tstore_cfg cfg = { .name = "ssd", .path = spath, .size = size };
	struct tstore *s = NULL;
	char err[512];

	if (tstore_open(&cfg, &s, err, sizeof(err)) < 0)
		fail_msg("tstore_open: %s", err);
	return s;
}

/* Reads a whole file into a malloc'ed buffer (*len bytes). */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

static void spit(const char *path, const void *b, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
}

/* Opening path as a store fails with a message holding `want`, and the
 * file is unchanged. */
static void refused(const char *want)
{
	struct tstore_cfg cfg = { .name = "ssd", .path = spath, .size = 4 << 20 };
	struct tstore *s = NULL;
	uint8_t *before, *after;
	size_t lb, la;
	char err[512] = "";

	before = slurp(spath, &lb);
	assert_true(tstore_open(&cfg, &s, err, sizeof(err)) < 0);
	assert_null(s);
	if (!strstr(err, want) || !strstr(err, spath))
		fail_msg("message '%s' lacks '%s' or the path", err, want);
	after = slurp(spath, &la);
	assert_int_equal(la, lb);
	assert_memory_equal(before, after, la);
	free(before);
	free(after);
}

static void test_bad_stores(void **state)
{
	static uint8_t slot[TIER_SB_SLOT];
	struct tstore *s;
	uint8_t *img;
	size_t len;
	char link[PATH_MAX + 32];

	(void)state;
	/* Foreign: a text file, a file of zeros. */
	spit(spath, "#!/bin/sh\necho not a store\n", 27, 0600);
	refused("not an iosig tier store");
	img = calloc(1, 1 << 20);
	spit(spath, img, 1 << 20, 0600);
	refused("only zeros");
	free(img);
	unlink(spath);

	/* A real store, then damaged in each way. */
	s = open_store(4 << 20);
	assert_true(s->created);
	tstore_close(s);
	img = slurp(spath, &len);
	assert_int_equal(len, 4 << 20);

	/* Newer format in slot 0 (slot 1 was never written). */
	memcpy(slot, img, TIER_SB_SLOT);
	slot[8] = TIER_FORMAT + 1;
	spit(spath, img, len, 0600);
	{
		int fd = open(spath, O_WRONLY);

		assert_int_equal(pwrite(fd, slot, sizeof(slot), 0), (ssize_t)sizeof(slot));
		close(fd);
	}
	refused("newer iosigd");
	/* Garbage over the superblock. */
	memcpy(slot, img, TIER_SB_SLOT);
	slot[40] ^= 0x10;
	{
		int fd = open(spath, O_WRONLY);

		assert_int_equal(pwrite(fd, slot, sizeof(slot), 0), (ssize_t)sizeof(slot));
		close(fd);
	}
	refused("damaged");
	/* Truncated. */
	spit(spath, img, len / 2, 0600);
	refused("truncated");
	/* Writable by others, owned by another user. */
	spit(spath, img, len, 0606);
	assert_int_equal(chmod(spath, 0606), 0);
	refused("writable by it alone");
	assert_int_equal(chmod(spath, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(spath, 65534, 65534), 0);
		refused("owned by uid 65534");
		assert_int_equal(chown(spath, 0, 0), 0);
	}
	/* A symbolic link to a good store. */
	path_in(link, sizeof(link), "good");
	assert_int_equal(rename(spath, link), 0);
	assert_int_equal(symlink(link, spath), 0);
	{
		struct tstore_cfg cfg = { .name = "ssd", .path = spath, .size = 4 << 20 };
		char err[512];

		assert_true(tstore_open(&cfg, &s, err, sizeof(err)) < 0);
		assert_non_null(strstr(err, "symbolic link"));
	}
	unlink(spath);
	assert_int_equal(rename(link, spath), 0);
	/* And the good store opens as it was. */
	s = open_store(4 << 20);
	assert_false(s->created);
	assert_int_equal(s->sb.generation, 1);
	tstore_close(s);
	free(img);
	unlink(spath);
}

/* ---- a store's records applied by a later process ---- */

static int home_fd(const char *name, size_t size)
{
	char p[PATH_MAX + 32];
	int fd;

	path_in(p, sizeof(p), name);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static void test_apply(void **state)
{
	struct tier_file_id id;
	struct trecover rec;
	struct tstore *s;
	uint8_t buf[10000], back[10000];
	char err[512], p[PATH_MAX + 32];
	int a = home_fd("a", 1 << 20), b = home_fd("b", 1 << 20), r;

	(void)state;
	s = open_store(4 << 20);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(tier_file_id_of(a, &id), 0);
	assert_int_equal(tstore_log_file(s, 10, 1, &id), 0);
	assert_int_equal(tier_file_id_of(b, &id), 0);
	assert_int_equal(tstore_log_file(s, 11, 2, &id), 0);
	assert_int_equal(tstore_log_data(s, 12, TIER_REC_DATA, 1, 5000, buf, 10000, 777, false), 0);
	assert_int_equal(tstore_log_data(s, 13, TIER_REC_DATA, 2, 0, buf, 100, 20000, true), 0);
	assert_int_equal(tstore_log_data(s, 14, TIER_REC_PAD, 0, 0, NULL, 4096, 24576, false), 0);
	/* b's range then went home. */
	assert_int_equal(pwrite(b, buf, 100, 0), 100);
	assert_int_equal(fsync(b), 0);
	assert_int_equal(tstore_log_home(s, 15, 2, 0, 100), 0);
	tstore_close(s);

	/* b is replaced by another file of the same name: nothing for it. */
	path_in(p, sizeof(p), "b");
	unlink(p);
	close(b);
	b = home_fd("b", 1 << 20);
	s = open_store(4 << 20);
	memset(&rec, 0, sizeof(rec));
	r = trecover_run(&s, 1, false, NULL, NULL, &rec, err, sizeof(err));
	assert_int_equal(r, 0);
	assert_int_equal(rec.records, 6);
	assert_int_equal(rec.files, 1);
	assert_int_equal(rec.files_missing, 1);
	assert_int_equal(rec.orphan_records, 2);
	assert_int_equal(rec.copied_bytes, 10000);
	assert_int_equal(rec.max_seq, 15);
	assert_int_equal(pread(a, back, sizeof(back), 5000), (ssize_t)sizeof(back));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(pread(b, back, 100, 0), 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(back[i], 0);

	/* Reset: a new generation; the old records are gone for good. */
	assert_int_equal(tstore_reset(s, 16, 0, 0, err, sizeof(err)), 0);
	assert_int_equal(s->sb.generation, 2);
	tstore_close(s);
	s = open_store(4 << 20);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(trecover_run(&s, 1, false, NULL, NULL, &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.records, 0);
	assert_int_equal(rec.corrupt, 0);

	/* Found by handle after a rename (as root). */
	assert_int_equal(tier_file_id_of(a, &id), 0);
	assert_int_equal(tstore_log_file(s, 20, 1, &id), 0);
	assert_int_equal(tstore_log_data(s, 21, TIER_REC_DATA, 1, 0, "handle", 6, 0, false), 0);
	path_in(p, sizeof(p), "a");
	{
		char q[PATH_MAX + 32];

		path_in(q, sizeof(q), "a-renamed");
		assert_int_equal(rename(p, q), 0);
	}
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(trecover_run(&s, 1, false, NULL, NULL, &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.files_missing, 1);   /* the path is no help */
	if (geteuid() == 0) {
		memset(&rec, 0, sizeof(rec));
		assert_int_equal(trecover_run(&s, 1, true, NULL, NULL, &rec, err, sizeof(err)), 0);
		assert_int_equal(rec.files, 1);
		assert_int_equal(pread(a, back, 6, 0), 6);
		assert_memory_equal(back, "handle", 6);
	}
	/* A new size applies at a reset. */
	assert_int_equal(tstore_reset(s, 30, 8 << 20, 0, err, sizeof(err)), 0);
	assert_int_equal(s->sb.store_bytes, 8 << 20);
	tstore_close(s);
	s = open_store(8 << 20);
	assert_int_equal(s->sb.generation, 3);
	tstore_close(s);
	close(a);
	close(b);
}

/* ---- simulated crashes ---- */

#define NHOME 2
#define HSIZE (128 << 10)
#define SSIZE (2 << 20)

/* What each byte of a home file may hold after a crash: a bitmap of the
 * values acknowledged or written since. */
struct model {
	uint8_t cur[NHOME][HSIZE];          /* what a reader sees now */
	uint8_t allowed[NHOME][HSIZE][32];  /* 256-bit sets */
	/* where each byte's newest copy is: store offset + 1, 0 = home */
	uint64_t where[NHOME][HSIZE];
	bool recorded[NHOME][HSIZE];        /* some DATA record of this generation */
	bool durable[SSIZE];                /* store data byte live at the last sync */
	uint64_t next_loc;
	uint64_t seq;
	uint64_t jsync;                     /* journal bytes durable at the last sync */
	unsigned ordered;                   /* writes that put their record first */
	uint8_t tag;
};

static struct model M;
static uint8_t *snap_store;
static size_t snap_store_len;
static uint8_t *snap_home[NHOME];
static int hfd[NHOME];
static char hpath[NHOME][PATH_MAX + 32];

static void allow(int f, uint64_t off, uint8_t v)
{
	M.allowed[f][off][v / 8] |= (uint8_t)(1u << (v % 8));
}

/* A store sync: every live byte of the data area is durable now. */
static void mark_durable(void)
{
	memset(M.durable, 0, sizeof(M.durable));
	for (int f = 0; f < NHOME; f++)
		for (uint64_t o = 0; o < HSIZE; o++)
			if (M.where[f][o])
				M.durable[M.where[f][o] - 1] = true;
}

/* The acknowledged state: durable copies of the store and home files. */
static void sync_point(struct tstore *s)
{
	assert_int_equal(tstore_sync(s), 0);
	M.jsync = s->jhead;
	mark_durable();
	for (int f = 0; f < NHOME; f++)
		assert_int_equal(fsync(hfd[f]), 0);
	free(snap_store);
	snap_store = slurp(spath, &snap_store_len);
	for (int f = 0; f < NHOME; f++) {
		size_t l;

		free(snap_home[f]);
		snap_home[f] = slurp(hpath[f], &l);
		assert_int_equal(l, HSIZE);
		for (uint64_t o = 0; o < HSIZE; o++) {
			memset(M.allowed[f][o], 0, 32);
			allow(f, o, M.cur[f][o]);
		}
	}
}

static uint8_t next_tag(void)
{
	return ++M.tag ? M.tag : ++M.tag;
}

/* A write of file f at [off, off + len) to the tier: in place when the
 * whole range is one contiguous copy in the store, else at a new place. */
static void tier_write(struct tstore *s, int f, uint64_t off, uint64_t len)
{
	uint8_t buf[16384], v = next_tag();
	uint64_t loc = M.next_loc;
	bool in_place = M.where[f][off] != 0, ordered = false;

	for (uint64_t i = 1; i < len && in_place; i++)
		in_place = M.where[f][off + i] == M.where[f][off] + i;
	if (in_place)
		loc = M.where[f][off] - 1;
	else if (M.next_loc + len > s->sb.data_bytes)
		return;   /* full: the engine would write home instead */
	memset(buf, v, len);
	/* The engine's rule: a write into a sector holding bytes a sync made
	 * durable (and that are still needed) puts its record first. */
	for (uint64_t b = loc / TIER_SECTOR * TIER_SECTOR;
	     b < (loc + len + TIER_SECTOR - 1) / TIER_SECTOR * TIER_SECTOR && !ordered; b++)
		ordered = M.durable[b];
	if (ordered) {
		/* Its sync makes everything written so far durable, and the
		 * record; not the payload, written after it. */
		uint64_t j0 = s->jhead;
		int fd;

		free(snap_store);
		snap_store = slurp(spath, &snap_store_len);
		mark_durable();
		assert_int_equal(tstore_log_data(s, ++M.seq, TIER_REC_DATA, (uint32_t)f + 1, off, buf,
						 len, loc, true), 0);
		fd = open(spath, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, snap_store + s->sb.journal_off + j0, s->jhead - j0,
				       (off_t)(s->sb.journal_off + j0)), (ssize_t)(s->jhead - j0));
		close(fd);
		M.jsync = s->jhead;
		M.ordered++;
	} else {
		assert_int_equal(tstore_log_data(s, ++M.seq, TIER_REC_DATA, (uint32_t)f + 1, off, buf,
						 len, loc, false), 0);
	}
	if (!in_place)
		M.next_loc += len;
	for (uint64_t i = 0; i < len; i++) {
		M.cur[f][off + i] = v;
		allow(f, off + i, v);
		M.where[f][off + i] = loc + i + 1;
		M.recorded[f][off + i] = true;
	}
}

/* A write of file f home (a workload write, or the tier's copy going
 * home): over tiered data, made durable and then told with a HOME record. */
static void home_write(struct tstore *s, int f, uint64_t off, uint64_t len, bool migrate)
{
	uint8_t buf[16384], v = next_tag();
	bool rec = false;

	for (uint64_t i = 0; i < len; i++) {
		buf[i] = migrate ? M.cur[f][off + i] : v;
		rec |= M.recorded[f][off + i];
	}
	assert_int_equal(pwrite(hfd[f], buf, len, (off_t)off), (ssize_t)len);
	if (rec) {
		size_t l;

		assert_int_equal(fsync(hfd[f]), 0);
		/* Durable now: a power loss keeps it. */
		free(snap_home[f]);
		snap_home[f] = slurp(hpath[f], &l);
		assert_int_equal(tstore_log_home(s, ++M.seq, (uint32_t)f + 1, off, len), 0);
	}
	for (uint64_t i = 0; i < len; i++) {
		M.cur[f][off + i] = buf[i];
		allow(f, off + i, buf[i]);
		/* The place is dead now, but a crash could still need it: the
		 * model never reuses it (places are reused only in place). */
		M.where[f][off + i] = 0;
		if (rec)
			M.recorded[f][off + i] = false;
	}
}

/* Builds what the disk holds after a power loss: the durable snapshot,
 * plus each sector written since with probability 1/2. */
static void crash_image(const char *path, const uint8_t *snap, size_t slen, unsigned seed,
			uint64_t tear_from, uint64_t tear_to)
{
	size_t len;
	uint8_t *now = slurp(path, &len);

	assert_int_equal(len, slen);
	for (size_t o = 0; o < len; o += TIER_SECTOR) {
		size_t n = len - o < TIER_SECTOR ? len - o : TIER_SECTOR;

		if (memcmp(now + o, snap + o, n) && rand_r(&seed) % 2)
			memcpy(now + o, snap + o, n);
	}
	/* The journal's tail torn at a byte: zeros (never written) from there. */
	if (tear_to > tear_from)
		memset(now + tear_from, rand_r(&seed) % 3 ? 0 : 0x5a, tear_to - tear_from);
	spit(path, now, len, 0600);
	free(now);
}

static void check_home(bool exact)
{
	for (int f = 0; f < NHOME; f++) {
		size_t l;
		uint8_t *h = slurp(hpath[f], &l);

		assert_int_equal(l, HSIZE);
		for (uint64_t o = 0; o < HSIZE; o++) {
			uint8_t v = h[o];

			if (exact ? v != M.cur[f][o] : !(M.allowed[f][o][v / 8] & (1u << (v % 8))))
				fail_msg("file %d byte %llu: %u, newest %u (%s)", f,
					 (unsigned long long)o, v, M.cur[f][o],
					 exact ? "after a kill" : "not acknowledged nor written since");
		}
		free(h);
	}
}

static void one_round(unsigned seed, bool power_loss, bool handles, unsigned *stats)
{
	struct tstore *s = open_store(SSIZE);
	struct trecover rec;
	char err[512];
	unsigned n = 5 + (unsigned)(rand_r(&seed) % 40);
	uint64_t jstart, jend;

	assert_int_equal(s->jhead, 0);
	for (int f = 0; f < NHOME; f++) {
		struct tier_file_id id;

		assert_int_equal(tier_file_id_of(hfd[f], &id), 0);
		assert_int_equal(tstore_log_file(s, ++M.seq, (uint32_t)f + 1, &id), 0);
	}
	sync_point(s);
	for (unsigned i = 0; i < n; i++) {
		int f = (int)(rand_r(&seed) % NHOME), op = (int)(rand_r(&seed) % 10);
		uint64_t len = 1 + rand_r(&seed) % (op < 2 ? 16384 : 3000);
		uint64_t off = rand_r(&seed) % (HSIZE - len);

		if (op < 6)
			tier_write(s, f, off, len);
		else if (op < 8)
			home_write(s, f, off, len, false);
		else if (op < 9)
			home_write(s, f, off, len, true);
		else
			sync_point(s);
	}
	jstart = s->sb.journal_off;
	jend = s->sb.journal_off + s->jhead;
	tstore_close(s);
	if (power_loss) {
		/* Only what came after the last sync can be torn. */
		uint64_t tear = jend > jstart + 200 ? jend - 1 - rand_r(&seed) % 200 : jend;

		if (tear < jstart + M.jsync)
			tear = jstart + M.jsync;
		crash_image(spath, snap_store, snap_store_len, seed, tear, jend);
		for (int f = 0; f < NHOME; f++)
			crash_image(hpath[f], snap_home[f], HSIZE, seed + 1 + (unsigned)f, 0, 0);
	}
	s = open_store(SSIZE);
	memset(&rec, 0, sizeof(rec));
	if (trecover_run(&s, 1, handles, NULL, NULL, &rec, err, sizeof(err)) < 0)
		fail_msg("recovery: %s", err);
	check_home(!power_loss);
	stats[0] += (unsigned)rec.corrupt;
	stats[1] += (unsigned)rec.torn_sectors;
	stats[2] += (unsigned)(rec.data_rejected_bytes > 0);
	/* Recovered: every byte is home; the next generation starts empty. */
	assert_int_equal(tstore_reset(s, M.seq + 1, 0, 0, err, sizeof(err)), 0);
	tstore_close(s);
	for (int f = 0; f < NHOME; f++) {
		size_t l;
		uint8_t *h = slurp(hpath[f], &l);

		memcpy(M.cur[f], h, HSIZE);
		free(h);
		memset(M.where[f], 0, sizeof(M.where[f]));
		memset(M.recorded[f], 0, sizeof(M.recorded[f]));
	}
	M.next_loc = 0;
	memset(M.durable, 0, sizeof(M.durable));
}

/* tstore_read_data(): what this generation's records wrote reads back
 * verified, also in pieces that cut sectors; a sector that changed behind
 * the store's back (a device that dropped a failed write-back and reads
 * zeros) is refused; sectors no record wrote are not judged; a new
 * generation forgets the old sums. */
static void test_read_verified(void **state)
{
	struct tstore *s;
	uint8_t data[8192], back[8192], zero[4096] = { 0 };
	int fd;

	(void)state;
	unlink(spath);
	s = open_store(4 << 20);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(tstore_log_data(s, 1, TIER_REC_DATA, 1, 0, data, 6000, 100, false), 0);
	assert_int_equal(tstore_read_data(s, back, 6000, 100), 0);
	assert_memory_equal(back, data, 6000);
	assert_int_equal(tstore_read_data(s, back, 10, 4000), 0);   /* inside one sector */
	assert_memory_equal(back, data + 3900, 10);
	/* Never written by a record: not judged. */
	assert_int_equal(tstore_read_data(s, back, 4096, 1 << 20), 0);
	/* Zeros where the record's bytes were: refused, also by a read that
	 * touches the sector only in part. */
	fd = open(spath, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, zero, 512, (off_t)tstore_data_pos(s, 2048)), 512);
	close(fd);
	assert_int_equal(tstore_read_data(s, back, 6000, 100), -EBADMSG);
	assert_int_equal(tstore_read_data(s, back, 1, 2100), -EBADMSG);
	assert_int_equal(tstore_read_data(s, back, 1000, 100), 0);   /* sectors 0, 1: intact */
	assert_int_equal(tstore_pread(s, back, 512, 2048), 0);      /* unverified: the zeros */
	/* Rewritten through a record: its new sum. */
	assert_int_equal(tstore_log_data(s, 2, TIER_REC_DATA, 1, 1948, data, 512, 2048, false), 0);
	assert_int_equal(tstore_read_data(s, back, 6000, 100), 0);
	/* A new generation: the old bytes are nobody's data. */
	fd = open(spath, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, zero, 512, (off_t)tstore_data_pos(s, 2048)), 512);
	close(fd);
	{
		char err[256];

		assert_int_equal(tstore_reset(s, 10, 0, 0, err, sizeof(err)), 0);
	}
	assert_int_equal(tstore_read_data(s, back, 6000, 100), 0);
	tstore_close(s);
}

/* A record whose payload could not be written (the store's filesystem
 * went read-only, the device failed) leaves the records beside it
 * readable: the sector they share is checked against what it holds, not
 * against the sum of bytes never written there. */
static void test_failed_write(void **state)
{
	struct tstore *s;
	uint8_t a[6000], b[3000], back[6000];
	struct rlimit old, lim;

	(void)state;
	unlink(spath);
	s = open_store(4 << 20);
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	/* a ends in sector 11 (5632..6143), which b starts in. */
	assert_int_equal(tstore_log_data(s, 1, TIER_REC_DATA, 1, 0, a, sizeof(a), 100, false), 0);
	/* The journal (before the data area) takes b's record, the data area
	 * from a's end on takes no byte: EFBIG, as a write-back error would. */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)tstore_data_pos(s, 100 + sizeof(a));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(tstore_log_data(s, 2, TIER_REC_DATA, 1, sizeof(a), b, sizeof(b), 100 + sizeof(a), false),
			 -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(tstore_read_data(s, back, sizeof(a), 100), 0);
	assert_memory_equal(back, a, sizeof(a));
	/* Written after all: both verified again. */
	assert_int_equal(tstore_log_data(s, 3, TIER_REC_DATA, 1, sizeof(a), b, sizeof(b), 100 + sizeof(a), false), 0);
	assert_int_equal(tstore_read_data(s, back, sizeof(a), 100), 0);
	assert_memory_equal(back, a, sizeof(a));
	assert_int_equal(tstore_read_data(s, back, sizeof(b), 100 + sizeof(a)), 0);
	assert_memory_equal(back, b, sizeof(b));
	tstore_close(s);
}

static void test_crashes(void **state)
{
	unsigned rounds = getenv("IOSIG_TIER_ROUNDS") ? (unsigned)atoi(getenv("IOSIG_TIER_ROUNDS")) : 150;
	unsigned stats[3] = { 0 };

	(void)state;
	memset(&M, 0, sizeof(M));
	unlink(spath);
	for (int f = 0; f < NHOME; f++) {
		char name[8];

		snprintf(name, sizeof(name), "h%d", f);
		path_in(hpath[f], sizeof(hpath[f]), name);
		hfd[f] = home_fd(name, HSIZE);
	}
	for (unsigned r = 0; r < rounds; r++) {
		/* Each round's home files are re-opened: a crash image replaced
		 * them on disk (same inode: written in place). */
		one_round(1000 + r, r % 4 != 0, r % 2 == 0, stats);
	}
	/* The crashes did tear things (else the test proves little). */
	print_message("%u rounds: %u corrupt journal stretches, %u torn sectors, %u rounds with lost unacknowledged writes, %u ordered writes\n",
		      rounds, stats[0], stats[1], stats[2], M.ordered);
	assert_true(stats[0] > 0 && stats[2] > 0 && M.ordered > 0);
	for (int f = 0; f < NHOME; f++)
		close(hfd[f]);
	free(snap_store);
	for (int f = 0; f < NHOME; f++)
		free(snap_home[f]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_stores),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_read_verified),
		cmocka_unit_test(test_failed_write),
		cmocka_unit_test(test_crashes),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
