/*
 * A pragma describes the call in the statement right after it, and nothing
 * else.  When that statement has none it has no effect and draws a warning
 * (by default) that says why: nothing follows it in its block, the
 * statement calls no function that could open a file, another pragma comes
 * first, it is at file scope.  The program still builds, and the calls that
 * are described work; the calls after the statement are not described.
 * The wrappers, macros and pointers of real programs are in
 * c_unbound_wrappers.c.
 *
 * run: {tmp}
 * expect-log-count: 3 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#pragma io sig random_access /* expect-warning#9: '#pragma io sig' at file scope describes no call; put it inside a function, right before the statement that opens the file [-fplugin-arg-iosig-unbound] */

static int counter;

static void nothing_follows(void)
{
	counter++;
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: nothing follows it in its block; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
}

int main(int argc, char **argv)
{
	const char *p = argv[0];
	int fd;

	nothing_follows();
	/* The call comes after the block of the pragma: not described. */
	if (argc > 0) {
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
		counter++;
	}
	fd = open(p, O_RDONLY);
	close(fd);

	/* Two pragmas in a row: the second describes the call. */
#pragma io sig persist /* expect-warning#9: '#pragma io sig' describes no call: another '#pragma io' (line 44) follows it first [-fplugin-arg-iosig-unbound] */
#pragma io sig sequential_access
	fd = open(p, O_RDONLY);
	/* expect-log: {"site": {"line": "@-2"}, "sig": "sequential_access"} */
	close(fd);

	/* A pragma inside the loop comes first and describes the call. */
#pragma io sig global /* expect-warning#9: '#pragma io sig' describes no call: another '#pragma io' (line 52) follows it first [-fplugin-arg-iosig-unbound] */
	for (int i = 0; i < 1; i++) {
#pragma io sig local
		fd = open(p, O_RDONLY);
		close(fd);
	}
	/* expect-log: {"site": {"line": "@-4"}, "sig": "local"} */

	/* The statement after the pragma calls printf (a library function
	 * that opens nothing); the open after it is not described. */
#pragma io sig archive /* expect-warning#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
	printf("%d\n", counter);
	fd = open(p, O_RDONLY);
	close(fd);

	/* A declaration without an initialiser is the statement after it;
	 * the assignment that follows is another statement. */
	int fd2;
#pragma io sig tamper /* expect-warning#9: '#pragma io sig' describes no call: the statement after it calls no function that could open a file; put it right before the statement that opens the file [-fplugin-arg-iosig-unbound] */
	FILE *fp;
	fp = fopen(p, "r");
	fclose(fp);

	/* But the declarators of one declaration are one statement. */
#pragma io sig tmp
	FILE *none = NULL, *fq = fopen(p, "r");
	/* expect-log: {"site": {"line": "@-2"}, "call": "fopen", "sig": "tmp"} */
	fclose(fq);
	fd2 = none == NULL;
	/* expect-stdout: 2 */
	return !fd2;
}
