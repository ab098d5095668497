/*
 * The C calls from C++: in member functions (values from members, through
 * this or not), lambdas, function templates (each instantiation is bound,
 * with its own values), through references, std::fopen.
 *
 * run: {tmp}
 * expect-log-count: 11 {"event": "decision"}
 */
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace store {

long stripes = 4;

struct Writer {
	long chunk = 8192;
	static const int ways = 3;

	int open_file(const char *p)
	{
#pragma io sig size_per_io(chunk) totalsize(this->chunk * ways)
		return ::open(p, O_RDONLY);
		/* expect-log: {"site": {"line": "@-2", "call": "open"}, "values": [8192, 24576]} */
	}
};

/* A variable of the namespace, seen from a function of the namespace. */
static int striped(const char *p)
{
#pragma io sig size_per_io(stripes * MiB)
	return open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2"}, "values": [4194304]} */
}

} // namespace store

template <typename T>
static int opened(const char *p, T n)
{
	const T &ref = n;
#pragma io sig size_per_io(ref * KiB)
	int fd = open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2"}, "values": [2048]} */
	/* expect-log: {"site": {"line": "@-3"}, "values": [3072]} */
	return fd;
}

/* A returned call: the C++ front end folds return values early (for its
 * warnings) and caches the fold; the rewritten call must be the one used. */
static std::FILE *reader(const char *p)
{
#pragma io sig sequential_access
	return std::fopen(p, "r");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "sig": "sequential_access"} */
}

static void use(int fd)
{
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *p = argv[0];
	store::Writer w;
	long big = 1L << 30;

	(void)argc;
	use(w.open_file(p));
	use(store::striped(p));
	use(opened(p, 2));
	use(opened(p, 3L));

	std::FILE *r = reader(p);
	if (!r)
		return 3;
	std::fclose(r);
	auto returned = [p]() {
#pragma io sig random_access
		return std::fopen(p, "r");
	};
	/* expect-log: {"site": {"line": "@-3", "call": "fopen"}, "sig": "random_access"} */
	r = returned();
	if (!r)
		return 4;
	std::fclose(r);

	auto lambda = [&big, p](int k) {
#pragma io sig random_access totalsize(big + k)
		return open(p, O_RDONLY);
		/* expect-log: {"site": {"line": "@-2"}, "sig": "random_access totalsize($0)", "values": [1073741825]} */
	};
	use(lambda(1));

#pragma io sig tmp
	std::FILE *fp = std::fopen(p, "r");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "sig": "tmp"} */
	if (!fp)
		return 1;
#pragma io sig tmp
	fp = std::freopen(p, "r", fp);
	/* expect-log: {"site": {"line": "@-2", "call": "freopen"}} */
	std::fclose(fp);

	/* A range for and a try block. */
	int sizes[] = { 1, 2 };
	try {
		for (int sz : sizes) {
#pragma io sig size_per_io(sz * MiB)
			use(open(p, O_RDONLY));
		}
	} catch (...) {
		return 2;
	}
	/* expect-log: {"site": {"line": "@-6"}, "values": [1048576]} */
	/* expect-log: {"site": {"line": "@-7"}, "values": [2097152]} */
	return 0;
}
