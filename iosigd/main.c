/* SPDX-License-Identifier: MIT */
/*
 * main.c - iosigd's command line and life cycle (docs/daemon.md):
 *
 *   iosigd [--foreground] [--socket PATH] [--config FILE] [-v] [--help] [--version]
 *
 * Reads the configuration (the `daemon:` section; the catalog reads the
 * rest), binds the socket, runs the engine until SIGTERM or SIGINT, then
 * finishes what clients queued and exits 0.  Modes are a table: each says
 * where its socket goes and what it needs, so that a mode is one row.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "iosigd.h"
#include "tiers.h"

#define SYSTEM_DIR "/run/iosigd"
#define SYSTEM_SOCKET SYSTEM_DIR "/iosigd.sock"

enum mode { MODE_SYSTEM, MODE_FOREGROUND };

/* What a mode means for the socket. */
struct mode_info {
	const char *name;
	bool needs_root;       /* the system socket directory is root's */
	bool makes_dir;        /* creates SYSTEM_DIR (0755) */
};

static const struct mode_info modes[] = {
	[MODE_SYSTEM] = { "system", true, true },
	[MODE_FOREGROUND] = { "foreground", false, false },
};

struct args {
	enum mode mode;
	const char *socket;
	const char *config;
	int verbose;
};

static const struct option longopts[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "socket", required_argument, NULL, 's' },
	{ "config", required_argument, NULL, 'c' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosigd [OPTIONS]\n"
		"The IOSIG daemon: schedules the I/O of files that annotated programs and\n"
		"iosig-redirect tag, with the policy configured for each device.\n"
		"\n"
		"  -f, --foreground     run as any user, socket from --socket, the configuration\n"
		"                       or $XDG_RUNTIME_DIR/iosigd.sock (default: system mode,\n"
		"                       as root, socket " SYSTEM_SOCKET ")\n"
		"  -s, --socket PATH    listen on PATH\n"
		"  -c, --config FILE    configuration file (default: $IOSIG_CONFIG, then\n"
		"                       ~/.config/iosig/config.yaml, /etc/iosig/config.yaml);\n"
		"                       its daemon: section names the policy of each device\n"
		"  -v, --verbose        log sessions and registrations too\n"
		"  -h, --help           this text\n"
		"      --version        the version\n"
		"\n"
		"SIGTERM or SIGINT: stop accepting clients, finish every operation they\n"
		"queued, exit 0.  Policies: %s.\n",
		DCFG_HOME_POLICIES);
}

/* Parses argv into *a; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct args *a)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fs:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->mode = MODE_FOREGROUND;
			break;
		case 's':
			if (optarg[0] != '/') {
				fprintf(stderr, "iosigd: --socket needs an absolute path, not '%s'\n", optarg);
				return 2;
			}
			a->socket = optarg;
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("iosigd %s\n", iosig_version());
			return 0;
		case ':':
			fprintf(stderr, "iosigd: %s needs a value\nTry 'iosigd --help'.\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "iosigd: unknown option '%s'\nTry 'iosigd --help'.\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "iosigd: unexpected argument '%s'\nTry 'iosigd --help'.\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* Where to listen: --socket, the configuration, the mode's default. */
static const char *socket_path(const struct args *a, const struct dconfig *cfg, char *buf,
			       size_t size)
{
	const char *xdg;

	if (a->socket)
		return a->socket;
	if (cfg->socket)
		return cfg->socket;
	if (a->mode == MODE_FOREGROUND && geteuid() != 0 && (xdg = env_get("XDG_RUNTIME_DIR")) &&
	    xdg[0] == '/' && (size_t)snprintf(buf, size, "%s/iosigd.sock", xdg) < size)
		return buf;
	return SYSTEM_SOCKET;
}

int main(int argc, char **argv)
{
	struct args a = { .mode = MODE_SYSTEM };
	struct daemon d;
	char err[512], buf[PATH_MAX];
	const char *path;
	int r;

	r = parse_args(argc, argv, &a);
	if (r >= 0)
		return r;
	dlog_set_level(a.verbose ? DLOG_DEBUG : DLOG_INFO);
	if (modes[a.mode].needs_root && geteuid() != 0) {
		fprintf(stderr, "iosigd: system mode needs root; run 'iosigd --foreground' as a user\n");
		return 1;
	}
	memset(&d, 0, sizeof(d));
	if (dconfig_defaults(&d.cfg) < 0) {
		fprintf(stderr, "iosigd: out of memory\n");
		return 1;
	}
	err[0] = '\0';
	if (dconfig_load(&d.cfg, a.config, err, sizeof(err)) < 0) {
		fprintf(stderr, "iosigd: %s\n", err);
		dconfig_free(&d.cfg);
		return 1;
	}
	path = socket_path(&a, &d.cfg, buf, sizeof(buf));
	if (modes[a.mode].makes_dir && !strncmp(path, SYSTEM_DIR "/", strlen(SYSTEM_DIR) + 1) &&
	    mkdir(SYSTEM_DIR, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "iosigd: cannot create %s: %s\n", SYSTEM_DIR, strerror(errno));
		dconfig_free(&d.cfg);
		return 1;
	}
	if (engine_init(&d) < 0) {
		dconfig_free(&d.cfg);
		return 1;
	}
	/* What a previous daemon left in the tiers goes home before anybody
	 * is served (docs/tiers.md). */
	r = tiers_open(&d, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "iosigd: %s\n", err);
		engine_fini(&d);
		dconfig_free(&d.cfg);
		return 1;
	}
	r = listener_open(&d, path, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "iosigd: %s\n", err);
		engine_fini(&d);
		dconfig_free(&d.cfg);
		return 1;
	}
	dlog(DLOG_INFO, "listening on %s (%s mode, configuration %s, default policy %s)", path,
	     modes[a.mode].name, d.cfg.file[0] ? d.cfg.file : "none", d.cfg.policy);
	r = engine_run(&d);
	engine_fini(&d);
	dconfig_free(&d.cfg);
	return r < 0 ? 1 : 0;
}
