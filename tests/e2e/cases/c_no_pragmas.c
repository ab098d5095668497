/*
 * Without pragmas the plugin changes nothing: no diagnostics, the calls are
 * the program's own, libiosig is never asked anything.
 *
 * run: {tmp}
 * expect-stdout: 5
 * expect-log-count: 0
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/plain", argv[argc - 1]);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || write(fd, "12345", 5) != 5 || close(fd))
		return 1;
	fp = fopen(path, "r");
	if (!fp || fseek(fp, 0, SEEK_END))
		return 2;
	printf("%ld\n", ftell(fp));
	return fclose(fp);
}
