/*
 * A pragma inside an expression in C++: a constructor's member
 * initialiser spelt with a macro, an argument of a call.  As in C
 * (c_pragma_in_expression.c), GCC's parser rejects it in words of its own
 * ("'#pragma' is not allowed here") and both plugins add the same note.
 *
 * expect-compile-fail
 * allow-other-diagnostics
 * verify-notes
 */
#include <fcntl.h>
#include <unistd.h>

#define OPEN_TMP(p) _Pragma("io sig tmp") ::open((p), O_RDONLY) /* expect-note#21: '#pragma io' cannot stand inside an expression: put it right before the statement that contains the call, or, in a macro that must be an expression, write IOSIG_CALL((SIGNATURE), CALL) from <iosig_annotate.h> */

struct File {
	explicit File(const char *p) : fd(OPEN_TMP(p)) {}
	int fd;
};

static int keep(int fd)
{
	return fd;
}

int g(const char *p)
{
	File f(p);

	return keep(
#pragma io sig tmp /* expect-note#9: '#pragma io' cannot stand inside an expression: put it right before the statement that contains the call, or, in a macro that must be an expression, write IOSIG_CALL((SIGNATURE), CALL) from <iosig_annotate.h> */
		::open(p, O_RDONLY)) + f.fd;
}
