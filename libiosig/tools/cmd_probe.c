/* SPDX-License-Identifier: MIT */
/*
 * cmd_probe.c - `iosig probe [MOUNT...]`: measures this machine's mounts
 * (latency, bandwidths, IOPS, effective block size, BCW profile) and stores
 * the results in the probe cache, so the next catalog shows them with source
 * "probed" (docs/design.md §5.1, §6; docs/probe.md; iosig-probe(1)).
 *
 * Every mount is probed in its own session (probe.h): a private directory in
 * the mount's data directory (or its root), a space budget of
 * min(--max-space, 10 % of free space), anonymous test files.  SIGINT,
 * SIGTERM and SIGHUP stop the probe between two I/Os; the session is then
 * closed, which removes everything, and the tool exits 128 + signal.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "fmt.h"
#include "json.h"
#include "probe.h"
#include "tool.h"
#include "tool_probe.h"

#define CMD "probe"

struct opts {
	double time;          /* seconds per mount */
	struct tool_probe_opts common; /* --max-space, --quiet */
	bool json;
	bool store;           /* write the probe cache */
	bool buffered;        /* no O_DIRECT even where it works */
	const char *cache;    /* probe cache to write; NULL: the default */
};

/* Progress bar on stderr when it is a terminal. */
struct bar {
	bool on;
	const char *mount;
	unsigned index, count;
	double last;
};

static void bar_draw(void *ctx, enum prb_phase phase, double fraction)
{
	struct bar *b = ctx;
	char label[PATH_MAX + 64];

	if (!b->on)
		return;
	snprintf(label, sizeof(label), "%u/%u %s  %s", b->index, b->count, b->mount,
		 prb_phase_name(phase));
	tool_probe_bar(true, fraction, label);
}

/* Progress of the side-by-side latency phase. */
static void bar_tick(void *ctx, double done)
{
	bar_draw(ctx, PRB_PH_LATENCY, done);
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig probe [OPTIONS] [MOUNT...]\n"
		"\n"
		"Measures each mount (default: every eligible mount of the catalog): operation\n"
		"latency, sequential and random read/write bandwidth, IOPS at queue depth,\n"
		"the effective block size and, on rotational devices, the BCW buffered-write\n"
		"profile.  Results go to the probe cache; the next catalog shows them with\n"
		"source \"probed\".  Test files are anonymous and removed even on Ctrl-C.\n"
		"\n"
		"Options:\n"
		"  -t, --time T        time budget per mount (default %gs; units: 30s, 1min)\n"
		"  -s, --max-space S   space budget per mount (default %s; never more than\n"
		"                      %.0f%% of the free space; refused below %s)\n"
		"  -c, --cache FILE    probe cache to update (default: $IOSIG_PROBE_CACHE, else\n"
		"                      /var/cache/iosig/probe.yaml for root, else\n"
		"                      ~/.cache/iosig/probe.yaml)\n"
		"  -b, --buffered      measure through the page cache even where O_DIRECT\n"
		"                      works (what programs without O_DIRECT see)\n"
		"  -n, --no-store      measure and print, but leave the probe cache alone\n"
		"  -j, --json          results as JSON on stdout\n"
		"  -q, --quiet         no progress bar and no table (errors still go to stderr)\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0 all mounts probed, 1 some failed (each says why), 2 bad\n"
		"command line or unknown mount, 128+N interrupted by signal N.  See iosig-probe(1).\n",
		PRB_DEFAULT_TIME, "256 MiB", PRB_SPACE_SHARE * 100, "8 MiB");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "max-space", required_argument, NULL, 's' },
		{ "cache", required_argument, NULL, 'c' },
		{ "no-store", no_argument, NULL, 'n' },
		{ "buffered", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c, r;

	o->time = PRB_DEFAULT_TIME;
	o->common.max_space = PRB_DEFAULT_SPACE;
	o->store = true;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:s:c:bnjqh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (tool_parse_value(CMD, "time", optarg, IOSIG_DIM_TIME,
					     "a time such as 30s or 1min", &v))
				return TOOL_EXIT_USAGE;
			if (!(v >= 0.5) || v > 3600)
				return tool_usage_err(CMD, "--time '%s': expected 0.5 s to 1 h per mount",
						      optarg);
			o->time = v;
			break;
		case 'c':
			if (!*optarg)
				return tool_usage_err(CMD, "--cache: empty file name");
			o->cache = optarg;
			break;
		case 'n':
			o->store = false;
			break;
		case 'b':
			o->buffered = true;
			break;
		case 'j':
			o->json = true;
			break;
		default:
			r = tool_probe_opt(CMD, c, argv, longopts, usage, &o->common);
			if (r)
				return r;
		}
	}
	return 0;
}

static void record_values(struct cat_probe_record *rec, const struct prb_result *res)
{
	static const struct {
		enum prb_value v;
		enum iosig_field f;
	} map[] = {
		{ PRB_V_LATENCY, IOSIG_F_LATENCY },
		{ PRB_V_SEEK, IOSIG_F_SEEK },
		{ PRB_V_SEQ_READ_BW, IOSIG_F_SEQ_READ_BW },
		{ PRB_V_SEQ_WRITE_BW, IOSIG_F_SEQ_WRITE_BW },
		{ PRB_V_RAND_READ_BW, IOSIG_F_RAND_READ_BW },
		{ PRB_V_RAND_WRITE_BW, IOSIG_F_RAND_WRITE_BW },
		{ PRB_V_IOPS, IOSIG_F_IOPS },
		{ PRB_V_BLOCK_SIZE, IOSIG_F_BLOCK_SIZE },
		{ PRB_V_BCW, IOSIG_F_BCW },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (res->have & (1u << map[i].v))
			rec->set |= CAT_BIT(map[i].f);
	rec->latency = res->latency;
	rec->seek = res->seek;
	rec->seq_read_bw = res->seq_read_bw;
	rec->seq_write_bw = res->seq_write_bw;
	rec->rand_read_bw = res->rand_read_bw;
	rec->rand_write_bw = res->rand_write_bw;
	rec->iops = res->iops;
	rec->block_size = res->block_size;
	rec->bcw = res->bcw;
}

/* The outcome of one mount. */
struct outcome {
	const struct iosig_mount *m;
	const char *dir;          /* where the sessions were */
	int status;               /* 0 ok, else -errno */
	char why[400];            /* failure text */
	double latency_raw;       /* from the side-by-side latency phase, 0 if none */
	bool stored;
	struct prb_result res;
};

static bool has(const struct prb_result *r, enum prb_value v)
{
	return r->have & (1u << v);
}

static void print_table(const struct outcome *out, size_t n)
{
	static const char *const hdr[] = { "MOUNT", "LATENCY", "SEQ R/W", "RAND R/W", "IOPS",
					   "BLOCK", "SEEK", "BCW (Wf/Wm, Lf/Lm/Ls)" };
	struct tool_table *t = tool_table_new(8, hdr);

	for (unsigned c = 1; c < 7; c++)
		tool_table_align_right(t, c);
	for (size_t i = 0; i < n; i++) {
		const struct prb_result *r = &out[i].res;
		char lat[32] = "-", seq[64] = "-", rnd[64] = "-", iops[32] = "-", blk[48] = "-";
		char seek[32] = "-", bcw[96] = "-", a[24], b[24], c[24];
		const char *cells[8];

		if (out[i].status) {
			cells[0] = out[i].m->path;
			for (int k = 1; k < 7; k++)
				cells[k] = "-";
			cells[7] = "failed";
			tool_table_row(t, cells);
			continue;
		}
		if (has(r, PRB_V_LATENCY))
			fmt_duration(r->latency, lat, sizeof(lat));
		if (has(r, PRB_V_SEQ_READ_BW) || has(r, PRB_V_SEQ_WRITE_BW))
			snprintf(seq, sizeof(seq), "%s / %s", fmt_rate(r->seq_read_bw, a, sizeof(a)),
				 fmt_rate(r->seq_write_bw, b, sizeof(b)));
		if (has(r, PRB_V_RAND_READ_BW) || has(r, PRB_V_RAND_WRITE_BW))
			snprintf(rnd, sizeof(rnd), "%s / %s",
				 fmt_rate(r->rand_read_bw, a, sizeof(a)),
				 fmt_rate(r->rand_write_bw, b, sizeof(b)));
		if (has(r, PRB_V_IOPS))
			snprintf(iops, sizeof(iops), "%.0f", r->iops);
		snprintf(blk, sizeof(blk), "%s%s", fmt_bytes((double)r->block_size, a, sizeof(a)),
			 r->block_detected ? "" : " (hint)");
		if (has(r, PRB_V_SEEK))
			fmt_duration(r->seek, seek, sizeof(seek));
		if (has(r, PRB_V_BCW)) {
			char d[24], e[24];

			snprintf(bcw, sizeof(bcw), "%s/%s, %s/%s/%s",
				 fmt_bytes(r->bcw.wf, a, sizeof(a)), fmt_bytes(r->bcw.wm, b, sizeof(b)),
				 fmt_duration(r->bcw.lf, c, sizeof(c)),
				 fmt_duration(r->bcw.lm, d, sizeof(d)),
				 fmt_duration(r->bcw.ls, e, sizeof(e)));
		}
		cells[0] = out[i].m->path;
		cells[1] = lat;
		cells[2] = seq;
		cells[3] = rnd;
		cells[4] = iops;
		cells[5] = blk;
		cells[6] = seek;
		cells[7] = bcw;
		tool_table_row(t, cells);
	}
	tool_table_print(t, stdout);
	tool_table_free(t);
	for (size_t i = 0; i < n; i++) {
		if (out[i].status == 0 && out[i].res.notes[0])
			printf("%s: %s\n", out[i].m->path, out[i].res.notes);
	}
}

static void json_value(struct json_writer *w, const struct prb_result *r, enum prb_value v,
		       const char *key, double val)
{
	if (has(r, v))
		json_num(w, key, val);
	else
		json_null(w, key);
}

static void print_json(const struct outcome *out, size_t n, const char *cache)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "cache", cache);
	json_arr_begin(&w, "mounts");
	for (size_t i = 0; i < n; i++) {
		const struct prb_result *r = &out[i].res;

		json_obj_begin(&w, NULL);
		json_str(&w, "path", out[i].m->path);
		json_str(&w, "fstype", out[i].m->fstype);
		json_str(&w, "source", out[i].m->source);
		json_bool(&w, "ok", out[i].status == 0);
		if (out[i].status) {
			json_str(&w, "error", out[i].why);
			json_obj_end(&w);
			continue;
		}
		json_str(&w, "dir", out[i].dir);
		json_bool(&w, "stored", out[i].stored);
		json_str(&w, "method", r->fs.direct ? "O_DIRECT" :
			 r->fs.memory ? "buffered (memory filesystem)" : "buffered + fdatasync");
		json_bool(&w, "rotational", out[i].m->rotational);
		json_value(&w, r, PRB_V_LATENCY, "latency", r->latency);
		json_value(&w, r, PRB_V_LATENCY, "latency_raw", r->latency_raw);
		json_value(&w, r, PRB_V_SEEK, "seek", r->seek);
		json_value(&w, r, PRB_V_SEQ_READ_BW, "seq_read_bw", r->seq_read_bw);
		json_value(&w, r, PRB_V_SEQ_WRITE_BW, "seq_write_bw", r->seq_write_bw);
		json_value(&w, r, PRB_V_RAND_READ_BW, "rand_read_bw", r->rand_read_bw);
		json_value(&w, r, PRB_V_RAND_WRITE_BW, "rand_write_bw", r->rand_write_bw);
		json_value(&w, r, PRB_V_IOPS, "iops", r->iops);
		json_value(&w, r, PRB_V_IOPS, "read_iops", r->read_iops);
		json_value(&w, r, PRB_V_IOPS, "write_iops", r->write_iops);
		json_uint(&w, "block_size", r->block_size);
		json_str(&w, "block_size_from", r->block_detected ? "sweep" : "hint");
		json_num(&w, "block_score", r->block_score);
		json_uint(&w, "block_hint", r->block_hint);
		if (has(r, PRB_V_BCW)) {
			json_obj_begin(&w, "bcw");
			json_num(&w, "wf", r->bcw.wf);
			json_num(&w, "wm", r->bcw.wm);
			json_num(&w, "lf", r->bcw.lf);
			json_num(&w, "lm", r->bcw.lm);
			json_num(&w, "ls", r->bcw.ls);
			json_obj_end(&w);
		} else {
			json_null(&w, "bcw");
		}
		json_uint(&w, "free", r->fs.free);
		json_uint(&w, "budget", r->fs.budget);
		json_uint(&w, "peak_usage", r->peak_usage);
		json_num(&w, "elapsed", r->elapsed);
		json_str(&w, "notes", r->notes);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

/*
 * The latency phase of all mounts at once, side by side (prb_latency_joint()),
 * with the sum of their latency shares of the time budget.  Mounts that
 * cannot be probed get their status and reason here.  Returns -ECANCELED
 * when interrupted, else 0.
 */
static int joint_latency(const struct opts *o, struct outcome *out, size_t n, struct bar *bar)
{
	struct prb_session **s = calloc(n, sizeof(*s));
	size_t *idx = calloc(n, sizeof(*idx));
	double *raw = calloc(n, sizeof(*raw));
	int *status = calloc(n, sizeof(*status));
	double seconds = 0;
	size_t k = 0;
	int r = 0;

	if (!s || !idx || !raw || !status) {
		r = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		const struct iosig_mount *m = out[i].m;

		r = prb_cli_session(m, o->common.max_space, &s[k], &out[i].dir, out[i].why,
				    sizeof(out[i].why));
		if (r < 0) {
			out[i].status = r;
			r = 0;
			continue;
		}
		seconds += o->time * prb_latency_weight(m->rotational);
		idx[k++] = i;
	}
	bar->mount = "all mounts side by side";
	bar->index = 0;
	r = prb_latency_joint(s, k, seconds, &prb_cli_stop, bar_tick, bar, raw, status);
	for (size_t j = 0; j < k; j++) {
		struct outcome *oc = &out[idx[j]];

		oc->latency_raw = raw[j];
		if (status[j] < 0 && r == 0) {
			snprintf(oc->why, sizeof(oc->why), "latency: %s%s", strerror(-status[j]),
				 status[j] == -ENOSPC ? " (did something else fill the filesystem?)"
						      : "");
			oc->status = status[j];
		}
		prb_session_close(s[j]);
	}
	prb_cli_active(NULL);
out_free:
	free(s);
	free(idx);
	free(raw);
	free(status);
	return r;
}

/* Probes one mount; fills *out.  Returns -ECANCELED when interrupted. */
static int probe_one(const struct opts *o, struct outcome *out, struct bar *bar)
{
	const struct iosig_mount *m = out->m;
	struct prb_opts po = {
		.time_budget = o->time * (1 - prb_latency_weight(m->rotational)),
		.rotational = m->rotational, .cancel = &prb_cli_stop, .progress = bar_draw,
		.progress_ctx = bar, .seed = 0x105167 ^ m->dev, .latency_raw = out->latency_raw,
	};
	struct prb_session *s = NULL;
	struct cat_probe_record rec;
	struct iosig_error err = { 0 };
	int r;

	if (!out->latency_raw)
		po.time_budget = o->time; /* the latency phase runs here after all */
	r = prb_cli_session(m, o->common.max_space, &s, &out->dir, out->why, sizeof(out->why));
	if (r < 0)
		return out->status = r;
	if (o->buffered)
		prb_session_set_buffered(s);
	r = prb_run(s, &po, &out->res, &err);
	prb_cli_active(NULL);
	prb_session_close(s);
	tool_probe_bar_clear(bar->on);
	if (r < 0) {
		snprintf(out->why, sizeof(out->why), "%s", r == -ECANCELED ? "interrupted" : err.msg);
		return out->status = r;
	}
	/* A filesystem unmounted during the probe: the numbers are not its. */
	if (prb_cli_unusable(m, out->why, sizeof(out->why)))
		return out->status = -ENODEV;
	if (!o->store)
		return 0;
	cat_probe_record_init(&rec, m);
	record_values(&rec, &out->res);
	if (!rec.set)
		return 0;
	r = cat_probe_store(o->cache, &rec, &err);
	if (r < 0) {
		tool_print_error(CMD, &err);
		snprintf(out->why, sizeof(out->why), "measured, but the probe cache was not "
			 "written: %s", err.msg);
		return out->status = r;
	}
	out->stored = true;
	return 0;
}

static int run(int argc, char **argv)
{
	struct iosig_catalog *cat = NULL;
	const struct iosig_mount **sel = NULL;
	struct outcome *out = NULL;
	struct opts o = { 0 };
	char cache[4096];
	size_t n = 0;
	int r, rc = TOOL_EXIT_OK, failed = 0;
	struct bar bar = { 0 };

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? TOOL_EXIT_OK : r;
	r = tool_probe_mounts(CMD, argc - optind, argv + optind, &cat, &sel, &n);
	if (r)
		return r;
	if (!n) {
		tool_err(CMD, "no eligible mount to probe ('iosig devices' says why each is not)");
		rc = TOOL_EXIT_FAIL;
		goto out_free_sel;
	}
	out = calloc(n, sizeof(*out));
	if (!out) {
		tool_err(CMD, "out of memory");
		rc = TOOL_EXIT_FAIL;
		goto out_free_sel;
	}
	if (o.cache)
		snprintf(cache, sizeof(cache), "%s", o.cache);
	else
		cat_probe_cache_write_path(cache, sizeof(cache));

	prb_cli_signals();
	bar.on = !o.common.quiet && isatty(STDERR_FILENO);
	bar.count = (unsigned)n;
	for (size_t i = 0; i < n; i++)
		out[i].m = sel[i];
	r = joint_latency(&o, out, n, &bar);
	tool_probe_bar_clear(bar.on);
	if (r == -ENOMEM) {
		tool_err(CMD, "out of memory");
		rc = TOOL_EXIT_FAIL;
		goto out_free_out;
	}
	for (size_t i = 0; i < n && !prb_cli_stop; i++) {
		bar.mount = sel[i]->path;
		bar.index = (unsigned)i + 1;
		r = out[i].status ? out[i].status : probe_one(&o, &out[i], &bar);
		if (r == -ECANCELED || prb_cli_stop)
			break;
		if (r < 0) {
			size_t l = strlen(sel[i]->path);

			failed++;
			/* Session messages name the directory already. */
			if (!strncmp(out[i].why, sel[i]->path, l) && out[i].why[l] == ':')
				tool_err(CMD, "%s", out[i].why);
			else
				tool_err(CMD, "%s: %s", sel[i]->path, out[i].why);
		}
	}
	tool_probe_bar_clear(bar.on);
	if (prb_cli_stop) {
		tool_err(CMD, "interrupted by signal %d; test files removed, probe cache keeps "
			 "only the mounts finished before", (int)prb_cli_stop);
		rc = 128 + prb_cli_stop;
		goto out_free_out;
	}
	if (o.json)
		print_json(out, n, o.store ? cache : NULL);
	else if (!o.common.quiet)
		print_table(out, n);
	if (!o.common.quiet && !o.json && o.store && (size_t)failed < n)
		printf("Stored in %s; 'iosig devices' shows the values as \"probed\".\n", cache);
	rc = failed ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
out_free_out:
	free(out);
out_free_sel:
	free(sel);
	iosig_catalog_free(cat);
	return rc;
}

const struct tool_cmd cmd_probe = {
	.name = "probe",
	.summary = "measure mounts (latency, bandwidth, IOPS, block size, BCW) into the probe cache",
	.run = run,
};
