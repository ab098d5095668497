/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for iosig_pragma_parse(): the pragma grammar, every parameter
 * spelling and unit, the expression trees handed to the compiler plugins,
 * and the exact position and wording of errors.
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

/* Canonical text of a pragma that must parse (slots allowed). */
static void expect_canon(const char *text, const char *canon, unsigned nslots)
{
	struct iosig_pragma *p = parse_ok(text);
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	unsigned n = 99;
	char buf[512];

	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), slots, IOSIG_P_COUNT, &n),
			 0);
	assert_string_equal(buf, canon);
	assert_int_equal(n, nslots);
	iosig_pragma_free(p);
}

struct bad {
	const char *text;
	int line, column;
	size_t offset, length;
	const char *msg; /* substring of the message */
};

static void expect_bad(const struct bad *b)
{
	struct iosig_pragma *p = (struct iosig_pragma *)0x1;
	struct iosig_error err;
	int r;

	memset(&err, 0x55, sizeof(err));
	r = iosig_pragma_parse(b->text, strlen(b->text), &p, &err);
	if (r != -EINVAL)
		fail_msg("'%s': expected -EINVAL, got %d", b->text, r);
	assert_ptr_equal(p, (struct iosig_pragma *)0x1); /* untouched */
	assert_string_equal(err.file, "");
	if (!strstr(err.msg, b->msg) || err.line != b->line || err.column != b->column ||
	    err.offset != b->offset || err.length != b->length)
		fail_msg("'%s': got %d:%d off %zu len %zu '%s', want %d:%d off %zu len %zu '%s'",
			 b->text, err.line, err.column, err.offset, err.length, err.msg, b->line,
			 b->column, b->offset, b->length, b->msg);
}

static void test_design_example(void **state)
{
	const char *def = "sigdef name(\"checkpoint\") persist sequential_access "
			  "size_per_io(64*MiB) min_mttdl(20*y)";
	const char *use = "sig name(\"checkpoint\") totalsize(nranks * 4*GiB)";
	struct iosig_pragma *p = parse_ok(def);
	const struct iosig_expr *e;

	assert_int_equal(p->kind, IOSIG_PRAGMA_SIGDEF);
	assert_string_equal(p->name, "checkpoint");
	assert_int_equal(p->nparams, 5);
	/* source order, spans of whole parameters */
	assert_int_equal(p->params[0].id, IOSIG_P_NAME);
	assert_int_equal(p->params[0].offset, 7);
	assert_int_equal(p->params[0].length, 18);
	assert_int_equal(p->params[1].id, IOSIG_P_PERSIST);
	assert_null(p->params[1].expr);
	assert_int_equal(p->params[1].offset, 26);
	assert_int_equal(p->params[1].length, 7);
	assert_int_equal(p->params[2].id, IOSIG_P_SEQUENTIAL);
	assert_int_equal(p->params[3].id, IOSIG_P_SIZE_PER_IO);
	assert_int_equal(p->params[3].offset, 52);
	assert_int_equal(p->params[3].length, 19);
	e = p->params[3].expr;
	assert_int_equal(e->kind, IOSIG_EXPR_MUL);
	assert_int_equal(e->dim, IOSIG_DIM_SIZE);
	assert_true(e->constant);
	assert_int_equal(e->offset, 64);
	assert_int_equal(e->length, 6);
	assert_int_equal(e->lhs->kind, IOSIG_EXPR_INT);
	assert_int_equal(e->lhs->u.i, 64);
	assert_int_equal(e->rhs->kind, IOSIG_EXPR_UNIT);
	assert_string_equal(e->rhs->text, "MiB");
	assert_true(e->rhs->u.f == 1048576.0);
	assert_int_equal(p->params[4].id, IOSIG_P_MIN_MTTDL);
	assert_int_equal(p->params[4].expr->dim, IOSIG_DIM_TIME);
	iosig_pragma_free(p);

	p = parse_ok(use);
	assert_int_equal(p->kind, IOSIG_PRAGMA_SIG);
	assert_int_equal(p->nparams, 2);
	e = p->params[1].expr;
	/* (nranks * 4) * GiB: left associative like C */
	assert_int_equal(e->kind, IOSIG_EXPR_MUL);
	assert_false(e->constant);
	assert_int_equal(e->dim, IOSIG_DIM_SIZE);
	assert_int_equal(e->lhs->kind, IOSIG_EXPR_MUL);
	assert_int_equal(e->lhs->lhs->kind, IOSIG_EXPR_IDENT);
	assert_string_equal(e->lhs->lhs->text, "nranks");
	assert_int_equal(e->lhs->lhs->dim, IOSIG_DIM_NONE);
	assert_false(e->lhs->lhs->constant);
	assert_int_equal(e->lhs->lhs->offset, 33);
	assert_int_equal(e->lhs->lhs->length, 6);
	assert_int_equal(e->rhs->kind, IOSIG_EXPR_UNIT);
	assert_string_equal(e->rhs->text, "GiB");
	assert_int_equal(e->offset, 33);
	assert_int_equal(e->length, 14);
	iosig_pragma_free(p);
}

static void test_aliases(void **state)
{
	static const struct {
		const char *text;
		enum iosig_param id;
	} cases[] = {
		{ "sig global", IOSIG_P_GLOBAL },
		{ "sig local", IOSIG_P_LOCAL },
		{ "sig persist", IOSIG_P_PERSIST },
		{ "sig tmp", IOSIG_P_TMP },
		{ "sig temp", IOSIG_P_TMP },
		{ "sig min_mttdl(1)", IOSIG_P_MIN_MTTDL },
		{ "sig MTTDL(1)", IOSIG_P_MIN_MTTDL },
		{ "sig availability(0.5)", IOSIG_P_AVAILABILITY },
		{ "sig archive", IOSIG_P_ARCHIVE },
		{ "sig tamper", IOSIG_P_TAMPER },
		{ "sig tamperproof", IOSIG_P_TAMPER },
		{ "sig sequential_access", IOSIG_P_SEQUENTIAL },
		{ "sig sequential", IOSIG_P_SEQUENTIAL },
		{ "sig random_access", IOSIG_P_RANDOM },
		{ "sig random", IOSIG_P_RANDOM },
		{ "sig size_per_io(1)", IOSIG_P_SIZE_PER_IO },
		{ "sig size_per_IO(1)", IOSIG_P_SIZE_PER_IO },
		{ "sig totalsize(1)", IOSIG_P_TOTALSIZE },
		{ "sig name(\"n\")", IOSIG_P_NAME },
		{ "jobwide lifetime(1)", IOSIG_P_LIFETIME },
		{ "jobwide name(\"job\")", IOSIG_P_NAME },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_pragma *p = parse_ok(cases[i].text);

		assert_int_equal(p->nparams, 1);
		assert_int_equal(p->params[0].id, cases[i].id);
		iosig_pragma_free(p);
	}
	/* primary names */
	assert_string_equal(iosig_param_name(IOSIG_P_GLOBAL), "global");
	assert_string_equal(iosig_param_name(IOSIG_P_TMP), "tmp");
	assert_string_equal(iosig_param_name(IOSIG_P_SEQUENTIAL), "sequential_access");
	assert_string_equal(iosig_param_name(IOSIG_P_RANDOM), "random_access");
	assert_string_equal(iosig_param_name(IOSIG_P_TAMPER), "tamper");
	assert_string_equal(iosig_param_name(IOSIG_P_SIZE_PER_IO), "size_per_io");
	assert_string_equal(iosig_param_name(IOSIG_P_MIN_MTTDL), "min_mttdl");
	assert_string_equal(iosig_param_name(IOSIG_P_LIFETIME), "lifetime");
	assert_string_equal(iosig_param_name(IOSIG_P_NAME), "name");
	assert_null(iosig_param_name(IOSIG_P_COUNT));
	assert_null(iosig_param_name((enum iosig_param)-1));
	/* kinds */
	expect_canon("jobwide lifetime(2*d) name(\"job\")", "lifetime(172800) name(\"job\")", 0);
}

static void test_units(void **state)
{
	static const struct {
		const char *name;
		double value;
		enum iosig_dim dim;
	} units[] = {
		{ "B", 1, IOSIG_DIM_SIZE },
		{ "KiB", 1024.0, IOSIG_DIM_SIZE },
		{ "MiB", 1048576.0, IOSIG_DIM_SIZE },
		{ "GiB", 1073741824.0, IOSIG_DIM_SIZE },
		{ "TiB", 1099511627776.0, IOSIG_DIM_SIZE },
		{ "PiB", 1125899906842624.0, IOSIG_DIM_SIZE },
		{ "K", 1024.0, IOSIG_DIM_SIZE },
		{ "KB", 1024.0, IOSIG_DIM_SIZE },
		{ "M", 1048576.0, IOSIG_DIM_SIZE },
		{ "MB", 1048576.0, IOSIG_DIM_SIZE },
		{ "G", 1073741824.0, IOSIG_DIM_SIZE },
		{ "GB", 1073741824.0, IOSIG_DIM_SIZE },
		{ "T", 1099511627776.0, IOSIG_DIM_SIZE },
		{ "TB", 1099511627776.0, IOSIG_DIM_SIZE },
		{ "ms", 0.001, IOSIG_DIM_TIME },
		{ "s", 1, IOSIG_DIM_TIME },
		{ "min", 60, IOSIG_DIM_TIME },
		{ "h", 3600, IOSIG_DIM_TIME },
		{ "d", 86400, IOSIG_DIM_TIME },
		{ "w", 604800, IOSIG_DIM_TIME },
		{ "mo", 2592000, IOSIG_DIM_TIME },
		{ "y", 31536000, IOSIG_DIM_TIME },
		{ "ppm", 1e-6, IOSIG_DIM_FRACTION },
	};
	static const char *const not_units[] = { "k", "kB", "Kib", "b", "m", "sec", "EiB", "",
						 "ppb", "us", "ns" };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = -1;
		enum iosig_dim dim = IOSIG_DIM_NONE;
		char text[64];
		struct iosig_pragma *p;

		assert_true(iosig_unit_lookup(units[i].name, &v, &dim));
		assert_true(v == units[i].value);
		assert_int_equal(dim, units[i].dim);
		/* and inside a value of the right parameter */
		snprintf(text, sizeof(text), "sig %s(2*%s)",
			 dim == IOSIG_DIM_SIZE ? "size_per_io" :
			 dim == IOSIG_DIM_TIME ? "min_mttdl" : "availability", units[i].name);
		p = parse_ok(text);
		assert_int_equal(p->params[0].expr->rhs->kind, IOSIG_EXPR_UNIT);
		assert_string_equal(p->params[0].expr->rhs->text, units[i].name);
		assert_int_equal(p->params[0].expr->dim, units[i].dim);
		iosig_pragma_free(p);
	}
	for (size_t i = 0; i < sizeof(not_units) / sizeof(not_units[0]); i++) {
		double v = 42;

		assert_false(iosig_unit_lookup(not_units[i], &v, NULL));
		assert_true(v == 42);
	}
	assert_false(iosig_unit_lookup(NULL, NULL, NULL));
	/* "us" and "ns" are units of values written outside pragmas
	 * (iosig_parse_value), but inside a pragma they name variables ... */
	{
		struct iosig_pragma *p = parse_ok("sig size_per_io(us * KiB) min_mttdl(ns)");

		assert_int_equal(p->params[0].expr->lhs->kind, IOSIG_EXPR_IDENT);
		assert_string_equal(p->params[0].expr->lhs->text, "us");
		assert_int_equal(p->params[1].expr->kind, IOSIG_EXPR_IDENT);
		iosig_pragma_free(p);
	}
	/* ... while a string form inside a pragma is a value */
	expect_canon("sig min_mttdl(\"250 us\")", "min_mttdl(0.00025)", 0);
	/* canonical values of a few units */
	expect_canon("sig size_per_io(3*PiB)", "size_per_io(3377699720527872)", 0);
	expect_canon("sig size_per_io(2*K + 1*KB)", "size_per_io(3072)", 0);
	expect_canon("sig min_mttdl(2*mo)", "min_mttdl(5184000)", 0);
	expect_canon("sig min_mttdl(1*w + 1*h + 1*min + 1*s)", "min_mttdl(608461)", 0);
	expect_canon("sig min_mttdl(250*ms)", "min_mttdl(0.25)", 0);
	expect_canon("sig availability(100*ppm)", "availability(0.0001)", 0);
	expect_canon("sig availability(ppm)", "availability(1e-06)", 0);
	expect_canon("sig size_per_io(B)", "size_per_io(1)", 0);
}

static void test_expression_forms(void **state)
{
	struct iosig_pragma *p;
	const struct iosig_expr *e;

	p = parse_ok("sig size_per_io(cfg->chunk[i + 1] * f(x, \"2 KiB\", g()) + s2.b)");
	e = p->params[0].expr;
	assert_int_equal(e->kind, IOSIG_EXPR_ADD);
	assert_false(e->constant);
	/* cfg->chunk[i + 1] * f(...) */
	assert_int_equal(e->lhs->kind, IOSIG_EXPR_MUL);
	{
		const struct iosig_expr *idx = e->lhs->lhs, *call = e->lhs->rhs;

		assert_int_equal(idx->kind, IOSIG_EXPR_INDEX);
		assert_int_equal(idx->lhs->kind, IOSIG_EXPR_MEMBER);
		assert_true(idx->lhs->arrow);
		assert_string_equal(idx->lhs->text, "chunk");
		assert_string_equal(idx->lhs->lhs->text, "cfg");
		assert_int_equal(idx->rhs->kind, IOSIG_EXPR_ADD);
		assert_int_equal(idx->offset, 16);
		assert_int_equal(idx->length, 17);
		assert_int_equal(call->kind, IOSIG_EXPR_CALL);
		assert_string_equal(call->lhs->text, "f");
		assert_int_equal(call->nargs, 3);
		assert_string_equal(call->args[0]->text, "x");
		assert_int_equal(call->args[1]->kind, IOSIG_EXPR_STRING);
		assert_string_equal(call->args[1]->text, "2 KiB");
		assert_true(call->args[1]->u.f == 2048.0);
		assert_int_equal(call->args[1]->dim, IOSIG_DIM_SIZE);
		assert_int_equal(call->args[2]->kind, IOSIG_EXPR_CALL);
		assert_int_equal(call->args[2]->nargs, 0);
	}
	assert_int_equal(e->rhs->kind, IOSIG_EXPR_MEMBER);
	assert_false(e->rhs->arrow);
	assert_string_equal(e->rhs->text, "b");
	iosig_pragma_free(p);

	/* member names may be spelt like units: only values are reserved */
	p = parse_ok("sig min_mttdl(cfg.d * d)");
	e = p->params[0].expr;
	assert_int_equal(e->lhs->kind, IOSIG_EXPR_MEMBER);
	assert_string_equal(e->lhs->text, "d");
	assert_int_equal(e->rhs->kind, IOSIG_EXPR_UNIT);
	iosig_pragma_free(p);

	/* unary minus and plus, parentheses */
	p = parse_ok("sig size_per_io(-(-n) + +4)");
	e = p->params[0].expr;
	assert_int_equal(e->kind, IOSIG_EXPR_ADD);
	assert_int_equal(e->lhs->kind, IOSIG_EXPR_NEG);
	assert_int_equal(e->lhs->lhs->kind, IOSIG_EXPR_NEG);
	assert_int_equal(e->rhs->kind, IOSIG_EXPR_INT);
	assert_int_equal(e->offset, 16);
	assert_int_equal(e->length, 10);
	iosig_pragma_free(p);

	/* literals */
	expect_canon("sig size_per_io(0x10 * 010 + 0b11 + 7u + 5ul + 2LL + 1ULL)", "size_per_io(146)", 0);
	expect_canon("sig size_per_io(1.5e3 + .5 + 2.f + 1e1L)", "size_per_io(1513)", 0);
	expect_canon("sig size_per_io(7 / 2 * KiB)", "size_per_io(3072)", 0); /* C division */
	expect_canon("sig size_per_io(7.0 / 2 * KiB)", "size_per_io(3584)", 0);
	expect_canon("sig size_per_io(10 % 4)", "size_per_io(2)", 0);
	expect_canon("sig size_per_io(10*KiB % (3*KiB))", "size_per_io(1024)", 0);
	expect_canon("sig size_per_io(2*GiB/(4*KiB) * B)", "size_per_io(524288)", 0);
	expect_canon("sig size_per_io(\"1.5GiB\")", "size_per_io(1610612736)", 0);
	expect_canon("sig size_per_io(\"64\" * KiB)", "size_per_io(65536)", 0);
	expect_canon("sig size_per_io(1.4)", "size_per_io(1)", 0);  /* nearest byte */
	expect_canon("sig size_per_io(1.5)", "size_per_io(2)", 0);
	expect_canon("sig min_mttdl(\"20y\") availability(\"0.5\")",
		     "min_mttdl(630720000) availability(0.5)", 0);
	expect_canon("sig size_per_io(9223372036854775808)", "size_per_io(9223372036854775808)", 0);
	/* comments, line splices, commas and newlines separate parameters */
	expect_canon("sig /* c */ persist, // x\n random\\\n ,size_per_io(\n4\n*\nKiB\n)",
		     "persist random_access size_per_io(4096)", 0);
}

static void test_slots_and_order(void **state)
{
	struct iosig_pragma *p = parse_ok("sig totalsize(n * GiB) name(\"x\") size_per_io(chunk) "
					  "availability(p) tmp min_mttdl(3*y) random");
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	unsigned n = 0;
	char buf[256];

	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), slots, IOSIG_P_COUNT, &n), 0);
	/* enum order; slots numbered in text order */
	assert_string_equal(buf, "tmp random_access size_per_io($0) totalsize($1) "
				 "min_mttdl(94608000) availability($2) name(\"x\")");
	assert_int_equal(n, 3);
	assert_string_equal(slots[0]->text, "chunk");
	assert_int_equal(slots[1]->kind, IOSIG_EXPR_MUL);
	assert_string_equal(slots[2]->text, "p");
	iosig_pragma_free(p);
}

static void test_errors(void **state)
{
	static const struct bad cases[] = {
		/* pragma kind */
		{ "", 1, 1, 0, 0, "expected 'sig', 'sigdef' or 'jobwide' after '#pragma io'" },
		{ "sg persist", 1, 1, 0, 2, "unknown '#pragma io sg'; did you mean 'sig'?" },
		{ "signature persist", 1, 1, 0, 9, "expected 'sig', 'sigdef' or 'jobwide'" },
		{ "(", 1, 1, 0, 1, "expected 'sig', 'sigdef' or 'jobwide' after '#pragma io', found '('" },
		/* unknown parameters with and without a suggestion */
		{ "sig size_per_oi(3)", 1, 5, 4, 11, "unknown parameter 'size_per_oi'; did you mean 'size_per_io'?" },
		{ "sig sequentail", 1, 5, 4, 10, "did you mean 'sequential'?" },
		{ "sig Persist", 1, 5, 4, 7, "did you mean 'persist'?" },
		{ "sig mttdl(1)", 1, 5, 4, 5, "did you mean 'MTTDL'?" },
		{ "sig totalsze(1)", 1, 5, 4, 8, "did you mean 'totalsize'?" },
		{ "sig bananas", 1, 5, 4, 7, "unknown parameter 'bananas'; parameters are global" },
		/* flags and values */
		{ "sig persist(3)", 1, 12, 11, 1, "'persist' is a flag and takes no value" },
		{ "sig size_per_io", 1, 5, 4, 11, "'size_per_io' needs a value in parentheses, e.g. size_per_io(64*KiB)" },
		{ "sig size_per_io()", 1, 17, 16, 1, "empty value in 'size_per_io()'" },
		{ "sig size_per_io(1, 2)", 1, 18, 17, 1, "takes exactly one value; the comma operator is not allowed" },
		{ "sig size_per_io(1", 1, 18, 17, 0, "expected ')' before end of text" },
		{ "sig size_per_io(1) )", 1, 20, 19, 1, "expected a parameter name, found ')'" },
		{ "sig name(foo)", 1, 10, 9, 3, "name needs a string literal: name(\"checkpoint\")" },
		{ "sig name(\"\")", 1, 10, 9, 2, "name must not be empty" },
		{ "sig name(\"a\\nb\")", 1, 10, 9, 6, "name must not contain control characters" },
		{ "sig name(\"a\\0b\")", 1, 10, 9, 6, "NUL" },
		{ "sig name(\"0123456789012345678901234567890123456789012345678901234567890123\")",
		  1, 10, 9, 66, "name is too long (64 bytes, at most 63)" },
		{ "sig name(\"abc)", 1, 10, 9, 5, "missing terminating '\"' character" },
		/* operators that values do not have */
		{ "sig size_per_io(a = 3)", 1, 19, 18, 1, "'=' is not allowed in a signature value (a signature value cannot assign)" },
		{ "sig size_per_io(a += 3)", 1, 19, 18, 2, "'+=' is not allowed" },
		{ "sig size_per_io(i++)", 1, 18, 17, 2, "'++' is not allowed" },
		{ "sig size_per_io(++i)", 1, 17, 16, 2, "'++' is not allowed" },
		{ "sig size_per_io(c ? 1 : 2)", 1, 19, 18, 1, "'?' is not allowed in a signature value (no conditional" },
		{ "sig size_per_io((int)x)", 1, 17, 16, 4, "casts are not allowed in signature values: remove the '(int...)' cast" },
		{ "sig size_per_io(sizeof(x))", 1, 17, 16, 6, "'sizeof' is a C keyword" },
		{ "sig size_per_io(a << 2)", 1, 19, 18, 2, "'<<' is not allowed" },
		{ "sig size_per_io(&x)", 1, 17, 16, 1, "'&' is not allowed" },
		{ "sig size_per_io(!x)", 1, 17, 16, 1, "'!' is not allowed" },
		{ "sig size_per_io('a')", 1, 17, 16, 1, "character constants are not allowed" },
		{ "sig size_per_io(a b)", 1, 19, 18, 1, "expected ')' before 'b' (missing operator or ')'?)" },
		{ "sig size_per_io(3 @ 4)", 1, 19, 18, 1, "stray '@' in signature" },
		{ "sig size_per_io(3 \x80)", 1, 19, 18, 1, "stray byte 0x80" },
		{ "sig size_per_io($0)", 1, 17, 16, 2, "'$0' is a slot of canonical signature text and cannot appear in a pragma" },
		{ "sig size_per_io(3.x)", 1, 17, 16, 3, "invalid suffix 'x' on floating constant '3.x'" },
		{ "sig size_per_io(1.2.3)", 1, 17, 16, 4, "malformed number '1.2.'" },
		{ "sig size_per_io(09)", 1, 18, 17, 1, "invalid digit '9' in octal constant '09'" },
		{ "sig size_per_io(0x)", 1, 17, 16, 2, "hexadecimal constant '0x' has no digits" },
		{ "sig size_per_io(0x1p3)", 1, 17, 16, 4, "hexadecimal floating constants are not supported" },
		{ "sig size_per_io(1e)", 1, 17, 16, 2, "exponent of '1e' has no digits" },
		{ "sig size_per_io(1e+)", 1, 17, 16, 3, "exponent of '1e+' has no digits" },
		{ "sig size_per_io(18446744073709551616)", 1, 17, 16, 20, "integer constant '18446744073709551616' is too large" },
		{ "sig size_per_io(1e999)", 1, 17, 16, 5, "floating constant '1e999' is out of range" },
		{ "sig size_per_io(x.3)", 1, 18, 17, 2, "expected ')' before '.3'" }, /* .3 is a number, as in C */
		{ "sig size_per_io(x. 3)", 1, 20, 19, 1, "expected a member name before '3'" },
		{ "sig size_per_io(f(1,))", 1, 21, 20, 1, "expected an argument before ')'" },
		{ "sig size_per_io(3(4))", 1, 18, 17, 1, "only a variable, member, element or call result can be called" },
		{ "sig size_per_io(\"\")", 1, 17, 16, 2, "empty value string" },
		{ "sig size_per_io(\"x\\q\")", 1, 19, 18, 2, "unknown escape sequence '\\q'" },
		{ "sig size_per_io(\"\\u00e9\")", 1, 18, 17, 2, "universal character names" },
		{ "sig size_per_io(\"4 KiB\\n x\")", 1, 17, 16, 11, "expected the end of the value string before 'x'" },
		{ "sig size_per_io(/* x)", 1, 17, 16, 2, "unterminated comment" },
		/* units glued to numbers are not C */
		{ "sig size_per_io(64MiB)", 1, 17, 16, 5, "a unit cannot be glued to a number in C: write 64*MiB instead of '64MiB'" },
		{ "sig size_per_io(64 MiB)", 1, 20, 19, 3, "expected an operator before unit 'MiB': write 64*MiB" },
		{ "sig size_per_io(64G)", 1, 17, 16, 3, "write 64*G instead" },
		{ "sig size_per_io(3Q)", 1, 17, 16, 2, "invalid suffix 'Q' on integer constant '3Q'" },
		/* strings are constants: unknown units inside are errors */
		{ "sig size_per_io(\"64 Mib\")", 1, 21, 20, 3, "unknown unit 'Mib'; did you mean 'MiB'?" },
		{ "sig size_per_io(\"64 k\")", 1, 21, 20, 1, "unknown unit 'k'; did you mean 'K'?" },
		{ "sig size_per_io(\"chunk\")", 1, 18, 17, 5, "'chunk' is not a constant: values must be constants here" },
		/* jobwide and lifetime */
		{ "jobwide persist", 1, 9, 8, 7, "'persist' is not allowed in '#pragma io jobwide', which accepts only lifetime(...) and name(...)" },
		{ "sig lifetime(3*d)", 1, 5, 4, 8, "'lifetime' is only allowed in '#pragma io jobwide'" },
		{ "sigdef persist", 1, 1, 0, 6, "'#pragma io sigdef' needs a name" },
		/* commas */
		{ "sig , persist", 1, 5, 4, 1, "expected a parameter before ','" },
		{ "sig persist,, tmp", 1, 13, 12, 1, "expected a parameter before ','" },
		{ "sig persist,", 1, 12, 11, 1, "expected a parameter after ','" },
		{ "sig persist (3)", 1, 13, 12, 1, "'persist' is a flag and takes no value" },
		{ "sig persist 3", 1, 13, 12, 1, "expected a parameter name, found '3'" },
		/* $ is not part of identifiers */
		{ "sig size_per_io($)", 1, 17, 16, 1, "stray '$'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
}

static void test_string_escapes(void **state)
{
	/* With escapes the positions inside the string cannot be mapped 1:1,
	 * so errors inside it point at the whole literal. */
	static const struct bad cases[] = {
		{ "sig size_per_io(\"3\\x20Mib\")", 1, 17, 16, 10, "unknown unit 'Mib'; did you mean 'MiB'?" },
		{ "sig size_per_io(\"64 Mib\")", 1, 21, 20, 3, "unknown unit 'Mib'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
	expect_canon("sig size_per_io(\"3\\x20KiB\") name(\"a\\\"b\\\\c\\101\\x42\")",
		     "size_per_io(3072) name(\"a\\\"b\\\\cAB\")", 0);
	expect_canon("sig name(\"caf\xc3\xa9\")", "name(\"caf\xc3\xa9\")", 0);
}

static void test_dimensions(void **state)
{
	static const struct bad cases[] = {
		{ "sig size_per_io(d*KiB)", 1, 17, 16, 1,
		  "cannot multiply a time by a size; 'd' is the unit 'days' here (unit names are reserved words in signature values and cannot name a variable)" },
		{ "sig size_per_io(3*h)", 1, 19, 18, 1,
		  "'size_per_io' expects a size (e.g. size_per_io(64*KiB)) or a plain number (bytes), but '3*h' is a time; 'h' is the unit 'hours' here" },
		{ "sig size_per_io(KiB*MiB)", 1, 17, 16, 7, "cannot multiply a size by a size" },
		{ "sig size_per_io(KiB + s)", 1, 23, 22, 1, "cannot add a size and a time; 's' is the unit 'seconds' here" },
		{ "sig min_mttdl(y - KiB)", 1, 19, 18, 3, "cannot subtract a size from a time; 'KiB' is the unit 'kibibytes (1024 bytes)' here" },
		{ "sig size_per_io(4 / KiB)", 1, 17, 16, 7, "cannot divide a plain number by a size" },
		{ "sig size_per_io(KiB / s)", 1, 23, 22, 1, "cannot divide a size by a time" },
		{ "sig size_per_io(KiB % s)", 1, 23, 22, 1, "cannot take the remainder of a size divided by a time" },
		{ "sig availability(5*ms)", 1, 20, 19, 2, "'availability' expects a fraction" },
		{ "sig totalsize(ppm)", 1, 15, 14, 3, "'totalsize' expects a size" },
		{ "sig min_mttdl(8*GiB)", 1, 17, 16, 3, "'min_mttdl' expects a time (e.g. min_mttdl(20*y)) or a plain number (seconds), but '8*GiB' is a size; 'GiB' is the unit" },
		{ "jobwide lifetime(ppm*2)", 1, 18, 17, 3, "'lifetime' expects a time" },
		{ "sig size_per_io(\"2 d\")", 1, 17, 16, 5, "'size_per_io' expects a size (e.g. size_per_io(64*KiB)) or a plain number (bytes), but '\"2 d\"' is a time" },
		{ "sig size_per_io(d[0])", 1, 17, 16, 1, "'d' is the unit 'days' and cannot be indexed; unit names are reserved words" },
		{ "sig size_per_io(s(1))", 1, 17, 16, 1, "'s' is the unit 'seconds' and cannot be called" },
		{ "sig size_per_io(h.x)", 1, 17, 16, 1, "'h' is the unit 'hours' and cannot be accessed" },
		{ "sig size_per_io(1.5 % 2)", 1, 17, 16, 7, "'%' needs integer operands in '1.5 % 2'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
	/* NONE combines with anything; SIZE/SIZE is a plain number */
	expect_canon("sig size_per_io(4096 + 1*KiB) totalsize(GiB/MiB*KiB)",
		     "size_per_io(5120) totalsize(1048576)", 0);
	expect_canon("sig min_mttdl(y/d*h)", "min_mttdl(1314000)", 0);
	/* dimensions are checked for run-time values too */
	expect_bad(&(struct bad){ "sig size_per_io(n*y)", 1, 19, 18, 1, "'y' is the unit 'years (365 days)' here" });
}

static void test_constant_folding(void **state)
{
	static const struct bad cases[] = {
		{ "sig size_per_io(1024*1024*1024*1024*1024*1024*1024*TiB)", 1, 17, 16, 34,
		  "integer overflow in constant expression '1024*1024*1024*1024*1024*1024*1024'" },
		{ "sig size_per_io(8388608*TiB)", 1, 17, 16, 11, "integer overflow in constant expression '8388608*TiB'" },
		{ "sig size_per_io(9223372036854775807 + 1)", 1, 17, 16, 23, "integer overflow" },
		{ "sig size_per_io(-(-9223372036854775807 - 1))", 1, 17, 16, 27, "integer overflow" },
		{ "sig size_per_io(1e300 * 1e300)", 1, 17, 16, 13, "overflow in constant expression" },
		{ "sig size_per_io(1/0)", 1, 17, 16, 3, "division by zero in '1/0'" },
		{ "sig size_per_io(1 % 0)", 1, 17, 16, 5, "division by zero" },
		{ "sig size_per_io(1.0/(2-2))", 1, 17, 16, 9, "division by zero" },
		/* range of constant values */
		{ "sig totalsize(-1)", 1, 15, 14, 2, "totalsize must be between 0 and 2^63 bytes (8 EiB), not -1" },
		{ "sig size_per_io(8*1024*PiB)", 1, 17, 16, 10, "integer overflow in constant expression '8*1024*PiB'" },
		{ "sig size_per_io(16.0*1024*PiB)", 1, 17, 16, 13, "size_per_io must be between 0 and 2^63 bytes" },
		{ "sig size_per_io(1.5e19)", 1, 17, 16, 6, "must be between 0 and 2^63 bytes" },
		{ "sig min_mttdl(-1*s)", 1, 15, 14, 4, "min_mttdl must be a finite, non-negative time" },
		{ "sig availability(2)", 1, 18, 17, 1, "availability is a probability of loss and must be between 0 and 1" },
		{ "sig availability(-0.1)", 1, 18, 17, 4, "between 0 and 1" },
	};
	struct iosig_pragma *p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
	/* a division by a variable is not folded, so it is not an error */
	p = parse_ok("sig size_per_io(x/0)");
	assert_false(p->params[0].expr->constant);
	iosig_pragma_free(p);
	/* the largest accepted constants */
	expect_canon("sig size_per_io(9223372036854775807)", "size_per_io(9223372036854775807)", 0);
	expect_canon("sig size_per_io(8191*PiB + (PiB - 1))", "size_per_io(9223372036854775807)", 0);
	expect_canon("sig size_per_io(8.0*1024*PiB)", "size_per_io(9223372036854775808)", 0);
	expect_canon("sig min_mttdl(1e300) availability(1)", "min_mttdl(1e+300) availability(1)", 0);
	expect_canon("sig availability(0)", "availability(0)", 0);
	expect_canon("sig min_mttdl(-0.0)", "min_mttdl(0)", 0);
}

static void test_contradictions(void **state)
{
	static const struct bad cases[] = {
		{ "sig random sequential", 1, 12, 11, 10,
		  "'sequential' contradicts 'random' given at line 1, column 5: a file has one dominant access pattern; keep one of them" },
		{ "sig sequential_access\n  persist\n  random_access", 3, 3, 34, 13,
		  "'random_access' contradicts 'sequential_access' given at line 1, column 5" },
		{ "sig persist tmp", 1, 13, 12, 3, "'tmp' contradicts 'persist' given at line 1, column 5: data cannot be both persistent and temporary" },
		{ "sig temp, persist", 1, 11, 10, 7, "'persist' contradicts 'temp' given at line 1, column 5" },
		{ "sig global local", 1, 12, 11, 5, "'local' contradicts 'global' given at line 1, column 5: data cannot be both visible on all nodes and node-local" },
		{ "sigdef name(\"a\") local\n global", 2, 2, 24, 6, "'global' contradicts 'local' given at line 1, column 18" },
		/* the same parameter twice, also through an alias */
		{ "sig random, random_access", 1, 13, 12, 13, "'random_access' repeats 'random' given at line 1, column 5; give each parameter once" },
		{ "sig size_per_io(1) size_per_IO(2)", 1, 20, 19, 14, "'size_per_IO' repeats 'size_per_io' given at line 1, column 5" },
		{ "sig name(\"a\") name(\"a\")", 1, 15, 14, 9, "'name' repeats 'name'" },
		{ "sig MTTDL(1) min_mttdl(2)", 1, 14, 13, 12, "'min_mttdl' repeats 'MTTDL'" },
		{ "jobwide lifetime(1) lifetime(2)", 1, 21, 20, 11, "'lifetime' repeats 'lifetime'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
}

static void test_multiline_positions(void **state)
{
	static const struct bad cases[] = {
		{ "sig persist\n    size_per_io(\n        4 * KiB +\n        chunk = 3)", 4, 15, 61, 1, "'=' is not allowed" },
		{ "sig\r\n\tsize_per_oi(1)", 2, 2, 6, 11, "did you mean 'size_per_io'?" },
		{ "sig size_per_io(\n  (1+2)*\n  GiB))", 3, 7, 32, 1, "expected a parameter name, found ')'" },
		{ "sig size_per_io((1 +\n 2)\n\n", 4, 1, 26, 0, "expected ')' before end of text" },
		{ "sig size_per_io((1 +\n 2 3))", 2, 4, 24, 1, "expected ')' to close the '(' at line 1, column 17 before '3'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(&cases[i]);
}

/* An error that names an earlier place of the text: where it is, and the
 * message that names it. */
struct related {
	const char *text;
	int line, col;
	size_t off;
	const char *msg;
};

/* The error names the earlier place of c, and its related_msg_* fields
 * select exactly "line L, column C" in the message, so that a caller can
 * put its own location text there. */
static void expect_related(const struct related *c)
{
	struct iosig_pragma *p = NULL;
	struct iosig_error err;
	char phrase[64], spliced[400];

	memset(&err, 0x5a, sizeof(err)); /* every field must be written */
	assert_int_equal(iosig_pragma_parse(c->text, strlen(c->text), &p, &err), -EINVAL);
	assert_null(p);
	assert_string_equal(err.msg, c->msg);
	assert_int_equal(err.related_line, c->line);
	assert_int_equal(err.related_column, c->col);
	assert_int_equal(err.related_offset, c->off);
	snprintf(phrase, sizeof(phrase), "line %d, column %d", c->line, c->col);
	assert_int_equal(err.related_msg_length, strlen(phrase));
	assert_true(err.related_msg_offset + err.related_msg_length <= strlen(err.msg));
	assert_memory_equal(err.msg + err.related_msg_offset, phrase, strlen(phrase));
	/* what a plugin does: replace the phrase, keep the words around it */
	snprintf(spliced, sizeof(spliced), "%.*s<here>%s", (int)err.related_msg_offset, err.msg,
		 err.msg + err.related_msg_offset + err.related_msg_length);
	assert_null(strstr(spliced, phrase));
	assert_non_null(strstr(spliced, "<here>"));
}

static void test_related_positions(void **state)
{
	static const struct related cases[] = {
		/* a contradiction and a repetition whose first parameter is not
		 * at column 1 (nor at column 5, where "sig " puts the first one) */
		{ "sig  size_per_io(1)   persist tmp", 1, 23, 22,
		  "'tmp' contradicts 'persist' given at line 1, column 23: data cannot be both "
		  "persistent and temporary; keep one of them" },
		{ "sig global size_per_io(1) size_per_IO(2)", 1, 12, 11,
		  "'size_per_IO' repeats 'size_per_io' given at line 1, column 12; give each "
		  "parameter once" },
		/* on another line than the error */
		{ "sigdef name(\"a\")\n   random\n sequential", 2, 4, 20,
		  "'sequential' contradicts 'random' given at line 2, column 4: a file has one "
		  "dominant access pattern; keep one of them" },
		{ "jobwide\n\tname(\"j\") lifetime(1)  lifetime(2)", 2, 12, 19,
		  "'lifetime' repeats 'lifetime' given at line 2, column 12; give each parameter once" },
		/* an unclosed '(' is an earlier place too */
		{ "sig size_per_io(1 + (2 3))", 1, 21, 20,
		  "expected ')' to close the '(' at line 1, column 21 before '3' (missing operator "
		  "or ')'?)" },
		{ "sig size_per_io((1 +\n 2", 1, 17, 16,
		  "expected ')' to close the '(' at line 1, column 17 before end of text" },
	};
	struct iosig_pragma *p = NULL;
	struct iosig_error err;
	struct iosig_sig sig;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_related(&cases[i]);

	/* the same through iosig_sig_parse(): positions in its own text */
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(iosig_sig_parse("size_per_io(4) persist tmp", NULL, NULL, 0, &sig, &err),
			 -EINVAL);
	assert_int_equal(err.related_line, 1);
	assert_int_equal(err.related_column, 16);
	assert_int_equal(err.related_offset, 15);
	assert_memory_equal(err.msg + err.related_msg_offset, "line 1, column 16",
			    err.related_msg_length);

	/* an error that names no earlier place leaves all related fields 0,
	 * also in a struct that held one before */
	assert_int_equal(iosig_pragma_parse("sig persist tmp", 15, &p, &err), -EINVAL);
	assert_int_equal(err.related_line, 1);
	assert_int_equal(iosig_pragma_parse("sig persist size_per_oi(1)", 26, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "did you mean 'size_per_io'?"));
	assert_int_equal(err.related_line, 0);
	assert_int_equal(err.related_column, 0);
	assert_int_equal(err.related_offset, 0);
	assert_int_equal(err.related_msg_offset, 0);
	assert_int_equal(err.related_msg_length, 0);
}

static void test_not_nul_terminated(void **state)
{
	/* The pragma is a prefix of a longer buffer without a NUL after it. */
	static const char buf[] = "sig persist size_per_io(64*KiB)XXXXXXXX";
	char *copy = malloc(30);
	struct iosig_pragma *p;
	struct iosig_error err;

	assert_int_equal(iosig_pragma_parse(buf, 11, &p, &err), 0);
	assert_int_equal(p->nparams, 1);
	assert_int_equal(p->params[0].id, IOSIG_P_PERSIST);
	iosig_pragma_free(p);
	/* cut inside a value: the error is at the end of the prefix */
	assert_int_equal(iosig_pragma_parse(buf, 26, &p, &err), -EINVAL);
	assert_int_equal(err.offset, 26);
	assert_int_equal(err.length, 0);
	assert_non_null(strstr(err.msg, "expected ')' before end of text"));
	/* cut inside a number and a string: ASan checks we stay inside */
	assert_int_equal(iosig_pragma_parse(buf, 25, &p, &err), -EINVAL);
	memcpy(copy, "sig name(\"abc\") size_per_io(12", 30);
	assert_int_equal(iosig_pragma_parse(copy, 30, &p, &err), -EINVAL);
	assert_int_equal(err.offset, 30);
	assert_int_equal(iosig_pragma_parse(copy, 12, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "missing terminating"));
	assert_int_equal(iosig_pragma_parse(copy, 29, &p, &err), -EINVAL);
	assert_int_equal(err.offset, 29);
	free(copy);
	/* exactly the needed bytes */
	copy = malloc(31);
	memcpy(copy, "sig persist size_per_io(64*KiB)", 31);
	assert_int_equal(iosig_pragma_parse(copy, 31, &p, &err), 0);
	iosig_pragma_free(p);
	free(copy);
	/* no text at all */
	assert_int_equal(iosig_pragma_parse(NULL, 0, &p, &err), -EINVAL);
	assert_int_equal(iosig_pragma_parse("sig", 3, NULL, NULL), -EINVAL);
	/* a NULL error struct is fine */
	assert_int_equal(iosig_pragma_parse("sig x", 5, &p, NULL), -EINVAL);
	iosig_pragma_free(NULL);
}

static void test_limits(void **state)
{
	size_t n = 3000, len = 0;
	char *s = malloc(8 * n + 64);
	struct iosig_pragma *p;
	struct iosig_error err;

	/* deep parentheses */
	len = (size_t)sprintf(s, "sig size_per_io(");
	for (size_t i = 0; i < n; i++)
		s[len++] = '(';
	s[len++] = '1';
	for (size_t i = 0; i < n; i++)
		s[len++] = ')';
	s[len++] = ')';
	assert_int_equal(iosig_pragma_parse(s, len, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply (more than 64 levels)"));
	assert_int_equal(err.offset, 16 + 64);
	/* long unary chains */
	len = (size_t)sprintf(s, "sig size_per_io(");
	for (size_t i = 0; i < n; i++) {
		s[len++] = '-'; /* "- -" (not "--", which is decrement) */
		s[len++] = ' ';
	}
	s[len++] = '1';
	s[len++] = ')';
	assert_int_equal(iosig_pragma_parse(s, len, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	/* a long flat sum makes a deep tree */
	len = (size_t)sprintf(s, "sig size_per_io(x");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "+x");
	s[len++] = ')';
	assert_int_equal(iosig_pragma_parse(s, len, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	/* 63 levels are fine */
	len = (size_t)sprintf(s, "sig size_per_io(x");
	for (size_t i = 0; i < 63; i++)
		len += (size_t)sprintf(s + len, "+1");
	s[len++] = ')';
	assert_int_equal(iosig_pragma_parse(s, len, &p, &err), 0);
	iosig_pragma_free(p);
	/* long member chains and call arguments */
	len = (size_t)sprintf(s, "sig size_per_io(a");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, ".b");
	s[len++] = ')';
	assert_int_equal(iosig_pragma_parse(s, len, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	assert_int_equal(iosig_pragma_parse("sig size_per_io(f(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17))",
					    63, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "too many arguments in a call (at most 16)"));
	free(s);
	/* too long a text */
	s = calloc(1, 70000);
	memcpy(s, "sig persist", 11);
	memset(s + 11, ' ', 70000 - 11);
	assert_int_equal(iosig_pragma_parse(s, 70000, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "too long"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_design_example),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_expression_forms),
		cmocka_unit_test(test_slots_and_order),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_string_escapes),
		cmocka_unit_test(test_dimensions),
		cmocka_unit_test(test_constant_folding),
		cmocka_unit_test(test_contradictions),
		cmocka_unit_test(test_multiline_positions),
		cmocka_unit_test(test_related_positions),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
