/* SPDX-License-Identifier: MIT */
/* fuzz_trace_disksim.c - iosig-sim's disksim trace reader on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace("disksim", data, size);
}
