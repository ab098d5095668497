/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace_diskspecs.c - iosig-sim's reader of DiskSim parameter text
 * (the drive descriptions the HDD model is configured from) on arbitrary
 * bytes: parameters or an error, never a crash.  A drive that loads must
 * also serve a request without trouble.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdd.h"
#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sim_hdd_params *p = malloc(sizeof(*p));
	char err[512];

	if (!p)
		return 0;
	if (sim_disksim_parse_text((const char *)data, size, p, err, sizeof(err)) == 0) {
		struct sim_hdd *h;

		/* Keep the replay cheap: huge geometries are legal but slow to map. */
		if (p->blocks && p->nsegs <= 64 && (h = sim_hdd_create(p))) {
			uint64_t t = sim_hdd_serve(h, POLICY_OP_READ, 0, 1, 0);

			t = sim_hdd_serve(h, POLICY_OP_WRITE, p->blocks - 1, 1, t);
			sim_hdd_serve(h, POLICY_OP_READ, p->blocks / 2, 8, t);
			sim_hdd_destroy(h);
		}
	} else if (!err[0]) {
		abort();   /* failures always explain themselves */
	}
	free(p);
	return 0;
}
