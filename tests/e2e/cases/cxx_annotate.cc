/*
 * <iosig_annotate.h> in C++: IOSIG_CALL in an expression macro (a member
 * initialiser, a return), IOSIG_SIG before a stream, warning-free under
 * -Werror.
 *
 * cflags: -Werror
 * run: {tmp}
 * expect-stdout: 2 opened
 * expect-log-count: 1 {"event": "decision", "call": "open", "sig": "tmp"}
 * expect-log-count: 1 {"event": "decision", "call": "prepare", "sig": "sequential_access"}
 */
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <iosig_annotate.h>

#define OPEN_TMP(p) IOSIG_CALL((tmp), ::open((p), O_CREAT | O_RDWR, 0600))

struct Scratch {
	explicit Scratch(const std::string &p) : fd(OPEN_TMP(p.c_str())) {}
	~Scratch()
	{
		if (fd >= 0)
			close(fd);
	}
	int fd;
};

int main(int argc, char **argv)
{
	std::string dir = argv[argc - 1];
	Scratch s(dir + "/a");
	IOSIG_SIG(sequential_access)
	std::ofstream out(dir + "/b");
	std::printf("%d opened\n", (s.fd >= 0) + out.is_open());
	return 0;
}
