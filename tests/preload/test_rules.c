/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c - iosig-redirect's rules (libiosig/tools/redirect/rules.c): pattern
 * semantics, the quick rejection the preload library relies on, the YAML
 * rules file with every error and its exact file:line:column message,
 * -s arguments, the compiled form for the environment and absolute paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules.h"

/* A rule set from YAML text; asserts success. */
static struct rules *load(const char *yaml)
{
	struct rules *rs = rules_new();
	struct iosig_error err = { 0 };

	assert_non_null(rs);
	if (rules_load_buffer(rs, "r.yaml", yaml, strlen(yaml), "/work", &err) < 0)
		fail_msg("rules error: %s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	return rs;
}

/* The error of loading YAML text, as "file:line:col: msg". */
static char *load_err(const char *yaml)
{
	static char buf[600];
	struct rules *rs = rules_new();
	struct iosig_error err = { 0 };
	int r;

	assert_non_null(rs);
	r = rules_load_buffer(rs, "r.yaml", yaml, strlen(yaml), "/work", &err);
	assert_int_equal(r, -EINVAL);
	assert_int_equal(rs->n, 0);
	snprintf(buf, sizeof(buf), "%s:%d:%d: %s", err.file, err.line, err.column, err.msg);
	rules_free(rs);
	return buf;
}

/* One -s rule; NULL rule set on failure with the message in msg. */
static struct rules *cli(const char *sig, const char *pattern, char *msg, size_t size)
{
	struct rules *rs = rules_new();
	struct iosig_error err = { 0 };

	assert_non_null(rs);
	if (rules_add_cli(rs, 1, sig, pattern, "/work/dir", &err) < 0) {
		snprintf(msg, size, "%s:%d:%d: %s", err.file, err.line, err.column, err.msg);
		rules_free(rs);
		return NULL;
	}
	return rs;
}

/* Does pattern (as written, relative to /work/dir) match abs? */
static bool m(const char *pattern, const char *abs)
{
	char msg[600];
	struct rules *rs = cli("tmp", pattern, msg, sizeof(msg));
	bool r;

	if (!rs)
		fail_msg("pattern '%s': %s", pattern, msg);
	r = rules_match(rs, abs) != NULL;
	/* Quick rejection must never reject what matches, whether it is
	 * opened by its absolute path or by any relative tail of it (from
	 * the directory above that tail), with or without "./" and "//". */
	if (r) {
		char rel[600];

		assert_false(rules_quick_reject(rs, abs));
		for (const char *t = strchr(abs + 1, '/'); t; t = strchr(t + 1, '/')) {
			assert_false(rules_quick_reject(rs, t + 1));
			snprintf(rel, sizeof(rel), ".//%s", t + 1);
			assert_false(rules_quick_reject(rs, rel));
		}
		assert_false(rules_quick_reject(rs, abs + 1));
	}
	rules_free(rs);
	return r;
}

static void test_patterns(void **state)
{
	(void)state;
	/* Literal paths, relative to the working directory. */
	assert_true(m("/srv/db/app.db", "/srv/db/app.db"));
	assert_false(m("/srv/db/app.db", "/srv/db/app.db2"));
	assert_true(m("out.dat", "/work/dir/out.dat"));
	assert_false(m("out.dat", "/elsewhere/out.dat"));
	assert_true(m("~/x", "/root/x") == !strcmp(getenv("HOME"), "/root"));
	assert_true(m("sub/out.dat", "/work/dir/sub/out.dat"));
	assert_true(m("../x/out.dat", "/work/x/out.dat"));
	assert_true(m("./sub//out.dat", "/work/dir/sub/out.dat"));
	/* '*' stays within a component; leading dots are not special. */
	assert_true(m("/db/*.wal", "/db/a.wal"));
	assert_true(m("/db/*.wal", "/db/.hidden.wal"));
	assert_false(m("/db/*.wal", "/db/sub/a.wal"));
	assert_true(m("/db/*/*.wal", "/db/sub/a.wal"));
	assert_true(m("/db/a*b*c", "/db/aXbYbZc"));
	assert_false(m("/db/a*b*c", "/db/aXbYbZ"));
	/* '?' and sets. */
	assert_true(m("/db/t?.db", "/db/t1.db"));
	assert_false(m("/db/t?.db", "/db/t12.db"));
	assert_true(m("/db/t[0-9].db", "/db/t7.db"));
	assert_false(m("/db/t[!0-9].db", "/db/t7.db"));
	assert_true(m("/db/t[^0-9].db", "/db/tx.db"));
	assert_true(m("/db/t[]x].db", "/db/t].db"));
	assert_true(m("/db/[ab", "/db/[ab"));             /* unclosed '[' is literal */
	assert_true(m("/db/a\\*", "/db/a*"));
	assert_false(m("/db/a\\*", "/db/ab"));
	/* '**': any depth; trailing: one or more components. */
	assert_true(m("/db/**/x.wal", "/db/x.wal"));
	assert_true(m("/db/**/x.wal", "/db/a/b/c/x.wal"));
	assert_false(m("/db/**/x.wal", "/other/x.wal"));
	assert_true(m("/db/**", "/db/a"));
	assert_true(m("/db/**", "/db/a/b"));
	assert_false(m("/db/**", "/db"));
	assert_true(m("/db/", "/db/a/b"));                 /* trailing '/' = everything below */
	assert_true(m("/**/*-journal", "/x/y/app.db-journal"));
	assert_true(m("/a/**/b/**/c", "/a/x/b/y/z/c"));
	assert_false(m("/a/**/b/**/c", "/a/x/y/z/c"));
	/* Any directory. */
	assert_true(m("/**/*-journal", "/srv/db/app.db-journal"));
	assert_true(m("/**/*-wal", "/app.db-wal"));
	assert_false(m("/**/*-wal", "/srv/db-wal/x"));
	assert_true(m("**/*.o", "/work/dir/a/b.o"));
	assert_false(m("**/*.o", "/work/b.o"));
	/* Byte-wise, UTF-8 is just bytes. */
	assert_true(m("/d/\xc3\xa9*", "/d/\xc3\xa9t\xc3\xa9"));
}

static void test_pattern_errors(void **state)
{
	char msg[600];

	(void)state;
	assert_null(cli("tmp", "", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '': the pattern is empty");
	assert_null(cli("tmp", "/", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '/': '/' names a directory, not files: write '/**' for every file");
	assert_null(cli("tmp", "~", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '~': '~' names a directory, not files: write '~/' for what is below it");
	assert_null(cli("tmp", "..", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '..': '..' names a directory, not files: write '../' for what is below it");
	assert_null(cli("tmp", "/a/*/../b", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '/a/*/../b': '..' after a wildcard: write the directory it names");
	assert_null(cli("tmp", "/a/[[:alpha:]]", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '/a/[[:alpha:]]': character class names such as [:alpha:] are not supported: list the characters ([a-zA-Z])");
	assert_null(cli("tmp", "/a/b\\", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '/a/b\\': the pattern ends with a lone '\\'");
	assert_null(cli("tmp", "/a[x/y]", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:0: path '/a[x/y]': a set [...] cannot contain '/'");
	/* Signature errors point into the signature. */
	assert_null(cli("persist sequentail", "/x", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:9: signature 'persist sequentail': unknown parameter 'sequentail'; did you mean 'sequential'?");
	assert_null(cli("persist tmp", "/x", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "-s #1:0:9: signature 'persist tmp': "));
	assert_null(cli("size_per_io(-4KiB)", "/x", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "signature 'size_per_io(-4KiB)': "));
	assert_null(cli("name(\"nope\")", "/x", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "'nope'"));
	assert_null(cli("jobwide lifetime(2d)", "/x", msg, sizeof(msg)));
	assert_string_equal(msg, "-s #1:0:1: signature 'jobwide lifetime(2d)': a rule's signature describes files, not the job: drop 'jobwide' (lifetime(...) may be given in the signature itself)");
	assert_null(cli("size_per_io(chunk)", "/x", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "'chunk' is not a constant"));
}

static void test_quick_reject(void **state)
{
	struct rules *rs = load("rules:\n"
				"  - path: /srv/db/*.wal\n"
				"    sig: persist\n"
				"  - path: '/**/*-journal'\n"
				"    sig: tmp\n");

	(void)state;
	/* Last byte not among the suffixes' last bytes. */
	assert_true(rules_quick_reject(rs, "/etc/passwd"));
	assert_true(rules_quick_reject(rs, "lib.so"));
	/* Right suffix, wrong literal prefix of an absolute clean path. */
	assert_true(rules_quick_reject(rs, "/srv/other/a.wal"));
	/* Could match: resolve and ask. */
	assert_false(rules_quick_reject(rs, "/srv/db/a.wal"));
	assert_false(rules_quick_reject(rs, "a.wal"));               /* relative */
	assert_false(rules_quick_reject(rs, "/srv/x/../db/a.wal"));  /* not clean */
	assert_false(rules_quick_reject(rs, "/x/y.db-journal"));
	/* A relative path whose own components cannot be the pattern's last
	 * ones, wherever it is opened from: no need to ask where it is. */
	assert_true(rules_quick_reject(rs, "d000/f1.wal"));          /* "db" is literal */
	assert_true(rules_quick_reject(rs, "a/b/srv/db/f1.wal"));    /* too many components */
	assert_false(rules_quick_reject(rs, "db/f1.wal"));
	assert_false(rules_quick_reject(rs, "srv/db/f1.wal"));
	assert_false(rules_quick_reject(rs, "x/../db/f1.wal"));      /* ".." ends what is known */
	assert_false(rules_quick_reject(rs, "x/../f1.wal"));
	assert_false(rules_quick_reject(rs, "./db/./f1.wal"));
	assert_false(rules_quick_reject(rs, "a/b/c/y.db-journal"));  /* "**" takes any depth */
	/* Never files. */
	assert_true(rules_quick_reject(rs, ""));
	assert_true(rules_quick_reject(rs, "/srv/db/"));
	assert_true(rules_quick_reject(rs, "/srv/db/a.wal/.."));
	assert_true(rules_quick_reject(NULL, "/srv/db/a.wal"));
	assert_true(rules_quick_reject(rs, NULL));
	/* A trailing wildcard disables the byte filter, not the prefix one. */
	rules_free(rs);
	rs = load("rules:\n  - path: /scratch/**\n    sig: tmp\n");
	assert_false(rules_quick_reject(rs, "/scratch/x"));
	assert_true(rules_quick_reject(rs, "/home/x"));
	assert_false(rules_quick_reject(rs, "x"));
	rules_free(rs);
	/* Literal patterns: the relative path must be a tail of them. */
	rs = load("rules:\n  - path: /srv/db/app.db\n    sig: tmp\n");
	assert_false(rules_quick_reject(rs, "app.db"));
	assert_false(rules_quick_reject(rs, "db/app.db"));
	assert_false(rules_quick_reject(rs, "srv//db/app.db"));
	assert_true(rules_quick_reject(rs, "other/app.db"));
	assert_true(rules_quick_reject(rs, "x/srv/db/app.db"));
	rules_free(rs);
}

static const char db_rules[] =
	"# A database layout\n"
	"version: 1\n"
	"signatures:\n"
	"  journal: persist sequential_access size_per_io(4KiB)\n"
	"  table: persist random_access size_per_io(4KiB) min_mttdl(10y)\n"
	"  scratch: tmp\n"
	"rules:\n"
	"  - path: [\"/**/*-journal\", \"/**/*-wal\"]\n"
	"    use: journal\n"
	"  - path: /srv/db/*.db\n"
	"    use: table\n"
	"    sig: totalsize(2GiB)\n"
	"  - path: /srv/db/tmp/\n"
	"    sig: name(\"scratch\") random\n"
	"  - path: data/*.csv\n"
	"    sig: sequential size_per_io(1MiB)\n";

static void test_file(void **state)
{
	struct rules *rs = load(db_rules);
	const struct rules_rule *r;

	(void)state;
	assert_int_equal(rs->n, 5);
	assert_int_equal(rs->nnotes, 0);
	r = rules_match(rs, "/srv/db/app.db-journal");
	assert_non_null(r);
	assert_string_equal(r->sigtext, "persist sequential_access size_per_io(4096) name(\"journal\")");
	assert_string_equal(r->site.file, "r.yaml");
	assert_int_equal(r->site.line, 8);
	assert_int_equal(r->site.column, 12);
	assert_string_equal(r->site.call, "rule");
	assert_string_equal(r->site.sig, r->sigtext);
	r = rules_match(rs, "/x/app.db-wal");
	assert_non_null(r);
	assert_int_equal(r->site.column, 29);
	r = rules_match(rs, "/srv/db/app.db");
	assert_non_null(r);
	assert_string_equal(r->sigtext, "persist random_access size_per_io(4096) totalsize(2147483648) min_mttdl(315360000) name(\"table\")");
	r = rules_match(rs, "/srv/db/tmp/sort.1");
	assert_non_null(r);
	assert_string_equal(r->sigtext, "tmp random_access name(\"scratch\")");
	r = rules_match(rs, "/work/data/x.csv");
	assert_non_null(r);
	assert_int_equal(r->sig.size_per_io, 1048576);
	assert_null(rules_match(rs, "/srv/db/notes.txt"));
	assert_null(rules_match(rs, "/elsewhere/data/x.csv"));
	rules_free(rs);
}

static void test_first_match_and_notes(void **state)
{
	struct rules *rs = load("rules:\n"
				"  - path: /d/special.db\n"
				"    sig: persist\n"
				"  - path: /d/*.db\n"
				"    sig: tmp\n"
				"  - path: /d/special.db\n"
				"    sig: tmp\n");
	struct iosig_error err = { 0 };

	(void)state;
	assert_true(rules_match(rs, "/d/special.db")->sig.set & IOSIG_HAS(IOSIG_P_PERSIST));
	assert_true(rules_match(rs, "/d/other.db")->sig.set & IOSIG_HAS(IOSIG_P_TMP));
	assert_int_equal(rs->nnotes, 1);
	assert_string_equal(rs->notes[0],
			    "rule '/d/special.db' (r.yaml:6:11) is never used: '/d/special.db' (r.yaml:2:11) has the same pattern and comes first");
	/* -s after a file sees its names; rules keep the order they were added. */
	assert_int_equal(rules_add_cli(rs, 1, "name(\"x\")", "/d/a", "/", &err), -EINVAL);
	rules_free(rs);
	rs = load("signatures:\n  fast: tmp random\n");
	assert_int_equal(rs->nnotes, 1);
	assert_string_equal(rs->notes[0], "r.yaml:1:1: the file defines no rules");
	assert_int_equal(rules_add_cli(rs, 1, "name(\"fast\") size_per_io(4KiB)", "/d/a", "/", &err), 0);
	assert_string_equal(rs->r[0].sigtext, "tmp random_access size_per_io(4096) name(\"fast\")");
	assert_string_equal(rs->r[0].site.file, "-s #1");
	rules_free(rs);
}

static void test_file_errors(void **state)
{
	(void)state;
	assert_string_equal(load_err("rules: [\n"),
			    "r.yaml:2:1: invalid YAML: did not find expected node content while parsing a flow node");
	assert_string_equal(load_err("- a\n"),
			    "r.yaml:1:1: expected a mapping with version, signatures and rules at the top, got a list");
	assert_string_equal(load_err("rulez: []\n"),
			    "r.yaml:1:1: rulez: unknown top-level key; did you mean 'rules'?");
	assert_string_equal(load_err("mounts: []\n"),
			    "r.yaml:1:1: mounts: unknown top-level key: expected version, signatures or rules");
	assert_string_equal(load_err("version: 2\n"),
			    "r.yaml:1:10: version: this iosig-redirect reads rules version 1, the file has '2'");
	assert_string_equal(load_err("rules: []\nrules: []\n"), "r.yaml:2:1: rules: given twice");
	assert_string_equal(load_err("rules: {a: b}\n"),
			    "r.yaml:1:8: rules: expected a list of rules (\"- path: ... sig: ...\"), got a mapping");
	assert_string_equal(load_err("rules:\n  - x\n"),
			    "r.yaml:2:5: rule 1: expected a mapping with path and sig (or use), got a scalar");
	assert_string_equal(load_err("rules:\n  - sig: tmp\n"),
			    "r.yaml:2:5: rule 1: no path: say which files the rule is for");
	assert_string_equal(load_err("rules:\n  - path: /x\n"),
			    "r.yaml:2:5: rule 1: no signature: give sig (signature text) or use (a name from signatures)");
	assert_string_equal(load_err("rules:\n  - path: /x\n    sigs: tmp\n"),
			    "r.yaml:3:5: rule 1: unknown key 'sigs'; did you mean 'sig'?");
	assert_string_equal(load_err("rules:\n  - path: /x\n    mode: tmp\n"),
			    "r.yaml:3:5: rule 1: unknown key 'mode': a rule has path, sig and use");
	assert_string_equal(load_err("rules:\n  - path: /x\n    sig: tmp\n    sig: persist\n"),
			    "r.yaml:4:5: rule 1: sig given twice");
	/* Signature errors point at the offending byte in the file. */
	assert_string_equal(load_err("rules:\n  - path: /x\n    sig: persist sequentail\n"),
			    "r.yaml:3:18: sig: unknown parameter 'sequentail'; did you mean 'sequential'?");
	assert_string_equal(load_err("rules:\n  - path: /x\n    sig: \"tmp size_per_io(4 KiX)\"\n"),
			    "r.yaml:3:29: sig: unknown unit 'KiX'; did you mean 'KiB'?");
	assert_string_equal(load_err("rules:\n  - path: /x\n    use: fast\n"),
			    "r.yaml:3:10: use: no signature named 'fast' is defined here; define it under 'signatures:' in a rules file given before");
	assert_string_equal(load_err("signatures:\n  fast: tmp\nrules:\n  - path: /x\n    use: fats\n"),
			    "r.yaml:5:10: use: no signature named 'fats' is defined here; did you mean 'fast'?");
	assert_string_equal(load_err("rules:\n  - path: [/a, '']\n    sig: tmp\n"),
			    "r.yaml:2:16: path '': the pattern is empty");
	assert_string_equal(load_err("rules:\n  - path: []\n    sig: tmp\n"),
			    "r.yaml:2:11: path: the list is empty");
	assert_string_equal(load_err("rules:\n  - path: {a: 1}\n    sig: tmp\n"),
			    "r.yaml:2:11: path: expected a pattern or a list of patterns, got a mapping");
	assert_string_equal(load_err("signatures:\n  fast: tmp randon\n"),
			    "r.yaml:2:13: signature 'fast': unknown parameter 'randon'; did you mean 'random'?");
	assert_string_equal(load_err("signatures:\n  fast: tmp\n  fast: persist\n"),
			    "r.yaml:3:3: signature 'fast' is already defined at r.yaml:2:3: give it another name");
	assert_string_equal(load_err("signatures:\n  a: tmp\n  b: name(\"a\") random\n"),
			    "r.yaml:3:6: signature 'b': a definition cannot use name(...): copy the parameters of the signature it names");
	assert_string_equal(load_err("signatures:\n  \"a\\\"b\": tmp\n"),
			    "r.yaml:2:3: signatures: 'a\"b': a signature name cannot contain control characters, '\"' or '\\'");
	assert_string_equal(load_err("signatures:\n  job: tmp lifetime(2d)\n"),
			    "r.yaml:2:8: signature 'job': lifetime(...) cannot be part of a named signature: give it in the sig of the rules that use it");
	assert_string_equal(load_err("signatures: [a]\n"),
			    "r.yaml:1:13: signatures: expected a mapping of NAME: SIGNATURE, got a list");
}

static void test_encode_decode(void **state)
{
	struct rules *rs = load(db_rules), *back = rules_new();
	struct iosig_error err = { 0 };
	char *text = NULL, *again = NULL;

	(void)state;
	assert_int_equal(rules_encode(rs, &text), 0);
	assert_int_equal(strncmp(text, "13:iosig-rules-1,", 17), 0);
	assert_int_equal(rules_decode(back, text, strlen(text), &err), 0);
	assert_int_equal(back->n, rs->n);
	for (size_t i = 0; i < rs->n; i++) {
		assert_string_equal(back->r[i].pat.text, rs->r[i].pat.text);
		assert_string_equal(back->r[i].sigtext, rs->r[i].sigtext);
		assert_string_equal(back->r[i].file, rs->r[i].file);
		assert_int_equal(back->r[i].site.line, rs->r[i].site.line);
		assert_int_equal(back->r[i].site.column, rs->r[i].site.column);
		assert_memory_equal(&back->r[i].sig, &rs->r[i].sig, sizeof(struct iosig_sig));
	}
	assert_int_equal(rules_encode(back, &again), 0);
	assert_string_equal(again, text);
	assert_non_null(rules_match(back, "/srv/db/x.db"));
	free(again);

	/* A cut inside a rule is refused and adds nothing; a cut between rules
	 * is a shorter valid list. */
	for (size_t cut = 0; cut < strlen(text); cut++) {
		struct rules *t = rules_new();
		size_t n = back->n;
		int r = rules_decode(t, text, cut, &err);

		assert_non_null(t);
		if (r == 0) {
			assert_true(t->n < n);
		} else {
			assert_int_equal(r, -EINVAL);
			assert_int_equal(t->n, 0);
			assert_true(err.offset <= cut);
		}
		rules_free(t);
	}
	assert_int_equal(rules_decode(back, "13:iosig-rules-2,", 17, &err), -EINVAL);
	assert_string_equal(err.msg, "not compiled rules of this version (iosig-rules-1) at byte 17");
	{
		static const char bad_pat[] = "13:iosig-rules-1,1:x,4:/a/.,0:,3:tmp,1:f,1:0,1:0,";
		static const char bad_sig[] = "13:iosig-rules-1,1:x,2:/a,0:,3:tpm,1:f,1:0,1:0,";

		assert_int_equal(rules_decode(back, bad_pat, strlen(bad_pat), &err), -EINVAL);
		assert_string_equal(err.msg, "pattern not in normal form at byte 17");
		assert_int_equal(rules_decode(back, bad_sig, strlen(bad_sig), &err), -EINVAL);
		assert_string_equal(err.msg, "bad signature at byte 17");
	}
	free(text);
	rules_free(back);
	rules_free(rs);
}

static void test_resolve_links(void **state)
{
	char base[] = "/tmp/iosig-rules.XXXXXX", real[PATH_MAX], link[PATH_MAX], pat[PATH_MAX * 2];
	char path[PATH_MAX * 2], msg[600];
	struct rules *rs;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(real, sizeof(real), "%s/real", base);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	snprintf(pat, sizeof(pat), "%s/*.db", link);
	rs = cli("tmp", pat, msg, sizeof(msg));
	assert_non_null(rs);
	snprintf(path, sizeof(path), "%s/a.db", real);
	assert_null(rules_match(rs, path));
	rules_resolve_links(rs);
	assert_non_null(rules_match(rs, path));
	assert_false(rules_quick_reject(rs, path));
	snprintf(path, sizeof(path), "%s/a.db", link);
	assert_non_null(rules_match(rs, path));
	rules_free(rs);
	unlink(link);
	rmdir(real);
	rmdir(base);
}

static void test_abs_path(void **state)
{
	char buf[PATH_MAX], cwd[PATH_MAX], want[PATH_MAX * 2];
	int dfd;

	(void)state;
	assert_int_equal(rules_abs_path(AT_FDCWD, "/a//b/./c/../d", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/a/b/d");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(rules_abs_path(AT_FDCWD, "x/../y", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/y", strcmp(cwd, "/") ? cwd : "");
	assert_string_equal(buf, want);
	dfd = open("/usr/share", O_PATH | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(rules_abs_path(dfd, "a/b", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/usr/share/a/b");
	assert_int_equal(rules_abs_path(dfd, "/etc/x", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/etc/x");
	close(dfd);
	assert_int_equal(rules_abs_path(9999, "a", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(rules_abs_path(AT_FDCWD, "/a/b", buf, 4), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_pattern_errors),
		cmocka_unit_test(test_quick_reject),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_first_match_and_notes),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_resolve_links),
		cmocka_unit_test(test_abs_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
