/* SPDX-License-Identifier: MIT */
/*
 * catalog.c - the catalog's description of the mount a registered file is
 * on, in the plain terms of struct dmount (see dconfig.h for why this file
 * sees libiosig's iosig.h and no policy).
 */
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "dconfig.h"
#include "iosig.h"

static void fill(const struct iosig_mount *m, struct dmount *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->path, sizeof(ret->path), "%s", m->path);
	ret->ram = m->cls == IOSIG_CLASS_RAM;
	ret->nvm = m->cls == IOSIG_CLASS_NVM;
	ret->hdd = m->cls == IOSIG_CLASS_HDD || (m->cls == IOSIG_CLASS_RAID && m->rotational);
	ret->capacity = m->capacity;
	ret->block_size = m->block_size;
	ret->bcw[0] = m->bcw.wf;
	ret->bcw[1] = m->bcw.wm;
	ret->bcw[2] = m->bcw.lf;
	ret->bcw[3] = m->bcw.lm;
	ret->bcw[4] = m->bcw.ls;
}

bool dcat_lookup(struct dcatalog *c, const char *config, uint64_t st_dev, uint64_t now_ns,
		 struct dmount *ret)
{
	for (int pass = 0; pass < 2; pass++) {
		struct iosig_catalog_opts opts = { .config = config ? config : "" };
		struct iosig_error err;

		if (c->cat) {
			for (size_t i = 0; i < iosig_catalog_size(c->cat); i++) {
				const struct iosig_mount *m = iosig_catalog_mount(c->cat, i);

				if (m->dev == st_dev) {
					fill(m, ret);
					return true;
				}
			}
		}
		if (pass || (c->cat && now_ns - c->built_ns < 2000000000ull))
			break;
		memset(&err, 0, sizeof(err));
		iosig_catalog_free(c->cat);
		c->cat = NULL;
		if (iosig_catalog_new(&opts, &c->cat, &err) < 0)
			snprintf(c->err, sizeof(c->err), "%s", err.msg);
		c->built_ns = now_ns;
	}
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->path, sizeof(ret->path), "dev %u:%u", major((dev_t)st_dev), minor((dev_t)st_dev));
	return false;
}

void dcat_free(struct dcatalog *c)
{
	iosig_catalog_free(c->cat);
	c->cat = NULL;
}

const char *dcat_version(void)
{
	return iosig_version();
}
