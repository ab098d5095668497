/*
 * C++-specific diagnostics: a name the lambda does not capture, member
 * functions and overloaded functions in values, a pragma in a template that
 * describes nothing (reported once, not once per instantiation), a pragma
 * before a declaration with a destructor that opens nothing (the statements
 * after it are nested in the C++ tree, but are not the statement after the
 * pragma), a unit glued to a number (cxx98_glued.cc: in C++98).
 */
#include <fcntl.h>
#include <string>

struct Conf {
	long chunk;
	long size() const { return chunk; }
};

long scaled(long x) { return x; }
long scaled(double x) { return (long)x; }

template <typename T>
int unbound(T n)
{
	int fd = -1;

#pragma io sig size_per_io(n) /* expect-warning#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
	return fd;
}

int g(const char *p)
{
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
	std::string s(p);
#pragma io sig persist
	return open(s.c_str(), O_RDONLY);
}

int f(const char *p, Conf &c)
{
	long big = 1;
	auto l = [&]() {
#pragma io sig totalsize(big) /* expect-error#26: 'big' is a variable of the enclosing function, which this lambda does not capture; capture it by name to use it in a signature value */
		return open(p, O_RDONLY);
	};
#pragma io sig size_per_io(c.size()) /* expect-error#28: 'c.size' is not a data member; member functions and types cannot be used in a signature value */
	int fd = open(p, O_RDONLY);
#pragma io sig size_per_io(scaled(3)) /* expect-error#28: 'scaled' is overloaded; a signature value can only call a function declared once */
	fd = open(p, O_RDONLY);
	/* A unit glued to a number is a user-defined literal in C++11. */
#pragma io sig size_per_io(64KiB) /* expect-error#28: a unit cannot be glued to a number in C: write 64*KiB instead of '64KiB' */
	fd = open(p, O_RDONLY);
	return l() + fd + unbound(1) + unbound(2L);
}
