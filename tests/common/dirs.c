/* SPDX-License-Identifier: MIT */
/* dirs.c - directory checks for tests (see dirs.h). */
#include "dirs.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool listed(const char *name, const char *const *names)
{
	for (; names && *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

long tdir_entries(const char *dir, const char *const *ignore)
{
	static const char *const dots[] = { ".", "..", NULL };
	DIR *d = opendir(dir);
	long n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += !listed(e->d_name, dots) && !listed(e->d_name, ignore);
	closedir(d);
	return n;
}

const char *tdir_path(const char *base, const char *rel)
{
	static char bufs[16][400];
	static unsigned next;
	char *b = bufs[next++ % 16];

	snprintf(b, sizeof(bufs[0]), "%s/%s", base, rel);
	return b;
}

void tskip(const char *why)
{
	printf("skipped: %s\n", why);
	exit(77);
}
