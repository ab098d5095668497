/*
 * Values the plugin cannot evaluate are errors at the value, said where the
 * name was looked up (at the call): undeclared names, non-numbers, wrong
 * member access, '%' on floating values, calls of non-functions, argument
 * counts, void functions, types.
 *
 * verify-notes
 */
#include <fcntl.h>

struct cfg {
	int chunk;
	double ratio;
};

typedef long width_t;
static void nothing(void)
{
}
static long two(long a, long b)
{
	return a + b;
}

int f(const char *p, struct cfg *c, struct cfg v, double dd, int n)
{
	int fd = -1;

#pragma io sig size_per_io(undeclared_var) /* expect-error#28: 'undeclared_var' is not declared where the signature is evaluated */
	fd = open(p, O_RDONLY); /* expect-note#14: the signature is evaluated at this call */
#pragma io sig size_per_io(p) /* expect-error#28: 'p' has type 'const char *', which is not a number */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(c->nochunk) /* expect-error#28: 'c->nochunk': 'struct cfg' has no member named 'nochunk' */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(c.chunk) /* expect-error#28: 'c' is a pointer; use '->' to reach its members */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(v->chunk) /* expect-error#28: 'v' is not a pointer to a structure or union (it has type 'struct cfg'), so '->' cannot be used */
	fd = open(p, O_RDONLY);
#pragma io sig size_per_io(n.chunk) /* expect-error#28: 'n' is not a structure or union (it has type 'int') */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(dd % 3) /* expect-error#26: 'dd' is not an integer; '%' needs integer operands */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(c->ratio % 3) /* expect-error#26: 'c->ratio' is not an integer; '%' needs integer operands */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(n(3)) /* expect-error#26: 'n' is neither a function nor a pointer to a function */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(two(1)) /* expect-error#26: 'two' takes 2 arguments but the signature passes 1 */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(nothing()) /* expect-error#26: 'nothing' returns nothing (void), so it has no value */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(two) /* expect-error#26: 'two' is a function; a signature value can call it */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(width_t) /* expect-error#26: 'width_t' names a type, not a value */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(n[2]) /* expect-error#26: 'n' is neither an array nor a pointer (it has type 'int') */
	fd = open(p, O_RDONLY);
#pragma io sig totalsize(c[dd]) /* expect-error#28: array index 'dd' is not an integer */
	fd = open(p, O_RDONLY);
	/* Several errors in one pragma: each is reported. */
#pragma io sig size_per_io(p) totalsize(nope) /* expect-error#28: 'p' has type 'const char *', which is not a number */
	/* expect-error@-1#41: 'nope' is not declared where the signature is evaluated */
	fd = open(p, O_RDONLY); /* expect-note#14: the signature is evaluated at this call */
	return fd;
}
