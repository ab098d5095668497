/* SPDX-License-Identifier: MIT */
/*
 * tier_store.c - a tier store on disk: opening (or creating) it with every
 * refusal a user can act on, its superblock slots, the journal and the data
 * area.  Format in tier_format.h; what the daemon keeps in it in
 * docs/tiers.md.
 *
 * A store file is created under a temporary name, preallocated, given its
 * superblock, made durable and only then renamed to its path (never over
 * an existing name), so a crash while creating leaves no half store.  A
 * block device is formatted only when its first 8 KiB (both superblock
 * slots) are zero: a device holding anything else is never written.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tier_store.h"

/* Zeros to write (journal clearing, padding). */
static const uint8_t zeros[64 << 10];

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return r;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;   /* past the end: a truncated store */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int sync_fd(int fd, bool blockdev)
{
	return (blockdev ? fsync(fd) : fdatasync(fd)) < 0 ? -errno : 0;
}

/* Writes sb into slot (made durable). */
static int write_slot(int fd, bool blockdev, const struct tier_sb *sb, unsigned slot)
{
	static uint8_t buf[TIER_SB_SLOT];
	int r;

	tier_sb_encode(sb, buf);
	r = write_all(fd, buf, sizeof(buf), (uint64_t)slot * TIER_SB_SLOT);
	return r < 0 ? r : sync_fd(fd, blockdev);
}

/* A fresh superblock for a store of `bytes`. */
static int new_sb(const struct tstore_cfg *cfg, uint64_t bytes, bool blockdev, struct tier_sb *sb)
{
	struct timespec ts;

	memset(sb, 0, sizeof(*sb));
	if (tier_sb_geometry(bytes, cfg->journal, sb) < 0)
		return -EINVAL;
	sb->format = TIER_FORMAT;
	if (getrandom(sb->uuid, sizeof(sb->uuid), 0) != (ssize_t)sizeof(sb->uuid))
		return -EIO;
	sb->generation = 1;
	sb->seq_base = 1;
	sb->flags = (cfg->is_volatile ? TIER_SB_VOLATILE : 0) | (blockdev ? TIER_SB_BLOCKDEV : 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	sb->created_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snprintf(sb->name, sizeof(sb->name), "%s", cfg->name);
	return 0;
}

/* Reserves [0, bytes) of a store file. */
static int reserve(int fd, uint64_t bytes)
{
	int r = posix_fallocate(fd, 0, (off_t)bytes);

	/* posix_fallocate returns the error number itself. */
	return r ? -r : 0;
}

static void unlink_at_dir(const char *path)
{
	unlink(path);
}

/* Creates the store file cfg->path: a temporary file in its directory,
 * preallocated, with its superblock, durable, then renamed into place. */
static int create_file(const struct tstore_cfg *cfg, struct tstore *s, char *err, size_t errlen)
{
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	struct tier_sb sb;
	int fd, dfd, r;

	if (snprintf(dir, sizeof(dir), "%s", cfg->path) >= (int)sizeof(dir) ||
	    snprintf(tmp, sizeof(tmp), "%s.new-XXXXXX", cfg->path) >= (int)sizeof(tmp))
		return fail(err, errlen, -ENAMETOOLONG, "%s: path too long", cfg->path);
	slash = strrchr(dir, '/');
	if (!slash)
		return fail(err, errlen, -EINVAL, "%s: a tier store needs an absolute path", cfg->path);
	*slash = '\0';
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	if (cfg->mkdir_parent && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return fail(err, errlen, -errno, "%s: cannot create the directory %s: %s", cfg->path,
			    dir, strerror(errno));
	if (new_sb(cfg, cfg->size, false, &sb) < 0)
		return fail(err, errlen, -EINVAL,
			    "%s: a size of %" PRIu64 " bytes is too small for a tier store (at least 1MiB)",
			    cfg->path, cfg->size);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "%s: cannot create the tier store in %s: %s",
			    cfg->path, dir, strerror(errno));
	if (fchmod(fd, 0600) < 0) {
		r = fail(err, errlen, -errno, "%s: chmod: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	r = reserve(fd, sb.store_bytes);
	if (r < 0) {
		r = fail(err, errlen, r,
			 "%s: cannot reserve %" PRIu64 " bytes for the tier store: %s; free space on the mount or give the tier a smaller size",
			 cfg->path, sb.store_bytes, strerror(-r));
		goto out_unlink;
	}
	r = write_slot(fd, false, &sb, 0);
	if (r < 0) {
		r = fail(err, errlen, r, "%s: cannot write the superblock: %s", tmp, strerror(-r));
		goto out_unlink;
	}
	if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, cfg->path, RENAME_NOREPLACE) < 0) {
		r = fail(err, errlen, -errno, "%s: cannot put the new tier store in place: %s",
			 cfg->path, strerror(errno));
		goto out_unlink;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	s->fd = fd;
	s->sb = sb;
	s->slot = 0;
	s->dev_bytes = sb.store_bytes;
	s->created = true;
	return 0;

out_unlink:
	unlink_at_dir(tmp);
	close(fd);
	return r;
}

/* Reads both slots and picks the superblock, or refuses with a reason. */
static int read_sb(struct tstore *s, const struct tstore_cfg *cfg, char *err, size_t errlen)
{
	static uint8_t slot[2][TIER_SB_SLOT];
	enum tier_sb_verdict v[2];
	struct tier_sb sb[2];
	const char *why[2] = { "", "" };
	uint32_t fmt = 0;
	int r;

	if (s->dev_bytes < TIER_HEAD_BYTES)
		return fail(err, errlen, -EUCLEAN,
			    "%s: not an iosig tier store (%" PRIu64 " bytes, too short for one); iosigd never overwrites a file it did not create: remove it, or give the tier another path",
			    s->path, s->dev_bytes);
	for (unsigned i = 0; i < 2; i++) {
		r = read_all(s->fd, slot[i], TIER_SB_SLOT, (uint64_t)i * TIER_SB_SLOT);
		if (r < 0)
			return fail(err, errlen, r, "%s: cannot read the superblock: %s", s->path,
				    strerror(-r));
		v[i] = tier_sb_decode(slot[i], &sb[i], &fmt, &why[i]);
	}
	if (v[0] == TIER_SB_NEWER || v[1] == TIER_SB_NEWER)
		return fail(err, errlen, -EPROTONOSUPPORT,
			    "%s: a tier store of format %u, written by a newer iosigd (this one knows format %u); start that iosigd to apply its data, or move the file away if its data is not needed; nothing was changed",
			    s->path, fmt, TIER_FORMAT);
	if (v[0] == TIER_SB_OK || v[1] == TIER_SB_OK) {
		unsigned k = v[0] != TIER_SB_OK ? 1 :
			     v[1] != TIER_SB_OK ? 0 : sb[1].generation > sb[0].generation;

		s->sb = sb[k];
		s->slot = k;
		return 0;
	}
	if (v[0] == TIER_SB_FOREIGN && v[1] == TIER_SB_FOREIGN) {
		bool zero = true;

		for (unsigned i = 0; i < 2 * TIER_SB_SLOT && zero; i++)
			zero = !slot[i / TIER_SB_SLOT][i % TIER_SB_SLOT];
		if (zero && s->blockdev)
			return -ENODATA;   /* a blank device: the caller formats it */
		return fail(err, errlen, -EUCLEAN,
			    "%s: not an iosig tier store (%s%s); iosigd never overwrites a file it did not create: remove it, or give the tier another path",
			    s->path, why[0], zero ? ", only zeros" : "");
	}
	return fail(err, errlen, -EUCLEAN,
		    "%s: the tier store's superblocks are damaged (%s; %s); its records cannot be trusted. Keep a copy, then remove it to start with an empty tier; nothing was changed",
		    s->path, v[0] == TIER_SB_CORRUPT ? why[0] : "slot 0 empty",
		    v[1] == TIER_SB_CORRUPT ? why[1] : "slot 1 empty");
}

/* Opens an existing store (file or block device). */
static int open_existing(const struct tstore_cfg *cfg, struct tstore *s, const struct stat *lst,
			 char *err, size_t errlen)
{
	struct stat st;
	int r;

	if (S_ISLNK(lst->st_mode))
		return fail(err, errlen, -ELOOP,
			    "%s: is a symbolic link; give the tier store's real path", cfg->path);
	if (!S_ISREG(lst->st_mode) && !S_ISBLK(lst->st_mode))
		return fail(err, errlen, -EINVAL,
			    "%s: not a regular file or a block device; a tier store is one of those",
			    cfg->path);
	s->blockdev = S_ISBLK(lst->st_mode);
	s->fd = open(cfg->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
				     (s->blockdev ? O_EXCL : 0));
	if (s->fd < 0)
		return fail(err, errlen, -errno, "%s: cannot open the tier store: %s%s", cfg->path,
			    strerror(errno),
			    errno == EBUSY ? " (a block device in use: mounted, or another tier's)" : "");
	if (fstat(s->fd, &st) < 0)
		return fail(err, errlen, -errno, "%s: fstat: %s", cfg->path, strerror(errno));
	/* The store decides what gets written into home files at recovery:
	 * it must be the daemon's alone. */
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return fail(err, errlen, -EPERM,
			    "%s: owned by uid %u with mode %04o; a tier store must belong to the daemon's user (uid %u) and be writable by it alone: fix its owner and mode, or remove it",
			    cfg->path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			    (unsigned)geteuid());
	if (s->blockdev) {
		uint64_t b = 0;

		if (ioctl(s->fd, BLKGETSIZE64, &b) < 0)
			return fail(err, errlen, -errno, "%s: BLKGETSIZE64: %s", cfg->path,
				    strerror(errno));
		s->dev_bytes = b;
	} else {
		s->dev_bytes = (uint64_t)st.st_size;
	}
	r = read_sb(s, cfg, err, errlen);
	if (r == -ENODATA) {
		struct tier_sb sb;

		/* A zeroed block device: format it. */
		if (new_sb(cfg, s->dev_bytes, true, &sb) < 0)
			return fail(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes is too small for a tier store",
				    cfg->path, s->dev_bytes);
		r = write_slot(s->fd, true, &sb, 0);
		if (r < 0)
			return fail(err, errlen, r, "%s: cannot write the superblock: %s", cfg->path,
				    strerror(-r));
		s->sb = sb;
		s->slot = 0;
		s->created = true;
		return 0;
	}
	if (r < 0)
		return r;
	if (s->dev_bytes < s->sb.store_bytes)
		return fail(err, errlen, -EUCLEAN,
			    "%s: truncated: %" PRIu64 " bytes where its superblock says %" PRIu64 "; restore the whole file to apply its data, or remove it if that data is not needed; nothing was changed",
			    cfg->path, s->dev_bytes, s->sb.store_bytes);
	/* Whatever the last generation wrote may be anywhere in the journal. */
	s->jhigh = s->sb.journal_bytes;
	return 0;
}

/* The sector checksums for the data area as it is now, none known. */
static int sec_init(struct tstore *s)
{
	uint64_t n = (s->sb.data_bytes + TIER_SECTOR - 1) / TIER_SECTOR;

	if (n != s->nsec || !s->sec_crc) {
		free(s->sec_crc);
		free(s->sec_known);
		s->sec_crc = malloc(n ? n * sizeof(*s->sec_crc) : 1);
		s->sec_known = calloc((n + 63) / 64 + 1, sizeof(*s->sec_known));
		s->nsec = n;
		return s->sec_crc && s->sec_known ? 0 : -ENOMEM;
	}
	memset(s->sec_known, 0, ((n + 63) / 64 + 1) * sizeof(*s->sec_known));
	return 0;
}

static bool sec_known(const struct tstore *s, uint64_t sec)
{
	return sec < s->nsec && (s->sec_known[sec / 64] >> (sec % 64) & 1);
}

int tstore_open(const struct tstore_cfg *cfg, struct tstore **ret, char *err, size_t errlen)
{
	struct tstore *s = calloc(1, sizeof(*s));
	struct stat lst;
	int r;

	if (!s)
		return fail(err, errlen, -ENOMEM, "out of memory");
	s->fd = -1;
	s->path = strdup(cfg->path);
	s->name = strdup(cfg->name);
	if (!s->path || !s->name) {
		r = fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}
	if (cfg->path[0] != '/') {
		r = fail(err, errlen, -EINVAL, "%s: a tier store needs an absolute path", cfg->path);
		goto out_free;
	}
	if (lstat(cfg->path, &lst) < 0) {
		if (errno != ENOENT) {
			r = fail(err, errlen, -errno, "%s: %s", cfg->path, strerror(errno));
			goto out_free;
		}
		r = create_file(cfg, s, err, errlen);
	} else {
		r = open_existing(cfg, s, &lst, err, errlen);
	}
	if (r < 0)
		goto out_free;
	s->rec = malloc(TIER_REC_MAX);
	s->crcs = malloc(TIER_REC_MAX);
	if (!s->rec || !s->crcs || sec_init(s) < 0) {
		r = fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}
	if (fstat(s->fd, &lst) == 0) {
		s->st_dev = lst.st_dev;
		s->st_ino = lst.st_ino;
	}
	*ret = s;
	return 0;

out_free:
	tstore_close(s);
	return r;
}

void tstore_close(struct tstore *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->rec);
	free(s->crcs);
	free(s->sec_crc);
	free(s->sec_known);
	free(s->path);
	free(s->name);
	free(s);
}

const void *tstore_map_journal(struct tstore *s, int *ret_err)
{
	void *m = mmap(NULL, s->sb.journal_bytes, PROT_READ, MAP_SHARED, s->fd,
		       (off_t)s->sb.journal_off);

	if (m == MAP_FAILED) {
		*ret_err = -errno;
		return NULL;
	}
	return m;
}

void tstore_unmap_journal(struct tstore *s, const void *map)
{
	if (map)
		munmap((void *)map, s->sb.journal_bytes);
}

/* Zeroes [off, off + len) of the store (journal bytes). */
static int zero_range(struct tstore *s, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	if (!s->blockdev && fallocate(s->fd, FALLOC_FL_ZERO_RANGE, (off_t)off, (off_t)len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int r = write_all(s->fd, zeros, n, off);

		if (r < 0)
			return r;
		off += n;
		len -= n;
	}
	return 0;
}

int tstore_reset(struct tstore *s, uint64_t seq_base, uint64_t new_size, uint64_t journal,
		 char *err, size_t errlen)
{
	struct tier_sb sb = s->sb;
	unsigned slot = s->slot ^ 1;
	int r;

	if (!s->blockdev && new_size && new_size != s->sb.store_bytes) {
		struct tstore_cfg cfg = { .name = s->name, .path = s->path, .journal = journal };
		struct tier_sb g;

		/* A new size: a new geometry in the same file.  Safe only here,
		 * with nothing of the old generation left to apply. */
		memset(&g, 0, sizeof(g));
		if (tier_sb_geometry(new_size, cfg.journal, &g) < 0)
			return fail(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes is too small for a tier store",
				    s->path, new_size);
		r = reserve(s->fd, g.store_bytes);
		if (r < 0)
			return fail(err, errlen, r, "%s: cannot reserve %" PRIu64 " bytes: %s", s->path,
				    g.store_bytes, strerror(-r));
		if (g.store_bytes < s->dev_bytes && ftruncate(s->fd, (off_t)g.store_bytes) < 0)
			return fail(err, errlen, -errno, "%s: cannot shrink the store: %s", s->path,
				    strerror(errno));
		s->dev_bytes = g.store_bytes;
		sb.store_bytes = g.store_bytes;
		sb.journal_off = g.journal_off;
		sb.journal_bytes = g.journal_bytes;
		sb.data_off = g.data_off;
		sb.data_bytes = g.data_bytes;
		s->jhigh = sb.journal_bytes;
	}
	sb.generation++;
	sb.seq_base = seq_base;
	/* The new superblock first: from here the old records are ignored
	 * whatever happens to the zeroing. */
	r = write_slot(s->fd, s->blockdev, &sb, slot);
	if (r < 0)
		return fail(err, errlen, r, "%s: cannot write the superblock: %s", s->path, strerror(-r));
	s->sb = sb;
	s->slot = slot;
	r = zero_range(s, sb.journal_off, s->jhigh < sb.journal_bytes ? s->jhigh : sb.journal_bytes);
	if (r < 0)
		return fail(err, errlen, r, "%s: cannot clear the journal: %s", s->path, strerror(-r));
	s->jhead = 0;
	s->jhigh = 0;
	s->records = 0;
	/* The old generation's sectors are nobody's data any more. */
	if (sec_init(s) < 0)
		return fail(err, errlen, -ENOMEM, "%s: out of memory for the sector checksums", s->path);
	return 0;
}

int tstore_append(struct tstore *s, const void *rec, size_t len)
{
	int r;

	if (len > s->sb.journal_bytes - s->jhead)
		return -ENOSPC;
	r = write_all(s->fd, rec, len, s->sb.journal_off + s->jhead);
	if (r < 0)
		return r;
	s->jhead += len;
	if (s->jhead > s->jhigh)
		s->jhigh = s->jhead;
	return 0;
}

/* Encodes r into s->rec and appends it. */
static int append_rec(struct tstore *s, struct tier_rec *r)
{
	int n;

	r->generation = s->sb.generation;
	n = tier_rec_encode(r, s->crcs, s->rec, TIER_REC_MAX);
	if (n < 0)
		return n;
	n = tstore_append(s, s->rec, (size_t)n);
	if (n == 0)
		s->records++;
	return n;
}

int tstore_log_file(struct tstore *s, uint64_t seq, uint32_t fid, const struct tier_file_id *id)
{
	struct tier_rec r = { .type = TIER_REC_FILE, .fid = fid, .seq = seq,
			      .id = (struct tier_file_id *)id };

	return append_rec(s, &r);
}

int tstore_log_fence(struct tstore *s, uint64_t seq, uint32_t fid)
{
	struct tier_rec r = { .type = TIER_REC_FENCE, .fid = fid, .seq = seq };

	return append_rec(s, &r);
}

int tstore_log_home(struct tstore *s, uint64_t seq, uint32_t fid, uint64_t file_off,
		    uint64_t len)
{
	struct tier_rec r = { .type = TIER_REC_HOME, .fid = fid, .seq = seq, .file_off = file_off,
			      .len = len };

	return append_rec(s, &r);
}

/* Writes the payload of a data record (zeros for padding). */
static int write_payload(struct tstore *s, const void *buf, uint64_t len, uint64_t loc)
{
	int e = 0;

	if (buf)
		return tstore_pwrite(s, buf, (size_t)len, loc);
	for (uint64_t o = 0; o < len && e == 0; o += sizeof(zeros))
		e = tstore_pwrite(s, zeros, (size_t)(len - o < sizeof(zeros) ? len - o : sizeof(zeros)),
				  loc + o);
	return e;
}

int tstore_log_data(struct tstore *s, uint64_t seq, uint16_t type, uint32_t fid,
		    uint64_t file_off, const void *buf, uint64_t len, uint64_t loc, bool ordered)
{
	struct tier_rec r = { .type = type, .fid = fid, .seq = seq, .file_off = file_off,
			      .len = len, .loc = loc };
	uint8_t edge[2][TIER_SECTOR];
	uint64_t s0, s1;
	uint32_t size;
	int e;

	if (!len || len > TIER_LEN_MAX || loc > s->sb.data_bytes || len > s->sb.data_bytes - loc ||
	    (type != TIER_REC_DATA && type != TIER_REC_FILL && type != TIER_REC_PAD) ||
	    (type == TIER_REC_PAD) != !buf)
		return -EINVAL;
	r.ncrc = (uint32_t)tier_sectors(loc, len);
	size = tier_rec_size(type, r.ncrc, NULL);
	if (!size)
		return -EINVAL;
	if (size > tstore_journal_free(s))
		return -ENOSPC;
	s0 = loc / TIER_SECTOR;
	s1 = (loc + len - 1) / TIER_SECTOR;
	/* The first and last sectors as they will be: what the store holds
	 * there, with the new bytes over it. */
	for (int k = 0; k < 2; k++) {
		uint64_t sec = k ? s1 : s0, base = sec * TIER_SECTOR;
		uint64_t a = loc > base ? loc : base;
		uint64_t b = loc + len < base + TIER_SECTOR ? loc + len : base + TIER_SECTOR;

		if (a != base || b != base + TIER_SECTOR) {
			e = tstore_pread(s, edge[k], TIER_SECTOR, base);
			if (e < 0)
				return e;
		}
		memcpy(edge[k] + (a - base), buf ? (const uint8_t *)buf + (a - loc) : zeros, b - a);
	}
	for (uint64_t sec = s0; sec <= s1; sec++) {
		const uint8_t *p;

		if (sec == s0)
			p = edge[0];
		else if (sec == s1)
			p = edge[1];
		else
			p = buf ? (const uint8_t *)buf + (sec * TIER_SECTOR - loc) : zeros;
		s->crcs[sec - s0] = tier_crc32c(0, p, TIER_SECTOR);
	}
	/* The record first, then the payload (tier_store.h). */
	e = append_rec(s, &r);
	if (e == 0 && ordered) {
		e = tstore_sync(s);
		if (e == 0)
			s->ordered++;
	}
	if (e < 0)
		return e;   /* the data area as it was, its sums too */
	e = write_payload(s, buf, len, loc);
	/* The sectors' sums as the store holds them now: the new ones; after a
	 * payload write that failed, maybe part way, none - an edge sector
	 * holds an older record's bytes either way, and checked against the
	 * new sum they read as lost (tiers_test.py tiererror, fill: the tier's
	 * filesystem went read-only under the write after a record's). */
	for (uint64_t sec = s0; sec <= s1 && sec < s->nsec; sec++) {
		if (e == 0) {
			s->sec_crc[sec] = s->crcs[sec - s0];
			s->sec_known[sec / 64] |= 1ull << (sec % 64);
		} else {
			s->sec_known[sec / 64] &= ~(1ull << (sec % 64));
		}
	}
	return e;
}

int tstore_pwrite(struct tstore *s, const void *buf, size_t len, uint64_t loc)
{
	if (loc > s->sb.data_bytes || len > s->sb.data_bytes - loc)
		return -EINVAL;
	return write_all(s->fd, buf, len, s->sb.data_off + loc);
}

int tstore_pread(struct tstore *s, void *buf, size_t len, uint64_t loc)
{
	if (loc > s->sb.data_bytes || len > s->sb.data_bytes - loc)
		return -EINVAL;
	return read_all(s->fd, buf, len, s->sb.data_off + loc);
}

int tstore_read_data(struct tstore *s, void *buf, size_t len, uint64_t loc)
{
	uint64_t a, b;
	uint8_t *p;
	int r;

	if (!len)
		return 0;
	if (loc > s->sb.data_bytes || len > s->sb.data_bytes - loc)
		return -EINVAL;
	a = loc / TIER_SECTOR * TIER_SECTOR;
	b = (loc + len + TIER_SECTOR - 1) / TIER_SECTOR * TIER_SECTOR;
	if (b > s->sb.data_bytes)
		b = s->sb.data_bytes;   /* a last sector cut short is checked as far as it goes */
	p = a == loc && b == loc + len ? buf : malloc(b - a);
	if (!p)
		return -ENOMEM;
	r = tstore_pread(s, p, (size_t)(b - a), a);
	for (uint64_t sec = a / TIER_SECTOR; r == 0 && sec * TIER_SECTOR < b; sec++) {
		uint64_t n = b - sec * TIER_SECTOR < TIER_SECTOR ? b - sec * TIER_SECTOR : TIER_SECTOR;

		if (n == TIER_SECTOR && sec_known(s, sec) &&
		    tier_crc32c(0, p + (sec * TIER_SECTOR - a), TIER_SECTOR) != s->sec_crc[sec])
			r = -EBADMSG;
	}
	if (p != buf) {
		if (r == 0)
			memcpy(buf, p + (loc - a), len);
		free(p);
	}
	return r;
}

int tstore_sync(struct tstore *s)
{
	return sync_fd(s->fd, s->blockdev);
}
