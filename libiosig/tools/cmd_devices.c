/* SPDX-License-Identifier: MIT */
/*
 * cmd_devices.c - `iosig devices`: the storage catalog of this machine as a
 * table, per-value sources, or JSON (docs/design.md §6; iosig-devices(1)).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "catalog_internal.h"
#include "env.h"
#include "fmt.h"
#include "json.h"
#include "tool.h"

static const char *const cmd = "devices";

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig devices [--json] [--config FILE] [--no-discovery] [--size S]\n"
		"                     [--all] [--sources]\n"
		"\n"
		"The storage this machine has, as libiosig sees it: every candidate mount\n"
		"point with its class, visibility, persistence, free space, bandwidths,\n"
		"latency, IOPS, MTTF and the MTTDL of a file of --size bytes.\n"
		"\n"
		"Options:\n"
		"  --json            every value with its source (default, discovered, probed,\n"
		"                    config) as JSON, in bytes, bytes/s and seconds\n"
		"  --config FILE     configuration file (default: $IOSIG_CONFIG, else\n"
		"                    ~/.config/iosig/config.yaml, else /etc/iosig/config.yaml)\n"
		"  --no-discovery    only the mounts described in the configuration\n"
		"  --size S          file size for the MTTDL column (default 1GiB)\n"
		"  --all             also list the mounts that are not eligible, and why\n"
		"  --sources         every value of every mount with where it came from\n"
		"  -h, --help        this help\n"
		"\n"
		"See iosig-devices(1) and iosig-config(5).\n");
}

/* ---- the table ---------------------------------------------------------- */

#define NCOLS 12

static const char *const headers[NCOLS] = {
	"MOUNT", "FS", "CLASS", "VIS", "PERS", "FREE", "RD/s", "WR/s", "LAT", "IOPS", "MTTF", "MTTDL",
};
/* First right-aligned (numeric) column: FREE and all after it. */
#define FIRST_NUMERIC 5
/* The table fits a terminal this wide (tool_table_fit()). */
#define TABLE_WIDTH 80

/* Adds the row of mount m (compact numbers, MTTDL of a file of `size`
 * bytes) and, for an ineligible mount, the reason under it. */
static void add_row(struct tool_table *t, const struct iosig_mount *m, double size)
{
	char cell[NCOLS][48];
	const char *cells[NCOLS];
	bool known = m->src[IOSIG_F_CLASS] != IOSIG_SRC_NONE;

	cells[0] = m->path;
	for (int c = 1; c < NCOLS; c++) {
		snprintf(cell[c], sizeof(cell[c]), "-");
		cells[c] = cell[c];
	}
	snprintf(cell[1], sizeof(cell[1]), "%s", m->fstype[0] ? m->fstype : "-");
	if (!known) {
		snprintf(cell[2], sizeof(cell[2]), "?");
		if (m->src[IOSIG_F_FREE])
			fmt_bytes_compact((double)m->free, cell[5], sizeof(cell[5]));
	} else {
		snprintf(cell[2], sizeof(cell[2]), "%s", iosig_class_name((enum iosig_class)m->cls));
		snprintf(cell[3], sizeof(cell[3]), "%s", m->global ? "global" : "local");
		snprintf(cell[4], sizeof(cell[4]), "%s", m->volatile_ ? "no" : "yes");
		fmt_bytes_compact((double)m->free, cell[5], sizeof(cell[5]));
		fmt_bytes_compact(m->seq_read_bw, cell[6], sizeof(cell[6]));
		fmt_bytes_compact(m->seq_write_bw, cell[7], sizeof(cell[7]));
		fmt_duration_compact(m->latency, cell[8], sizeof(cell[8]));
		fmt_count_compact(m->iops, cell[9], sizeof(cell[9]));
		fmt_duration_compact(m->mttf, cell[10], sizeof(cell[10]));
		if (!m->volatile_)
			fmt_duration_compact(iosig_mount_mttdl(m, size), cell[11], sizeof(cell[11]));
	}
	tool_table_row(t, cells);
	if (m->ineligible) {
		char *note;

		if (asprintf(&note, "  not eligible: %s", m->ineligible) < 0)
			abort();
		tool_table_note(t, note);
		free(note);
	}
}

/* ---- --sources ---------------------------------------------------------- */

/* Value of one field as text. */
static void field_text(const struct iosig_mount *m, enum iosig_field f, char *buf, size_t size)
{
	char a[32], b[32];

	switch (f) {
	case IOSIG_F_CLASS:
		snprintf(buf, size, "%s", m->src[f] ? iosig_class_name((enum iosig_class)m->cls) : "?");
		break;
	case IOSIG_F_GLOBAL:
		snprintf(buf, size, "%s", m->global ? "true" : "false");
		break;
	case IOSIG_F_VOLATILE:
		snprintf(buf, size, "%s", m->volatile_ ? "true" : "false");
		break;
	case IOSIG_F_ROTATIONAL:
		snprintf(buf, size, "%s", m->rotational ? "true" : "false");
		break;
	case IOSIG_F_LABELS:
		snprintf(buf, size, "%s%s%s", m->labels & IOSIG_LABEL_ARCHIVE ? "archive" : "",
			 (m->labels & IOSIG_LABEL_ARCHIVE) && (m->labels & IOSIG_LABEL_TAMPERPROOF) ?
				 "," :
				 "",
			 m->labels & IOSIG_LABEL_TAMPERPROOF ? "tamperproof" : "");
		if (!m->labels)
			snprintf(buf, size, "none");
		break;
	case IOSIG_F_CAPACITY:
		fmt_bytes((double)m->capacity, buf, size);
		break;
	case IOSIG_F_FREE:
		fmt_bytes((double)m->free, buf, size);
		break;
	case IOSIG_F_RESERVE:
		fmt_bytes((double)m->reserve, buf, size);
		break;
	case IOSIG_F_BLOCK_SIZE:
		fmt_bytes((double)m->block_size, buf, size);
		break;
	case IOSIG_F_MAX_FILESIZE:
		if (m->max_filesize)
			fmt_bytes((double)m->max_filesize, buf, size);
		else
			snprintf(buf, size, "unlimited");
		break;
	case IOSIG_F_SEQ_READ_BW:
		fmt_rate(m->seq_read_bw, buf, size);
		break;
	case IOSIG_F_SEQ_WRITE_BW:
		fmt_rate(m->seq_write_bw, buf, size);
		break;
	case IOSIG_F_RAND_READ_BW:
	case IOSIG_F_RAND_WRITE_BW: {
		double v = f == IOSIG_F_RAND_READ_BW ? m->rand_read_bw : m->rand_write_bw;

		if (v > 0)
			fmt_rate(v, buf, size);
		else
			snprintf(buf, size, "as sequential");
		break;
	}
	case IOSIG_F_LATENCY:
		fmt_duration(m->latency, buf, size);
		break;
	case IOSIG_F_SEEK:
		fmt_duration(m->seek, buf, size);
		break;
	case IOSIG_F_IOPS:
		snprintf(buf, size, "%.0f", m->iops);
		break;
	case IOSIG_F_MTTF:
		fmt_duration(m->mttf, buf, size);
		break;
	case IOSIG_F_MTTR:
		fmt_duration(m->mttr, buf, size);
		break;
	case IOSIG_F_BER:
		snprintf(buf, size, "%g", m->ber);
		break;
	case IOSIG_F_ECC:
		snprintf(buf, size, "%u bits/sector", m->ecc);
		break;
	case IOSIG_F_SECTOR_BITS:
		snprintf(buf, size, "%u", m->sector_bits);
		break;
	case IOSIG_F_LAYOUT:
		snprintf(buf, size, "%s, %u disks, tolerates %u",
			 iosig_layout_name((enum iosig_layout_kind)m->layout.kind), m->layout.disks,
			 m->layout.tolerated);
		break;
	case IOSIG_F_DATA_DIR:
		snprintf(buf, size, "%s", m->data_dir ? m->data_dir : "none");
		break;
	case IOSIG_F_BCW:
		if (m->src[f])
			snprintf(buf, size, "Wf %s, Wm %s, Lf/Lm/Ls %g/%g/%g s",
				 fmt_bytes(m->bcw.wf, a, sizeof(a)), fmt_bytes(m->bcw.wm, b, sizeof(b)),
				 m->bcw.lf, m->bcw.lm, m->bcw.ls);
		else
			snprintf(buf, size, "unknown");
		break;
	default:
		buf[0] = '\0';
	}
}

static void print_sources(const struct iosig_catalog *cat, size_t i, FILE *fp)
{
	static const char *const hdr[] = { "FIELD", "VALUE", "SOURCE" };
	const struct iosig_mount *m = iosig_catalog_mount(cat, i);
	struct tool_table *t = tool_table_new(3, hdr);
	char *path = tool_printable(m->path), *source = tool_printable(m->source);
	char *why = tool_printable(m->ineligible);

	fprintf(fp, "%s  (%s on %s)%s%s\n", path, m->fstype[0] ? m->fstype : "-",
		source[0] ? source : "-", m->ineligible ? "  not eligible: " : "", why);
	free(path);
	free(source);
	free(why);
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++) {
		char val[320], src[280];
		const char *origin = cat_catalog_origin(cat, i, (enum iosig_field)f);
		const char *cells[3] = { iosig_field_name((enum iosig_field)f), val, src };

		field_text(m, (enum iosig_field)f, val, sizeof(val));
		if ((m->src[f] == IOSIG_SRC_DEFAULT || m->src[f] == IOSIG_SRC_DISCOVERED) && origin)
			snprintf(src, sizeof(src), "%s: %s",
				 iosig_source_name((enum iosig_source)m->src[f]), origin);
		else
			snprintf(src, sizeof(src), "%s",
				 iosig_source_name((enum iosig_source)m->src[f]));
		tool_table_row(t, cells);
	}
	tool_table_print(t, fp);
	tool_table_free(t);
	fputc('\n', fp);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_src(struct json_writer *w, const struct iosig_catalog *cat, size_t i,
		     const struct iosig_mount *m, enum iosig_field f)
{
	const char *origin = cat_catalog_origin(cat, i, f);

	json_str(w, "source", iosig_source_name((enum iosig_source)m->src[f]));
	if ((m->src[f] == IOSIG_SRC_DEFAULT || m->src[f] == IOSIG_SRC_DISCOVERED) && origin)
		json_str(w, "origin", origin);
	json_obj_end(w);
}

static void json_field(struct json_writer *w, const struct iosig_catalog *cat, size_t i,
		       const struct iosig_mount *m, enum iosig_field f)
{
	json_obj_begin(w, iosig_field_name(f));
	switch (f) {
	case IOSIG_F_CLASS:
		if (m->src[f])
			json_str(w, "value", iosig_class_name((enum iosig_class)m->cls));
		else
			json_null(w, "value");
		break;
	case IOSIG_F_GLOBAL:
		json_bool(w, "value", m->global);
		break;
	case IOSIG_F_VOLATILE:
		json_bool(w, "value", m->volatile_);
		break;
	case IOSIG_F_ROTATIONAL:
		json_bool(w, "value", m->rotational);
		break;
	case IOSIG_F_LABELS:
		json_arr_begin(w, "value");
		if (m->labels & IOSIG_LABEL_ARCHIVE)
			json_str(w, NULL, "archive");
		if (m->labels & IOSIG_LABEL_TAMPERPROOF)
			json_str(w, NULL, "tamperproof");
		json_arr_end(w);
		break;
	case IOSIG_F_CAPACITY:
		json_uint(w, "value", m->capacity);
		break;
	case IOSIG_F_FREE:
		json_uint(w, "value", m->free);
		break;
	case IOSIG_F_RESERVE:
		json_uint(w, "value", m->reserve);
		break;
	case IOSIG_F_BLOCK_SIZE:
		json_uint(w, "value", m->block_size);
		break;
	case IOSIG_F_MAX_FILESIZE:
		json_uint(w, "value", m->max_filesize);
		break;
	case IOSIG_F_SEQ_READ_BW:
		json_num(w, "value", m->seq_read_bw);
		break;
	case IOSIG_F_SEQ_WRITE_BW:
		json_num(w, "value", m->seq_write_bw);
		break;
	case IOSIG_F_RAND_READ_BW:
		json_num(w, "value", m->rand_read_bw);
		break;
	case IOSIG_F_RAND_WRITE_BW:
		json_num(w, "value", m->rand_write_bw);
		break;
	case IOSIG_F_LATENCY:
		json_num(w, "value", m->latency);
		break;
	case IOSIG_F_SEEK:
		json_num(w, "value", m->seek);
		break;
	case IOSIG_F_IOPS:
		json_num(w, "value", m->iops);
		break;
	case IOSIG_F_MTTF:
		json_num(w, "value", m->mttf);
		break;
	case IOSIG_F_MTTR:
		json_num(w, "value", m->mttr);
		break;
	case IOSIG_F_BER:
		json_num(w, "value", m->ber);
		break;
	case IOSIG_F_ECC:
		json_uint(w, "value", m->ecc);
		break;
	case IOSIG_F_SECTOR_BITS:
		json_uint(w, "value", m->sector_bits);
		break;
	case IOSIG_F_LAYOUT:
		json_obj_begin(w, "value");
		json_str(w, "kind", iosig_layout_name((enum iosig_layout_kind)m->layout.kind));
		json_uint(w, "disks", m->layout.disks);
		json_uint(w, "tolerated", m->layout.tolerated);
		json_obj_end(w);
		break;
	case IOSIG_F_DATA_DIR:
		json_str(w, "value", m->data_dir);
		break;
	case IOSIG_F_BCW:
		if (!m->src[f]) {
			json_null(w, "value");
			break;
		}
		json_obj_begin(w, "value");
		json_num(w, "wf", m->bcw.wf);
		json_num(w, "wm", m->bcw.wm);
		json_num(w, "lf", m->bcw.lf);
		json_num(w, "lm", m->bcw.lm);
		json_num(w, "ls", m->bcw.ls);
		json_obj_end(w);
		break;
	default:
		json_null(w, "value");
	}
	json_src(w, cat, i, m, f);
}

static int print_json(const struct iosig_catalog *cat, double size, FILE *fp)
{
	struct json_writer w;
	const char *cfg = cat_catalog_config_file(cat);

	json_init(&w, fp, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "config", cfg[0] ? cfg : NULL);
	json_num(&w, "mttdl_size", size);
	json_arr_begin(&w, "mounts");
	for (size_t i = 0; i < iosig_catalog_size(cat); i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);
		char dev[32];

		json_obj_begin(&w, NULL);
		json_str(&w, "path", m->path);
		json_str(&w, "source", m->source);
		json_str(&w, "fstype", m->fstype);
		snprintf(dev, sizeof(dev), "%u:%u", major((dev_t)m->dev), minor((dev_t)m->dev));
		json_str(&w, "dev", dev);
		json_bool(&w, "eligible", !m->ineligible);
		json_str(&w, "ineligible", m->ineligible);
		for (unsigned f = 0; f < IOSIG_F_COUNT; f++)
			json_field(&w, cat, i, m, (enum iosig_field)f);
		if (m->src[IOSIG_F_CLASS])
			json_num(&w, "mttdl", m->volatile_ ? 0 : iosig_mount_mttdl(m, size));
		else
			json_null(&w, "mttdl");
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_arr_begin(&w, "notes");
	for (size_t i = 0; i < cat_catalog_notes(cat); i++)
		json_str(&w, NULL, cat_catalog_note(cat, i));
	json_arr_end(&w);
	json_obj_end(&w);
	return json_finish(&w);
}

/* ---- main --------------------------------------------------------------- */

static int run(int argc, char **argv)
{
	enum { OPT_CONFIG = 256, OPT_NODISC, OPT_SIZE, OPT_ALL, OPT_SOURCES, OPT_JSON };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "no-discovery", no_argument, NULL, OPT_NODISC },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "sources", no_argument, NULL, OPT_SOURCES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iosig_catalog_opts opts = { 0 };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;
	bool json = false, all = false, sources = false;
	double size = 1024.0 * 1024 * 1024;
	struct tool_table *table;
	size_t n, nrows = 0, hidden = 0;
	int c, ret;

	optind = 0; /* full re-initialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_CONFIG:
			opts.config = optarg;
			break;
		case OPT_NODISC:
			opts.flags |= IOSIG_CATALOG_NO_DISCOVERY;
			break;
		case OPT_SIZE:
			if (tool_parse_size(cmd, "size", optarg, true, &size))
				return TOOL_EXIT_USAGE;
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_SOURCES:
			sources = true;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			return tool_option_err(cmd, c, argv, longopts);
		}
	}
	if (optind < argc)
		return tool_usage_err(cmd, "unexpected argument '%s'", argv[optind]);
	if ((opts.flags & IOSIG_CATALOG_NO_DISCOVERY) && !opts.config && !env_get("IOSIG_CONFIG"))
		return tool_usage_err(cmd, "--no-discovery lists the mounts of a configuration: give --config FILE");
	memset(&err, 0, sizeof(err));
	if (iosig_catalog_new(&opts, &cat, &err) < 0) {
		tool_print_error(cmd, &err);
		return TOOL_EXIT_FAIL;
	}
	n = iosig_catalog_size(cat);
	if (json) {
		ret = print_json(cat, size, stdout) < 0 ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
		goto out_free_catalog;
	}
	for (size_t i = 0; i < cat_catalog_notes(cat); i++)
		tool_err(cmd, "note: %s", cat_catalog_note(cat, i));
	if (sources) {
		for (size_t i = 0; i < n; i++)
			if (all || !iosig_catalog_mount(cat, i)->ineligible)
				print_sources(cat, i, stdout);
		ret = TOOL_EXIT_OK;
		goto out_free_catalog;
	}
	table = tool_table_new(NCOLS, headers);
	tool_table_fit(table, TABLE_WIDTH);
	for (unsigned col = FIRST_NUMERIC; col < NCOLS; col++)
		tool_table_align_right(table, col);
	for (size_t i = 0; i < n; i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);

		if (m->ineligible && !all) {
			hidden++;
			continue;
		}
		add_row(table, m, size);
		nrows++;
	}
	if (nrows)
		tool_table_print(table, stdout);
	else
		printf("no eligible mount point\n");
	tool_table_free(table);
	{
		char sz[32];

		printf("\nMTTDL for a %s file.", fmt_bytes(size, sz, sizeof(sz)));
		if (hidden)
			printf(" %zu mount%s not eligible: --all shows why.", hidden,
			       hidden == 1 ? " is" : "s are");
		printf("\n");
	}
	ret = TOOL_EXIT_OK;
out_free_catalog:
	iosig_catalog_free(cat);
	return ret;
}

const struct tool_cmd cmd_devices = {
	.name = "devices",
	.summary = "the storage of this machine: classes, speeds, reliability, sources",
	.run = run,
};
