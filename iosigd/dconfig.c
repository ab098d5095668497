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

static const char *const daemon_keys[] = { "socket", "policy", "devices", "limits" };
static const char *const device_keys[] = { "policy", "queue_depth", "schedule" };
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
	}
	free(cfg->devices);
	free(cfg->file);
	free(cfg->socket);
	free(cfg->policy);
	memset(cfg, 0, sizeof(*cfg));
}

/* The first `devices:` entry whose mount point or pattern matches, or NULL. */
static const struct dcfg_device *device_for(const struct dconfig *cfg, const char *mount)
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
	const struct dcfg_device *dv = device_for(cfg, mount);

	*ret_qd = dv ? dv->queue_depth : 0;
	return dv && dv->policy ? dv->policy : cfg->policy;
}

bool dconfig_schedules(const struct dconfig *cfg, const char *mount)
{
	const struct dcfg_device *dv = device_for(cfg, mount);

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

/* A policy spec iosigd can run, or the error at node. */
static int check_spec(struct cat_yaml *y, const yaml_node_t *node, const char *ctx,
		      const char *spec)
{
	char perr[256];

	if (dpolicy_check(spec, perr, sizeof(perr)) < 0)
		return cat_yaml_err(y, node, "%s: %s", ctx, perr);
	return 0;
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

static int device_pair(struct cat_yaml *y, void *vctx, int idx, const yaml_node_t *kn,
		       const yaml_node_t *vn)
{
	struct dev_ctx *c = vctx;
	const char *s;
	uint64_t v;

	switch (idx) {
	case 0:
		s = cat_yaml_scalar(y, vn, c->ctx, "a policy such as bid-hdd:wait_max=50ms");
		if (!s || check_spec(y, vn, c->ctx, s) < 0)
			return -EINVAL;
		return set_string(&c->dv->policy, s) < 0 ? cat_yaml_err(y, vn, "out of memory") : 0;
	case 1:
		if (parse_count(y, vn, "queue_depth", false, 1, 4096, &v) < 0)
			return -EINVAL;
		c->dv->queue_depth = (unsigned)v;
		return 0;
	default: {
		char sb[64];
		bool b;

		s = cat_yaml_scalar(y, vn, c->ctx, "true or false");
		if (!s)
			return -EINVAL;
		if (!cat_parse_bool(s, &b))
			return cat_yaml_err(y, vn, "%s: schedule: bad value '%s': expected true or false",
					    c->ctx, cat_yaml_shown(s, sb, sizeof(sb)));
		c->dv->schedule = b;
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
	default:
		return each_pair(y, vn, "daemon: limits", limit_keys, N(limit_keys), limit_pair,
				 &cfg->limits);
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
