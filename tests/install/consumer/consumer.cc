// SPDX-License-Identifier: MIT
// consumer.cc - iosig.h compiles as C++ and links from a C++ program.
#include <iosig.h>

#include <cstdio>

int main()
{
	std::printf("version %s\n", iosig_version());
	return iosig_class_name(IOSIG_CLASS_SSD) ? 0 : 1;
}
