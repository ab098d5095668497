/* SPDX-License-Identifier: MIT */
/*
 * dev_hdd.c - the HDD model (hdd.c) as a simulated device: "hdd:generic"
 * (built in) or "hdd:NAME" for a DiskSim drive whose parameter files are
 * found in sim_dev_disksim_path() (or "hdd:/dir/NAME").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dev.h"
#include "hdd.h"
#include "source.h"

enum { WC_MODEL, WC_BACK, WC_THROUGH };

struct hdd_opts {
	uint64_t capacity;     /* generic drive only; 0 = 1 TiB */
	double rpm;            /* 0 = the model's */
	unsigned write_cache;  /* WC_* */
	bool cache;
	bool bcw;
	uint64_t wf, wm, lf, lm, ls;
	uint64_t queue_depth;  /* 0 = the model's */
};

static const char *const wc_choices[] = { "model", "back", "through", NULL };

static const struct policy_opt hdd_opts_tab[] = {
	{ .name = "capacity", .type = POLICY_OPT_SIZE, .off = offsetof(struct hdd_opts, capacity),
	  .def = "0", .min = 0, .max = 1ull << 50,
	  .help = "capacity of hdd:generic (0 = 1 TiB); DiskSim drives have their own" },
	{ .name = "rpm", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct hdd_opts, rpm),
	  .def = "0", .fmin = 0, .fmax = 30000, .help = "spindle speed (0 = the model's)" },
	{ .name = "cache", .type = POLICY_OPT_BOOL, .off = offsetof(struct hdd_opts, cache),
	  .def = "on", .help = "on-board cache: segments, read-ahead, write-back" },
	{ .name = "write_cache", .type = POLICY_OPT_ENUM, .off = offsetof(struct hdd_opts, write_cache),
	  .def = "model", .choices = wc_choices,
	  .help = "write-back (acknowledge from the buffer) or write-through; model = as the drive's parameters say" },
	{ .name = "bcw", .type = POLICY_OPT_BOOL, .off = offsetof(struct hdd_opts, bcw),
	  .def = "off", .help = "buffered writes follow the BCW paper's Fast/Mid/Slow model" },
	{ .name = "wf", .type = POLICY_OPT_SIZE, .off = offsetof(struct hdd_opts, wf),
	  .def = "16MiB", .min = 4096, .max = 1ull << 40, .help = "BCW W_f: bytes absorbed in the Fast state" },
	{ .name = "wm", .type = POLICY_OPT_SIZE, .off = offsetof(struct hdd_opts, wm),
	  .def = "8MiB", .min = 4096, .max = 1ull << 40, .help = "BCW W_m: bytes absorbed in each Mid state" },
	{ .name = "lf", .type = POLICY_OPT_TIME, .off = offsetof(struct hdd_opts, lf),
	  .def = "180us", .min = 0, .max = 10 * POLICY_NS_PER_S, .help = "BCW L_f: latency of a Fast write" },
	{ .name = "lm", .type = POLICY_OPT_TIME, .off = offsetof(struct hdd_opts, lm),
	  .def = "280us", .min = 0, .max = 10 * POLICY_NS_PER_S, .help = "BCW L_m: latency of a Mid write" },
	{ .name = "ls", .type = POLICY_OPT_TIME, .off = offsetof(struct hdd_opts, ls),
	  .def = "12ms", .min = 0, .max = 10 * POLICY_NS_PER_S, .help = "BCW L_s: latency of a Slow write" },
	{ .name = "queue_depth", .type = POLICY_OPT_UINT, .off = offsetof(struct hdd_opts, queue_depth),
	  .def = "0", .min = 0, .max = 256,
	  .help = "commands the drive accepts, served in order (0 = the model's, 1 for the built-in drives)" },
	{ .name = NULL },
};

const struct sim_dev_class sim_dev_class_hdd = {
	.name = "hdd",
	.summary = "hard disk: zones, seek curve, rotation, on-board cache (DiskSim-style), optional BCW",
	.models = "generic (built in), barracuda, cheetah9LP, hp_c2247a or any DiskSim drive NAME "
		  "whose NAME.parv/.diskspecs is in $IOSIG_DISKSIM_DIR or the installed set, or /dir/NAME",
	.opts = hdd_opts_tab,
	.opts_size = sizeof(struct hdd_opts),
};

struct dev_hdd {
	struct sim_dev dev;
	struct sim_hdd *h;
};

static uint64_t hdd_serve(struct sim_dev *d, int op, uint64_t offset, uint64_t len, uint64_t now)
{
	struct dev_hdd *x = (struct dev_hdd *)d;
	uint64_t lbn = offset / SIM_SECTOR;
	uint64_t end = (offset + len + SIM_SECTOR - 1) / SIM_SECTOR;

	return sim_hdd_serve(x->h, op, lbn, (uint32_t)(end > lbn ? end - lbn : 1), now);
}

static void hdd_report(struct sim_dev *d, struct json_writer *w)
{
	struct dev_hdd *x = (struct dev_hdd *)d;
	const struct sim_hdd_stats *s = sim_hdd_stats(x->h);
	const struct sim_hdd_params *p = sim_hdd_params(x->h);

	json_obj_begin(w, "arm");
	json_uint(w, "cylinders", p->cylinders);
	json_uint(w, "movements", s->arm_moves);
	json_uint(w, "tmd_cylinders", s->tmd);
	json_num(w, "ad_seek_cylinders", s->arm_moves ? (double)s->tmd / (double)s->arm_moves : 0);
	json_num(w, "td_sweep", (double)s->tmd / p->cylinders);
	json_obj_end(w);
	json_obj_begin(w, "cache");
	json_uint(w, "read_hits", s->read_hits);
	json_uint(w, "read_partial_hits", s->read_partial_hits);
	json_uint(w, "read_misses", s->read_misses);
	json_uint(w, "writes_buffered", s->writes_buffered);
	json_uint(w, "writes_through", s->writes_through);
	json_uint(w, "destages", s->destages);
	json_uint(w, "readahead_bytes", s->readahead_blocks * SIM_SECTOR);
	json_obj_end(w);
	if (p->bcw) {
		json_obj_begin(w, "bcw");
		json_uint(w, "fast", s->bcw_fast);
		json_uint(w, "mid", s->bcw_mid);
		json_uint(w, "slow", s->bcw_slow);
		json_obj_end(w);
	}
	json_num(w, "mechanism_busy_s", s->mech_ms / 1e3);
}

static void hdd_destroy(struct sim_dev *d)
{
	struct dev_hdd *x = (struct dev_hdd *)d;

	sim_hdd_destroy(x->h);
	free(x);
}

static const struct sim_dev_ops hdd_ops = {
	.serve = hdd_serve,
	.report = hdd_report,
	.destroy = hdd_destroy,
};

/* Loads a DiskSim drive by name from the search path, or from a path. */
static int load_disksim(const char *model, struct sim_hdd_params *p, char *err, size_t errlen)
{
	const char *slash = strrchr(model, '/');
	char dir[1024], name[256], *dot;
	const char *path;
	int r = -ENOENT;

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - model), model);
		snprintf(name, sizeof(name), "%s", slash + 1);
		dot = strrchr(name, '.');
		if (dot && (!strcmp(dot, ".parv") || !strcmp(dot, ".diskspecs")))
			*dot = '\0';
		return sim_disksim_load(dir[0] ? dir : "/", name, p, err, errlen);
	}
	path = sim_dev_disksim_path();
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(dir)) {
			memcpy(dir, path, n);
			dir[n] = '\0';
			r = sim_disksim_load(dir, model, p, err, errlen);
			if (r != -ENOENT)
				return r;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	snprintf(err, errlen, "no DiskSim drive '%s' (looked for %s.parv or %s.diskspecs in '%s'; "
		 "set IOSIG_DISKSIM_DIR or give hdd:/dir/%s)", model, model, model,
		 sim_dev_disksim_path(), model);
	return -ENOENT;
}

int sim_dev_hdd_create(const char *model, const char *optstr, struct sim_dev **ret, char *err,
		       size_t errlen)
{
	struct sim_hdd_params *p = calloc(1, sizeof(*p));
	struct dev_hdd *x = NULL;
	struct hdd_opts o;
	int r;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = sim_dev_opts(&sim_dev_class_hdd, &o, optstr, err, errlen);
	if (r < 0)
		goto out;
	if (!*model || !strcasecmp(model, "generic")) {
		sim_hdd_params_generic(p, o.capacity);
	} else {
		if (o.capacity) {
			snprintf(err, errlen, "option 'capacity' applies to hdd:generic only (%s has its "
				 "own geometry)", model);
			r = -EINVAL;
			goto out;
		}
		r = load_disksim(model, p, err, errlen);
		if (r < 0)
			goto out;
	}
	if (o.rpm > 0)
		p->rpm = o.rpm;
	if (!o.cache)
		p->nsegs = 0;
	if (o.write_cache == WC_BACK) {
		p->fast_write = p->fast_write ? p->fast_write : 1;
		if (!p->max_write_segs)
			p->max_write_segs = p->nsegs ? 1 : 0;
	} else if (o.write_cache == WC_THROUGH) {
		p->fast_write = 0;
	}
	p->bcw = o.bcw;
	p->bcw_wf = (double)o.wf;
	p->bcw_wm = (double)o.wm;
	p->bcw_lf_ms = (double)o.lf / 1e6;
	p->bcw_lm_ms = (double)o.lm / 1e6;
	p->bcw_ls_ms = (double)o.ls / 1e6;
	if (o.queue_depth)
		p->queue_depth = (unsigned)o.queue_depth;
	r = sim_hdd_params_finish(p, err, errlen);
	if (r < 0)
		goto out;
	x = calloc(1, sizeof(*x));
	if (!x || !(x->h = sim_hdd_create(p))) {
		free(x);
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	x->dev.ops = &hdd_ops;
	x->dev.hdd = x->h;
	snprintf(x->dev.model, sizeof(x->dev.model), "%s", p->name);
	x->dev.info.cls = IOSIG_CLASS_HDD;
	x->dev.info.capacity = p->blocks * SIM_SECTOR;
	x->dev.info.queue_depth = p->queue_depth;
	x->dev.info.block_size = SIM_SECTOR;
	if (p->bcw) {
		x->dev.info.bcw = (struct iosig_bcw){
			.wf = (double)o.wf, .wm = (double)o.wm,
			.lf = (double)o.lf / POLICY_NS_PER_S, .lm = (double)o.lm / POLICY_NS_PER_S,
			.ls = (double)o.ls / POLICY_NS_PER_S,
		};
	}
	*ret = &x->dev;
out:
	free(p);
	return r;
}
