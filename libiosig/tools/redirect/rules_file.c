/* SPDX-License-Identifier: MIT */
/*
 * rules_file.c - the YAML rules file of iosig-redirect (iosig-rules(5)):
 * named signatures and rules, with file:line:column errors through the
 * catalog's YAML helpers (catalog_yaml.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "catalog_yaml.h"
#include "rules.h"
#include "rules_internal.h"

/* State of one file being loaded. */
struct rules_load {
	struct cat_yaml y;
	struct rules *rs;
	const char *buf;          /* the source, to place errors inside scalars */
	size_t len;
	const char *cwd;
};

static const char *const top_keys[] = { "version", "signatures", "rules" };
static const char *const rule_keys[] = { "path", "sig", "use" };

#define NTOP (sizeof(top_keys) / sizeof(top_keys[0]))
#define NRULEKEYS (sizeof(rule_keys) / sizeof(rule_keys[0]))

/*
 * Where byte `off` of a scalar's value is in the file: exact when the
 * value appears verbatim in the source (plain or quoted without escapes or
 * line folding), else the start of the scalar.
 */
static void scalar_pos(const struct rules_load *L, const yaml_node_t *node, size_t off,
		       int *ret_line, int *ret_col, bool *ret_exact)
{
	size_t start = node->start_mark.index, vlen = node->data.scalar.length;
	const char *v = (const char *)node->data.scalar.value;
	size_t skip = 0;

	*ret_line = (int)node->start_mark.line + 1;
	*ret_col = (int)node->start_mark.column + 1;
	*ret_exact = false;
	if (node->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    node->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		skip = 1;
	else if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return;
	if (start + skip + vlen > L->len || memcmp(L->buf + start + skip, v, vlen) ||
	    memchr(v, '\n', vlen) || off > vlen)
		return;
	*ret_col += (int)(skip + off);
	*ret_exact = true;
}

/* Reports a signature error found in the scalar `node` (err_in positioned
 * within its value).  Returns -EINVAL. */
static int sig_error(struct rules_load *L, const yaml_node_t *node, const char *what,
		     const struct iosig_error *err_in)
{
	int line, col;
	bool exact;

	scalar_pos(L, node, err_in->line <= 1 ? err_in->offset : 0, &line, &col, &exact);
	if (exact || err_in->column <= 0)
		cat_error(L->y.err, L->y.file, line, col, "%s: %s", what, err_in->msg);
	else
		cat_error(L->y.err, L->y.file, line, col, "%s (at byte %zu of the signature): %s",
			  what, err_in->offset + 1, err_in->msg);
	if (L->y.err) {
		L->y.err->offset = node->start_mark.index;
		L->y.err->length = err_in->length ? err_in->length : 1;
	}
	return -EINVAL;
}

/* The YAML key/value pairs of a mapping node. */
#define FOR_PAIRS(L, node, pair) \
	for (yaml_node_pair_t *pair = (node)->data.mapping.pairs.start; \
	     pair < (node)->data.mapping.pairs.top; pair++)

/* Checks a name for name("..."): non-empty, at most 63 bytes, printable. */
static bool def_name_ok(const char *s, char *why, size_t wsize)
{
	size_t n = strlen(s);

	if (!n || n > 63) {
		snprintf(why, wsize, "a signature name has 1 to 63 bytes");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
			snprintf(why, wsize, "a signature name cannot contain control characters, '\"' or '\\'");
			return false;
		}
	}
	return true;
}

static int parse_signatures(struct rules_load *L, const yaml_node_t *node)
{
	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0;
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(&L->y, node,
				    "signatures: expected a mapping of NAME: SIGNATURE, got %s",
				    cat_yaml_kind(node));
	FOR_PAIRS(L, node, pair) {
		const yaml_node_t *kn = yaml_document_get_node(&L->y.doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&L->y.doc, pair->value);
		const char *name, *text;
		struct iosig_pragma *pragma = NULL;
		struct iosig_error serr;
		struct iosig_sig sig;
		char why[200], what[120], b[64], canon[1024], src[1200];
		int r;

		if (!kn || !vn)
			continue;
		name = cat_yaml_scalar(&L->y, kn, "signatures", "a signature name");
		if (!name)
			return -EINVAL;
		if (!def_name_ok(name, why, sizeof(why)))
			return cat_yaml_err(&L->y, kn, "signatures: '%s': %s",
					    cat_yaml_shown(name, b, sizeof(b)), why);
		snprintf(what, sizeof(what), "signature '%s'", name);
		text = cat_yaml_scalar(&L->y, vn, what, "signature text such as 'persist sequential'");
		if (!text)
			return -EINVAL;
		for (size_t i = 0; i < L->rs->ndefs; i++) {
			const struct rules_def *d = &L->rs->defs[i];

			if (strcmp(d->name, name))
				continue;
			return cat_yaml_err(&L->y, kn,
					    "signature '%s' is already defined at %s:%d:%d: give it another name",
					    name, d->file, d->line, d->col);
		}
		/* The text alone first: constants only, positions within it. */
		memset(&serr, 0, sizeof(serr));
		r = iosig_sig_parse(text, NULL, NULL, 0, &sig, &serr);
		if (r < 0)
			return sig_error(L, vn, what, &serr);
		if (sig.set & IOSIG_HAS(IOSIG_P_NAME))
			return cat_yaml_err(&L->y, vn,
					    "%s: a definition cannot use name(...): copy the parameters of the signature it names",
					    what);
		if (sig.set & IOSIG_HAS(IOSIG_P_LIFETIME))
			return cat_yaml_err(&L->y, vn,
					    "%s: lifetime(...) cannot be part of a named signature: give it in the sig of the rules that use it",
					    what);
		/* Then its canonical text (constants folded, units applied) as a
		 * sigdef pragma for the registry. */
		r = iosig_sig_format(&sig, canon, sizeof(canon));
		if (r < 0 || (size_t)r >= sizeof(canon))
			return cat_yaml_err(&L->y, vn, "%s: the signature is too long", what);
		snprintf(src, sizeof(src), "sigdef name(\"%s\") %s", name, canon);
		memset(&serr, 0, sizeof(serr));
		r = iosig_pragma_parse(src, strlen(src), &pragma, &serr);
		if (r == 0)
			r = iosig_registry_define(L->rs->reg, pragma, &serr);
		iosig_pragma_free(pragma);
		if (r < 0)
			return cat_yaml_err(&L->y, vn, "%s: %s", what, serr.msg);
		{
			struct rules *rs = L->rs;
			struct rules_def *nd = realloc(rs->defs, (rs->ndefs + 1) * sizeof(*nd));

			if (!nd)
				return cat_yaml_err(&L->y, kn, "out of memory");
			rs->defs = nd;
			nd += rs->ndefs++;
			snprintf(nd->name, sizeof(nd->name), "%s", name);
			snprintf(nd->file, sizeof(nd->file), "%s", L->y.file);
			nd->line = (int)kn->start_mark.line + 1;
			nd->col = (int)kn->start_mark.column + 1;
		}
	}
	return 0;
}

/* Adds the rule of one pattern node. */
static int add_pattern(struct rules_load *L, const yaml_node_t *pn, const struct iosig_sig *sig)
{
	char why[300], b[96], *norm = NULL;
	const char *pattern;
	struct rules_origin o;
	int r;

	pattern = cat_yaml_scalar(&L->y, pn, "path", "a path or pattern");
	if (!pattern)
		return -EINVAL;
	r = rules_pat_normalise(pattern, L->cwd, &norm, why, sizeof(why));
	if (r == 0) {
		o.file = L->y.file;
		o.line = (int)pn->start_mark.line + 1;
		o.col = (int)pn->start_mark.column + 1;
		r = rules_append(L->rs, pattern, norm, sig, &o, why, sizeof(why));
		free(norm);
	}
	if (r < 0)
		return cat_yaml_err(&L->y, pn, "path '%s': %s", cat_yaml_shown(pattern, b, sizeof(b)),
				    why);
	return 0;
}

static int parse_rule(struct rules_load *L, const yaml_node_t *node, size_t index)
{
	const yaml_node_t *path = NULL, *sig = NULL, *use = NULL;
	const char *sigtext = NULL, *usename = NULL;
	struct iosig_error serr;
	struct iosig_sig ev;
	char what[64], b[64], *text;
	size_t n;
	int r;

	snprintf(what, sizeof(what), "rule %zu", index + 1);
	if (node->type != YAML_MAPPING_NODE)
		return cat_yaml_err(&L->y, node,
				    "%s: expected a mapping with path and sig (or use), got %s", what,
				    cat_yaml_kind(node));
	FOR_PAIRS(L, node, pair) {
		const yaml_node_t *kn = yaml_document_get_node(&L->y.doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&L->y.doc, pair->value);
		const yaml_node_t **slot = NULL;
		const char *ks;

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(&L->y, kn, what, "a key");
		if (!ks)
			return -EINVAL;
		if (!strcmp(ks, "path"))
			slot = &path;
		else if (!strcmp(ks, "sig"))
			slot = &sig;
		else if (!strcmp(ks, "use"))
			slot = &use;
		if (!slot) {
			const char *hint = cat_suggest(ks, rule_keys, NRULEKEYS);

			if (hint)
				return cat_yaml_err(&L->y, kn, "%s: unknown key '%s'; did you mean '%s'?",
						    what, cat_yaml_shown(ks, b, sizeof(b)), hint);
			return cat_yaml_err(&L->y, kn,
					    "%s: unknown key '%s': a rule has path, sig and use", what,
					    cat_yaml_shown(ks, b, sizeof(b)));
		}
		if (*slot)
			return cat_yaml_err(&L->y, kn, "%s: %s given twice", what, ks);
		*slot = vn;
	}
	if (!path)
		return cat_yaml_err(&L->y, node, "%s: no path: say which files the rule is for", what);
	if (!sig && !use)
		return cat_yaml_err(&L->y, node,
				    "%s: no signature: give sig (signature text) or use (a name from signatures)",
				    what);
	if (sig) {
		sigtext = cat_yaml_scalar(&L->y, sig, "sig", "signature text such as 'tmp random'");
		if (!sigtext)
			return -EINVAL;
	}
	if (use) {
		usename = cat_yaml_scalar(&L->y, use, "use", "the name of a signature");
		if (!usename)
			return -EINVAL;
		if (!def_name_ok(usename, b, sizeof(b)))
			return cat_yaml_err(&L->y, use, "use: %s", b);
	}
	/* use: N with sig: S is "name("N") S" (S overrides N's parameters). */
	n = (sigtext ? strlen(sigtext) : 0) + (usename ? strlen(usename) : 0) + 16;
	text = malloc(n);
	if (!text)
		return cat_yaml_err(&L->y, node, "out of memory");
	text[0] = '\0';
	if (usename)
		snprintf(text, n, "name(\"%s\") ", usename);
	if (sigtext)
		strcat(text, sigtext);
	r = rules_sig_eval(L->rs, text, &ev, &serr);
	if (r < 0 && usename && r == -ENOENT) {
		free(text);
		return cat_yaml_err(&L->y, use, "use: %s", serr.msg);
	}
	if (r < 0 && sigtext) {
		size_t shift = usename ? strlen(usename) + 9 : 0;

		free(text);
		if (serr.offset >= shift) {
			serr.offset -= shift;
			serr.column = serr.line <= 1 && serr.column > (int)shift ?
					      serr.column - (int)shift : serr.column;
			return sig_error(L, sig, "sig", &serr);
		}
		return cat_yaml_err(&L->y, use ? use : sig, "%s", serr.msg);
	}
	free(text);
	if (r < 0)
		return cat_yaml_err(&L->y, use, "use: %s", serr.msg);

	if (path->type == YAML_SCALAR_NODE)
		return add_pattern(L, path, &ev);
	if (path->type != YAML_SEQUENCE_NODE)
		return cat_yaml_err(&L->y, path, "path: expected a pattern or a list of patterns, got %s",
				    cat_yaml_kind(path));
	if (path->data.sequence.items.start == path->data.sequence.items.top)
		return cat_yaml_err(&L->y, path, "path: the list is empty");
	for (yaml_node_item_t *it = path->data.sequence.items.start;
	     it < path->data.sequence.items.top; it++) {
		const yaml_node_t *pn = yaml_document_get_node(&L->y.doc, *it);

		if (!pn)
			continue;
		r = add_pattern(L, pn, &ev);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_rules(struct rules_load *L, const yaml_node_t *node, size_t *ret_count)
{
	size_t i = 0;
	int r;

	if (node->type == YAML_SCALAR_NODE && !node->data.scalar.length)
		return 0;
	if (node->type != YAML_SEQUENCE_NODE)
		return cat_yaml_err(&L->y, node,
				    "rules: expected a list of rules (\"- path: ... sig: ...\"), got %s",
				    cat_yaml_kind(node));
	for (yaml_node_item_t *it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++, i++) {
		const yaml_node_t *rn = yaml_document_get_node(&L->y.doc, *it);

		if (!rn)
			continue;
		r = parse_rule(L, rn, i);
		if (r < 0)
			return r;
	}
	*ret_count = i;
	return 0;
}

static int parse_root(struct rules_load *L, const yaml_node_t *root)
{
	const yaml_node_t *vals[NTOP] = { NULL };
	const yaml_node_t *keys[NTOP] = { NULL };
	size_t nrules = 0;
	char b[64];
	int r;

	if (!root || (root->type == YAML_SCALAR_NODE && !root->data.scalar.length)) {
		rules_note(L->rs, "%s: the file is empty: it defines no rules", L->y.file);
		return 0;
	}
	if (root->type != YAML_MAPPING_NODE)
		return cat_yaml_err(&L->y, root,
				    "expected a mapping with version, signatures and rules at the top, got %s",
				    cat_yaml_kind(root));
	FOR_PAIRS(L, root, pair) {
		const yaml_node_t *kn = yaml_document_get_node(&L->y.doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(&L->y.doc, pair->value);
		const char *ks;
		int idx = -1;

		if (!kn || !vn)
			continue;
		ks = cat_yaml_scalar(&L->y, kn, "top level", "a key");
		if (!ks)
			return -EINVAL;
		for (size_t i = 0; i < NTOP; i++)
			if (!strcmp(ks, top_keys[i]))
				idx = (int)i;
		if (idx < 0) {
			const char *hint = cat_suggest(ks, top_keys, NTOP);

			if (hint)
				return cat_yaml_err(&L->y, kn, "%s: unknown top-level key; did you mean '%s'?",
						    cat_yaml_shown(ks, b, sizeof(b)), hint);
			return cat_yaml_err(&L->y, kn,
					    "%s: unknown top-level key: expected version, signatures or rules",
					    cat_yaml_shown(ks, b, sizeof(b)));
		}
		if (vals[idx])
			return cat_yaml_err(&L->y, kn, "%s: given twice", top_keys[idx]);
		vals[idx] = vn;
		keys[idx] = kn;
	}
	if (vals[0]) {
		const char *v = cat_yaml_scalar(&L->y, vals[0], "version", "1");

		if (!v)
			return -EINVAL;
		if (strcmp(v, "1"))
			return cat_yaml_err(&L->y, vals[0],
					    "version: this iosig-redirect reads rules version 1, the file has '%s'",
					    cat_yaml_shown(v, b, sizeof(b)));
	}
	/* Signatures before rules, wherever they are in the file. */
	if (vals[1]) {
		r = parse_signatures(L, vals[1]);
		if (r < 0)
			return r;
	}
	if (vals[2]) {
		r = parse_rules(L, vals[2], &nrules);
		if (r < 0)
			return r;
	}
	if (!nrules)
		rules_note(L->rs, "%s:%d:%d: the file defines no rules", L->y.file,
		     vals[2] ? (int)keys[2]->start_mark.line + 1 : 1,
		     vals[2] ? (int)keys[2]->start_mark.column + 1 : 1);
	return 0;
}

int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      const char *cwd, struct iosig_error *err)
{
	struct rules_load L;
	size_t n0 = rs->n;
	int r;

	memset(&L, 0, sizeof(L));
	L.y.file = name;
	L.y.err = err;
	L.rs = rs;
	L.buf = buf;
	L.len = len;
	L.cwd = cwd;
	r = cat_yaml_load(&L.y, buf, len);
	if (r == 0)
		r = parse_root(&L, yaml_document_get_root_node(&L.y.doc));
	cat_yaml_done(&L.y);
	if (r < 0) {
		/* All or nothing: drop the rules this file added. */
		rules_drop(rs, n0);
	}
	return r;
}

int rules_load_file(struct rules *rs, const char *path, const char *cwd, struct iosig_error *err)
{
	char *buf;
	size_t len;
	int r;

	r = cat_read_file(path, RULES_FILE_MAX, "rules file", &buf, &len, err);
	if (r < 0)
		return r;
	r = rules_load_buffer(rs, path, buf, len, cwd, err);
	free(buf);
	return r;
}
