/* SPDX-License-Identifier: MIT */
/*
 * device.c - what iosigd knows about a device: the catalog's mount of the
 * filesystem as the policies see it (policy_dev_from_mount(), the one
 * conversion), the queue depth, and which policies iosigd runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "iosigd.h"

/* The policies that keep data on its home device, and those that put it
 * on tiers (docs/tiers.md). */
static const char *const home_policies[] = { "noop", "deadline", "cfq", "bfq", "bid-hdd", "burst" };
static const char *const tier_policies[] = { "bid-hybrid", "mios-d", "mios-e", "nvcache" };
/* Tier policies that run only where the configuration says `experimental:
 * true`: not yet crash-safe in testing (docs/tiers.md).  None now: mios-d
 * and mios-e left the list once the cause of their lost overwrites after a
 * kill -9 was found and hundreds of kills lost nothing.  NULL-terminated. */
static const char *const experimental_policies[] = { NULL };

static bool listed(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

int dpolicy_check(const char *spec, bool tiers, bool experimental, char *err, size_t errlen)
{
	const struct policy_ops *ops;
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
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
		snprintf(err, errlen, "unknown policy '%s' (iosigd runs %s, and with tiers %s)", name,
			 DCFG_HOME_POLICIES, DCFG_TIER_POLICIES);
		return -ENOENT;
	}
	if (listed(name, tier_policies, sizeof(tier_policies) / sizeof(tier_policies[0]))) {
		if (!tiers) {
			snprintf(err, errlen, "policy '%s' places data on tiers: give the device its tiers (tiers: [NAME] of daemon: tiers:), or use one of %s",
				 name, DCFG_HOME_POLICIES);
			return -EOPNOTSUPP;
		}
		if (!experimental && listed(name, experimental_policies,
					    sizeof(experimental_policies) / sizeof(experimental_policies[0]) - 1)) {
			snprintf(err, errlen, "policy '%s' is experimental: a kill -9 of iosigd has lost acknowledged writes under it in testing (docs/tiers.md); use bid-hybrid or nvcache, or set experimental: true on the device to run it anyway",
				 name);
			return -EOPNOTSUPP;
		}
	} else if (!listed(name, home_policies, sizeof(home_policies) / sizeof(home_policies[0]))) {
		snprintf(err, errlen, "policy '%s' is not one iosigd runs; use one of %s (or with tiers %s)",
			 name, DCFG_HOME_POLICIES, DCFG_TIER_POLICIES);
		return -EOPNOTSUPP;
	} else if (tiers) {
		snprintf(err, errlen, "policy '%s' uses no tiers: remove tiers:, or use one of %s", name,
			 DCFG_TIER_POLICIES);
		return -EINVAL;
	}
	opts = calloc(1, ops->opts_size ? ops->opts_size : 1);
	if (!opts) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	{
		char why[256] = "";

		r = ops->opts ? policy_opts_defaults(ops->opts, opts, why, sizeof(why)) : 0;
		if (r == 0 && colon && colon[1]) {
			if (ops->opts)
				r = policy_opts_parse(ops->opts, opts, colon + 1, why, sizeof(why));
			else
				r = -EINVAL, snprintf(why, sizeof(why), "takes no options");
		}
		if (r < 0)
			snprintf(err, errlen, "%s: %s", name, why);
	}
	free(opts);
	return r;
}

/* Commands in flight at once when the configuration does not say (ours:
 * a disk gets a few, so that a policy's order is the order the disk sees;
 * flash and memory get what they need to reach their bandwidth). */
static unsigned default_queue_depth(const struct iosig_mount *m)
{
	switch (m->cls) {
	case IOSIG_CLASS_HDD:
		return 4;
	case IOSIG_CLASS_RAID:
		return m->rotational ? 4 : 32;
	case IOSIG_CLASS_SSD:
	case IOSIG_CLASS_NETWORK:
		return 32;
	default:
		return 64;
	}
}

/* The catalog's mount of st_dev, the catalog built again (at most every
 * 2 s) when it does not know it; NULL if it still does not. */
static const struct iosig_mount *catalog_mount(struct daemon *d, uint64_t st_dev)
{
	for (int pass = 0; pass < 2; pass++) {
		struct iosig_catalog_opts opts = { .config = d->cfg.file[0] ? d->cfg.file : "" };
		struct iosig_error err;
		uint64_t now = dnow();

		for (size_t i = 0; d->cat && i < iosig_catalog_size(d->cat); i++) {
			const struct iosig_mount *m = iosig_catalog_mount(d->cat, i);

			if (m->dev == st_dev)
				return m;
		}
		if (pass || (d->cat && now - d->cat_built_ns < 2 * POLICY_NS_PER_S))
			break;
		memset(&err, 0, sizeof(err));
		iosig_catalog_free(d->cat);
		d->cat = NULL;
		if (iosig_catalog_new(&opts, &d->cat, &err) < 0)
			dlog(DLOG_WARN, "catalog: %s", err.msg);
		d->cat_built_ns = now;
	}
	return NULL;
}

void device_describe(struct daemon *d, uint64_t st_dev, char *name, size_t size,
		     const char **ret_spec, struct policy_dev_info *ret, bool *ret_passthrough)
{
	const struct iosig_mount *m = catalog_mount(d, st_dev);
	struct iosig_mount generic;
	unsigned qd;

	if (!m) {
		/* Not in the catalog (a pseudo or hidden mount): flash. */
		memset(&generic, 0, sizeof(generic));
		generic.cls = IOSIG_CLASS_SSD;
		generic.path = "";
		m = &generic;
		snprintf(name, size, "dev %u:%u", major((dev_t)st_dev), minor((dev_t)st_dev));
	} else {
		snprintf(name, size, "%s", m->path);
	}
	*ret_spec = dconfig_policy_for(&d->cfg, name, &qd);
	/* A global mount (a network filesystem every node sees): staging its
	 * writes here would hide them from the other nodes' processes until
	 * they reach it, so its descriptors do their own I/O unless the
	 * configuration says to schedule them (docs/multinode.md). */
	*ret_passthrough = m->global && !dconfig_schedules(&d->cfg, name);
	if (policy_dev_from_mount(m, name, qd ? qd : default_queue_depth(m), ret) < 0) {
		/* A mount the conversion refuses (a block size beyond 32 bits):
		 * the generic description. */
		memset(&generic, 0, sizeof(generic));
		generic.cls = IOSIG_CLASS_SSD;
		policy_dev_from_mount(&generic, name, qd ? qd : 32, ret);
	}
	/* Addresses are byte offsets on the filesystem's device; a mount whose
	 * size is unknown gets the largest loff_t so that every address fits. */
	if (!ret->capacity)
		ret->capacity = (uint64_t)INT64_MAX;
	if (ret->block_size < 512)
		ret->block_size = 4096;
}

void device_fini(struct daemon *d)
{
	iosig_catalog_free(d->cat);
	d->cat = NULL;
}
