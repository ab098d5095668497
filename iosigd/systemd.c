/* SPDX-License-Identifier: MIT */
/*
 * systemd.c - iosigd under systemd (docs/daemon.md, "systemd"): the
 * listening socket of a .socket unit (socket activation) and the
 * Type=notify readiness protocol, both through libsystemd (sd_listen_fds(3),
 * sd_notify(3)).  Outside systemd they do nothing: no LISTEN_FDS, no
 * NOTIFY_SOCKET.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "iosigd.h"

int sysd_listen_fd(char *err, size_t errlen)
{
	int n = sd_listen_fds(1);

	if (n < 0) {
		snprintf(err, errlen, "LISTEN_FDS: %s", strerror(-n));
		return n;
	}
	if (n == 0)
		return -ENOENT;
	if (n > 1) {
		snprintf(err, errlen,
			 "systemd passed %d sockets; iosigd listens on one (one ListenSequentialPacket= in the .socket unit)",
			 n);
		return -E2BIG;
	}
	return SD_LISTEN_FDS_START;
}

/* sd_notify() that logs a failure once (the daemon goes on: systemd then
 * reports the start as failed or timed out, which says more). */
static void notify(const char *state)
{
	static bool warned;
	int r = sd_notify(0, state);

	if (r < 0 && !warned) {
		warned = true;
		dlog(DLOG_WARN, "sd_notify: %s", strerror(-r));
	}
}

void sysd_ready(struct daemon *d)
{
	char state[512];

	snprintf(state, sizeof(state), "READY=1\nSTATUS=serving on %s%s (%s mode, default policy %s)",
		 d->socket_path, d->socket_activated ? " (socket activation)" : "", d->mode,
		 d->cfg.policy);
	notify(state);
}

void sysd_stopping(struct daemon *d)
{
	unsigned clients = 0;
	char state[256];

	/* Clients are the sessions with a ring (status queries have none). */
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next)
		clients += pol_container_of(l, struct dsession, link)->version != 0;
	snprintf(state, sizeof(state),
		 "STOPPING=1\nSTATUS=draining: finishing the queued I/O of %u client%s", clients,
		 clients == 1 ? "" : "s");
	notify(state);
}
