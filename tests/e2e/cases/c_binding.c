/*
 * Binding: a pragma describes the first supported call after it in its
 * block, whatever comes between, wherever the call sits in the statement
 * that contains it: in a condition, an initialiser, a return, an argument,
 * a loop, a branch, a macro.
 *
 * run: {tmp}
 * expect-stdout: ok
 * expect-log-count: 12 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define OPEN_RO(p) open((p), O_RDONLY)
#define DESCRIBE(sig) _Pragma(sig)

static int opened;

static int use(int fd)
{
	opened += fd >= 0;
	return fd >= 0 ? close(fd) : -1;
}

static int by_return(const char *p)
{
#pragma io sig random_access
	return open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2", "call": "open"}, "sig": "random_access"} */
}

int main(int argc, char **argv)
{
	const char *p = argv[0];
	int fd, i;

	(void)argc;
	/* In the condition of an if. */
#pragma io sig sequential_access
	if ((fd = open(p, O_RDONLY)) < 0)
		return 1;
	/* expect-log: {"site": {"line": "@-3"}, "sig": "sequential_access"} */
	use(fd);

#pragma io sig tmp



	/* blank lines and a comment */ int fd2 =
		// and a line comment
		open(p,
		     O_RDONLY);
	/* expect-log: {"site": {"line": "@-8"}, "sig": "tmp"} */
	use(fd2);

	/* As an argument. */
#pragma io sig persist
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "persist"} */

	use(by_return(p));

	/* Before a loop: the first call inside it. */
#pragma io sig local
	for (i = 0; i < 2; i++)
		use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-3"}, "sig": "local"} */
	/* expect-log: {"site": {"line": "@-4"}, "sig": "local"} */

	/* Inside a loop and inside the branches of an if. */
	for (i = 0; i < 2; i++) {
		if (i == 0) {
#pragma io sig global
			fd = open(p, O_RDONLY);
		} else {
#pragma io sig archive
			fd = open(p, O_RDONLY);
		}
		use(fd);
	}
	/* expect-log: {"site": {"line": "@-8"}, "sig": "global"} */
	/* expect-log: {"site": {"line": "@-6"}, "sig": "archive"} */

	/* A while loop and a switch. */
	i = 0;
	while (i < 1) {
		switch (i++) {
		case 0:
#pragma io sig tamper
			use(open(p, O_RDONLY));
			break;
		}
	}
	/* expect-log: {"site": {"line": "@-5"}, "sig": "tamper"} */

	/* The call in a macro, the pragma in a macro. */
#pragma io sig size_per_io(64*KiB)
	use(OPEN_RO(p));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "size_per_io(65536)"} */
	DESCRIBE("io sig totalsize(1*MiB)")
	use(OPEN_RO(p));
	/* expect-log: {"sig": "totalsize(1048576)"} */

	/* A ternary: the first supported call in evaluation order. */
#pragma io sig min_mttdl(1*y)
	fd = argc > 5 ? -1 : open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2"}, "sig": "min_mttdl(31536000)"} */
	use(fd);
	puts(opened == 12 ? "ok" : "wrong count");
	return 0;
}
