/* SPDX-License-Identifier: MIT */
/*
 * dconfig.c - the `daemon:` section of the configuration file
 * (docs/daemon.md, iosig-config(5)), read with the catalog's YAML loader
 * and its error format (file:line:column: message):
 *
 *   daemon:
 *     socket: /run/iosigd/iosigd.sock
 *     policy: noop                         # NAME[:opt=val,...]
 *     devices:
 *       /mnt/hdd:                          # mount point or fnmatch pattern
 *         policy: "bid-hdd:wait_max=50ms"
 *         queue_depth: 32
 *         schedule: true                   # a global network mount: schedule it
 *     limits:
 *       clients: 1024
 *       fds_per_client: 4096
 *       ring_size: 8MiB
 *       queued_bytes: 64MiB
 *     writeback:                           # default: from the kernel's vm.dirty_*
 *       dirty: 64MiB
 *       expire: 15s
 *     tiers:                               # docs/tiers.md
 *       ssd:
 *         mount: /mnt/ssd                  # or path: FILE or block device
 *         size: 4GiB
 *
 * and per device `tiers: [ssd]` (a tier-using policy) and `defer_close`.
 *
 * The rest of the file is the catalog's: iosigd builds its catalog from the
 * same file, which checks it.  A new key is a row of one of the tables
 * below and a case in its parser.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "catalog_yaml.h"
#include "dconfig.h"
#include "ring.h"

/* Largest configuration file read (the catalog's own limit). */
#define DCFG_MAX_BYTES (1u << 20)

static const char *const daemon_keys[] = { "socket", "policy", "devices", "limits", "tiers",
					   "writeback" };
static const char *const device_keys[] = { "policy", "queue_depth", "tiers", "defer_close",
					   "schedule", "experimental" };
static const char *const tier_keys[] = { "path", "mount", "size", "journal", "queue_depth",
					 "class" };
static const char *const limit_keys[] = { "clients", "fds_per_client", "ring_size",
					  "queued_bytes" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

int dconfig_defaults(struct dconfig *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->file = strdup("");
	cfg->policy = strdup("noop");
	if (!cfg->file || !cfg->policy) {
		dconfig_free(cfg);
		return -ENOMEM;
	}
	cfg->limits.clients = 1024;
	cfg->limits.fds_per_client = 4096;
	cfg->limits.ring_size = 8ull << 20;
	cfg->limits.ring_entries = 4096;
	cfg->limits.queued_bytes = 64ull << 20;
	return 0;
}

void dconfig_free(struct dconfig *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->ndevices; i++) {
		free(cfg->devices[i].pattern);
		free(cfg->devices[i].policy);
		for (size_t k = 0; k < cfg->devices[i].ntiers; k++)
			free(cfg->devices[i].tiers[k]);
		free(cfg->devices[i].tiers);
	}
	free(cfg->devices);
	for (size_t i = 0; i < cfg->ntiers; i++) {
		free(cfg->tiers[i].name);
		free(cfg->tiers[i].path);
		free(cfg->tiers[i].mount);
	}
	free(cfg->tiers);
	free(cfg->file);
	free(cfg->socket);
	free(cfg->policy);
	memset(cfg, 0, sizeof(*cfg));
}

const struct dcfg_device *dconfig_device_for(const struct dconfig *cfg, const char *mount)
{
	for (size_t i = 0; i < cfg->ndevices; i++) {
		const struct dcfg_device *dv = &cfg->devices[i];

		if (!strcmp(dv->pattern, mount) || !fnmatch(dv->pattern, mount, FNM_PATHNAME))
			return dv;
	}
	return NULL;
}

const char *dconfig_policy_for(const struct dconfig *cfg, const char *mount, unsigned *ret_qd)
{
	const struct dcfg_device *dv = dconfig_device_for(cfg, mount);

	*ret_qd = dv ? dv->queue_depth : 0;
	return dv && dv->policy ? dv->policy : cfg->policy;
}

const struct dcfg_tier *dconfig_tier(const struct dconfig *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->ntiers; i++)
		if (!strcmp(cfg->tiers[i].name, name))
			return &cfg->tiers[i];
	return NULL;
}

bool dconfig_schedules(const struct dconfig *cfg, const char *mount)
{
	const struct dcfg_device *dv = dconfig_device_for(cfg, mount);

	return dv && dv->schedule;
}

/* Index of key in names, or -1 after setting the error (with a suggestion
 * for a likely typo). */
static int key_index(struct cat_yaml *y, const yaml_node_t *kn, const char *ctx,
		     const char *const *names, size_t n, const char *ks)
{
	const char *hint;
	char b[64], list[160] = "";

	for (size_t i = 0; i < n; i++)
		if (!strcmp(ks, names[i]))
			return (int)i;
	hint = cat_suggest(ks, names, n);
	if (hint) {
		cat_yaml_err(y, kn, "%s: unknown key '%s'; did you mean '%s'?", ctx,
			     cat_yaml_shown(ks, b, sizeof(b)), hint);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? (i + 1 == n ? " or " : ", ") : "", names[i]);
	cat_yaml_err(y, kn, "%s: unknown key '%s': expected %s", ctx,
		     cat_yaml_shown(ks, b, sizeof(b)), list);
	return -1;
}

/* A policy spec iosigd can run without tiers, or the error at node. */
static int check_spec(struct cat_yaml *y, const yaml_node_t *node, const char *ctx,
		      const char *spec)
{
	char perr[256];

	if (dpolicy_check(spec, false, false, perr, sizeof(perr)) < 0)
		return cat_yaml_err(y, node, "%s: %s", ctx, perr);
	return 0;
}

/* The error at a position remembered from a node (checks made once the
 * whole section is read). */
static int err_at(struct cat_yaml *y, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int err_at(struct cat_yaml *y, int line, int col, const char *fmt, ...)
{
	char msg[sizeof(((struct iosig_error *)0)->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cat_error(y->err, y->file, line, col, "%s", msg);
	return -EINVAL;
}

/* A whole number (or a size when `size`) in [min, max]. */
static int parse_count(struct cat_yaml *y, const yaml_node_t *node, const char *ctx, bool size,
		       uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *s = cat_yaml_scalar(y, node, ctx, size ? "a size such as 8MiB" : "a whole number");
	double v;

	if (!s)
		return -EINVAL;
	if (cat_parse_number(size ? CAT_T_SIZE : CAT_T_UINT, s, &v) < 0 || v < (double)min ||
	    v > (double)max || v != (double)(uint64_t)v)
		return cat_yaml_err(y, node, "%s: expected %s from %llu to %llu, got '%s'", ctx,
				    size ? "a size in bytes" : "a whole number",
				    (unsigned long long)min, (unsigned long long)max, s);
	*ret = (uint64_t)v;
	return 0;
}

static bool empty(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && !n->data.scalar.length;
}

/* Walks a mapping: for each pair, fn(key index, key node, value node). */
typedef int (*pair_fn)(struct cat_yaml *y, void *ctx, int idx, const yaml_node_t *kn,
		       const yaml_node_t *vn);

static int each_pair(struct cat_yaml *y, const yaml_node_t *node, const char *ctx,
		     const char *const *names, size_t n, pair_fn fn, void *fctx)
{
	unsigned seen = 0;

	if (empty(node))
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(y, node, "%s: expected a mapping, got %s", ctx, cat_yaml_kind(node));
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(&y->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(&y->doc, p->value);
		const char *ks;
		int idx, r;

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(y, kn, ctx, "a key");
		if (!ks)
			return -EINVAL;
		idx = key_index(y, kn, ctx, names, n, ks);
		if (idx < 0)
			return -EINVAL;
		if (seen & (1u << idx))
			return cat_yaml_err(y, kn, "%s: '%s' given twice", ctx, names[idx]);
		seen |= 1u << idx;
		r = fn(y, fctx, idx, kn, vn);
		if (r < 0)
			return r;
	}
	return 0;
}

static int set_string(char **dst, const char *s)
{
	char *c = strdup(s);

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

struct dev_ctx {
	struct dcfg_device *dv;
	char ctx[96];
};

/* A tier name: [a-z0-9_-], 1 to 63 characters (it names a store file). */
static bool tier_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

/* `tiers: [a, b]` (or one name) of a device. */
static int parse_tier_names(struct cat_yaml *y, struct dev_ctx *c, const yaml_node_t *vn)
{
	const yaml_node_t *one[1] = { vn };
	size_t n = 1;
	char b[64];

	if (vn->type == YAML_SEQUENCE_NODE)
		n = (size_t)(vn->data.sequence.items.top - vn->data.sequence.items.start);
	if (!n || n > 8)
		return cat_yaml_err(y, vn, "%s: tiers: expected 1 to 8 tier names, got %zu", c->ctx, n);
	c->dv->tiers = calloc(n, sizeof(*c->dv->tiers));
	if (!c->dv->tiers)
		return cat_yaml_err(y, vn, "out of memory");
	c->dv->tiers_line = (int)vn->start_mark.line + 1;
	c->dv->tiers_col = (int)vn->start_mark.column + 1;
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *in = vn->type == YAML_SEQUENCE_NODE ?
			yaml_document_get_node(&y->doc, vn->data.sequence.items.start[i]) : one[0];
		const char *s = in ? cat_yaml_scalar(y, in, "tiers", "a tier name") : NULL;

		if (!s)
			return -EINVAL;
		if (!tier_name_ok(s))
			return cat_yaml_err(y, in, "%s: tiers: '%s' is not a tier name ([a-z0-9_-], at most 63)",
					    c->ctx, cat_yaml_shown(s, b, sizeof(b)));
		for (size_t k = 0; k < c->dv->ntiers; k++)
			if (!strcmp(c->dv->tiers[k], s))
				return cat_yaml_err(y, in, "%s: tiers: '%s' given twice", c->ctx, s);
		c->dv->tiers[c->dv->ntiers] = strdup(s);
		if (!c->dv->tiers[c->dv->ntiers])
			return cat_yaml_err(y, in, "out of memory");
		c->dv->ntiers++;
	}
	return 0;
}

static int device_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
		       const yaml_node_t *vn)
{
	struct dev_ctx *c = vctx;
	const char *s;
	uint64_t v;

	switch (idx) {
	case 0:
		/* Checked once the device's tiers are known (check_devices). */
		s = cat_yaml_scalar(y, vn, c->ctx, "a policy such as bid-hdd:wait_max=50ms");
		if (!s)
			return -EINVAL;
		c->dv->policy_line = (int)vn->start_mark.line + 1;
		c->dv->policy_col = (int)vn->start_mark.column + 1;
		return set_string(&c->dv->policy, s) < 0 ? cat_yaml_err(y, vn, "out of memory") : 0;
	case 1:
		if (parse_count(y, vn, "queue_depth", false, 1, 4096, &v) < 0)
			return -EINVAL;
		c->dv->queue_depth = (unsigned)v;
		return 0;
	case 2:
		return parse_tier_names(y, c, vn);
	case 3:
		s = cat_yaml_scalar(y, vn, "defer_close", "true or false");
		if (!s)
			return -EINVAL;
		if (!cat_parse_bool(s, &c->dv->defer_close))
			return cat_yaml_err(y, vn, "%s: defer_close: expected true or false, got '%s'",
					    c->ctx, s);
		return 0;
	default: {
		const char *key = idx == 4 ? "schedule" : "experimental";
		char sb[64];
		bool b;

		s = cat_yaml_scalar(y, vn, c->ctx, "true or false");
		if (!s)
			return -EINVAL;
		if (!cat_parse_bool(s, &b))
			return cat_yaml_err(y, vn, "%s: %s: bad value '%s': expected true or false",
					    c->ctx, key, cat_yaml_shown(s, sb, sizeof(sb)));
		*(idx == 4 ? &c->dv->schedule : &c->dv->experimental) = b;
		return 0;
	}
	}
}

static int parse_devices(struct cat_yaml *y, struct dconfig *cfg, const yaml_node_t *node)
{
	size_t n;

	if (empty(node))
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(y, node,
				    "daemon: devices: expected a mapping of mount points to settings, got %s",
				    cat_yaml_kind(node));
	n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
	cfg->devices = calloc(n ? n : 1, sizeof(*cfg->devices));
	if (!cfg->devices)
		return cat_yaml_err(y, node, "out of memory");
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(&y->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(&y->doc, p->value);
		struct dev_ctx c;
		const char *ks;
		char b[64];

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(y, kn, "daemon: devices", "a mount point");
		if (!ks)
			return -EINVAL;
		if (ks[0] != '/')
			return cat_yaml_err(y, kn,
					    "daemon: devices: '%s' is not a mount point: expected an absolute path such as /mnt/hdd or a pattern such as /mnt/*",
					    cat_yaml_shown(ks, b, sizeof(b)));
		for (size_t i = 0; i < cfg->ndevices; i++)
			if (!strcmp(cfg->devices[i].pattern, ks))
				return cat_yaml_err(y, kn, "daemon: devices: '%s' given twice (first at line %d)",
						    cat_yaml_shown(ks, b, sizeof(b)), cfg->devices[i].line);
		c.dv = &cfg->devices[cfg->ndevices];
		c.dv->pattern = strdup(ks);
		if (!c.dv->pattern)
			return cat_yaml_err(y, kn, "out of memory");
		c.dv->line = (int)kn->start_mark.line + 1;
		cfg->ndevices++;
		snprintf(c.ctx, sizeof(c.ctx), "daemon: device '%s'", cat_yaml_shown(ks, b, sizeof(b)));
		if (each_pair(y, vn, c.ctx, device_keys, N(device_keys), device_pair, &c) < 0)
			return -EINVAL;
	}
	return 0;
}

static int limit_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
		      const yaml_node_t *vn)
{
	struct dcfg_limits *l = vctx;
	uint64_t v;

	switch (idx) {
	case 0:
		if (parse_count(y, vn, "daemon: limits: clients", false, 1, 1u << 20, &v) < 0)
			return -EINVAL;
		l->clients = (unsigned)v;
		return 0;
	case 1:
		if (parse_count(y, vn, "daemon: limits: fds_per_client", false, 1, 1u << 20, &v) < 0)
			return -EINVAL;
		l->fds_per_client = (unsigned)v;
		return 0;
	case 2:
		if (parse_count(y, vn, "daemon: limits: ring_size", true, IOSD_RING_DATA_MIN,
				IOSD_RING_DATA_MAX, &v) < 0)
			return -EINVAL;
		l->ring_size = v;
		return 0;
	default:
		if (parse_count(y, vn, "daemon: limits: queued_bytes", true, 1ull << 20, 1ull << 40,
				&v) < 0)
			return -EINVAL;
		l->queued_bytes = v;
		return 0;
	}
}

static const char *const writeback_keys[] = { "dirty", "expire" };

static int writeback_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
			  const yaml_node_t *vn)
{
	struct dcfg_writeback *wb = vctx;
	const char *s;
	char b[64];
	uint64_t v;
	double t;

	if (idx == 0) {
		if (parse_count(y, vn, "daemon: writeback: dirty", true, 1, 1ull << 40, &v) < 0)
			return -EINVAL;
		wb->dirty = v;
		return 0;
	}
	s = cat_yaml_scalar(y, vn, "daemon: writeback: expire", "a duration such as 15s");
	if (!s)
		return -EINVAL;
	if (cat_parse_number(CAT_T_TIME, s, &t) < 0 || !(t >= 0.001 && t <= 3600))
		return cat_yaml_err(y, vn, "daemon: writeback: expire: expected a duration from 1ms to 1h, got '%s'",
				    cat_yaml_shown(s, b, sizeof(b)));
	wb->expire_ns = (uint64_t)(t * 1e9);
	return 0;
}

struct tier_ctx {
	struct dcfg_tier *t;
	char ctx[96];
};

static int tier_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
		     const yaml_node_t *vn)
{
	struct tier_ctx *c = vctx;
	const char *s;
	char b[64];
	uint64_t v;
	uint8_t cls;

	switch (idx) {
	case 0:
	case 1:
		s = cat_yaml_scalar(y, vn, c->ctx, idx ? "a mount point" : "a file or block device path");
		if (!s)
			return -EINVAL;
		if (s[0] != '/' || strlen(s) >= 4000)
			return cat_yaml_err(y, vn, "%s: %s: '%s' is not an absolute path", c->ctx,
					    tier_keys[idx], cat_yaml_shown(s, b, sizeof(b)));
		return set_string(idx ? &c->t->mount : &c->t->path, s) < 0 ?
			       cat_yaml_err(y, vn, "out of memory") : 0;
	case 2:
		if (parse_count(y, vn, "size", true, 1u << 20, 1ull << 50, &v) < 0)
			return -EINVAL;
		c->t->size = v;
		return 0;
	case 3:
		if (parse_count(y, vn, "journal", true, 64u << 10, 1ull << 40, &v) < 0)
			return -EINVAL;
		c->t->journal = v;
		return 0;
	case 4:
		if (parse_count(y, vn, "queue_depth", false, 1, 4096, &v) < 0)
			return -EINVAL;
		c->t->queue_depth = (unsigned)v;
		return 0;
	default:
		if (cat_yaml_class(y, vn, "class", &cls) < 0)
			return -EINVAL;
		c->t->cls = cls;
		return 0;
	}
}

static int parse_tiers(struct cat_yaml *y, struct dconfig *cfg, const yaml_node_t *node)
{
	size_t n;

	if (empty(node))
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(y, node, "daemon: tiers: expected a mapping of tier names to settings, got %s",
				    cat_yaml_kind(node));
	n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
	cfg->tiers = calloc(n ? n : 1, sizeof(*cfg->tiers));
	if (!cfg->tiers)
		return cat_yaml_err(y, node, "out of memory");
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(&y->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(&y->doc, p->value);
		struct tier_ctx c;
		const char *ks;
		char b[64];

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(y, kn, "daemon: tiers", "a tier name");
		if (!ks)
			return -EINVAL;
		if (!tier_name_ok(ks))
			return cat_yaml_err(y, kn, "daemon: tiers: '%s' is not a tier name ([a-z0-9_-], at most 63)",
					    cat_yaml_shown(ks, b, sizeof(b)));
		if (dconfig_tier(cfg, ks))
			return cat_yaml_err(y, kn, "daemon: tiers: '%s' given twice", ks);
		c.t = &cfg->tiers[cfg->ntiers];
		c.t->cls = -1;
		c.t->name = strdup(ks);
		if (!c.t->name)
			return cat_yaml_err(y, kn, "out of memory");
		c.t->line = (int)kn->start_mark.line + 1;
		c.t->col = (int)kn->start_mark.column + 1;
		cfg->ntiers++;
		snprintf(c.ctx, sizeof(c.ctx), "daemon: tier '%s'", ks);
		if (each_pair(y, vn, c.ctx, tier_keys, N(tier_keys), tier_pair, &c) < 0)
			return -EINVAL;
		if (!c.t->path == !c.t->mount)
			return cat_yaml_err(y, kn, "%s: give either path: (a store file or block device) or mount: (a store file on that mount), not %s",
					    c.ctx, c.t->path ? "both" : "neither");
		if (c.t->mount) {
			char path[4200];

			snprintf(path, sizeof(path), "%s%s.iosigd/%s.tier", c.t->mount,
				 c.t->mount[strlen(c.t->mount) - 1] == '/' ? "" : "/", ks);
			if (set_string(&c.t->path, path) < 0)
				return cat_yaml_err(y, kn, "out of memory");
			if (!c.t->size)
				return cat_yaml_err(y, kn, "%s: size: needed for a store file on a mount, e.g. size: 4GiB",
						    c.ctx);
		}
	}
	return 0;
}

/* Once the section is read: every device's policy fits its tiers, every
 * tier named exists and belongs to one device only. */
static int check_devices(struct cat_yaml *y, struct dconfig *cfg)
{
	for (size_t i = 0; i < cfg->ndevices; i++) {
		struct dcfg_device *dv = &cfg->devices[i];
		const char *spec = dv->policy ? dv->policy : cfg->policy;
		char perr[256], ctx[96], b[64];

		snprintf(ctx, sizeof(ctx), "daemon: device '%s'", cat_yaml_shown(dv->pattern, b, sizeof(b)));
		if (dpolicy_check(spec, dv->ntiers > 0, dv->experimental, perr, sizeof(perr)) < 0)
			return err_at(y, dv->policy ? dv->policy_line : dv->tiers_line,
				      dv->policy ? dv->policy_col : dv->tiers_col, "%s: %s", ctx, perr);
		if (!dv->ntiers)
			continue;
		if (strpbrk(dv->pattern, "*?["))
			return err_at(y, dv->tiers_line, dv->tiers_col,
				      "%s: tiers: a tier belongs to one device: give the mount point itself, not a pattern",
				      ctx);
		for (size_t k = 0; k < dv->ntiers; k++) {
			struct dcfg_tier *t = (struct dcfg_tier *)dconfig_tier(cfg, dv->tiers[k]);

			if (!t)
				return err_at(y, dv->tiers_line, dv->tiers_col,
					      "%s: tiers: no tier '%s' in daemon: tiers:", ctx, dv->tiers[k]);
			if (t->used)
				return err_at(y, dv->tiers_line, dv->tiers_col,
					      "%s: tiers: tier '%s' already belongs to another device", ctx,
					      t->name);
			t->used = true;
		}
	}
	return 0;
}

static int daemon_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
		       const yaml_node_t *vn)
{
	struct dconfig *cfg = vctx;
	const char *s;
	char b[64];

	switch (idx) {
	case 0:
		s = cat_yaml_scalar(y, vn, "daemon: socket", "a path such as /run/iosigd/iosigd.sock");
		if (!s)
			return -EINVAL;
		if (s[0] != '/' || strlen(s) >= 108)
			return cat_yaml_err(y, vn,
					    "daemon: socket: '%s' must be an absolute path shorter than 108 bytes",
					    cat_yaml_shown(s, b, sizeof(b)));
		return set_string(&cfg->socket, s) < 0 ? cat_yaml_err(y, vn, "out of memory") : 0;
	case 1:
		s = cat_yaml_scalar(y, vn, "daemon: policy", "a policy such as noop or bid-hdd");
		if (!s || check_spec(y, vn, "daemon: policy", s) < 0)
			return -EINVAL;
		return set_string(&cfg->policy, s) < 0 ? cat_yaml_err(y, vn, "out of memory") : 0;
	case 2:
		return parse_devices(y, cfg, vn);
	case 3:
		return each_pair(y, vn, "daemon: limits", limit_keys, N(limit_keys), limit_pair,
				 &cfg->limits);
	case 5:
		return each_pair(y, vn, "daemon: writeback", writeback_keys, N(writeback_keys),
				 writeback_pair, &cfg->writeback);
	default:
		return parse_tiers(y, cfg, vn);
	}
}

/* "file:line:column: message" from an iosig_error. */
static void format_err(const struct iosig_error *e, char *err, size_t errlen)
{
	if (e->line)
		snprintf(err, errlen, "%s:%d:%d: %s", e->file, e->line, e->column, e->msg);
	else if (e->file[0])
		snprintf(err, errlen, "%s: %s", e->file, e->msg);
	else
		snprintf(err, errlen, "%s", e->msg);
}

int dconfig_load_buffer(struct dconfig *cfg, const char *name, const char *buf, size_t len,
			char *err, size_t errlen)
{
	struct iosig_error ierr;
	struct cat_yaml y = { .file = name, .err = &ierr };
	const yaml_node_t *root;
	int r;

	memset(&ierr, 0, sizeof(ierr));
	r = set_string(&cfg->file, name);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	r = cat_yaml_load(&y, buf, len);
	if (r < 0) {
		format_err(&ierr, err, errlen);
		return r;
	}
	root = yaml_document_get_root_node(&y.doc);
	if (root && root->type == YAML_MAPPING_NODE) {
		const yaml_node_t *seen = NULL;

		for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
		     r == 0 && p < root->data.mapping.pairs.top; p++) {
			const yaml_node_t *kn = yaml_document_get_node(&y.doc, p->key);
			const yaml_node_t *vn = yaml_document_get_node(&y.doc, p->value);

			if (!kn || !vn || kn->type != YAML_SCALAR_NODE ||
			    strcmp((const char *)kn->data.scalar.value, "daemon"))
				continue;
			if (seen) {
				r = cat_yaml_err(&y, kn, "daemon: given twice (first at line %d)",
						 (int)seen->start_mark.line + 1);
				break;
			}
			seen = kn;
			r = each_pair(&y, vn, "daemon", daemon_keys, N(daemon_keys), daemon_pair, cfg);
			if (r == 0)
				r = check_devices(&y, cfg);
		}
	}
	cat_yaml_done(&y);
	if (r < 0)
		format_err(&ierr, err, errlen);
	return r;
}

int dconfig_load(struct dconfig *cfg, const char *path, char *err, size_t errlen)
{
	struct iosig_error ierr;
	char found[PATH_MAX];
	bool explicit_;
	size_t len;
	char *buf;
	int r;

	cat_config_locate(path, found, sizeof(found), &explicit_);
	if (!found[0])
		return 0;   /* no file anywhere: the defaults */
	memset(&ierr, 0, sizeof(ierr));
	r = cat_read_file(found, DCFG_MAX_BYTES, "configuration file", &buf, &len, &ierr);
	if (r == -ENOENT && !explicit_)
		return 0;
	if (r < 0) {
		format_err(&ierr, err, errlen);
		return r;
	}
	r = dconfig_load_buffer(cfg, found, buf, len, err, errlen);
	free(buf);
	return r;
}
