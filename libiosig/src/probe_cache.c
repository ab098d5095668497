/* SPDX-License-Identifier: MIT */
/*
 * probe_cache.c - measurements of `iosig probe` kept between runs (docs/design.md
 * §5.1, source 3).
 *
 * Format (YAML, docs/catalog.md "Probe cache"):
 *
 *   version: 1
 *   mounts:
 *     "/scratch":
 *       fstype: xfs                 # key: the filesystem measured ...
 *       source: /dev/nvme0n1p1
 *       fsid: "a1b2c3d4e5f60718"    # ... statfs f_fsid, hexadecimal
 *       probed_at: 1714560000       # unix time
 *       seq_read_bw: 3221225472     # bytes/s
 *       latency: 8.5e-05            # seconds
 *       bcw: {wf: ..., wm: ..., lf: ..., lm: ..., ls: ...}
 *
 * Values are in base units (bytes, bytes/s, seconds) but go through the
 * same parser as the configuration, so a hand edit may use units.  An entry
 * whose fstype, source or fsid differ from the filesystem now mounted at
 * that path describes another device and is ignored (with a note).  A cache
 * that is not valid is ignored as a whole (with a note): it is a cache, and a
 * program must never fail because of it; `iosig probe` replaces it.
 */
#include "catalog_yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "fmt.h"
#include "strset.h"

/* Larger caches are refused, as configurations are (config.c). */
#define PROBE_MAX_BYTES (4u << 20)

static bool path_ok(const char *p)
{
	return p[0] == '/' && !strstr(p, "//");
}

static int parse_entries(struct cat_yaml *y, const yaml_node_t *node, struct cat_probe_cache *c)
{
	struct strset seen = { 0 };
	size_t n, first;
	int r = 0;

	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(y, node, "mounts: expected a mapping of mount points, got %s",
				    cat_yaml_kind(node));
	n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
	if (n > CAT_YAML_MOUNTS_MAX)
		return cat_yaml_err(y, node, "mounts: %zu entries, more than the %d a probe cache may have",
				    n, CAT_YAML_MOUNTS_MAX);
	c->e = calloc(n ? n : 1, sizeof(*c->e));
	if (!c->e || strset_init(&seen, n) < 0)
		return -ENOMEM;
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&y->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&y->doc, pair->value);
		struct cat_pos pos[CAT_K_COUNT] = { { 0, 0 } };
		struct cat_probe_entry *e;
		const char *path;
		char ctx[300], b[200];

		if (!kn || !vn)
			continue;
		path = cat_yaml_scalar(y, kn, "mounts", "a mount point");
		if (!path) {
			r = -EINVAL;
			goto out_free_seen;
		}
		if (!path_ok(path)) {
			r = cat_yaml_err(y, kn, "mounts: '%s' is not a mount point path",
					 cat_yaml_shown(path, b, sizeof(b)));
			goto out_free_seen;
		}
		/* The document's own string: it outlives the set. */
		if (!strset_add(&seen, path, c->n, &first)) {
			r = cat_yaml_err(y, kn, "mounts: '%s' given twice",
					 cat_yaml_shown(path, b, sizeof(b)));
			goto out_free_seen;
		}
		e = &c->e[c->n];
		e->path = cat_strpool_add(&c->pool, path);
		if (!e->path) {
			r = -ENOMEM;
			goto out_free_seen;
		}
		e->pos.line = (int)kn->start_mark.line + 1;
		e->pos.col = (int)kn->start_mark.column + 1;
		e->v.reserve_pct = -1;
		snprintf(ctx, sizeof(ctx), "probe entry '%s'", cat_yaml_shown(path, b, sizeof(b)));
		r = cat_yaml_values(y, vn, CAT_SC_PROBE, ctx, &e->v, pos);
		if (r < 0)
			goto out_free_seen;
		if (!(e->v.set & CAT_BIT(CAT_K_FSTYPE)) || !(e->v.set & CAT_BIT(CAT_K_SOURCE))) {
			r = cat_yaml_err(y, vn, "%s: missing fstype or source (the key of the entry)",
					 ctx);
			goto out_free_seen;
		}
		c->n++;
	}
out_free_seen:
	strset_free(&seen);
	return r;
}

int cat_probe_cache_load_buffer(const char *name, const char *buf, size_t len,
				struct cat_probe_cache **ret_cache, struct iosig_error *err)
{
	struct cat_probe_cache *c;
	struct cat_yaml y = { .file = name, .err = err };
	const yaml_node_t *root;
	bool have_version = false;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		cat_error(err, name, 0, 0, "out of memory");
		return -ENOMEM;
	}
	y.pool = &c->pool;
	r = cat_yaml_load(&y, buf, len);
	if (r < 0)
		goto out_free_cache;
	root = yaml_document_get_root_node(&y.doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		r = cat_yaml_err(&y, root, "expected a mapping with version and mounts");
		goto out_done_yaml;
	}
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top && r == 0; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&y.doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&y.doc, pair->value);
		const char *k;
		char b[64];

		if (!kn || !vn)
			continue;
		k = cat_yaml_scalar(&y, kn, "top level", "a key");
		if (!k) {
			r = -EINVAL;
		} else if (!strcmp(k, "version")) {
			const char *v = cat_yaml_scalar(&y, vn, "version", "1");

			if (!v)
				r = -EINVAL;
			else if (strcmp(v, "1"))
				r = cat_yaml_err(&y, vn,
						 "version: this libiosig reads probe cache version %d, the file has '%s'",
						 CAT_PROBE_CACHE_VERSION, cat_yaml_shown(v, b, sizeof(b)));
			have_version = true;
		} else if (!strcmp(k, "mounts")) {
			if (c->e)
				r = cat_yaml_err(&y, kn, "mounts: given twice");
			else
				r = parse_entries(&y, vn, c);
		} else {
			r = cat_yaml_err(&y, kn, "%s: unknown top-level key: expected version or mounts",
					 cat_yaml_shown(k, b, sizeof(b)));
		}
	}
	if (r == 0 && !have_version)
		r = cat_yaml_err(&y, root, "missing version: not an iosig probe cache");
	if (r == -ENOMEM)
		cat_error(err, name, 0, 0, "out of memory");
out_done_yaml:
	cat_yaml_done(&y);
	if (r < 0)
		goto out_free_cache;
	*ret_cache = c;
	return 0;

out_free_cache:
	cat_probe_cache_free(c);
	return r;
}

int cat_probe_cache_load(const char *file, struct cat_probe_cache **ret_cache,
			 struct iosig_error *err)
{
	char *buf;
	size_t len;
	int r;

	r = cat_read_file(file, PROBE_MAX_BYTES, "probe cache", &buf, &len, err);
	if (r < 0)
		return r;
	r = cat_probe_cache_load_buffer(file, buf, len, ret_cache, err);
	free(buf);
	return r;
}

void cat_probe_cache_free(struct cat_probe_cache *c)
{
	if (!c)
		return;
	free(c->e);
	cat_strpool_free(&c->pool);
	free(c);
}

const struct cat_probe_entry *cat_probe_cache_find(const struct cat_probe_cache *c,
						   const char *path)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(c->e[i].path, path))
			return &c->e[i];
	return NULL;
}

/* ---- locations ---------------------------------------------------------- */

static bool user_cache_path(char *buf, size_t size)
{
	return cat_user_file("XDG_CACHE_HOME", ".cache", "iosig/probe.yaml", buf, size);
}

unsigned cat_probe_cache_locate(const char *opts_cache, char bufs[2][4096])
{
	const char *env = env_get("IOSIG_PROBE_CACHE");
	unsigned n = 0;

	if (opts_cache || env) {
		const char *f = opts_cache ? opts_cache : env;

		if (!f[0])
			return 0;
		snprintf(bufs[0], 4096, "%s", f);
		return 1;
	}
	snprintf(bufs[n++], 4096, "%s", CAT_SYSTEM_PROBE_CACHE);
	if (geteuid() != 0 && user_cache_path(bufs[n], 4096))
		n++;
	return n;
}

void cat_probe_cache_write_path(char *buf, size_t size)
{
	const char *env = env_get("IOSIG_PROBE_CACHE");

	if (env && env[0])
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0 || !user_cache_path(buf, size))
		snprintf(buf, size, "%s", CAT_SYSTEM_PROBE_CACHE);
}

/* ---- writer ------------------------------------------------------------- */

void cat_probe_record_init(struct cat_probe_record *rec, const struct iosig_mount *mount)
{
	memset(rec, 0, sizeof(*rec));
	rec->path = mount->path;
	rec->fstype = mount->fstype;
	rec->source = mount->source;
	rec->fsid = cat_path_fsid(mount->path);
}

/* Writes s as a YAML double-quoted scalar. */
static void yaml_quoted(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(fp, "\\x%02x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

static void write_entry(FILE *fp, const char *path, const struct cat_values *v)
{
	static const struct {
		int field;
		const char *name;
		size_t off;
		int kind; /* 0 rate, 1 time, 2 count */
	} nums[] = {
		{ IOSIG_F_SEQ_READ_BW, "seq_read_bw", offsetof(struct cat_values, seq_read_bw), 0 },
		{ IOSIG_F_SEQ_WRITE_BW, "seq_write_bw", offsetof(struct cat_values, seq_write_bw), 0 },
		{ IOSIG_F_RAND_READ_BW, "rand_read_bw", offsetof(struct cat_values, rand_read_bw), 0 },
		{ IOSIG_F_RAND_WRITE_BW, "rand_write_bw", offsetof(struct cat_values, rand_write_bw), 0 },
		{ IOSIG_F_LATENCY, "latency", offsetof(struct cat_values, latency), 1 },
		{ IOSIG_F_SEEK, "seek", offsetof(struct cat_values, seek), 1 },
		{ IOSIG_F_IOPS, "iops", offsetof(struct cat_values, iops), 2 },
	};
	char h[64];

	fputs("  ", fp);
	yaml_quoted(fp, path);
	fputs(":\n    fstype: ", fp);
	yaml_quoted(fp, v->fstype ? v->fstype : "");
	fputs("\n    source: ", fp);
	yaml_quoted(fp, v->source ? v->source : "");
	fprintf(fp, "\n    fsid: \"%016llx\"\n", (unsigned long long)v->fsid);
	fprintf(fp, "    probed_at: %.0f\n", v->probed_at);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		double d = *(const double *)((const char *)v + nums[i].off);

		if (!(v->set & CAT_BIT(nums[i].field)))
			continue;
		if (nums[i].kind == 0)
			fmt_rate(d, h, sizeof(h));
		else if (nums[i].kind == 1)
			fmt_duration(d, h, sizeof(h));
		else
			snprintf(h, sizeof(h), "%.0f", d);
		fprintf(fp, "    %s: %.17g   # %s\n", nums[i].name, d, h);
	}
	if (v->set & CAT_BIT(IOSIG_F_BLOCK_SIZE))
		fprintf(fp, "    block_size: %llu   # %s\n", (unsigned long long)v->block_size,
			fmt_bytes((double)v->block_size, h, sizeof(h)));
	if (v->set & CAT_BIT(IOSIG_F_BCW))
		fprintf(fp, "    bcw: {wf: %.17g, wm: %.17g, lf: %.17g, lm: %.17g, ls: %.17g}\n",
			v->bcw.wf, v->bcw.wm, v->bcw.lf, v->bcw.lm, v->bcw.ls);
}

/* Creates the directories above `file` (mode for the new ones). */
static int make_parents(const char *file, mode_t mode)
{
	char buf[4096];
	size_t len = strlen(file);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, file, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

static void values_from_record(struct cat_values *v, const struct cat_probe_record *rec)
{
	const struct cat_values measured = {
		.set = rec->set & CAT_PROBE_FIELDS,
		.seq_read_bw = rec->seq_read_bw,
		.seq_write_bw = rec->seq_write_bw,
		.rand_read_bw = rec->rand_read_bw,
		.rand_write_bw = rec->rand_write_bw,
		.latency = rec->latency,
		.seek = rec->seek,
		.iops = rec->iops,
		.block_size = rec->block_size,
		.bcw = rec->bcw,
	};

	cat_probe_merge(v, &measured);
	v->fstype = rec->fstype;
	v->source = rec->source;
	v->fsid = rec->fsid;
	v->probed_at = rec->probed_at > 0 ? rec->probed_at : (double)time(NULL);
	v->set |= CAT_BIT(CAT_K_FSTYPE) | CAT_BIT(CAT_K_SOURCE) | CAT_BIT(CAT_K_FSID) |
		  CAT_BIT(CAT_K_PROBED_AT);
}

/* Checks what a record may hold: finite, non-negative, positive where the
 * models divide by it. */
static int record_valid(const struct cat_probe_record *rec, struct iosig_error *err)
{
	const double pos[] = { rec->seq_read_bw, rec->seq_write_bw, rec->iops };
	const int posf[] = { IOSIG_F_SEQ_READ_BW, IOSIG_F_SEQ_WRITE_BW, IOSIG_F_IOPS };
	const double nonneg[] = { rec->rand_read_bw, rec->rand_write_bw, rec->latency, rec->seek,
				  rec->bcw.wf, rec->bcw.wm, rec->bcw.lf, rec->bcw.lm, rec->bcw.ls };

	if (!rec->path || rec->path[0] != '/' || !rec->fstype || !rec->source) {
		cat_error(err, "", 0, 0, "probe record without a mount point, fstype or source");
		return -EINVAL;
	}
	if (rec->set & ~CAT_PROBE_FIELDS) {
		cat_error(err, "", 0, 0, "probe record for %s sets fields a probe cannot measure",
			  rec->path);
		return -EINVAL;
	}
	for (size_t i = 0; i < 3; i++) {
		if ((rec->set & CAT_BIT(posf[i])) && !(pos[i] > 0 && pos[i] < 1e300)) {
			cat_error(err, "", 0, 0, "probe record for %s: %s must be positive", rec->path,
				  iosig_field_name((enum iosig_field)posf[i]));
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < sizeof(nonneg) / sizeof(nonneg[0]); i++) {
		if (!(nonneg[i] >= 0 && nonneg[i] < 1e300)) {
			cat_error(err, "", 0, 0, "probe record for %s: a negative or non-finite value",
				  rec->path);
			return -EINVAL;
		}
	}
	if ((rec->set & CAT_BIT(IOSIG_F_BLOCK_SIZE)) && !rec->block_size) {
		cat_error(err, "", 0, 0, "probe record for %s: block_size must be positive",
			  rec->path);
		return -EINVAL;
	}
	return 0;
}

int cat_probe_store(const char *file, const struct cat_probe_record *rec, struct iosig_error *err)
{
	char path[4096], lock[4200], tmp[4200];
	struct cat_probe_cache *old = NULL;
	struct cat_values nv = { .reserve_pct = -1 };
	bool user = geteuid() != 0;
	mode_t fmode;
	FILE *fp;
	int lockfd, fd, r;

	r = record_valid(rec, err);
	if (r < 0)
		return r;
	if (file)
		snprintf(path, sizeof(path), "%s", file);
	else
		cat_probe_cache_write_path(path, sizeof(path));
	/* The system cache is for everyone to read; a user's is private. */
	if (!strcmp(path, CAT_SYSTEM_PROBE_CACHE))
		user = false;
	fmode = user ? 0600 : 0644;
	r = make_parents(path, user ? 0700 : 0755);
	if (r < 0) {
		cat_error(err, path, 0, 0, "cannot create the probe cache directory: %s",
			  strerror(-r));
		return r;
	}
	snprintf(lock, sizeof(lock), "%s.lock", path);
	lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, fmode);
	if (lockfd < 0) {
		r = -errno;
		cat_error(err, lock, 0, 0, "cannot open the probe cache lock: %s", strerror(-r));
		return r;
	}
	while (flock(lockfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			r = -errno;
			cat_error(err, lock, 0, 0, "cannot lock the probe cache: %s", strerror(-r));
			goto out_close_lock;
		}
	}
	/* A missing or invalid cache is simply replaced. */
	if (cat_probe_cache_load(path, &old, NULL) < 0)
		old = NULL;
	{
		const struct cat_probe_entry *prev = cat_probe_cache_find(old, rec->path);

		/* Values measured earlier on the same filesystem stay unless
		 * measured again. */
		if (prev && prev->v.fstype && prev->v.source && !strcmp(prev->v.fstype, rec->fstype) &&
		    !strcmp(prev->v.source, rec->source) &&
		    (!prev->v.fsid || !rec->fsid || prev->v.fsid == rec->fsid))
			nv = prev->v;
	}
	values_from_record(&nv, rec);
	/* A fresh, unpredictable name created with O_EXCL: nothing planted
	 * next to the cache (a link to another file) is ever written. */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, fmode) < 0) {
		r = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		cat_error(err, tmp, 0, 0, "cannot write the probe cache: %s", strerror(-r));
		goto out_free_old;
	}
	fp = fdopen(fd, "w");
	if (!fp) {
		r = -errno;
		close(fd);
		unlink(tmp);
		cat_error(err, tmp, 0, 0, "cannot write the probe cache: %s", strerror(-r));
		goto out_free_old;
	}
	fprintf(fp, "# iosig probe cache: measurements written by `iosig probe`, read by\n"
		    "# libiosig.  Values in bytes, bytes/s and seconds.  See iosig-config(5).\n"
		    "version: %d\nmounts:\n",
		CAT_PROBE_CACHE_VERSION);
	for (size_t i = 0; old && i < old->n; i++)
		if (strcmp(old->e[i].path, rec->path))
			write_entry(fp, old->e[i].path, &old->e[i].v);
	write_entry(fp, rec->path, &nv);
	r = 0;
	if (fflush(fp) != 0 || fsync(fileno(fp)) < 0)
		r = -errno;
	if (fclose(fp) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		cat_error(err, path, 0, 0, "cannot write the probe cache: %s", strerror(-r));
	}
out_free_old:
	cat_probe_cache_free(old);
out_close_lock:
	close(lockfd);
	return r;
}

void cat_probe_merge(struct cat_values *dst, const struct cat_values *src)
{
	uint32_t set = src->set & CAT_PROBE_FIELDS;

	if (set & CAT_BIT(IOSIG_F_SEQ_READ_BW))
		dst->seq_read_bw = src->seq_read_bw;
	if (set & CAT_BIT(IOSIG_F_SEQ_WRITE_BW))
		dst->seq_write_bw = src->seq_write_bw;
	if (set & CAT_BIT(IOSIG_F_RAND_READ_BW))
		dst->rand_read_bw = src->rand_read_bw;
	if (set & CAT_BIT(IOSIG_F_RAND_WRITE_BW))
		dst->rand_write_bw = src->rand_write_bw;
	if (set & CAT_BIT(IOSIG_F_LATENCY))
		dst->latency = src->latency;
	if (set & CAT_BIT(IOSIG_F_SEEK))
		dst->seek = src->seek;
	if (set & CAT_BIT(IOSIG_F_IOPS))
		dst->iops = src->iops;
	if (set & CAT_BIT(IOSIG_F_BLOCK_SIZE))
		dst->block_size = src->block_size;
	if (set & CAT_BIT(IOSIG_F_BCW))
		dst->bcw = src->bcw;
	dst->set |= set;
}
