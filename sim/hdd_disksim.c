/* SPDX-License-Identifier: MIT */
/*
 * hdd_disksim.c - reads the parts of DiskSim's parameter files that the HDD
 * model uses (.parv -> .diskspecs -> .model, and the .seek table).
 *
 * DiskSim's parameter language: blocks "TYPE NAME { Key = value, ... }",
 * values that are numbers, words, nested blocks "TYPE { ... }", lists
 * "[ v, v ]" or "source FILE" (the first block of another file), '#'
 * comments; at top level also "source FILE", "instantiate [..] as NAME"
 * and "topology ...".  The parser builds a small tree; the loader then
 * picks what the model needs and names file:line for anything wrong.
 * docs/calibration.md lists which parameters are used and which ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hdd.h"

#define DSP_MAX_FILE (1u << 20)   /* parameter files are a few KiB */
#define DSP_MAX_DEPTH 32
#define DSP_MAX_FILES 16

enum dsp_kind { DSP_WORD, DSP_BLOCK, DSP_LIST };

struct dsp_node {
	enum dsp_kind kind;
	char *key;                 /* member name, NULL for list items / top level */
	char *word;                /* DSP_WORD: the value; DSP_BLOCK: the block type */
	char *name;                /* top-level block: instance name */
	struct dsp_node *child;    /* members (block) or items (list) */
	struct dsp_node *next;
	const char *file;          /* where it was written, for messages */
	unsigned line;
};

/* Everything allocated while loading one drive; freed at once. */
struct dsp_ctx {
	bool no_source;            /* parsing text from memory: "source" is refused */
	void **allocs;
	size_t nallocs, cap;
	char *dir;                 /* directory of the first file: "source" is relative to it */
	unsigned nfiles;
	char *err;
	size_t errlen;
	int failed;                /* -errno once an error is recorded */
};

struct dsp_parser {
	struct dsp_ctx *ctx;
	const char *file;
	const char *s;
	size_t pos, len;
	unsigned line;
	int depth;
};

static void *ctx_alloc(struct dsp_ctx *c, size_t size)
{
	void *p;

	if (c->nallocs == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		void **n = realloc(c->allocs, ncap * sizeof(*n));

		if (!n)
			return NULL;
		c->allocs = n;
		c->cap = ncap;
	}
	p = calloc(1, size);
	if (p)
		c->allocs[c->nallocs++] = p;
	return p;
}

static char *ctx_strndup(struct dsp_ctx *c, const char *s, size_t n)
{
	char *p = ctx_alloc(c, n + 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

static void ctx_free(struct dsp_ctx *c)
{
	for (size_t i = 0; i < c->nallocs; i++)
		free(c->allocs[i]);
	free(c->allocs);
	free(c->dir);
}

static int ctx_error(struct dsp_ctx *c, int code, const char *file, unsigned line,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int ctx_error(struct dsp_ctx *c, int code, const char *file, unsigned line,
		     const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (c->failed)
		return c->failed;
	if (file)
		n = line ? snprintf(c->err, c->errlen, "%s:%u: ", file, line)
			 : snprintf(c->err, c->errlen, "%s: ", file);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	c->failed = code;
	return code;
}

#define PERR(p, ...) ctx_error((p)->ctx, -EINVAL, (p)->file, (p)->line, __VA_ARGS__)

static void skip_ws(struct dsp_parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c == '#') {
			while (p->pos < p->len && p->s[p->pos] != '\n')
				p->pos++;
		} else if (c == '\n') {
			p->line++;
			p->pos++;
		} else if (isspace((unsigned char)c)) {
			p->pos++;
		} else {
			break;
		}
	}
}

static char peek(const struct dsp_parser *p)
{
	return p->pos < p->len ? p->s[p->pos] : '\0';
}

/* Text up to one of stop (or a newline or comment), trimmed; NULL if none. */
static char *read_word(struct dsp_parser *p, const char *stop)
{
	size_t start = p->pos, end;

	while (p->pos < p->len && !strchr(stop, p->s[p->pos]) && p->s[p->pos] != '\n' &&
	       p->s[p->pos] != '#')
		p->pos++;
	end = p->pos;
	while (start < end && isspace((unsigned char)p->s[start]))
		start++;
	while (end > start && isspace((unsigned char)p->s[end - 1]))
		end--;
	if (end == start)
		return NULL;
	return ctx_strndup(p->ctx, p->s + start, end - start);
}

static int parse_file(struct dsp_ctx *c, const char *name, struct dsp_node **ret_first,
		      struct dsp_node ***ret_tail);
static int parse_body(struct dsp_parser *p, struct dsp_node *block);

static struct dsp_node *new_node(struct dsp_parser *p, enum dsp_kind kind)
{
	struct dsp_node *n = ctx_alloc(p->ctx, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->file = p->file;
		n->line = p->line;
	}
	return n;
}

static int parse_value(struct dsp_parser *p, struct dsp_node **ret)
{
	struct dsp_node *n = NULL;
	char *word;

	if (++p->depth > DSP_MAX_DEPTH)
		return PERR(p, "blocks nested deeper than %d", DSP_MAX_DEPTH);
	skip_ws(p);
	if (peek(p) == '[') {
		struct dsp_node **tail;

		n = new_node(p, DSP_LIST);
		if (!n)
			return ctx_error(p->ctx, -ENOMEM, NULL, 0, "out of memory");
		tail = &n->child;
		p->pos++;
		for (;;) {
			int r;

			skip_ws(p);
			if (peek(p) == ']') {
				p->pos++;
				break;
			}
			r = parse_value(p, tail);
			if (r < 0)
				return r;
			tail = &(*tail)->next;
			skip_ws(p);
			if (peek(p) == ',')
				p->pos++;
			else if (peek(p) != ']')
				return PERR(p, "expected ',' or ']' in a list");
		}
		p->depth--;
		*ret = n;
		return 0;
	}
	n = new_node(p, DSP_WORD);
	if (!n)
		return ctx_error(p->ctx, -ENOMEM, NULL, 0, "out of memory");
	word = read_word(p, ",]}{[");
	if (!word)
		return PERR(p, "missing value");
	n->word = word;
	skip_ws(p);
	if (peek(p) == '{') {
		int r;

		p->pos++;
		n->kind = DSP_BLOCK;
		r = parse_body(p, n);
		if (r < 0)
			return r;
	} else if (!strncmp(word, "source ", 7)) {
		struct dsp_node *first = NULL, **tail;
		int r = parse_file(p->ctx, word + 7, &first, &tail);

		if (r < 0)
			return r;
		while (first && first->kind != DSP_BLOCK)
			first = first->next;
		if (!first)
			return PERR(p, "'%s' holds no parameter block", word + 7);
		n = first;
	}
	p->depth--;
	*ret = n;
	return 0;
}

/* Members "key = value," up to the closing brace (already past '{'). */
static int parse_body(struct dsp_parser *p, struct dsp_node *block)
{
	struct dsp_node **tail = &block->child;

	for (;;) {
		struct dsp_node *v;
		char *key;
		int r;

		skip_ws(p);
		if (p->pos >= p->len)
			return PERR(p, "end of file inside the '%s' block that starts at line %u",
				    block->word, block->line);
		if (peek(p) == '}') {
			p->pos++;
			return 0;
		}
		key = read_word(p, "={}[],");
		if (!key || peek(p) != '=')
			return PERR(p, "expected 'name = value' in the '%s' block", block->word);
		p->pos++;
		r = parse_value(p, &v);
		if (r < 0)
			return r;
		v->key = key;
		*tail = v;
		tail = &v->next;
		skip_ws(p);
		if (peek(p) == ',')
			p->pos++;
		else if (peek(p) != '}')
			return PERR(p, "expected ',' or '}' after the value of '%s'", key);
	}
}

/* Skips a balanced [ ... ] (topology, instantiate). */
static int skip_brackets(struct dsp_parser *p)
{
	int level = 0;

	skip_ws(p);
	if (peek(p) != '[')
		return PERR(p, "expected '['");
	do {
		skip_ws(p);
		if (p->pos >= p->len)
			return PERR(p, "end of file inside '[ ... ]'");
		if (p->s[p->pos] == '[')
			level++;
		else if (p->s[p->pos] == ']')
			level--;
		p->pos++;
	} while (level > 0);
	return 0;
}

static int parse_top(struct dsp_parser *p, struct dsp_node ***tail)
{
	for (;;) {
		char *word, *space;
		int r;

		skip_ws(p);
		if (p->pos >= p->len)
			return 0;
		word = read_word(p, "{[");
		if (!word)
			return PERR(p, "unexpected '%c'", peek(p));
		if (!strncmp(word, "source ", 7)) {
			struct dsp_node *first = NULL, **t2;

			r = parse_file(p->ctx, word + 7, &first, &t2);
			if (r < 0)
				return r;
			if (first) {
				**tail = first;
				*tail = t2;
			}
			continue;
		}
		if (!strcmp(word, "instantiate") || !strncmp(word, "topology ", 9)) {
			r = skip_brackets(p);
			if (r < 0)
				return r;
			if (word[0] == 'i')
				(void)read_word(p, "");   /* "as NAME" */
			continue;
		}
		skip_ws(p);
		if (peek(p) != '{')
			return PERR(p, "'%s' is neither a parameter block 'TYPE NAME { ... }' nor "
				    "source/instantiate/topology", word);
		p->pos++;
		{
			struct dsp_node *n = new_node(p, DSP_BLOCK);

			if (!n)
				return ctx_error(p->ctx, -ENOMEM, NULL, 0, "out of memory");
			space = strchr(word, ' ');
			if (space) {
				*space = '\0';
				n->name = space + 1;
			}
			n->word = word;
			r = parse_body(p, n);
			if (r < 0)
				return r;
			**tail = n;
			*tail = &n->next;
		}
	}
}

static int read_text(struct dsp_ctx *c, const char *path, char **ret, size_t *ret_len)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	size_t n;
	int r;

	if (!fp) {
		r = -errno;
		return ctx_error(c, r, path, 0, "cannot open: %s", strerror(errno));
	}
	buf = ctx_alloc(c, DSP_MAX_FILE + 1);
	if (!buf) {
		fclose(fp);
		return ctx_error(c, -ENOMEM, path, 0, "out of memory");
	}
	n = fread(buf, 1, DSP_MAX_FILE + 1, fp);
	r = ferror(fp);
	fclose(fp);
	if (r)
		return ctx_error(c, -EIO, path, 0, "read error");
	if (n > DSP_MAX_FILE)
		return ctx_error(c, -EFBIG, path, 0, "larger than %u bytes: not a parameter file",
				 DSP_MAX_FILE);
	if (memchr(buf, '\0', n))
		return ctx_error(c, -EINVAL, path, 0, "contains a NUL byte: not a parameter file");
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* Path of a file named in another one: relative to the first file's directory. */
static char *ctx_path(struct dsp_ctx *c, const char *name)
{
	size_t n = strlen(c->dir) + strlen(name) + 2;
	char *path = ctx_alloc(c, n);

	if (path)
		snprintf(path, n, "%s/%s", c->dir, name);
	return path;
}

static int parse_file(struct dsp_ctx *c, const char *name, struct dsp_node **ret_first,
		      struct dsp_node ***ret_tail)
{
	struct dsp_parser p = { .ctx = c, .line = 1 };
	struct dsp_node *first = NULL, **tail = &first;
	char *text;
	size_t len;
	int r;

	if (c->no_source)
		return ctx_error(c, -EINVAL, name, 0, "'source' is not allowed in parameters given "
				 "as text");
	if (++c->nfiles > DSP_MAX_FILES)
		return ctx_error(c, -ELOOP, name, 0, "more than %d nested 'source' files",
				 DSP_MAX_FILES);
	p.file = name[0] == '/' ? name : ctx_path(c, name);
	if (!p.file)
		return ctx_error(c, -ENOMEM, NULL, 0, "out of memory");
	r = read_text(c, p.file, &text, &len);
	if (r < 0)
		return r;
	p.s = text;
	p.len = len;
	r = parse_top(&p, &tail);
	if (r < 0)
		return r;
	*ret_first = first;
	*ret_tail = tail;
	return 0;
}

/* ---- lookups ---- */

/* Key comparison ignoring case and runs of blanks. */
static bool key_eq(const char *a, const char *b)
{
	while (*a && *b) {
		if (isspace((unsigned char)*a) && isspace((unsigned char)*b)) {
			while (isspace((unsigned char)*a))
				a++;
			while (isspace((unsigned char)*b))
				b++;
			continue;
		}
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
	return !*a && !*b;
}

static struct dsp_node *get(const struct dsp_node *block, const char *key)
{
	for (struct dsp_node *n = block->child; n; n = n->next)
		if (n->key && key_eq(n->key, key))
			return n;
	return NULL;
}

static int need(struct dsp_ctx *c, const struct dsp_node *block, const char *key,
		struct dsp_node **ret)
{
	struct dsp_node *n = get(block, key);

	if (!n)
		return ctx_error(c, -EINVAL, block->file, block->line,
				 "'%s' is missing in this '%s' block", key, block->word);
	*ret = n;
	return 0;
}

static int word_num(struct dsp_ctx *c, const struct dsp_node *n, double *ret)
{
	char *end;
	double v;

	if (n->kind != DSP_WORD)
		return ctx_error(c, -EINVAL, n->file, n->line, "'%s' should be a number",
				 n->key ? n->key : "list item");
	v = strtod(n->word, &end);
	if (end == n->word || *end || v != v)
		return ctx_error(c, -EINVAL, n->file, n->line, "'%s' = '%s' is not a number",
				 n->key ? n->key : "list item", n->word);
	*ret = v;
	return 0;
}

static int num(struct dsp_ctx *c, const struct dsp_node *block, const char *key, double *ret)
{
	struct dsp_node *n = NULL;
	int r = need(c, block, key, &n);

	return r < 0 ? r : word_num(c, n, ret);
}

/* Optional number: *ret keeps its value when the key is absent. */
static int num_opt(struct dsp_ctx *c, const struct dsp_node *block, const char *key, double *ret)
{
	struct dsp_node *n = get(block, key);

	return n ? word_num(c, n, ret) : 0;
}

static int num_range(struct dsp_ctx *c, const struct dsp_node *block, const char *key,
		     double lo, double hi, double *ret)
{
	double v;
	int r = num(c, block, key, &v);

	if (r < 0)
		return r;
	if (v < lo || v > hi) {
		struct dsp_node *n = get(block, key);

		return ctx_error(c, -EINVAL, n->file, n->line, "'%s' = %g is outside [%g, %g]",
				 key, v, lo, hi);
	}
	*ret = v;
	return 0;
}

static int block_of(struct dsp_ctx *c, const struct dsp_node *block, const char *key,
		    struct dsp_node **ret)
{
	int r = need(c, block, key, ret);

	if (r < 0)
		return r;
	if ((*ret)->kind != DSP_BLOCK)
		return ctx_error(c, -EINVAL, (*ret)->file, (*ret)->line,
				 "'%s' should be a parameter block", key);
	return 0;
}

/* ---- the seek file ---- */

static int load_seek_file(struct dsp_ctx *c, const struct dsp_node *at, const char *name,
			  struct sim_hdd_params *p)
{
	char *path = name[0] == '/' ? (char *)name : ctx_path(c, name);
	char *text, *line, *save = NULL;
	size_t len;
	unsigned lineno = 0, declared = 0;
	int r;

	if (!path)
		return ctx_error(c, -ENOMEM, NULL, 0, "out of memory");
	r = read_text(c, path, &text, &len);
	if (r < 0)
		return r;
	text[len] = '\0';
	p->nseek = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long dist;
		double ms;
		char extra;

		lineno++;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line)
			continue;
		if (lineno == 1) {
			if (sscanf(line, "Seek distances measured: %u %c", &declared, &extra) != 1)
				return ctx_error(c, -EINVAL, path, lineno, "expected 'Seek distances "
						 "measured: N'");
			continue;
		}
		if (sscanf(line, "%lu , %lf %c", &dist, &ms, &extra) != 2)
			return ctx_error(c, -EINVAL, path, lineno, "expected 'distance, time_ms'");
		if (p->nseek >= SIM_HDD_MAX_SEEK)
			return ctx_error(c, -EINVAL, path, lineno, "more than %d seek points",
					 SIM_HDD_MAX_SEEK);
		if (dist == 0 || dist > UINT32_MAX || ms < 0 || ms > 1000 ||
		    (p->nseek && dist <= p->seek_dist[p->nseek - 1]))
			return ctx_error(c, -EINVAL, path, lineno, "seek point %lu, %g: distances must "
					 "increase from 1 and times lie in [0, 1000] ms", dist, ms);
		p->seek_dist[p->nseek] = (uint32_t)dist;
		p->seek_ms[p->nseek] = ms;
		p->nseek++;
	}
	if (!declared || p->nseek != declared)
		return ctx_error(c, -EINVAL, path, 0, "%u seek points, the header declares %u",
				 p->nseek, declared);
	(void)at;
	return 0;
}

/* ---- the drive ---- */

/* A list of non-negative integers (a zone's slips or defects) appended to
 * out[*n .. max). */
static int load_int_list(struct dsp_ctx *c, const struct dsp_node *list, const char *what,
			 uint64_t *out, uint32_t *n, uint32_t max)
{
	if (list->kind != DSP_LIST)
		return ctx_error(c, -EINVAL, list->file, list->line, "'%s' should be a list of "
				 "numbers", what);
	for (const struct dsp_node *it = list->child; it; it = it->next) {
		double v;
		int r = word_num(c, it, &v);

		if (r < 0)
			return r;
		if (v < 0 || v > 1e15 || v != (double)(uint64_t)v)
			return ctx_error(c, -EINVAL, it->file, it->line, "%s entry %g is not a "
					 "non-negative integer", what, v);
		if (*n >= max)
			return ctx_error(c, -EINVAL, it->file, it->line, "more than %u %s entries in "
					 "all zones", max, what);
		out[(*n)++] = (uint64_t)v;
	}
	return 0;
}

enum skew_unit { SKEW_SECTORS, SKEW_REVOLUTIONS };

/* "Skew units" of a layout or zone block: sectors (DiskSim's default) or
 * revolutions; *unit keeps its value when the key is absent. */
static int skew_units(struct dsp_ctx *c, const struct dsp_node *block, enum skew_unit *unit)
{
	struct dsp_node *n = get(block, "Skew units");

	if (!n)
		return 0;
	if (n->kind == DSP_WORD && !strcmp(n->word, "sectors"))
		*unit = SKEW_SECTORS;
	else if (n->kind == DSP_WORD && !strcmp(n->word, "revolutions"))
		*unit = SKEW_REVOLUTIONS;
	else
		return ctx_error(c, -EINVAL, n->file, n->line, "'Skew units' = '%s' is neither "
				 "sectors nor revolutions", n->kind == DSP_WORD ? n->word : "");
	return 0;
}

/* An angle of a zone (first block offset, skews) in sectors.  In sector
 * units DiskSim keeps whole sectors ((int) of the value, layout_g1_zone
 * INIT); revolutions are converted at the zone's sectors per track. */
static double zone_angle(double v, enum skew_unit unit, uint32_t bpt)
{
	return unit == SKEW_REVOLUTIONS ? v * bpt : (double)(int64_t)v;
}

static int load_layout(struct dsp_ctx *c, const struct dsp_node *model, struct sim_hdd_params *p)
{
	struct dsp_node *layout = NULL, *zones = NULL, *z;
	enum skew_unit layout_unit = SKEW_SECTORS;
	double v;
	int r;

	if ((r = block_of(c, model, "Layout Model", &layout)) < 0)
		return r;
	if ((r = num_range(c, layout, "LBN-to-PBN mapping scheme", 0, SIM_MAP_MAX, &v)) < 0)
		return r;
	if (v != (int)v) {
		struct dsp_node *n = get(layout, "LBN-to-PBN mapping scheme");

		return ctx_error(c, -EINVAL, n->file, n->line, "LBN-to-PBN mapping scheme %g is not "
				 "0, 1 or 2", v);
	}
	p->mapping = (enum sim_hdd_mapping)(int)v;
	if ((r = num_range(c, layout, "Sparing scheme used", 0, SIM_SPARE_MAX, &v)) < 0)
		return r;
	if (v != (int)v) {
		struct dsp_node *n = get(layout, "Sparing scheme used");

		return ctx_error(c, -EINVAL, n->file, n->line, "sparing scheme %g is not an integer "
				 "from 0 to %d", v, SIM_SPARE_MAX);
	}
	p->sparing = (enum sim_hdd_sparing)(int)v;
	v = 1;
	if ((r = num_opt(c, layout, "Rangesize for sparing", &v)) < 0)
		return r;
	p->range_size = v >= 1 ? (uint32_t)v : 1;
	if ((r = skew_units(c, layout, &layout_unit)) < 0)
		return r;
	if ((r = need(c, layout, "Zones", &zones)) < 0)
		return r;
	if (zones->kind != DSP_LIST)
		return ctx_error(c, -EINVAL, zones->file, zones->line, "'Zones' should be a list");
	p->nzones = 0;
	p->nslip = p->ndefect = 0;
	for (z = zones->child; z; z = z->next) {
		struct sim_hdd_zone *zz;
		enum skew_unit unit = layout_unit;
		struct dsp_node *list;
		double first, last, bpt, skew;

		if (z->kind != DSP_BLOCK)
			return ctx_error(c, -EINVAL, z->file, z->line, "a zone should be a block");
		if (p->nzones >= SIM_HDD_MAX_ZONES)
			return ctx_error(c, -EINVAL, z->file, z->line, "more than %d zones",
					 SIM_HDD_MAX_ZONES);
		zz = &p->zone[p->nzones++];
		memset(zz, 0, sizeof(*zz));
		if ((r = num_range(c, z, "First cylinder number", 0, 1e9, &first)) < 0 ||
		    (r = num_range(c, z, "Last cylinder number", first, 1e9, &last)) < 0 ||
		    (r = num_range(c, z, "Blocks per track", 1, 1e7, &bpt)) < 0 ||
		    (r = skew_units(c, z, &unit)) < 0)
			return r;
		zz->first_cyl = (uint32_t)first;
		zz->last_cyl = (uint32_t)last;
		zz->bpt = (uint32_t)bpt;
		v = 0;
		if ((r = num_opt(c, z, "Offset of first block", &v)) < 0)
			return r;
		zz->first_offset = zone_angle(v, unit, zz->bpt);
		v = 0;
		if ((r = num_opt(c, z, "Empty space at zone front", &v)) < 0)
			return r;
		zz->deadspace = (uint32_t)v;
		if ((r = num_range(c, z, "Skew for track switch", 0, 1e7, &skew)) < 0)
			return r;
		zz->track_skew = zone_angle(skew, unit, zz->bpt);
		if ((r = num_range(c, z, "Skew for cylinder switch", 0, 1e7, &skew)) < 0)
			return r;
		zz->cyl_skew = zone_angle(skew, unit, zz->bpt);
		if ((r = num_range(c, z, "Number of spares", 0, 1e9, &v)) < 0)
			return r;
		zz->spares = (uint32_t)v;
		zz->slip0 = p->nslip;
		if ((list = get(z, "slips")) &&
		    (r = load_int_list(c, list, "slips", p->slip, &p->nslip, SIM_HDD_MAX_SLIPS)) < 0)
			return r;
		zz->nslips = p->nslip - zz->slip0;
		zz->defect0 = p->ndefect;
		if ((list = get(z, "defects"))) {
			uint64_t flat[2 * SIM_HDD_MAX_DEFECTS];
			uint32_t n = 0;

			if ((r = load_int_list(c, list, "defects", flat, &n,
					       2 * (SIM_HDD_MAX_DEFECTS - p->ndefect))) < 0)
				return r;
			if (n % 2)
				return ctx_error(c, -EINVAL, list->file, list->line, "'defects' holds %u "
						 "numbers: it lists (defective, replacement) pairs", n);
			for (uint32_t k = 0; k < n; k += 2) {
				p->defect[p->ndefect][0] = flat[k];
				p->defect[p->ndefect][1] = flat[k + 1];
				p->ndefect++;
			}
		}
		zz->ndefects = p->ndefect - zz->defect0;
	}
	if (!p->nzones)
		return ctx_error(c, -EINVAL, zones->file, zones->line, "no zones");
	return 0;
}

static int load_mech(struct dsp_ctx *c, const struct dsp_node *model, struct sim_hdd_params *p)
{
	struct dsp_node *mech = NULL, *n = NULL;
	double v;
	int r;

	if ((r = block_of(c, model, "Mechanical Model", &mech)) < 0)
		return r;
	if ((r = need(c, mech, "Access time type", &n)) < 0)
		return r;
	if (n->kind != DSP_WORD || strcasecmp(n->word, "trackSwitchPlusRotation"))
		return ctx_error(c, -EINVAL, n->file, n->line, "access time type '%s' is not "
				 "supported (only trackSwitchPlusRotation)", n->word ? n->word : "");
	if ((r = num_range(c, mech, "Rotation speed (in rpms)", 100, 100000, &p->rpm)) < 0 ||
	    (r = num_range(c, mech, "Head switch time", 0, 100, &p->head_switch_ms)) < 0 ||
	    (r = num_range(c, mech, "Single cylinder seek time", 0, 100, &p->seek_one_ms)) < 0)
		return r;
	p->write_settle_ms = 0;
	if ((r = num_opt(c, mech, "Add. write settling delay", &p->write_settle_ms)) < 0)
		return r;
	if ((r = need(c, mech, "Seek type", &n)) < 0)
		return r;
	if (n->kind == DSP_WORD && !strcasecmp(n->word, "extracted")) {
		struct dsp_node *f = NULL;

		if ((r = need(c, mech, "Full seek curve", &f)) < 0)
			return r;
		if (f->kind != DSP_WORD)
			return ctx_error(c, -EINVAL, f->file, f->line, "'Full seek curve' should be a "
					 "file name");
		p->seek_kind = SIM_SEEK_TABLE;
		return load_seek_file(c, f, f->word, p);
	}
	if (n->kind == DSP_WORD && (!strcasecmp(n->word, "hpl") || !strcasecmp(n->word, "hplplus10"))) {
		struct dsp_node *hpl = NULL, *it;
		double val[6];
		unsigned i = 0;

		if ((r = need(c, mech, "HPL seek equation values", &hpl)) < 0)
			return r;
		if (hpl->kind != DSP_LIST)
			return ctx_error(c, -EINVAL, hpl->file, hpl->line, "'HPL seek equation values' "
					 "should be a list of 6 numbers");
		for (it = hpl->child; it; it = it->next) {
			if (i >= 6)
				return ctx_error(c, -EINVAL, it->file, it->line, "more than 6 HPL values");
			if ((r = word_num(c, it, &val[i++])) < 0)
				return r;
		}
		if (i != 6)
			return ctx_error(c, -EINVAL, hpl->file, hpl->line, "%u HPL values, expected 6 "
					 "(boundary, a, b, c, e, single-cylinder flag)", i);
		if (val[0] < 1)
			return ctx_error(c, -EINVAL, hpl->file, hpl->line, "HPL boundary %g < 1", val[0]);
		p->seek_kind = SIM_SEEK_CURVE;
		p->rw_boundary = (uint32_t)val[0];
		p->rw_a = val[1];
		p->rw_b = val[2];
		p->rw_c = val[3];
		p->rw_e = val[4];
		/* DiskSim: the single-cylinder seek time replaces d = 1 unless the
		 * sixth value is -1. */
		p->rw_single = val[5] != -1;
		if (!strcasecmp(n->word, "hplplus10")) {
			struct dsp_node *ften = NULL;

			if ((r = need(c, mech, "First ten seek times", &ften)) < 0)
				return r;
			if (ften->kind != DSP_LIST)
				return ctx_error(c, -EINVAL, ften->file, ften->line, "'First ten seek "
						 "times' should be a list of 10 numbers");
			i = 0;
			for (it = ften->child; it; it = it->next) {
				if (i >= 10)
					return ctx_error(c, -EINVAL, it->file, it->line,
							 "more than 10 seek times");
				if ((r = word_num(c, it, &p->first10_ms[i++])) < 0)
					return r;
			}
			if (i != 10)
				return ctx_error(c, -EINVAL, ften->file, ften->line, "%u seek times, "
						 "expected 10", i);
			p->have_first10 = true;
		}
		return 0;
	}
	return ctx_error(c, -EINVAL, n->file, n->line, "seek type '%s' is not supported "
			 "(supported: extracted, hpl, hplplus10)", n->word ? n->word : "");
	(void)v;
}

static int load_disk(struct dsp_ctx *c, const struct dsp_node *disk, struct sim_hdd_params *p)
{
	static const char *const ovh[8] = {
		"Read hit over. after read", "Read hit over. after write",
		"Read miss over. after read", "Read miss over. after write",
		"Write hit over. after read", "Write hit over. after write",
		"Write miss over. after read", "Write miss over. after write",
	};
	struct dsp_node *model = NULL;
	double v, scale = 1, caching = 1;
	int r;

	if ((r = block_of(c, disk, "Model", &model)) < 0)
		return r;
	if ((r = num_range(c, model, "Number of data surfaces", 1, 1024, &v)) < 0)
		return r;
	p->surfaces = (uint32_t)v;
	if ((r = num_range(c, model, "Number of cylinders", 1, 1e9, &v)) < 0)
		return r;
	p->cylinders = (uint32_t)v;
	/* Block count must be there, but DiskSim serves what the zones hold
	 * (layout_g1_load.c, checknumblocks), and so do we. */
	if ((r = num_range(c, model, "Block count", 1, 1e15, &v)) < 0)
		return r;
	p->blocks = 0;
	if ((r = load_layout(c, model, p)) < 0 || (r = load_mech(c, model, p)) < 0)
		return r;

	if ((r = num_opt(c, disk, "Time scale for overheads", &scale)) < 0)
		return r;
	for (int i = 0; i < 8; i++) {
		if ((r = num_range(c, disk, ovh[i], 0, 1000, &p->ovh_ms[i])) < 0)
			return r;
		p->ovh_ms[i] *= scale;
	}
	p->read_complete_ms = p->write_complete_ms = 0;
	if ((r = num_opt(c, disk, "Read completion overhead", &p->read_complete_ms)) < 0 ||
	    (r = num_opt(c, disk, "Write completion overhead", &p->write_complete_ms)) < 0)
		return r;
	p->read_complete_ms *= scale;
	p->write_complete_ms *= scale;
	p->data_prep_ms = p->reselect_ms = p->read_disconnect_ms[0] = p->read_disconnect_ms[1] = 0;
	if ((r = num_opt(c, disk, "Data preparation overhead", &p->data_prep_ms)) < 0 ||
	    (r = num_opt(c, disk, "First reselect overhead", &p->reselect_ms)) < 0 ||
	    (r = num_opt(c, disk, "Read disconnect afterread", &p->read_disconnect_ms[0])) < 0 ||
	    (r = num_opt(c, disk, "Read disconnect afterwrite", &p->read_disconnect_ms[1])) < 0)
		return r;
	p->data_prep_ms *= scale;
	p->reselect_ms *= scale;
	p->read_disconnect_ms[0] *= scale;
	p->read_disconnect_ms[1] *= scale;
	v = 0;
	if ((r = num_opt(c, disk, "High (read) water mark", &v)) < 0)
		return r;
	p->read_hwm = v < 0 ? 0 : v > 1 ? 1 : v;
	v = 1;
	if ((r = num_opt(c, disk, "Set watermark by reqsize", &v)) < 0)
		return r;
	p->hwm_by_request = v != 0;
	if ((r = num_range(c, disk, "Bulk sector transfer time", 0, 1000, &p->xfer_ms)) < 0)
		return r;

	if ((r = num_opt(c, disk, "Enable caching in buffer", &caching)) < 0)
		return r;
	if ((r = num_range(c, disk, "Number of buffer segments", 0, 1024, &v)) < 0)
		return r;
	p->nsegs = caching ? (unsigned)v : 0;
	if ((r = num_range(c, disk, "Segment size (in blks)", 0, 1e8, &v)) < 0)
		return r;
	p->seg_blocks = (unsigned)v;
	v = 1;
	if ((r = num_opt(c, disk, "Maximum number of write segments", &v)) < 0)
		return r;
	p->max_write_segs = (unsigned)v;
	v = 0;
	if ((r = num_opt(c, disk, "Maximum read-ahead (blks)", &v)) < 0)
		return r;
	p->max_readahead = (unsigned)v;
	v = SIM_RA_SEGMENT;
	if ((r = num_opt(c, disk, "Buffer continuous read", &v)) < 0)
		return r;
	if (v != (int)v || v < SIM_RA_NONE || v > SIM_RA_TRACK_AHEAD) {
		struct dsp_node *n = get(disk, "Buffer continuous read");

		return ctx_error(c, -EINVAL, n->file, n->line, "'Buffer continuous read' = %g is not "
				 "0, 1, 2, 3 or 4", v);
	}
	p->contread = (enum sim_hdd_contread)(int)v;
	v = 0;
	if ((r = num_opt(c, disk, "Fast write level", &v)) < 0)
		return r;
	p->fast_write = (unsigned)v;
	v = 1;
	if ((r = num_opt(c, disk, "Allow read hits on write data", &v)) < 0)
		return r;
	p->read_hits_on_write_data = v != 0;
	v = 0;
	if ((r = num_opt(c, disk, "Read-ahead on idle hit", &v)) < 0)
		return r;
	p->readahead_on_idle_hit = v != 0;
	v = 1;
	if ((r = num_opt(c, disk, "Max queue length", &v)) < 0)
		return r;
	p->queue_depth = v >= 1 ? (unsigned)v : 1;
	return 0;
}

/* Picks the drive out of the parsed top-level statements. */
static int load_top(struct dsp_ctx *c, struct dsp_node *first, const char *file, const char *name,
		    struct sim_hdd_params *p)
{
	struct dsp_node *disk = NULL;
	double bus = 0;
	int r;

	for (struct dsp_node *n = first; n; n = n->next) {
		if (n->kind != DSP_BLOCK)
			continue;
		if (!disk && !strcasecmp(n->word, "disksim_disk"))
			disk = n;
		if (!strcasecmp(n->word, "disksim_bus")) {
			double rd = 0, wr = 0;

			if ((r = num_opt(c, n, "Read block transfer time", &rd)) < 0 ||
			    (r = num_opt(c, n, "Write block transfer time", &wr)) < 0)
				return r;
			if (rd > bus)
				bus = rd;
			if (wr > bus)
				bus = wr;
		}
	}
	if (!disk)
		return ctx_error(c, -EINVAL, file, 0, "no 'disksim_disk' block");
	snprintf(p->name, sizeof(p->name), "%s", name);
	r = load_disk(c, disk, p);
	if (r < 0)
		return r;
	if (bus > p->xfer_ms)
		p->xfer_ms = bus;
	return sim_hdd_params_finish(p, c->err, c->errlen);
}

/* Sets up a loading context and a scratch parameter block. */
static int ctx_start(struct dsp_ctx *c, const char *dir, struct sim_hdd_params **ret_p)
{
	*ret_p = calloc(1, sizeof(**ret_p));
	c->dir = strdup(dir);
	if (!*ret_p || !c->dir) {
		free(*ret_p);
		free(c->dir);
		c->dir = NULL;
		snprintf(c->err, c->errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int sim_disksim_load(const char *dir, const char *name, struct sim_hdd_params *ret,
		     char *err, size_t errlen)
{
	struct dsp_ctx c = { .err = err, .errlen = errlen };
	struct dsp_node *first = NULL, **tail;
	struct sim_hdd_params *p;
	char file[512];
	int r;

	if (!*name || strchr(name, '/') || strlen(name) > 200) {
		snprintf(err, errlen, "'%s' is not a drive name (expected e.g. barracuda)", name);
		return -EINVAL;
	}
	r = ctx_start(&c, dir, &p);
	if (r < 0)
		return r;
	snprintf(file, sizeof(file), "%s/%s.parv", dir, name);
	if (access(file, R_OK) != 0)
		snprintf(file, sizeof(file), "%s/%s.diskspecs", dir, name);
	if (access(file, R_OK) != 0) {
		r = ctx_error(&c, -ENOENT, NULL, 0, "no DiskSim files for drive '%s' in %s "
			      "(expected %s.parv or %s.diskspecs)", name, dir, name, name);
		goto out;
	}
	r = parse_file(&c, strrchr(file, '/') + 1, &first, &tail);
	if (r == 0)
		r = load_top(&c, first, file, name, p);
	if (r == 0)
		*ret = *p;
out:
	ctx_free(&c);
	free(p);
	return r;
}

int sim_disksim_parse_text(const char *text, size_t len, struct sim_hdd_params *ret, char *err,
			   size_t errlen)
{
	struct dsp_ctx c = { .err = err, .errlen = errlen, .no_source = true };
	struct dsp_parser p = { .ctx = &c, .line = 1, .file = "<text>" };
	struct dsp_node *first = NULL, **tail = &first;
	struct sim_hdd_params *hp;
	int r = ctx_start(&c, ".", &hp);

	if (r < 0)
		return r;
	if (len > DSP_MAX_FILE || memchr(text, '\0', len)) {
		r = ctx_error(&c, -EINVAL, p.file, 0, "not a parameter text (NUL byte or too long)");
		goto out;
	}
	p.s = text;
	p.len = len;
	r = parse_top(&p, &tail);
	if (r == 0)
		r = load_top(&c, first, p.file, "text", hp);
	if (r == 0)
		*ret = *hp;
out:
	ctx_free(&c);
	free(hp);
	return r;
}
