/* SPDX-License-Identifier: MIT */
/* fuzz_trace_validate.c - iosig-sim's validate trace reader on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace("validate", data, size);
}
