/* SPDX-License-Identifier: MIT */
/*
 * extmap.c - where a file's bytes lie on its device, so that the ordering
 * policies (deadline, cfq, bfq, bid-hdd) sort requests by physical position.
 *
 * FS_IOC_FIEMAP maps the file's extents, cached per file and fetched again
 * when a request lies past the mapped extents (the file grew) - at most
 * every REFRESH_NS, since writes the daemon has not issued yet are not
 * allocated.  An offset in a hole or past the last extent is placed after
 * the last extent (where a filesystem allocating as the file grows puts
 * it); delayed-allocation extents without a physical address count as
 * unallocated.  A filesystem without FIEMAP (tmpfs) gets addresses that
 * keep a file's bytes in order and its files apart.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "iosigd.h"

#define MAX_EXTENTS 256
#define REFRESH_NS (50 * POLICY_NS_PER_MS)

static int fetch(struct dfile *f)
{
	struct dextmap *m = &f->map;
	size_t sz = sizeof(struct fiemap) + MAX_EXTENTS * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, sz);
	int r = 0;

	if (!fm)
		return -ENOMEM;
	fm->fm_start = 0;
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_extent_count = MAX_EXTENTS;
	if (ioctl(f->fd, FS_IOC_FIEMAP, fm) < 0) {
		r = -errno;
		goto out;
	}
	if (m->cap < fm->fm_mapped_extents) {
		struct dextent *n = realloc(m->ext, fm->fm_mapped_extents * sizeof(*n));

		if (!n) {
			r = -ENOMEM;
			goto out;
		}
		m->ext = n;
		m->cap = fm->fm_mapped_extents;
	}
	m->n = 0;
	m->mapped_end = 0;
	for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
		const struct fiemap_extent *e = &fm->fm_extents[i];

		if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC))
			continue;
		m->ext[m->n++] = (struct dextent){ .logical = e->fe_logical,
						   .physical = e->fe_physical,
						   .length = e->fe_length };
		if (e->fe_logical + e->fe_length > m->mapped_end)
			m->mapped_end = e->fe_logical + e->fe_length;
	}
out:
	free(fm);
	return r;
}

/* Synthetic address: the file's bytes in order from a place its inode
 * number picks (files far apart), within the device. */
static uint64_t synthetic(const struct dfile *f, uint64_t off)
{
	return (f->ino & 0xffff) * 0x9e3779b97f4a7c15ull % (1ull << 40) / 4096 * 4096 + off;
}

/*
 * Addresses stay inside the device, wrapping at its end: the engine moves
 * a request that would end past it to the last place it fits, so that
 * every request of a new file (no extent yet: synthetic addresses, files
 * 64 GiB apart before) or of a file growing near the end of the device
 * landed at the same address - none contiguous with the one before, so an
 * ordering policy merged none of them (bid-hybrid's write-backs of fresh
 * files: 256 KiB commands, each an operation of a throttled disk).
 */
static uint64_t inside(const struct dfile *f, uint64_t addr)
{
	uint64_t cap = f->dev ? f->dev->info.capacity : 0;

	return cap ? addr % cap : addr;
}

uint64_t extmap_addr(struct dfile *f, uint64_t off, uint64_t now_ns)
{
	struct dextmap *m = &f->map;
	const struct dextent *last = NULL;

	if (m->unsupported)
		return inside(f, synthetic(f, off));
	if (!m->fetched_ns || m->stale ||
	    (off >= m->mapped_end && now_ns - m->fetched_ns >= REFRESH_NS)) {
		int r = fetch(f);

		m->fetched_ns = now_ns ? now_ns : 1;
		m->stale = false;
		if (r == -EOPNOTSUPP || r == -ENOTTY || r == -EINVAL) {
			m->unsupported = true;
			return inside(f, synthetic(f, off));
		}
	}
	/* Extents come sorted by logical offset; the list is short. */
	for (unsigned i = 0; i < m->n; i++) {
		const struct dextent *e = &m->ext[i];

		if (off < e->logical)
			break;
		if (off < e->logical + e->length)
			return e->physical + (off - e->logical);
		last = e;
	}
	if (!last && m->n)
		last = &m->ext[m->n - 1];
	if (!last)
		return inside(f, synthetic(f, off));
	return inside(f, last->physical + last->length +
			 (off > last->logical + last->length ? off - (last->logical + last->length) : 0));
}

void extmap_invalidate(struct dextmap *m)
{
	m->stale = true;
}

void extmap_free(struct dextmap *m)
{
	free(m->ext);
	memset(m, 0, sizeof(*m));
}
