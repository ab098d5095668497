/*
 * A C++ program without pragmas for the identical-object-code check:
 * streams, templates, lambdas, the C calls the plugin knows.
 */
#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

template <typename T>
T checksum(const std::vector<T> &v)
{
	T sum{};
	for (const T &x : v)
		sum = sum * 31 + x;
	return sum;
}

struct Counter {
	std::map<std::string, long> words;
	void add(const std::string &w) { words[w]++; }
	long most() const
	{
		long best = 0;
		for (const auto &kv : words)
			best = std::max(best, kv.second);
		return best;
	}
};

} // namespace

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	std::ifstream in(argv[1]);
	std::ofstream out(std::string(argv[2]) + ".copy", std::ios::out | std::ios::trunc);
	Counter c;
	std::vector<char> bytes;
	std::string w;
	while (in >> w) {
		c.add(w);
		out << w << '\n';
		bytes.insert(bytes.end(), w.begin(), w.end());
	}
	int fd = open(argv[2], O_RDONLY);
	FILE *fp = std::fopen(argv[1], "r");
	auto done = [&]() { return fd >= 0 ? close(fd) : 0; };
	std::printf("%ld %d\n", c.most(), static_cast<int>(checksum(bytes)));
	if (fp)
		std::fclose(fp);
	return done();
}
