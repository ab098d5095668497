/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for named signatures: iosig_registry_define() and lookups
 * through nested scopes, iosig_pragma_resolve() with overriding parameters,
 * and iosig_sig_parse() with a registry.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "iosig.h"
#include "pragma_ok.h"

static void define_ok(struct iosig_registry *reg, const char *text)
{
	struct iosig_pragma *p = parse_ok(text);
	struct iosig_error err;

	if (iosig_registry_define(reg, p, &err) != 0)
		fail_msg("define '%s': %s", text, err.msg);
	iosig_pragma_free(p);
}

/* Resolves `text` against reg and returns its canonical text in buf. */
static int resolve_canon(const struct iosig_registry *reg, const char *text, char *buf,
			 size_t size, unsigned *ret_nslots, struct iosig_error *err)
{
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	struct iosig_pragma *p = parse_ok(text), *res = NULL;
	unsigned n = 0;
	int r;

	r = iosig_pragma_resolve(reg, p, &res, err);
	iosig_pragma_free(p);
	if (r < 0)
		return r;
	assert_int_equal(iosig_pragma_canonical(res, buf, size, slots, IOSIG_P_COUNT, &n), 0);
	if (ret_nslots)
		*ret_nslots = n;
	iosig_pragma_free(res);
	return 0;
}

static void test_define_and_use(void **state)
{
	struct iosig_registry *reg = iosig_registry_new(NULL);
	struct iosig_error err;
	char buf[256];
	unsigned n;

	assert_non_null(reg);
	define_ok(reg, "sigdef name(\"checkpoint\") persist sequential_access "
		       "size_per_io(64*MiB) min_mttdl(20*y)");
	/* the example of docs/design.md §3: the sig adds totalsize, keeps the rest */
	assert_int_equal(resolve_canon(reg, "sig name(\"checkpoint\") totalsize(nranks * 4*GiB)",
				       buf, sizeof(buf), &n, &err), 0);
	assert_string_equal(buf, "persist sequential_access size_per_io(67108864) totalsize($0) "
				 "min_mttdl(630720000) name(\"checkpoint\")");
	assert_int_equal(n, 1);
	/* later parameters override the definition, same group replaces */
	assert_int_equal(resolve_canon(reg, "sig name(\"checkpoint\") random tmp size_per_io(4*KiB)",
				       buf, sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "tmp random_access size_per_io(4096) min_mttdl(630720000) "
				 "name(\"checkpoint\")");
	/* a sig without a name is only validated and copied */
	assert_int_equal(resolve_canon(reg, "sig local", buf, sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "local");
	/* a NULL registry does no lookup: the name is only kept */
	assert_int_equal(resolve_canon(NULL, "sig name(\"nowhere\") global", buf, sizeof(buf),
				       NULL, &err), 0);
	assert_string_equal(buf, "global name(\"nowhere\")");
	/* a sigdef or jobwide resolves to a copy of itself */
	assert_int_equal(resolve_canon(reg, "jobwide name(\"checkpoint\") lifetime(d)", buf,
				       sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "lifetime(86400) name(\"checkpoint\")");
	iosig_registry_free(reg);
}

static void test_resolved_is_self_contained(void **state)
{
	struct iosig_registry *reg = iosig_registry_new(NULL);
	struct iosig_pragma *def, *sig, *res = NULL;
	const struct iosig_expr *slots[4];
	struct iosig_error err;
	char *text = strdup("sig name(\"d\") totalsize(count * blocks[i]->len)");
	char buf[256];
	unsigned n;

	def = parse_ok("sigdef name(\"d\") size_per_io(chunk * KiB) random");
	assert_int_equal(iosig_registry_define(reg, def, &err), 0);
	iosig_pragma_free(def); /* the registry keeps its own copy */
	assert_int_equal(iosig_pragma_parse(text, strlen(text), &sig, &err), 0);
	assert_int_equal(iosig_pragma_resolve(reg, sig, &res, &err), 0);
	/* free everything the result could point into; ASan checks the rest */
	iosig_pragma_free(sig);
	iosig_registry_free(reg);
	memset(text, 'X', strlen(text));
	free(text);
	assert_int_equal(res->kind, IOSIG_PRAGMA_SIG);
	assert_string_equal(res->name, "d");
	assert_int_equal(iosig_pragma_canonical(res, buf, sizeof(buf), slots, 4, &n), 0);
	assert_string_equal(buf, "random_access size_per_io($0) totalsize($1) name(\"d\")");
	assert_int_equal(n, 2);
	assert_int_equal(slots[0]->kind, IOSIG_EXPR_MUL);
	assert_string_equal(slots[0]->lhs->text, "chunk");
	assert_string_equal(slots[0]->rhs->text, "KiB");
	assert_int_equal(slots[1]->rhs->kind, IOSIG_EXPR_MEMBER);
	assert_true(slots[1]->rhs->arrow);
	assert_string_equal(slots[1]->rhs->lhs->lhs->text, "blocks");
	iosig_pragma_free(res);
}

static void test_nesting(void **state)
{
	struct iosig_registry *file = iosig_registry_new(NULL);
	struct iosig_registry *fn = iosig_registry_new(file);
	struct iosig_registry *inner = iosig_registry_new(fn);
	struct iosig_error err;
	char buf[256];

	define_ok(file, "sigdef name(\"a\") persist");
	define_ok(file, "sigdef name(\"b\") size_per_io(1)");
	/* a function scope may shadow a file-scope name */
	define_ok(fn, "sigdef name(\"b\") size_per_io(2)");
	define_ok(fn, "sigdef name(\"c\") archive");
	assert_int_equal(resolve_canon(inner, "sig name(\"a\")", buf, sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "persist name(\"a\")");
	assert_int_equal(resolve_canon(inner, "sig name(\"b\")", buf, sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "size_per_io(2) name(\"b\")");
	assert_int_equal(resolve_canon(file, "sig name(\"b\")", buf, sizeof(buf), NULL, &err), 0);
	assert_string_equal(buf, "size_per_io(1) name(\"b\")");
	/* names of an inner scope are not visible outside */
	assert_int_equal(resolve_canon(file, "sig name(\"c\")", buf, sizeof(buf), NULL, &err),
			 -ENOENT);
	iosig_registry_free(inner);
	iosig_registry_free(fn);
	/* the file scope survives its children */
	assert_int_equal(resolve_canon(file, "sig name(\"a\") tmp", buf, sizeof(buf), NULL, &err),
			 0);
	assert_string_equal(buf, "tmp name(\"a\")");
	iosig_registry_free(file);
	iosig_registry_free(NULL);
}

static void test_errors(void **state)
{
	struct iosig_registry *reg = iosig_registry_new(NULL);
	struct iosig_pragma *p;
	struct iosig_error err;
	char buf[256];

	define_ok(reg, "sigdef name(\"checkpoint\") persist size_per_io(64*MiB)");
	/* redefinition in the same registry */
	p = parse_ok("sigdef  name(\"checkpoint\") tmp");
	assert_int_equal(iosig_registry_define(reg, p, &err), -EEXIST);
	assert_string_equal(err.msg, "signature 'checkpoint' is already defined in this scope as "
				     "'persist size_per_io(67108864) name(\"checkpoint\")'; use another "
				     "name, or '#pragma io sig name(\"checkpoint\") ...' to use it");
	assert_int_equal(err.line, 1);
	assert_int_equal(err.column, 9);
	assert_int_equal(err.offset, 8);
	assert_int_equal(err.length, 18);
	iosig_pragma_free(p);
	/* only named sigdefs can be defined */
	p = parse_ok("sig name(\"x\") persist");
	assert_int_equal(iosig_registry_define(reg, p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "only a '#pragma io sigdef' with name(\"...\")"));
	iosig_pragma_free(p);
	p = parse_ok("jobwide name(\"x\")");
	assert_int_equal(iosig_registry_define(reg, p, &err), -EINVAL);
	assert_int_equal(iosig_registry_define(NULL, p, &err), -EINVAL);
	assert_int_equal(iosig_registry_define(reg, NULL, &err), -EINVAL);
	iosig_pragma_free(p);
	/* undefined names, with and without a suggestion */
	assert_int_equal(resolve_canon(reg, "sig persist\n  name(\"chekpoint\")", buf, sizeof(buf),
				       NULL, &err), -ENOENT);
	assert_string_equal(err.msg, "no signature named 'chekpoint' is defined here; did you "
				     "mean 'checkpoint'?");
	assert_int_equal(err.line, 2);
	assert_int_equal(err.column, 3);
	assert_int_equal(err.offset, 14);
	assert_int_equal(err.length, 17);
	assert_int_equal(resolve_canon(reg, "sig name(\"zzz\")", buf, sizeof(buf), NULL, &err),
			 -ENOENT);
	assert_string_equal(err.msg, "no signature named 'zzz' is defined here; define it first "
				     "with '#pragma io sigdef name(\"zzz\") ...'");
	assert_int_equal(iosig_pragma_resolve(reg, NULL, &p, &err), -EINVAL);
	iosig_registry_free(reg);
}

static void test_sig_parse_with_registry(void **state)
{
	struct iosig_registry *reg = iosig_registry_new(NULL);
	const double values[] = { 1e9 };
	struct iosig_sig s;
	struct iosig_error err;

	define_ok(reg, "sigdef name(\"ckpt\") persist sequential size_per_io(64*MiB) "
		       "totalsize(n*GiB)");
	/* the definition's non-constant value has no slot in sig_parse text */
	assert_int_equal(iosig_sig_parse("persist  name(\"ckpt\")", reg, values, 1, &s, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "in the definition of 'ckpt': 'n' is not a constant: values "
				     "must be constants here");
	assert_int_equal(err.offset, 9); /* at the name that pulled the definition in */
	assert_int_equal(err.length, 12);
	define_ok(reg, "sigdef name(\"c2\") persist sequential size_per_io(64*MiB)");
	assert_int_equal(iosig_sig_parse("sig name(\"c2\") random totalsize($0)", reg, values, 1,
					 &s, &err), 0);
	assert_int_equal(s.set, IOSIG_HAS(IOSIG_P_PERSIST) | IOSIG_HAS(IOSIG_P_RANDOM) |
				IOSIG_HAS(IOSIG_P_SIZE_PER_IO) | IOSIG_HAS(IOSIG_P_TOTALSIZE) |
				IOSIG_HAS(IOSIG_P_NAME));
	assert_int_equal(s.size_per_io, 64ull << 20);
	assert_int_equal(s.totalsize, 1000000000);
	assert_string_equal(s.name, "c2");
	/* undefined name with a registry; without one the name is a label */
	assert_int_equal(iosig_sig_parse("name(\"c3\")", reg, NULL, 0, &s, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "did you mean 'c2'?"));
	assert_int_equal(iosig_sig_parse("name(\"c3\") tmp", NULL, NULL, 0, &s, &err), 0);
	assert_int_equal(s.set, IOSIG_HAS(IOSIG_P_TMP) | IOSIG_HAS(IOSIG_P_NAME));
	iosig_registry_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_define_and_use),
		cmocka_unit_test(test_resolved_is_self_contained),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sig_parse_with_registry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
