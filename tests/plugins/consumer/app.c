/* Opens its first argument under a signature; prints what open returned. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long chunk = 4096L * argc;
	int fd;

	if (argc < 2)
		return 2;
#pragma io sig sequential_access size_per_io(chunk)
	fd = open(argv[1], O_RDONLY);
	printf("open %s\n", fd >= 0 ? "ok" : "failed");
	return fd < 0 || close(fd);
}
