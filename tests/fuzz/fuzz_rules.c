/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rules.c - libFuzzer target for iosig-redirect's rules
 * (libiosig/tools/redirect/rules.c): the YAML rules file, the compiled form the
 * preload library reads from the environment, and the matcher.
 *
 * The input is loaded as a rules file (from a buffer of exactly its size)
 * and decoded as a compiled form.  Invariants checked:
 *  - a refused input comes with a message whose position lies within the
 *    input, and adds no rule;
 *  - every accepted rule has an absolute pattern and a signature whose
 *    canonical text parses back to the same signature;
 *  - the compiled form of accepted rules decodes to rules that encode to
 *    the same text (a round trip is exact);
 *  - a pattern without wildcards matches its own text; whenever a rule
 *    matches a path, rules_quick_reject() does not reject that path nor any
 *    relative tail of it (the preload library would otherwise miss it), for
 *    a set of probe paths and for every line of the input taken as a path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "rules.h"

static const char *const probes[] = {
	"/srv/db/app.db", "/srv/db/app.db-journal", "/tmp/x", "/a/b/c/d/e.wal", "/x.db",
	"/scratch/run/1/out.dat", "/work/.hidden", "/a", "/a/[b", "/a/*", "/db/t1.db",
};

static void check_path(const struct rules *rs, const char *abs)
{
	if (!rules_match(rs, abs))
		return;
	CHECK(!rules_quick_reject(rs, abs));
	/* Opened relative to any directory above it, it is not rejected either. */
	for (const char *t = strchr(abs, '/'); t && t[1]; t = strchr(t + 1, '/'))
		CHECK(!rules_quick_reject(rs, t + 1));
}

static void check_rules(const struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct rules_rule *r = &rs->r[i];
		struct iosig_sig back;

		CHECK(r->pat.text && r->pat.text[0] == '/');
		CHECK(r->sigtext && r->file && r->shown);
		CHECK(iosig_sig_parse(r->sigtext, NULL, NULL, 0, &back, NULL) == 0);
		CHECK(back.set == r->sig.set && back.size_per_io == r->sig.size_per_io &&
		      back.totalsize == r->sig.totalsize);
		if (r->pat.literal) {
			CHECK(rules_pat_match(&r->pat, r->pat.text));
			CHECK(!rules_quick_reject(rs, r->pat.text));
		}
		check_path(rs, r->pat.text);
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		check_path(rs, probes[i]);
}

static void check_roundtrip(const struct rules *rs)
{
	struct rules *back = rules_new();
	char *text = NULL, *again = NULL;

	CHECK(back);
	CHECK(rules_encode(rs, &text) == 0);
	CHECK(rules_decode(back, text, strlen(text), NULL) == 0);
	CHECK(back->n == rs->n);
	CHECK(rules_encode(back, &again) == 0);
	CHECK(!strcmp(text, again));
	free(again);
	free(text);
	rules_free(back);
}

/* Every line of the input that looks like an absolute path. */
static void check_lines(const struct rules *rs, const char *buf, size_t size)
{
	char path[512];

	for (size_t i = 0; i < size;) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : size - i;

		if (n && n < sizeof(path) && buf[i] == '/' && !memchr(buf + i, '\0', n)) {
			char norm[512];

			memcpy(path, buf + i, n);
			path[n] = '\0';
			if (rules_abs_path(-100, path, norm, sizeof(norm)) == 0)
				check_path(rs, norm);
		}
		i += n + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct rules *rs = rules_new();
	struct iosig_error err;
	int r;

	if (!buf || !rs) {
		free(buf);
		rules_free(rs);
		return 0;
	}
	memcpy(buf, data, size);
	memset(&err, 0, sizeof(err));
	r = rules_load_buffer(rs, "fuzz.yaml", buf, size, "/work", &err);
	if (r == 0) {
		check_rules(rs);
		check_roundtrip(rs);
		check_lines(rs, buf, size);
	} else {
		CHECK(rs->n == 0);
		CHECK(err.msg[0] != '\0');
		CHECK(err.line >= 0 && (size_t)err.line <= size + 1);
		CHECK(err.column >= 0 && (size_t)err.column <= size + 1);
	}
	rules_free(rs);

	rs = rules_new();
	if (rs) {
		memset(&err, 0, sizeof(err));
		r = rules_decode(rs, buf, size, &err);
		if (r == 0) {
			check_rules(rs);
			check_lines(rs, buf, size);
		} else {
			CHECK(rs->n == 0);
			CHECK(err.offset <= size);
		}
		rules_free(rs);
	}
	free(buf);
	return 0;
}
