/*
 * _FORTIFY_SOURCE wraps open and openat in always-inline functions that
 * call __open_2 and friends; the plugin sees the call of open before they
 * are expanded and replaces it like any other.
 *
 * cflags: -O2 -D_FORTIFY_SOURCE=2
 * run: {tmp}
 * expect-log-count: 3 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	int fd, flags = O_RDONLY;

	snprintf(path, sizeof(path), "%s/f", argv[argc - 1]);
#pragma io sig tmp
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}} */
	close(fd);
#pragma io sig sequential_access
	fd = open(path, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}} */
	close(fd);
	/* Flags unknown at compile time (the wrapper would call __open_2). */
#pragma io sig random_access
	fd = open(path, flags);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}} */
	return fd < 0 || close(fd);
}
