/* SPDX-License-Identifier: MIT */
/*
 * dconfig.h - the daemon's configuration: the `daemon:` section of the
 * configuration file (dconfig.c).
 */
#ifndef IOSIGD_DCONFIG_H
#define IOSIGD_DCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The policies that keep data on its home device, and those that put it on
 * tiers (docs/tiers.md): a device with `tiers:` runs one of the latter. */
#define DCFG_HOME_POLICIES "noop, deadline, cfq, bfq, bid-hdd, burst"
#define DCFG_TIER_POLICIES "bid-hybrid, mios-d, mios-e, nvcache"

/* One entry of `daemon: devices:`. */
struct dcfg_device {
	char *pattern;             /* mount point or fnmatch(3) pattern */
	char *policy;              /* "NAME[:opt=val,...]", NULL = the default */
	unsigned queue_depth;      /* 0 = by device class */
	bool schedule;             /* `schedule:`: a global network mount is scheduled */
	int line;                  /* where it was given */
	char **tiers;              /* `tiers:` names, in order (the policy's devices 1..) */
	size_t ntiers;
	bool defer_close;          /* `defer_close:` the last close does not write tiered data home */
	bool experimental;         /* `experimental:` a policy not yet crash-safe may run (mios-d/e) */
	int policy_line, policy_col;   /* where `policy:` / `tiers:` were given (checks) */
	int tiers_line, tiers_col;
};

/* One entry of `daemon: tiers:` (docs/tiers.md). */
struct dcfg_tier {
	char *name;                /* [a-z0-9_-], the key */
	char *path;                /* the store: `path:`, or <mount>/.iosigd/<name>.tier */
	char *mount;               /* `mount:` as given, NULL with `path:` */
	uint64_t size;             /* `size:` of a store file (0: a block device, all of it) */
	uint64_t journal;          /* `journal:` bytes, 0 = the default */
	unsigned queue_depth;      /* 0 = by class */
	int cls;                   /* `class:` (enum iosig_class), -1 = the catalog's */
	int line, col;             /* where it was given */
	bool used;                 /* named by a device */
};

/* Per-client and global limits. */
struct dcfg_limits {
	unsigned clients;          /* sessions at once */
	unsigned fds_per_client;   /* registered descriptors per session */
	uint64_t ring_size;        /* data area a client may offer, bytes */
	uint32_t ring_entries;     /* entries a client may offer */
	uint64_t queued_bytes;     /* bytes a session may have ingested and not completed */
};

/* `daemon: writeback:` when the engine hands a file's dirty page-cache
 * data to the device's policy (docs/daemon.md, "Write-back"); 0 = from
 * the kernel's vm.dirty_background_* and vm.dirty_expire_centisecs. */
struct dcfg_writeback {
	uint64_t dirty;            /* `dirty:` bytes dirty through the daemon, not yet at a policy */
	uint64_t expire_ns;        /* `expire:` age of the oldest of them */
};

struct dconfig {
	char *file;                /* the configuration file, "" = none */
	char *socket;              /* `socket:`, NULL = the mode's default */
	char *policy;              /* `policy:` */
	struct dcfg_device *devices;
	size_t ndevices;
	struct dcfg_tier *tiers;
	size_t ntiers;
	struct dcfg_limits limits;
	struct dcfg_writeback writeback;
};

/* Fills *cfg with the defaults (policy noop, the limits of docs/daemon.md). */
int dconfig_defaults(struct dconfig *cfg);
/*
 * Reads the `daemon:` section of the configuration file `path` (NULL: the
 * catalog's search: $IOSIG_CONFIG, ~/.config/iosig/config.yaml,
 * /etc/iosig/config.yaml; a missing file found by the search is no
 * error).  0, or -errno with "file:line:column: message" in err.
 */
int dconfig_load(struct dconfig *cfg, const char *path, char *err, size_t errlen);
/* The same from a buffer (tests, fuzzing); `name` is used in messages. */
int dconfig_load_buffer(struct dconfig *cfg, const char *name, const char *buf, size_t len,
			char *err, size_t errlen);
void dconfig_free(struct dconfig *cfg);
/* The policy spec for a mount point and the configured queue depth (0 =
 * by class). */
const char *dconfig_policy_for(const struct dconfig *cfg, const char *mount, unsigned *ret_qd);
/* The `devices:` entry that applies to a mount point, or NULL. */
const struct dcfg_device *dconfig_device_for(const struct dconfig *cfg, const char *mount);
/* The `tiers:` entry called name, or NULL. */
const struct dcfg_tier *dconfig_tier(const struct dconfig *cfg, const char *name);
/* True if the first entry for this mount point says `schedule: true`:
 * the descriptors of files on a global (network) mount are then scheduled
 * instead of passed through. */
bool dconfig_schedules(const struct dconfig *cfg, const char *mount);

/* Checks a policy spec for the configuration: a policy whose options
 * parse, of the home-device kind, or of the tier-using kind when `tiers`
 * (a device with `tiers:`).  0, or -errno with a message in err (device.c,
 * where the policies are seen). */
int dpolicy_check(const char *spec, bool tiers, bool experimental, char *err, size_t errlen);

#endif /* IOSIGD_DCONFIG_H */
