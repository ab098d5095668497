/* SPDX-License-Identifier: MIT */
/*
 * ann.c - "ANN" of the multi-user tests (test_security.py, issue 10): a
 * program built with the GCC plugin whose annotated open writes a secret
 * (or reads a file back).  test_security.py compiles it at run time, and
 * installs one copy set-user-ID root.
 *
 *   ann write PATH TEXT [BYTES [MODE]]   creates PATH (O_CREAT|O_WRONLY|
 *                                        O_TRUNC, MODE, default 0600) and
 *                                        writes TEXT, repeated up to BYTES
 *   ann read PATH                        prints the content of PATH
 *
 * Exit status 0 on success; 1 with "ann: CALL PATH: strerror" on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *call, const char *path)
{
	fprintf(stderr, "ann: %s %s: %s\n", call, path, strerror(errno));
	return 1;
}

static int write_file(const char *path, const char *text, long long bytes, mode_t mode)
{
	size_t len = strlen(text);
	long long done = 0;
	int fd;

#pragma io sig tmp random_access size_per_io(4*KiB)
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0)
		return fail("open", path);
	if (bytes < (long long)len)
		bytes = (long long)len;
	while (done < bytes) {
		size_t n = bytes - done < (long long)len ? (size_t)(bytes - done) : len;
		ssize_t w = write(fd, text, n);

		if (w < 0)
			return fail("write", path);
		done += w;
	}
	if (close(fd))
		return fail("close", path);
	return 0;
}

static int read_file(const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd;

#pragma io sig tmp random_access size_per_io(4*KiB)
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("open", path);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	if (n < 0)
		return fail("read", path);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "write"))
		return write_file(argv[2], argv[3], argc > 4 ? atoll(argv[4]) : 0,
				  argc > 5 ? (mode_t)strtol(argv[5], NULL, 8) : 0600);
	if (argc == 3 && !strcmp(argv[1], "read"))
		return read_file(argv[2]);
	fprintf(stderr, "usage: ann write PATH TEXT [BYTES [MODE]] | ann read PATH\n");
	return 2;
}
