/* SPDX-License-Identifier: MIT */
/*
 * fuzz_check.h - CHECK(cond), the fuzz targets' invariant check: when cond
 * is false it prints the target's file, line and the condition on standard
 * error and aborts, which libFuzzer and the replay binaries report as a
 * crash with the input that caused it.
 */
#ifndef IOSIG_FUZZ_CHECK_H
#define IOSIG_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,     \
				__LINE__, #cond);                                      \
			abort();                                                       \
		}                                                                      \
	} while (0)

#endif /* IOSIG_FUZZ_CHECK_H */
