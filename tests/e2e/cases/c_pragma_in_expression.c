/*
 * A pragma inside an expression: from a macro used as one (int fd =
 * OPEN_TMP(p)) or a directive between the tokens of a statement.  Neither
 * compiler can take it (GCC's parser rejects it, in words of its own);
 * both plugins add the same note saying what to write instead
 * (IOSIG_CALL of <iosig_annotate.h>, c_annotate.c).
 *
 * expect-compile-fail
 * allow-other-diagnostics
 * verify-notes
 */
#include <fcntl.h>

#define OPEN_TMP(p) _Pragma("io sig tmp") open((p), O_RDONLY) /* expect-note#21: '#pragma io' cannot stand inside an expression: put it right before the statement that contains the call, or, in a macro that must be an expression, write IOSIG_CALL((SIGNATURE), CALL) from <iosig_annotate.h> */

int f(const char *p)
{
	int fd = OPEN_TMP(p);

	return fd;
}

int g(const char *p)
{
	int fd =
#pragma io sig tmp /* expect-note#9: '#pragma io' cannot stand inside an expression: put it right before the statement that contains the call, or, in a macro that must be an expression, write IOSIG_CALL((SIGNATURE), CALL) from <iosig_annotate.h> */
		open(p, O_RDONLY);

	return fd;
}
