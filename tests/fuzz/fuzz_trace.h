/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.h - the body shared by iosig-sim's trace fuzz targets
 * (fuzz_trace_<format>.c): run one reader over arbitrary bytes.  It must
 * return requests or a "file:line: message" error, never crash, hang or
 * read past its input.
 */
#ifndef IOSIG_FUZZ_TRACE_H
#define IOSIG_FUZZ_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int fuzz_trace(const char *format, const uint8_t *data, size_t size)
{
	struct sim_source *src;
	struct sim_io io;
	char err[256];
	FILE *fp;
	int r;

	if (size == 0)
		return 0;
	fp = fmemopen((void *)data, size, "r");
	if (!fp)
		return 0;
	if (sim_trace_open_fp(fp, "fuzz", true, format, &src, err, sizeof(err)) < 0) {
		fclose(fp);
		return 0;
	}
	while ((r = sim_source_next(src, &io)) > 0)
		if (io.len > (1ull << 62) || (io.op != POLICY_OP_FLUSH && io.len == 0) ||
		    io.op > POLICY_OP_FLUSH)
			abort();   /* a reader let an impossible request through */
	if (r < 0 && strncmp(src->err, "fuzz:", 5) != 0)
		abort();           /* every error names the input and line */
	sim_source_destroy(src);
	return 0;
}

#endif /* IOSIG_FUZZ_TRACE_H */
