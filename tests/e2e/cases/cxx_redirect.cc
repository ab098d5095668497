/*
 * C++ streams on real mounts: iosig_prepare creates the data file on the
 * chosen mount and links it at the path before the stream opens it, so what
 * the stream writes lands there; a stream reading it back follows the link.
 *
 * mount: work ext4 {"class": "hdd", "rotational": true, "seq_write_bw": "100MiB/s", "latency": "5ms", "seek": "8ms"}
 * mount: fast tmpfs {"class": "ram", "volatile": true, "seq_write_bw": "5GiB/s", "latency": "0.001ms"}
 * env: IOSIG_DRYRUN=
 * run: {mnt:work}
 * expect-stdout: read back: scratch data 42
 * after: readlink {mnt:work}/scratch.txt | grep -q '^{mnt:fast}/iosig-data/'
 * after: test "$(cat {mnt:work}/scratch.txt)" = "scratch data 42"
 * after: {iosig} finalize {mnt:work}/scratch.txt && test ! -L {mnt:work}/scratch.txt
 * after: test "$(cat {mnt:work}/scratch.txt)" = "scratch data 42"
 */
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
	const std::string path = std::string(argv[argc - 1]) + "/scratch.txt";
	long chunk = 64;

	{
#pragma io sig tmp random_access size_per_io(chunk) totalsize(1*KiB)
		std::ofstream out(path);
		/* expect-log: {"site": {"line": "@-2", "call": "ofstream"}, "call": "prepare", "action": "prepared", "chosen": "{mnt:fast}"} */
		out << "scratch data " << 42;
		if (!out)
			return 1;
	}
	std::ifstream in(path);
	std::string a, b, c;
	in >> a >> b >> c;
	std::cout << "read back: " << a << " " << b << " " << c << "\n";
	return in ? 0 : 2;
}
