/*
 * In C++98 a unit glued to a number is a number with a suffix the lexer
 * rejects (in C++11 a user-defined literal, cxx_diag.cc): still one
 * message, the signature parser's.
 *
 * cflags: -std=c++98
 */
#include <fcntl.h>

int f(const char *p)
{
#pragma io sig size_per_io(64KiB) /* expect-error#28: a unit cannot be glued to a number in C: write 64*KiB instead of '64KiB' */
	return open(p, O_RDONLY);
}
