/* SPDX-License-Identifier: MIT */
/*
 * fuzz_status_view - `iosig status`'s view of a daemon's STATUS answer
 * from arbitrary bytes (libiosig/tools/status_view.c): printed, or refused
 * with a reason, as text and as JSON; never a crash, a leak or a read past
 * the input, whatever shape the document has.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char *text, err[256];

	if (size > 65536)
		return 0;
	if (!sink && !(sink = fopen("/dev/null", "w")))
		abort();
	/* The tool hands the view a NUL-terminated text. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int json = 0; json < 2; json++) {
		err[0] = '\0';
		if (status_view_print(text, json, sink, err, sizeof(err)) < 0 && !err[0])
			abort();
	}
	free(text);
	return 0;
}
