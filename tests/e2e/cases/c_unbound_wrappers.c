/*
 * What real programs write where a file is opened (wrappers.h): a call of
 * their own wrapper, of a function a macro renames, of a function pointer.
 * None is a supported call, so the pragma describes nothing, and the
 * warning names the function (and the macro) and says what to do.  The
 * supported call after the wrapper's statement (a log file) is not
 * described: nothing is redirected, the decision log stays empty.
 *
 * run: {tmp}
 * expect-stdout: fopen_output_safely ok, log ok, openat_safer ok, osOpen ok, output_file_open ok
 * expect-log-count: 0
 */
#include <stdlib.h>

#include "wrappers.h"

int main(int argc, char **argv)
{
	char out[4096], log[4096];
	FILE *fp, *lg, *o;
	int fd, fd2;

	if (argc < 2)
		return 2;
	snprintf(out, sizeof(out), "%s/out.bz2", argv[1]);
	snprintf(log, sizeof(log), "%s/log", argv[1]);

#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it (line 29) calls 'fopen_output_safely', which is not a supported open; if it opens a file it is given, declare it with '#pragma io opener(fopen_output_safely, path(N), ...)', or annotate the open inside it [-fplugin-arg-iosig-unbound] */
	fp = fopen_output_safely(out, "wb");
	lg = fopen(log, "w");
	printf("fopen_output_safely %s, log %s", fp ? "ok" : "failed", lg ? "ok" : "failed");

	snprintf(out, sizeof(out), "%s/out.gz", argv[1]);
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it (line 35) calls 'openat_safer' (from macro 'openat'), which is not a supported open; if it opens a file it is given, declare it with '#pragma io opener(openat_safer, path(N), ...)', or annotate the open inside it [-fplugin-arg-iosig-unbound] */
	fd = openat(AT_FDCWD, out, O_WRONLY | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
	printf(", openat_safer %s", fd > STDERR_FILENO ? "ok" : "failed");

	snprintf(out, sizeof(out), "%s/db", argv[1]);
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it (line 40) calls a function through a pointer (from macro 'osOpen'), which iosig cannot follow; annotate a direct call of the open, or of a function declared with '#pragma io opener' [-fplugin-arg-iosig-unbound] */
	fd2 = osOpen(out, O_RDWR | O_CREAT, 0644);
	printf(", osOpen %s", fd2 >= 0 ? "ok" : "failed");

	snprintf(out, sizeof(out), "%s/query.out", argv[1]);
#pragma io sig tmp /* expect-warning#9: '#pragma io sig' describes no call: the statement after it (line 45) calls 'output_file_open', which is not a supported open; if it opens a file it is given, declare it with '#pragma io opener(output_file_open, path(N), ...)', or annotate the open inside it [-fplugin-arg-iosig-unbound] */
	o = output_file_open(out, 1);
	printf(", output_file_open %s\n", o ? "ok" : "failed");
	return !fp || !lg || fd < 0 || fd2 < 0 || !o || fclose(fp) || fclose(lg) || fclose(o) ||
	       close(fd) || close(fd2);
}
