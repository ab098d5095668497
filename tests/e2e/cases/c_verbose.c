/*
 * verbose: a note for every pragma saying which call it describes and what
 * the call becomes; nothing else changes.
 *
 * iosig: verbose
 * verify-notes
 * run: {tmp}
 * expect-log-count: 2 {"event": "decision"}
 * expect-log-count: 1 {"event": "jobwide"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#pragma io jobwide lifetime(1*d) /* expect-note#9: '#pragma io jobwide' at file scope runs before 'main' (constructor) */

int main(int argc, char **argv)
{
	FILE *fp;
	int fd;

#pragma io sig tmp /* expect-note#9: '#pragma io sig' describes the call of 'open' on line 23, which becomes a call of 'iosig_open' */
	fd = open(argv[argc - 1], O_RDONLY);
#pragma io sig tmp /* expect-note#9: '#pragma io sig' describes the call of 'fopen' on line 26, which becomes a call of 'iosig_fopen' */
	/* on the next line */
	if (fd >= 0 && (fp = fopen(argv[0], "r")) != NULL)
		fclose(fp);
	return fd < 0 || close(fd);
}
