/*
 * Openers in C++: a function of a namespace, declared in its namespace,
 * called in a try block (an invoke, for clang).  When it leaves by an
 * exception before it opens anything, the link made for it goes with the
 * next opener call of the thread (no iosig_opener_end ran for it), and the
 * next call is redirected as usual.  The signatures say how small the
 * files are: the test's mounts are small.
 *
 * mount: work ext4 {"class": "hdd", "rotational": true, "seq_write_bw": "100MiB/s", "latency": "5ms", "seek": "8ms"}
 * mount: fast tmpfs {"class": "ram", "volatile": true, "seq_write_bw": "5GiB/s", "latency": "0.001ms"}
 * env: IOSIG_DRYRUN=
 * run: {mnt:work}
 * expect-stdout: thrown
 * expect-stdout: written
 * expect-log-count: 2 {"call": "opener", "site": {"call": "make"}, "action": "linked"}
 * expect-log-count: 1 {"event": "unlinked", "site": {"call": "make"}}
 * after: test ! -L {mnt:work}/first && test ! -e {mnt:work}/first
 * after: readlink {mnt:work}/second | grep -q '^{mnt:fast}/iosig-data/'
 * after: {iosig} finalize {mnt:work}/second
 * after: test -z "$(find {mnt:fast}/iosig-data -mindepth 1)"
 */
#include <cstdio>
#include <stdexcept>
#include <string>

namespace app {

static std::FILE *make(const char *name, bool fail)
{
	if (fail)
		throw std::runtime_error(std::string("cannot make ") + name);
	return std::fopen(name, "w");
}

#pragma io opener(make, path(1), mode("w"))

} // namespace app

int main(int argc, char **argv)
{
	std::string dir = argv[argc - 1];
	std::FILE *fp = nullptr;

	try {
#pragma io sig tmp totalsize(1*KiB)
		fp = app::make((dir + "/first").c_str(), true);
	} catch (const std::exception &) {
		std::puts("thrown");
	}
#pragma io sig tmp totalsize(1*KiB)
	fp = app::make((dir + "/second").c_str(), false);
	if (!fp || std::fputs("second\n", fp) < 0 || std::fclose(fp))
		return 1;
	std::puts("written");
	return 0;
}
