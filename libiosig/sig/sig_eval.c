/* SPDX-License-Identifier: MIT */
/*
 * sig_eval.c - constant folding and evaluation of signature values with C
 * semantics (64-bit integer arithmetic while both operands are integers,
 * overflow an error rather than a wrap; double otherwise), and the two
 * evaluating entry points: iosig_sig_parse() and iosig_parse_value().
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
			if (e->u.f > 0 && 1 / e->u.f == floor(1 / e->u.f + 0.5))
				n.recip = 1 / e->u.f;
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

/* The name parameter of a pragma, or NULL. */
static const struct iosig_pragma_param *name_param(const struct iosig_pragma *pr)
{
	for (unsigned i = 0; i < pr->nparams; i++)
		if (pr->params[i].id == IOSIG_P_NAME)
			return &pr->params[i];
	return NULL;
}

/*
 * Evaluates one value and checks its range: 0 or the error, reported at the
 * value - or, for a value that came from a sigdef (whose text the spans
 * refer to), at the name("N") that pulled it in.
 */
static int eval_param(const struct sigp_pragma *pr, const struct iosig_pragma_param *q,
		      const double *values, unsigned nvalues, struct sigp_diag *diag,
		      struct sigp_num *ret)
{
	bool from_def = pr->from_def & IOSIG_HAS(q->id);
	struct iosig_error sub = { 0 };
	struct sigp_diag def_diag = { .err = &sub };
	struct sigp_diag *d = from_def ? &def_diag : diag;
	const struct iosig_pragma_param *np;
	char msg[200];
	int r;

	r = sigp_eval(q->expr, values, nvalues, d, ret);
	if (r == -EDOM)
		r = -ERANGE; /* "$0/$1" with a zero value: a nonsensical value */
	if (r == 0 && sigp_param_check(q->id, sigp_num_double(*ret), msg, sizeof(msg)) < 0)
		r = sigp_report(d, -ERANGE, q->expr->offset, q->expr->length, "%s", msg);
	if (r == 0 || !from_def)
		return r;
	np = name_param(&pr->pub);
	return sigp_report(diag, r, np ? np->offset : 0, np ? np->length : 0,
			   "in the definition of '%s': %s", pr->pub.name ? pr->pub.name : "",
			   sub.msg);
}

/* Evaluates every parameter of a resolved pragma into *ret_sig. */
static int evaluate(const struct sigp_pragma *pr, const double *values, unsigned nvalues,
		    struct sigp_diag *diag, struct iosig_sig *ret_sig)
{
	struct iosig_sig sig;

	memset(&sig, 0, sizeof(sig));
	for (unsigned i = 0; i < pr->pub.nparams; i++) {
		const struct iosig_pragma_param *q = &pr->pub.params[i];
		struct sigp_num n;
		double v;
		int r;

		sig.set |= IOSIG_HAS(q->id);
		if (q->id == IOSIG_P_NAME) {
			size_t len = strlen(q->expr->text);

			if (len >= sizeof(sig.name))
				return sigp_report(diag, -EINVAL, q->offset, q->length,
						   "name is too long");
			memcpy(sig.name, q->expr->text, len + 1);
			continue;
		}
		if (!q->expr)
			continue;
		r = eval_param(pr, q, values, nvalues, diag, &n);
		if (r < 0)
			return r;
		v = sigp_num_double(n);
		if (v == 0)
			v = 0; /* no -0 */
		switch (q->id) {
		case IOSIG_P_SIZE_PER_IO:
			sig.size_per_io = sigp_size_of(n);
			break;
		case IOSIG_P_TOTALSIZE:
			sig.totalsize = sigp_size_of(n);
			break;
		case IOSIG_P_MIN_MTTDL:
			sig.min_mttdl = v;
			break;
		case IOSIG_P_AVAILABILITY:
			sig.availability = v;
			break;
		case IOSIG_P_LIFETIME:
			sig.lifetime = v;
			break;
		default:
			break;
		}
	}
	*ret_sig = sig;
	return 0;
}

int iosig_sig_parse(const char *text, const struct iosig_registry *reg, const double *values,
		    unsigned nvalues, struct iosig_sig *ret_sig, struct iosig_error *err)
{
	struct sigp_pragma *pr, *resolved = NULL;
	struct sigp_diag diag = { .err = err };
	size_t len;
	int r;

	if (!text || !ret_sig)
		return sigp_report_plain(err, -EINVAL, "no signature text given");
	if (!values)
		nvalues = 0;
	len = strnlen(text, SIGP_MAX_TEXT + 1);
	r = sigp_parse(text, len, SIGP_MODE_CONST, nvalues, &pr, err);
	if (r < 0)
		return r;
	diag.text = pr->text;
	diag.len = pr->text_len;
	if (reg && pr->pub.kind == IOSIG_PRAGMA_SIG && pr->pub.name) {
		r = sigp_resolve(reg, &pr->pub, &resolved, &diag);
		if (r < 0)
			goto out_free_pragma;
	}
	r = evaluate(resolved ? resolved : pr, values, nvalues, &diag, ret_sig);
	iosig_pragma_free(resolved ? &resolved->pub : NULL);
out_free_pragma:
	iosig_pragma_free(&pr->pub);
	return r;
}

int iosig_parse_value(const char *text, enum iosig_dim dim, double *ret_value,
		      struct iosig_error *err)
{
	struct sigp_num n;
	double v;
	int r;

	if (!text || !ret_value)
		return sigp_report_plain(err, -EINVAL, "no value given");
	if ((unsigned)dim > IOSIG_DIM_FRACTION)
		return sigp_report_plain(err, -EINVAL, "invalid dimension %d", (int)dim);
	r = sigp_parse_constant(text, strnlen(text, SIGP_MAX_TEXT + 1), dim, &n, err);
	if (r < 0)
		return r;
	v = sigp_num_double(n);
	if (!isfinite(v)) {
		struct sigp_diag d = { .text = text, .len = strlen(text), .err = err };

		return sigp_report(&d, -ERANGE, 0, d.len, "value is not finite");
	}
	*ret_value = v == 0 ? 0 : v;
	return 0;
}
