/* SPDX-License-Identifier: MIT */
/* fuzz_trace_blkparse.c - iosig-sim's blkparse trace reader on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace("blkparse", data, size);
}
