/* SPDX-License-Identifier: MIT */
/* files.c - whole small files for tests (see files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tfile_write(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

char *tfile_read(const char *path)
{
	FILE *fp = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char tmp[4096];

	if (!fp)
		return NULL;
	do {
		n = fread(tmp, 1, sizeof(tmp), fp);
		if (len + n + 1 > cap) {
			char *nb;

			cap = (len + n + 1) * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(fp);
				return NULL;
			}
			buf = nb;
		}
		memcpy(buf + len, tmp, n);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	if (ferror(fp)) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}
