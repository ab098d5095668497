/* SPDX-License-Identifier: MIT */
/*
 * probe_cli.c - what `iosig probe` and `iosig validate` share around the
 * engine: resolving MOUNT arguments against the catalog, deciding whether a
 * mount can be measured now and opening its session there, the interruption
 * flag set by SIGINT/SIGTERM/SIGHUP, and the text of a progress bar.  Nothing
 * here prints (probe.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "probe.h"

volatile sig_atomic_t prb_cli_stop;

/* The session directories in use, for a last-resort rmdir() when a second
 * signal arrives before the engine noticed the first one. */
#define ACTIVE_MAX 64
static char active_dir[ACTIVE_MAX][PATH_MAX];
static volatile sig_atomic_t active_n;

static void on_signal(int sig)
{
	if (prb_cli_stop) {
		/* Test files are anonymous: the directories are all there is to
		 * remove (rmdir is async-signal-safe). */
		for (sig_atomic_t i = 0; i < active_n; i++)
			rmdir(active_dir[i]);
		_exit(128 + sig);
	}
	prb_cli_stop = sig;
}

void prb_cli_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocked fsync or io_uring wait returns EINTR and the
	 * engine looks at the flag. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void prb_cli_active(const char *dir)
{
	if (!dir) {
		active_n = 0;
		return;
	}
	if (active_n < ACTIVE_MAX && strlen(dir) < PATH_MAX) {
		/* Fill the slot before publishing it to the handler. */
		memcpy(active_dir[active_n], dir, strlen(dir) + 1);
		active_n = active_n + 1;
	}
}

static void cli_err(struct iosig_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cli_err(struct iosig_error *err, const char *fmt, ...)
{
	va_list ap;

	memset(err, 0, sizeof(*err));
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

int prb_cli_select(const struct iosig_catalog *cat, int argc, char *const *argv,
		   const struct iosig_mount ***ret_sel, size_t *ret_n, struct iosig_error *err)
{
	size_t cap = argc > 0 ? (size_t)argc : iosig_catalog_size(cat);
	const struct iosig_mount **sel = calloc(cap ? cap : 1, sizeof(*sel));
	size_t n = 0;

	if (!sel) {
		cli_err(err, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; argc == 0 && i < iosig_catalog_size(cat); i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);

		if (!m->ineligible)
			sel[n++] = m;
	}
	for (int a = 0; a < argc; a++) {
		const struct iosig_mount *m = NULL, *on;
		char real[PATH_MAX];
		bool dup = false;

		if (!realpath(argv[a], real)) {
			cli_err(err, "%s: %s; give a mount point (see 'iosig devices')", argv[a],
				strerror(errno));
			free(sel);
			return -ENOENT;
		}
		for (size_t i = 0; i < iosig_catalog_size(cat); i++)
			if (!strcmp(iosig_catalog_mount(cat, i)->path, real))
				m = iosig_catalog_mount(cat, i);
		if (!m) {
			on = iosig_catalog_find(cat, real);
			if (on)
				cli_err(err, "%s is not a mount point of the catalog (it is on '%s'); "
					"give the mount point, see 'iosig devices'", argv[a], on->path);
			else
				cli_err(err, "%s is not a mount point of the catalog (a pseudo "
					"filesystem?); see 'iosig devices'", argv[a]);
			free(sel);
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			dup |= sel[i] == m;
		if (!dup)
			sel[n++] = m;
	}
	*ret_sel = sel;
	*ret_n = n;
	return 0;
}

const char *prb_cli_unusable(const struct iosig_mount *m, char *buf, size_t size)
{
	struct statvfs vfs;
	struct stat st;

	if (stat(m->path, &st) < 0) {
		snprintf(buf, size, "cannot access the mount point (%s): was it unmounted?",
			 strerror(errno));
		return buf;
	}
	if (m->dev && (uint64_t)st.st_dev != m->dev) {
		snprintf(buf, size, "is no longer mounted (the path is now on another filesystem)");
		return buf;
	}
	if (statvfs(m->path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		snprintf(buf, size, "is mounted read-only: measuring needs to write test files; "
			 "remount it read-write to measure it");
		return buf;
	}
	return NULL;
}

const char *prb_cli_parent(const struct iosig_mount *m)
{
	struct iosig_error err;
	struct stat st;
	int fd;

	if (m->data_dir && stat(m->data_dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    cat_datadir_open(m, &fd, &err) == 0) {
		close(fd);
		return m->data_dir;
	}
	return m->path;
}

int prb_cli_session(const struct iosig_mount *m, uint64_t max_space,
		    struct prb_session **ret_session, const char **ret_parent, char *why,
		    size_t size)
{
	struct iosig_error err = { 0 };
	const char *parent;
	int r;

	if (prb_cli_unusable(m, why, size))
		return -ENODEV;
	parent = prb_cli_parent(m);
	r = prb_session_open(parent, max_space, ret_session, &err);
	if (r < 0) {
		snprintf(why, size, "%s", err.msg);
		return r;
	}
	prb_cli_active(prb_session_dir(*ret_session));
	if (ret_parent)
		*ret_parent = parent;
	return 0;
}

char *prb_cli_bar(char *buf, size_t size, double fraction, const char *label)
{
	char bar[31];
	int fill;

	fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
	fill = (int)(fraction * 30 + 0.5);
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(30 - fill));
	bar[30] = '\0';
	/* \r and "erase to end of line": the bar redraws itself in place. */
	snprintf(buf, size, "\r\033[K[%s] %3.0f%%  %s", bar, fraction * 100, label);
	return buf;
}
