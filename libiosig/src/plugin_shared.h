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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

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

/* ---- a '#pragma io sig' that describes no call ------------------------- */

/* Why (docs/gcc-plugin.md, "Binding a pragma to a call"). */
enum plugin_unbound {
	PLUGIN_UNBOUND_END,         /* nothing follows it in its block */
	PLUGIN_UNBOUND_NO_CALL,     /* the statement after it calls no function that
				       could open a file (none, or only built-ins,
				       constructors, operators, member functions) */
	PLUGIN_UNBOUND_UNSUPPORTED, /* ... calls functions that are not supported opens */
	PLUGIN_UNBOUND_INDIRECT,    /* ... calls through a pointer first */
	PLUGIN_UNBOUND_BLOCKED,     /* another pragma comes first */
	PLUGIN_UNBOUND_TAKEN,       /* a nearer pragma describes the same call */
	PLUGIN_UNBOUND_FILE_SCOPE,  /* it is at file scope */
};

/* Functions the message names; more are counted. */
#define PLUGIN_UNBOUND_NAMES 3

/* What the message says. */
struct plugin_unbound_info {
	enum plugin_unbound why;
	unsigned line;                               /* the first call, or the other pragma */
	const char *names[PLUGIN_UNBOUND_NAMES];     /* UNSUPPORTED: functions called, in
							evaluation order, each once */
	const char *macros[PLUGIN_UNBOUND_NAMES];    /* the macro whose expansion spelt each
							name, or NULL */
	unsigned nnames;                             /* names found (may exceed the array) */
	const char *macro;                           /* INDIRECT: the macro the pointer came
							from, or NULL */
};

/* The switch that controls the diagnostic, as its last words. */
#define PLUGIN_UNBOUND_SWITCH " [-fplugin-arg-iosig-unbound]"

struct plugin_buf {
	char *s;
	size_t size, len;
};

/* Appends printf-style text, truncating at the end of the buffer. */
static inline void plugin_buf_add(struct plugin_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void plugin_buf_add(struct plugin_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len = b->len + (size_t)n < b->size ? b->len + (size_t)n : b->size - 1;
}

/*
 * The message for an unbound pragma into buf, with lq and rq as the quotes
 * (GCC's open_quote and close_quote, "'" for clang): what it does not
 * describe, why, the way out, and the switch that silences it.
 */
static inline void plugin_unbound_message(char *buf, size_t size, const struct plugin_unbound_info *u,
					  const char *lq, const char *rq)
{
	struct plugin_buf b = { buf, size, 0 };
	unsigned shown = u->nnames < PLUGIN_UNBOUND_NAMES ? u->nnames : PLUGIN_UNBOUND_NAMES;

	buf[0] = '\0';
	plugin_buf_add(&b, "%s#pragma io sig%s ", lq, rq);
	switch (u->why) {
	case PLUGIN_UNBOUND_END:
		plugin_buf_add(&b, "describes no call: nothing follows it in its block; put it "
			       "right before the statement that opens the file");
		break;
	case PLUGIN_UNBOUND_NO_CALL:
		plugin_buf_add(&b, "describes no call: the statement after it calls no function "
			       "that could open a file; put it right before the statement that "
			       "opens the file");
		break;
	case PLUGIN_UNBOUND_UNSUPPORTED:
		plugin_buf_add(&b, "describes no call: the statement after it (line %u) calls ",
			       u->line);
		for (unsigned i = 0; i < shown; i++) {
			if (i > 0)
				plugin_buf_add(&b, i + 1 == u->nnames ? " and " : ", ");
			plugin_buf_add(&b, "%s%s%s", lq, u->names[i], rq);
			if (u->macros[i])
				plugin_buf_add(&b, " (from macro %s%s%s)", lq, u->macros[i], rq);
		}
		if (u->nnames > shown)
			plugin_buf_add(&b, " and %u more", u->nnames - shown);
		if (u->nnames == 1)
			plugin_buf_add(&b, ", which is not a supported open; if it opens a file it "
				       "is given, declare it with %s#pragma io opener(%s, path(N), "
				       "...)%s, or annotate the open inside it",
				       lq, u->names[0], rq);
		else
			plugin_buf_add(&b, ", none of which is a supported open; declare the one "
				       "that opens the file with %s#pragma io opener(NAME, path(N), "
				       "...)%s, or annotate the open inside it", lq, rq);
		break;
	case PLUGIN_UNBOUND_INDIRECT:
		plugin_buf_add(&b, "describes no call: the statement after it (line %u) calls a "
			       "function through a pointer", u->line);
		if (u->macro)
			plugin_buf_add(&b, " (from macro %s%s%s)", lq, u->macro, rq);
		plugin_buf_add(&b, ", which iosig cannot follow; annotate a direct call of the "
			       "open, or of a function declared with %s#pragma io opener%s", lq, rq);
		break;
	case PLUGIN_UNBOUND_BLOCKED:
		plugin_buf_add(&b, "describes no call: another %s#pragma io%s (line %u) follows "
			       "it first", lq, rq, u->line);
		break;
	case PLUGIN_UNBOUND_TAKEN:
		plugin_buf_add(&b, "describes no call: the call after it is described by the "
			       "nearer %s#pragma io sig%s on line %u", lq, rq, u->line);
		break;
	case PLUGIN_UNBOUND_FILE_SCOPE:
		plugin_buf_add(&b, "at file scope describes no call; put it inside a function, "
			       "right before the statement that opens the file");
		break;
	}
	plugin_buf_add(&b, PLUGIN_UNBOUND_SWITCH);
}

/* The help text both plugins print for -fplugin-arg-iosig-help, up to
 * where each says how it is loaded and linked. */
#define PLUGIN_HELP_COMMON                                                                     \
	"iosig: I/O signatures for files a program opens (#pragma io sig, sigdef, jobwide).\n" \
	"Options (-fplugin-arg-iosig-OPTION):\n"                                               \
	"  verbose                  a note for every pragma saying which call it describes\n"  \
	"  unbound=warning|error|ignore\n"                                                     \
	"                           what a pragma that describes no call gets (default:\n"    \
	"                           warning; -w and -Werror apply to it)\n"                  \
	"  help                     print this text\n"                                         \
	"Supported calls: open, open64, openat, creat, fopen, fopen64, freopen, and the\n"     \
	"std::fstream, std::ifstream and std::ofstream constructors and open().\n"

#endif /* IOSIG_PLUGIN_SHARED_H */
