/* SPDX-License-Identifier: MIT */
/*
 * cmd_status.c - `iosig status [--json] [--socket PATH]`: asks the daemon
 * that this user's programs would use (daemon_socket.h) for its state - the
 * STATUS message of the protocol (docs/daemon.md), answered by iosigd's
 * status.c - and prints the daemon, its clients, its devices with their
 * queues and the policies' counters (status_view.c).  --json passes the
 * daemon's JSON on.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_socket.h"
#include "proto.h"
#include "status_view.h"
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
	char *text, err[256];
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
	ret = TOOL_EXIT_OK;
	if (status_view_print(text, json, stdout, err, sizeof(err)) < 0) {
		tool_err(cmd, "%s", err);
		ret = TOOL_EXIT_FAIL;
	}
	if (fflush(stdout) != 0)
		ret = TOOL_EXIT_FAIL;
	free(text);
	return ret;
}

const struct tool_cmd cmd_status = {
	.name = "status",
	.summary = "what iosigd does: clients, device queues, policy counters",
	.run = run,
};
