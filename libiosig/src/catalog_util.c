/* SPDX-License-Identifier: MIT */
/*
 * catalog_util.c - what every file of the catalog uses and none of them
 * owns: errors with a position, string pools, bounded formatting, paths
 * (under a directory, per-user files, filesystem ids), the fix-up of a
 * redundancy layout, and the names of the catalog's enums.  It depends on
 * no other file of the catalog, so the catalog's files form no cycle
 * (docs/design.md).
 */
#include "catalog_internal.h"
#include "env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statfs.h>

void cat_error(struct iosig_error *err, const char *file, int line, int col, const char *fmt,
	       ...)
{
	va_list ap;

	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

char *cat_strpool_add(struct cat_strpool *pool, const char *s)
{
	char *d;

	if (pool->n == pool->cap) {
		size_t cap = pool->cap ? pool->cap * 2 : 16;
		char **n = realloc(pool->s, cap * sizeof(*n));

		if (!n)
			return NULL;
		pool->s = n;
		pool->cap = cap;
	}
	d = strdup(s);
	if (d)
		pool->s[pool->n++] = d;
	return d;
}

void cat_strpool_free(struct cat_strpool *pool)
{
	for (size_t i = 0; i < pool->n; i++)
		free(pool->s[i]);
	free(pool->s);
	pool->s = NULL;
	pool->n = pool->cap = 0;
}

bool cat_user_file(const char *xdg_var, const char *home_sub, const char *rel, char *buf,
		   size_t size)
{
	const char *xdg = env_get(xdg_var);
	const char *home = env_get("HOME");

	if (xdg && xdg[0] == '/')
		return cat_fmt(buf, size, "%s/%s", xdg, rel);
	if (home && home[0] == '/')
		return cat_fmt(buf, size, "%s/%s/%s", home, home_sub, rel);
	return false;
}

const char *iosig_class_name(enum iosig_class cls)
{
	static const char *const names[IOSIG_CLASS_COUNT] = {
		"ram", "nvm", "ssd", "hdd", "raid", "network",
	};

	return (unsigned)cls < IOSIG_CLASS_COUNT ? names[cls] : "unknown";
}

const char *iosig_source_name(enum iosig_source src)
{
	static const char *const names[] = { "none", "default", "discovered", "probed", "config" };

	return (unsigned)src < sizeof(names) / sizeof(names[0]) ? names[src] : "unknown";
}

const char *iosig_field_name(enum iosig_field field)
{
	static const char *const names[IOSIG_F_COUNT] = {
		[IOSIG_F_CLASS] = "class",
		[IOSIG_F_GLOBAL] = "global",
		[IOSIG_F_VOLATILE] = "volatile",
		[IOSIG_F_ROTATIONAL] = "rotational",
		[IOSIG_F_LABELS] = "label",
		[IOSIG_F_CAPACITY] = "capacity",
		[IOSIG_F_FREE] = "free",
		[IOSIG_F_RESERVE] = "reserve",
		[IOSIG_F_BLOCK_SIZE] = "block_size",
		[IOSIG_F_MAX_FILESIZE] = "max_filesize",
		[IOSIG_F_SEQ_READ_BW] = "seq_read_bw",
		[IOSIG_F_SEQ_WRITE_BW] = "seq_write_bw",
		[IOSIG_F_RAND_READ_BW] = "rand_read_bw",
		[IOSIG_F_RAND_WRITE_BW] = "rand_write_bw",
		[IOSIG_F_LATENCY] = "latency",
		[IOSIG_F_SEEK] = "seek",
		[IOSIG_F_IOPS] = "iops",
		[IOSIG_F_MTTF] = "mttf",
		[IOSIG_F_MTTR] = "mttr",
		[IOSIG_F_BER] = "ber",
		[IOSIG_F_ECC] = "ecc",
		[IOSIG_F_SECTOR_BITS] = "sector_bits",
		[IOSIG_F_LAYOUT] = "layout",
		[IOSIG_F_DATA_DIR] = "data_dir",
		[IOSIG_F_BCW] = "bcw",
	};

	return (unsigned)field < IOSIG_F_COUNT ? names[field] : "unknown";
}

bool cat_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

bool cat_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

void cat_layout_fix(struct iosig_layout *l)
{
	switch (l->kind) {
	case IOSIG_LAYOUT_SINGLE:
	case IOSIG_LAYOUT_RAID0:
		l->tolerated = 0;
		break;
	case IOSIG_LAYOUT_RAID1:
	case IOSIG_LAYOUT_REPLICATION:
		l->tolerated = l->disks ? (uint16_t)(l->disks - 1) : 0;
		break;
	case IOSIG_LAYOUT_RAID10:
	case IOSIG_LAYOUT_RAID5:
		/* RAID10 survives one failure for sure; a second one only if
		 * it hits another mirror pair. */
		l->tolerated = 1;
		break;
	case IOSIG_LAYOUT_RAID6:
		l->tolerated = 2;
		break;
	default:
		break; /* erasure: given by its parity */
	}
}

uint64_t cat_path_fsid(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return 0;
	return ((uint64_t)(uint32_t)sf.f_fsid.__val[0] << 32) | (uint32_t)sf.f_fsid.__val[1];
}

bool cat_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };

	for (size_t i = 0; i < 3; i++) {
		if (!strcasecmp(s, yes[i])) {
			*ret = true;
			return true;
		}
		if (!strcasecmp(s, no[i])) {
			*ret = false;
			return true;
		}
	}
	return false;
}
