/* SPDX-License-Identifier: MIT */
/*
 * dev.h - simulated devices behind one interface: a device serves a
 * command issued at time `now` and says when it completes.  Models: HDD
 * (hdd.h), SSD (channels x dies with FTL and GC), NVM and RAM (latency plus
 * bandwidth).  Devices are made from a spec "CLASS[:MODEL][,opt=val...]",
 * e.g. "hdd:barracuda", "hdd:generic,bcw=on", "ssd:generic,channels=4",
 * "nvm", "ram,capacity=8GiB"; options come from one table per class
 * (struct policy_opt, the policies' option machinery).
 */
#ifndef IOSIG_SIM_DEV_H
#define IOSIG_SIM_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "policy.h"

struct sim_dev;
struct sim_hdd;

struct sim_dev_ops {
	/* Serves op (POLICY_OP_*) on [offset, offset+len) issued at now; returns
	 * the completion time (>= now).  Offsets and lengths are in range. */
	uint64_t (*serve)(struct sim_dev *d, int op, uint64_t offset, uint64_t len, uint64_t now);
	/* Writes the model's own counters as members of the current object. */
	void (*report)(struct sim_dev *d, struct json_writer *w);
	void (*destroy)(struct sim_dev *d);
};

/* A device; models embed it first. */
struct sim_dev {
	const struct sim_dev_ops *ops;
	struct policy_dev_info info;  /* what the policy sees (name, class, capacity ...) */
	char name[16];                /* "hdd0" (info.name points here) */
	char model[80];               /* "barracuda", "generic" */
	struct sim_hdd *hdd;          /* HDD model, NULL for other classes */
};

/* One device class for --help: name, summary, option table and defaults. */
struct sim_dev_class {
	const char *name;             /* "hdd" */
	const char *summary;
	const char *models;           /* accepted MODEL names for --help */
	const struct policy_opt *opts;
	size_t opts_size;
};

extern const struct sim_dev_class *const sim_dev_classes[];

/* Directories searched for DiskSim drive files ("hdd:barracuda"), ':'
 * separated: $IOSIG_DISKSIM_DIR, then the installed and source copies. */
const char *sim_dev_disksim_path(void);

/*
 * Creates device number `index` from spec.  On failure returns -errno with
 * a message naming the spec and what is wrong, and leaves *ret untouched.
 */
int sim_dev_create(const char *spec, unsigned index, struct sim_dev **ret, char *err, size_t errlen);
void sim_dev_destroy(struct sim_dev *d);
/* Prints the classes, their models and options (for --help). */
void sim_dev_help(FILE *fp);

#endif /* IOSIG_SIM_DEV_H */

/* ---- for the models (dev_<class>.c) ---- */

/* Each creates a device of its class from MODEL (may be "") and the option
 * string "opt=val,..." (may be ""); err names what is wrong. */
int sim_dev_hdd_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen);
int sim_dev_ssd_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen);
int sim_dev_nvm_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen);
int sim_dev_ram_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen);
extern const struct sim_dev_class sim_dev_class_hdd, sim_dev_class_ssd, sim_dev_class_nvm,
	sim_dev_class_ram;

/* Fills an options struct from its table's defaults, then optstr. */
int sim_dev_opts(const struct sim_dev_class *cls, void *opts, const char *optstr, char *err,
		 size_t errlen);
