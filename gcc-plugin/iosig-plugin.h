/* SPDX-License-Identifier: MIT */
/*
 * iosig-plugin.h - what the files of the GCC plugin share (docs/design.md
 * §3 and §4).  Private to gcc-plugin/; every non-static name starts with gp_.
 *
 *   plugin.cc   plugin_init, options, help, version check, callbacks
 *   pragma.cc   #pragma io: tokens -> text, libiosig parser, registries,
 *               the statement marker, file-scope jobwide
 *   bind.cc     per function (PLUGIN_PRE_GENERICIZE): find the markers,
 *               bind each pragma to the first supported call of the
 *               statement after it, rewrite the calls
 *   calls.cc    which calls are supported, the site descriptors, the
 *               libiosig entry points, the rewrites
 *   lower.cc    signature value expressions -> GENERIC evaluated at the
 *               call site, with name lookup in the call's scopes
 */
#ifndef IOSIG_GCC_PLUGIN_H
#define IOSIG_GCC_PLUGIN_H

#include "gcc-common.h"

#include "iosig.h"
#include "plugin_shared.h"

/* What an unbound pragma (no supported call follows it) gets. */
enum gp_unbound {
	GP_UNBOUND_IGNORE,
	GP_UNBOUND_WARNING,
	GP_UNBOUND_ERROR,
};

/* -fplugin-arg-iosig-* */
struct gp_options {
	bool verbose;              /* a note per pragma saying what it bound to */
	enum gp_unbound unbound;   /* unbound=error|warning|ignore */
};

extern struct gp_options gp_opts;

/* Errors the plugin itself reported (in its pragma handler and per
 * function), so that it can tell whether the front end found others. */
extern int gp_own_errors;
/* Non-zero while the plugin's own callbacks run (the diagnostics then are
 * its own). */
extern int gp_busy;

/* True if the compilation has errors that are not the plugin's: the code
 * may be erroneous, no code will be generated. */
static inline bool gp_foreign_errors(void)
{
	return errorcount > gp_own_errors;
}

/* One token of a pragma: its span in the text given to the parser and
 * where it came from in the source. */
struct gp_span {
	uint32_t off;
	uint32_t len;
	location_t loc;
};

/*
 * What an identifier of a value named where the pragma was written, when
 * the call's scopes cannot tell: an enumerator, or a variable or function
 * of a namespace (the call site only sees the global namespace).
 */
struct gp_binding {
	const struct iosig_expr *ident;
	tree decl;          /* kept alive by the GC roots of calls.cc */
	bool outer_local;   /* a local of an enclosing function (a lambda that
			       does not capture it) */
};

/*
 * One #pragma io, recorded when the front end handles it.  Function-scope
 * pragmas leave a marker statement carrying `id`; PRE_GENERICIZE finds the
 * markers (once per instantiation for templates) and binds them.
 */
struct gp_pragma {
	unsigned id;                      /* index in the pragma table, marker payload */
	enum iosig_pragma_kind kind;
	location_t loc;                   /* the pragma ("io" token) */
	bool in_function;                 /* written inside a function body */
	bool ok;                          /* parsed and resolved without error */
	bool marked;                      /* a marker statement was added */
	bool seen;                        /* its marker was found in a function */
	unsigned nbound;                  /* calls it was bound to (template instances) */
	bool reported;                    /* its unbound diagnostic was given */
	char *text;                       /* what the parser read: "sig size_per_io(n)" */
	struct gp_span *spans;            /* one per token, in text order */
	unsigned nspans;
	struct iosig_pragma *parsed;      /* as written */
	struct iosig_pragma *resolved;    /* sig: with its definition merged */
	const struct gp_pragma *def;      /* sig with name(): the sigdef used */
	char *canon;                      /* canonical text with $N for slots */
	const struct iosig_expr *slots[IOSIG_P_COUNT]; /* slot N's expression */
	unsigned nslots;
	struct gp_binding *bindings;      /* names resolved at the pragma */
	unsigned nbindings;
};

/* A function declared with '#pragma io opener': its calls are supported
 * calls from the pragma on. */
struct gp_opener {
	tree decl;                   /* the FUNCTION_DECL (kept by gp_keep_tree) */
	struct plugin_opener o;      /* what the pragma says */
	location_t loc;              /* the pragma */
};

/* ---- pragma.cc ---- */

void gp_register_pragmas(void *gcc_data, void *user_data);
/* Pragma number id, NULL if there is none. */
struct gp_pragma *gp_pragma_get(unsigned id);
unsigned gp_pragma_count(void);
/* True when some pragma was written inside a function: only then do
 * functions need looking at (a file without pragmas compiles unchanged). */
bool gp_any_function_pragma(void);
/* Source range of the bytes [off, off+len) of p's text. */
location_t gp_span_location(const struct gp_pragma *p, uint32_t off, uint32_t len);
/* Source range of an expression of p (a slot or a node below one). */
location_t gp_expr_location(const struct gp_pragma *p, const struct iosig_expr *e);
/* The opener declaration of fndecl in force at `at` (a call), or NULL. */
const struct gp_opener *gp_opener_of(tree fndecl, location_t at);
/* PLUGIN_FINISH_DECL: marks used a variable that a value names and that is
 * declared after its pragma. */
void gp_finish_decl(void *gcc_data, void *user_data);
/* End of the translation unit: reports pragmas whose marker was lost and
 * frees everything. */
void gp_pragmas_finish(void *gcc_data, void *user_data);

/* ---- bind.cc ---- */

void gp_pre_genericize(void *gcc_data, void *user_data);
/* Reports the unbound pragma at loc as unbound= says (nothing after errors
 * of the front end). */
void gp_report_unbound(location_t loc, const struct plugin_unbound_info *u);

/* ---- lower.cc ---- */

/*
 * Where names in a value are looked up: the blocks enclosing the call
 * (innermost last), the function's parameters and, for a member function,
 * the members of *this; then file scope.  fn is NULL at file scope.
 */
struct gp_scope {
	tree fn;
	tree *binds;           /* BIND_EXPRs from the outermost to the innermost */
	unsigned nbinds;
	location_t at;         /* the call: only names declared before it count */
};

/* The value of slot `slot` of p as a double, evaluated where the tree is
 * placed; NULL_TREE after reporting an error. */
tree gp_lower_slot(const struct gp_pragma *p, unsigned slot, const struct gp_scope *scope);

/* ---- calls.cc ---- */

/* A supported call found in a function body. */
struct gp_call {
	tree *slot;                 /* where the call expression lives */
	tree fndecl;                /* the function called */
	const struct gp_callee *callee;
	const struct gp_opener *opener; /* a declared opener, or NULL */
	const char *name;           /* symbol replaced: "open", "fopen64" ..., the opener */
	location_t loc;
};

/* If *tp is a call of a supported function, describe it in *ret and
 * return true. */
bool gp_classify_call(tree *tp, struct gp_call *ret);
/* The libiosig function a supported call becomes ("iosig_open"), or the one
 * called before it ("iosig_prepare" for C++ streams, "iosig_opener_begin"
 * for openers). */
const char *gp_call_replacement(const struct gp_call *call);
/* True if the call stays and libiosig is called before it. */
bool gp_call_stays(const struct gp_call *call);
/* True if fndecl is one of the supported C library functions. */
bool gp_supported_function(tree fndecl);
/* Rewrites the call with the site of p and its run-time values (doubles).
 * False after reporting an error (the call is then left unchanged). */
bool gp_rewrite_call(const struct gp_pragma *p, struct gp_call *call, tree *values,
		     unsigned nvalues);
/* A call of iosig_jobwide for p with its values. */
tree gp_build_jobwide_call(const struct gp_pragma *p, tree *values, unsigned nvalues);
/* GC roots of the trees the plugin keeps between functions. */
extern const struct ggc_root_tab gp_ggc_roots[];
/* Keeps t alive until the end of the translation unit. */
void gp_keep_tree(tree t);
/* Forgets per-translation-unit state. */
void gp_calls_finish(void);

#endif /* IOSIG_GCC_PLUGIN_H */
