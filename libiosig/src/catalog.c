/* SPDX-License-Identifier: MIT */
/*
 * catalog.c - the storage catalog: builds the list of candidate mounts from
 * the class defaults, discovery, the probe cache and the configuration
 * (layering described in catalog_internal.h), answers queries, and keeps
 * the process-wide catalog used by the runtime.
 */
#include "catalog_internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per-mount information that is not part of the public struct. */
struct cat_priv {
	const char *origin[IOSIG_F_COUNT]; /* citation of each DEFAULT value */
};

struct iosig_catalog {
	struct iosig_mount *mounts;
	struct cat_priv *priv;
	size_t n;
	/* Every visible mount point (catalog entries, pseudo filesystems ...),
	 * to find the mount a path is on; vidx[i] is its catalog index or -1. */
	const char **visible;
	long *vidx;
	size_t nvisible;
	bool synthetic;            /* IOSIG_CATALOG_NO_DISCOVERY */
	struct cat_strpool strings;
	struct cat_strpool notes;
	char config_file[4096];
};

/* ---- values ------------------------------------------------------------- */

void cat_values_apply(struct iosig_mount *m, double *reserve_pct, const struct cat_values *v,
		      enum iosig_source src)
{
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++) {
		if (!(v->set & CAT_BIT(f)))
			continue;
		switch ((enum iosig_field)f) {
		case IOSIG_F_CLASS:
			m->cls = v->cls;
			break;
		case IOSIG_F_GLOBAL:
			m->global = v->global;
			break;
		case IOSIG_F_VOLATILE:
			m->volatile_ = v->volatile_;
			break;
		case IOSIG_F_ROTATIONAL:
			m->rotational = v->rotational;
			break;
		case IOSIG_F_LABELS:
			m->labels = v->labels;
			break;
		case IOSIG_F_CAPACITY:
			m->capacity = v->capacity;
			break;
		case IOSIG_F_FREE:
			m->free = v->free;
			break;
		case IOSIG_F_RESERVE:
			m->reserve = v->reserve;
			*reserve_pct = v->reserve_pct;
			break;
		case IOSIG_F_BLOCK_SIZE:
			m->block_size = v->block_size;
			break;
		case IOSIG_F_MAX_FILESIZE:
			m->max_filesize = v->max_filesize;
			break;
		case IOSIG_F_SEQ_READ_BW:
			m->seq_read_bw = v->seq_read_bw;
			break;
		case IOSIG_F_SEQ_WRITE_BW:
			m->seq_write_bw = v->seq_write_bw;
			break;
		case IOSIG_F_RAND_READ_BW:
			m->rand_read_bw = v->rand_read_bw;
			break;
		case IOSIG_F_RAND_WRITE_BW:
			m->rand_write_bw = v->rand_write_bw;
			break;
		case IOSIG_F_LATENCY:
			m->latency = v->latency;
			break;
		case IOSIG_F_SEEK:
			m->seek = v->seek;
			break;
		case IOSIG_F_IOPS:
			m->iops = v->iops;
			break;
		case IOSIG_F_MTTF:
			m->mttf = v->mttf;
			break;
		case IOSIG_F_MTTR:
			m->mttr = v->mttr;
			break;
		case IOSIG_F_BER:
			m->ber = v->ber;
			break;
		case IOSIG_F_ECC:
			m->ecc = v->ecc;
			break;
		case IOSIG_F_SECTOR_BITS:
			m->sector_bits = v->sector_bits;
			break;
		case IOSIG_F_LAYOUT:
			m->layout = v->layout;
			break;
		case IOSIG_F_DATA_DIR:
			m->data_dir = v->data_dir;
			break;
		case IOSIG_F_BCW:
			m->bcw = v->bcw;
			break;
		case IOSIG_F_COUNT:
			break;
		}
		m->src[f] = (uint8_t)src;
	}
}

/* ---- building ----------------------------------------------------------- */

/* State of one build. */
struct build {
	struct iosig_catalog *cat;
	const struct cat_config *cfg;
	struct iosig_error *err;
	struct cat_probe_cache *probe[2];
	char probe_file[2][4096];
	unsigned nprobe;
	struct cat_datadir_ctx dd;
	size_t cap;
};

static int note(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct build *b, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return cat_strpool_add(&b->cat->notes, buf) ? 0 : -ENOMEM;
}

static const char *keep(struct build *b, const char *s)
{
	return s ? cat_strpool_add(&b->cat->strings, s) : NULL;
}

static const char *keepf(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *keepf(struct build *b, const char *fmt, ...)
{
	char buf[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return cat_strpool_add(&b->cat->strings, buf);
}

/* Appends a zeroed mount. */
static struct iosig_mount *add_mount(struct build *b)
{
	struct iosig_catalog *c = b->cat;

	if (c->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		struct iosig_mount *m = realloc(c->mounts, cap * sizeof(*m));
		struct cat_priv *p;

		if (!m)
			return NULL;
		c->mounts = m;
		p = realloc(c->priv, cap * sizeof(*p));
		if (!p)
			return NULL;
		c->priv = p;
		b->cap = cap;
	}
	memset(&c->mounts[c->n], 0, sizeof(c->mounts[0]));
	memset(&c->priv[c->n], 0, sizeof(c->priv[0]));
	return &c->mounts[c->n++];
}

static bool cfg_matches(const struct cat_cfg_mount *cm, const char *path)
{
	if (cm->glob)
		return fnmatch(cm->pattern, path, FNM_PATHNAME) == 0;
	return !strcmp(cm->pattern, path);
}

/* The configuration entries that apply to `path`: patterns in file order,
 * then the exact entry (the most specific wins). */
static size_t cfg_lookup(const struct cat_config *cfg, const char *path,
			 const struct cat_cfg_mount **out, size_t max)
{
	size_t n = 0;

	for (int pass = 0; cfg && pass < 2; pass++)
		for (size_t i = 0; i < cfg->nmounts && n < max; i++)
			if (cfg->mounts[i].glob == (pass == 0) && cfg_matches(&cfg->mounts[i], path))
				out[n++] = &cfg->mounts[i];
	return n;
}

#define MAX_MATCHES 64

/* Per mount: the configuration entries and their positions. */
struct layers {
	const struct cat_cfg_mount *match[MAX_MATCHES];
	size_t nmatch;
	/* where the value of each field that came from the config was given */
	struct cat_pos pos[CAT_K_COUNT];
};

static void apply_cfg(struct iosig_mount *m, double *pct, const struct cat_values *v,
		      const struct cat_pos *vpos, struct layers *L)
{
	cat_values_apply(m, pct, v, IOSIG_SRC_CONFIG);
	for (unsigned k = 0; k < CAT_K_COUNT; k++)
		if (v->set & CAT_BIT(k))
			L->pos[k] = vpos[k];
}

/* The last configuration value for key k among the matches, or NULL. */
static const struct cat_cfg_mount *last_with(const struct layers *L, unsigned k)
{
	for (size_t i = L->nmatch; i-- > 0;)
		if (L->match[i]->v.set & CAT_BIT(k))
			return L->match[i];
	return NULL;
}

/*
 * Layers every source onto mount m of class cls (see catalog_internal.h).
 * member_cls: an md RAID's member class (its performance defaults), or -1.
 * disc / probe may be NULL.
 */
static int layer_values(struct build *b, struct iosig_mount *m, struct cat_priv *pv, int cls,
			int member_cls, const struct cat_values *disc,
			const struct cat_values *probe, struct layers *L)
{
	const struct cat_config *cfg = b->cfg;
	const struct cat_values *def;
	int base = cls;
	double pct = -1;

	if (cls == IOSIG_CLASS_RAID && member_cls >= 0 && member_cls != IOSIG_CLASS_RAID)
		base = member_cls;
	def = cat_class_defaults((enum iosig_class)base);
	cat_values_apply(m, &pct, def, IOSIG_SRC_DEFAULT);
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++)
		if (m->src[f] == IOSIG_SRC_DEFAULT)
			pv->origin[f] = cat_class_default_origin((enum iosig_class)base,
								 (enum iosig_field)f);
	if (base != cls) {
		/* A RAID of known members: their performance, the RAID's
		 * class and layout. */
		m->layout = cat_class_defaults(IOSIG_CLASS_RAID)->layout;
		pv->origin[IOSIG_F_LAYOUT] =
			cat_class_default_origin(IOSIG_CLASS_RAID, IOSIG_F_LAYOUT);
		pv->origin[IOSIG_F_CLASS] = NULL;
	}
	m->cls = (uint8_t)cls;
	if (cfg) {
		apply_cfg(m, &pct, &cfg->defaults, cfg->defaults_pos, L);
		apply_cfg(m, &pct, &cfg->classes[cls], cfg->classes_pos[cls], L);
	}
	if (disc)
		cat_values_apply(m, &pct, disc, IOSIG_SRC_DISCOVERED);
	if (probe) {
		struct cat_values pv2 = *probe;

		pv2.set &= CAT_PROBE_FIELDS;
		cat_values_apply(m, &pct, &pv2, IOSIG_SRC_PROBED);
	}
	for (size_t i = 0; i < L->nmatch; i++)
		apply_cfg(m, &pct, &L->match[i]->v, L->match[i]->vpos, L);
	m->cls = (uint8_t)cls;
	/* A citation belongs to the default it cites. */
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++)
		if (m->src[f] != IOSIG_SRC_DEFAULT)
			pv->origin[f] = NULL;
	if (pct >= 0) {
		double r = (double)m->capacity * pct / 100.0;

		/* Only the embedded default is capped: a configured
		 * percentage means what it says. */
		if (m->src[IOSIG_F_RESERVE] == IOSIG_SRC_DEFAULT && r > (double)CAT_RESERVE_MAX)
			r = (double)CAT_RESERVE_MAX;
		m->reserve = (uint64_t)r;
	}
	if (m->ecc >= m->sector_bits) {
		const struct cat_pos *p = &L->pos[IOSIG_F_ECC];

		if (!p->line)
			p = &L->pos[IOSIG_F_SECTOR_BITS];
		cat_error(b->err, cfg ? cfg->file : "", p->line, p->col,
			  "ecc: %u correctable bits per sector need sectors larger than %u bits (sector_bits) for %s",
			  m->ecc, m->sector_bits, m->path);
		return -EINVAL;
	}
	return 0;
}

/* Expands a configured data_dir; NULL with *why when it cannot be. */
static const char *expand_data_dir(struct build *b, const char *tmpl, const char *mnt,
				   char **why)
{
	char *d = cat_datadir_expand(&b->dd, tmpl, mnt, why);
	const char *kept;

	if (!d)
		return NULL;
	kept = keep(b, d);
	free(d);
	return kept;
}

/* A mount of a NO_DISCOVERY catalog: everything from the configuration. */
static int add_synthetic(struct build *b, const struct cat_cfg_mount *cm)
{
	const struct cat_config *cfg = b->cfg;
	struct layers L = { .nmatch = 0 };
	const struct cat_cfg_mount *cc, *ig;
	struct iosig_mount *m;
	int r;

	L.nmatch = cfg_lookup(cfg, cm->pattern, L.match, MAX_MATCHES);
	m = add_mount(b);
	if (!m)
		return -ENOMEM;
	m->path = keep(b, cm->pattern);
	ig = last_with(&L, CAT_K_IGNORE);
	cc = last_with(&L, IOSIG_F_CLASS);
	if (!cc && !(ig && ig->v.ignore)) {
		cat_error(b->err, cfg->file, cm->pos.line, cm->pos.col,
			  "mount '%s': class is required when discovery is off: one of ram, nvm, ssd, hdd, raid, network",
			  cm->pattern);
		return -EINVAL;
	}
	cc = last_with(&L, CAT_K_FSTYPE);
	m->fstype = keep(b, cc ? cc->v.fstype : "");
	cc = last_with(&L, CAT_K_SOURCE);
	m->source = keep(b, cc ? cc->v.source : "");
	if (!m->path || !m->fstype || !m->source)
		return -ENOMEM;
	if (ig && ig->v.ignore) {
		m->ineligible = keepf(b, "ignored by the configuration (%s:%d)", cfg->file,
				      ig->vpos[CAT_K_IGNORE].line);
		return m->ineligible ? 0 : -ENOMEM;
	}
	cc = last_with(&L, IOSIG_F_CLASS);
	r = layer_values(b, m, &b->cat->priv[b->cat->n - 1], cc->v.cls, -1, NULL, NULL, &L);
	if (r < 0)
		return r;
	if (!(m->src[IOSIG_F_CAPACITY]) && !(m->src[IOSIG_F_FREE])) {
		cat_error(b->err, cfg->file, cm->pos.line, cm->pos.col,
			  "mount '%s': capacity or free is required when discovery is off",
			  cm->pattern);
		return -EINVAL;
	}
	if (!m->src[IOSIG_F_FREE]) {
		m->free = m->capacity;
		m->src[IOSIG_F_FREE] = IOSIG_SRC_CONFIG;
	}
	if (!m->src[IOSIG_F_CAPACITY]) {
		m->capacity = m->free;
		m->src[IOSIG_F_CAPACITY] = IOSIG_SRC_CONFIG;
		if (m->src[IOSIG_F_RESERVE] == IOSIG_SRC_DEFAULT) {
			double r2 = (double)m->capacity * CAT_RESERVE_PCT / 100.0;

			m->reserve = r2 > (double)CAT_RESERVE_MAX ? CAT_RESERVE_MAX : (uint64_t)r2;
		}
	}
	if (m->free > m->capacity) {
		const struct cat_pos *p = &L.pos[IOSIG_F_FREE];

		cat_error(b->err, cfg->file, p->line, p->col,
			  "free: larger than the capacity of mount '%s'", cm->pattern);
		return -EINVAL;
	}
	/* A synthetic catalog describes another machine: its data
	 * directories are not checked here. */
	if (m->data_dir) {
		char *why = NULL;

		m->data_dir = expand_data_dir(b, m->data_dir, m->path, &why);
		if (!m->data_dir) {
			m->ineligible = why ? keep(b, why) : NULL;
			free(why);
			if (!m->ineligible)
				return -ENOMEM;
		}
	}
	return 0;
}

static int build_synthetic(struct build *b)
{
	const struct cat_config *cfg = b->cfg;
	struct iosig_catalog *c = b->cat;
	int r;

	c->synthetic = true;
	for (size_t i = 0; cfg && i < cfg->nmounts; i++) {
		if (cfg->mounts[i].glob)
			continue;
		r = add_synthetic(b, &cfg->mounts[i]);
		if (r < 0) {
			if (r == -ENOMEM)
				cat_error(b->err, "", 0, 0, "out of memory");
			return r;
		}
	}
	c->visible = calloc(c->n ? c->n : 1, sizeof(*c->visible));
	c->vidx = calloc(c->n ? c->n : 1, sizeof(*c->vidx));
	if (!c->visible || !c->vidx)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		c->visible[i] = c->mounts[i].path;
		c->vidx[i] = (long)i;
	}
	c->nvisible = c->n;
	return 0;
}

/* Probe cache entry for discovered mount d, after checking its key. */
static const struct cat_probe_entry *probe_for(struct build *b, unsigned ci,
					       const struct cat_disc *d)
{
	const struct cat_probe_entry *e = cat_probe_cache_find(b->probe[ci], d->path);

	if (!e)
		return NULL;
	if (strcmp(e->v.fstype, d->fstype) || strcmp(e->v.source, d->source) ||
	    (e->v.fsid && d->fsid && e->v.fsid != d->fsid)) {
		note(b, "%s:%d: the probe of %s was measured on %s %s (fsid %016llx), now %s %s (fsid %016llx) is mounted there: ignored; run iosig probe %s",
		     b->probe_file[ci], e->pos.line, d->path, e->v.fstype, e->v.source,
		     (unsigned long long)e->v.fsid, d->fstype, d->source,
		     (unsigned long long)d->fsid, d->path);
		return NULL;
	}
	return e;
}

/* Keys that describe a synthetic mount and make no sense for a real one. */
static int check_synthetic_keys(struct build *b)
{
	static const unsigned only[] = { IOSIG_F_CAPACITY, IOSIG_F_FREE, CAT_K_FSTYPE,
					 CAT_K_SOURCE };
	static const char *const names[] = { "capacity", "free", "fstype", "source" };
	const struct cat_config *cfg = b->cfg;

	for (size_t i = 0; cfg && i < cfg->nmounts; i++) {
		const struct cat_cfg_mount *cm = &cfg->mounts[i];

		for (size_t k = 0; k < 4; k++) {
			if (cm->v.set & CAT_BIT(only[k])) {
				cat_error(b->err, cfg->file, cm->vpos[only[k]].line,
					  cm->vpos[only[k]].col,
					  "%s: only for catalogs without discovery (--no-discovery); the %s of a mounted filesystem is discovered",
					  names[k], names[k]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* One discovered candidate filesystem (not pseudo, not hidden). */
static int add_discovered(struct build *b, struct cat_disc *d, const struct layers *L0,
			  bool ignored)
{
	const struct cat_config *cfg = b->cfg;
	struct layers L = *L0;
	struct iosig_mount *m;
	struct cat_priv *pv;
	const struct cat_cfg_mount *cc;
	const struct cat_values *probe = NULL;
	struct cat_values merged_probe;
	const char *tmpl;
	int cls, r;

	m = add_mount(b);
	if (!m)
		return -ENOMEM;
	pv = &b->cat->priv[b->cat->n - 1];
	m->path = keep(b, d->path);
	m->source = keep(b, d->source);
	m->fstype = keep(b, d->fstype);
	if (!m->path || !m->source || !m->fstype)
		return -ENOMEM;
	if (ignored) {
		cc = last_with(&L, CAT_K_IGNORE);
		m->ineligible = keepf(b, "ignored by the configuration (%s:%d)", cfg->file,
				      cc->vpos[CAT_K_IGNORE].line);
		return m->ineligible ? 0 : -ENOMEM;
	}
	m->dev = (uint64_t)d->st_dev;
	if (d->stat_err) {
		m->ineligible = keepf(b, "cannot access the mount point: %s", strerror(-d->stat_err));
		return m->ineligible ? 0 : -ENOMEM;
	}
	if (!d->is_dir) {
		m->ineligible = keep(b, "the mount point is not a directory (a bind-mounted file)");
		return m->ineligible ? 0 : -ENOMEM;
	}
	cc = last_with(&L, IOSIG_F_CLASS);
	cls = cc ? cc->v.cls : (d->v.set & CAT_BIT(IOSIG_F_CLASS)) ? d->v.cls : -1;
	if (cls < 0) {
		/* Still show what is known about it. */
		double pct = -1;

		cat_values_apply(m, &pct, &d->v, IOSIG_SRC_DISCOVERED);
		m->ineligible = keepf(b, "%s; set class for %s in the config",
				      d->why ? d->why : "unknown storage class", d->path);
		return m->ineligible ? 0 : -ENOMEM;
	}
	for (unsigned ci = 0; ci < b->nprobe; ci++) {
		const struct cat_probe_entry *e = probe_for(b, ci, d);

		if (!e)
			continue;
		/* The user's cache overrides the system's field by field. */
		if (!probe)
			merged_probe = e->v;
		else
			cat_probe_merge(&merged_probe, &e->v);
		probe = &merged_probe;
	}
	r = layer_values(b, m, pv, cls, d->member_cls, &d->v, probe, &L);
	if (r < 0)
		return r;
	/* A layout the filesystem told (discover_dfs.c): say where from. */
	if (d->layout_origin && m->src[IOSIG_F_LAYOUT] == IOSIG_SRC_DISCOVERED)
		pv->origin[IOSIG_F_LAYOUT] = keep(b, d->layout_origin);
	if (d->layout_why && m->src[IOSIG_F_LAYOUT] != IOSIG_SRC_CONFIG)
		note(b, "%s: layout unknown, %s; set layout for %s in the config", d->path,
		     d->layout_why, d->path);
	/* A configured data_dir is a template owned by the configuration:
	 * expanded below or dropped. */
	tmpl = m->src[IOSIG_F_DATA_DIR] == IOSIG_SRC_CONFIG ? m->data_dir : NULL;
	m->data_dir = NULL;
	if (d->readonly) {
		m->ineligible = keep(b, "mounted read-only");
		return m->ineligible ? 0 : -ENOMEM;
	}
	{
		const char *configured = NULL;
		char *dir = NULL, *why = NULL;

		if (tmpl) {
			configured = expand_data_dir(b, tmpl, m->path, &why);
			if (!configured) {
				m->src[IOSIG_F_DATA_DIR] = IOSIG_SRC_NONE;
				m->ineligible = keepf(b, "%s (%s:%d)", why ? why : "bad data_dir",
						      cfg->file, L.pos[IOSIG_F_DATA_DIR].line);
				free(why);
				return m->ineligible ? 0 : -ENOMEM;
			}
		}
		r = cat_datadir_choose(&b->dd, m->path, d->st_dev, configured, &dir, &why);
		if (r == 0) {
			m->data_dir = keep(b, dir);
			if (!configured)
				m->src[IOSIG_F_DATA_DIR] = IOSIG_SRC_DISCOVERED;
			free(dir);
			return m->data_dir ? 0 : -ENOMEM;
		}
		if (r == -ENOMEM)
			return r;
		if (configured)
			m->ineligible = keepf(b, "%s (%s:%d)", why ? why : "bad data_dir", cfg->file,
					      L.pos[IOSIG_F_DATA_DIR].line);
		else
			m->ineligible = keep(b, why ? why : "no data directory");
		m->src[IOSIG_F_DATA_DIR] = IOSIG_SRC_NONE;
		free(why);
		return m->ineligible ? 0 : -ENOMEM;
	}
}

/* Several eligible mounts of one filesystem (bind mounts: same st_dev,
 * type and source): files go to one of them - the whole filesystem (root "/") if mounted, else the first -
 * the others are listed as duplicates. */
static int mark_duplicates(struct build *b, struct cat_disc **discs)
{
	struct iosig_catalog *c = b->cat;

	for (size_t i = 0; i < c->n; i++) {
		struct iosig_mount *m = &c->mounts[i];
		size_t primary = i;

		if (m->ineligible || !discs[i])
			continue;
		for (size_t j = 0; j < c->n; j++) {
			if (j == i || c->mounts[j].ineligible || !discs[j] ||
			    c->mounts[j].dev != m->dev || strcmp(c->mounts[j].fstype, m->fstype) ||
			    strcmp(c->mounts[j].source, m->source))
				continue;
			bool jroot = !strcmp(discs[j]->root, "/");
			bool proot = !strcmp(discs[primary]->root, "/");

			if ((jroot && !proot) || (jroot == proot && j < primary))
				primary = j;
		}
		if (primary != i) {
			m->ineligible = keepf(b, "same filesystem as %s (a bind mount): files go there",
					      c->mounts[primary].path);
			if (!m->ineligible)
				return -ENOMEM;
		}
	}
	return 0;
}

static int build_discovered(struct build *b, const struct iosig_catalog_opts *opts)
{
	struct iosig_catalog *c = b->cat;
	struct cat_disc_table t = { 0 };
	struct layers *L = NULL;
	struct cat_disc **discs = NULL;
	bool *skip = NULL, *used = NULL;
	int r;

	r = check_synthetic_keys(b);
	if (r < 0)
		return r;
	r = cat_discover_table(opts->mountinfo, &t, b->err);
	if (r < 0)
		return r;
	L = calloc(t.n ? t.n : 1, sizeof(*L));
	skip = calloc(t.n ? t.n : 1, sizeof(*skip));
	used = calloc(b->cfg && b->cfg->nmounts ? b->cfg->nmounts : 1, sizeof(*used));
	c->visible = calloc(t.n ? t.n : 1, sizeof(*c->visible));
	c->vidx = calloc(t.n ? t.n : 1, sizeof(*c->vidx));
	if (!L || !skip || !used || !c->visible || !c->vidx) {
		r = -ENOMEM;
		goto out_free;
	}
	/* Configuration first: an ignored mount is never touched (a hung
	 * network filesystem can be ignored). */
	for (size_t i = 0; i < t.n; i++) {
		const struct cat_cfg_mount *ig;

		if (t.fs[i].pseudo || t.fs[i].hidden)
			continue;
		L[i].nmatch = cfg_lookup(b->cfg, t.fs[i].path, L[i].match, MAX_MATCHES);
		for (size_t k = 0; k < L[i].nmatch; k++)
			used[L[i].match[k] - b->cfg->mounts] = true;
		ig = last_with(&L[i], CAT_K_IGNORE);
		skip[i] = ig && ig->v.ignore;
	}
	cat_discover_probe(&t, skip);
	for (size_t i = 0; i < t.n; i++) {
		if (t.fs[i].hidden)
			continue;
		c->visible[c->nvisible] = keep(b, t.fs[i].path);
		if (!c->visible[c->nvisible]) {
			r = -ENOMEM;
			goto out_free;
		}
		c->vidx[c->nvisible++] = -1;
	}
	cat_datadir_ctx_init(&b->dd, c->visible, c->nvisible);
	discs = calloc(t.n ? t.n : 1, sizeof(*discs));
	if (!discs) {
		r = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0, v = 0; i < t.n; i++) {
		if (t.fs[i].hidden)
			continue;
		v++;
		if (t.fs[i].pseudo)
			continue;
		r = add_discovered(b, &t.fs[i], &L[i], skip[i]);
		if (r < 0)
			goto out_free;
		discs[c->n - 1] = &t.fs[i];
		c->vidx[v - 1] = (long)(c->n - 1);
	}
	r = mark_duplicates(b, discs);
	if (r < 0)
		goto out_free;
	for (size_t i = 0; b->cfg && i < b->cfg->nmounts; i++) {
		if (!used[i] && !b->cfg->mounts[i].glob)
			note(b, "%s:%d: %s is not a mount point here: its settings are unused",
			     b->cfg->file, b->cfg->mounts[i].pos.line, b->cfg->mounts[i].pattern);
	}
out_free:
	if (r == -ENOMEM)
		cat_error(b->err, "", 0, 0, "out of memory");
	free(discs);
	free(used);
	free(skip);
	free(L);
	cat_discover_table_free(&t);
	return r;
}

static void load_probe_caches(struct build *b, const struct iosig_catalog_opts *opts)
{
	char files[2][4096];
	unsigned n = cat_probe_cache_locate(opts->probe_cache, files);

	for (unsigned i = 0; i < n; i++) {
		struct iosig_error e;
		struct cat_probe_cache *pc = NULL;
		int r = cat_probe_cache_load(files[i], &pc, &e);

		if (r == -ENOENT)
			continue;
		if (r < 0) {
			if (e.line)
				note(b, "%s:%d:%d: %s; probe cache ignored (iosig probe rewrites it)",
				     e.file, e.line, e.column, e.msg);
			else
				note(b, "%s: %s; probe cache ignored", e.file, e.msg);
			continue;
		}
		memcpy(b->probe_file[b->nprobe], files[i], sizeof(b->probe_file[0]));
		b->probe[b->nprobe++] = pc;
	}
}

int cat_catalog_build(const struct iosig_catalog_opts *opts, const struct cat_config *cfg,
		      struct iosig_catalog **ret_catalog, struct iosig_error *err)
{
	struct iosig_catalog_opts zero = { 0 };
	struct build b = { .cfg = cfg, .err = err };
	int r;

	if (!opts)
		opts = &zero;
	if (!ret_catalog)
		return -EINVAL;
	b.cat = calloc(1, sizeof(*b.cat));
	if (!b.cat) {
		cat_error(err, "", 0, 0, "out of memory");
		return -ENOMEM;
	}
	if (cfg)
		snprintf(b.cat->config_file, sizeof(b.cat->config_file), "%s", cfg->file);
	if (opts->flags & IOSIG_CATALOG_NO_DISCOVERY) {
		cat_datadir_ctx_init(&b.dd, NULL, 0);
		r = build_synthetic(&b);
	} else {
		load_probe_caches(&b, opts);
		r = build_discovered(&b, opts);
	}
	for (unsigned i = 0; i < b.nprobe; i++)
		cat_probe_cache_free(b.probe[i]);
	if (r < 0) {
		iosig_catalog_free(b.cat);
		return r;
	}
	*ret_catalog = b.cat;
	return 0;
}

int iosig_catalog_new(const struct iosig_catalog_opts *opts, struct iosig_catalog **ret_catalog,
		      struct iosig_error *err)
{
	struct iosig_catalog_opts zero = { 0 };
	struct cat_config *cfg = NULL;
	char file[4096];
	bool explicit_;
	int r;

	if (!opts)
		opts = &zero;
	if (!ret_catalog) {
		cat_error(err, "", 0, 0, "no place for the catalog");
		return -EINVAL;
	}
	cat_config_locate(opts->config, file, sizeof(file), &explicit_);
	if (file[0]) {
		r = cat_config_load_file(file, &cfg, err);
		if (r < 0)
			return r;
	}
	r = cat_catalog_build(opts, cfg, ret_catalog, err);
	cat_config_free(cfg);
	return r;
}

void iosig_catalog_free(struct iosig_catalog *c)
{
	if (!c)
		return;
	free(c->mounts);
	free(c->priv);
	free(c->visible);
	free(c->vidx);
	cat_strpool_free(&c->strings);
	cat_strpool_free(&c->notes);
	free(c);
}

/* ---- queries ------------------------------------------------------------ */

size_t iosig_catalog_size(const struct iosig_catalog *c)
{
	return c ? c->n : 0;
}

const struct iosig_mount *iosig_catalog_mount(const struct iosig_catalog *c, size_t i)
{
	return c && i < c->n ? &c->mounts[i] : NULL;
}

size_t cat_catalog_notes(const struct iosig_catalog *c)
{
	return c ? c->notes.n : 0;
}

const char *cat_catalog_note(const struct iosig_catalog *c, size_t i)
{
	return c && i < c->notes.n ? c->notes.s[i] : NULL;
}

const char *cat_catalog_config_file(const struct iosig_catalog *c)
{
	return c ? c->config_file : "";
}

const char *cat_catalog_origin(const struct iosig_catalog *c, size_t i, enum iosig_field field)
{
	if (!c || i >= c->n || (unsigned)field >= IOSIG_F_COUNT)
		return NULL;
	return c->priv[i].origin[field];
}

/* out = a + b (PATH_MAX); false if too long. */
static bool join2(char *out, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb + 1 > PATH_MAX)
		return false;
	memcpy(out, a, la);
	memcpy(out + la, b, lb + 1);
	return true;
}

/* Normalises an absolute path lexically: "//", "." and ".." removed. */
static void normalize(char *p)
{
	char out[PATH_MAX];
	size_t o = 0;
	const char *s = p;

	out[o++] = '/';
	while (*s) {
		size_t len;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		len = strcspn(s, "/");
		if (len == 1 && s[0] == '.') {
			/* nothing */
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
		} else if (o + len + 1 < sizeof(out)) {
			if (o > 1)
				out[o++] = '/';
			memcpy(out + o, s, len);
			o += len;
		}
		s += len;
	}
	out[o] = '\0';
	memcpy(p, out, o + 1);
}

/*
 * Resolves `path` as the kernel would for a file about to be created: the
 * longest existing prefix through realpath(), the rest lexically.  A
 * synthetic catalog describes another machine: lexical only.
 */
static bool resolve(const char *path, bool lexical, char *out)
{
	char buf[PATH_MAX], real[PATH_MAX];
	size_t cut;

	if (path[0] == '/') {
		if (strlen(path) >= PATH_MAX)
			return false;
		snprintf(buf, sizeof(buf), "%s", path);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) || strlen(cwd) + 1 >= PATH_MAX)
			return false;
		strcat(cwd, "/");
		if (!join2(buf, cwd, path))
			return false;
	}
	normalize(buf);
	if (lexical) {
		memcpy(out, buf, strlen(buf) + 1);
		return true;
	}
	cut = strlen(buf);
	for (;;) {
		char save = buf[cut];

		buf[cut] = '\0';
		if (realpath(cut ? buf : "/", real)) {
			buf[cut] = save;
			if (!join2(out, strcmp(real, "/") ? real : "", buf + cut))
				return false;
			if (!out[0])
				snprintf(out, PATH_MAX, "/");
			normalize(out);
			return true;
		}
		buf[cut] = save;
		while (cut > 0 && buf[cut - 1] != '/')
			cut--;
		if (cut == 0)
			return false;
		cut--; /* drop the '/' too */
	}
}

/* The deepest visible mount containing `path`, resolved as iosig_catalog_find()
 * says, or lexically only. */
static const struct iosig_mount *find(const struct iosig_catalog *c, const char *path,
				      bool lexical)
{
	char abs[PATH_MAX];
	size_t best = 0;
	long idx = -1;

	if (!c || !path || !path[0] || !resolve(path, lexical || c->synthetic, abs))
		return NULL;
	for (size_t i = 0; i < c->nvisible; i++) {
		size_t l = cat_path_under(abs, c->visible[i]) ? strlen(c->visible[i]) : 0;

		/* Deepest wins; among equal paths the later (upper) entry. */
		if (l && l >= best) {
			best = l;
			idx = c->vidx[i];
		}
	}
	return idx >= 0 ? &c->mounts[idx] : NULL;
}

const struct iosig_mount *iosig_catalog_find(const struct iosig_catalog *c, const char *path)
{
	return find(c, path, false);
}

const struct iosig_mount *cat_catalog_find_lexical(const struct iosig_catalog *c,
						   const char *path)
{
	return find(c, path, true);
}

/* ---- the process-wide catalog ------------------------------------------- */

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static struct iosig_catalog *default_catalog;
static struct iosig_error default_err;

static void build_default(void)
{
	struct iosig_catalog_opts opts = { 0 };

	if (iosig_catalog_new(&opts, &default_catalog, &default_err) < 0)
		default_catalog = NULL;
}

const struct iosig_catalog *cat_default(struct iosig_error *err)
{
	pthread_once(&default_once, build_default);
	if (!default_catalog && err)
		*err = default_err;
	return default_catalog;
}
