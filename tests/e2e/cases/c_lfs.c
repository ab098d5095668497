/*
 * _FILE_OFFSET_BITS=64: glibc declares open, openat, creat, fopen and
 * freopen with the assembler names open64, openat64 ... (__REDIRECT).  The
 * plugin replaces the function the program really calls and says so in
 * site->call.
 *
 * cflags: -D_FILE_OFFSET_BITS=64
 * run: {tmp}
 * expect-log-count: 5 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir = argv[argc - 1];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char path[4096];
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
#pragma io sig tmp
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	/* expect-log: {"site": {"line": "@-2", "call": "open64"}} */
	close(fd);
#pragma io sig tmp
	fd = openat(dfd, "f", O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "openat64"}} */
	close(fd);
#pragma io sig tmp
	fd = creat(path, 0600);
	/* expect-log: {"site": {"line": "@-2", "call": "creat64"}} */
	close(fd);
#pragma io sig tmp
	fp = fopen(path, "r");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen64"}} */
#pragma io sig tmp
	fp = freopen(path, "w", fp);
	/* expect-log: {"site": {"line": "@-2", "call": "freopen64"}} */
	if (!fp)
		return 1;
	fclose(fp);
	close(dfd);
	return 0;
}
