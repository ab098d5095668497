/* SPDX-License-Identifier: MIT */
/*
 * bind.cc - binding pragmas to calls (docs/design.md §3: a pragma
 * describes the first supported call in the statement right after it, and
 * no call of a later statement).
 *
 * Runs once per function body, when the front end has finished it and
 * before it is turned into GIMPLE (PLUGIN_PRE_GENERICIZE; for a C++
 * template once per instantiation).  It finds the marker statements that
 * pragma.cc left, and for each one searches the statement after it (the
 * tree statements that make it up, see gp_stmt), in source order and into
 * nested expressions, blocks, loops and conditionals, for the first
 * supported call, noting the other calls it meets for the message of an
 * unbound pragma.  The search stops at the next pragma it meets.  Then
 * every bound call is rewritten
 * (calls.cc) with its values lowered at the call (lower.cc), and the
 * markers are replaced by empty statements (or, for jobwide, by the call of
 * iosig_jobwide).
 */
#include "iosig-plugin.h"
#include "hash-set.h"

struct gp_marker {
	struct gp_pragma *p;
	tree *slot;                 /* the marker statement */
	tree list;                  /* its STATEMENT_LIST, NULL if alone */
	tree_stmt_iterator it;      /* its position in list */
	vec<tree> binds;            /* BIND_EXPRs around the marker */
	struct gp_call call;
	vec<tree> call_binds;       /* BIND_EXPRs around the call */
	bool bound;                 /* call is the call it describes */
	struct plugin_unbound_info why; /* otherwise, why not */
	location_t first_call;      /* the first call of the next statement, for
				       the line in the message */
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

/* The macro whose expansion spelt the function (or pointer) that `call`
 * calls, or NULL when it is written in the source. */
static const char *gp_call_macro(tree call)
{
	location_t loc = EXPR_LOCATION(call);
	const line_map *map;

	if (loc == UNKNOWN_LOCATION)
		return NULL;
	loc = get_start(loc);
	if (!linemap_location_from_macro_expansion_p(line_table, loc))
		return NULL;
	map = linemap_lookup(line_table, loc);
	if (!map || !linemap_macro_expansion_map_p(map))
		return NULL;
	return linemap_map_get_macro_name(linemap_check_macro(map));
}

static unsigned gp_line_of(location_t loc)
{
	return (unsigned)expand_location(
		linemap_resolve_location(line_table, loc, LRK_MACRO_EXPANSION_POINT, NULL)).line;
}

/* True for the functions the program does not call by name: built-ins,
 * constructors, destructors, operators, compiler-made functions. */
static bool gp_hidden_callee(tree fndecl)
{
	const char *name;

	if (fndecl_built_in_p(fndecl) || DECL_ARTIFICIAL(fndecl) || !DECL_NAME(fndecl) ||
	    DECL_CXX_CONSTRUCTOR_P(fndecl) || DECL_CXX_DESTRUCTOR_P(fndecl))
		return true;
	name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
	return strncmp(name, "operator", 8) == 0 && !ISIDNUM(name[8]);
}

/* Records a call of the next statement that is not a supported one: what
 * the unbound message names. */
static void gp_note_other_call(struct gp_marker *m, tree call)
{
	struct plugin_unbound_info *u = &m->why;
	tree fndecl = NULL_TREE;
	const char *name;

	if (TREE_CODE(call) == CALL_EXPR) {
		if (!CALL_EXPR_FN(call))
			return; /* an internal function */
		fndecl = get_callee_fndecl(call);
	} else {
		tree fn = GP_AGGR_INIT_FN(call);

		fndecl = TREE_CODE(fn) == ADDR_EXPR ? TREE_OPERAND(fn, 0) : NULL_TREE;
	}
	/* Member functions cannot be declared openers: not worth naming. */
	if (fndecl && (TREE_CODE(fndecl) != FUNCTION_DECL || gp_hidden_callee(fndecl) ||
		       TREE_CODE(TREE_TYPE(fndecl)) == METHOD_TYPE))
		return;
	if (m->first_call == UNKNOWN_LOCATION) {
		m->first_call = EXPR_LOCATION(call);
		u->line = gp_line_of(m->first_call);
		if (!fndecl) {
			u->why = PLUGIN_UNBOUND_INDIRECT;
			u->macro = gp_call_macro(call);
			return;
		}
		u->why = PLUGIN_UNBOUND_UNSUPPORTED;
	}
	if (!fndecl || u->why != PLUGIN_UNBOUND_UNSUPPORTED)
		return;
	name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
	for (unsigned i = 0; i < u->nnames && i < PLUGIN_UNBOUND_NAMES; i++)
		if (strcmp(u->names[i], name) == 0)
			return;
	if (u->nnames < PLUGIN_UNBOUND_NAMES) {
		u->names[u->nnames] = name;
		u->macros[u->nnames] = gp_call_macro(call);
	}
	u->nnames++;
}

static tree gp_search_cb(tree *tp, int *walk_subtrees, void *data)
{
	struct gp_walk *w = (struct gp_walk *)data;
	struct gp_marker *m = w->searching;
	tree t = *tp, r;

	if (EXPR_P(t) && EXPR_HAS_LOCATION(t))
		w->last_loc = EXPR_LOCATION(t);
	/* Another pragma first, even in a nested statement list: the call is
	 * not this one's. */
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
		gp_note_other_call(m, t);
		return NULL_TREE;
	default:
		return NULL_TREE;
	}
}

static tree gp_strip_stmt(tree s)
{
	if (TREE_CODE(s) == CLEANUP_POINT_EXPR)
		s = TREE_OPERAND(s, 0);
	if (TREE_CODE(s) == EXPR_STMT)
		s = GP_EXPR_STMT_EXPR(s);
	while (s && CONVERT_EXPR_P(s) && VOID_TYPE_P(TREE_TYPE(s)))
		s = TREE_OPERAND(s, 0);
	return s;
}

/*
 * Reading the source where the trees cannot tell statements apart: the
 * declarators of one declaration, and the statements of a bare { } block
 * (a block that declares nothing is merged into the enclosing one).
 */

/* A place in a source file: line and byte column, 1-based. */
struct gp_pos {
	const char *file;
	int line, column;
};

/* The place loc was written at (where its macro was used, for a macro). */
static bool gp_pos_of(location_t loc, struct gp_pos *ret)
{
	expanded_location x;

	if (loc == UNKNOWN_LOCATION)
		return false;
	x = expand_location(linemap_resolve_location(line_table, loc, LRK_MACRO_EXPANSION_POINT,
						     NULL));
	ret->file = x.file;
	ret->line = x.line;
	ret->column = x.column;
	return x.file && x.line > 0;
}

/* < 0, 0, > 0 as a is before, at, after b (same file). */
static int gp_pos_cmp(const struct gp_pos *a, const struct gp_pos *b)
{
	return a->line != b->line ? a->line - b->line : a->column - b->column;
}

/* Reads C source a character at a time, outside literals and comments. */
struct gp_scan {
	struct gp_pos at;     /* the character last returned */
	const char *text;     /* its line (not NUL-terminated) */
	int len;              /* its length */
	int next;             /* index of the next character in text */
	char quote;           /* in a literal that ends with this */
	bool comment;         /* in a block comment */
	int depth;            /* ( [ { minus ) ] } */
};

/* Reads line s->at.line into s; false at the end of the file. */
static bool gp_scan_line(struct gp_scan *s)
{
	char_span line = location_get_source_line(s->at.file, s->at.line);

	s->text = line.get_buffer();
	s->len = (int)line.length();
	return (bool)line;
}

static bool gp_scan_start(struct gp_scan *s, const struct gp_pos *from)
{
	memset(s, 0, sizeof(*s));
	s->at = *from;
	s->next = from->column - 1;
	return gp_scan_line(s);
}

/* The next character of the program, '\0' at the end of the file. */
static char gp_scan_next(struct gp_scan *s)
{
	for (;;) {
		while (s->next >= s->len) {
			s->at.line++;
			s->next = 0;
			s->quote = 0; /* a literal does not go on past its line */
			if (!gp_scan_line(s))
				return '\0';
		}
		int i = s->next++;
		char c = s->text[i], n = i + 1 < s->len ? s->text[i + 1] : '\0';

		s->at.column = i + 1;
		if (s->comment) {
			if (c == '*' && n == '/')
				s->comment = false, s->next++;
		} else if (s->quote) {
			if (c == '\\')
				s->next++;
			else if (c == s->quote)
				s->quote = 0;
		} else if (c == '/' && n == '*') {
			s->comment = true;
			s->next++;
		} else if (c == '/' && n == '/') {
			s->next = s->len;
		} else if (c == '"' || c == '\'') {
			s->quote = c;
		} else {
			if (c == '(' || c == '[' || c == '{')
				s->depth++;
			else if (c == ')' || c == ']' || c == '}')
				s->depth--;
			return c;
		}
	}
}

/* True if the source between a and b (a first) has a ';' or '}' outside
 * brackets, or cannot be read: a and b are then in different statements. */
static bool gp_semicolon_between(location_t a, location_t b)
{
	struct gp_pos x, y;
	struct gp_scan sc;
	char c;

	if (!gp_pos_of(a, &x) || !gp_pos_of(b, &y) || strcmp(x.file, y.file) != 0 ||
	    gp_pos_cmp(&x, &y) > 0 || !gp_scan_start(&sc, &x))
		return true;
	while ((c = gp_scan_next(&sc)) != '\0' && gp_pos_cmp(&sc.at, &y) < 0)
		if ((c == ';' && sc.depth <= 0) || sc.depth < 0)
			return true;
	return c == '\0';
}

/*
 * If the first statement after the pragma at p (at `first`) is in a bare
 * block that opens between the two, where the block ends (its '}') into
 * *ret_end.
 */
static bool gp_bare_block(location_t p, location_t first, struct gp_pos *ret_end)
{
	struct gp_pos x, y;
	struct gp_scan sc;
	int braces = 0;
	char c;

	if (!gp_pos_of(p, &x) || !gp_pos_of(first, &y) || strcmp(x.file, y.file) != 0 ||
	    gp_pos_cmp(&x, &y) >= 0 || !gp_scan_start(&sc, &x))
		return false;
	while ((c = gp_scan_next(&sc)) != '\0' && gp_pos_cmp(&sc.at, &y) < 0) {
		if (c == '{')
			braces++;
		else if (c == '}')
			braces--;
	}
	if (c == '\0' || braces <= 0)
		return false;
	do {
		if (c == '{')
			braces++;
		else if (c == '}' && --braces == 0) {
			*ret_end = sc.at;
			return true;
		}
	} while ((c = gp_scan_next(&sc)) != '\0');
	return false;
}

/*
 * "The statement after the pragma" in a statement list: the front ends
 * make one tree statement of most statements, but a declaration becomes
 * one DECL_EXPR per declarator and, in C++, a statement that initialises
 * each variable that needs code for it, and what follows a variable with
 * a destructor goes into the body of a CLEANUP_STMT.
 */
struct gp_stmt {
	bool started;          /* its first tree statement was seen */
	location_t start;      /* where that one is */
	tree decl;             /* the variable of the last DECL_EXPR seen, or NULL */
	bool block;            /* the statement is a bare block ... */
	struct gp_pos block_end; /* ... that ends here */
};

/* Where tree statement s is (its variable's name for a declaration). */
static location_t gp_stmt_location(tree s)
{
	if (TREE_CODE(s) == CLEANUP_POINT_EXPR)
		s = TREE_OPERAND(s, 0);
	if (TREE_CODE(s) == DECL_EXPR)
		return DECL_SOURCE_LOCATION(DECL_EXPR_DECL(s));
	return EXPR_P(s) ? EXPR_LOCATION(s) : UNKNOWN_LOCATION;
}

/* True if (C++) tree statement s initialises `decl`: an assignment to it
 * or a call of its constructor. */
static bool gp_initialises(tree s, tree decl)
{
	s = gp_strip_stmt(s);
	if (!s)
		return false;
	if (TREE_CODE(s) == INIT_EXPR || TREE_CODE(s) == MODIFY_EXPR)
		return TREE_OPERAND(s, 0) == decl;
	if (TREE_CODE(s) == CALL_EXPR || TREE_CODE(s) == AGGR_INIT_EXPR) {
		unsigned n = TREE_CODE(s) == CALL_EXPR ? (unsigned)call_expr_nargs(s)
						       : (unsigned)GP_AGGR_INIT_NARGS(s);
		tree self = n ? (TREE_CODE(s) == CALL_EXPR ? CALL_EXPR_ARG(s, 0)
							   : GP_AGGR_INIT_ARG(s, 0))
			      : NULL_TREE;

		STRIP_NOPS(self);
		return self && TREE_CODE(self) == ADDR_EXPR && TREE_OPERAND(self, 0) == decl;
	}
	return false;
}

/* True if tree statement s belongs to the statement g has begun. */
static bool gp_continues(const struct gp_stmt *g, tree s)
{
	tree d = gp_strip_stmt(s);
	location_t at = gp_stmt_location(s);

	struct gp_pos pos;

	/* Everything up to the end of a bare block. */
	if (g->block && gp_pos_of(at, &pos) && strcmp(pos.file, g->block_end.file) == 0 &&
	    gp_pos_cmp(&pos, &g->block_end) < 0)
		return true;
	/* A statement that begins before what came first encloses it: C's
	 * for loop comes after the statement of its first clause. */
	if (at != UNKNOWN_LOCATION && g->start != UNKNOWN_LOCATION &&
	    linemap_compare_locations(
		    line_table,
		    linemap_resolve_location(line_table, at, LRK_MACRO_EXPANSION_POINT, NULL),
		    linemap_resolve_location(line_table, g->start, LRK_MACRO_EXPANSION_POINT,
					     NULL)) > 0)
		return true;
	if (!g->decl)
		return false;
	/* Another declarator of the same declaration. */
	if (d && TREE_CODE(d) == DECL_EXPR)
		return !gp_semicolon_between(DECL_SOURCE_LOCATION(g->decl),
					     DECL_SOURCE_LOCATION(DECL_EXPR_DECL(d)));
	/* The C++ initialisation of the variable just declared. */
	return VAR_P(g->decl) && TREE_LANG_FLAG_6(g->decl) && gp_initialises(s, g->decl);
}

/* Tree statements that are not statements of the program. */
static bool gp_transparent(tree s)
{
	return TREE_CODE(s) == DEBUG_BEGIN_STMT;
}

static bool gp_search_list(struct gp_walk *w, struct gp_marker *m, tree_stmt_iterator it,
			   struct gp_stmt *g);

/*
 * One tree statement (*sp) of the search for m's call: true when the search
 * is over (found, blocked, or the statement after the pragma ended before
 * *sp), false to go on with the next tree statement.
 */
static bool gp_search_one(struct gp_walk *w, struct gp_marker *m, tree *sp, struct gp_stmt *g)
{
	tree s = *sp, d;

	if (gp_transparent(s))
		return false;
	/* Labels belong to the statement they label. */
	if (!g->started && (TREE_CODE(s) == LABEL_EXPR || TREE_CODE(s) == CASE_LABEL_EXPR))
		return false;
	if (TREE_CODE(s) == CLEANUP_STMT) {
		/* What follows a variable with a destructor: maybe more of
		 * its declaration, else the statements after it. */
		tree *body = &TREE_OPERAND(s, 0);

		if (TREE_CODE(*body) == STATEMENT_LIST)
			return gp_search_list(w, m, tsi_start(*body), g);
		return gp_search_one(w, m, body, g);
	}
	if (g->started && !gp_continues(g, s))
		return true;
	if (!g->started) {
		g->start = gp_stmt_location(s);
		g->block = gp_bare_block(m->p->loc, g->start, &g->block_end);
	}
	g->started = true;
	w->last_loc = m->p->loc;
	if (walk_tree(sp, gp_search_cb, w, w->visited)) {
		if (w->blocked_by != UNKNOWN_LOCATION) {
			m->why.why = PLUGIN_UNBOUND_BLOCKED;
			m->why.line = gp_line_of(w->blocked_by);
		} else {
			m->bound = true;
		}
		return true;
	}
	d = gp_strip_stmt(s);
	if (d && TREE_CODE(d) == DECL_EXPR)
		g->decl = DECL_EXPR_DECL(d);
	else if (!g->decl || !gp_initialises(s, g->decl))
		g->decl = NULL_TREE;
	return false;
}

static bool gp_search_list(struct gp_walk *w, struct gp_marker *m, tree_stmt_iterator it,
			   struct gp_stmt *g)
{
	for (; !tsi_end_p(it); tsi_next(&it))
		if (gp_search_one(w, m, tsi_stmt_ptr(it), g))
			return true;
	return false;
}

/* Finds the call of m: the first supported call in the statement after it
 * in its block (in evaluation order: the outer call before its arguments,
 * a condition before its branches). */
static void gp_search(struct gp_walk *w, struct gp_marker *m)
{
	hash_set<tree> visited;
	struct gp_stmt g = {};

	memset(&m->why, 0, sizeof(m->why));
	m->why.why = PLUGIN_UNBOUND_END;
	m->bound = false;
	m->first_call = UNKNOWN_LOCATION;
	if (!m->list)
		return;
	w->searching = m;
	w->visited = &visited;
	w->blocked_by = UNKNOWN_LOCATION;
	w->binds.truncate(0);
	w->binds.safe_splice(m->binds);
	tree_stmt_iterator it = m->it;
	tsi_next(&it);
	gp_search_list(w, m, it, &g);
	if (!m->bound && g.started && m->why.why == PLUGIN_UNBOUND_END)
		m->why.why = PLUGIN_UNBOUND_NO_CALL;
	w->binds.truncate(0);
	w->visited = NULL;
	w->searching = NULL;
}

/* ---- diagnostics ---------------------------------------------------------- */

void gp_report_unbound(location_t loc, const struct plugin_unbound_info *u)
{
	char msg[1024];

	/* After other errors a call may have been dropped as erroneous: its
	 * pragma looks unbound, which would only add noise. */
	if (gp_opts.unbound == GP_UNBOUND_IGNORE || gp_foreign_errors())
		return;
	plugin_unbound_message(msg, sizeof(msg), u, open_quote, close_quote);
	if (gp_opts.unbound == GP_UNBOUND_ERROR)
		error_at(loc, "%s", msg);
	else
		warning_at(loc, 0, "%s", msg);
}

static void gp_note_bound(const struct gp_marker *m)
{
	unsigned line = gp_line_of(m->call.loc);

	if (m->call.opener)
		inform(m->p->loc, "%<#pragma io sig%> describes the call of %qs on line %u "
		       "(an opener); %<iosig_opener_begin%> and %<iosig_opener_end%> are "
		       "called around it", m->call.name, line);
	else if (gp_call_stays(&m->call))
		inform(m->p->loc, "%<#pragma io sig%> describes the call of %qs on line %u; "
		       "%<%s%> is called before it", m->call.name, line,
		       gp_call_replacement(&m->call));
	else
		inform(m->p->loc, "%<#pragma io sig%> describes the call of %qs on line %u, "
		       "which becomes a call of %qs", m->call.name, line,
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
	else if (m->bound)
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
	} else if (m->bound && m->lowered) {
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
	} else if (p->kind == IOSIG_PRAGMA_SIG && !m->bound && !p->nbound && !p->reported) {
		/* Once, not once per template instantiation. */
		gp_report_unbound(p->loc, &m->why);
		p->reported = true;
	}
}

static void gp_process_function(tree fn);

void gp_pre_genericize(void *gcc_data, void *)
{
	int before = errorcount;

	gp_busy++;
	gp_process_function((tree)gcc_data);
	gp_busy--;
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
	/* Two pragmas reaching one call cannot happen (the search of the
	 * earlier stops at the later); should it, the call is still rewritten
	 * once: the later (nearer) one wins. */
	FOR_EACH_VEC_ELT(w.markers, i, m) {
		if (!m->bound || m->p->kind != IOSIG_PRAGMA_SIG)
			continue;
		for (unsigned j = i + 1; j < w.markers.length(); j++) {
			struct gp_marker *n = w.markers[j];

			if (n->bound && n->p->kind == IOSIG_PRAGMA_SIG &&
			    n->call.slot == m->call.slot) {
				m->bound = false;
				memset(&m->why, 0, sizeof(m->why));
				m->why.why = PLUGIN_UNBOUND_TAKEN;
				m->why.line = gp_line_of(n->p->loc);
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
