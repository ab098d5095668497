/*
 * Broken code around pragmas: the compiler reports its own errors, the
 * plugin its own, and nothing crashes (no internal compiler error, also
 * under -fchecking).  Pragmas whose calls were dropped as erroneous are not
 * reported as unbound on top of the real errors.
 *
 * expect-compile-fail
 * allow-other-diagnostics
 */
#include <fcntl.h>
#include <stdio.h>

int f(const char *p)
{
	unknown_t x = 3;
	int fd;
#pragma io sig size_per_io(x)
	fd = open();
#pragma io sig size_per_io(y) /* expect-error#28: 'size_per_io' expects a size (e.g. size_per_io(64*KiB)) or a plain number (bytes), but 'y' is a time; 'y' is the unit 'years (365 days)' here (unit names are reserved words in signature values and cannot name a variable) */
	fd = open(p, O_RDONLY, 1, 2, 3);
#pragma io sig tmp
	FILE *fp = fopen(p);
#pragma io sig tmp
	fd = openat(p, O_RDONLY);
	return fd + (fp != 0) +
}

int g(const char *p)
{
#pragma io sig size_per_io(undeclared)
	return open(p, O_RDONLY) + ;
}
