/* SPDX-License-Identifier: MIT */
/*
 * gcc-common.h - the one place that knows which GCC the plugin is built
 * for (the Linux scripts/gcc-plugins shape): the GCC headers in the order
 * they need, the differences between GCC versions, and the symbols that
 * exist only in some compiler proper.
 *
 * One iosig.so is loaded into cc1 (C), cc1plus (C++) and, when a user
 * links with -flto and -fplugin, into lto1.  GCC plugins are dlopen()ed
 * with RTLD_NOW, so a reference to a symbol that one of these programs
 * lacks makes the plugin fail to load there.  Every symbol that is not
 * part of the middle end is therefore declared weak below, and the code
 * tests it before calling it:
 *   - c-family symbols (pragma registration, lexing, statement lists,
 *     name lookup) exist in cc1 and cc1plus but not in lto1;
 *   - C++ front-end symbols (finish_expr_stmt, mark_used) exist only in
 *     cc1plus.
 * The test tests/e2e/check_plugin_symbols checks this list against the
 * dynamic symbol tables of cc1, cc1plus and lto1.
 */
#ifndef IOSIG_GCC_COMMON_H
#define IOSIG_GCC_COMMON_H

#include "gcc-plugin.h"
#include "plugin-version.h"
#include "bversion.h"

#if BUILDING_GCC_VERSION < 12000
#error "the iosig GCC plugin needs GCC 12 or newer (pragma_lex with a location, lookup_name (tree) in both front ends)"
#endif

#include "tree.h"
/* Before anything that includes diagnostic-core.h: it selects the C
 * front end's diagnostic formats (%qT, %qE) for format checking. */
#include "c-family/c-common.h"
#include "c-family/c-pragma.h"
#include "tree-iterator.h"
#include "stringpool.h"
#include "stor-layout.h"
#include "fold-const.h"
#include "varasm.h"
#include "cgraph.h"
#include "langhooks.h"
#include "diagnostic.h"
#include "intl.h"
#include "real.h"
#include "ggc.h"
#include "tree-pretty-print.h"

/* ---- c-family: present in cc1 and cc1plus, absent from lto1 ---------- */

extern void c_register_pragma_with_expansion(const char *space, const char *name,
					     pragma_handler_1arg handler)
	__attribute__((weak));
extern enum cpp_ttype pragma_lex(tree *value, location_t *loc) __attribute__((weak));
extern tree add_stmt(tree stmt) __attribute__((weak));
extern stmt_tree current_stmt_tree(void) __attribute__((weak));
/* lookup_name (tree) is the C front end's lookup; cc1plus keeps a
 * one-argument overload with the same mangled name (GCC 12). */
extern tree lookup_name(tree id) __attribute__((weak));
extern tree identifier_global_value(tree id) __attribute__((weak));
/* Declared in c-tree.h (C) and cp-tree.h (C++); both define it. */
extern void mark_exp_read(tree exp) __attribute__((weak));
extern c_language_kind c_language __attribute__((weak));
/* The C family's preprocessor and libcpp's hooks into it. */
extern cpp_reader *parse_in __attribute__((weak));
extern cpp_callbacks *cpp_get_callbacks(cpp_reader *) __attribute__((weak));
extern void cpp_define(cpp_reader *, const char *) __attribute__((weak));

/* ---- C++ front end only (cc1plus) ------------------------------------- */

extern tree finish_expr_stmt(tree expr) __attribute__((weak));
extern bool mark_used(tree decl) __attribute__((weak));
/* The C++ front end caches folded expressions by tree (cp_fold); a tree the
 * plugin changed in place must not be folded from the cache. */
extern void clear_cv_and_fold_caches(void) __attribute__((weak));

/* True inside cc1 or cc1plus (the front ends with #pragma io). */
static inline bool gp_have_c_family(void)
{
	return c_register_pragma_with_expansion && pragma_lex && add_stmt && current_stmt_tree &&
	       lookup_name && identifier_global_value && &c_language && &parse_in &&
	       cpp_get_callbacks && cpp_define;
}

/* True when compiling C++ (cc1plus with its front-end symbols). */
static inline bool gp_is_cxx(void)
{
	return &c_language && c_dialect_cxx() && finish_expr_stmt;
}

/* ---- C++ tree codes used without cp-tree.h ----------------------------
 * The tree codes of every front end are in the global enum (all-tree.def),
 * so AGGR_INIT_EXPR and EXPR_STMT are known here; their accessors live in
 * cp-tree.h and are repeated for the operands we read. */

/* AGGR_INIT_EXPR: operand 1 is the function, 2 the slot, 3... the
 * arguments (the first argument is the object being constructed). */
#define GP_AGGR_INIT_FN(NODE) TREE_OPERAND(AGGR_INIT_EXPR_CHECK(NODE), 1)
#define GP_AGGR_INIT_NARGS(NODE) (VL_EXP_OPERAND_LENGTH(NODE) - 3)
#define GP_AGGR_INIT_ARG(NODE, I) TREE_OPERAND(AGGR_INIT_EXPR_CHECK(NODE), (I) + 3)
/* EXPR_STMT: operand 0 is the expression. */
#define GP_EXPR_STMT_EXPR(NODE) TREE_OPERAND(EXPR_STMT_CHECK(NODE), 0)

#endif /* IOSIG_GCC_COMMON_H */
