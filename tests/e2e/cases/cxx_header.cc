/*
 * A program that includes <iosig.h> itself (it calls libiosig directly too):
 * the plugin uses its declarations of the entry points.  A file-scope
 * jobwide in C++ runs before main.
 *
 * run: {tmp}
 * expect-stdout: libiosig 0.1.0
 * expect-log-count: 2 {"event": "decision"}
 * expect-log-count: 1 {"event": "jobwide"}
 */
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iosig.h>
#include <unistd.h>

static const double days = 2;

#pragma io jobwide lifetime(days * d)
/* expect-log: {"site": {"line": "@-1", "call": "jobwide"}} */

int main(int argc, char **argv)
{
	std::printf("libiosig %.5s\n", iosig_version());
#pragma io sig tmp size_per_io(argc * KiB)
	int fd = open(argv[0], O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}, "values": [2048]} */
#pragma io sig tmp
	FILE *fp = std::fopen(argv[0], "r");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen"}} */
	if (fp)
		std::fclose(fp);
	return fd < 0 || close(fd);
}
