/* SPDX-License-Identifier: MIT */
/*
 * rules.c - iosig-redirect's rules (see rules.h): patterns, the YAML rules
 * file, the compiled form for the environment and matching.
 *
 * The matcher works on components.  Within a component, '*' is matched by
 * the classic greedy algorithm that remembers only the last '*' (correct
 * because every other token matches exactly one byte); across components,
 * '**' is matched by the same algorithm one level up (every other pattern
 * component matches exactly one path component).  Both are O(n*m) in the
 * worst case, never exponential.  A trailing "**" is compiled as "*" (one
 * component) followed by "**", so a pattern ending in that component
 * matches what is below its directory but not the directory itself.
 */
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "catalog_yaml.h"
#include "redirect.h"

/* Tag of the compiled form, first field; a new layout gets a new number. */
#define RULES_MAGIC "iosig-rules-1"

/* What the decision log names as the "call" of a rule's site. */
static const char rule_call[] = "rule";

/* ------------------------------------------------------------------------
 * Rule sets
 * ---------------------------------------------------------------------- */

struct rules *rules_new(void)
{
	struct rules *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->reg = iosig_registry_new(NULL);
	if (!rs->reg) {
		free(rs);
		return NULL;
	}
	return rs;
}

static void pat_free(struct rules_pat *pat)
{
	free(pat->text);
	free(pat->comp_off);
	free(pat->comp_len);
	free(pat->comp_globstar);
	memset(pat, 0, sizeof(*pat));
}

static void rule_free(struct rules_rule *r)
{
	free(r->shown);
	pat_free(&r->pat);
	pat_free(&r->alt);
	free(r->sigtext);
	free(r->file);
}

void rules_free(struct rules *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		rule_free(&rs->r[i]);
	free(rs->r);
	for (size_t i = 0; i < rs->nnotes; i++)
		free(rs->notes[i]);
	free(rs->notes);
	free(rs->defs);
	iosig_registry_free(rs->reg);
	free(rs);
}

static void note(struct rules *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records a warning for the user; dropped when out of memory. */
static void note(struct rules *rs, const char *fmt, ...)
{
	char buf[600], **n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = realloc(rs->notes, (rs->nnotes + 1) * sizeof(*n));
	if (!n)
		return;
	rs->notes = n;
	n[rs->nnotes] = strdup(buf);
	if (n[rs->nnotes])
		rs->nnotes++;
}

/* ------------------------------------------------------------------------
 * Patterns
 * ---------------------------------------------------------------------- */

static bool is_meta(char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/*
 * Length of the set starting at p[0] == '[' within p[0..len), including
 * the closing ']', or 0 if it is not closed (then '[' is a literal byte,
 * as in fnmatch(3)).
 */
static size_t class_len(const char *p, size_t len)
{
	size_t i = 1;

	if (i < len && (p[i] == '!' || p[i] == '^'))
		i++;
	if (i < len && p[i] == ']')
		i++;        /* a leading ']' is a member */
	while (i < len && p[i] != ']') {
		if (p[i] == '\\' && i + 1 < len)
			i++;
		i++;
	}
	return i < len ? i + 1 : 0;
}

/* True if byte c is in the set p[0..n) (p[0] == '[', p[n-1] == ']'). */
static bool class_has(const char *p, size_t n, unsigned char c)
{
	size_t i = 1, end = n - 1;
	bool neg = false, in = false, first = true;

	if (p[i] == '!' || p[i] == '^') {
		neg = true;
		i++;
	}
	while (i < end) {
		unsigned char lo, hi;

		if (p[i] == ']' && !first)
			break;
		first = false;
		if (p[i] == '\\' && i + 1 < end)
			i++;
		lo = (unsigned char)p[i++];
		hi = lo;
		if (i + 1 < end && p[i] == '-' && p[i + 1] != ']') {
			i++;
			if (p[i] == '\\' && i + 1 < end)
				i++;
			hi = (unsigned char)p[i++];
		}
		if (c >= lo && c <= hi)
			in = true;
	}
	return in != neg;
}

/*
 * Matches one pattern token at p[*pi] against byte c and advances *pi.
 * The token is not '*'.
 */
static bool token_match(const char *p, size_t pl, size_t *pi, unsigned char c)
{
	size_t i = *pi, n;

	switch (p[i]) {
	case '?':
		*pi = i + 1;
		return true;
	case '[':
		n = class_len(p + i, pl - i);
		if (n) {
			*pi = i + n;
			return class_has(p + i, n, c);
		}
		*pi = i + 1;
		return c == '[';
	case '\\':
		if (i + 1 < pl) {
			*pi = i + 2;
			return (unsigned char)p[i + 1] == c;
		}
		*pi = i + 1;
		return c == '\\';
	default:
		*pi = i + 1;
		return (unsigned char)p[i] == c;
	}
}

/* Matches the component pattern p[0..pl) against s[0..sl) (no '/' in s). */
static bool comp_match(const char *p, size_t pl, const char *s, size_t sl)
{
	size_t pi = 0, si = 0, star_p = 0, star_s = 0;
	bool star = false;

	while (si < sl) {
		if (pi < pl && p[pi] == '*') {
			while (pi < pl && p[pi] == '*')
				pi++;
			star = true;
			star_p = pi;
			star_s = si;
			continue;
		}
		if (pi < pl) {
			size_t next = pi;

			if (token_match(p, pl, &next, (unsigned char)s[si])) {
				pi = next;
				si++;
				continue;
			}
		}
		if (!star)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < pl && p[pi] == '*')
		pi++;
	return pi == pl;
}

/* The component of `abs` starting at s: its length; *ret_next is the next
 * component or NULL at the end. */
static size_t comp_at(const char *s, const char **ret_next)
{
	const char *e = strchrnul(s, '/');

	*ret_next = *e ? e + 1 : NULL;
	return (size_t)(e - s);
}

bool rules_pat_match(const struct rules_pat *pat, const char *abs)
{
	const char *s, *next, *star_s = NULL;
	unsigned pi = 0, star_p = 0;
	bool star = false;

	if (!pat->text || abs[0] != '/')
		return false;
	if (pat->literal)
		return !strcmp(pat->text, abs);
	s = abs[1] ? abs + 1 : NULL;
	while (s) {
		size_t sl = comp_at(s, &next);

		if (pi < pat->ncomp && pat->comp_globstar[pi]) {
			star = true;
			star_p = ++pi;
			star_s = s;
			continue;
		}
		if (pi < pat->ncomp &&
		    comp_match(pat->text + pat->comp_off[pi], pat->comp_len[pi], s, sl)) {
			pi++;
			s = next;
			continue;
		}
		if (!star)
			return false;
		/* '**' takes one more component. */
		pi = star_p;
		comp_at(star_s, &next);
		star_s = next;
		s = star_s;
	}
	while (pi < pat->ncomp && pat->comp_globstar[pi])
		pi++;
	return pi == pat->ncomp;
}

/*
 * Compiles the normalised, absolute pattern `text` (taken over: freed on
 * failure).  -EINVAL with the reason in why.
 */
static int pat_compile(char *text, struct rules_pat *pat, char *why, size_t wsize)
{
	size_t len = strlen(text), n = 0, last;
	const char *p;
	bool trailing = false;

	memset(pat, 0, sizeof(*pat));
	pat->text = text;
	pat->literal = true;
	if (text[0] != '/') {
		snprintf(why, wsize, "the pattern is not absolute");
		goto out_free;
	}
	for (size_t i = 0; i < len; i++) {
		if (is_meta(text[i]))
			pat->literal = false;
		if (text[i] == '[' && text[i + 1] == ':') {
			snprintf(why, wsize,
				 "character class names such as [:alpha:] are not supported: list the characters ([a-zA-Z])");
			goto out_free;
		}
		if (text[i] == '[') {
			size_t cl = class_len(text + i, len - i);

			for (size_t j = i + 1; cl && j < i + cl; j++)
				if (text[j] == '/') {
					snprintf(why, wsize, "a set [...] cannot contain '/'");
					goto out_free;
				}
		}
	}
	if (len && text[len - 1] == '\\' && (len < 2 || text[len - 2] != '\\')) {
		snprintf(why, wsize, "the pattern ends with a lone '\\'");
		goto out_free;
	}
	/* Literal prefix, then the literal tail of the last component. */
	pat->prefix_len = len;
	for (size_t i = 0; i < len; i++)
		if (is_meta(text[i])) {
			pat->prefix_len = i;
			break;
		}
	last = (size_t)(strrchr(text, '/') - text) + 1;
	pat->suffix = text + len;
	for (size_t i = len; i > last; i--) {
		if (is_meta(text[i - 1]) || text[i - 1] == ']')
			break;
		pat->suffix = text + i - 1;
	}
	pat->suffix_len = (size_t)(text + len - pat->suffix);
	if (pat->literal)
		return 0;

	/* Components. */
	for (p = text; *p; p++)
		n += *p == '/';
	trailing = len >= 3 && !strcmp(text + len - 3, "/**");
	if (n + trailing > RULES_MAX_COMPONENTS) {
		snprintf(why, wsize, "more than %d components", RULES_MAX_COMPONENTS);
		goto out_free;
	}
	pat->comp_off = calloc(n + 1, sizeof(*pat->comp_off));
	pat->comp_len = calloc(n + 1, sizeof(*pat->comp_len));
	pat->comp_globstar = calloc(n + 1, sizeof(*pat->comp_globstar));
	if (!pat->comp_off || !pat->comp_len || !pat->comp_globstar) {
		snprintf(why, wsize, "out of memory");
		goto out_free;
	}
	for (p = text + 1; len > 1;) {
		const char *e = strchrnul(p, '/');
		size_t cl = (size_t)(e - p);
		bool gs = cl == 2 && p[0] == '*' && p[1] == '*';

		if (gs && !*e) {
			/* Trailing "**": one component, then any number. */
			pat->comp_off[pat->ncomp] = (uint32_t)(p - text);
			pat->comp_len[pat->ncomp] = 1;
			pat->ncomp++;
		}
		pat->comp_off[pat->ncomp] = (uint32_t)(p - text);
		pat->comp_len[pat->ncomp] = (uint32_t)cl;
		pat->comp_globstar[pat->ncomp] = gs;
		pat->ncomp++;
		if (!*e)
			break;
		p = e + 1;
	}
	return 0;

out_free:
	pat_free(pat);
	return -EINVAL;
}

/* Length of the literal directory a pattern starts with (up to
 * the last '/' before its first wildcard, not counting the last
 * component), or 0 when it has none. */
static size_t literal_dir_len(const char *text)
{
	const char *last = strrchr(text, '/'), *p;
	size_t dir = 0;

	for (p = text + 1; p <= last; p++) {
		if (is_meta(*p))
			break;
		if (*p == '/')
			dir = (size_t)(p - text);
	}
	return dir;
}

/*
 * Turns what the user wrote into a normalised pattern (malloc'ed in
 * *ret_text): "~/" is $HOME, a relative pattern is taken
 * relative to cwd, a trailing '/' means "everything below" (as a trailing
 * '**' component does), and
 * "//", "." and ".." are removed lexically.  -EINVAL with why.
 */
static int pat_normalise(const char *in, const char *cwd, char **ret_text, char *why,
			 size_t wsize)
{
	char joined[PATH_MAX * 2], norm[PATH_MAX];
	const char *home;
	size_t len = strlen(in);
	bool dir = len > 1 && in[len - 1] == '/';
	int r;

	if (!len) {
		snprintf(why, wsize, "the pattern is empty");
		return -EINVAL;
	}
	if (!strcmp(in, ".") || !strcmp(in, "..") || !strcmp(in, "~")) {
		snprintf(why, wsize, "'%s' names a directory, not files: write '%s/' for what is below it",
			 in, in);
		return -EINVAL;
	}
	if (in[0] == '~' && in[1] == '/') {
		home = getenv("HOME");
		if (!home || home[0] != '/') {
			snprintf(why, wsize, "'~/' needs HOME set to an absolute directory");
			return -EINVAL;
		}
		r = snprintf(joined, sizeof(joined), "%s/%s%s", home, in + 2, dir ? "**" : "");
	} else if (in[0] == '/') {
		r = snprintf(joined, sizeof(joined), "%s%s", in, dir ? "**" : "");
	} else {
		if (!cwd || cwd[0] != '/') {
			snprintf(why, wsize, "a relative pattern needs the working directory");
			return -EINVAL;
		}
		r = snprintf(joined, sizeof(joined), "%s/%s%s", cwd, in, dir ? "**" : "");
	}
	if (r < 0 || (size_t)r >= sizeof(joined)) {
		snprintf(why, wsize, "the pattern is too long");
		return -ENAMETOOLONG;
	}
	/* ".." after a wildcard would make the lexical removal meaningless. */
	for (const char *p = strstr(joined, "/.."); p; p = strstr(p + 1, "/..")) {
		if ((p[3] == '/' || !p[3])) {
			for (const char *q = joined; q < p; q++)
				if (is_meta(*q)) {
					snprintf(why, wsize, "'..' after a wildcard: write the directory it names");
					return -EINVAL;
				}
		}
	}
	r = rd_path_normalise(joined, norm, sizeof(norm));
	if (r < 0) {
		snprintf(why, wsize, "the pattern is too long");
		return r;
	}
	if (!strcmp(norm, "/")) {
		snprintf(why, wsize, "'/' names a directory, not files: write '/**' for every file");
		return -EINVAL;
	}
	*ret_text = strdup(norm);
	if (!*ret_text) {
		snprintf(why, wsize, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Folds one rule's patterns into the quick-rejection summary. */
static void summary_add(struct rules *rs, const struct rules_pat *pat)
{
	unsigned char c;

	if (!pat->text)
		return;
	if (!pat->suffix_len) {
		rs->any_suffix_empty = true;
		return;
	}
	c = (unsigned char)pat->suffix[pat->suffix_len - 1];
	rs->last_byte[c >> 3] |= (uint8_t)(1u << (c & 7));
}

/* ------------------------------------------------------------------------
 * Adding rules
 * ---------------------------------------------------------------------- */

/* Where a rule or signature comes from, for messages and the log. */
struct origin {
	const char *file;   /* rules file or "-s #N" */
	int line, col;
};

void rules_rule_origin(const struct rules_rule *r, char *buf, size_t size)
{
	if (r->site.line)
		snprintf(buf, size, "%s:%u:%u", r->file, r->site.line, r->site.column);
	else
		snprintf(buf, size, "%s", r->file);
}

/*
 * Appends a rule for pattern `shown` with the evaluated signature.  -EINVAL
 * with the reason in why (pattern errors), -ENOMEM.
 */
static int rule_append(struct rules *rs, const char *shown, const char *normalised,
		       const struct iosig_sig *sig, const struct origin *o, char *why,
		       size_t wsize)
{
	struct rules_rule *r;
	char canon[1024];
	int n, ret;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 8;
		struct rules_rule *nr = realloc(rs->r, cap * sizeof(*nr));

		if (!nr) {
			snprintf(why, wsize, "out of memory");
			return -ENOMEM;
		}
		rs->r = nr;
		rs->cap = cap;
	}
	n = iosig_sig_format(sig, canon, sizeof(canon));
	if (n < 0 || (size_t)n >= sizeof(canon)) {
		snprintf(why, wsize, "the signature is too long");
		return -EINVAL;
	}
	r = &rs->r[rs->n];
	memset(r, 0, sizeof(*r));
	r->shown = strdup(shown);
	r->sigtext = strdup(canon);
	r->file = strdup(o->file);
	if (!r->shown || !r->sigtext || !r->file) {
		snprintf(why, wsize, "out of memory");
		ret = -ENOMEM;
		goto out_free_rule;
	}
	{
		char *text = strdup(normalised);

		if (!text) {
			snprintf(why, wsize, "out of memory");
			ret = -ENOMEM;
			goto out_free_rule;
		}
		ret = pat_compile(text, &r->pat, why, wsize);
		if (ret < 0)
			goto out_free_rule;
	}
	r->sig = *sig;
	r->site.abi = IOSIG_SITE_ABI;
	r->site.nvalues = 0;
	r->site.sig = r->sigtext;
	r->site.file = r->file;
	r->site.line = o->line > 0 ? (uint32_t)o->line : 0;
	r->site.column = o->col > 0 ? (uint32_t)o->col : 0;
	r->site.call = rule_call;
	for (size_t i = 0; i < rs->n; i++) {
		char here[300], there[300];

		if (strcmp(rs->r[i].pat.text, r->pat.text))
			continue;
		rules_rule_origin(r, here, sizeof(here));
		rules_rule_origin(&rs->r[i], there, sizeof(there));
		note(rs, "rule '%s' (%s) is never used: '%s' (%s) has the same pattern and comes first",
		     r->shown, here, rs->r[i].shown, there);
		break;
	}
	summary_add(rs, &r->pat);
	rs->n++;
	return 0;

out_free_rule:
	rule_free(r);
	return ret;
}

/*
 * Evaluates a rule's signature text with the named signatures known so
 * far.  A leading "jobwide" is refused (rules describe files).  -EINVAL /
 * -ERANGE / -ENOENT with *err positioned within text.
 */
static int sig_eval_text(struct rules *rs, const char *text, struct iosig_sig *ret_sig,
			 struct iosig_error *err)
{
	const char *p = text;
	int r;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!strncmp(p, "jobwide", 7) && (!p[7] || strchr(" \t\n", p[7]))) {
		memset(err, 0, sizeof(*err));
		err->line = 1;
		err->column = (int)(p - text) + 1;
		err->offset = (size_t)(p - text);
		err->length = 7;
		snprintf(err->msg, sizeof(err->msg),
			 "a rule's signature describes files, not the job: drop 'jobwide' (lifetime(...) may be given in the signature itself)");
		return -EINVAL;
	}
	memset(err, 0, sizeof(*err));
	r = iosig_sig_parse(text, rs->reg, NULL, 0, ret_sig, err);
	if (r == -ENOENT) {
		/* The parser speaks of pragmas; here names come from rules files. */
		char *hint = strstr(err->msg, "; define it first with");

		if (hint)
			snprintf(hint, sizeof(err->msg) - (size_t)(hint - err->msg),
				 "; define it under 'signatures:' in a rules file given before");
	}
	return r;
}

int rules_add_cli(struct rules *rs, unsigned index, const char *sigtext, const char *pattern,
		  const char *cwd, struct iosig_error *err)
{
	struct iosig_error serr;
	struct iosig_sig sig;
	struct origin o;
	char file[32], why[300];
	char *norm = NULL;
	int r;

	snprintf(file, sizeof(file), "-s #%u", index);
	o.file = file;
	o.line = 0;
	o.col = 0;
	r = sig_eval_text(rs, sigtext, &sig, &serr);
	if (r < 0) {
		cat_error(err, file, 0, serr.column, "signature '%s': %s", sigtext, serr.msg);
		if (err)
			err->offset = serr.offset;
		return r == -ENOMEM ? r : -EINVAL;
	}
	r = pat_normalise(pattern, cwd, &norm, why, sizeof(why));
	if (r == 0) {
		r = rule_append(rs, pattern, norm, &sig, &o, why, sizeof(why));
		free(norm);
	}
	if (r < 0) {
		cat_error(err, file, 0, 0, "path '%s': %s", pattern, why);
		return r == -ENOMEM ? r : -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * The YAML rules file
 * ---------------------------------------------------------------------- */

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
	struct origin o;
	int r;

	pattern = cat_yaml_scalar(&L->y, pn, "path", "a path or pattern");
	if (!pattern)
		return -EINVAL;
	r = pat_normalise(pattern, L->cwd, &norm, why, sizeof(why));
	if (r == 0) {
		o.file = L->y.file;
		o.line = (int)pn->start_mark.line + 1;
		o.col = (int)pn->start_mark.column + 1;
		r = rule_append(L->rs, pattern, norm, sig, &o, why, sizeof(why));
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
	r = sig_eval_text(L->rs, text, &ev, &serr);
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
		note(L->rs, "%s: the file is empty: it defines no rules", L->y.file);
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
		note(L->rs, "%s:%d:%d: the file defines no rules", L->y.file,
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
		while (rs->n > n0)
			rule_free(&rs->r[--rs->n]);
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

/* Gives rule r the alternative pattern `text` (taken over). */
static void set_alt(struct rules *rs, struct rules_rule *r, char *text)
{
	char why[100];

	if (pat_compile(text, &r->alt, why, sizeof(why)) < 0)
		return;
	r->has_alt = true;
	summary_add(rs, &r->alt);
}

void rules_resolve_links(struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct rules_rule *r = &rs->r[i];
		char dir[PATH_MAX], real[PATH_MAX], *alt;
		size_t dl;

		if (r->has_alt)
			continue;
		dl = literal_dir_len(r->pat.text);
		if (!dl || dl >= sizeof(dir))
			continue;
		memcpy(dir, r->pat.text, dl);
		dir[dl] = '\0';
		if (!realpath(dir, real) || !strcmp(real, dir))
			continue;
		alt = malloc(strlen(real) + strlen(r->pat.text + dl) + 1);
		if (!alt)
			continue;
		strcpy(alt, real);
		strcat(alt, r->pat.text + dl);
		set_alt(rs, r, alt);
	}
}

/* ------------------------------------------------------------------------
 * The compiled form: netstrings "LEN:BYTES,"
 * ---------------------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *ns;

		while (b->len + n + 1 > cap)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_net(struct sbuf *b, const char *s)
{
	char head[24];
	size_t n = s ? strlen(s) : 0;

	snprintf(head, sizeof(head), "%zu:", n);
	sb_put(b, head, strlen(head));
	sb_put(b, s ? s : "", n);
	sb_put(b, ",", 1);
}

int rules_encode(const struct rules *rs, char **ret_text)
{
	struct sbuf b = { 0 };
	char num[24];

	sb_net(&b, RULES_MAGIC);
	for (size_t i = 0; i < rs->n; i++) {
		const struct rules_rule *r = &rs->r[i];

		sb_net(&b, r->shown);
		sb_net(&b, r->pat.text);
		sb_net(&b, r->has_alt ? r->alt.text : "");
		sb_net(&b, r->sigtext);
		sb_net(&b, r->file);
		snprintf(num, sizeof(num), "%u", r->site.line);
		sb_net(&b, num);
		snprintf(num, sizeof(num), "%u", r->site.column);
		sb_net(&b, num);
	}
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*ret_text = b.s;
	return 0;
}

/* Reads one netstring at *pos into a malloc'ed string.  -EINVAL (the
 * position of the fault in *pos), -ENOMEM. */
static int net_read(const char *text, size_t len, size_t *pos, char **ret)
{
	size_t i = *pos, n = 0, digits = 0;
	char *s;

	while (i < len && text[i] >= '0' && text[i] <= '9') {
		if (digits && n == 0)
			return -EINVAL;          /* leading zero */
		if (++digits > 7) {
			*pos = i;
			return -EINVAL;
		}
		n = n * 10 + (size_t)(text[i++] - '0');
	}
	if (!digits || i >= len || text[i] != ':') {
		*pos = i;
		return -EINVAL;
	}
	i++;
	if (n > len - i || len - i - n < 1 || text[i + n] != ',') {
		*pos = i;
		return -EINVAL;
	}
	if (memchr(text + i, '\0', n)) {
		*pos = i;
		return -EINVAL;
	}
	s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, text + i, n);
	s[n] = '\0';
	*pos = i + n + 1;
	*ret = s;
	return 0;
}

/* A decimal field of the compiled form (0 .. INT_MAX). */
static bool dec_ok(const char *s, int *ret)
{
	long v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return false;
	}
	*ret = (int)v;
	return true;
}

/* True if `text` is a pattern as pat_normalise() writes it. */
static bool normalised_ok(const char *text)
{
	char norm[PATH_MAX];

	if (text[0] != '/')
		return false;
	return rd_path_normalise(text, norm, sizeof(norm)) == 0 && !strcmp(norm, text) &&
	       strcmp(text, "/");
}

enum { F_SHOWN, F_PAT, F_ALT, F_SIG, F_FILE, F_LINE, F_COL, F_COUNT };

int rules_decode(struct rules *rs, const char *text, size_t len, struct iosig_error *err)
{
	size_t pos = 0, n0 = rs->n, start;
	char *f[F_COUNT] = { NULL }, *magic = NULL, why[300];
	const char *what = "";
	int r;

	r = net_read(text, len, &pos, &magic);
	if (r == 0 && strcmp(magic, RULES_MAGIC))
		r = -EINVAL;
	free(magic);
	if (r < 0) {
		what = "not compiled rules of this version (" RULES_MAGIC ")";
		goto out_error;
	}
	while (pos < len) {
		struct iosig_error serr;
		struct iosig_sig sig;
		struct origin o;
		size_t end;

		start = pos;
		for (int k = 0; k < F_COUNT; k++) {
			r = net_read(text, len, &pos, &f[k]);
			if (r < 0) {
				what = "truncated or malformed rule";
				goto out_error;
			}
		}
		end = pos;
		/* Errors below point at the start of the rule. */
		pos = start;
		r = -EINVAL;
		if (!normalised_ok(f[F_PAT]) || (f[F_ALT][0] && !normalised_ok(f[F_ALT]))) {
			what = "pattern not in normal form";
			goto out_error;
		}
		if (!dec_ok(f[F_LINE], &o.line) || !dec_ok(f[F_COL], &o.col)) {
			what = "bad line or column";
			goto out_error;
		}
		memset(&serr, 0, sizeof(serr));
		if (iosig_sig_parse(f[F_SIG], NULL, NULL, 0, &sig, &serr) < 0) {
			what = "bad signature";
			goto out_error;
		}
		o.file = f[F_FILE];
		r = rule_append(rs, f[F_SHOWN], f[F_PAT], &sig, &o, why, sizeof(why));
		if (r < 0) {
			what = "bad pattern";
			goto out_error;
		}
		if (f[F_ALT][0]) {
			set_alt(rs, &rs->r[rs->n - 1], f[F_ALT]);
			f[F_ALT] = NULL;
		}
		for (int k = 0; k < F_COUNT; k++) {
			free(f[k]);
			f[k] = NULL;
		}
		pos = end;
	}
	return 0;

out_error:
	for (int k = 0; k < F_COUNT; k++)
		free(f[k]);
	while (rs->n > n0)
		rule_free(&rs->r[--rs->n]);
	cat_error(err, RULES_ENV, 0, 0, "%s at byte %zu", what, pos);
	if (err)
		err->offset = pos;
	return r == -ENOMEM ? r : -EINVAL;
}

/* ------------------------------------------------------------------------
 * Matching
 * ---------------------------------------------------------------------- */

/* True if an absolute path has nothing rd_path_normalise() would change
 * ("//", "/./", "/../", a trailing '/'). */
static bool path_clean(const char *p)
{
	for (; *p; p++) {
		if (p[0] != '/')
			continue;
		if (p[1] == '/' || !p[1])
			return false;
		if (p[1] == '.' && (p[2] == '/' || !p[2] || (p[2] == '.' && (p[3] == '/' || !p[3]))))
			return false;
	}
	return true;
}

/* Can pattern `pat` match a file opened as `path` (length len, last
 * component `last` of length ll)?  *clean caches path_clean (-1 unknown). */
static bool pat_may_match(const struct rules_pat *pat, const char *path, const char *last,
			  size_t ll, int *clean)
{
	if (!pat->text)
		return false;
	if (pat->suffix_len > ll || memcmp(last + ll - pat->suffix_len, pat->suffix, pat->suffix_len))
		return false;
	if (path[0] != '/')
		return true;
	if (*clean < 0)
		*clean = path_clean(path);
	if (!*clean)
		return true;
	return !strncmp(path, pat->text, pat->prefix_len);
}

bool rules_quick_reject(const struct rules *rs, const char *path)
{
	const char *last;
	size_t len, ll;
	int clean = -1;
	unsigned char c;

	if (!rs || !rs->n || !path)
		return true;
	len = strlen(path);
	if (!len || path[len - 1] == '/')
		return true;
	c = (unsigned char)path[len - 1];
	if (!rs->any_suffix_empty && !(rs->last_byte[c >> 3] & (1u << (c & 7))))
		return true;
	last = memrchr(path, '/', len);
	last = last ? last + 1 : path;
	ll = len - (size_t)(last - path);
	if ((ll == 1 && last[0] == '.') || (ll == 2 && last[0] == '.' && last[1] == '.'))
		return true;
	for (size_t i = 0; i < rs->n; i++) {
		if (pat_may_match(&rs->r[i].pat, path, last, ll, &clean) ||
		    (rs->r[i].has_alt && pat_may_match(&rs->r[i].alt, path, last, ll, &clean)))
			return false;
	}
	return true;
}

const struct rules_rule *rules_match(const struct rules *rs, const char *abs)
{
	if (!rs || abs[0] != '/')
		return NULL;
	for (size_t i = 0; i < rs->n; i++) {
		const struct rules_rule *r = &rs->r[i];

		if (rules_pat_match(&r->pat, abs) || (r->has_alt && rules_pat_match(&r->alt, abs)))
			return r;
	}
	return NULL;
}

int rules_dir_path(int dirfd, char *buf, size_t size)
{
	static const char deleted[] = " (deleted)";
	char proc[40];
	size_t dl;
	ssize_t n;

	if (dirfd == AT_FDCWD) {
		if (!getcwd(buf, size) || buf[0] != '/')
			return -ENOENT;
		return 0;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	n = readlink(proc, buf, size);
	if (n <= 0 || (size_t)n >= size || buf[0] != '/')
		return -ENOENT;
	buf[n] = '\0';
	dl = (size_t)n;
	if (dl >= sizeof(deleted) && !strcmp(buf + dl - (sizeof(deleted) - 1), deleted))
		return -ENOENT;
	return 0;
}

int rules_abs_join(const char *dir, const char *path, char *buf, size_t size)
{
	char tmp[PATH_MAX * 2];
	size_t dl = strlen(dir), pl = strlen(path);

	if (path[0] == '/')
		return rd_path_normalise(path, buf, size);
	if (dir[0] != '/')
		return -EINVAL;
	if (dl + 1 + pl + 1 > sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, dl);
	tmp[dl] = '/';
	memcpy(tmp + dl + 1, path, pl + 1);
	return rd_path_normalise(tmp, buf, size);
}

int rules_abs_path(int dirfd, const char *path, char *buf, size_t size)
{
	char dir[PATH_MAX];
	int r;

	if (path[0] == '/')
		return rd_path_normalise(path, buf, size);
	r = rules_dir_path(dirfd, dir, sizeof(dir));
	if (r < 0)
		return r;
	return rules_abs_join(dir, path, buf, size);
}
