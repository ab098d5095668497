/* SPDX-License-Identifier: MIT */
/*
 * calls.cc - the calls a signature can describe and what they become
 * (docs/design.md §3 and §4, iosig.h "Compiler-generated calls").
 *
 *   open(p, f[, m])          -> iosig_open(&site, p, f, m or 0, values...)
 *   open64, openat, creat, fopen, fopen64, freopen: likewise
 *   MPI_File_open(c, p, a, i, fh)
 *                            -> iosig_MPI_File_open(&site, c, p, a, i, fh, values...)
 *                               (libiosig-mpi, iosig_mpi.h)
 *   std::[io]fstream ctor/open(path[, mode])
 *                            -> the path argument becomes
 *                               (iosig_prepare(&site, AT_FDCWD, c_str, flags, values...), path)
 *                               with the path evaluated once
 *   an opener f(.., path, ..) (#pragma io opener)
 *                            -> (r = f(.., iosig_opener_begin(&site, dirfd, path, flags,
 *                                      fmode, values...), ..),
 *                                iosig_opener_end(&site), r)
 *                               with the arguments libiosig reads evaluated once
 *
 * A call is recognised by the declaration it calls, not by its spelling:
 * with _FILE_OFFSET_BITS=64 glibc declares fopen with the assembler name
 * fopen64, and the replaced symbol is the one the program would have
 * called.  _FORTIFY_SOURCE wrappers (open calling __open_2) are inline
 * functions that are only expanded later, so the call seen here is still
 * open.  The site descriptor is a static read-only object per rewritten
 * call.
 */
#include "iosig-plugin.h"

#include <fcntl.h>


/* How the arguments of a supported call are laid out. */
enum gp_shape {
	GP_OPEN,    /* path, flags[, mode] */
	GP_OPENAT,  /* dirfd, path, flags[, mode] */
	GP_CREAT,   /* path, mode */
	GP_FOPEN,   /* path, mode string */
	GP_FREOPEN, /* path, mode string, stream */
	GP_STREAM,  /* C++ stream constructor or open(): this, path[, openmode] */
	GP_MPI,     /* MPI_File_open: comm, path, amode, info, fh */
	GP_OPENER,  /* a declared opener: the arguments its declaration names */
};

/* Trees kept between functions (GC roots). */
enum gp_tree_index {
	GP_T_OPEN, GP_T_OPEN64, GP_T_OPENAT, GP_T_CREAT, GP_T_FOPEN, GP_T_FOPEN64,
	GP_T_FREOPEN, GP_T_PREPARE, GP_T_JOBWIDE, GP_T_MPI_FILE_OPEN, GP_T_OPENER_BEGIN,
	GP_T_OPENER_END,
	GP_T_SITE_TYPE,       /* struct iosig_site */
	GP_T_STREAM_FLAGS,    /* openmode bits -> open(2) flags table */
	GP_T_KEPT,            /* TREE_LIST of trees kept for pragmas (gp_keep_tree) */
	GP_T_COUNT
};

static tree gp_trees[GP_T_COUNT];

const struct ggc_root_tab gp_ggc_roots[] = {
	{ &gp_trees[0], GP_T_COUNT, sizeof(gp_trees[0]), &gt_ggc_mx_tree_node,
	  &gt_pch_nx_tree_node },
	LAST_GGC_ROOT_TAB
};

struct gp_callee {
	const char *symbol;   /* the C library symbol called */
	const char *entry;    /* the libiosig replacement */
	enum gp_tree_index decl;
	enum gp_shape shape;
	unsigned min_args, max_args;
	bool lfs_alias;       /* a ...64 symbol without its own libiosig entry: the
				 same function as the plain one where off_t has 64 bits */
};

static const struct gp_callee gp_callees[] = {
	{ "open", "iosig_open", GP_T_OPEN, GP_OPEN, 2, 3, false },
	{ "open64", "iosig_open64", GP_T_OPEN64, GP_OPEN, 2, 3, false },
	{ "openat", "iosig_openat", GP_T_OPENAT, GP_OPENAT, 3, 4, false },
	{ "openat64", "iosig_openat", GP_T_OPENAT, GP_OPENAT, 3, 4, true },
	{ "creat", "iosig_creat", GP_T_CREAT, GP_CREAT, 2, 2, false },
	{ "creat64", "iosig_creat", GP_T_CREAT, GP_CREAT, 2, 2, true },
	{ "fopen", "iosig_fopen", GP_T_FOPEN, GP_FOPEN, 2, 2, false },
	{ "fopen64", "iosig_fopen64", GP_T_FOPEN64, GP_FOPEN, 2, 2, false },
	{ "freopen", "iosig_freopen", GP_T_FREOPEN, GP_FREOPEN, 3, 3, false },
	{ "freopen64", "iosig_freopen", GP_T_FREOPEN, GP_FREOPEN, 3, 3, true },
	{ "MPI_File_open", "iosig_MPI_File_open", GP_T_MPI_FILE_OPEN, GP_MPI, 5, 5, false },
};

/* The C++ streams; `implied` is the openmode bit the class adds. */
static const struct {
	const char *cls;     /* class template in namespace std */
	const char *implied; /* "_S_in", "_S_out" or NULL */
	const char *ctor;    /* site->call of a constructor */
	const char *open;    /* site->call of open() */
} gp_streams[] = {
	{ "basic_fstream", NULL, "fstream", "fstream::open" },
	{ "basic_ifstream", "_S_in", "ifstream", "ifstream::open" },
	{ "basic_ofstream", "_S_out", "ofstream", "ofstream::open" },
};

static const struct gp_callee gp_stream_callee = {
	"std::basic_fstream", "iosig_prepare", GP_T_PREPARE, GP_STREAM, 2, 3, false
};

static const struct gp_callee gp_opener_callee = {
	"opener", "iosig_opener_begin", GP_T_OPENER_BEGIN, GP_OPENER, 0, 0, false
};

/* ---- recognising calls -------------------------------------------------- */

static const char *gp_asm_name(tree fndecl)
{
	const char *s = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));

	return *s == '*' ? s + 1 : s; /* a user asm label */
}

/* True if decl is declared at file scope or in C++'s global namespace. */
static bool gp_global_scope_p(tree decl)
{
	tree ctx = DECL_CONTEXT(decl);

	if (!ctx || TREE_CODE(ctx) == TRANSLATION_UNIT_DECL)
		return true;
	return TREE_CODE(ctx) == NAMESPACE_DECL &&
	       (!DECL_CONTEXT(ctx) || TREE_CODE(DECL_CONTEXT(ctx)) == TRANSLATION_UNIT_DECL);
}

static bool gp_name_is(tree id, const char *s)
{
	return id && TREE_CODE(id) == IDENTIFIER_NODE && strcmp(IDENTIFIER_POINTER(id), s) == 0;
}

/* True if the record type t is std::<name> (or in an inline namespace of
 * std). */
static bool gp_std_class_p(tree t, const char *name)
{
	tree decl = TYPE_NAME(t);
	tree ctx;

	if (!decl || TREE_CODE(decl) != TYPE_DECL || !gp_name_is(DECL_NAME(decl), name))
		return false;
	for (ctx = DECL_CONTEXT(decl); ctx && TREE_CODE(ctx) == NAMESPACE_DECL;
	     ctx = DECL_CONTEXT(ctx))
		if (gp_name_is(DECL_NAME(ctx), "std"))
			return gp_global_scope_p(ctx);
	return false;
}

/* The c_str() member function of a string-like class, or NULL_TREE. */
static tree gp_c_str(tree type)
{
	if (!RECORD_OR_UNION_TYPE_P(type) || !COMPLETE_TYPE_P(type))
		return NULL_TREE;
	for (tree f = TYPE_FIELDS(type); f; f = DECL_CHAIN(f))
		if (TREE_CODE(f) == FUNCTION_DECL && gp_name_is(DECL_NAME(f), "c_str") &&
		    TREE_CODE(TREE_TYPE(f)) == METHOD_TYPE &&
		    POINTER_TYPE_P(TREE_TYPE(TREE_TYPE(f))))
			return f;
	return NULL_TREE;
}

/* True if t is a path argument of a stream: const char *, or a reference
 * to a class with c_str() (std::string, std::filesystem::path). */
static bool gp_stream_path_p(tree arg)
{
	tree t = TREE_TYPE(arg);

	if (!POINTER_TYPE_P(t))
		return false;
	t = TREE_TYPE(t);
	if (TYPE_MAIN_VARIANT(t) == char_type_node)
		return true;
	return gp_c_str(TYPE_MAIN_VARIANT(t)) != NULL_TREE;
}

static unsigned gp_call_nargs(tree call)
{
	return TREE_CODE(call) == CALL_EXPR ? (unsigned)call_expr_nargs(call)
					    : (unsigned)GP_AGGR_INIT_NARGS(call);
}

static tree *gp_call_arg_ptr(tree call, unsigned i)
{
	return TREE_CODE(call) == CALL_EXPR ? &CALL_EXPR_ARG(call, i)
					    : &GP_AGGR_INIT_ARG(call, i);
}

static bool gp_classify_stream(tree fndecl, tree call, struct gp_call *ret)
{
	tree cls = DECL_CONTEXT(fndecl);

	if (!cls || !RECORD_OR_UNION_TYPE_P(cls))
		return false;
	if (!DECL_CXX_CONSTRUCTOR_P(fndecl) && !gp_name_is(DECL_NAME(fndecl), "open"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(gp_streams); i++) {
		if (!gp_std_class_p(cls, gp_streams[i].cls))
			continue;
		if (gp_call_nargs(call) < 2 || gp_call_nargs(call) > 3 ||
		    !gp_stream_path_p(*gp_call_arg_ptr(call, 1)))
			return false;
		ret->callee = &gp_stream_callee;
		ret->name = DECL_CXX_CONSTRUCTOR_P(fndecl) ? gp_streams[i].ctor
							    : gp_streams[i].open;
		return true;
	}
	return false;
}

/* The C library function fndecl is, if it is one of the supported ones. */
static const struct gp_callee *gp_library_callee(tree fndecl)
{
	if (!DECL_NAME(fndecl) || !TREE_PUBLIC(fndecl) || !gp_global_scope_p(fndecl))
		return NULL;
	/* The library symbol: its declared name, or name64 when glibc
	 * redirects it (_FILE_OFFSET_BITS=64).  A C++ function of the same
	 * name has a mangled assembler name and does not match. */
	const char *name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
	size_t len = strlen(name);

	if (len > 16)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(gp_callees); i++) {
		if (strncmp(gp_callees[i].symbol, name, len) != 0 ||
		    (gp_callees[i].symbol[len] && strcmp(gp_callees[i].symbol + len, "64") != 0))
			continue;
		if (strcmp(gp_asm_name(fndecl), gp_callees[i].symbol) == 0)
			return &gp_callees[i];
	}
	return NULL;
}

bool gp_classify_call(tree *tp, struct gp_call *ret)
{
	tree call = *tp, fndecl;

	if (TREE_CODE(call) == CALL_EXPR) {
		fndecl = get_callee_fndecl(call);
	} else if (TREE_CODE(call) == AGGR_INIT_EXPR) {
		tree fn = GP_AGGR_INIT_FN(call);

		fndecl = TREE_CODE(fn) == ADDR_EXPR ? TREE_OPERAND(fn, 0) : NULL_TREE;
	} else {
		return false;
	}
	if (!fndecl || TREE_CODE(fndecl) != FUNCTION_DECL)
		return false;
	memset(ret, 0, sizeof(*ret));
	ret->slot = tp;
	ret->fndecl = fndecl;
	ret->loc = EXPR_LOCATION(call);
	if (TREE_CODE(TREE_TYPE(fndecl)) == METHOD_TYPE || DECL_CXX_CONSTRUCTOR_P(fndecl))
		return gp_classify_stream(fndecl, call, ret);
	if (TREE_CODE(call) != CALL_EXPR)
		return false;
	const struct gp_callee *ce = gp_library_callee(fndecl);
	if (ce) {
		unsigned n = (unsigned)call_expr_nargs(call);
		unsigned path = ce->shape == GP_OPENAT || ce->shape == GP_MPI;

		if (n < ce->min_args || n > ce->max_args ||
		    !POINTER_TYPE_P(TREE_TYPE(CALL_EXPR_ARG(call, path))))
			return false;
		ret->callee = ce;
		ret->name = ce->symbol;
		return true;
	}
	const struct gp_opener *o = gp_opener_of(fndecl, ret->loc);
	if (o) {
		for (int k = 0; k < PLUGIN_OPENER_NARGS; k++)
			if (o->o.arg[k] > (unsigned)call_expr_nargs(call))
				return false;
		ret->callee = &gp_opener_callee;
		ret->opener = o;
		ret->name = o->o.name;
		return true;
	}
	return false;
}

const char *gp_call_replacement(const struct gp_call *call)
{
	return call->callee->entry;
}

bool gp_call_stays(const struct gp_call *call)
{
	return call->callee->shape == GP_STREAM || call->callee->shape == GP_OPENER;
}

bool gp_supported_function(tree fndecl)
{
	return gp_library_callee(fndecl) != NULL;
}

/* ---- declarations of libiosig ----------------------------------------- */

static tree gp_const_char_ptr(void)
{
	return build_pointer_type(build_qualified_type(char_type_node, TYPE_QUAL_CONST));
}

/*
 * The declaration of a libiosig entry point: the program's own when it
 * includes <iosig.h>, else one built here with `type` (the arguments are
 * then converted to its parameter types).
 */
static tree gp_entry_decl(enum gp_tree_index idx, const char *name, tree type)
{
	tree id = get_identifier(name);
	tree d;

	if (gp_trees[idx])
		return gp_trees[idx];
	d = identifier_global_value(id);
	if (!d || TREE_CODE(d) != FUNCTION_DECL) {
		d = build_fn_decl(name, type);
		DECL_ARTIFICIAL(d) = 1;
		TREE_PUBLIC(d) = 1;
		DECL_EXTERNAL(d) = 1;
		SET_DECL_ASSEMBLER_NAME(d, id);
	}
	gp_trees[idx] = d;
	return d;
}

/* Type of the libiosig function replacing `callee`, whose call is `call`. */
static tree gp_entry_type(const struct gp_callee *callee, tree call)
{
	tree site = const_ptr_type_node, cstr = gp_const_char_ptr();
	tree mode = unsigned_type_node; /* mode_t in glibc */

	switch (callee->shape) {
	case GP_OPEN:
		return build_varargs_function_type_list(integer_type_node, site, cstr,
							integer_type_node, mode, NULL_TREE);
	case GP_OPENAT:
		return build_varargs_function_type_list(integer_type_node, site,
							integer_type_node, cstr,
							integer_type_node, mode, NULL_TREE);
	case GP_CREAT:
		return build_varargs_function_type_list(integer_type_node, site, cstr, mode,
							NULL_TREE);
	case GP_FOPEN:
		return build_varargs_function_type_list(TREE_TYPE(call), site, cstr, cstr,
							NULL_TREE);
	case GP_FREOPEN:
		return build_varargs_function_type_list(TREE_TYPE(call), site, cstr, cstr,
							TREE_TYPE(CALL_EXPR_ARG(call, 2)),
							NULL_TREE);
	case GP_STREAM:
		return build_varargs_function_type_list(integer_type_node, site,
							integer_type_node, cstr,
							integer_type_node, NULL_TREE);
	case GP_MPI:
		/* The MPI handles keep the program's own types (mpi.h). */
		return build_varargs_function_type_list(integer_type_node, site,
							TREE_TYPE(CALL_EXPR_ARG(call, 0)), cstr,
							integer_type_node,
							TREE_TYPE(CALL_EXPR_ARG(call, 3)),
							TREE_TYPE(CALL_EXPR_ARG(call, 4)), NULL_TREE);
	case GP_OPENER:
		return build_varargs_function_type_list(cstr, site, integer_type_node, cstr,
							integer_type_node, cstr, NULL_TREE);
	}
	gcc_unreachable();
}

/* A call of entry point `decl` with the fixed arguments converted to its
 * parameter types, then the values. */
static tree gp_build_entry_call(location_t loc, tree decl, tree *fixed, unsigned nfixed,
				tree *values, unsigned nvalues)
{
	tree *args = XALLOCAVEC(tree, nfixed + nvalues);
	tree parm = TYPE_ARG_TYPES(TREE_TYPE(decl));

	for (unsigned i = 0; i < nfixed; i++) {
		tree type = parm && parm != void_list_node ? TREE_VALUE(parm) : NULL_TREE;

		args[i] = type ? fold_convert(type, fixed[i]) : fixed[i];
		if (parm && parm != void_list_node)
			parm = TREE_CHAIN(parm);
	}
	for (unsigned i = 0; i < nvalues; i++)
		args[nfixed + i] = values[i];
	return build_call_array_loc(loc, TREE_TYPE(TREE_TYPE(decl)), build_fold_addr_expr(decl),
				    nfixed + nvalues, args);
}

/* ---- site descriptors ----------------------------------------------- */

/* struct iosig_site of iosig.h. */
static tree gp_site_type(void)
{
	static const char *const names[] = { "abi", "nvalues", "sig", "file", "line",
					     "column", "call" };
	tree types[ARRAY_SIZE(names)];
	tree fields = NULL_TREE, type;

	if (gp_trees[GP_T_SITE_TYPE])
		return gp_trees[GP_T_SITE_TYPE];
	types[0] = types[1] = types[4] = types[5] = uint32_type_node;
	types[2] = types[3] = types[6] = gp_const_char_ptr();
	type = make_node(RECORD_TYPE);
	/* finish_builtin_struct takes the fields in reverse order. */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		tree f = build_decl(BUILTINS_LOCATION, FIELD_DECL, get_identifier(names[i]),
				    types[i]);

		DECL_CHAIN(f) = fields;
		fields = f;
	}
	/* Lays the fields out and names the type "iosig_site". */
	finish_builtin_struct(type, "iosig_site", fields, NULL_TREE);
	gp_trees[GP_T_SITE_TYPE] = type;
	return type;
}

static tree gp_cstring(const char *s)
{
	return fold_convert(gp_const_char_ptr(), build_string_literal(strlen(s) + 1, s));
}

/* A static, read-only site descriptor for p at its call of `call`; returns
 * its address. */
static tree gp_site(const struct gp_pragma *p, const char *call, unsigned nvalues)
{
	static unsigned counter;
	tree type = gp_site_type();
	expanded_location where = expand_location(
		linemap_resolve_location(line_table, p->loc, LRK_MACRO_EXPANSION_POINT, NULL));
	vec<constructor_elt, va_gc> *elts = NULL;
	tree f = TYPE_FIELDS(type);
	char name[40];
	tree decl, init;

	CONSTRUCTOR_APPEND_ELT(elts, f, build_int_cst(uint32_type_node, IOSIG_SITE_ABI));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, build_int_cst(uint32_type_node, nvalues));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, gp_cstring(p->canon));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, gp_cstring(where.file ? where.file : ""));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, build_int_cst(uint32_type_node, where.line));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, build_int_cst(uint32_type_node, where.column));
	f = DECL_CHAIN(f);
	CONSTRUCTOR_APPEND_ELT(elts, f, gp_cstring(call));
	init = build_constructor(type, elts);
	TREE_CONSTANT(init) = 1;
	TREE_STATIC(init) = 1;

	/* The dot keeps the name out of the C and C++ namespaces. */
	snprintf(name, sizeof(name), "__iosig_site.%u", counter++);
	decl = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier(name),
			  build_qualified_type(type, TYPE_QUAL_CONST));
	TREE_STATIC(decl) = 1;
	TREE_READONLY(decl) = 1;
	TREE_PUBLIC(decl) = 0;
	TREE_USED(decl) = 1;
	TREE_ADDRESSABLE(decl) = 1;
	DECL_ARTIFICIAL(decl) = 1;
	DECL_IGNORED_P(decl) = 1;
	DECL_INITIAL(decl) = init;
	SET_DECL_ASSEMBLER_NAME(decl, DECL_NAME(decl));
	varpool_node::finalize_decl(decl);
	return build_fold_addr_expr(decl);
}

/* ---- rewrites ----------------------------------------------------------- */

/* The openmode enumerator `name` of enum type t, or -1. */
static HOST_WIDE_INT gp_openmode_bit(tree t, const char *name)
{
	if (TREE_CODE(t) != ENUMERAL_TYPE)
		return -1;
	for (tree v = TYPE_VALUES(t); v; v = TREE_CHAIN(v)) {
		tree val = TREE_VALUE(v);

		if (TREE_CODE(val) == CONST_DECL)
			val = DECL_INITIAL(val);
		if (gp_name_is(TREE_PURPOSE(v), name) && val && tree_fits_shwi_p(val))
			return tree_to_shwi(val);
	}
	return -1;
}

/* The static table of openmode_flags (plugin_shared.h) in the program. */
static tree gp_stream_table(void)
{
	vec<constructor_elt, va_gc> *elts = NULL;
	tree type, decl;

	if (gp_trees[GP_T_STREAM_FLAGS])
		return gp_trees[GP_T_STREAM_FLAGS];
	type = build_array_type_nelts(integer_type_node, ARRAY_SIZE(openmode_flags));
	for (size_t i = 0; i < ARRAY_SIZE(openmode_flags); i++)
		CONSTRUCTOR_APPEND_ELT(elts, size_int(i),
				       build_int_cst(integer_type_node, openmode_flags[i]));
	decl = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier("__iosig_stream_flags"),
			  build_qualified_type(type, TYPE_QUAL_CONST));
	DECL_INITIAL(decl) = build_constructor(type, elts);
	TREE_CONSTANT(DECL_INITIAL(decl)) = 1;
	TREE_STATIC(DECL_INITIAL(decl)) = 1;
	TREE_STATIC(decl) = 1;
	TREE_READONLY(decl) = 1;
	TREE_USED(decl) = 1;
	DECL_ARTIFICIAL(decl) = 1;
	DECL_IGNORED_P(decl) = 1;
	SET_DECL_ASSEMBLER_NAME(decl, get_identifier("__iosig_stream_flags.0"));
	varpool_node::finalize_decl(decl);
	gp_trees[GP_T_STREAM_FLAGS] = decl;
	return decl;
}

/* open(2) flags for stream call `call` of class `cls` (mode argument
 * saved in *mode_ptr). */
static bool gp_stream_open_flags(const struct gp_call *c, tree call, tree *ret)
{
	tree cls = DECL_CONTEXT(c->fndecl);
	tree mode, mtype, idx = NULL_TREE;
	HOST_WIDE_INT bits[4], implied = 0;
	static const char *const names[4] = { "_S_in", "_S_out", "_S_trunc", "_S_app" };

	if (gp_call_nargs(call) < 3) {
		error_at(c->loc, "this call of %qs has no openmode argument; iosig cannot "
			 "tell how it opens the file", c->name);
		return false;
	}
	tree *mode_ptr = gp_call_arg_ptr(call, 2);
	mode = *mode_ptr;
	mtype = TREE_TYPE(mode);
	for (int i = 0; i < 4; i++)
		bits[i] = gp_openmode_bit(TYPE_MAIN_VARIANT(mtype), names[i]);
	if (bits[0] < 0 || bits[1] < 0 || bits[2] < 0 || bits[3] < 0) {
		error_at(c->loc, "cannot read the bits of %qT, which is not the "
			 "%<std::ios_base::openmode%> of libstdc++ (the only C++ library "
			 "iosig supports)", mtype);
		return false;
	}
	for (size_t i = 0; i < ARRAY_SIZE(gp_streams); i++)
		if (gp_streams[i].implied && gp_std_class_p(cls, gp_streams[i].cls))
			implied = bits[strcmp(gp_streams[i].implied, "_S_in") == 0 ? 0 : 1];
	/* Evaluate the mode once: the stream reads the same saved value. */
	mode = save_expr(mode);
	*mode_ptr = mode;
	tree m = fold_build2(BIT_IOR_EXPR, unsigned_type_node, fold_convert(unsigned_type_node, mode),
			     build_int_cst(unsigned_type_node, implied));
	m = save_expr(m);
	for (int i = 0; i < 4; i++) {
		tree has = fold_build2(NE_EXPR, boolean_type_node,
				       fold_build2(BIT_AND_EXPR, unsigned_type_node, m,
						   build_int_cst(unsigned_type_node, bits[i])),
				       build_int_cst(unsigned_type_node, 0));
		tree bit = fold_build2(LSHIFT_EXPR, unsigned_type_node,
				       fold_convert(unsigned_type_node, has),
				       build_int_cst(integer_type_node, i));

		idx = idx ? fold_build2(BIT_IOR_EXPR, unsigned_type_node, idx, bit) : bit;
	}
	tree table = gp_stream_table();
	*ret = build4(ARRAY_REF, integer_type_node, table, fold_convert(sizetype, idx), NULL_TREE,
		      NULL_TREE);
	return true;
}

static bool gp_rewrite_stream(const struct gp_pragma *p, struct gp_call *c, tree *values,
			      unsigned nvalues)
{
	tree call = *c->slot;
	tree *path_ptr = gp_call_arg_ptr(call, 1);
	tree path = save_expr(*path_ptr);
	tree cstr, flags, fixed[4];
	tree ptype = TREE_TYPE(TREE_TYPE(path));

	if (!gp_stream_open_flags(c, call, &flags))
		return false;
	if (TYPE_MAIN_VARIANT(ptype) == char_type_node) {
		cstr = path;
	} else {
		tree fn = gp_c_str(TYPE_MAIN_VARIANT(ptype));
		tree self = TREE_VALUE(TYPE_ARG_TYPES(TREE_TYPE(fn)));

		if (mark_used)
			mark_used(fn);
		cstr = build_call_expr_loc(c->loc, fn, 1, fold_convert(self, path));
	}
	fixed[0] = gp_site(p, c->name, nvalues);
	fixed[1] = build_int_cst(integer_type_node, AT_FDCWD);
	fixed[2] = cstr;
	fixed[3] = flags;
	tree decl = gp_entry_decl(GP_T_PREPARE, "iosig_prepare",
				  gp_entry_type(c->callee, call));
	tree prepare = gp_build_entry_call(c->loc, decl, fixed, 4, values, nvalues);

	*path_ptr = build2(COMPOUND_EXPR, TREE_TYPE(path), prepare, path);
	return true;
}

/*
 * A declared opener: libiosig decides before the call and may hand the
 * function another path; after it, it undoes what the function did not use.
 * The arguments libiosig reads are evaluated once, before it is called.
 */
static bool gp_rewrite_opener(const struct gp_pragma *p, struct gp_call *c, tree *values,
			      unsigned nvalues)
{
	const struct plugin_opener *o = &c->opener->o;
	tree call = *c->slot, site, begin, end, fixed[5], *path, r;

	for (int k = 0; k < PLUGIN_OPENER_NARGS; k++)
		if (o->arg[k])
			CALL_EXPR_ARG(call, o->arg[k] - 1) =
				save_expr(CALL_EXPR_ARG(call, o->arg[k] - 1));
	path = &CALL_EXPR_ARG(call, o->arg[PLUGIN_OPENER_PATH] - 1);
	site = gp_site(p, o->name, nvalues);
	fixed[0] = site;
	fixed[1] = o->arg[PLUGIN_OPENER_DIRFD] ? CALL_EXPR_ARG(call, o->arg[PLUGIN_OPENER_DIRFD] - 1)
					       : build_int_cst(integer_type_node, AT_FDCWD);
	fixed[2] = *path;
	fixed[3] = o->arg[PLUGIN_OPENER_FLAGS] ? CALL_EXPR_ARG(call, o->arg[PLUGIN_OPENER_FLAGS] - 1)
					       : integer_zero_node;
	fixed[4] = o->arg[PLUGIN_OPENER_MODE] ? CALL_EXPR_ARG(call, o->arg[PLUGIN_OPENER_MODE] - 1)
			 : o->fmode[0] ? gp_cstring(o->fmode)
				       : null_pointer_node;
	tree bdecl = gp_entry_decl(GP_T_OPENER_BEGIN, "iosig_opener_begin",
				   gp_entry_type(c->callee, call));
	begin = gp_build_entry_call(c->loc, bdecl, fixed, 5, values, nvalues);
	*path = fold_convert(TREE_TYPE(*path), begin);
	tree edecl = gp_entry_decl(GP_T_OPENER_END, "iosig_opener_end",
				   build_function_type_list(void_type_node, const_ptr_type_node,
							    NULL_TREE));
	end = gp_build_entry_call(c->loc, edecl, &site, 1, NULL, 0);
	if (VOID_TYPE_P(TREE_TYPE(call))) {
		*c->slot = build2(COMPOUND_EXPR, void_type_node, call, end);
	} else {
		r = save_expr(call);
		*c->slot = build2(COMPOUND_EXPR, TREE_TYPE(call),
				  build2(COMPOUND_EXPR, void_type_node, r, end), r);
	}
	return true;
}

bool gp_rewrite_call(const struct gp_pragma *p, struct gp_call *c, tree *values,
		     unsigned nvalues)
{
	const struct gp_callee *ce = c->callee;
	tree call = *c->slot;
	unsigned n = gp_call_nargs(call);
	tree fixed[6];
	unsigned nfixed = 0;

	if (ce->shape == GP_STREAM)
		return gp_rewrite_stream(p, c, values, nvalues);
	if (ce->shape == GP_OPENER)
		return gp_rewrite_opener(p, c, values, nvalues);
	if (ce->lfs_alias && TYPE_PRECISION(long_integer_type_node) < 64) {
		error_at(c->loc, "%qs (selected by %<_FILE_OFFSET_BITS=64%>) has no libiosig "
			 "replacement on this 32-bit target; the call is left as written",
			 c->name);
		return false;
	}
	fixed[nfixed++] = gp_site(p, c->name, nvalues);
	for (unsigned i = 0; i < n; i++)
		fixed[nfixed++] = CALL_EXPR_ARG(call, i);
	/* open and openat without a mode: libiosig takes mode 0. */
	if ((ce->shape == GP_OPEN || ce->shape == GP_OPENAT) && n < ce->max_args)
		fixed[nfixed++] = build_int_cst(unsigned_type_node, 0);
	tree decl = gp_entry_decl(ce->decl, ce->entry, gp_entry_type(ce, call));
	tree repl = gp_build_entry_call(c->loc, decl, fixed, nfixed, values, nvalues);

	*c->slot = fold_convert(TREE_TYPE(call), repl);
	return true;
}

tree gp_build_jobwide_call(const struct gp_pragma *p, tree *values, unsigned nvalues)
{
	tree fixed = gp_site(p, "jobwide", nvalues);
	tree type = build_varargs_function_type_list(void_type_node, const_ptr_type_node,
						     NULL_TREE);
	tree decl = gp_entry_decl(GP_T_JOBWIDE, "iosig_jobwide", type);

	return gp_build_entry_call(p->loc, decl, &fixed, 1, values, nvalues);
}

void gp_keep_tree(tree t)
{
	gp_trees[GP_T_KEPT] = tree_cons(NULL_TREE, t, gp_trees[GP_T_KEPT]);
}

void gp_calls_finish(void)
{
	for (unsigned i = 0; i < GP_T_COUNT; i++)
		gp_trees[i] = NULL_TREE;
}
