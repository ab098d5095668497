/*
 * The unbound warning is a warning like the compiler's own: -Werror makes
 * it an error (which says so), and -fplugin-arg-iosig-unbound, named in
 * it, sets what it is (c_unbound_error.c; =ignore in the option checks).
 *
 * cflags: -Werror
 */
#include <fcntl.h>

int f(const char *p)
{
	int fd = -1;

#pragma io sig tmp /* expect-error#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] [-Werror] */
	(void)p;
	return fd;
}
