/* SPDX-License-Identifier: MIT */
/*
 * bind.cc - binding pragmas to calls (docs/design.md §3: "the pragma binds
 * to the first supported call that follows it in the same block, whatever
 * the blank lines, comments or line breaks").
 *
 * Runs once per function body, when the front end has finished it and
 * before it is turned into GIMPLE (PLUGIN_PRE_GENERICIZE; for a C++
 * template once per instantiation).  It finds the marker statements that
 * pragma.cc left, and for each one searches the statements that follow it
 * in its statement list, in source order and into nested expressions,
 * blocks, loops and conditionals, for the first supported call.  The
 * search stops at the end of the block or at the next pragma it meets.
 * Should two pragmas still reach the same call, the nearer one (the later)
 * wins and the other is unbound.  Then every bound call is rewritten
 * (calls.cc) with its values lowered at the call (lower.cc), and the
 * markers are replaced by empty statements (or, for jobwide, by the call of
 * iosig_jobwide).
 */
#include "iosig-plugin.h"
#include "hash-set.h"

enum gp_unbound_why {
	GP_WHY_NONE,        /* bound */
	GP_WHY_END,         /* no supported call before the end of the block */
	GP_WHY_BLOCKED,     /* another pragma comes first */
	GP_WHY_TAKEN,       /* a later pragma took the same call */
};

struct gp_marker {
	struct gp_pragma *p;
	tree *slot;                 /* the marker statement */
	tree list;                  /* its STATEMENT_LIST, NULL if alone */
	tree_stmt_iterator it;      /* its position in list */
	vec<tree> binds;            /* BIND_EXPRs around the marker */
	struct gp_call call;
	vec<tree> call_binds;       /* BIND_EXPRs around the call */
	enum gp_unbound_why why;
	location_t other;           /* the pragma that blocked or took the call */
	tree values[IOSIG_P_COUNT]; /* the lowered values */
	bool lowered;               /* values[] are ready */
	bool applied;               /* the call (or jobwide) was generated */
};

struct gp_walk {
	tree fn;
	vec<tree> binds;            /* the BIND_EXPRs being walked, outermost first */
	vec<struct gp_marker *> markers;
	hash_set<tree> *visited;
	struct gp_marker *searching; /* the marker whose call is being searched */
	location_t last_loc;        /* the last location seen by the search */
	location_t blocked_by;      /* the search met this pragma before a call */
};

/* The pragma whose marker stmt is, or NULL. */
static struct gp_pragma *gp_marker_of(tree stmt)
{
	location_t loc;
	struct gp_pragma *p;
	tree v;

	if (!stmt)
		return NULL;
	if (TREE_CODE(stmt) == CLEANUP_POINT_EXPR)
		stmt = TREE_OPERAND(stmt, 0);
	loc = EXPR_LOCATION(stmt);
	if (TREE_CODE(stmt) == EXPR_STMT)
		stmt = GP_EXPR_STMT_EXPR(stmt);
	if (!stmt || TREE_CODE(stmt) != NOP_EXPR || !VOID_TYPE_P(TREE_TYPE(stmt)))
		return NULL;
	v = TREE_OPERAND(stmt, 0);
	if (TREE_CODE(v) != INTEGER_CST || !tree_fits_uhwi_p(v) ||
	    TYPE_MAIN_VARIANT(TREE_TYPE(v)) != integer_type_node)
		return NULL;
	p = gp_pragma_get((unsigned)tree_to_uhwi(v));
	if (!p || !p->ok || !p->in_function)
		return NULL;
	/* The location tells a marker from "(void) 3;" in the program. */
	if (LOCATION_LOCUS(loc) != LOCATION_LOCUS(p->loc) &&
	    LOCATION_LOCUS(EXPR_LOCATION(stmt)) != LOCATION_LOCUS(p->loc))
		return NULL;
	return p;
}

/* ---- collecting markers --------------------------------------------------- */

static tree gp_collect_cb(tree *tp, int *walk_subtrees, void *data);

static void gp_add_marker_at(struct gp_walk *w, struct gp_pragma *p, tree *slot, tree list,
			     tree_stmt_iterator it)
{
	struct gp_marker *m = XCNEW(struct gp_marker);

	m->p = p;
	m->slot = slot;
	m->list = list;
	m->it = it;
	m->binds = w->binds.copy();
	w->markers.safe_push(m);
	p->seen = true;
}

static tree gp_collect_cb(tree *tp, int *walk_subtrees, void *data)
{
	struct gp_walk *w = (struct gp_walk *)data;
	tree t = *tp;
	struct gp_pragma *p;

	switch (TREE_CODE(t)) {
	case BIND_EXPR:
		w->binds.safe_push(t);
		walk_tree(&BIND_EXPR_BODY(t), gp_collect_cb, w, w->visited);
		w->binds.pop();
		*walk_subtrees = 0;
		return NULL_TREE;
	case STATEMENT_LIST:
		for (tree_stmt_iterator i = tsi_start(t); !tsi_end_p(i); tsi_next(&i)) {
			p = gp_marker_of(tsi_stmt(i));
			if (p)
				gp_add_marker_at(w, p, tsi_stmt_ptr(i), t, i);
			else
				walk_tree(tsi_stmt_ptr(i), gp_collect_cb, w, w->visited);
		}
		*walk_subtrees = 0;
		return NULL_TREE;
	case DECL_EXPR:
		if (VAR_P(DECL_EXPR_DECL(t)) && DECL_INITIAL(DECL_EXPR_DECL(t)))
			walk_tree(&DECL_INITIAL(DECL_EXPR_DECL(t)), gp_collect_cb, w, w->visited);
		return NULL_TREE;
	default:
		/* A block whose only statement is a marker has no list. */
		p = gp_marker_of(t);
		if (p) {
			gp_add_marker_at(w, p, tp, NULL_TREE, tree_stmt_iterator());
			*walk_subtrees = 0;
		}
		return NULL_TREE;
	}
}

/* ---- searching the call ---------------------------------------------- */

static tree gp_search_cb(tree *tp, int *walk_subtrees, void *data)
{
	struct gp_walk *w = (struct gp_walk *)data;
	struct gp_marker *m = w->searching;
	tree t = *tp, r;

	if (EXPR_P(t) && EXPR_HAS_LOCATION(t))
		w->last_loc = EXPR_LOCATION(t);
	/* Another pragma first, even in a nested statement list (in C++ the
	 * statements after a declaration with a destructor are nested in a
	 * CLEANUP_STMT of the same block): the call is not this one's. */
	struct gp_pragma *q = gp_marker_of(t);
	if (q) {
		w->blocked_by = q->loc;
		return t;
	}
	switch (TREE_CODE(t)) {
	case BIND_EXPR:
		/* Only the body: the variables' initialisers run at their
		 * DECL_EXPRs, in source order. */
		w->binds.safe_push(t);
		r = walk_tree(&BIND_EXPR_BODY(t), gp_search_cb, w, w->visited);
		w->binds.pop();
		*walk_subtrees = 0;
		return r;
	case DECL_EXPR:
		*walk_subtrees = 0;
		if (VAR_P(DECL_EXPR_DECL(t)) && !TREE_STATIC(DECL_EXPR_DECL(t)) &&
		    DECL_INITIAL(DECL_EXPR_DECL(t)))
			return walk_tree(&DECL_INITIAL(DECL_EXPR_DECL(t)), gp_search_cb, w,
					 w->visited);
		return NULL_TREE;
	case CALL_EXPR:
	case AGGR_INIT_EXPR:
		if (gp_classify_call(tp, &m->call)) {
			/* Some C++ calls (a returned temporary) have no location
			 * of their own: use the statement's. */
			if (m->call.loc == UNKNOWN_LOCATION)
				m->call.loc = w->last_loc;
			m->call_binds = w->binds.copy();
			return t;
		}
		return NULL_TREE;
	default:
		return NULL_TREE;
	}
}

/* Finds the call of m: the first supported call in the statements after
 * it in its block. */
static void gp_search(struct gp_walk *w, struct gp_marker *m)
{
	hash_set<tree> visited;

	m->why = GP_WHY_END;
	if (!m->list)
		return;
	w->searching = m;
	w->visited = &visited;
	tree_stmt_iterator it = m->it;
	w->blocked_by = UNKNOWN_LOCATION;
	for (tsi_next(&it); !tsi_end_p(it); tsi_next(&it)) {
		w->binds.truncate(0);
		w->binds.safe_splice(m->binds);
		w->last_loc = m->p->loc;
		if (!walk_tree(tsi_stmt_ptr(it), gp_search_cb, w, &visited))
			continue;
		if (w->blocked_by != UNKNOWN_LOCATION) {
			m->why = GP_WHY_BLOCKED;
			m->other = w->blocked_by;
		} else {
			m->why = GP_WHY_NONE;
		}
		break;
	}
	w->binds.truncate(0);
	w->visited = NULL;
	w->searching = NULL;
}

/* ---- diagnostics ---------------------------------------------------------- */

static void gp_unbound(location_t loc, const char *gmsgid, ...) ATTRIBUTE_GCC_DIAG(2, 3);

static void gp_unbound(location_t loc, const char *gmsgid, ...)
{
	va_list ap;

	/* After other errors a call may have been dropped as erroneous: its
	 * pragma looks unbound, which would only add noise. */
	if (gp_opts.unbound == GP_UNBOUND_IGNORE || gp_foreign_errors())
		return;
	va_start(ap, gmsgid);
	emit_diagnostic_valist(gp_opts.unbound == GP_UNBOUND_ERROR ? DK_ERROR : DK_WARNING, loc,
			       0, gmsgid, &ap);
	va_end(ap);
}

static void gp_report_unbound(const struct gp_marker *m)
{
	const struct gp_pragma *p = m->p;
	expanded_location o = expand_location(m->other);

	switch (m->why) {
	case GP_WHY_NONE:
		return;
	case GP_WHY_END:
		gp_unbound(p->loc, "%<#pragma io sig%> is not followed by a supported call in "
			   "its block; it has no effect (supported: %<open%>, %<open64%>, "
			   "%<openat%>, %<creat%>, %<fopen%>, %<fopen64%>, %<freopen%>, and "
			   "the constructors and %<open%> of %<std::fstream%>, "
			   "%<std::ifstream%> and %<std::ofstream%>)");
		return;
	case GP_WHY_BLOCKED:
		gp_unbound(p->loc, "%<#pragma io sig%> is followed by another %<#pragma io%> "
			   "(line %d) before any supported call; it has no effect", o.line);
		return;
	case GP_WHY_TAKEN:
		gp_unbound(p->loc, "%<#pragma io sig%> has no effect: the call that follows "
			   "it is described by the nearer %<#pragma io sig%> on line %d",
			   o.line);
		return;
	}
}

static void gp_note_bound(const struct gp_marker *m)
{
	expanded_location at = expand_location(linemap_resolve_location(
		line_table, m->call.loc, LRK_MACRO_EXPANSION_POINT, NULL));

	if (strcmp(gp_call_replacement(&m->call), "iosig_prepare") == 0)
		inform(m->p->loc, "%<#pragma io sig%> describes the call of %qs on line %d; "
		       "%<iosig_prepare%> is called before it", m->call.name, at.line);
	else
		inform(m->p->loc, "%<#pragma io sig%> describes the call of %qs on line %d, "
		       "which becomes a call of %qs", m->call.name, at.line,
		       gp_call_replacement(&m->call));
}

/* ---- applying ---------------------------------------------------------- */

/* The values of p lowered at scope; false after an error. */
static bool gp_values(struct gp_pragma *p, tree fn, const vec<tree> &binds, location_t at,
		      tree *values)
{
	struct gp_scope scope = {};
	bool ok = true;

	scope.fn = fn;
	scope.binds = const_cast<tree *>(binds.address());
	scope.nbinds = binds.length();
	scope.at = at;
	for (unsigned i = 0; i < p->nslots; i++) {
		values[i] = gp_lower_slot(p, i, &scope);
		ok &= values[i] != NULL_TREE;
	}
	return ok;
}

/* Lowers the values of m where they are evaluated: at the call, or for
 * jobwide at the pragma.  Errors are reported in source order. */
static void gp_lower_marker(tree fn, struct gp_marker *m)
{
	struct gp_pragma *p = m->p;

	if (p->kind == IOSIG_PRAGMA_JOBWIDE)
		m->lowered = gp_values(p, fn, m->binds, p->loc, m->values);
	else if (m->why == GP_WHY_NONE)
		m->lowered = gp_values(p, fn, m->call_binds, m->call.loc, m->values);
}

/* Rewrites the call of m and replaces its marker. */
static void gp_apply(struct gp_marker *m)
{
	struct gp_pragma *p = m->p;
	tree repl = build_empty_stmt(p->loc);

	if (p->kind == IOSIG_PRAGMA_JOBWIDE && m->lowered) {
		repl = gp_build_jobwide_call(p, m->values, p->nslots);
		m->applied = true;
	} else if (m->why == GP_WHY_NONE && m->lowered) {
		m->applied = gp_rewrite_call(p, &m->call, m->values, p->nslots);
	}
	*m->slot = repl;
}

/* The notes and warnings about m, in source order. */
static void gp_diagnose(struct gp_marker *m)
{
	struct gp_pragma *p = m->p;

	if (m->applied) {
		p->nbound++;
		if (!gp_opts.verbose)
			return;
		if (p->kind == IOSIG_PRAGMA_JOBWIDE)
			inform(p->loc, "%<#pragma io jobwide%> becomes a call of "
			       "%<iosig_jobwide%> here");
		else
			gp_note_bound(m);
	} else if (p->kind == IOSIG_PRAGMA_SIG && m->why != GP_WHY_NONE && !p->nbound &&
		   !p->reported) {
		/* Once, not once per template instantiation. */
		gp_report_unbound(m);
		p->reported = true;
	}
}

static void gp_process_function(tree fn);

void gp_pre_genericize(void *gcc_data, void *)
{
	int before = errorcount;

	gp_process_function((tree)gcc_data);
	gp_own_errors += errorcount - before;
}

static void gp_process_function(tree fn)
{
	struct gp_walk w = {};
	hash_set<tree> visited;
	struct gp_marker *m;
	unsigned i;

	if (!gp_any_function_pragma() || !fn || TREE_CODE(fn) != FUNCTION_DECL ||
	    !DECL_SAVED_TREE(fn))
		return;
	w.fn = fn;
	w.visited = &visited;
	walk_tree(&DECL_SAVED_TREE(fn), gp_collect_cb, &w, &visited);
	if (w.markers.is_empty())
		return;

	FOR_EACH_VEC_ELT(w.markers, i, m)
		if (m->p->kind == IOSIG_PRAGMA_SIG)
			gp_search(&w, m);
	/* Two pragmas reaching one call: the later (nearer) one wins. */
	FOR_EACH_VEC_ELT(w.markers, i, m) {
		if (m->why != GP_WHY_NONE || m->p->kind != IOSIG_PRAGMA_SIG)
			continue;
		for (unsigned j = i + 1; j < w.markers.length(); j++) {
			struct gp_marker *n = w.markers[j];

			if (n->why == GP_WHY_NONE && n->p->kind == IOSIG_PRAGMA_SIG &&
			    n->call.slot == m->call.slot) {
				m->why = GP_WHY_TAKEN;
				m->other = n->p->loc;
				break;
			}
		}
	}
	/* After an error of the front end no code is generated: only say what
	 * binds, do not build trees from what may be erroneous. */
	if (!gp_foreign_errors())
		FOR_EACH_VEC_ELT(w.markers, i, m)
			gp_lower_marker(fn, m);
	/* Innermost rewrites first, so that an outer rewrite copies the
	 * rewritten inner call (later markers are nested or later). */
	for (i = w.markers.length(); i-- > 0;)
		gp_apply(w.markers[i]);
	/* The C++ front end may have folded the expressions around a call
	 * before (the value of a return, for its warnings) and would use that
	 * cached fold instead of the rewritten tree. */
	if (clear_cv_and_fold_caches)
		FOR_EACH_VEC_ELT(w.markers, i, m)
			if (m->applied) {
				clear_cv_and_fold_caches();
				break;
			}
	FOR_EACH_VEC_ELT(w.markers, i, m)
		gp_diagnose(m);
	FOR_EACH_VEC_ELT(w.markers, i, m) {
		m->binds.release();
		m->call_binds.release();
		XDELETE(m);
	}
	w.markers.release();
	w.binds.release();
}
