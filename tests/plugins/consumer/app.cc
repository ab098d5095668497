// Reads its first argument through a std::ifstream under a signature.
#include <fstream>
#include <iostream>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
#pragma io sig random_access
	std::ifstream in(argv[1]);
	std::cout << "open " << (in.is_open() ? "ok" : "failed") << "\n";
	return in.is_open() ? 0 : 1;
}
