/*
 * With unbound=error a pragma that describes nothing is an error, and
 * unbound=ignore (tested by the option checks) silences it.
 *
 * iosig: unbound=error
 */
#include <fcntl.h>

int f(const char *p)
{
	int fd;

	fd = open(p, O_RDONLY);
#pragma io sig tmp /* expect-error#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
	return fd;
}

#pragma io sig tmp /* expect-error#9: '#pragma io sig' at file scope describes no call; put it inside a function, right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
