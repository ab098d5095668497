/* SPDX-License-Identifier: MIT */
/* jsonl.c - strict JSON reader for the decision-log tests (see jsonl.h). */
#include "jsonl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

struct rd {
	const char *p;
	bool bad;
};

static void ws(struct rd *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
		r->p++;
}

static bool value(struct rd *r, struct jv *out, int depth);

static bool put_utf8(char **o, unsigned cp)
{
	char *s = *o;

	if (cp < 0x80) {
		*s++ = (char)cp;
	} else if (cp < 0x800) {
		*s++ = (char)(0xc0 | (cp >> 6));
		*s++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*s++ = (char)(0xe0 | (cp >> 12));
		*s++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*s++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = s;
	return true;
}

static char *string(struct rd *r)
{
	const char *start;
	char *buf, *o;

	if (*r->p != '"')
		return NULL;
	start = ++r->p;
	buf = malloc(strlen(start) * 3 + 1);
	if (!buf)
		return NULL;
	o = buf;
	while (*r->p && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p++;

		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		switch (*r->p++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp = 0;

			for (int i = 0; i < 4; i++) {
				if (!isxdigit((unsigned char)r->p[i]))
					goto bad;
				cp = cp * 16 + (unsigned)(isdigit((unsigned char)r->p[i]) ?
							  r->p[i] - '0' : (tolower(r->p[i]) - 'a' + 10));
			}
			r->p += 4;
			put_utf8(&o, cp);
			break;
		}
		default:
			goto bad;
		}
	}
	if (*r->p != '"')
		goto bad;
	r->p++;
	*o = '\0';
	return buf;
bad:
	free(buf);
	return NULL;
}

static bool number(struct rd *r, struct jv *out)
{
	const char *s = r->p;
	char *end;

	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	if (*s == '0' && isdigit((unsigned char)s[1]))
		return false;
	out->kind = JV_NUM;
	out->num = strtod(r->p, &end);
	if (end == r->p)
		return false;
	r->p = end;
	return true;
}

static bool container(struct rd *r, struct jv *out, int depth, bool obj)
{
	char close = obj ? '}' : ']';

	out->kind = obj ? JV_OBJ : JV_ARR;
	r->p++;
	ws(r);
	if (*r->p == close) {
		r->p++;
		return true;
	}
	for (;;) {
		struct jv *items = realloc(out->items, (out->n + 1) * sizeof(*items));
		char *key = NULL;

		if (!items)
			return false;
		out->items = items;
		if (obj) {
			char **keys = realloc(out->keys, (out->n + 1) * sizeof(*keys));

			if (!keys)
				return false;
			out->keys = keys;
			ws(r);
			key = string(r);
			if (!key)
				return false;
			ws(r);
			if (*r->p++ != ':') {
				free(key);
				return false;
			}
			out->keys[out->n] = key;
		}
		memset(&out->items[out->n], 0, sizeof(out->items[0]));
		out->n++;
		if (!value(r, &out->items[out->n - 1], depth + 1))
			return false;
		ws(r);
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p == close) {
			r->p++;
			return true;
		}
		return false;
	}
}

static bool value(struct rd *r, struct jv *out, int depth)
{
	if (depth > 64)
		return false;
	ws(r);
	switch (*r->p) {
	case '{':
		return container(r, out, depth, true);
	case '[':
		return container(r, out, depth, false);
	case '"':
		out->kind = JV_STR;
		out->str = string(r);
		return out->str != NULL;
	case 't':
		if (strncmp(r->p, "true", 4))
			return false;
		r->p += 4;
		out->kind = JV_BOOL;
		out->b = true;
		return true;
	case 'f':
		if (strncmp(r->p, "false", 5))
			return false;
		r->p += 5;
		out->kind = JV_BOOL;
		return true;
	case 'n':
		if (strncmp(r->p, "null", 4))
			return false;
		r->p += 4;
		out->kind = JV_NULL;
		return true;
	default:
		return number(r, out);
	}
}

static void jv_clear(struct jv *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		jv_clear(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	jv_clear(v);
	free(v);
}

struct jv *jv_parse(const char *text)
{
	struct rd r = { text, false };
	struct jv *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (!value(&r, v, 0)) {
		jv_free(v);
		return NULL;
	}
	ws(&r);
	if (*r.p) {
		jv_free(v);
		return NULL;
	}
	return v;
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
	if (!v || v->kind != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

const char *jv_str(const struct jv *v, const char *key)
{
	const struct jv *m = jv_get(v, key);

	return m && m->kind == JV_STR ? m->str : NULL;
}

double jv_num(const struct jv *v, const char *key, double dflt)
{
	const struct jv *m = jv_get(v, key);

	return m && m->kind == JV_NUM ? m->num : dflt;
}

long jv_each_line(const char *path, bool (*fn)(const struct jv *rec, void *arg), void *arg)
{
	char *text = tfile_read(path), *line, *save = NULL;
	long n = 0;

	if (!text)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jv *v = jv_parse(line);

		if (!v) {
			free(text);
			return -1;
		}
		n++;
		if (fn && !fn(v, arg)) {
			jv_free(v);
			break;
		}
		jv_free(v);
	}
	free(text);
	return n;
}
