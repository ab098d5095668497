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

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* ---- what a program sees of the plugins --------------------------------- */

/*
 * Both plugins predefine __IOSIG__ (iosig_annotate.h tests it), the version
 * of the pragma language they understand: 1 sig, sigdef, jobwide; 2 binds a
 * sig to the statement right after it and adds '#pragma io opener'.
 */
#define PLUGIN_IOSIG_MACRO "__IOSIG__"
#define PLUGIN_IOSIG_VERSION "2"
/* "#define __IOSIG__ 2" for a predefines buffer, "__IOSIG__=2" for -D. */
#define PLUGIN_IOSIG_DEFINE PLUGIN_IOSIG_MACRO "=" PLUGIN_IOSIG_VERSION

/* What both plugins say about a '#pragma io' inside an expression, which
 * neither compiler can take (GCC's parser rejects it): how to write it. */
#define PLUGIN_PRAGMA_IN_EXPRESSION                                                         \
	"'#pragma io' cannot stand inside an expression: put it right before the statement " \
	"that contains the call, or, in a macro that must be an expression, write "          \
	"IOSIG_CALL((SIGNATURE), CALL) from <iosig_annotate.h>"

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

/* ---- '#pragma io opener(NAME, path(N), ...)' ----------------------------
 *
 * Declares a function of the program that opens the file named by one of
 * its arguments, so that '#pragma io sig' can describe its calls
 * (docs/signature-language.md, section 1.1).  The plugins parse it here;
 * the function's declaration is checked by each plugin.
 */

/* The arguments an opener declaration names, 1-based; 0 when not given. */
enum plugin_opener_arg {
	PLUGIN_OPENER_PATH,   /* path(N): the file's name (char pointer) */
	PLUGIN_OPENER_DIRFD,  /* dirfd(N): openat's directory descriptor */
	PLUGIN_OPENER_FLAGS,  /* flags(N): open(2) flags */
	PLUGIN_OPENER_MODE,   /* mode(N): an fopen mode string */
	PLUGIN_OPENER_NARGS
};

struct plugin_opener {
	char name[64];                  /* the function */
	uint32_t name_off, name_len;    /* its span in the pragma text */
	unsigned arg[PLUGIN_OPENER_NARGS];
	uint32_t arg_off[PLUGIN_OPENER_NARGS], arg_len[PLUGIN_OPENER_NARGS];
	char fmode[16];                 /* mode("..."): how it always opens, else "" */
};

static const char *const plugin_opener_arg_names[PLUGIN_OPENER_NARGS] = {
	"path", "dirfd", "flags", "mode",
};

/* ASCII classes (GCC's headers forbid <ctype.h>'s, which depend on the
 * locale anyway). */
static inline bool plugin_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool plugin_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool plugin_ident_char(char c)
{
	return plugin_ident_start(c) || plugin_digit(c);
}

static inline bool plugin_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* True if text starts with the word "opener" (a '#pragma io opener'). */
static inline bool plugin_is_opener(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len && plugin_space(text[i]))
		i++;
	return len - i >= 6 && memcmp(text + i, "opener", 6) == 0 &&
	       (len - i == 6 || !plugin_ident_char(text[i + 6]));
}

/* The lexer of the opener parser: tokens of the text after "io". */
struct plugin_olex {
	const char *s;
	size_t len, pos;
	size_t off, n;        /* the current token's span */
	char kind;            /* 'i' identifier, '0' number, '"' string, else the
				 punctuator, '\0' at the end */
};

static inline void plugin_olex_next(struct plugin_olex *lx)
{
	const char *s = lx->s;
	size_t i = lx->pos;

	while (i < lx->len && plugin_space(s[i]))
		i++;
	lx->off = i;
	if (i >= lx->len) {
		lx->kind = '\0';
	} else if (plugin_ident_start(s[i])) {
		lx->kind = 'i';
		while (i < lx->len && plugin_ident_char(s[i]))
			i++;
	} else if (plugin_digit(s[i])) {
		lx->kind = '0';
		while (i < lx->len && plugin_ident_char(s[i]))
			i++;
	} else if (s[i] == '"') {
		lx->kind = '"';
		for (i++; i < lx->len && s[i] != '"'; i++)
			if (s[i] == '\\' && i + 1 < lx->len)
				i++;
		i = i < lx->len ? i + 1 : i;
	} else {
		lx->kind = s[i++];
	}
	lx->n = i - lx->off;
	lx->pos = i;
}

/* Reports an error at [off, off+n) of the text; returns -EINVAL. */
static inline int plugin_opener_error(struct iosig_error *err, size_t off, size_t n,
				      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline int plugin_opener_error(struct iosig_error *err, size_t off, size_t n,
				      const char *fmt, ...)
{
	va_list ap;

	memset(err, 0, sizeof(*err));
	err->offset = off;
	err->length = n;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* True if mode is an fopen mode (r, w or a, then + b x e m c). */
static inline bool plugin_fmode_ok(const char *mode)
{
	if (!mode[0] || !strchr("rwa", mode[0]))
		return false;
	for (size_t i = 1; mode[i]; i++)
		if (!strchr("+bxemc", mode[i]))
			return false;
	return true;
}

#define PLUGIN_OPENER_EXAMPLE "opener(fopen_output_safely, path(1), mode(\"wx\"))"

/*
 * Parses the text of '#pragma io opener(NAME, ARG...)' (what follows "io")
 * into *ret.  0, or -EINVAL with the message and the offending span in
 * *err.
 */
static inline int plugin_opener_parse(const char *text, size_t len, struct plugin_opener *ret,
				      struct iosig_error *err)
{
	struct plugin_olex lx = { text, len, 0, 0, 0, 0 };
	size_t open_off;

	memset(ret, 0, sizeof(*ret));
	plugin_olex_next(&lx);
	if (lx.kind != 'i' || lx.n != 6 || memcmp(text + lx.off, "opener", 6) != 0)
		return plugin_opener_error(err, lx.off, lx.n, "expected 'opener'");
	plugin_olex_next(&lx);
	if (lx.kind != '(')
		return plugin_opener_error(err, lx.off, lx.n,
					   "expected '(' after 'opener', as in %s",
					   PLUGIN_OPENER_EXAMPLE);
	open_off = lx.off;
	plugin_olex_next(&lx);
	if (lx.kind != 'i')
		return plugin_opener_error(err, lx.off, lx.n,
					   "expected the name of the function that opens the "
					   "file, as in %s", PLUGIN_OPENER_EXAMPLE);
	if (lx.n >= sizeof(ret->name))
		return plugin_opener_error(err, lx.off, lx.n, "the function's name is too long");
	memcpy(ret->name, text + lx.off, lx.n);
	ret->name[lx.n] = '\0';
	ret->name_off = (uint32_t)lx.off;
	ret->name_len = (uint32_t)lx.n;
	for (plugin_olex_next(&lx); lx.kind == ','; plugin_olex_next(&lx)) {
		size_t p_off, n = 0;
		int a = -1;

		plugin_olex_next(&lx);
		p_off = lx.off;
		for (int k = 0; lx.kind == 'i' && k < PLUGIN_OPENER_NARGS; k++)
			if (strlen(plugin_opener_arg_names[k]) == lx.n &&
			    !memcmp(text + lx.off, plugin_opener_arg_names[k], lx.n))
				a = k;
		if (a < 0)
			return plugin_opener_error(
				err, lx.off, lx.n,
				"expected path(N), dirfd(N), flags(N), mode(N) or mode(\"...\") "
				"(N counts the arguments from 1), not '%.*s'", (int)lx.n,
				text + lx.off);
		if (ret->arg[a] || (a == PLUGIN_OPENER_MODE && ret->fmode[0]))
			return plugin_opener_error(err, lx.off, lx.n, "'%s' is given twice",
						   plugin_opener_arg_names[a]);
		plugin_olex_next(&lx);
		if (lx.kind != '(')
			return plugin_opener_error(err, lx.off, lx.n, "expected '(' after '%s'",
						   plugin_opener_arg_names[a]);
		plugin_olex_next(&lx);
		if (a == PLUGIN_OPENER_MODE && lx.kind == '"') {
			/* mode("w"): the function always opens so. */
			if (lx.n < 2 || lx.n - 2 >= sizeof(ret->fmode) ||
			    memchr(text + lx.off + 1, '\\', lx.n - 2))
				return plugin_opener_error(err, lx.off, lx.n,
							   "expected an fopen mode such as \"w\" "
							   "or \"wx\"");
			memcpy(ret->fmode, text + lx.off + 1, lx.n - 2);
			ret->fmode[lx.n - 2] = '\0';
			if (!plugin_fmode_ok(ret->fmode))
				return plugin_opener_error(err, lx.off, lx.n,
							   "'%s' is not an fopen mode: r, w or a, "
							   "then any of + b x e m c", ret->fmode);
		} else if (lx.kind == '0') {
			for (size_t i = 0; i < lx.n && n <= 64; i++) {
				if (!plugin_digit(text[lx.off + i]))
					return plugin_opener_error(err, lx.off, lx.n,
								   "expected an argument number "
								   "(1 is the first)");
				n = n * 10 + (size_t)(text[lx.off + i] - '0');
			}
			if (n == 0 || n > 64)
				return plugin_opener_error(err, lx.off, lx.n,
							   "argument numbers go from 1 (the "
							   "first argument) to 64");
			for (int k = 0; k < PLUGIN_OPENER_NARGS; k++)
				if (ret->arg[k] == n)
					return plugin_opener_error(
						err, lx.off, lx.n,
						"argument %zu is the '%s' already", n,
						plugin_opener_arg_names[k]);
			ret->arg[a] = (unsigned)n;
		} else {
			return plugin_opener_error(err, lx.off, lx.n,
						   a == PLUGIN_OPENER_MODE
							   ? "expected an argument number or an "
							     "fopen mode: mode(2), mode(\"w\")"
							   : "expected an argument number (1 is "
							     "the first)");
		}
		plugin_olex_next(&lx);
		if (lx.kind != ')')
			return plugin_opener_error(err, lx.off, lx.n, "expected ')'");
		ret->arg_off[a] = (uint32_t)p_off;
		ret->arg_len[a] = (uint32_t)(lx.off + 1 - p_off);
	}
	if (lx.kind != ')')
		return plugin_opener_error(err, lx.kind ? lx.off : open_off, lx.kind ? lx.n : 1,
					   "expected ',' and another argument, or ')' to close "
					   "'opener('");
	plugin_olex_next(&lx);
	if (lx.kind != '\0')
		return plugin_opener_error(err, lx.off, lx.n,
					   "nothing may follow '#pragma io opener(...)'");
	if (!ret->arg[PLUGIN_OPENER_PATH])
		return plugin_opener_error(err, ret->name_off, ret->name_len,
					   "'#pragma io opener' needs path(N): which argument of "
					   "'%s' names the file", ret->name);
	if (!ret->arg[PLUGIN_OPENER_FLAGS] && !ret->arg[PLUGIN_OPENER_MODE] && !ret->fmode[0])
		return plugin_opener_error(err, ret->name_off, ret->name_len,
					   "'#pragma io opener' needs flags(N), mode(N) or "
					   "mode(\"...\"): how '%s' opens the file", ret->name);
	if (ret->arg[PLUGIN_OPENER_FLAGS] && (ret->arg[PLUGIN_OPENER_MODE] || ret->fmode[0]))
		return plugin_opener_error(err, ret->arg_off[PLUGIN_OPENER_MODE],
					   ret->arg_len[PLUGIN_OPENER_MODE],
					   "give flags(N) or mode(...), not both: they say the same");
	return 0;
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
	"Supported calls: open, open64, openat, creat, fopen, fopen64, freopen, the\n"         \
	"std::fstream, std::ifstream and std::ofstream constructors and open(),\n"          \
	"MPI_File_open (link with -liosig-mpi), and the functions declared with\n"          \
	"#pragma io opener(F, path(N), ...).\n"

#endif /* IOSIG_PLUGIN_SHARED_H */
