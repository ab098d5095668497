/* SPDX-License-Identifier: MIT */
/*
 * cmd_status.c - `iosig status [--json] [--socket PATH]`: asks the daemon
 * that this user's programs would use (daemon_socket.h) for its state - the
 * STATUS message of the protocol (docs/daemon.md), answered by iosigd's
 * status.c - and prints the daemon, its clients, its devices with their
 * queues and the policies' counters.  --json passes the daemon's JSON on.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "catalog_yaml.h"
#include "daemon_socket.h"
#include "fmt.h"
#include "proto.h"
#include "tool.h"

static const char cmd[] = "status";

/* The daemon answers within this (ms), per message. */
#define ANSWER_MS 5000
/* Largest status accepted (a daemon with thousands of clients sends some
 * hundred KiB). */
#define STATUS_MAX (64u << 20)
/* What a daemon that hangs up on us means (it refuses the peer). */
#define HANGUP "the daemon closed the connection before it answered"
#define HANGUP_HINT " (a daemon in user mode answers only its own user and root)"

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig status [OPTIONS]\n"
		"\n"
		"Shows what iosigd, the daemon that schedules the I/O of tagged files, is\n"
		"doing: the daemon (pid, uptime, version, mode, socket), its clients (pid,\n"
		"uid, registered descriptors, queued bytes, ring use), each device it\n"
		"schedules (policy, queue, requests and bytes done, latency) and the\n"
		"policies' counters.  It asks the daemon your programs would use: the one\n"
		"at $IOSIG_DAEMON_SOCKET, else your own (--user) daemon's socket in\n"
		"$XDG_RUNTIME_DIR, else the system daemon's, " DSOCK_SYSTEM ".\n"
		"\n"
		"Options:\n"
		"  -s, --socket PATH  ask the daemon listening on PATH (any user's)\n"
		"      --json         the daemon's status as one JSON object\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 when a daemon answered, 1 when none did, 2 for a bad\n"
		"command line.  See iosig-status(1), iosigd(8).\n");
}

/* ---- asking ------------------------------------------------------------- */

/* Connects to --socket, else to the first candidate a client would use
 * (trusted: root's or this user's).  The descriptor, or -1 after a message. */
static int connect_daemon(const char *path)
{
	char paths[DSOCK_MAX][DSOCK_PATH_MAX], why[DSOCK_MAX][DSOCK_PATH_MAX + 100];
	unsigned n;
	int fd;

	if (path) {
		fd = dsock_connect(path, false, NULL, why[0], sizeof(why[0]));
		if (fd >= 0)
			return fd;
		tool_err(cmd, "no iosigd answers at %s", why[0]);
		return -1;
	}
	n = dsock_candidates(paths);
	if (!n) {
		tool_err(cmd, "IOSIG_DAEMON_SOCKET is set to \"\": programs use no daemon; unset it or "
			      "give --socket PATH");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		fd = dsock_connect(paths[i], true, NULL, why[i], sizeof(why[i]));
		if (fd >= 0)
			return fd;
	}
	tool_err(cmd, "no iosigd answers (programs do plain I/O):");
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "  %s\n", why[i]);
	fprintf(stderr, "Start one: 'systemctl start iosigd.socket' (as root), or 'systemctl --user "
			"start iosigd-user.socket' or 'iosigd --user' (as yourself); see iosigd(8).\n");
	return -1;
}

/* Sends STATUS on fd and collects the STATUS_REPLY fragments into a
 * NUL-terminated malloc'ed text; NULL after a message. */
static char *ask(int fd)
{
	uint8_t buf[IOSD_MSG_MAX + 1];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *text = NULL;
	size_t len = 0;
	int n = iosd_encode(buf, sizeof(buf), IOSD_VERSION, IOSD_STATUS, 1, NULL, 0, NULL, 0);

	if (n < 0 || send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		int e = n < 0 ? -n : errno;

		if (e == EPIPE || e == ECONNRESET)
			tool_err(cmd, "%s: %s" HANGUP_HINT, HANGUP, strerror(e));
		else
			tool_err(cmd, "cannot ask the daemon: %s", strerror(e));
		return NULL;
	}
	for (;;) {
		const char *why;
		struct iosd_msg m;
		ssize_t got;
		char *more;
		int r = poll(&pfd, 1, ANSWER_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			tool_err(cmd, "the daemon did not answer within %d s", ANSWER_MS / 1000);
			goto out_free;
		}
		got = r < 0 ? -1 : recv(fd, buf, sizeof(buf), 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			tool_err(cmd, "%s%s%s" HANGUP_HINT, HANGUP, got < 0 ? ": " : "",
				 got < 0 ? strerror(errno) : "");
			goto out_free;
		}
		if (iosd_decode(buf, (size_t)got, 0, &m, &why) < 0) {
			tool_err(cmd, "malformed answer from the daemon: %s", why);
			goto out_free;
		}
		if (m.hdr.type == IOSD_ERROR) {
			tool_err(cmd, "the daemon refused: %s", m.u.error.message);
			goto out_free;
		}
		if (m.hdr.type != IOSD_STATUS_REPLY || m.hdr.seq != 1) {
			tool_err(cmd, "unexpected %s message from the daemon", iosd_type_name(m.hdr.type));
			goto out_free;
		}
		if (len + m.text_len + 1 > STATUS_MAX) {
			tool_err(cmd, "the daemon's status exceeds %u MiB", STATUS_MAX >> 20);
			goto out_free;
		}
		more = realloc(text, len + m.text_len + 1);
		if (!more) {
			tool_err(cmd, "out of memory");
			goto out_free;
		}
		text = more;
		memcpy(text + len, m.text, m.text_len);
		len += m.text_len;
		text[len] = '\0';
		if (!(m.u.status.flags & IOSD_STATUS_MORE))
			return text;
	}

out_free:
	free(text);
	return NULL;
}

/* ---- reading the answer (JSON is YAML's flow style: the catalog's loader) */

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

static void print_daemon(struct cat_yaml *y, const yaml_node_t *dm)
{
	char up[32], *sock = tool_printable(str(y, dm, "socket"));
	char *cfg = tool_printable(str(y, dm, "config"));

	fmt_duration(num(y, dm, "uptime_s"), up, sizeof(up));
	printf("iosigd %s: pid %s, uid %s, %s mode, up %s%s\n", str(y, dm, "version"),
	       str(y, dm, "pid"), str(y, dm, "uid"), str(y, dm, "mode"), up,
	       !strcmp(str(y, dm, "draining"), "true") ? ", draining (stopping)" : "");
	printf("  socket         %s%s\n", sock,
	       !strcmp(str(y, dm, "socket_activated"), "true") ? " (socket activation)" : "");
	printf("  configuration  %s\n", strcmp(cfg, "-") ? cfg : "none (the defaults)");
	printf("  operations     %s\n", str(y, dm, "operations"));
	free(sock);
	free(cfg);
}

static void print_clients(struct cat_yaml *y, const yaml_node_t *cl)
{
	static const char *const hdr[] = { "SESSION", "PID", "UID", "FDS", "QUEUED", "OUTSTANDING",
					   "RING USE", "RING DATA", "OPERATIONS" };
	struct tool_table *t;
	size_t n = count(cl);

	printf("\n%zu client%s\n", n, n == 1 ? "" : "s");
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
	tool_table_print(t, stdout);
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

static void print_devices(struct cat_yaml *y, const yaml_node_t *dv)
{
	static const char *const hdr[] = { "MOUNT", "POLICY", "QD", "INFLIGHT", "REQUESTS",
					   "COMMANDS", "READ", "WRITTEN", "EXPEDITED", "MEAN LAT" };
	struct tool_table *t;
	size_t n = count(dv);

	printf("\n%zu device%s\n", n, n == 1 ? "" : "s");
	if (!n)
		return;
	t = tool_table_new(10, hdr);
	for (unsigned c = 2; c < 10; c++)
		tool_table_align_right(t, c);
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *d = item(y, dv, i);
		char rd[32], wr[32], lat[32], note[1024];
		const char *cells[10];

		fmt_bytes_compact(num(y, d, "bytes_read"), rd, sizeof(rd));
		fmt_bytes_compact(num(y, d, "bytes_written"), wr, sizeof(wr));
		fmt_duration_compact(num(y, d, "mean_latency_ms") / 1e3, lat, sizeof(lat));
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
		tool_table_row(t, cells);
		counters_note(y, get(y, d, "counters"), note, sizeof(note));
		tool_table_note(t, note);
	}
	tool_table_fit(t, 100);
	tool_table_print(t, stdout);
	tool_table_free(t);
}

/* Prints the status: the daemon's JSON as it is (json), else as text.
 * TOOL_EXIT_OK, or TOOL_EXIT_FAIL after a message when the answer is not
 * the status JSON. */
static int print_status(const char *text, bool json)
{
	struct iosig_error err;
	struct cat_yaml y = { .file = "the daemon's status", .err = &err };
	const yaml_node_t *root, *dm;
	int ret = TOOL_EXIT_OK;

	memset(&err, 0, sizeof(err));
	if (cat_yaml_load(&y, text, strlen(text)) < 0) {
		tool_err(cmd, "the daemon's status is not JSON: %s", err.msg);
		return TOOL_EXIT_FAIL;
	}
	root = yaml_document_get_root_node(&y.doc);
	dm = get(&y, root, "daemon");
	if (!dm || dm->type != YAML_MAPPING_NODE) {
		tool_err(cmd, "the daemon's status has no \"daemon\" object");
		ret = TOOL_EXIT_FAIL;
	} else if (json) {
		printf("%s\n", text);
	} else {
		print_daemon(&y, dm);
		print_clients(&y, get(&y, root, "clients"));
		print_devices(&y, get(&y, root, "devices"));
	}
	cat_yaml_done(&y);
	if (fflush(stdout) != 0)
		ret = TOOL_EXIT_FAIL;
	return ret;
}

static int run(int argc, char **argv)
{
	enum { OPT_JSON = 256 };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	bool json = false;
	char *text;
	int c, fd, ret;

	optind = 0; /* full re-initialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hs:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case 's':
			if (optarg[0] != '/')
				return tool_usage_err(cmd, "--socket needs an absolute path, not '%s'", optarg);
			path = optarg;
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
	fd = connect_daemon(path);
	if (fd < 0)
		return TOOL_EXIT_FAIL;
	text = ask(fd);
	close(fd);
	if (!text)
		return TOOL_EXIT_FAIL;
	ret = print_status(text, json);
	free(text);
	return ret;
}

const struct tool_cmd cmd_status = {
	.name = "status",
	.summary = "what iosigd does: clients, device queues, policy counters",
	.run = run,
};
