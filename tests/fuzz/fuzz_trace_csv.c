/* SPDX-License-Identifier: MIT */
/* fuzz_trace_csv.c - iosig-sim's csv trace reader on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace("csv", data, size);
}
