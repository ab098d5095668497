/*
 * Signature values are C expressions evaluated at the call: locals,
 * parameters, globals, struct members through . and ->, array elements,
 * pointer indexing, function calls, enumerators, macros, units, with the
 * arithmetic of the signature language (integer division truncates, x*ms is
 * x/1000).  The log shows the values libiosig received, in slot order.
 *
 * run: {tmp}
 * expect-log-count: 10 {"event": "decision"}
 * expect-log-count: 1 {"event": "warning"}
 */
#include <fcntl.h>
#include <unistd.h>

#define CHUNK_KIB 4
#define NODES(n) ((n) * 2)

struct layout {
	long stripe;
	int counts[3];
	struct {
		unsigned depth;
	} inner;
	unsigned flags : 3;
	unsigned level : 5;
};

enum { RANKS = 8 };

long total_gib = 3;
static const int weights[] = { 5, 7, 11 };

static long half(long x)
{
	return x / 2;
}

static void use(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void with_params(const char *p, int n, const struct layout *l)
{
	/* Parameters, ->, an array member, a nested anonymous member. */
#pragma io sig size_per_io(n * KiB) totalsize(l->counts[2] * l->inner.depth * MiB)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "size_per_io($0) totalsize($1)", "values": [3072, 6291456]} */
}

int main(int argc, char **argv)
{
	const char *p = argv[0];
	struct layout l = { 1 << 20, { 1, 2, 3 }, { 2 }, 5, 17 };
	const int *wp = weights;
	long chunk = CHUNK_KIB * 1024;

	(void)argc;
	/* Locals, a macro, a global, a struct member through '.'. */
#pragma io sig size_per_io(chunk) totalsize(total_gib * GiB + l.stripe)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "size_per_io($0) totalsize($1)", "values": [4096, 3222274048], "evaluated": "size_per_io(4096) totalsize(3222274048)"} */

	with_params(p, 3, &l);

	/* Indexing an array and a pointer, calling a function, an enumerator,
	 * a function-like macro. */
#pragma io sig size_per_io(weights[1] * half(chunk)) totalsize(wp[2] * NODES(RANKS) * KiB)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "values": [14336, 180224]} */

	/* Integer division truncates like C; '%' needs integers. */
#pragma io sig size_per_io(chunk / 3) totalsize(chunk % 1000 * 7 / 2)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "values": [1365, 336]} */

	/* Floating values, a time and a fraction with units. */
	double hours = 1.5;
#pragma io sig min_mttdl(hours * h + 500 * ms) availability(chunk * ppm / 4096)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "min_mttdl($0) availability($1)", "values": [5400.5, 1e-06]} */

	/* Evaluated at the call: an assignment before it in the statement the
	 * pragma describes counts, and so does a variable declared there. */
#pragma io sig size_per_io(chunk) totalsize(late)
	{
		chunk = 8192;
		long late = 42;
		use(open(p, O_RDONLY));
	}
	/* expect-log: {"site": {"line": "@-6"}, "values": [8192, 42]} */

	/* A value evaluated in a loop, once per call. */
	for (int i = 1; i <= 2; i++) {
#pragma io sig size_per_io(i * 512)
		use(open(p, O_RDONLY));
	}
	/* expect-log: {"site": {"line": "@-3"}, "values": [512]} */
	/* expect-log: {"site": {"line": "@-4"}, "values": [1024]} */

	/* Bit-fields. */
#pragma io sig size_per_io(l.level * KiB + l.flags)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "values": [17413]} */

	/* A nonsensical value reaches libiosig as it is: it ignores it. */
	long zero = 0;
#pragma io sig size_per_io(chunk - 10000) totalsize(chunk / zero)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "values": [-1808, null], "evaluated": null, "action": "ignored"} */
	/* expect-log: {"event": "warning", "site": {"line": "@-3"}} */
	return 0;
}
