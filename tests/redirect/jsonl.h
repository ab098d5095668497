/* SPDX-License-Identifier: MIT */
/*
 * jsonl.h - a strict little JSON reader for the tests of the decision log:
 * parses one line into a tree and looks members up by name.
 */
#ifndef IOSIG_TEST_JSONL_H
#define IOSIG_TEST_JSONL_H

#include <stdbool.h>
#include <stddef.h>

enum jv_kind { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	enum jv_kind kind;
	bool b;
	double num;
	char *str;             /* JV_STR: unescaped */
	struct jv *items;      /* JV_ARR / JV_OBJ values */
	char **keys;           /* JV_OBJ member names */
	size_t n;
};

/* Parses exactly one JSON value spanning all of text (whitespace allowed
 * around it).  NULL if the text is not valid JSON. */
struct jv *jv_parse(const char *text);
void jv_free(struct jv *v);

/* Member of an object, NULL if absent or v is not an object. */
const struct jv *jv_get(const struct jv *v, const char *key);
/* The string member, NULL if absent or not a string. */
const char *jv_str(const struct jv *v, const char *key);
/* The number member, or `dflt`. */
double jv_num(const struct jv *v, const char *key, double dflt);

/*
 * Parses a JSON-lines file: calls fn for every line (fn returns false to
 * stop).  Returns the number of lines, or -1 if a line is not valid JSON.
 */
long jv_each_line(const char *path, bool (*fn)(const struct jv *rec, void *arg), void *arg);

#endif /* IOSIG_TEST_JSONL_H */
