/* SPDX-License-Identifier: MIT */
/*
 * plugin_shared.h - what the GCC plugin and the clang plugin share beyond
 * the parser itself: the open(2) flags for the std::ios_base::openmode
 * combinations of [filebuf] (each plugin emits the table into the program
 * it compiles and indexes it with the stream's mode at run time), the walk
 * that finds which parameter of a pragma holds an expression, the names of
 * the pragma kinds in messages, and the common part of their help text.
 * Private; C and C++.
 */
#ifndef IOSIG_PLUGIN_SHARED_H
#define IOSIG_PLUGIN_SHARED_H

#include <fcntl.h>
#include <stdbool.h>

#include "iosig.h"

/* The index has bit 0 = in, 1 = out, 2 = trunc, 3 = app.  Invalid
 * combinations make the stream fail; they get O_RDONLY, which creates
 * nothing. */
static const int openmode_flags[16] = {
	O_RDONLY,                        /* (none): invalid */
	O_RDONLY,                        /* in: "r" */
	O_WRONLY | O_CREAT | O_TRUNC,    /* out: "w" */
	O_RDWR,                          /* in|out: "r+" */
	O_RDONLY,                        /* trunc: invalid */
	O_RDONLY,                        /* in|trunc: invalid */
	O_WRONLY | O_CREAT | O_TRUNC,    /* out|trunc: "w" */
	O_RDWR | O_CREAT | O_TRUNC,      /* in|out|trunc: "w+" */
	O_WRONLY | O_CREAT | O_APPEND,   /* app: "a" */
	O_RDWR | O_CREAT | O_APPEND,     /* in|app: "a+" */
	O_WRONLY | O_CREAT | O_APPEND,   /* out|app: "a" */
	O_RDWR | O_CREAT | O_APPEND,     /* in|out|app: "a+" */
	O_RDONLY,                        /* trunc|app: invalid */
	O_RDONLY,                        /* in|trunc|app: invalid */
	O_RDONLY,                        /* out|trunc|app: invalid */
	O_RDONLY,                        /* in|out|trunc|app: invalid */
};

/* Is e the expression root or one of its operands, at any depth? */
static inline bool plugin_expr_contains(const struct iosig_expr *root, const struct iosig_expr *e)
{
	if (!root)
		return false;
	if (root == e)
		return true;
	if (plugin_expr_contains(root->lhs, e) || plugin_expr_contains(root->rhs, e))
		return true;
	for (unsigned i = 0; i < root->nargs; i++)
		if (plugin_expr_contains(root->args[i], e))
			return true;
	return false;
}

/* A pragma kind as messages name it. */
static inline const char *plugin_kind_name(enum iosig_pragma_kind kind)
{
	switch (kind) {
	case IOSIG_PRAGMA_SIG:
		return "#pragma io sig";
	case IOSIG_PRAGMA_SIGDEF:
		return "#pragma io sigdef";
	case IOSIG_PRAGMA_JOBWIDE:
		return "#pragma io jobwide";
	}
	return "#pragma io";
}

/* The help text both plugins print for -fplugin-arg-iosig-help, up to
 * where each says how it is loaded and linked. */
#define PLUGIN_HELP_COMMON                                                                     \
	"iosig: I/O signatures for files a program opens (#pragma io sig, sigdef, jobwide).\n" \
	"Options (-fplugin-arg-iosig-OPTION):\n"                                               \
	"  verbose                  a note for every pragma saying which call it describes\n"  \
	"  unbound=warning|error|ignore\n"                                                     \
	"                           what a pragma that no supported call follows gets\n"      \
	"                           (default: warning)\n"                                      \
	"  help                     print this text\n"                                         \
	"Supported calls: open, open64, openat, creat, fopen, fopen64, freopen, and the\n"     \
	"std::fstream, std::ifstream and std::ofstream constructors and open().\n"

#endif /* IOSIG_PLUGIN_SHARED_H */
