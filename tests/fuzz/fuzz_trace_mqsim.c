/* SPDX-License-Identifier: MIT */
/* fuzz_trace_mqsim.c - iosig-sim's mqsim trace reader on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace("mqsim", data, size);
}
