/*
 * Code before the call in the statement a pragma describes (here a block)
 * that optimisers turn into intrinsics and lifetime markers (a local array,
 * memset and memcpy of structures, __builtin_expect, an inlined function, a
 * loop that unrolls): the call is still the one described, with the values
 * it has at the call, at every optimisation level and with debug
 * information.
 *
 * cflags: -g
 * run: {tmp}
 * expect-stdout: ok 3
 * expect-log-count: 3 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct big {
	char name[64];
	long sizes[8];
};

static inline long twice(long x)
{
	return 2 * x;
}

static const char *dir_of(char **argv, int argc)
{
	return argv[argc - 1];
}

int main(int argc, char **argv)
{
	struct big a, b;
	long chunk = 4096;
	int fd, opened = 0;

	char path[256];

	memset(&a, 0, sizeof(a));
	a.sizes[3] = 3;
#pragma io sig size_per_io(chunk) totalsize(b.sizes[3] * MiB)
	{
		memcpy(&b, &a, sizeof(b));
		for (int i = 0; i < 4; i++)
			chunk = twice(chunk);
		snprintf(path, sizeof(path), "%s/f", dir_of(argv, argc));
		if (__builtin_expect(argc > 0, 1))
			fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		else
			fd = -1;
	}
	/* expect-log: {"site": {"line": "@-11"}, "sig": "size_per_io($0) totalsize($1)", "values": [65536, 3145728]} */
	opened += fd >= 0;
	if (fd >= 0)
		close(fd);

	/* A pragma before a block with locals of its own. */
	{
		char scratch[128];
		long ssz = sizeof(scratch);
#pragma io sig random_access size_per_io(ssz)
		{
			char copy[128];

			memset(scratch, 'x', sizeof(scratch));
			memcpy(copy, scratch, sizeof(copy));
			fd = open(path, copy[0] == 'x' ? O_RDONLY : O_WRONLY);
		}
		/* expect-log: {"site": {"line": "@-8"}, "values": [128]} */
		opened += fd >= 0 && read(fd, scratch, 1) == 0;
		if (fd >= 0)
			close(fd);
	}

	/* A call inside an inlined loop body. */
	for (int i = 0; i < 1; i++) {
#pragma io sig tmp totalsize(twice(i + 1))
		FILE *fp = fopen(path, "r");
		/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "values": [2]} */
		opened += fp != NULL;
		if (fp)
			fclose(fp);
	}
	printf("ok %d\n", opened);
	return 0;
}
