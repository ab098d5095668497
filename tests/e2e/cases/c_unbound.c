/*
 * A pragma that no supported call follows in its block has no effect and
 * draws a warning (by default): at the end of its block, before another
 * pragma, when a nearer pragma describes the same call, at file scope.
 * The program still builds, and the calls that are described work.
 *
 * run: {tmp}
 * expect-log-count: 3 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#pragma io sig random_access /* expect-warning#9: '#pragma io sig' at file scope describes no call; put it inside a function, right before the call that opens the file */

static int counter;

static void nothing_follows(void)
{
	counter++;
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' is not followed by a supported call in its block; it has no effect (supported: 'open', 'open64', 'openat', 'creat', 'fopen', 'fopen64', 'freopen', and the constructors and 'open' of 'std::fstream', 'std::ifstream' and 'std::ofstream') */
	counter++;
}

int main(int argc, char **argv)
{
	const char *p = argv[0];
	int fd;

	nothing_follows();
	/* The call comes after the block of the pragma: not described. */
	if (argc > 0) {
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' is not followed by a supported call in its block; it has no effect (supported: 'open', 'open64', 'openat', 'creat', 'fopen', 'fopen64', 'freopen', and the constructors and 'open' of 'std::fstream', 'std::ifstream' and 'std::ofstream') */
		counter++;
	}
	fd = open(p, O_RDONLY);
	close(fd);

	/* Two pragmas in a row: the second describes the call. */
#pragma io sig persist /* expect-warning#9: '#pragma io sig' is followed by another '#pragma io' (line 41) before any supported call; it has no effect */
#pragma io sig sequential_access
	fd = open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2"}, "sig": "sequential_access"} */
	close(fd);

	/* A pragma inside the loop comes first and describes the call. */
#pragma io sig global /* expect-warning#9: '#pragma io sig' is followed by another '#pragma io' (line 49) before any supported call; it has no effect */
	for (int i = 0; i < 1; i++) {
#pragma io sig local
		fd = open(p, O_RDONLY);
		close(fd);
	}
	/* expect-log: {"site": {"line": "@-4"}, "sig": "local"} */

	/* Not a supported call: printf, close.  The next open is. */
#pragma io sig archive
	printf("%d\n", counter);
	fd = open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-3"}, "sig": "archive"} */
	/* expect-stdout: 3 */
	return close(fd);
}
