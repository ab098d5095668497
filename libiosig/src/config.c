/* SPDX-License-Identifier: MIT */
/*
 * config.c - the YAML configuration file of the catalog (docs/design.md §5.1,
 * source 4; schema in docs/config.md and iosig-config(5)).
 *
 *   version: 1                     # optional
 *   defaults: { KEY: VALUE ... }   # every mount
 *   classes:  { hdd: { ... } }     # every mount of a class
 *   mounts:
 *     /scratch: { KEY: VALUE ... } # one mount point
 *     "/mnt/disk*": { ignore: true }   # an fnmatch(3) pattern
 *
 * One table (keys[]) gives every key its type, where it may appear and how it
 * is validated; parsing, error messages and did-you-mean suggestions all come
 * from it.  Values with units go through iosig_parse_value() - the one unit
 * parser of the project (libiosig/sig/sig_value.c), which the policies' and
 * the simulator's options use too.  Every error names file:line:column and
 * the key, and says what was expected.
 */
#include "catalog_yaml.h"
#include "env.h"
#include "sig_internal.h"
#include "strset.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Larger files are refused: a configuration is a few kilobytes, and the
 * YAML document of a file takes about 30 times its size in memory (an
 * annotated program loads it at its first open).  docs/config.md. */
#define CFG_MAX_BYTES (4u << 20)

#define SC_DEFAULTS CAT_SC_DEFAULTS
#define SC_CLASS CAT_SC_CLASS
#define SC_MOUNT CAT_SC_MOUNT
#define SC_PROBE CAT_SC_PROBE
#define SC_ALL (SC_DEFAULTS | SC_CLASS | SC_MOUNT)

/* Validation of a numeric value beyond its type. */
enum cfg_min {
	MIN_ZERO,      /* >= 0 */
	MIN_POSITIVE,  /* > 0 */
	MIN_ONE,       /* >= 1 */
};

struct cfg_key {
	const char *name;
	int key;               /* IOSIG_F_* or CAT_K_* */
	enum cat_type type;
	unsigned scope;
	enum cfg_min min;
};

static const struct cfg_key keys[] = {
	{ "ignore", CAT_K_IGNORE, CAT_T_BOOL, SC_MOUNT, MIN_ZERO },
	{ "data_dir", IOSIG_F_DATA_DIR, CAT_T_STRING, SC_ALL, MIN_ZERO },
	{ "class", IOSIG_F_CLASS, CAT_T_CLASS, SC_MOUNT, MIN_ZERO },
	{ "global", IOSIG_F_GLOBAL, CAT_T_BOOL, SC_ALL, MIN_ZERO },
	{ "volatile", IOSIG_F_VOLATILE, CAT_T_BOOL, SC_ALL, MIN_ZERO },
	{ "rotational", IOSIG_F_ROTATIONAL, CAT_T_BOOL, SC_ALL, MIN_ZERO },
	{ "label", IOSIG_F_LABELS, CAT_T_LABELS, SC_ALL, MIN_ZERO },
	{ "labels", IOSIG_F_LABELS, CAT_T_LABELS, SC_ALL, MIN_ZERO },
	{ "capacity", IOSIG_F_CAPACITY, CAT_T_SIZE, SC_MOUNT, MIN_ZERO },
	{ "free", IOSIG_F_FREE, CAT_T_SIZE, SC_MOUNT, MIN_ZERO },
	{ "reserve", IOSIG_F_RESERVE, CAT_T_RESERVE, SC_ALL, MIN_ZERO },
	{ "block_size", IOSIG_F_BLOCK_SIZE, CAT_T_SIZE, SC_ALL | SC_PROBE, MIN_ONE },
	{ "max_filesize", IOSIG_F_MAX_FILESIZE, CAT_T_SIZE, SC_ALL, MIN_ZERO },
	{ "seq_read_bw", IOSIG_F_SEQ_READ_BW, CAT_T_RATE, SC_ALL | SC_PROBE, MIN_POSITIVE },
	{ "seq_write_bw", IOSIG_F_SEQ_WRITE_BW, CAT_T_RATE, SC_ALL | SC_PROBE, MIN_POSITIVE },
	{ "rand_read_bw", IOSIG_F_RAND_READ_BW, CAT_T_RATE, SC_ALL | SC_PROBE, MIN_ZERO },
	{ "rand_write_bw", IOSIG_F_RAND_WRITE_BW, CAT_T_RATE, SC_ALL | SC_PROBE, MIN_ZERO },
	{ "latency", IOSIG_F_LATENCY, CAT_T_TIME, SC_ALL | SC_PROBE, MIN_ZERO },
	{ "seek", IOSIG_F_SEEK, CAT_T_TIME, SC_ALL | SC_PROBE, MIN_ZERO },
	{ "iops", IOSIG_F_IOPS, CAT_T_COUNT, SC_ALL | SC_PROBE, MIN_POSITIVE },
	{ "mttf", IOSIG_F_MTTF, CAT_T_TIME, SC_ALL, MIN_POSITIVE },
	{ "mttr", IOSIG_F_MTTR, CAT_T_TIME, SC_ALL, MIN_POSITIVE },
	{ "ber", IOSIG_F_BER, CAT_T_PROB, SC_ALL, MIN_ZERO },
	{ "ecc", IOSIG_F_ECC, CAT_T_UINT, SC_ALL, MIN_ZERO },
	{ "sector_bits", IOSIG_F_SECTOR_BITS, CAT_T_UINT, SC_ALL, MIN_ONE },
	{ "layout", IOSIG_F_LAYOUT, CAT_T_LAYOUT, SC_ALL, MIN_ZERO },
	{ "bcw", IOSIG_F_BCW, CAT_T_BCW, SC_ALL | SC_PROBE, MIN_ZERO },
	{ "fstype", CAT_K_FSTYPE, CAT_T_STRING, SC_MOUNT | SC_PROBE, MIN_ZERO },
	{ "source", CAT_K_SOURCE, CAT_T_STRING, SC_MOUNT | SC_PROBE, MIN_ZERO },
	{ "fsid", CAT_K_FSID, CAT_T_FSID, SC_PROBE, MIN_ZERO },
	{ "probed_at", CAT_K_PROBED_AT, CAT_T_COUNT, SC_PROBE, MIN_ZERO },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* `daemon:` is iosigd's (iosigd/dconfig.c reads it); the catalog only
 * checks that it is a mapping. */
static const char *const top_keys[] = { "version", "defaults", "classes", "mounts", "daemon" };
#define NTOP (sizeof(top_keys) / sizeof(top_keys[0]))

/* ---- value parsing (shared with probe_cache.c) ------------------------ */

const char *cat_type_expect(enum cat_type type)
{
	switch (type) {
	case CAT_T_BOOL:
		return "true or false";
	case CAT_T_SIZE:
		return "a size such as 64MiB or 1.5*GiB";
	case CAT_T_TIME:
		return "a time such as 10*y or 87600*h";
	case CAT_T_RATE:
		return "a bandwidth such as 430MiB/s";
	case CAT_T_PROB:
		return "a probability such as 1e-6 or 1ppm";
	case CAT_T_COUNT:
		return "a number such as 6000";
	case CAT_T_UINT:
		return "a whole number such as 2";
	case CAT_T_RESERVE:
		return "a size such as 1GiB or a percentage of the capacity such as 2%";
	case CAT_T_STRING:
		return "a string";
	case CAT_T_CLASS:
		return "one of ram, nvm, ssd, hdd, raid, network";
	case CAT_T_LABELS:
		return "archive or tamperproof, or a list of them";
	case CAT_T_LAYOUT:
		return "single, raid0, raid1, raid10, raid5, raid6 or replication, or a mapping "
		       "such as {kind: erasure, data: 8, parity: 3}";
	case CAT_T_BCW:
		return "a mapping with wf, wm (sizes) and lf, lm, ls (times)";
	case CAT_T_FSID:
		return "a hexadecimal filesystem id";
	}
	return "a value";
}

/* Copies text without surrounding blanks into buf; false if too long. */
static bool trim_copy(const char *text, char *buf, size_t size)
{
	size_t len;

	while (*text == ' ' || *text == '\t')
		text++;
	len = strlen(text);
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	if (len >= size)
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return true;
}

int cat_parse_number(enum cat_type type, const char *text, double *ret_value)
{
	char buf[128];
	double v;
	int ret;

	if (!trim_copy(text, buf, sizeof(buf)) || !buf[0])
		return -EINVAL;
	switch (type) {
	case CAT_T_SIZE:
	case CAT_T_RESERVE:
		ret = iosig_parse_value(buf, IOSIG_DIM_SIZE, &v, NULL);
		break;
	case CAT_T_TIME:
		ret = iosig_parse_value(buf, IOSIG_DIM_TIME, &v, NULL);
		break;
	case CAT_T_RATE:
		/* "430MiB/s"; a plain number is bytes per second. */
		ret = iosig_parse_value(buf, IOSIG_DIM_RATE, &v, NULL);
		break;
	case CAT_T_PROB:
		ret = iosig_parse_value(buf, IOSIG_DIM_FRACTION, &v, NULL);
		if (!ret && v > 1)
			ret = -ERANGE;
		break;
	case CAT_T_COUNT:
		ret = iosig_parse_value(buf, IOSIG_DIM_NONE, &v, NULL);
		break;
	case CAT_T_UINT:
		ret = iosig_parse_value(buf, IOSIG_DIM_NONE, &v, NULL);
		if (!ret && (v != floor(v) || v > 4294967295.0))
			ret = -ERANGE;
		break;
	default:
		return -EINVAL;
	}
	if (ret < 0)
		return ret == -ERANGE ? -ERANGE : -EINVAL;
	if (!isfinite(v) || v < 0)
		return -ERANGE;
	if ((type == CAT_T_SIZE || type == CAT_T_RESERVE) && v >= 18446744073709551616.0)
		return -ERANGE;
	*ret_value = v;
	return 0;
}

/* ---- the document walk (shared with probe_cache.c) ---------------------- */

static int oom(struct cat_yaml *p)
{
	cat_error(p->err, p->file, 0, 0, "out of memory");
	return -ENOMEM;
}

static const char *const class_names[IOSIG_CLASS_COUNT] = {
	"ram", "nvm", "ssd", "hdd", "raid", "network",
};

int cat_yaml_class(struct cat_yaml *p, const yaml_node_t *node, const char *key, uint8_t *ret)
{
	const char *s = cat_yaml_scalar(p, node, key, cat_type_expect(CAT_T_CLASS));
	const char *hint;
	char b[64];

	if (!s)
		return -EINVAL;
	for (unsigned i = 0; i < IOSIG_CLASS_COUNT; i++) {
		if (!strcmp(s, class_names[i])) {
			*ret = (uint8_t)i;
			return 0;
		}
	}
	hint = cat_suggest(s, class_names, IOSIG_CLASS_COUNT);
	if (hint)
		return cat_yaml_err(p, node, "%s: bad value '%s': expected %s; did you mean '%s'?", key,
				cat_yaml_shown(s, b, sizeof(b)), cat_type_expect(CAT_T_CLASS), hint);
	return cat_yaml_err(p, node, "%s: bad value '%s': expected %s", key, cat_yaml_shown(s, b, sizeof(b)),
			cat_type_expect(CAT_T_CLASS));
}

static int parse_label(struct cat_yaml *p, const yaml_node_t *node, uint32_t *labels)
{
	static const char *const names[] = { "archive", "tamperproof", "tamper" };
	static const uint32_t bits[] = { IOSIG_LABEL_ARCHIVE, IOSIG_LABEL_TAMPERPROOF,
					 IOSIG_LABEL_TAMPERPROOF };
	const char *s = cat_yaml_scalar(p, node, "label", "a label name");
	const char *hint;
	char b[64];

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*labels |= bits[i];
			return 0;
		}
	}
	hint = cat_suggest(s, names, 2);
	if (hint)
		return cat_yaml_err(p, node,
				"label: unknown label '%s': expected archive or tamperproof; did you mean '%s'?",
				cat_yaml_shown(s, b, sizeof(b)), hint);
	return cat_yaml_err(p, node, "label: unknown label '%s': expected archive or tamperproof",
			cat_yaml_shown(s, b, sizeof(b)));
}

static int parse_labels(struct cat_yaml *p, const yaml_node_t *node, uint32_t *ret)
{
	uint32_t labels = 0;
	int r;

	if (node->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = node->data.sequence.items.start;
		     it < node->data.sequence.items.top; it++) {
			const yaml_node_t *item = yaml_document_get_node(&p->doc, *it);

			if (!item)
				continue;
			r = parse_label(p, item, &labels);
			if (r < 0)
				return r;
		}
	} else if (node->type == YAML_SCALAR_NODE) {
		/* An empty scalar (`label:` or `label: ""`) means no labels. */
		if (node->data.scalar.length) {
			r = parse_label(p, node, &labels);
			if (r < 0)
				return r;
		}
	} else {
		return cat_yaml_err(p, node, "label: expected %s, got %s",
				cat_type_expect(CAT_T_LABELS), cat_yaml_kind(node));
	}
	*ret = labels;
	return 0;
}

/* A number of `type` at `node` for `key`, checked against `min`. */
static int parse_num(struct cat_yaml *p, const yaml_node_t *node, const char *key,
		     enum cat_type type, enum cfg_min min, double *ret)
{
	const char *s = cat_yaml_scalar(p, node, key, cat_type_expect(type));
	char b[64];
	double v;

	if (!s)
		return -EINVAL;
	if (!s[0])
		return cat_yaml_err(p, node, "%s: missing value: expected %s", key,
				cat_type_expect(type));
	if (cat_parse_number(type, s, &v) < 0)
		return cat_yaml_err(p, node, "%s: bad value '%s': expected %s", key,
				cat_yaml_shown(s, b, sizeof(b)), cat_type_expect(type));
	if ((min == MIN_POSITIVE && v <= 0) || (min == MIN_ONE && v < 1))
		return cat_yaml_err(p, node, "%s: bad value '%s': must be %s", key,
				cat_yaml_shown(s, b, sizeof(b)),
				min == MIN_ONE ? "at least 1" : "greater than 0");
	*ret = v;
	return 0;
}

/* Looks `name` up among the keys of a mapping; returns the value node. */
static int check_dup(struct cat_yaml *p, const yaml_node_pair_t *start,
		     const yaml_node_pair_t *pair, const yaml_node_t *knode, const char *ctx)
{
	for (const yaml_node_pair_t *q = start; q < pair; q++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, q->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)k->data.scalar.value,
			    (const char *)knode->data.scalar.value)) {
			char b[64];

			return cat_yaml_err(p, knode, "%s: '%s' given twice (first at line %d)", ctx,
					cat_yaml_shown((const char *)knode->data.scalar.value, b, sizeof(b)),
					(int)k->start_mark.line + 1);
		}
	}
	return 0;
}

/*
 * The value nodes of a small mapping with fixed keys (layout, bcw): vals[i]
 * is the node of names[i] or NULL.  Unknown and repeated keys are errors.
 */
static int sub_keys(struct cat_yaml *p, const yaml_node_t *node, const char *ctx,
		    const char *const *names, size_t n, const char *expect,
		    const yaml_node_t **vals)
{
	char b[64];

	for (size_t i = 0; i < n; i++)
		vals[i] = NULL;
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *v = yaml_document_get_node(&p->doc, pair->value);
		const char *ks, *hint;
		size_t idx = n;

		if (!k || !v)
			continue;
		ks = cat_yaml_scalar(p, k, ctx, "a key");
		if (!ks)
			return -EINVAL;
		if (check_dup(p, node->data.mapping.pairs.start, pair, k, ctx) < 0)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(ks, names[i]))
				idx = i;
		if (idx < n) {
			vals[idx] = v;
			continue;
		}
		hint = cat_suggest(ks, names, n);
		if (hint)
			return cat_yaml_err(p, k, "%s: unknown key '%s'; did you mean '%s'?", ctx,
					    cat_yaml_shown(ks, b, sizeof(b)), hint);
		return cat_yaml_err(p, k, "%s: unknown key '%s': expected %s", ctx,
				    cat_yaml_shown(ks, b, sizeof(b)), expect);
	}
	return 0;
}

static int parse_layout(struct cat_yaml *p, const yaml_node_t *node, struct iosig_layout *ret)
{
	static const char *const kinds[] = { "single", "raid0", "raid1", "raid10",
					     "raid5", "raid6", "replication", "erasure" };
	/* Disks assumed when only the kind is given. */
	static const unsigned default_disks[] = { 1, 2, 2, 4, 3, 4, 3, 0 };
	static const unsigned min_disks[] = { 1, 1, 2, 4, 3, 4, 1, 1 };
	static const char *const subkeys[] = { "kind", "disks", "copies", "data", "parity" };
	const yaml_node_t *kind_node = NULL;
	double sub[5] = { 0 };
	bool have[5] = { false };
	const yaml_node_t *subnode[5] = { NULL };
	struct iosig_layout l = { 0 };
	const char *s;
	char b[64];
	int kind = -1;
	unsigned disks;

	if (node->type == YAML_MAPPING_NODE) {
		if (sub_keys(p, node, "layout", subkeys, 5, "kind, disks, copies, data or parity",
			     subnode) < 0)
			return -EINVAL;
		for (int i = 1; i < 5; i++) {
			char name[32];

			if (!subnode[i])
				continue;
			snprintf(name, sizeof(name), "layout.%s", subkeys[i]);
			if (parse_num(p, subnode[i], name, CAT_T_UINT, i == 4 ? MIN_ZERO : MIN_ONE,
				      &sub[i]) < 0)
				return -EINVAL;
			if (sub[i] > 65535)
				return cat_yaml_err(p, subnode[i], "%s: at most 65535", name);
			have[i] = true;
		}
		kind_node = subnode[0];
		if (!kind_node)
			return cat_yaml_err(p, node, "layout: missing 'kind': expected %s",
					    cat_type_expect(CAT_T_LAYOUT));
	} else {
		kind_node = node;
	}
	s = cat_yaml_scalar(p, kind_node, "layout", cat_type_expect(CAT_T_LAYOUT));
	if (!s)
		return -EINVAL;
	for (int i = 0; i < 8; i++)
		if (!strcmp(s, kinds[i]))
			kind = i;
	if (kind < 0) {
		const char *hint = cat_suggest(s, kinds, 8);

		if (hint)
			return cat_yaml_err(p, kind_node,
					"layout: bad value '%s': expected %s; did you mean '%s'?",
					cat_yaml_shown(s, b, sizeof(b)), cat_type_expect(CAT_T_LAYOUT), hint);
		return cat_yaml_err(p, kind_node, "layout: bad value '%s': expected %s",
				cat_yaml_shown(s, b, sizeof(b)), cat_type_expect(CAT_T_LAYOUT));
	}
	l.kind = (uint8_t)kind;
	if (kind == IOSIG_LAYOUT_REPLICATION) {
		if (have[1])
			return cat_yaml_err(p, subnode[1],
					"layout.disks: replication counts copies: use copies: N");
		if (have[3] || have[4])
			return cat_yaml_err(p, subnode[have[3] ? 3 : 4],
					"layout: data and parity are for kind erasure");
		disks = have[2] ? (unsigned)sub[2] : default_disks[kind];
		l.disks = (uint16_t)disks;
		l.tolerated = (uint16_t)(disks - 1);
	} else if (kind == IOSIG_LAYOUT_ERASURE) {
		if (!have[3] || !have[4])
			return cat_yaml_err(p, node,
					"layout: erasure needs data and parity, e.g. {kind: erasure, data: 8, parity: 3}");
		if (have[1] || have[2])
			return cat_yaml_err(p, subnode[have[1] ? 1 : 2],
					"layout: erasure is given by data and parity only");
		if (sub[3] + sub[4] > 65535)
			return cat_yaml_err(p, subnode[3], "layout: data + parity must be at most 65535");
		l.disks = (uint16_t)(sub[3] + sub[4]);
		l.tolerated = (uint16_t)sub[4];
	} else {
		if (have[2])
			return cat_yaml_err(p, subnode[2], "layout.copies: copies is for kind replication");
		if (have[3] || have[4])
			return cat_yaml_err(p, subnode[have[3] ? 3 : 4],
					"layout: data and parity are for kind erasure");
		disks = have[1] ? (unsigned)sub[1] : default_disks[kind];
		if (disks < min_disks[kind])
			return cat_yaml_err(p, subnode[1], "layout.disks: %s needs at least %u disks",
					kinds[kind], min_disks[kind]);
		if (kind == IOSIG_LAYOUT_SINGLE && disks != 1)
			return cat_yaml_err(p, subnode[1], "layout.disks: single means one disk");
		if (kind == IOSIG_LAYOUT_RAID10 && disks % 2)
			return cat_yaml_err(p, subnode[1],
					"layout.disks: raid10 mirrors pairs: an even number of disks");
		l.disks = (uint16_t)disks;
		cat_layout_fix(&l);
	}
	*ret = l;
	return 0;
}

static int parse_bcw(struct cat_yaml *p, const yaml_node_t *node, struct iosig_bcw *ret)
{
	static const char *const names[] = { "wf", "wm", "lf", "lm", "ls" };
	const yaml_node_t *vals[5];
	double val[5];

	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(p, node, "bcw: expected %s, got %s", cat_type_expect(CAT_T_BCW),
				    cat_yaml_kind(node));
	if (sub_keys(p, node, "bcw", names, 5, cat_type_expect(CAT_T_BCW), vals) < 0)
		return -EINVAL;
	for (int i = 0; i < 5; i++) {
		char name[16];

		if (!vals[i])
			return cat_yaml_err(p, node, "bcw: missing '%s': expected %s", names[i],
					    cat_type_expect(CAT_T_BCW));
		snprintf(name, sizeof(name), "bcw.%s", names[i]);
		if (parse_num(p, vals[i], name, i < 2 ? CAT_T_SIZE : CAT_T_TIME, MIN_ZERO, &val[i]) < 0)
			return -EINVAL;
	}
	ret->wf = val[0];
	ret->wm = val[1];
	ret->lf = val[2];
	ret->lm = val[3];
	ret->ls = val[4];
	return 0;
}

/* data_dir must be absolute (or start with ~ or ${HOME} / ${MOUNT}) and use
 * only known variables. */
static int check_data_dir(struct cat_yaml *p, const yaml_node_t *node, const char *s)
{
	char bad[64], b[64];

	if (!s[0])
		return cat_yaml_err(p, node, "data_dir: missing value: expected a directory such as /scratch/iosig/${USER}");
	if (!cat_datadir_template_ok(s, bad, sizeof(bad)))
		return cat_yaml_err(p, node,
				"data_dir: unknown variable %s: expected ${USER}, ${UID}, ${HOME} or ${MOUNT}",
				bad);
	if (s[0] != '/' && s[0] != '~' && strncmp(s, "${HOME}", 7) && strncmp(s, "${MOUNT}", 8))
		return cat_yaml_err(p, node,
				"data_dir: '%s' is not an absolute path: expected a directory such as /scratch/iosig/${USER}",
				cat_yaml_shown(s, b, sizeof(b)));
	return 0;
}

/* One KEY: VALUE of a mount, class or defaults entry. */
static int parse_value(struct cat_yaml *p, const struct cfg_key *k, const yaml_node_t *node,
		       struct cat_values *v)
{
	const char *s;
	double d;
	int r;

	switch (k->type) {
	case CAT_T_BOOL: {
		bool b;
		char sb[64];

		s = cat_yaml_scalar(p, node, k->name, cat_type_expect(k->type));
		if (!s)
			return -EINVAL;
		if (!cat_parse_bool(s, &b))
			return cat_yaml_err(p, node, "%s: bad value '%s': expected true or false",
					k->name, cat_yaml_shown(s, sb, sizeof(sb)));
		switch (k->key) {
		case CAT_K_IGNORE:
			v->ignore = b;
			break;
		case IOSIG_F_GLOBAL:
			v->global = b;
			break;
		case IOSIG_F_VOLATILE:
			v->volatile_ = b;
			break;
		case IOSIG_F_ROTATIONAL:
			v->rotational = b;
			break;
		}
		return 0;
	}
	case CAT_T_STRING:
		s = cat_yaml_scalar(p, node, k->name, cat_type_expect(k->type));
		if (!s)
			return -EINVAL;
		if (k->key == IOSIG_F_DATA_DIR) {
			r = check_data_dir(p, node, s);
			if (r < 0)
				return r;
		} else if (!s[0]) {
			return cat_yaml_err(p, node, "%s: missing value: expected a string", k->name);
		}
		s = cat_strpool_add(p->pool, s);
		if (!s)
			return oom(p);
		if (k->key == IOSIG_F_DATA_DIR)
			v->data_dir = s;
		else if (k->key == CAT_K_FSTYPE)
			v->fstype = s;
		else
			v->source = s;
		return 0;
	case CAT_T_FSID: {
		char *end, sb[64];

		s = cat_yaml_scalar(p, node, k->name, "a hexadecimal filesystem id");
		if (!s)
			return -EINVAL;
		errno = 0;
		v->fsid = strtoull(s, &end, 16);
		if (!s[0] || *end || errno || s[0] == '-' || s[0] == '+' || s[0] == ' ')
			return cat_yaml_err(p, node,
					    "%s: bad value '%s': expected a hexadecimal filesystem id",
					    k->name, cat_yaml_shown(s, sb, sizeof(sb)));
		return 0;
	}
	case CAT_T_CLASS:
		return cat_yaml_class(p, node, k->name, &v->cls);
	case CAT_T_LABELS:
		return parse_labels(p, node, &v->labels);
	case CAT_T_LAYOUT:
		return parse_layout(p, node, &v->layout);
	case CAT_T_BCW:
		return parse_bcw(p, node, &v->bcw);
	case CAT_T_RESERVE:
		s = cat_yaml_scalar(p, node, k->name, cat_type_expect(k->type));
		if (!s)
			return -EINVAL;
		{
			char buf[64], sb[64];
			char *end;
			size_t len;

			if (trim_copy(s, buf, sizeof(buf)) && (len = strlen(buf)) > 1 &&
			    buf[len - 1] == '%') {
				buf[len - 1] = '\0';
				d = strtod(buf, &end);
				if (end == buf || *end || !isfinite(d) || d < 0 || d > 100)
					return cat_yaml_err(p, node,
							"reserve: bad value '%s': expected a percentage between 0%% and 100%%",
							cat_yaml_shown(s, sb, sizeof(sb)));
				v->reserve_pct = d;
				v->reserve = 0;
				return 0;
			}
		}
		r = parse_num(p, node, k->name, k->type, k->min, &d);
		if (r < 0)
			return r;
		v->reserve = (uint64_t)d;
		v->reserve_pct = -1;
		return 0;
	default:
		break;
	}
	r = parse_num(p, node, k->name, k->type, k->min, &d);
	if (r < 0)
		return r;
	switch (k->key) {
	case IOSIG_F_CAPACITY:
		v->capacity = (uint64_t)d;
		break;
	case IOSIG_F_FREE:
		v->free = (uint64_t)d;
		break;
	case IOSIG_F_BLOCK_SIZE:
		v->block_size = (uint64_t)d;
		break;
	case IOSIG_F_MAX_FILESIZE:
		v->max_filesize = (uint64_t)d;
		break;
	case IOSIG_F_SEQ_READ_BW:
		v->seq_read_bw = d;
		break;
	case IOSIG_F_SEQ_WRITE_BW:
		v->seq_write_bw = d;
		break;
	case IOSIG_F_RAND_READ_BW:
		v->rand_read_bw = d;
		break;
	case IOSIG_F_RAND_WRITE_BW:
		v->rand_write_bw = d;
		break;
	case IOSIG_F_LATENCY:
		v->latency = d;
		break;
	case IOSIG_F_SEEK:
		v->seek = d;
		break;
	case IOSIG_F_IOPS:
		v->iops = d;
		break;
	case IOSIG_F_MTTF:
		v->mttf = d;
		break;
	case IOSIG_F_MTTR:
		v->mttr = d;
		break;
	case IOSIG_F_BER:
		v->ber = d;
		break;
	case IOSIG_F_ECC:
		v->ecc = (uint32_t)d;
		break;
	case IOSIG_F_SECTOR_BITS:
		v->sector_bits = (uint32_t)d;
		break;
	case CAT_K_PROBED_AT:
		v->probed_at = d;
		break;
	}
	return 0;
}

/*
 * A mapping of KEY: VALUE for `scope`; `ctx` names it in messages
 * ("defaults", "class 'hdd'", "mount '/scratch'").
 */
int cat_yaml_values(struct cat_yaml *p, const yaml_node_t *node, unsigned scope, const char *ctx,
		    struct cat_values *v, struct cat_pos *pos)
{
	const char *names[NKEYS];

	for (size_t i = 0; i < NKEYS; i++)
		names[i] = keys[i].name;
	v->reserve_pct = -1;
	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0; /* `/scratch:` with nothing: no settings */
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(p, node, "%s: expected a mapping of settings, got %s", ctx,
				cat_yaml_kind(node));
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&p->doc, pair->value);
		const struct cfg_key *k = NULL;
		const char *ks;
		char b[64];
		int r;

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(p, kn, ctx, "a key");
		if (!ks)
			return -EINVAL;
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(ks, keys[i].name))
				k = &keys[i];
		if (!k) {
			const char *hint = cat_suggest(ks, names, NKEYS);

			if (hint)
				return cat_yaml_err(p, kn, "%s: unknown key in %s; did you mean '%s'?",
						cat_yaml_shown(ks, b, sizeof(b)), ctx, hint);
			return cat_yaml_err(p, kn, "%s: unknown key in %s (the keys are listed in iosig-config(5))",
					cat_yaml_shown(ks, b, sizeof(b)), ctx);
		}
		if (!(k->scope & scope)) {
			if (scope == SC_PROBE)
				return cat_yaml_err(p, kn, "%s: not a measured value (not allowed in %s)",
						    k->name, ctx);
			if (k->key == IOSIG_F_CLASS)
				return cat_yaml_err(p, kn, "class: not allowed in %s; set it per mount", ctx);
			return cat_yaml_err(p, kn, "%s: not allowed in %s; set it per mount", k->name, ctx);
		}
		if (v->set & CAT_BIT(k->key))
			return cat_yaml_err(p, kn, "%s: given twice in %s (first at line %d)", k->name, ctx,
					pos[k->key].line);
		r = parse_value(p, k, vn, v);
		if (r < 0)
			return r;
		v->set |= CAT_BIT(k->key);
		pos[k->key].line = (int)kn->start_mark.line + 1;
		pos[k->key].col = (int)kn->start_mark.column + 1;
	}
	return 0;
}

static int parse_classes(struct cat_yaml *p, const yaml_node_t *node)
{
	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(p, node, "classes: expected a mapping of class names to settings, got %s",
				cat_yaml_kind(node));
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&p->doc, pair->value);
		uint8_t cls;
		char ctx[64];
		int r;

		if (!kn || !vn)
			continue;
		if (cat_yaml_class(p, kn, "classes", &cls) < 0)
			return -EINVAL;
		if (check_dup(p, node->data.mapping.pairs.start, pair, kn, "classes") < 0)
			return -EINVAL;
		snprintf(ctx, sizeof(ctx), "class '%s'", class_names[cls]);
		r = cat_yaml_values(p, vn, SC_CLASS, ctx, &p->cfg->classes[cls], p->cfg->classes_pos[cls]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Normalises a mount pattern in place: collapses "//", drops a trailing '/'.
 * Returns false for relative paths and "." / ".." components. */
static bool normalize_pattern(char *s)
{
	char *w = s;

	if (s[0] != '/')
		return false;
	for (char *r = s; *r; r++) {
		if (*r == '/' && w > s && w[-1] == '/')
			continue;
		*w++ = *r;
	}
	*w = '\0';
	if (w - s > 1 && w[-1] == '/')
		w[-1] = '\0';
	for (char *c = s; c && *c;) {
		char *next = strchr(c + 1, '/');
		size_t len = next ? (size_t)(next - c - 1) : strlen(c + 1);

		if ((len == 1 && c[1] == '.') || (len == 2 && c[1] == '.' && c[2] == '.'))
			return false;
		c = next;
	}
	return true;
}

static int parse_mounts(struct cat_yaml *p, const yaml_node_t *node)
{
	struct cat_config *cfg = p->cfg;
	struct strset seen = { 0 };
	size_t n, first;
	int r = 0;

	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(p, node,
				"mounts: expected a mapping of mount points to settings, got %s",
				cat_yaml_kind(node));
	n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
	if (n > CAT_YAML_MOUNTS_MAX)
		return cat_yaml_err(p, node,
				"mounts: %zu entries, more than the %d a configuration may have: use patterns such as /scratch/* for many similar mounts",
				n, CAT_YAML_MOUNTS_MAX);
	cfg->mounts = calloc(n ? n : 1, sizeof(*cfg->mounts));
	if (!cfg->mounts || strset_init(&seen, n) < 0)
		return oom(p);
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&p->doc, pair->value);
		struct cat_cfg_mount *m;
		const char *ks;
		char ctx[sizeof(((struct iosig_error *)0)->msg) / 2];
		char b[64];

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(p, kn, "mounts", "a mount point");
		if (!ks) {
			r = -EINVAL;
			goto out_free_seen;
		}
		m = &cfg->mounts[cfg->nmounts];
		m->pattern = strdup(ks);
		if (!m->pattern) {
			r = oom(p);
			goto out_free_seen;
		}
		cfg->nmounts++;
		m->v.reserve_pct = -1;
		m->pos.line = (int)kn->start_mark.line + 1;
		m->pos.col = (int)kn->start_mark.column + 1;
		if (!normalize_pattern(m->pattern)) {
			r = cat_yaml_err(p, kn,
					 "mounts: '%s' is not a mount point: expected an absolute path such as /scratch or a pattern such as /mnt/*, without . or .. components",
					 cat_yaml_shown(ks, b, sizeof(b)));
			goto out_free_seen;
		}
		m->glob = strpbrk(m->pattern, "*?[") != NULL;
		/* A set, not a scan of the earlier entries: a long list is read in
		 * linear time. */
		if (!strset_add(&seen, m->pattern, cfg->nmounts - 1, &first)) {
			r = cat_yaml_err(p, kn, "mounts: '%s' given twice (first at line %d)",
					 cat_yaml_shown(m->pattern, b, sizeof(b)), cfg->mounts[first].pos.line);
			goto out_free_seen;
		}
		snprintf(ctx, sizeof(ctx), "mount '%s'", cat_yaml_shown(m->pattern, b, sizeof(b)));
		r = cat_yaml_values(p, vn, SC_MOUNT, ctx, &m->v, m->vpos);
		if (r < 0)
			goto out_free_seen;
	}
out_free_seen:
	strset_free(&seen);
	return r;
}

static int parse_root(struct cat_yaml *p, const yaml_node_t *root)
{
	bool seen[NTOP] = { false };

	if (!root || (root->type == YAML_SCALAR_NODE && !root->data.scalar.length))
		return 0; /* empty file: no settings */
	if (root->type != YAML_MAPPING_NODE)
		return cat_yaml_err(p, root,
				"expected a mapping with version, defaults, classes and mounts at the top, got %s",
				cat_yaml_kind(root));
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&p->doc, pair->value);
		const char *ks;
		char b[64];
		int idx = -1, r = 0;

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(p, kn, "top level", "a key");
		if (!ks)
			return -EINVAL;
		for (int i = 0; i < (int)NTOP; i++)
			if (!strcmp(ks, top_keys[i]))
				idx = i;
		if (idx < 0) {
			const char *hint = cat_suggest(ks, top_keys, NTOP);

			if (hint)
				return cat_yaml_err(p, kn, "%s: unknown top-level key; did you mean '%s'?",
						cat_yaml_shown(ks, b, sizeof(b)), hint);
			return cat_yaml_err(p, kn,
					"%s: unknown top-level key: expected version, defaults, classes, mounts or daemon",
					cat_yaml_shown(ks, b, sizeof(b)));
		}
		if (seen[idx])
			return cat_yaml_err(p, kn, "%s: given twice", top_keys[idx]);
		seen[idx] = true;
		switch (idx) {
		case 0: {
			double ver;

			r = parse_num(p, vn, "version", CAT_T_UINT, MIN_ONE, &ver);
			if (r == 0 && ver != 1)
				r = cat_yaml_err(p, vn,
					     "version: this libiosig reads configuration version 1, the file has version %.0f",
					     ver);
			break;
		}
		case 1:
			r = cat_yaml_values(p, vn, SC_DEFAULTS, "defaults", &p->cfg->defaults,
					 p->cfg->defaults_pos);
			break;
		case 2:
			r = parse_classes(p, vn);
			break;
		case 3:
			r = parse_mounts(p, vn);
			break;
		case 4:
			if (vn->type != YAML_MAPPING_NODE &&
			    !(vn->type == YAML_SCALAR_NODE && !vn->data.scalar.length))
				r = cat_yaml_err(p, vn, "daemon: expected a mapping of iosigd settings, got %s",
						 cat_yaml_kind(vn));
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int cat_config_load_buffer(const char *name, const char *buf, size_t len,
			   struct cat_config **ret_cfg, struct iosig_error *err)
{
	struct cat_yaml p = { .file = name, .err = err };
	struct cat_config *cfg;
	int r;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		cat_error(err, name, 0, 0, "out of memory");
		return -ENOMEM;
	}
	p.cfg = cfg;
	p.pool = &cfg->pool;
	cfg->defaults.reserve_pct = -1;
	for (unsigned c = 0; c < IOSIG_CLASS_COUNT; c++)
		cfg->classes[c].reserve_pct = -1;
	cfg->file = strdup(name);
	if (!cfg->file) {
		r = oom(&p);
		goto out_free_cfg;
	}
	r = cat_yaml_load(&p, buf, len);
	if (r == 0)
		r = parse_root(&p, yaml_document_get_root_node(&p.doc));
	cat_yaml_done(&p);
	if (r < 0)
		goto out_free_cfg;
	*ret_cfg = cfg;
	return 0;

out_free_cfg:
	cat_config_free(cfg);
	return r;
}

int cat_config_load_file(const char *path, struct cat_config **ret_cfg, struct iosig_error *err)
{
	char *buf;
	size_t len;
	int r;

	r = cat_read_file(path, CFG_MAX_BYTES, "configuration file", &buf, &len, err);
	if (r < 0)
		return r;
	r = cat_config_load_buffer(path, buf, len, ret_cfg, err);
	free(buf);
	return r;
}

void cat_config_free(struct cat_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nmounts; i++)
		free(cfg->mounts[i].pattern);
	free(cfg->mounts);
	cat_strpool_free(&cfg->pool);
	free(cfg->file);
	free(cfg);
}

void cat_config_locate(const char *opts_config, char *buf, size_t size, bool *ret_explicit)
{
	const char *env;

	buf[0] = '\0';
	*ret_explicit = true;
	if (opts_config) {
		snprintf(buf, size, "%s", opts_config);
		return;
	}
	env = env_get("IOSIG_CONFIG");
	if (env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	*ret_explicit = false;
	if (cat_user_file("XDG_CONFIG_HOME", ".config", "iosig/config.yaml", buf, size) &&
	    access(buf, F_OK) == 0)
		return;
	snprintf(buf, size, "%s", CAT_SYSTEM_CONFIG);
	if (access(buf, F_OK) == 0)
		return;
	buf[0] = '\0';
}
