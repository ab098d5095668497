/* SPDX-License-Identifier: MIT */
/*
 * rules.c - iosig-redirect's rules (see rules.h): patterns, -s rules, the
 * compiled form for the environment and matching.  The YAML rules file is
 * read by rules_file.c; this file needs neither libyaml nor the catalog,
 * so the preload library can match paths without loading them.
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

#include "env.h"
#include "redirect.h"
#include "rules_internal.h"

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

void rules_drop(struct rules *rs, size_t n)
{
	while (rs->n > n)
		rule_free(&rs->r[--rs->n]);
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

void rules_note(struct rules *rs, const char *fmt, ...)
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

void rules_error(struct iosig_error *err, const char *file, int line, int col, const char *fmt,
		 ...)
{
	va_list ap;

	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->column = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
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

	/* Components (literal patterns too: rules_quick_reject compares the
	 * tail of a relative path with them). */
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
int rules_pat_normalise(const char *in, const char *cwd, char **ret_text, char *why,
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
		home = env_get("HOME");
		if (!home || home[0] != '/') {
			snprintf(why, wsize, "'~/' needs HOME set to an absolute directory");
			return -EINVAL;
		}
		r = snprintf(joined, sizeof(joined), "%s/%s%s", home, in + 2, dir ? "**" : "");
	} else if (in[0] == '/') {
		r = snprintf(joined, sizeof(joined), "%s%s", in, dir ? "**" : "");
	} else {
		if (!cwd || cwd[0] != '/') {
			snprintf(why, wsize, "a relative pattern needs the working directory, which has no name here (longer than PATH_MAX, or removed): write an absolute pattern");
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
int rules_append(struct rules *rs, const char *shown, const char *normalised,
		 const struct iosig_sig *sig, const struct rules_origin *o, char *why, size_t wsize)
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
		rules_note(rs, "rule '%s' (%s) is never used: '%s' (%s) has the same pattern and comes first",
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
int rules_sig_eval(struct rules *rs, const char *text, struct iosig_sig *ret_sig,
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
	struct rules_origin o;
	char file[32], why[300];
	char *norm = NULL;
	int r;

	snprintf(file, sizeof(file), "-s #%u", index);
	o.file = file;
	o.line = 0;
	o.col = 0;
	r = rules_sig_eval(rs, sigtext, &sig, &serr);
	if (r < 0) {
		rules_error(err, file, 0, serr.column, "signature '%s': %s", sigtext, serr.msg);
		if (err)
			err->offset = serr.offset;
		return r == -ENOMEM ? r : -EINVAL;
	}
	r = rules_pat_normalise(pattern, cwd, &norm, why, sizeof(why));
	if (r == 0) {
		r = rules_append(rs, pattern, norm, &sig, &o, why, sizeof(why));
		free(norm);
	}
	if (r < 0) {
		rules_error(err, file, 0, 0, "path '%s': %s", pattern, why);
		return r == -ENOMEM ? r : -EINVAL;
	}
	return 0;
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
		struct rules_origin o;
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
		r = rules_append(rs, f[F_SHOWN], f[F_PAT], &sig, &o, why, sizeof(why));
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
	rules_drop(rs, n0);
	rules_error(err, RULES_ENV, 0, 0, "%s at byte %zu", what, pos);
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

/*
 * Can pattern `pat` match the relative path[0..len) opened from some
 * directory D?  Normalised, D/path ends with the components of `path` that
 * follow its last ".." ("." and empty components vanish), so they must
 * match the pattern's last components, up to its last "**"; and a pattern
 * without "**" has too few components for a path with more.  This rejects
 * most relative opens without asking the kernel for D.
 */
static bool tail_may_match(const struct rules_pat *pat, const char *path, size_t len)
{
	const char *end = path + len;
	unsigned pi = pat->ncomp;

	while (end > path) {
		const char *s = end;
		size_t sl;

		while (s > path && s[-1] != '/')
			s--;
		sl = (size_t)(end - s);
		if (sl == 2 && s[0] == '.' && s[1] == '.')
			return true;
		if (sl && !(sl == 1 && s[0] == '.')) {
			if (!pi)
				return false;
			if (pat->comp_globstar[pi - 1])
				return true;
			if (!comp_match(pat->text + pat->comp_off[pi - 1], pat->comp_len[pi - 1], s, sl))
				return false;
			pi--;
		}
		if (s == path)
			break;
		end = s - 1;
	}
	return true;
}

/* Can pattern `pat` match a file opened as `path` (length len, last
 * component `last` of length ll)?  *clean caches path_clean (-1 unknown). */
static bool pat_may_match(const struct rules_pat *pat, const char *path, size_t len,
			  const char *last, size_t ll, int *clean)
{
	if (!pat->text)
		return false;
	if (pat->suffix_len > ll || memcmp(last + ll - pat->suffix_len, pat->suffix, pat->suffix_len))
		return false;
	if (path[0] != '/')
		return tail_may_match(pat, path, len);
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
		if (pat_may_match(&rs->r[i].pat, path, len, last, ll, &clean) ||
		    (rs->r[i].has_alt && pat_may_match(&rs->r[i].alt, path, len, last, ll, &clean)))
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
