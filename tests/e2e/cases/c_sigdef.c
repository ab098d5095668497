/*
 * Named signatures: a sigdef at file scope is visible in every function
 * after it; a sigdef in a function is visible in that function only and
 * hides a file-scope one of the same name; a sig with name("N") starts from
 * the definition and its own parameters override it (random replaces
 * sequential).  Values in a definition are evaluated at each call that
 * uses it.
 *
 * run: {tmp}
 * expect-log-count: 5 {"event": "decision"}
 */
#include <fcntl.h>
#include <unistd.h>

#pragma io sigdef name("ckpt") persist sequential_access size_per_io(64*MiB)
#pragma io sigdef name("scratch") tmp size_per_io(chunk)

static void use(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void writer(const char *p)
{
#pragma io sig name("ckpt")
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "persist sequential_access size_per_io(67108864) name(\"ckpt\")", "values": []} */
#pragma io sig name("ckpt") random_access totalsize(8*GiB)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "persist random_access size_per_io(67108864) totalsize(8589934592) name(\"ckpt\")"} */
}

static void local_def(const char *p)
{
	/* This function's own "ckpt". */
#pragma io sigdef name("ckpt") tmp random_access
#pragma io sig name("ckpt")
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "tmp random_access name(\"ckpt\")"} */
}

static void scratch(const char *p, long chunk)
{
	/* The definition names `chunk`: this function's parameter. */
#pragma io sig name("scratch") totalsize(chunk * 4)
	use(open(p, O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "tmp size_per_io($0) totalsize($1) name(\"scratch\")", "values": [512, 2048]} */
}

int main(int argc, char **argv)
{
	(void)argc;
	writer(argv[0]);
	local_def(argv[0]);
	scratch(argv[0], 512);
	/* Back in another function: the file-scope "ckpt" again. */
#pragma io sig name("ckpt") size_per_io(1*MiB)
	use(open(argv[0], O_RDONLY));
	/* expect-log: {"site": {"line": "@-2"}, "sig": "persist sequential_access size_per_io(1048576) name(\"ckpt\")"} */
	return 0;
}
