/* SPDX-License-Identifier: MIT */
/*
 * lower.cc - signature values as code (docs/design.md §3: "values are
 * integer C expressions evaluated at run time at the call site").
 *
 * A slot expression of the libiosig parser (identifiers, constants, units,
 * + - * / %, unary -, a.b, p->b, a[i], f(x)) becomes a GENERIC tree of type
 * double that is evaluated where the call is.  Names are looked up in the
 * blocks around the call (declared before it), then the parameters, then
 * the members of *this in a C++ member function, then what the pragma's
 * scope saw (enumerators, namespace members), then file scope.  A file-scope pragma is evaluated where it
 * is written, so its names are looked up there.
 *
 * Arithmetic follows the parser's constant folding (sig_eval.c) so that a
 * value means the same whether it is folded at compile time or computed at
 * run time: integer semantics while both operands are integers (a division
 * truncates, '%' needs integers), floating otherwise; x*ms is x/1000.  It
 * is computed in double, which is exact for every integer below 2^53 and
 * cannot trap or invoke undefined behaviour: a division by zero gives an
 * infinity or NaN, which libiosig rejects as a nonsensical value (the open
 * then happens as written).
 */
#include "iosig-plugin.h"

/* A lowered (sub)expression. */
struct gp_val {
	tree t;           /* the tree */
	bool num;         /* t is a double computed by the signature's arithmetic;
			     otherwise t is a C value of its own type */
	bool is_int;      /* num: integer semantics */
	double recip;     /* a unit (ms, ppm) that is exactly 1/recip, else 0 */
};

struct gp_lower {
	const struct gp_pragma *p;
	const struct gp_scope *sc;
};

/* 2^52: doubles at or above it are integers already. */
#define GP_TWO52 4503599627370496.0

static tree gp_real(double d)
{
	REAL_VALUE_TYPE r;
	char buf[64];

	/* Hexadecimal text converts exactly. */
	snprintf(buf, sizeof(buf), "%a", d);
	real_from_string(&r, buf);
	return build_real(double_type_node, r);
}

/* The source text of e, for messages. */
static char *gp_expr_text(const struct gp_lower *lw, const struct iosig_expr *e)
{
	const struct gp_pragma *p = lw->p;
	const struct gp_pragma *owner = p;
	const struct iosig_pragma *r = p->resolved ? p->resolved : p->parsed;

	/* Offsets of inherited parameters are in the sigdef's text. */
	for (unsigned i = 0; r && i < r->nparams; i++) {
		bool own = false;

		if (!r->params[i].expr)
			continue;
		for (unsigned j = 0; p->parsed && j < p->parsed->nparams; j++)
			own |= p->parsed->params[j].id == r->params[i].id;
		if (!own && p->def) {
			const struct iosig_expr *root = r->params[i].expr;

			if (root->offset <= e->offset &&
			    e->offset + e->length <= root->offset + root->length)
				owner = p->def;
		}
	}
	size_t len = strlen(owner->text);
	if (e->offset >= len)
		return xstrdup(e->text ? e->text : "");
	return xstrndup(owner->text + e->offset, MIN((size_t)e->length, len - e->offset));
}

/* Reports an error about e; the text of e is the first %qs. */
#define GP_ERROR(lw, e, fmt, ...)                                                   \
	do {                                                                         \
		char *gp_txt_ = gp_expr_text(lw, e);                                 \
		error_at(gp_expr_location((lw)->p, e), fmt, gp_txt_, ##__VA_ARGS__); \
		free(gp_txt_);                                                       \
	} while (0)

static bool gp_lower(const struct gp_lower *lw, const struct iosig_expr *e,
		     struct gp_val *ret);

/* ---- names ---------------------------------------------------------- */

/* True if decl is declared before the location `at`. */
static bool gp_declared_before(tree decl, location_t at)
{
	location_t d = DECL_SOURCE_LOCATION(decl);

	if (at == UNKNOWN_LOCATION || d == UNKNOWN_LOCATION)
		return true;
	return linemap_compare_locations(line_table, d, at) >= 0;
}

/* A field of record type `type` named `id` (looking into anonymous
 * structures and unions), as a reference into obj; NULL_TREE if none. */
static tree gp_find_field(tree type, tree obj, tree id)
{
	for (tree f = TYPE_FIELDS(type); f; f = DECL_CHAIN(f)) {
		if (DECL_NAME(f) == id) {
			if (TREE_CODE(f) == FIELD_DECL)
				return build3(COMPONENT_REF, TREE_TYPE(f), obj, f, NULL_TREE);
			if (VAR_P(f)) /* C++ static data member */
				return f;
			return error_mark_node; /* a member function or type */
		}
		if (TREE_CODE(f) == FIELD_DECL && !DECL_NAME(f) && !DECL_ARTIFICIAL(f) &&
		    RECORD_OR_UNION_TYPE_P(TREE_TYPE(f))) {
			tree inner = build3(COMPONENT_REF, TREE_TYPE(f), obj, f, NULL_TREE);
			tree r = gp_find_field(TREE_TYPE(f), inner, id);

			if (r)
				return r;
		}
	}
	return NULL_TREE;
}

/* The value a name has at the call (see the head of the file); NULL_TREE
 * when nothing of that name is visible. */
static tree gp_lookup(const struct gp_lower *lw, const struct iosig_expr *e)
{
	const struct gp_scope *sc = lw->sc;
	tree id = maybe_get_identifier(e->text);

	if (!id)
		return NULL_TREE;
	if (!sc->fn)
		return lookup_name(id); /* file scope: evaluated at the pragma */
	for (unsigned i = sc->nbinds; i-- > 0;)
		for (tree d = BIND_EXPR_VARS(sc->binds[i]); d; d = DECL_CHAIN(d))
			if (DECL_NAME(d) == id && gp_declared_before(d, sc->at))
				return d;
	for (tree d = DECL_ARGUMENTS(sc->fn); d; d = DECL_CHAIN(d))
		if (DECL_NAME(d) == id)
			return d;
	/* A member of *this in a C++ member function. */
	tree self = DECL_ARGUMENTS(sc->fn);
	if (self && DECL_NAME(self) && strcmp(IDENTIFIER_POINTER(DECL_NAME(self)), "this") == 0 &&
	    POINTER_TYPE_P(TREE_TYPE(self)) && RECORD_OR_UNION_TYPE_P(TREE_TYPE(TREE_TYPE(self)))) {
		tree type = TREE_TYPE(TREE_TYPE(self));
		tree obj = build1(INDIRECT_REF, type, self);
		tree f = gp_find_field(type, obj, id);

		if (f && f != error_mark_node)
			return f;
	}
	for (unsigned i = 0; i < lw->p->nbindings; i++)
		if (lw->p->bindings[i].ident == e && lw->p->bindings[i].decl)
			return lw->p->bindings[i].decl;
	return identifier_global_value(id);
}

/* A C++ reference is used through what it refers to. */
static tree gp_deref(tree t)
{
	if (TREE_CODE(TREE_TYPE(t)) == REFERENCE_TYPE)
		return build1(INDIRECT_REF, TREE_TYPE(TREE_TYPE(t)), t);
	return t;
}

static bool gp_lower_ident(const struct gp_lower *lw, const struct iosig_expr *e,
			   struct gp_val *ret, bool callee)
{
	tree d = gp_lookup(lw, e);

	if (d && d != error_mark_node && TREE_TYPE(d) == error_mark_node)
		return false; /* its declaration was an error, already reported */
	if (!d || d == error_mark_node) {
		bool outer = false;

		for (unsigned i = 0; i < lw->p->nbindings; i++)
			outer |= lw->p->bindings[i].ident == e && lw->p->bindings[i].outer_local;
		if (outer)
			GP_ERROR(lw, e, "%qs is a variable of the enclosing function, which this "
				 "lambda does not capture; capture it by name to use it in a "
				 "signature value");
		else
			GP_ERROR(lw, e, "%qs is not declared where the signature is evaluated");
		if (lw->sc->fn && lw->sc->at != lw->p->loc)
			inform(lw->sc->at, "the signature is evaluated at this call");
		return false;
	}
	switch (TREE_CODE(d)) {
	case VAR_DECL:
	case PARM_DECL:
	case RESULT_DECL:
		TREE_USED(d) = 1;
		ret->t = gp_deref(d);
		return true;
	case CONST_DECL:
		if (!DECL_INITIAL(d) || TREE_CODE(DECL_INITIAL(d)) != INTEGER_CST)
			break;
		ret->t = DECL_INITIAL(d);
		return true;
	case COMPONENT_REF:
		ret->t = gp_deref(d);
		return true;
	case FUNCTION_DECL:
		if (callee) {
			ret->t = d;
			return true;
		}
		GP_ERROR(lw, e, "%qs is a function; a signature value can call it");
		return false;
	case TYPE_DECL:
		GP_ERROR(lw, e, "%qs names a type, not a value");
		return false;
	case OVERLOAD:
		GP_ERROR(lw, e, "%qs is overloaded; a signature value can only call a "
			 "function declared once");
		return false;
	default:
		break;
	}
	GP_ERROR(lw, e, "%qs cannot be used in a signature value");
	return false;
}

/* ---- conversions ------------------------------------------------------ */

/* v as a double with its integer-ness; false after an error. */
static bool gp_number(const struct gp_lower *lw, const struct iosig_expr *e,
		      const struct gp_val *v, tree *ret, bool *ret_int)
{
	tree type;

	if (v->num) {
		*ret = v->t;
		*ret_int = v->is_int;
		return true;
	}
	type = TREE_TYPE(v->t);
	if (INTEGRAL_TYPE_P(type) || SCALAR_FLOAT_TYPE_P(type)) {
		*ret = fold_convert(double_type_node, v->t);
		*ret_int = INTEGRAL_TYPE_P(type);
		return true;
	}
	GP_ERROR(lw, e, "%qs has type %qT, which is not a number", type);
	return false;
}

/* C's truncating division for the integer quotient q (a double). */
static tree gp_trunc(tree q)
{
	q = save_expr(q);
	tree small = fold_build2(LT_EXPR, boolean_type_node,
				 fold_build1(ABS_EXPR, double_type_node, q), gp_real(GP_TWO52));
	tree tr = fold_build1(FLOAT_EXPR, double_type_node,
			      fold_build1(FIX_TRUNC_EXPR, long_long_integer_type_node, q));

	return fold_build3(COND_EXPR, double_type_node, small, tr, q);
}

static bool gp_lower_arith(const struct gp_lower *lw, const struct iosig_expr *e,
			   struct gp_val *ret)
{
	struct gp_val l = {}, r = {};
	tree a, b = NULL_TREE;
	bool ai, bi = true;

	if (!gp_lower(lw, e->lhs, &l) || !gp_number(lw, e->lhs, &l, &a, &ai))
		return false;
	if (e->kind != IOSIG_EXPR_NEG &&
	    (!gp_lower(lw, e->rhs, &r) || !gp_number(lw, e->rhs, &r, &b, &bi)))
		return false;
	ret->num = true;
	ret->is_int = ai && bi;
	switch (e->kind) {
	case IOSIG_EXPR_NEG:
		ret->t = fold_build1(NEGATE_EXPR, double_type_node, a);
		break;
	case IOSIG_EXPR_ADD:
		ret->t = fold_build2(PLUS_EXPR, double_type_node, a, b);
		break;
	case IOSIG_EXPR_SUB:
		ret->t = fold_build2(MINUS_EXPR, double_type_node, a, b);
		break;
	case IOSIG_EXPR_MUL:
		/* x*ms is x/1000, exactly as the parser folds it. */
		if (r.recip != 0)
			ret->t = fold_build2(RDIV_EXPR, double_type_node, a, gp_real(r.recip));
		else if (l.recip != 0)
			ret->t = fold_build2(RDIV_EXPR, double_type_node, b, gp_real(l.recip));
		else
			ret->t = fold_build2(MULT_EXPR, double_type_node, a, b);
		break;
	case IOSIG_EXPR_DIV:
		ret->t = fold_build2(RDIV_EXPR, double_type_node, a, b);
		if (ret->is_int)
			ret->t = gp_trunc(ret->t);
		break;
	case IOSIG_EXPR_MOD:
		if (!ai || !bi) {
			const struct iosig_expr *bad = ai ? e->rhs : e->lhs;

			GP_ERROR(lw, bad, "%qs is not an integer; %<%%%> needs integer operands");
			return false;
		}
		a = save_expr(a);
		b = save_expr(b);
		ret->t = fold_build2(MINUS_EXPR, double_type_node, a,
				     fold_build2(MULT_EXPR, double_type_node, b,
						 gp_trunc(fold_build2(RDIV_EXPR, double_type_node,
								      a, b))));
		break;
	default:
		gcc_unreachable();
	}
	return true;
}

/* ---- designators ------------------------------------------------------- */

static bool gp_lower_member(const struct gp_lower *lw, const struct iosig_expr *e,
			    struct gp_val *ret)
{
	struct gp_val obj = {};
	tree type, id, f;

	if (!gp_lower(lw, e->lhs, &obj))
		return false;
	type = obj.num ? double_type_node : TREE_TYPE(obj.t);
	if (e->arrow) {
		if (obj.num || !POINTER_TYPE_P(type) ||
		    !RECORD_OR_UNION_TYPE_P(TREE_TYPE(type))) {
			GP_ERROR(lw, e->lhs, "%qs is not a pointer to a structure or union "
				 "(it has type %qT), so %<->%> cannot be used", type);
			return false;
		}
		type = TREE_TYPE(type);
		obj.t = build1(INDIRECT_REF, type, obj.t);
	} else if (obj.num || !RECORD_OR_UNION_TYPE_P(type)) {
		if (!obj.num && POINTER_TYPE_P(type) && RECORD_OR_UNION_TYPE_P(TREE_TYPE(type)))
			GP_ERROR(lw, e->lhs, "%qs is a pointer; use %<->%> to reach its members");
		else
			GP_ERROR(lw, e->lhs, "%qs is not a structure or union (it has type %qT)",
				 type);
		return false;
	}
	if (!COMPLETE_TYPE_P(type)) {
		GP_ERROR(lw, e->lhs, "%qs has incomplete type %qT", type);
		return false;
	}
	id = maybe_get_identifier(e->text);
	f = id ? gp_find_field(type, obj.t, id) : NULL_TREE;
	if (f == error_mark_node) {
		GP_ERROR(lw, e, "%qs is not a data member; member functions and types cannot "
			 "be used in a signature value");
		return false;
	}
	if (!f) {
		char *name = xstrdup(e->text);

		GP_ERROR(lw, e, "%qs: %qT has no member named %qs", type, name);
		free(name);
		return false;
	}
	ret->t = gp_deref(f);
	return true;
}

/* An integer tree for an array index. */
static bool gp_index(const struct gp_lower *lw, const struct iosig_expr *e,
		     const struct gp_val *v, tree *ret)
{
	if (v->num && v->is_int) {
		*ret = fold_build1(FIX_TRUNC_EXPR, ssizetype, v->t);
		return true;
	}
	if (!v->num && INTEGRAL_TYPE_P(TREE_TYPE(v->t))) {
		*ret = v->t;
		return true;
	}
	GP_ERROR(lw, e, "array index %qs is not an integer");
	return false;
}

static bool gp_lower_index(const struct gp_lower *lw, const struct iosig_expr *e,
			   struct gp_val *ret)
{
	struct gp_val base = {}, ix = {};
	tree type, idx;

	if (!gp_lower(lw, e->lhs, &base) || !gp_lower(lw, e->rhs, &ix) ||
	    !gp_index(lw, e->rhs, &ix, &idx))
		return false;
	type = base.num ? double_type_node : TREE_TYPE(base.t);
	if (!base.num && TREE_CODE(type) == ARRAY_TYPE) {
		ret->t = gp_deref(build4(ARRAY_REF, TREE_TYPE(type), base.t, idx, NULL_TREE,
					 NULL_TREE));
		return true;
	}
	if (!base.num && POINTER_TYPE_P(type)) {
		tree elt = TREE_TYPE(type);

		if (!COMPLETE_TYPE_P(elt) || VOID_TYPE_P(elt)) {
			GP_ERROR(lw, e->lhs, "%qs points to the incomplete type %qT", elt);
			return false;
		}
		tree off = fold_build2(MULT_EXPR, sizetype, fold_convert(sizetype, idx),
				       TYPE_SIZE_UNIT(elt));
		ret->t = gp_deref(build1(INDIRECT_REF, elt, fold_build_pointer_plus(base.t, off)));
		return true;
	}
	GP_ERROR(lw, e->lhs, "%qs is neither an array nor a pointer (it has type %qT)", type);
	return false;
}

/* t converted to the arithmetic type `type` as C converts it
 * (fold_convert cannot turn a floating value into an integer). */
static tree gp_convert_scalar(tree type, tree t)
{
	if (INTEGRAL_TYPE_P(type) && SCALAR_FLOAT_TYPE_P(TREE_TYPE(t)))
		return fold_build1(FIX_TRUNC_EXPR, type, t);
	return fold_convert(type, t);
}

/* Converts argument v (expression e) to a parameter of type `type`; NULL
 * type: a variadic argument (default promotions). */
static bool gp_argument(const struct gp_lower *lw, const struct iosig_expr *e,
			const struct gp_val *v, tree type, tree *ret)
{
	tree t;
	bool is_int;

	if (type && (INTEGRAL_TYPE_P(type) || SCALAR_FLOAT_TYPE_P(type))) {
		if (!v->num && (INTEGRAL_TYPE_P(TREE_TYPE(v->t)) ||
				SCALAR_FLOAT_TYPE_P(TREE_TYPE(v->t)))) {
			*ret = gp_convert_scalar(type, v->t);
			return true;
		}
		if (!gp_number(lw, e, v, &t, &is_int))
			return false;
		*ret = gp_convert_scalar(type, t);
		return true;
	}
	if (!v->num) {
		tree at = TREE_TYPE(v->t);

		if (TREE_CODE(at) == ARRAY_TYPE) {
			tree first = build4(ARRAY_REF, TREE_TYPE(at), v->t,
					    size_zero_node, NULL_TREE, NULL_TREE);
			*ret = build_fold_addr_expr(first);
			at = TREE_TYPE(*ret);
		} else {
			*ret = v->t;
		}
		if (type && POINTER_TYPE_P(type) && POINTER_TYPE_P(at)) {
			*ret = fold_convert(type, *ret);
			return true;
		}
		if (!type && (POINTER_TYPE_P(at) || INTEGRAL_TYPE_P(at) ||
			      SCALAR_FLOAT_TYPE_P(at))) {
			if (SCALAR_FLOAT_TYPE_P(at))
				*ret = fold_convert(double_type_node, *ret);
			else if (INTEGRAL_TYPE_P(at) &&
				 TYPE_PRECISION(at) < TYPE_PRECISION(integer_type_node))
				*ret = fold_convert(integer_type_node, *ret);
			return true;
		}
	} else if (!type) {
		*ret = v->t;
		return true;
	}
	GP_ERROR(lw, e, "%qs (type %qT) cannot be passed as an argument of type %qT",
		 v->num ? double_type_node : TREE_TYPE(v->t), type ? type : void_type_node);
	return false;
}

static bool gp_lower_call(const struct gp_lower *lw, const struct iosig_expr *e,
			  struct gp_val *ret)
{
	struct gp_val callee = {};
	tree fn, fntype, parm, *args;
	unsigned nparms = 0;

	if (e->lhs->kind == IOSIG_EXPR_IDENT) {
		if (!gp_lower_ident(lw, e->lhs, &callee, true))
			return false;
	} else if (!gp_lower(lw, e->lhs, &callee)) {
		return false;
	}
	fn = callee.t;
	if (TREE_CODE(fn) == FUNCTION_DECL) {
		fntype = TREE_TYPE(fn);
		if (TREE_CODE(fntype) == METHOD_TYPE) {
			GP_ERROR(lw, e->lhs, "%qs is a member function; signature values can "
				 "only call plain functions");
			return false;
		}
		TREE_USED(fn) = 1;
		if (mark_used)
			mark_used(fn);
		fn = build_fold_addr_expr(fn);
	} else if (!callee.num && POINTER_TYPE_P(TREE_TYPE(fn)) &&
		   FUNC_OR_METHOD_TYPE_P(TREE_TYPE(TREE_TYPE(fn))) &&
		   TREE_CODE(TREE_TYPE(TREE_TYPE(fn))) == FUNCTION_TYPE) {
		fntype = TREE_TYPE(TREE_TYPE(fn));
	} else {
		GP_ERROR(lw, e->lhs, "%qs is neither a function nor a pointer to a function");
		return false;
	}
	for (parm = TYPE_ARG_TYPES(fntype); parm && parm != void_list_node;
	     parm = TREE_CHAIN(parm))
		nparms++;
	if (e->nargs < nparms || (e->nargs > nparms && !stdarg_p(fntype) &&
				  parm == void_list_node)) {
		GP_ERROR(lw, e->lhs, "%qs takes %u argument%s but the signature passes %u",
			 nparms, nparms == 1 ? "" : "s", e->nargs);
		return false;
	}
	args = XALLOCAVEC(tree, e->nargs + 1);
	parm = TYPE_ARG_TYPES(fntype);
	for (unsigned i = 0; i < e->nargs; i++) {
		struct gp_val a = {};
		tree type = parm && parm != void_list_node ? TREE_VALUE(parm) : NULL_TREE;

		if (!gp_lower(lw, e->args[i], &a) ||
		    !gp_argument(lw, e->args[i], &a, type, &args[i]))
			return false;
		if (parm && parm != void_list_node)
			parm = TREE_CHAIN(parm);
	}
	if (VOID_TYPE_P(TREE_TYPE(fntype))) {
		GP_ERROR(lw, e->lhs, "%qs returns nothing (void), so it has no value");
		return false;
	}
	ret->t = gp_deref(build_call_array_loc(lw->sc->at, TREE_TYPE(fntype), fn, e->nargs,
					       args));
	return true;
}

/* ---- the expression walk ------------------------------------------------ */

static bool gp_lower(const struct gp_lower *lw, const struct iosig_expr *e, struct gp_val *ret)
{
	memset(ret, 0, sizeof(*ret));
	switch (e->kind) {
	case IOSIG_EXPR_INT:
		ret->num = true;
		ret->is_int = e->u.i <= (uint64_t)INT64_MAX;
		ret->t = gp_real((double)e->u.i);
		return true;
	case IOSIG_EXPR_FLOAT:
	case IOSIG_EXPR_STRING:
		ret->num = true;
		ret->t = gp_real(e->u.f);
		return true;
	case IOSIG_EXPR_UNIT:
		/* As sigp_leaf_num(): whole units are integers; a unit that
		 * is an exact reciprocal (ms, ppm) multiplies by division. */
		ret->num = true;
		ret->is_int = e->u.f == (double)(int64_t)e->u.f;
		if (!ret->is_int && e->u.f > 0) {
			double inv = 1 / e->u.f;

			if (inv == (double)(int64_t)(inv + 0.5))
				ret->recip = inv;
		}
		ret->t = gp_real(e->u.f);
		return true;
	case IOSIG_EXPR_IDENT:
		return gp_lower_ident(lw, e, ret, false);
	case IOSIG_EXPR_NEG:
	case IOSIG_EXPR_ADD:
	case IOSIG_EXPR_SUB:
	case IOSIG_EXPR_MUL:
	case IOSIG_EXPR_DIV:
	case IOSIG_EXPR_MOD:
		return gp_lower_arith(lw, e, ret);
	case IOSIG_EXPR_MEMBER:
		return gp_lower_member(lw, e, ret);
	case IOSIG_EXPR_INDEX:
		return gp_lower_index(lw, e, ret);
	case IOSIG_EXPR_CALL:
		return gp_lower_call(lw, e, ret);
	case IOSIG_EXPR_SLOT:
		break;
	}
	GP_ERROR(lw, e, "%qs cannot be used in a signature value");
	return false;
}

tree gp_lower_slot(const struct gp_pragma *p, unsigned slot, const struct gp_scope *scope)
{
	const struct gp_lower lw = { p, scope };
	const struct iosig_expr *e = p->slots[slot];
	struct gp_val v;
	tree t;
	bool is_int;

	if (!gp_lower(&lw, e, &v) || !gp_number(&lw, e, &v, &t, &is_int))
		return NULL_TREE;
	return t;
}
