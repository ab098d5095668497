/* SPDX-License-Identifier: MIT */
/*
 * device.c - what a policy knows about a device (struct iosig_dev_info),
 * from the catalog's description of the mount (class, capacity, block
 * size, the probe cache's buffered-write profile); which policies iosigd
 * runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iosigd.h"

/* The policies that keep data on its home device: the ones iosigd runs
 * until it has tiers (bid-hybrid, mios-d/e and nvcache need them). */
static const char *const home_policies[] = { "noop", "deadline", "cfq", "bid-hdd", "burst" };

int dpolicy_check(const char *spec, char *err, size_t errlen)
{
	const struct iosig_policy_ops *ops;
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	bool home = false;
	char name[64];
	void *opts;
	int r;

	if (!nlen || nlen >= sizeof(name)) {
		snprintf(err, errlen, "'%.64s' is not a policy: expected NAME or NAME:opt=val,...", spec);
		return -EINVAL;
	}
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	ops = policy_find(name);
	if (!ops) {
		snprintf(err, errlen, "unknown policy '%s' (iosigd runs %s)", name, DCFG_HOME_POLICIES);
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(home_policies) / sizeof(home_policies[0]); i++)
		home |= !strcmp(name, home_policies[i]);
	if (!home) {
		snprintf(err, errlen, "policy '%s' places data on other tiers, which iosigd does not run yet; use one of %s",
			 name, DCFG_HOME_POLICIES);
		return -EOPNOTSUPP;
	}
	opts = calloc(1, ops->opts_size ? ops->opts_size : 1);
	if (!opts) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = ops->opts ? policy_opts_defaults(ops->opts, opts, err, errlen) : 0;
	if (r == 0 && colon && colon[1]) {
		if (ops->opts) {
			r = policy_opts_parse(ops->opts, opts, colon + 1, err, errlen);
		} else {
			snprintf(err, errlen, "%s takes no options", name);
			r = -EINVAL;
		}
	}
	free(opts);
	return r;
}

/* Commands in flight at once when the configuration does not say (ours:
 * a disk gets a few, so that a policy's order is the order the disk sees;
 * flash and memory get what they need to reach their bandwidth). */
static unsigned default_queue_depth(enum iosig_dev_class cls)
{
	switch (cls) {
	case IOSIG_DEV_HDD:
		return 4;
	case IOSIG_DEV_SSD:
		return 32;
	default:
		return 64;
	}
}
void device_info_from_mount(const struct dmount *m, unsigned queue_depth,
			    struct iosig_dev_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->name = m->path;
	ret->cls = m->ram ? IOSIG_DEV_RAM : m->nvm ? IOSIG_DEV_NVM : m->hdd ? IOSIG_DEV_HDD :
	           IOSIG_DEV_SSD;
	/* Addresses are byte offsets on the filesystem's device; a mount whose
	 * size is unknown gets the largest loff_t so that every address fits. */
	ret->capacity = m->capacity ? m->capacity : (uint64_t)INT64_MAX;
	ret->queue_depth = queue_depth ? queue_depth : default_queue_depth(ret->cls);
	ret->block_size = m->block_size >= 512 && m->block_size <= (1u << 20) ?
				  (uint32_t)m->block_size : 4096;
	ret->bw_fast_bytes = (uint64_t)m->bcw[0];
	ret->bw_mid_bytes = (uint64_t)m->bcw[1];
	ret->bw_lat_fast_ns = (uint64_t)(m->bcw[2] * 1e9);
	ret->bw_lat_mid_ns = (uint64_t)(m->bcw[3] * 1e9);
	ret->bw_lat_slow_ns = (uint64_t)(m->bcw[4] * 1e9);
}
