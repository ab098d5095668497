/* SPDX-License-Identifier: MIT */
/*
 * catalog_yaml.h - the YAML walking shared by the configuration file
 * (config.c), the probe cache (probe_cache.c) and iosig-redirect's rules
 * (rules_file.c): one loader, one error format (file:line:column, the key,
 * what was expected), one table of keys.  catalog_yaml.c implements it, but
 * cat_yaml_values(), which walks config.c's table of keys.
 */
#ifndef IOSIG_CATALOG_YAML_H
#define IOSIG_CATALOG_YAML_H

#include <yaml.h>

#include "catalog_internal.h"

/* Where a key may appear (the scope of cat_yaml_values()). */
#define CAT_SC_DEFAULTS 1u
#define CAT_SC_CLASS 2u
#define CAT_SC_MOUNT 4u
#define CAT_SC_PROBE 8u

/* One loaded YAML document being walked. */
struct cat_yaml {
	yaml_document_t doc;
	bool loaded;
	const char *file;          /* name in messages */
	struct iosig_error *err;   /* may be NULL */
	struct cat_strpool *pool;  /* where string values are copied */
	struct cat_config *cfg;    /* config.c only */
};

/* Deepest nesting of lists and mappings a file may have (configurations
 * and probe caches need 4). */
#define CAT_YAML_MAX_DEPTH 32

/* Most entries a `mounts:` mapping may have (configuration, probe cache):
 * a machine has dozens of mount points, a large site's configuration a few
 * hundred patterns.  More is refused with a message rather than read: every
 * catalog build matches each mount against every entry. */
#define CAT_YAML_MOUNTS_MAX 10000

/* Parses buf into y->doc (exactly one document, nested at most
 * CAT_YAML_MAX_DEPTH deep).  -EINVAL with libyaml's
 * problem and position in y->err; nothing to free then.  On success the
 * caller frees the document with cat_yaml_done(). */
int cat_yaml_load(struct cat_yaml *y, const char *buf, size_t len);
void cat_yaml_done(struct cat_yaml *y);

/* Fills y->err at node (line, column, span) and returns -EINVAL. */
int cat_yaml_err(struct cat_yaml *y, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Text of a scalar, or NULL with the error set ("KEY: expected EXPECT, got a
 * list"). */
const char *cat_yaml_scalar(struct cat_yaml *y, const yaml_node_t *node, const char *key,
			    const char *expect);
/* A device class name (ram nvm ssd hdd raid network) at node, or the error
 * (with a suggestion for a typo). */
int cat_yaml_class(struct cat_yaml *p, const yaml_node_t *node, const char *key, uint8_t *ret);
/* "a mapping" / "a list" / "a scalar" */
const char *cat_yaml_kind(const yaml_node_t *node);
/* Bounded printable copy for messages. */
const char *cat_yaml_shown(const char *s, char *buf, size_t size);
/* Closest of names[] to word when it looks like a typo, else NULL (the
 * signature parser's rule, sigp_suggest()). */
const char *cat_suggest(const char *word, const char *const *names, size_t n);

/* A mapping of KEY: VALUE valid in `scope`; `ctx` names it in messages
 * ("defaults", "class 'hdd'", "mount '/scratch'").  In config.c, with the
 * table of keys. */
int cat_yaml_values(struct cat_yaml *y, const yaml_node_t *node, unsigned scope, const char *ctx,
		    struct cat_values *v, struct cat_pos *pos);

/* Reads a whole regular file (at most max bytes) into a NUL-terminated
 * buffer; `what` names it in messages ("configuration file"). */
int cat_read_file(const char *path, size_t max, const char *what, char **ret_buf,
		  size_t *ret_len, struct iosig_error *err);

#endif /* IOSIG_CATALOG_YAML_H */
