/* SPDX-License-Identifier: MIT */
/*
 * discover_dfs.c - the redundancy layout of a mounted distributed
 * filesystem, as the filesystem itself tells it (docs/design.md §5.1 source 2,
 * docs/catalog.md "Distributed filesystems").
 *
 * GlusterFS: every FUSE client serves its own client graph (the volfile
 * glusterd gave it) at <mount>/.meta/graphs/active/volfile, readable by
 * any user who may read the mount.  A file lives in one replica or
 * disperse set of the volume (the distribute layer hashes whole files onto
 * sets), so the layout of a file is the layout of its set:
 *   cluster/replicate over k subvolumes (arbiter-count a, whose bricks hold
 *   no data)         -> k - a copies: replication, tolerates k - a - 1;
 *   cluster/disperse over n subvolumes with `option redundancy r`
 *                    -> erasure n = data + redundancy, tolerates r;
 *   neither (pure distribute, one brick) -> single: a brick lost is a file lost.
 * Sets of different shapes (they cannot be made with the gluster CLI) give
 * the weakest one.  The volfile also carries the volume's credentials: the
 * parser keeps nothing but counts and the volume's name.
 *
 * Other distributed filesystems tell nothing a reader could trust (NFS,
 * CIFS), or tell it per file through interfaces of their own (CephFS
 * ceph.dir.layout, Lustre lfs getstripe, BeeGFS beegfs-ctl) that describe
 * striping, not the redundancy below it: the configuration says (docs).
 */
#include "catalog_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where a GlusterFS FUSE client serves its graph, below the mount point. */
#define GLUSTER_VOLFILE ".meta/graphs/active/volfile"

/* A client graph larger than this is not read (about 1 KiB per brick: a
 * volume of a few thousand bricks). */
#define GLUSTER_VOLFILE_MAX (4u << 20)

/* The volume being parsed. */
struct gvol {
	bool replicate, disperse;
	unsigned subvols;        /* entries of `subvolumes` */
	unsigned arbiters;       /* option arbiter-count */
	long redundancy;         /* option redundancy, -1 if not given */
	int line;                /* of `volume` */
};

/* What the whole graph says so far. */
struct gsum {
	bool have;               /* a replicate or disperse volume was seen */
	struct iosig_layout weakest;
	unsigned sets;           /* replicate/disperse volumes */
};

/* Next whitespace-separated word of line[*pos..end); false at the end. */
static bool word(const char *s, size_t end, size_t *pos, const char **ret_w, size_t *ret_n)
{
	size_t p = *pos;

	while (p < end && (s[p] == ' ' || s[p] == '\t' || s[p] == '\r'))
		p++;
	if (p >= end)
		return false;
	*ret_w = s + p;
	while (p < end && s[p] != ' ' && s[p] != '\t' && s[p] != '\r')
		p++;
	*ret_n = (size_t)(s + p - *ret_w);
	*pos = p;
	return true;
}

static bool is(const char *w, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(w, lit, n);
}

/* Parses a decimal count of at most 5 digits; -1 if it is not one. */
static long count(const char *w, size_t n)
{
	long v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		v = v * 10 + (w[i] - '0');
	}
	return v;
}

/* True if layout a loses data sooner than b: fewer failures tolerated, or
 * as many over more devices. */
static bool weaker(const struct iosig_layout *a, const struct iosig_layout *b)
{
	return a->tolerated < b->tolerated || (a->tolerated == b->tolerated && a->disks > b->disks);
}

/* Closes volume v into the summary; false with *why on a volume that
 * makes no sense. */
static bool close_volume(const struct gvol *v, struct gsum *sum, char *why, size_t wsize)
{
	struct iosig_layout l = { 0 };

	if (!v->replicate && !v->disperse)
		return true;
	if (v->replicate) {
		if (v->subvols < 1 || v->arbiters >= v->subvols) {
			cat_fmt(why, wsize, "line %d: a replicate volume with %u subvolumes and %u arbiters",
				v->line, v->subvols, v->arbiters);
			return false;
		}
		l.disks = (uint16_t)(v->subvols - v->arbiters);
		l.kind = l.disks > 1 ? IOSIG_LAYOUT_REPLICATION : IOSIG_LAYOUT_SINGLE;
		cat_layout_fix(&l);
	} else {
		if (v->redundancy < 0 || v->subvols < 1 || (unsigned long)v->redundancy >= v->subvols) {
			cat_fmt(why, wsize,
				"line %d: a disperse volume with %u subvolumes and %s redundancy",
				v->line, v->subvols, v->redundancy < 0 ? "no" : "too much");
			return false;
		}
		l.kind = IOSIG_LAYOUT_ERASURE;
		l.disks = (uint16_t)v->subvols;
		l.tolerated = (uint16_t)v->redundancy;
	}
	if (!sum->have || weaker(&l, &sum->weakest))
		sum->weakest = l;
	sum->have = true;
	sum->sets++;
	return true;
}

int cat_gluster_volfile_layout(const char *text, size_t len, struct cat_dfs_layout *ret,
			       char *why, size_t wsize)
{
	struct gvol v = { .redundancy = -1 };
	struct gsum sum = { .have = false };
	bool in = false, seen = false;
	int line = 0;

	for (size_t start = 0; start < len;) {
		size_t end = start, pos;
		const char *w, *a;
		size_t n, an;

		while (end < len && text[end] != '\n')
			end++;
		line++;
		pos = start;
		start = end + 1;
		if (memchr(text + pos, '\0', end - pos)) {
			cat_fmt(why, wsize, "line %d: a NUL byte", line);
			return -EINVAL;
		}
		if (!word(text, end, &pos, &w, &n) || w[0] == '#')
			continue;
		if (is(w, n, "volume")) {
			if (in) {
				cat_fmt(why, wsize, "line %d: 'volume' inside volume of line %d", line,
					v.line);
				return -EINVAL;
			}
			if (!word(text, end, &pos, &a, &an)) {
				cat_fmt(why, wsize, "line %d: a volume without a name", line);
				return -EINVAL;
			}
			memset(&v, 0, sizeof(v));
			v.redundancy = -1;
			v.line = line;
			in = seen = true;
			continue;
		}
		if (!in) {
			cat_fmt(why, wsize, "line %d: '%.*s' outside a volume", line,
				(int)(n > 40 ? 40 : n), w);
			return -EINVAL;
		}
		if (is(w, n, "end-volume")) {
			if (!close_volume(&v, &sum, why, wsize))
				return -EINVAL;
			in = false;
		} else if (is(w, n, "type")) {
			if (!word(text, end, &pos, &a, &an)) {
				cat_fmt(why, wsize, "line %d: 'type' without a translator", line);
				return -EINVAL;
			}
			/* Current names and the translators' own. */
			v.replicate = is(a, an, "cluster/replicate") || is(a, an, "cluster/afr");
			v.disperse = is(a, an, "cluster/disperse") || is(a, an, "cluster/ec");
		} else if (is(w, n, "subvolumes")) {
			while (word(text, end, &pos, &a, &an))
				if (v.subvols < 65535)
					v.subvols++;
		} else if (is(w, n, "option")) {
			long c;

			if (!word(text, end, &pos, &a, &an))
				continue;
			if (is(a, an, "redundancy") && word(text, end, &pos, &w, &n)) {
				c = count(w, n);
				if (c < 0) {
					cat_fmt(why, wsize, "line %d: redundancy is not a count", line);
					return -EINVAL;
				}
				v.redundancy = c;
			} else if (is(a, an, "arbiter-count") && word(text, end, &pos, &w, &n)) {
				c = count(w, n);
				if (c < 0) {
					cat_fmt(why, wsize, "line %d: arbiter-count is not a count", line);
					return -EINVAL;
				}
				v.arbiters = (unsigned)c;
			}
		}
		/* Other statements (comments, unknown keywords) say nothing
		 * about redundancy. */
	}
	if (in) {
		cat_fmt(why, wsize, "volume of line %d has no end-volume", v.line);
		return -EINVAL;
	}
	if (!seen) {
		cat_fmt(why, wsize, "no volume in the graph");
		return -EINVAL;
	}
	memset(ret, 0, sizeof(*ret));
	if (sum.have) {
		ret->layout = sum.weakest;
	} else {
		/* Pure distribute (or one brick): every file on one brick. */
		ret->layout.kind = IOSIG_LAYOUT_SINGLE;
		ret->layout.disks = 1;
	}
	ret->sets = sum.sets;
	if (ret->layout.kind == IOSIG_LAYOUT_ERASURE)
		cat_fmt(ret->desc, sizeof(ret->desc), "disperse %u = %u + %u",
			ret->layout.disks, ret->layout.disks - ret->layout.tolerated,
			ret->layout.tolerated);
	else if (ret->layout.kind == IOSIG_LAYOUT_REPLICATION)
		cat_fmt(ret->desc, sizeof(ret->desc), "replica %u", ret->layout.disks);
	else
		cat_fmt(ret->desc, sizeof(ret->desc), "no replica or disperse set");
	return 0;
}

/* Reads <path>/GLUSTER_VOLFILE into a malloc'ed buffer. */
static int read_volfile(const char *path, char **ret_buf, size_t *ret_len)
{
	char file[4200];
	size_t cap = 64 << 10, len = 0;
	char *buf;
	int fd, r = 0;

	if (!cat_fmt(file, sizeof(file), "%s/%s", path, GLUSTER_VOLFILE))
		return -ENAMETOOLONG;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap >= GLUSTER_VOLFILE_MAX) {
				r = -EFBIG;
				goto out_free;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
out_free:
	free(buf);
out_close:
	close(fd);
	return r;
}

int cat_dfs_layout(const char *path, const char *fstype, struct cat_dfs_layout *ret,
		   char *why, size_t wsize)
{
	char perr[200];
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (strcmp(fstype, "fuse.glusterfs") && strcmp(fstype, "glusterfs"))
		return -EOPNOTSUPP;
	r = read_volfile(path, &buf, &len);
	if (r < 0) {
		cat_fmt(why, wsize, "cannot read the GlusterFS client graph %s/%s: %s", path,
			GLUSTER_VOLFILE, r == -EFBIG ? "larger than 4 MiB" : strerror(-r));
		return r;
	}
	r = cat_gluster_volfile_layout(buf, len, ret, perr, sizeof(perr));
	free(buf);
	if (r < 0) {
		cat_fmt(why, wsize, "%s/%s: %s", path, GLUSTER_VOLFILE, perr);
		return r;
	}
	if (ret->sets > 1)
		cat_fmt(ret->origin, sizeof(ret->origin),
			"GlusterFS client graph (%s): %s, %u sets (a file lives in one)",
			GLUSTER_VOLFILE, ret->desc, ret->sets);
	else
		cat_fmt(ret->origin, sizeof(ret->origin), "GlusterFS client graph (%s): %s",
			GLUSTER_VOLFILE, ret->desc);
	return 0;
}
