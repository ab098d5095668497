/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dconfig - the daemon: section of a configuration from arbitrary
 * bytes (iosigd/dconfig.c): a configuration or an error with its position,
 * never a crash, a leak or a read past the input; what it accepts names
 * only policies iosigd runs, with options their tables accept.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dconfig cfg;
	char err[512];
	unsigned qd;

	if (size > 65536 || dconfig_defaults(&cfg) < 0)
		return 0;
	err[0] = '\0';
	if (dconfig_load_buffer(&cfg, "fuzz.yaml", (const char *)data, size, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
	} else {
		char e2[256];

		if (dpolicy_check(cfg.policy, false, false, e2, sizeof(e2)) < 0)
			abort();
		for (size_t i = 0; i < cfg.ndevices; i++) {
			if (cfg.devices[i].policy &&
			    dpolicy_check(cfg.devices[i].policy, cfg.devices[i].ntiers > 0, cfg.devices[i].experimental, e2,
					  sizeof(e2)) < 0)
				abort();
			for (size_t k = 0; k < cfg.devices[i].ntiers; k++)
				if (!dconfig_tier(&cfg, cfg.devices[i].tiers[k]))
					abort();
			dconfig_policy_for(&cfg, cfg.devices[i].pattern, &qd);
		}
		for (size_t i = 0; i < cfg.ntiers; i++)
			if (!cfg.tiers[i].path || cfg.tiers[i].path[0] != '/')
				abort();
	}
	dconfig_free(&cfg);
	return 0;
}
