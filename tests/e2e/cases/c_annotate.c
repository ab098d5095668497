/*
 * <iosig_annotate.h>: the annotation macros become the pragmas when a
 * plugin predefines __IOSIG__ (and nothing without one, tests/plugins),
 * warning-free under -Werror; IOSIG_CALL puts a signature inside an
 * expression macro (int fd = OPEN_TMP(p)), as a statement expression.
 *
 * cflags: -Werror
 * run: {tmp}
 * expect-stdout: __IOSIG__ 2, 3 opened
 * expect-log: {"site": {"line": "@+29", "call": "open"}, "sig": "tmp random_access"}
 * expect-log: {"site": {"line": "@+31", "call": "open"}, "sig": "persist sequential_access size_per_io($0) name(\"ckpt\")", "values": [4096]}
 * expect-log: {"site": {"line": "@+15", "call": "fopen"}, "sig": "tmp"}
 * expect-log-count: 3 {"event": "decision"}
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <iosig_annotate.h>

IOSIG_SIGDEF(name("ckpt") persist sequential)

#define OPEN_TMP(p) IOSIG_CALL((tmp, random), open((p), O_CREAT | O_RDWR, 0600))

static FILE *log_open(const char *p)
{
	IOSIG_SIG(tmp)
	return fopen(p, "w");
}

int main(int argc, char **argv)
{
	char path[4096];
	long chunk = 4096L * argc / 2;
	int opened = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/a", argv[argc - 1]);
	int fd = OPEN_TMP(path);
	opened += fd >= 0 && !close(fd);
	snprintf(path, sizeof(path), "%s/b", argv[argc - 1]);
	IOSIG_SIG(name("ckpt") size_per_io(chunk))
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	opened += fd >= 0 && !close(fd);
	snprintf(path, sizeof(path), "%s/c", argv[argc - 1]);
	fp = log_open(path);
	opened += fp && !fclose(fp);
	printf("__IOSIG__ %d, %d opened\n", __IOSIG__, opened);
	return 0;
}
