/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gluster_volfile.c - libFuzzer target for the parser of GlusterFS
 * client graphs (libiosig/src/discover_dfs.c), which reads text a FUSE
 * mount serves.
 *
 * The input is parsed from a buffer of exactly its size.  Invariants:
 *  - a refused input comes with a message and -EINVAL, nothing else;
 *  - an accepted input gives a layout the models accept (at least one
 *    device, fewer failures tolerated than devices; Eq. 2 gives a number,
 *    not NaN - +inf or 0 where the value leaves a double's range, as
 *    test_model_mttdl's large-m cases document) and a description.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct cat_dfs_layout l;
	char why[200] = "";
	double mttdl;
	int r;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	r = cat_gluster_volfile_layout(buf, size, &l, why, sizeof(why));
	if (r < 0) {
		CHECK(r == -EINVAL);
		CHECK(why[0] != '\0');
	} else {
		CHECK(r == 0);
		CHECK(l.layout.disks >= 1 && l.layout.tolerated < l.layout.disks);
		CHECK(l.desc[0] != '\0');
		mttdl = iosig_mttdl(&l.layout, 10 * 365 * 86400.0, 86400, 4e-14, 1e9);
		CHECK(!isnan(mttdl) && mttdl >= 0);
	}
	free(buf);
	return 0;
}
