/*
 * C++ code between a pragma and its call: objects with destructors, an
 * inlined lambda, a temporary std::string in the call's own arguments, a
 * call in a try block (an invoke, for clang); the call is the one described,
 * with the values it has there, at every optimisation level and with debug
 * information.
 *
 * cflags: -g
 * run: {tmp}
 * expect-stdout: ok 2
 * expect-log-count: 2 {"event": "decision"}
 */
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char **argv)
{
	std::string dir = argv[argc - 1];
	long chunk = 512;
	int opened = 0;

	int fd;
#pragma io sig size_per_io(chunk) totalsize(n * KiB)
	{
		std::vector<int> v(16, 1);
		auto scale = [&v](long x) { return x * (long)v.size(); };
		chunk = scale(chunk);
		long n = dir.empty() ? 0 : 7;
		fd = open((dir + "/g").c_str(), O_CREAT | O_WRONLY, 0600);
	}
	/* expect-log: {"site": {"line": "@-8", "call": "open"}, "values": [8192, 7168]} */
	opened += fd >= 0;
	if (fd >= 0)
		close(fd);

	try {
		std::string path = dir + "/g";
#pragma io sig tmp
		std::FILE *fp = std::fopen(path.c_str(), "r");
		/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "sig": "tmp"} */
		if (!fp)
			throw 1;
		opened++;
		std::fclose(fp);
	} catch (int) {
		return 1;
	}
	std::printf("ok %d\n", opened);
	return 0;
}
