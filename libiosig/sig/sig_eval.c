/* SPDX-License-Identifier: MIT */
/*
 * sig_eval.c - constant folding and evaluation of signature values with C
 * semantics (64-bit integer arithmetic while both operands are integers,
 * overflow an error rather than a wrap; double otherwise).  The parser
 * folds constants with it; the entry points that parse and evaluate are
 * in sig_value.c.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sig_internal.h"

/* 2^63: doubles at or above it do not fit an int64_t. */
#define TWO63 9223372036854775808.0

struct sigp_num sigp_leaf_num(const struct iosig_expr *e)
{
	struct sigp_num n = { 0 };

	switch (e->kind) {
	case IOSIG_EXPR_INT:
		if (e->u.i <= (uint64_t)INT64_MAX) {
			n.is_int = true;
			n.i = (int64_t)e->u.i;
		} else {
			n.f = (double)e->u.i;
		}
		break;
	case IOSIG_EXPR_UNIT:
		/* Whole units (KiB, s, y) are integer constants, as they
		 * would be in C; ms and ppm are floating. */
		if (e->u.f == floor(e->u.f) && fabs(e->u.f) < TWO63) {
			n.is_int = true;
			n.i = (int64_t)e->u.f;
		} else {
			n.f = e->u.f;
			/* ms, us, ns, ppm: the nearest double to 1/N for a whole N
			 * (1/1e-9 itself is not whole in double arithmetic). */
			if (e->u.f > 0 && 1 / floor(1 / e->u.f + 0.5) == e->u.f)
				n.recip = floor(1 / e->u.f + 0.5);
		}
		break;
	case IOSIG_EXPR_FLOAT:
	case IOSIG_EXPR_STRING:
		n.f = e->u.f;
		break;
	default:
		break;
	}
	return n;
}

static int fold_double(enum iosig_expr_kind op, double a, double b, struct sigp_num *ret,
		       const char **why)
{
	double r;

	switch (op) {
	case IOSIG_EXPR_NEG:
		r = -a;
		break;
	case IOSIG_EXPR_ADD:
		r = a + b;
		break;
	case IOSIG_EXPR_SUB:
		r = a - b;
		break;
	case IOSIG_EXPR_MUL:
		r = a * b;
		break;
	case IOSIG_EXPR_DIV:
		if (b == 0) {
			*why = "division by zero";
			return -EDOM;
		}
		r = a / b;
		break;
	case IOSIG_EXPR_MOD:
		*why = "'%' needs integer operands";
		return -EINVAL;
	default:
		*why = "not an arithmetic operator";
		return -EINVAL;
	}
	if (!isfinite(r)) {
		*why = "overflow";
		return -ERANGE;
	}
	ret->is_int = false;
	ret->i = 0;
	ret->f = r;
	ret->recip = 0;
	return 0;
}

int sigp_fold(enum iosig_expr_kind op, struct sigp_num a, struct sigp_num b,
	      struct sigp_num *ret, const char **why)
{
	int64_t r;

	/* x * ms == x / 1000 exactly rounded (see struct sigp_num). */
	if (op == IOSIG_EXPR_MUL && b.recip != 0)
		return fold_double(IOSIG_EXPR_DIV, sigp_num_double(a), b.recip, ret, why);
	if (op == IOSIG_EXPR_MUL && a.recip != 0)
		return fold_double(IOSIG_EXPR_DIV, sigp_num_double(b), a.recip, ret, why);

	if (!a.is_int || (op != IOSIG_EXPR_NEG && !b.is_int))
		return fold_double(op, sigp_num_double(a), sigp_num_double(b), ret, why);
	*why = "integer overflow";
	switch (op) {
	case IOSIG_EXPR_NEG:
		if (a.i == INT64_MIN)
			return -ERANGE;
		r = -a.i;
		break;
	case IOSIG_EXPR_ADD:
		if (__builtin_add_overflow(a.i, b.i, &r))
			return -ERANGE;
		break;
	case IOSIG_EXPR_SUB:
		if (__builtin_sub_overflow(a.i, b.i, &r))
			return -ERANGE;
		break;
	case IOSIG_EXPR_MUL:
		if (__builtin_mul_overflow(a.i, b.i, &r))
			return -ERANGE;
		break;
	case IOSIG_EXPR_DIV:
	case IOSIG_EXPR_MOD:
		if (b.i == 0) {
			*why = "division by zero";
			return -EDOM;
		}
		if (a.i == INT64_MIN && b.i == -1) {
			if (op == IOSIG_EXPR_DIV)
				return -ERANGE;
			r = 0;
		} else {
			r = op == IOSIG_EXPR_DIV ? a.i / b.i : a.i % b.i;
		}
		break;
	default:
		*why = "not an arithmetic operator";
		return -EINVAL;
	}
	ret->is_int = true;
	ret->i = r;
	ret->f = 0;
	ret->recip = 0;
	return 0;
}

int sigp_eval(const struct iosig_expr *e, const double *values, unsigned nvalues,
	      struct sigp_diag *diag, struct sigp_num *ret)
{
	struct sigp_num a = { 0 }, b = { 0 };
	const char *why = "";
	int r;

	switch (e->kind) {
	case IOSIG_EXPR_INT:
	case IOSIG_EXPR_FLOAT:
	case IOSIG_EXPR_STRING:
	case IOSIG_EXPR_UNIT:
		*ret = sigp_leaf_num(e);
		return 0;
	case IOSIG_EXPR_SLOT:
		if (!values || e->u.i >= nvalues)
			return sigp_report(diag, -EINVAL, e->offset, e->length,
					   "slot $%llu has no value: %u value%s given",
					   (unsigned long long)e->u.i, nvalues,
					   nvalues == 1 ? " is" : "s are");
		memset(ret, 0, sizeof(*ret));
		ret->f = values[e->u.i];
		return 0;
	case IOSIG_EXPR_NEG:
	case IOSIG_EXPR_ADD:
	case IOSIG_EXPR_SUB:
	case IOSIG_EXPR_MUL:
	case IOSIG_EXPR_DIV:
	case IOSIG_EXPR_MOD:
		if (!e->lhs || (e->kind != IOSIG_EXPR_NEG && !e->rhs))
			return sigp_report(diag, -EINVAL, e->offset, e->length,
					   "malformed expression");
		r = sigp_eval(e->lhs, values, nvalues, diag, &a);
		if (r == 0 && e->kind != IOSIG_EXPR_NEG)
			r = sigp_eval(e->rhs, values, nvalues, diag, &b);
		if (r < 0)
			return r;
		r = sigp_fold(e->kind, a, b, ret, &why);
		if (r < 0)
			return sigp_report(diag, r, e->offset, e->length, "%s", why);
		return 0;
	default:
		return sigp_report(diag, -EINVAL, e->offset, e->length,
				   "'%s' is not a constant: values must be constants here",
				   e->text ? e->text : "expression");
	}
}
