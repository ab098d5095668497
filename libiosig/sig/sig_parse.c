/* SPDX-License-Identifier: MIT */
/*
 * sig_parse.c - the parser of the signature language (docs/design.md §3):
 * "#pragma io sig|sigdef|jobwide PARAM*" and the value expressions inside
 * the parameters, with unit/dimension analysis, constant folding and the
 * contradiction rules.  One recursive-descent parser serves three modes:
 *
 *  - pragma text from the compilers (C expressions over run-time variables),
 *  - signature text for iosig_sig_parse() (constants and $N slots),
 *  - single values for iosig_parse_value() and inside "64 MiB" strings
 *    (constants only, NUMBER UNIT juxtaposition allowed).
 *
 * Recursion and tree height are bounded (SIGP_MAX_DEPTH); the text is read
 * with explicit lengths only.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sig_internal.h"

enum pmode {
	P_PRAGMA, /* identifiers allowed, no $N, no juxtaposition */
	P_CONST,  /* constants and $N, juxtaposition */
	P_VALUE,  /* constants only, juxtaposition */
};

/* A parsed (sub)expression with what folding and messages need. */
struct operand {
	struct iosig_expr *e;
	struct sigp_num v;     /* folded value when e->constant */
	unsigned height;       /* height of the tree (a leaf is 1) */
	size_t start, end;     /* token span in the parser's own text */
};

struct parser {
	struct sigp_src src;
	struct sigp_lexer lx;
	struct sigp_token tok;   /* lookahead */
	size_t prev_off;         /* span of the last consumed token */
	size_t prev_len;
	enum pmode mode;
	unsigned nvalues;        /* P_CONST: number of $N values */
	struct sigp_arena *arena;
	unsigned depth;          /* current recursion nesting */
	int expect;              /* dimension the value should have, -1: any */
};

static int next(struct parser *p)
{
	p->prev_off = p->tok.off;
	p->prev_len = p->tok.len;
	return sigp_lex_next(&p->lx, &p->tok);
}

static bool tok_is(const struct parser *p, const char *spelling)
{
	return sigp_tok_is(&p->lx, &p->tok, spelling);
}

static const char *tok_text(const struct parser *p)
{
	return p->src.s + p->tok.off;
}

static bool tok_ident_is(const struct parser *p, const char *word)
{
	return p->tok.kind == SIGP_T_IDENT && p->tok.len == strlen(word) &&
	       memcmp(tok_text(p), word, p->tok.len) == 0;
}

/* "'='", "end of text", "string literal" - the lookahead for messages. */
static const char *describe(const struct parser *p, char *buf, size_t size)
{
	switch (p->tok.kind) {
	case SIGP_T_EOF:
		snprintf(buf, size, "end of text");
		break;
	case SIGP_T_STRING:
		snprintf(buf, size, "a string literal");
		break;
	default:
		snprintf(buf, size, "'%.*s'", p->tok.len > 40 ? 40 : (int)p->tok.len,
			 tok_text(p));
	}
	return buf;
}

static int fail_at(struct parser *p, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *p, size_t off, size_t len, const char *fmt, ...)
{
	size_t o, l;
	va_list ap;
	int ret;

	sigp_src_map(&p->src, off, len, &o, &l);
	va_start(ap, fmt);
	ret = sigp_vreport(p->src.diag, -EINVAL, o, l, fmt, ap);
	va_end(ap);
	return ret;
}

/* fail_at() with another error code than -EINVAL. */
static int fail_code(struct parser *p, int code, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail_code(struct parser *p, int code, size_t off, size_t len, const char *fmt, ...)
{
	size_t o, l;
	va_list ap;

	sigp_src_map(&p->src, off, len, &o, &l);
	va_start(ap, fmt);
	code = sigp_vreport(p->src.diag, code, o, l, fmt, ap);
	va_end(ap);
	return code;
}

static int oom(struct parser *p)
{
	size_t o, l;

	sigp_src_map(&p->src, p->tok.off, p->tok.len, &o, &l);
	return sigp_report(p->src.diag, -ENOMEM, o, l, "out of memory");
}

/* Operators of C that a value expression does not have. */
static bool is_foreign_operator(const struct parser *p)
{
	static const char *const ok[] = { "(", ")", "[", "]", ",", ".", "->", "+", "-", "*",
					  "/", "%" };

	if (p->tok.kind != SIGP_T_PUNCT)
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (tok_is(p, ok[i]))
			return false;
	return true;
}

static int foreign_operator(struct parser *p)
{
	const char *what = "";

	if (tok_is(p, "=") || tok_is(p, "+=") || tok_is(p, "-=") || tok_is(p, "*=") ||
	    tok_is(p, "/=") || tok_is(p, "%=") || tok_is(p, "<<=") || tok_is(p, ">>=") ||
	    tok_is(p, "&=") || tok_is(p, "|=") || tok_is(p, "^="))
		what = " (a signature value cannot assign)";
	else if (tok_is(p, "++") || tok_is(p, "--"))
		what = " (a signature value cannot modify a variable)";
	else if (tok_is(p, "?") || tok_is(p, ":"))
		what = " (no conditional expressions; compute the value before the pragma)";
	return fail_at(p, p->tok.off, p->tok.len,
		       "'%.*s' is not allowed in a signature value%s; values use numbers, "
		       "units, variables, + - * / %%, parentheses, a.b, a->b, a[i] and f(x)",
		       (int)p->tok.len, tok_text(p), what);
}

/* The lookahead is not what the grammar needs here: say why precisely. */
/*
 * "expected <expected> before <token>".  With rel, expected names an earlier
 * place of the text: the message says "expected <expected> at line L,
 * column C before ..." with the error's related_* fields set for rel_off (a
 * position in the pragma text).
 */
static int unexpected_rel(struct parser *p, const char *expected, bool rel, size_t rel_off)
{
	const char *hint = "";
	char d[64];

	if (is_foreign_operator(p))
		return foreign_operator(p);
	if (p->tok.kind == SIGP_T_IDENT || p->tok.kind == SIGP_T_INT ||
	    p->tok.kind == SIGP_T_FLOAT || p->tok.kind == SIGP_T_STRING) {
		const struct sigp_unit *u = p->tok.kind == SIGP_T_IDENT ?
			sigp_unit_find(tok_text(p), p->tok.len, p->mode != P_PRAGMA) : NULL;

		if (u && p->mode == P_PRAGMA)
			return fail_at(p, p->tok.off, p->tok.len,
				       "expected an operator before unit '%s': write %.*s*%s",
				       u->name, (int)p->prev_len, p->src.s + p->prev_off,
				       u->name);
		hint = " (missing operator or ')'?)";
	}
	describe(p, d, sizeof(d));
	if (rel) {
		char head[128];
		size_t o, l;

		snprintf(head, sizeof(head), "expected %s at ", expected);
		sigp_src_map(&p->src, p->tok.off, p->tok.len, &o, &l);
		return sigp_report_related(p->src.diag, -EINVAL, o, l, rel_off, head,
					   " before %s%s", d, hint);
	}
	return fail_at(p, p->tok.off, p->tok.len, "expected %s before %s%s", expected, d, hint);
}

static int unexpected(struct parser *p, const char *expected)
{
	return unexpected_rel(p, expected, false, 0);
}

static struct iosig_expr *new_node(struct parser *p, enum iosig_expr_kind kind, size_t start,
				   size_t end)
{
	struct iosig_expr *e = sigp_alloc(p->arena, sizeof(*e));
	size_t o, l;

	if (!e)
		return NULL;
	sigp_src_map(&p->src, start, end - start, &o, &l);
	e->kind = kind;
	e->offset = (uint32_t)o;
	e->length = (uint32_t)l;
	return e;
}

/* The first unit node of dimension dim in e (for "'d' is the unit days"). */
static const struct iosig_expr *find_unit(const struct iosig_expr *e, enum iosig_dim dim)
{
	const struct iosig_expr *u = NULL;

	if (!e)
		return NULL;
	if (e->kind == IOSIG_EXPR_UNIT)
		return e->dim == dim ? e : NULL;
	if (e->kind == IOSIG_EXPR_STRING || e->kind == IOSIG_EXPR_CALL ||
	    e->kind == IOSIG_EXPR_INDEX || e->kind == IOSIG_EXPR_MEMBER)
		return NULL;
	if (e->lhs)
		u = find_unit(e->lhs, dim);
	if (!u && e->rhs)
		u = find_unit(e->rhs, dim);
	return u;
}

/*
 * Reports a dimension error about `bad` (the subtree whose dimension is
 * wrong).  When a unit in it carries that dimension, the error points at
 * the unit and explains that unit names are reserved words: "d" in
 * size_per_io(d*KiB) is the unit days, not the caller's variable d.
 */
static int dim_error(struct parser *p, const struct operand *whole,
		     const struct iosig_expr *bad, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int dim_error(struct parser *p, const struct operand *whole,
		     const struct iosig_expr *bad, const char *fmt, ...)
{
	const struct iosig_expr *u = bad ? find_unit(bad, bad->dim) : NULL;
	char msg[200];

	/* The note helps where a variable name was taken for a unit: a unit
	 * of a dimension the context does not want, or, where the context
	 * wants nothing in particular (call arguments), a short unit name. */
	if (u && p->expect >= 0 && bad->dim == (enum iosig_dim)p->expect)
		u = NULL;
	if (u && p->expect < 0 && strlen(u->text) > 2)
		u = NULL;
	va_list ap;
	size_t o, l;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (u) {
		const struct sigp_unit *info = sigp_unit_find(u->text, strlen(u->text), true);

		/* Only a pragma has variables a unit name could be meant as. */
		return sigp_report(p->src.diag, -EINVAL, u->offset, u->length,
				   "%s; '%s' is the unit '%s' here%s", msg, u->text,
				   info ? info->meaning : u->text,
				   p->mode == P_PRAGMA ? " (unit names are reserved words in "
							 "signature values and cannot name a "
							 "variable)" : "");
	}
	sigp_src_map(&p->src, whole->start, whole->end - whole->start, &o, &l);
	return sigp_report(p->src.diag, -EINVAL, o, l, "%s", msg);
}

static const char *a_dim(enum iosig_dim d)
{
	switch (d) {
	case IOSIG_DIM_SIZE:
		return "a size";
	case IOSIG_DIM_TIME:
		return "a time";
	case IOSIG_DIM_FRACTION:
		return "a fraction";
	case IOSIG_DIM_RATE:
		return "a rate";
	case IOSIG_DIM_NONE:
		break;
	}
	return "a plain number";
}

/* Dimension of `l op r`, or an error. */
static int combine_dims(struct parser *p, enum iosig_expr_kind op, const struct operand *l,
			const struct operand *r, const struct operand *whole,
			enum iosig_dim *ret)
{
	enum iosig_dim a = l->e->dim, b = r->e->dim, res;
	const struct iosig_expr *bad;
	bool ok;

	switch (op) {
	case IOSIG_EXPR_ADD:
	case IOSIG_EXPR_SUB:
		ok = a == IOSIG_DIM_NONE || b == IOSIG_DIM_NONE || a == b;
		res = a == IOSIG_DIM_NONE ? b : a;
		break;
	case IOSIG_EXPR_MUL:
		ok = a == IOSIG_DIM_NONE || b == IOSIG_DIM_NONE;
		res = a == IOSIG_DIM_NONE ? b : a;
		break;
	case IOSIG_EXPR_DIV:
		ok = b == IOSIG_DIM_NONE || a == b;
		res = b == IOSIG_DIM_NONE ? a : IOSIG_DIM_NONE;
		/* A size per time is a rate where a rate is asked for. */
		if (p->expect == (int)IOSIG_DIM_RATE && a == IOSIG_DIM_SIZE &&
		    b == IOSIG_DIM_TIME) {
			ok = true;
			res = IOSIG_DIM_RATE;
		}
		break;
	default: /* MOD */
		ok = b == IOSIG_DIM_NONE || a == b;
		res = a;
		break;
	}
	if (ok) {
		*ret = res;
		return 0;
	}
	/* Blame the side whose dimension the context does not want. */
	if (p->expect >= 0 && a != IOSIG_DIM_NONE && a != (enum iosig_dim)p->expect)
		bad = l->e;
	else if (b != IOSIG_DIM_NONE)
		bad = r->e;
	else
		bad = l->e;
	switch (op) {
	case IOSIG_EXPR_ADD:
		return dim_error(p, whole, bad, "cannot add %s and %s", a_dim(a), a_dim(b));
	case IOSIG_EXPR_SUB:
		return dim_error(p, whole, bad, "cannot subtract %s from %s", a_dim(b), a_dim(a));
	case IOSIG_EXPR_MUL:
		return dim_error(p, whole, bad, "cannot multiply %s by %s", a_dim(a), a_dim(b));
	case IOSIG_EXPR_DIV:
		return dim_error(p, whole, bad, "cannot divide %s by %s", a_dim(a), a_dim(b));
	default:
		return dim_error(p, whole, bad, "cannot take the remainder of %s divided by %s",
				 a_dim(a), a_dim(b));
	}
}

static int check_height(struct parser *p, const struct operand *o)
{
	if (o->height > SIGP_MAX_DEPTH)
		return fail_at(p, o->start, o->end - o->start,
			       "expression is nested too deeply (more than %d levels)",
			       SIGP_MAX_DEPTH);
	return 0;
}

/* Folds a constant operator node; errors name the expression. */
static int fold(struct parser *p, struct operand *o, struct sigp_num a, struct sigp_num b)
{
	const char *why = "";
	int ret = sigp_fold(o->e->kind, a, b, &o->v, &why);
	int n = (int)(o->end - o->start);
	const char *s = p->src.s + o->start;

	if (ret == 0)
		return 0;
	if (n > 60)
		n = 60;
	if (ret == -EDOM)
		return fail_at(p, o->start, o->end - o->start,
			       "division by zero in '%.*s'", n, s);
	if (ret == -EINVAL)
		return fail_at(p, o->start, o->end - o->start,
			       "'%%' needs integer operands in '%.*s'", n, s);
	return fail_code(p, -ERANGE, o->start, o->end - o->start,
			 "%s in constant expression '%.*s'", why, n, s);
}

static int binary(struct parser *p, enum iosig_expr_kind op, struct operand *l,
		  const struct operand *r)
{
	struct operand o = { .start = l->start, .end = r->end };
	enum iosig_dim dim = IOSIG_DIM_NONE;
	int ret;

	o.height = 1 + (l->height > r->height ? l->height : r->height);
	ret = check_height(p, &o);
	if (ret < 0)
		return ret;
	o.e = new_node(p, op, o.start, o.end);
	if (!o.e)
		return oom(p);
	o.e->lhs = l->e;
	o.e->rhs = r->e;
	ret = combine_dims(p, op, l, r, &o, &dim);
	if (ret < 0)
		return ret;
	o.e->dim = dim;
	o.e->constant = l->e->constant && r->e->constant;
	if (o.e->constant) {
		ret = fold(p, &o, l->v, r->v);
		if (ret < 0)
			return ret;
	}
	*l = o;
	return 0;
}

static bool is_c_keyword(const char *s, size_t n, bool *ret_type)
{
	static const char *const types[] = {
		"char", "const", "double", "enum", "float", "int", "long", "short", "signed",
		"struct", "union", "unsigned", "void", "volatile", "_Bool", "_Complex",
		"_Atomic", "restrict", "typeof", "__typeof__",
	};
	static const char *const others[] = {
		"auto", "break", "case", "continue", "default", "do", "else", "extern", "for",
		"goto", "if", "inline", "register", "return", "sizeof", "static", "switch",
		"typedef", "while", "_Alignas", "_Alignof", "alignof", "_Generic", "_Noreturn",
		"_Static_assert", "_Thread_local",
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i]) == n && memcmp(types[i], s, n) == 0) {
			*ret_type = true;
			return true;
		}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strlen(others[i]) == n && memcmp(others[i], s, n) == 0) {
			*ret_type = false;
			return true;
		}
	return false;
}

/* Sets up p to read text[0..len) in `mode`; positions map 1:1 (callers
 * adjust p->src for string contents). */
static void parser_init(struct parser *p, const char *text, size_t len, enum pmode mode,
			struct sigp_diag *diag, struct sigp_arena *arena)
{
	memset(p, 0, sizeof(*p));
	p->src.s = text;
	p->src.len = len;
	p->src.exact = true;
	p->src.diag = diag;
	p->lx.src = &p->src;
	p->lx.juxt = mode != P_PRAGMA;
	p->lx.arena = arena;
	p->mode = mode;
	p->arena = arena;
	p->expect = -1;
}

static int parse_additive(struct parser *p, struct operand *ret);

/* The value of a string literal in value position: "64 MiB", "20y". */
static int parse_string_value(struct parser *p, struct operand *ret)
{
	const struct sigp_token t = p->tok;
	struct parser q;
	struct operand v;
	size_t o, l;
	int r;

	if (t.nul_inside)
		return fail_at(p, t.off, t.len, "value string contains a NUL character");
	if (p->depth + 1 > SIGP_MAX_DEPTH)
		return fail_at(p, t.off, t.len, "value strings are nested too deeply");
	sigp_src_map(&p->src, t.off, t.len, &o, &l);
	parser_init(&q, t.str, t.strlen, P_VALUE, p->src.diag, p->arena);
	if (!t.escaped && p->src.exact) {
		q.src.base = o + 1;
	} else {
		q.src.exact = false;
		q.src.whole_off = o;
		q.src.whole_len = l;
	}
	q.depth = p->depth + 1;
	r = next(&q);
	if (r < 0)
		return r;
	if (q.tok.kind == SIGP_T_EOF)
		return fail_at(p, t.off, t.len,
			       "empty value string: write a number with an optional unit, "
			       "e.g. \"64 MiB\"");
	r = parse_additive(&q, &v);
	if (r < 0)
		return r;
	if (q.tok.kind != SIGP_T_EOF)
		return unexpected(&q, "the end of the value string");
	ret->e = new_node(p, IOSIG_EXPR_STRING, t.off, t.off + t.len);
	if (!ret->e)
		return oom(p);
	ret->e->text = t.str;
	ret->e->dim = v.e->dim;
	ret->e->constant = true;
	ret->e->u.f = sigp_num_double(v.v);
	ret->v = sigp_leaf_num(ret->e);
	ret->height = 1;
	ret->start = t.off;
	ret->end = t.off + t.len;
	return next(p);
}

/* NUMBER UNIT ("64 MiB", "1.5GiB") where juxtaposition is allowed. */
static int juxtaposed_unit(struct parser *p, struct operand *num)
{
	const struct sigp_unit *u;
	struct operand unit;
	const char *s = tok_text(p);
	const char *sugg;
	int ret;

	if (p->mode == P_PRAGMA || p->tok.kind != SIGP_T_IDENT)
		return 0;
	u = sigp_unit_find(s, p->tok.len, true);
	if (!u) {
		sugg = sigp_unit_suggest(s, p->tok.len, true);
		if (sugg)
			return fail_at(p, p->tok.off, p->tok.len,
				       "unknown unit '%.*s'; did you mean '%s'?", (int)p->tok.len,
				       s, sugg);
		return fail_at(p, p->tok.off, p->tok.len,
			       "unknown unit '%.*s'; sizes: B KiB MiB GiB TiB PiB (K KB M MB G "
			       "GB T TB are the same powers of 1024), times: ns us ms s min h d "
			       "w mo y, fractions: ppm", (int)p->tok.len, s);
	}
	unit.e = new_node(p, IOSIG_EXPR_UNIT, p->tok.off, p->tok.off + p->tok.len);
	if (!unit.e)
		return oom(p);
	unit.e->text = u->name;
	unit.e->u.f = u->value;
	unit.e->dim = u->dim;
	unit.e->constant = true;
	unit.v = sigp_leaf_num(unit.e);
	unit.height = 1;
	unit.start = p->tok.off;
	unit.end = p->tok.off + p->tok.len;
	ret = next(p);
	if (ret < 0)
		return ret;
	return binary(p, IOSIG_EXPR_MUL, num, &unit);
}

static int parse_identifier(struct parser *p, struct operand *ret)
{
	const char *s = tok_text(p);
	size_t n = p->tok.len;
	const struct sigp_unit *u = sigp_unit_find(s, n, p->mode != P_PRAGMA);
	bool type;

	ret->start = p->tok.off;
	ret->end = p->tok.off + n;
	ret->height = 1;
	if (u) {
		ret->e = new_node(p, IOSIG_EXPR_UNIT, ret->start, ret->end);
		if (!ret->e)
			return oom(p);
		ret->e->text = u->name;
		ret->e->u.f = u->value;
		ret->e->dim = u->dim;
		ret->e->constant = true;
		ret->v = sigp_leaf_num(ret->e);
		return next(p);
	}
	if (is_c_keyword(s, n, &type))
		return fail_at(p, p->tok.off, n,
			       "'%.*s' is a C keyword and cannot appear in a signature value",
			       (int)n, s);
	if (p->mode != P_PRAGMA) {
		const char *sugg = sigp_unit_suggest(s, n, true);

		if (sugg)
			return fail_at(p, p->tok.off, n, "unknown unit '%.*s'; did you mean '%s'?",
				       (int)n, s, sugg);
		return fail_at(p, p->tok.off, n,
			       "'%.*s' is not a constant: values must be constants here (a number "
			       "with an optional unit such as 64*MiB%s)", (int)n, s,
			       p->mode == P_CONST ? ", or $N for a value given at run time" : "");
	}
	ret->e = new_node(p, IOSIG_EXPR_IDENT, ret->start, ret->end);
	if (!ret->e)
		return oom(p);
	ret->e->text = sigp_strndup(p->arena, s, n);
	if (!ret->e->text)
		return oom(p);
	return next(p);
}

static int parse_primary(struct parser *p, struct operand *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	switch (p->tok.kind) {
	case SIGP_T_INT:
	case SIGP_T_FLOAT:
		ret->start = p->tok.off;
		ret->end = p->tok.off + p->tok.len;
		ret->height = 1;
		ret->e = new_node(p, p->tok.kind == SIGP_T_INT ? IOSIG_EXPR_INT : IOSIG_EXPR_FLOAT,
				  ret->start, ret->end);
		if (!ret->e)
			return oom(p);
		if (p->tok.kind == SIGP_T_INT)
			ret->e->u.i = p->tok.u64;
		else
			ret->e->u.f = p->tok.f;
		ret->e->constant = true;
		ret->v = sigp_leaf_num(ret->e);
		r = next(p);
		if (r < 0)
			return r;
		return juxtaposed_unit(p, ret);
	case SIGP_T_STRING:
		return parse_string_value(p, ret);
	case SIGP_T_SLOT:
		if (p->mode == P_PRAGMA)
			return fail_at(p, p->tok.off, p->tok.len,
				       "'%.*s' is a slot of canonical signature text and cannot "
				       "appear in a pragma; use a variable or a constant",
				       (int)p->tok.len, tok_text(p));
		if (p->mode == P_VALUE)
			return fail_at(p, p->tok.off, p->tok.len,
				       "'%.*s' is not allowed here: write a constant value",
				       (int)p->tok.len, tok_text(p));
		if (p->tok.u64 >= p->nvalues)
			return fail_at(p, p->tok.off, p->tok.len,
				       "slot '%.*s' has no value: %u value%s given",
				       (int)p->tok.len, tok_text(p), p->nvalues,
				       p->nvalues == 1 ? " is" : "s are");
		ret->start = p->tok.off;
		ret->end = p->tok.off + p->tok.len;
		ret->height = 1;
		ret->e = new_node(p, IOSIG_EXPR_SLOT, ret->start, ret->end);
		if (!ret->e)
			return oom(p);
		ret->e->u.i = p->tok.u64;
		return next(p);
	case SIGP_T_IDENT:
		return parse_identifier(p, ret);
	case SIGP_T_PUNCT:
		if (tok_is(p, "(")) {
			size_t open = p->tok.off;
			bool type;

			r = next(p);
			if (r < 0)
				return r;
			if (p->tok.kind == SIGP_T_IDENT &&
			    is_c_keyword(tok_text(p), p->tok.len, &type) && type)
				return fail_at(p, open, p->tok.off + p->tok.len - open,
					       "casts are not allowed in signature values: remove "
					       "the '(%.*s...)' cast", (int)p->tok.len, tok_text(p));
			/* parse_unary() bounds the nesting */
			r = parse_additive(p, ret);
			if (r < 0)
				return r;
			if (!tok_is(p, ")")) {
				size_t o, l;

				sigp_src_map(&p->src, open, 1, &o, &l);
				return unexpected_rel(p, "')' to close the '('", true, o);
			}
			ret->start = open;
			ret->end = p->tok.off + 1;
			return next(p);
		}
		if (is_foreign_operator(p))
			return foreign_operator(p);
		return unexpected(p, "a value");
	case SIGP_T_EOF:
		return unexpected(p, "a value");
	}
	return unexpected(p, "a value");
}

/* Whether postfix operators (a.b, a[i], f(x)) may follow e. */
static int check_designator(struct parser *p, const struct operand *o, const char *what)
{
	const struct sigp_unit *u;

	switch (o->e->kind) {
	case IOSIG_EXPR_IDENT:
	case IOSIG_EXPR_MEMBER:
	case IOSIG_EXPR_INDEX:
	case IOSIG_EXPR_CALL:
		return 0;
	case IOSIG_EXPR_UNIT:
		u = sigp_unit_find(o->e->text, strlen(o->e->text), true);
		return fail_at(p, o->start, o->end - o->start,
			       "'%s' is the unit '%s' and cannot be %s; unit names are reserved "
			       "words in signature values, so rename the variable",
			       o->e->text, u ? u->meaning : o->e->text, what);
	default:
		return fail_at(p, p->tok.off, p->tok.len,
			       "only a variable, member, element or call result can be %s", what);
	}
}

static int parse_postfix(struct parser *p, struct operand *ret)
{
	int r = parse_primary(p, ret);

	while (r == 0) {
		struct operand o = { .start = ret->start, .height = ret->height + 1 };
		bool arrow = tok_is(p, "->");

		if (arrow || tok_is(p, ".")) {
			r = check_designator(p, ret, "accessed with '.' or '->'");
			if (r == 0)
				r = next(p);
			if (r < 0)
				return r;
			if (p->tok.kind != SIGP_T_IDENT)
				return unexpected(p, "a member name");
			o.end = p->tok.off + p->tok.len;
			o.e = new_node(p, IOSIG_EXPR_MEMBER, o.start, o.end);
			if (!o.e)
				return oom(p);
			o.e->arrow = arrow;
			o.e->lhs = ret->e;
			o.e->text = sigp_strndup(p->arena, tok_text(p), p->tok.len);
			if (!o.e->text)
				return oom(p);
			r = next(p);
		} else if (tok_is(p, "[")) {
			struct operand idx;
			int expect = p->expect;

			r = check_designator(p, ret, "indexed");
			if (r == 0)
				r = next(p);
			if (r < 0)
				return r;
			p->expect = -1;
			r = parse_additive(p, &idx);
			p->expect = expect;
			if (r < 0)
				return r;
			if (!tok_is(p, "]"))
				return unexpected(p, "']'");
			o.end = p->tok.off + 1;
			if (idx.height + 1 > o.height)
				o.height = idx.height + 1;
			o.e = new_node(p, IOSIG_EXPR_INDEX, o.start, o.end);
			if (!o.e)
				return oom(p);
			o.e->lhs = ret->e;
			o.e->rhs = idx.e;
			r = next(p);
		} else if (tok_is(p, "(")) {
			const struct iosig_expr *args[SIGP_MAX_ARGS];
			unsigned nargs = 0;
			int expect = p->expect;

			r = check_designator(p, ret, "called");
			if (r == 0)
				r = next(p);
			if (r < 0)
				return r;
			p->expect = -1;
			while (!tok_is(p, ")")) {
				struct operand a;

				if (nargs == SIGP_MAX_ARGS)
					return fail_at(p, p->tok.off, p->tok.len,
						       "too many arguments in a call (at most %d)",
						       SIGP_MAX_ARGS);
				r = parse_additive(p, &a);
				if (r < 0)
					return r;
				args[nargs++] = a.e;
				if (a.height + 1 > o.height)
					o.height = a.height + 1;
				if (tok_is(p, ",")) {
					r = next(p);
					if (r < 0)
						return r;
					if (tok_is(p, ")"))
						return unexpected(p, "an argument");
				} else if (!tok_is(p, ")")) {
					return unexpected(p, "',' or ')' in the argument list");
				}
			}
			p->expect = expect;
			o.end = p->tok.off + 1;
			o.e = new_node(p, IOSIG_EXPR_CALL, o.start, o.end);
			if (!o.e)
				return oom(p);
			o.e->lhs = ret->e;
			if (nargs) {
				const struct iosig_expr **a = sigp_alloc(p->arena,
									 nargs * sizeof(*a));

				if (!a)
					return oom(p);
				memcpy(a, args, nargs * sizeof(*a));
				o.e->args = a;
				o.e->nargs = nargs;
			}
			r = next(p);
		} else {
			break;
		}
		if (r < 0)
			return r;
		r = check_height(p, &o);
		*ret = o;
	}
	return r;
}

static int parse_unary(struct parser *p, struct operand *ret)
{
	int r;

	if (++p->depth > SIGP_MAX_DEPTH)
		return fail_at(p, p->tok.off, p->tok.len,
			       "expression is nested too deeply (more than %d levels)",
			       SIGP_MAX_DEPTH);
	if (tok_is(p, "-") || tok_is(p, "+")) {
		bool neg = tok_is(p, "-");
		size_t start = p->tok.off;
		struct operand o;

		r = next(p);
		if (r == 0)
			r = parse_unary(p, &o);
		if (r < 0)
			return r;
		if (!neg) {
			*ret = o;
			ret->start = start;
		} else {
			ret->start = start;
			ret->end = o.end;
			ret->height = o.height + 1;
			r = check_height(p, ret);
			if (r < 0)
				return r;
			ret->e = new_node(p, IOSIG_EXPR_NEG, ret->start, ret->end);
			if (!ret->e)
				return oom(p);
			ret->e->lhs = o.e;
			ret->e->dim = o.e->dim;
			ret->e->constant = o.e->constant;
			if (ret->e->constant) {
				r = fold(p, ret, o.v, o.v);
				if (r < 0)
					return r;
			}
		}
	} else if (is_foreign_operator(p)) {
		return foreign_operator(p);
	} else {
		r = parse_postfix(p, ret);
		if (r < 0)
			return r;
	}
	p->depth--;
	return 0;
}

static int parse_multiplicative(struct parser *p, struct operand *ret)
{
	int r = parse_unary(p, ret);

	while (r == 0 && (tok_is(p, "*") || tok_is(p, "/") || tok_is(p, "%"))) {
		enum iosig_expr_kind op = tok_is(p, "*") ? IOSIG_EXPR_MUL :
					  tok_is(p, "/") ? IOSIG_EXPR_DIV : IOSIG_EXPR_MOD;
		struct operand rhs;

		r = next(p);
		if (r == 0)
			r = parse_unary(p, &rhs);
		if (r == 0)
			r = binary(p, op, ret, &rhs);
	}
	return r;
}

static int parse_additive(struct parser *p, struct operand *ret)
{
	int r = parse_multiplicative(p, ret);

	while (r == 0 && (tok_is(p, "+") || tok_is(p, "-"))) {
		enum iosig_expr_kind op = tok_is(p, "+") ? IOSIG_EXPR_ADD : IOSIG_EXPR_SUB;
		struct operand rhs;

		r = next(p);
		if (r == 0)
			r = parse_multiplicative(p, &rhs);
		if (r == 0)
			r = binary(p, op, ret, &rhs);
	}
	return r;
}

/* Examples used in messages, per parameter. */
static const char *example(enum iosig_param id)
{
	switch (id) {
	case IOSIG_P_SIZE_PER_IO:
		return "size_per_io(64*KiB)";
	case IOSIG_P_TOTALSIZE:
		return "totalsize(4*GiB)";
	case IOSIG_P_MIN_MTTDL:
		return "min_mttdl(20*y)";
	case IOSIG_P_AVAILABILITY:
		return "availability(100*ppm)";
	case IOSIG_P_LIFETIME:
		return "lifetime(2*d)";
	case IOSIG_P_NAME:
		return "name(\"checkpoint\")";
	default:
		return "";
	}
}

/* Checks the dimension of a parameter value (or of a whole value for
 * iosig_parse_value when id < 0) against `want`. */
static int check_value_dim(struct parser *p, int id, enum iosig_dim want,
			   const struct operand *v)
{
	enum iosig_dim got = v->e->dim;
	int n = (int)(v->end - v->start);
	const char *s = p->src.s + v->start;

	if (got == IOSIG_DIM_NONE || got == want)
		return 0;
	if (n > 40)
		n = 40;
	if (id < 0 && want == IOSIG_DIM_NONE)
		return dim_error(p, v, v->e,
				 "expected a plain number without a unit, but '%.*s' is %s", n, s,
				 a_dim(got));
	if (id < 0)
		return dim_error(p, v, v->e, "expected %s, but '%.*s' is %s", a_dim(want), n, s,
				 a_dim(got));
	return dim_error(p, v, v->e, "'%s' expects %s (e.g. %s) or a plain number (%s), but "
			 "'%.*s' is %s", iosig_param_name((enum iosig_param)id), a_dim(want),
			 example((enum iosig_param)id),
			 want == IOSIG_DIM_SIZE ? "bytes" :
			 want == IOSIG_DIM_TIME ? "seconds" : "a probability",
			 n, s, a_dim(got));
}

/* What has been parsed of a pragma so far. */
struct pragma_state {
	enum iosig_pragma_kind kind;
	bool any_param;                 /* no kind keyword: every parameter allowed */
	size_t kw_off, kw_len;          /* the kind keyword */
	unsigned nparams;
	struct iosig_pragma_param params[IOSIG_P_COUNT];
	size_t spell_len[IOSIG_P_COUNT]; /* length of the spelling used, per index */
	const char *name;
};

static int parse_name_value(struct parser *p, struct iosig_pragma_param *param,
			    struct pragma_state *st)
{
	const struct sigp_token t = p->tok;
	struct iosig_expr *e;

	if (t.kind != SIGP_T_STRING)
		return fail_at(p, t.off, t.len ? t.len : 1,
			       "name needs a string literal: name(\"checkpoint\")");
	if (t.nul_inside)
		return fail_at(p, t.off, t.len, "name must not contain a NUL character");
	if (t.strlen == 0)
		return fail_at(p, t.off, t.len, "name must not be empty");
	if (t.strlen > SIGP_MAX_NAME)
		return fail_at(p, t.off, t.len, "name is too long (%zu bytes, at most %d)",
			       t.strlen, SIGP_MAX_NAME);
	for (size_t i = 0; i < t.strlen; i++) {
		unsigned char c = (unsigned char)t.str[i];

		if (c < 0x20 || c == 0x7f)
			return fail_at(p, t.off, t.len,
				       "name must not contain control characters");
	}
	e = new_node(p, IOSIG_EXPR_STRING, t.off, t.off + t.len);
	if (!e)
		return oom(p);
	e->text = t.str;
	e->constant = true;
	param->expr = e;
	st->name = t.str;
	return next(p);
}

static int parse_param(struct parser *p, struct pragma_state *st)
{
	const size_t start = p->tok.off, slen = p->tok.len;
	const char *spelling = tok_text(p);
	const struct sigp_param_info *info;
	struct iosig_pragma_param param = { 0 };
	int id = sigp_param_lookup(spelling, slen), r;

	if (id < 0) {
		const char *sugg = sigp_param_suggest(spelling, slen);

		if (sugg)
			return fail_at(p, start, slen, "unknown parameter '%.*s'; did you mean "
				       "'%s'?", (int)slen, spelling, sugg);
		return fail_at(p, start, slen,
			       "unknown parameter '%.*s'; parameters are global, local, persist, "
			       "tmp, sequential_access, random_access, archive, tamper, "
			       "size_per_io, totalsize, min_mttdl, availability, lifetime (jobwide) "
			       "and name", (int)slen, spelling);
	}
	if (!st->any_param && st->kind == IOSIG_PRAGMA_JOBWIDE && id != IOSIG_P_LIFETIME &&
	    id != IOSIG_P_NAME)
		return fail_at(p, start, slen,
			       "'%.*s' is not allowed in '#pragma io jobwide', which accepts only "
			       "lifetime(...) and name(...); put it in a '#pragma io sig'",
			       (int)slen, spelling);
	if (!st->any_param && st->kind != IOSIG_PRAGMA_JOBWIDE && id == IOSIG_P_LIFETIME)
		return fail_at(p, start, slen,
			       "'lifetime' is only allowed in '#pragma io jobwide' (e.g. "
			       "#pragma io jobwide lifetime(2*d))");
	info = sigp_param_info((enum iosig_param)id);
	param.id = (enum iosig_param)id;
	r = next(p);
	if (r < 0)
		return r;
	if (info->flag) {
		if (tok_is(p, "("))
			return fail_at(p, p->tok.off, p->tok.len,
				       "'%.*s' is a flag and takes no value; remove the '(...)'",
				       (int)slen, spelling);
		param.offset = (uint32_t)start;
		param.length = (uint32_t)slen;
	} else {
		if (!tok_is(p, "("))
			return fail_at(p, start, slen, "'%.*s' needs a value in parentheses, e.g. "
				       "%s", (int)slen, spelling, example(param.id));
		r = next(p);
		if (r < 0)
			return r;
		if (tok_is(p, ")"))
			return fail_at(p, p->tok.off, 1, "empty value in '%.*s()'; e.g. %s",
				       (int)slen, spelling, example(param.id));
		if (param.id == IOSIG_P_NAME) {
			r = parse_name_value(p, &param, st);
			if (r < 0)
				return r;
		} else {
			struct operand v;

			p->expect = (int)info->dim;
			p->depth = 0;
			r = parse_additive(p, &v);
			if (r < 0)
				return r;
			r = check_value_dim(p, id, info->dim, &v);
			if (r < 0)
				return r;
			if (v.e->constant) {
				char msg[200];
				size_t o, l;

				if (sigp_param_check(param.id, sigp_num_double(v.v), msg,
						     sizeof(msg)) < 0) {
					sigp_src_map(&p->src, v.start, v.end - v.start, &o, &l);
					return sigp_report(p->src.diag, -ERANGE, o, l, "%s", msg);
				}
			}
			param.expr = v.e;
		}
		if (tok_is(p, ","))
			return fail_at(p, p->tok.off, 1,
				       "'%.*s' takes exactly one value; the comma operator is not "
				       "allowed in a signature value", (int)slen, spelling);
		if (!tok_is(p, ")"))
			return unexpected(p, "')'");
		param.offset = (uint32_t)start;
		param.length = (uint32_t)(p->tok.off + 1 - start);
		r = next(p);
		if (r < 0)
			return r;
	}
	{
		size_t o, l;

		sigp_src_map(&p->src, param.offset, param.length, &o, &l);
		param.offset = (uint32_t)o;
		param.length = (uint32_t)l;
	}
	for (unsigned i = 0; i < st->nparams; i++) {
		const struct iosig_pragma_param *q = &st->params[i];
		const char *qs = p->src.diag->text + q->offset;
		bool repeat = q->id == param.id;
		char head[sizeof(((struct iosig_error *)0)->msg)];

		if (!repeat && (info->group == SIGP_GROUP_NONE ||
				sigp_param_info(q->id)->group != info->group))
			continue;
		snprintf(head, sizeof(head), "'%.*s' %s '%.*s' given at ", (int)slen, spelling,
			 repeat ? "repeats" : "contradicts", (int)st->spell_len[i], qs);
		if (repeat)
			return sigp_report_related(p->src.diag, -EINVAL, param.offset,
						   param.length, q->offset, head,
						   "; give each parameter once");
		return sigp_report_related(p->src.diag, -EINVAL, param.offset, param.length,
					   q->offset, head, ": %s; keep one of them", info->what);
	}
	st->spell_len[st->nparams] = slen;
	st->params[st->nparams++] = param;
	return 0;
}

static int parse_kind(struct parser *p, struct pragma_state *st)
{
	static const char *const kinds[] = { "sig", "sigdef", "jobwide" };
	char d[64];

	st->kw_off = p->tok.off;
	st->kw_len = p->tok.len;
	if (p->mode == P_CONST) {
		st->kind = IOSIG_PRAGMA_SIG;
		if (tok_ident_is(p, "sig"))
			return next(p);
		if (tok_ident_is(p, "jobwide")) {
			st->kind = IOSIG_PRAGMA_JOBWIDE;
			return next(p);
		}
		if (tok_ident_is(p, "sigdef"))
			return fail_at(p, p->tok.off, p->tok.len,
				       "a sigdef only defines a signature and has no value; "
				       "evaluate 'sig name(\"N\") ...' with a registry instead");
		st->any_param = true;
		return 0;
	}
	for (unsigned i = 0; i < 3; i++) {
		if (tok_ident_is(p, kinds[i])) {
			st->kind = (enum iosig_pragma_kind)i;
			return next(p);
		}
	}
	if (p->tok.kind == SIGP_T_IDENT) {
		const char *sugg = sigp_suggest(tok_text(p), p->tok.len, kinds, 3);

		if (sugg)
			return fail_at(p, p->tok.off, p->tok.len,
				       "unknown '#pragma io %.*s'; did you mean '%s'?",
				       (int)p->tok.len, tok_text(p), sugg);
		return fail_at(p, p->tok.off, p->tok.len,
			       "unknown '#pragma io %.*s': expected 'sig', 'sigdef' or 'jobwide'",
			       (int)p->tok.len, tok_text(p));
	}
	return fail_at(p, p->tok.off, p->tok.len,
		       "expected 'sig', 'sigdef' or 'jobwide' after '#pragma io', found %s",
		       describe(p, d, sizeof(d)));
}

static int parse_pragma_body(struct parser *p, struct pragma_state *st)
{
	bool after_comma = false;
	size_t comma = 0;
	int r = next(p);

	if (r == 0)
		r = parse_kind(p, st);
	while (r == 0 && p->tok.kind != SIGP_T_EOF) {
		if (tok_is(p, ",")) {
			if (st->nparams == 0 || after_comma)
				return fail_at(p, p->tok.off, 1, "expected a parameter before ','");
			after_comma = true;
			comma = p->tok.off;
			r = next(p);
			continue;
		}
		if (p->tok.kind != SIGP_T_IDENT) {
			char d[64];

			if (p->tok.kind == SIGP_T_PUNCT && (tok_is(p, "(")))
				return fail_at(p, p->tok.off, 1,
					       "'(' without a parameter name before it");
			return fail_at(p, p->tok.off, p->tok.len,
				       "expected a parameter name, found %s",
				       describe(p, d, sizeof(d)));
		}
		after_comma = false;
		r = parse_param(p, st);
	}
	if (r < 0)
		return r;
	if (after_comma)
		return fail_at(p, comma, 1, "expected a parameter after ','");
	if (st->kind == IOSIG_PRAGMA_SIGDEF && !st->name)
		return fail_at(p, st->kw_off, st->kw_len,
			       "'#pragma io sigdef' needs a name: sigdef name(\"checkpoint\") ...");
	return 0;
}

int sigp_parse(const char *text, size_t len, enum sigp_mode mode, unsigned nvalues,
	       struct sigp_pragma **ret_pragma, struct iosig_error *err)
{
	struct sigp_diag diag = { .text = text, .len = len, .err = err };
	struct pragma_state st;
	struct sigp_pragma *pr;
	struct parser p;
	int r;

	if (!text)
		return sigp_report_plain(err, -EINVAL, "no signature text given");
	if (len > SIGP_MAX_TEXT) {
		diag.len = 0;
		return sigp_report(&diag, -EINVAL, 0, 0,
				   "signature text is too long (%zu bytes, at most %d)", len,
				   SIGP_MAX_TEXT);
	}
	pr = sigp_pragma_new(IOSIG_PRAGMA_SIG);
	if (!pr)
		return sigp_report_plain(err, -ENOMEM, "out of memory");
	memset(&st, 0, sizeof(st));
	parser_init(&p, text, len, mode == SIGP_MODE_CONST ? P_CONST : P_PRAGMA, &diag,
		    &pr->arena);
	p.nvalues = nvalues;
	r = parse_pragma_body(&p, &st);
	if (r < 0)
		goto out_free_pragma;
	pr->text = sigp_strndup(&pr->arena, text, len);
	pr->text_len = len;
	if (!pr->text) {
		r = sigp_report_plain(err, -ENOMEM, "out of memory");
		goto out_free_pragma;
	}
	if (st.nparams) {
		struct iosig_pragma_param *params = sigp_alloc(&pr->arena,
							       st.nparams * sizeof(*params));

		if (!params) {
			r = sigp_report_plain(err, -ENOMEM, "out of memory");
			goto out_free_pragma;
		}
		memcpy(params, st.params, st.nparams * sizeof(*params));
		pr->pub.params = params;
		pr->pub.nparams = st.nparams;
	}
	pr->pub.kind = st.kind;
	pr->pub.name = st.name;
	*ret_pragma = pr;
	return 0;

out_free_pragma:
	iosig_pragma_free(&pr->pub);
	return r;
}

int sigp_parse_constant(const char *text, size_t len, enum iosig_dim expect,
			struct sigp_num *ret_num, struct iosig_error *err)
{
	struct sigp_diag diag = { .text = text, .len = len, .err = err };
	struct sigp_arena arena = { 0 };
	struct operand v;
	struct parser p;
	int r;

	if (len > SIGP_MAX_TEXT) {
		diag.len = 0;
		return sigp_report(&diag, -EINVAL, 0, 0, "value is too long (%zu bytes, at most %d)",
				   len, SIGP_MAX_TEXT);
	}
	parser_init(&p, text, len, P_VALUE, &diag, &arena);
	p.expect = (int)expect;
	r = next(&p);
	if (r < 0)
		goto out_free_arena;
	if (p.tok.kind == SIGP_T_EOF) {
		r = sigp_report(&diag, -EINVAL, 0, len, "empty value: write a number with an "
				"optional unit, e.g. 64*MiB, \"1.5 GiB\", 20*y or 100ppm");
		goto out_free_arena;
	}
	r = parse_additive(&p, &v);
	if (r < 0)
		goto out_free_arena;
	if (p.tok.kind != SIGP_T_EOF) {
		r = unexpected(&p, "the end of the value");
		goto out_free_arena;
	}
	r = check_value_dim(&p, -1, expect, &v);
	if (r < 0)
		goto out_free_arena;
	*ret_num = v.v;
out_free_arena:
	sigp_arena_free(&arena);
	return r;
}

int iosig_pragma_parse(const char *text, size_t len, struct iosig_pragma **ret_pragma,
		       struct iosig_error *err)
{
	struct sigp_pragma *pr;
	int r;

	if (!ret_pragma)
		return sigp_report_plain(err, -EINVAL, "no place to store the pragma");
	r = sigp_parse(text, len, SIGP_MODE_PRAGMA, 0, &pr, err);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL; /* range errors are syntax errors here */
	*ret_pragma = &pr->pub;
	return 0;
}

int sigp_pragma_validate(const struct iosig_pragma *pragma, struct sigp_diag *diag)
{
	const struct iosig_pragma_param *by_id[IOSIG_P_COUNT] = { 0 };
	const struct iosig_pragma_param *by_group[SIGP_NGROUPS] = { 0 };

	for (unsigned i = 0; i < pragma->nparams; i++) {
		const struct iosig_pragma_param *q = &pragma->params[i];
		const struct sigp_param_info *info = sigp_param_info(q->id);

		if (!info)
			return sigp_report(diag, -EINVAL, q->offset, q->length,
					   "invalid parameter id %d", (int)q->id);
		if (by_id[q->id])
			return sigp_report(diag, -EINVAL, q->offset, q->length,
					   "'%s' is given twice", info->name);
		by_id[q->id] = q;
		if (info->group != SIGP_GROUP_NONE) {
			const struct iosig_pragma_param *o = by_group[info->group];

			if (o)
				return sigp_report(diag, -EINVAL, q->offset, q->length,
						   "'%s' contradicts '%s': %s", info->name,
						   iosig_param_name(o->id), info->what);
			by_group[info->group] = q;
		}
		if (!info->flag && !q->expr)
			return sigp_report(diag, -EINVAL, q->offset, q->length,
					   "'%s' has no value", info->name);
		if (q->id == IOSIG_P_NAME && (!q->expr->text || !pragma->name ||
					      strcmp(q->expr->text, pragma->name) != 0))
			return sigp_report(diag, -EINVAL, q->offset, q->length,
					   "name parameter and pragma name differ");
	}
	if (pragma->name && !by_id[IOSIG_P_NAME])
		return sigp_report(diag, -EINVAL, 0, 0, "pragma name without a name parameter");
	return 0;
}
