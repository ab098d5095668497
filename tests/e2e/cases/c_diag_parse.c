/*
 * Mistakes in pragmas are compile-time errors at the offending token, with
 * the parser's message: syntax, unknown parameters and pragma kinds, bad
 * units, contradictions, undefined names, redefinitions.
 *
 * verify-notes
 */
#include <fcntl.h>

#define BAD_PARAM bogus_param(3)

#pragma io sigdef name("ckpt") persist
#pragma io sigdef name("ckpt") tmp /* expect-error#19: signature 'ckpt' is already defined in this scope as 'persist name("ckpt")'; use another name, or '#pragma io sig name("ckpt") ...' to use it */
/* expect-note@-2#9: 'ckpt' was defined here */

int f(const char *p)
{
	int fd = -1;

#pragma io sig size_per_ioo(4*KiB) /* expect-error#16: unknown parameter 'size_per_ioo'; did you mean 'size_per_io'? */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(3*h) /* expect-error#30: 'size_per_io' expects a size (e.g. size_per_io(64*KiB)) or a plain number (bytes), but '3*h' is a time; 'h' is the unit 'hours' here (unit names are reserved words in signature values and cannot name a variable) */
	fd = open(p, O_RDONLY);
#pragma io sig name("chkpt") /* expect-error#16: no signature named 'chkpt' is defined here; did you mean 'ckpt'? */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(4*KiB /* expect-error#30: expected ')' before end of text */
	fd = open(p, O_RDONLY);
#pragma io sigg random /* expect-error#12: unknown '#pragma io sigg'; did you mean 'sig'? */
	fd = open(p, O_RDONLY);
	/* A macro: the error is where the macro is defined. */
#pragma io sig BAD_PARAM
	/* expect-error@10#19: unknown parameter 'bogus_param'; parameters are global, local, persist, tmp, sequential_access, random_access, archive, tamper, size_per_io, totalsize, min_mttdl, availability, lifetime (jobwide) and name */
	fd = open(p, O_RDONLY);
#pragma io jobwide random /* expect-error#20: 'random' is not allowed in '#pragma io jobwide', which accepts only lifetime(...) and name(...); put it in a '#pragma io sig' */
#pragma io sig lifetime(2*d) /* expect-error#16: 'lifetime' is only allowed in '#pragma io jobwide' (e.g. #pragma io jobwide lifetime(2*d)) */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(1 / 0) /* expect-error#28: division by zero in '1 / 0' */
	fd = open(p, O_RDONLY);
	/* Contradictions: the message says where the other parameter is. */
#pragma io sig random sequential /* expect-error#23: 'sequential' contradicts 'random' given at line 40, column 16: a file has one dominant access pattern; keep one of them */
	fd = open(p, O_RDONLY);
#pragma io sig persist size_per_io(4*KiB) tmp /* expect-error#43: 'tmp' contradicts 'persist' given at line 42, column 16: data cannot be both persistent and temporary; keep one of them */
	fd = open(p, O_RDONLY);
	/* Tokens C has but signature values do not. */
#pragma io sig size_per_io('a') /* expect-error#28: character constants cannot appear in a signature value; write the number */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(L"1GiB") /* expect-error#26: wide character and string literals are not allowed in '#pragma io'; write '"..."' */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(x = 3) /* expect-error#28: '=' is not allowed in a signature value (a signature value cannot assign); values use numbers, units, variables, + - * / %, parentheses, a.b, a->b, a[i] and f(x) */
	fd = open(p, O_RDONLY);
	/* A repetition and an unclosed '(' name the earlier place in the file too. */
#pragma io sig random size_per_io(1)   random_access /* expect-error#40: 'random_access' repeats 'random' given at line 52, column 16; give each parameter once */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(1 + (2 3)) /* expect-error#35: expected ')' to close the '(' at line 54, column 32 before '3' (missing operator or ')'?) */
	fd = open(p, O_RDONLY);
	/* Not a contradiction: a sig's tmp overrides its definition's persist. */
#pragma io sig name("ckpt") tmp
	fd = open(p, O_RDONLY);
	/* A unit glued to a number: one message, the parser's (C's lexer would
	 * say "invalid suffix"). */
#pragma io sig size_per_io(64KiB) /* expect-error#28: a unit cannot be glued to a number in C: write 64*KiB instead of '64KiB' */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(1.5GiB) /* expect-error#26: a unit cannot be glued to a number in C: write 1.5*GiB instead of '1.5GiB' */
	fd = open(p, O_RDONLY);
	return fd;
}
