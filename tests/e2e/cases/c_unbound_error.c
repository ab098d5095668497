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
#pragma io sig tmp /* expect-error#9: '#pragma io sig' is not followed by a supported call in its block; it has no effect (supported: 'open', 'open64', 'openat', 'creat', 'fopen', 'fopen64', 'freopen', and the constructors and 'open' of 'std::fstream', 'std::ifstream' and 'std::ofstream') */
	return fd;
}

#pragma io sig tmp /* expect-error#9: '#pragma io sig' at file scope describes no call; put it inside a function, right before the call that opens the file */
