/* SPDX-License-Identifier: MIT */
/*
 * sig_lex.c - tokens of the signature language: C identifiers, integer and
 * floating literals (with C suffixes), string literals (C escapes), "$N"
 * slots and C punctuators.  Whitespace, newlines, comments and
 * backslash-newline separate tokens.  The lexer never reads past the end of
 * its text, which need not be NUL-terminated.
 */
#include <errno.h>
#include <string.h>

#include "sig_internal.h"

/* ASCII classes, independent of the process locale. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_alnum(char c)
{
	return is_alpha(c) || is_digit(c);
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Punctuators, longest first so that the first match is the longest. */
static const char *const puncts[] = {
	"<<=", ">>=", "...",
	"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
	"/=", "%=", "&=", "|=", "^=", "##",
	"(", ")", "[", "]", "{", "}", ".", ",", "+", "-", "*", "/", "%", "=", "<", ">", "!",
	"~", "&", "|", "^", "?", ":", ";", "#",
};

/* Skips blanks, newlines, comments and line splices; error on an
 * unterminated comment. */
static int skip_space(struct sigp_lexer *lx)
{
	const char *s = lx->src->s;
	size_t n = lx->src->len, i = lx->pos;

	while (i < n) {
		char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			i++;
		} else if (c == '\\' && i + 1 < n && s[i + 1] == '\n') {
			i += 2;
		} else if (c == '\\' && i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n') {
			i += 3;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			size_t j = i + 2;

			while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
				j++;
			if (j + 1 >= n)
				return sigp_src_error(lx->src, -EINVAL, i, 2,
						      "unterminated comment: '/*' has no matching '*/'");
			i = j + 2;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else {
			break;
		}
	}
	lx->pos = i;
	return 0;
}

static bool int_suffix_ok(const char *s, size_t n)
{
	static const char *const ok[] = {
		"u", "U", "l", "L", "ll", "LL",
		"ul", "uL", "Ul", "UL", "lu", "Lu", "lU", "LU",
		"ull", "uLL", "Ull", "ULL", "llu", "LLu", "llU", "LLU",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strlen(ok[i]) == n && memcmp(ok[i], s, n) == 0)
			return true;
	return false;
}

static bool float_suffix_ok(const char *s, size_t n)
{
	return n == 1 && (s[0] == 'f' || s[0] == 'F' || s[0] == 'l' || s[0] == 'L');
}

static int lex_number(struct sigp_lexer *lx, struct sigp_token *tok)
{
	const char *s = lx->src->s;
	size_t n = lx->src->len, start = lx->pos, i = start, digits, num_end, suf;
	unsigned base = 10;
	bool is_float = false;

	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
		digits = i;
		while (i < n && hex_value(s[i]) >= 0)
			i++;
		if (i == digits)
			return sigp_src_error(lx->src, -EINVAL, start, i - start,
					      "hexadecimal constant '%.*s' has no digits",
					      (int)(i - start), s + start);
		if (i < n && (s[i] == '.' || s[i] == 'p' || s[i] == 'P'))
			return sigp_src_error(lx->src, -EINVAL, start, i + 1 - start,
					      "hexadecimal floating constants are not supported; "
					      "write a decimal number such as 1.5e3");
	} else if (s[i] == '0' && i + 2 < n && (s[i + 1] == 'b' || s[i + 1] == 'B') &&
		   (s[i + 2] == '0' || s[i + 2] == '1')) {
		base = 2;
		i += 2;
		digits = i;
		while (i < n && (s[i] == '0' || s[i] == '1'))
			i++;
	} else {
		digits = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i < n && s[i] == '.') {
			is_float = true;
			i++;
			while (i < n && is_digit(s[i]))
				i++;
		}
		if (i < n && (s[i] == 'e' || s[i] == 'E')) {
			size_t j = i + 1;
			bool sign = false;

			if (j < n && (s[j] == '+' || s[j] == '-')) {
				j++;
				sign = true;
			}
			if (j < n && is_digit(s[j])) {
				is_float = true;
				i = j;
				while (i < n && is_digit(s[i]))
					i++;
			} else if (sign || !lx->juxt) {
				/* In a value string "1e" is left to the unit
				 * lookup, which reports an unknown unit 'e'. */
				return sigp_src_error(lx->src, -EINVAL, start, j - start,
						      "exponent of '%.*s' has no digits",
						      (int)(j - start), s + start);
			}
		}
		if (!is_float && s[start] == '0' && i - start > 1)
			base = 8;
	}
	num_end = i;
	suf = i;
	while (i < n && is_alnum(s[i]))
		i++;
	if (i > suf && !(is_float ? float_suffix_ok(s + suf, i - suf)
				  : int_suffix_ok(s + suf, i - suf))) {
		if (lx->juxt && is_alpha(s[suf])) {
			/* "64MiB": the number ends here, the unit follows. */
			i = suf;
		} else {
			const struct sigp_unit *u = sigp_unit_find(s + suf, i - suf, false);

			if (u)
				return sigp_src_error(lx->src, -EINVAL, start, i - start,
						      "a unit cannot be glued to a number in C: "
						      "write %.*s*%.*s instead of '%.*s'",
						      (int)(num_end - start), s + start,
						      (int)(i - suf), s + suf, (int)(i - start),
						      s + start);
			return sigp_src_error(lx->src, -EINVAL, start, i - start,
					      "invalid suffix '%.*s' on %s constant '%.*s'",
					      (int)(i - suf), s + suf,
					      is_float ? "floating" : "integer",
					      (int)(i - start), s + start);
		}
	}
	if (i < n && s[i] == '.')
		return sigp_src_error(lx->src, -EINVAL, start, i + 1 - start,
				      "malformed number '%.*s'", (int)(i + 1 - start), s + start);
	tok->off = start;
	tok->len = i - start;
	if (is_float) {
		int ret = sigp_strtod(s + start, num_end - start, &tok->f);

		if (ret == -ENOMEM)
			return sigp_src_error(lx->src, -ENOMEM, start, num_end - start,
					      "out of memory");
		if (ret < 0)
			return sigp_src_error(lx->src, -ERANGE, start, num_end - start,
					      "floating constant '%.*s' is out of range",
					      (int)(num_end - start), s + start);
		tok->kind = SIGP_T_FLOAT;
		return 0;
	}
	tok->kind = SIGP_T_INT;
	tok->u64 = 0;
	for (size_t k = digits; k < num_end; k++) {
		unsigned d = (unsigned)hex_value(s[k]);

		if (d >= base)
			return sigp_src_error(lx->src, -EINVAL, k, 1,
					      "invalid digit '%c' in octal constant '%.*s'", s[k],
					      (int)(num_end - start), s + start);
		if (tok->u64 > (UINT64_MAX - d) / base)
			return sigp_src_error(lx->src, -ERANGE, start, num_end - start,
					      "integer constant '%.*s' is too large (more than "
					      "64 bits)", (int)(num_end - start), s + start);
		tok->u64 = tok->u64 * base + d;
	}
	return 0;
}

static int lex_string(struct sigp_lexer *lx, struct sigp_token *tok)
{
	const char *s = lx->src->s;
	size_t n = lx->src->len, start = lx->pos, j = start + 1, k = 0;
	char *out;

	while (j < n && s[j] != '"' && s[j] != '\n') {
		if (s[j] == '\\' && j + 1 < n)
			j += 2;
		else
			j++;
	}
	if (j >= n || s[j] != '"')
		return sigp_src_error(lx->src, -EINVAL, start, (j < n ? j : n) - start,
				      "missing terminating '\"' character");
	tok->off = start;
	tok->len = j + 1 - start;
	out = sigp_alloc(lx->arena, j - start);
	if (!out)
		return sigp_src_error(lx->src, -ENOMEM, start, 1, "out of memory");
	for (size_t i = start + 1; i < j; i++) {
		char c = s[i];
		size_t esc = i;

		if (c != '\\') {
			out[k++] = c;
			continue;
		}
		tok->escaped = true;
		c = s[++i];
		switch (c) {
		case 'n': out[k++] = '\n'; break;
		case 't': out[k++] = '\t'; break;
		case 'r': out[k++] = '\r'; break;
		case 'a': out[k++] = '\a'; break;
		case 'b': out[k++] = '\b'; break;
		case 'f': out[k++] = '\f'; break;
		case 'v': out[k++] = '\v'; break;
		case '\\': case '\'': case '"': case '?': out[k++] = c; break;
		case '\n': break; /* line splice */
		case 'x': {
			unsigned v = 0;
			size_t d = 0;

			while (i + 1 < j && hex_value(s[i + 1]) >= 0) {
				v = v * 16 + (unsigned)hex_value(s[++i]);
				if (v > 0xff)
					return sigp_src_error(lx->src, -EINVAL, esc, i + 1 - esc,
							      "hex escape sequence out of range");
				d++;
			}
			if (!d)
				return sigp_src_error(lx->src, -EINVAL, esc, 2,
						      "\\x used with no following hex digits");
			out[k++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				unsigned v = (unsigned)(c - '0');

				for (int d = 1; d < 3 && i + 1 < j && s[i + 1] >= '0' &&
						s[i + 1] <= '7'; d++)
					v = v * 8 + (unsigned)(s[++i] - '0');
				if (v > 0xff)
					return sigp_src_error(lx->src, -EINVAL, esc, i + 1 - esc,
							      "octal escape sequence out of range");
				out[k++] = (char)v;
			} else if (c == 'u' || c == 'U') {
				return sigp_src_error(lx->src, -EINVAL, esc, 2,
						      "universal character names (\\%c) are not "
						      "supported in signature strings; write the "
						      "UTF-8 text directly", c);
			} else {
				return sigp_src_error(lx->src, -EINVAL, esc, 2,
						      "unknown escape sequence '\\%c'", c);
			}
		}
	}
	out[k] = '\0';
	tok->kind = SIGP_T_STRING;
	tok->str = out;
	tok->strlen = k;
	tok->nul_inside = memchr(out, '\0', k) != NULL;
	return 0;
}

int sigp_lex_next(struct sigp_lexer *lx, struct sigp_token *tok)
{
	const char *s = lx->src->s;
	size_t n = lx->src->len, i;
	int ret;

	memset(tok, 0, sizeof(*tok));
	ret = skip_space(lx);
	if (ret < 0)
		return ret;
	i = lx->pos;
	tok->off = i;
	if (i >= n) {
		tok->kind = SIGP_T_EOF;
		return 0;
	}
	if (is_alpha(s[i])) {
		while (i < n && is_alnum(s[i]))
			i++;
		tok->kind = SIGP_T_IDENT;
		tok->len = i - tok->off;
	} else if (is_digit(s[i]) || (s[i] == '.' && i + 1 < n && is_digit(s[i + 1]))) {
		ret = lex_number(lx, tok);
		if (ret < 0)
			return ret;
	} else if (s[i] == '"') {
		ret = lex_string(lx, tok);
		if (ret < 0)
			return ret;
	} else if (s[i] == '\'') {
		return sigp_src_error(lx->src, -EINVAL, i, 1,
				      "character constants are not allowed in signature values");
	} else if (s[i] == '$') {
		size_t j = i + 1;

		tok->u64 = 0;
		while (j < n && is_digit(s[j])) {
			tok->u64 = tok->u64 * 10 + (unsigned)(s[j] - '0');
			if (tok->u64 > 65535)
				return sigp_src_error(lx->src, -EINVAL, i, j + 1 - i,
						      "slot number in '%.*s' is too large",
						      (int)(j + 1 - i), s + i);
			j++;
		}
		if (j == i + 1)
			return sigp_src_error(lx->src, -EINVAL, i, 1,
					      "stray '$': a slot is written $0, $1, ...");
		tok->kind = SIGP_T_SLOT;
		tok->len = j - i;
	} else {
		for (size_t p = 0; p < sizeof(puncts) / sizeof(puncts[0]); p++) {
			size_t pl;

			if (puncts[p][0] != s[i])
				continue;
			pl = strlen(puncts[p]);
			if (pl <= n - i && memcmp(s + i, puncts[p], pl) == 0) {
				tok->kind = SIGP_T_PUNCT;
				tok->len = pl;
				break;
			}
		}
		if (tok->kind != SIGP_T_PUNCT) {
			unsigned char c = (unsigned char)s[i];

			if (c >= 0x21 && c < 0x7f)
				return sigp_src_error(lx->src, -EINVAL, i, 1,
						      "stray '%c' in signature", c);
			return sigp_src_error(lx->src, -EINVAL, i, 1,
					      "stray byte 0x%02x in signature (only ASCII outside "
					      "string literals)", c);
		}
	}
	lx->pos = tok->off + tok->len;
	return 0;
}
