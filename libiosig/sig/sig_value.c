/* SPDX-License-Identifier: MIT */
/*
 * sig_value.c - from text to values: iosig_sig_parse() (a signature whose
 * values are constants or "$N", parsed, resolved against named definitions
 * and evaluated) and iosig_parse_value() (one value with units, as users
 * write it on command lines and in configuration files).  The top of the
 * signature language: it uses the parser, the registry and the evaluator,
 * and none of them uses it.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sig_internal.h"

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
	if ((unsigned)dim > IOSIG_DIM_RATE)
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
