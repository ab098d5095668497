// SPDX-License-Identifier: MIT
/*
 * dstream.cc - C++ streams on annotated files, for the iosigd tests
 * (daemon_test.py, group stdio), built twice like dstdio: plainly (run under
 * iosig-redirect, whose rules tag the files) and with the gcc plugin (its
 * pragmas make iosig_prepare run before each stream's constructor).
 *
 *   dstream DIR    writes, seeks, reads back and appends through
 *                  std::ofstream, std::ifstream and std::fstream on DIR/x-*;
 *                  prints what each returned, to compare with a plain run
 *
 * Exits 0 (the output says what differs), 2 for bad arguments.
 */
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::cerr << "usage: dstream DIR\n";
		return 2;
	}
	std::string dir = argv[1], path = dir + "/x-out", io_path = dir + "/x-io";
	std::vector<char> big(3 * 1024 * 1024 + 5), back(big.size());
	for (size_t i = 0; i < big.size(); i++)
		big[i] = (char)('a' + (i * 5 + i / 999) % 26);
	{
#pragma io sig sequential size_per_io(64*KiB)
		std::ofstream out(path, std::ios::binary);
		for (int i = 0; i < 1000; i++)
			out << "line " << i << "\n";
		std::cout << "ofstream tellp " << out.tellp() << "\n";
		out.write(big.data(), (std::streamsize)big.size());
		out.seekp(10);
		out << "SEEKED";
		out.close();
		std::cout << "ofstream close good " << out.good() << "\n";
	}
	{
#pragma io sig sequential size_per_io(64*KiB)
		std::ifstream in(path, std::ios::binary);
		std::string line;
		std::getline(in, line);
		std::cout << "ifstream first " << line << "\n";
		in.seekg(-(long)big.size(), std::ios::end);
		in.read(back.data(), (std::streamsize)back.size());
		std::cout << "ifstream read " << in.gcount() << " same " << (back == big) << "\n";
		in.read(back.data(), 1);
		std::cout << "ifstream at end eof " << in.eof() << "\n";
	}
	{
#pragma io sig random size_per_io(4*KiB)
		std::fstream io(io_path, std::ios::in | std::ios::out | std::ios::trunc | std::ios::binary);
		io << "hello fstream\n";
		io.write(big.data(), 100000);
		io.seekg(0);
		std::string w;
		io >> w;
		std::cout << "fstream read " << w << " tellg " << io.tellg() << "\n";
		io.seekp(0, std::ios::end);
		std::cout << "fstream end " << io.tellp() << "\n";
	}
	{
#pragma io sig sequential
		std::ofstream app(io_path, std::ios::app);
		app << "appended\n";
		std::cout << "append tellp " << app.tellp() << "\n";
	}
	return 0;
}
