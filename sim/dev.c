/* SPDX-License-Identifier: MIT */
/*
 * dev.c - device specs ("CLASS[:MODEL][,opt=val...]") and the parts every
 * device class shares.  The models are in dev_hdd.c, dev_ssd.c, dev_mem.c.
 */
#include "dev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"

#ifndef IOSIG_SIM_DISKSIM_DIRS
#define IOSIG_SIM_DISKSIM_DIRS ""
#endif

const struct sim_dev_class *const sim_dev_classes[] = {
	&sim_dev_class_hdd, &sim_dev_class_ssd, &sim_dev_class_nvm, &sim_dev_class_ram, NULL,
};

const char *sim_dev_disksim_path(void)
{
	static char buf[4096];
	const char *env = env_get("IOSIG_DISKSIM_DIR");

	snprintf(buf, sizeof(buf), "%s%s%s", env && *env ? env : "",
		 env && *env ? ":" : "", IOSIG_SIM_DISKSIM_DIRS);
	return buf;
}

int sim_dev_opts(const struct sim_dev_class *cls, void *opts, const char *optstr, char *err,
		 size_t errlen)
{
	char msg[256];
	int r = policy_opts_defaults(cls->opts, opts, msg, sizeof(msg));

	if (r == 0)
		r = policy_opts_parse(cls->opts, opts, optstr, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

int sim_dev_create(const char *spec, unsigned index, struct sim_dev **ret, char *err, size_t errlen)
{
	static int (*const create[])(const char *, const char *, struct sim_dev **, char *,
				     size_t) = {
		sim_dev_hdd_create, sim_dev_ssd_create, sim_dev_nvm_create, sim_dev_ram_create,
	};
	char cls[16], model[512], msg[512];
	const char *p = spec, *opts = "";
	struct sim_dev *d = NULL;
	size_t n;
	int r;

	n = strcspn(p, ":,");
	if (n == 0 || n >= sizeof(cls)) {
		snprintf(err, errlen, "device '%s': expected CLASS[:MODEL][,opt=val...] with CLASS "
			 "hdd, ssd, nvm or ram", spec);
		return -EINVAL;
	}
	memcpy(cls, p, n);
	cls[n] = '\0';
	p += n;
	model[0] = '\0';
	if (*p == ':') {
		p++;
		n = strcspn(p, ",");
		if (n >= sizeof(model)) {
			snprintf(err, errlen, "device '%.40s...': model name too long", spec);
			return -EINVAL;
		}
		memcpy(model, p, n);
		model[n] = '\0';
		p += n;
	}
	if (*p == ',')
		opts = p + 1;
	for (unsigned i = 0; sim_dev_classes[i]; i++) {
		if (strcasecmp(cls, sim_dev_classes[i]->name))
			continue;
		r = create[i](model, opts, &d, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "device '%s': %s", spec, msg);
			return r;
		}
		snprintf(d->name, sizeof(d->name), "%s%u", sim_dev_classes[i]->name, index);
		d->info.name = d->name;
		*ret = d;
		return 0;
	}
	snprintf(err, errlen, "device '%s': unknown class '%s' (known: hdd, ssd, nvm, ram)", spec, cls);
	return -ENOENT;
}

void sim_dev_destroy(struct sim_dev *d)
{
	if (d)
		d->ops->destroy(d);
}

void sim_dev_help(FILE *fp)
{
	for (unsigned i = 0; sim_dev_classes[i]; i++) {
		const struct sim_dev_class *c = sim_dev_classes[i];
		struct policy_ops fake = {
			.name = c->name, .summary = c->summary, .opts = c->opts,
		};

		fputs("\n", fp);
		policy_help(&fake, fp);
		fprintf(fp, "  models: %s\n", c->models);
	}
}
