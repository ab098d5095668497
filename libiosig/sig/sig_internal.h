/* SPDX-License-Identifier: MIT */
/*
 * sig_internal.h - private interfaces of the signature language (docs/design.md
 * §3): memory arena, diagnostics, lexer, parameter and unit tables,
 * constant folding.  Shared by sig_*.c and units.c only.
 *
 * Everything here is free of global mutable state and of libyaml/libmount:
 * the same objects are linked into the GCC and clang plugins.
 */
#ifndef IOSIG_SIG_INTERNAL_H
#define IOSIG_SIG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iosig.h"

/* Longest pragma or signature text accepted (offsets are 32-bit). */
#define SIGP_MAX_TEXT 65536
/* Deepest expression tree and deepest parenthesis/unary nesting. */
#define SIGP_MAX_DEPTH 64
/* Most arguments of one call in a value expression. */
#define SIGP_MAX_ARGS 16
/* Longest name("...") in bytes (struct iosig_sig.name holds it with its NUL). */
#define SIGP_MAX_NAME 63

/* ---- arena: every node of a pragma lives in its pragma's arena ---- */

struct sigp_chunk;

struct sigp_arena {
	struct sigp_chunk *head; /* most recent chunk, NULL when empty */
};

/* Zeroed, suitably aligned memory that lives until sigp_arena_free(); NULL
 * when out of memory. */
void *sigp_alloc(struct sigp_arena *arena, size_t size);
/* NUL-terminated copy of n bytes of s in the arena; NULL when out of memory. */
char *sigp_strndup(struct sigp_arena *arena, const char *s, size_t n);
void sigp_arena_free(struct sigp_arena *arena);

/* A pragma together with the arena that owns all its memory.  Every struct
 * iosig_pragma handed out by libiosig is the `pub` member of one of these. */
struct sigp_pragma {
	struct iosig_pragma pub;
	struct sigp_arena arena;
	const char *text;    /* copy of the text the spans refer to (for messages) */
	size_t text_len;
	uint32_t from_def;   /* IOSIG_HAS() bits of parameters taken from a sigdef by
				resolving: their spans refer to the sigdef's text */
};

/* A new, empty pragma of `kind`; NULL when out of memory. */
struct sigp_pragma *sigp_pragma_new(enum iosig_pragma_kind kind);

static inline struct sigp_pragma *sigp_pragma_of(const struct iosig_pragma *pub)
{
	return (struct sigp_pragma *)((char *)(uintptr_t)pub - offsetof(struct sigp_pragma, pub));
}

/* Deep copy of an expression tree into `arena`; NULL when out of memory. */
struct iosig_expr *sigp_expr_copy(struct sigp_arena *arena, const struct iosig_expr *e);

/* ---- diagnostics ---- */

/*
 * Where errors go.  `text`/`len` is the text positions refer to (the whole
 * pragma text), `err` the caller's error struct (may be NULL).  Only the
 * first error is kept: later reports caused by it do not overwrite it.
 */
struct sigp_diag {
	const char *text;
	size_t len;
	struct iosig_error *err;
	bool reported;
};

/* Fills the error (message, offset, length, 1-based line and byte column)
 * and returns `code`.  Messages longer than the error struct are cut. */
int sigp_report(struct sigp_diag *diag, int code, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int sigp_vreport(struct sigp_diag *diag, int code, size_t off, size_t len, const char *fmt,
		 va_list ap) __attribute__((format(printf, 5, 0)));
/* sigp_report() for a message that names an earlier place of the text, at
 * rel_off: the message is head, then "line L, column C" of rel_off, then
 * tail formatted; the error's related_* fields say where that place is and
 * which bytes of the message spell it. */
int sigp_report_related(struct sigp_diag *diag, int code, size_t off, size_t len,
			size_t rel_off, const char *head, const char *tail, ...)
	__attribute__((format(printf, 7, 8)));
/* The same for errors without a position (line/column 0). */
int sigp_report_plain(struct iosig_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Optimal-string-alignment edit distance (a transposition costs 1), capped:
 * returns cap + 1 when the distance exceeds cap or a word is too long. */
unsigned sigp_edit_distance(const char *a, size_t alen, const char *b, size_t blen,
			    unsigned cap);
/* The candidate closest to word (case-insensitive equality first), or NULL
 * when none is close enough to be a plausible typo. */
const char *sigp_suggest(const char *word, size_t len, const char *const *cands, size_t ncands);

/* ---- source text and the lexer ---- */

/*
 * The text a lexer reads.  For the contents of a string literal ("64 MiB")
 * the text is the unescaped contents and positions are mapped back to the
 * pragma text: shifted by `base` when the literal had no escapes (`exact`),
 * else every position becomes the span of the whole literal.
 */
struct sigp_src {
	const char *s;
	size_t len;
	size_t base;         /* offset of s[0] in the pragma text (exact) */
	bool exact;          /* positions map 1:1 */
	size_t whole_off;    /* span of the literal in the pragma text (!exact) */
	size_t whole_len;
	struct sigp_diag *diag;
};

/* Position in the pragma text of the span [off, off+len) of src. */
void sigp_src_map(const struct sigp_src *src, size_t off, size_t len, size_t *ret_off,
		  size_t *ret_len);
/* sigp_report() at a span of src. */
int sigp_src_error(const struct sigp_src *src, int code, size_t off, size_t len,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

enum sigp_tok {
	SIGP_T_EOF,
	SIGP_T_IDENT,   /* identifier or keyword */
	SIGP_T_INT,     /* integer literal: u64 */
	SIGP_T_FLOAT,   /* floating literal: f */
	SIGP_T_STRING,  /* string literal: str/strlen (unescaped) */
	SIGP_T_SLOT,    /* $N: u64 */
	SIGP_T_PUNCT,   /* a C punctuator; its spelling is the token text */
};

struct sigp_token {
	enum sigp_tok kind;
	size_t off;          /* span in the lexer's text */
	size_t len;
	uint64_t u64;        /* INT, SLOT */
	double f;            /* FLOAT */
	const char *str;     /* STRING: unescaped contents in the arena */
	size_t strlen;
	bool escaped;        /* STRING: had escape sequences */
	bool nul_inside;     /* STRING: contains a NUL byte */
};

struct sigp_lexer {
	const struct sigp_src *src;
	size_t pos;
	bool juxt;           /* "64MiB": a number may end where a unit name starts */
	struct sigp_arena *arena;
};

/* Reads the next token; 0, or -EINVAL/-ENOMEM after reporting the error. */
int sigp_lex_next(struct sigp_lexer *lx, struct sigp_token *tok);
/* True if tok is the punctuator `spelling` (inline: the parser asks this
 * for every token it looks at). */
static inline bool sigp_tok_is(const struct sigp_lexer *lx, const struct sigp_token *tok,
			       const char *spelling)
{
	const char *t = lx->src->s + tok->off;
	size_t i;

	if (tok->kind != SIGP_T_PUNCT)
		return false;
	for (i = 0; spelling[i]; i++)
		if (i >= tok->len || t[i] != spelling[i])
			return false;
	return i == tok->len;
}

/* Converts the decimal floating literal s[0..n) ("1.5e3") like strtod in
 * the C locale, whatever the process locale; -ERANGE on overflow, -ENOMEM. */
int sigp_strtod(const char *s, size_t n, double *ret);
/* Shortest text ("0.5", "1e-06", "3") that sigp_strtod reads back as v
 * exactly, in the C locale.  v must be finite.  Returns buf. */
char *sigp_fmt_double(double v, char *buf, size_t size);

/* ---- parameters ---- */

/* Parameter groups in which a later parameter replaces an earlier one (a
 * sig overriding its sigdef) and two in one pragma contradict each other. */
#define SIGP_GROUP_NONE (-1)
#define SIGP_NGROUPS 3

struct sigp_param_info {
	const char *name;      /* primary name */
	bool flag;             /* takes no value */
	enum iosig_dim dim;    /* dimension a value must have (or NONE) */
	int group;             /* contradiction group or SIGP_GROUP_NONE */
	const char *what;      /* what the group conflict means, for messages */
};

const struct sigp_param_info *sigp_param_info(enum iosig_param id);
/* Parameter id of a spelling (primary name or alias), or -1. */
int sigp_param_lookup(const char *name, size_t len);
/* Closest parameter spelling to a misspelt one, or NULL. */
const char *sigp_param_suggest(const char *name, size_t len);
/* "size", "time", "fraction", "plain number". */
const char *sigp_dim_name(enum iosig_dim dim);
/* Checks a value of parameter id in base units: 0, or -ERANGE after
 * writing what is wrong into msg. */
int sigp_param_check(enum iosig_param id, double v, char *msg, size_t size);
/* Stored value of a size: rounded to the nearest byte (v checked). */
uint64_t sigp_size_round(double v);

/* ---- units ---- */

struct sigp_unit {
	const char *name;      /* as written */
	double value;          /* in base units */
	enum iosig_dim dim;
	const char *meaning;   /* "days", "mebibytes (2^20 bytes)" */
	bool value_only;       /* a unit in values outside pragmas, not a reserved word */
};

/* The unit spelt s[0..n), or NULL; in_value: in a value written outside a
 * pragma (or a string form), where the value-only units count too. */
const struct sigp_unit *sigp_unit_find(const char *s, size_t n, bool in_value);
/* Closest unit name to a misspelt one, or NULL. */
const char *sigp_unit_suggest(const char *s, size_t n, bool in_value);

/* ---- constant folding and evaluation ---- */

/* A folded value with C semantics: integer arithmetic (64-bit, overflow is
 * an error) while both operands are integers, double otherwise. */
struct sigp_num {
	bool is_int;
	int64_t i;
	double f;
	double recip;   /* != 0: f is exactly 1/recip (ms, ppm); x*f is computed
			   as x/recip, so that 100*ppm is the double nearest 1e-4 */
};

static inline double sigp_num_double(struct sigp_num n)
{
	return n.is_int ? (double)n.i : n.f;
}

/* Stored value of a checked size (0 <= n <= 2^63): exact for integers,
 * else rounded to the nearest byte. */
static inline uint64_t sigp_size_of(struct sigp_num n)
{
	return n.is_int ? (uint64_t)n.i : sigp_size_round(n.f);
}

/* Value of a leaf node (INT/FLOAT/STRING/UNIT) as folding sees it. */
struct sigp_num sigp_leaf_num(const struct iosig_expr *e);

/* Result of op (an operator kind) on a (and b for binary operators):
 * 0, -ERANGE on overflow or a non-finite result, -EDOM on division by zero,
 * -EINVAL for '%' on a non-integer; *why says which in words. */
int sigp_fold(enum iosig_expr_kind op, struct sigp_num a, struct sigp_num b,
	      struct sigp_num *ret, const char **why);

/*
 * Evaluates e with values[] for $N slots.  Errors are reported through diag
 * (may be NULL) at the offending node: -EINVAL for a non-constant node or a
 * missing slot value, -EDOM/-ERANGE/-EINVAL as sigp_fold().
 */
int sigp_eval(const struct iosig_expr *e, const double *values, unsigned nvalues,
	      struct sigp_diag *diag, struct sigp_num *ret);

/* ---- parsing ---- */

enum sigp_mode {
	SIGP_MODE_PRAGMA, /* compiler pragma: C expressions, no $N, no "64MiB" */
	SIGP_MODE_CONST,  /* iosig_sig_parse: constants and $N, "64MiB" allowed */
};

/*
 * Parses a pragma (SIGP_MODE_PRAGMA) or a signature text (SIGP_MODE_CONST,
 * where the kind keyword is optional).  In CONST mode nvalues bounds the
 * slot numbers.  0 or -EINVAL/-ENOMEM with the error reported.
 */
int sigp_parse(const char *text, size_t len, enum sigp_mode mode, unsigned nvalues,
	       struct sigp_pragma **ret_pragma, struct iosig_error *err);

/*
 * Parses a single constant value (iosig_parse_value): units, "64MiB", no
 * identifiers; its dimension must be `expect` or none.  *ret_num receives
 * the folded value.  0 or -EINVAL/-ERANGE/-ENOMEM with the error reported.
 */
int sigp_parse_constant(const char *text, size_t len, enum iosig_dim expect,
			struct sigp_num *ret_num, struct iosig_error *err);

/* Checks what must hold for a whole pragma whatever its origin: at most one
 * parameter per id, no contradictions, name consistent.  0 or -EINVAL. */
int sigp_pragma_validate(const struct iosig_pragma *pragma, struct sigp_diag *diag);

/*
 * iosig_pragma_resolve() with errors reported through diag (positions in
 * the text of `sig`).  0, -ENOENT, -EINVAL or -ENOMEM.
 */
int sigp_resolve(const struct iosig_registry *reg, const struct iosig_pragma *sig,
		 struct sigp_pragma **ret_pragma, struct sigp_diag *diag);

/* Writes name as a C string literal ("a\"b") to buf at *pos (bounded);
 * -EINVAL if name has control characters, which no parsed name has. */
int sigp_put_name(char *buf, size_t size, size_t *pos, const char *name);
/* Appends formatted text at *pos, counting what does not fit. */
void sigp_put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* IOSIG_SIG_INTERNAL_H */
