/* SPDX-License-Identifier: MIT */
/*
 * status_view.c - iosigd's status (the JSON of its STATUS answer, status.c)
 * as `iosig status` prints it (status_view.h).  The JSON is read with the
 * catalog's YAML loader: JSON is YAML's flow style, so there is no second
 * parser.  The daemon is trusted (root's or the user's) but its answer is
 * not: any shape of document prints something or is refused, never more.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_yaml.h"
#include "fmt.h"
#include "status_view.h"
#include "tool.h"

static const yaml_node_t *get(struct cat_yaml *y, const yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(&y->doc, p->value);
	}
	return NULL;
}

/* The scalar text of map[key], "-" when absent or null. */
static const char *str(struct cat_yaml *y, const yaml_node_t *map, const char *key)
{
	const yaml_node_t *n = get(y, map, key);

	if (!n || n->type != YAML_SCALAR_NODE || !strcmp((const char *)n->data.scalar.value, "null"))
		return "-";
	return (const char *)n->data.scalar.value;
}

static double num(struct cat_yaml *y, const yaml_node_t *map, const char *key)
{
	const char *s = str(y, map, key);
	char *end;
	double v = strtod(s, &end);

	return end != s ? v : 0;
}

static size_t count(const yaml_node_t *seq)
{
	return seq && seq->type == YAML_SEQUENCE_NODE ?
		(size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start) : 0;
}

static const yaml_node_t *item(struct cat_yaml *y, const yaml_node_t *seq, size_t i)
{
	return yaml_document_get_node(&y->doc, seq->data.sequence.items.start[i]);
}

/* One line, its control characters shown as '?' (tool_printable()). */
static void line(FILE *fp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(FILE *fp, const char *fmt, ...)
{
	char buf[1024], *shown;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	shown = tool_printable(buf);
	fprintf(fp, "%s\n", shown);
	free(shown);
}

static void print_daemon(FILE *fp, struct cat_yaml *y, const yaml_node_t *dm)
{
	const char *cfg = str(y, dm, "config");
	char up[32];

	fmt_duration(num(y, dm, "uptime_s"), up, sizeof(up));
	line(fp, "iosigd %s: pid %s, uid %s, %s mode, up %s%s", str(y, dm, "version"),
	     str(y, dm, "pid"), str(y, dm, "uid"), str(y, dm, "mode"), up,
	     !strcmp(str(y, dm, "draining"), "true") ? ", draining (stopping)" : "");
	line(fp, "  socket         %s%s", str(y, dm, "socket"),
	     !strcmp(str(y, dm, "socket_activated"), "true") ? " (socket activation)" : "");
	line(fp, "  configuration  %s", strcmp(cfg, "-") ? cfg : "none (the defaults)");
	line(fp, "  operations     %s", str(y, dm, "operations"));
}

static void print_clients(FILE *fp, struct cat_yaml *y, const yaml_node_t *cl)
{
	static const char *const hdr[] = { "SESSION", "PID", "UID", "FDS", "QUEUED", "OUTSTANDING",
					   "RING USE", "RING DATA", "OPERATIONS" };
	struct tool_table *t;
	size_t n = count(cl);

	fprintf(fp, "\n%zu client%s\n", n, n == 1 ? "" : "s");
	if (!n)
		return;
	t = tool_table_new(9, hdr);
	for (unsigned c = 0; c < 9; c++)
		if (c != 6)
			tool_table_align_right(t, c);
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *c = item(y, cl, i);
		char queued[32], data[32], use[64];
		const char *cells[9];

		fmt_bytes(num(y, c, "queued_bytes"), queued, sizeof(queued));
		fmt_bytes(num(y, c, "ring_bytes"), data, sizeof(data));
		/* An entry is in use from its publication until it completes. */
		snprintf(use, sizeof(use), "%.0f/%s entries",
			 num(y, c, "ring_unread") + num(y, c, "outstanding"), str(y, c, "ring_entries"));
		cells[0] = str(y, c, "session");
		cells[1] = str(y, c, "pid");
		cells[2] = str(y, c, "uid");
		cells[3] = str(y, c, "descriptors");
		cells[4] = queued;
		cells[5] = str(y, c, "outstanding");
		cells[6] = use;
		cells[7] = data;
		cells[8] = str(y, c, "operations");
		tool_table_row(t, cells);
	}
	tool_table_print(t, fp);
	tool_table_free(t);
}

/* "name=value ..." of a device's counters. */
static void counters_note(struct cat_yaml *y, const yaml_node_t *cn, char *buf, size_t size)
{
	size_t off = (size_t)snprintf(buf, size, "  policy counters:");

	if (!cn || cn->type != YAML_MAPPING_NODE || cn->data.mapping.pairs.start == cn->data.mapping.pairs.top) {
		snprintf(buf + off, size - off, " none");
		return;
	}
	for (yaml_node_pair_t *p = cn->data.mapping.pairs.start; p < cn->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&y->doc, p->value);

		if (off >= size || !k || !v || k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
			continue;
		off += (size_t)snprintf(buf + off, size - off, " %s=%s", (const char *)k->data.scalar.value,
					(const char *)v->data.scalar.value);
	}
}

static void print_devices(FILE *fp, struct cat_yaml *y, const yaml_node_t *dv)
{
	static const char *const hdr[] = { "MOUNT", "POLICY", "QD", "INFLIGHT", "REQUESTS",
					   "COMMANDS", "READ", "WRITTEN", "EXPEDITED", "MEAN LAT",
					   "P99 LAT" };
	struct tool_table *t;
	size_t n = count(dv);

	fprintf(fp, "\n%zu device%s\n", n, n == 1 ? "" : "s");
	if (!n)
		return;
	t = tool_table_new(11, hdr);
	for (unsigned c = 2; c < 11; c++)
		tool_table_align_right(t, c);
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *d = item(y, dv, i);
		char rd[32], wr[32], lat[32], p99[32], note[1024];
		const char *cells[11];

		fmt_bytes_compact(num(y, d, "bytes_read"), rd, sizeof(rd));
		fmt_bytes_compact(num(y, d, "bytes_written"), wr, sizeof(wr));
		fmt_duration_compact(num(y, d, "mean_latency_ms") / 1e3, lat, sizeof(lat));
		fmt_duration_compact(num(y, d, "p99_latency_ms") / 1e3, p99, sizeof(p99));
		cells[0] = str(y, d, "mount");
		cells[1] = str(y, d, "policy");
		cells[2] = str(y, d, "queue_depth");
		cells[3] = str(y, d, "inflight");
		cells[4] = str(y, d, "requests");
		cells[5] = str(y, d, "commands");
		cells[6] = rd;
		cells[7] = wr;
		cells[8] = str(y, d, "expedited");
		cells[9] = lat;
		cells[10] = p99;
		tool_table_row(t, cells);
		counters_note(y, get(y, d, "counters"), note, sizeof(note));
		tool_table_note(t, note);
	}
	tool_table_fit(t, 100);
	tool_table_print(t, fp);
	tool_table_free(t);
}

/* The tiers of every device (the `tiers` array of a device with one). */
static void print_tiers(FILE *fp, struct cat_yaml *y, const yaml_node_t *dv)
{
	static const char *const hdr[] = { "TIER", "DEVICE", "CLASS", "SIZE", "USED", "DIRTY",
					   "RECORDS", "WRITE-BACK", "STATE" };
	struct tool_table *t;
	size_t n = 0;

	for (size_t i = 0; i < count(dv); i++)
		n += count(get(y, item(y, dv, i), "tiers"));
	if (!n)
		return;
	fprintf(fp, "\n%zu tier%s\n", n, n == 1 ? "" : "s");
	t = tool_table_new(9, hdr);
	for (unsigned c = 3; c < 8; c++)
		tool_table_align_right(t, c);
	for (size_t i = 0; i < count(dv); i++) {
		const yaml_node_t *d = item(y, dv, i), *ts = get(y, d, "tiers");

		for (size_t k = 0; k < count(ts); k++) {
			const yaml_node_t *tr = item(y, ts, k);
			char size[32], used[32], dirty[32], rate[48], state[64], wr[32], wb[32], pad[32], note[4400];
			const char *cells[9];

			fmt_bytes_compact(num(y, tr, "size"), size, sizeof(size));
			fmt_bytes_compact(num(y, tr, "used"), used, sizeof(used));
			fmt_bytes_compact(num(y, tr, "dirty_bytes"), dirty, sizeof(dirty));
			fmt_bytes_compact(num(y, tr, "writeback_rate"), rate, sizeof(rate));
			strncat(rate, "/s", sizeof(rate) - strlen(rate) - 1);
			snprintf(state, sizeof(state), "%s%s%s",
				 !strcmp(str(y, tr, "failed"), "true") ? "failed" :
				 !strcmp(str(y, tr, "draining"), "true") ? "draining" : "ok",
				 !strcmp(str(y, tr, "volatile"), "true") ? ", volatile" : "",
				 num(y, tr, "errors") > 0 ? ", errors" : "");
			cells[0] = str(y, tr, "name");
			cells[1] = str(y, d, "mount");
			cells[2] = str(y, tr, "class");
			cells[3] = size;
			cells[4] = used;
			cells[5] = dirty;
			cells[6] = str(y, tr, "records");
			cells[7] = rate;
			cells[8] = state;
			tool_table_row(t, cells);
			fmt_bytes_compact(num(y, tr, "written_bytes"), wr, sizeof(wr));
			fmt_bytes_compact(num(y, tr, "writeback_bytes"), wb, sizeof(wb));
			fmt_bytes_compact(num(y, tr, "padding_bytes"), pad, sizeof(pad));
			snprintf(note, sizeof(note),
				 "  store %s: written %s, written back %s, padding %s, records in all %s, "
				 "fallbacks %s, journal %.0f%% used, generation %s",
				 str(y, tr, "store"), wr, wb, pad, str(y, tr, "records_total"), str(y, tr, "fallbacks"),
				 num(y, tr, "journal_size") > 0 ? 100 * num(y, tr, "journal_used") / num(y, tr, "journal_size") : 0,
				 str(y, tr, "generation"));
			tool_table_note(t, note);
		}
	}
	tool_table_fit(t, 100);
	tool_table_print(t, fp);
	tool_table_free(t);
}

int status_view_print(const char *text, bool json, FILE *fp, char *err, size_t errlen)
{
	struct iosig_error ierr;
	struct cat_yaml y = { .file = "the daemon's status", .err = &ierr };
	const yaml_node_t *root, *dm;
	int r = 0;

	memset(&ierr, 0, sizeof(ierr));
	if (cat_yaml_load(&y, text, strlen(text)) < 0) {
		snprintf(err, errlen, "the daemon's status is not JSON: %s", ierr.msg);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&y.doc);
	dm = get(&y, root, "daemon");
	if (!dm || dm->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "the daemon's status has no \"daemon\" object");
		r = -EINVAL;
	} else if (json) {
		fprintf(fp, "%s\n", text);
	} else {
		print_daemon(fp, &y, dm);
		print_clients(fp, &y, get(&y, root, "clients"));
		print_devices(fp, &y, get(&y, root, "devices"));
		print_tiers(fp, &y, get(&y, root, "devices"));
	}
	cat_yaml_done(&y);
	return r;
}
