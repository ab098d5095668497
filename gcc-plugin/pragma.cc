/* SPDX-License-Identifier: MIT */
/*
 * pragma.cc - "#pragma io ..." in the C and C++ front ends (docs/design.md
 * §3).
 *
 * The whole "io" pragma namespace has one handler, registered with macro
 * expansion so that macros in values work.  The handler turns the tokens
 * back into text (keeping each token's location), parses it with libiosig,
 * resolves named signatures through a registry per scope (one for the file,
 * one per function with its enclosing scope as parent) and records the
 * result.  Inside a function it appends a marker statement, "(void) ID",
 * to the current statement list: the marker survives C++ template
 * instantiation, and bind.cc finds it when the function is complete.  A
 * file-scope jobwide becomes a constructor function that runs before main.
 *
 * Value identifiers are resolved where the call is (lower.cc); here they
 * are only looked up to mark the variables used (no bogus -Wunused) and
 * to remember what names only the pragma's scope can see (enumerators,
 * namespace members).
 */
#include "iosig-plugin.h"

/* Longest pragma text accepted; the parser takes at most 64 KiB. */
#define GP_MAX_TEXT 65536

/* A scope with named signatures. */
struct gp_regscope {
	tree fn;                         /* NULL for file scope; identity only */
	struct gp_regscope *parent;
	struct iosig_registry *reg;
	vec<struct gp_pragma *> defs;    /* the sigdefs, for locations in messages */
};

static vec<struct gp_pragma *> gp_table;
static vec<struct gp_opener *> gp_openers;
/* Names used by values that named nothing where the pragma is: the program
 * may declare them between the pragma and the call (values are evaluated
 * at the call).  Such a declaration in the same function is marked used
 * when the front end finishes it, so that it draws no -Wunused warning. */
static vec<tree> gp_pending_names;
static tree gp_pending_fn;
static struct gp_regscope *gp_file_scope;
static vec<struct gp_regscope *> gp_fn_scopes;
static bool gp_any_fn;

struct gp_pragma *gp_pragma_get(unsigned id)
{
	return id < gp_table.length() ? gp_table[id] : NULL;
}

unsigned gp_pragma_count(void)
{
	return gp_table.length();
}

bool gp_any_function_pragma(void)
{
	return gp_any_fn;
}

/* ---- locations ---------------------------------------------------------- */

location_t gp_span_location(const struct gp_pragma *p, uint32_t off, uint32_t len)
{
	int first = -1, last = -1;

	if (!p->nspans)
		return p->loc;
	if (len == 0)
		len = 1;
	for (unsigned i = 0; i < p->nspans; i++) {
		const struct gp_span *s = &p->spans[i];

		if (s->off < off + len && s->off + s->len > off) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
	}
	if (first < 0) {
		/* Between tokens or past the end ("expected ')'"): the token
		 * before that position, else the first one. */
		first = 0;
		for (unsigned i = 0; i < p->nspans; i++)
			if (p->spans[i].off <= off)
				first = (int)i;
		last = first;
	}
	location_t caret = p->spans[first].loc;
	return make_location(caret, caret, get_finish(p->spans[last].loc));
}

location_t gp_expr_location(const struct gp_pragma *p, const struct iosig_expr *e)
{
	const struct iosig_pragma *r = p->resolved ? p->resolved : p->parsed;

	if (!r)
		return p->loc;
	for (unsigned i = 0; i < r->nparams; i++) {
		const struct iosig_pragma_param *q = &r->params[i];

		if (!plugin_expr_contains(q->expr, e))
			continue;
		/* A resolved parameter keeps the offsets of the text it was
		 * written in: the sig's own, or the sigdef's it inherited. */
		for (unsigned j = 0; p->parsed && j < p->parsed->nparams; j++)
			if (p->parsed->params[j].id == q->id)
				return gp_span_location(p, e->offset, e->length);
		if (p->def)
			return gp_span_location(p->def, e->offset, e->length);
		return gp_span_location(p, e->offset, e->length);
	}
	return p->loc;
}

/* ---- tokens -> text ----------------------------------------------------- */

struct gp_text {
	char *buf;
	size_t len, cap;
	struct gp_span *spans;
	unsigned nspans, capspans;
	location_t prev_loc;      /* previous token, for spacing */
	size_t prev_len;
	bool too_long;
};

static void gp_text_append(struct gp_text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > GP_MAX_TEXT) {
		t->too_long = true;
		return;
	}
	if (t->len + n + 1 > t->cap) {
		t->cap = MAX(t->cap * 2, t->len + n + 1);
		t->buf = XRESIZEVEC(char, t->buf, t->cap);
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* True when the previous token ended right where this one starts, in the
 * text it was spelt in (the macro definition for expanded tokens). */
static bool gp_adjacent(const struct gp_text *t, location_t loc)
{
	expanded_location a, b;

	if (!t->nspans)
		return true;
	a = expand_location(linemap_resolve_location(line_table, t->prev_loc,
						     LRK_SPELLING_LOCATION, NULL));
	b = expand_location(linemap_resolve_location(line_table, loc, LRK_SPELLING_LOCATION,
						     NULL));
	return a.file && b.file && strcmp(a.file, b.file) == 0 && a.line == b.line &&
	       (size_t)b.column == (size_t)a.column + t->prev_len;
}

/* Appends one token's spelling with its span. */
static void gp_text_token(struct gp_text *t, const char *s, size_t n, location_t loc)
{
	if (!gp_adjacent(t, loc))
		gp_text_append(t, " ", 1);
	if (t->nspans == t->capspans) {
		t->capspans = t->capspans ? t->capspans * 2 : 16;
		t->spans = XRESIZEVEC(struct gp_span, t->spans, t->capspans);
	}
	t->spans[t->nspans].off = (uint32_t)t->len;
	t->spans[t->nspans].len = (uint32_t)n;
	t->spans[t->nspans].loc = loc;
	t->nspans++;
	gp_text_append(t, s, n);
	t->prev_loc = loc;
	t->prev_len = n;
}

/* A string literal as the parser reads it: quotes and C escapes. */
static void gp_text_string(struct gp_text *t, tree str, location_t loc)
{
	const char *s = TREE_STRING_POINTER(str);
	size_t n = (size_t)TREE_STRING_LENGTH(str);
	struct gp_text lit = {};

	/* TREE_STRING_LENGTH counts the terminating NUL. */
	if (n && s[n - 1] == '\0')
		n--;
	gp_text_append(&lit, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			gp_text_append(&lit, esc, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\%03o", c);
			gp_text_append(&lit, esc, strlen(esc));
		} else {
			gp_text_append(&lit, (const char *)&s[i], 1);
		}
	}
	gp_text_append(&lit, "\"", 1);
	gp_text_token(t, lit.buf, lit.len, loc);
	if (lit.too_long)
		t->too_long = true;
	XDELETEVEC(lit.buf);
}

/* ---- numbers the front end's lexer rejects ------------------------------
 * A unit glued to a number (64KiB) is a number with a suffix that C does
 * not know: GCC's C lexer says "invalid suffix" and hands on an error,
 * C++11 and later a user-defined literal.  In a pragma the signature parser
 * says what it is and what to write instead, so for a number on a "#pragma
 * io" line the plugin keeps the lexer's error to itself and gives the
 * parser the number as written: one message, the one clang users get. */

static bool (*gp_cpp_diagnostic_next)(cpp_reader *, enum cpp_diagnostic_level,
				      enum cpp_warning_reason, rich_location *, const char *,
				      va_list *);

/* Skips blanks of text[i..len). */
static size_t gp_skip_blanks(const char *text, size_t len, size_t i)
{
	while (i < len && (text[i] == ' ' || text[i] == '\t'))
		i++;
	return i;
}

/* True if text[i..len) starts with the word w. */
static bool gp_word_at(const char *text, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);

	return i + n <= len && memcmp(text + i, w, n) == 0 &&
	       (i + n == len || !ISIDNUM(text[i + n]));
}

/* True if the source at loc is a number on a line of "#pragma io". */
static bool gp_number_in_io_pragma(location_t loc)
{
	expanded_location x;
	int line;

	if (linemap_location_from_macro_expansion_p(line_table, loc))
		return false;
	x = expand_location(loc);
	if (!x.file || x.line <= 0 || x.column <= 0)
		return false;
	char_span here = location_get_source_line(x.file, x.line);
	if (!here || (size_t)x.column > here.length() ||
	    !(ISDIGIT(here[x.column - 1]) || here[x.column - 1] == '.'))
		return false;
	/* The start of the logical line: earlier lines ending in '\\'. */
	for (line = x.line; line > 1; line--) {
		char_span prev = location_get_source_line(x.file, line - 1);

		if (!prev || prev.length() == 0 || prev[prev.length() - 1] != '\\')
			break;
	}
	char_span first = location_get_source_line(x.file, line);
	const char *text = first.get_buffer();
	size_t len = first ? first.length() : 0, i = gp_skip_blanks(text, len, 0);

	if (i >= len || text[i] != '#')
		return false;
	i = gp_skip_blanks(text, len, i + 1);
	if (!gp_word_at(text, len, i, "pragma"))
		return false;
	return gp_word_at(text, len, gp_skip_blanks(text, len, i + 6), "io");
}

/* ---- a pragma inside an expression --------------------------------------
 * GCC's parsers take a pragma only between statements and declarations;
 * inside an expression ("int fd = OPEN_TMP(p)" with a _Pragma in the macro)
 * they report an error at it and never call the handler.  The plugin adds
 * a note to that error saying what to write (the clang plugin gives the same
 * note): it recognises the io pragma by the source at the error. */

static diagnostic_finalizer_fn gp_finalizer_next;

/* True if the source at loc is the "io" of "#pragma io" or a "_Pragma" whose
 * string starts with "io". */
static bool gp_io_pragma_at(location_t loc)
{
	expanded_location x = expand_location(
		linemap_resolve_location(line_table, loc, LRK_SPELLING_LOCATION, NULL));

	if (!x.file || x.line <= 0 || x.column <= 0)
		return false;
	char_span line = location_get_source_line(x.file, x.line);
	const char *text = line.get_buffer();
	size_t len = line ? line.length() : 0, i = (size_t)x.column - 1, j;

	if (i >= len)
		return false;
	if (gp_word_at(text, len, i, "_Pragma")) {
		j = gp_skip_blanks(text, len, i + 7);
		if (j >= len || text[j] != '(')
			return false;
		j = gp_skip_blanks(text, len, j + 1);
		if (j >= len || text[j] != '"')
			return false;
		return gp_word_at(text, len, gp_skip_blanks(text, len, j + 1), "io");
	}
	if (!gp_word_at(text, len, i, "io"))
		return false;
	/* "#pragma" before it, and nothing else. */
	j = gp_skip_blanks(text, len, 0);
	if (j >= len || text[j] != '#')
		return false;
	j = gp_skip_blanks(text, len, j + 1);
	return gp_word_at(text, len, j, "pragma") && gp_skip_blanks(text, len, j + 6) == i;
}

static void gp_finalizer(diagnostic_context *context, diagnostic_info *diagnostic,
			 diagnostic_t orig_kind)
{
	location_t loc = diagnostic_location(diagnostic);

	gp_finalizer_next(context, diagnostic, orig_kind);
	/* The front end's error, not the plugin's about its own pragma. */
	if (orig_kind == DK_ERROR && !gp_busy && gp_io_pragma_at(loc)) {
		/* The note has a prefix of its own, and its lines of source none
		 * (the C++ finalizer leaves the error's prefix in place). */
		pp_destroy_prefix(context->printer);
		diagnostic_append_note(context, loc, "%s", PLUGIN_PRAGMA_IN_EXPRESSION);
		pp_flush(context->printer);
	}
}

static bool gp_cpp_diagnostic(cpp_reader *pfile, enum cpp_diagnostic_level level,
			      enum cpp_warning_reason reason, rich_location *rl, const char *msg,
			      va_list *ap)
{
	if (level == CPP_DL_ERROR && gp_number_in_io_pragma(rl->get_loc()))
		return false; /* the signature parser says it (gp_text_number) */
	return gp_cpp_diagnostic_next(pfile, level, reason, rl, msg, ap);
}

/* The number at loc as written in the source. */
static bool gp_number_spelling(location_t loc, char *buf, size_t size)
{
	expanded_location a = expand_location(get_start(loc));
	expanded_location b = expand_location(get_finish(loc));
	size_t n;

	if (!a.file || !b.file || strcmp(a.file, b.file) != 0 || a.line != b.line ||
	    a.column <= 0 || b.column < a.column)
		return false;
	char_span text = location_get_source_line(a.file, a.line);
	n = (size_t)(b.column - a.column + 1);
	if (!text || (size_t)b.column > text.length() || n >= size)
		return false;
	memcpy(buf, text.get_buffer() + a.column - 1, n);
	buf[n] = '\0';
	return true;
}

/* A number token as decimal text the parser reads back exactly (or as
 * written, when C cannot read it). */
static bool gp_text_number(struct gp_text *t, tree v, location_t loc)
{
	char buf[128];

	if (v == error_mark_node) {
		if (!gp_number_spelling(loc, buf, sizeof(buf))) {
			error_at(loc, "this number cannot appear in a signature value");
			return false;
		}
	} else if (TREE_CODE(v) == USERDEF_LITERAL) {
		snprintf(buf, sizeof(buf), "%s%s",
			 TREE_STRING_POINTER(USERDEF_LITERAL_NUM_STRING(v)),
			 IDENTIFIER_POINTER(USERDEF_LITERAL_SUFFIX_ID(v)));
	} else if (TREE_CODE(v) == INTEGER_CST) {
		print_dec(wi::to_wide(v), buf, TYPE_SIGN(TREE_TYPE(v)));
	} else if (TREE_CODE(v) == REAL_CST) {
		const REAL_VALUE_TYPE *r = TREE_REAL_CST_PTR(v);

		if (real_isinf(r) || real_isnan(r)) {
			error_at(loc, "%qE is not a finite number", v);
			return false;
		}
		real_to_decimal(buf, r, sizeof(buf), 0, 1);
	} else {
		error_at(loc, "only integer and floating constants can appear in a signature "
			 "value, not %qE", v);
		return false;
	}
	gp_text_token(t, buf, strlen(buf), loc);
	return true;
}

/*
 * Reads every token of the pragma (always to its end) into p->text and
 * p->spans.  False after reporting an error.
 */
static bool gp_lex(struct gp_pragma *p)
{
	struct gp_text t = {};
	bool ok = true;
	enum cpp_ttype type;
	location_t loc;
	tree v;

	gp_text_append(&t, "", 0);
	while ((type = pragma_lex(&v, &loc)) != CPP_EOF) {
		if (!ok)
			continue;
		switch (type) {
		case CPP_NAME:
			gp_text_token(&t, IDENTIFIER_POINTER(v), IDENTIFIER_LENGTH(v), loc);
			break;
		case CPP_NUMBER:
			ok = gp_text_number(&t, v, loc);
			break;
		case CPP_CHAR:
		case CPP_UTF8CHAR:
			error_at(loc, "character constants cannot appear in a signature value; "
				 "write the number");
			ok = false;
			break;
		case CPP_STRING:
		case CPP_UTF8STRING:
			if (!v || TREE_CODE(v) != STRING_CST) {
				ok = false; /* the front end reported it */
				break;
			}
			gp_text_string(&t, v, loc);
			break;
		case CPP_WSTRING:
		case CPP_STRING16:
		case CPP_STRING32:
		case CPP_WCHAR:
		case CPP_CHAR16:
		case CPP_CHAR32:
			error_at(loc, "wide character and string literals are not allowed in "
				 "%<#pragma io%>; write %<\"...\"%>");
			ok = false;
			break;
		case CPP_OTHER:
		case CPP_PADDING:
			error_at(loc, "stray character in %<#pragma io%>");
			ok = false;
			break;
		default: {
			const char *s = (const char *)cpp_type2name(type, 0);

			gp_text_token(&t, s, strlen(s), loc);
			break;
		}
		}
		if (t.too_long) {
			error_at(p->loc, "%<#pragma io%> is too long (more than %d bytes after "
				 "macro expansion)", GP_MAX_TEXT - 1);
			ok = false;
		}
	}
	p->text = t.buf;
	p->spans = t.spans;
	p->nspans = t.nspans;
	return ok;
}

/* ---- scopes and registries ---------------------------------------------- */

static struct gp_regscope *gp_scope_new(tree fn, struct gp_regscope *parent)
{
	struct gp_regscope *s = XCNEW(struct gp_regscope);

	s->fn = fn;
	s->parent = parent;
	s->reg = iosig_registry_new(parent ? parent->reg : NULL);
	if (!s->reg)
		fatal_error(UNKNOWN_LOCATION, "iosig: out of memory");
	return s;
}

/* The scope of fn (NULL: file scope), created on first use.  A function
 * nested in another (C++ lambda, local class) sees its enclosing
 * function's definitions. */
static struct gp_regscope *gp_scope_of(tree fn)
{
	struct gp_regscope *s;
	unsigned i;

	if (!gp_file_scope)
		gp_file_scope = gp_scope_new(NULL_TREE, NULL);
	if (!fn)
		return gp_file_scope;
	FOR_EACH_VEC_ELT(gp_fn_scopes, i, s)
		if (s->fn == fn)
			return s;
	s = gp_scope_new(fn, gp_scope_of(decl_function_context(fn)));
	gp_fn_scopes.safe_push(s);
	return s;
}

/* The sigdef record named `name` visible from scope s. */
static const struct gp_pragma *gp_find_def(const struct gp_regscope *s, const char *name)
{
	for (; s; s = s->parent) {
		struct gp_pragma *d;
		unsigned i;

		FOR_EACH_VEC_ELT(s->defs, i, d)
			if (d->parsed->name && strcmp(d->parsed->name, name) == 0)
				return d;
	}
	return NULL;
}

/* Reports a libiosig error about p at the position it names.  An earlier
 * place of the pragma text that the message spells (err->related_*)
 * becomes the place in the source file. */
static void gp_report(const struct gp_pragma *p, const struct iosig_error *err)
{
	char msg[sizeof(err->msg) + 64];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	if (err->related_line > 0 && err->related_msg_length > 0 &&
	    err->related_msg_offset + err->related_msg_length <= strlen(err->msg)) {
		expanded_location x = expand_location(linemap_resolve_location(
			line_table, gp_span_location(p, (uint32_t)err->related_offset, 1),
			LRK_MACRO_EXPANSION_POINT, NULL));

		snprintf(msg, sizeof(msg), "%.*sline %d, column %d%s",
			 (int)err->related_msg_offset, err->msg, x.line, x.column,
			 err->msg + err->related_msg_offset + err->related_msg_length);
	}
	error_at(gp_span_location(p, (uint32_t)err->offset, (uint32_t)err->length), "%s", msg);
}

/* ---- identifiers seen at the pragma --------------------------------------- */

static void gp_note_binding(struct gp_pragma *p, const struct iosig_expr *e, tree decl,
			    bool outer_local)
{
	p->bindings = XRESIZEVEC(struct gp_binding, p->bindings, p->nbindings + 1);
	p->bindings[p->nbindings].ident = e;
	p->bindings[p->nbindings].decl = decl;
	p->bindings[p->nbindings].outer_local = outer_local;
	p->nbindings++;
	if (decl)
		gp_keep_tree(decl);
}

/*
 * Marks what the identifiers of a value name as used, so that a variable
 * read only by a pragma draws no -Wunused-variable/-but-set warning, and
 * remembers enumerators and namespace members.  Names that are not visible here are resolved (or
 * reported) at the call.
 */
static void gp_mark_idents(struct gp_pragma *p, const struct iosig_expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case IOSIG_EXPR_IDENT: {
		tree id = maybe_get_identifier(e->text);
		tree d = id ? lookup_name(id) : NULL_TREE;

		if (!d) {
			if (current_function_decl != gp_pending_fn) {
				gp_pending_names.truncate(0);
				gp_pending_fn = current_function_decl;
			}
			if (gp_pending_fn)
				gp_pending_names.safe_push(get_identifier(e->text));
			break;
		}
		if (VAR_P(d) || TREE_CODE(d) == PARM_DECL || TREE_CODE(d) == FUNCTION_DECL) {
			tree ctx = DECL_CONTEXT(d);

			TREE_USED(d) = 1;
			if (TREE_CODE(d) != FUNCTION_DECL && mark_exp_read)
				mark_exp_read(d);
			if (!ctx || TREE_CODE(ctx) == NAMESPACE_DECL ||
			    TREE_CODE(ctx) == TRANSLATION_UNIT_DECL)
				gp_note_binding(p, e, d, false);
			else if (TREE_CODE(ctx) == FUNCTION_DECL && ctx != current_function_decl)
				gp_note_binding(p, e, NULL_TREE, true);
		} else if (TREE_CODE(d) == CONST_DECL && DECL_INITIAL(d) &&
			   TREE_CODE(DECL_INITIAL(d)) == INTEGER_CST) {
			gp_note_binding(p, e, d, false);
		}
		break;
	}
	case IOSIG_EXPR_MEMBER:
		gp_mark_idents(p, e->lhs);
		break;
	default:
		gp_mark_idents(p, e->lhs);
		gp_mark_idents(p, e->rhs);
		for (unsigned i = 0; i < e->nargs; i++)
			gp_mark_idents(p, e->args[i]);
		break;
	}
}

void gp_finish_decl(void *gcc_data, void *)
{
	tree d = (tree)gcc_data;
	unsigned i;
	tree id;

	if (gp_pending_names.is_empty() || !d || (!VAR_P(d) && TREE_CODE(d) != PARM_DECL))
		return;
	if (current_function_decl != gp_pending_fn) {
		gp_pending_names.truncate(0);
		return;
	}
	FOR_EACH_VEC_ELT(gp_pending_names, i, id)
		if (DECL_NAME(d) == id) {
			TREE_USED(d) = 1;
			if (mark_exp_read)
				mark_exp_read(d);
		}
}

/* Canonical text and slots of `pr` into p. */
static bool gp_canonicalize(struct gp_pragma *p, const struct iosig_pragma *pr)
{
	size_t size = 256;
	int r;

	for (;;) {
		p->canon = XRESIZEVEC(char, p->canon, size);
		r = iosig_pragma_canonical(pr, p->canon, size, p->slots, IOSIG_P_COUNT,
					   &p->nslots);
		if (r != -ENOSPC || size >= 4 * GP_MAX_TEXT)
			break;
		size *= 2;
	}
	if (r < 0) {
		error_at(p->loc, "cannot build the canonical text of this %qs (%s)",
			 plugin_kind_name(p->kind), xstrerror(-r));
		return false;
	}
	for (unsigned i = 0; i < p->nslots; i++)
		gp_mark_idents(p, p->slots[i]);
	return true;
}

/* ---- markers ---------------------------------------------------------- */

/* Appends the marker statement of p to the current statement list. */
static bool gp_add_marker(struct gp_pragma *p)
{
	location_t saved = input_location;
	tree m;

	if (!current_stmt_tree() || !cur_stmt_list) {
		error_at(p->loc, "%qs is not allowed here; write it on its own line in a block, "
			 "right before the statement with the call", plugin_kind_name(p->kind));
		return false;
	}
	m = build1_loc(p->loc, NOP_EXPR, void_type_node,
		       build_int_cst(integer_type_node, (HOST_WIDE_INT)p->id));
	/* The C++ front end needs an expression statement (a bare
	 * expression would vanish when a template is instantiated); the
	 * instantiation copies its location, which bind.cc checks. */
	input_location = p->loc;
	if (gp_is_cxx())
		finish_expr_stmt(m);
	else
		add_stmt(m);
	input_location = saved;
	p->marked = true;
	gp_any_fn = true;
	return true;
}

/* ---- the handler ---------------------------------------------------------- */

/* A file-scope jobwide: a constructor function calls iosig_jobwide. */
static void gp_file_jobwide(struct gp_pragma *p)
{
	tree values[IOSIG_P_COUNT];
	struct gp_scope scope = {};

	if (gp_foreign_errors())
		return; /* no code will be generated */
	scope.at = p->loc;
	for (unsigned i = 0; i < p->nslots; i++) {
		values[i] = gp_lower_slot(p, i, &scope);
		if (!values[i])
			return;
	}
	cgraph_build_static_cdtor('I', gp_build_jobwide_call(p, values, p->nslots),
				  DEFAULT_INIT_PRIORITY);
	p->nbound++;
	if (gp_opts.verbose)
		inform(p->loc, "%qs at file scope runs before %<main%> (constructor)",
		       plugin_kind_name(p->kind));
}

static void gp_handle_sigdef(struct gp_pragma *p, struct gp_regscope *scope)
{
	struct iosig_error err = {};
	int r = iosig_registry_define(scope->reg, p->parsed, &err);

	if (r == -EEXIST) {
		const struct gp_pragma *old = gp_find_def(scope, p->parsed->name);

		gp_report(p, &err);
		if (old)
			inform(old->loc, "%qs was defined here", p->parsed->name);
		return;
	}
	if (r < 0) {
		gp_report(p, &err);
		return;
	}
	scope->defs.safe_push(p);
	p->ok = true;
}

static void gp_handle_sig(struct gp_pragma *p, struct gp_regscope *scope)
{
	static const struct plugin_unbound_info file_scope = { PLUGIN_UNBOUND_FILE_SCOPE };
	struct iosig_error err = {};
	int r;

	if (p->parsed->name)
		p->def = gp_find_def(scope, p->parsed->name);
	r = iosig_pragma_resolve(scope->reg, p->parsed, &p->resolved, &err);
	if (r < 0) {
		gp_report(p, &err);
		return;
	}
	if (!gp_canonicalize(p, p->resolved))
		return;
	p->ok = true;
	if (!p->in_function)
		gp_report_unbound(p->loc, &file_scope);
	else
		p->ok = gp_add_marker(p);
}

static void gp_handle_jobwide(struct gp_pragma *p)
{
	struct iosig_error err = {};
	int r = iosig_pragma_resolve(NULL, p->parsed, &p->resolved, &err);

	if (r < 0) {
		gp_report(p, &err);
		return;
	}
	if (!gp_canonicalize(p, p->resolved))
		return;
	p->ok = true;
	if (p->in_function)
		p->ok = gp_add_marker(p);
	else
		gp_file_jobwide(p);
}

/* ---- openers ---------------------------------------------------------- */

const struct gp_opener *gp_opener_of(tree fndecl, location_t at)
{
	struct gp_opener *o;
	unsigned i;

	FOR_EACH_VEC_ELT(gp_openers, i, o)
		if (o->decl == fndecl &&
		    (at == UNKNOWN_LOCATION ||
		     linemap_compare_locations(
			     line_table,
			     linemap_resolve_location(line_table, o->loc,
						      LRK_MACRO_EXPANSION_POINT, NULL),
			     linemap_resolve_location(line_table, at, LRK_MACRO_EXPANSION_POINT,
						      NULL)) >= 0))
			return o;
	return NULL;
}

/* True if parameter type t is char * or const char *. */
static bool gp_char_pointer_p(tree t)
{
	return POINTER_TYPE_P(t) && TYPE_MAIN_VARIANT(TREE_TYPE(t)) == char_type_node;
}

/* Checks the declaration of the opener o against what the pragma p says;
 * false after reporting an error. */
static bool gp_check_opener(const struct gp_pragma *p, const struct plugin_opener *o, tree d)
{
	location_t at = gp_span_location(p, o->name_off, o->name_len);
	tree type = TREE_TYPE(d), parm, rt = TREE_TYPE(TREE_TYPE(d));
	tree parms[65];
	unsigned n = 0;

	if (TREE_CODE(type) == METHOD_TYPE) {
		error_at(at, "%qs is a member function; an opener must be a function that is "
			 "not a member", o->name);
		return false;
	}
	if (gp_supported_function(d)) {
		error_at(at, "%qs is a supported call already: %<#pragma io sig%> describes it "
			 "without a declaration", o->name);
		return false;
	}
	if (!prototype_p(type)) {
		error_at(at, "%qs has no prototype; declare its parameters before "
			 "%<#pragma io opener%>", o->name);
		return false;
	}
	for (parm = TYPE_ARG_TYPES(type); parm && parm != void_list_node && n < 64;
	     parm = TREE_CHAIN(parm))
		parms[++n] = TREE_VALUE(parm);
	for (int k = 0; k < PLUGIN_OPENER_NARGS; k++) {
		unsigned a = o->arg[k];
		location_t l = gp_span_location(p, o->arg_off[k], o->arg_len[k]);

		if (!a)
			continue;
		if (a > n) {
			error_at(l, "%qs has %u parameter%s; %s(%u) names none", o->name, n,
				 n == 1 ? "" : "s", plugin_opener_arg_names[k], a);
			return false;
		}
		if (k == PLUGIN_OPENER_PATH || k == PLUGIN_OPENER_MODE) {
			if (!gp_char_pointer_p(parms[a])) {
				error_at(l, "%s(%u) must name a parameter of type %<char *%> or "
					 "%<const char *%>; parameter %u of %qs has type %qT",
					 plugin_opener_arg_names[k], a, a, o->name, parms[a]);
				return false;
			}
		} else if (!INTEGRAL_TYPE_P(parms[a])) {
			error_at(l, "%s(%u) must name an integer parameter; parameter %u of %qs has "
				 "type %qT", plugin_opener_arg_names[k], a, a, o->name, parms[a]);
			return false;
		}
	}
	if (!VOID_TYPE_P(rt) && !POINTER_TYPE_P(rt) && !INTEGRAL_TYPE_P(rt)) {
		error_at(at, "an opener returns a pointer, an integer or nothing; %qs returns %qT",
			 o->name, rt);
		return false;
	}
	return true;
}

/* '#pragma io opener(NAME, path(N), ...)': from here on, calls of NAME are
 * supported calls. */
static void gp_handle_opener(struct gp_pragma *p)
{
	struct plugin_opener o;
	struct iosig_error err;
	struct gp_opener *prev, *rec;
	unsigned i;
	tree d;

	if (plugin_opener_parse(p->text, strlen(p->text), &o, &err) < 0) {
		gp_report(p, &err);
		return;
	}
	if (p->in_function) {
		error_at(p->loc, "%<#pragma io opener%> declares a function of the program: write "
			 "it at file (or namespace) scope, after the declaration of the function");
		return;
	}
	d = lookup_name(get_identifier(o.name));
	if (!d) {
		error_at(gp_span_location(p, o.name_off, o.name_len),
			 "%qs is not declared here; declare the function before "
			 "%<#pragma io opener%>", o.name);
		return;
	}
	if (TREE_CODE(d) != FUNCTION_DECL) {
		error_at(gp_span_location(p, o.name_off, o.name_len),
			 TREE_CODE(d) == OVERLOAD || TREE_CODE(d) == TEMPLATE_DECL
				 ? G_("%qs is overloaded or a template; an opener must be a "
				      "function declared once")
				 : G_("%qs is not a function"),
			 o.name);
		return;
	}
	if (!gp_check_opener(p, &o, d))
		return;
	FOR_EACH_VEC_ELT(gp_openers, i, prev)
		if (prev->decl == d) {
			if (memcmp(prev->o.arg, o.arg, sizeof(o.arg)) ||
			    strcmp(prev->o.fmode, o.fmode)) {
				error_at(p->loc, "%qs is an opener already, with other arguments",
					 o.name);
				inform(prev->loc, "declared here");
			}
			return;
		}
	rec = XCNEW(struct gp_opener);
	rec->decl = d;
	rec->o = o;
	rec->loc = p->loc;
	gp_keep_tree(d);
	gp_openers.safe_push(rec);
	if (gp_opts.verbose)
		inform(p->loc, "calls of %qs after this are supported calls", o.name);
}

static void gp_handle_one(void);

static void gp_handle_pragma(cpp_reader *)
{
	int before = errorcount;

	gp_busy++;
	gp_handle_one();
	gp_busy--;
	gp_own_errors += errorcount - before;
}

static void gp_handle_one(void)
{
	struct gp_pragma *p = XCNEW(struct gp_pragma);
	tree fn = current_function_decl;
	struct iosig_error err = {};
	int r;

	p->id = gp_table.length();
	p->loc = input_location;
	p->in_function = fn != NULL_TREE;
	gp_table.safe_push(p);
	if (!gp_lex(p))
		return;
	if (plugin_is_opener(p->text, strlen(p->text))) {
		gp_handle_opener(p);
		return;
	}
	r = iosig_pragma_parse(p->text, strlen(p->text), &p->parsed, &err);
	if (r < 0) {
		gp_report(p, &err);
		return;
	}
	p->kind = p->parsed->kind;
	if (fn && !gp_is_cxx() && decl_function_context(fn)) {
		error_at(p->loc, "%qs is not supported in a nested function; move the call "
			 "into an ordinary function", plugin_kind_name(p->kind));
		return;
	}
	switch (p->kind) {
	case IOSIG_PRAGMA_SIGDEF:
		gp_handle_sigdef(p, gp_scope_of(fn));
		break;
	case IOSIG_PRAGMA_SIG:
		gp_handle_sig(p, gp_scope_of(fn));
		break;
	case IOSIG_PRAGMA_JOBWIDE:
		gp_handle_jobwide(p);
		break;
	}
}

void gp_register_pragmas(void *, void *)
{
	cpp_callbacks *cb = cpp_get_callbacks(parse_in);

	if (cb->diagnostic != gp_cpp_diagnostic) {
		gp_cpp_diagnostic_next = cb->diagnostic;
		cb->diagnostic = gp_cpp_diagnostic;
	}
	if (diagnostic_finalizer(global_dc) != gp_finalizer) {
		gp_finalizer_next = diagnostic_finalizer(global_dc);
		diagnostic_finalizer(global_dc) = gp_finalizer;
	}
	/* Before the first line is read, also with -E: a -U on the command
	 * line comes after it and wins. */
	cpp_define(parse_in, PLUGIN_IOSIG_DEFINE);
	c_register_pragma_with_expansion(NULL, "io", gp_handle_pragma);
}

/* ---- end of the translation unit ---------------------------------------- */

static void gp_scope_free(struct gp_regscope *s)
{
	if (!s)
		return;
	iosig_registry_free(s->reg);
	s->defs.release();
	XDELETE(s);
}

static void gp_pragmas_finish_1(void);

void gp_pragmas_finish(void *, void *)
{
	gp_busy++;
	gp_pragmas_finish_1();
	gp_busy--;
}

static void gp_pragmas_finish_1(void)
{
	struct gp_opener *o;
	struct gp_pragma *p;
	unsigned i;

	/* Every function-scope pragma of C has been seen by now (C has no
	 * templates); in C++ an unseen one is in a template that was never
	 * instantiated, which generates no code. */
	if (!seen_error() && !gp_is_cxx())
		FOR_EACH_VEC_ELT(gp_table, i, p)
			if (p->marked && !p->seen)
				error_at(p->loc, "%qs was not found in the function body; it "
					 "was not applied (please report this as an iosig bug)",
					 plugin_kind_name(p->kind));
	FOR_EACH_VEC_ELT(gp_table, i, p) {
		iosig_pragma_free(p->parsed);
		iosig_pragma_free(p->resolved);
		XDELETEVEC(p->text);
		XDELETEVEC(p->spans);
		XDELETEVEC(p->canon);
		XDELETEVEC(p->bindings);
		XDELETE(p);
	}
	gp_table.release();
	FOR_EACH_VEC_ELT(gp_openers, i, o)
		XDELETE(o);
	gp_openers.release();
	gp_pending_names.release();
	gp_pending_fn = NULL_TREE;
	/* Children before parents: a registry's parent must outlive it. */
	for (i = gp_fn_scopes.length(); i-- > 0;)
		gp_scope_free(gp_fn_scopes[i]);
	gp_fn_scopes.release();
	gp_scope_free(gp_file_scope);
	gp_file_scope = NULL;
	gp_any_fn = false;
	gp_calls_finish();
}
