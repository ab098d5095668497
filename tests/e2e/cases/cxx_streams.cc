/*
 * C++ streams: the constructors and open() of std::ofstream, std::ifstream
 * and std::fstream with a const char *, a std::string or a
 * std::filesystem::path.  The call cannot be replaced; iosig_prepare runs
 * right before it with the path (evaluated once) and the open(2) flags the
 * stream will use, and the stream then opens the file as usual.
 *
 * cflags: -std=c++17
 * run: {tmp}
 * expect-stdout: 11 hello world
 * expect-stdout: evaluated 1 time
 * expect-log-count: 8 {"event": "decision"}
 */
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

static int evaluations;

static std::string counted(const std::string &s)
{
	evaluations++;
	return s;
}

static std::ofstream make(const std::string &path, long chunk)
{
#pragma io sig sequential_access size_per_io(chunk)
	return std::ofstream(path, std::ios::app);
	/* expect-log: {"site": {"line": "@-2", "call": "ofstream"}, "call": "prepare", "sig": "sequential_access size_per_io($0)", "values": [65536], "flags": "O_WRONLY|O_CREAT|O_APPEND"} */
}

int main(int argc, char **argv)
{
	const std::string dir = argv[argc - 1];
	const std::string file = dir + "/out.txt";
	long chunk = 4096;

	{
#pragma io sig tmp size_per_io(chunk)
		std::ofstream out(file.c_str());
		/* expect-log: {"site": {"line": "@-2", "call": "ofstream"}, "call": "prepare", "sig": "tmp size_per_io($0)", "values": [4096], "flags": "O_WRONLY|O_CREAT|O_TRUNC"} */
		out << "hello";
	}
	{
		std::ofstream out = make(file, 16 * chunk);
		out << " world";
	}
	{
#pragma io sig random_access
		std::ifstream in(file);
		/* expect-log: {"site": {"line": "@-2", "call": "ifstream"}, "sig": "random_access", "flags": "O_RDONLY"} */
		std::string a, b;
		in >> a >> b;
		in.close();
		std::filesystem::path fp(file);
#pragma io sig persist
		std::fstream io(fp, std::ios::in | std::ios::out);
		/* expect-log: {"site": {"line": "@-2", "call": "fstream"}, "sig": "persist", "flags": "O_RDWR"} */
		io.seekg(0, std::ios::end);
		std::cout << io.tellg() << " " << a << " " << b << "\n";
	}
	{
		std::ofstream o;
#pragma io sig local
		o.open(counted(dir + "/t.txt"), std::ios::out | std::ios::trunc);
		/* expect-log: {"site": {"line": "@-2", "call": "ofstream::open"}, "sig": "local", "flags": "O_WRONLY|O_CREAT|O_TRUNC"} */
		std::ifstream i;
#pragma io sig local
		i.open(dir + "/t.txt");
		/* expect-log: {"site": {"line": "@-2", "call": "ifstream::open"}, "flags": "O_RDONLY"} */
		std::fstream f;
		std::ios::openmode mode = std::ios::in;
		if (argc > 0)
			mode |= std::ios::app;
#pragma io sig global
		f.open(dir + "/t.txt", mode);
		/* expect-log: {"site": {"line": "@-2", "call": "fstream::open"}, "flags": "O_RDWR|O_CREAT|O_APPEND"} */
		std::cout << "evaluated " << evaluations << " time\n";
	}
	/* A failing open fails as usual. */
	{
#pragma io sig tmp
		std::ifstream none(dir + "/missing/x");
		/* expect-log: {"site": {"line": "@-2", "call": "ifstream"}} */
		return none.is_open() ? 1 : 0;
	}
}
