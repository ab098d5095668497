/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sig.c - libFuzzer target for the signature language.
 *
 * The input is pragma text (not NUL-terminated: it is copied into a buffer
 * of exactly its size so that ASan catches any read past the end).  An input
 * "DEF|USE" is two pragmas: DEF is defined in a registry when it is a sigdef
 * and USE is resolved against it.  Invariants checked:
 *  - spans of parameters and expressions lie inside the text;
 *  - the canonical text of every parsed and resolved pragma parses with
 *    iosig_sig_parse() given one value per slot, and the resulting struct
 *    formats to text that parses back to the same struct;
 *  - for a pragma without slots that formatted text is the canonical text;
 *  - the same bytes as iosig_sig_parse() text and iosig_parse_value() input
 *    never crash, and whatever they accept is finite and re-formats stably.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "iosig.h"

static unsigned check_expr(const struct iosig_expr *e, size_t len, unsigned depth)
{
	unsigned nodes = 1;

	CHECK(depth < 200);
	CHECK((size_t)e->offset + e->length <= len);
	CHECK((unsigned)e->dim <= IOSIG_DIM_FRACTION);
	switch (e->kind) {
	case IOSIG_EXPR_INT:
	case IOSIG_EXPR_FLOAT:
	case IOSIG_EXPR_STRING:
	case IOSIG_EXPR_UNIT:
		CHECK(e->constant);
		break;
	case IOSIG_EXPR_IDENT:
	case IOSIG_EXPR_SLOT:
		CHECK(!e->constant);
		break;
	case IOSIG_EXPR_MEMBER:
	case IOSIG_EXPR_INDEX:
	case IOSIG_EXPR_CALL:
		CHECK(!e->constant);
		CHECK(e->lhs);
		break;
	default:
		CHECK(e->lhs);
		CHECK(e->kind == IOSIG_EXPR_NEG || e->rhs);
		CHECK(e->constant == (e->lhs->constant && (!e->rhs || e->rhs->constant)));
		break;
	}
	if (e->lhs)
		nodes += check_expr(e->lhs, len, depth + 1);
	if (e->rhs)
		nodes += check_expr(e->rhs, len, depth + 1);
	for (unsigned i = 0; i < e->nargs; i++)
		nodes += check_expr(e->args[i], len, depth + 1);
	return nodes;
}

static void check_pragma(const struct iosig_pragma *p, size_t len)
{
	CHECK(p->nparams <= IOSIG_P_COUNT);
	for (unsigned i = 0; i < p->nparams; i++) {
		const struct iosig_pragma_param *q = &p->params[i];

		CHECK((unsigned)q->id < IOSIG_P_COUNT);
		CHECK((size_t)q->offset + q->length <= len);
		if (q->expr)
			check_expr(q->expr, len, 0);
		for (unsigned j = 0; j < i; j++)
			CHECK(p->params[j].id != q->id);
	}
}

/* sig_parse(text) -> format -> sig_parse must be a fixed point. */
static void check_reformat(const struct iosig_sig *sig, const char *expect_text)
{
	struct iosig_sig again;
	char text[1024];
	int n = iosig_sig_format(sig, text, sizeof(text));

	CHECK(n >= 0 && (size_t)n < sizeof(text));
	if (expect_text)
		CHECK(strcmp(text, expect_text) == 0);
	CHECK(iosig_sig_parse(text, NULL, NULL, 0, &again, NULL) == 0);
	CHECK(memcmp(&again, sig, sizeof(again)) == 0);
	CHECK(isfinite(sig->min_mttdl) && isfinite(sig->lifetime));
	CHECK(sig->availability >= 0 && sig->availability <= 1);
}

static void check_canonical(const struct iosig_pragma *p)
{
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	double values[IOSIG_P_COUNT];
	struct iosig_error err;
	struct iosig_sig sig;
	char canon[1024];
	unsigned n = 0;

	CHECK(iosig_pragma_canonical(p, canon, sizeof(canon), slots, IOSIG_P_COUNT, &n) == 0);
	for (unsigned i = 0; i < n; i++) {
		CHECK(slots[i] && !slots[i]->constant);
		values[i] = 0.5; /* valid for every parameter */
	}
	if (iosig_sig_parse(canon, NULL, values, n, &sig, &err) != 0) {
		fprintf(stderr, "fuzz_sig: canonical text '%s' does not parse: %s\n", canon,
			err.msg);
		abort();
	}
	check_reformat(&sig, n == 0 ? canon : NULL);
}

static struct iosig_pragma *parse(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	struct iosig_pragma *p = NULL;
	struct iosig_error err;
	int r;

	if (!copy)
		return NULL;
	memcpy(copy, data, size);
	r = iosig_pragma_parse(copy, size, &p, &err);
	if (r == 0) {
		check_pragma(p, size);
		check_canonical(p);
	} else {
		CHECK(r == -EINVAL || r == -ENOMEM);
		CHECK(err.offset <= size && err.offset + err.length <= size);
		CHECK(err.line >= 1 && err.column >= 1);
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)) && err.msg[0]);
		p = NULL;
	}
	free(copy);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *bar = memchr(data, '|', size);
	const double values[3] = { 4096, 0.25, 1e6 };
	struct iosig_sig sig;
	char *text;

	if (size > 4096)
		return 0;
	if (bar) {
		struct iosig_registry *reg = iosig_registry_new(NULL);
		struct iosig_pragma *def = parse(data, (size_t)(bar - data));
		struct iosig_pragma *use = parse(bar + 1, size - (size_t)(bar - data) - 1);

		if (reg && def && def->kind == IOSIG_PRAGMA_SIGDEF) {
			CHECK(iosig_registry_define(reg, def, NULL) == 0);
			CHECK(iosig_registry_define(reg, def, NULL) == -EEXIST);
		}
		if (reg && use) {
			struct iosig_pragma *res = NULL;
			int r = iosig_pragma_resolve(reg, use, &res, NULL);

			CHECK(r == 0 || r == -ENOENT || r == -ENOMEM);
			if (r == 0) {
				check_pragma(res, 1u << 20);
				check_canonical(res);
			}
			iosig_pragma_free(res);
		}
		iosig_pragma_free(def);
		iosig_pragma_free(use);
		iosig_registry_free(reg);
	} else {
		iosig_pragma_free(parse(data, size));
	}

	/* the same bytes as signature text and as a value */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (iosig_sig_parse(text, NULL, values, 3, &sig, NULL) == 0)
		check_reformat(&sig, NULL);
	for (int dim = IOSIG_DIM_NONE; dim <= IOSIG_DIM_FRACTION; dim++) {
		double v = 0;

		if (iosig_parse_value(text, (enum iosig_dim)dim, &v, NULL) == 0)
			CHECK(isfinite(v));
	}
	free(text);
	return 0;
}
