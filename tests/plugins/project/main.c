/*
 * An annotated program as a project writes it to build with or without an
 * iosig plugin, under -Wall -Wextra -Werror (tests/plugins/check.sh,
 * "projects"): <iosig_annotate.h> for a signature before an open, a named
 * one, an opener of its own, and an expression macro.  Prints "ok".
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <iosig_annotate.h>

IOSIG_SIGDEF(name("scratch") tmp random)

/* The program's own way of opening its report. */
static FILE *open_report(const char *name, const char *mode)
{
	return fopen(name, mode);
}

IOSIG_OPENER(open_report, path(1), mode(2))

#define OPEN_SCRATCH(p) IOSIG_CALL((name("scratch")), open((p), O_CREAT | O_RDWR, 0600))

int main(int argc, char **argv)
{
	long chunk = 4096L * argc;
	char path[4096];
	FILE *fp;
	int fd;

	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	IOSIG_SIG(sequential size_per_io(chunk))
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, &chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk) || close(fd))
		return 1;
	snprintf(path, sizeof(path), "%s/scratch", argv[1]);
	fd = OPEN_SCRATCH(path);
	if (fd < 0 || close(fd))
		return 1;
	snprintf(path, sizeof(path), "%s/report", argv[1]);
	IOSIG_SIG(tmp)
	fp = open_report(path, "w");
	if (!fp || fclose(fp))
		return 1;
	puts("ok");
	return 0;
}
