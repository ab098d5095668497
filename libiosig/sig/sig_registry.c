/* SPDX-License-Identifier: MIT */
/*
 * sig_registry.c - named signatures: "#pragma io sigdef name("N") ..."
 * defines N in a registry (file scope, or function scope with the file scope
 * as parent); "#pragma io sig name("N") ..." starts from that definition and
 * its own parameters override it, a parameter replacing the definition's
 * parameter of the same group (random replaces sequential).
 *
 * A registry is not locked: concurrent lookups are fine, a define must not
 * run concurrently with anything else on the same registry.  A parent must
 * outlive its children.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sig_internal.h"

struct iosig_registry {
	const struct iosig_registry *parent; /* enclosing scope, NULL for the outermost */
	struct iosig_pragma **defs;          /* own copies of the definitions */
	size_t ndefs;
	size_t cap;
};

struct iosig_registry *iosig_registry_new(const struct iosig_registry *parent)
{
	struct iosig_registry *reg = calloc(1, sizeof(*reg));

	if (reg)
		reg->parent = parent;
	return reg;
}

void iosig_registry_free(struct iosig_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->ndefs; i++)
		iosig_pragma_free(reg->defs[i]);
	free(reg->defs);
	free(reg);
}

static const struct iosig_pragma *lookup_local(const struct iosig_registry *reg,
					       const char *name)
{
	for (size_t i = 0; i < reg->ndefs; i++)
		if (strcmp(reg->defs[i]->name, name) == 0)
			return reg->defs[i];
	return NULL;
}

static const struct iosig_pragma *lookup(const struct iosig_registry *reg, const char *name)
{
	for (; reg; reg = reg->parent) {
		const struct iosig_pragma *def = lookup_local(reg, name);

		if (def)
			return def;
	}
	return NULL;
}

/* A closest visible name to a misspelt one, or NULL. */
static const char *suggest_name(const struct iosig_registry *reg, const char *name)
{
	const struct iosig_registry *r;
	const char **cands;
	const char *best;
	size_t n = 0;

	for (r = reg; r; r = r->parent)
		n += r->ndefs;
	if (!n)
		return NULL;
	cands = malloc(n * sizeof(*cands));
	if (!cands)
		return NULL;
	n = 0;
	for (r = reg; r; r = r->parent)
		for (size_t i = 0; i < r->ndefs; i++)
			cands[n++] = r->defs[i]->name;
	best = sigp_suggest(name, strlen(name), cands, n);
	free(cands);
	return best;
}

/* The name parameter of a pragma (for error positions). */
static const struct iosig_pragma_param *name_param(const struct iosig_pragma *pr)
{
	for (unsigned i = 0; i < pr->nparams; i++)
		if (pr->params[i].id == IOSIG_P_NAME)
			return &pr->params[i];
	return NULL;
}

/* A self-contained pragma holding copies of `params`. */
static struct sigp_pragma *build(enum iosig_pragma_kind kind, const char *name,
				 const struct iosig_pragma_param *const *params, unsigned n,
				 const char *text, size_t text_len)
{
	struct sigp_pragma *pr = sigp_pragma_new(kind);
	struct iosig_pragma_param *out = NULL;

	if (!pr)
		return NULL;
	if (text) {
		pr->text = sigp_strndup(&pr->arena, text, text_len);
		pr->text_len = text_len;
		if (!pr->text)
			goto out_free_pragma;
	}
	if (name) {
		pr->pub.name = sigp_strndup(&pr->arena, name, strlen(name));
		if (!pr->pub.name)
			goto out_free_pragma;
	}
	if (n) {
		out = sigp_alloc(&pr->arena, n * sizeof(*out));
		if (!out)
			goto out_free_pragma;
	}
	for (unsigned i = 0; i < n; i++) {
		out[i] = *params[i];
		if (params[i]->expr) {
			struct iosig_expr *e = sigp_expr_copy(&pr->arena, params[i]->expr);

			if (!e)
				goto out_free_pragma;
			if (params[i]->id == IOSIG_P_NAME && pr->pub.name)
				e->text = pr->pub.name;
			out[i].expr = e;
		}
	}
	pr->pub.params = out;
	pr->pub.nparams = n;
	return pr;

out_free_pragma:
	iosig_pragma_free(&pr->pub);
	return NULL;
}

static struct sigp_diag diag_of(const struct iosig_pragma *pr, struct iosig_error *err)
{
	const struct sigp_pragma *sp = sigp_pragma_of(pr);
	struct sigp_diag d = { .text = sp->text, .len = sp->text ? sp->text_len : 0, .err = err };

	return d;
}

int iosig_registry_define(struct iosig_registry *reg, const struct iosig_pragma *def,
			  struct iosig_error *err)
{
	const struct iosig_pragma_param *params[IOSIG_P_COUNT];
	const struct iosig_pragma *old;
	const struct iosig_pragma_param *np;
	struct sigp_diag diag;
	struct sigp_pragma *copy;
	int r;

	if (!reg || !def)
		return sigp_report_plain(err, -EINVAL, "no registry or definition given");
	diag = diag_of(def, err);
	if (def->kind != IOSIG_PRAGMA_SIGDEF || !def->name)
		return sigp_report(&diag, -EINVAL, 0, diag.len,
				   "only a '#pragma io sigdef' with name(\"...\") defines a "
				   "signature");
	r = sigp_pragma_validate(def, &diag);
	if (r < 0)
		return r;
	np = name_param(def);
	old = lookup_local(reg, def->name);
	if (old) {
		const struct iosig_expr *slots[IOSIG_P_COUNT];
		char canon[200];
		unsigned nslots;

		if (iosig_pragma_canonical(old, canon, sizeof(canon), slots, IOSIG_P_COUNT,
					   &nslots) < 0)
			canon[0] = '\0';
		return sigp_report(&diag, -EEXIST, np ? np->offset : 0, np ? np->length : 0,
				   "signature '%s' is already defined in this scope%s%s%s; use "
				   "another name, or '#pragma io sig name(\"%s\") ...' to use it",
				   def->name, canon[0] ? " as '" : "", canon,
				   canon[0] ? "'" : "", def->name);
	}
	if (def->nparams > IOSIG_P_COUNT)
		return sigp_report(&diag, -EINVAL, 0, diag.len, "too many parameters");
	for (unsigned i = 0; i < def->nparams; i++)
		params[i] = &def->params[i];
	if (reg->ndefs == reg->cap) {
		size_t cap = reg->cap ? reg->cap * 2 : 8;
		struct iosig_pragma **defs = realloc(reg->defs, cap * sizeof(*defs));

		if (!defs)
			return sigp_report_plain(err, -ENOMEM, "out of memory");
		reg->defs = defs;
		reg->cap = cap;
	}
	copy = build(def->kind, def->name, params, def->nparams, sigp_pragma_of(def)->text,
		     sigp_pragma_of(def)->text_len);
	if (!copy)
		return sigp_report_plain(err, -ENOMEM, "out of memory");
	reg->defs[reg->ndefs++] = &copy->pub;
	return 0;
}

int sigp_resolve(const struct iosig_registry *reg, const struct iosig_pragma *sig,
		 struct sigp_pragma **ret_pragma, struct sigp_diag *diag)
{
	const struct iosig_pragma_param *params[2 * IOSIG_P_COUNT];
	const struct sigp_pragma *sp = sigp_pragma_of(sig);
	const struct iosig_pragma *def = NULL;
	struct sigp_pragma *res;
	uint32_t from_def = 0;
	unsigned n = 0;
	int r;

	r = sigp_pragma_validate(sig, diag);
	if (r < 0)
		return r;
	if (sig->nparams > IOSIG_P_COUNT)
		return sigp_report(diag, -EINVAL, 0, diag->len, "too many parameters");
	if (reg && sig->kind == IOSIG_PRAGMA_SIG && sig->name) {
		def = lookup(reg, sig->name);
		if (!def) {
			const struct iosig_pragma_param *np = name_param(sig);
			const char *sugg = suggest_name(reg, sig->name);
			size_t off = np ? np->offset : 0, len = np ? np->length : 0;

			if (sugg)
				return sigp_report(diag, -ENOENT, off, len,
						   "no signature named '%s' is defined here; did "
						   "you mean '%s'?", sig->name, sugg);
			return sigp_report(diag, -ENOENT, off, len,
					   "no signature named '%s' is defined here; define it "
					   "first with '#pragma io sigdef name(\"%s\") ...'",
					   sig->name, sig->name);
		}
	}
	if (def) {
		for (unsigned i = 0; i < def->nparams; i++) {
			const struct iosig_pragma_param *q = &def->params[i];
			const struct sigp_param_info *qi = sigp_param_info(q->id);
			bool overridden = q->id == IOSIG_P_NAME;

			for (unsigned j = 0; j < sig->nparams && !overridden; j++) {
				const struct sigp_param_info *si = sigp_param_info(sig->params[j].id);

				overridden = sig->params[j].id == q->id ||
					     (qi->group != SIGP_GROUP_NONE &&
					      qi->group == si->group);
			}
			if (!overridden) {
				params[n++] = q;
				from_def |= IOSIG_HAS(q->id);
			}
		}
	}
	for (unsigned i = 0; i < sig->nparams; i++)
		params[n++] = &sig->params[i];
	res = build(sig->kind, sig->name, params, n, sp->text, sp->text_len);
	if (!res)
		return sigp_report(diag, -ENOMEM, 0, 0, "out of memory");
	res->from_def = from_def;
	r = sigp_pragma_validate(&res->pub, diag);
	if (r < 0) {
		iosig_pragma_free(&res->pub);
		return r;
	}
	*ret_pragma = res;
	return 0;
}

int iosig_pragma_resolve(const struct iosig_registry *reg, const struct iosig_pragma *sig,
			 struct iosig_pragma **ret_pragma, struct iosig_error *err)
{
	struct sigp_pragma *res;
	struct sigp_diag diag;
	int r;

	if (!sig || !ret_pragma)
		return sigp_report_plain(err, -EINVAL, "no pragma given");
	diag = diag_of(sig, err);
	r = sigp_resolve(reg, sig, &res, &diag);
	if (r < 0)
		return r;
	*ret_pragma = &res->pub;
	return 0;
}
