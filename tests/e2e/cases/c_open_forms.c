/*
 * Every supported C call, each under its own pragma: the call is replaced,
 * returns what the original returns, and libiosig receives the site, the
 * canonical signature and the values.
 *
 * run: {tmp}
 * expect-stdout: read 5 bytes: hello
 * expect-log-count: 10 {"event": "decision"}
 */
#define _GNU_SOURCE /* open64, fopen64 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char buf[4096];

/* dir/name in a static buffer. */
static const char *in(const char *dir, const char *name)
{
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

int main(int argc, char **argv)
{
	const char *dir = argv[argc - 1];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char text[16] = "";
	FILE *fp, *fp2;
	int fd;

#pragma io sig tmp
	fd = open(in(dir, "a"), O_CREAT | O_WRONLY | O_TRUNC, 0600);
	/* expect-log: {"site": {"line": "@-2", "column": 9, "call": "open", "abi": 1}, "sig": "tmp", "values": []} */
	if (fd < 0 || write(fd, "hello", 5) != 5 || close(fd))
		return 1;
#pragma io sig sequential_access
	fd = open(in(dir, "a"), O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}, "sig": "sequential_access", "values": []} */
	if (fd < 0 || read(fd, text, 5) != 5 || close(fd))
		return 2;
	printf("read 5 bytes: %s\n", text);
#pragma io sig random_access
	fd = open64(in(dir, "b"), O_CREAT | O_RDWR, 0644);
	/* expect-log: {"site": {"line": "@-2", "call": "open64"}, "sig": "random_access"} */
	close(fd);
#pragma io sig persist
	fd = openat(dfd, "c", O_CREAT | O_WRONLY, 0600);
	/* expect-log: {"site": {"line": "@-2", "call": "openat"}, "sig": "persist"} */
	close(fd);
#pragma io sig local
	fd = openat(dfd, "c", O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "openat"}, "sig": "local"} */
	close(fd);
#pragma io sig archive
	fd = creat(in(dir, "d"), 0600);
	/* expect-log: {"site": {"line": "@-2", "call": "creat"}, "sig": "archive"} */
	close(fd);
#pragma io sig tamper
	fp = fopen(in(dir, "e"), "w");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "sig": "tamper"} */
	fputs("x", fp);
	fclose(fp);
#pragma io sig global
	fp = fopen64(in(dir, "e"), "r");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen64"}, "sig": "global"} */
#pragma io sig size_per_io(4*KiB)
	fp2 = freopen(in(dir, "f"), "w", fp);
	/* expect-log: {"site": {"line": "@-2", "call": "freopen"}, "sig": "size_per_io(4096)"} */
	if (!fp2 || fp2 != fp)
		return 3;
	fclose(fp2);
	/* A failing call fails as it would have: same result, same errno. */
#pragma io sig tmp
	fd = open(in(dir, "missing/x"), O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}} */
	if (fd != -1 || errno != ENOENT)
		return 4;
	close(dfd);
	return 0;
}
