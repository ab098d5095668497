/* SPDX-License-Identifier: MIT */
/*
 * tier_recover.c - recovery of tier stores at start (docs/tiers.md):
 *
 *   1. scan every store's journal (tier_journal_scan): torn and corrupt
 *      stretches are counted and never applied;
 *   2. find each file its FILE records name: by handle when the daemon may
 *      (root), else by the path recorded, and only if the inode there is
 *      the one recorded - a file moved, deleted or replaced meanwhile gets
 *      nothing (counted, logged);
 *   3. plan (tier_plan.c) from the sectors the data areas hold and what the
 *      home files hold;
 *   4. copy the planned ranges home and fsync every file written.
 * The caller resets the stores once this succeeded, and only then serves
 * clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tier_plan.h"
#include "tier_recover.h"

#define COPY_CHUNK (1u << 20)
#define CACHE_BLOCK (256u << 10)

static uint64_t fsid_of(int fd)
{
	struct statfs sf;
	uint64_t v = 0;

	if (fstatfs(fd, &sf) == 0) {
		uint32_t w[2];

		memcpy(w, &sf.f_fsid, sizeof(w));
		v = (uint64_t)w[0] | (uint64_t)w[1] << 32;
	}
	return v;
}

int tier_file_id_of(int fd, struct tier_file_id *ret)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[TIER_HANDLE_MAX];
	} h;
	char link[64];
	struct stat st;
	int mount_id, gen = 0;
	ssize_t n;

	memset(ret, 0, sizeof(*ret));
	if (fstat(fd, &st) < 0)
		return -errno;
	ret->st_dev = st.st_dev;
	ret->ino = st.st_ino;
	ret->fsid = fsid_of(fd);
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
		ret->igen = (uint32_t)gen;
		ret->flags |= TIER_ID_IGEN;
	}
	h.fh.handle_bytes = TIER_HANDLE_MAX;
	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes <= TIER_HANDLE_MAX) {
		ret->handle_type = h.fh.handle_type;
		ret->handle_bytes = h.fh.handle_bytes;
		memcpy(ret->handle, h.fh.f_handle, h.fh.handle_bytes);
		ret->flags |= TIER_ID_HANDLE;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, ret->path, TIER_PATH_MAX);
	if (n > 0 && ret->path[0] == '/') {
		ret->path[n] = '\0';
		ret->path_len = (uint16_t)n;
	} else {
		ret->path[0] = '\0';
	}
	return 0;
}

/* Whether the open fd is the file id names. */
static bool same_file(int fd, const struct tier_file_id *id)
{
	struct stat st;
	int gen;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != id->ino)
		return false;
	if (st.st_dev != id->st_dev && (!id->fsid || fsid_of(fd) != id->fsid))
		return false;
	if (id->flags & TIER_ID_IGEN)
		return ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 && (uint32_t)gen == id->igen;
	return true;
}

/* "\040" and friends in a mountinfo field, decoded in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* A descriptor of some mount of the filesystem st_dev, or -ENOENT. */
static int mount_fd(uint64_t st_dev)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int fd = -ENOENT;

	if (!fp)
		return -errno;
	while (fd < 0 && getline(&line, &cap, fp) > 0) {
		unsigned maj, min;
		char mnt[PATH_MAX];

		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &maj, &min, mnt) != 3 ||
		    makedev(maj, min) != st_dev)
			continue;
		unescape(mnt);
		fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -ENOENT;
	}
	free(line);
	fclose(fp);
	return fd;
}

int tier_file_open(const struct tier_file_id *id, bool handles)
{
	int fd;

	if (handles && (id->flags & TIER_ID_HANDLE)) {
		int mfd = mount_fd(id->st_dev);

		if (mfd >= 0) {
			struct {
				struct file_handle fh;
				unsigned char bytes[TIER_HANDLE_MAX];
			} h;

			h.fh.handle_bytes = id->handle_bytes;
			h.fh.handle_type = id->handle_type;
			memcpy(h.fh.f_handle, id->handle, id->handle_bytes);
			fd = open_by_handle_at(mfd, &h.fh, O_RDWR | O_CLOEXEC | O_NOCTTY);
			close(mfd);
			if (fd >= 0) {
				if (same_file(fd, id))
					return fd;
				close(fd);
			}
		}
	}
	if (!id->path_len)
		return -ENOENT;
	/* The path is a hint: whatever is there now must be the same inode,
	 * so a moved or replaced file never receives another's data. */
	fd = open(id->path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? -ENOENT : -errno;
	if (!same_file(fd, id)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* ------------------------------------------------------------------------
 * collecting the records
 * ---------------------------------------------------------------------- */

/* The latest identity of one (store, fid). */
struct fident {
	unsigned store;
	uint32_t fid;
	struct tier_file_id id;
	int file;                      /* index in files[], -1 = not found */
};

struct rfile {
	int fd;
	uint64_t st_dev, ino;
	char *path;
	bool written;
};

struct rctx {
	struct tstore **st;
	unsigned nst, cur;
	bool handles;
	struct tplan_rec *recs;
	uint32_t *fids;                /* per rec: its fid (store-local) */
	size_t n, cap;
	struct fident *ids;
	size_t nids, capids;
	struct rfile *files;
	unsigned nfiles, capfiles;
	struct trecover *out;
	/* sector cache */
	uint8_t *cache;
	unsigned cache_store;
	uint64_t cache_block;          /* UINT64_MAX = empty */
	trecover_note_fn note;
	void *note_ctx;
};

static void notef(struct rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void notef(struct rctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!c->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->note(c->note_ctx, msg);
}

static struct fident *ident(struct rctx *c, unsigned store, uint32_t fid)
{
	for (size_t i = 0; i < c->nids; i++)
		if (c->ids[i].store == store && c->ids[i].fid == fid)
			return &c->ids[i];
	return NULL;
}

static int on_record(void *ctx, const struct tier_rec *rec, uint64_t at)
{
	struct rctx *c = ctx;

	(void)at;
	if (rec->seq > c->out->max_seq)
		c->out->max_seq = rec->seq;
	if (rec->type == TIER_REC_FILE) {
		struct fident *f = ident(c, c->cur, rec->fid);

		if (!f) {
			if (c->nids == c->capids) {
				size_t cap = c->capids ? 2 * c->capids : 16;
				struct fident *n = realloc(c->ids, cap * sizeof(*n));

				if (!n)
					return -ENOMEM;
				c->ids = n;
				c->capids = cap;
			}
			f = &c->ids[c->nids++];
			f->store = c->cur;
			f->fid = rec->fid;
			f->file = -1;
		}
		f->id = *rec->id;   /* the latest FILE record of a fid: its path now */
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct tplan_rec *n = realloc(c->recs, cap * sizeof(*n));
		uint32_t *f;

		if (!n)
			return -ENOMEM;
		c->recs = n;
		f = realloc(c->fids, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->fids = f;
		c->cap = cap;
	}
	c->recs[c->n] = (struct tplan_rec){ .seq = rec->seq, .file_off = rec->file_off,
					    .len = rec->len, .loc = rec->loc, .crcs = rec->crcs,
					    .ncrc = rec->ncrc, .file = -1, .type = rec->type,
					    .store = (uint16_t)c->cur };
	c->fids[c->n] = rec->fid;
	c->n++;
	return 0;
}

/* Finds the file of every identity (one descriptor per inode). */
static int resolve(struct rctx *c)
{
	for (size_t i = 0; i < c->nids; i++) {
		struct fident *f = &c->ids[i];
		int fd;
		unsigned k;

		fd = tier_file_open(&f->id, c->handles);
		if (fd < 0) {
			c->out->files_missing++;
			notef(c, "tier %s: %s (inode %" PRIu64 ") is gone or was replaced; its data in the tier is not applied",
			      c->st[f->store]->name, f->id.path_len ? f->id.path : "a file without a path",
			      f->id.ino);
			continue;
		}
		for (k = 0; k < c->nfiles; k++)
			if (c->files[k].st_dev == f->id.st_dev && c->files[k].ino == f->id.ino)
				break;
		if (k < c->nfiles) {
			close(fd);
		} else {
			if (c->nfiles == c->capfiles) {
				unsigned cap = c->capfiles ? 2 * c->capfiles : 16;
				struct rfile *n = realloc(c->files, cap * sizeof(*n));

				if (!n) {
					close(fd);
					return -ENOMEM;
				}
				c->files = n;
				c->capfiles = cap;
			}
			c->files[k] = (struct rfile){ .fd = fd, .st_dev = f->id.st_dev, .ino = f->id.ino,
						      .path = strdup(f->id.path) };
			c->nfiles++;
		}
		f->file = (int)k;
	}
	c->out->files = c->nfiles;
	/* Every record to its file, by (store, fid). */
	for (size_t i = 0; i < c->n; i++) {
		struct fident *f;

		if (c->recs[i].type == TIER_REC_PAD)
			continue;
		f = ident(c, c->recs[i].store, c->fids[i]);
		c->recs[i].file = f ? f->file : -1;
		if (c->recs[i].file < 0)
			c->out->orphan_records++;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * planning callbacks
 * ---------------------------------------------------------------------- */

static int sector_crc(void *ctx, unsigned store, uint64_t sector, uint32_t *ret)
{
	struct rctx *c = ctx;
	struct tstore *s = c->st[store];
	uint64_t off = sector * TIER_SECTOR, block = off / CACHE_BLOCK;

	if (off + TIER_SECTOR > s->sb.data_bytes)
		return -EINVAL;   /* the scan keeps records inside the area */
	if (c->cache_block != block || c->cache_store != store) {
		uint64_t base = block * CACHE_BLOCK;
		uint64_t n = s->sb.data_bytes - base < CACHE_BLOCK ? s->sb.data_bytes - base : CACHE_BLOCK;
		int r = tstore_pread(s, c->cache, (size_t)n, base);

		if (r < 0)
			return r;
		c->cache_block = block;
		c->cache_store = store;
	}
	*ret = tier_crc32c(0, c->cache + (off - block * CACHE_BLOCK), TIER_SECTOR);
	return 0;
}

/* Copies one planned piece home. */
static int copy_piece(struct rctx *c, unsigned file, const struct tplan_piece *p, uint8_t *buf)
{
	uint64_t done = 0;

	while (done < p->len) {
		size_t n = p->len - done < COPY_CHUNK ? (size_t)(p->len - done) : COPY_CHUNK;
		int r = tstore_pread(c->st[p->store], buf, n, p->loc + done);
		const uint8_t *q = buf;
		uint64_t off = p->file_off + done;
		size_t left = n;

		if (r < 0)
			return r;
		while (left) {
			ssize_t w = pwrite(c->files[file].fd, q, left, (off_t)off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			q += w;
			off += (uint64_t)w;
			left -= (size_t)w;
		}
		done += n;
	}
	c->files[file].written = true;
	return 0;
}

int trecover_run(struct tstore **st, unsigned n, bool handles, trecover_note_fn note, void *ctx,
		 struct trecover *ret, char *err, size_t errlen)
{
	struct trecover out = { 0 };
	struct rctx c = { .st = st, .nst = n, .handles = handles, .out = &out,
			  .cache_block = UINT64_MAX, .note = note, .note_ctx = ctx };
	const void **maps = calloc(n ? n : 1, sizeof(*maps));
	struct tier_file_id id;
	struct tplan plan = { 0 };
	uint8_t *buf = NULL;
	int r = 0;

	c.cache = malloc(CACHE_BLOCK);
	if (!maps || !c.cache) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n && r == 0; i++) {
		struct tier_scan_stats ss;

		if (st[i]->created)
			continue;   /* new: nothing in it */
		maps[i] = tstore_map_journal(st[i], &r);
		if (!maps[i]) {
			snprintf(err, errlen, "%s: cannot map the journal: %s", st[i]->path, strerror(-r));
			goto out;
		}
		c.cur = i;
		r = tier_journal_scan(maps[i], st[i]->sb.journal_bytes, &st[i]->sb, &id, on_record, &c,
				      &ss);
		if (r < 0) {
			snprintf(err, errlen, "out of memory scanning %s", st[i]->path);
			goto out;
		}
		out.records += ss.records;
		out.corrupt += ss.corrupt;
		out.stale_seq += ss.stale_seq;
		out.out_of_area += ss.out_of_area;
		if (ss.corrupt || ss.stale_seq || ss.out_of_area)
			notef(&c, "tier %s: %" PRIu64 " torn or corrupt stretches, %" PRIu64 " records out of sequence and %" PRIu64 " out of place in %s, not applied",
			      st[i]->name, ss.corrupt, ss.stale_seq, ss.out_of_area, st[i]->path);
	}
	r = resolve(&c);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	r = tplan_build(c.recs, c.n, c.nfiles, &(struct tplan_ops){ .sector_crc = sector_crc }, &c,
			&plan);
	if (r < 0) {
		snprintf(err, errlen, "cannot plan the recovery: %s", strerror(-r));
		goto out;
	}
	out.torn_sectors = plan.torn_sectors;
	out.data_rejected_bytes = plan.data_rejected_bytes;
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned f = 0; f < c.nfiles; f++) {
		for (size_t i = 0; i < plan.npieces[f]; i++) {
			r = copy_piece(&c, f, &plan.pieces[f][i], buf);
			if (r < 0) {
				snprintf(err, errlen, "cannot write tier data back to %s: %s; free what is missing and start iosigd again (the tier stores are kept)",
					 c.files[f].path ? c.files[f].path : "a home file", strerror(-r));
				goto out;
			}
			out.copied_bytes += plan.pieces[f][i].len;
		}
		if (plan.npieces[f])
			notef(&c, "tier data applied to %s: %zu ranges", c.files[f].path, plan.npieces[f]);
	}
	for (unsigned f = 0; f < c.nfiles; f++) {
		if (c.files[f].written && fsync(c.files[f].fd) < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot make %s durable: %s; the tier stores are kept",
				 c.files[f].path, strerror(errno));
			goto out;
		}
	}
	*ret = out;
out:
	tplan_free(&plan);
	for (unsigned i = 0; i < n; i++)
		if (maps && maps[i])
			tstore_unmap_journal(st[i], maps[i]);
	for (unsigned f = 0; f < c.nfiles; f++) {
		close(c.files[f].fd);
		free(c.files[f].path);
	}
	free(maps);
	free(c.files);
	free(c.ids);
	free(c.recs);
	free(c.fids);
	free(c.cache);
	free(buf);
	return r;
}
