/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small streaming JSON writer shared by the library (decision
 * log), the tools (--json), iosig-sim and the benchmarks.  One implementation
 * for the whole project; private, not part of the public API.
 *
 * Usage: json_init(&w, fp, pretty); json_obj_begin(&w, NULL);
 *        json_str(&w, "name", "x"); json_obj_end(&w); json_finish(&w);
 * `key` is the member name inside an object and must be NULL inside arrays
 * and at top level.
 */
#ifndef IOSIG_JSON_H
#define IOSIG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *fp;                         /* destination */
	bool pretty;                      /* indent and newlines */
	int depth;                        /* current nesting */
	bool has_items[JSON_MAX_DEPTH];   /* a member was written at this depth */
	int err;                          /* first error (-errno), sticky */
};

void json_init(struct json_writer *w, FILE *fp, bool pretty);
void json_obj_begin(struct json_writer *w, const char *key);
void json_obj_end(struct json_writer *w);
void json_arr_begin(struct json_writer *w, const char *key);
void json_arr_end(struct json_writer *w);
void json_str(struct json_writer *w, const char *key, const char *val); /* NULL -> null */
void json_num(struct json_writer *w, const char *key, double val);      /* non-finite -> null */
void json_int(struct json_writer *w, const char *key, int64_t val);
void json_uint(struct json_writer *w, const char *key, uint64_t val);
void json_bool(struct json_writer *w, const char *key, bool val);
void json_null(struct json_writer *w, const char *key);
/* Ends the document (newline when pretty) and returns 0 or the first error. */
int json_finish(struct json_writer *w);

/* Writes `s` as a JSON string literal (quotes and escapes) to fp. */
void json_write_escaped(FILE *fp, const char *s);

#endif /* IOSIG_JSON_H */
