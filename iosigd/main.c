/* SPDX-License-Identifier: MIT */
/*
 * main.c - iosigd's command line and life cycle (docs/daemon.md):
 *
 *   iosigd [--foreground | --user] [--socket PATH] [--config FILE] [-v]
 *   iosigd --check-config [--config FILE]
 *
 * Reads the configuration (the `daemon:` section; the catalog reads the
 * rest), binds the socket or takes the one systemd passed (socket
 * activation), tells systemd it is ready (Type=notify), runs the engine
 * until SIGTERM or SIGINT, then finishes what clients queued and exits 0.
 * Modes are a table: each says where its socket goes, what it needs and
 * whom it serves, so that a mode is one row.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_socket.h"
#include "iosigd.h"
#include "tiers.h"

enum mode { MODE_SYSTEM, MODE_USER, MODE_FOREGROUND };

/* What a mode means for the socket and the peers. */
struct mode_info {
	const char *name;
	bool needs_root;       /* the system socket directory is root's */
	bool makes_dir;        /* creates DSOCK_SYSTEM_DIR (0755) */
	bool own_uid_only;     /* serves only its own uid (and root) */
};

static const struct mode_info modes[] = {
	[MODE_SYSTEM] = { "system", true, true, false },
	[MODE_USER] = { "user", false, false, true },
	[MODE_FOREGROUND] = { "foreground", false, false, false },
};

struct args {
	enum mode mode;
	bool check_config;
	const char *socket;
	const char *config;
	int verbose;
};

enum { OPT_CHECK_CONFIG = 256, OPT_USER };

static const struct option longopts[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "user", no_argument, NULL, OPT_USER },
	{ "socket", required_argument, NULL, 's' },
	{ "config", required_argument, NULL, 'c' },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosigd [--foreground | --user] [OPTIONS]\n"
		"       iosigd --check-config [--config FILE]\n"
		"The IOSIG daemon: schedules the I/O of files that annotated programs and\n"
		"iosig-redirect tag, with the policy configured for each device.\n"
		"\n"
		"Modes (default: system mode, as root, socket " DSOCK_SYSTEM ",\n"
		"serving every user):\n"
		"      --user           as the invoking user, socket $XDG_RUNTIME_DIR/iosigd.sock\n"
		"                       (a 0700 directory of the user's), serving only that user\n"
		"  -f, --foreground     as any user, socket from --socket, the configuration\n"
		"                       or $XDG_RUNTIME_DIR/iosigd.sock, serving every user\n"
		"\n"
		"Options:\n"
		"  -s, --socket PATH    listen on PATH\n"
		"  -c, --config FILE    configuration file (default: $IOSIG_CONFIG, then\n"
		"                       ~/.config/iosig/config.yaml, /etc/iosig/config.yaml);\n"
		"                       its daemon: section names the policy of each device\n"
		"      --check-config   check the configuration file and exit: 0 when it is\n"
		"                       valid, 1 with file:line:column: message when not\n"
		"  -v, --verbose        log sessions and registrations too\n"
		"  -h, --help           this text\n"
		"      --version        the version\n"
		"\n"
		"Under systemd (iosigd.service, iosigd-user.service): socket activation\n"
		"(LISTEN_FDS) and readiness (NOTIFY_SOCKET).  SIGTERM or SIGINT: stop\n"
		"accepting clients, finish every operation they queued, exit 0.  Exit\n"
		"status: 0 done, 1 an error, 2 a bad command line.  Policies: %s.\n"
		"See iosigd(8).\n",
		DCFG_HOME_POLICIES);
}

/* Parses argv into *a; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct args *a)
{
	bool user = false, fg = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fs:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fg = true;
			break;
		case OPT_USER:
			user = true;
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
		case OPT_CHECK_CONFIG:
			a->check_config = true;
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
	if (user && fg) {
		fprintf(stderr, "iosigd: --user and --foreground are two modes; give one\n"
				"Try 'iosigd --help'.\n");
		return 2;
	}
	a->mode = user ? MODE_USER : fg ? MODE_FOREGROUND : MODE_SYSTEM;
	return -1;
}

/* Where to listen: --socket, the configuration, the mode's default.  NULL
 * with a message in err when the mode's default cannot be used. */
static const char *socket_path(const struct args *a, const struct dconfig *cfg, char *buf,
			       size_t size, char *err, size_t errlen)
{
	if (a->socket)
		return a->socket;
	if (a->mode == MODE_USER)
		return dsock_user_path(buf, size, err, errlen) < 0 ? NULL : buf;
	if (cfg->socket)
		return cfg->socket;
	if (a->mode == MODE_FOREGROUND && geteuid() != 0 && dsock_user_path(buf, size, err, errlen) == 0)
		return buf;
	return DSOCK_SYSTEM;
}

/*
 * --check-config: the daemon: section (dconfig.c) and the rest of the file
 * (the catalog, as the daemon builds it).  Prints what it found; returns the
 * exit status.
 */
static int check_config(const struct dconfig *cfg)
{
	struct iosig_catalog_opts opts = { .config = cfg->file };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err;

	if (!cfg->file[0]) {
		printf("iosigd: no configuration file ($IOSIG_CONFIG, ~/.config/iosig/config.yaml, "
		       "/etc/iosig/config.yaml): the defaults apply (policy %s)\n", cfg->policy);
		return 0;
	}
	memset(&err, 0, sizeof(err));
	if (iosig_catalog_new(&opts, &cat, &err) < 0) {
		if (err.line)
			fprintf(stderr, "iosigd: %s:%d:%d: %s\n", err.file, err.line, err.column, err.msg);
		else
			fprintf(stderr, "iosigd: %s: %s\n", err.file[0] ? err.file : cfg->file, err.msg);
		return 1;
	}
	printf("iosigd: %s: valid (default policy %s, %zu device rule%s, %zu mount%s in the catalog)\n",
	       cfg->file, cfg->policy, cfg->ndevices, cfg->ndevices == 1 ? "" : "s",
	       iosig_catalog_size(cat), iosig_catalog_size(cat) == 1 ? "" : "s");
	iosig_catalog_free(cat);
	return 0;
}

/* Listens on the socket systemd passed, else binds the mode's; 0 or 1
 * after printing why. */
static int listen_socket(struct daemon *d, const struct args *a, char *buf, size_t size)
{
	char err[512];
	const char *path;
	int fd = sysd_listen_fd(err, sizeof(err));

	if (fd >= 0) {
		if (a->socket || d->cfg.socket)
			dlog(DLOG_INFO, "socket activation: %s is not bound; systemd's socket is used",
			     a->socket ? a->socket : d->cfg.socket);
		if (listener_adopt(d, fd, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "iosigd: %s\n", err);
		return 1;
	}
	if (fd != -ENOENT) {
		fprintf(stderr, "iosigd: %s\n", err);
		return 1;
	}
	err[0] = '\0';
	path = socket_path(a, &d->cfg, buf, size, err, sizeof(err));
	if (!path) {
		fprintf(stderr, "iosigd: %s\n", err);
		return 1;
	}
	if (modes[a->mode].makes_dir &&
	    !strncmp(path, DSOCK_SYSTEM_DIR "/", strlen(DSOCK_SYSTEM_DIR) + 1) &&
	    mkdir(DSOCK_SYSTEM_DIR, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "iosigd: cannot create %s: %s\n", DSOCK_SYSTEM_DIR, strerror(errno));
		return 1;
	}
	if (listener_open(d, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "iosigd: %s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .mode = MODE_SYSTEM };
	struct daemon d;
	char err[512], buf[PATH_MAX];
	int r;

	r = parse_args(argc, argv, &a);
	if (r >= 0)
		return r;
	dlog_set_level(a.verbose ? DLOG_DEBUG : DLOG_INFO);
	if (!a.check_config && modes[a.mode].needs_root && geteuid() != 0) {
		fprintf(stderr, "iosigd: system mode needs root; run 'iosigd --user' as a user\n");
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
	if (a.check_config) {
		r = check_config(&d.cfg);
		dconfig_free(&d.cfg);
		return r;
	}
	d.mode = modes[a.mode].name;
	if (modes[a.mode].own_uid_only) {
		d.only_uid_set = true;
		d.only_uid = getuid();
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
	if (listen_socket(&d, &a, buf, sizeof(buf)) != 0) {
		engine_fini(&d);
		dconfig_free(&d.cfg);
		return 1;
	}
	dlog(DLOG_INFO, "listening on %s%s (%s mode, configuration %s, default policy %s)",
	     d.socket_path, d.socket_activated ? " (socket activation)" : "", d.mode,
	     d.cfg.file[0] ? d.cfg.file : "none", d.cfg.policy);
	sysd_ready(&d);
	r = engine_run(&d);
	engine_fini(&d);
	dconfig_free(&d.cfg);
	return r < 0 ? 1 : 0;
}
